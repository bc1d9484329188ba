"""THNN criterions against torch.nn.functional (float64, gradients through autograd), L1Cost
against numpy, every updateGradInput against finite differences of th's own forward (Double),
non-contiguous operands, 0-based targets, and errors that leave outputs alone."""

import ctypes as C
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from nnlib import NP, close, fd_grad
from thlib import THError

REALS = ["Float", "Double"]
RED = {True: "mean", False: "sum"}
TH_ERR_INVALID_ARG, TH_ERR_SIZE, TH_ERR_INDEX = 2, 3, 4


def cast(a, real):
    """`a` rounded to `real`'s precision, as float64 (the reference's input)."""
    return np.asarray(a).astype(NP[real]).astype(np.float64)


def t64(a, grad=False):
    return torch.tensor(np.ascontiguousarray(a, dtype=np.float64), dtype=torch.float64, requires_grad=grad)


def torch_loss(fn, x, *rest):
    """(loss, d loss / d x) of fn(x_tensor, *rest) in float64."""
    tx = t64(x, True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loss = fn(tx, *rest)
    loss.backward()
    return loss.item(), tx.grad.numpy()


def scalar_out(out):
    """The value of a criterion's output, checking it is a 1-element 1-D tensor."""
    a = out.numpy()
    assert a.shape == (1,)
    return float(a[0])


# ---------------------------------------------------------------------------------------------
# elementwise criterions: (input, target, output|gradInput, sizeAverage[, extra])

def gen_pair(name, rng, shape):
    x = rng.standard_normal(shape) * 1.5
    if name == "SoftMarginCriterion" or name == "MarginCriterion":
        y = rng.choice([-1.0, 1.0], size=shape)
    elif name == "DistKLDivCriterion":
        x = np.log(rng.uniform(0.05, 1.0, shape))
        y = rng.uniform(0.0, 1.0, shape)
        y[rng.uniform(size=shape) < 0.3] = 0.0
    elif name == "BCECriterion":
        x = rng.uniform(0.02, 0.98, shape)
        y = rng.uniform(0.0, 1.0, shape)
        y[rng.uniform(size=shape) < 0.3] = 1.0
    else:
        y = rng.standard_normal(shape) * 1.5
    return x, y


# name -> (torch reference fn(x, y, extra, reduction), extra values to try)
PAIR = {
    "AbsCriterion": (lambda x, y, e, r: F.l1_loss(x, y, reduction=r), [None]),
    "MSECriterion": (lambda x, y, e, r: F.mse_loss(x, y, reduction=r), [None]),
    "SmoothL1Criterion": (lambda x, y, e, r: F.smooth_l1_loss(x, y, reduction=r), [None]),
    "SoftMarginCriterion": (lambda x, y, e, r: F.soft_margin_loss(x, y, reduction=r), [None]),
    "DistKLDivCriterion": (lambda x, y, e, r: F.kl_div(x, y, reduction=r), [None]),
    "MarginCriterion": (lambda x, y, e, r: F.margin_ranking_loss(x, torch.zeros_like(x), y, margin=e, reduction=r),
                        [1.0, 0.3]),
    "BCECriterion": (lambda x, y, e, r: F.binary_cross_entropy(x, y, weight=e, reduction=r), [None, "w"]),
}


def pair_extra(name, e, x, rng):
    """th's extra argument and torch's for extra value `e`."""
    if name == "BCECriterion":
        if e is None:
            return [None], None
        w = rng.uniform(0.1, 2.0, x.shape)
        return [w], t64(w)
    if e is None:
        return [], None
    return [e], e


def run_pair(nn, real, name, x, y, sa, extra):
    out, gin = nn.empty(real), nn.empty(real)
    nn.call(real, f"{name}_updateOutput", x, y, out, sa, *extra)
    nn.call(real, f"{name}_updateGradInput", x, y, gin, sa, *extra)
    return scalar_out(out), gin.numpy()


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("name", sorted(PAIR))
@pytest.mark.parametrize("shape", [(1,), (7,), (3, 5), (2, 3, 4)])
@pytest.mark.parametrize("sa", [True, False])
def test_pair_against_torch(nn, rng, real, name, shape, sa):
    fn, extras = PAIR[name]
    for e in extras:
        x, y = gen_pair(name, rng, shape)
        x, y = cast(x, real), cast(y, real)
        th_extra, t_extra = pair_extra(name, e, x, rng)
        th_extra = [cast(v, real).astype(NP[real]) if isinstance(v, np.ndarray) else v for v in th_extra]
        if isinstance(t_extra, torch.Tensor):
            t_extra = t64(th_extra[0])
        out, gin = run_pair(nn, real, name, x.astype(NP[real]), y.astype(NP[real]), sa, th_extra)
        want, wgrad = torch_loss(lambda tx: fn(tx, t64(y), t_extra, RED[sa]), x)
        close(out, want, real)
        assert gin.shape == x.shape
        close(gin, wgrad, real)


@pytest.mark.parametrize("name", sorted(PAIR))
def test_pair_non_contiguous_and_reshaped_target(nn, rng, name):
    real = "Double"
    fn, extras = PAIR[name]
    x, y = gen_pair(name, rng, (5, 4))
    xt = x.T  # 4 x 5, transposed view
    yt = y.T.copy().reshape(20)  # same elements, row-major, another shape (torch7 pairs by count)
    th_extra, t_extra = pair_extra(name, extras[-1], xt, rng)
    if isinstance(t_extra, torch.Tensor):
        w = th_extra[0]
        th_extra = [np.ascontiguousarray(w.T).T]  # a strided 4 x 5 view of the same values
        t_extra = t64(w)
    out, gin = run_pair(nn, real, name, xt, yt, True, th_extra)
    want, wgrad = torch_loss(lambda tx: fn(tx, t64(yt.reshape(4, 5)), t_extra, "mean"), xt)
    close(out, want, real)
    close(gin, wgrad, real)


@pytest.mark.parametrize("name", sorted(PAIR))
@pytest.mark.parametrize("sa", [True, False])
def test_pair_finite_differences(nn, rng, name, sa):
    real = "Double"
    _, extras = PAIR[name]
    x, y = gen_pair(name, rng, (3, 4))
    th_extra, _ = pair_extra(name, extras[-1], x, rng)

    def loss(v):
        out = nn.empty(real)
        nn.call(real, f"{name}_updateOutput", v, y, out, sa, *th_extra)
        return scalar_out(out)

    _, gin = run_pair(nn, real, name, x, y, sa, th_extra)
    close(gin, fd_grad(loss, x), real, tol=1e-7)


def test_pair_large_parallel_sum(nn, rng):
    # More elements than one block: the blocked sum and the chunked gradient cover every element.
    real = "Double"
    x, y = rng.standard_normal(40000), rng.standard_normal(40000)
    out, gin = run_pair(nn, real, "MSECriterion", x, y, True, [])
    close(out, np.mean((x - y) ** 2), real)
    close(gin, 2 * (x - y) / x.size, real)


def test_bce_saturated_logs(nn):
    # input 0 and 1 exactly: logarithms clamp at -100 (PyTorch's rule), no inf.
    real = "Double"
    x, y = np.array([0.0, 1.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0, 1.0])
    out, gin = run_pair(nn, real, "BCECriterion", x, y, False, [None])
    close(out, float(F.binary_cross_entropy(t64(x), t64(y), reduction="sum")), real)
    assert out == 200.0 and np.all(np.isfinite(gin))


def test_soft_margin_no_overflow(nn):
    real = "Double"
    x, y = np.array([-800.0, 800.0, 3.0]), np.array([1.0, 1.0, -1.0])
    out, gin = run_pair(nn, real, "SoftMarginCriterion", x, y, False, [])
    close(out, 800.0 + np.log1p(np.exp(3.0)), real)
    close(gin, [-1.0, 0.0, 1 / (1 + np.exp(-3.0))], real)


def test_abs_gradient_at_ties(nn):
    real = "Float"
    x, y = np.array([1.0, 2.0, 3.0], np.float32), np.array([1.0, 1.0, 4.0], np.float32)
    _, gin = run_pair(nn, real, "AbsCriterion", x, y, False, [])
    assert list(gin) == [0.0, 1.0, -1.0]


# ---------------------------------------------------------------------------------------------
# L1Cost

@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("shape", [(1,), (6,), (3, 5), (2, 3, 2)])
def test_l1_cost(nn, rng, real, shape):
    x = cast(rng.standard_normal(shape), real)
    x.reshape(-1)[0] = 0.0
    out, gin = nn.empty(real), nn.empty(real)
    nn.call(real, "L1Cost_updateOutput", x.astype(NP[real]), out)
    close(scalar_out(out), np.sum(np.abs(x)), real)
    nn.call(real, "L1Cost_updateGradInput", x.astype(NP[real]), None, gin)
    assert np.array_equal(gin.numpy(), np.sign(x))
    gin2 = nn.empty(real)
    nn.call(real, "L1Cost_updateGradInput", x.T.astype(NP[real]), np.ones(x.size, NP[real]), gin2)
    assert np.array_equal(gin2.numpy(), np.sign(x.T))


def test_l1_cost_finite_differences(nn, rng):
    real = "Double"
    x = rng.standard_normal((4, 3))  # C order: fd_grad perturbs x.reshape(-1) in place

    def loss(v):
        out = nn.empty(real)
        nn.call(real, "L1Cost_updateOutput", v, out)
        return scalar_out(out)

    gin = nn.empty(real)
    nn.call(real, "L1Cost_updateGradInput", x, None, gin)
    close(gin.numpy(), fd_grad(loss, x), real, tol=1e-7)


# ---------------------------------------------------------------------------------------------
# ClassNLL / SpatialClassNLL

def run_nll(nn, real, x, t, sa, w, ii, spatial=False):
    out, tw, gin = nn.empty(real), nn.empty(real), nn.empty(real)
    name = "SpatialClassNLLCriterion" if spatial else "ClassNLLCriterion"
    extra = [] if spatial else [ii]
    nn.call(real, f"{name}_updateOutput", x, t, out, sa, w, tw, *extra)
    nn.call(real, f"{name}_updateGradInput", x, t, gin, sa, w, tw, *extra)
    return scalar_out(out), scalar_out(tw), gin.numpy()


def torch_nll(x, t, sa, w, ii=-100):
    tw = None if w is None else t64(w)
    tt = torch.tensor(t, dtype=torch.long)
    if x.ndim == 1:
        tt = tt.reshape(())
    return torch_loss(lambda tx: F.nll_loss(tx, tt, weight=tw, ignore_index=ii, reduction=RED[sa]), x)


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("shape", [(5,), (1, 3), (7, 11), (13, 2)])
@pytest.mark.parametrize("sa", [True, False])
@pytest.mark.parametrize("weighted", [True, False])
@pytest.mark.parametrize("ii", [-100, 1])
def test_class_nll_against_torch(nn, rng, real, shape, sa, weighted, ii):
    c = shape[-1]
    x = cast(F.log_softmax(torch.tensor(rng.standard_normal(shape)), -1).numpy(), real)
    n = shape[0] if len(shape) == 2 else 1
    t = rng.integers(0, c, n)
    t[rng.uniform(size=n) < 0.3] = ii if ii >= 0 else -100
    if ii < 0:
        t[t == -100] = -100  # the default ignore_index, never a class
    w = cast(rng.uniform(0.2, 2.0, c), real) if weighted else None
    out, tw, gin = run_nll(nn, real, x.astype(NP[real]), t, sa, None if w is None else w.astype(NP[real]), ii)
    keep = t != ii
    want_tw = float(np.sum(w[t[keep]])) if weighted else float(np.sum(keep))
    close(tw, want_tw, real)
    if not keep.any():
        assert np.isnan(out) if sa else out == 0.0
        assert np.all(gin == 0.0)
        return
    want, wgrad = torch_nll(x, t, sa, w, ii)
    close(out, want, real)
    assert gin.shape == x.shape
    close(gin, wgrad, real)


def test_class_nll_all_ignored_is_nan_like_torch(nn, rng):
    real = "Double"
    x = rng.standard_normal((4, 3))
    t = np.full(4, 2)
    out, tw, gin = run_nll(nn, real, x, t, True, None, 2)
    want, wgrad = torch_nll(x, t, True, None, 2)
    assert np.isnan(out) and np.isnan(want) and tw == 0.0
    assert np.array_equal(gin, wgrad) and np.all(gin == 0.0)
    out, tw, gin = run_nll(nn, real, x, t, False, None, 2)
    assert out == 0.0 and np.all(gin == 0.0)


def test_class_nll_non_contiguous_large(nn, rng):
    # a transposed input, a strided target, and enough rows for several blocks
    real = "Double"
    x = rng.standard_normal((7, 20000)).T  # 20000 x 7
    t = rng.integers(0, 7, 40000)[::2]
    t[:50] = -100
    w = rng.uniform(0.5, 1.5, 14)[::2]
    out, tw, gin = run_nll(nn, real, x, t, True, w, -100)
    want, wgrad = torch_nll(x, t, True, w)
    close(out, want, real)
    close(gin, wgrad, real)


def test_class_nll_gradient_overwrites(nn, rng):
    # gradInput is resized and every element written: stale values in the caller's tensor go.
    real = "Float"
    x = rng.standard_normal((3, 4)).astype(np.float32)
    t = np.array([0, 3, 1])
    out, tw = nn.empty(real), nn.empty(real)
    nn.call(real, "ClassNLLCriterion_updateOutput", x, t, out, False, None, tw, -100)
    gin = nn.tensor(real, np.full((3, 4), 5.0))
    nn.call(real, "ClassNLLCriterion_updateGradInput", x, t, gin, False, None, tw, -100)
    want = np.zeros((3, 4))
    want[np.arange(3), t] = -1.0
    assert np.array_equal(gin.numpy(), want)


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (1, 1, 1, 1), (3, 4, 1, 7)])
@pytest.mark.parametrize("sa", [True, False])
@pytest.mark.parametrize("weighted", [True, False])
def test_spatial_class_nll_against_torch(nn, rng, real, shape, sa, weighted):
    n, c, h, wd = shape
    x = cast(F.log_softmax(torch.tensor(rng.standard_normal(shape)), 1).numpy(), real)
    t = rng.integers(0, c, (n, h, wd))
    w = cast(rng.uniform(0.2, 2.0, c), real) if weighted else None
    out, tw, gin = run_nll(nn, real, x.astype(NP[real]), t, sa, None if w is None else w.astype(NP[real]), None,
                           spatial=True)
    want, wgrad = torch_nll(x, t, sa, w)
    close(out, want, real)
    close(tw, float(np.sum(w[t])) if weighted else float(t.size), real)
    close(gin, wgrad, real)


