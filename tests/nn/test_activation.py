"""THNN activations against torch.nn.functional (float64, gradients through autograd), finite
differences of th's own forward, non-contiguous operands, the inplace flags, RReLU's noise, and
errors that leave outputs alone."""

import ctypes as C

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from nnlib import NP, close, fd_grad
from thlib import THError

REALS = ["Float", "Double"]


def t64(a, grad=False):
    return torch.tensor(np.asarray(a, dtype=np.float64), dtype=torch.float64, requires_grad=grad)


def data_ptr(t):
    return t.lib.call(f"TH{t.real}Tensor_data", C.c_void_p, C.c_void_p(t.ptr))


def torch_ref(f, x, gout):
    """f(x) and d(sum(f(x) * gout))/dx in float64."""
    tx = t64(x, grad=True)
    y = f(tx)
    y.backward(t64(gout))
    return y.detach().numpy(), tx.grad.numpy()


class Mod:
    """An elementwise module: forward extra args `fa(o, ip)` -> args after input, backward
    `ba(x, g, gi, o, ip)` -> all args, the torch reference, the input domain."""

    def __init__(self, name, ref, fa, ba, inplace=False, positive=False):
        self.name, self.ref, self.fa, self.ba = name, ref, fa, ba
        self.inplace, self.positive = inplace, positive

    def __repr__(self):
        return self.name


MODS = [
    Mod("Abs", torch.abs, lambda o, ip: (o,), lambda x, g, gi, o, ip: (x, g, gi)),
    Mod("ELU", lambda t: F.elu(t, alpha=0.7), lambda o, ip: (o, 0.7, ip),
        lambda x, g, gi, o, ip: (x, g, gi, o, 0.7, ip), inplace=True),
    Mod("HardShrink", lambda t: F.hardshrink(t, 0.4), lambda o, ip: (o, 0.4), lambda x, g, gi, o, ip: (x, g, gi, 0.4)),
    Mod("HardTanh", lambda t: F.hardtanh(t, -0.6, 0.8), lambda o, ip: (o, -0.6, 0.8, ip),
        lambda x, g, gi, o, ip: (x, g, gi, -0.6, 0.8, ip), inplace=True),
    Mod("LeakyReLU", lambda t: F.leaky_relu(t, 0.1), lambda o, ip: (o, 0.1, ip),
        lambda x, g, gi, o, ip: (x, g, gi, 0.1, ip), inplace=True),
    Mod("LogSigmoid", F.logsigmoid, lambda o, ip: (o, None), lambda x, g, gi, o, ip: (x, g, gi, None)),
    Mod("Sigmoid", torch.sigmoid, lambda o, ip: (o,), lambda x, g, gi, o, ip: (x, g, gi, o)),
    Mod("SoftPlus", lambda t: F.softplus(t, beta=1.5, threshold=2.0), lambda o, ip: (o, 1.5, 2.0),
        lambda x, g, gi, o, ip: (x, g, gi, o, 1.5, 2.0)),
    Mod("SoftShrink", lambda t: F.softshrink(t, 0.3), lambda o, ip: (o, 0.3), lambda x, g, gi, o, ip: (x, g, gi, 0.3)),
    Mod("Sqrt", torch.sqrt, lambda o, ip: (o, 1e-3), lambda x, g, gi, o, ip: (x, g, gi, o), positive=True),
    Mod("Square", torch.square, lambda o, ip: (o,), lambda x, g, gi, o, ip: (x, g, gi)),
    Mod("Tanh", torch.tanh, lambda o, ip: (o,), lambda x, g, gi, o, ip: (x, g, gi, o)),
    Mod("Threshold", lambda t: F.threshold(t, 0.2, -0.5), lambda o, ip: (o, 0.2, -0.5, ip),
        lambda x, g, gi, o, ip: (x, g, gi, 0.2, -0.5, ip), inplace=True),
    Mod("RReLU", lambda t: F.rrelu(t, 0.1, 0.3, training=False), lambda o, ip: (o, None, 0.1, 0.3, False, ip, None),
        lambda x, g, gi, o, ip: (x, g, gi, None, 0.1, 0.3, False, ip), inplace=True),
    Mod("PReLU", lambda t: F.prelu(t, t64([0.25])), lambda o, ip: (o, np.array([0.25]), 0),
        lambda x, g, gi, o, ip: (x, g, gi, np.array([0.25]), 0)),
]
INPLACE = [m for m in MODS if m.inplace]


