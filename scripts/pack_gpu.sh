#!/usr/bin/env bash
# Builds libth.so here (release, default features: the real CUDA backend, no emulator) and packs
# what a GPU machine without a Rust toolchain needs to test it into target/th-gpu.tar.gz:
#
#   th-gpu/lib/libth.so          (stripped but for its exported symbols: the carried tree must
#                                 stay under 64 MiB)
#   th-gpu/include/              th-gpu/c_tests/        th-gpu/tests/python/
#   th-gpu/tests/nn/             (the THCUNN suite: tests/nn/test_cunn_*.py and its helpers; the
#                                 digits training test with its data in tests/nn/digits/, exported
#                                 here from scikit-learn, and ffi_examples/nn/ holding its programs)
#   th-gpu/scripts/test_gpu.sh   th-gpu/bench/cuda.py   th-gpu/BUILD_INFO
#   th-gpu/cubin/                every kernel module's sm_90 CUBIN under its disk-cache name, compiled
#                                 here by NVRTC (scripts/nvrtc.sh), so the GPU machine compiles
#                                 nothing when its NVRTC has the same version (test_gpu.sh points
#                                 TH_CUDA_CACHE_DIR at a copy); --no-cubin leaves them out
#   th-gpu/ffi_examples/python/{th,tests/{test_cuda,_data}.py}   (the th package: DLPack with torch)
#
# There: tar xzf th-gpu.tar.gz && th-gpu/scripts/test_gpu.sh   (and python3 th-gpu/bench/cuda.py)
#
# Usage: scripts/pack_gpu.sh [--debug] [--no-build] [--check] [--out FILE]
#   --debug     pack the debug build instead of the release build
#   --no-build  pack what target/<profile> already holds
#   --no-cubin  ship no CUBINs (the GPU machine compiles each module at first use)
#   --check     unpack the tarball into a temporary folder and run its test_gpu.sh there
set -euo pipefail
cd "$(dirname "$0")/.."

profile=release build=1 cubin=1 check=0 out=target/th-gpu.tar.gz
while [ $# -gt 0 ]; do
  case "$1" in
    --debug) profile=debug; shift ;;
    --no-build) build=0; shift ;;
    --no-cubin) cubin=0; shift ;;
    --check) check=1; shift ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "pack_gpu.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
LIMIT=$((64 * 1024 * 1024))

if [ "$build" = 1 ]; then
  if [ "$profile" = release ]; then cargo build --release --lib; else cargo build --lib; fi
fi
lib="target/$profile/libth.so"
[ -f "$lib" ] || { echo "pack_gpu.sh: $lib missing (build it, or drop --no-build)" >&2; exit 1; }
# A library built with the emulator feature would test the CPU, not the GPU.
if grep -q TH_CUDA_EMULATOR "$lib"; then
  echo "pack_gpu.sh: $lib was built with cuda-emulator; rebuild with default features" >&2
  exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root="$tmp/th-gpu"
mkdir -p "$root/lib" "$root/scripts" "$root/bench" "$root/tests"
objcopy --strip-unneeded "$lib" "$root/lib/libth.so"
soname=$(LC_ALL=C readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ -n "$soname" ] && ln -s libth.so "$root/lib/$soname"
cp -r include "$root/include"
mkdir -p "$root/c_tests"
cp c_tests/*.c c_tests/*.h "$root/c_tests/"
cp -r tests/python "$root/tests/python"
mkdir -p "$root/tests/nn"
cp tests/nn/conftest.py tests/nn/nnlib.py tests/nn/cunnlib.py tests/nn/test_cunn_*.py tests/nn/test_digits.py \
  tests/nn/digits_data.py "$root/tests/nn/"
# The GPU machine may lack scikit-learn: its digits go along as .npy files.
PY=.venv/bin/python; [ -x "$PY" ] || PY=python3
"$PY" tests/nn/digits_data.py "$root/tests/nn/digits"
mkdir -p "$root/ffi_examples/nn"
cp ffi_examples/nn/*.c "$root/ffi_examples/nn/"
mkdir -p "$root/ffi_examples/python/tests"
cp -r ffi_examples/python/th "$root/ffi_examples/python/th"
cp ffi_examples/python/tests/test_cuda.py ffi_examples/python/tests/_data.py "$root/ffi_examples/python/tests/"
find "$root" -name __pycache__ -type d -prune -exec rm -rf {} +
cp scripts/test_gpu.sh "$root/scripts/"
if [ "$cubin" = 1 ]; then
  # The NVRTC gate test compiles every module for sm_80 and sm_90 and, given TH_CUBIN_DIR,
  # writes the sm_90 CUBINs there.
  mkdir -p "$root/cubin"
  nvrtc_dir=$(scripts/nvrtc.sh)
  if [ "$profile" = release ]; then rel=--release; else rel=; fi
  TH_NVRTC_DIR="$nvrtc_dir" TH_REQUIRE_NVRTC=1 TH_CUBIN_DIR="$root/cubin" \
    cargo test $rel --test cuda_nvrtc -q every_module_compiles_within_budget >&2
  echo "pack_gpu.sh: $(ls "$root/cubin" | wc -l) sm_90 CUBINs" >&2
fi
cp bench/cuda*.py "$root/bench/" 2>/dev/null || true
{
  echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (with local changes)')"
  echo "profile: $profile, default features"
  echo "rustc: $(rustc --version 2>/dev/null || echo unknown)"
  echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -srm)"
  echo "libth.so sha256: $(sha256sum "$root/lib/libth.so" | cut -d' ' -f1)"
} >"$root/BUILD_INFO"

mkdir -p "$(dirname "$out")"
tar -C "$tmp" -czf "$out" th-gpu
unpacked=$(du -sb "$root" | cut -f1)
size=$(stat -c %s "$out")
echo "pack_gpu.sh: $out: $((size / 1024 / 1024)) MiB packed, $((unpacked / 1024 / 1024)) MiB unpacked" >&2
if [ "$unpacked" -gt "$LIMIT" ]; then
  echo "pack_gpu.sh: the tree exceeds the 64 MiB a GPU machine accepts" >&2
  # An unoptimised debug build is only packed to try the packing itself.
  [ "$profile" = debug ] || exit 1
fi

if [ "$check" = 1 ]; then
  chk="$tmp/check"
  mkdir -p "$chk"
  tar -C "$chk" -xzf "$out"
  # Only what the tarball holds: no repository libth.so, no TH_LIB from the caller.
  env -u TH_LIB "$chk/th-gpu/scripts/test_gpu.sh"
fi
echo "$(pwd)/$out"
