//! libFuzzer entry point of the `endpoint` target; the body and its properties are in
//! [`mpquic_fuzz::endpoint`](../src/endpoint.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mpquic_fuzz::endpoint::run(data));
