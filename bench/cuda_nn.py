#!/usr/bin/env python3
"""THCUNN on a GPU: the layers people train with, forward and backward, against torch.nn.functional
on the same device, as ratios (torch time / th time: > 1 means th is faster).

    python3 bench/cuda_nn.py [--lib libth.so] [--quick] [--json out.json]
    TH_CUDA_EMULATOR=1 python3 bench/cuda_nn.py --lib <cuda-emulator build> --smoke

Rows (float32, NCHW, the default stream):
- conv2d 3x3 pad 1 (THNN_CudaSpatialConvolutionMM): forward; backward = updateGradInput +
  accGradParameters against autograd's input, weight and bias gradients;
- max_pool2d 3x3 stride 2 pad 1 (SpatialMaxPooling): forward with indices; backward;
- batch_norm in training (BatchNormalization): forward (batch statistics, running stats
  updated); backward (gradInput, gradWeight, gradBias);
- log_softmax + nll_loss (LogSoftMax + ClassNLLCriterion, mean): forward; backward.
Every th result is checked against torch's (float64 references on the host for the small
--smoke sizes, torch on the device otherwise) before it is timed. Timing is paired as in
bench/cuda_compute.py: th and torch alternate samples of k calls between synchronizations, the
best sample of each is kept. Without a device it says so and exits 0; on the emulator only --smoke
runs, and its numbers mean nothing (labelled "emulator: not GPU speed").
"""

import argparse
import ctypes as C
import json
import os
import re
import sys
import time

import numpy as np
from cuda import ROOT, THC, preload_nvrtc

HEADER = os.path.join(ROOT, "include", "TH", "TH.h")
SCALARS = {"bool": C.c_bool, "int": C.c_int, "int64_t": C.c_int64, "long": C.c_long, "double": C.c_double,
           "float": C.c_float}


def prototypes(prefix):
    """ctypes argument types of the header's functions named `prefix...` (pointers as void *)."""
    text = open(HEADER).read()
    out = {}
    for name, params in re.findall(r"\bvoid\s+(" + prefix + r"\w+)\s*\(([^)]*)\)\s*;", text, re.S):
        types = []
        for p in params.split(","):
            p = p.strip().replace("const ", "")
            types.append(C.c_void_p if "*" in p else SCALARS[" ".join(p.split()[:-1])])
        out[name] = types
    return out


class Layers:
    """THNN_Cuda* calls with their prototypes from the header, plus device tensor helpers."""

    def __init__(self, th):
        self.th, self.st = th, th.state
        self.protos = prototypes("THNN_Cuda")
        d = th.dll
        for name, res, args in [
            ("THCudaTensor_newWithSize1d", C.c_void_p, [C.c_void_p, C.c_int64]),
            ("THCudaTensor_resize4d", None, [C.c_void_p, C.c_void_p] + [C.c_int64] * 4),
            ("THCudaTensor_resize2d", None, [C.c_void_p, C.c_void_p] + [C.c_int64] * 2),
            ("THCudaTensor_new", C.c_void_p, [C.c_void_p]),
            ("THCudaTensor_nElement", C.c_int64, [C.c_void_p, C.c_void_p]),
            ("THCudaLongTensor_new", C.c_void_p, [C.c_void_p]),
            ("THCudaLongTensor_free", None, [C.c_void_p, C.c_void_p]),
            ("THCudaLongTensor_newWithSize1d", C.c_void_p, [C.c_void_p, C.c_int64]),
            ("THCudaLongTensor_copyLong", None, [C.c_void_p] * 3),
            ("THLongTensor_newWithSize1d", C.c_void_p, [C.c_int64]),
            ("THLongTensor_data", C.c_void_p, [C.c_void_p]),
            ("THLongTensor_free", None, [C.c_void_p]),
        ]:
            f = d[name]
            f.restype, f.argtypes = res, args
            setattr(self, name, f)

    def has(self, *names):
        return all("THNN_Cuda" + n in self.protos for n in names)

    def call(self, fn, *args):
        name = "THNN_Cuda" + fn
        f = self.th.dll[name]
        f.restype, f.argtypes = None, self.protos[name]
        f(self.st, *args)

    def tensor(self, a):
        a = np.ascontiguousarray(a, np.float32)
        t = self.th.upload(a.ravel())
        if a.ndim == 4:
            self.THCudaTensor_resize4d(self.st, t, *a.shape)
        elif a.ndim == 2:
            self.THCudaTensor_resize2d(self.st, t, *a.shape)
        return t

    def empty(self):
        return self.THCudaTensor_new(self.st)

    def read(self, t, shape):
        return self.th.download(t, (int(np.prod(shape)),)).reshape(shape)

    def labels(self, y):
        y = np.ascontiguousarray(y, np.int64)
        h = self.THLongTensor_newWithSize1d(y.size)
        C.memmove(self.THLongTensor_data(h), y.ctypes.data, y.nbytes)
        d = self.THCudaLongTensor_newWithSize1d(self.st, y.size)
        self.THCudaLongTensor_copyLong(self.st, d, h)
        self.THLongTensor_free(h)
        return d


