#!/usr/bin/env bash
# The CUDA kernels on the CPU emulator under the sanitizers: src/cuda/kernels/*.cu, the emulator
# runtime and the tests (test_kernels.cpp, test_lines.cpp, test_strict.cpp) built with g++, once
# with AddressSanitizer + UndefinedBehaviorSanitizer (float-to-int overflow included) and once with ThreadSanitizer, at -O0 (compiling
# dominates; the checks run in about a second). Each must pass its checks with no sanitizer
# report (a report aborts the run). Objects go to target/cuda_emu, rebuilt when stale.
#
#   c_tests/cuda_emu/run.sh           both builds
#   c_tests/cuda_emu/run.sh asan      one of them (asan | tsan)
set -euo pipefail
cd "$(dirname "$0")/../.."
CXX=${CXX:-g++}
OUT=target/cuda_emu
JOBS=${JOBS:-2}
COMMON=(-std=c++20 -DTH_EMULATOR -O0 -g -pthread -ffp-contract=off -Wall -Wextra -Werror
        -include csrc/cuda_emu/shim.h -Isrc/cuda/kernels -Icsrc/cuda_emu -Ic_tests/cuda_emu)
SOURCES=(src/cuda/kernels/*.cu csrc/cuda_emu/emulator.cpp c_tests/cuda_emu/test_kernels.cpp c_tests/cuda_emu/test_lines.cpp
         c_tests/cuda_emu/test_strict.cpp)

build_and_run() {
  local kind=$1; shift
  local dir="$OUT/$kind" flags=("$@") objs=() pids=()
  mkdir -p "$dir"
  echo "cuda_emu [$kind]: compiling ${#SOURCES[@]} sources"
  for src in "${SOURCES[@]}"; do
    local obj="$dir/$(basename "$src").o"
    objs+=("$obj")
    # Up to date: newer than its source, every header and this script (the flags).
    if [ "$obj" -nt "$src" ] && [ "$obj" -nt "$0" ] &&
      [ -z "$(find src/cuda/kernels csrc/cuda_emu c_tests/cuda_emu \( -name '*.cuh' -o -name '*.h' \) -newer "$obj" -print -quit)" ]; then
      continue
    fi
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
    "$CXX" -x c++ "${COMMON[@]}" "${flags[@]}" -c "$src" -o "$obj" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  # -rdynamic: test_lines.cpp finds the kernels' extern "C" symbols with dlsym (to run each
  # block of a launch on its own thread).
  "$CXX" "${flags[@]}" -pthread -rdynamic "${objs[@]}" -o "$dir/test_kernels"
  echo "cuda_emu [$kind]: running"
  local t0=$SECONDS
  "$dir/test_kernels"
  echo "cuda_emu [$kind]: passed in $((SECONDS - t0))s"
}

which=${1:-all}
if [ "$which" = all ] || [ "$which" = asan ]; then
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    build_and_run asan -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all
fi
if [ "$which" = all ] || [ "$which" = tsan ]; then
  TSAN_OPTIONS=halt_on_error=1 build_and_run tsan -fsanitize=thread -DTH_EMU_SAMPLE_DTYPES
fi
