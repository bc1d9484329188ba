//! libFuzzer target: see `th_fuzz::dlpack`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| th_fuzz::dlpack::run(data));
