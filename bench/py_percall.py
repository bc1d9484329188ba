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


def cases():
    a = np.arange(16, dtype=np.float32)
    b = np.ones(16, dtype=np.float32)
    ta, tb = th.tensor(a), th.tensor(b)
    m, tm = a.reshape(4, 4), ta.view(4, 4)
    return [
        ("a + b", lambda: a + b, lambda: ta + tb),
        ("a += b", lambda: a.__iadd__(b), lambda: ta.__iadd__(tb)),
        ("a + 1.0", lambda: a + 1.0, lambda: ta + 1.0),
        ("a.sum()", lambda: a.sum(), lambda: ta.sum()),
        ("a[2:10]", lambda: a[2:10], lambda: ta[2:10]),
        ("a[3]", lambda: a[3], lambda: ta[3]),
        ("a > 4", lambda: a > 4, lambda: ta > 4),
        ("m @ m", lambda: m @ m, lambda: tm @ tm),
    ]


def best(f, calls, runs):
    return min(timeit.repeat(f, number=calls, repeat=runs)) / calls * 1e9


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--calls", type=int, default=20000)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--profile", action="store_true")
    args = p.parse_args()
    rows = []
    for name, fn_np, fn_th in cases():
        rows.append((name, best(fn_np, args.calls, args.runs), best(fn_th, args.calls, args.runs)))
    print(f"| op (16 x float32) | numpy ns/call | th ns/call | th / numpy |")
    print(f"|---|---:|---:|---:|")
    for name, n, t in rows:
        print(f"| `{name}` | {n:.0f} | {t:.0f} | {t / n:.1f} |")
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
