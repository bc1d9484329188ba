"""THC's convolutions (THCTensorConv.h) through the C API, on device tensors.

Run: TH_CUDA_EMULATOR=1 TH_LIB=$PWD/target/debug/libth.so python -m pytest -q tests/python/test_thc_conv.py

- conv2Dmv, conv2Dmm (every type string "vx" "vc" "fx" "fc"), conv2DRevger, conv2DRevgerm, with
  strides 1, 2 and larger than the kernel, batches of 1 and 3, contiguous / transposed / narrowed /
  selected inputs and outputs, beta 0, 1 and other values, fresh outputs, outputs of the right shape
  (scaled) and of another size (zeroed): THCuda{,Double,Half}Tensor_<op> against TH's host function
  of the same meaning on the same values (alpha 1 for mv/mm) AND against a naive float64 loop
  written here from the definitions, within a relative bound on the sum of |terms|.
- beta == 0 ignores NaN in the old output (TH zeroes instead of scaling; checked on both engines).
- conv2Dmap (cutorch's connection table): against the naive loop and against TH's conv2Dmap with
  the equivalent (from, to) map and reordered kernel.
- Bad inputs (wrong dims, kernel larger than the input in valid mode, bad type strings, bad strides,
  mismatched planes or batches, bad tables): errors of the host's class, outputs untouched.
"""

import ctypes as C
import itertools

import numpy as np
import pytest
from thccases import vals
from thclib import start_thc, DevSide, HostSide, Layout, as_values, geometry, storage_of, view_values
from thlib import Lib, THError

LIB = Lib()
THC = start_thc(LIB)
HOST, DEV = HostSide(LIB), DevSide(THC)
REALS = ["Float", "Double", "Half"]
TOL = {"Float": 2e-6, "Double": 1e-14, "Half": 2e-3}
TYPES = ["vx", "vc", "fx", "fc"]


# ------------------------------------------------------------------ naive reference (float64)

def ref2d(x, w, s, full=False, conv=False, rev=False):
    """One plane, from the definitions, one kernel tap at a time."""
    (h, wd), (kh, kw), (sy, sx) = x.shape, w.shape, s
    if rev:  # out[y, x] = sum w[a, b] * x[y + a*sy, x + b*sx]
        oh, ow = h - (kh - 1) * sy, wd - (kw - 1) * sx
        out = np.zeros((oh, ow))
        for a, b in itertools.product(range(kh), range(kw)):
            out += w[a, b] * x[a * sy:a * sy + oh, b * sx:b * sx + ow]
        return out
    if not full:  # out[y, x] = sum w'[a, b] * x[y*sy + a, x*sx + b], w' flipped for a convolution
        wv = w[::-1, ::-1] if conv else w
        oh, ow = (h - kh) // sy + 1, (wd - kw) // sx + 1
        out = np.zeros((oh, ow))
        for a, b in itertools.product(range(kh), range(kw)):
            out += wv[a, b] * x[a:a + (oh - 1) * sy + 1:sy, b:b + (ow - 1) * sx + 1:sx]
        return out
    # full: the scatter out[y*sy + a, x*sx + b] += w'[a, b] * x[y, x], w' flipped for a correlation
    ws = w if conv else w[::-1, ::-1]
    out = np.zeros(((h - 1) * sy + kh, (wd - 1) * sx + kw))
    for a, b in itertools.product(range(kh), range(kw)):
        out[a:a + (h - 1) * sy + 1:sy, b:b + (wd - 1) * sx + 1:sx] += ws[a, b] * x
    return out


def ref(op, x, w, s, ty="vx"):
    """(result, scale): the float64 result of `op` and the same with |x|, |w| (error scale)."""
    def run(x, w):
        full, conv = ty[0] == "f", ty[1] == "c"
        if op in ("conv2Dmv", "conv2Dmm"):
            xb = x if op == "conv2Dmm" else x[None]
            out = np.stack([np.stack([sum(ref2d(xb[b, i], w[o, i], s, full, conv) for i in range(w.shape[1]))
                                      for o in range(w.shape[0])]) for b in range(xb.shape[0])])
            return out if op == "conv2Dmm" else out[0]
        xb, wb = (x, w) if op == "conv2DRevgerm" else (x[None], w[None])
        return np.stack([np.stack([sum(ref2d(xb[b, i], wb[b, k], s, rev=True) for b in range(xb.shape[0]))
                                   for i in range(xb.shape[1])]) for k in range(wb.shape[1])])
    return run(x, w), run(np.abs(x), np.abs(w))


# ------------------------------------------------------------------------------ helpers

def f64(real, raw_):
    return as_values(real, raw_).astype(np.float64)


