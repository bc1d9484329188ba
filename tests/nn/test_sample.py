"""THNN padding (reflection, replication), upsampling (nearest, bilinear, trilinear) and the
bilinear grid sampler against torch.nn.functional (pad, interpolate, grid_sample) in float64 with
gradients through autograd, finite differences of th's own forward, batched and unbatched inputs,
non-contiguous operands, odd sizes and errors that leave the outputs alone."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from nnlib import NP, close, fd_grad
from thlib import THError

REALS = ["Float", "Double"]
T64 = torch.float64


def cast(real, a):
    return np.asarray(a).astype(NP[real])


def torch_ref(fn, x, gout, *extra):
    """fn(x, *extra) and the gradients of sum(fn * gout) for x and each extra (float64)."""
    tx = torch.tensor(x, dtype=T64, requires_grad=True)
    te = [torch.tensor(e, dtype=T64, requires_grad=True) for e in extra]
    y = fn(tx, *te)
    if gout is None:
        return y.detach().numpy()
    y.backward(torch.tensor(gout, dtype=T64))
    return (y.detach().numpy(), tx.grad.numpy(), *[t.grad.numpy() for t in te])


# ---------------------------------------------------------------------------------------------
# padding

PAD = {
    "SpatialReflectionPadding": ("reflect", 2),
    "SpatialReplicationPadding": ("replicate", 2),
    "VolumetricReplicationPadding": ("replicate", 3),
}


def pad_call(nn, real, module, x, gout, pads):
    out, gin = nn.empty(real), nn.empty(real)
    nn.call(real, f"{module}_updateOutput", x, out, *pads)
    if gout is None:
        return out.numpy()
    nn.call(real, f"{module}_updateGradInput", x, gout, gin, *pads)
    return out.numpy(), gin.numpy()


def pad_cases(k):
    if k == 2:
        return [((2, 3, 5, 7), (1, 2, 3, 0)), ((3, 4, 6), (2, 0, 1, 3)), ((1, 1, 1, 3), (0, 0, 0, 0)),
                ((2, 2, 5, 4), (-1, 2, 1, -2)), ((1, 2, 3, 3), (2, 2, 2, 2))]
    return [((2, 2, 3, 4, 5), (1, 2, 0, 1, 2, 1)), ((2, 3, 2, 4), (2, 1, 1, 0, 1, 3)),
            ((1, 1, 4, 3, 5), (-1, 2, 1, -1, -2, 1)), ((1, 1, 1, 1, 1), (1, 1, 1, 1, 1, 1))]


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("module", list(PAD))
def test_padding_against_torch(nn, rng, real, module):
    mode, k = PAD[module]
    for shape, pads in pad_cases(k):
        x = cast(real, rng.standard_normal(shape))
        want = torch_ref(lambda t: F.pad(t, pads, mode=mode), x, None)
        gout = cast(real, rng.standard_normal(want.shape))
        out, gin = pad_call(nn, real, module, x, gout, pads)
        y, gx = torch_ref(lambda t: F.pad(t, pads, mode=mode), x, gout)
        close(out, y, real)
        close(gin, gx, real)


@pytest.mark.parametrize("module", list(PAD))
def test_padding_finite_differences_and_strides(nn, rng, module):
    real = "Double"
    mode, k = PAD[module]
    shape, pads = ((2, 3, 4), (2, 1, -1, 2)) if k == 2 else ((1, 2, 3, 2), (1, 1, 0, 1, 1, -1))
    x = rng.standard_normal(shape)
    out = pad_call(nn, real, module, x, None, pads)
    gout = rng.standard_normal(out.shape)
    _, gin = pad_call(nn, real, module, x, gout, pads)
    fd = fd_grad(lambda v: float(np.sum(pad_call(nn, real, module, v, None, pads) * gout)), x)
    close(gin, fd, real, tol=1e-7)
    # transposed input and gradOutput (strided views)
    xt = np.ascontiguousarray(np.swapaxes(x, -1, -2)).swapaxes(-1, -2)
    gt = np.ascontiguousarray(np.swapaxes(gout, 0, -1)).swapaxes(0, -1)
    out2, gin2 = pad_call(nn, real, module, xt, gt, pads)
    close(out2, out, real, tol=0)
    close(gin2, gin, real, tol=0)


def test_padding_errors(nn):
    real = "Float"
    out = nn.tensor(real, np.full((2, 2), 7.0))
    x = np.zeros((2, 3, 4), np.float32)
    with pytest.raises(THError, match=r"THNN_FloatSpatialReflectionPadding_updateOutput: argument 2 \(input\)"):
        nn.call(real, "SpatialReflectionPadding_updateOutput", np.zeros((3, 4), np.float32), out, 1, 1, 1, 1)
    with pytest.raises(THError, match=r"argument 4 \(pad_l\): must be less than the input size 4"):
        nn.call(real, "SpatialReflectionPadding_updateOutput", x, out, 4, 0, 0, 0)
    with pytest.raises(THError, match=r"argument 7 \(pad_b\)"):
        nn.call(real, "SpatialReflectionPadding_updateOutput", x, out, 0, 0, 0, 3)
    with pytest.raises(THError, match=r"argument 8 \(pad_b\)"):
        nn.call(real, "SpatialReflectionPadding_updateGradInput", x, np.zeros((2, 6, 4), np.float32), out, 0, 0, 0, 3)
    with pytest.raises(THError, match=r"argument 2 \(input\).*too small"):
        nn.call(real, "SpatialReplicationPadding_updateOutput", x, out, -2, -2, 0, 0)
    with pytest.raises(THError, match=r"argument 3 \(gradOutput\)"):
        nn.call(real, "SpatialReplicationPadding_updateGradInput", x, np.zeros((2, 3, 5), np.float32), out, 1, 1, 0, 0)
    with pytest.raises(THError, match=r"THNN_FloatVolumetricReplicationPadding_updateOutput: argument 2 \(input\)"):
        nn.call(real, "VolumetricReplicationPadding_updateOutput", x, out, 1, 1, 1, 1, 1, 1)
    with pytest.raises(THError, match=r"argument 3 \(gradOutput\)"):
        nn.call(real, "VolumetricReplicationPadding_updateGradInput", np.zeros((1, 2, 2, 2), np.float32),
                np.zeros((1, 2, 2, 3), np.float32), out, 1, 1, 1, 1, 1, 1)
    assert out.numpy().shape == (2, 2) and (out.numpy() == 7).all()


# ---------------------------------------------------------------------------------------------
# nearest upsampling

NEAREST = {"SpatialUpSamplingNearest": 2, "VolumetricUpSamplingNearest": 3}


def nearest_call(nn, real, module, x, gout, s):
    out, gin = nn.empty(real), nn.empty(real)
    nn.call(real, f"{module}_updateOutput", x, out, s)
    if gout is None:
        return out.numpy()
    nn.call(real, f"{module}_updateGradInput", x, gout, gin, s)
    return out.numpy(), gin.numpy()


def torch_nearest(x, gout, s, k):
    batched = x.ndim == k + 2
    fn = lambda t: F.interpolate(t if batched else t[None], scale_factor=s, mode="nearest")  # noqa: E731
    if gout is None:
        y = torch_ref(fn, x, None)
        return y if batched else y[0]
    y, gx = torch_ref(fn, x, gout if batched else gout[None])
    return (y, gx) if batched else (y[0], gx)


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("module", list(NEAREST))
def test_nearest_against_torch(nn, rng, real, module):
    k = NEAREST[module]
    shapes = [(2, 3, 4, 5), (3, 1, 7), (1, 1, 1, 1)] if k == 2 else [(2, 2, 3, 2, 3), (2, 1, 3, 2), (1, 1, 1, 1, 1)]
    for shape in shapes:
        for s in (1, 2, 3):
            x = cast(real, rng.standard_normal(shape))
            want = torch_nearest(x, None, s, k)
            gout = cast(real, rng.standard_normal(want.shape))
            out, gin = nearest_call(nn, real, module, x, gout, s)
            y, gx = torch_nearest(x, gout, s, k)
            close(out, y, real)
            close(gin, gx, real)


@pytest.mark.parametrize("module", list(NEAREST))
def test_nearest_finite_differences_and_strides(nn, rng, module):
    real = "Double"
    k = NEAREST[module]
    x = rng.standard_normal((2, 2, 3) if k == 2 else (1, 2, 2, 3))
    s = 2
    out = nearest_call(nn, real, module, x, None, s)
    gout = rng.standard_normal(out.shape)
    _, gin = nearest_call(nn, real, module, x, gout, s)
    fd = fd_grad(lambda v: float(np.sum(nearest_call(nn, real, module, v, None, s) * gout)), x)
    close(gin, fd, real, tol=1e-7)
    xt = np.ascontiguousarray(np.swapaxes(x, 0, -1)).swapaxes(0, -1)
    gt = np.ascontiguousarray(np.swapaxes(gout, -2, -1)).swapaxes(-2, -1)
    out2, gin2 = nearest_call(nn, real, module, xt, gt, s)
    close(out2, out, real, tol=0)
    close(gin2, gin, real, tol=0)


def test_nearest_errors(nn):
    real = "Double"
    out = nn.tensor(real, np.full((2, 2), 7.0))
    x = np.zeros((2, 3, 4))
    with pytest.raises(THError, match=r"THNN_DoubleSpatialUpSamplingNearest_updateOutput: argument 4 \(scale_factor\)"):
        nn.call(real, "SpatialUpSamplingNearest_updateOutput", x, out, 0)
    with pytest.raises(THError, match=r"argument 2 \(input\)"):
        nn.call(real, "SpatialUpSamplingNearest_updateOutput", np.zeros((2, 3)), out, 2)
    with pytest.raises(THError, match=r"argument 3 \(gradOutput\)"):
        nn.call(real, "SpatialUpSamplingNearest_updateGradInput", x, np.zeros((2, 6, 7)), out, 2)
    with pytest.raises(THError, match=r"argument 5 \(scale_factor\)"):
        nn.call(real, "SpatialUpSamplingNearest_updateGradInput", x, np.zeros((2, 6, 8)), out, -1)
    with pytest.raises(THError, match=r"THNN_DoubleVolumetricUpSamplingNearest_updateOutput: argument 2 \(input\)"):
        nn.call(real, "VolumetricUpSamplingNearest_updateOutput", x, out, 2)
    with pytest.raises(THError, match=r"argument 3 \(gradOutput\)"):
        nn.call(real, "VolumetricUpSamplingNearest_updateGradInput", np.zeros((1, 1, 2, 2)), np.zeros((1, 2, 4, 5)), out, 2)
    assert out.numpy().shape == (2, 2) and (out.numpy() == 7).all()


# ---------------------------------------------------------------------------------------------
# bilinear / trilinear upsampling (align_corners=True)

LINEAR = {"SpatialUpSamplingBilinear": ("bilinear", 2), "VolumetricUpSamplingTrilinear": ("trilinear", 3)}


def linear_call(nn, real, module, x, gout, osz):
    out, gin = nn.empty(real), nn.empty(real)
    nn.call(real, f"{module}_updateOutput", x, out, *osz)
    if gout is None:
        return out.numpy()
    nn.call(real, f"{module}_updateGradInput", gout, gin, *x.shape[:2], *x.shape[2:], *osz)
    return out.numpy(), gin.numpy()


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("module", list(LINEAR))
def test_linear_against_torch(nn, rng, real, module):
    mode, k = LINEAR[module]
    if k == 2:
        cases = [((2, 3, 4, 5), (7, 9)), ((1, 2, 5, 3), (5, 3)), ((1, 1, 1, 1), (3, 2)), ((2, 1, 6, 7), (3, 1)),
                 ((1, 2, 3, 4), (1, 1)), ((1, 1, 2, 13), (5, 29))]
    else:
        cases = [((1, 2, 3, 4, 2), (5, 7, 3)), ((2, 1, 2, 2, 2), (2, 2, 2)), ((1, 1, 1, 3, 1), (4, 1, 2)),
                 ((1, 2, 5, 3, 4), (2, 3, 1))]
    for shape, osz in cases:
        x = cast(real, rng.standard_normal(shape))
        gout = cast(real, rng.standard_normal(shape[:2] + osz))
        out, gin = linear_call(nn, real, module, x, gout, osz)
        y, gx = torch_ref(lambda t: F.interpolate(t, size=osz, mode=mode, align_corners=True), x, gout)
        close(out, y, real)
        close(gin, gx, real, scale=float(np.abs(gx).max()) + 1)


@pytest.mark.parametrize("module", list(LINEAR))
def test_linear_finite_differences_and_strides(nn, rng, module):
    real = "Double"
    _, k = LINEAR[module]
    shape, osz = ((2, 1, 3, 4), (5, 6)) if k == 2 else ((1, 2, 2, 3, 2), (3, 4, 3))
    x = rng.standard_normal(shape)
    gout = rng.standard_normal(shape[:2] + osz)
    out, gin = linear_call(nn, real, module, x, gout, osz)
    fd = fd_grad(lambda v: float(np.sum(linear_call(nn, real, module, v, None, osz) * gout)), x)
    close(gin, fd, real, tol=1e-7)
    xt = np.ascontiguousarray(np.swapaxes(x, 1, -1)).swapaxes(1, -1)
    gt = np.ascontiguousarray(np.swapaxes(gout, 0, -1)).swapaxes(0, -1)
    out2, gin2 = linear_call(nn, real, module, xt, gt, osz)
    close(out2, out, real, tol=0)
    close(gin2, gin, real, tol=0)


def test_linear_errors(nn):
    real = "Float"
    out = nn.tensor(real, np.full((2, 2), 7.0))
    x = np.zeros((1, 2, 3, 4), np.float32)
    with pytest.raises(THError, match=r"THNN_FloatSpatialUpSamplingBilinear_updateOutput: argument 2 \(input\)"):
        nn.call(real, "SpatialUpSamplingBilinear_updateOutput", x[0], out, 4, 4)
    with pytest.raises(THError, match=r"argument 5 \(outputWidth\)"):
        nn.call(real, "SpatialUpSamplingBilinear_updateOutput", x, out, 4, 0)
    with pytest.raises(THError, match=r"argument 2 \(gradOutput\)"):
        nn.call(real, "SpatialUpSamplingBilinear_updateGradInput", np.zeros((1, 2, 5, 5), np.float32), out, 1, 2, 3, 4, 5, 6)
    with pytest.raises(THError, match=r"argument 6 \(inputHeight\)"):
        nn.call(real, "SpatialUpSamplingBilinear_updateGradInput", np.zeros((1, 2, 5, 6), np.float32), out, 1, 2, 0, 4, 5, 6)
    with pytest.raises(THError, match=r"argument 4 \(nbatch\)"):
        nn.call(real, "SpatialUpSamplingBilinear_updateGradInput", np.zeros((1, 2, 5, 6), np.float32), out, -1, 2, 3, 4, 5, 6)
    with pytest.raises(THError, match=r"THNN_FloatVolumetricUpSamplingTrilinear_updateOutput: argument 4 \(outputDepth\)"):
        nn.call(real, "VolumetricUpSamplingTrilinear_updateOutput", np.zeros((1, 1, 2, 2, 2), np.float32), out, 0, 2, 2)
    with pytest.raises(THError, match=r"argument 11 \(outputWidth\)"):
        nn.call(real, "VolumetricUpSamplingTrilinear_updateGradInput", np.zeros((1, 1, 2, 2, 2), np.float32), out,
                1, 1, 2, 2, 2, 2, 2, -2)
    assert out.numpy().shape == (2, 2) and (out.numpy() == 7).all()


# ---------------------------------------------------------------------------------------------
# grid sampler

def grid_call(nn, real, x, grid, gout):
    out = nn.empty(real)
    nn.call(real, "SpatialGridSamplerBilinear_updateOutput", x, grid, out)
    if gout is None:
        return out.numpy()
    gin, ggrid = nn.empty(real), nn.empty(real)
    nn.call(real, "SpatialGridSamplerBilinear_updateGradInput", x, gin, grid, ggrid, gout)
    return out.numpy(), gin.numpy(), ggrid.numpy()


def torch_grid(t, g):
    return F.grid_sample(t, g, mode="bilinear", padding_mode="zeros", align_corners=True)


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("shape,osz", [((2, 3, 4, 5), (3, 6)), ((1, 1, 1, 1), (2, 2)), ((2, 2, 1, 7), (5, 1)),
                                       ((1, 2, 6, 1), (2, 3)), ((3, 1, 5, 3), (4, 4))])
def test_grid_sampler_against_torch(nn, rng, real, shape, osz):
    x = cast(real, rng.standard_normal(shape))
    grid = cast(real, rng.uniform(-1.3, 1.3, (shape[0],) + osz + (2,)))
    gout = cast(real, rng.standard_normal(shape[:2] + osz))
    out, gin, ggrid = grid_call(nn, real, x, grid, gout)
    y, gx, gg = torch_ref(torch_grid, x, gout, grid)
    close(out, y, real)
    close(gin, gx, real)
    close(ggrid, gg, real, scale=float(np.abs(gg).max()) * 4 + 1)


def test_grid_sampler_finite_differences_and_strides(nn, rng):
    real = "Double"
    x = rng.standard_normal((2, 2, 3, 4))
    grid = rng.uniform(-1.2, 1.2, (2, 3, 2, 2))
    gout = rng.standard_normal((2, 2, 3, 2))
    out, gin, ggrid = grid_call(nn, real, x, grid, gout)
    loss = lambda x_, g_: float(np.sum(grid_call(nn, real, x_, g_, None) * gout))  # noqa: E731
    close(gin, fd_grad(lambda v: loss(v, grid), x), real, tol=1e-7)
    close(ggrid, fd_grad(lambda v: loss(x, v), grid, eps=1e-7), real, tol=1e-6)
    xt = np.ascontiguousarray(np.swapaxes(x, 1, 3)).swapaxes(1, 3)
    gt = np.ascontiguousarray(grid.transpose(3, 2, 1, 0)).transpose(3, 2, 1, 0)
    got = np.ascontiguousarray(np.swapaxes(gout, 0, 2)).swapaxes(0, 2)
    out2, gin2, ggrid2 = grid_call(nn, real, xt, gt, got)
    close(out2, out, real, tol=0)
    close(gin2, gin, real, tol=0)
    close(ggrid2, ggrid, real, tol=0)
    # NULL gradients are skipped
    gg = nn.empty(real)
    nn.call(real, "SpatialGridSamplerBilinear_updateGradInput", x, None, grid, gg, gout)
    close(gg.numpy(), ggrid, real, tol=0)


def test_grid_sampler_errors(nn):
    real = "Float"
    out = nn.tensor(real, np.full((2, 2), 7.0))
    x = np.zeros((2, 3, 4, 5), np.float32)
    with pytest.raises(THError, match=r"THNN_FloatSpatialGridSamplerBilinear_updateOutput: argument 2 \(input\)"):
        nn.call(real, "SpatialGridSamplerBilinear_updateOutput", x[0], np.zeros((2, 3, 3, 2), np.float32), out)
    with pytest.raises(THError, match=r"argument 3 \(grid\)"):
        nn.call(real, "SpatialGridSamplerBilinear_updateOutput", x, np.zeros((2, 3, 3, 3), np.float32), out)
    with pytest.raises(THError, match=r"argument 3 \(grid\)"):
        nn.call(real, "SpatialGridSamplerBilinear_updateOutput", x, np.zeros((1, 3, 3, 2), np.float32), out)
    gin = nn.tensor(real, np.full((2, 2), 7.0))
    with pytest.raises(THError, match=r"argument 6 \(gradOutput\)"):
        nn.call(real, "SpatialGridSamplerBilinear_updateGradInput", x, gin, np.zeros((2, 3, 3, 2), np.float32), out,
                np.zeros((2, 3, 3, 4), np.float32))
    with pytest.raises(THError, match=r"argument 4 \(grid\)"):
        nn.call(real, "SpatialGridSamplerBilinear_updateGradInput", x, gin, np.zeros((2, 3, 3), np.float32), out,
                np.zeros((2, 3, 3, 3), np.float32))
    assert out.numpy().shape == (2, 2) and (out.numpy() == 7).all()
    assert gin.numpy().shape == (2, 2) and (gin.numpy() == 7).all()
