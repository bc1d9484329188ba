#!/usr/bin/env bash
# THC's tests on a machine WITH an NVIDIA GPU and without a Rust toolchain: runs, on the real
# device, every c_tests/test_thc_*.c (compiled as C99 against include/ and a prebuilt libth.so),
# then the Python parts, each named in the summary: products (cuBLAS against the host engine),
# sorts, index/mask/scatter/gather, random, the pointwise/reduction differential suites, the
# th package's device tensors with DLPack to and from torch (where torch has CUDA), and the
# host engine's own suite.
#
# Runs from the repository (libth.so from target/release, else target/debug) or from the tree
# scripts/pack_gpu.sh packs (lib/libth.so). Needs cc and python3 with numpy and pytest.
#
# Without a device it prints "no CUDA device: skipped" and exits 0; TH_REQUIRE_GPU=1 makes that
# a failure. Kernels are compiled at first use by the machine's own libnvrtc.so.13; matrix
# products use its libcublas.so.13: both are looked for in TH_NVRTC_DIR / TH_CUBLAS_DIR, then
# `ldconfig -p`, CUDA_HOME, /usr/local/cuda*, and the nvidia-* pip wheels of the Python used.
#
# Environment: TH_LIB (libth.so to test), TH_PYTHON (default python3), TH_REQUIRE_GPU=1,
# TH_SKIP_PYTHON=1 (C tests only), TH_SKIP_HOST=1 (no host-engine suite), CC (default cc).
set -euo pipefail
# The real device only; TH_GPU_TEST_EMULATOR=1 (with a cuda-emulator build) instead runs this
# script on the CPU emulator, to test the script itself on a machine without a GPU.
if [ "${TH_GPU_TEST_EMULATOR:-0}" = 1 ]; then export TH_CUDA_EMULATOR=1; else unset TH_CUDA_EMULATOR; fi
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
PY=${TH_PYTHON:-python3}
CC=${CC:-cc}
say() { echo "test_gpu: $*"; }
die() { echo "test_gpu: $*" >&2; exit 1; }

# --- the library under test -------------------------------------------------------------
lib=${TH_LIB:-}
if [ -z "$lib" ]; then
  for c in lib/libth.so target/release/libth.so target/debug/libth.so; do
    [ -f "$c" ] && { lib="$here/$c"; break; }
  done
fi
[ -n "$lib" ] && [ -f "$lib" ] || die "no libth.so (set TH_LIB, or run scripts/pack_gpu.sh on the build machine)"
lib=$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")
say "library: $lib"
command -v "$CC" >/dev/null || die "needs a C compiler (CC=$CC)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Programs link with -lth and then need the library's SONAME (libth.so.0): a private folder
# holds both names for whatever TH_LIB names.
libdir="$work/lib"
mkdir -p "$libdir"
ln -s "$lib" "$libdir/libth.so"
soname=$(LC_ALL=C readelf -d "$lib" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p' || true)
soname=${soname:-libth.so.0} # no readelf: the name build.rs gives a 0.x version
[ -n "$soname" ] && [ "$soname" != libth.so ] && ln -s "$lib" "$libdir/$soname"

# CUBINs shipped by scripts/pack_gpu.sh: a writable copy serves as the disk cache, so nothing
# compiles when this machine's NVRTC has the packing machine's version (else each module
# compiles at first use and is cached there).
if [ -z "${TH_CUDA_CACHE_DIR+x}" ] && [ -d "$here/cubin" ]; then
  mkdir -p "$work/cubin"
  cp "$here/cubin"/*.cubin "$work/cubin/" 2>/dev/null || true
  export TH_CUDA_CACHE_DIR="$work/cubin"
  say "cubins: $(ls "$work/cubin" | wc -l) shipped"
fi

# --- the machine's CUDA libraries ---------------------------------------------------------
# Folders of the nvidia-* pip wheels of $PY (CUDA 13 wheels: nvidia/cu13/lib; CUDA 12 ones:
# nvidia/<component>/lib).
wheel_dirs() {
  "$PY" - 2>/dev/null <<'EOF' || true
import glob, os, site, sys
roots = set(site.getsitepackages() + [site.getusersitepackages()] + sys.path)
for r in sorted(p for p in roots if p and os.path.isdir(os.path.join(p, "nvidia"))):
    for d in sorted(glob.glob(os.path.join(r, "nvidia", "*", "lib"))):
        print(d)
EOF
}

# The first folder holding $1, in the order above; empty if none.
find_lib() {
  local name=$1 override=$2 d
  if [ -n "$override" ]; then
    [ -f "$override/$name" ] && { echo "$override"; return; }
    echo "test_gpu: $name not in $override" >&2
  fi
  d=$(/sbin/ldconfig -p 2>/dev/null | awk -v n="$name" '$1 == n {print $NF; exit}')
  [ -n "$d" ] && { dirname "$d"; return; }
  for d in ${CUDA_HOME:+"$CUDA_HOME/lib64" "$CUDA_HOME/lib"} /usr/local/cuda/lib64 /usr/local/cuda-13*/lib64 \
    /usr/local/cuda/targets/x86_64-linux/lib /usr/lib/x86_64-linux-gnu $(wheel_dirs); do
    [ -f "$d/$name" ] && { echo "$d"; return; }
  done
  return 0
}

