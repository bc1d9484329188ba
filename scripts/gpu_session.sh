#!/usr/bin/env bash
# One lent-GPU session's run, on the GPU machine, from the repository root there: unpacks the
# tarball scripts/pack_gpu.sh made here (copied to gpu/th-gpu.tar.gz, a folder git ignores
# through .git/info/exclude and the device call carries), then runs the benchmark and the GPU
# suite, each under its own time limit so one slow part cannot eat the lease, and leaves the logs
# in $OUT (bench.log, bench.json, test.log, gpu.txt). The last lines printed are the summary.
#
#   device run:  scripts/gpu_session.sh [BENCH_SECONDS] [TEST_SECONDS]   (defaults 150, 240)
#   here:        TH_GPU_TEST_EMULATOR=1 OUT=/tmp/out scripts/gpu_session.sh   (with an emulator
#                build packed: proves the script, not the GPU)
set -uo pipefail
cd "$(dirname "$0")/.."
bench_s=${1:-150} test_s=${2:-240}
OUT=${OUT:-$(mktemp -d)}
export PYTHONUNBUFFERED=1
tmp=$(mktemp -d)
tar -C "$tmp" -xzf gpu/th-gpu.tar.gz || { echo "gpu_session: no gpu/th-gpu.tar.gz"; exit 1; }
pack="$tmp/th-gpu"
cat "$pack/BUILD_INFO"
{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem,clocks.max.sm --format=csv 2>&1
  python3 -c 'import torch; print("torch", torch.__version__, torch.version.cuda)' 2>&1
  ldconfig -p | grep -E 'libnvrtc|libcublas' 2>&1 | head
} | tee "$OUT/gpu.txt"

# The bench finds libnvrtc.so.13 itself; the shipped CUBINs serve as its disk cache.
cache="$tmp/cubin"
cp -r "$pack/cubin" "$cache" 2>/dev/null || mkdir -p "$cache"
t0=$(date +%s)
TH_CUDA_CACHE_DIR="$cache" timeout "$bench_s" python3 "$pack/bench/cuda.py" --quick --json "$OUT/bench.json" \
  >"$OUT/bench.log" 2>&1
bench_rc=$?
t1=$(date +%s)
TH_REQUIRE_GPU=1 TH_SKIP_HOST=1 timeout "$test_s" "$pack/scripts/test_gpu.sh" >"$OUT/test.log" 2>&1
test_rc=$?
t2=$(date +%s)

echo "=== bench (rc $bench_rc, $((t1 - t0)) s)"
cat "$OUT/bench.log"
echo "=== tests (rc $test_rc, $((t2 - t1)) s): parts and failures"
grep -E '^test_gpu: |passed|failed|FAILED|Error|error:' "$OUT/test.log" | tail -60