def build(rng, real, shape, kind, lo=-2, hi=2):
    lay = Layout(rng, shape, kind=kind, expand=False)
    base = vals(rng, real, lay.base_shape, lo=lo, hi=hi)
    return lay, base


def tensors(side, real, specs):
    return [lay.build(side, real, base) for lay, base in specs]


def snapshot(side, t):
    return geometry(side, t)[0], storage_of(side, t).copy()


def call(side, real, op, *args):
    try:
        side.call(real, op, None, *args)
        return None
    except THError as e:
        return e


def sc(real, x):
    return LIB.scalar(real, x)


def dev_args(real, op, r, beta, alpha, t, k, s, ty):
    if op in ("conv2Dmv", "conv2Dmm"):
        return [r, sc(real, beta), t, k, C.c_long(s[0]), C.c_long(s[1]), C.c_char_p(ty.encode())]
    return [r, sc(real, beta), sc(real, alpha), t, k, C.c_long(s[0]), C.c_long(s[1])]


def host_args(real, op, r, beta, alpha, t, k, s, ty):
    args = [r, sc(real, beta), sc(real, alpha), t, k, C.c_int64(s[0]), C.c_int64(s[1])]
    if op in ("conv2Dmv", "conv2Dmm"):
        vf, xc = (ty + "??")[:2]
        args += [C.c_char_p(vf.upper().encode()), C.c_char_p(xc.upper().encode())]
    return args


def shapes(op, b, c, o, hw, khw):
    """Input, kernel shapes of `op` for batch b, c input planes, o output (kernel) planes."""
    return {"conv2Dmv": ((c,) + hw, (o, c) + khw), "conv2Dmm": ((b, c) + hw, (o, c) + khw),
            "conv2DRevger": ((c,) + hw, (o,) + khw), "conv2DRevgerm": ((b, c) + hw, (b, o) + khw)}[op]


