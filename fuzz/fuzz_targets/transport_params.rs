//! libFuzzer entry point of the `transport_params` target; the body and its properties are in
//! [`mpquic_fuzz::transport_params`](../src/transport_params.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mpquic_fuzz::transport_params::run(data));