def sample(rng, real, shape, positive=False):
    x = rng.standard_normal(shape) * 2.0
    if positive:
        x = np.abs(x) + 0.1
    return x.astype(NP[real]).astype(np.float64)


def fix_real(args, real):
    return tuple(a.astype(NP[real]) if isinstance(a, np.ndarray) else a for a in args)


def run(nn, real, m, x, gout, inplace=False):
    """th's forward and backward of `m` (x, gout: numpy arrays, any strides)."""
    xt, out, gt, gin = nn.tensor(real, x), nn.empty(real), nn.tensor(real, gout), nn.empty(real)
    nn.call(real, f"{m.name}_updateOutput", xt, *fix_real(m.fa(out, inplace), real))
    y = out.numpy()
    # the backward gets the input as the forward left it (overwritten when in place, as in nn)
    nn.call(real, f"{m.name}_updateGradInput", *fix_real(m.ba(xt, gt, gin, out, inplace), real))
    return y, gin.numpy(), xt, out, gt, gin


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("m", MODS, ids=repr)
@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 3, 4)])
def test_elementwise_against_torch(nn, rng, real, m, shape):
    x = sample(rng, real, shape, m.positive)
    gout = sample(rng, real, shape)
    y, gin, *_ = run(nn, real, m, x.astype(NP[real]), gout.astype(NP[real]))
    ty, tg = torch_ref(m.ref, x, gout)
    close(y, ty, real)
    close(gin, tg, real)


@pytest.mark.parametrize("m", MODS, ids=repr)
def test_elementwise_non_contiguous(nn, rng, m):
    real = "Double"
    x = sample(rng, real, (6, 5), m.positive).T  # 5 x 6, transposed view
    gout = sample(rng, real, (5, 12))[:, ::2]  # 5 x 6, strided
    y, gin, *_ = run(nn, real, m, x, gout)
    ty, tg = torch_ref(m.ref, x, gout)
    close(y, ty, real)
    close(gin, tg, real)


@pytest.mark.parametrize("m", MODS, ids=repr)
def test_elementwise_finite_differences(nn, rng, m):
    real = "Double"
    x = sample(rng, real, (3, 4), m.positive)
    gout = sample(rng, real, (3, 4))

    def loss(v):
        out = nn.empty(real)
        nn.call(real, f"{m.name}_updateOutput", nn.tensor(real, v), *m.fa(out, False))
        return float(np.sum(out.numpy() * gout))

    _, gin, *_ = run(nn, real, m, x, gout)
    close(gin, fd_grad(loss, x), real, tol=1e-7)


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("m", INPLACE, ids=repr)
def test_inplace(nn, rng, real, m):
    x = sample(rng, real, (4, 5))
    gout = sample(rng, real, (4, 5))
    y, gin, xt, out, gt, gi = run(nn, real, m, x.astype(NP[real]), gout.astype(NP[real]), inplace=True)
    ty, tg = torch_ref(m.ref, x, gout)
    close(y, ty, real)
    close(xt.numpy(), ty, real)  # the input was overwritten ...
    assert data_ptr(out) == data_ptr(xt) and out.numpy().shape == (4, 5)  # ... and output is a view of it
    close(gin, tg, real)
    close(gt.numpy(), tg, real)  # gradOutput was overwritten, gradInput is a view of it
    assert data_ptr(gi) == data_ptr(gt)


def test_inplace_non_contiguous(nn, rng):
    real = "Double"
    m = next(m for m in MODS if m.name == "Threshold")
    x = sample(rng, real, (5, 4))
    gout = sample(rng, real, (5, 4))
    xt = nn.tensor(real, x.T)  # a transposed view, overwritten in place
    gt = nn.tensor(real, gout.T)
    out, gin = nn.empty(real), nn.empty(real)
    nn.call(real, "Threshold_updateOutput", xt, out, 0.2, -0.5, True)
    nn.call(real, "Threshold_updateGradInput", xt, gt, gin, 0.2, -0.5, True)
    ty, tg = torch_ref(m.ref, x.T, gout.T)
    close(out.numpy(), ty, real)
    close(xt.numpy(), ty, real)
    close(gin.numpy(), tg, real)
    assert xt.stride(0) == 1 and out.stride(0) == 1  # the view keeps its strides


