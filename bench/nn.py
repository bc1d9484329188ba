#!/usr/bin/env python3
"""THNN layers against PyTorch's CPU implementation (oneDNN/MKL), forward and backward, in one
process, as ratios.

    python bench/nn.py [--lib target/release/libth.so] [--threads 2,1] [--only conv] [--quick]

Each row is a layer on a shape people train with. Forward: th's updateOutput against the
torch.nn.functional call. Backward: th's updateGradInput plus accGradParameters (where the layer
has parameters) against torch.autograd.grad of the same output for the input and the
parameters. Both sides use the same number of threads (THSetNumThreads / torch.set_num_threads)
and Float data. Samples alternate between th and torch round after round (paired: load and
drift hit both alike); each sample follows a rest of --pause seconds (so that neither side's
spinning threads hold the cores during the other's sample) and one untimed call, then repeats
the call until it lasts >= ~20 ms, timed with perf_counter (wall time: both sides are
multi-threaded). Reported per row and thread count: the
median time per call of each and the median over rounds of torch_time / th_time (> 1: th is
faster) with its spread (10th-90th percentile). Rows whose THNN functions the library does not
export are listed as missing.
"""

import argparse
import ctypes as C
import os
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
sys.path.insert(0, os.path.join(ROOT, "tests", "nn"))
from nnlib import NN  # noqa: E402
from thlib import Lib  # noqa: E402


class Missing(Exception):
    pass


def t64(shape, rng, grad=True):
    return torch.tensor(rng.standard_normal(shape), dtype=torch.float32, requires_grad=grad)


class Case:
    """A row: th's forward/backward closures and torch's, built on the same data."""

    def __init__(self, name, th_fwd, th_bwd, torch_fwd, torch_bwd):
        self.name, self.th_fwd, self.th_bwd, self.torch_fwd, self.torch_bwd = name, th_fwd, th_bwd, torch_fwd, torch_bwd


def bound(nn, fn, *args):
    """A no-argument closure calling THNN_Float<fn> with prebuilt arguments (no conversion per call)."""
    name = f"THNN_Float{fn}"
    if name not in nn.protos or not hasattr(nn.lib.dll, name):
        raise Missing(fn)
    params = nn.protos[name][1:]
    raw = [C.c_void_p(None)]
    for a, (kind, detail) in zip(args, params):
        if a is None:
            raw.append(C.c_void_p(None))
        elif kind in ("tensor", "ptr"):
            raw.append(C.c_void_p(a.ptr))
        else:
            raw.append(detail(a))
    f = nn.lib.fn(name, None, [type(r) for r in raw])

    def call():
        f(*raw)

    call.keep = args  # the tensors must outlive the closure (raw holds bare addresses)
    return call


def seq(*fs):
    def call():
        for f in fs:
            f()

    call.keep = fs
    return call


def check_ok(lib):
    code = lib.dll.THGetLastErrorCode()
    if code:
        raise RuntimeError(lib.dll.THGetLastError().decode())


# ------------------------------------------------------------------------------------ rows


def conv_row(nn, rng, name, n, cin, cout, hw, k, s, p, d=1):
    x, w, b = t64((n, cin, hw, hw), rng), t64((cout, cin, k, k), rng), t64((cout,), rng)
    y = F.conv2d(x, w, b, stride=s, padding=p, dilation=d)
    g = torch.randn_like(y)
    T = lambda a: nn.tensor("Float", a.detach().numpy())  # noqa: E731
    tx, tw, tb, tg = T(x), T(w.reshape(cout, -1)), T(b), T(g)
    out, gin, gw, gb, f1, f2 = (nn.empty("Float") for _ in range(6))
    gw = T(torch.zeros(cout, cin * k * k))
    gb = T(torch.zeros(cout))
    if d == 1:
        mod, extra = "SpatialConvolutionMM", (k, k, s, s, p, p)
        fwd = bound(nn, f"{mod}_updateOutput", tx, out, tw, tb, f1, f2, *extra)
        bwd = seq(bound(nn, f"{mod}_updateGradInput", tx, tg, gin, tw, f1, f2, *extra),
                  bound(nn, f"{mod}_accGradParameters", tx, tg, gw, gb, f1, f2, *extra, 1.0))
    else:
        mod, extra = "SpatialDilatedConvolution", (k, k, s, s, p, p, d, d)
        tw = T(w)
        gw = T(torch.zeros_like(w))
        fwd = bound(nn, f"{mod}_updateOutput", tx, out, tw, tb, f1, f2, *extra)
        bwd = seq(bound(nn, f"{mod}_updateGradInput", tx, tg, gin, tw, f1, *extra),
                  bound(nn, f"{mod}_accGradParameters", tx, tg, gw, gb, f1, f2, *extra, 1.0))
    return Case(name, fwd, bwd, lambda: F.conv2d(x, w, b, stride=s, padding=p, dilation=d),
                lambda: torch.autograd.grad(y, (x, w, b), g, retain_graph=True))


