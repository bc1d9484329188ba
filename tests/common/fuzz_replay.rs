//! Helpers of the stable fuzz-driver tests (`tests/fuzz_*.rs` include this file by path).

use std::path::PathBuf;

/// Replays every saved input of `target` (files in `fuzz/regressions/<target>/` but its README).
pub fn saved_inputs(target: &str, run: fn(&[u8])) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.retain(|p| p.is_file() && p.extension().is_none_or(|e| e != "md"));
    files.sort();
    for f in &files {
        println!("replaying {}", f.display());
        run(&std::fs::read(f).unwrap());
    }
}

/// The seed (`TH_TEST_SEED`, else `default_seed`) and input count (`TH_FUZZ_PROGRAMS`, else
/// `default_n`) of the pseudo-random part.
pub fn seed_and_count(default_seed: u64, default_n: usize) -> (u64, usize) {
    let n = std::env::var("TH_FUZZ_PROGRAMS").ok().and_then(|s| s.parse().ok()).unwrap_or(default_n);
    let seed = std::env::var("TH_TEST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(default_seed);
    (seed, n)
}
