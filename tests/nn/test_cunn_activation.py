"""THCUNN's elementwise activations on the device (THNN_Cuda*, THNN_CudaDouble*, THNN_CudaHalf*)
against the host THNN on the same values and layouts (the host layers are checked against
PyTorch in test_activation.py): forward and backward, contiguous and strided operands, the
inplace flags, and errors that leave outputs alone.

Run on the CPU emulator: TH_CUDA_EMULATOR=1 TH_LIB=$PWD/target/emu/libth.so .venv/bin/python -m
pytest -q tests/nn/test_cunn_*.py (skipped without a device)."""

import numpy as np
import pytest
from cunnlib import HOST, NP, REALS, Cunn, agree, exact, half_round
from thlib import THError


class Mod:
    """An elementwise module: `fa(o, ip)` the forward's arguments after the input, `ba(x, g, gi,
    o, ip)` the backward's, the input domain. Scalar options are exact in half precision, so
    CudaHalf and its Float reference take the same values."""

    def __init__(self, name, fa, ba, inplace=False, positive=False):
        self.name, self.fa, self.ba, self.inplace, self.positive = name, fa, ba, inplace, positive

    def __repr__(self):
        return self.name


MODS = [
    Mod("Abs", lambda o, ip: (o,), lambda x, g, gi, o, ip: (x, g, gi)),
    Mod("ELU", lambda o, ip: (o, 0.75, ip), lambda x, g, gi, o, ip: (x, g, gi, o, 0.75, ip), inplace=True),
    Mod("HardTanh", lambda o, ip: (o, -0.625, 0.8125, ip), lambda x, g, gi, o, ip: (x, g, gi, -0.625, 0.8125, ip),
        inplace=True),
    Mod("LeakyReLU", lambda o, ip: (o, 0.125, ip), lambda x, g, gi, o, ip: (x, g, gi, 0.125, ip), inplace=True),
    Mod("LogSigmoid", lambda o, ip: (o, None), lambda x, g, gi, o, ip: (x, g, gi, None)),
    # RReLU in evaluation: the slope (lower + upper) / 2 (training draws slopes: test_rrelu_training)
    Mod("RReLU", lambda o, ip: (o, None, 0.125, 0.375, False, ip, None),
        lambda x, g, gi, o, ip: (x, g, gi, None, 0.125, 0.375, False, ip), inplace=True),
    Mod("Sigmoid", lambda o, ip: (o,), lambda x, g, gi, o, ip: (x, g, gi, o)),
    Mod("SoftPlus", lambda o, ip: (o, 1.5, 2.0), lambda x, g, gi, o, ip: (x, g, gi, o, 1.5, 2.0)),
    Mod("SoftShrink", lambda o, ip: (o, 0.375), lambda x, g, gi, o, ip: (x, g, gi, 0.375)),
    Mod("Sqrt", lambda o, ip: (o, 1e-3), lambda x, g, gi, o, ip: (x, g, gi, o), positive=True),
    Mod("Square", lambda o, ip: (o,), lambda x, g, gi, o, ip: (x, g, gi)),
    Mod("Tanh", lambda o, ip: (o,), lambda x, g, gi, o, ip: (x, g, gi, o)),
    Mod("Threshold", lambda o, ip: (o, 0.25, -0.5, ip), lambda x, g, gi, o, ip: (x, g, gi, 0.25, -0.5, ip),
        inplace=True),
]


class Side:
    """One interface over the host THNN (`nn`) and THCUNN (`cunn`)."""

    def __init__(self, fam, real):
        self.fam, self.real = fam, real

    def tensor(self, a):
        return self.fam.tensor(self.real, a)

    def empty(self):
        return self.fam.empty(self.real)

    def call(self, fn, *args):
        self.fam.call(self.real, fn, *args)

    def numpy(self, t):
        return self.fam.numpy(t) if isinstance(self.fam, Cunn) else t.numpy()


def run(side, m, x, gout, inplace=False, stored=None):
    """Forward and backward of `m` on one side: (output, gradInput, input after, gradOutput after).
    `stored`: how the output is stored between the passes (the Half reference rounds it)."""
    xt, out, gt, gin = side.tensor(x), side.empty(), side.tensor(gout), side.empty()
    side.call(f"{m.name}_updateOutput", xt, *m.fa(out, inplace))
    y = side.numpy(out)
    if stored is not None:
        out = side.tensor(stored(y).astype(y.dtype))
        if inplace:
            xt = side.tensor(stored(y).astype(y.dtype))
    side.call(f"{m.name}_updateGradInput", *m.ba(xt, gt, gin, out, inplace))
    return y, side.numpy(gin), side.numpy(xt), side.numpy(gt)