def full_conv_row(nn, rng, name, n, cin, cout, hw, k, s, p):
    x, w, b = t64((n, cin, hw, hw), rng), t64((cin, cout, k, k), rng), t64((cout,), rng)
    y = F.conv_transpose2d(x, w, b, stride=s, padding=p)
    g = torch.randn_like(y)
    T = lambda a: nn.tensor("Float", a.detach().numpy())  # noqa: E731
    tx, tw, tb, tg = T(x), T(w), T(b), T(g)
    out, gin, f1, f2 = (nn.empty("Float") for _ in range(4))
    gw, gb = T(torch.zeros_like(w)), T(torch.zeros(cout))
    extra = (k, k, s, s, p, p, 0, 0)
    mod = "SpatialFullConvolution"
    fwd = bound(nn, f"{mod}_updateOutput", tx, out, tw, tb, f1, f2, *extra)
    bwd = seq(bound(nn, f"{mod}_updateGradInput", tx, tg, gin, tw, f1, *extra),
              bound(nn, f"{mod}_accGradParameters", tx, tg, gw, gb, f1, f2, *extra, 1.0))
    return Case(name, fwd, bwd, lambda: F.conv_transpose2d(x, w, b, stride=s, padding=p),
                lambda: torch.autograd.grad(y, (x, w, b), g, retain_graph=True))


def conv3d_row(nn, rng, name, n, cin, cout, dhw, k, p):
    x, w, b = t64((n, cin, dhw, dhw, dhw), rng), t64((cout, cin, k, k, k), rng), t64((cout,), rng)
    y = F.conv3d(x, w, b, padding=p)
    g = torch.randn_like(y)
    T = lambda a: nn.tensor("Float", a.detach().numpy())  # noqa: E731
    tx, tw, tb, tg = T(x), T(w), T(b), T(g)
    out, gin, f1, f2 = (nn.empty("Float") for _ in range(4))
    gw, gb = T(torch.zeros_like(w)), T(torch.zeros(cout))
    mod = "VolumetricConvolutionMM"
    fwd = bound(nn, f"{mod}_updateOutput", tx, out, tw, tb, f1, k, k, k, 1, 1, 1, p, p, p)
    bwd = seq(bound(nn, f"{mod}_updateGradInput", tx, tg, gin, tw, f1, f2, k, k, k, 1, 1, 1, p, p, p),
              bound(nn, f"{mod}_accGradParameters", tx, tg, gw, gb, f1, k, k, k, 1, 1, 1, p, p, p, 1.0))
    return Case(name, fwd, bwd, lambda: F.conv3d(x, w, b, padding=p),
                lambda: torch.autograd.grad(y, (x, w, b), g, retain_graph=True))


def depthwise_row(nn, rng, name, n, c, hw, k, p):
    x, w, b = t64((n, c, hw, hw), rng), t64((c, 1, k, k), rng), t64((c,), rng)
    y = F.conv2d(x, w, b, padding=p, groups=c)
    g = torch.randn_like(y)
    T = lambda a: nn.tensor("Float", a.detach().numpy())  # noqa: E731
    # torch7's depthwise weight is (multiplier, nInputPlane, kH, kW): with multiplier 1 the same
    # numbers as torch's (C, 1, kH, kW)
    tx, tw, tb, tg = T(x), T(w.reshape(1, c, k, k)), T(b), T(g)
    out, gin, f1, f2 = (nn.empty("Float") for _ in range(4))
    gw, gb = T(torch.zeros(1, c, k, k)), T(torch.zeros(c))
    mod = "SpatialDepthWiseConvolution"
    fwd = bound(nn, f"{mod}_updateOutput", tx, out, tw, tb, f1, f2, k, k, 1, 1, p, p)
    bwd = seq(bound(nn, f"{mod}_updateGradInput", tx, tg, gin, tw, f1, f2, k, k, 1, 1, p, p),
              bound(nn, f"{mod}_accGradParameters", tx, tg, gw, gb, f1, f2, k, k, 1, 1, p, p, 1.0))
    return Case(name, fwd, bwd, lambda: F.conv2d(x, w, b, padding=p, groups=c),
                lambda: torch.autograd.grad(y, (x, w, b), g, retain_graph=True))


