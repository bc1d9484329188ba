"""THNN LookupTable, IndexLinear and SparseLinear (all indices 0-based) against torch (float64:
F.embedding's gradient and renorm, F.embedding_bag + bias, dense matmul of the sparse input),
finite differences of th's own forward, naive loops for the update functions, and errors that
leave outputs alone."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from nnlib import NP, close, fd_grad
from thlib import THError

REALS = ["Float", "Double"]


def cast(a, real):
    """a rounded to the real's precision, as float64 (the reference's input)."""
    return np.asarray(a).astype(NP[real]).astype(np.float64)


def T(a):
    return torch.tensor(np.asarray(a, dtype=np.float64))


# ---------------------------------------------------------------- LookupTable


def lookup_grad(nn, real, idx, gout, gw0, freq, pad, scale, count=None):
    gw = nn.tensor(real, gw0)
    nn.call(real, "LookupTable_accGradParameters", idx, gout.astype(NP[real]), gw, count, None, None, freq, pad, scale)
    return gw.numpy()


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("shape", [(1,), (7,), (3, 4)])
@pytest.mark.parametrize("pad", [None, 2])
@pytest.mark.parametrize("freq", [False, True])
def test_lookup_acc_grad_against_torch(nn, rng, real, shape, pad, freq):
    n_index, dim = 6, 5
    idx = rng.integers(0, n_index, size=shape)
    idx.reshape(-1)[0] = 2  # the padding row occurs at least once
    gout = cast(rng.standard_normal(shape + (dim,)), real)
    gw0 = cast(rng.standard_normal((n_index, dim)), real)
    count = nn.empty("Int")
    got = lookup_grad(nn, real, idx, gout, gw0.astype(NP[real]), freq, -1 if pad is None else pad, 0.5, count)
    w = torch.zeros(n_index, dim, dtype=torch.float64, requires_grad=True)
    F.embedding(torch.tensor(idx), w, padding_idx=pad, scale_grad_by_freq=freq).backward(T(gout))
    close(got, gw0 + 0.5 * w.grad.numpy(), real, scale=4.0)
    if freq:
        assert (count.numpy() == np.bincount(idx.reshape(-1), minlength=n_index)).all()


def test_lookup_acc_grad_non_contiguous_and_fd(nn, rng):
    real = "Double"
    idx = rng.integers(0, 4, size=(5, 3)).T  # 3 x 5 transposed view
    gout = rng.standard_normal((5, 3, 6)).transpose(1, 0, 2)  # 3 x 5 x 6, strided
    got = lookup_grad(nn, real, idx, gout, np.zeros((4, 6)), False, -1, 1.0)
    # the forward is weight[idx] (an index_select done by the caller): its gradient by differences
    f = lambda w: float(np.sum(w[idx] * gout))  # noqa: E731
    close(got, fd_grad(f, rng.standard_normal((4, 6))), real, tol=1e-7)
    big = rng.integers(0, 50, size=3000)  # large enough to run in parallel pieces
    go = rng.standard_normal((3000, 8))
    want = np.zeros((50, 8))
    np.add.at(want, big, go / np.bincount(big, minlength=50)[big][:, None])
    close(lookup_grad(nn, real, big, go, np.zeros((50, 8)), True, -1, 1.0), want, real)


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("norm_type", [1.0, 2.0, 3.5])
def test_lookup_renorm_against_torch(nn, rng, real, norm_type):
    w0 = cast(rng.standard_normal((7, 5)) * 2, real)
    idx = np.array([4, 1, 4, 0, 6, 1], dtype=np.int64)
    w = nn.tensor(real, w0.astype(NP[real]))
    ti = nn.tensor("Long", idx)
    nn.call(real, "LookupTable_renorm", ti, w, 1.5, norm_type)
    ref = T(w0)
    torch.embedding_renorm_(ref, torch.tensor(idx), 1.5, norm_type)
    close(w.numpy(), ref.numpy(), real)
    assert (ti.numpy() == idx).all()  # torch7 sorts idx in place; th leaves it alone
    # F.embedding(max_norm=) renormalizes the looked-up rows the same way
    w2 = T(w0)
    F.embedding(torch.tensor(idx), w2, max_norm=1.5, norm_type=norm_type)
    close(w.numpy(), w2.numpy(), real)


def test_lookup_renorm_non_contiguous(nn, rng):
    w0 = rng.standard_normal((5, 7)) * 3
    w = nn.tensor("Double", w0.T)  # 7 x 5, transposed
    nn.call("Double", "LookupTable_renorm", np.array([0, 6, 3]), w, 1.0, 2.0)
    ref = T(w0.T.copy())
    torch.embedding_renorm_(ref, torch.tensor([0, 6, 3]), 1.0, 2.0)
    close(w.numpy(), ref.numpy(), "Double")


def test_lookup_errors(nn, rng):
    real = "Float"
    gw = nn.tensor(real, np.ones((4, 3), np.float32))
    go = np.zeros((2, 3), np.float32)
    with pytest.raises(THError, match=r"THNN_FloatLookupTable_accGradParameters: argument 2 \(input\).*is 4, out of range"):
        nn.call(real, "LookupTable_accGradParameters", np.array([1, 4]), go, gw, None, None, None, False, -1, 1.0)
    with pytest.raises(THError, match=r"argument 2 \(input\).*-1"):
        nn.call(real, "LookupTable_accGradParameters", np.array([-1, 0]), go, gw, None, None, None, False, -1, 1.0)
    with pytest.raises(THError, match=r"argument 3 \(gradOutput\)"):
        nn.call(real, "LookupTable_accGradParameters", np.array([1, 2]), np.zeros((2, 4), np.float32), gw, None, None, None,
                False, -1, 1.0)
    with pytest.raises(THError, match=r"argument 4 \(gradWeight\)"):
        nn.call(real, "LookupTable_accGradParameters", np.array([1, 2]), go, np.zeros(12, np.float32), None, None, None,
                False, -1, 1.0)
    assert (gw.numpy() == 1).all()
    w = nn.tensor(real, np.full((4, 3), 5.0, np.float32))
    with pytest.raises(THError, match=r"THNN_FloatLookupTable_renorm: argument 2 \(idx\)"):
        nn.call(real, "LookupTable_renorm", np.array([0, 9]), w, 1.0, 2.0)
    with pytest.raises(THError, match=r"argument 5 \(normType\)"):
        nn.call(real, "LookupTable_renorm", np.array([0]), w, 1.0, 0.0)
    assert (w.numpy() == 5).all()


# ---------------------------------------------------------------- IndexLinear


def make_bag(rng, sizes, in_size, offset):
    sizes = np.asarray(sizes, dtype=np.int64)
    n = int(sizes.sum())
    keys = rng.integers(0, in_size, size=n) - offset  # key + offset is the 0-based row
    values = rng.standard_normal(n)
    return keys, values, sizes, np.cumsum(sizes)


def il_forward(nn, real, keys, off, values, sizes, cum, w, b, train=0, nv=None):
    out = nn.empty(real)
    nn.call(real, "IndexLinear_updateOutput", keys, off, values.astype(NP[real]), sizes, cum, out, w, b, nv, train)
    return out.numpy()


def densify(keys, off, gw, in_size):
    d = np.zeros((in_size, gw.shape[1]))
    np.add.at(d, keys + off, gw)
    return d


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("out_dim", [1, 5])
@pytest.mark.parametrize("off", [0, 3])
def test_index_linear_against_torch(nn, rng, real, out_dim, off):
    in_size = 7
    keys, values, sizes, cum = make_bag(rng, [3, 0, 1, 4], in_size, off)
    values = cast(values, real)
    w = cast(rng.standard_normal((in_size, out_dim)), real)
    b = cast(rng.standard_normal(out_dim), real)
    gout = cast(rng.standard_normal((4, out_dim)), real)
    got = il_forward(nn, real, keys, off, values, sizes, cum, w.astype(NP[real]), b.astype(NP[real]))
    tw, tb = T(w).requires_grad_(), T(b).requires_grad_()
    offsets = torch.tensor(np.concatenate([[0], cum[:-1]]))
    y = F.embedding_bag(torch.tensor(keys + off), tw, offsets, mode="sum", per_sample_weights=T(values)) + tb
    y.backward(T(gout))
    close(got, y.detach().numpy(), real, scale=4.0)
    # accGradParameters: one gradient row per key (dense per pair), gradBias accumulated
    gw, gb0 = nn.empty(real), rng.standard_normal(out_dim)
    gb = nn.tensor(real, gb0)
    nn.call(real, "IndexLinear_accGradParameters", keys, off, values.astype(NP[real]), sizes, cum, gout.astype(NP[real]),
            gw, gb, w.astype(NP[real]), b.astype(NP[real]), None, 0.0, 0.5)
    assert gw.numpy().shape == (len(keys), out_dim)
    close(densify(keys, off, gw.numpy(), in_size), 0.5 * tw.grad.numpy(), real, scale=4.0)
    close(gb.numpy(), gb0 + 0.5 * tb.grad.numpy(), real, scale=4.0)
    # updateParameters applies it: weight -= lr * gradWeight, bias -= lr * gradBias
    w1, b1 = nn.tensor(real, w), nn.tensor(real, b)
    nn.call(real, "IndexLinear_updateParameters", gw, gb, w1, b1, keys, cum, off, 0.0, 0.1)
    close(w1.numpy(), w - 0.05 * tw.grad.numpy(), real, scale=4.0)
    close(b1.numpy(), b - 0.1 * gb.numpy(), real, scale=4.0)
    # accUpdateGradParameters: the same step in one go
    w2, b2 = nn.tensor(real, w), nn.tensor(real, b)
    nn.call(real, "IndexLinear_accUpdateGradParameters", keys, off, values.astype(NP[real]), sizes, cum,
            gout.astype(NP[real]), w2, b2, 0.0, 0.5)
    close(w2.numpy(), w - 0.5 * tw.grad.numpy(), real, scale=4.0)
    close(b2.numpy(), b - 0.5 * tb.grad.numpy(), real, scale=4.0)


def ref_decay_steps(w, b, keys, off, values, sizes, gout, wd, scale):
    """accUpdateGradParameters without max-normalization, pair by pair."""
    w, b = w.copy(), b.copy()
    i = 0
    for j, s in enumerate(sizes):
        b -= scale * gout[j]
        for _ in range(s):
            r = keys[i] + off
            w[r] -= wd * w[r]
            w[r] -= values[i] * scale * gout[j]
            i += 1
    return w, b


def test_index_linear_weight_decay_and_non_contiguous(nn, rng):
    real = "Double"
    keys, values, sizes, cum = make_bag(rng, [2, 3, 2], 5, 1)
    keys[1] = keys[0]  # a repeated key within a sample
    w = rng.standard_normal((4, 5)).T  # 5 x 4, transposed
    b = rng.standard_normal(8)[::2]
    gout = rng.standard_normal((4, 3)).T
    w2, b2 = nn.tensor(real, w), nn.tensor(real, b)
    nn.call(real, "IndexLinear_accUpdateGradParameters", keys, 1, values, sizes, cum, gout, w2, b2, 0.1, 0.7)
    ww, wb = ref_decay_steps(w, b, keys, 1, values, sizes, gout, 0.1, 0.7)
    close(w2.numpy(), ww, real)
    close(b2.numpy(), wb, real)
    # updateParameters with decay: key by key, w -= wd * w then w -= lr * g
    gw = rng.standard_normal((len(keys), 4))
    gb = rng.standard_normal(4)
    w3, b3 = nn.tensor(real, w), nn.tensor(real, b)
    nn.call(real, "IndexLinear_updateParameters", gw, gb, w3, b3, keys, None, 1, 0.2, 0.3)
    want = w.copy()
    for i, k in enumerate(keys):
        want[k + 1] -= 0.2 * want[k + 1]
        want[k + 1] -= 0.3 * gw[i]
    close(w3.numpy(), want, real)
    close(b3.numpy(), b - 0.3 * gb, real)
    # forward with non-contiguous values and weight
    vals = np.repeat(values, 2)[::2]
    got = il_forward(nn, real, keys, 1, vals, sizes, cum, w, b)
    want = np.stack([b + sum(values[i] * w[keys[i] + 1] for i in range(s0, s1))
                     for s0, s1 in zip(np.concatenate([[0], cum[:-1]]), cum)])
    close(got, want, real)


def test_index_linear_finite_differences(nn, rng):
    real = "Double"
    keys, values, sizes, cum = make_bag(rng, [2, 1, 3], 4, 0)
    w, b = rng.standard_normal((4, 3)), rng.standard_normal(3)
    gout = rng.standard_normal((3, 3))
    f = lambda w_: float(np.sum(il_forward(nn, real, keys, 0, values, sizes, cum, w_, b) * gout))  # noqa: E731
    gw, gb = nn.empty(real), nn.tensor(real, np.zeros(3))
    nn.call(real, "IndexLinear_accGradParameters", keys, 0, values, sizes, cum, gout, gw, gb, w, b, None, 0.0, 1.0)
    close(densify(keys, 0, gw.numpy(), 4), fd_grad(f, w), real, tol=1e-7)
    fb = lambda b_: float(np.sum(il_forward(nn, real, keys, 0, values, sizes, cum, w, b_) * gout))  # noqa: E731
    close(gb.numpy(), fd_grad(fb, b), real, tol=1e-7)


class MaxNormRef:
    """torch7's max-normalized IndexLinear (weight rows: maxAbs, 1/maxAbs, lr scale, key bias,
    weights), written as plain loops."""

    @staticmethod
    def normalize(v, st):
        a = abs(v)
        return (np.sign(v) if a > st[0] else v * st[1]) + st[3]

    @classmethod
    def forward(cls, w, b, keys, off, values, sizes, train):
        w = w.copy()
        od = len(b)
        out, nv, i = np.tile(b, (len(sizes), 1)), np.zeros(len(keys)), 0
        for j, s in enumerate(sizes):
            for _ in range(s):
                r = keys[i] + off
                if train:
                    if abs(values[i]) > w[r, 0]:
                        w[r, 0], w[r, 1] = abs(values[i]), 1 / abs(values[i])
                    w[r, 2] = 1
                nv[i] = cls.normalize(values[i], w[r])
                out[j] += nv[i] * w[r, 4:4 + od]
                i += 1
        return out, nv, w

    @staticmethod
    def acc_update(w, b, keys, off, nv, sizes, gout, wd, scale):
        w, b, i = w.copy(), b.copy(), 0
        for j, s in enumerate(sizes):
            b -= scale * gout[j]
            for _ in range(s):
                r = keys[i] + off
                lr = w[r, 2]
                w[r, 3] -= lr * scale * np.dot(w[r, 4:], gout[j])
                w[r, 4:] -= wd * lr * w[r, 4:]
                w[r, 4:] -= nv[i] * scale * lr * gout[j]
                i += 1
        return w, b

    @staticmethod
    def update(w, b, keys, off, gw, gb, wd, lr):
        w, od = w.copy(), len(b)
        for i, k in enumerate(keys):
            r = k + off
            s = w[r, 2]
            w[r, 3] -= lr * s * np.dot(gw[i, :od], w[r, 4:])
            w[r, 4:] -= wd * s * w[r, 4:]
            w[r, 4:] -= lr * s * gw[i, od:]
        return w, b - lr * gb


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("out_dim", [1, 3])
def test_index_linear_max_normalized(nn, rng, real, out_dim):
    in_size, off = 5, 0
    keys, values, sizes, cum = make_bag(rng, [3, 2, 4], in_size, off)
    keys[3] = keys[0]  # repeated key: the running max matters
    values = cast(values * 3, real)
    w0 = cast(rng.standard_normal((in_size, 4 + out_dim)), real)
    w0[:, 0], w0[:, 1], w0[:, 2] = 0.5, 2.0, 0.25
    b = cast(rng.standard_normal(out_dim), real)
    gout = cast(rng.standard_normal((3, out_dim)), real)
    for train in (0, 1):
        w, nv = nn.tensor(real, w0), nn.tensor(real, np.zeros(2))
        got = il_forward(nn, real, keys, off, values, sizes, cum, w, b.astype(NP[real]), train, nv)
        ref_out, ref_nv, ref_w = MaxNormRef.forward(w0, b, keys, off, values, sizes, train)
        close(got, ref_out, real, scale=8.0)
        close(nv.numpy(), ref_nv, real, scale=4.0)
        close(w.numpy(), ref_w, real, scale=4.0)
    # accGradParameters: rows [scale * gradOutput, scale * value * gradOutput]
    gw, gb = nn.empty(real), nn.tensor(real, np.zeros(out_dim))
    nn.call(real, "IndexLinear_accGradParameters", keys, off, ref_nv.astype(NP[real]), sizes, cum, gout.astype(NP[real]),
            gw, gb, ref_w.astype(NP[real]), b.astype(NP[real]), None, 0.0, 0.5)
    samp = np.repeat(np.arange(3), sizes)
    want = np.concatenate([0.5 * gout[samp], 0.5 * ref_nv[:, None] * gout[samp]], axis=1)
    close(gw.numpy(), want, real, scale=8.0)
    close(gb.numpy(), 0.5 * gout.sum(0), real, scale=4.0)
    # updateParameters and accUpdateGradParameters, with weight decay
    w1, b1 = nn.tensor(real, ref_w), nn.tensor(real, b)
    nn.call(real, "IndexLinear_updateParameters", gw, gb, w1, b1, keys, cum, off, 0.1, 0.3)
    ww, wb = MaxNormRef.update(ref_w, b, keys, off, gw.numpy().astype(np.float64), gb.numpy().astype(np.float64), 0.1, 0.3)
    close(w1.numpy(), ww, real, scale=8.0)
    close(b1.numpy(), wb, real, scale=4.0)
    w2, b2 = nn.tensor(real, w0), nn.tensor(real, b)
    nn.call(real, "IndexLinear_accUpdateGradParameters", keys, off, ref_nv.astype(NP[real]), sizes, cum,
            gout.astype(NP[real]), w2, b2, 0.1, 0.5)
    ww, wb = MaxNormRef.acc_update(w0, b, keys, off, ref_nv, sizes, gout, 0.1, 0.5)
    close(w2.numpy(), ww, real, scale=8.0)
    close(b2.numpy(), wb, real, scale=4.0)


def test_index_linear_max_normalized_fd(nn, rng):
    """With train=0 the output's gradient in the weights and key biases matches what
    accGradParameters stores (the key bias's gradient being gradWeight's head . weights)."""
    real = "Double"
    keys, values, sizes, cum = make_bag(rng, [2, 3], 4, 0)
    w0 = rng.standard_normal((4, 6))
    w0[:, 0], w0[:, 1] = 10.0, 0.1
    b = rng.standard_normal(2)
    gout = rng.standard_normal((2, 2))
    f = lambda w_: float(np.sum(il_forward(nn, real, keys, 0, values, sizes, cum, w_, b, 0, None) * gout))  # noqa: E731
    fd = fd_grad(f, w0)
    nv = nn.tensor(real, np.zeros(1))
    il_forward(nn, real, keys, 0, values, sizes, cum, w0, b, 0, nv)
    gw, gb = nn.empty(real), nn.tensor(real, np.zeros(2))
    nn.call(real, "IndexLinear_accGradParameters", keys, 0, nv.numpy(), sizes, cum, gout, gw, gb, w0, b, None, 0.0, 1.0)
    g = gw.numpy()
    close(densify(keys, 0, g[:, 2:], 4), fd[:, 4:], real, tol=1e-7)
    key_bias = np.zeros(4)
    np.add.at(key_bias, keys, np.sum(g[:, :2] * w0[keys, 4:], axis=1))
    close(key_bias, fd[:, 3], real, tol=1e-7)


def test_index_linear_errors(nn, rng):
    real = "Float"
    keys, values, sizes, cum = make_bag(rng, [2, 2], 4, 0)
    values = values.astype(np.float32)
    w, b = np.zeros((4, 3), np.float32), np.zeros(3, np.float32)
    out = nn.tensor(real, np.full((2, 2), 7.0))
    call = lambda *a: nn.call(real, "IndexLinear_updateOutput", *a)  # noqa: E731
    with pytest.raises(THError, match=r"THNN_FloatIndexLinear_updateOutput: argument 2 \(keys\).*keysOffset"):
        call(np.array([0, 1, 2, 4]), 0, values, sizes, cum, out, w, b, None, 0)
    with pytest.raises(THError, match=r"argument 2 \(keys\)"):
        call(keys, -3, values, sizes, cum, out, w, b, None, 0)
    with pytest.raises(THError, match=r"argument 4 \(values\)"):
        call(keys, 0, values[:3], sizes, cum, out, w, b, None, 0)
    with pytest.raises(THError, match=r"argument 5 \(sizes\)"):
        call(keys, 0, values, np.array([2, 1]), np.array([2, 3]), out, w, b, None, 0)
    with pytest.raises(THError, match=r"argument 6 \(cumSumSizes\)"):
        call(keys, 0, values, sizes, np.array([2, 3]), out, w, b, None, 0)
    with pytest.raises(THError, match=r"argument 8 \(weight\)"):
        call(keys, 0, values, sizes, cum, out, np.zeros((4, 5), np.float32), b, None, 0)
    assert (out.numpy() == 7.0).all() and out.numpy().shape == (2, 2)
    wt, bt = nn.tensor(real, np.ones((4, 3))), nn.tensor(real, np.ones(3))
    with pytest.raises(THError, match=r"IndexLinear_accUpdateGradParameters: argument 7 \(gradOutput\)"):
        nn.call(real, "IndexLinear_accUpdateGradParameters", keys, 0, values, sizes, cum, np.zeros((3, 3), np.float32),
                wt, bt, 0.0, 1.0)
    with pytest.raises(THError, match=r"IndexLinear_updateParameters: argument 6 \(runningKeys\).*9"):
        nn.call(real, "IndexLinear_updateParameters", np.zeros((2, 3), np.float32), np.zeros(3, np.float32), wt, bt,
                np.array([0, 9]), None, 0, 0.0, 1.0)
    with pytest.raises(THError, match=r"IndexLinear_updateParameters: argument 2 \(gradWeight\)"):
        nn.call(real, "IndexLinear_updateParameters", np.zeros((3, 3), np.float32), np.zeros(3, np.float32), wt, bt,
                np.array([0, 1]), None, 0, 0.0, 1.0)
    assert (wt.numpy() == 1).all() and (bt.numpy() == 1).all()
    gw, gb = nn.tensor(real, np.ones(2)), nn.tensor(real, np.ones(3))
    with pytest.raises(THError, match=r"IndexLinear_accGradParameters: argument 9 \(gradBias\)"):
        nn.call(real, "IndexLinear_accGradParameters", keys, 0, values, sizes, cum, np.zeros((2, 3), np.float32), gw,
                nn.tensor(real, np.ones(2)), w, b, None, 0.0, 1.0)
    assert (gw.numpy() == 1).all() and (gb.numpy() == 1).all()


# ---------------------------------------------------------------- SparseLinear


def make_coo(rng, batch, in_dim, nnz):
    rows = rng.integers(0, batch, size=nnz)
    cols = rng.integers(0, in_dim, size=nnz)
    vals = rng.standard_normal(nnz)
    vals[0] = 0.0  # a stored zero
    rows[1], cols[1] = rows[2], cols[2]  # a duplicate (row, feature): summed
    return np.stack([rows, cols, vals], axis=1)


def coo_dense(x, batch, in_dim):
    d = np.zeros((batch, in_dim))
    np.add.at(d, (x[:, 0].astype(int), x[:, 1].astype(int)), x[:, 2])
    return d


def legacy_dense(x, in_dim):
    d = np.zeros((x.shape[0], in_dim))
    for h in range(x.shape[0]):
        np.add.at(d[h], x[h, :, 0].astype(int), x[h, :, 1])
    return d


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("legacy", [False, True])
@pytest.mark.parametrize("dims", [(1, 1, 1), (4, 7, 3), (3, 5, 13)])
def test_sparse_linear_against_torch(nn, rng, real, legacy, dims):
    batch, in_dim, out_dim = dims
    pfx = "SparseLinear_legacy" if legacy else "SparseLinear_"
    if legacy:
        x = np.stack([rng.integers(0, in_dim, size=(batch, 3)), rng.standard_normal((batch, 3))], axis=2).astype(np.float64)
        dense = legacy_dense(cast(x, real), in_dim)
    else:
        x = make_coo(rng, batch, in_dim, 6)
        x[rng.permutation(len(x))] = x.copy()  # any order
        dense = coo_dense(cast(x, real), batch, in_dim)
    w = cast(rng.standard_normal((out_dim, in_dim)), real)
    b = cast(rng.standard_normal(out_dim), real)
    gout = cast(rng.standard_normal((batch, out_dim)), real)
    out = nn.empty(real) if legacy else nn.tensor(real, np.zeros((batch, out_dim)))
    nn.call(real, pfx + ("UpdateOutput" if legacy else "updateOutput"), x.astype(NP[real]), out, w.astype(NP[real]),
            b.astype(NP[real]))
    tw, tb = T(w).requires_grad_(), T(b).requires_grad_()
    y = torch.sparse.addmm(tb.expand(batch, out_dim), T(dense).to_sparse(), tw.t())
    y.backward(T(gout))
    close(out.numpy(), y.detach().numpy(), real, scale=8.0)
    gw0, gb0 = rng.standard_normal((out_dim, in_dim)), rng.standard_normal(out_dim)
    gw, gb = nn.tensor(real, gw0), nn.tensor(real, gb0)
    nn.call(real, pfx + ("AccGradParameters" if legacy else "accGradParameters"), x.astype(NP[real]), gout.astype(NP[real]),
            gw, gb, w.astype(NP[real]), b.astype(NP[real]), 0.1, 0.5)
    close(gw.numpy(), gw0 + 0.5 * tw.grad.numpy() + 0.1 * w, real, scale=8.0)
    close(gb.numpy(), gb0 + 0.5 * tb.grad.numpy(), real, scale=8.0)


def touched_cols(x, legacy):
    if legacy:
        return sorted({int(c) for c, v in x.reshape(-1, 2) if v != 0})
    return sorted({int(c) for _, c, v in x if v != 0})


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("legacy", [False, True])
def test_sparse_linear_zero_and_update(nn, rng, real, legacy):
    out_dim, in_dim = 3, 8
    if legacy:
        x = np.stack([rng.integers(0, in_dim, size=(2, 3)), rng.standard_normal((2, 3))], axis=2).astype(np.float64)
        x[0, 0, 1] = 0.0  # not touched through this entry
    else:
        x = make_coo(rng, 3, in_dim, 5)
    cols = touched_cols(x, legacy)
    assert 0 < len(cols) < in_dim
    gw0, gb0 = rng.standard_normal((out_dim, in_dim)), rng.standard_normal(out_dim)
    gw, gb = nn.tensor(real, gw0), nn.tensor(real, gb0)
    nn.call(real, "SparseLinear_" + ("legacyZeroGradParameters" if legacy else "zeroGradParameters"), gw, gb,
            x.astype(NP[real]))
    want = cast(gw0, real)
    want[:, cols] = 0
    close(gw.numpy(), want, real)
    assert (gb.numpy() == 0).all()
    w0, b0 = rng.standard_normal((out_dim, in_dim)), rng.standard_normal(out_dim)
    w, b = nn.tensor(real, w0), nn.tensor(real, b0)
    nn.call(real, "SparseLinear_" + ("legacyUpdateParameters" if legacy else "updateParameters"), w, b,
            gw0.astype(NP[real]), gb0.astype(NP[real]), x.astype(NP[real]), 0.3)
    want = w0.copy()
    for c in cols:
        for o in range(out_dim):
            want[o, c] -= 0.3 * gw0[o, c]
    close(w.numpy(), want, real, scale=4.0)
    close(b.numpy(), b0 - 0.3 * gb0, real, scale=4.0)
    # no non-zero entry: the bias still takes its step
    b = nn.tensor(real, b0)
    empty = np.zeros((0, 3)) if not legacy else np.array([[[1, 0.0]]])  # (TH keeps no 1 x 0 x 2 shape)
    nn.call(real, "SparseLinear_" + ("legacyUpdateParameters" if legacy else "updateParameters"), w, b,
            gw0.astype(NP[real]), gb0.astype(NP[real]), empty.astype(NP[real]), 0.3)
    close(b.numpy(), b0 - 0.3 * gb0, real, scale=4.0)


def test_sparse_linear_inferred_batch_non_contiguous_fd(nn, rng):
    real = "Double"
    x = make_coo(rng, 4, 6, 7)
    x[0, 0] = 3  # the largest row is 3 -> batch 4
    xt = np.asfortranarray(x)  # column-major: strided rows
    w, b = rng.standard_normal((6, 5)).T, rng.standard_normal(5)
    out = nn.empty(real)
    nn.call(real, "SparseLinear_updateOutput", xt, out, w, b)
    close(out.numpy(), coo_dense(x, 4, 6) @ w.T + b, real)
    gout = rng.standard_normal((4, 5))

    def f(w_):
        o = nn.empty(real)
        nn.call(real, "SparseLinear_updateOutput", x, o, w_, b)
        return float(np.sum(o.numpy() * gout))

    gw, gb = nn.tensor(real, np.zeros((5, 6))), nn.tensor(real, np.zeros(5))
    nn.call(real, "SparseLinear_accGradParameters", x, gout, gw, gb, w, None, 0.0, 1.0)
    close(gw.numpy(), fd_grad(f, np.ascontiguousarray(w)), real, tol=1e-7)  # fd_grad needs C order
    # a vector gradOutput is one sample
    x1 = x[x[:, 0] == 0]
    gw1 = nn.tensor(real, np.zeros((5, 6)))
    nn.call(real, "SparseLinear_accGradParameters", x1, gout[0], gw1, nn.tensor(real, np.zeros(5)), w, None, 0.0, 1.0)
    close(gw1.numpy(), np.outer(gout[0], coo_dense(x1, 1, 6)[0]), real)
    # large enough for parallel pieces
    xb = make_coo(rng, 64, 40, 3000)
    wb = rng.standard_normal((30, 40))
    ob = nn.tensor(real, np.zeros((64, 30)))
    nn.call(real, "SparseLinear_updateOutput", xb, ob, wb, np.zeros(30))
    close(ob.numpy(), coo_dense(xb, 64, 40) @ wb.T, real, scale=50.0)


def test_sparse_linear_errors(nn, rng):
    real = "Float"
    w, b = np.zeros((3, 4), np.float32), np.zeros(3, np.float32)
    out = nn.tensor(real, np.full((2, 3), 7.0))
    fwd = lambda x, w_=w, b_=b: nn.call(real, "SparseLinear_updateOutput", np.asarray(x, np.float32), out, w_, b_)  # noqa: E731
    with pytest.raises(THError, match=r"THNN_FloatSparseLinear_updateOutput: argument 2 \(input\).*feature 4"):
        fwd([[0, 1, 1.0], [1, 4, 2.0]])
    with pytest.raises(THError, match=r"argument 2 \(input\).*feature 1.5"):
        fwd([[0, 1.5, 1.0]])
    with pytest.raises(THError, match=r"argument 2 \(input\).*row 2"):
        fwd([[2, 1, 1.0]])
    with pytest.raises(THError, match=r"argument 2 \(input\).*nnz x 3"):
        fwd([[0, 1]])
    with pytest.raises(THError, match=r"argument 5 \(bias\)"):
        fwd([[0, 1, 1.0]], b_=np.zeros(4, np.float32))
    assert (out.numpy() == 7.0).all() and out.numpy().shape == (2, 3)
    with pytest.raises(THError, match=r"SparseLinear_legacyUpdateOutput: argument 2 \(input\).*feature -1"):
        nn.call(real, "SparseLinear_legacyUpdateOutput", np.array([[[-1, 1.0]]], np.float32), out, w, b)
    assert (out.numpy() == 7.0).all()
    gw, gb = nn.tensor(real, np.ones((3, 4))), nn.tensor(real, np.ones(3))
    x = np.array([[0, 1, 1.0]], np.float32)
    with pytest.raises(THError, match=r"SparseLinear_accGradParameters: argument 4 \(gradWeight\)"):
        nn.call(real, "SparseLinear_accGradParameters", x, np.zeros((1, 3), np.float32), nn.tensor(real, np.ones((4, 3))),
                gb, w, None, 0.0, 1.0)
    with pytest.raises(THError, match=r"argument 3 \(gradOutput\)"):
        nn.call(real, "SparseLinear_accGradParameters", x, np.zeros((1, 2), np.float32), gw, gb, w, None, 0.0, 1.0)
    with pytest.raises(THError, match=r"argument 2 \(input\).*row 1"):
        nn.call(real, "SparseLinear_accGradParameters", np.array([[1, 1, 1.0]], np.float32), np.zeros((1, 3), np.float32),
                gw, gb, w, None, 0.0, 1.0)
    with pytest.raises(THError, match=r"SparseLinear_zeroGradParameters: argument 4 \(lastInput\)"):
        nn.call(real, "SparseLinear_zeroGradParameters", gw, gb, np.array([[0, 9, 1.0]], np.float32))
    with pytest.raises(THError, match=r"SparseLinear_legacyUpdateParameters: argument 6 \(lastInput\)"):
        nn.call(real, "SparseLinear_legacyUpdateParameters", gw, gb, w, b, np.array([[0, 1.0]], np.float32), 1.0)
    assert (gw.numpy() == 1).all() and (gb.numpy() == 1).all()
