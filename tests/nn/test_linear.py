"""THNN Linear against torch.nn.functional.linear (float64, gradients through autograd), finite
differences of th's own forward, non-contiguous operands, and errors that leave outputs alone."""

import numpy as np
import pytest
import torch
from nnlib import NP, close, fd_grad
from thlib import THError

REALS = ["Float", "Double"]


def run_linear(nn, real, x, w, b, gout, scale=1.0, gw0=None, gb0=None):
    out, gin = nn.empty(real), nn.empty(real)
    nn.call(real, "Linear_updateOutput", x, out, w, b, nn.empty(real))
    nn.call(real, "Linear_updateGradInput", x, gout, gin, w)
    gw = nn.tensor(real, np.zeros(w.shape) if gw0 is None else gw0)
    gb = nn.tensor(real, np.zeros(w.shape[0]) if gb0 is None else gb0) if b is not None else None
    nn.call(real, "Linear_accGradParameters", x, gout, None, w, b, gw, gb, nn.empty(real), scale)
    return out.numpy(), gin.numpy(), gw.numpy(), (gb.numpy() if gb is not None else None)


def torch_linear(x, w, b, gout, scale):
    tx, tw = torch.tensor(x, dtype=torch.float64, requires_grad=True), torch.tensor(w, dtype=torch.float64, requires_grad=True)
    tb = torch.tensor(b, dtype=torch.float64, requires_grad=True) if b is not None else None
    y = torch.nn.functional.linear(tx, tw, tb)
    y.backward(torch.tensor(gout, dtype=torch.float64))
    return (y.detach().numpy(), tx.grad.numpy(), scale * tw.grad.numpy(), scale * tb.grad.numpy() if tb is not None else None)


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("shape", [(5,), (1, 3), (7, 13), (64, 33)])
@pytest.mark.parametrize("n_out", [1, 17])
@pytest.mark.parametrize("bias", [True, False])
def test_against_torch(nn, rng, real, shape, n_out, bias):
    n_in = shape[-1]
    cast = lambda a: a.astype(NP[real]).astype(np.float64)  # noqa: E731
    x = cast(rng.standard_normal(shape))
    w = cast(rng.standard_normal((n_out, n_in)))
    b = cast(rng.standard_normal(n_out)) if bias else None
    gout = cast(rng.standard_normal(shape[:-1] + (n_out,)))
    got = run_linear(nn, real, x.astype(NP[real]), w.astype(NP[real]), None if b is None else b.astype(NP[real]),
                     gout.astype(NP[real]), scale=0.5)
    want = torch_linear(x, w, b, gout, 0.5)
    for g, t in zip(got, want):
        if t is not None:
            close(g, t, real, scale=float(np.sqrt(n_in + len(x.reshape(-1, n_in)))))


def test_accumulates_and_non_contiguous(nn, rng):
    real = "Double"
    x = rng.standard_normal((9, 6)).T  # 6 x 9, transposed view
    w = rng.standard_normal((9, 4)).T  # 4 x 9
    b = rng.standard_normal(8)[::2]
    gout = rng.standard_normal((4, 6)).T
    gw0, gb0 = rng.standard_normal((4, 9)), rng.standard_normal(4)
    out, gin, gw, gb = run_linear(nn, real, x, w, b, gout, scale=2.0, gw0=gw0, gb0=gb0)
    y, gx, tgw, tgb = torch_linear(x, w, b, gout, 2.0)
    close(out, y, real)
    close(gin, gx, real)
    close(gw, gw0 + tgw, real)
    close(gb, gb0 + tgb, real)


def test_finite_differences(nn, rng):
    real = "Double"
    x, w, b = rng.standard_normal((3, 4)), rng.standard_normal((5, 4)), rng.standard_normal(5)
    gout = rng.standard_normal((3, 5))

    def loss(x_, w_, b_):
        out = nn.empty(real)
        nn.call(real, "Linear_updateOutput", x_, out, w_, b_, None)
        return float(np.sum(out.numpy() * gout))

    _, gin, gw, gb = run_linear(nn, real, x, w, b, gout)
    close(gin, fd_grad(lambda v: loss(v, w, b), x), real, tol=1e-7)
    close(gw, fd_grad(lambda v: loss(x, v, b), w), real, tol=1e-7)
    close(gb, fd_grad(lambda v: loss(x, w, v), b), real, tol=1e-7)


def test_errors_leave_outputs(nn, rng):
    real = "Float"
    out = nn.tensor(real, np.full((2, 2), 7.0))
    w = rng.standard_normal((3, 4)).astype(np.float32)
    with pytest.raises(THError, match=r"THNN_FloatLinear_updateOutput: argument 2 \(input\)"):
        nn.call(real, "Linear_updateOutput", np.zeros((2, 5), np.float32), out, w, None, None)
    with pytest.raises(THError, match=r"argument 5 \(bias\)"):
        nn.call(real, "Linear_updateOutput", np.zeros((2, 4), np.float32), out, w, np.zeros(2, np.float32), None)
    with pytest.raises(THError, match=r"argument 2 \(input\)"):
        nn.call(real, "Linear_updateOutput", np.zeros((2, 2, 4), np.float32), out, w, None, None)
    with pytest.raises(THError, match=r"argument 4 \(THFloatTensor\) is NULL"):
        nn.call(real, "Linear_updateOutput", np.zeros((2, 4), np.float32), out, None, None, None)
    gw = nn.tensor(real, np.full((3, 3), 1.0))
    with pytest.raises(THError, match=r"argument 7 \(gradWeight\)"):
        nn.call(real, "Linear_accGradParameters", np.zeros((2, 4), np.float32), np.zeros((2, 3), np.float32), None,
                w, None, gw, None, None, 1.0)
    assert (out.numpy() == 7.0).all() and out.numpy().shape == (2, 2)
    assert (gw.numpy() == 1.0).all()
