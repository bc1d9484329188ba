"""THCUNN's LookupTable on the device against the host THNN on the same values (the host layer is
checked against PyTorch in test_sparse.py): the weight gradient (repeated rows added in position
order, scaleGradByFreq and its counts, a padding row, 1-D and 2-D inputs, strided gradOutput)
and renorm (norm types 1, 2 and 3, duplicate rows), and refused calls that leave outputs alone.
CudaHalf's gradient is checked against a sequential half-precision loop (each addition rounded
to half, as the device stores gradWeight between them).

Run on the CPU emulator: TH_CUDA_EMULATOR=1 TH_LIB=$PWD/target/emu/libth.so .venv/bin/python -m
pytest -q tests/nn/test_cunn_*.py (skipped without a device)."""

import numpy as np
import pytest
from cunnlib import HOST, NP, REALS, agree
from test_cunn_criterion import exact, host_type, long_tensor
from thclib import view_values
from thlib import THError


def device_acc(cunn, real, idx, go, gw0, by_freq, pad, scale):
    gw, count = cunn.tensor(real, gw0), long_tensor(cunn, np.zeros(1))
    cunn.call(real, "LookupTable_accGradParameters", long_tensor(cunn, idx), go, gw, count, None, None, by_freq, pad,
              scale)
    return cunn.numpy(gw).astype(np.float64)


def host_acc(nn, real, idx, go, gw0, by_freq, pad, scale):
    typ = host_type(real)
    gw, count = nn.tensor(HOST[real], gw0.astype(typ)), nn.lib.new("Int")
    nn.call(HOST[real], "LookupTable_accGradParameters", nn.lib.from_numpy(np.asarray(idx, np.int64), "Long"),
            go.astype(typ), gw, count, None, None, by_freq, pad, scale)
    return gw.numpy().astype(np.float64), count.numpy()


def half_reference(idx, go, gw0, by_freq, pad, scale):
    """The device's Half gradient: f32 factors and products, each term and sum rounded to half."""
    w = gw0.astype(np.float16)
    flat = idx.reshape(-1)
    rows = go.reshape(flat.size, -1)
    counts = np.bincount(flat, minlength=w.shape[0])
    for i, k in enumerate(flat):
        if k == pad:
            continue
        s = np.float32(scale) / np.float32(counts[k]) if by_freq else np.float32(scale)
        term = (np.float64(s) * rows[i].astype(np.float64)).astype(np.float16)
        w[k] = (w[k].astype(np.float32) + term.astype(np.float32)).astype(np.float16)
    return w.astype(np.float64)


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("by_freq", [False, True])
@pytest.mark.parametrize("pad", [-1, 2])
@pytest.mark.parametrize("ishape", [(9,), (3, 5)], ids=str)
def test_lookup_acc_grad(nn, cunn, rng, real, by_freq, pad, ishape):
    numw, dim = 6, 4
    idx = rng.integers(0, numw, ishape)
    idx.reshape(-1)[:3] = 2  # repeats, and the padding row when pad == 2
    go = exact(real, rng.standard_normal(ishape + (dim,)))
    gw0 = exact(real, rng.standard_normal((numw, dim)))
    scale = 0.75
    gw = device_acc(cunn, real, idx, go.astype(NP[real]), gw0, by_freq, pad, scale)
    if real == "CudaHalf":
        want = half_reference(idx, go, gw0, by_freq, pad, scale)
        assert np.array_equal(gw, want)
    else:
        want, _ = host_acc(nn, real, idx, go, gw0, by_freq, pad, scale)
        agree(gw, want, real)


def test_lookup_counts_and_strided(nn, cunn, rng):
    real = "CudaDouble"
    numw, dim = 5, 3
    idx = rng.integers(0, numw, (4, 3))
    go = rng.standard_normal((dim, 12)).T.reshape(4, 3, dim)  # strided gradOutput
    gw0 = rng.standard_normal((numw, dim))
    gw, count = cunn.tensor(real, gw0), long_tensor(cunn, np.zeros(1))
    cunn.call(real, "LookupTable_accGradParameters", long_tensor(cunn, idx), go, gw, count, None, None, True, -1, 1.0)
    want, hcount = host_acc(nn, real, idx, go, gw0, True, -1, 1.0)
    agree(cunn.numpy(gw), want, real)
    assert np.array_equal(view_values(cunn.dev, count), np.bincount(idx.reshape(-1), minlength=numw))
    assert np.array_equal(hcount, np.bincount(idx.reshape(-1), minlength=numw))


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("norm_type", [1.0, 2.0, 3.0])
def test_lookup_renorm(nn, cunn, rng, real, norm_type):
    numw, dim = 7, 5
    w0 = exact(real, rng.standard_normal((numw, dim)) * 2)
    idx = np.array([1, 4, 4, 6, 0, 1])
    res = []
    for fam, r in ((cunn, real), (nn, HOST[real])):
        typ = NP[real] if fam is cunn else host_type(real)
        w = fam.tensor(r, w0.astype(typ))
        it = long_tensor(cunn, idx) if fam is cunn else nn.lib.from_numpy(idx, "Long")
        fam.call(r, "LookupTable_renorm", it, w, 2.5, norm_type)
        res.append(fam.numpy(w) if fam is cunn else w.numpy())
    agree(res[0], res[1], real)
    assert not np.array_equal(res[1], w0.astype(res[1].dtype))  # some row was scaled


def test_lookup_errors_leave_outputs(nn, cunn, rng):
    real = "Cuda"
    gw = cunn.tensor(real, np.full((4, 3), 7.0))
    go = rng.standard_normal((5, 3))
    with pytest.raises(THError) as e:  # a row out of range
        cunn.call(real, "LookupTable_accGradParameters", long_tensor(cunn, [0, 1, 4, 2, 0]), go, gw, None, None, None,
                  False, -1, 1.0)
    assert "input" in e.value.msg
    with pytest.raises(THError):  # a host index tensor
        cunn.call(real, "LookupTable_accGradParameters", nn.lib.from_numpy(np.zeros(5, np.int64), "Long"), go, gw,
                  None, None, None, False, -1, 1.0)
    with pytest.raises(THError) as e:  # gradOutput of the wrong size
        cunn.call(real, "LookupTable_accGradParameters", long_tensor(cunn, [0, 1, 2, 2, 0]), go[:4], gw, None, None,
                  None, False, -1, 1.0)
    assert "gradOutput" in e.value.msg
    with pytest.raises(THError) as e:
        cunn.call(real, "LookupTable_renorm", long_tensor(cunn, [0, 5]), gw, 1.0, 2.0)
    assert "idx" in e.value.msg
    assert (cunn.numpy(gw) == 7.0).all()
