#!/usr/bin/env bash
# The C tests and examples built with clang under AddressSanitizer + UndefinedBehaviorSanitizer
# (LeakSanitizer included) against libth, each run and required to exit 0 with no report.
#
#   scripts/sanitize.sh            against target/debug/libth.so (run `cargo build` first;
#                                  TH_LIBDIR=dir to use another build)
#   TH_SANITIZE_RUST=1 scripts/sanitize.sh
#                                  also instruments the Rust library itself with
#                                  -Zsanitizer=address (stable rustc with RUSTC_BOOTSTRAP=1,
#                                  scoped to this build; own target dir target/asan)
#
# The library's own memory is C heap (THAlloc) and Rust's system allocator, both malloc, so
# ASan's interceptors check every allocation and free the library makes (double frees, invalid
# frees, leaks) even when the Rust code itself is not instrumented.
# Needs clang-14 and libclang-rt-14-dev (Debian); installs them when missing and apt is usable,
# skips with a message otherwise (TH_REQUIRE_SANITIZERS=1 makes that an error).
set -euo pipefail
cd "$(dirname "$0")/.."

CLANG=${CLANG:-clang-14}
have_asan_rt() {
  "$CLANG" -print-file-name=libclang_rt.asan-x86_64.a 2>/dev/null | grep -q / &&
    [ -f "$("$CLANG" -print-file-name=libclang_rt.asan-x86_64.a)" ]
}
if ! command -v "$CLANG" >/dev/null 2>&1 || ! have_asan_rt; then
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    echo "installing clang-14 libclang-rt-14-dev"
    { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq clang-14 libclang-rt-14-dev; } >/dev/null || true
  fi
fi
if ! command -v "$CLANG" >/dev/null 2>&1 || ! have_asan_rt; then
  echo "sanitizers: $CLANG with its ASan runtime is not available: skipped"
  [ "${TH_REQUIRE_SANITIZERS:-0}" = 1 ] && exit 1
  exit 0
fi

if [ "${TH_SANITIZE_RUST:-0}" = 1 ]; then
  host=$(rustc -vV | sed -n 's/^host: //p')
  # --target keeps build scripts and proc macros uninstrumented.
  RUSTC_BOOTSTRAP=1 RUSTFLAGS="-Zsanitizer=address -Cunsafe-allow-abi-mismatch=sanitizer" \
    cargo build --quiet --lib --target "$host" --target-dir target/asan
  libdir="$PWD/target/asan/$host/debug"
else
  libdir="${TH_LIBDIR:-$PWD/target/debug}"
fi
[ -f "$libdir/libth.so" ] || { echo "sanitizers: $libdir/libth.so missing (run cargo build)"; exit 1; }

out="$PWD/target/sanitize"
mkdir -p "$out"
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:halt_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export TH_TEST_TMPDIR="${TMPDIR:-/tmp}"
pass=0
fail=0
for src in c_tests/*.c ffi_examples/*.c; do
  exe="$out/$(basename "$src" .c)"
  "$CLANG" -std=c99 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L -g -O1 \
    -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer \
    -Iinclude -Ic_tests "$src" -o "$exe" -L"$libdir" -Wl,-rpath,"$libdir" -lth -lpthread -lm
  if LD_LIBRARY_PATH="$libdir" "$exe" >"$exe.log" 2>&1; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAILED under ASan+UBSan: $src"
    tail -n 60 "$exe.log"
  fi
done
echo "sanitizers (ASan+UBSan+LSan, clang): $pass passed, $fail failed"
[ "$fail" -eq 0 ]