def sample(rng, real, shape, positive=False):
    """Values exact in `real` (half-rounded for CudaHalf), as float64; some exactly 0 and at the
    options' thresholds, where the branches meet."""
    x = rng.standard_normal(shape) * 2.0
    if positive:
        x = np.abs(x) + 0.1
    flat = x.reshape(-1)
    if not positive and flat.size > 4:
        flat[:4] = [0.0, 0.25, -0.625, 0.375]
    x = flat.reshape(shape)
    return half_round(x) if real == "CudaHalf" else x.astype(NP[real]).astype(np.float64)


def both(nn, cunn, real, m, x, gout, inplace=False):
    dev = run(Side(cunn, real), m, x.astype(NP[real]), gout.astype(NP[real]), inplace)
    host_real = HOST[real]
    t = np.float32 if host_real == "Float" else np.float64
    stored = half_round if real == "CudaHalf" else None
    host = run(Side(nn, host_real), m, x.astype(t), gout.astype(t), inplace, stored)
    return dev, host


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("m", MODS, ids=repr)
@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 3, 33)])
def test_against_host(nn, cunn, rng, real, m, shape):
    x = sample(rng, real, shape, m.positive)
    gout = sample(rng, real, shape)
    (y, gi, _, _), (hy, hgi, _, _) = both(nn, cunn, real, m, x, gout)
    agree(y, hy, real)
    agree(gi, hgi, real)


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("m", MODS, ids=repr)
def test_strided(nn, cunn, rng, real, m):
    x = sample(rng, real, (6, 5), m.positive).T  # 5 x 6, transposed
    gout = sample(rng, real, (5, 12))[:, ::2]  # 5 x 6, every other column
    (y, gi, _, _), (hy, hgi, _, _) = both(nn, cunn, real, m, x, gout)
    agree(y, hy, real)
    agree(gi, hgi, real)


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("m", [m for m in MODS if m.inplace], ids=repr)
def test_inplace(nn, cunn, rng, real, m):
    x = sample(rng, real, (4, 9))
    gout = sample(rng, real, (4, 9))
    (y, gi, xa, ga), (hy, hgi, hxa, hga) = both(nn, cunn, real, m, x, gout, inplace=True)
    agree(y, hy, real)
    agree(xa, hxa, real)  # the input was overwritten
    agree(gi, hgi, real)
    agree(ga, hga, real)  # and gradOutput


def test_gradient_pairs_by_count(nn, cunn, rng):
    # gradOutput with another shape but as many elements pairs in row-major order (torch7's
    # rule); a strided one is copied on the device first
    real = "CudaDouble"
    x = sample(rng, real, (3, 4))
    g = sample(rng, real, (6, 4))[::2].reshape(-1)[:12]
    g_strided = sample(rng, real, (24,))[::2]
    for gv in (g, g_strided):
        gin = cunn.empty(real)
        cunn.call(real, "Threshold_updateGradInput", x, gv, gin, 0.0, 0.0, False)
        agree(cunn.numpy(gin), np.where(x > 0, gv.reshape(3, 4), 0.0), real)


def test_errors_leave_outputs(nn, cunn, rng):
    real = "Cuda"
    x = sample(rng, real, (3, 4))
    gin = cunn.tensor(real, np.full((2, 2), 7.0))
    with pytest.raises(THError) as e:
        cunn.call(real, "Tanh_updateGradInput", x, sample(rng, real, (4, 3)), gin, x)
    assert "THNN_CudaTanh_updateGradInput" in e.value.msg and "gradOutput" in e.value.msg
    assert (cunn.numpy(gin) == 7.0).all()
    # a host tensor where a device one is expected
    host = nn.tensor("Float", x.astype(np.float32))
    out = cunn.tensor(real, np.full((3,), 5.0))
    with pytest.raises(THError):
        cunn.call(real, "Sigmoid_updateOutput", host, out)
    assert (cunn.numpy(out) == 5.0).all()


# Lines shorter than 32 run a thread each; longer rows (unit steps), and long lines when few,
# a block each (blocks of 64 and 512 threads here: (4, 37), (3, 700), (2, 3000); strided:
# (50, 2, 3), (2, 40, 3, 4)).
SHAPES = [(9,), (4, 37), (5, 3, 2), (2, 6, 3, 4), (3, 700), (2, 3000), (50, 2, 3), (2, 40, 3, 4)]


