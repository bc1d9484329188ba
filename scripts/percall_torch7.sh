#!/usr/bin/env bash
# The per-call reference of issue 26: bench/percall.c against torch7's own TH and against th,
# on this machine, alternating. torch7's lib/TH is built with cmake, without OpenMP: with it
# every call opens an OpenMP region even for 16 elements (~200 ns here), which is not TH's
# small-op cost. Usage: scripts/percall_torch7.sh TORCH7_CHECKOUT [calls_per_batch]
# (a checkout of github.com/torch/torch7; th's release library must be built).
set -euo pipefail
cd "$(dirname "$0")/.."
src=$(cd "$1" && pwd)
calls=${2:-500000}
out=$PWD/target/torch7
mkdir -p "$out/build" "$out/include/TH"
cmake -S "$src/lib/TH" -B "$out/build" -DWITH_OPENMP=OFF -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_FLAGS="-O3 -march=native -Wno-implicit-function-declaration -Wno-incompatible-pointer-types -Wno-int-conversion" >/dev/null
make -C "$out/build" -j2 >/dev/null
cp "$src"/lib/TH/*.h "$out/build/THGeneral.h" "$out/include/TH/"
cp -r "$src/lib/TH/generic" "$src/lib/TH/vector" "$out/include/TH/"
cc -std=gnu99 -O2 -DPERCALL_TORCH7 -I"$out/include" -I"$out/include/TH" bench/percall.c \
  -L"$out/build" -lTH -Wl,-rpath,"$out/build" -o "$out/percall_torch7"
cc -std=c99 -O2 -Iinclude bench/percall.c -Ltarget/release -lth -Wl,-rpath,"$PWD/target/release" \
  -o "$out/percall_th"
for round in 1 2 3; do
  echo "torch7 TH: $("$out/percall_torch7" "$calls")"
  echo "th:        $("$out/percall_th" "$calls")"
done
