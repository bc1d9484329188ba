#!/usr/bin/env python3
"""libth vs numpy, same process, same data: pointwise ops, transposed/broadcast adds, float
math, tiny-op call cost and (when the library has them) sums.

Usually run through `./scripts/bench.sh`, which builds everything and calls

    python bench/bench.py --lib target/release/libth.so --stream target/bench/stream_add \
        --percall target/bench/percall

Every libth tensor's memory is also viewed as a numpy array, so both libraries read and write
the very same buffers (numpy writes with `out=`). Each case alternates numpy and libth samples
(paired, so slow drift hits both alike) and reports medians. A sample runs the op k times with
k chosen so one sample lasts >= ~1 ms (tiny ops) and always at least one call.

Columns: times are per call; ratio = numpy time / libth time (> 1: libth is faster); GB/s
counts logical bytes (each input read once, the output written once); %STREAM and %NT are
libth's GB/s as a fraction of the STREAM add bandwidth measured by `--stream` in this run with
as many threads as libth uses (ordinary stores / non-temporal stores). Threads: both libraries
at their defaults (numpy's ufuncs are single-threaded; libth uses THGetNumThreads()).
"""

import argparse
import ctypes as C
import gc
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
F32 = np.float32
# The scalar argument of cadd/add, converted to a C float once (as the th package's dtype
# converter does), not by ctypes on every call: the numpy side likewise gets np.float32 scalars.
ONE = C.c_float(1.0)


class TH:
    """The few libth entry points the benchmark calls, with fixed ctypes signatures."""

    def __init__(self, path):
        self.dll = C.CDLL(path)
        vp, i64, f, i = C.c_void_p, C.c_int64, C.c_float, C.c_int
        self._sig("THFloatTensor_newWithSize1d", vp, [i64])
        self._sig("THFloatTensor_newWithSize2d", vp, [i64, i64])
        self._sig("THFloatTensor_newTranspose", vp, [vp, i, i])
        self._sig("THFloatTensor_data", vp, [vp])
        self._sig("THFloatTensor_free", None, [vp])
        self._sig("THFloatTensor_nDimension", i, [vp])
        self._sig("THFloatTensor_cadd", None, [vp, vp, f, vp])
        self._sig("THFloatTensor_cmul", None, [vp, vp, vp])
        self._sig("THFloatTensor_add", None, [vp, vp, f])
        self._sig("THFloatTensor_exp", None, [vp, vp])
        self._sig("THFloatTensor_tanh", None, [vp, vp])
        self._sig("THFloatTensor_sigmoid", None, [vp, vp])
        self._sig("THFloatTensor_log", None, [vp, vp])
        self._sig("THGetNumThreads", i, [])
        self._sig("THGetLastErrorCode", i, [])
        self._sig("THGetLastError", C.c_char_p, [])
        self._sig("THClearLastError", None, [])
        # From the reductions work; absent in older builds (the cases are skipped then).
        self.has_sumall = self._sig("THFloatTensor_sumall", C.c_double, [vp], optional=True)
        self.has_sum = self._sig("THFloatTensor_sum", None, [vp, vp, i, i], optional=True)

    def _sig(self, name, res, args, optional=False):
        try:
            fn = getattr(self.dll, name)
        except AttributeError:
            if optional:
                return False
            raise
        fn.restype, fn.argtypes = res, args
        setattr(self, name.split("_", 1)[-1] if name.startswith("THFloatTensor_") else name, fn)
        return True

    def check(self):
        if self.THGetLastErrorCode():
            msg = self.THGetLastError().decode()
            self.THClearLastError()
            raise RuntimeError(f"libth error: {msg}")


class Tensor:
    """A libth Float tensor plus a numpy view of the same memory."""

    def __init__(self, th, shape=None, ptr=None):
        self.th = th
        if ptr is None:
            ptr = th.newWithSize1d(shape[0]) if len(shape) == 1 else th.newWithSize2d(*shape)
        self.ptr = C.c_void_p(ptr)

    def np(self, shape):
        p = self.th.data(self.ptr)
        n = int(np.prod(shape))
        return np.ctypeslib.as_array(C.cast(p, C.POINTER(C.c_float)), shape=(n,)).reshape(shape)

    def free(self):
        if self.ptr:
            self.th.free(self.ptr)
            self.ptr = None


def time_pair(fa, fb, min_sample=1e-3, budget=1.5, max_reps=41, min_reps=5):
    """Median seconds per call of fa and fb, sampled alternately."""
    fa()
    fb()
    t0 = time.perf_counter()
    fa()
    one = max(time.perf_counter() - t0, 1e-8)
    k = max(1, int(min_sample / one))
    reps = int(max(min_reps, min(max_reps, budget / (2 * one * k))))
    ta, tb = [], []
    for _ in range(reps):
        for f, acc in ((fa, ta), (fb, tb)):
            t0 = time.perf_counter()
            for _ in range(k):
                f()
            acc.append((time.perf_counter() - t0) / k)
    return statistics.median(ta), statistics.median(tb)


