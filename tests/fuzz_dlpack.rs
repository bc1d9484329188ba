//! The `dlpack` fuzz driver (`fuzz/src/dlpack.rs`) on stable Rust, without libFuzzer: every
//! saved input in `fuzz/regressions/dlpack/` and a few thousand pseudo-random descriptors.
//! `TH_FUZZ_PROGRAMS=N` runs more.

#[path = "../fuzz/src/dlpack.rs"]
mod dlpack;

#[path = "common/fuzz_replay.rs"]
mod replay;

#[test]
fn saved_inputs() {
    replay::saved_inputs("dlpack", dlpack::run);
}

#[test]
fn random_descriptors() {
    let (seed, n) = replay::seed_and_count(0x0d1_9ac4, 4000);
    dlpack::random_inputs(seed, n, 64);
}
