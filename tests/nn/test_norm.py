"""THNN BatchNormalization against torch.nn.functional.batch_norm (float64, gradients through
autograd) in training and evaluation mode, finite differences of th's own forward, running
statistics, optional weight/bias/gradients, non-contiguous operands and errors that leave the
outputs alone."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from nnlib import NP, close, fd_grad
from thlib import THError

REALS = ["Float", "Double"]
T64 = torch.float64


def bn_forward(nn, real, x, w, b, rm, rv, train, momentum=0.1, eps=1e-5):
    """(output, running_mean, running_var, save_mean, save_std) as numpy arrays."""
    out, sm, ss = nn.empty(real), nn.empty(real), nn.empty(real)
    trm = nn.tensor(real, rm) if rm is not None else None
    trv = nn.tensor(real, rv) if rv is not None else None
    nn.call(real, "BatchNormalization_updateOutput", x, out, w, b, trm, trv, sm, ss, train, momentum, eps)
    return (out.numpy(), trm.numpy() if trm is not None else None, trv.numpy() if trv is not None else None,
            sm.numpy() if train else None, ss.numpy() if train else None)


def bn_backward(nn, real, x, gout, w, rm, rv, sm, ss, train, scale=1.0, eps=1e-5, gw0=None, gb0=None, params=True):
    c = x.shape[1]
    gin = nn.empty(real)
    gw = nn.tensor(real, np.zeros(c) if gw0 is None else gw0) if params else None
    gb = nn.tensor(real, np.zeros(c) if gb0 is None else gb0) if params else None
    nn.call(real, "BatchNormalization_backward", x, gout, gin, gw, gb, w, rm, rv, sm, ss, train, scale, eps)
    return gin.numpy(), (gw.numpy() if params else None), (gb.numpy() if params else None)


def torch_bn(x, w, b, rm, rv, gout, train, momentum=0.1, eps=1e-5):
    tx = torch.tensor(x, dtype=T64, requires_grad=True)
    tw = torch.tensor(w, dtype=T64, requires_grad=True) if w is not None else None
    tb = torch.tensor(b, dtype=T64, requires_grad=True) if b is not None else None
    trm, trv = torch.tensor(rm, dtype=T64), torch.tensor(rv, dtype=T64)
    y = F.batch_norm(tx, trm, trv, tw, tb, training=train, momentum=momentum, eps=eps)
    y.backward(torch.tensor(gout, dtype=T64))
    grad = lambda t: t.grad.numpy() if t is not None else None  # noqa: E731
    return y.detach().numpy(), trm.numpy(), trv.numpy(), tx.grad.numpy(), grad(tw), grad(tb)


def cast(real, a):
    return None if a is None else np.asarray(a).astype(NP[real])


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("shape", [(5, 3), (2, 1), (4, 3, 5), (2, 3, 4, 5), (3, 2, 9, 9), (2, 2, 2, 3, 3), (7, 13, 1)])
@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("affine", [True, False])
def test_against_torch(nn, rng, real, shape, train, affine):
    c = shape[1]
    x = cast(real, rng.standard_normal(shape) * 2 + 0.5)
    w = cast(real, rng.standard_normal(c)) if affine else None
    b = cast(real, rng.standard_normal(c)) if affine else None
    rm, rv = cast(real, rng.standard_normal(c)), cast(real, rng.uniform(0.5, 2, c))
    gout = cast(real, rng.standard_normal(shape))
    out, nrm, nrv, sm, ss = bn_forward(nn, real, x, w, b, rm, rv, train, momentum=0.3, eps=1e-3)
    y, trm, trv, gx, gw, gb = torch_bn(x, w, b, rm, rv, gout, train, momentum=0.3, eps=1e-3)
    close(out, y, real)
    close(nrm, trm, real)
    close(nrv, trv, real)
    if train:
        axes = tuple(i for i in range(len(shape)) if i != 1)
        x64 = x.astype(np.float64)
        close(sm, x64.mean(axis=axes), real)
        close(ss, 1 / np.sqrt(x64.var(axis=axes) + 1e-3), real)
    else:
        sm, ss = None, None
    gw0, gb0 = cast(real, rng.standard_normal(c)), cast(real, rng.standard_normal(c))
    gin, ngw, ngb = bn_backward(nn, real, x, gout, w, rm, rv, sm, ss, train, scale=0.5, eps=1e-3, gw0=gw0, gb0=gb0)
    close(gin, gx, real)
    if affine:
        close(ngw, gw0 + 0.5 * gw, real)
        close(ngb, gb0 + 0.5 * gb, real)
    else:
        # without a weight torch gives no parameter gradients: compare with the formulas
        g64 = gout.astype(np.float64)
        axes = tuple(i for i in range(len(shape)) if i != 1)
        mean = sm if train else rm
        invstd = ss if train else 1 / np.sqrt(rv.astype(np.float64) + 1e-3)
        bshape = [1] * len(shape)
        bshape[1] = c
        xhat = (x.astype(np.float64) - np.reshape(mean, bshape)) * np.reshape(invstd, bshape)
        close(ngw, gw0 + 0.5 * (g64 * xhat).sum(axis=axes), real, scale=float(np.abs(g64).sum()))
        close(ngb, gb0 + 0.5 * g64.sum(axis=axes), real, scale=float(np.abs(g64).sum()))


@pytest.mark.parametrize("train", [True, False])
def test_finite_differences(nn, rng, train):
    real = "Double"
    shape = (3, 2, 2, 3)
    x = rng.standard_normal(shape)
    w, b = rng.standard_normal(2), rng.standard_normal(2)
    rm, rv = rng.standard_normal(2), rng.uniform(0.5, 2, 2)
    gout = rng.standard_normal(shape)

    def loss(x_, w_, b_):
        out = bn_forward(nn, real, x_, w_, b_, rm, rv, train)[0]
        return float(np.sum(out * gout))

    _, _, _, sm, ss = bn_forward(nn, real, x, w, b, rm, rv, train)
    gin, gw, gb = bn_backward(nn, real, x, gout, w, rm, rv, sm, ss, train)
    close(gin, fd_grad(lambda v: loss(v, w, b), x), real, tol=1e-7)
    close(gw, fd_grad(lambda v: loss(x, v, b), w), real, tol=1e-7)
    close(gb, fd_grad(lambda v: loss(x, w, v), b), real, tol=1e-7)


def test_large_planes_and_many_features(nn, rng):
    """Planes of 64+ elements (parallel over planes) and many features (blocks of features)."""
    real = "Double"
    for shape in [(2, 3, 10, 10), (6, 300)]:
        c = shape[1]
        x = rng.standard_normal(shape) + 100.0  # a large mean: the shifted sums keep the variance exact
        w, b = rng.standard_normal(c), rng.standard_normal(c)
        rm, rv = np.zeros(c), np.ones(c)
        gout = rng.standard_normal(shape)
        out, nrm, nrv, sm, ss = bn_forward(nn, real, x, w, b, rm, rv, True)
        y, trm, trv, gx, gw, gb = torch_bn(x, w, b, rm, rv, gout, True)
        close(out, y, real, tol=1e-10)
        close(nrm, trm, real, tol=1e-10)
        close(nrv, trv, real, tol=1e-10)
        gin, ngw, ngb = bn_backward(nn, real, x, gout, w, rm, rv, sm, ss, True)
        close(gin, gx, real, tol=1e-10)
        close(ngw, gw, real, tol=1e-10)
        close(ngb, gb, real, tol=1e-10)


def test_non_contiguous_and_optional(nn, rng):
    real = "Double"
    x = rng.standard_normal((4, 5, 3)).transpose(0, 2, 1)  # 4 x 3 x 5, strided
    gout = rng.standard_normal((5, 3, 4)).transpose(2, 1, 0)
    w = rng.standard_normal(6)[::2]
    b = rng.standard_normal(6)[1::2]
    rm, rv = np.zeros(3), np.ones(3)
    y, trm, trv, gx, tgw, tgb = torch_bn(x, w, b, rm, rv, gout, True)
    # no running statistics in training: they are simply not updated
    out, _, _, sm, ss = bn_forward(nn, real, x, w, b, None, None, True)
    close(out, y, real)
    # an output of the right shape keeps its strides
    o = nn.tensor(real, np.zeros((5, 3, 4)).transpose(2, 1, 0))
    nn.call(real, "BatchNormalization_updateOutput", x, o, w, b, None, None, None, None, True, 0.1, 1e-5)
    close(o.numpy(), y, real)
    gin, gw, gb = bn_backward(nn, real, x, gout, w, None, None, sm, ss, True)
    close(gin, gx, real)
    close(gw, tgw, real)
    close(gb, tgb, real)
    # each gradient may be NULL
    gw_only = nn.tensor(real, np.zeros(3))
    nn.call(real, "BatchNormalization_backward", x, gout, None, gw_only, None, w, None, None, sm, ss, True, 1.0, 1e-5)
    close(gw_only.numpy(), tgw, real)
    gin2 = nn.empty(real)
    nn.call(real, "BatchNormalization_backward", x, gout, gin2, None, None, w, None, None, sm, ss, True, 1.0, 1e-5)
    close(gin2.numpy(), gx, real)


def test_zero_variance(nn):
    real = "Double"
    # a constant feature with eps 0: invstd 0 (torch7), so the output is the bias
    x = np.ones((4, 2))
    out, nrm, nrv, sm, ss = bn_forward(nn, real, x, None, np.array([3.0, -1.0]), np.zeros(2), np.ones(2), True,
                                       momentum=0.5, eps=0.0)
    assert (ss == 0).all() and (sm == 1).all()
    assert (out == np.array([3.0, -1.0])).all()
    close(nrm, [0.5, 0.5], real)
    close(nrv, [0.5, 0.5], real)


def test_errors_leave_outputs(nn, rng):
    real = "Float"
    f32 = lambda a: np.asarray(a, np.float32)  # noqa: E731
    x = f32(rng.standard_normal((4, 3)))
    out = nn.tensor(real, np.full((2, 2), 7.0))
    rm, rv = nn.tensor(real, np.full(3, 5.0)), nn.tensor(real, np.full(3, 6.0))
    sm, ss = nn.tensor(real, np.full(3, 8.0)), nn.tensor(real, np.full(3, 9.0))
    fn = "BatchNormalization_updateOutput"
    with pytest.raises(THError, match=r"THNN_FloatBatchNormalization_updateOutput: argument 2 \(input\)"):
        nn.call(real, fn, f32(np.zeros(3)), out, None, None, rm, rv, sm, ss, True, 0.1, 1e-5)
    with pytest.raises(THError, match=r"argument 4 \(weight\)"):
        nn.call(real, fn, x, out, f32(np.ones(4)), None, rm, rv, sm, ss, True, 0.1, 1e-5)
    with pytest.raises(THError, match=r"argument 5 \(bias\)"):
        nn.call(real, fn, x, out, None, f32(np.ones(2)), rm, rv, sm, ss, True, 0.1, 1e-5)
    with pytest.raises(THError, match=r"argument 7 \(running_var\)"):
        nn.call(real, fn, x, out, None, None, rm, nn.tensor(real, np.ones(2)), sm, ss, True, 0.1, 1e-5)
    with pytest.raises(THError, match=r"argument 6 \(running_mean\) is NULL"):
        nn.call(real, fn, x, out, None, None, None, rv, sm, ss, False, 0.1, 1e-5)
    with pytest.raises(THError, match=r"argument 2 \(input\): expected more than 1 value per feature"):
        nn.call(real, fn, f32(np.ones((1, 3))), out, None, None, rm, rv, sm, ss, True, 0.1, 1e-5)
    assert out.numpy().shape == (2, 2) and (out.numpy() == 7).all()
    assert (rm.numpy() == 5).all() and (rv.numpy() == 6).all()
    assert (sm.numpy() == 8).all() and (ss.numpy() == 9).all()

    fn = "BatchNormalization_backward"
    gin, gw = nn.tensor(real, np.full((2, 2), 7.0)), nn.tensor(real, np.full(3, 1.0))
    with pytest.raises(THError, match=r"THNN_FloatBatchNormalization_backward: argument 3 \(gradOutput\)"):
        nn.call(real, fn, x, f32(np.ones((4, 2))), gin, gw, None, None, rm, rv, sm, ss, True, 1.0, 1e-5)
    with pytest.raises(THError, match=r"argument 5 \(gradWeight\)"):
        nn.call(real, fn, x, x, gin, nn.tensor(real, np.ones(2)), None, None, rm, rv, sm, ss, True, 1.0, 1e-5)
    with pytest.raises(THError, match=r"argument 10 \(save_mean\) is NULL"):
        nn.call(real, fn, x, x, gin, gw, None, None, rm, rv, None, ss, True, 1.0, 1e-5)
    with pytest.raises(THError, match=r"argument 11 \(save_std\)"):
        nn.call(real, fn, x, x, gin, gw, None, None, rm, rv, sm, f32(np.ones(4)), True, 1.0, 1e-5)
    with pytest.raises(THError, match=r"argument 9 \(running_var\) is NULL"):
        nn.call(real, fn, x, x, gin, gw, None, None, rm, None, sm, ss, False, 1.0, 1e-5)
    assert gin.numpy().shape == (2, 2) and (gin.numpy() == 7).all()
    assert (gw.numpy() == 1).all()
