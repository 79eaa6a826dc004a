//! libFuzzer entry point of the `packet` target; the body and its properties are in
//! [`mpquic_fuzz::packet`](../src/packet.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mpquic_fuzz::packet::run(data));
