"""The compute-bound half of bench/cuda.py: THCudaTensor_addmm / THCudaHalfTensor_addmm (cuBLAS
behind th's row-major mapping) in GFLOP/s, and THCudaTensor_sort / topk in million elements per
second, indexAdd / scatterAdd with repeated indices in million source elements per second, each
against torch on the same device when torch has CUDA (torch adds with atomics; th sorts the
indices and gives each target one thread, so its sums keep the host's order).

Timing is paired: per repetition th and torch each run a sample of k calls between device
synchronizations (k so a sample lasts >= ~20 ms; one call in --smoke), alternating, and the best
sample of each is reported, so clock and thermal drift hit both sides alike. Every th result is
checked first: addmm on 16 sampled rows against numpy in float64 (relative bound for the
accumulation in f32), sort against np.sort (values exact, indices pointing at them), topk
against np.partition, the additions against numpy's np.add.at in float64.
"""

import ctypes as C
import time

import numpy as np

vp, f32, i64, i32, lng = C.c_void_p, C.c_float, C.c_int64, C.c_int, C.c_long


class Half(C.Structure):
    """THHalf: IEEE binary16 bits, passed by value."""

    _fields_ = [("x", C.c_uint16)]


def half(v):
    return Half(int(np.array(v, np.float16).view(np.uint16)))


SIGS = {
    "THCudaTensor_new": (vp, [vp]),
    "THCudaTensor_addmm": (None, [vp, vp, f32, vp, f32, vp, vp]),
    "THCudaTensor_sort": (None, [vp, vp, vp, vp, i32, i32]),
    "THCudaTensor_topk": (None, [vp, vp, vp, vp, lng, i32, i32, i32]),
    "THCudaHalfTensor_newWithSize2d": (vp, [vp, i64, i64]),
    "THCudaHalfTensor_free": (None, [vp, vp]),
    "THCudaHalfTensor_copyFloat": (None, [vp, vp, vp]),
    "THFloatTensor_copyCudaHalf": (None, [vp, vp, vp]),
    "THCudaHalfTensor_addmm": (None, [vp, vp, Half, vp, Half, vp, vp]),
    "THCudaLongTensor_new": (vp, [vp]),
    "THCudaLongTensor_free": (None, [vp, vp]),
    "THLongTensor_newWithSize1d": (vp, [i64]),
    "THLongTensor_newWithSize2d": (vp, [i64, i64]),
    "THLongTensor_data": (vp, [vp]),
    "THLongTensor_free": (None, [vp]),
    "THLongTensor_copyCudaLong": (None, [vp, vp, vp]),
    "THCudaLongTensor_newWithSize1d": (vp, [vp, i64]),
    "THCudaLongTensor_copyLong": (None, [vp, vp, vp]),
    "THCudaTensor_indexAdd": (None, [vp, vp, i32, vp, vp]),
    "THCudaTensor_scatterAdd": (None, [vp, vp, i32, vp, vp]),
    "THCudaTensor_zero": (None, [vp, vp]),
}


def best_paired(runs, min_s, reps):
    """{name: best seconds per call} for {name: (run, sync)}, the samples alternating."""
    ks = {}
    for name, (run, sync) in runs.items():
        sync()
        t = time.perf_counter()
        run()
        sync()
        ks[name] = max(1, int(min_s / max(time.perf_counter() - t, 1e-7)))
    best = {name: float("inf") for name in runs}
    for _ in range(reps):
        for name, (run, sync) in runs.items():
            sync()
            t = time.perf_counter()
            for _ in range(ks[name]):
                run()
            sync()
            best[name] = min(best[name], (time.perf_counter() - t) / ks[name])
    return best


