"""THCUNN's MultiMargin and MultiLabelMargin criterions on the device against the host THNN on the
same values and layouts (the host criterions are checked against PyTorch in
test_criterion.py): the loss (per-frame sums in f64 on both engines, the frames summed in
another order on the device), isTarget, the gradient (element for element the host's), p 1 and
2, weights, sizeAverage, 1-D and 2-D inputs, strided inputs, and refused calls that leave outputs
alone.

Run on the CPU emulator: TH_CUDA_EMULATOR=1 TH_LIB=$PWD/target/emu/libth.so .venv/bin/python -m
pytest -q tests/nn/test_cunn_*.py (skipped without a device)."""

import numpy as np
import pytest
from cunnlib import HOST, NP, REALS, agree
from test_cunn_criterion import exact, host_type, long_tensor
from thlib import THError


def read(fam, cunn, t):
    return fam.numpy(t) if fam is cunn else t.numpy()


def multi_margin(nn, cunn, real, x, t, size_average, p, w, margin):
    """(loss, gradInput) on the device and on the host."""
    res = []
    for fam, r in ((cunn, real), (nn, HOST[real])):
        typ = NP[real] if fam is cunn else host_type(real)
        tt = long_tensor(cunn, t) if fam is cunn else nn.lib.from_numpy(np.asarray(t, dtype=np.int64), "Long")
        wt = None if w is None else w.astype(typ)
        out, gin = fam.empty(r), fam.empty(r)
        fam.call(r, "MultiMarginCriterion_updateOutput", x.astype(typ), tt, out, size_average, p, wt, margin)
        fam.call(r, "MultiMarginCriterion_updateGradInput", x.astype(typ), tt, gin, size_average, p, wt, margin)
        res.append((read(fam, cunn, out), read(fam, cunn, gin)))
    return res


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("size_average", [True, False])
@pytest.mark.parametrize("n,dim", [(1, 6), (9, 5), (3, 1)], ids=str)
def test_multi_margin(nn, cunn, rng, real, p, weighted, size_average, n, dim):
    x = exact(real, rng.standard_normal((n, dim)))
    t = rng.integers(0, dim, n)
    w = exact(real, rng.uniform(0.25, 2.0, dim)) if weighted else None
    (out, gi), (hout, hgi) = multi_margin(nn, cunn, real, x, t, size_average, p, w, 0.75)
    agree(out, hout, real)
    agree(gi, hgi, real)
    # one frame: a 1-D input and a one-element target
    (out, gi), (hout, hgi) = multi_margin(nn, cunn, real, x[0], t[:1], size_average, p, w, 1.0)
    agree(out, hout, real)
    agree(gi, hgi, real)


def test_multi_margin_strided_and_errors(nn, cunn, rng):
    real = "CudaDouble"
    x = rng.standard_normal((7, 4)).T  # 4 frames of 7 scores, strided
    t = rng.integers(0, 7, 4)
    w = rng.uniform(0.5, 1.5, (7, 2))[:, 0]  # strided weights
    (out, gi), (hout, hgi) = multi_margin(nn, cunn, real, x, t, True, 2, w, 1.0)
    agree(out, hout, real)
    agree(gi, hgi, real)
    out, gin = cunn.tensor(real, np.full((2,), 8.0)), cunn.tensor(real, np.full((4, 7), 8.0))
    bad = t.copy()
    bad[1] = 7
    for fn, o in (("updateOutput", out), ("updateGradInput", gin)):
        with pytest.raises(THError) as e:  # a class out of range: named, outputs left alone
            cunn.call(real, f"MultiMarginCriterion_{fn}", x, long_tensor(cunn, bad), o, True, 1, None, 1.0)
        assert "target" in e.value.msg
        with pytest.raises(THError) as e:  # p must be 1 or 2
            cunn.call(real, f"MultiMarginCriterion_{fn}", x, long_tensor(cunn, t), o, True, 3, None, 1.0)
        assert "p" in e.value.msg
        with pytest.raises(THError):  # a host target
            cunn.call(real, f"MultiMarginCriterion_{fn}", x, nn.lib.from_numpy(t, "Long"), o, True, 1, None, 1.0)
    assert (cunn.numpy(out) == 8.0).all() and (cunn.numpy(gin) == 8.0).all()


def label_targets(rng, n, dim):
    """Each frame lists some classes (repeats allowed) then -1, or fills its row without -1."""
    t = np.full((n, dim), -1, dtype=np.int64)
    for i in range(n):
        k = int(rng.integers(0, dim + 1))
        t[i, :k] = rng.integers(0, dim, k)
        if k < dim and rng.integers(0, 2):
            t[i, k + 1:] = rng.integers(0, dim, dim - k - 1)  # ignored after the -1
    return t


def multi_label(nn, cunn, real, x, t, size_average):
    """(loss, isTarget, gradInput) on the device and on the host."""
    res = []
    for fam, r in ((cunn, real), (nn, HOST[real])):
        typ = NP[real] if fam is cunn else host_type(real)
        tt = long_tensor(cunn, t) if fam is cunn else nn.lib.from_numpy(np.asarray(t, dtype=np.int64), "Long")
        out, ist, gin = fam.empty(r), fam.empty(r), fam.empty(r)
        fam.call(r, "MultiLabelMarginCriterion_updateOutput", x.astype(typ), tt, out, ist, size_average)
        fam.call(r, "MultiLabelMarginCriterion_updateGradInput", x.astype(typ), tt, gin, ist, size_average)
        res.append((read(fam, cunn, out), read(fam, cunn, ist), read(fam, cunn, gin)))
    return res


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("size_average", [True, False])
@pytest.mark.parametrize("n,dim", [(1, 5), (8, 6), (3, 1)], ids=str)
def test_multi_label_margin(nn, cunn, rng, real, size_average, n, dim):
    x = exact(real, rng.standard_normal((n, dim)))
    t = label_targets(rng, n, dim)
    (out, ist, gi), (hout, hist, hgi) = multi_label(nn, cunn, real, x, t, size_average)
    agree(out, hout, real)
    assert (ist == hist).all()
    agree(gi, hgi, real)
    (out, ist, gi), (hout, hist, hgi) = multi_label(nn, cunn, real, x[0], t[0], size_average)
    agree(out, hout, real)
    assert (ist == hist).all()
    agree(gi, hgi, real)


def test_multi_label_margin_strided_and_errors(nn, cunn, rng):
    real = "Cuda"
    x = exact(real, rng.standard_normal((6, 5)).T)  # 5 frames of 6 scores, strided
    t = label_targets(rng, 5, 6)
    (out, ist, gi), (hout, hist, hgi) = multi_label(nn, cunn, real, x, t, True)
    agree(out, hout, real)
    assert (ist == hist).all()
    agree(gi, hgi, real)
    out, ist = cunn.tensor(real, np.full((2,), 8.0)), cunn.tensor(real, np.full((5, 6), 8.0))
    bad = t.copy()
    bad[2, 0] = 6
    with pytest.raises(THError) as e:  # a class out of range
        cunn.call(real, "MultiLabelMarginCriterion_updateOutput", x, long_tensor(cunn, bad), out, ist, True)
    assert "target" in e.value.msg
    with pytest.raises(THError) as e:  # isTarget not a 0/1 mask
        cunn.call(real, "MultiLabelMarginCriterion_updateGradInput", x, long_tensor(cunn, t), out, ist, True)
    assert "isTarget" in e.value.msg
    assert (cunn.numpy(out) == 8.0).all() and (cunn.numpy(ist) == 8.0).all()
