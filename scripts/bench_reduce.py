"""Quick timing of libth reductions against numpy in the same process (interleaved repeats,
median). Usage: TH_LIB=target/release/libth.so python scripts/bench_reduce.py"""

import ctypes as C
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python"))
from thlib import Lib  # noqa: E402


def bench(cases, reps=40):
    """Interleaved repeats; (best, median) seconds per case. On a shared machine the best is
    the more stable comparison."""
    times = {name: [] for name, _ in cases}
    for _ in range(reps):
        for name, f in cases:
            t0 = time.perf_counter()
            f()
            times[name].append(time.perf_counter() - t0)
    return {k: (float(np.min(v)), float(np.median(v))) for k, v in times.items()}


def main():
    if "--no-hugepage" in sys.argv:
        # numpy madvises its big arrays onto transparent huge pages, libth's allocator does not
        # (yet); this puts numpy's arrays on 4 KiB pages too, for a like-for-like comparison.
        from numpy._core import multiarray

        multiarray._set_madvise_hugepage(False)
    lib = Lib()
    rng = np.random.default_rng(0)
    threads = lib.dll.THGetNumThreads()
    rows = []

    a = rng.standard_normal(10_000_000).astype(np.float32)
    ta = lib.from_numpy(a, "Float")
    sumall = lib.fn("THFloatTensor_sumall", C.c_double, [C.c_void_p])
    res = bench([("numpy", lambda: a.sum()), ("th", lambda: sumall(ta.ptr))])
    rows.append(("sumall 1e7 f32", res))

    m = rng.standard_normal((2048, 2048)).astype(np.float32)
    tm = lib.from_numpy(m, "Float")
    r = lib.new("Float")
    ssum = lib.fn("THFloatTensor_sum", None, [C.c_void_p, C.c_void_p, C.c_int, C.c_int])
    for d in (0, 1):
        res = bench([("numpy", lambda d=d: m.sum(axis=d)), ("th", lambda d=d: ssum(r.ptr, tm.ptr, d, 0))])
        rows.append((f"sum(dim={d}) 2048^2 f32", res))
    # a transposed view
    mt = m.T
    tmt = lib.from_numpy(mt, "Float")
    for d in (0, 1):
        res = bench([("numpy", lambda d=d: mt.sum(axis=d)), ("th", lambda d=d: ssum(r.ptr, tmt.ptr, d, 0))])
        rows.append((f"sum(dim={d}) 2048^2 f32 transposed", res))
    dd = rng.standard_normal(10_000_000)
    td = lib.from_numpy(dd, "Double")
    dsum = lib.fn("THDoubleTensor_sumall", C.c_double, [C.c_void_p])
    rows.append(("sumall 1e7 f64", bench([("numpy", lambda: dd.sum()), ("th", lambda: dsum(td.ptr))])))
    mx = lib.fn("THFloatTensor_maxall", C.c_float, [C.c_void_p])
    rows.append(("maxall 1e7 f32", bench([("numpy", lambda: a.max()), ("th", lambda: mx(ta.ptr))])))
    idx = lib.new("Long")
    fmax = lib.fn("THFloatTensor_max", None, [C.c_void_p, C.c_void_p, C.c_void_p, C.c_int, C.c_int])
    rows.append(
        ("max(dim=1)+indices 2048^2 f32", bench([("numpy", lambda: (m.max(axis=1), m.argmax(axis=1))), ("th", lambda: fmax(r.ptr, idx.ptr, tm.ptr, 1, 0))]))
    )
    varall = lib.fn("THFloatTensor_varall", C.c_double, [C.c_void_p, C.c_int])
    rows.append(("varall 1e7 f32", bench([("numpy", lambda: a.var(ddof=1)), ("th", lambda: varall(ta.ptr, 0))], reps=10)))

    print(f"threads={threads}  ms as best / median of interleaved repeats; ratio = numpy / th (> 1: th faster)")
    for name, res in rows:
        (nb, nm), (tb, tm) = res["numpy"], res["th"]
        print(f"{name:36s} numpy {nb * 1e3:7.3f} / {nm * 1e3:7.3f}   th {tb * 1e3:7.3f} / {tm * 1e3:7.3f}   ratio {nb / tb:5.2f} / {nm / tm:5.2f}")


if __name__ == "__main__":
    main()