def paired(th_run, torch_run, sync, smoke, reps=5):
    """(th seconds, torch seconds) per call: alternating samples, the best of each."""
    def sample(run, k):
        sync()
        t = time.perf_counter()
        for _ in range(k):
            run()
        sync()
        return (time.perf_counter() - t) / k

    one = max(sample(th_run, 1), 1e-7)
    k = 1 if smoke else max(1, int(0.02 / one))
    best_th, best_t = float("inf"), float("inf")
    for _ in range(1 if smoke else reps):
        best_th = min(best_th, sample(th_run, k))
        if torch_run:
            best_t = min(best_t, sample(torch_run, k))
    return best_th, (best_t if torch_run else None)


def shapes(smoke, quick):
    if smoke:
        return dict(conv=(2, 3, 4, 7, 6), pool=(2, 3, 9, 8), bn=(3, 4, 5, 6), nll=(5, 7))
    if quick:
        return dict(conv=(16, 64, 64, 56, 56), pool=(16, 64, 112, 112), bn=(16, 64, 56, 56), nll=(2048, 1000))
    return dict(conv=(32, 64, 64, 56, 56), pool=(32, 64, 112, 112), bn=(32, 64, 56, 56), nll=(4096, 1000))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", default=os.environ.get("TH_LIB") or next(
        (p for p in (os.path.join(ROOT, d, "libth.so") for d in ("lib", "target/release", "target/debug"))
         if os.path.exists(p)), "libth.so"))
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, one sample: proves the script")
    ap.add_argument("--quick", action="store_true", help="half the batch")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()

    th = THC(args.lib)
    emulated = os.environ.get("TH_CUDA_EMULATOR") == "1"
    n_dev, reason = th.devices()
    if n_dev <= 0:
        print(f"no CUDA device: skipped ({reason})")
        return 0
    if emulated and not args.smoke:
        print("emulator: not GPU speed; run with --smoke (tiny sizes) to check the script")
        return 0
    if not emulated:
        print(f"nvrtc: {preload_nvrtc() or 'libnvrtc.so.13 not found: kernels cannot compile'}")
    L = Layers(th)
    torch = None
    if not (args.no_torch or emulated):
        try:
            import torch as _t

            torch = _t if _t.cuda.is_available() else None
        except ImportError:
            pass
    import torch as tref  # the references (CPU float64 for --smoke; the device otherwise)
    import torch.nn.functional as F

    dev = "cuda" if torch else "cpu"
    sync = th.sync if not torch else (lambda: (th.sync(), torch.cuda.synchronize()))
    print(("emulator: not GPU speed" if emulated else "device 0") +
          f"; torch {'on the same device' if torch else 'not timed (' + ('emulator' if emulated else 'no CUDA torch') + ')'}")
    rng = np.random.default_rng(0)
    sz = shapes(args.smoke, args.quick)
    rows, failed = [], []

    def ref(a, grad=False):
        dt = tref.float32 if torch else tref.float64
        return tref.tensor(np.asarray(a), dtype=dt, device=dev, requires_grad=grad)

    def close(name, got, want, tol):
        want = want.detach().cpu().double().numpy() if hasattr(want, "detach") else want
        err = np.max(np.abs(got - want) / (np.abs(want) + 1.0)) if got.size else 0.0
        if not err <= tol:
            raise AssertionError(f"{name}: max relative error {err:.3g} > {tol}")

    tol = 2e-3 if torch else 1e-4  # float32 on both sides vs float32 th against float64

    def row(name, th_run, torch_run, check):
        try:
            th.THClearLastError()
            th_run()
            th.sync()
            th.check(name)
            check()
            t_th, t_torch = paired(th_run, torch_run if torch else None, sync, args.smoke)
            th.check(name)
            r = {"row": name, "th ms": t_th * 1e3}
            if t_torch:
                r["torch ms"], r["ratio"] = t_torch * 1e3, t_torch / t_th
            rows.append(r)
        except (AssertionError, RuntimeError, KeyError) as e:
            print(f"{name}: FAILED: {e}", flush=True)
            failed.append(name)

    # --- conv2d 3x3 pad 1 ---
    n, ci, co, h, w = sz["conv"]
    x, wt, b = (rng.standard_normal(s).astype(np.float32) for s in ((n, ci, h, w), (co, ci, 3, 3), (co,)))
    go = rng.standard_normal((n, co, h, w)).astype(np.float32)
    dx, dw, db, dgo = L.tensor(x), L.tensor(wt.reshape(co, ci * 9)), L.tensor(b), L.tensor(go)
    out, gi, cols, ones = L.empty(), L.empty(), L.empty(), L.empty()
    gw, gb = L.tensor(np.zeros((co, ci * 9))), L.tensor(np.zeros(co))
    tx, tw, tb = ref(x, True), ref(wt, True), ref(b, True)
    ty = F.conv2d(tx, tw, tb, padding=1)
    ty.backward(ref(go))
    fwd = lambda: L.call("SpatialConvolutionMM_updateOutput", dx, out, dw, db, cols, ones, 3, 3, 1, 1, 1, 1)

    def bwd():
        L.call("SpatialConvolutionMM_updateGradInput", dx, dgo, gi, dw, cols, ones, 3, 3, 1, 1, 1, 1)
        L.call("SpatialConvolutionMM_accGradParameters", dx, dgo, gw, gb, cols, ones, 3, 3, 1, 1, 1, 1, 1.0)

    def bwd_check():
        close("conv gradInput", L.read(gi, x.shape), tx.grad, tol)
        close("conv gradWeight", L.read(gw, (co, ci * 9)), tw.grad.reshape(co, -1), tol)

    if torch:
        px, pw, pb, pgo = (t.detach().clone().requires_grad_(r) for t, r in ((tx, True), (tw, True), (tb, True), (ref(go), False)))
        torch_fwd = lambda: F.conv2d(px, pw, pb, padding=1)
        torch_bwd = lambda: torch.autograd.grad(F.conv2d(px, pw, pb, padding=1), (px, pw, pb), pgo)
    else:
        torch_fwd = torch_bwd = None
    row(f"conv2d {n}x{ci}x{h}x{w} -> {co} k3 fwd", fwd, torch_fwd, lambda: close("conv out", L.read(out, go.shape), ty, tol))

    def bwd_first():  # the parameter gradients accumulate: zeroed first, so the check sees one call
        for t in (gw, gb):
            th.THCudaTensor_fill(th.state, t, 0.0)
        bwd()

    row(f"conv2d {n}x{ci}x{h}x{w} -> {co} k3 bwd", bwd_first, torch_bwd, bwd_check)

    # --- max_pool2d 3x3 s2 p1 ---
    n, c, h, w = sz["pool"]
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    tx = ref(x, True)
    ty = F.max_pool2d(tx, 3, 2, 1)
    go = rng.standard_normal(tuple(ty.shape)).astype(np.float32)
    ty.backward(ref(go))
    dx, dgo, out, gi, idx = L.tensor(x), L.tensor(go), L.empty(), L.empty(), L.THCudaLongTensor_new(L.st)
    pfwd = lambda: L.call("SpatialMaxPooling_updateOutput", dx, out, idx, 3, 3, 2, 2, 1, 1, False)
    pbwd = lambda: L.call("SpatialMaxPooling_updateGradInput", dx, dgo, gi, idx, 3, 3, 2, 2, 1, 1, False)
    if L.has("SpatialMaxPooling_updateOutput"):
        if torch:
            px = tx.detach().clone().requires_grad_(True)
            pgo = ref(go)
            py = F.max_pool2d(px, 3, 2, 1)
            t_pfwd = lambda: F.max_pool2d(px, 3, 2, 1)
            t_pbwd = lambda: torch.autograd.grad(py, px, pgo, retain_graph=True)
        else:
            t_pfwd = t_pbwd = None
        row(f"max_pool2d {n}x{c}x{h}x{w} k3s2p1 fwd", pfwd, t_pfwd, lambda: close("pool out", L.read(out, go.shape), ty, 0))
        row(f"max_pool2d {n}x{c}x{h}x{w} k3s2p1 bwd", pbwd, t_pbwd,
            lambda: close("pool gradInput", L.read(gi, x.shape), tx.grad, tol))
    else:
        print("max_pool2d: not in this library (SpatialMaxPooling has no THCUNN export)")

    # --- batch_norm, training ---
    n, c, h, w = sz["bn"]
    x = rng.standard_normal((n, c, h, w)).astype(np.float32) * 2 + 0.5
    g, bb = rng.standard_normal(c).astype(np.float32), rng.standard_normal(c).astype(np.float32)
    go = rng.standard_normal((n, c, h, w)).astype(np.float32)
    if L.has("BatchNormalization_updateOutput"):
        dx, dgo, dg, db = L.tensor(x), L.tensor(go), L.tensor(g), L.tensor(bb)
        rm, rv = L.tensor(np.zeros(c)), L.tensor(np.ones(c))
        sm, ss, out, gi = L.empty(), L.empty(), L.empty(), L.empty()
        gw, gbias = L.tensor(np.zeros(c)), L.tensor(np.zeros(c))
        tx, tg, tbb = ref(x, True), ref(g, True), ref(bb, True)
        ty = F.batch_norm(tx, None, None, tg, tbb, training=True, momentum=0.1, eps=1e-5)
        ty.backward(ref(go))
        bfwd = lambda: L.call("BatchNormalization_updateOutput", dx, out, dg, db, rm, rv, sm, ss, True, 0.1, 1e-5)

        def bbwd():
            for t in (gw, gbias):
                th.THCudaTensor_fill(th.state, t, 0.0)
            L.call("BatchNormalization_backward", dx, dgo, gi, gw, gbias, dg, rm, rv, sm, ss, True, 1.0, 1e-5)

        if torch:
            px, pg, pb = (t.detach().clone().requires_grad_(True) for t in (tx, tg, tbb))
            pgo = ref(go)
            t_bfwd = lambda: F.batch_norm(px, None, None, pg, pb, training=True)
            t_bbwd = lambda: torch.autograd.grad(F.batch_norm(px, None, None, pg, pb, training=True), (px, pg, pb), pgo)
        else:
            t_bfwd = t_bbwd = None
        row(f"batch_norm {n}x{c}x{h}x{w} train fwd", bfwd, t_bfwd, lambda: close("bn out", L.read(out, x.shape), ty, tol))
        row(f"batch_norm {n}x{c}x{h}x{w} train bwd", bbwd, t_bbwd,
            lambda: (close("bn gradInput", L.read(gi, x.shape), tx.grad, 10 * tol),
                     close("bn gradWeight", L.read(gw, (c,)), tg.grad, 10 * tol)))
    else:
        print("batch_norm: not in this library (BatchNormalization has no THCUNN export)")

    # --- log_softmax + nll_loss ---
    n, k = sz["nll"]
    x = rng.standard_normal((n, k)).astype(np.float32)
    y = rng.integers(0, k, n)
    dx, dy, lp, loss, tw_, glp, gi = L.tensor(x), L.labels(y), L.empty(), L.empty(), L.empty(), L.empty(), L.empty()
    tx = ref(x, True)
    ty = F.nll_loss(F.log_softmax(tx, 1), tref.tensor(y, device=dev))
    ty.backward()

    def nfwd():
        L.call("LogSoftMax_updateOutput", dx, lp)
        L.call("ClassNLLCriterion_updateOutput", lp, dy, loss, True, None, tw_, -100)

    def nbwd():
        L.call("ClassNLLCriterion_updateGradInput", lp, dy, glp, True, None, tw_, -100)
        L.call("LogSoftMax_updateGradInput", dx, glp, gi, lp)

    if torch:
        px, py_ = tx.detach().clone().requires_grad_(True), tref.tensor(y, device=dev)
        t_nfwd = lambda: F.nll_loss(F.log_softmax(px, 1), py_)
        t_nbwd = lambda: torch.autograd.grad(F.nll_loss(F.log_softmax(px, 1), py_), px)
    else:
        t_nfwd = t_nbwd = None
    row(f"log_softmax+nll {n}x{k} fwd", nfwd, t_nfwd, lambda: close("nll loss", L.read(loss, (1,)), ty.reshape(1), tol))
    row(f"log_softmax+nll {n}x{k} bwd", nbwd, t_nbwd, lambda: close("nll gradInput", L.read(gi, x.shape), tx.grad, tol))

    print(f"{'row':<44}{'th ms':>10}{'torch ms':>10}{'ratio':>8}")
    for r in rows:
        tm = f"{r['torch ms']:.3f}" if "torch ms" in r else "-"
        ra = f"{r['ratio']:.2f}" if "ratio" in r else "-"
        print(f"{r['row']:<44}{r['th ms']:>10.3f}{tm:>10}{ra:>8}")
    if failed:
        print(f"FAILED: {', '.join(failed)}")
    if emulated:
        print("emulator: not GPU speed (the numbers above only prove the script runs)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"emulated": emulated, "rows": rows, "failed": failed}, f, indent=1)
    th.THCState_free(th.state)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