def softmax_pair(nn, cunn, real, name, x, g, strided=False):
    """Forward and backward of SoftMax/LogSoftMax on both sides; the backward takes the output as
    each side stored it (rounded to half on the device for CudaHalf)."""
    res = []
    for fam, r in ((cunn, real), (nn, HOST[real])):
        side = Side(fam, r)
        t = NP[real] if fam is cunn else (np.float32 if r == "Float" else np.float64)
        xv = x.astype(t)
        gv = g.astype(t)
        if strided:
            xv, gv = xv.T, gv.T
        out, gin = side.empty(), side.empty()
        side.call(f"{name}_updateOutput", side.tensor(xv), out)
        y = side.numpy(out)
        if fam is nn and real == "CudaHalf":
            out = side.tensor(half_round(y).astype(y.dtype))
        side.call(f"{name}_updateGradInput", side.tensor(xv), side.tensor(gv), gin, out)
        res.append((y, side.numpy(gin)))
    return res


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("name", ["SoftMax", "LogSoftMax"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_softmax_against_host(nn, cunn, rng, real, name, shape):
    x = exact(real, sample(rng, real, shape) * 3.0)
    g = sample(rng, real, shape)
    (y, gi), (hy, hgi) = softmax_pair(nn, cunn, real, name, x, g)
    # the device sums a line in order, the host in 16 lanes: a few more ulps over long lines
    agree(y, hy, real, ulps=64)
    agree(gi, hgi, real, ulps=64)


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("name", ["SoftMax", "LogSoftMax"])
@pytest.mark.parametrize("shape", [(7, 5), (40, 3)], ids=str)
def test_softmax_strided_and_in_place(nn, cunn, rng, real, name, shape):
    x = exact(real, sample(rng, real, shape) * 3.0)  # used transposed: rows a stride apart
    g = sample(rng, real, shape)
    (y, gi), (hy, hgi) = softmax_pair(nn, cunn, real, name, x, g, strided=True)
    agree(y, hy, real, ulps=64)
    agree(gi, hgi, real, ulps=64)
    # the output may be the input itself (rows read whole before they are written; 3 x 40: a
    # block per row)
    xc = np.ascontiguousarray(x.T)
    xt = cunn.tensor(real, xc)
    cunn.call(real, f"{name}_updateOutput", xt, xt)
    out = cunn.empty(real)
    cunn.call(real, f"{name}_updateOutput", cunn.tensor(real, xc), out)
    assert np.array_equal(cunn.numpy(xt), cunn.numpy(out))


def test_softmax_errors_leave_outputs(cunn, rng):
    real = "Cuda"
    out = cunn.tensor(real, np.full((2,), 3.0))
    with pytest.raises(THError) as e:
        cunn.call(real, "SoftMax_updateOutput", np.zeros((2, 2, 2, 2, 2)), out)
    assert "input" in e.value.msg
    assert (cunn.numpy(out) == 3.0).all()
    y = sample(rng, real, (3, 4))
    with pytest.raises(THError):
        cunn.call(real, "LogSoftMax_updateGradInput", y, sample(rng, real, (4, 3)), out, y)
    assert (cunn.numpy(out) == 3.0).all()


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("shape,dim", [((6,), 0), ((3, 8), 1), ((4, 6, 5), 1), ((2, 3, 10), 2)], ids=str)
def test_gated_linear(nn, cunn, rng, real, shape, dim):
    x = sample(rng, real, shape)
    half = list(shape)
    half[dim] //= 2
    g = sample(rng, real, tuple(half))
    res = []
    for fam, r in ((cunn, real), (nn, HOST[real])):
        side, t = Side(fam, r), (NP[real] if fam is cunn else (np.float32 if HOST[real] == "Float" else np.float64))
        out, gin = side.empty(), side.empty()
        side.call("GatedLinear_updateOutput", side.tensor(x.astype(t)), out, dim)
        side.call("GatedLinear_updateGradInput", side.tensor(x.astype(t)), side.tensor(g.astype(t)), gin, dim)
        res.append((side.numpy(out), side.numpy(gin)))
    agree(res[0][0], res[1][0], real)
    agree(res[0][1], res[1][1], real)


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("shape,planes", [((7,), 0), ((4, 5), 5), ((2, 3, 4, 5), 3), ((3, 4, 6), 0), ((6,), 6)],
                         ids=str)
def test_prelu(nn, cunn, rng, real, shape, planes):
    x = sample(rng, real, shape)
    g = sample(rng, real, shape)
    w = exact(real, rng.uniform(-0.5, 0.5, (max(planes, 1),)))
    gw0 = exact(real, rng.uniform(-1, 1, (max(planes, 1),)))
    res = []
    for fam, r in ((cunn, real), (nn, HOST[real])):
        side, t = Side(fam, r), (NP[real] if fam is cunn else (np.float32 if HOST[real] == "Float" else np.float64))
        out, gin, gw = side.empty(), side.empty(), side.tensor(gw0.astype(t))
        xt, gt, wt = side.tensor(x.astype(t)), side.tensor(g.astype(t)), side.tensor(w.astype(t))
        side.call("PReLU_updateOutput", xt, out, wt, planes)
        side.call("PReLU_updateGradInput", xt, gt, gin, wt, planes)
        side.call("PReLU_accGradParameters", xt, gt, gin, wt, gw, None, None, planes, 0.5)
        res.append((side.numpy(out), side.numpy(gin), side.numpy(gw)))
    for d, h in zip(*res):
        agree(d, h, real)


def test_prelu_strided_and_errors(nn, cunn, rng):
    real = "CudaDouble"
    x = sample(rng, real, (5, 4)).T  # 4 x 5, transposed
    g = sample(rng, real, (4, 5))
    w = rng.uniform(-0.5, 0.5, (5,))
    gw = cunn.tensor(real, np.zeros(5))
    out, gin = cunn.empty(real), cunn.empty(real)
    cunn.call(real, "PReLU_updateOutput", x, out, w, 5)
    cunn.call(real, "PReLU_accGradParameters", x, g, gin, w, gw, None, None, 5, 1.0)
    wb = np.broadcast_to(w, (4, 5))
    agree(cunn.numpy(out), np.where(x > 0, x, wb * x), real)
    agree(cunn.numpy(gw), np.sum(np.where(x <= 0, x * g, 0.0), axis=0), real)
    bad = cunn.tensor(real, np.full((3,), 4.0))
    with pytest.raises(THError) as e:  # gradWeight of the wrong size: left alone
        cunn.call(real, "PReLU_accGradParameters", x, g, gin, w, bad, None, None, 5, 1.0)
    assert "gradWeight" in e.value.msg
    assert (cunn.numpy(bad) == 4.0).all()
    with pytest.raises(THError):  # 4 planes where the weight has 5
        cunn.call(real, "PReLU_updateOutput", x.T, bad, w, 5)
    assert (cunn.numpy(bad) == 4.0).all()


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("inplace", [False, True])
def test_rrelu_training(cunn, rng, real, inplace):
    """Training draws the slopes on the device (its own generator; no host reference draws the
    same numbers), so the draw is checked by its properties: slopes in [lower, upper) where
    x <= 0 and 1 elsewhere, roughly uniform; output = x * noise and gradInput = gradOutput *
    noise, each rounded once to the element type."""
    lo, hi = 0.125, 0.375
    x = exact(real, rng.standard_normal((40, 50)))
    x[0, :3] = [0.0, -0.0, 1.0]
    g = exact(real, rng.standard_normal((40, 50)))
    xt, out, noise, gt, gin = cunn.tensor(real, x), cunn.empty(real), cunn.empty(real), cunn.tensor(real, g), cunn.empty(real)
    cunn.call(real, "RReLU_updateOutput", xt, out, noise, lo, hi, True, inplace, None)
    nz = cunn.numpy(noise).astype(np.float64)
    neg = x <= 0
    assert (nz[~neg] == 1.0).all()
    assert ((nz[neg] >= lo) & (nz[neg] < hi)).all()
    assert abs(nz[neg].mean() - (lo + hi) / 2) < 0.02 and nz[neg].std() > 0.05
    want = exact(real, x * nz)
    assert (cunn.numpy(out).astype(np.float64) == want).all()
    if inplace:
        assert (cunn.numpy(xt).astype(np.float64) == want).all()
    cunn.call(real, "RReLU_updateGradInput", cunn.tensor(real, x), gt, gin, noise, lo, hi, True, False)
    assert (cunn.numpy(gin).astype(np.float64) == exact(real, g * nz)).all()
    # lower == upper: every slope is lower
    cunn.call(real, "RReLU_updateOutput", cunn.tensor(real, x), out, noise, 0.25, 0.25, True, False, None)
    nz = cunn.numpy(noise).astype(np.float64)
    assert (nz[neg] == 0.25).all() and (nz[~neg] == 1.0).all()


def test_rrelu_errors_leave_outputs(nn, cunn, rng):
    real = "Cuda"
    x = exact(real, rng.standard_normal((3, 4)))
    out, noise = cunn.tensor(real, np.full((3, 4), 7.0)), cunn.tensor(real, np.full((3, 4), 7.0))
    with pytest.raises(THError) as e:  # lower above upper
        cunn.call(real, "RReLU_updateOutput", x, out, noise, 0.5, 0.25, True, False, None)
    assert "lower" in e.value.msg
    with pytest.raises(THError):  # no noise in training
        cunn.call(real, "RReLU_updateOutput", x, out, None, 0.125, 0.25, True, False, None)
    with pytest.raises(THError):  # a host noise tensor
        cunn.call(real, "RReLU_updateOutput", x, out, nn.tensor("Float", np.zeros((3, 4), np.float32)), 0.125, 0.25,
                  True, False, None)
    assert (cunn.numpy(out) == 7.0).all() and (cunn.numpy(noise) == 7.0).all()
