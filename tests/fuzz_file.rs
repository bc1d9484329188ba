//! The `file` fuzz driver (`fuzz/src/file.rs`) on stable Rust, without libFuzzer: every saved
//! input in `fuzz/regressions/file/` and a few thousand pseudo-random memory files and damaged
//! `.npy` files. `TH_FUZZ_PROGRAMS=N` runs more.

#[path = "../fuzz/src/file.rs"]
mod file;

#[path = "common/fuzz_replay.rs"]
mod replay;

#[test]
fn saved_inputs() {
    replay::saved_inputs("file", file::run);
}

#[test]
fn random_files() {
    let (seed, n) = replay::seed_and_count(0xf11e_5eed, 3000);
    file::random_inputs(seed, n);
}