def pool_row(nn, rng, name, kind, n, c, hw, k, s, p):
    x = t64((n, c, hw, hw), rng)
    tfwd = (lambda: F.max_pool2d(x, k, s, p)) if kind == "max" else (lambda: F.avg_pool2d(x, k, s, p))
    y = tfwd()
    g = torch.randn_like(y)
    T = lambda a: nn.tensor("Float", a.detach().numpy())  # noqa: E731
    tx, tg = T(x), T(g)
    out, gin = nn.empty("Float"), nn.empty("Float")
    if kind == "max":
        idx = nn.lib.new("Long")
        fwd = bound(nn, "SpatialMaxPooling_updateOutput", tx, out, idx, k, k, s, s, p, p, False)
        fwd()
        bwd = bound(nn, "SpatialMaxPooling_updateGradInput", tx, tg, gin, idx, k, k, s, s, p, p, False)
    else:
        fwd = bound(nn, "SpatialAveragePooling_updateOutput", tx, out, k, k, s, s, p, p, False, True)
        bwd = bound(nn, "SpatialAveragePooling_updateGradInput", tx, tg, gin, k, k, s, s, p, p, False, True)
    return Case(name, fwd, bwd, tfwd, lambda: torch.autograd.grad(y, (x,), g, retain_graph=True))


def batchnorm_row(nn, rng, name, n, c, hw):
    x, w, b = t64((n, c, hw, hw), rng), t64((c,), rng), t64((c,), rng)
    rm, rv = torch.zeros(c), torch.ones(c)
    y = F.batch_norm(x, rm.clone(), rv.clone(), w, b, training=True)
    g = torch.randn_like(y)
    T = lambda a: nn.tensor("Float", a.detach().numpy())  # noqa: E731
    tx, tw, tb, tg, trm, trv = T(x), T(w), T(b), T(g), T(rm), T(rv)
    out, gin, sm, ss = (nn.empty("Float") for _ in range(4))
    gw, gb = T(torch.zeros(c)), T(torch.zeros(c))
    fwd = bound(nn, "BatchNormalization_updateOutput", tx, out, tw, tb, trm, trv, sm, ss, True, 0.1, 1e-5)
    fwd()
    bwd = bound(nn, "BatchNormalization_backward", tx, tg, gin, gw, gb, tw, trm, trv, sm, ss, True, 1.0, 1e-5)
    return Case(name, fwd, bwd, lambda: F.batch_norm(x, rm, rv, w, b, training=True),
                lambda: torch.autograd.grad(y, (x, w, b), g, retain_graph=True))


def softmax_row(nn, rng, name, log, n, k):
    x = t64((n, k), rng)
    tf = (lambda: F.log_softmax(x, 1)) if log else (lambda: F.softmax(x, 1))
    y = tf()
    g = torch.randn_like(y)
    T = lambda a: nn.tensor("Float", a.detach().numpy())  # noqa: E731
    tx, tg = T(x), T(g)
    out, gin = nn.empty("Float"), nn.empty("Float")
    mod = "LogSoftMax" if log else "SoftMax"
    fwd = bound(nn, f"{mod}_updateOutput", tx, out)
    fwd()
    bwd = bound(nn, f"{mod}_updateGradInput", tx, tg, gin, out)
    return Case(name, fwd, bwd, tf, lambda: torch.autograd.grad(y, (x,), g, retain_graph=True))