def run_json(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def fmt_t(s):
    if s < 1e-6:
        return f"{s * 1e9:.0f} ns"
    if s < 1e-3:
        return f"{s * 1e6:.2f} us"
    return f"{s * 1e3:.2f} ms"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", default=os.path.join(ROOT, "target", "release", "libth.so"))
    ap.add_argument("--stream", help="the stream_add binary (bench/stream_add.c)")
    ap.add_argument("--stream-n", type=int, default=1 << 26, help="floats per STREAM array")
    ap.add_argument("--percall", help="the percall binary (bench/percall.c)")
    ap.add_argument("--quick", action="store_true", help="smaller sizes and fewer repeats (smoke test)")
    ap.add_argument("--only", help="comma-separated substrings: run only cases whose name has one")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()

    th = TH(args.lib)
    threads = th.THGetNumThreads()
    rng = np.random.default_rng(0)
    budget = 0.3 if args.quick else 1.5
    info = {"lib": args.lib, "threads": threads, "numpy": np.__version__,
            "cpu_capability": os.environ.get("TH_CPU_CAPABILITY", "(auto)")}

    stream = {}
    if args.stream:
        n = min(args.stream_n, 1 << 22) if args.quick else args.stream_n
        stream = run_json([args.stream, str(n), "5" if args.quick else "9"])
    percall = run_json([args.percall, "20000" if args.quick else "200000"]) if args.percall else {}

    # ctypes' own cost: a call that does (almost) nothing in the library.
    t = Tensor(th, (16,))
    nd = th.nDimension
    p = t.ptr
    ctypes_ns, _ = time_pair(lambda: nd(p), lambda: nd(p), budget=0.2)
    ctypes_ns *= 1e9
    if "nDimension" in percall:
        ctypes_ns -= percall["nDimension"]
    t.free()

    bw_key = "mt" if threads > 1 else "1t"
    plain_bw = stream.get(f"add_{bw_key}")
    nt_bw = stream.get(f"add_nt_{bw_key}")

    rows = []
    only = [s for s in (args.only or "").split(",") if s]

    def case(name, nbytes, f_np, f_th, check=None):
        if only and not any(s in name for s in only):
            return
        gc.collect()
        tn, tt = time_pair(f_np, f_th, budget=budget)
        th.check()
        if check is not None:
            check()
        gbs = nbytes / tt / 1e9
        row = {"case": name, "numpy_s": tn, "th_s": tt, "ratio": tn / tt, "th_GBs": gbs, "numpy_GBs": nbytes / tn / 1e9}
        if plain_bw:
            row["frac_stream"] = gbs / plain_bw
            row["frac_stream_nt"] = gbs / nt_bw
        rows.append(row)
        print(f"  {name:<28} numpy {fmt_t(tn):>10}  th {fmt_t(tt):>10}  ratio {tn / tt:5.2f}  {gbs:6.1f} GB/s",
              file=sys.stderr, flush=True)

    def close(got, want, rtol=1e-5, atol=1e-6):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)

    sizes = [10**3, 10**4, 10**5, 10**6, 10**7] + ([] if args.quick else [10**8])
    for n in sizes:
        a, b, r = Tensor(th, (n,)), Tensor(th, (n,)), Tensor(th, (n,))
        A, B, R = a.np((n,)), b.np((n,)), r.np((n,))
        A[:] = rng.standard_normal(n, dtype=F32)
        B[:] = rng.standard_normal(n, dtype=F32)
        cadd, cmul, pa, pb, pr = th.cadd, th.cmul, a.ptr, b.ptr, r.ptr
        case(f"cadd f32 {n:.0e}", 12 * n, lambda: np.add(A, B, out=R), lambda: cadd(pr, pa, ONE, pb),
             lambda: close(R[:1000], A[:1000] + B[:1000]))
        case(f"cmul f32 {n:.0e}", 12 * n, lambda: np.multiply(A, B, out=R), lambda: cmul(pr, pa, pb),
             lambda: close(R[:1000], A[:1000] * B[:1000]))
        for x in (a, b, r):
            x.free()
        del A, B, R

    for m in [2048] + ([] if args.quick else [4096]):
        a, b, r = Tensor(th, (m, m)), Tensor(th, (m, m)), Tensor(th, (m, m))
        A, B, R = a.np((m, m)), b.np((m, m)), r.np((m, m))
        A[:] = rng.standard_normal((m, m), dtype=F32)
        B[:] = rng.standard_normal((m, m), dtype=F32)
        at = Tensor(th, ptr=th.newTranspose(a.ptr, 0, 1))
        cadd, pa, pat, pb, pr = th.cadd, a.ptr, at.ptr, b.ptr, r.ptr
        AT = A.T
        case(f"A+B {m}^2", 12 * m * m, lambda: np.add(A, B, out=R), lambda: cadd(pr, pa, ONE, pb),
             lambda: close(R[:8], A[:8] + B[:8]))
        case(f"A.T+B {m}^2", 12 * m * m, lambda: np.add(AT, B, out=R), lambda: cadd(pr, pat, ONE, pb),
             lambda: close(R[:, :8], AT[:, :8] + B[:, :8]))
        if m == 2048:
            v = Tensor(th, (m,))
            V = v.np((m,))
            V[:] = rng.standard_normal(m, dtype=F32)
            pv = v.ptr
            case(f"A+v[{m}] bcast {m}^2", 8 * m * m, lambda: np.add(A, V, out=R), lambda: cadd(pr, pa, ONE, pv),
                 lambda: close(R[:8], A[:8] + V))
            v.free()
        for x in (at, a, b, r):
            x.free()
        del A, B, R, AT

    # transposed adds off the power-of-two squares: small (the tiled walk's fixed costs) and
    # rectangular
    for m, k in [(256, 256)] + ([] if args.quick else [(1000, 3000)]):
        a, b, r = Tensor(th, (k, m)), Tensor(th, (m, k)), Tensor(th, (m, k))
        A, B, R = a.np((k, m)), b.np((m, k)), r.np((m, k))
        A[:] = rng.standard_normal((k, m), dtype=F32)
        B[:] = rng.standard_normal((m, k), dtype=F32)
        at = Tensor(th, ptr=th.newTranspose(a.ptr, 0, 1))
        cadd, pat, pb, pr = th.cadd, at.ptr, b.ptr, r.ptr
        AT = A.T
        case(f"A.T+B {m}x{k}", 12 * m * k, lambda: np.add(AT, B, out=R), lambda: cadd(pr, pat, ONE, pb),
             lambda: close(R[:, :8], AT[:, :8] + B[:, :8]))
        for x in (at, a, b, r):
            x.free()
        del A, B, R, AT

    n = 10**6 if args.quick else 10**7
    a, r = Tensor(th, (n,)), Tensor(th, (n,))
    A, R = a.np((n,)), r.np((n,))
    A[:] = rng.uniform(-10, 10, n).astype(F32)
    pa, pr = a.ptr, r.ptr
    for name, npf, thf in (("exp", np.exp, th.exp), ("tanh", np.tanh, th.tanh),
                           ("sigmoid", lambda x, out: np.divide(1, 1 + np.exp(-x), out=out), th.sigmoid)):
        def chk(npf=npf):
            with np.errstate(all="ignore"):
                want = npf(A[:100000].astype(np.float64), out=np.empty(100000))
            close(R[:100000], want, rtol=1e-5, atol=1e-30)
        case(f"{name} f32 {n:.0e}", 8 * n, lambda npf=npf: npf(A, out=R), lambda thf=thf: thf(pr, pa), chk)
    B = np.abs(A) + F32(1e-3)
    A[:] = B
    case(f"log f32 {n:.0e}", 8 * n, lambda: np.log(A, out=R), lambda: th.log(pr, pa),
         lambda: close(R[:100000], np.log(A[:100000].astype(np.float64)), rtol=1e-5))
    for x in (a, r):
        x.free()
    del A, R, B

    # tiny ops: call cost (numpy ~0.5 us; libth through ctypes adds ctypes' own cost)
    a, b, r = Tensor(th, (16,)), Tensor(th, (16,)), Tensor(th, (16,))
    A, B, R = a.np((16,)), b.np((16,)), r.np((16,))
    A[:] = np.arange(16, dtype=F32)
    B[:] = 0.5
    cadd, cmul, add, pa, pb, pr = th.cadd, th.cmul, th.add, a.ptr, b.ptr, r.ptr
    case("tiny cadd 16", 12 * 16, lambda: np.add(A, B, out=R), lambda: cadd(pr, pa, ONE, pb))
    case("tiny cmul 16", 12 * 16, lambda: np.multiply(A, B, out=R), lambda: cmul(pr, pa, pb))
    case("tiny add-scalar 16", 8 * 16, lambda: np.add(A, F32(1.0), out=R), lambda: add(pr, pa, ONE))
    for x in (a, b, r):
        x.free()

    # sums (from the reductions work; skipped when the library does not export them yet)
    if th.has_sumall:
        n = 10**6 if args.quick else 10**7
        a = Tensor(th, (n,))
        A = a.np((n,))
        A[:] = rng.standard_normal(n, dtype=F32)
        sumall, pa = th.sumall, a.ptr
        case(f"sumall f32 {n:.0e}", 4 * n, lambda: A.sum(), lambda: sumall(pa),
             lambda: close(sumall(pa), A.astype(np.float64).sum(), rtol=1e-4, atol=1e-2))
        a.free()
        del A
    if th.has_sum:
        m = 2048
        a, r = Tensor(th, (m, m)), Tensor(th, (m,))
        A, R = a.np((m, m)), np.empty(m, dtype=F32)
        A[:] = rng.standard_normal((m, m), dtype=F32)
        s, pa, pr = th.sum, a.ptr, r.ptr
        for dim in (0, 1):
            def chk(dim=dim):
                got = r.np((m,))
                close(got, A.astype(np.float64).sum(axis=dim), rtol=1e-4, atol=1e-3)
            case(f"sum dim{dim} {m}^2", 4 * m * m, lambda dim=dim: A.sum(axis=dim, out=R),
                 lambda dim=dim: s(pr, pa, dim, 0), chk)
        for x in (a, r):
            x.free()
        del A

    if args.stream and not args.quick:  # measure again at the end; keep the median per kernel
        again = run_json([args.stream, str(args.stream_n), "9"])
        stream = {k: (v + again[k]) / 2 if k.startswith("add") else v for k, v in stream.items()}
        stream["first_vs_last"] = "averaged"
        plain_bw, nt_bw = stream.get(f"add_{bw_key}"), stream.get(f"add_nt_{bw_key}")
        for row in rows:
            row["frac_stream"] = row["th_GBs"] / plain_bw
            row["frac_stream_nt"] = row["th_GBs"] / nt_bw

    # ---- report ----
    print(f"libth: {args.lib}  threads={threads}  TH_CPU_CAPABILITY={info['cpu_capability']}  numpy {np.__version__}")
    try:
        load = os.getloadavg()
        print(f"load average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (2 cores; > ~0.5 means the numbers are noisy)")
    except OSError:
        pass
    if stream:
        print(f"STREAM add (GB/s, median): 1 thread {stream['add_1t']:.1f}, non-temporal {stream['add_nt_1t']:.1f}; "
              f"{stream['threads']} threads {stream['add_mt']:.1f}, non-temporal {stream['add_nt_mt']:.1f}")
    if percall:
        wall = {k: v for k, v in percall.items() if k != "cpu"}
        print("per call from C, wall clock (ns, median): " + ", ".join(f"{k} {v:.0f}" for k, v in wall.items()))
        if "cpu" in percall:
            print("per call from C, thread CPU time (ns, median; not inflated by preemption): "
                  + ", ".join(f"{k} {v:.0f}" for k, v in percall["cpu"].items()))
    print(f"ctypes call overhead: ~{ctypes_ns:.0f} ns (included in the libth times below)")
    print()
    hdr = "| case | numpy | libth | ratio | libth GB/s | numpy GB/s |"
    sep = "|---|---:|---:|---:|---:|---:|"
    if plain_bw:
        hdr += f" %STREAM ({bw_key}) | %NT-STREAM ({bw_key}) |"
        sep += "---:|---:|"
    # tiny ops: ctypes costs more than the op itself, so also compare numpy (from Python) with
    # the same op called from C (bench/percall.c, wall clock)
    from_c = {"tiny cadd 16": "cadd16", "tiny cmul 16": "cmul16", "tiny add-scalar 16": "add16"}
    for row in rows:
        key = from_c.get(row["case"])
        if key and key in percall:
            row["th_from_C_s"] = percall[key] * 1e-9
            row["ratio_from_C"] = row["numpy_s"] / row["th_from_C_s"]
    hdr += " ratio, libth called from C |"
    sep += "---:|"
    print(hdr)
    print(sep)
    for row in rows:
        line = (f"| {row['case']} | {fmt_t(row['numpy_s'])} | {fmt_t(row['th_s'])} | {row['ratio']:.2f} | "
                f"{row['th_GBs']:.1f} | {row['numpy_GBs']:.1f} |")
        if plain_bw:
            line += f" {100 * row['frac_stream']:.0f}% | {100 * row['frac_stream_nt']:.0f}% |"
        line += f" {row['ratio_from_C']:.2f} |" if "ratio_from_C" in row else " |"
        print(line)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"info": info, "stream": stream, "percall_ns": percall, "ctypes_overhead_ns": ctypes_ns,
                       "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
