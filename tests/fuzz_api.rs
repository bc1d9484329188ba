//! The `api` fuzz driver (`fuzz/src/api.rs`) on stable Rust, without libFuzzer: every saved
//! input in `fuzz/regressions/api/` (crashes found by `cargo fuzz` once, kept as regression
//! tests) and a few thousand pseudo-random programs. `TH_FUZZ_PROGRAMS=N` runs more.

#[path = "../fuzz/src/api.rs"]
mod api;

use std::path::PathBuf;

#[test]
fn saved_inputs() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions/api");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.retain(|p| p.is_file() && p.extension().is_none_or(|e| e != "md"));
    files.sort();
    for f in &files {
        println!("replaying {}", f.display());
        api::run(&std::fs::read(f).unwrap());
    }
}

#[test]
fn random_programs() {
    let n = std::env::var("TH_FUZZ_PROGRAMS").ok().and_then(|s| s.parse().ok()).unwrap_or(3000);
    let seed = std::env::var("TH_TEST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x7e57_f022);
    api::random_programs(seed, n, 512);
}