def test_spatial_class_nll_non_contiguous(nn, rng):
    real = "Double"
    x = rng.standard_normal((2, 5, 4, 3)).transpose(0, 1, 3, 2)  # 2 x 5 x 3 x 4
    t = rng.integers(0, 5, (2, 4, 3)).transpose(0, 2, 1)
    out, tw, gin = run_nll(nn, real, x, t, True, None, None, spatial=True)
    want, wgrad = torch_nll(x, t, True, None)
    close(out, want, real)
    close(gin, wgrad, real)


@pytest.mark.parametrize("spatial", [False, True])
@pytest.mark.parametrize("sa", [True, False])
def test_class_nll_finite_differences(nn, rng, spatial, sa):
    real = "Double"
    shape = (2, 3, 2, 2) if spatial else (4, 5)
    c = shape[1]
    x = rng.standard_normal(shape)
    t = rng.integers(0, c, (2, 2, 2) if spatial else 4)
    w = rng.uniform(0.5, 2.0, c)
    name = "SpatialClassNLLCriterion" if spatial else "ClassNLLCriterion"
    extra = [] if spatial else [-100]

    def loss(v):
        out, tw = nn.empty(real), nn.empty(real)
        nn.call(real, f"{name}_updateOutput", v, t, out, sa, w, tw, *extra)
        return scalar_out(out)

    _, _, gin = run_nll(nn, real, x, t, sa, w, -100, spatial=spatial)
    close(gin, fd_grad(loss, x), real, tol=1e-7)


