//! libFuzzer entry point of the `ack_ranges` target; the body and its properties are in
//! [`mpquic_fuzz::ack_ranges`](../src/ack_ranges.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mpquic_fuzz::ack_ranges::run(data));
