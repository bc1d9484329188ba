"""Speed of THTensorConv against numpy (sliding_window_view + tensordot, i.e. im2col + BLAS GEMM)
and, where `import torch` works, against `torch.nn.functional.conv2d` (oneDNN).

Run after `cargo build --release`:  .venv/bin/python bench/conv.py
Prints, per case, the median time of TH and numpy and GFLOP/s (2 flops per multiply-add).
The torch table (skipped, with a note, when torch is missing) times the valid
cross-correlation `conv2Dmv` 'V','X' against conv2d on the same shapes, both on
TH_TORCH_THREADS (default 2) threads, in alternating blocks (TH, torch, TH, ...; each after
`settle`), and reports the medians and the ratio torch time / TH time (> 1: TH faster).
Not a test: numbers depend on the machine and its load. TH_NUM_THREADS sets TH's threads;
numpy's OpenBLAS uses its own (OPENBLAS_NUM_THREADS). Before each library's timed calls the
process waits until the other library's threads are idle (`bench_gemm.settle`: OpenBLAS's
workers spin for a while after a call and would take the cores from TH's)."""

import ctypes as C
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
from thlib import Lib  # noqa: E402
from bench_gemm import settle  # noqa: E402

try:
    import torch
except ImportError:  # the numpy table still runs
    torch = None

lib = Lib(os.environ.get("TH_LIB") or os.path.join(ROOT, "target", "release", "libth.so"))
SWV = np.lib.stride_tricks.sliding_window_view


def median_time(f, reps=7):
    settle(f)
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def np_mv_valid(inp, ker, sr, sc):
    kh, kw = ker.shape[2:]
    win = SWV(inp, (kh, kw), axis=(1, 2))[:, ::sr, ::sc]
    return np.tensordot(ker, win, axes=([1, 2, 3], [0, 3, 4]))


def np_mv_full(inp, ker):
    # full cross-correlation (the cases call TH with 'X'): valid xcorr of the zero-padded input
    kh, kw = ker.shape[2:]
    pad = np.pad(inp, ((0, 0), (kh - 1, kh - 1), (kw - 1, kw - 1)))
    return np_mv_valid(pad, ker, 1, 1)


def np_revger(inp, gout):
    # weight gradient: r[k][i] = xcorr(inp[i], gout[k]) (valid, stride 1)
    oh, ow = gout.shape[1:]
    win = SWV(inp, (oh, ow), axis=(1, 2))  # (nIn, kh, kw, oh, ow)
    return np.tensordot(gout, win, axes=([1, 2], [3, 4]))


def th_call(name, real, *args):
    lib.call(f"TH{real}Tensor_{name}", None, *args)


def case(title, real, npdt, nin, h, w, nout, kh, kw, mode="mv", vf="V", s=(1, 1)):
    rng = np.random.default_rng(0)
    inp = rng.standard_normal((nin, h, w)).astype(npdt)
    r = lib.new(real)
    one, zero = lib.scalar(real, 1.0), lib.scalar(real, 0.0)
    ti = lib.from_numpy(inp, real)
    if mode == "mv":
        ker = rng.standard_normal((nout, nin, kh, kw)).astype(npdt)
        tk = lib.from_numpy(ker, real)
        args = (r, zero, one, ti, tk, C.c_int64(s[0]), C.c_int64(s[1]), C.c_char_p(vf.encode()), C.c_char_p(b"X"))
        th = median_time(lambda: th_call("conv2Dmv", real, *args))
        if vf == "V":
            ref = lambda: np_mv_valid(inp, ker, *s)  # noqa: E731
        else:
            ref = lambda: np_mv_full(inp, ker)  # noqa: E731
        want = ref()
        oh, ow = want.shape[1:]
        flops = 2 * nout * nin * kh * kw * (oh * ow if vf == "V" else h * w)
    else:
        oh, ow = h - kh + 1, w - kw + 1
        gout = rng.standard_normal((nout, oh, ow)).astype(npdt)
        tk = lib.from_numpy(gout, real)
        args = (r, zero, one, ti, tk, C.c_int64(1), C.c_int64(1))
        th = median_time(lambda: th_call("conv2DRevger", real, *args))
        ref = lambda: np_revger(inp, gout)  # noqa: E731
        want = ref()
        flops = 2 * nout * nin * kh * kw * oh * ow
    got = lib.to_numpy(r)
    err = float(np.max(np.abs(got - want)) / (np.max(np.abs(want)) + 1e-30))
    npt = median_time(ref)
    print(f"| {title} | {real} | {th * 1e3:8.2f} ms ({flops / th / 1e9:6.1f} GFLOP/s) | "
          f"{npt * 1e3:8.2f} ms ({flops / npt / 1e9:6.1f} GFLOP/s) | {npt / th:5.2f}x | {err:.1e} |")


