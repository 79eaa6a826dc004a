//! libFuzzer entry point of the `frame` target; the body and its properties are in
//! [`mpquic_fuzz::frame`](../src/frame.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mpquic_fuzz::frame::run(data));
