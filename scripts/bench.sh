#!/usr/bin/env bash
# Benchmarks libth against numpy (see bench/bench.py and the README's "Benchmarks" section).
# Builds the release library, the STREAM add probe (bench/stream_add.c) and the C per-call
# driver (bench/percall.c), makes a local venv (.venv, numpy) when missing, then runs
# bench/bench.py. Extra arguments go to bench.py (e.g. --quick, --only cadd, --json out.json).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c "import numpy" 2>/dev/null; then
  python3 -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check "numpy==2.4.6" "pytest>=8"
fi

cargo build --release
mkdir -p target/bench
cc -O2 -fopenmp -Wall -Wextra bench/stream_add.c -o target/bench/stream_add
cc -std=c99 -O2 -Wall -Wextra -Werror -Iinclude bench/percall.c \
   -Ltarget/release -lth -Wl,-rpath,"$PWD/target/release" -o target/bench/percall

exec .venv/bin/python bench/bench.py --lib target/release/libth.so \
  --stream target/bench/stream_add --percall target/bench/percall "$@"