def test_output_keeps_strides_and_shapes_pair_by_count(nn, rng):
    real = "Double"
    x = sample(rng, real, (3, 4))
    out = nn.tensor(real, np.zeros((4, 3)).T)  # already 3 x 4, transposed: kept as is
    nn.call(real, "Tanh_updateOutput", x, out)
    assert out.stride(0) == 1 and out.stride(1) == 3
    close(out.numpy(), np.tanh(x), real)
    # gradOutput with another shape but as many elements pairs in row-major order (torch7's rule)
    g = sample(rng, real, (12,))
    gin = nn.empty(real)
    nn.call(real, "Threshold_updateGradInput", x, g, gin, 0.0, 0.0, False)
    close(gin.numpy(), np.where(x > 0, g.reshape(3, 4), 0.0), real)


@pytest.mark.parametrize("real", REALS)
def test_large_threaded(nn, rng, real):
    # large enough for the pointwise engine's threads and SIMD copies
    x = sample(rng, real, (300, 257))
    gout = sample(rng, real, (300, 257))
    m = next(m for m in MODS if m.name == "Threshold")
    y, gin, *_ = run(nn, real, m, x.astype(NP[real]), gout.astype(NP[real]))
    low = x <= NP[real](0.2)
    assert np.array_equal(y, np.where(low, -0.5, x))
    assert np.array_equal(gin, np.where(low, 0.0, gout))


def test_nan_and_edges(nn):
    real = "Double"
    x = np.array([np.nan, -np.inf, np.inf, 0.0, -0.0])
    out = nn.empty(real)
    nn.call(real, "Threshold_updateOutput", x, out, 0.0, 5.0, False)
    got = out.numpy()
    assert np.isnan(got[0]) and got[1] == 5.0 and got[2] == np.inf and got[3] == 5.0 and got[4] == 5.0
    nn.call(real, "HardTanh_updateOutput", x, out, -1.0, 1.0, False)
    got = out.numpy()
    assert np.isnan(got[0]) and list(got[1:]) == [-1.0, 1.0, 0.0, 0.0]
    nn.call(real, "LogSigmoid_updateOutput", np.array([-800.0, 800.0, 0.0]), out, nn.empty(real))
    close(out.numpy(), [-800.0, 0.0, -np.log(2.0)], real)
    nn.call(real, "SoftPlus_updateOutput", np.array([-800.0, 800.0]), out, 1.0, 20.0)
    close(out.numpy(), [0.0, 800.0], real)
    gin = nn.empty(real)
    nn.call(real, "Sqrt_updateGradInput", np.zeros(2), np.ones(2), gin, np.zeros(2))
    assert list(gin.numpy()) == [0.0, 0.0]  # 0 where the output is 0, as torch7


# ---------------------------------------------------------------- SoftMax / LogSoftMax

SOFT = {"SoftMax": F.softmax, "LogSoftMax": F.log_softmax}
TORCH7_DIM = {1: 0, 2: 1, 3: 0, 4: 1}


def run_soft(nn, real, name, x, gout):
    out, gin = nn.empty(real), nn.empty(real)
    nn.call(real, f"{name}_updateOutput", x, out)
    nn.call(real, f"{name}_updateGradInput", x, gout, gin, out)
    return out.numpy(), gin.numpy()


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("name", SOFT)
@pytest.mark.parametrize("shape", [(7,), (1,), (3, 5), (2, 37), (4, 2, 3), (5, 17, 19), (2, 3, 2, 5), (2, 3, 20, 15),
                                   (3, 1, 1, 1)])
def test_softmax_against_torch(nn, rng, real, name, shape):
    x = sample(rng, real, shape) * 3.0
    gout = sample(rng, real, shape)
    dim = TORCH7_DIM[len(shape)]
    y, gin = run_soft(nn, real, name, x.astype(NP[real]), gout.astype(NP[real]))
    ty, tg = torch_ref(lambda t: SOFT[name](t, dim=dim), x, gout)
    close(y, ty, real, scale=float(np.max(np.abs(ty))) * 4)
    close(gin, tg, real, scale=float(np.max(np.abs(tg))) * 4)