# ---------------------------------------------------------------------------------------------
# MultiMargin

def torch_multi_margin(x, t, sa, p, w, margin):
    tt = torch.tensor(t, dtype=torch.long)
    x2 = x.reshape(1, -1) if x.ndim == 1 else x
    loss, g = torch_loss(
        lambda tx: F.multi_margin_loss(tx, tt.reshape(-1), p=p, margin=margin, weight=None if w is None else t64(w),
                                       reduction=RED[sa]), x2)
    return loss, g.reshape(x.shape)


def run_multi_margin(nn, real, x, t, sa, p, w, margin):
    out, gin = nn.empty(real), nn.empty(real)
    nn.call(real, "MultiMarginCriterion_updateOutput", x, t, out, sa, p, w, margin)
    nn.call(real, "MultiMarginCriterion_updateGradInput", x, t, gin, sa, p, w, margin)
    return scalar_out(out), gin.numpy()


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("shape", [(5,), (1, 3), (6, 7), (4, 1)])
@pytest.mark.parametrize("sa", [True, False])
@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("weighted", [True, False])
@pytest.mark.parametrize("margin", [1.0, 0.4])
def test_multi_margin_against_torch(nn, rng, real, shape, sa, p, weighted, margin):
    c = shape[-1]
    n = shape[0] if len(shape) == 2 else 1
    x = cast(rng.standard_normal(shape) * 0.6, real)
    t = rng.integers(0, c, n)
    w = cast(rng.uniform(0.2, 2.0, c), real) if weighted else None
    out, gin = run_multi_margin(nn, real, x.astype(NP[real]), t, sa, p, None if w is None else w.astype(NP[real]),
                                margin)
    want, wgrad = torch_multi_margin(x, t, sa, p, w, margin)
    close(out, want, real)
    close(gin, wgrad, real)


