//! libFuzzer entry point of the `stream_reassembly` target; the body and its properties are in
//! [`mpquic_fuzz::stream_reassembly`](../src/stream_reassembly.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mpquic_fuzz::stream_reassembly::run(data));