@pytest.mark.parametrize("name", SOFT)
def test_softmax_non_contiguous_and_stable(nn, rng, name):
    real = "Double"
    x = sample(rng, real, (9, 4)).T + 1000.0  # 4 x 9 transposed view, large values (no overflow)
    gout = sample(rng, real, (4, 18))[:, ::2]
    y, gin = run_soft(nn, real, name, x, gout)
    ty, tg = torch_ref(lambda t: SOFT[name](t, dim=1), x, gout)
    close(y, ty, real, scale=10.0)
    close(gin, tg, real, scale=10.0)
    x3 = sample(rng, real, (5, 3, 4)).transpose(1, 0, 2)  # 3 x 5 x 4, normalized over dim 0
    g3 = sample(rng, real, (3, 5, 4))
    y, gin = run_soft(nn, real, name, x3, g3)
    ty, tg = torch_ref(lambda t: SOFT[name](t, dim=0), x3, g3)
    close(y, ty, real, scale=10.0)
    close(gin, tg, real, scale=10.0)


@pytest.mark.parametrize("name", SOFT)
@pytest.mark.parametrize("shape", [(5,), (2, 3), (3, 2, 2), (2, 2, 1, 3)])
def test_softmax_finite_differences(nn, rng, name, shape):
    real = "Double"
    x = sample(rng, real, shape)
    gout = sample(rng, real, shape)

    def loss(v):
        out = nn.empty(real)
        nn.call(real, f"{name}_updateOutput", v, out)
        return float(np.sum(out.numpy() * gout))

    _, gin = run_soft(nn, real, name, x, gout)
    close(gin, fd_grad(loss, x), real, tol=1e-7)


def test_softmax_large_threaded(nn, rng):
    real = "Float"
    x = sample(rng, real, (64, 1000)) * 3.0
    gout = sample(rng, real, (64, 1000))
    for name in SOFT:
        y, gin = run_soft(nn, real, name, x.astype(np.float32), gout.astype(np.float32))
        ty, tg = torch_ref(lambda t: SOFT[name](t, dim=1), x, gout)
        close(y, ty, real, scale=float(np.max(np.abs(ty))) * 4)
        close(gin, tg, real, scale=float(np.max(np.abs(tg))) * 4)


def test_thread_count_independent(nn, lib, rng):
    """Bitwise the same results on 1 and 3 threads (row pieces, position blocks, plane sums)."""
    real = "Float"
    x2 = rng.standard_normal((200, 300)).astype(np.float32)
    x4 = rng.standard_normal((3, 40, 17, 19)).astype(np.float32)
    g2, g4 = rng.standard_normal(x2.shape).astype(np.float32), rng.standard_normal(x4.shape).astype(np.float32)
    w = rng.standard_normal(40).astype(np.float32)
    old = lib.dll.THGetNumThreads()
    res = []
    try:
        for t in (1, 3):
            lib.dll.THSetNumThreads(C.c_int(t))
            r = []
            for name in SOFT:
                r += run_soft(nn, real, name, x2, g2) + run_soft(nn, real, name, x4, g4)
            for planes, ww in [(40, w), (0, w[:1])]:
                r += run_prelu(nn, real, x4, ww, planes, g4, 1.0, np.zeros(len(ww), np.float32))
            res.append(r)
    finally:
        lib.dll.THSetNumThreads(C.c_int(old))
    for r1, r3 in zip(*res):
        assert np.array_equal(r1, r3)


def test_softmax_errors(nn):
    real = "Float"
    out = nn.tensor(real, np.full((2, 2), 7.0))
    with pytest.raises(THError, match=r"THNN_FloatSoftMax_updateOutput: argument 2 \(input\)"):
        nn.call(real, "SoftMax_updateOutput", np.zeros((1, 2, 1, 2, 2), np.float32), out)
    with pytest.raises(THError, match=r"THNN_FloatLogSoftMax_updateGradInput: argument 3 \(gradOutput\)"):
        nn.call(real, "LogSoftMax_updateGradInput", np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32), out,
                np.zeros((2, 3), np.float32))
    with pytest.raises(THError, match=r"argument 2 \(input\)"):
        nn.call(real, "SoftMax_updateGradInput", np.zeros((2, 4), np.float32), np.zeros((2, 3), np.float32), out,
                np.zeros((2, 3), np.float32))
    with pytest.raises(THError, match=r"argument 4 \(THFloatTensor\) is NULL"):
        nn.call(real, "SoftMax_updateGradInput", np.zeros((2, 3), np.float32), np.zeros((2, 3), np.float32), None,
                np.zeros((2, 3), np.float32))
    assert (out.numpy() == 7.0).all() and out.numpy().shape == (2, 2)