def test_multi_margin_non_contiguous(nn, rng):
    real = "Double"
    x = rng.standard_normal((5, 6)).T  # 6 x 5
    t = rng.integers(0, 5, 12)[::2]
    w = rng.uniform(0.5, 2.0, 10)[::2]
    out, gin = run_multi_margin(nn, real, x, t, True, 2, w, 0.7)
    want, wgrad = torch_multi_margin(x, t, True, 2, w, 0.7)
    close(out, want, real)
    close(gin, wgrad, real)


@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("sa", [True, False])
def test_multi_margin_finite_differences(nn, rng, p, sa):
    real = "Double"
    x = rng.standard_normal((3, 5)) * 0.6
    t = rng.integers(0, 5, 3)
    w = rng.uniform(0.5, 2.0, 5)

    def loss(v):
        out = nn.empty(real)
        nn.call(real, "MultiMarginCriterion_updateOutput", v, t, out, sa, p, w, 1.0)
        return scalar_out(out)

    _, gin = run_multi_margin(nn, real, x, t, sa, p, w, 1.0)
    close(gin, fd_grad(loss, x), real, tol=1e-7)


# ---------------------------------------------------------------------------------------------
# MultiLabelMargin: target rows are 0-based classes ended by the first -1

def gen_labels(rng, shape):
    """Target rows: k distinct classes, then -1 (when k < dim), then arbitrary values >= -1."""
    dim = shape[-1]
    rows = []
    for _ in range(shape[0] if len(shape) == 2 else 1):
        k = int(rng.integers(0, dim + 1))
        row = list(rng.permutation(dim)[:k])
        if k < dim:
            row += [-1] + list(rng.integers(-1, dim, dim - k - 1))
        rows.append(row)
    return np.array(rows, dtype=np.int64).reshape(shape)


