"""THCUNN's elementwise criterions on the device (Abs, MSE, SmoothL1, SoftMargin, DistKLDiv, Margin,
BCE with and without weights, L1Cost) against the host THNN on the same values and layouts (the
host criterions are checked against PyTorch in test_criterion.py): the loss (summed in f64 on
both engines, in another order on the device) and its gradient, sizeAverage on and off, strided
operands and targets paired by element count, and refused calls that leave outputs alone.

Run on the CPU emulator: TH_CUDA_EMULATOR=1 TH_LIB=$PWD/target/emu/libth.so .venv/bin/python -m
pytest -q tests/nn/test_cunn_*.py (skipped without a device)."""

import numpy as np
import pytest
from cunnlib import HOST, NP, REALS, Cunn, agree, exact, host_type
from thlib import THError


class Crit:
    """A criterion: its name, extra arguments after sizeAverage, how inputs and targets are drawn."""

    def __init__(self, name, extra=(), draw=None):
        self.name, self.extra = name, extra
        self.draw = draw or (lambda rng, shape: (rng.standard_normal(shape), rng.standard_normal(shape)))

    def __repr__(self):
        return self.name


def signs(rng, shape):
    return rng.standard_normal(shape), np.where(rng.standard_normal(shape) > 0, 1.0, -1.0)


def probs(rng, shape):
    return rng.uniform(0.02, 0.98, shape), rng.uniform(0.0, 1.0, shape)


def kl(rng, shape):
    t = rng.uniform(0.0, 1.0, shape)
    t.reshape(-1)[::3] = 0.0  # the terms with target 0 are 0
    return rng.standard_normal(shape), t


CRITS = [
    Crit("AbsCriterion"),
    Crit("MSECriterion"),
    Crit("SmoothL1Criterion", draw=lambda rng, shape: (rng.standard_normal(shape) * 2, rng.standard_normal(shape))),
    Crit("SoftMarginCriterion", draw=signs),
    Crit("DistKLDivCriterion", draw=kl),
    Crit("MarginCriterion", extra=(0.75,), draw=signs),
    Crit("BCECriterion", extra=(None,), draw=probs),
]


def run(fam, real, c, x, y, size_average, extra):
    out, gin = fam.empty(real), fam.empty(real)
    fam.call(real, f"{c.name}_updateOutput", x, y, out, size_average, *extra)
    fam.call(real, f"{c.name}_updateGradInput", x, y, gin, size_average, *extra)
    read = fam.numpy if isinstance(fam, Cunn) else (lambda t: t.numpy())
    return read(out), read(gin)


def both(nn, cunn, real, c, x, y, size_average, extra=None, layout=lambda a: a):
    extra = c.extra if extra is None else extra
    d = run(cunn, real, c, layout(x.astype(NP[real])), layout(y.astype(NP[real])), size_average,
            tuple(e.astype(NP[real]) if isinstance(e, np.ndarray) else e for e in extra))
    t = host_type(real)
    h = run(nn, HOST[real], c, layout(x.astype(t)), layout(y.astype(t)), size_average,
            tuple(e.astype(t) if isinstance(e, np.ndarray) else e for e in extra))
    return d, h


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("c", CRITS, ids=repr)
@pytest.mark.parametrize("size_average", [True, False])
@pytest.mark.parametrize("shape", [(7,), (4, 33), (3, 4, 5)], ids=str)
def test_against_host(nn, cunn, rng, real, c, size_average, shape):
    x, y = (exact(real, a) for a in c.draw(rng, shape))
    (out, gi), (hout, hgi) = both(nn, cunn, real, c, x, y, size_average)
    assert out.shape == (1,)
    agree(out, hout, real)
    agree(gi, hgi, real)


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("c", CRITS, ids=repr)
def test_strided_and_paired_by_count(nn, cunn, rng, real, c):
    x, y = (exact(real, a) for a in c.draw(rng, (6, 5)))
    (out, gi), (hout, hgi) = both(nn, cunn, real, c, x, y, True, layout=lambda a: a.T)
    agree(out, hout, real)
    agree(gi, hgi, real)
    # a target of another shape with as many elements pairs in row-major order
    (out, gi), (hout, hgi) = both(nn, cunn, real, c, x, y.reshape(-1), False)
    agree(out, hout, real)
    agree(gi, hgi, real)


@pytest.mark.parametrize("real", REALS)
def test_bce_weights(nn, cunn, rng, real):
    c = next(c for c in CRITS if c.name == "BCECriterion")
    x, y = (exact(real, a) for a in probs(rng, (5, 9)))
    w = exact(real, rng.uniform(0.1, 2.0, (5, 9)))
    for sa in (True, False):
        (out, gi), (hout, hgi) = both(nn, cunn, real, c, x, y, sa, extra=(w,))
        agree(out, hout, real)
        agree(gi, hgi, real)


@pytest.mark.parametrize("real", REALS)
def test_l1_cost(nn, cunn, rng, real):
    x = exact(real, rng.standard_normal((4, 7)))
    x[0, :3] = 0.0
    res = []
    for fam, r, t in ((cunn, real, NP[real]), (nn, HOST[real], host_type(real))):
        out, gin = fam.empty(r), fam.empty(r)
        fam.call(r, "L1Cost_updateOutput", x.T.astype(t), out)
        fam.call(r, "L1Cost_updateGradInput", x.T.astype(t), None, gin)
        read = fam.numpy if fam is cunn else (lambda v: v.numpy())
        res.append((read(out), read(gin)))
    agree(res[0][0], res[1][0], real)
    agree(res[0][1], res[1][1], real)


