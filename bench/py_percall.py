"""Per-call overhead of the `th` Python package against numpy on a 16-element float32 tensor:
add (a new result), in-place add, sum (a Python number), basic indexing (a view), element
read, comparison (a Bool tensor) and matmul (4x4). Best of several runs of many calls;
ns/call and the ratio th/numpy.

    python bench/py_percall.py [--calls N] [--runs R] [--profile]

With TH_LIB set it loads that libth (e.g. target/debug/libth.so; the numbers of interest
come from the release library the wheel ships). --profile prints the cProfile of the add loop.
"""

import argparse
import timeit

import numpy as np

import th


def raw_calls(ta, tb):
    """The same C calls th makes, straight through ctypes (no Python layer, no error checks):
    what the library itself costs per op."""
    import ctypes as C

    P, dll = C.c_void_p, th._lib.dll

    def bind(name, res, args):
        f = dll[name]
        f.restype, f.argtypes = res, args
        return f

    new, free = bind("THFloatTensor_new", P, []), bind("THFloatTensor_free", None, [P])
    cadd = bind("THFloatTensor_cadd", None, [P, P, C.c_float, P])
    add = bind("THFloatTensor_add", None, [P, P, C.c_float])
    sumall = bind("THFloatTensor_sumall", C.c_double, [P])
    narrow = bind("THFloatTensor_newNarrow", P, [P, C.c_int, C.c_int64, C.c_int64])
    get1d = bind("THFloatTensor_get1d", C.c_float, [P, C.c_int64])
    ha, hb = ta._h, tb._h

    def add_new():
        r = new()
        cadd(r, ha, 1.0, hb)
        free(r)

    def add_scalar():
        r = new()
        add(r, ha, 1.0)
        free(r)

    return {"a + b": add_new, "a += b": lambda: cadd(ha, ha, 1.0, hb), "a + 1.0": add_scalar,
            "a.sum()": lambda: sumall(ha), "a[2:10]": lambda: free(narrow(ha, 0, 2, 8)), "a[3]": lambda: get1d(ha, 3)}


def cases():
    a = np.arange(16, dtype=np.float32)
    b = np.ones(16, dtype=np.float32)
    ta, tb = th.tensor(a), th.tensor(b)
    m, tm = a.reshape(4, 4), ta.view(4, 4)
    raw = raw_calls(ta, tb)
    return [(name, fn_np, fn_th, raw.get(name)) for name, fn_np, fn_th in [
        ("a + b", lambda: a + b, lambda: ta + tb),
        ("a += b", lambda: a.__iadd__(b), lambda: ta.__iadd__(tb)),
        ("a + 1.0", lambda: a + 1.0, lambda: ta + 1.0),
        ("a.sum()", lambda: a.sum(), lambda: ta.sum()),
        ("a[2:10]", lambda: a[2:10], lambda: ta[2:10]),
        ("a[3]", lambda: a[3], lambda: ta[3]),
        ("a > 4", lambda: a > 4, lambda: ta > 4),
        ("m @ m", lambda: m @ m, lambda: tm @ tm),
    ]]


def best(f, calls, runs):
    return min(timeit.repeat(f, number=calls, repeat=runs)) / calls * 1e9


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--calls", type=int, default=20000)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--profile", action="store_true")
    args = p.parse_args()
    rows = []
    for name, fn_np, fn_th, fn_raw in cases():
        n = best(fn_np, args.calls, args.runs)
        try:
            fn_th()
        except Exception:  # an older th without the op
            rows.append((name, n, float("nan"), float("nan")))
            continue
        t = best(fn_th, args.calls, args.runs)
        r = best(fn_raw, args.calls, args.runs) if fn_raw else float("nan")
        rows.append((name, n, t, r))
    print("| op (16 x float32) | numpy ns/call | th ns/call | th / numpy | same C calls, raw ctypes ns | th - raw |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, n, t, r in rows:
        print(f"| `{name}` | {n:.0f} | {t:.0f} | {t / n:.1f} | {r:.0f} | {t - r:.0f} |")
    if args.profile:
        import cProfile
        import pstats

        ta, tb = th.tensor(np.arange(16, dtype=np.float32)), th.ones(16)
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(args.calls):
            ta + tb
        pr.disable()
        pstats.Stats(pr).sort_stats("tottime").print_stats(8)


if __name__ == "__main__":
    main()