def mask_of(t):
    t2 = t.reshape(-1, t.shape[-1])
    m = np.zeros(t2.shape)
    for i, row in enumerate(t2):
        for v in row:
            if v < 0:
                break
            m[i, v] = 1.0
    return m.reshape(t.shape)


def run_multi_label(nn, real, x, t, sa):
    out, ist, gin = nn.empty(real), nn.empty(real), nn.empty(real)
    nn.call(real, "MultiLabelMarginCriterion_updateOutput", x, t, out, ist, sa)
    nn.call(real, "MultiLabelMarginCriterion_updateGradInput", x, t, gin, ist, sa)
    return scalar_out(out), ist.numpy(), gin.numpy()


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("shape", [(5,), (1, 4), (6, 7), (3, 1)])
@pytest.mark.parametrize("sa", [True, False])
def test_multi_label_margin_against_torch(nn, rng, real, shape, sa):
    x = cast(rng.standard_normal(shape) * 0.7, real)
    t = gen_labels(rng, shape)
    out, ist, gin = run_multi_label(nn, real, x.astype(NP[real]), t, sa)
    assert np.array_equal(ist, mask_of(t))
    want, wgrad = torch_loss(lambda tx: F.multilabel_margin_loss(tx, torch.tensor(t), reduction=RED[sa]), x)
    close(out, want, real)
    close(gin, wgrad, real)