def out_shape(op, b, c, o, hw, khw, s, ty):
    if op.startswith("conv2DRev"):
        return (o, c, hw[0] - (khw[0] - 1) * s[0], hw[1] - (khw[1] - 1) * s[1])
    f = (lambda n, k, st: (n - 1) * st + k) if ty[0] == "f" else (lambda n, k, st: (n - k) // st + 1)
    sp = (f(hw[0], khw[0], s[0]), f(hw[1], khw[1], s[1]))
    return ((b, o) if op == "conv2Dmm" else (o,)) + sp


def check(real, got, want, scale, what):
    bound = TOL[real] * (scale + 1) * 8
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    bad = ~(np.abs(got - want) <= bound)
    assert not bad.any(), f"{what}: max error {np.max(np.abs(got - want))} at {np.argwhere(bad)[:3].tolist()}"


def run_case(rng, real, op, ty, s, b, kinds, out_mode, beta, alpha=1.0, dims=(3, 2, (7, 6), (3, 2))):
    c, o, hw, khw = dims
    ish, ksh = shapes(op, b, c, o, hw, khw)
    if op.startswith("conv2DRev"):
        hw = (max(hw[0], (khw[0] - 1) * s[0] + 2), max(hw[1], (khw[1] - 1) * s[1] + 1))
        ish, ksh = shapes(op, b, c, o, hw, khw)
    oshape = out_shape(op, b, c, o, hw, khw, s, ty)
    specs = [build(rng, real, ish, kinds[0]), build(rng, real, ksh, kinds[1])]
    ospec = build(rng, real, oshape if out_mode != "resize" else (2, 5), kinds[2]) if out_mode != "fresh" else None
    x, w = (f64(real, lay.numpy(base)) for lay, base in specs)
    want, scale = ref(op, x, w, s, ty)
    want, scale = alpha * want, abs(alpha) * scale
    if out_mode == "keep" and beta != 0:
        old = f64(real, ospec[0].numpy(ospec[1]))
        want, scale = want + beta * old, scale + abs(beta * old)
    what = f"{op} {real} {ty} stride {s} batch {b} {kinds} out={out_mode} beta={beta} alpha={alpha}"
    got = {}
    for side, argf in ((DEV, dev_args), (HOST, host_args)):
        t, k = tensors(side, real, specs)
        r = ospec[0].build(side, real, ospec[1]) if ospec else side.new(real)
        if op in ("conv2Dmv", "conv2Dmm") and side is HOST:
            assert alpha == 1.0
        side.call(real, op, None, *argf(real, op, r, beta, alpha, t, k, s, ty))
        got[side.kind] = f64(real, view_values(side, r))
    check(real, got["device"], want, scale, f"{what}: device vs naive")
    check(real, got["device"], got["host"], scale, f"{what}: device vs host")


# ------------------------------------------------------------------------------ tests

@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("op", ["conv2Dmv", "conv2Dmm"])
@pytest.mark.parametrize("ty", TYPES)
def test_mv_mm(rng, real, op, ty):
    for s in [(1, 1), (2, 2), (1, 2), (4, 3)]:  # (4, 3): strides larger than the 3x2 kernel
        for b in ([1, 3] if op == "conv2Dmm" else [1]):
            kinds = [["contig", "perm", "narrow", "select", "mixed"][int(rng.integers(5))] for _ in range(3)]
            mode = ["fresh", "keep", "resize"][int(rng.integers(3))]
            beta = [0.0, 1.0, -0.5][int(rng.integers(3))]
            run_case(rng, real, op, ty, s, b, kinds, mode, beta)
    # every layout at least once, with a kept output scaled by beta
    for kind in ["contig", "perm", "narrow", "select", "mixed"]:
        run_case(rng, real, op, ty, (2, 1), 2, [kind, kind, kind], "keep", 0.5)


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("op", ["conv2DRevger", "conv2DRevgerm"])
def test_revger(rng, real, op):
    for s in [(1, 1), (2, 2), (1, 3), (4, 4)]:
        for b in ([1, 3] if op == "conv2DRevgerm" else [1]):
            kinds = [["contig", "perm", "narrow", "select", "mixed"][int(rng.integers(5))] for _ in range(3)]
            for mode, beta, alpha in [("fresh", 0.0, 1.0), ("keep", 1.0, 0.5), ("keep", -2.0, 1.5), ("resize", 0.5, 2.0)]:
                run_case(rng, real, op, "vx", s, b, kinds, mode, beta, alpha, dims=(2, 3, (6, 7), (2, 3)))


@pytest.mark.parametrize("op", ["conv2Dmv", "conv2DRevger"])
def test_beta_zero_ignores_nan(rng, op):
    real, s = "Float", (1, 1)
    ish, ksh = shapes(op, 1, 2, 2, (5, 5), (2, 2))
    oshape = out_shape(op, 1, 2, 2, (5, 5), (2, 2), s, "vx")
    specs = [build(rng, real, ish, "contig"), build(rng, real, ksh, "contig")]
    x, w = (f64(real, lay.numpy(base)) for lay, base in specs)
    want, scale = ref(op, x, w, s)
    for side, argf in ((DEV, dev_args), (HOST, host_args)):
        t, k = tensors(side, real, specs)
        lay = Layout(rng, oshape, kind="perm", expand=False)
        r = lay.build(side, real, np.full(lay.base_shape, np.nan, dtype=np.float32))
        side.call(real, op, None, *argf(real, op, r, 0.0, 1.0, t, k, s, "vx"))
        check(real, f64(real, view_values(side, r)), want, scale, f"{op} beta=0 over NaN on the {side.kind}")


def test_large_grid(rng):
    """> 2^16 column elements (the unfold's grid-stride loop) and a multi-plane GEMM."""
    run_case(rng, "Float", "conv2Dmm", "fc", (1, 1), 2, ["perm", "contig", "narrow"], "keep", 1.0,
             dims=(3, 4, (30, 33), (5, 4)))


def map_case(rng, real, fanin, nout, c, hw, khw, s, out_mode, kinds=("contig", "contig", "contig")):
    """conv2Dmap against the naive loop and TH's conv2Dmap on the equivalent map."""
    nk = nout * fanin + int(rng.integers(0, fanin))  # spare kernel planes beyond nout*fanin
    tin = rng.integers(1, c + 1, size=nout * fanin)
    tk = rng.integers(1, nk + 1, size=nout * fanin)
    table = np.stack([tin, tk], 1).astype(np.float64)
    specs = [build(rng, real, (c,) + hw, kinds[0]), build(rng, real, (nk,) + khw, kinds[1])]
    x, w = (f64(real, lay.numpy(base)) for lay, base in specs)
    want = np.stack([sum(ref2d(x[tin[o * fanin + f] - 1], w[tk[o * fanin + f] - 1], s) for f in range(fanin))
                     for o in range(nout)])
    scale = np.stack([sum(ref2d(np.abs(x[tin[o * fanin + f] - 1]), np.abs(w[tk[o * fanin + f] - 1]), s)
                          for f in range(fanin)) for o in range(nout)])
    ospec = build(rng, real, want.shape if out_mode == "keep" else (3,), kinds[2]) if out_mode != "fresh" else None
    if out_mode == "keep":
        old = f64(real, ospec[0].numpy(ospec[1]))
        want, scale = want + old, scale + np.abs(old)
    got = {}
    for side in (DEV, HOST):
        t, k = tensors(side, real, specs)
        r = ospec[0].build(side, real, ospec[1]) if ospec else side.new(real)
        if side is DEV:
            tbl = Layout(rng, table.shape, kind="contig").build(side, real, vals_of(real, table))
            side.call(real, "conv2Dmap", None, r, t, k, C.c_long(s[1]), C.c_long(s[0]), tbl, C.c_long(fanin))
        else:  # TH's map: row m = (from, to), kernel m; TH wants as many kernel planes as input
            # planes and gives as many output planes: everything padded with zero planes to n
            n = max(c, nout * fanin)
            xin = np.zeros((n,) + hw)
            xin[:c] = x
            hk_ = np.zeros((n,) + khw)
            hk_[:nout * fanin] = w[tk - 1]
            old = np.zeros((n,) + want.shape[1:])
            if out_mode == "keep":
                old[:nout] = f64(real, ospec[0].numpy(ospec[1]))
            t, hk, r = (Layout(rng, a.shape, kind="contig").build(side, real, vals_of(real, a)) for a in (xin, hk_, old))
            mp = np.stack([tin, np.repeat(np.arange(1, nout + 1), fanin)], 1).astype(np.float64)
            hm = Layout(rng, mp.shape, kind="contig").build(side, real, vals_of(real, mp))
            side.call(real, "conv2Dmap", None, r, sc(real, 1.0), sc(real, 1.0), t, hk, hm, C.c_int64(s[0]),
                      C.c_int64(s[1]), C.c_char_p(b"V"), C.c_char_p(b"X"))
            got["host"] = f64(real, view_values(side, r))[:nout]
            continue
        got[side.kind] = f64(real, view_values(side, r))
    what = f"conv2Dmap {real} fanin {fanin} stride {s} out={out_mode}"
    check(real, got["device"], want, scale, f"{what}: device vs naive")
    check(real, got["device"], got["host"], scale, f"{what}: device vs host")


def vals_of(real, a):
    a = np.asarray(a)
    return a.astype(np.float16) if real == "Half" else a.astype(np.float32 if real == "Float" else np.float64)


@pytest.mark.parametrize("real", REALS)
def test_map(rng, real):
    for fanin, nout, s, mode in [(1, 3, (1, 1), "fresh"), (2, 2, (2, 1), "keep"), (3, 4, (1, 3), "resize"),
                                 (2, 1, (5, 5), "keep")]:
        map_case(rng, real, fanin, nout, 3, (7, 8), (3, 2), s, mode)
    map_case(rng, real, 2, 3, 3, (6, 6), (2, 2), (1, 1), "keep", kinds=("perm", "narrow", "mixed"))


# ------------------------------------------------------------------------------ errors

def expect_errors(real, op, r_shape, dev_args_, host_args_, what):
    """Both engines raise with the same code; the device output is untouched."""
    h = call(HOST, real, op, *host_args_) if host_args_ is not None else None
    before = snapshot(DEV, dev_args_[0])
    d = call(DEV, real, op, *dev_args_)
    assert d is not None, f"{what}: the device raised nothing"
    if host_args_ is not None:
        assert h is not None and h.code == d.code, f"{what}: host {h}, device {d}"
    after = snapshot(DEV, dev_args_[0])
    assert before[0] == after[0] and np.array_equal(before[1], after[1], equal_nan=True), f"{what}: output touched"
    return d


@pytest.mark.parametrize("real", ["Float", "Half"])
def test_bad_inputs(rng, real):
    def pair(shape_t, shape_k):
        specs = [build(rng, real, shape_t, "contig"), build(rng, real, shape_k, "contig")]
        return specs

    def both(op, ish, ksh, s=(1, 1), ty="vx", beta=0.5, host=True):
        specs = pair(ish, ksh)
        out = {}
        for side, argf in ((HOST, host_args), (DEV, dev_args)):
            t, k = tensors(side, real, specs)
            r = Layout(rng, (2, 3, 3), kind="contig").build(side, real, vals(rng, real, (2, 3, 3)))
            out[side.kind] = argf(real, op, r, beta, 1.0, t, k, s, ty)
        return expect_errors(real, op, None, out["device"], out["host"] if host else None, f"{op} {ish} {ksh} {s} {ty}")

    both("conv2Dmv", (2, 5, 5, 1), (3, 2, 2, 2))                      # input 4-D
    both("conv2Dmv", (2, 5, 5), (3, 2, 2))                            # kernel 3-D
    both("conv2Dmm", (2, 5, 5), (3, 2, 2, 2))                         # input 3-D
    both("conv2Dmv", (2, 3, 3), (3, 2, 4, 2))                         # kernel larger (valid)
    both("conv2Dmv", (2, 5, 5), (3, 4, 2, 2))                         # planes differ
    both("conv2Dmm", (2, 2, 5, 5), (3, 4, 2, 2))
    both("conv2Dmv", (2, 5, 5), (3, 2, 2, 2), s=(0, 1))               # stride
    both("conv2Dmv", (2, 5, 5), (3, 2, 2, 2), s=(1, -1))
    both("conv2DRevger", (2, 5, 5), (3, 2, 2, 2))                     # kernel 4-D
    both("conv2DRevger", (2, 5, 5), (3, 3, 3), s=(3, 1))              # empty output
    both("conv2DRevgerm", (2, 2, 5, 5), (3, 2, 2, 2))                 # batches differ
    both("conv2DRevger", (2, 2, 5), (3, 3, 3))                        # kernel larger
    for ty in ["vz", "zx", "Vx", "v", ""]:                            # type strings
        e = both("conv2Dmv", (2, 5, 5), (3, 2, 2, 2), ty=ty, host=False)
        assert e.code == 2, f"type {ty!r}: {e}"
    e = both("conv2Dmv", (2, 5, 5), (3, 2, 2, 2), ty="vz")
    # full mode accepts a kernel larger than the input
    run_case(rng, real, "conv2Dmv", "fx", (1, 1), 1, ["contig"] * 3, "fresh", 0.0, dims=(2, 2, (2, 3), (4, 4)))


@pytest.mark.parametrize("real", ["Float", "Double"])
def test_bad_tables(rng, real):
    c, nk, fanin = 3, 4, 2
    t = Layout(rng, (c, 6, 6), kind="contig").build(DEV, real, vals(rng, real, (c, 6, 6)))
    k = Layout(rng, (nk, 2, 2), kind="contig").build(DEV, real, vals(rng, real, (nk, 2, 2)))

    def bad(table, fanin=fanin, s=(1, 1), code=None, kernel=k, inp=t):
        lay = Layout(rng, (2, 5, 5), kind="perm", expand=False)
        r = lay.build(DEV, real, vals(rng, real, lay.base_shape))
        tbl = Layout(rng, np.shape(table), kind="contig").build(DEV, real, vals_of(real, table))
        e = expect_errors(real, "conv2Dmap", None, [r, inp, kernel, C.c_long(s[0]), C.c_long(s[1]), tbl, C.c_long(fanin)],
                          None, f"table {table} fanin {fanin}")
        assert code is None or e.code == code, e

    good = [[1, 1], [2, 2], [3, 3], [1, 4]]
    bad([[1, 1], [2, 2], [3, 3], [4, 4]], code=4)      # input plane 4 of 3
    bad([[1, 1], [2, 2], [3, 5], [1, 4]], code=4)      # kernel plane 5 of 4
    bad([[0, 1], [2, 2], [3, 3], [1, 4]], code=4)      # 0: values are 1-based
    bad([[1.5, 1], [2, 2], [3, 3], [1, 4]], code=4)    # not an integer
    bad([[np.nan, 1], [2, 2], [3, 3], [1, 4]], code=4)
    bad([[1, 1], [2, 2], [3, 3]], code=3)              # rows != nOutputPlane*fanin
    bad([[1, 1, 1]] * 4, code=3)                       # 3 columns
    bad([1, 1, 2, 2], code=3)                          # 1-D
    bad(good, fanin=0, code=2)
    bad(good, fanin=5, code=3)                         # 4 / 5 = 0 output planes
    bad(good, s=(0, 1), code=2)
    small = Layout(rng, (c, 1, 6), kind="contig").build(DEV, real, vals(rng, real, (c, 1, 6)))
    bad(good, inp=small, code=3)                       # kernel larger than the input
    k4 = Layout(rng, (nk, 2, 2, 1), kind="contig").build(DEV, real, vals(rng, real, (nk, 2, 2, 1)))
    bad(good, kernel=k4, code=3)


def test_host_tensors_refused(rng):
    real = "Float"
    t = Layout(rng, (2, 5, 5), kind="contig").build(HOST, real, vals(rng, real, (2, 5, 5)))
    k = Layout(rng, (3, 2, 2, 2), kind="contig").build(DEV, real, vals(rng, real, (3, 2, 2, 2)))
    r = DEV.new(real)
    e = call(DEV, real, "conv2Dmv", r, sc(real, 0.0), t, k, C.c_long(1), C.c_long(1), C.c_char_p(b"vx"))
    assert e is not None and e.code == 2, e
