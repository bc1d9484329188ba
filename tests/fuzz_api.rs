//! The `api` fuzz driver (`fuzz/src/api.rs`) on stable Rust, without libFuzzer: every saved
//! input in `fuzz/regressions/api/` (crashes found by `cargo fuzz` once, kept as regression
//! tests) and a few thousand pseudo-random programs. `TH_FUZZ_PROGRAMS=N` runs more.

#[path = "../fuzz/src/api.rs"]
mod api;

#[path = "common/fuzz_replay.rs"]
mod replay;

#[test]
fn saved_inputs() {
    replay::saved_inputs("api", api::run);
}

#[test]
fn random_programs() {
    let (seed, n) = replay::seed_and_count(0x7e57_f022, 3000);
    api::random_programs(seed, n, 512);
}