def test_multi_label_margin_non_contiguous(nn, rng):
    real = "Double"
    x = rng.standard_normal((6, 4)).T  # 4 x 6
    t = np.asfortranarray(gen_labels(rng, (4, 6)))  # a column-major (strided) target
    out, ist, gin = run_multi_label(nn, real, x, t, True)
    want, wgrad = torch_loss(lambda tx: F.multilabel_margin_loss(tx, torch.tensor(np.ascontiguousarray(t))), x)
    close(out, want, real)
    close(gin, wgrad, real)


@pytest.mark.parametrize("sa", [True, False])
def test_multi_label_margin_finite_differences(nn, rng, sa):
    real = "Double"
    x = rng.standard_normal((3, 5)) * 0.7
    t = np.array([[0, 3, -1, 2, 2], [4, -1, -1, -1, -1], [1, 2, 3, 0, -1]])

    def loss(v):
        out, ist = nn.empty(real), nn.empty(real)
        nn.call(real, "MultiLabelMarginCriterion_updateOutput", v, t, out, ist, sa)
        return scalar_out(out)

    _, _, gin = run_multi_label(nn, real, x, t, sa)
    close(gin, fd_grad(loss, x), real, tol=1e-7)


# ---------------------------------------------------------------------------------------------
# errors: the message names the function and the argument; outputs stay as they were

def filled(nn, real, shape=(2, 2), v=7.0):
    return nn.tensor(real, np.full(shape, v))


def unchanged(*ts, shape=(2, 2), v=7.0):
    for t in ts:
        a = t.numpy()
        assert a.shape == shape and (a == v).all()


def test_errors_pointwise(nn):
    real = "Double"
    out = filled(nn, real)
    with pytest.raises(THError, match=r"THNN_DoubleMSECriterion_updateOutput: argument 3 \(target\)") as e:
        nn.call(real, "MSECriterion_updateOutput", np.zeros(5), np.zeros(4), out, True)
    assert e.value.code == TH_ERR_SIZE
    with pytest.raises(THError, match=r"THNN_DoubleAbsCriterion_updateGradInput: argument 3 \(target\)"):
        nn.call(real, "AbsCriterion_updateGradInput", np.zeros(5), np.zeros(6), out, True)
    with pytest.raises(THError, match=r"THNN_DoubleMarginCriterion_updateOutput: argument 3 \(target\)"):
        nn.call(real, "MarginCriterion_updateOutput", np.zeros((2, 3)), np.zeros(5), out, True, 1.0)
    with pytest.raises(THError, match=r"argument 4 \(THDoubleTensor\) is NULL"):
        nn.call(real, "SmoothL1Criterion_updateOutput", np.zeros(3), np.zeros(3), None, True)
    with pytest.raises(THError, match=r"THNN_DoubleL1Cost_updateGradInput: argument 3 \(gradOutput\)"):
        nn.call(real, "L1Cost_updateGradInput", np.zeros(3), np.zeros(4), out)
    unchanged(out)


def test_errors_bce(nn):
    real = "Float"
    out = filled(nn, real)
    with pytest.raises(THError, match=r"THNN_FloatBCECriterion_updateOutput: argument 2 \(input\).*element 1") as e:
        nn.call(real, "BCECriterion_updateOutput", np.array([0.5, 1.5], np.float32), np.zeros(2, np.float32), out,
                True, None)
    assert e.value.code == TH_ERR_INVALID_ARG
    with pytest.raises(THError, match=r"argument 2 \(input\)"):
        nn.call(real, "BCECriterion_updateOutput", np.array([np.nan], np.float32), np.zeros(1, np.float32), out,
                True, None)
    with pytest.raises(THError, match=r"THNN_FloatBCECriterion_updateGradInput: argument 6 \(weights\)"):
        nn.call(real, "BCECriterion_updateGradInput", np.full(3, 0.5, np.float32), np.zeros(3, np.float32), out,
                True, np.ones(2, np.float32))
    unchanged(out)


