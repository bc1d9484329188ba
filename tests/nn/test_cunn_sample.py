"""THCUNN's padding and upsampling on the device (SpatialReflectionPadding,
SpatialReplicationPadding, VolumetricReplicationPadding, SpatialUpSamplingNearest,
VolumetricUpSamplingNearest, SpatialUpSamplingBilinear, VolumetricUpSamplingTrilinear) against the
host THNN on the same values and layouts (the host layers are checked against PyTorch in
test_sample.py): updateOutput and updateGradInput for Cuda, CudaDouble and CudaHalf, batched and
unbatched, cropping pads, scale 1, sizes 1, downsampling, non-contiguous operands, an output
aliasing the input, and refused calls that leave outputs alone. The device kernel sums the host's
terms in the host's order, so Cuda and CudaDouble agree bit for bit.

Run on the CPU emulator: TH_CUDA_EMULATOR=1 TH_LIB=$PWD/target/emu/libth.so .venv/bin/python -m
pytest -q tests/nn/test_cunn_sample.py (skipped without a device)."""

import numpy as np
import pytest
from cunnlib import REALS, agree, both, check, exact
from thlib import THError


def strided(a):
    """`a`'s values in a non-contiguous layout (its last two dimensions stored transposed)."""
    return np.ascontiguousarray(np.swapaxes(a, -1, -2)).swapaxes(-1, -2)


PAD = {
    "SpatialReflectionPadding": 2,
    "SpatialReplicationPadding": 2,
    "VolumetricReplicationPadding": 3,
}


def pad_cases(k):
    if k == 2:
        return [((2, 3, 5, 7), (1, 2, 3, 0)), ((3, 4, 6), (2, 0, 1, 3)), ((1, 1, 1, 3), (0, 0, 0, 0)),
                ((2, 2, 5, 4), (-1, 2, 1, -2)), ((1, 2, 3, 3), (2, 2, 2, 2))]
    return [((2, 2, 3, 4, 5), (1, 2, 0, 1, 2, 1)), ((2, 3, 2, 4), (2, 1, 1, 0, 1, 3)),
            ((1, 1, 4, 3, 5), (-1, 2, 1, -1, -2, 1)), ((1, 1, 1, 1, 1), (1, 1, 1, 1, 1, 1))]


