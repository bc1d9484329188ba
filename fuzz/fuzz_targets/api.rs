//! libFuzzer target: the bytes are a program of C API calls (see `th_fuzz::api`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| th_fuzz::api::run(data));
