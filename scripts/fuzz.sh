#!/usr/bin/env bash
# Short coverage-guided runs (libFuzzer through cargo fuzz) of every target in fuzz/.
#
#   scripts/fuzz.sh                  each target for TH_FUZZ_SECONDS (default 60) seconds
#   scripts/fuzz.sh api 1800         one target, 30 minutes (the long run; see docs/reliability.md)
#
# cargo fuzz needs nightly-only rustc flags (-Zsanitizer=address, sanitizer coverage): on the
# stable toolchain they are enabled with RUSTC_BOOTSTRAP=1, scoped to these cargo commands.
# Without cargo-fuzz it installs it (`cargo install --locked cargo-fuzz`, ~2-6 minutes) unless
# TH_FUZZ_INSTALL=0, then skips with a message (as when the instrumented build fails;
# TH_REQUIRE_FUZZ=1 makes both errors); TH_SKIP_FUZZ=1 skips outright. The same drivers
# also run on plain stable in `cargo test` (tests/fuzz_api.rs: saved inputs + random programs).
# New corpus entries go to fuzz/corpus/<target> (not committed); crashes to fuzz/artifacts/.
# A crash found here: fix it, then copy the input to fuzz/regressions/<target>/ (replayed by
# cargo test forever after).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${TH_SKIP_FUZZ:-0}" = 1 ]; then
  echo "fuzz: skipped (TH_SKIP_FUZZ=1)"
  exit 0
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  if [ "${TH_FUZZ_INSTALL:-1}" = 1 ]; then
    echo "installing cargo-fuzz"
    cargo install --locked --quiet cargo-fuzz || true
  fi
  if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz: cargo-fuzz is not available: skipped"
    exit 0
  fi
fi

seconds="${2:-${TH_FUZZ_SECONDS:-60}}"
# TH_FUZZ_DEV=1: build the instrumented library without optimizations (`cargo fuzz --dev`):
# a few times fewer executions per second, but a build that fits the test command's budget
# (the optimized instrumented build of the whole per-dtype API takes >10 CPU-minutes).
profile=()
[ "${TH_FUZZ_DEV:-0}" = 1 ] && profile=(--dev)
cd fuzz
if [ $# -ge 1 ]; then targets="$1"; else targets=$(RUSTC_BOOTSTRAP=1 cargo fuzz list); fi
# Sizes the drivers ask for are either small or past what any allocator gives (>= 2^42
# elements), so a failing malloc must return NULL (the library then reports TH_ERR_ALLOC).
export ASAN_OPTIONS="allocator_may_return_null=1:detect_leaks=1"
for t in $targets; do
  mkdir -p "corpus/$t"
  if ! RUSTC_BOOTSTRAP=1 cargo fuzz build "${profile[@]}" "$t"; then
    # A toolchain that cannot build the instrumented target is not a bug in the library.
    echo "fuzz: cargo fuzz could not build $t: skipped"
    [ "${TH_REQUIRE_FUZZ:-0}" = 1 ] && exit 1
    continue
  fi
  echo "fuzz: $t for ${seconds}s"
  RUSTC_BOOTSTRAP=1 cargo fuzz run "${profile[@]}" "$t" "corpus/$t" "regressions/$t" -- \
    -max_total_time="$seconds" -timeout=20 -rss_limit_mb=3072 -malloc_limit_mb=4096 \
    -print_final_stats=1 2>&1 | grep -E "^(stat::|#[0-9]+ +DONE|==[0-9]+==|SUMMARY|thread '|Done)|panicked|ERROR" || true
  # cargo fuzz exits non-zero on a crash; the pipe above hides it, so look for artifacts.
  if compgen -G "artifacts/$t/*" >/dev/null; then
    echo "fuzz: $t found a failing input:"
    ls "artifacts/$t"
    exit 1
  fi
done
echo "fuzz: every target ran clean"
