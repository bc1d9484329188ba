"""THCUNN's BatchNormalization and SpatialCrossMapLRN on the device. BatchNormalization against
the host THNN on the same values and layouts (the host layer is checked against PyTorch in
test_norm.py): updateOutput in training (batch statistics, save_mean / save_std, running
statistics updated) and evaluation, backward in both with and without weight and with NULL
gradients, for Cuda, CudaDouble and CudaHalf, 2-D to 5-D inputs, non-contiguous operands and
refused calls that leave outputs alone. SpatialCrossMapLRN (THCUNN only: THNN has no host
version) against torch.nn.functional.local_response_norm in float64 and its autograd, odd sizes;
even sizes (cunn's window: (size - 1) / 2 channels before, size / 2 after) against a numpy loop.

Run on the CPU emulator: TH_CUDA_EMULATOR=1 TH_LIB=$PWD/target/emu/libth.so .venv/bin/python -m
pytest -q tests/nn/test_cunn_norm.py (skipped without a device)."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from cunnlib import NP, REALS, InOut, both, check, exact
from thlib import THError


def strided(a):
    """`a`'s values in a non-contiguous layout (dimensions 0 and 1 stored transposed)."""
    return np.ascontiguousarray(np.swapaxes(a, 0, 1)).swapaxes(0, 1) if a.ndim >= 2 else a


SHAPES = [(5, 3), (4, 3, 5), (2, 3, 4, 5), (2, 2, 2, 3, 3), (7, 1, 1)]


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("affine", [True, False], ids=["affine", "plain"])
def test_batchnorm(nn, cunn, rng, real, shape, affine):
    c = shape[1]
    x = exact(real, rng.standard_normal(shape) * 2 + 0.5)
    w = exact(real, rng.standard_normal(c)) if affine else None
    b = exact(real, rng.standard_normal(c)) if affine else None
    rm, rv = exact(real, rng.standard_normal(c)), exact(real, rng.uniform(0.5, 2, c))
    go = exact(real, rng.standard_normal(shape))
    for layout in (None, strided):
        # training: output, running stats, save_mean / save_std
        y, rm1, rv1, sm, ss = check(nn, cunn, real, "BatchNormalization_updateOutput",
                                    [x, "OUT", w, b, InOut(rm), InOut(rv), "OUT", "OUT", True, 0.1, 1e-5], layout)
        sm, ss = exact(real, sm), exact(real, ss)
        # evaluation
        check(nn, cunn, real, "BatchNormalization_updateOutput",
              [x, "OUT", w, b, InOut(rm), InOut(rv), None, None, False, 0.1, 1e-5], layout)
        gw0, gb0 = exact(real, rng.standard_normal(c)), exact(real, rng.standard_normal(c))
        for train in (True, False):
            check(nn, cunn, real, "BatchNormalization_backward",
                  [x, go, "OUT", InOut(gw0), InOut(gb0), w, rm, rv, sm, ss, train, 0.5, 1e-5], layout)
        # NULL gradients: gradInput only; parameters only
        check(nn, cunn, real, "BatchNormalization_backward",
              [x, go, "OUT", None, None, w, rm, rv, sm, ss, True, 1.0, 1e-5], layout)
        check(nn, cunn, real, "BatchNormalization_backward",
              [x, go, None, InOut(gw0), InOut(gb0), w, rm, rv, sm, ss, True, 1.0, 1e-5], layout)


def test_batchnorm_null_stats_and_constant(nn, cunn, rng):
    real = "CudaDouble"
    x = rng.standard_normal((4, 3, 2))
    check(nn, cunn, real, "BatchNormalization_updateOutput", [x, "OUT", None, None, None, None, None, None, True, 0.1, 0.0])
    # a constant feature with eps 0: invstd 0, as the host
    xc = np.ones((3, 2, 2))
    check(nn, cunn, real, "BatchNormalization_updateOutput", [xc, "OUT", None, None, None, None, "OUT", "OUT", True, 0.1, 0.0])


def test_batchnorm_errors_leave_outputs(nn, cunn, rng):
    real = "Cuda"
    out = cunn.tensor(real, np.full((2, 2), 7.0))
    rm = cunn.tensor(real, np.full(3, 5.0))
    x = rng.standard_normal((4, 3))

    def refused(fn, *args, match):
        with pytest.raises(THError, match=match):
            cunn.call(real, fn, *args)

    refused("BatchNormalization_updateOutput", rng.standard_normal(4), out, None, None, rm, None, None, None, True, 0.1,
            1e-5, match=r"THNN_CudaBatchNormalization_updateOutput: argument 2 \(input\)")
    refused("BatchNormalization_updateOutput", x, out, np.ones(2), None, rm, None, None, None, True, 0.1, 1e-5,
            match=r"argument 4 \(weight\)")
    refused("BatchNormalization_updateOutput", x, out, None, None, rm, None, None, None, False, 0.1, 1e-5,
            match=r"argument 7 \(running_var\)")
    refused("BatchNormalization_updateOutput", x[:1], out, None, None, rm, None, None, None, True, 0.1, 1e-5,
            match=r"more than 1 value")
    refused("BatchNormalization_backward", x, x[:2], out, None, None, None, None, None, np.ones(3), np.ones(3), True,
            1.0, 1e-5, match=r"argument 3 \(gradOutput\)")
    refused("BatchNormalization_backward", x, x, out, None, None, None, None, None, None, np.ones(3), True, 1.0, 1e-5,
            match=r"argument 10 \(save_mean\)")
    refused("BatchNormalization_backward", x, x, out, rm, np.ones(2), None, None, None, np.ones(3), np.ones(3), True,
            1.0, 1e-5, match=r"argument 6 \(gradBias\)")
    refused("BatchNormalization_updateOutput", x, out, None, None, nn.tensor("Float", np.ones(3, np.float32)), None,
            None, None, True, 0.1, 1e-5, match=r"device")
    assert (cunn.numpy(out) == 7.0).all() and cunn.numpy(out).shape == (2, 2)
    assert (cunn.numpy(rm) == 5.0).all()


