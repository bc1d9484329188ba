"""THNN GRUFused and LSTMFused (THCUNN's fused pointwise kernels, on the CPU) against the cell
formulas written with torch ops (float64, gradients through autograd; torch has no CPU
_thnn_fused_*_cell), finite differences of th's own forward, and errors that leave outputs
alone."""

import numpy as np
import pytest
import torch
from nnlib import NP, close, fd_grad
from thlib import THError

REALS = ["Float", "Double"]


def cast(a, real):
    return np.asarray(a).astype(NP[real]).astype(np.float64)


def T(a, grad=False):
    return torch.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


def gates(x, h, k):
    """x, reshaped to rows of k*h (h = hidden size), split into its k gates."""
    return x.reshape(-1, k * h).split(h, dim=1)


def gru_ref(i, hid, b1, b2, hx):
    hsz = hx.shape[-1]
    b1 = b1 if b1 is not None else torch.zeros(3 * hsz, dtype=torch.float64)
    b2 = b2 if b2 is not None else torch.zeros(3 * hsz, dtype=torch.float64)
    ir, iz, i_n = gates(i, hsz, 3)
    hr, hz, hn = gates(hid, hsz, 3)
    b1r, b1z, b1n = b1.split(hsz)
    b2r, b2z, b2n = b2.split(hsz)
    r = torch.sigmoid(ir + hr + b1r + b2r)
    z = torch.sigmoid(iz + hz + b1z + b2z)
    n = torch.tanh(i_n + b1n + r * (hn + b2n))
    h2 = hx.reshape(-1, hsz)
    hy = n + z * (h2 - n)
    storage = torch.cat([r, z, n, h2, hn + b2n], dim=1)
    return hy.reshape(hx.shape), storage


def lstm_ref(i, hid, b1, b2, cx):
    hsz = cx.shape[-1]
    g = i.reshape(-1, 4 * hsz) + hid.reshape(-1, 4 * hsz)
    if b1 is not None:
        g = g + b1
    if b2 is not None:
        g = g + b2
    gi, gf, gc, go = g.split(hsz, dim=1)
    ig, fg, cg, og = torch.sigmoid(gi), torch.sigmoid(gf), torch.tanh(gc), torch.sigmoid(go)
    cy = fg * cx.reshape(-1, hsz) + ig * cg
    hy = og * torch.tanh(cy)
    return hy.reshape(cx.shape), cy.reshape(cx.shape), torch.cat([ig, fg, cg, og], dim=1)


def run_gru(nn, real, i, hid, b1, b2, hx):
    hy, st = nn.empty(real), nn.empty(real)
    f = lambda a: None if a is None else np.asarray(a).astype(NP[real])  # noqa: E731
    nn.call(real, "GRUFused_updateOutput", f(i), f(hid), f(b1), f(b2), f(hx), hy, st)
    return hy, st


def run_lstm(nn, real, i, hid, b1, b2, cx):
    gates_t = nn.tensor(real, np.asarray(i).astype(NP[real]))
    hy, cy = nn.empty(real), nn.empty(real)
    f = lambda a: None if a is None else np.asarray(a).astype(NP[real])  # noqa: E731
    nn.call(real, "LSTMFused_updateOutput", gates_t, f(hid), f(b1), f(b2), f(cx), hy, cy)
    return gates_t, hy, cy