# ---------------------------------------------------------------- GatedLinear

@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("shape,dim", [((4,), 0), ((1, 2), 1), ((3, 6), 1), ((6, 3), 0), ((2, 4, 3), 1),
                                       ((2, 3, 6), 2), ((4, 3, 5), 0)])
def test_glu_against_torch(nn, rng, real, shape, dim):
    x = sample(rng, real, shape)
    half = list(shape)
    half[dim] //= 2
    gout = sample(rng, real, tuple(half))
    out, gin = nn.empty(real), nn.empty(real)
    nn.call(real, "GatedLinear_updateOutput", x.astype(NP[real]), out, dim)
    nn.call(real, "GatedLinear_updateGradInput", x.astype(NP[real]), gout.astype(NP[real]), gin, dim)
    ty, tg = torch_ref(lambda t: F.glu(t, dim=dim), x, gout)
    close(out.numpy(), ty, real)
    close(gin.numpy(), tg, real)


def test_glu_non_contiguous_and_finite_differences(nn, rng):
    real = "Double"
    x = sample(rng, real, (4, 6)).T  # 6 x 4 view
    gout = sample(rng, real, (3, 8))[:, ::2]  # 3 x 4
    out, gin = nn.empty(real), nn.empty(real)
    nn.call(real, "GatedLinear_updateOutput", x, out, 0)
    nn.call(real, "GatedLinear_updateGradInput", x, gout, gin, 0)
    ty, tg = torch_ref(lambda t: F.glu(t, dim=0), x, gout)
    close(out.numpy(), ty, real)
    close(gin.numpy(), tg, real)

    x = sample(rng, real, (2, 4))
    gout = sample(rng, real, (2, 2))

    def loss(v):
        o = nn.empty(real)
        nn.call(real, "GatedLinear_updateOutput", v, o, 1)
        return float(np.sum(o.numpy() * gout))

    nn.call(real, "GatedLinear_updateGradInput", x, gout, gin, 1)
    close(gin.numpy(), fd_grad(loss, x), real, tol=1e-7)


def test_glu_errors(nn):
    real = "Double"
    out = nn.tensor(real, np.full((2, 2), 7.0))
    with pytest.raises(THError, match=r"THNN_DoubleGatedLinear_updateOutput: argument 2 \(input\).*even"):
        nn.call(real, "GatedLinear_updateOutput", np.zeros((3, 5)), out, 1)
    with pytest.raises(THError, match=r"argument 4 \(dim\)"):
        nn.call(real, "GatedLinear_updateOutput", np.zeros((3, 4)), out, 2)
    with pytest.raises(THError, match=r"argument 4 \(dim\)"):
        nn.call(real, "GatedLinear_updateOutput", np.zeros((3, 4)), out, -1)
    with pytest.raises(THError, match=r"THNN_DoubleGatedLinear_updateGradInput: argument 3 \(gradOutput\)"):
        nn.call(real, "GatedLinear_updateGradInput", np.zeros((3, 4)), np.zeros((3, 4)), out, 1)
    with pytest.raises(THError, match=r"argument 5 \(dim\)"):
        nn.call(real, "GatedLinear_updateGradInput", np.zeros((3, 4)), np.zeros((3, 2)), out, 3)
    assert (out.numpy() == 7.0).all() and out.numpy().shape == (2, 2)


# ---------------------------------------------------------------- PReLU

def prelu_ref(x, w, gout, scale):
    """forward, gradInput and scale * gradWeight in float64 (channel dim 1, or 0 for 1-D)."""
    tx, tw = t64(x, grad=True), t64(w, grad=True)
    if tx.dim() == 1 and tw.numel() > 1:
        y = torch.where(tx > 0, tx, tw * tx)
    else:
        y = F.prelu(tx, tw)
    y.backward(t64(gout))
    return y.detach().numpy(), tx.grad.numpy(), scale * tw.grad.numpy()