def nll_row(nn, rng, name, n, k):
    x = torch.tensor(np.log(rng.dirichlet(np.ones(k), n)), dtype=torch.float32, requires_grad=True)
    t = torch.tensor(rng.integers(0, k, n))
    y = F.nll_loss(x, t)
    T = lambda a: nn.tensor("Float", a.detach().numpy())  # noqa: E731
    tx, tt = T(x), nn.tensor("Long", t.numpy())
    out, gin, tw = nn.empty("Float"), nn.empty("Float"), nn.empty("Float")
    fwd = bound(nn, "ClassNLLCriterion_updateOutput", tx, tt, out, True, None, tw, -100)
    fwd()
    bwd = bound(nn, "ClassNLLCriterion_updateGradInput", tx, tt, gin, True, None, tw, -100)
    return Case(name, fwd, bwd, lambda: F.nll_loss(x, t), lambda: torch.autograd.grad(y, (x,), retain_graph=True))


def relu_row(nn, rng, name, shape):
    x = t64(shape, rng)
    y = F.threshold(x, 0.0, 0.0)
    g = torch.randn_like(y)
    T = lambda a: nn.tensor("Float", a.detach().numpy())  # noqa: E731
    tx, tg = T(x), T(g)
    out, gin = nn.empty("Float"), nn.empty("Float")
    fwd = bound(nn, "Threshold_updateOutput", tx, out, 0.0, 0.0, False)
    bwd = bound(nn, "Threshold_updateGradInput", tx, tg, gin, 0.0, 0.0, False)
    return Case(name, fwd, bwd, lambda: F.threshold(x, 0.0, 0.0),
                lambda: torch.autograd.grad(y, (x,), g, retain_graph=True))


def linear_row(nn, rng, name, n, fin, fout):
    x, w, b = t64((n, fin), rng), t64((fout, fin), rng), t64((fout,), rng)
    y = F.linear(x, w, b)
    g = torch.randn_like(y)
    T = lambda a: nn.tensor("Float", a.detach().numpy())  # noqa: E731
    tx, tw, tb, tg = T(x), T(w), T(b), T(g)
    out, gin, buf = nn.empty("Float"), nn.empty("Float"), nn.empty("Float")
    gw, gb = T(torch.zeros_like(w)), T(torch.zeros(fout))
    fwd = bound(nn, "Linear_updateOutput", tx, out, tw, tb, buf)
    bwd = seq(bound(nn, "Linear_updateGradInput", tx, tg, gin, tw),
              bound(nn, "Linear_accGradParameters", tx, tg, gin, tw, tb, gw, gb, buf, 1.0))
    return Case(name, fwd, bwd, lambda: F.linear(x, w, b), lambda: torch.autograd.grad(y, (x, w, b), g, retain_graph=True))


