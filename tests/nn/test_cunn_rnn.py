"""THCUNN's fused GRU and LSTM cells on the device against the host THNN on the same values and
layouts (the host cells are checked against PyTorch in test_rnn.py): every output of both passes,
with and without biases, batched and unbatched states, strided operands, LSTM's gates rewritten
in place, an output aliasing an input, and refused calls that leave outputs alone.

Run on the CPU emulator: TH_CUDA_EMULATOR=1 TH_LIB=$PWD/target/emu/libth.so .venv/bin/python -m
pytest -q tests/nn/test_cunn_*.py (skipped without a device)."""

import numpy as np
import pytest
from cunnlib import HOST, NP, REALS, agree, exact, half_round
from thlib import THError


class Side:
    def __init__(self, fam, real, cunn):
        self.fam, self.real, self.dev = fam, real, fam is cunn
        self.typ = NP[real] if self.dev else (np.float32 if real == "Float" else np.float64)

    def t(self, a):
        return None if a is None else self.fam.tensor(self.real, np.asarray(a).astype(self.typ))

    def empty(self):
        return self.fam.empty(self.real)

    def call(self, fn, *args):
        self.fam.call(self.real, fn, *args)

    def read(self, t):
        return (self.fam.numpy(t) if self.dev else t.numpy()).astype(np.float64)


def sides(nn, cunn, real):
    return Side(cunn, real, cunn), Side(nn, HOST[real], cunn)


def stored(real, a):
    """A device output as the Half reference reads it back (rounded to half between passes)."""
    return half_round(a) if real == "CudaHalf" else a


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("biases", [(True, True), (False, True), (False, False)], ids=str)
@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 6)], ids=str)
def test_gru(nn, cunn, rng, real, biases, shape):
    h = shape[-1]
    gs = shape[:-1] + (3 * h,)
    x, hid, hx = (exact(real, rng.standard_normal(s)) for s in (gs, gs, shape))
    b1 = exact(real, rng.standard_normal(3 * h)) if biases[0] else None
    b2 = exact(real, rng.standard_normal(3 * h)) if biases[1] else None
    go = exact(real, rng.standard_normal(shape))
    res = []
    for s in sides(nn, cunn, real):
        hy, st = s.empty(), s.empty()
        s.call("GRUFused_updateOutput", s.t(x), s.t(hid), s.t(b1), s.t(b2), s.t(hx), hy, st)
        y, sv = s.read(hy), s.read(st)
        gi, gh, ghx = s.empty(), s.empty(), s.empty()
        s.call("GRUFused_updateGradInput", gi, gh, s.t(go), ghx, s.t(stored(real, sv)))
        res.append((y, sv, s.read(gi), s.read(gh), s.read(ghx)))
    for got, want in zip(*res):
        agree(got, want, real)


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("biases", [(True, True), (True, False), (False, False)], ids=str)
@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 6)], ids=str)
def test_lstm(nn, cunn, rng, real, biases, shape):
    h = shape[-1]
    gs = shape[:-1] + (4 * h,)
    x, hid, cx = (exact(real, rng.standard_normal(s)) for s in (gs, gs, shape))
    b1 = exact(real, rng.standard_normal(4 * h)) if biases[0] else None
    b2 = exact(real, rng.standard_normal(4 * h)) if biases[1] else None
    go, goc = exact(real, rng.standard_normal(shape)), exact(real, rng.standard_normal(shape))
    res = []
    for s in sides(nn, cunn, real):
        xt, hy, cy = s.t(x), s.empty(), s.empty()
        s.call("LSTMFused_updateOutput", xt, s.t(hid), s.t(b1), s.t(b2), s.t(cx), hy, cy)
        gates, y, c = s.read(xt), s.read(hy), s.read(cy)
        gg, gcx = s.empty(), s.empty()
        s.call("LSTMFused_updateGradInput", s.t(stored(real, gates)), gg, s.t(cx), s.t(stored(real, c)), s.t(go),
               s.t(goc), gcx)
        res.append((gates, y, c, s.read(gg), s.read(gcx)))
    for got, want in zip(*res):
        agree(got, want, real)


def test_strided_and_aliased(nn, cunn, rng):
    real = "CudaDouble"
    h = 5
    x = rng.standard_normal((3 * h, 4)).T  # 4 rows of 3H, strided
    hid = rng.standard_normal((4, 3 * h))
    hx = rng.standard_normal((h, 4)).T
    b2 = rng.standard_normal((3 * h, 2))[:, 1]
    res = []
    for s in sides(nn, cunn, real):
        hy, st = s.empty(), s.empty()
        s.call("GRUFused_updateOutput", s.t(x), s.t(hid), None, s.t(b2), s.t(hx), hy, st)
        res.append((s.read(hy), s.read(st)))
    for got, want in zip(*res):
        agree(got, want, real)
    # LSTM with strided gates rewritten in place, and hy written over cx's tensor
    g = rng.standard_normal((4 * h, 3)).T
    hid = rng.standard_normal((3, 4 * h))
    cx = rng.standard_normal((3, h))
    res = []
    for s in sides(nn, cunn, real):
        xt, c0, cy = s.t(g), s.t(cx), s.empty()
        s.call("LSTMFused_updateOutput", xt, s.t(hid), None, None, c0, c0, cy)
        res.append((s.read(xt), s.read(c0), s.read(cy)))
    for got, want in zip(*res):
        agree(got, want, real)


def test_errors_leave_outputs(nn, cunn, rng):
    real = "Cuda"
    h = 4
    x, hid, hx = rng.standard_normal((2, 3 * h)), rng.standard_normal((2, 3 * h)), rng.standard_normal((2, h))
    hy, st = cunn.tensor(real, np.full((2, h), 7.0)), cunn.tensor(real, np.full((2, 5 * h), 7.0))
    with pytest.raises(THError) as e:  # hidden of the wrong size
        cunn.call(real, "GRUFused_updateOutput", x, hid[:, :-1], None, None, hx, hy, st)
    assert "hidden" in e.value.msg
    with pytest.raises(THError) as e:  # a bias of the wrong size
        cunn.call(real, "GRUFused_updateOutput", x, hid, np.zeros(3 * h + 1), None, hx, hy, st)
    assert "bias1" in e.value.msg
    with pytest.raises(THError):  # a host tensor among device ones
        cunn.call(real, "GRUFused_updateOutput", x, hid, None, None, nn.tensor("Float", hx.astype(np.float32)), hy, st)
    assert (cunn.numpy(hy) == 7.0).all() and (cunn.numpy(st) == 7.0).all()