# ---------------------------------------------------------------------------------------------
# SpatialCrossMapLRN


def torch_lrn(x, go, size, alpha, beta, k):
    tx = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    t = tx if x.ndim == 4 else tx[None]
    y = F.local_response_norm(t, size, alpha=alpha, beta=beta, k=k)
    y = y if x.ndim == 4 else y[0]
    y.backward(torch.tensor(go, dtype=torch.float64))
    return y.detach().numpy(), tx.grad.numpy()


def loop_lrn(x, go, size, alpha, beta, k):
    """cunn's formulas in float64 with its window (for even sizes too)."""
    xb = x if x.ndim == 4 else x[None]
    gb = go if go.ndim == 4 else go[None]
    c = xb.shape[1]
    lo, hi = (size - 1) // 2, size // 2
    scale = np.empty_like(xb)
    for ch in range(c):
        a, z = max(0, ch - lo), min(c - 1, ch + hi)
        scale[:, ch] = k + alpha / size * np.sum(xb[:, a:z + 1] ** 2, axis=1)
    y = xb * scale ** -beta
    ratio = gb * y / scale
    gi = gb * scale ** -beta
    for ch in range(c):
        a, z = max(0, ch - hi), min(c - 1, ch + lo)
        gi[:, ch] -= 2 * alpha * beta / size * xb[:, ch] * np.sum(ratio[:, a:z + 1], axis=1)
    sq = (lambda v: v) if x.ndim == 4 else (lambda v: v[0])
    return sq(y), sq(gi), sq(scale)


def lrn(cunn, real, x, go, size, alpha, beta, k, layout=None):
    lay = layout or (lambda v: v)
    out, scale, gin = cunn.empty(real), cunn.empty(real), cunn.empty(real)
    xt = cunn.tensor(real, lay(x.astype(NP[real])))
    cunn.call(real, "SpatialCrossMapLRN_updateOutput", xt, out, scale, size, alpha, beta, k)
    cunn.call(real, "SpatialCrossMapLRN_updateGradInput", xt, lay(go.astype(NP[real])), gin, scale, out, size, alpha,
              beta, k)
    return [cunn.numpy(t).astype(np.float64) for t in (out, gin, scale)]


def lrn_close(got, want, real):
    # the window sums in the compute type (float for Cuda, CudaHalf) against float64
    tol = {"Cuda": 2e-5, "CudaDouble": 1e-12, "CudaHalf": 4e-3}[real]
    assert np.allclose(got, want, rtol=tol, atol=tol), np.max(np.abs(got - want))


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("shape", [(2, 5, 3, 4), (7, 2, 3), (1, 1, 2, 2)], ids=str)
@pytest.mark.parametrize("size", [1, 3, 5])
def test_lrn_against_torch(cunn, rng, real, shape, size):
    alpha, beta, k = 0.7, 0.75, 2.0
    x, go = exact(real, rng.standard_normal(shape)), exact(real, rng.standard_normal(shape))
    y, gx = torch_lrn(x, go, size, alpha, beta, k)
    for layout in (None, strided):
        out, gin, _ = lrn(cunn, real, x, go, size, alpha, beta, k, layout)
        lrn_close(out, y, real)
        lrn_close(gin, gx, real)


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("size", [2, 4, 8])
def test_lrn_even_sizes_and_scale(cunn, rng, real, size):
    alpha, beta, k = 1e-2, 0.5, 1.0
    x, go = exact(real, rng.standard_normal((2, 6, 2, 3))), exact(real, rng.standard_normal((2, 6, 2, 3)))
    got = lrn(cunn, real, x, go, size, alpha, beta, k)
    for g, w in zip(got, loop_lrn(x, go, size, alpha, beta, k)):
        lrn_close(g, w, real)


def test_lrn_errors_leave_outputs(nn, cunn, rng):
    real = "Cuda"
    out = cunn.tensor(real, np.full((2,), 7.0))
    scale = cunn.tensor(real, np.full((2,), 7.0))
    x = rng.standard_normal((2, 3, 2, 2))
    with pytest.raises(THError, match=r"THNN_CudaSpatialCrossMapLRN_updateOutput: argument 2 \(input\)"):
        cunn.call(real, "SpatialCrossMapLRN_updateOutput", x[0, 0], out, scale, 3, 1e-4, 0.75, 1.0)
    with pytest.raises(THError, match=r"argument 5 \(size\)"):
        cunn.call(real, "SpatialCrossMapLRN_updateOutput", x, out, scale, 0, 1e-4, 0.75, 1.0)
    with pytest.raises(THError, match=r"device"):
        cunn.call(real, "SpatialCrossMapLRN_updateOutput", nn.tensor("Float", x.astype(np.float32)), out, scale, 3,
                  1e-4, 0.75, 1.0)
    with pytest.raises(THError, match=r"argument 5 \(scale\)"):
        cunn.call(real, "SpatialCrossMapLRN_updateGradInput", x, x, out, scale, x, 3, 1e-4, 0.75, 1.0)
    with pytest.raises(THError, match=r"argument 3 \(gradOutput\)"):
        cunn.call(real, "SpatialCrossMapLRN_updateGradInput", x, x[:1], out, x, x, 3, 1e-4, 0.75, 1.0)
    assert (cunn.numpy(out) == 7.0).all() and (cunn.numpy(scale) == 7.0).all()
