//! libFuzzer target: see `th_fuzz::file`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| th_fuzz::file::run(data));
