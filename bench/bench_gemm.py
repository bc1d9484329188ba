#!/usr/bin/env python3
"""GEMM benchmark (not a test): libth's addmm against numpy's matmul in the same process.

    cargo build --release
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python bench/bench_gemm.py

(The workspace sets OPENBLAS_CORETYPE=Haswell, which halves numpy's GEMM; unset it for the
command only, so numpy runs OpenBLAS's AVX-512 kernel.) Cases: sgemm/dgemm squares 128..2048,
a tall-skinny product, Half and BFloat16, transposed operands, matrix-vector products (addmm
with one column, the addmv path). libth computes
`r = 0*r + 1*(a @ b)` with `THxTensor_addmm` on tensors whose memory numpy also views, so both
libraries multiply the very same buffers; numpy writes with `out=`. numpy has no bfloat16: its
row is what a numpy user does (convert to float32, matmul, round back), timed whole.

Samples alternate numpy and libth (paired against drift); each cell is the median.
Columns: GFLOP/s (2mnk / time), ratio = numpy time / libth time (> 1: libth faster), and
libth's fraction of the machine's FMA peak: 2 cores x clock x FLOPs/cycle of the widest FMA
(AVX-512: two 512-bit FMA pipes = 64 f32 / 32 f64 FLOPs per cycle; AVX2: half that). The
default peak is the nominal one (`nominal_peak`: /proc/cpuinfo's clock and flags); pass the
peak measured by ../shared/bench/peak.c with --peak-f32/--peak-f64 when the cores turbo
(on the Zen 5 kind: 480 f32 / 240 f64 GFLOP/s at ~3.75 GHz). Half/BFloat16 compute in f32, so
their peak is f32's.

Blocks of numpy and libth calls alternate, each after a pause (0.3 s, then until the process
is idle) and an untimed call, so neither library's idle worker threads (OpenBLAS spins for a
while after each call) share the two cores with the other's timed block.
"""

import argparse
import ctypes as C
import os
import statistics
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NPDT = {"Float": np.float32, "Double": np.float64, "Half": np.float16, "BFloat16": np.uint16}