def rows(nn, rng, quick):
    n = 4 if quick else 16
    return [
        ("conv", lambda: conv_row(nn, rng, "conv LeNet 1->20 28x28 k5", 4 * n, 1, 20, 28, 5, 1, 0)),
        ("conv", lambda: conv_row(nn, rng, "conv LeNet 20->50 12x12 k5", 4 * n, 20, 50, 12, 5, 1, 0)),
        ("conv", lambda: conv_row(nn, rng, "conv VGG 64->64 56x56 k3", n // 2, 64, 64, 56, 3, 1, 1)),
        ("conv", lambda: conv_row(nn, rng, "conv ResNet 64->64 56x56 1x1", n // 2, 64, 64, 56, 1, 1, 0)),
        ("conv", lambda: conv_row(nn, rng, "conv ResNet 128->256 28x28 k3 s2", n // 2, 128, 256, 28, 3, 2, 1)),
        ("conv", lambda: conv_row(nn, rng, "conv ResNet 256->512 14x14 1x1 s2", n // 2, 256, 512, 14, 1, 2, 0)),
        ("conv", lambda: conv_row(nn, rng, "dilated conv 64->64 32x32 k3 d2", n // 2, 64, 64, 32, 3, 1, 2, 2)),
        ("conv", lambda: full_conv_row(nn, rng, "full conv 64->32 16x16 k4 s2", n // 2, 64, 32, 16, 4, 2, 1)),
        ("conv", lambda: conv3d_row(nn, rng, "volumetric conv 16->32 16^3 k3", max(1, n // 4), 16, 32, 16, 3, 1)),
        ("conv", lambda: depthwise_row(nn, rng, "depthwise conv 64ch 56x56 k3", n // 2, 64, 56, 3, 1)),
        ("pool", lambda: pool_row(nn, rng, "max pool 64ch 56x56 k3 s2", "max", n, 64, 56, 3, 2, 1)),
        ("pool", lambda: pool_row(nn, rng, "avg pool 64ch 56x56 k2 s2", "avg", n, 64, 56, 2, 2, 0)),
        ("norm", lambda: batchnorm_row(nn, rng, "batch norm train 64ch 56x56", n, 64, 56)),
        ("softmax", lambda: softmax_row(nn, rng, "softmax 256x1000", False, 256, 1000)),
        ("softmax", lambda: softmax_row(nn, rng, "log softmax 256x1000", True, 256, 1000)),
        ("loss", lambda: nll_row(nn, rng, "class NLL 4096x1000", 4096, 1000)),
        ("act", lambda: relu_row(nn, rng, "threshold (ReLU) 16x64x56x56", (n, 64, 56, 56))),
        ("linear", lambda: linear_row(nn, rng, "linear 256x1024->1024", 256, 1024, 1024)),
    ]


def sample(f, reps, pause=0.0):
    # The other library's threads spin for a while after its last call (OpenMP's wait policy,
    # th's lingering workers) and would take the cores from this one: let them fall asleep,
    # then warm this library's threads with one untimed call.
    if pause:
        time.sleep(pause)
        f()
    t0 = time.perf_counter()
    for _ in range(reps):
        f()
    return (time.perf_counter() - t0) / reps


def reps_for(f):
    f()
    t = sample(f, 1)
    return max(1, int(0.02 / max(t, 1e-7)))


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))]


def measure(th_f, torch_f, rounds, lib, pause):
    lib.dll.THClearLastError()
    th_f()
    check_ok(lib)
    kt, kp = reps_for(th_f), reps_for(torch_f)
    ts, ps, ratios = [], [], []
    for _ in range(rounds):
        a = sample(th_f, kt, pause)
        b = sample(torch_f, kp, pause)
        ts.append(a)
        ps.append(b)
        ratios.append(b / a)
    check_ok(lib)
    return statistics.median(ts), statistics.median(ps), statistics.median(ratios), pct(ratios, 0.1), pct(ratios, 0.9)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", default=os.path.join(ROOT, "target", "release", "libth.so"))
    ap.add_argument("--threads", default="2,1")
    ap.add_argument("--only", default=None, help="row group: conv, pool, norm, softmax, loss, act, linear")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="smaller batches, 3 rounds")
    ap.add_argument("--pause", type=float, default=0.3, help="seconds of rest before each sample (see sample())")
    args = ap.parse_args()
    lib = Lib(os.path.abspath(args.lib))
    nn = NN(lib)
    rng = np.random.default_rng(0)
    rounds = 3 if args.quick else args.rounds
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    print(f"# bench/nn.py: {args.lib} vs torch {torch.__version__} (oneDNN {torch.backends.mkldnn.is_available()}), "
          f"Float, CPU: {cpu}, {os.cpu_count()} cores")
    print(f"# ratio = torch time / th time (> 1: th faster), median of {rounds} paired rounds [p10-p90]")
    cases = []
    for group, make in rows(nn, rng, args.quick):
        if args.only and group != args.only:
            continue
        try:
            cases.append(make())
        except Missing as e:
            print(f"{'missing':>10}  {group}: THNN_Float{e} is not exported")
    for threads in [int(t) for t in args.threads.split(",")]:
        lib.dll.THSetNumThreads(threads)
        torch.set_num_threads(threads)
        print(f"\n## {threads} thread(s)")
        print(f"{'row':40} {'pass':5} {'th ms':>9} {'torch ms':>9} {'ratio':>6}  spread")
        for c in cases:
            for which, thf, tf in (("fwd", c.th_fwd, c.torch_fwd), ("bwd", c.th_bwd, c.torch_bwd)):
                try:
                    t, p, r, lo, hi = measure(thf, tf, rounds, lib, args.pause)
                    print(f"{c.name:40} {which:5} {t * 1e3:9.3f} {p * 1e3:9.3f} {r:6.2f}  [{lo:.2f}-{hi:.2f}]", flush=True)
                except RuntimeError as e:
                    print(f"{c.name:40} {which:5} error: {e}", flush=True)


if __name__ == "__main__":
    main()
