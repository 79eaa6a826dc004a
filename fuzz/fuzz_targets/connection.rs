//! libFuzzer entry point of the `connection` target; the body and its properties are in
//! [`mpquic_fuzz::connection`](../src/connection.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mpquic_fuzz::connection::run(data));