def run_prelu(nn, real, x, w, planes, gout, scale, gw0):
    out, gin = nn.empty(real), nn.empty(real)
    nn.call(real, "PReLU_updateOutput", x, out, w, planes)
    nn.call(real, "PReLU_updateGradInput", x, gout, gin, w, planes)
    gw = nn.tensor(real, gw0)
    nn.call(real, "PReLU_accGradParameters", x, gout, None, w, gw, None, nn.empty(real), planes, scale)
    return out.numpy(), gin.numpy(), gw.numpy()


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("shape,planes", [((5,), 5), ((3, 4), 4), ((2, 3, 5), 3), ((2, 3, 2, 3), 3), ((7,), 0),
                                          ((2, 3, 4), 0), ((1, 1), 1)])
def test_prelu_against_torch(nn, rng, real, shape, planes):
    x = sample(rng, real, shape)
    w = sample(rng, real, (max(planes, 1),))
    gout = sample(rng, real, shape)
    gw0 = sample(rng, real, (max(planes, 1),))
    cast = lambda a: a.astype(NP[real])  # noqa: E731
    out, gin, gw = run_prelu(nn, real, cast(x), cast(w), planes, cast(gout), 0.5, cast(gw0))
    ty, tg, tgw = prelu_ref(x, w, gout, 0.5)
    close(out, ty, real)
    close(gin, tg, real)
    close(gw, gw0 + tgw, real, scale=float(np.sum(np.abs(x * gout))))


def test_prelu_non_contiguous_and_finite_differences(nn, rng):
    real = "Double"
    x = sample(rng, real, (4, 3)).T  # 3 x 4 view, 4 planes
    w = sample(rng, real, (8,))[::2]
    gout = sample(rng, real, (3, 8))[:, 1::2]
    gw0 = np.zeros(4)
    out, gin, gw = run_prelu(nn, real, x, w, 4, gout, 2.0, gw0)
    ty, tg, tgw = prelu_ref(x, w, gout, 2.0)
    close(out, ty, real)
    close(gin, tg, real)
    close(gw, tgw, real)

    x, w, gout = sample(rng, real, (2, 3, 2)), sample(rng, real, (3,)), sample(rng, real, (2, 3, 2))

    def loss(x_, w_):
        o = nn.empty(real)
        nn.call(real, "PReLU_updateOutput", x_, o, w_, 3)
        return float(np.sum(o.numpy() * gout))

    _, gin, gw = run_prelu(nn, real, x, w, 3, gout, 1.0, np.zeros(3))
    close(gin, fd_grad(lambda v: loss(v, w), x), real, tol=1e-7)
    close(gw, fd_grad(lambda v: loss(x, v), w), real, tol=1e-7)


def test_prelu_large(nn, rng):
    real = "Float"
    x = sample(rng, real, (16, 8, 33, 31))
    w = sample(rng, real, (8,))
    gout = sample(rng, real, x.shape)
    cast = lambda a: a.astype(np.float32)  # noqa: E731
    for planes, ww in [(8, w), (0, w[:1])]:
        out, gin, gw = run_prelu(nn, real, cast(x), cast(ww), planes, cast(gout), 1.0, np.zeros(len(ww), np.float32))
        ty, tg, tgw = prelu_ref(x, ww, gout, 1.0)
        close(out, ty, real)
        close(gin, tg, real)
        close(gw, tgw, real, scale=float(np.sum(np.abs(x * gout))))


