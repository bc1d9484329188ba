"""THCUNN's GEMM convolutions on the device (SpatialConvolutionMM, SpatialDilatedConvolution,
SpatialFullConvolution, SpatialFullDilatedConvolution, VolumetricConvolution,
VolumetricDilatedConvolution, VolumetricFullConvolution, VolumetricFullDilatedConvolution, and
TemporalConvolution) against
the host THNN on the same values and layouts (the host convolutions are checked against PyTorch in
test_conv.py): updateOutput, updateGradInput and accGradParameters (accumulated, scaled) for Cuda,
CudaDouble and CudaHalf; batched and unbatched, padding, stride, dilation, adj, 1x1 kernels,
non-contiguous operands, NULL bias; refused calls that leave outputs alone.

Run on the CPU emulator: TH_CUDA_EMULATOR=1 TH_LIB=$PWD/target/emu/libth.so .venv/bin/python -m
pytest -q tests/nn/test_cunn_conv.py (skipped without a device)."""

import numpy as np
import pytest
from cunnlib import HOST, NP, REALS, Cunn, agree, exact
from thlib import THError

# nd, transposed, kernel among the ints, dilation, adj, buffers (uO, uGI, aGP): cunn's signatures
MODS = {
    "SpatialConvolutionMM": (2, False, True, False, False, (2, 2, 2)),
    "SpatialDilatedConvolution": (2, False, True, True, False, (2, 1, 2)),
    "SpatialFullConvolution": (2, True, True, False, True, (2, 1, 2)),
    "SpatialFullDilatedConvolution": (2, True, True, True, True, (2, 1, 2)),
    "VolumetricConvolution": (3, False, False, False, False, (2, 1, 2)),
    "VolumetricDilatedConvolution": (3, False, True, True, False, (2, 1, 2)),
    "VolumetricFullConvolution": (3, True, False, False, True, (2, 2, 2)),
    "VolumetricFullDilatedConvolution": (3, True, False, True, True, (2, 2, 2)),
}


def cord(nd, v):
    """(t,)h,w -> the C order: W, H or T, W, H."""
    return [v[1], v[0]] if nd == 2 else [v[0], v[2], v[1]]


def ints(mod, k, s, p, d, a):
    nd, _, kargs, dil, adj, _ = MODS[mod]
    out = (cord(nd, k) if kargs else []) + cord(nd, s) + cord(nd, p)
    if dil:
        out += cord(nd, d)
    if adj:
        out += cord(nd, a)
    return out


def run(fam, real, mod, x, w, b, gout, iv, scale, gw0, gb0, layout):
    """(output, gradInput, gradWeight, gradBias) of `mod` on `fam` (the device's Cunn or the host's
    NN); `layout` maps each array operand to the view passed."""
    typ = NP[real] if isinstance(fam, Cunn) else {"Float": np.float32, "Double": np.float64}[real]
    read = fam.numpy if isinstance(fam, Cunn) else (lambda t: t.numpy())
    mk = fam.tensor if isinstance(fam, Cunn) else (lambda r, a: fam.tensor(r, a))
    nb = MODS[mod][5]
    x, w, gout = (layout(a.astype(typ)) for a in (x, w, gout))
    b = None if b is None else layout(b.astype(typ))
    out, gin = fam.empty(real), fam.empty(real)
    fam.call(real, f"{mod}_updateOutput", x, out, w, b, *[fam.empty(real) for _ in range(nb[0])], *iv)
    fam.call(real, f"{mod}_updateGradInput", x, gout, gin, w, *[fam.empty(real) for _ in range(nb[1])], *iv)
    gw = mk(real, gw0.astype(typ))
    gb = None if gb0 is None else mk(real, gb0.astype(typ))
    fam.call(real, f"{mod}_accGradParameters", x, gout, gw, gb, *[fam.empty(real) for _ in range(nb[2])], *iv,
             scale)
    return read(out), read(gin), read(gw), None if gb is None else read(gb)