nvrtc_dir=$(find_lib libnvrtc.so.13 "${TH_NVRTC_DIR:-}")
cublas_dir=$(find_lib libcublas.so.13 "${TH_CUBLAS_DIR:-}")
extra=""
for d in "$nvrtc_dir" "$cublas_dir"; do
  [ -n "$d" ] && case ":$extra:" in *":$d:"*) ;; *) extra="${extra:+$extra:}$d" ;; esac
done
export LD_LIBRARY_PATH="$libdir${extra:+:$extra}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# --- is there a device? (asked of the library itself) -----------------------------------
cat >"$work/probe.c" <<'EOF'
#include <TH/TH.h>
#include <stdio.h>
int main(void) {
  THCState *s = THCState_alloc();
  int n = THCState_getNumDevices(s);
  if (n <= 0) printf("%s\n", THGetLastError() ? THGetLastError() : "no device");
  else printf("%d\n", n);
  THCState_free(s);
  return n > 0 ? 0 : 3;
}
EOF
"$CC" -std=c99 -I include "$work/probe.c" -o "$work/probe" -L "$libdir" -lth || die "cannot build against $lib"
status=0
probe=$("$work/probe" 2>&1) || status=$?
if [ "$status" -ne 0 ] && [ "$status" -ne 3 ]; then
  die "the device probe failed to run (status $status): $probe"
fi
if [ "$status" -eq 3 ]; then
  if [ "${TH_REQUIRE_GPU:-0}" = 1 ]; then
    die "TH_REQUIRE_GPU=1 but no CUDA device: $probe"
  fi
  say "no CUDA device: skipped ($probe)"
  exit 0
fi
say "$probe CUDA device(s)${TH_CUDA_EMULATOR:+ (the CPU emulator: not a GPU)}"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader |
  sed 's/^/test_gpu: gpu: /' || true
[ -n "$nvrtc_dir" ] || [ -n "${TH_CUDA_EMULATOR:-}" ] || die "no libnvrtc.so.13 (kernels cannot be compiled): set TH_NVRTC_DIR or install nvidia-cuda-nvrtc"
say "nvrtc: ${nvrtc_dir:-(not found)}/libnvrtc.so.13"
if [ -n "$cublas_dir" ]; then say "cublas: $cublas_dir/libcublas.so.13"; else say "cublas: libcublas.so.13 not found (matrix products will fail)"; fi

# --- the C tests --------------------------------------------------------------------------
failed=()
ran=0
for src in c_tests/test_thc_*.c; do
  [ -f "$src" ] || continue
  name=$(basename "$src" .c)
  if ! "$CC" -std=c99 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L -g -I include -I c_tests "$src" \
    -o "$work/$name" -L "$libdir" -lth -lpthread -lm; then
    failed+=("$name (compile)")
    continue
  fi
  ran=$((ran + 1))
  # A device exists: programs that can skip without one (test_thc_e2e.c) must not.
  if out=$(TH_REQUIRE_DEVICE=1 TH_TEST_TMPDIR="$work" "$work/$name" 2>&1); then
    say "$name: ${out//$'\n'/ | }"
  else
    echo "$out" >&2
    failed+=("$name")
  fi
done
[ "$ran" -gt 0 ] || failed+=("no c_tests/test_thc_*.c found")