def test_prelu_errors(nn):
    real = "Float"
    out = nn.tensor(real, np.full((2, 2), 7.0))
    gw = nn.tensor(real, np.full(3, 1.0))
    x = np.zeros((2, 3, 4), np.float32)
    with pytest.raises(THError, match=r"THNN_FloatPReLU_updateOutput: argument 2 \(input\)"):
        nn.call(real, "PReLU_updateOutput", x, out, np.ones(4, np.float32), 4)
    with pytest.raises(THError, match=r"argument 4 \(weight\)"):
        nn.call(real, "PReLU_updateOutput", x, out, np.ones(2, np.float32), 3)
    with pytest.raises(THError, match=r"argument 4 \(weight\)"):
        nn.call(real, "PReLU_updateOutput", x, out, np.ones(3, np.float32), 0)
    with pytest.raises(THError, match=r"argument 5 \(nOutputPlane\)"):
        nn.call(real, "PReLU_updateOutput", x, out, np.ones(3, np.float32), -1)
    with pytest.raises(THError, match=r"THNN_FloatPReLU_updateGradInput: argument 3 \(gradOutput\)"):
        nn.call(real, "PReLU_updateGradInput", x, np.zeros(5, np.float32), out, np.ones(3, np.float32), 3)
    with pytest.raises(THError, match=r"THNN_FloatPReLU_accGradParameters: argument 6 \(gradWeight\)"):
        nn.call(real, "PReLU_accGradParameters", x, x, None, np.ones(3, np.float32), nn.tensor(real, np.ones(2)), None,
                None, 3, 1.0)
    with pytest.raises(THError, match=r"argument 9 \(nOutputPlane\)"):
        nn.call(real, "PReLU_accGradParameters", x, x, None, np.ones(3, np.float32), gw, None, None, -2, 1.0)
    assert (out.numpy() == 7.0).all() and out.numpy().shape == (2, 2)
    assert (gw.numpy() == 1.0).all()


# ---------------------------------------------------------------- RReLU in training

@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("inplace", [False, True])
def test_rrelu_training(nn, rng, real, inplace):
    lower, upper = 0.1, 0.3
    x = sample(rng, real, (6, 7)).astype(NP[real])
    gout = sample(rng, real, (6, 7)).astype(NP[real])

    def forward(seed):
        xt, out, noise = nn.tensor(real, x), nn.empty(real), nn.empty(real)
        nn.call(real, "RReLU_updateOutput", xt, out, noise, lower, upper, True, inplace, nn.generator(seed))
        return xt, out, noise

    xt, out, noise = forward(5)
    y, r = out.numpy(), noise.numpy()
    neg = x <= 0
    assert r.shape == x.shape and (r[~neg] == 1).all()
    lo, hi = NP[real](lower), NP[real](upper)
    assert (r[neg] >= lo).all() and (r[neg] <= hi).all() and len(np.unique(r[neg])) > 1
    assert np.array_equal(y, x * r)  # the same product in the element type
    if inplace:
        assert np.array_equal(xt.numpy(), y) and data_ptr(xt) == data_ptr(out)
    assert np.array_equal(forward(5)[2].numpy(), r)  # the generator decides the noise
    assert not np.array_equal(forward(6)[2].numpy(), r)
    # the backward multiplies by the same noise
    gt, gin = nn.tensor(real, gout), nn.empty(real)
    nn.call(real, "RReLU_updateGradInput", xt, gt, gin, noise, lower, upper, True, inplace)
    assert np.array_equal(gin.numpy(), gout * r)
    if inplace:
        assert np.array_equal(gt.numpy(), gout * r) and data_ptr(gt) == data_ptr(gin)
    # and the backward is the derivative of the forward with that noise: d(x * r)/dx = r
    close(gin.numpy(), torch_ref(lambda t: t * t64(r), x, gout)[1], real)


def test_rrelu_training_non_contiguous_and_equal_bounds(nn, rng):
    real = "Double"
    x = sample(rng, real, (5, 4)).T
    out, noise = nn.empty(real), nn.empty(real)
    nn.call(real, "RReLU_updateOutput", x, out, noise, 0.2, 0.25, True, False, nn.generator(3))
    r = noise.numpy()
    assert np.array_equal(out.numpy(), x * r) and (r[x > 0] == 1).all()
    # upper == lower: torch7's backward uses the fixed slope (the noise is then that slope too)
    gout = sample(rng, real, (4, 5))
    nn.call(real, "RReLU_updateOutput", x, out, noise, 0.2, 0.2, True, False, nn.generator(3))
    gin = nn.empty(real)
    nn.call(real, "RReLU_updateGradInput", x, gout, gin, None, 0.2, 0.2, True, False)
    close(gin.numpy(), np.where(x <= 0, 0.2 * gout, gout), real)
    close(out.numpy(), np.where(x <= 0, 0.2 * x, x), real)