def out_size(mod, isz, k, s, p, d, a):
    tr = MODS[mod][1]
    ke = [dd * (kk - 1) + 1 for kk, dd in zip(k, d)]
    if tr:
        return [(i - 1) * ss - 2 * pp + e + aa for i, ss, pp, e, aa in zip(isz, s, p, ke, a)]
    return [(i + 2 * pp - e) // ss + 1 for i, ss, pp, e in zip(isz, s, p, ke)]


def check(nn, cunn, rng, real, mod, cin, cout, isz, k, s, p, d, a, batch, bias=True, scale=0.5,
          layout=lambda v: v, ulps=64):
    nd, tr, _, dil, adj, _ = MODS[mod]
    d = d if dil else [1] * nd
    a = a if adj else [0] * nd
    iv = ints(mod, k, s, p, d, a)
    osz = out_size(mod, isz, k, s, p, d, a)
    lead = [batch] if batch else []
    x = exact(real, rng.standard_normal(lead + [cin] + list(isz)))
    w = exact(real, rng.standard_normal(([cin, cout] if tr else [cout, cin]) + list(k)) * 0.5)
    b = exact(real, rng.standard_normal(cout)) if bias else None
    gout = exact(real, rng.standard_normal(lead + [cout] + osz))
    gw0 = exact(real, rng.standard_normal(w.shape))
    gb0 = exact(real, rng.standard_normal(cout)) if bias else None
    dev = run(cunn, real, mod, x, w, b, gout, iv, scale, gw0, gb0, layout)
    host = run(nn, HOST[real], mod, x, w, b, gout, iv, scale, gw0, gb0, layout)
    assert list(dev[0].shape) == lead + [cout] + osz
    for name, got, want in zip(("output", "gradInput", "gradWeight", "gradBias"), dev, host):
        if want is None:
            assert got is None
            continue
        try:
            agree(got, want, real, ulps=ulps)
        except AssertionError as e:
            raise AssertionError(f"{mod} {real} {name} (batch {batch}, bias {bias}): {e}") from None


def geometry(mod):
    """A small geometry exercising the module's arguments: cin, cout, input size, k, s, p, d, a."""
    if MODS[mod][0] == 2:
        return 3, 4, [5, 6], [2, 3], [2, 1], [1, 1], [1, 2], [1, 0]
    return 2, 3, [3, 4, 5], [2, 2, 3], [1, 2, 1], [1, 0, 1], [2, 1, 1], [0, 1, 0]


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("mod", list(MODS))
def test_against_host(nn, cunn, rng, real, mod):
    cin, cout, isz, k, s, p, d, a = geometry(mod)
    check(nn, cunn, rng, real, mod, cin, cout, isz, k, s, p, d, a, batch=2)
    check(nn, cunn, rng, real, mod, cin, cout, isz, k, s, p, d, a, batch=None, bias=False, scale=1.0)


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("mod", list(MODS))
def test_one_by_one_and_strided(nn, cunn, rng, real, mod):
    nd = MODS[mod][0]
    cin, cout, isz, k, s, p, d, a = geometry(mod)
    one = [1] * nd
    # a 1x1 kernel at stride 1 (the identity unfolding), no padding
    check(nn, cunn, rng, real, mod, cin, cout, isz, one, one, [0] * nd, one, [0] * nd, batch=3, scale=2.0)

    # every operand a non-contiguous view (reversed dimension order, transposed back)
    def strided(v):
        return np.ascontiguousarray(v.transpose(*reversed(range(v.ndim)))).transpose(*reversed(range(v.ndim)))

    check(nn, cunn, rng, real, mod, cin, cout, isz, k, s, p, d, a, batch=2, layout=strided)


def test_errors_leave_outputs(nn, cunn, rng):
    real, mod = "Cuda", "SpatialConvolutionMM"
    out = cunn.tensor(real, np.full((2,), 9.0))
    x = rng.standard_normal((2, 3, 5, 5))
    w = rng.standard_normal((4, 3, 3, 3))
    b = rng.standard_normal(4)
    bufs = [cunn.empty(real), cunn.empty(real)]
    iv = [3, 3, 1, 1, 0, 0]
    with pytest.raises(THError) as e:  # wrong number of input planes
        cunn.call(real, f"{mod}_updateOutput", x[:, :2], out, w, b, *bufs, *iv)
    assert "input planes" in e.value.msg and "THNN_CudaSpatialConvolutionMM_updateOutput" in e.value.msg
    with pytest.raises(THError):  # input smaller than the kernel
        cunn.call(real, f"{mod}_updateOutput", x[:, :, :2], out, w, b, *bufs, *iv)
    with pytest.raises(THError):  # a bias of the wrong size
        cunn.call(real, f"{mod}_updateOutput", x, out, w, b[:3], *bufs, *iv)
    with pytest.raises(THError):  # a zero stride
        cunn.call(real, f"{mod}_updateOutput", x, out, w, b, *bufs, 3, 3, 0, 1, 0, 0)
    with pytest.raises(THError) as e:  # a host weight among device tensors
        cunn.call(real, f"{mod}_updateOutput", x, out, nn.tensor("Float", w.astype(np.float32)), b, *bufs, *iv)
    assert "device" in e.value.msg
    assert (cunn.numpy(out) == 9.0).all()
    # gradOutput of the wrong shape; adj not below stride or dilation
    gin = cunn.tensor(real, np.full((3,), 7.0))
    with pytest.raises(THError):
        cunn.call(real, f"{mod}_updateGradInput", x, rng.standard_normal((2, 4, 3, 4)), gin, w, *bufs, *iv)
    with pytest.raises(THError) as e:
        cunn.call(real, "SpatialFullConvolution_updateGradInput", x, rng.standard_normal((2, 4, 7, 7)), gin,
                  rng.standard_normal((3, 4, 3, 3)), cunn.empty(real), 3, 3, 1, 1, 0, 0, 1, 0)
    assert "adjW" in e.value.msg
    assert (cunn.numpy(gin) == 7.0).all()
    # a gradBias of the wrong size leaves gradWeight alone
    gw = cunn.tensor(real, np.full(w.shape, 5.0))
    gb = cunn.tensor(real, np.full((3,), 5.0))
    with pytest.raises(THError) as e:
        cunn.call(real, f"{mod}_accGradParameters", x, rng.standard_normal((2, 4, 3, 3)), gw, gb, *bufs, *iv, 1.0)
    assert "gradBias" in e.value.msg
    assert (cunn.numpy(gw) == 5.0).all() and (cunn.numpy(gb) == 5.0).all()


def temporal(fam, real, x, w, b, gout, kw, dw, scale, gw0, gb0, layout):
    """TemporalConvolution's (output, gradInput, gradWeight, gradBias) on `fam`."""
    typ = NP[real] if isinstance(fam, Cunn) else {"Float": np.float32, "Double": np.float64}[real]
    read = fam.numpy if isinstance(fam, Cunn) else (lambda t: t.numpy())
    x, w, gout = (layout(a.astype(typ)) for a in (x, w, gout))
    b = None if b is None else b.astype(typ)
    out, gin = fam.empty(real), fam.empty(real)
    fam.call(real, "TemporalConvolution_updateOutput", x, out, w, b, kw, dw, x.shape[-1], w.shape[0])
    fam.call(real, "TemporalConvolution_updateGradInput", x, gout, gin, w, kw, dw)
    gw = fam.tensor(real, gw0.astype(typ))
    gb = None if gb0 is None else fam.tensor(real, gb0.astype(typ))
    fam.call(real, "TemporalConvolution_accGradParameters", x, gout, gw, gb, kw, dw, scale)
    return read(out), read(gin), read(gw), None if gb is None else read(gb)


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("kw,dw", [(3, 1), (2, 3), (4, 2), (1, 1)], ids=str)
@pytest.mark.parametrize("batch", [None, 3])
def test_temporal_convolution(nn, cunn, rng, real, kw, dw, batch):
    cin, cout, t = 3, 4, 9
    lead = [batch] if batch else []
    to = (t - kw) // dw + 1
    x = exact(real, rng.standard_normal(lead + [t, cin]))
    w = exact(real, rng.standard_normal((cout, kw * cin)) * 0.5)
    gout = exact(real, rng.standard_normal(lead + [to, cout]))
    gw0 = exact(real, rng.standard_normal(w.shape))
    bias = kw != 1
    b = exact(real, rng.standard_normal(cout)) if bias else None
    gb0 = exact(real, rng.standard_normal(cout)) if bias else None

    def strided(v):  # non-contiguous views of the same values
        return np.ascontiguousarray(v.transpose(*reversed(range(v.ndim)))).transpose(*reversed(range(v.ndim)))

    for layout in (lambda v: v, strided):
        dev = temporal(cunn, real, x, w, b, gout, kw, dw, 0.5, gw0, gb0, layout)
        host = temporal(nn, HOST[real], x, w, b, gout, kw, dw, 0.5, gw0, gb0, layout)
        for name, got, want in zip(("output", "gradInput", "gradWeight", "gradBias"), dev, host):
            if want is None:
                assert got is None
                continue
            try:
                agree(got, want, real, ulps=64)
            except AssertionError as e:
                raise AssertionError(f"TemporalConvolution {real} {name}: {e}") from None


def test_temporal_errors_leave_outputs(nn, cunn, rng):
    real = "Cuda"
    out = cunn.tensor(real, np.full((2,), 9.0))
    x, w = rng.standard_normal((2, 6, 3)), rng.standard_normal((4, 6))
    with pytest.raises(THError):  # inputFrameSize differs from the input's
        cunn.call(real, "TemporalConvolution_updateOutput", x, out, w, None, 2, 1, 4, 4)
    with pytest.raises(THError):  # a sequence shorter than the kernel
        cunn.call(real, "TemporalConvolution_updateOutput", x[:, :1], out, w, None, 2, 1, 3, 4)
    with pytest.raises(THError) as e:  # a host weight
        cunn.call(real, "TemporalConvolution_updateOutput", x, out, nn.tensor("Float", w.astype(np.float32)), None,
                  2, 1, 3, 4)
    assert "device" in e.value.msg
    assert (cunn.numpy(out) == 9.0).all()
    gw = cunn.tensor(real, np.full((4, 6), 5.0))
    with pytest.raises(THError):  # gradOutput of the wrong shape
        cunn.call(real, "TemporalConvolution_accGradParameters", x, rng.standard_normal((2, 4, 4)), gw, None, 2, 1,
                  1.0)
    assert (cunn.numpy(gw) == 5.0).all()