# --- the Python parts ----------------------------------------------------------------------
# Each part is one pytest run, named in the summary. The THC suites compare every device result
# with the host engine's on the same values and layouts (tests/python/thclib.py);
# TH_REQUIRE_DEVICE=1 makes them fail, not skip, if THC cannot start (a device was found above).
# -rs prints why a test skipped (e.g. torch missing).
passed=()
pytest_part() {
  local name=$1; shift
  say "--- $name"
  if env TH_LIB="$lib" TH_REQUIRE_DEVICE=1 "$PY" -m pytest -q -rs -p no:cacheprovider "$@"; then
    passed+=("$name")
  else
    failed+=("$name")
  fi
}
thc_suites=(tests/python/test_thc_blas.py tests/python/test_thc_sort.py tests/python/test_thc_index.py
  tests/python/test_thc_random.py tests/python/test_thc.py tests/python/test_thc_math.py
  tests/python/test_thc_conv.py tests/python/test_thc_lapack.py tests/python/test_thc_entry_points.py)
if [ "${TH_SKIP_PYTHON:-0}" = 1 ]; then
  say "python parts: skipped (TH_SKIP_PYTHON=1)"
elif ! "$PY" -c "import numpy, pytest" 2>/dev/null; then
  failed+=("python parts: $PY lacks numpy or pytest (set TH_PYTHON, or TH_SKIP_PYTHON=1)")
else
  pytest_part "products: addmm addmv addr addbmm baddbmm dot, THCudaBlas_* (cuBLAS vs the host)" tests/python/test_thc_blas.py
  pytest_part "sorts: sort topk kthvalue median mode cumsum cumprod" tests/python/test_thc_sort.py
  pytest_part "index, mask, scatter/gather, nonzero" tests/python/test_thc_index.py
  pytest_part "random: Philox bits, state round trip, distributions" tests/python/test_thc_random.py
  pytest_part "pointwise, reductions, constructors (differential)" tests/python/test_thc.py tests/python/test_thc_math.py
  pytest_part "convolutions, LAPACK, entry points" tests/python/test_thc_conv.py tests/python/test_thc_lapack.py \
    tests/python/test_thc_entry_points.py
  # THCUNN against the host THNN (its conftest imports torch, there on the GPU machines)
  pytest_part "THCUNN layers (differential)" tests/nn/test_cunn_*.py
  # The digits network trained from C on the device (ffi_examples/nn/digits_cuda.c): >= 95% held
  # out, and its Double losses within 1e-5 of the host THNN run's (the pack ships the data).
  if [ -f tests/nn/digits/x.npy ]; then export TH_DIGITS_DIR="$here/tests/nn/digits"; fi
  pytest_part "THCUNN digits training on the device" tests/nn/test_digits.py -k device
  unset TH_DIGITS_DIR
  # The th package's device tensors and DLPack: th -> torch.from_dlpack (shared pointer, the
  # stream argument) and torch -> th.from_dlpack; the torch tests skip without torch+CUDA.
  if [ -f ffi_examples/python/tests/test_cuda.py ]; then
    if torch=$("$PY" -c 'import torch; print(torch.__version__, "CUDA" if torch.cuda.is_available() else "no CUDA")' 2>/dev/null); then
      say "torch $torch"
    else
      say "torch: not importable by $PY: the DLPack exchange with torch is skipped"
    fi
    PYTHONPATH="$here/ffi_examples/python${PYTHONPATH:+:$PYTHONPATH}" \
      pytest_part "th package: device tensors, DLPack with torch" ffi_examples/python/tests/test_cuda.py
  else
    say "th package: ffi_examples/python missing: skipped"
  fi
  if [ "${TH_SKIP_HOST:-0}" = 1 ]; then
    say "host engine suite: skipped (TH_SKIP_HOST=1)"
  else
    pytest_part "host engine (the rest of tests/python)" tests/python "${thc_suites[@]/#/--ignore=}"
  fi
fi

if [ ${#failed[@]} -gt 0 ]; then
  printf 'test_gpu: FAILED: %s\n' "${failed[@]}" >&2
  exit 1
fi
[ ${#passed[@]} -gt 0 ] && printf 'test_gpu: passed: %s\n' "${passed[@]}"
say "all GPU tests passed ($ran C programs${passed:+, ${#passed[@]} python parts})"
