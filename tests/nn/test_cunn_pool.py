"""THCUNN's poolings on the device against the host THNN on the same values and layouts (the host
poolings are checked against PyTorch in test_pool.py): SpatialMaxPooling,
SpatialDilatedMaxPooling, SpatialAveragePooling, VolumetricMaxPooling,
VolumetricDilatedMaxPooling, VolumetricAveragePooling, SpatialAdaptiveMaxPooling,
SpatialAdaptiveAveragePooling, SpatialFractionalMaxPooling, VolumetricFractionalMaxPooling,
SpatialMaxUnpooling, VolumetricMaxUnpooling, TemporalMaxPooling and FeatureLPPooling, both passes,
for Cuda, CudaDouble and CudaHalf: batched and unbatched, non-contiguous operands, ceil mode,
padding, dilation, overlapping windows, ties and NaN, odd sizes; indices compared exactly; refused
calls (bad parameters, out-of-range indices) raise the host's error and leave outputs alone.

Run on the CPU emulator: TH_CUDA_EMULATOR=1 TH_LIB=$PWD/target/emu/libth.so .venv/bin/python -m
pytest -q tests/nn/test_cunn_pool.py (skipped without a device)."""

import re

import numpy as np
import pytest
from cunnlib import HOST, NP, REALS, agree, exact, host_type
from thclib import on_storage
from thlib import THError

LAYOUTS = ["contig", "step", "perm"]


def laid(a, kind):
    """`a` (same values) contiguous, with a step of 2 along its last dimension, or with its first
    two dimensions' memory order swapped."""
    a = np.asarray(a)
    if kind == "contig" or a.ndim == 0:
        return np.ascontiguousarray(a)
    if kind == "step":
        big = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
        big[..., ::2] = a
        return big[..., ::2]
    if a.ndim < 2:
        return laid(a, "step")
    return np.ascontiguousarray(np.swapaxes(a, 0, 1)).swapaxes(0, 1)