SHAPES = [(1, 1), (3, 4), (2, 7), (5,)]


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("bias", ["both", "none", "first"])
def test_gru_against_torch(nn, rng, real, shape, bias):
    h = shape[-1]
    gshape = shape[:-1] + (3 * h,)
    i, hid = cast(rng.standard_normal(gshape), real), cast(rng.standard_normal(gshape), real)
    hx = cast(rng.standard_normal(shape), real)
    b1 = cast(rng.standard_normal(3 * h), real) if bias != "none" else None
    b2 = cast(rng.standard_normal(3 * h), real) if bias == "both" else None
    gout = cast(rng.standard_normal(shape), real)
    hy, st = run_gru(nn, real, i, hid, b1, b2, hx)
    ti, th_, thx = T(i, True), T(hid, True), T(hx, True)
    want, want_st = gru_ref(ti, th_, None if b1 is None else T(b1), None if b2 is None else T(b2), thx)
    close(hy.numpy(), want.detach().numpy(), real)
    close(st.numpy().reshape(want_st.shape), want_st.detach().numpy(), real, scale=4.0)
    assert st.numpy().shape == shape[:-1] + (5 * h,)
    want.backward(T(gout))
    gi, gh, ghx = nn.empty(real), nn.empty(real), nn.empty(real)
    nn.call(real, "GRUFused_updateGradInput", gi, gh, gout.astype(NP[real]), ghx, st)
    close(gi.numpy(), ti.grad.numpy(), real)
    close(gh.numpy(), th_.grad.numpy(), real)
    close(ghx.numpy(), thx.grad.numpy(), real)
    assert gi.numpy().shape == gshape and ghx.numpy().shape == shape


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("bias", [True, False])
def test_lstm_against_torch(nn, rng, real, shape, bias):
    h = shape[-1]
    gshape = shape[:-1] + (4 * h,)
    i, hid = cast(rng.standard_normal(gshape), real), cast(rng.standard_normal(gshape), real)
    cx = cast(rng.standard_normal(shape), real)
    b1 = cast(rng.standard_normal(4 * h), real) if bias else None
    b2 = cast(rng.standard_normal(4 * h), real) if bias else None
    gout, goutc = cast(rng.standard_normal(shape), real), cast(rng.standard_normal(shape), real)
    storage, hy, cy = run_lstm(nn, real, i, hid, b1, b2, cx)
    ti, tcx = T(i, True), T(cx, True)
    whye, wcy, wst = lstm_ref(ti, T(hid), None if b1 is None else T(b1), None if b2 is None else T(b2), tcx)
    close(hy.numpy(), whye.detach().numpy(), real)
    close(cy.numpy(), wcy.detach().numpy(), real, scale=4.0)
    close(storage.numpy().reshape(wst.shape), wst.detach().numpy(), real)  # input now holds the gates
    torch.autograd.backward([whye, wcy], [T(gout), T(goutc)])
    gg, gcx = nn.empty(real), nn.empty(real)
    nn.call(real, "LSTMFused_updateGradInput", storage, gg, cx.astype(NP[real]), cy, gout.astype(NP[real]),
            goutc.astype(NP[real]), gcx)
    close(gg.numpy(), ti.grad.numpy(), real, scale=4.0)
    close(gcx.numpy(), tcx.grad.numpy(), real, scale=4.0)
    assert gg.numpy().shape == gshape and gcx.numpy().shape == shape


def test_gru_non_contiguous_and_fd(nn, rng):
    real = "Double"
    i = rng.standard_normal((9, 3)).T  # 3 x 9 transposed
    hid = rng.standard_normal((3, 18))[:, ::2]
    hx = rng.standard_normal((3, 3))
    b1, b2 = rng.standard_normal(9), rng.standard_normal(18)[1::2]
    gout = rng.standard_normal((3, 3))
    hy, st = run_gru(nn, real, i, hid, b1, b2, hx)
    want, _ = gru_ref(T(i), T(hid), T(b1), T(b2), T(hx))
    close(hy.numpy(), want.numpy(), real)
    gi, gh, ghx = nn.empty(real), nn.empty(real), nn.empty(real)
    nn.call(real, "GRUFused_updateGradInput", gi, gh, gout, ghx, st)
    loss = lambda a, b, c: float(np.sum(run_gru(nn, real, a, b, b1, b2, c)[0].numpy() * gout))  # noqa: E731
    i, hid = np.ascontiguousarray(i), np.ascontiguousarray(hid)  # fd_grad perturbs C-ordered arrays
    close(gi.numpy(), fd_grad(lambda v: loss(v, hid, hx), i), real, tol=1e-7)
    close(gh.numpy(), fd_grad(lambda v: loss(i, v, hx), hid), real, tol=1e-7)
    close(ghx.numpy(), fd_grad(lambda v: loss(i, hid, v), hx), real, tol=1e-7)
    # outputs with another shape are resized; a large batch runs in parallel pieces
    big = rng.standard_normal((300, 24))
    hy2, st2 = nn.tensor(real, np.zeros(3)), nn.tensor(real, np.zeros((2, 2)))
    nn.call(real, "GRUFused_updateOutput", big, big, None, None, big[:, :8], hy2, st2)
    close(hy2.numpy(), gru_ref(T(big), T(big), None, None, T(big[:, :8]))[0].numpy(), real)