def test_errors_leave_outputs(nn, cunn, rng):
    real = "Cuda"
    out = cunn.tensor(real, np.full((2,), 9.0))
    x, y = rng.uniform(0.1, 0.9, (3, 4)), rng.uniform(0, 1, (3, 4))
    with pytest.raises(THError) as e:  # a probability outside [0, 1]: named with its position
        bad = x.copy()
        bad[1, 2] = 1.5
        cunn.call(real, "BCECriterion_updateOutput", bad, y, out, True, None)
    assert "element 6 is 1.5" in e.value.msg and "THNN_CudaBCECriterion_updateOutput" in e.value.msg
    with pytest.raises(THError):
        cunn.call(real, "BCECriterion_updateOutput", np.full((3, 4), np.nan), y, out, True, None)
    with pytest.raises(THError) as e:  # too few target elements
        cunn.call(real, "MSECriterion_updateOutput", x, y[:2], out, True)
    assert "target" in e.value.msg
    with pytest.raises(THError):  # a host target
        cunn.call(real, "MSECriterion_updateOutput", x, nn.tensor("Float", y.astype(np.float32)), out, True)
    assert (cunn.numpy(out) == 9.0).all()


def long_tensor(cunn, a):
    """A THCudaLongTensor holding the integer array `a`."""
    from thclib import contiguous

    return contiguous(cunn.dev, "Long", np.asarray(a, dtype=np.int64))


def nll_pair(nn, cunn, real, fn, x, t, size_average, w, *rest):
    res = []
    for fam, r in ((cunn, real), (nn, HOST[real])):
        typ = NP[real] if fam is cunn else host_type(real)
        xt = x.astype(typ)
        tt = long_tensor(cunn, t) if fam is cunn else nn.lib.from_numpy(np.asarray(t, dtype=np.int64), "Long")
        wt = None if w is None else w.astype(typ)
        out, tw, gin = fam.empty(r), fam.empty(r), fam.empty(r)
        fam.call(r, f"{fn}_updateOutput", xt, tt, out, size_average, wt, tw, *rest)
        fam.call(r, f"{fn}_updateGradInput", xt, tt, gin, size_average, wt, tw, *rest)
        read = fam.numpy if fam is cunn else (lambda v: v.numpy())
        res.append((read(out), read(tw), read(gin)))
    return res


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("size_average", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n,c", [(1, 5), (9, 7), (40, 3)], ids=str)
def test_class_nll(nn, cunn, rng, real, size_average, weighted, n, c):
    x = exact(real, rng.standard_normal((n, c)))
    t = rng.integers(0, c, n)
    t[::4] = -100  # ignored
    w = exact(real, rng.uniform(0.2, 2.0, c)) if weighted else None
    (out, tw, gi), (hout, htw, hgi) = nll_pair(nn, cunn, real, "ClassNLLCriterion", x, t, size_average, w, -100)
    agree(out, hout, real)
    agree(tw, htw, real)
    agree(gi, hgi, real)
    # one sample of C classes, its target a 1-element tensor
    (out, tw, gi), (hout, htw, hgi) = nll_pair(nn, cunn, real, "ClassNLLCriterion", x[0], t[-1:], size_average, w,
                                               -100)
    agree(out, hout, real)
    agree(gi, hgi, real)


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("size_average", [True, False])
def test_spatial_class_nll(nn, cunn, rng, real, size_average):
    x = exact(real, rng.standard_normal((2, 4, 3, 5)))
    t = rng.integers(0, 4, (2, 3, 5))
    w = exact(real, rng.uniform(0.2, 2.0, 4))
    (out, tw, gi), (hout, htw, hgi) = nll_pair(nn, cunn, real, "SpatialClassNLLCriterion", x, t, size_average, w)
    agree(out, hout, real)
    agree(tw, htw, real)
    agree(gi, hgi, real)


def test_class_nll_strided_and_errors(nn, cunn, rng):
    real = "CudaDouble"
    x = rng.standard_normal((6, 5)).T  # 5 rows of 6 classes, strided
    t = rng.integers(0, 6, 5)
    (out, tw, gi), (hout, htw, hgi) = nll_pair(nn, cunn, real, "ClassNLLCriterion", x, t, True, None, -1)
    agree(out, hout, real)
    agree(gi, hgi, real)
    out, tw = cunn.tensor(real, np.full((2,), 8.0)), cunn.tensor(real, np.full((1,), 8.0))
    bad = t.copy()
    bad[2] = 6
    with pytest.raises(THError) as e:  # a class out of range: named, outputs left alone
        cunn.call(real, "ClassNLLCriterion_updateOutput", x, long_tensor(cunn, bad), out, True, None, tw, -1)
    assert "target" in e.value.msg
    assert (cunn.numpy(out) == 8.0).all() and (cunn.numpy(tw) == 8.0).all()
    with pytest.raises(THError):  # a host target
        cunn.call(real, "ClassNLLCriterion_updateOutput", x, nn.lib.from_numpy(t, "Long"), out, True, None, tw, -1)
    assert (cunn.numpy(out) == 8.0).all()