def out_pad(shape, pads):
    s = list(shape)
    for d in range(len(pads) // 2):
        s[-1 - d] += pads[2 * d] + pads[2 * d + 1]
    return tuple(s)


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("module", list(PAD))
@pytest.mark.parametrize("layout", [None, strided], ids=["dense", "strided"])
def test_padding(nn, cunn, rng, real, module, layout):
    k = PAD[module]
    for shape, pads in pad_cases(k):
        if module == "SpatialReflectionPadding" and shape[-1] == 1:
            continue
        x = exact(real, rng.standard_normal(shape))
        go = exact(real, rng.standard_normal(out_pad(shape, pads)))
        check(nn, cunn, real, f"{module}_updateOutput", [x, "OUT", *pads], layout, ulps=0)
        check(nn, cunn, real, f"{module}_updateGradInput", [x, go, "OUT", *pads], layout, ulps=0)


NEAREST = {"SpatialUpSamplingNearest": 2, "VolumetricUpSamplingNearest": 3}


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("module", list(NEAREST))
@pytest.mark.parametrize("layout", [None, strided], ids=["dense", "strided"])
def test_nearest(nn, cunn, rng, real, module, layout):
    k = NEAREST[module]
    shapes = [(2, 3, 4, 5), (3, 1, 7), (1, 1, 1, 1)] if k == 2 else [(2, 2, 3, 2, 3), (2, 1, 3, 2), (1, 1, 1, 1, 1)]
    for shape in shapes:
        for s in (1, 3):
            x = exact(real, rng.standard_normal(shape))
            osh = shape[:-k] + tuple(v * s for v in shape[-k:])
            go = exact(real, rng.standard_normal(osh))
            check(nn, cunn, real, f"{module}_updateOutput", [x, "OUT", s], layout, ulps=0)
            check(nn, cunn, real, f"{module}_updateGradInput", [x, go, "OUT", s], layout, ulps=0)


LINEAR = {"SpatialUpSamplingBilinear": 2, "VolumetricUpSamplingTrilinear": 3}


def linear_cases(k):
    if k == 2:  # (input, output sizes): up, down, sizes 1, odd
        return [((2, 3, 4, 5), (7, 9)), ((1, 2, 5, 6), (3, 2)), ((1, 1, 1, 1), (3, 1)), ((2, 1, 3, 1), (1, 4))]
    return [((2, 2, 3, 2, 3), (4, 5, 2)), ((1, 1, 4, 3, 5), (2, 3, 7)), ((1, 2, 1, 1, 2), (3, 1, 3))]


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("module", list(LINEAR))
@pytest.mark.parametrize("layout", [None, strided], ids=["dense", "strided"])
def test_linear(nn, cunn, rng, real, module, layout):
    k = LINEAR[module]
    for shape, osz in linear_cases(k):
        x = exact(real, rng.standard_normal(shape))
        go = exact(real, rng.standard_normal(shape[:2] + osz))
        check(nn, cunn, real, f"{module}_updateOutput", [x, "OUT", *osz], layout, ulps=0)
        check(nn, cunn, real, f"{module}_updateGradInput", [go, "OUT", *shape[:2], *shape[2:], *osz], layout, ulps=0)


def test_special_values_and_alias(nn, cunn):
    """-0, inf and NaN pass through padding's copies and the linear sums as on the host; an
    output that is the input's own tensor is read before it is written."""
    real = "Cuda"
    x = np.array([[[-0.0, np.inf, np.nan], [1.0, -np.inf, 2.0]]], np.float32)
    for fn, args in [("SpatialReplicationPadding_updateOutput", [x, "OUT", 1, 1, 1, 0]),
                     ("SpatialUpSamplingNearest_updateOutput", [x, "OUT", 2]),
                     ("SpatialUpSamplingBilinear_updateOutput", [x[None], "OUT", 3, 4])]:
        (got,), (want,) = both(nn, cunn, real, fn, args)
        np.testing.assert_array_equal(got, want)
        num = ~np.isnan(want)  # (a NaN's sign is not specified)
        np.testing.assert_array_equal(np.signbit(got)[num], np.signbit(want)[num])
    t = cunn.tensor(real, np.arange(12.0).reshape(1, 3, 4))
    cunn.call(real, "SpatialReflectionPadding_updateOutput", t, t, 1, 1, 0, 0)
    host = nn.empty("Float")
    nn.call("Float", "SpatialReflectionPadding_updateOutput", np.arange(12.0, dtype=np.float32).reshape(1, 3, 4),
            host, 1, 1, 0, 0)
    assert (cunn.numpy(t) == host.numpy()).all()


def test_errors_leave_outputs(nn, cunn):
    real = "CudaDouble"
    out = cunn.tensor(real, np.full((2, 2), 7.0))
    x = np.zeros((2, 3, 4))

    def refused(fn, *args, match):
        with pytest.raises(THError, match=match):
            cunn.call(real, fn, *args)

    refused("SpatialReflectionPadding_updateOutput", np.zeros((3, 4)), out, 1, 1, 1, 1,
            match=r"THNN_CudaDoubleSpatialReflectionPadding_updateOutput: argument 2 \(input\)")
    refused("SpatialReflectionPadding_updateOutput", x, out, 4, 0, 0, 0, match=r"argument 4 \(pad_l\)")
    refused("SpatialReflectionPadding_updateGradInput", x, np.zeros((2, 6, 4)), out, 0, 0, 0, 3,
            match=r"argument 8 \(pad_b\)")
    refused("SpatialReplicationPadding_updateOutput", x, out, -2, -2, 0, 0, match=r"argument 2 \(input\).*too small")
    refused("SpatialReplicationPadding_updateGradInput", x, np.zeros((2, 3, 5)), out, 1, 1, 0, 0,
            match=r"argument 3 \(gradOutput\)")
    refused("VolumetricReplicationPadding_updateOutput", x, out, 1, 1, 1, 1, 1, 1, match=r"argument 2 \(input\)")
    refused("SpatialUpSamplingNearest_updateOutput", x, out, 0, match=r"argument 4 \(scale_factor\)")
    refused("VolumetricUpSamplingNearest_updateGradInput", np.zeros((1, 1, 2, 2)), np.zeros((1, 2, 4, 5)), out, 2,
            match=r"argument 3 \(gradOutput\)")
    refused("SpatialUpSamplingBilinear_updateOutput", x, out, 3, 3, match=r"argument 2 \(input\)")
    refused("SpatialUpSamplingBilinear_updateOutput", x[None], out, 0, 3, match=r"argument 4 \(outputHeight\)")
    refused("SpatialUpSamplingBilinear_updateGradInput", np.zeros((1, 2, 3, 3)), out, 1, 2, 2, 2, 3, 4,
            match=r"argument 2 \(gradOutput\)")
    refused("VolumetricUpSamplingTrilinear_updateGradInput", np.zeros((1, 1, 2, 2, 2)), out, 1, 1, 0, 1, 1, 2, 2, 2,
            match=r"argument 6 \(inputDepth\)")
    refused("SpatialReplicationPadding_updateOutput", nn.tensor("Double", x), out, 1, 1, 1, 1, match=r"device")
    assert (cunn.numpy(out) == 7.0).all() and cunn.numpy(out).shape == (2, 2)
