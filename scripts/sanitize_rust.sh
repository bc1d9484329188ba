#!/usr/bin/env bash
# The Rust unit tests of the unsafe core (refcounts, storage, allocator, iteration, the error
# state, the views, the thread pool's loops) under AddressSanitizer and ThreadSanitizer (Miri,
# which needs nightly, is scripts/miri.sh). The sanitizers' runtimes ship with the stable rust-std, and
# RUSTC_BOOTSTRAP=1 (scoped to these commands) enables -Zsanitizer on the stable compiler.
# The standard library itself is not instrumented (that needs -Zbuild-std and the rust-src
# component), so races inside std are not seen; rustc refuses to mix instrumented crates with that std unless -Cunsafe-allow-abi-mismatch=sanitizer.
#   scripts/sanitize_rust.sh [asan|tsan]...   (default: both)
set -euo pipefail
cd "$(dirname "$0")/.."
host=$(rustc -vV | sed -n 's/^host: //p')
filters=(refcount storage allocator iter error tensor limits parallel)
for san in "${@:-asan tsan}"; do
  for s in $san; do
    case "$s" in
      asan) flag=address; export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1" ;;
      tsan) flag=thread; export TSAN_OPTIONS="halt_on_error=1:allocator_may_return_null=1:suppressions=$PWD/scripts/tsan.supp" ;;
      *) echo "unknown sanitizer $s"; exit 2 ;;
    esac
    echo "rust unit tests of the core under $s"
    RUSTC_BOOTSTRAP=1 RUSTFLAGS="-Zsanitizer=$flag -Cunsafe-allow-abi-mismatch=sanitizer" \
      cargo test --quiet --lib --target "$host" --target-dir "target/$s" -- --test-threads=4 "${filters[@]/%/::}"
  done
done