def dev_long(cunn, a):
    """A THCudaLongTensor with `a`'s shape, strides and values."""
    a = np.asarray(a, dtype=np.int64)
    span = 1 + sum((n - 1) * (s // 8) for n, s in zip(a.shape, a.strides)) if a.size else 0
    base = np.lib.stride_tricks.as_strided(a, shape=(span,), strides=(8,)) if a.size else a.reshape(0)
    st = cunn.dev.storage("Long", np.ascontiguousarray(base))
    t = on_storage(cunn.dev, "Long", st, 0, a.shape, [s // 8 for s in a.strides])
    cunn.dev.free_storage("Long", st)
    return t


class Side:
    """One family's calls: the device (`real`) or the host (its reference real)."""

    def __init__(self, nn, cunn, real, dev):
        self.nn, self.cunn, self.dev, self.dreal = nn, cunn, dev, real
        self.real = real if dev else HOST[real]
        self.typ = NP[real] if dev else host_type(real)

    def t(self, a, kind="contig"):
        a = laid(np.asarray(a).astype(self.typ), kind)
        return self.cunn.tensor(self.real, a) if self.dev else self.nn.tensor(self.real, a)

    def long(self, a, kind="contig"):
        a = laid(np.asarray(a, dtype=np.int64), kind)
        return dev_long(self.cunn, a) if self.dev else self.nn.lib.from_numpy(a, "Long")

    def empty(self):
        return self.cunn.empty(self.real) if self.dev else self.nn.empty(self.real)

    def lempty(self):
        return self.cunn.dev.new("Long") if self.dev else self.nn.empty("Long")

    def read(self, t):
        return (self.cunn.numpy(t) if self.dev else t.numpy()).astype(np.float64)

    def readl(self, t):
        return (self.cunn.numpy(t) if self.dev else t.numpy()).astype(np.int64)

    def call(self, fn, *args):
        (self.cunn if self.dev else self.nn).call(self.real, fn, *args)


def compare(nn, cunn, real, f):
    """f(side) on the device and on the host; every result agrees (indices exactly)."""
    got, want = f(Side(nn, cunn, real, True)), f(Side(nn, cunn, real, False))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if w.dtype == np.int64:
            assert g.shape == w.shape and np.array_equal(g, w)
        else:
            agree(g, w, real)


def values(rng, real, shape, ties=False):
    x = rng.standard_normal(shape)
    if ties:
        x = np.round(x * 2) / 2
    return exact(real, x)


def grad_like(real, shape, seed=7):
    return exact(real, np.random.default_rng(seed).standard_normal(shape))


def cord(nd, v):
    """(t,)h,w -> the C order: W, H or T, W, H."""
    return [v[1], v[0]] if nd == 2 else [v[0], v[2], v[1]]


# ---------------------------------------------------------------- max / average pooling

MAX = {"SpatialMaxPooling": (2, False), "SpatialDilatedMaxPooling": (2, True),
       "VolumetricMaxPooling": (3, False), "VolumetricDilatedMaxPooling": (3, True)}

# shape, kernel, stride, pad, dilation, ceil
CASES2 = [((2, 3, 7, 6), (3, 2), (2, 2), (1, 1), (1, 2), False),
          ((3, 5, 5), (2, 2), (1, 1), (0, 0), (2, 1), True),
          ((2, 2, 9, 8), (3, 3), (2, 3), (1, 0), (2, 1), True)]
CASES3 = [((2, 2, 5, 6, 5), (2, 3, 2), (1, 2, 2), (1, 1, 0), (1, 1, 2), False),
          ((3, 4, 5, 5), (3, 2, 2), (2, 2, 1), (1, 0, 1), (1, 2, 1), True)]


def cases(nd):
    return CASES2 if nd == 2 else CASES3


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("mod,ci", [(m, i) for m in MAX for i in range(len(cases(MAX[m][0])))])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_max(nn, cunn, rng, real, mod, ci, layout):
    case = cases(MAX[mod][0])[ci]
    nd, has_dil = MAX[mod]
    shape, k, d, p, dil, ceil = case
    args = cord(nd, k) + cord(nd, d) + cord(nd, p) + (cord(nd, dil) if has_dil else []) + [ceil]
    x = values(rng, real, shape, ties=ci == 1)
    if ci == 0:
        x.reshape(-1)[[3, 17, 18]] = np.nan

    def f(s):
        out, idx, gin = s.empty(), s.lempty(), s.empty()
        s.call(f"{mod}_updateOutput", s.t(x, layout), out, idx, *args)
        y, ind = s.read(out), s.readl(idx)
        go = grad_like(real, y.shape)
        s.call(f"{mod}_updateGradInput", s.t(x, layout), s.t(go, layout), gin, s.long(ind, layout), *args)
        return y, ind, s.read(gin)

    compare(nn, cunn, real, f)


AVG = {"SpatialAveragePooling": 2, "VolumetricAveragePooling": 3}


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("mod,ci", [(m, i) for m in AVG for i in range(len(cases(AVG[m])))])
@pytest.mark.parametrize("cip", [False, True])
@pytest.mark.parametrize("layout", ["contig", "perm"])
def test_avg(nn, cunn, rng, real, mod, ci, cip, layout):
    nd = AVG[mod]
    shape, k, d, p, _, ceil = cases(nd)[ci]
    args = cord(nd, k) + cord(nd, d) + cord(nd, p) + [ceil, cip]
    x = values(rng, real, shape)

    def f(s):
        out, gin = s.empty(), s.empty()
        s.call(f"{mod}_updateOutput", s.t(x, layout), out, *args)
        y = s.read(out)
        s.call(f"{mod}_updateGradInput", s.t(x, layout), s.t(grad_like(real, y.shape), layout), gin, *args)
        return y, s.read(gin)

    compare(nn, cunn, real, f)


# ---------------------------------------------------------------- adaptive, fractional

@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("shape,osize", [((2, 3, 7, 5), (3, 2)), ((3, 5, 9), (4, 5)), ((1, 2, 4, 4), (6, 7))])
@pytest.mark.parametrize("layout", ["contig", "step"])
def test_adaptive(nn, cunn, rng, real, shape, osize, layout):
    x = values(rng, real, shape, ties=True)
    oh, ow = osize

    def f(s):
        out, idx, gin, aout, agin = s.empty(), s.lempty(), s.empty(), s.empty(), s.empty()
        s.call("SpatialAdaptiveMaxPooling_updateOutput", s.t(x, layout), out, idx, ow, oh)
        y, ind = s.read(out), s.readl(idx)
        go = grad_like(real, y.shape)
        s.call("SpatialAdaptiveMaxPooling_updateGradInput", s.t(x, layout), s.t(go, layout), gin, s.long(ind, layout))
        s.call("SpatialAdaptiveAveragePooling_updateOutput", s.t(x, layout), aout, ow, oh)
        s.call("SpatialAdaptiveAveragePooling_updateGradInput", s.t(x, layout), s.t(go, layout), agin)
        return y, ind, s.read(gin), s.read(aout), s.read(agin)

    compare(nn, cunn, real, f)


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("nd,shape,osize,pool", [
    (2, (2, 3, 9, 8), (4, 3), (2, 3)),
    (2, (2, 7, 7), (3, 5), (3, 2)),
    (3, (2, 2, 7, 6, 8), (3, 2, 4), (2, 3, 2)),
    (3, (3, 5, 6, 5), (2, 3, 1), (2, 2, 3)),
])
@pytest.mark.parametrize("layout", ["contig", "perm"])
def test_fractional(nn, cunn, rng, real, nd, shape, osize, pool, layout):
    x = values(rng, real, shape, ties=True)
    n, c = (shape[0], shape[1]) if len(shape) == nd + 2 else (1, shape[0])
    u = exact(real, rng.uniform(0, 0.999, (n, c, nd)))
    mod = "SpatialFractionalMaxPooling" if nd == 2 else "VolumetricFractionalMaxPooling"
    sizes = cord(nd, osize) + cord(nd, pool)

    def f(s):
        out, idx, gin = s.empty(), s.lempty(), s.empty()
        s.call(f"{mod}_updateOutput", s.t(x, layout), out, *sizes, idx, s.t(u, layout))
        y, ind = s.read(out), s.readl(idx)
        go = grad_like(real, y.shape)
        s.call(f"{mod}_updateGradInput", s.t(x, layout), s.t(go, layout), gin, *sizes, s.long(ind, layout))
        return y, ind, s.read(gin)

    compare(nn, cunn, real, f)


# ---------------------------------------------------------------- unpooling

@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("nd,shape,osize", [(2, (2, 3, 3, 4), (5, 7)), (2, (2, 2, 3), (4, 5)),
                                             (3, (2, 2, 2, 3, 2), (3, 5, 4)), (3, (3, 2, 2, 2), (4, 3, 3))])
@pytest.mark.parametrize("layout", ["contig", "step"])
def test_unpool(nn, cunn, rng, real, nd, shape, osize, layout):
    x = values(rng, real, shape)
    olen = int(np.prod(osize))
    # repeated offsets: the last (row-major) wins forward, each reads its offset backward
    ind = rng.integers(0, olen, shape)
    mod = "SpatialMaxUnpooling" if nd == 2 else "VolumetricMaxUnpooling"
    sizes = cord(nd, osize) + ([2, 2, 1, 1, 0, 1] if nd == 3 else [])

    def f(s):
        out, gin = s.empty(), s.empty()
        s.call(f"{mod}_updateOutput", s.t(x, layout), out, s.long(ind, layout), *sizes)
        y = s.read(out)
        go = grad_like(real, y.shape)
        s.call(f"{mod}_updateGradInput", s.t(x, layout), s.t(go, layout), gin, s.long(ind, layout), *sizes)
        return y, s.read(gin)

    compare(nn, cunn, real, f)


# ---------------------------------------------------------------- temporal, Lp

@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("shape,kw,dw", [((7, 3), 3, 2), ((2, 9, 4), 2, 1), ((3, 5, 1), 5, 3)])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_temporal(nn, cunn, rng, real, shape, kw, dw, layout):
    x = values(rng, real, shape, ties=True)

    def f(s):
        out, idx, gin = s.empty(), s.lempty(), s.empty()
        s.call("TemporalMaxPooling_updateOutput", s.t(x, layout), out, idx, kw, dw)
        y, ind = s.read(out), s.readl(idx)
        go = grad_like(real, y.shape)
        s.call("TemporalMaxPooling_updateGradInput", s.t(x, layout), s.t(go, layout), gin, s.long(ind, layout), kw, dw)
        return y, ind, s.read(gin)

    compare(nn, cunn, real, f)


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("shape,batch", [((2, 7, 3), True), ((2, 8), True), ((2, 7, 2, 3), True), ((7,), False),
                                         ((9, 2, 2), False)])
@pytest.mark.parametrize("power,width,stride", [(2.0, 2, 1), (3.0, 3, 2), (1.5, 4, 3)])
@pytest.mark.parametrize("layout", ["contig", "step"])
def test_lp(nn, cunn, rng, real, shape, batch, power, width, stride, layout):
    x = exact(real, np.abs(rng.standard_normal(shape)) + 0.1)
    if x.size > 3:
        x.reshape(-1)[2] = 0.0
    # the forward's output as the backward reads it: the same values on both sides
    fd = 1 if batch else 0
    xs = np.moveaxis(x, fd, 0)
    fo = (xs.shape[0] - width) // stride + 1
    yref = np.stack([(xs[j * stride:j * stride + width] ** power).sum(0) ** (1 / power) for j in range(fo)])
    yref = exact(real, np.moveaxis(yref, 0, fd))

    def f(s):
        out, gin = s.empty(), s.empty()
        s.call("FeatureLPPooling_updateOutput", s.t(x, layout), out, power, width, stride, batch)
        y = s.read(out)
        go = grad_like(real, y.shape)
        s.call("FeatureLPPooling_updateGradInput", s.t(go, layout), s.t(x, layout), s.t(yref, layout), gin, power,
               width, stride, batch)
        return y, s.read(gin)

    compare(nn, cunn, real, f)


# ---------------------------------------------------------------- refused calls

def refused(nn, cunn, real, f):
    """f(side, out) raises on both sides with the same message and leaves `out` as it was."""
    msgs = []
    for dev in (True, False):
        s = Side(nn, cunn, real, dev)
        out = s.t(np.full((2, 3), 5.0))
        with pytest.raises(THError) as e:
            f(s, out)
        # the same message but for the function's and the tensors' type names
        msgs.append(re.sub(r"torch\.(cuda\.)?\w*Tensor", "Tensor", e.value.msg.replace(f"THNN_{s.real}", "THNN_")))
        assert s.read(out).shape == (2, 3) and (s.read(out) == 5.0).all()
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("real", REALS)
def test_refused(nn, cunn, rng, real):
    x = values(rng, real, (2, 3, 6, 6))
    go = grad_like(real, (2, 3, 3, 3))
    bad = np.zeros((2, 3, 3, 3), np.int64)
    bad[1, 2, 0, 1] = 36  # one past the plane
    neg = bad.copy()
    neg[1, 2, 0, 1] = -1
    args = [2, 2, 2, 2, 0, 0, False]
    refused(nn, cunn, real, lambda s, o: s.call("SpatialMaxPooling_updateGradInput", s.t(x), s.t(go), o,
                                                s.long(bad), *args))
    refused(nn, cunn, real, lambda s, o: s.call("SpatialMaxPooling_updateGradInput", s.t(x), s.t(go), o,
                                                s.long(neg), *args))
    refused(nn, cunn, real, lambda s, o: s.call("SpatialMaxPooling_updateOutput", s.t(x), o, s.lempty(),
                                                0, 2, 2, 2, 0, 0, False))
    refused(nn, cunn, real, lambda s, o: s.call("SpatialAveragePooling_updateOutput", s.t(x), o,
                                                3, 3, 1, 1, 2, 0, False, True))
    refused(nn, cunn, real, lambda s, o: s.call("SpatialAveragePooling_updateGradInput", s.t(x), s.t(go), o,
                                                3, 3, 1, 1, 1, 1, False, True))
    refused(nn, cunn, real, lambda s, o: s.call("SpatialMaxUnpooling_updateOutput", s.t(go), o, s.long(bad), 6, 5))
    refused(nn, cunn, real, lambda s, o: s.call("SpatialMaxUnpooling_updateGradInput", s.t(go), s.t(x), o,
                                                s.long(bad), 6, 5))
    refused(nn, cunn, real, lambda s, o: s.call("SpatialAdaptiveMaxPooling_updateGradInput", s.t(x), s.t(go), o,
                                                s.long(bad)))
    tx, tgo = values(rng, real, (7, 3)), grad_like(real, (3, 3))
    tbad = np.array([[0, 1, 2], [2, 7, 4], [4, 5, 6]])
    refused(nn, cunn, real, lambda s, o: s.call("TemporalMaxPooling_updateGradInput", s.t(tx), s.t(tgo), o,
                                                s.long(tbad), 3, 2))
    refused(nn, cunn, real, lambda s, o: s.call("TemporalMaxPooling_updateOutput", s.t(tx), o, s.lempty(), 8, 1))
    u = np.full((2, 3, 2), 1.0)
    refused(nn, cunn, real, lambda s, o: s.call("SpatialFractionalMaxPooling_updateOutput", s.t(x), o, 3, 3, 2, 2,
                                                s.lempty(), s.t(u)))
    refused(nn, cunn, real, lambda s, o: s.call("FeatureLPPooling_updateOutput", s.t(x), o, 2.0, 1, 1, True))
    refused(nn, cunn, real, lambda s, o: s.call("FeatureLPPooling_updateGradInput", s.t(go), s.t(x), s.t(go), o,
                                                2.0, 2, 1, True))


@pytest.mark.parametrize("real", REALS)
def test_host_operand_refused(nn, cunn, rng, real):
    x = values(rng, real, (3, 6, 6))
    out = cunn.empty(real)
    with pytest.raises(THError):
        cunn.call(real, "SpatialMaxPooling_updateOutput", x, out, nn.empty("Long"), 2, 2, 2, 2, 0, 0, False)

