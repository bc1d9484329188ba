#!/usr/bin/env bash
# Benchmarks libth against numpy (see docs/performance.md, "Benchmarks").
#   scripts/bench.sh [math|gemm|conv|nn|all] [ARGS...]
# math: bench/bench.py (pointwise ops, reductions; with the STREAM add probe bench/stream_add.c
# and the C per-call driver bench/percall.c), then bench/transposed.c (A.T+B against A+B from
# C, per dtype); gemm: bench/bench_gemm.py (sgemm/dgemm 128..2048,
# tall-skinny, transposed, Half/BFloat16, as GFLOP/s and fraction of peak); conv: bench/conv.py
# (THTensorConv against numpy's im2col + BLAS); nn: bench/nn.py (THNN layers against PyTorch's
# torch.nn.functional, forward and backward, 2 threads then 1; installs torch in the venv when
# missing; not part of all). Default: the first three, ARGS to bench.py (e.g.
# --quick, --only cadd, --json out.json); with a name, ARGS go to that script (conv.py takes
# none). Builds the release
# library and makes a local venv (.venv, numpy) when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c "import numpy" 2>/dev/null; then
  python3 -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check "numpy==2.4.6" "pytest>=8"
fi

what=all
case "${1:-}" in
  math | gemm | conv | nn | all) what=$1; shift ;;
esac
if [ "$what" = nn ] && ! .venv/bin/python -c "import torch" 2>/dev/null; then
  .venv/bin/pip install -q --disable-pip-version-check "torch==2.15.0"
fi

cargo build --release
lib=target/release/libth.so
if [ "$what" = math ] || [ "$what" = all ]; then
  mkdir -p target/bench
  cc -O2 -fopenmp -Wall -Wextra bench/stream_add.c -o target/bench/stream_add
  cc -std=c99 -O2 -Wall -Wextra -Werror -Iinclude bench/percall.c \
     -Ltarget/release -lth -Wl,-rpath,"$PWD/target/release" -o target/bench/percall
  .venv/bin/python bench/bench.py --lib "$lib" \
    --stream target/bench/stream_add --percall target/bench/percall "$@"
  cc -std=c99 -O2 -Wall -Wextra -Werror -Iinclude bench/transposed.c \
     -Ltarget/release -lth -Wl,-rpath,"$PWD/target/release" -o target/bench/transposed
  target/bench/transposed
fi
if [ "$what" = all ]; then
  set --
fi
if [ "$what" = gemm ] || [ "$what" = all ]; then
  # numpy's OpenBLAS picks its best kernel only without the workspace's OPENBLAS_* overrides
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python bench/bench_gemm.py --lib "$lib" "$@"
fi
if [ "$what" = conv ] || [ "$what" = all ]; then
  TH_LIB="$lib" .venv/bin/python bench/conv.py
fi
if [ "$what" = nn ]; then
  .venv/bin/python bench/nn.py --lib "$lib" "$@"
fi
