#!/usr/bin/env bash
# Runs every test. On a fresh machine (Rust, gcc, python3 only) it first installs what the tests
# need: valgrind (Debian package) and a local venv (.venv) with numpy, pytest, torch and
# scikit-learn. Steps:
#   1. cargo fmt --check, cargo clippy -D warnings
#   2. cargo test: Rust unit tests, header staleness + symbol set, C tests + examples + C++ header;
#      the CPU-only build (--no-default-features) exports the same symbols
#   3. the C tests and examples again under valgrind (no errors, no definite leaks)
#   4. the numpy differential suite (tests/python) against target/debug/libth.so, then again
#      (and the kernel unit tests) with TH_CPU_CAPABILITY=scalar and =avx2; beside them the THNN
#      suite (tests/nn: PyTorch references, finite differences, the digits example)
#   5. THC on the CPU emulator (a `cuda-emulator` build in target/emu, TH_CUDA_EMULATOR=1): the
#      kernels' Rust tests, the THC C tests under valgrind, the THC differential suite
#      (tests/python/test_thc*.py) and THCUNN's (tests/nn/test_cunn_*.py); the kernel sources under ASan+UBSan and TSan
#      (c_tests/cuda_emu/run.sh); every kernel compiled by NVRTC for sm_80/sm_90 with no spills
#      (tests/cuda_nvrtc.rs; scripts/nvrtc.sh installs NVRTC from PyPI into target/nvrtc); THC
#      against Debian's real libcuda without a GPU (scripts/libcuda_nodevice.sh); the GPU
#      scripts' no-device path, and scripts/test_gpu.sh, bench/cuda.py and bench/cuda_nn.py on
#      the emulator; the digits network trained from C on the emulated device
#   6. install into a temporary prefix and build against it with pkg-config and CMake
#      (tests/install/run.sh; installs pkg-config and cmake if missing)
#   7. the C tests and examples built with clang under ASan+UBSan+LSan (scripts/sanitize.sh)
#   8. a short libFuzzer run of every fuzz target (scripts/fuzz.sh, TH_FUZZ_SECONDS each,
#      default 60; TH_SKIP_FUZZ=1 skips it; skipped by itself if cargo fuzz cannot run)
#   9. the Python package: `pip install ./ffi_examples/python` into .venv, then its pytest suite
#      (here with TH_LIBRARY=target/default/libth.so: the package's backend packs the debug
#      build made above instead of running cargo for a release build, ~13 minutes of CI)
#  10. MPI: the C and mpi4py examples (ffi_examples/mpi) on 4 ranks (scripts/mpi_test.sh; installs
#      Open MPI and mpi4py if missing)
#   optional: TH_SANITIZE_RUST_TESTS=1 also runs the core's Rust unit tests under ASan and
#      TSan (scripts/sanitize_rust.sh; two extra builds)
set -euo pipefail
cd "$(dirname "$0")/.."
# A test run builds the library in several configurations (dev, CPU-only, emulator, fuzz,
# sanitizers); incremental caches would add ~12 GB to a clean clone and are never reused there.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

need_apt=()
command -v valgrind >/dev/null 2>&1 || need_apt+=(valgrind)
command -v cc >/dev/null 2>&1 || need_apt+=(gcc)
command -v c++ >/dev/null 2>&1 || need_apt+=(g++)
command -v pkg-config >/dev/null 2>&1 || need_apt+=(pkg-config)
command -v cmake >/dev/null 2>&1 || need_apt+=(cmake)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "installing: ${need_apt[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# torch is the THNN suite's reference (tests/nn: torch.nn.functional and autograd in float64;
# about 5 GB with its CUDA libraries, ~2 minutes from PyPI); scikit-learn ships the 8x8 digits
# that the THNN training example learns.
if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c "import numpy, pytest, torch, sklearn" 2>/dev/null; then
  python3 -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check "numpy==2.4.6" "pytest>=8" "torch==2.15.0" "scikit-learn==1.9.1"
fi

cargo fmt --check
# Features are additive (no code is built only without the emulator), so clippy over the
# emulator build lints every line of the default one too.
cargo clippy --all-targets --features cuda-emulator -- -D warnings
cargo test
cargo build -q
# A CPU-only build (no `cuda` feature) exports exactly the same symbols: THC functions report
# "built without CUDA" there. It compiles while valgrind runs the C tests below.
cargo build -q --no-default-features --target-dir target/nocuda &
nocuda=$!
TH_VALGRIND=1 cargo test --test c_api
wait "$nocuda"
diff <(nm -D --defined-only target/debug/libth.so | awk '{print $3}' | sort) \
     <(nm -D --defined-only target/nocuda/debug/libth.so | awk '{print $3}' | sort)
# The default build, kept for the package and the sanitizers: target/debug holds the emulator
# build after the THC steps, and rebuilding the default one there would cost a compile.
mkdir -p target/default && cp target/debug/libth.so target/default/ && ln -sf libth.so target/default/libth.so.0
# The numpy differential suite with the best kernels the CPU has, and again with every other
# kernel copy: the plain one, and AVX2 where AVX-512 is present (the AVX2 copy is what runs by
# default on a CPU without AVX-512). The passes run side by side: each is mostly one Python
# thread, and CI's 30 minutes are tight.
TH_CPU_CAPABILITY=scalar cargo test -q --lib ops::
caps="best scalar"; grep -qw avx512f /proc/cpuinfo && caps="best scalar avx2"
pids=()
for cap in $caps; do
  if [ "$cap" = best ]; then unset TH_CPU_CAPABILITY; else export TH_CPU_CAPABILITY=$cap; fi
  TH_LIB="$PWD/target/debug/libth.so" .venv/bin/python -m pytest -q -p no:cacheprovider tests/python \
    >"target/pytest-$cap.log" 2>&1 &
  pids+=($!)
