#!/usr/bin/env bash
# The Rust unit tests under Miri (the interpreter that checks every pointer access, alignment,
# provenance, data race and leak against Rust's rules). Needs the nightly toolchain with the
# miri and rust-src components:
#   rustup toolchain install nightly && rustup component add miri rust-src --toolchain nightly
# Without them it says so and exits 0 (TH_REQUIRE_MIRI=1 makes that an error). Not part of the
# test command: Miri builds its own std and interprets ~1000x slower than native code.
#   scripts/miri.sh              every unit test that can run under Miri (about an hour here)
#   scripts/miri.sh refcount     only tests whose name contains "refcount" (libtest filters)
# Under Miri the CPU-feature probe reports no AVX, so the kernels take their portable paths;
# tests that need what Miri cannot model (failing allocations, file mappings, FFI into C) are
# marked `#[cfg_attr(miri, ignore = "...")]` with the reason, and sizes shrink under cfg(miri).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! cargo +nightly miri --version >/dev/null 2>&1; then
  echo "miri: cargo +nightly miri is not available: skipped"
  [ "${TH_REQUIRE_MIRI:-0}" = 1 ] && exit 1
  exit 0
fi
# -Zmiri-disable-isolation: the file tests write temporary files; the tests read no clock.
# -Zmiri-tree-borrows: rayon's work-stealing deque (crossbeam-epoch) breaks the older Stacked
# Borrows rules but not Tree Borrows (crossbeam runs its own Miri CI that way), and the tests
# that use the thread pool would otherwise stop inside it. (Run one by one under Stacked
# Borrows, every test passed but one, which stopped inside crossbeam-epoch on a pool thread.)
# -Zmiri-num-cpus=2: Miri reports one CPU by default, and the library would then never start
# its thread pool; with two, the parallel loops run on the pool and Miri checks them for data
# races. -Zmiri-ignore-leaks: the pool's worker threads are never joined (a process-wide pool,
# as in TH/OpenMP), which Miri would report at exit; memory leaks are checked by LeakSanitizer
# and valgrind in the test command instead.
export MIRIFLAGS="${MIRIFLAGS:--Zmiri-disable-isolation -Zmiri-tree-borrows -Zmiri-num-cpus=2 -Zmiri-ignore-leaks}"
cargo +nightly miri setup --quiet
cargo +nightly miri test --lib -- "$@"
