#!/usr/bin/env python3
"""exp / tanh / log / sigmoid per core: numpy vs one or more libth builds, in cache, one thread.

    python bench/vmath.py --lib old/libth.so --lib target/release/libth.so

Every library given with --lib is loaded into this one process (each by its path, so two builds
with the same soname both load) and set to one thread; numpy's ufuncs are single-threaded.
Each case (function, dtype, n elements, default 64K: in L2) times numpy and every library in
turn, round after round (paired: drift and load hit all alike), each sample long enough (>= ~2
ms) to hide the call overhead and timed in process CPU time (so time the CPU spends on other
processes is left out). Reported: the median time per call of each, and per library the median
over rounds of numpy_time / lib_time (> 1: the library is faster) with the spread of that
ratio (its 10th and 90th percentiles). numpy's sigmoid is 1 / (1 + exp(-x)) through its ufuncs;
torch.sigmoid (and torch's exp/tanh/log) are a second reference when torch imports.
"""

import argparse
import ctypes as C
import os
import statistics
import sys
import time

import numpy as np

try:
    import torch

    torch.set_num_threads(1)
except Exception:  # noqa: BLE001 - torch is optional: the numpy comparison needs none of it
    torch = None

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FUNCS = ("exp", "tanh", "log", "sigmoid")
TYPES = {"f32": ("Float", np.float32), "f64": ("Double", np.float64)}


class Lib:
    """One libth build: tensors of both float types and the four functions."""

    def __init__(self, path):
        self.path = path
        self.dll = C.CDLL(os.path.abspath(path))
        vp, i64, i = C.c_void_p, C.c_int64, C.c_int
        self.dll.THSetNumThreads.argtypes = [i]
        self.dll.THSetNumThreads(1)
        self.fns = {}
        for name in TYPES.values():
            pre = f"TH{name[0]}Tensor_"
            for f, res, args in (("newWithSize1d", vp, [i64]), ("data", vp, [vp]), ("free", None, [vp])) + tuple(
                (g, None, [vp, vp]) for g in FUNCS
            ):
                fn = getattr(self.dll, pre + f)
                fn.restype, fn.argtypes = res, args
                self.fns[name[0], f] = fn

    def tensor(self, tname, dtype, n):
        """A new tensor of n elements and a numpy view of its memory."""
        p = self.fns[tname, "newWithSize1d"](n)
        buf = (C.c_char * (n * np.dtype(dtype).itemsize)).from_address(self.fns[tname, "data"](p))
        return p, np.frombuffer(buf, dtype=dtype)


def inputs(func, dtype, n, rng):
    if func == "log":
        return np.exp(rng.uniform(-7, 7, n)).astype(dtype)
    return rng.uniform(-10 if func != "tanh" else -5, 10 if func != "tanh" else 5, n).astype(dtype)


def numpy_fn(func, x, out, tmp):
    if func == "sigmoid":

        def f():
            np.negative(x, out=tmp)
            np.exp(tmp, out=tmp)
            np.add(tmp, 1, out=tmp)
            np.divide(1, tmp, out=out)

        return f
    g = getattr(np, func)
    return lambda: g(x, out=out)


def torch_fn(func, x, out):
    tx, to = torch.from_numpy(x), torch.from_numpy(out)
    g = getattr(torch, func)
    return lambda: g(tx, out=to)


def sample(f, k):
    # CPU time of this process, not wall time: on a loaded machine the wall clock also counts
    # the time other processes hold the CPU (the libraries run on the calling thread here).
    t0 = time.process_time()
    for _ in range(k):
        f()
    return (time.process_time() - t0) / k


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", action="append", help="a libth.so (repeatable; default target/release/libth.so)")
    ap.add_argument("--n", type=int, default=1 << 16, help="elements per call (default 65536)")
    ap.add_argument("--dtypes", default="f32,f64")
    ap.add_argument("--only", default=",".join(FUNCS), help="comma-separated functions")
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--sample-ms", type=float, default=2.0)
    args = ap.parse_args()
    libs = [Lib(p) for p in (args.lib or [os.path.join(ROOT, "target", "release", "libth.so")])]
    rng = np.random.default_rng(0)
    load = os.getloadavg()
    print(f"n={args.n}, 1 thread each, numpy {np.__version__}, torch {torch.__version__ if torch else '(absent)'}, "
          f"load {load[0]:.2f} {load[1]:.2f}")
    for i, lib in enumerate(libs):
        print(f"  lib{i}: {lib.path}")
    for dt in args.dtypes.split(","):
        tname, dtype = TYPES[dt]
        for func in args.only.split(","):
            x = inputs(func, dtype, args.n, rng)
            out, tmp = np.empty_like(x), np.empty_like(x)
            runners = [("numpy", numpy_fn(func, x, out, tmp))]
            if torch is not None:
                runners.append(("torch", torch_fn(func, x, out)))
            held = []
            for i, lib in enumerate(libs):
                pa, a = lib.tensor(tname, dtype, args.n)
                pr, _ = lib.tensor(tname, dtype, args.n)
                a[:] = x
                held.append((lib, pa, pr))
                g = lib.fns[tname, func]
                runners.append((f"lib{i}", lambda g=g, pa=pa, pr=pr: g(pr, pa)))
            for _, f in runners:
                f()
            one = min(sample(f, 3) for _, f in runners)
            k = max(1, int(args.sample_ms * 1e-3 / one))
            times = {name: [] for name, _ in runners}
            for _ in range(args.rounds):
                for name, f in runners:
                    times[name].append(sample(f, k))
            med = {name: statistics.median(v) for name, v in times.items()}
            cells = "  ".join(f"{name} {med[name] * 1e6:7.1f} us" for name, _ in runners)
            print(f"{func:>7} {dt}: {cells}")
            for name, _ in runners[1:]:
                r = [a / b for a, b in zip(times["numpy"], times[name])]
                print(f"{'':>12}numpy/{name}: {statistics.median(r):5.2f}  (p10 {pct(r, 0.1):.2f}, p90 {pct(r, 0.9):.2f})")
            for lib, pa, pr in held:
                lib.fns[tname, "free"](pa)
                lib.fns[tname, "free"](pr)
    print(f"load after: {os.getloadavg()[0]:.2f}", file=sys.stderr)


if __name__ == "__main__":
    main()