done
unset TH_CPU_CAPABILITY
# ... and beside them the THNN suite (every layer against PyTorch, finite differences, the digits
# training example from C), once, with the best kernels.
TH_LIB="$PWD/target/debug/libth.so" .venv/bin/python -m pytest -q -p no:cacheprovider tests/nn \
  >"target/pytest-nn.log" 2>&1 &
pids+=($!)
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
for cap in $caps; do echo "tests/python ($cap kernels): $(tail -n 1 "target/pytest-$cap.log")"; done
echo "tests/nn: $(tail -n 1 target/pytest-nn.log)"
if [ "$status" != 0 ]; then cat target/pytest-*.log; exit 1; fi
# Every kernel compiled by NVRTC for sm_80 and sm_90 (no spills, registers within budget).
TH_NVRTC_DIR="$(PYTHON=.venv/bin/python scripts/nvrtc.sh)" TH_REQUIRE_NVRTC=1 cargo test -q --test cuda_nvrtc
# THC against a real NVIDIA driver library without a GPU (Debian's non-free libcuda1 unpacked
# into target/libcuda): every entry point gets cuInit's CUDA_ERROR_NO_DEVICE as TH_ERR_NO_DEVICE.
LIBCUDA_DIR="$(scripts/libcuda_nodevice.sh)"
TH_LIBCUDA_DIR="$LIBCUDA_DIR" TH_REQUIRE_LIBCUDA=1 TH_VALGRIND=1 cargo test -q --test c_api thc_meets_the_real_driver
# ... and every THC entry point called there (the sweep also ran above without a driver)
LD_LIBRARY_PATH="$LIBCUDA_DIR" TH_LIB="$PWD/target/debug/libth.so" .venv/bin/python -m pytest -q \
  tests/python/test_thc_entry_points.py
# The GPU test script where there is no GPU: "no CUDA device: skipped".
TH_LIB="$PWD/target/debug/libth.so" scripts/test_gpu.sh
# THC on the emulated device: the same CUDA C sources compiled by the host C++ compiler (proves
# kernel logic, not GPU speed). The feature changes only this crate, so the dependencies built
# above are reused; the emulator library is kept in target/emu for the steps that load it.
EMU=(--features cuda-emulator)
cargo test -q "${EMU[@]}" --lib
TH_VALGRIND=1 cargo test -q "${EMU[@]}" --test c_api thc_c_tests
cargo build -q "${EMU[@]}"
mkdir -p target/emu && cp target/debug/libth.so target/emu/libth.so && ln -sf libth.so target/emu/libth.so.0
# every THC differential suite (test_thc*.py; the entry-point sweep is the no-device test above)
TH_CUDA_EMULATOR=1 TH_LIB="$PWD/target/emu/libth.so" .venv/bin/python -m pytest -q \
  $(ls tests/python/test_thc*.py | grep -v entry_points)
# THCUNN's layers against the host THNN (tests/nn/test_cunn_*.py)
TH_CUDA_EMULATOR=1 TH_LIB="$PWD/target/emu/libth.so" .venv/bin/python -m pytest -q -p no:cacheprovider \
  tests/nn/test_cunn_*.py
# ... and the digits network trained from C on the emulated device (ffi_examples/nn/digits_cuda.c)
TH_CUDA_EMULATOR=1 TH_LIB="$PWD/target/emu/libth.so" .venv/bin/python -m pytest -q -p no:cacheprovider \
  tests/nn/test_digits.py -k device
TH_GPU_TEST_EMULATOR=1 TH_SKIP_PYTHON=1 TH_LIB="$PWD/target/emu/libth.so" scripts/test_gpu.sh
TH_CUDA_EMULATOR=1 .venv/bin/python bench/cuda.py --lib target/emu/libth.so --smoke
TH_CUDA_EMULATOR=1 .venv/bin/python bench/cuda_nn.py --lib target/emu/libth.so --smoke
c_tests/cuda_emu/run.sh
tests/install/run.sh
TH_LIBRARY="$PWD/target/default/libth.so" .venv/bin/pip install -q --disable-pip-version-check \
  --force-reinstall --no-deps ./ffi_examples/python
(cd ffi_examples/python/tests && ../../../.venv/bin/python -m pytest -q -p no:cacheprovider .)
# ... and its device tensors on the emulated device
(cd ffi_examples/python/tests && TH_CUDA_EMULATOR=1 TH_LIB="$PWD/../../../target/emu/libth.so" \
  ../../../.venv/bin/python -m pytest -q -p no:cacheprovider test_cuda.py)
# MPI: the C and mpi4py examples on 4 ranks (installs Open MPI and mpi4py if missing; ~1 min)
scripts/mpi_test.sh
TH_LIBDIR="$PWD/target/default" ./scripts/sanitize.sh
# The fuzz step builds the whole library again with ASan instrumentation (several minutes on 2
# cores): CI must finish in 30 minutes, so it is skipped when the steps above already took more
# than TH_FUZZ_START_BY seconds (default 15 minutes; `scripts/fuzz.sh` runs it on its own).
if [ "$SECONDS" -le "${TH_FUZZ_START_BY:-900}" ]; then
  TH_FUZZ_DEV="${TH_FUZZ_DEV:-1}" ./scripts/fuzz.sh
else
  echo "fuzz: skipped: the steps above took ${SECONDS}s (TH_FUZZ_START_BY=${TH_FUZZ_START_BY:-900})"
fi
if [ "${TH_SANITIZE_RUST_TESTS:-0}" = 1 ]; then ./scripts/sanitize_rust.sh; fi
echo "all tests passed"