def test_errors_class_nll(nn):
    real = "Double"
    out, tw, gin = filled(nn, real), filled(nn, real), filled(nn, real)
    x = np.zeros((3, 4))
    with pytest.raises(THError, match=r"THNN_DoubleClassNLLCriterion_updateOutput: argument 3 \(target\).*4") as e:
        nn.call(real, "ClassNLLCriterion_updateOutput", x, np.array([0, 4, 1]), out, True, None, tw, -100)
    assert e.value.code == TH_ERR_INDEX
    with pytest.raises(THError, match=r"argument 3 \(target\).*-1") as e:
        nn.call(real, "ClassNLLCriterion_updateOutput", x, np.array([0, -1, 1]), out, True, None, tw, -100)
    with pytest.raises(THError, match=r"argument 3 \(target\)"):  # 1-based torch7 targets: 4 is out of range
        nn.call(real, "ClassNLLCriterion_updateGradInput", x, np.array([1, 2, 4]), gin, True, None, np.ones(1), -100)
    with pytest.raises(THError, match=r"argument 3 \(target\)"):
        nn.call(real, "ClassNLLCriterion_updateOutput", x, np.array([0, 1]), out, True, None, tw, -100)
    with pytest.raises(THError, match=r"argument 3 \(target\)"):
        nn.call(real, "ClassNLLCriterion_updateOutput", np.zeros(4), np.array([0, 1]), out, True, None, tw, -100)
    with pytest.raises(THError, match=r"argument 2 \(input\)"):
        nn.call(real, "ClassNLLCriterion_updateOutput", np.zeros((2, 3, 4)), np.array([0, 1]), out, True, None, tw,
                -100)
    with pytest.raises(THError, match=r"argument 6 \(weights\)"):
        nn.call(real, "ClassNLLCriterion_updateOutput", x, np.array([0, 1, 2]), out, True, np.ones(3), tw, -100)
    with pytest.raises(THError, match=r"THNN_DoubleClassNLLCriterion_updateGradInput: argument 7 \(total_weight\)"):
        nn.call(real, "ClassNLLCriterion_updateGradInput", x, np.array([0, 1, 2]), gin, True, None, np.ones(2), -100)
    unchanged(out, tw, gin)


def test_errors_spatial_class_nll(nn):
    real = "Float"
    out, tw, gin = filled(nn, real), filled(nn, real), filled(nn, real)
    x = np.zeros((2, 3, 4, 5), np.float32)
    t = np.zeros((2, 4, 5), np.int64)
    with pytest.raises(THError, match=r"THNN_FloatSpatialClassNLLCriterion_updateOutput: argument 2 \(input\)"):
        nn.call(real, "SpatialClassNLLCriterion_updateOutput", x[0], t, out, True, None, tw)
    with pytest.raises(THError, match=r"argument 3 \(target\)"):
        nn.call(real, "SpatialClassNLLCriterion_updateOutput", x, t[:, :3], out, True, None, tw)
    bad = t.copy()
    bad[1, 2, 3] = 3
    with pytest.raises(THError, match=r"argument 3 \(target\)") as e:
        nn.call(real, "SpatialClassNLLCriterion_updateOutput", x, bad, out, True, None, tw)
    assert e.value.code == TH_ERR_INDEX
    with pytest.raises(THError, match=r"THNN_FloatSpatialClassNLLCriterion_updateGradInput: argument 3 \(target\)"):
        nn.call(real, "SpatialClassNLLCriterion_updateGradInput", x, bad, gin, True, None, np.ones(1, np.float32))
    with pytest.raises(THError, match=r"argument 6 \(weights\)"):
        nn.call(real, "SpatialClassNLLCriterion_updateOutput", x, t, out, True, np.ones(4, np.float32), tw)
    unchanged(out, tw, gin)


def test_errors_multi_margin(nn):
    real = "Double"
    out, gin = filled(nn, real), filled(nn, real)
    x = np.zeros((3, 4))
    with pytest.raises(THError, match=r"THNN_DoubleMultiMarginCriterion_updateOutput: argument 6 \(p\)"):
        nn.call(real, "MultiMarginCriterion_updateOutput", x, np.array([0, 1, 2]), out, True, 3, None, 1.0)
    with pytest.raises(THError, match=r"argument 3 \(target\)") as e:
        nn.call(real, "MultiMarginCriterion_updateOutput", x, np.array([0, 4, 2]), out, True, 1, None, 1.0)
    assert e.value.code == TH_ERR_INDEX
    with pytest.raises(THError, match=r"THNN_DoubleMultiMarginCriterion_updateGradInput: argument 3 \(target\)"):
        nn.call(real, "MultiMarginCriterion_updateGradInput", x, np.array([0, 1]), gin, True, 1, None, 1.0)
    with pytest.raises(THError, match=r"argument 7 \(weights\)"):
        nn.call(real, "MultiMarginCriterion_updateGradInput", x, np.array([0, 1, 2]), gin, True, 1, np.ones(3), 1.0)
    unchanged(out, gin)


