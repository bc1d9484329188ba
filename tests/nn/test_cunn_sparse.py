"""THCUNN's sparse and index layers on the device against the host THNN on the same values (the
host layers are checked against PyTorch in test_sparse.py).

LookupTable: the weight gradient (repeated rows added in position order, scaleGradByFreq and its
counts, a padding row, 1-D and 2-D inputs, strided gradOutput) and renorm (norm types 1, 2 and 3,
duplicate rows). CudaHalf's gradient is checked against a sequential half-precision loop (each
addition rounded to half, as the device stores gradWeight between them).
LookupTableBag (device only): against PyTorch's embedding_bag in float64 (forward) and its
autograd (gradWeight), sum and mean, an empty bag, scaleGradByFreq; Half against a loop.
SparseLinear (COO and legacy) and IndexLinear (plain and max-normalized, train or not): every
function against THNN, with repeated features/keys, zero values, strided operands, weight decay.
Everywhere: refused calls that leave outputs alone.

Run on the CPU emulator: TH_CUDA_EMULATOR=1 TH_LIB=$PWD/target/emu/libth.so .venv/bin/python -m
pytest -q tests/nn/test_cunn_*.py (skipped without a device)."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from cunnlib import HOST, NP, REALS, agree
from test_cunn_criterion import exact, host_type, long_tensor
from thclib import on_storage, view_values
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


# ---------------------------------------------------------------- LookupTableBag


def strided_long(cunn, a):
    """A 1-D THCudaLongTensor holding `a` with stride 2 (every other element of its storage)."""
    a = np.asarray(a, dtype=np.int64)
    base = np.full(max(2 * a.size, 1), -7, np.int64)
    base[::2][: a.size] = a
    st = cunn.dev.storage("Long", base)
    t = on_storage(cunn.dev, "Long", st, 0, [a.size], [2])
    cunn.dev.free_storage("Long", st)
    return t


def bag_case(rng, n_bags=4, numw=7, dim=5, empty=False):
    """Indices with repeats, offsets (a bag empty when `empty`), and the bag of each position."""
    sizes = rng.integers(1, 4, n_bags)
    if empty:
        sizes[1] = 0
    idx = rng.integers(0, numw, int(sizes.sum()))
    idx[:2] = 3  # a repeated row, in the first bag
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    return idx, offsets, sizes, numw, dim


def bag_forward(cunn, real, idx, offsets, w, mode, strided=False, seq=True):
    lt = strided_long if strided else long_tensor
    out, o2b = cunn.empty(real), cunn.dev.new("Long")
    sl = cunn.dev.new("Long") if seq else None
    cunn.call(real, "LookupTableBag_updateOutput", lt(cunn, idx), lt(cunn, offsets), w, out, o2b, mode, sl)
    return (cunn.numpy(out).astype(np.float64), view_values(cunn.dev, o2b),
            view_values(cunn.dev, sl) if seq else None)


MODES = {0: "sum", 1: "mean"}


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("mode", [0, 1])
@pytest.mark.parametrize("strided", [False, True])
def test_bag_forward(cunn, rng, real, mode, strided):
    idx, offsets, sizes, numw, dim = bag_case(rng, empty=mode == 0)
    w0 = exact(real, rng.standard_normal((numw, dim)))
    w = w0.astype(NP[real])
    if strided:  # a transposed weight
        w = np.ascontiguousarray(w.T).T
    out, o2b, sl = bag_forward(cunn, real, idx, offsets, w, mode, strided)
    want = F.embedding_bag(torch.tensor(idx), torch.tensor(w0), torch.tensor(offsets), mode=MODES[mode]).numpy()
    agree(out, want, real, ulps=2)
    assert np.array_equal(o2b, np.repeat(np.arange(len(sizes)), sizes))
    assert np.array_equal(sl, sizes)


def test_bag_forward_empty_bag_mean(cunn, rng):
    idx, offsets, sizes, numw, dim = bag_case(rng, empty=True)
    w0 = rng.standard_normal((numw, dim))
    out, _, _ = bag_forward(cunn, "CudaDouble", idx, offsets, w0, 1, seq=False)
    want = F.embedding_bag(torch.tensor(idx), torch.tensor(w0), torch.tensor(offsets), mode="mean").numpy()
    agree(out, want, "CudaDouble", ulps=2)
    assert (out[1] == 0).all()


def bag_grad_torch(idx, offsets, go, gw0, mode, by_freq, scale, numw):
    w = torch.zeros(gw0.shape, dtype=torch.float64, requires_grad=True)
    y = F.embedding_bag(torch.tensor(idx), w, torch.tensor(offsets), mode=MODES[mode], scale_grad_by_freq=by_freq)
    y.backward(torch.tensor(go))
    return gw0 + scale * w.grad.numpy()


def bag_grad_half(idx, o2b, sizes, go, gw0, mode, by_freq, scale):
    """The device's Half gradient: the f32 scale over the count, over the bag size and times
    gradOutput in f64, each term rounded to half and added in f32, rounded to half, in order."""
    w = gw0.astype(np.float16)
    counts = np.bincount(idx, minlength=w.shape[0])
    for i, k in enumerate(idx):
        s = np.float32(scale) / np.float32(counts[k]) if by_freq else np.float32(scale)
        f = np.float64(s) / sizes[o2b[i]] if mode == 1 else np.float64(s)
        term = (f * go[o2b[i]].astype(np.float64)).astype(np.float16)
        w[k] = (w[k].astype(np.float32) + term.astype(np.float32)).astype(np.float16)
    return w.astype(np.float64)


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("mode", [0, 1])
@pytest.mark.parametrize("by_freq", [False, True])
def test_bag_acc_grad(cunn, rng, real, mode, by_freq):
    idx, offsets, sizes, numw, dim = bag_case(rng, empty=mode == 0)
    o2b = np.repeat(np.arange(len(sizes)), sizes)
    go = exact(real, rng.standard_normal((len(sizes), dim)))
    gw0 = exact(real, rng.standard_normal((numw, dim)))
    scale = 0.75
    gw, count = cunn.tensor(real, gw0), cunn.dev.new("Long")
    strided = by_freq  # strided index tensors and a transposed gradOutput in half of the cases
    lt = strided_long if strided else long_tensor
    g = np.ascontiguousarray(go.astype(NP[real]).T).T if strided else go.astype(NP[real])
    cunn.call(real, "LookupTableBag_accGradParameters", lt(cunn, idx), g, gw, lt(cunn, o2b), count, None, None,
              by_freq, mode, lt(cunn, sizes), scale)
    got = cunn.numpy(gw).astype(np.float64)
    if real == "CudaHalf":
        assert np.array_equal(got, bag_grad_half(idx, o2b, sizes, go, gw0, mode, by_freq, scale))
    else:
        agree(got, bag_grad_torch(idx, offsets, go, gw0, mode, by_freq, scale, numw), real)
    if by_freq:
        assert np.array_equal(view_values(cunn.dev, count), np.bincount(idx, minlength=numw))


def test_bag_errors_leave_outputs(nn, cunn, rng):
    real = "Cuda"
    w = rng.standard_normal((5, 3))
    out = cunn.tensor(real, np.full((2, 3), 7.0))
    o2b = long_tensor(cunn, [9, 9, 9])

    def fwd(idx, offsets, mode=0, weight=w):
        cunn.call(real, "LookupTableBag_updateOutput", long_tensor(cunn, idx), long_tensor(cunn, offsets), weight, out,
                  o2b, mode, None)

    for args, arg in [(([0, 5, 1], [0, 2]), "input"), (([0, 1, 1], [1, 2]), "offsets"),
                      (([0, 1, 1], [0, 2, 1]), "offsets"), (([0, 1, 1], [0, 4]), "offsets"), (([0, 1, 1], []), "offsets"),
                      (([0, 1, 1], [0, 2], 2), "mode"), (([0, 1, 1], [0, 2], 0, w[0]), "weight")]:
        with pytest.raises(THError) as e:
            fwd(*args)
        assert arg in e.value.msg
    with pytest.raises(THError):  # a host index tensor
        host_idx = nn.lib.from_numpy(np.array([0, 1], np.int64), "Long")
        cunn.call(real, "LookupTableBag_updateOutput", host_idx, long_tensor(cunn, [0]), w, out, o2b, 0, None)
    assert (cunn.numpy(out) == 7.0).all() and np.array_equal(view_values(cunn.dev, o2b), [9, 9, 9])

    gw = cunn.tensor(real, np.full((5, 3), 7.0))
    go = rng.standard_normal((2, 3))

    def bwd(idx, of, mode=0, sl=None, g=go):
        cunn.call(real, "LookupTableBag_accGradParameters", long_tensor(cunn, idx), g, gw, long_tensor(cunn, of), None,
                  None, None, False, mode, None if sl is None else long_tensor(cunn, sl), 1.0)

    for args, arg in [(([0, 5, 1], [0, 0, 1]), "input"), (([0, 1, 1], [0, 2, 1]), "offset2bag"),
                      (([0, 1, 1], [0, 1]), "offset2bag"), (([0, 1, 1], [0, 0, 1], 1), "seq_length"),
                      (([0, 1, 1], [0, 0, 1], 1, [2, 0]), "seq_length"), (([0, 1, 1], [0, 0, 1], 1, [2]), "seq_length"),
                      (([0, 1, 1], [0, 0, 1], 3), "mode"), (([0, 1, 1], [0, 0, 1], 0, None, go[:, :2]), "gradOutput")]:
        with pytest.raises(THError) as e:
            bwd(*args)
        assert arg in e.value.msg
    assert (cunn.numpy(gw) == 7.0).all()



# ---------------------------------------------------------------- SparseLinear (and IndexLinear's helpers)


class Out:
    """An output argument: a new tensor holding `a` (None: an empty tensor) on each side."""

    def __init__(self, a=None):
        self.a = a


class Long:
    """An index argument: a THCudaLongTensor on the device (stride 2 when `strided`), a
    THLongTensor on the host."""

    def __init__(self, a, strided=False):
        self.a, self.strided = np.asarray(a, dtype=np.int64), strided

    def on(self, cunn):
        return strided_long(cunn, self.a) if self.strided else long_tensor(cunn, self.a)


def run_both(nn, cunn, real, fn, *args):
    """`fn` on the device (`real`) and on the host (its HOST real) with the same values; numpy
    arguments are inputs (strides kept), `Out`s outputs. Returns the outputs' values (float64),
    device then host."""
    res = []
    for fam, r in ((cunn, real), (nn, HOST[real])):
        typ = NP[real] if fam is cunn else host_type(real)
        outs, call = [], []
        for a in args:
            if isinstance(a, Out):
                t = fam.empty(r) if a.a is None else fam.tensor(r, exact(real, a.a).astype(typ))
                outs.append(t)
                call.append(t)
            elif isinstance(a, Long):
                call.append(a.on(cunn) if fam is cunn else nn.lib.from_numpy(a.a, "Long"))
            elif isinstance(a, np.ndarray):
                call.append(exact(real, a).astype(typ))
            else:
                call.append(a)
        fam.call(r, fn, *call)
        res.append([(fam.numpy(t) if fam is cunn else t.numpy()).astype(np.float64) for t in outs])
    return res


def coo_input(rng, batch, in_dim, nnz, order="F"):
    """(row, feature, value) triples: unsorted, a repeated (row, feature) pair, a zero value;
    column-major (strided rows) by default."""
    rows = rng.integers(0, batch, nnz)
    cols = rng.integers(0, in_dim, nnz)
    vals = rng.standard_normal(nnz)
    rows[1], cols[1] = rows[0], cols[0]
    vals[2] = 0.0
    x = np.stack([rows, cols, vals], 1).astype(np.float64)
    return np.asfortranarray(x) if order == "F" else x


def legacy_input(rng, batch, in_dim, nnz):
    """batch x nnz x 2 (feature, value) pairs: a repeated feature, a zero value; strided."""
    cols = rng.integers(0, in_dim, (batch, nnz))
    vals = rng.standard_normal((batch, nnz))
    cols[0, 1] = cols[0, 0]
    vals[1, 0] = 0.0
    x = np.stack([cols, vals], 2).astype(np.float64)
    return np.ascontiguousarray(x.transpose(2, 0, 1)).transpose(1, 2, 0)  # strided pairs


SPARSE = {"coo": ("", coo_input), "legacy": ("legacy", legacy_input)}


def sl_fn(fmt, name):
    pre = SPARSE[fmt][0]
    return "SparseLinear_" + (pre + name[0].upper() + name[1:] if pre else name)


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("fmt", ["coo", "legacy"])
@pytest.mark.parametrize("given", [True, False])
def test_sparse_linear_forward(nn, cunn, rng, real, fmt, given):
    batch, in_dim, od = 3, 6, 5
    x = SPARSE[fmt][1](rng, batch, in_dim, 7)
    w = np.asfortranarray(rng.standard_normal((od, in_dim)))
    b = rng.standard_normal(2 * od)[::2]  # a strided bias
    out = Out(np.full((batch, od), 3.0) if given else None)
    (got,), (want,) = run_both(nn, cunn, real, sl_fn(fmt, "updateOutput"), x, out, w, b)
    assert got.shape == (batch, od)
    agree(got, want, real)


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("fmt", ["coo", "legacy"])
@pytest.mark.parametrize("decay", [0.0, 0.1])
def test_sparse_linear_acc_grad(nn, cunn, rng, real, fmt, decay):
    batch, in_dim, od = 4, 6, 3
    x = SPARSE[fmt][1](rng, batch, in_dim, 9)
    go = np.asfortranarray(rng.standard_normal((batch, od)))
    w = rng.standard_normal((od, in_dim))
    gw0, gb0 = rng.standard_normal((od, in_dim)), rng.standard_normal(od)
    got, want = run_both(nn, cunn, real, sl_fn(fmt, "accGradParameters"), x, go, Out(gw0), Out(gb0), w, None, decay,
                         0.5)
    for g, h in zip(got, want):
        agree(g, h, real)


def test_sparse_linear_acc_grad_vector_and_strided_grads(nn, cunn, rng):
    real, in_dim, od = "CudaDouble", 5, 4
    x = coo_input(rng, 1, in_dim, 6)
    go = rng.standard_normal(2 * od)[::2]  # one sample as a strided vector
    gw0 = np.asfortranarray(rng.standard_normal((od, in_dim)))  # a column-major gradWeight
    got, want = run_both(nn, cunn, real, "SparseLinear_accGradParameters", x, go, Out(gw0), Out(np.zeros(od)),
                         rng.standard_normal((od, in_dim)), None, 0.0, 1.0)
    for g, h in zip(got, want):
        agree(g, h, real)


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("fmt", ["coo", "legacy"])
def test_sparse_linear_zero_and_update(nn, cunn, rng, real, fmt):
    batch, in_dim, od = 3, 16, 4  # more features than entries: some columns are left alone
    x = SPARSE[fmt][1](rng, batch, in_dim, 4)
    gw0 = np.asfortranarray(rng.standard_normal((od, in_dim)))
    gb0 = rng.standard_normal(od)
    got, want = run_both(nn, cunn, real, sl_fn(fmt, "zeroGradParameters"), Out(gw0), Out(gb0), x)
    for g, h in zip(got, want):
        agree(g, h, real)
    assert (got[0] == 0).any() and (got[0] != 0).any() and (got[1] == 0).all()
    w0, b0 = np.asfortranarray(rng.standard_normal((od, in_dim))), rng.standard_normal(od)
    got, want = run_both(nn, cunn, real, sl_fn(fmt, "updateParameters"), Out(w0), Out(b0), gw0, gb0, x, 0.25)
    for g, h in zip(got, want):
        agree(g, h, real)


@pytest.mark.parametrize("real", REALS)
def test_sparse_linear_no_entries(nn, cunn, rng, real):
    od, in_dim = 3, 4
    x = np.zeros((0, 3))
    w, b = rng.standard_normal((od, in_dim)), rng.standard_normal(od)
    got, want = run_both(nn, cunn, real, "SparseLinear_updateOutput", x, Out(np.ones((2, od))), w, b)
    agree(got[0], want[0], real)
    assert got[0].shape == (2, od)
    got, want = run_both(nn, cunn, real, "SparseLinear_accGradParameters", x, rng.standard_normal((2, od)),
                         Out(np.ones((od, in_dim))), Out(np.ones(od)), w, None, 0.5, 1.0)
    for g, h in zip(got, want):
        agree(g, h, real)


def test_sparse_linear_errors_leave_outputs(cunn, rng):
    real = "Cuda"
    w, b = np.zeros((3, 4)), np.zeros(3)
    out = cunn.tensor(real, np.full((2, 3), 7.0))
    for x, arg in [([[0, 1, 1.0], [1, 4, 2.0]], "input"), ([[0, 1.5, 1.0]], "input"), ([[2, 1, 1.0]], "input"),
                   ([[0, 1]], "input")]:
        with pytest.raises(THError) as e:
            cunn.call(real, "SparseLinear_updateOutput", np.asarray(x, np.float64), out, w, b)
        assert arg in e.value.msg
    with pytest.raises(THError) as e:
        cunn.call(real, "SparseLinear_updateOutput", np.asarray([[0, 1, 1.0]]), out, w, np.zeros(4))
    assert "bias" in e.value.msg
    assert (cunn.numpy(out) == 7.0).all()
    gw, gb = cunn.tensor(real, np.full((3, 4), 7.0)), cunn.tensor(real, np.full(3, 7.0))
    x = np.asarray([[0, 1, 1.0], [1, 3, 2.0]])
    with pytest.raises(THError) as e:  # the row of an entry beyond gradOutput's batch
        cunn.call(real, "SparseLinear_accGradParameters", x, np.zeros((1, 3)), gw, gb, w, None, 0.0, 1.0)
    assert "input" in e.value.msg
    with pytest.raises(THError) as e:
        cunn.call(real, "SparseLinear_accGradParameters", x, np.zeros((2, 3)), gw, gb, np.zeros((3, 5)), None, 0.0,
                  1.0)
    assert "gradWeight" in e.value.msg
    with pytest.raises(THError) as e:
        cunn.call(real, "SparseLinear_zeroGradParameters", gw, gb, np.asarray([[0, 4, 1.0]]))
    assert "lastInput" in e.value.msg
    with pytest.raises(THError) as e:
        cunn.call(real, "SparseLinear_updateParameters", gw, gb, np.zeros((3, 4)), np.zeros(2), x, 0.1)
    assert "gradBias" in e.value.msg
    assert (cunn.numpy(gw) == 7.0).all() and (cunn.numpy(gb) == 7.0).all()


# ---------------------------------------------------------------- IndexLinear


def il_case(rng, norm, od=3, in_size=4, sizes=(3, 0, 4, 2), off=1):
    """Keys with many repeats (few rows), values (strided, some above the running max), the
    weight (column-major; max-normalized rows start with maxAbs, 1/maxAbs, lr scale, key bias)."""
    sizes = np.asarray(sizes, np.int64)
    n = int(sizes.sum())
    keys = rng.integers(0, in_size, n) - off
    keys[1] = keys[0]
    values = (rng.standard_normal(2 * n) * 0.8)[::2]
    w = rng.standard_normal((in_size, od + (4 if norm else 0)))
    if norm:
        w[:, 0], w[:, 1], w[:, 2] = 0.5, 2.0, 0.25
        w[0, 2] = 0.75
    return keys, off, values, sizes, np.cumsum(sizes), np.asfortranarray(w), rng.standard_normal(od)


IL_MODES = [(False, 0), (True, 0), (True, 1)]


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("norm,train", IL_MODES, ids=["plain", "norm", "norm-train"])
def test_index_linear_forward(nn, cunn, rng, real, norm, train):
    keys, off, values, sizes, cum, w, b = il_case(rng, norm)
    got, want = run_both(nn, cunn, real, "IndexLinear_updateOutput", Long(keys, True), off, values, Long(sizes),
                         Long(cum), Out(), Out(w), b, Out(), train)
    assert got[0].shape == (len(sizes), len(b))
    for g, h in zip(got[: 3 if norm else 2], want):  # normalizedValues: untouched without max-normalization
        agree(g, h, real)
    if norm:
        assert got[2].shape == (len(keys),)
    if train:
        assert not np.array_equal(got[1][:, :4], exact(real, w[:, :4]))  # statistics updated


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("norm", [False, True])
def test_index_linear_acc_grad(nn, cunn, rng, real, norm):
    keys, off, values, sizes, cum, w, b = il_case(rng, norm)
    go = np.asfortranarray(rng.standard_normal((len(sizes), len(b))))
    got, want = run_both(nn, cunn, real, "IndexLinear_accGradParameters", Long(keys), off, values, Long(sizes),
                         Long(cum, True), go, Out(), Out(rng.standard_normal(len(b))), w, b, None, 0.0, 0.5)
    assert got[0].shape == (len(keys), len(b) * (2 if norm else 1))
    for g, h in zip(got, want):
        agree(g, h, real)


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("norm", [False, True])
@pytest.mark.parametrize("decay", [0.0, 0.1])
def test_index_linear_acc_update(nn, cunn, rng, real, norm, decay):
    keys, off, values, sizes, cum, w, b = il_case(rng, norm)
    go = rng.standard_normal((len(sizes), len(b)))
    b0 = rng.standard_normal(2 * len(b))[::2]  # a strided bias
    got, want = run_both(nn, cunn, real, "IndexLinear_accUpdateGradParameters", Long(keys, True), off, values,
                         Long(sizes), Long(cum), go, Out(w), Out(b0), decay, 0.7)
    for g, h in zip(got, want):
        agree(g, h, real)


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("norm", [False, True])
@pytest.mark.parametrize("decay", [0.0, 0.2])
def test_index_linear_update_parameters(nn, cunn, rng, real, norm, decay):
    keys, off, _, sizes, cum, w, b = il_case(rng, norm)
    width = len(b) * (2 if norm else 1)
    gw = np.asfortranarray(rng.standard_normal((len(keys), width)))
    gb = rng.standard_normal(len(b))
    got, want = run_both(nn, cunn, real, "IndexLinear_updateParameters", gw, gb, Out(w), Out(b), Long(keys, True), None,
                         off, decay, 0.3)
    for g, h in zip(got, want):
        agree(g, h, real)


def test_index_linear_errors_leave_outputs(cunn, rng):
    real = "Cuda"
    keys, off, values, sizes, cum, w, b = il_case(rng, True)
    wt, out = cunn.tensor(real, w), cunn.tensor(real, np.full((2, 2), 7.0))
    lt = lambda a: long_tensor(cunn, a)  # noqa: E731

    def fwd(k=keys, c=cum, v=values, bias=b):
        cunn.call(real, "IndexLinear_updateOutput", lt(k), off, v, lt(sizes), lt(c), out, wt, bias, None, 1)

    bad = keys.copy()
    bad[2] = 4  # row 5
    for kw, arg in [(dict(k=bad), "keys"), (dict(c=cum + 1), "cumSumSizes"), (dict(v=values[:-1]), "values"),
                    (dict(bias=np.zeros(5)), "weight")]:
        with pytest.raises(THError) as e:
            fwd(**kw)
        assert arg in e.value.msg
    go = np.zeros((3, 3))
    with pytest.raises(THError) as e:
        cunn.call(real, "IndexLinear_accUpdateGradParameters", lt(keys), off, values, lt(sizes), lt(cum), go, wt,
                  cunn.tensor(real, b), 0.0, 1.0)
    assert "gradOutput" in e.value.msg
    with pytest.raises(THError) as e:
        cunn.call(real, "IndexLinear_updateParameters", np.zeros((len(keys), 6)), np.zeros(3), wt, cunn.tensor(real, b),
                  lt(bad), None, off, 0.0, 0.1)
    assert "runningKeys" in e.value.msg
    assert (cunn.numpy(wt) == w.astype(np.float32)).all() and (cunn.numpy(out) == 7.0).all()