class Compute:
    def __init__(self, th, torch, smoke):
        self.th, self.torch, self.smoke = th, torch, smoke
        self.failed = []
        self.st = th.state
        self.min_s, self.reps = (0.0, 1) if smoke else (0.02, 5)
        self.rng = np.random.default_rng(1)

    def ok(self):
        return self.th.has(*SIGS)

    # ---- transfers ----

    def upload_half(self, a):
        """A device Half tensor holding the 2-D array `a` (through a host Float tensor)."""
        th = self.th
        a32 = np.ascontiguousarray(a, np.float32)  # held: memmove reads it
        f = th.THFloatTensor_newWithSize2d(*a.shape)
        C.memmove(th.THFloatTensor_data(f), a32.ctypes.data, a32.nbytes)
        d = th.THCudaHalfTensor_newWithSize2d(self.st, *a.shape)
        th.THCudaHalfTensor_copyFloat(self.st, d, f)
        th.THFloatTensor_free(f)
        th.check("upload (half)")
        return d

    def download(self, d, shape, host, copy):
        """The device tensor `d` (`shape`) as numpy, through a new host tensor of family `host`
        (THFloatTensor or THLongTensor) filled by its `copy` function (copyCudaHalf, ...)."""
        th = self.th
        h = getattr(th, f"{host}_newWithSize{len(shape)}d")(*shape)
        getattr(th, f"{host}_{copy}")(self.st, h, d)
        th.check(f"download ({copy})")
        out = np.empty(shape, np.float32 if host == "THFloatTensor" else np.int64)
        C.memmove(out.ctypes.data, getattr(th, f"{host}_data")(h), out.nbytes)
        getattr(th, f"{host}_free")(h)
        return out

    def upload_long(self, a):
        """A 1-D device Long tensor holding the int64 array `a`."""
        th = self.th
        a = np.ascontiguousarray(a, np.int64)
        h = th.THLongTensor_newWithSize1d(a.size)
        C.memmove(th.THLongTensor_data(h), a.ctypes.data, a.nbytes)
        d = th.THCudaLongTensor_newWithSize1d(self.st, a.size)
        th.THCudaLongTensor_copyLong(self.st, d, h)
        th.THLongTensor_free(h)
        th.check("upload (long)")
        return d

    # ---- cases ----

    def addmm(self, n, dtype):
        """r = 0 * r + 1 * a @ b, n x n, in float32 or float16 (f32 accumulation)."""
        th, st, torch = self.th, self.st, self.torch
        a_h = self.rng.standard_normal((n, n), dtype=np.float32).astype(dtype)
        b_h = self.rng.standard_normal((n, n), dtype=np.float32).astype(dtype)
        if dtype == np.float16:
            a, b, r = self.upload_half(a_h), self.upload_half(b_h), self.upload_half(np.zeros((n, n), np.float16))
            run = lambda: th.THCudaHalfTensor_addmm(st, r, half(0), r, half(1), a, b)  # noqa: E731
            free = lambda: [th.THCudaHalfTensor_free(st, x) for x in (a, b, r)]  # noqa: E731
        else:
            a, b, r = th.upload(a_h), th.upload(b_h), th.upload(np.zeros((n, n), np.float32))
            run = lambda: th.THCudaTensor_addmm(st, r, 0.0, r, 1.0, a, b)  # noqa: E731
            free = lambda: th.free(a, b, r)  # noqa: E731
        run()
        th.sync()
        th.check(f"addmm {n}")
        got = self.download(r, (n, n), "THFloatTensor", "copyCudaHalf") if dtype == np.float16 else th.download(r, (n, n))
        rows = self.rng.choice(n, size=min(16, n), replace=False)
        want = a_h[rows].astype(np.float64) @ b_h.astype(np.float64)
        scale = np.abs(a_h[rows].astype(np.float64)) @ np.abs(b_h.astype(np.float64))
        # f32 accumulation over n terms, then (for f16) one rounding of the output
        bound = (n + 2) * 2.0**-24 * scale + (2.0**-11 if dtype == np.float16 else 2.0**-24) * np.abs(want)
        err = np.abs(got[rows].astype(np.float64) - want)
        assert np.all(err <= bound), f"addmm {n} {np.dtype(dtype).name}: max error {err.max()} over bound"
        runs = {"th": (run, th.sync)}
        if torch:
            ta, tb = torch.from_numpy(a_h).cuda(), torch.from_numpy(b_h).cuda()
            runs["torch"] = (lambda: torch.matmul(ta, tb), torch.cuda.synchronize)
        best = best_paired(runs, self.min_s, self.reps)
        free()
        th.check(f"addmm {n}")
        return self.row(f"addmm {np.dtype(dtype).name}", f"{n}^2", best, 2.0 * n**3 / 1e9, "GFLOP/s")

    def sort(self, n):
        th, st, torch = self.th, self.st, self.torch
        x_h = self.rng.standard_normal(n, dtype=np.float32)
        x = th.upload(x_h)
        vals, idx = th.THCudaTensor_new(st), th.THCudaLongTensor_new(st)
        run = lambda: th.THCudaTensor_sort(st, vals, idx, x, 0, 0)  # noqa: E731
        run()
        th.sync()
        th.check(f"sort {n}")
        got, gi = th.download(vals, (n,)), self.download(idx, (n,), "THLongTensor", "copyCudaLong")
        assert np.array_equal(got, np.sort(x_h)), f"sort {n}: wrong values"
        assert np.array_equal(x_h[gi], got), f"sort {n}: indices do not point at the values"
        runs = {"th": (run, th.sync)}
        if torch:
            tx = torch.from_numpy(x_h).cuda()
            runs["torch"] = (lambda: torch.sort(tx), torch.cuda.synchronize)
        best = best_paired(runs, self.min_s, self.reps)
        th.free(x, vals)
        th.THCudaLongTensor_free(st, idx)
        return self.row("sort f32", f"2^{n.bit_length() - 1}", best, n / 1e6, "Melem/s")

    def topk(self, rows, n, k):
        th, st, torch = self.th, self.st, self.torch
        x_h = self.rng.standard_normal((rows, n), dtype=np.float32)
        x = th.upload(x_h)
        vals, idx = th.THCudaTensor_new(st), th.THCudaLongTensor_new(st)
        run = lambda: th.THCudaTensor_topk(st, vals, idx, x, k, 1, 1, 1)  # noqa: E731
        run()
        th.sync()
        th.check(f"topk {rows}x{n}")
        got, gi = th.download(vals, (rows, k)), self.download(idx, (rows, k), "THLongTensor", "copyCudaLong")
        want = -np.sort(-np.partition(x_h, n - k, axis=1)[:, n - k:], axis=1)
        assert np.array_equal(got, want), f"topk {rows}x{n}: wrong values"
        assert np.array_equal(np.take_along_axis(x_h, gi, 1), got), f"topk {rows}x{n}: wrong indices"
        runs = {"th": (run, th.sync)}
        if torch:
            tx = torch.from_numpy(x_h).cuda()
            runs["torch"] = (lambda: torch.topk(tx, k, dim=1), torch.cuda.synchronize)
        best = best_paired(runs, self.min_s, self.reps)
        th.free(x, vals)
        th.THCudaLongTensor_free(st, idx)
        return self.row(f"topk k={k} f32", f"{rows}x{n}", best, rows * n / 1e6, "Melem/s")

    def scatter_add(self, n, targets, cols):
        """t (targets x cols) += rows of src (n / cols x cols) at random rows (indexAdd along
        dim 0), or for cols == 1, 1-D t (targets) += src (n) at random places (scatterAdd)."""
        th, st, torch = self.th, self.st, self.torch
        rows = n // cols
        src_h = self.rng.standard_normal((rows, cols) if cols > 1 else rows, dtype=np.float32)
        idx_h = self.rng.integers(0, targets, rows, dtype=np.int64)
        shape = (targets, cols) if cols > 1 else (targets,)
        src, idx = th.upload(src_h), self.upload_long(idx_h)
        t = th.upload(np.zeros(shape, np.float32))
        if cols > 1:
            op, run = "indexAdd", lambda: th.THCudaTensor_indexAdd(st, t, 0, idx, src)  # noqa: E731
        else:
            op, run = "scatterAdd", lambda: th.THCudaTensor_scatterAdd(st, t, 0, idx, src)  # noqa: E731
        run()
        th.sync()
        th.check(f"{op} {n}")
        want = np.zeros(shape)
        np.add.at(want, idx_h, src_h.astype(np.float64))
        got = th.download(t, shape)
        # float32 sums of about rows / targets terms each, in index order
        bound = 1e-5 * (rows / targets) ** 0.5 * np.abs(want).max() + 1e-5
        assert np.abs(got - want).max() <= bound, f"{op} {n}: max error {np.abs(got - want).max()}"
        runs = {"th": (run, th.sync)}
        if torch:
            tt, ts, ti = (torch.from_numpy(x).cuda() for x in (np.zeros(shape, np.float32), src_h, idx_h))
            if cols > 1:
                runs["torch"] = (lambda: tt.index_add_(0, ti, ts), torch.cuda.synchronize)
            else:
                runs["torch"] = (lambda: tt.scatter_add_(0, ti, ts), torch.cuda.synchronize)
        best = best_paired(runs, self.min_s, self.reps)
        th.free(src, t)
        th.THCudaLongTensor_free(st, idx)
        size = f"{rows}x{cols}>{targets}" if cols > 1 else f"2^{n.bit_length() - 1}>{targets}"
        return self.row(f"{op} f32", size, best, n / 1e6, "Melem/s")

    @staticmethod
    def row(op, size, best, work, unit):
        r = {"op": op, "size": size, "unit": unit, "ms": best["th"] * 1e3, "rate": work / best["th"]}
        if "torch" in best:
            r["torch ms"], r["torch rate"] = best["torch"] * 1e3, work / best["torch"]
            r["th/torch"] = best["torch"] / best["th"]
        return r

    def all(self, quick=False):
        """Runs every case, printing each row as it finishes (a slow case cut short by a
        timeout loses only itself and those after it)."""
        if self.smoke:
            plan = [("addmm", 64, np.float32), ("addmm", 64, np.float16), ("sort", 1 << 10), ("topk", 2, 1000, 10)]
            plan += [("scatter_add", 1 << 12, 50, 64), ("scatter_add", 1 << 12, 100, 1)]
        elif quick:
            plan = [("addmm", 4096, dt) for dt in (np.float32, np.float16)]
            plan += [("sort", 1 << e) for e in (20, 24)] + [("topk", 8, 1000000, 100)]
            plan += [("scatter_add", 1 << 24, 1 << 12, 256), ("scatter_add", 1 << 24, 1 << 16, 1)]
        else:
            plan = [("addmm", n, dt) for dt in (np.float32, np.float16) for n in (1024, 2048, 4096)]
            plan += [("sort", 1 << e) for e in (20, 22, 24)] + [("topk", 8, 1000000, 100)]
            plan += [("scatter_add", 1 << 24, 1 << 12, 256), ("scatter_add", 1 << 24, 1 << 16, 1)]
        print(HEADER, flush=True)
        rows = []
        for case in plan:
            try:
                rows.append(getattr(self, case[0])(*case[1:]))
            except (AssertionError, RuntimeError) as e:  # a wrong or failing op: report it, go on
                print(f"{case[0]} {case[1:]}: FAILED: {e}", flush=True)
                self.failed.append(f"{case[0]} {case[1:]}")
                continue
            print(line(rows[-1]), flush=True)
        return rows


HEADER = f"{'op':<16}{'size':>14}{'ms':>10}{'rate':>10}{'unit':>9}{'torch ms':>10}{'torch':>10}{'th/torch':>9}"


def line(r):
    tm = f"{r['torch ms']:.3f}" if "torch ms" in r else "-"
    tr = f"{r['torch rate']:.1f}" if "torch rate" in r else "-"
    x = f"{r['th/torch']:.2f}" if "th/torch" in r else "-"
    return f"{r['op']:<16}{r['size']:>14}{r['ms']:>10.3f}{r['rate']:>10.1f}{r['unit']:>9}{tm:>10}{tr:>10}{x:>9}"


def report(rows):
    print(HEADER)
    for r in rows:
        print(line(r))