def test_errors_multi_label_margin(nn):
    real = "Double"
    out, ist, gin = filled(nn, real), filled(nn, real), filled(nn, real)
    x = np.zeros((2, 3))
    with pytest.raises(THError, match=r"THNN_DoubleMultiLabelMarginCriterion_updateOutput: argument 3 \(target\)") as e:
        nn.call(real, "MultiLabelMarginCriterion_updateOutput", x, np.array([[0, 3, -1], [1, -1, 0]]), out, ist, True)
    assert e.value.code == TH_ERR_INDEX
    with pytest.raises(THError, match=r"argument 3 \(target\)"):  # torch7's terminator 0 is a class here; -2 is not
        nn.call(real, "MultiLabelMarginCriterion_updateOutput", x, np.array([[0, -2, -1], [1, -1, 0]]), out, ist, True)
    with pytest.raises(THError, match=r"argument 3 \(target\)"):
        nn.call(real, "MultiLabelMarginCriterion_updateOutput", x, np.array([0, 1, -1]), out, ist, True)
    good = np.array([[0, -1, 0], [2, 1, -1]])
    with pytest.raises(THError, match=r"THNN_DoubleMultiLabelMarginCriterion_updateGradInput: argument 5 \(isTarget\)"):
        nn.call(real, "MultiLabelMarginCriterion_updateGradInput", x, good, gin, np.full((2, 3), 2.0), True)
    with pytest.raises(THError, match=r"argument 5 \(isTarget\)"):
        nn.call(real, "MultiLabelMarginCriterion_updateGradInput", x, good, gin, np.zeros(6), True)
    unchanged(out, ist, gin)


# ---------------------------------------------------------------------------------------------
# results do not depend on the number of threads (fixed blocks, partial sums added in order)

def test_thread_count_independent(lib, nn, rng):
    real = "Float"
    x = rng.standard_normal((30000, 5)).astype(np.float32)
    t = rng.integers(0, 5, 30000)
    y = rng.standard_normal((30000, 5)).astype(np.float32)
    img = rng.standard_normal((3, 4, 50, 60)).astype(np.float32)
    timg = rng.integers(0, 4, (3, 50, 60))

    def run():
        res = []
        for name in ("ClassNLLCriterion", "SpatialClassNLLCriterion"):
            out, tw, gin = nn.empty(real), nn.empty(real), nn.empty(real)
            args = (x, t) if name == "ClassNLLCriterion" else (img, timg)
            extra = [-100] if name == "ClassNLLCriterion" else []
            nn.call(real, f"{name}_updateOutput", *args, out, True, None, tw, *extra)
            nn.call(real, f"{name}_updateGradInput", *args, gin, True, None, tw, *extra)
            res += [out.numpy(), gin.numpy()]
        out, gin = nn.empty(real), nn.empty(real)
        nn.call(real, "SmoothL1Criterion_updateOutput", x, y, out, False)
        nn.call(real, "SmoothL1Criterion_updateGradInput", x, y, gin, False)
        out2, gin2 = nn.empty(real), nn.empty(real)
        nn.call(real, "MultiMarginCriterion_updateOutput", x, t, out2, True, 2, None, 1.0)
        nn.call(real, "MultiMarginCriterion_updateGradInput", x, t, gin2, True, 2, None, 1.0)
        return res + [out.numpy(), gin.numpy(), out2.numpy(), gin2.numpy()]

    old = lib.dll.THGetNumThreads()
    try:
        results = []
        for n in (1, 2, 3):
            lib.dll.THSetNumThreads(C.c_int(n))
            results.append(run())
    finally:
        lib.dll.THSetNumThreads(C.c_int(old))
    for other in results[1:]:
        for a, b in zip(results[0], other):
            assert np.array_equal(a, b)