def test_rrelu_errors(nn):
    real = "Float"
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    out = nn.tensor(real, np.full((2, 2), 7.0))
    noise = nn.tensor(real, np.full(3, 7.0))
    with pytest.raises(THError, match=r"THNN_FloatRReLU_updateOutput: argument 9 \(generator\)"):
        nn.call(real, "RReLU_updateOutput", x, out, noise, 0.1, 0.3, True, False, None)
    with pytest.raises(THError, match=r"argument 4 \(noise\)"):
        nn.call(real, "RReLU_updateOutput", x, out, None, 0.1, 0.3, True, False, nn.generator())
    with pytest.raises(THError, match=r"argument 5 \(lower\)"):
        nn.call(real, "RReLU_updateOutput", x, out, noise, 0.4, 0.3, True, False, nn.generator())
    with pytest.raises(THError, match=r"THNN_FloatRReLU_updateGradInput: argument 5 \(noise\)"):
        nn.call(real, "RReLU_updateGradInput", x, x, out, np.ones(5, np.float32), 0.1, 0.3, True, False)
    with pytest.raises(THError, match=r"argument 5 \(noise\) is NULL"):
        nn.call(real, "RReLU_updateGradInput", x, x, out, None, 0.1, 0.3, True, False)
    assert (out.numpy() == 7.0).all() and out.numpy().shape == (2, 2)
    assert (noise.numpy() == 7.0).all() and noise.numpy().shape == (3,)
    # evaluation needs neither noise nor generator
    nn.call(real, "RReLU_updateOutput", x, out, None, 0.1, 0.3, False, False, None)
    close(out.numpy(), np.where(x <= 0, 0.2 * x, x), real)


# ---------------------------------------------------------------- errors of the elementwise layers

def test_elementwise_errors(nn):
    real = "Float"
    x = np.ones((2, 3), np.float32)
    gi = nn.tensor(real, np.full((2, 2), 7.0))
    g_bad = np.ones(5, np.float32)
    for fn, args in [
        ("Threshold_updateGradInput", (x, g_bad, gi, 0.0, 0.0, False)),
        ("Threshold_updateGradInput", (x, g_bad, gi, 0.0, 0.0, True)),
        ("Abs_updateGradInput", (x, g_bad, gi)),
        ("HardTanh_updateGradInput", (x, g_bad, gi, -1.0, 1.0, False)),
        ("LeakyReLU_updateGradInput", (x, g_bad, gi, 0.1, False)),
        ("HardShrink_updateGradInput", (x, g_bad, gi, 0.5)),
        ("SoftShrink_updateGradInput", (x, g_bad, gi, 0.5)),
        ("LogSigmoid_updateGradInput", (x, g_bad, gi, None)),
        ("Sigmoid_updateGradInput", (x, g_bad, gi, x)),
        ("Tanh_updateGradInput", (x, g_bad, gi, x)),
        ("ELU_updateGradInput", (x, g_bad, gi, x, 1.0, False)),
        ("SoftPlus_updateGradInput", (x, g_bad, gi, x, 1.0, 20.0)),
        ("Sqrt_updateGradInput", (x, g_bad, gi, x)),
        ("RReLU_updateGradInput", (x, g_bad, gi, None, 0.1, 0.3, False, False)),
        ("Square_updateGradInput", (x, np.ones((3, 2), np.float32), gi)),  # same count, other shape
        ("Tanh_updateGradInput", (x, np.ones((3, 2), np.float32), gi, x)),
    ]:
        with pytest.raises(THError, match=rf"THNN_Float{fn}: argument 3 \(gradOutput\)"):
            nn.call(real, fn, *args)
    with pytest.raises(THError, match=r"THNN_FloatELU_updateGradInput: argument 5 \(output\)"):
        nn.call(real, "ELU_updateGradInput", x, x, gi, g_bad, 1.0, False)
    with pytest.raises(THError, match=r"THNN_FloatSqrt_updateGradInput: argument 5 \(output\)"):
        nn.call(real, "Sqrt_updateGradInput", x, g_bad, gi, g_bad)
    with pytest.raises(THError, match=r"argument 2 \(THFloatTensor\) is NULL"):
        nn.call(real, "Threshold_updateOutput", None, gi, 0.0, 0.0, False)
    assert (gi.numpy() == 7.0).all() and gi.numpy().shape == (2, 2)
