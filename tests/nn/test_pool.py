"""THNN pooling against torch.nn.functional (float64, gradients through autograd), finite
differences of th's own forward (Double), naive loops, non-contiguous and unbatched inputs, and
errors that leave outputs alone. Indices are 0-based flat offsets into the plane (PyTorch's)."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from nnlib import NP, close, fd_grad
from thlib import THError

REALS = ["Float", "Double"]


def cast(a, real):
    """a rounded to the real type (so Float and the float64 reference see the same values)."""
    return np.asarray(a).astype(NP[real])


def T64(a, grad=True):
    return torch.tensor(np.asarray(a, dtype=np.float64), dtype=torch.float64, requires_grad=grad)


def distinct(rng, shape):
    """Values without ties (max pooling's argmax is then unique)."""
    n = int(np.prod(shape))
    return (rng.permutation(n).reshape(shape) / n - 0.5) + 0.01 * rng.standard_normal(shape)


def noncontig(a):
    """a as a non-contiguous view with the same values (a transposed copy transposed back)."""
    v = np.ascontiguousarray(a.T).T if a.ndim > 1 else np.stack([a, a], -1)[:, 0]
    assert not v.flags.c_contiguous or v.size <= 1 or max(v.shape) == v.size
    return v


def torch_ref(f, x, gout):
    tx = T64(x)
    y = f(tx)
    idx = None
    if isinstance(y, tuple):
        y, idx = y
    y.backward(T64(gout, False))
    return y.detach().numpy(), tx.grad.numpy(), (None if idx is None else idx.numpy())


def tol(real):
    return 1e-12 if real == "Double" else 1e-5


# ---------------------------------------------------------------- max / avg pooling (2-D, 3-D)

def spatial_max(nn, real, x, gout, k, d, p, dil, ceil):
    out, idx, gin = nn.empty(real), nn.empty("Long"), nn.empty(real)
    if dil is None:
        args = (k[1], k[0], d[1], d[0], p[1], p[0], ceil)
        nn.call(real, "SpatialMaxPooling_updateOutput", x, out, idx, *args)
        if gout is not None:
            nn.call(real, "SpatialMaxPooling_updateGradInput", x, gout, gin, idx.numpy(), *args)
    else:
        args = (k[1], k[0], d[1], d[0], p[1], p[0], dil[1], dil[0], ceil)
        nn.call(real, "SpatialDilatedMaxPooling_updateOutput", x, out, idx, *args)
        if gout is not None:
            nn.call(real, "SpatialDilatedMaxPooling_updateGradInput", x, gout, gin, idx.numpy(), *args)
    return out.numpy(), idx.numpy(), (gin.numpy() if gout is not None else None)


def volumetric_max(nn, real, x, gout, k, d, p, dil, ceil):
    out, idx, gin = nn.empty(real), nn.empty("Long"), nn.empty(real)
    tw = lambda v: (v[0], v[2], v[1])  # noqa: E731  (T, H, W) -> C order T, W, H
    if dil is None:
        args = (*tw(k), *tw(d), *tw(p), ceil)
        name = "VolumetricMaxPooling"
    else:
        args = (*tw(k), *tw(d), *tw(p), *tw(dil), ceil)
        name = "VolumetricDilatedMaxPooling"
    nn.call(real, f"{name}_updateOutput", x, out, idx, *args)
    if gout is not None:
        nn.call(real, f"{name}_updateGradInput", x, gout, gin, idx.numpy(), *args)
    return out.numpy(), idx.numpy(), (gin.numpy() if gout is not None else None)


MAX_CASES = [
    # shape, kernel, stride, pad, dilation, ceil
    ((2, 3, 7, 6), (2, 2), (2, 2), (0, 0), None, False),
    ((3, 7, 5), (3, 2), (2, 1), (1, 1), None, True),
    ((1, 2, 5, 5), (3, 3), (3, 3), (0, 0), None, True),
    ((2, 1, 9, 8), (3, 2), (2, 3), (1, 0), (2, 3), False),
    ((2, 13, 11), (2, 3), (3, 2), (1, 1), (2, 1), True),
    ((1, 1, 1, 1), (1, 1), (1, 1), (0, 0), None, False),
    ((1, 2, 4, 4), (2, 2), (3, 3), (0, 0), None, True),  # stride > kernel, ceil: last window dropped
]


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("case", MAX_CASES)
def test_spatial_max(nn, rng, real, case):
    shape, k, d, p, dil, ceil = case
    x = cast(distinct(rng, shape), real)
    ty = F.max_pool2d(T64(x, False), k, d, p, dilation=dil or 1, ceil_mode=ceil)
    gout = cast(rng.standard_normal(ty.shape), real)
    want, gwant, iwant = torch_ref(lambda t: F.max_pool2d(t, k, d, p, dilation=dil or 1, ceil_mode=ceil, return_indices=True),
                                   x, gout)
    out, idx, gin = spatial_max(nn, real, noncontig(x), gout, k, d, p, dil, ceil)
    close(out, want, real, tol=tol(real))
    assert idx.dtype == np.int64 and (idx == iwant).all()
    close(gin, gwant, real, tol=tol(real))


VOL_CASES = [
    ((2, 2, 5, 6, 4), (2, 2, 2), (2, 2, 2), (0, 0, 0), None, False),
    ((3, 5, 7, 6), (3, 2, 3), (2, 1, 2), (1, 1, 1), None, True),
    ((1, 2, 7, 6, 5), (2, 3, 2), (1, 2, 2), (1, 1, 0), (2, 1, 2), True),
    ((1, 3, 3, 5), (1, 2, 2), (1, 1, 2), (0, 1, 0), (1, 2, 2), False),
]


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("case", VOL_CASES)
def test_volumetric_max(nn, rng, real, case):
    shape, k, d, p, dil, ceil = case
    x = cast(distinct(rng, shape), real)
    f = lambda t: F.max_pool3d(t, k, d, p, dilation=dil or 1, ceil_mode=ceil, return_indices=True)  # noqa: E731
    gout = cast(rng.standard_normal(f(T64(x, False))[0].shape), real)
    want, gwant, iwant = torch_ref(f, x, gout)
    out, idx, gin = volumetric_max(nn, real, noncontig(x), gout, k, d, p, dil, ceil)
    close(out, want, real, tol=tol(real))
    assert (idx == iwant).all()
    close(gin, gwant, real, tol=tol(real))


def test_max_ties_nan_and_overlap(nn):
    # ties pick the first element; NaN wins; overlapping windows sum their gradients
    x = np.array([[[1.0, 1.0, 0.0], [1.0, np.nan, 2.0], [0.0, 3.0, 3.0]]])
    out, idx, gin = spatial_max(nn, "Double", x, np.ones((1, 2, 2)), (2, 2), (1, 1), (0, 0), None, False)
    want, iwant = F.max_pool2d(torch.tensor(x), 2, 1, return_indices=True)
    assert np.isnan(out).all() and (idx == iwant.numpy()).all() and np.isnan(want.numpy()).all()
    y = np.array([[[5.0, 1.0, 0.0], [1.0, 0.0, 2.0], [0.0, 3.0, 3.0]]])
    out, idx, gin = spatial_max(nn, "Double", y, np.ones((1, 2, 2)), (2, 2), (1, 1), (0, 0), None, False)
    assert idx.tolist() == [[[0, 5], [7, 7]]]
    assert gin.tolist() == [[[1.0, 0, 0], [0, 0, 1.0], [0, 2.0, 0]]]


def test_max_finite_differences(nn, rng):
    real = "Double"
    x = distinct(rng, (2, 5, 6))
    gout = rng.standard_normal((2, 3, 3))
    k, d, p, dil = (3, 2), (2, 2), (1, 0), (1, 2)

    def loss(v):
        return float(np.sum(spatial_max(nn, real, v, None, k, d, p, dil, True)[0] * gout))

    _, _, gin = spatial_max(nn, real, x, gout, k, d, p, dil, True)
    close(gin, fd_grad(loss, x), real, tol=1e-7)


def avg(nn, real, x, gout, k, d, p, ceil, cip, nd=2):
    out, gin = nn.empty(real), nn.empty(real)
    if nd == 2:
        name, args = "SpatialAveragePooling", (k[1], k[0], d[1], d[0], p[1], p[0], ceil, cip)
    else:
        tw = lambda v: (v[0], v[2], v[1])  # noqa: E731
        name, args = "VolumetricAveragePooling", (*tw(k), *tw(d), *tw(p), ceil, cip)
    nn.call(real, f"{name}_updateOutput", x, out, *args)
    if gout is not None:
        nn.call(real, f"{name}_updateGradInput", x, gout, gin, *args)
    return out.numpy(), (gin.numpy() if gout is not None else None)


AVG2 = [
    ((2, 3, 7, 6), (2, 2), (2, 2), (0, 0), False),
    ((3, 7, 5), (3, 2), (2, 1), (1, 1), True),
    ((1, 2, 5, 8), (3, 3), (2, 3), (1, 1), True),
    ((2, 1, 4, 3), (4, 3), (1, 1), (2, 1), False),
    ((1, 1, 1, 1), (1, 1), (1, 1), (0, 0), True),
]


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("case", AVG2)
@pytest.mark.parametrize("cip", [True, False])
def test_spatial_avg(nn, rng, real, case, cip):
    shape, k, d, p, ceil = case
    x = cast(rng.standard_normal(shape), real)
    f = lambda t: F.avg_pool2d(t, k, d, p, ceil_mode=ceil, count_include_pad=cip)  # noqa: E731
    gout = cast(rng.standard_normal(f(T64(x, False)).shape), real)
    want, gwant, _ = torch_ref(f, x, gout)
    out, gin = avg(nn, real, noncontig(x), noncontig(gout), k, d, p, ceil, cip)
    close(out, want, real, tol=tol(real))
    close(gin, gwant, real, tol=tol(real))


AVG3 = [
    ((2, 2, 5, 6, 4), (2, 2, 2), (2, 2, 2), (0, 0, 0), False),
    ((3, 5, 7, 6), (3, 2, 3), (2, 1, 2), (1, 1, 1), True),
    ((1, 1, 3, 4, 5), (2, 4, 2), (2, 1, 3), (1, 2, 0), True),
]


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("case", AVG3)
@pytest.mark.parametrize("cip", [True, False])
def test_volumetric_avg(nn, rng, real, case, cip):
    shape, k, d, p, ceil = case
    x = cast(rng.standard_normal(shape), real)
    f = lambda t: F.avg_pool3d(t, k, d, p, ceil_mode=ceil, count_include_pad=cip)  # noqa: E731
    gout = cast(rng.standard_normal(f(T64(x, False)).shape), real)
    want, gwant, _ = torch_ref(f, x, gout)
    out, gin = avg(nn, real, noncontig(x), gout, k, d, p, ceil, cip, nd=3)
    close(out, want, real, tol=tol(real))
    close(gin, gwant, real, tol=tol(real))


@pytest.mark.parametrize("nd", [2, 3])
@pytest.mark.parametrize("cip", [True, False])
def test_avg_finite_differences(nn, rng, nd, cip):
    real = "Double"
    if nd == 2:
        x, k, d, p = rng.standard_normal((2, 5, 4)), (3, 2), (2, 1), (1, 1)
    else:
        x, k, d, p = rng.standard_normal((1, 3, 4, 3)), (2, 3, 2), (1, 2, 1), (1, 1, 0)
    out, _ = avg(nn, real, x, None, k, d, p, True, cip, nd)
    gout = rng.standard_normal(out.shape)
    _, gin = avg(nn, real, x, gout, k, d, p, True, cip, nd)
    g = fd_grad(lambda v: float(np.sum(avg(nn, real, v, None, k, d, p, True, cip, nd)[0] * gout)), x)
    close(gin, g, real, tol=1e-7)


# ---------------------------------------------------------------- adaptive

def adaptive(nn, real, kind, x, gout, osize):
    out, idx, gin = nn.empty(real), nn.empty("Long"), nn.empty(real)
    if kind == "max":
        nn.call(real, "SpatialAdaptiveMaxPooling_updateOutput", x, out, idx, osize[1], osize[0])
        if gout is not None:
            nn.call(real, "SpatialAdaptiveMaxPooling_updateGradInput", x, gout, gin, idx.numpy())
    else:
        nn.call(real, "SpatialAdaptiveAveragePooling_updateOutput", x, out, osize[1], osize[0])
        if gout is not None:
            nn.call(real, "SpatialAdaptiveAveragePooling_updateGradInput", x, gout, gin)
    return out.numpy(), idx.numpy() if kind == "max" else None, (gin.numpy() if gout is not None else None)


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("shape,osize", [((2, 3, 7, 5), (3, 2)), ((3, 5, 11), (4, 5)), ((1, 2, 3, 4), (5, 7)),
                                         ((2, 1, 1, 1), (1, 1)), ((1, 2, 6, 6), (6, 6))])
def test_adaptive(nn, rng, real, kind, shape, osize):
    x = cast(distinct(rng, shape), real)
    gout = cast(rng.standard_normal(shape[:-2] + osize), real)
    if kind == "max":
        want, gwant, iwant = torch_ref(lambda t: F.adaptive_max_pool2d(t, osize, return_indices=True), x, gout)
    else:
        want, gwant, iwant = torch_ref(lambda t: F.adaptive_avg_pool2d(t, osize), x, gout)
    out, idx, gin = adaptive(nn, real, kind, noncontig(x), noncontig(gout), osize)
    close(out, want, real, tol=tol(real))
    close(gin, gwant, real, tol=tol(real))
    if kind == "max":
        assert (idx == iwant).all()


def test_adaptive_finite_differences(nn, rng):
    real = "Double"
    x = rng.standard_normal((2, 5, 7))
    gout = rng.standard_normal((2, 3, 4))
    for kind in ["avg", "max"]:
        _, _, gin = adaptive(nn, real, kind, x, gout, (3, 4))
        g = fd_grad(lambda v: float(np.sum(adaptive(nn, real, kind, v, None, (3, 4))[0] * gout)), x)
        close(gin, g, real, tol=1e-7)


# ---------------------------------------------------------------- fractional

def fractional(nn, real, x, gout, osize, pool, samples):
    out, idx, gin = nn.empty(real), nn.empty("Long"), nn.empty(real)
    if len(osize) == 2:
        name, args = "SpatialFractionalMaxPooling", (osize[1], osize[0], pool[1], pool[0])
    else:
        name, args = "VolumetricFractionalMaxPooling", (osize[0], osize[2], osize[1], pool[0], pool[2], pool[1])
    nn.call(real, f"{name}_updateOutput", x, out, *args, idx, samples)
    if gout is not None:
        nn.call(real, f"{name}_updateGradInput", x, gout, gin, *args, idx.numpy())
    return out.numpy(), idx.numpy(), (gin.numpy() if gout is not None else None)


FRAC = [
    ((2, 3, 9, 7), (4, 3), (2, 2)),
    ((3, 10, 13), (5, 7), (3, 2)),
    ((1, 2, 5, 5), (1, 1), (2, 3)),
    ((1, 1, 6, 6), (5, 4), (2, 3)),  # output + pool - 1 == input
    ((2, 2, 5, 6, 7), (3, 2, 4), (2, 3, 2)),
    ((2, 7, 6, 5), (4, 3, 2), (2, 2, 3)),
]


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("case", FRAC)
def test_fractional(nn, rng, real, case):
    shape, osize, pool = case
    nd = len(osize)
    batch = len(shape) == nd + 2
    n, c = (shape[0] if batch else 1), shape[-nd - 1]
    x = cast(distinct(rng, shape), real)
    samples = cast(rng.uniform(0, 1, (n, c, nd)), real)
    gout = cast(rng.standard_normal(shape[:-nd] + osize), real)
    fn = F.fractional_max_pool2d if nd == 2 else F.fractional_max_pool3d
    st = torch.tensor(samples.astype(np.float64))
    want, gwant, iwant = torch_ref(lambda t: fn(t, pool, output_size=osize, return_indices=True, _random_samples=st), x, gout)
    out, idx, gin = fractional(nn, real, noncontig(x), gout, osize, pool, samples)
    close(out, want, real, tol=tol(real))
    assert (idx == iwant).all()
    close(gin, gwant, real, tol=tol(real))


def test_fractional_finite_differences(nn, rng):
    real = "Double"
    x = distinct(rng, (2, 7, 6))
    s = rng.uniform(0, 1, (1, 2, 2))
    gout = rng.standard_normal((2, 3, 4))
    _, _, gin = fractional(nn, real, x, gout, (3, 4), (3, 2), s)
    g = fd_grad(lambda v: float(np.sum(fractional(nn, real, v, None, (3, 4), (3, 2), s)[0] * gout)), x)
    close(gin, g, real, tol=1e-7)


# ---------------------------------------------------------------- unpooling

def unpool(nn, real, x, idx, gout, osize, d=(1, 1, 1), p=(0, 0, 0)):
    out, gin = nn.empty(real), nn.empty(real)
    if len(osize) == 2:
        name, args = "SpatialMaxUnpooling", (osize[1], osize[0])
    else:
        tw = lambda v: (v[0], v[2], v[1])  # noqa: E731
        name, args = "VolumetricMaxUnpooling", (*tw(osize), *tw(d), *tw(p))
    nn.call(real, f"{name}_updateOutput", x, out, idx, *args)
    if gout is not None:
        nn.call(real, f"{name}_updateGradInput", x, gout, gin, idx, *args)
    return out.numpy(), (gin.numpy() if gout is not None else None)


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("shape,k,d,p", [((2, 3, 7, 6), (2, 2), (2, 2), (0, 0)), ((3, 9, 8), (3, 2), (2, 2), (1, 1)),
                                         ((1, 2, 5, 6, 7), (2, 3, 2), (2, 2, 3), (1, 1, 0)),
                                         ((2, 4, 5, 4), (2, 2, 2), (2, 2, 2), (0, 0, 0))])
def test_unpool(nn, rng, real, shape, k, d, p):
    nd = len(k)
    x = cast(distinct(rng, shape), real)
    pool = F.max_pool2d if nd == 2 else F.max_pool3d
    unp = F.max_unpool2d if nd == 2 else F.max_unpool3d
    y, ind = pool(torch.tensor(x.astype(np.float64)), k, d, p, return_indices=True)
    osize = tuple(shape[-nd:])
    gout = cast(rng.standard_normal(shape), real)
    want, gwant, _ = torch_ref(lambda t: unp(t, ind, k, d, p, output_size=osize), y.numpy(), gout)
    out, gin = unpool(nn, real, noncontig(cast(y.numpy(), real)), noncontig(ind.numpy()), gout, osize, d + (1,) * (3 - nd), p + (0,) * (3 - nd))
    close(out, want, real, tol=tol(real))
    close(gin, gwant, real, tol=tol(real))


def test_unpool_naive_and_finite_differences(nn, rng):
    real = "Double"
    x = rng.standard_normal((2, 3, 2))
    idx = np.stack([rng.permutation(20)[:6].reshape(3, 2) for _ in range(2)])
    out, _ = unpool(nn, real, x, idx, None, (4, 5))
    want = np.zeros((2, 20))
    for c in range(2):
        want[c, idx[c].reshape(-1)] = x[c].reshape(-1)
    close(out, want.reshape(2, 4, 5), real)
    gout = rng.standard_normal((2, 4, 5))
    _, gin = unpool(nn, real, x, idx, gout, (4, 5))
    g = fd_grad(lambda v: float(np.sum(unpool(nn, real, v, idx, None, (4, 5))[0] * gout)), x)
    close(gin, g, real, tol=1e-7)


# ---------------------------------------------------------------- temporal

def temporal(nn, real, x, gout, kw, dw):
    out, idx, gin = nn.empty(real), nn.empty("Long"), nn.empty(real)
    nn.call(real, "TemporalMaxPooling_updateOutput", x, out, idx, kw, dw)
    if gout is not None:
        nn.call(real, "TemporalMaxPooling_updateGradInput", x, gout, gin, idx.numpy(), kw, dw)
    return out.numpy(), idx.numpy(), (gin.numpy() if gout is not None else None)


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("shape,kw,dw", [((2, 9, 5), 3, 2), ((7, 3), 2, 1), ((1, 5, 1), 5, 3), ((3, 11, 4), 2, 3)])
def test_temporal(nn, rng, real, shape, kw, dw):
    x = cast(distinct(rng, shape), real)
    tr = lambda t: t.transpose(-1, -2)  # noqa: E731
    f = lambda t: tuple(tr(v) for v in F.max_pool1d(tr(t), kw, dw, return_indices=True))  # noqa: E731
    gout = cast(rng.standard_normal(f(T64(x, False))[0].shape), real)
    want, gwant, iwant = torch_ref(f, x, gout)
    out, idx, gin = temporal(nn, real, noncontig(x), gout, kw, dw)
    close(out, want, real, tol=tol(real))
    assert (idx == iwant).all()
    close(gin, gwant, real, tol=tol(real))
    if real == "Double":
        g = fd_grad(lambda v: float(np.sum(temporal(nn, real, v, None, kw, dw)[0] * gout)), x)
        close(gin, g, real, tol=1e-7)


# ---------------------------------------------------------------- FeatureLPPooling

def lp(nn, real, x, gout, power, width, stride, batch):
    out, gin = nn.empty(real), nn.empty(real)
    nn.call(real, "FeatureLPPooling_updateOutput", x, out, power, width, stride, batch)
    if gout is not None:
        nn.call(real, "FeatureLPPooling_updateGradInput", gout, x, out.numpy(), gin, power, width, stride, batch)
    return out.numpy(), (gin.numpy() if gout is not None else None)


def torch_lp(t, power, width, stride, fdim):
    # the feature dimension last, everything else flattened into the batch: lp_pool1d over it
    tt = t.movedim(fdim, -1)
    shp = tt.shape
    y = F.lp_pool1d(tt.reshape(-1, 1, shp[-1]), power, width, stride)
    return y.reshape(shp[:-1] + (y.shape[-1],)).movedim(-1, fdim)


LP = [((7,), False), ((9, 3), False), ((6, 2, 3), False), ((2, 8), True), ((3, 10, 2), True), ((2, 7, 2, 3), True)]


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("shape,batch", LP)
@pytest.mark.parametrize("power,width,stride", [(2.0, 2, 1), (3.0, 3, 2), (1.5, 4, 3)])
def test_lp(nn, rng, real, shape, batch, power, width, stride):
    x = rng.standard_normal(shape)
    if power != 2.0:
        x = np.abs(x) + 0.1
    x = cast(x, real)
    fdim = 1 if batch else 0
    f = lambda t: torch_lp(t, power, width, stride, fdim)  # noqa: E731
    gout = cast(rng.standard_normal(f(T64(x, False)).shape), real)
    want, gwant, _ = torch_ref(f, x, gout)
    out, gin = lp(nn, real, noncontig(x), gout, power, width, stride, batch)
    t = 1e-11 if real == "Double" else 1e-5
    close(out, want, real, tol=t)
    close(gin, gwant, real, tol=t, scale=float(np.max(np.abs(gwant))) * 10)
    if real == "Double" and len(shape) <= 3:
        g = fd_grad(lambda v: float(np.sum(lp(nn, real, v, None, power, width, stride, batch)[0] * gout)), x)
        close(gin, g, real, tol=1e-6)


# ---------------------------------------------------------------- errors

def raises(match, f, *args):
    with pytest.raises(THError, match=match):
        f(*args)


def test_errors_pooling(nn):
    real = "Float"
    x = np.zeros((2, 5, 5), np.float32)
    out, idx = nn.tensor(real, np.full((2, 2), 7.0)), nn.tensor("Long", np.full(3, 9))
    c = nn.call
    raises(r"THNN_FloatSpatialMaxPooling_updateOutput: argument 2 \(input\)", c, real, "SpatialMaxPooling_updateOutput",
           np.zeros((5, 5), np.float32), out, idx, 2, 2, 2, 2, 0, 0, False)
    raises(r"argument 5 \(kW\)", c, real, "SpatialMaxPooling_updateOutput", x, out, idx, 0, 2, 2, 2, 0, 0, False)
    raises(r"argument 8 \(dH\)", c, real, "SpatialMaxPooling_updateOutput", x, out, idx, 2, 2, 2, 0, 0, 0, False)
    raises(r"argument 9 \(padW\).*half", c, real, "SpatialMaxPooling_updateOutput", x, out, idx, 2, 2, 2, 2, 2, 0, False)
    raises(r"argument 2 \(input\).*too small", c, real, "SpatialMaxPooling_updateOutput", x, out, idx, 6, 2, 1, 1, 0, 0, False)
    raises(r"argument 12 \(dilationH\)", c, real, "SpatialDilatedMaxPooling_updateOutput", x, out, idx, 2, 2, 1, 1, 0, 0, 1, 0, False)
    raises(r"argument 2 \(input\).*too small", c, real, "SpatialDilatedMaxPooling_updateOutput", x, out, idx, 2, 2, 1, 1, 0, 0, 5, 1, False)
    gin = nn.tensor(real, np.full(4, 3.0))
    g = np.zeros((2, 2, 2), np.float32)
    bad = np.zeros((2, 2, 2), np.int64)
    bad[1, 1, 1] = 25
    raises(r"argument 5 \(indices\).*out of range", c, real, "SpatialMaxPooling_updateGradInput", x, g, gin, bad, 2, 2, 2, 2, 0, 0, False)
    raises(r"argument 5 \(indices\)", c, real, "SpatialMaxPooling_updateGradInput", x, g, gin, np.zeros((2, 2, 3), np.int64),
           2, 2, 2, 2, 0, 0, False)
    raises(r"argument 3 \(gradOutput\)", c, real, "SpatialMaxPooling_updateGradInput", x, np.zeros((2, 3, 2), np.float32), gin,
           bad, 2, 2, 2, 2, 0, 0, False)
    raises(r"VolumetricMaxPooling_updateOutput: argument 2 \(input\)", c, real, "VolumetricMaxPooling_updateOutput", x, out, idx,
           2, 2, 2, 1, 1, 1, 0, 0, 0, False)
    v = np.zeros((1, 4, 4, 4), np.float32)
    raises(r"argument 7 \(kH\)", c, real, "VolumetricMaxPooling_updateOutput", v, out, idx, 2, 2, -1, 1, 1, 1, 0, 0, 0, False)
    raises(r"argument 11 \(pT\).*half", c, real, "VolumetricMaxPooling_updateOutput", v, out, idx, 2, 2, 2, 1, 1, 1, 2, 0, 0, False)
    raises(r"argument 16 \(dilationH\)", c, real, "VolumetricDilatedMaxPooling_updateOutput", v, out, idx, 2, 2, 2, 1, 1, 1, 0, 0, 0,
           1, 1, 0, False)
    raises(r"SpatialAveragePooling_updateOutput: argument 8 \(padW\)", c, real, "SpatialAveragePooling_updateOutput", x, out,
           2, 2, 1, 1, 2, 0, False, True)
    raises(r"argument 3 \(gradOutput\)", c, real, "SpatialAveragePooling_updateGradInput", x, np.zeros((2, 3, 3), np.float32), gin,
           2, 2, 2, 2, 0, 0, False, True)
    raises(r"argument 12 \(padH\)", c, real, "VolumetricAveragePooling_updateOutput", v, out, 2, 2, 2, 1, 1, 1, 0, 0, 3, False, True)
    assert (out.numpy() == 7.0).all() and out.numpy().shape == (2, 2)
    assert (idx.numpy() == 9).all() and (gin.numpy() == 3.0).all()


def test_errors_other_modules(nn):
    real = "Double"
    x = np.zeros((2, 5, 5))
    out, idx, gin = nn.tensor(real, np.full(2, 7.0)), nn.tensor("Long", np.full(3, 9)), nn.tensor(real, np.full(4, 3.0))
    c = nn.call
    raises(r"SpatialAdaptiveMaxPooling_updateOutput: argument 6 \(oheight\)", c, real, "SpatialAdaptiveMaxPooling_updateOutput",
           x, out, idx, 2, 0)
    raises(r"argument 4 \(owidth\)", c, real, "SpatialAdaptiveAveragePooling_updateOutput", x, out, -1, 2)
    raises(r"argument 2 \(input\)", c, real, "SpatialAdaptiveAveragePooling_updateOutput", np.zeros((2, 0, 3)), out, 2, 2)
    raises(r"argument 3 \(gradOutput\)", c, real, "SpatialAdaptiveAveragePooling_updateGradInput", x, np.zeros((3, 2, 2)), gin)
    raises(r"argument 5 \(indices\)", c, real, "SpatialAdaptiveMaxPooling_updateGradInput", x, np.zeros((2, 2, 2)), gin,
           np.full((2, 2, 2), -1, np.int64))
    s = np.full((1, 2, 2), 0.5)
    raises(r"argument 6 \(poolSizeW\).*too large", c, real, "SpatialFractionalMaxPooling_updateOutput", x, out, 3, 2, 4, 2, idx, s)
    raises(r"argument 9 \(randomSamples\)", c, real, "SpatialFractionalMaxPooling_updateOutput", x, out, 3, 2, 2, 2, idx,
           np.full((2, 2, 2), 0.5))
    raises(r"argument 9 \(randomSamples\).*\[0, 1\)", c, real, "SpatialFractionalMaxPooling_updateOutput", x, out, 3, 2, 2, 2,
           idx, np.full((1, 2, 2), 1.0))
    raises(r"argument 4 \(outputT\)", c, real, "VolumetricFractionalMaxPooling_updateOutput", np.zeros((1, 4, 4, 4)), out,
           0, 2, 2, 2, 2, 2, idx, np.full((1, 1, 3), 0.5))
    raises(r"argument 9 \(indices\)", c, real, "SpatialFractionalMaxPooling_updateGradInput", x, np.zeros((2, 2, 2)), gin, 2, 2, 2,
           2, np.full((2, 2, 2), 25, np.int64))
    ind = np.zeros((2, 5, 5), np.int64)
    ind[0, 0, 0] = 16
    raises(r"SpatialMaxUnpooling_updateOutput: argument 4 \(indices\).*out of range", c, real, "SpatialMaxUnpooling_updateOutput",
           x, out, ind, 4, 4)
    raises(r"argument 4 \(indices\)", c, real, "SpatialMaxUnpooling_updateOutput", x, out, np.zeros((2, 5), np.int64), 4, 4)
    raises(r"argument 6 \(oheight\)", c, real, "SpatialMaxUnpooling_updateOutput", x, out, ind, 4, 0)
    raises(r"argument 3 \(gradOutput\)", c, real, "SpatialMaxUnpooling_updateGradInput", x, np.zeros((2, 5, 5)), gin,
           np.zeros((2, 5, 5), np.int64), 5, 6)
    v = np.zeros((1, 2, 2, 2))
    vi = np.zeros((1, 2, 2, 2), np.int64)
    raises(r"VolumetricMaxUnpooling_updateOutput: argument 9 \(dW\)", c, real, "VolumetricMaxUnpooling_updateOutput", v, out, vi,
           4, 4, 4, 2, 0, 2, 0, 0, 0)
    raises(r"argument 13 \(pH\)", c, real, "VolumetricMaxUnpooling_updateOutput", v, out, vi, 4, 4, 4, 2, 2, 2, 0, 0, -1)
    raises(r"TemporalMaxPooling_updateOutput: argument 2 \(input\).*smaller than kW", c, real, "TemporalMaxPooling_updateOutput",
           np.zeros((3, 4)), out, idx, 4, 1)
    raises(r"argument 6 \(dW\)", c, real, "TemporalMaxPooling_updateOutput", np.zeros((3, 4)), out, idx, 2, 0)
    raises(r"argument 5 \(indices\).*out of range", c, real, "TemporalMaxPooling_updateGradInput", np.zeros((3, 4)),
           np.zeros((2, 4)), gin, np.full((2, 4), 3, np.int64), 2, 1)
    raises(r"FeatureLPPooling_updateOutput: argument 5 \(width\)", c, real, "FeatureLPPooling_updateOutput", np.ones(8), out,
           2.0, 1, 1, False)
    raises(r"argument 6 \(stride\)", c, real, "FeatureLPPooling_updateOutput", np.ones(8), out, 2.0, 2, 5, False)
    raises(r"argument 2 \(input\)", c, real, "FeatureLPPooling_updateOutput", np.ones(8), out, 2.0, 2, 1, True)
    raises(r"argument 2 \(input\).*width", c, real, "FeatureLPPooling_updateOutput", np.ones(3), out, 2.0, 4, 1, False)
    raises(r"argument 4 \(output\)", c, real, "FeatureLPPooling_updateGradInput", np.ones(7), np.ones(8), np.ones(6), gin,
           2.0, 2, 1, False)
    assert (out.numpy() == 7.0).all() and (idx.numpy() == 9).all() and (gin.numpy() == 3.0).all()