def vs_torch(title, real, npdt, nin, h, w, nout, kh, kw, rounds=7, reps=10):
    """conv2Dmv 'V','X' against torch's conv2d on the same data, alternating blocks of `reps`
    calls (`rounds` of each); checks both against numpy before timing."""
    rng = np.random.default_rng(0)
    inp = rng.standard_normal((nin, h, w)).astype(npdt)
    ker = rng.standard_normal((nout, nin, kh, kw)).astype(npdt)
    r = lib.new(real)
    one, zero = lib.scalar(real, 1.0), lib.scalar(real, 0.0)
    ti, tk = lib.from_numpy(inp, real), lib.from_numpy(ker, real)
    args = (r, zero, one, ti, tk, C.c_int64(1), C.c_int64(1), C.c_char_p(b"V"), C.c_char_p(b"X"))
    ours = lambda: th_call("conv2Dmv", real, *args)  # noqa: E731
    x, k = torch.from_numpy(inp)[None], torch.from_numpy(ker)
    with torch.no_grad():
        theirs = lambda: torch.nn.functional.conv2d(x, k)  # noqa: E731
        ours()
        want = np_mv_valid(inp, ker, 1, 1)
        scale = np.max(np.abs(want))
        errs = [float(np.max(np.abs(got - want)) / scale) for got in (lib.to_numpy(r), theirs()[0].numpy())]
        tol = 1e-5 if npdt == np.float32 else 1e-12
        if max(errs) > tol:
            raise SystemExit(f"{title} {real}: results differ from numpy (th {errs[0]:.1e}, torch {errs[1]:.1e})")
        ts = {"th": [], "torch": []}
        for _ in range(rounds):
            for name, f in (("th", ours), ("torch", theirs)):
                settle(f)
                t0 = time.perf_counter()
                for _ in range(reps):
                    f()
                ts[name].append((time.perf_counter() - t0) / reps)
    th, tt = float(np.median(ts["th"])), float(np.median(ts["torch"]))
    ratios = sorted(b / a for a, b in zip(ts["th"], ts["torch"]))
    flops = 2 * nout * nin * kh * kw * (h - kh + 1) * (w - kw + 1)
    print(f"| {title} | {real} | {th * 1e3:7.3f} ms ({flops / th / 1e9:6.1f} GFLOP/s) | "
          f"{tt * 1e3:7.3f} ms ({flops / tt / 1e9:6.1f} GFLOP/s) | {tt / th:5.2f}x "
          f"({ratios[0]:.2f}-{ratios[-1]:.2f}) | {errs[0]:.1e} |")


def torch_table():
    if torch is None:
        print("\n(torch is not installed: no comparison with torch.nn.functional.conv2d)")
        return
    n = int(os.environ.get("TH_TORCH_THREADS", "2"))
    torch.set_num_threads(n)
    print(f"\nconv2Dmv 'V','X' against torch {torch.__version__} conv2d, {n} threads each "
          f"(TH: {lib.dll.THGetNumThreads()})")
    print("| case | dtype | th | torch | torch time / th time (range) | max rel diff |")
    print("|---|---|---|---|---|---|")
    for real, npdt in (("Float", np.float32), ("Double", np.float64)):
        vs_torch("16x64x64 -> 32, 5x5", real, npdt, 16, 64, 64, 32, 5, 5)
        vs_torch("64x32x32 -> 64, 3x3", real, npdt, 64, 32, 32, 64, 3, 3)
        vs_torch("3x128x128 -> 16, 7x7", real, npdt, 3, 128, 128, 16, 7, 7)


if __name__ == "__main__":
    print("| case | dtype | th | numpy (swv+tensordot) | th speedup | max rel diff |")
    print("|---|---|---|---|---|---|")
    case("conv2Dmv 16x64x64 -> 32, 5x5 valid", "Float", np.float32, 16, 64, 64, 32, 5, 5)
    case("conv2Dmv 16x64x64 -> 32, 5x5 valid", "Double", np.float64, 16, 64, 64, 32, 5, 5)
    case("conv2Dmv 64x32x32 -> 64, 3x3 valid", "Float", np.float32, 64, 32, 32, 64, 3, 3)
    case("conv2Dmv 3x128x128 -> 16, 7x7 valid", "Float", np.float32, 3, 128, 128, 16, 7, 7)
    case("conv2Dmv 16x64x64 -> 32, 5x5 valid, stride 2", "Float", np.float32, 16, 64, 64, 32, 5, 5, s=(2, 2))
    case("conv2Dmv 16x60x60 -> 32, 5x5 full", "Float", np.float32, 16, 60, 60, 32, 5, 5, vf="F")
    case("conv2Dmv 64x32x32 -> 64, 3x3 valid", "Double", np.float64, 64, 32, 32, 64, 3, 3)
    case("conv2Dmv 16x60x60 -> 32, 5x5 full", "Double", np.float64, 16, 60, 60, 32, 5, 5, vf="F")
    case("conv2DRevger 16x64x64, 32 grads 60x60 (5x5 weight grad)", "Float", np.float32, 16, 64, 64, 32, 5, 5, mode="rev")
    case("conv2DRevger 16x64x64, 32 grads 60x60 (5x5 weight grad)", "Double", np.float64, 16, 64, 64, 32, 5, 5, mode="rev")
    torch_table()