def bf16_bits(x):
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_f32(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


class TH:
    def __init__(self, path):
        self.dll = C.CDLL(path)
        self.dll.THGetNumThreads.restype = C.c_int
        self.dll.THGetLastErrorCode.restype = C.c_int

    def f(self, name, res, args):
        fn = self.dll[name]
        fn.restype, fn.argtypes = res, args
        return fn

    def tensor(self, real, rows, cols, transposed=False):
        """A fresh TH matrix and a numpy view of its memory (a transposed view when asked)."""
        vp, i64 = C.c_void_p, C.c_int64
        r, c = (cols, rows) if transposed else (rows, cols)
        t = self.f(f"TH{real}Tensor_newWithSize2d", vp, [i64, i64])(r, c)
        p = self.f(f"TH{real}Tensor_data", vp, [vp])(t)
        dt = np.dtype(NPDT[real])
        arr = np.ctypeslib.as_array((C.c_uint8 * (r * c * dt.itemsize)).from_address(p)).view(dt).reshape(r, c)
        if transposed:
            tt = self.f(f"TH{real}Tensor_newTranspose", vp, [vp, C.c_int, C.c_int])(t, 0, 1)
            self.f(f"TH{real}Tensor_free", None, [vp])(t)
            return tt, arr.T
        return t, arr

    def free(self, real, t):
        self.f(f"TH{real}Tensor_free", None, [C.c_void_p])(t)

    def addmm(self, real):
        vp = C.c_void_p
        st = {"Float": C.c_float, "Double": C.c_double}.get(real, C.c_uint16)
        fn = self.f(f"TH{real}Tensor_addmm", None, [vp, st, vp, st, vp, vp])
        one = {"Float": 1.0, "Double": 1.0, "Half": 0x3C00, "BFloat16": 0x3F80}[real]
        zero = 0.0 if real in ("Float", "Double") else 0
        return lambda r, a, b: fn(r, zero, r, one, a, b)


def timed(f, reps):
    t0 = time.perf_counter()
    for _ in range(reps):
        f()
    return (time.perf_counter() - t0) / reps


SETTLE_S = 0.3
QUIET_CPU_S = 0.002  # process CPU time per 50 ms window that counts as idle
SETTLE_MAX_S = 3.0


def process_cpu():
    t = os.times()
    return t.user + t.system


def settle(op):
    """Lets the other library's idle threads go to sleep, then warms `op` up (untimed).

    Waits SETTLE_S, then until the process uses (almost) no CPU over a 50 ms window, at most
    SETTLE_MAX_S. OpenBLAS's workers spin after a call, usually ~0.1 s here but at times past
    0.3 s: a fixed 0.3 s pause then left them on the cores during libth's block (measured: f32
    512^2 at 37-43 GFLOP/s after such a pause, 98-121 after 1 s, 117-129 with OpenBLAS on one
    thread)."""
    time.sleep(SETTLE_S)
    end = time.perf_counter() + SETTLE_MAX_S
    while time.perf_counter() < end:
        c0 = process_cpu()
        time.sleep(0.05)
        if process_cpu() - c0 <= QUIET_CPU_S:
            break
    op()


def nominal_peak():
    """2 cores x the clock /proc/cpuinfo reports x FLOPs/cycle of the widest FMA (f32, f64).

    The clock read there is the base clock; cores that turbo run faster, so pass the measured
    peak (`../shared/bench/peak.c`) with --peak-f32/--peak-f64 where one is known."""
    mhz, flags = 0.0, set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("cpu MHz") and not mhz:
                    mhz = float(line.split(":")[1])
                elif line.startswith("flags") and not flags:
                    flags = set(line.split(":")[1].split())
    except OSError:
        return None
    lanes = 16 if "avx512f" in flags else 8 if "fma" in flags else 4
    f32 = os.cpu_count() * mhz / 1e3 * lanes * 2 * 2  # 2 FMA pipes, 2 FLOPs per FMA
    return f32, f32 / 2


def bench_case(th, real, m, k, n, ta, tb, samples):
    rng = np.random.default_rng(0)
    a_t, a = th.tensor(real, m, k, ta)
    b_t, b = th.tensor(real, k, n, tb)
    r_t, r = th.tensor(real, m, n)
    for x, shape in ((a, (m, k)), (b, (k, n))):
        v = rng.standard_normal(shape).astype(np.float32)
        x[...] = bf16_bits(v) if real == "BFloat16" else v.astype(NPDT[real])
    addmm = th.addmm(real)
    out = np.empty((m, n), dtype=np.float32 if real == "BFloat16" else NPDT[real])
    if real == "BFloat16":
        def np_op():
            out[...] = np.matmul(bf16_f32(a), bf16_f32(b))
            return bf16_bits(out)
    else:
        def np_op():
            np.matmul(a, b, out=out)

    def th_op():
        addmm(r_t, a_t, b_t)

    flops = 2.0 * m * n * k
    # repetitions per block from warm calls (a first call pays page faults and thread wake-ups;
    # estimated from it, a block of a fast op is a handful of calls instead of ~0.05 s)
    th_op()
    est = max(timed(th_op, 3), 1e-6)
    reps = max(1, int(0.05 / est))
    np_op()
    np_est = max(timed(np_op, 3), 1e-6)
    np_reps = max(1, int(0.05 / np_est))
    if np_est > 2.0:  # numpy float16 at large sizes: one sample is enough
        samples_np = 1
    else:
        samples_np = samples
    tt, tn = [], []
    for i in range(samples):
        # Each block starts after a pause and one untimed call: OpenBLAS's idle workers spin for
        # a while after a call, and on 2 cores a block started right after numpy's shares the
        # cores with them (measured here: libth 1024^2 f32 at 121 GFLOP/s alone, 77 right after
        # a numpy matmul).
        if i < samples_np:
            settle(np_op)
            tn.append(timed(np_op, np_reps))
        settle(th_op)
        tt.append(timed(th_op, reps))
    # correctness of the timed result against numpy
    got = bf16_f32(r) if real == "BFloat16" else r.astype(np.float64)
    want = np.matmul(a.astype(np.float64) if real != "BFloat16" else bf16_f32(a).astype(np.float64),
                     b.astype(np.float64) if real != "BFloat16" else bf16_f32(b).astype(np.float64))
    rel = float(np.max(np.abs(got - want)) / (np.max(np.abs(want)) + 1e-30))
    for t in (a_t, b_t, r_t):
        th.free(real, t)
    t_th, t_np = statistics.median(tt), statistics.median(tn)
    return flops / t_th / 1e9, flops / t_np / 1e9, t_np / t_th, rel


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", default=os.path.join(ROOT, "target", "release", "libth.so"))
    ap.add_argument("--samples", type=int, default=5)
    ap.add_argument("--peak-f32", type=float, default=None, help="default: nominal_peak()")
    ap.add_argument("--peak-f64", type=float, default=None)
    ap.add_argument("--quick", action="store_true", help="skip the 2048 and Half/BFloat16 1024 cases")
    ap.add_argument("--only", default=None, help="run only the cases whose 'dtype case' contains this text")
    args = ap.parse_args()
    th = TH(args.lib)
    nominal = nominal_peak() or (480.0, 240.0)
    args.peak_f32 = args.peak_f32 or nominal[0]
    args.peak_f64 = args.peak_f64 or nominal[1]
    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        if var in os.environ:
            print(f"warning: {var}={os.environ[var]} is set; numpy's OpenBLAS may not use its AVX-512 kernel")
    try:
        from threadpoolctl import threadpool_info

        info = [(d.get("internal_api"), d.get("architecture"), d.get("num_threads")) for d in threadpool_info()]
        print(f"numpy {np.__version__}, BLAS {info}")
    except ImportError:
        print(f"numpy {np.__version__}")
    print(f"libth threads: {th.dll.THGetNumThreads()}; peak f32 {args.peak_f32:.0f}, f64 {args.peak_f64:.0f} GFLOP/s")
    cases = []
    sizes = [128, 256, 512, 1024] + ([] if args.quick else [2048])
    for real in ("Float", "Double"):
        for s in sizes:
            cases.append((real, s, s, s, False, False, f"{s}^2"))
        cases.append((real, 16384, 256, 64, False, False, "tall-skinny 16384x256 @ 256x64"))
        for s in [1024] + ([] if args.quick else [2048]):
            cases.append((real, s, s, s, True, False, f"{s}^2 A^T"))
            cases.append((real, s, s, s, True, True, f"{s}^2 A^T B^T"))
        # matrix-vector (addmm with one column, as addmv): bound by reading the matrix
        for s in [1024] + ([] if args.quick else [4096]):
            cases.append((real, s, s, 1, False, False, f"matrix-vector {s}^2"))
            cases.append((real, s, s, 1, True, False, f"matrix-vector {s}^2 A^T"))
    for real in ("Half", "BFloat16"):
        for s in [256, 512] + ([] if args.quick else [1024]):
            cases.append((real, s, s, s, False, False, f"{s}^2"))
        cases.append((real, 512, 512, 512, True, True, "512^2 A^T B^T"))
    print()
    print("| dtype | case | libth GFLOP/s | numpy GFLOP/s | ratio numpy/libth time | libth % of peak | max rel err |")
    print("|---|---|---|---|---|---|---|")
    for real, m, k, n, ta, tb, name in cases:
        if args.only and args.only not in f"{real} {name}":
            continue
        g_th, g_np, ratio, rel = bench_case(th, real, m, k, n, ta, tb, args.samples)
        peak = args.peak_f64 if real == "Double" else args.peak_f32
        print(f"| {real} | {name} | {g_th:.1f} | {g_np:.1f} | {ratio:.2f} | {100 * g_th / peak:.0f}% | {rel:.1e} |",
              flush=True)


if __name__ == "__main__":
    main()