def test_lstm_non_contiguous_and_fd(nn, rng):
    real = "Double"
    i = rng.standard_normal((8, 3)).T
    hid = rng.standard_normal((3, 8))
    cx = rng.standard_normal((3, 4))[:, ::2]
    b1, b2 = rng.standard_normal(8), rng.standard_normal(8)
    gout, goutc = rng.standard_normal((3, 2)), rng.standard_normal((3, 2))
    storage, hy, cy = run_lstm(nn, real, i, hid, b1, b2, cx)
    whye, wcy, _ = lstm_ref(T(i), T(hid), T(b1), T(b2), T(cx))
    close(hy.numpy(), whye.numpy(), real)
    close(cy.numpy(), wcy.numpy(), real)
    gg, gcx = nn.empty(real), nn.empty(real)
    nn.call(real, "LSTMFused_updateGradInput", storage, gg, cx, cy, gout, goutc, gcx)

    def loss(a, c):
        _, y, cn = run_lstm(nn, real, a, hid, b1, b2, c)
        return float(np.sum(y.numpy() * gout) + np.sum(cn.numpy() * goutc))

    i, cx = np.ascontiguousarray(i), np.ascontiguousarray(cx)
    close(gg.numpy(), fd_grad(lambda v: loss(v, cx), i), real, tol=1e-7)
    close(gcx.numpy(), fd_grad(lambda v: loss(i, v), cx), real, tol=1e-7)
    # a strided input is updated in place through its view
    base = rng.standard_normal((3, 16))
    it = nn.tensor(real, base[:, ::2])
    hy2, cy2 = nn.empty(real), nn.empty(real)
    nn.call(real, "LSTMFused_updateOutput", it, hid, None, None, cx, hy2, cy2)
    _, _, wst = lstm_ref(T(base[:, ::2]), T(hid), None, None, T(cx))
    close(it.numpy(), wst.numpy(), real)


def test_rnn_errors(nn, rng):
    real = "Float"
    f32 = lambda *s: np.zeros(s, np.float32)  # noqa: E731
    hy, st = nn.tensor(real, np.full(2, 7.0)), nn.tensor(real, np.full(2, 7.0))
    with pytest.raises(THError, match=r"THNN_FloatGRUFused_updateOutput: argument 2 \(input\)"):
        nn.call(real, "GRUFused_updateOutput", f32(2, 8), f32(2, 9), None, None, f32(2, 3), hy, st)
    with pytest.raises(THError, match=r"argument 3 \(hidden\)"):
        nn.call(real, "GRUFused_updateOutput", f32(2, 9), f32(2, 6), None, None, f32(2, 3), hy, st)
    with pytest.raises(THError, match=r"argument 5 \(bias2\)"):
        nn.call(real, "GRUFused_updateOutput", f32(2, 9), f32(2, 9), f32(9), f32(8), f32(2, 3), hy, st)
    with pytest.raises(THError, match=r"argument 6 \(THFloatTensor\) is NULL"):
        nn.call(real, "GRUFused_updateOutput", f32(2, 9), f32(2, 9), None, None, None, hy, st)
    with pytest.raises(THError, match=r"GRUFused_updateGradInput: argument 6 \(storage\)"):
        nn.call(real, "GRUFused_updateGradInput", hy, st, f32(2, 3), nn.empty(real), f32(2, 14))
    assert (hy.numpy() == 7).all() and (st.numpy() == 7).all()
    gates_t = nn.tensor(real, np.full((2, 8), 3.0))
    with pytest.raises(THError, match=r"LSTMFused_updateOutput: argument 4 \(bias1\)"):
        nn.call(real, "LSTMFused_updateOutput", gates_t, f32(2, 8), f32(7), None, f32(2, 2), hy, st)
    with pytest.raises(THError, match=r"LSTMFused_updateOutput: argument 2 \(input\)"):
        nn.call(real, "LSTMFused_updateOutput", gates_t, f32(2, 8), None, None, f32(2, 3), hy, st)
    assert (gates_t.numpy() == 3).all() and (hy.numpy() == 7).all()
    with pytest.raises(THError, match=r"LSTMFused_updateGradInput: argument 5 \(cy\)"):
        nn.call(real, "LSTMFused_updateGradInput", f32(2, 8), hy, f32(2, 2), f32(2, 3), f32(2, 2), f32(2, 2), st)
    with pytest.raises(THError, match=r"LSTMFused_updateGradInput: argument 7 \(gradOutputCell\)"):
        nn.call(real, "LSTMFused_updateGradInput", f32(2, 8), hy, f32(2, 2), f32(2, 2), f32(2, 2), f32(3), st)
    assert (hy.numpy() == 7).all() and (st.numpy() == 7).all()
