"""THNN GEMM convolutions (Spatial/Volumetric Convolution(MM), Dilated, Full, FullDilated,
DepthWise) and unfolded_copy/acc against torch.nn.functional in float64 (gradients through
autograd), finite differences of th's own forward, non-contiguous operands, thread-count
independence, and errors that leave outputs alone."""

import ctypes as C

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from nnlib import NP, close, fd_grad
from thlib import THError

REALS = ["Float", "Double"]

# nd, transposed, kernel among the ints, dilation, adj, 2-D weight accepted, buffers (uO, uGI, aGP)
MODS = {
    "SpatialConvolutionMM": (2, False, True, False, False, True, (2, 2, 2)),
    "SpatialDilatedConvolution": (2, False, True, True, False, False, (2, 1, 2)),
    "SpatialFullConvolution": (2, True, True, False, True, False, (2, 1, 2)),
    "SpatialFullDilatedConvolution": (2, True, True, True, True, False, (2, 1, 2)),
    "VolumetricConvolution": (3, False, False, False, False, False, (2, 1, 2)),
    "VolumetricConvolutionMM": (3, False, True, False, False, True, (1, 2, 1)),
    "VolumetricDilatedConvolution": (3, False, True, True, False, False, (2, 1, 2)),
    "VolumetricFullConvolution": (3, True, False, False, True, False, (2, 2, 2)),
    "VolumetricFullDilatedConvolution": (3, True, False, True, True, False, (2, 2, 2)),
}


def cord(nd, v):
    """(t,)h,w -> the C order: W, H or T, W, H."""
    return [v[1], v[0]] if nd == 2 else [v[0], v[2], v[1]]


def ints(mod, k, s, p, d, a):
    nd, tr, kargs, dil, adj, _, _ = MODS[mod]
    out = (cord(nd, k) if kargs else []) + cord(nd, s) + cord(nd, p)
    if dil:
        out += cord(nd, d)
    if adj:
        out += cord(nd, a)
    return out


def bufs(nn, real, n):
    return [nn.empty(real) for _ in range(n)]


def th_forward(nn, real, mod, x, w, b, iv):
    out = nn.empty(real)
    nn.call(real, f"{mod}_updateOutput", x, out, w, b, *bufs(nn, real, MODS[mod][6][0]), *iv)
    return out.numpy()


def th_all(nn, real, mod, x, w, b, gout, iv, scale=1.0, gw0=None, gb0=None):
    nb = MODS[mod][6]
    out = th_forward(nn, real, mod, x, w, b, iv)
    gin = nn.empty(real)
    nn.call(real, f"{mod}_updateGradInput", x, gout, gin, w, *bufs(nn, real, nb[1]), *iv)
    gw = nn.tensor(real, np.zeros(w.shape) if gw0 is None else gw0)
    gb = nn.tensor(real, np.zeros(b.shape) if gb0 is None else gb0) if b is not None else None
    nn.call(real, f"{mod}_accGradParameters", x, gout, gw, gb, *bufs(nn, real, nb[2]), *iv, scale)
    return out, gin.numpy(), gw.numpy(), (gb.numpy() if gb is not None else None)


def torch_all(mod, x, w4, b, gout, k, s, p, d, a, scale):
    nd, tr = MODS[mod][0], MODS[mod][1]
    tx = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    tw = torch.tensor(w4, dtype=torch.float64, requires_grad=True)
    tb = torch.tensor(b, dtype=torch.float64, requires_grad=True) if b is not None else None
    if not tr:
        fn = F.conv2d if nd == 2 else F.conv3d
        y = fn(tx, tw, tb, stride=tuple(s), padding=tuple(p), dilation=tuple(d))
    else:
        fn = F.conv_transpose2d if nd == 2 else F.conv_transpose3d
        y = fn(tx, tw, tb, stride=tuple(s), padding=tuple(p), output_padding=tuple(a), dilation=tuple(d))
    y.backward(torch.tensor(gout, dtype=torch.float64))
    return (y.detach().numpy(), tx.grad.numpy(), scale * tw.grad.numpy(), scale * tb.grad.numpy() if tb is not None else None)


def out_size(mod, i, k, s, p, d, a):
    if MODS[mod][1]:
        return [(ii - 1) * ss - 2 * pp + dd * (kk - 1) + 1 + aa for ii, kk, ss, pp, dd, aa in zip(i, k, s, p, d, a)]
    return [(ii + 2 * pp - dd * (kk - 1) - 1) // ss + 1 for ii, kk, ss, pp, dd in zip(i, k, s, p, d)]


# (batch or None, cin, cout, input size, kernel, stride, pad, dilation, adj, bias, 2-D weight)
CASES2 = [
    (2, 3, 4, (7, 6), (3, 3), (1, 1), (0, 0), (1, 1), (0, 0), True, False),
    (None, 2, 5, (5, 7), (2, 3), (2, 1), (1, 2), (1, 1), (1, 0), False, True),
    (3, 1, 1, (6, 5), (3, 2), (2, 3), (1, 0), (2, 1), (1, 2), True, False),
    (1, 4, 3, (4, 4), (1, 1), (1, 1), (0, 0), (1, 1), (0, 0), True, True),
    (2, 3, 2, (5, 5), (1, 1), (2, 2), (0, 0), (1, 1), (1, 1), False, False),
    (4, 2, 3, (3, 3), (3, 3), (1, 1), (1, 1), (1, 1), (0, 0), True, False),
]
CASES3 = [
    (2, 2, 3, (4, 5, 4), (2, 3, 2), (1, 1, 1), (0, 1, 0), (1, 1, 1), (0, 0, 0), True, False),
    (None, 3, 2, (3, 4, 5), (1, 2, 3), (2, 1, 2), (1, 0, 1), (1, 2, 1), (1, 0, 1), False, True),
    (3, 1, 2, (3, 3, 3), (1, 1, 1), (1, 1, 1), (0, 0, 0), (1, 1, 1), (0, 0, 0), True, False),
]


def adapt(mod, case):
    """The case's options the module supports (others default), and its weight shape."""
    nd, tr, kargs, dil, adj, w2d, _ = MODS[mod]
    n, cin, cout, i, k, s, p, d, a, bias, flat = case
    if not dil:
        d = (1,) * nd
    if not adj:
        a = (0,) * nd
    a = tuple(min(aa, max(ss, dd) - 1) for aa, ss, dd in zip(a, s, d))
    return n, cin, cout, i, k, s, p, d, a, bias, flat and w2d


def run_case(nn, rng, real, mod, case, noncontig=False):
    nd, tr = MODS[mod][0], MODS[mod][1]
    n, cin, cout, i, k, s, p, d, a, bias, flat = adapt(mod, case)
    cast = lambda v: v.astype(NP[real]).astype(np.float64)  # noqa: E731
    xs = ((n,) if n else ()) + (cin,) + tuple(i)
    w4s = (cin, cout) + tuple(k) if tr else (cout, cin) + tuple(k)
    o = out_size(mod, i, k, s, p, d, a)
    x = cast(rng.standard_normal(xs))
    w4 = cast(rng.standard_normal(w4s))
    b = cast(rng.standard_normal(cout)) if bias else None
    gout = cast(rng.standard_normal(((n,) if n else ()) + (cout,) + tuple(o)))
    gw0 = cast(rng.standard_normal(w4s))
    gb0 = cast(rng.standard_normal(cout)) if bias else None
    w = w4.reshape(w4s[0], -1) if flat else w4
    xt = x.astype(NP[real])
    if noncontig:  # a transposed copy viewed back: same values, reversed strides
        xt = np.ascontiguousarray(np.swapaxes(xt, -1, -2)).swapaxes(-1, -2)
        assert not xt.flags.c_contiguous
    iv = ints(mod, k, s, p, d, a)
    got = th_all(nn, real, mod, xt, w.astype(NP[real]), None if b is None else b.astype(NP[real]),
                 gout.astype(NP[real]), iv, 0.5, gw0.reshape(w.shape).astype(NP[real]),
                 None if gb0 is None else gb0.astype(NP[real]))
    xb, wb = (x, w4) if n else (x[None], w4)
    want = torch_all(mod, xb, wb, b, gout if n else gout[None], k, s, p, d, a, 0.5)
    if not n:
        want = (want[0][0], want[1][0], want[2], want[3])
    taps = int(np.prod(k)) * max(cin, cout)
    sc = float(np.sqrt(taps * (n or 1) * np.prod(o)))
    close(got[0], want[0], real, scale=sc)
    close(got[1], want[1], real, scale=sc)
    close(got[2], gw0.reshape(w.shape) + want[2].reshape(w.shape), real, scale=sc)
    if bias:
        close(got[3], gb0 + want[3], real, scale=sc)
    else:
        assert got[3] is None


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("mod", [m for m in MODS if MODS[m][0] == 2])
@pytest.mark.parametrize("case", range(len(CASES2)))
def test_spatial_against_torch(nn, rng, real, mod, case):
    run_case(nn, rng, real, mod, CASES2[case])


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("mod", [m for m in MODS if MODS[m][0] == 3])
@pytest.mark.parametrize("case", range(len(CASES3)))
def test_volumetric_against_torch(nn, rng, real, mod, case):
    run_case(nn, rng, real, mod, CASES3[case])


@pytest.mark.parametrize("mod", list(MODS))
def test_non_contiguous(nn, rng, mod):
    case = CASES2[1] if MODS[mod][0] == 2 else CASES3[0]
    run_case(nn, rng, "Double", mod, case, noncontig=True)


@pytest.mark.parametrize("mod", list(MODS))
def test_finite_differences(nn, rng, mod):
    real = "Double"
    nd, tr = MODS[mod][0], MODS[mod][1]
    if nd == 2:
        n, cin, cout, i, k, s, p, d, a = 2, 2, 2, (4, 3), (2, 2), (2, 1), (1, 0), (1, 2), (1, 0)
    else:
        n, cin, cout, i, k, s, p, d, a = 1, 2, 2, (2, 3, 3), (2, 1, 2), (1, 2, 1), (0, 1, 1), (1, 1, 2), (0, 1, 1)
    n, cin, cout, i, k, s, p, d, a, _, _ = adapt(mod, (n, cin, cout, i, k, s, p, d, a, True, False))
    w4s = (cin, cout) + tuple(k) if tr else (cout, cin) + tuple(k)
    x = rng.standard_normal((n, cin) + tuple(i))
    w = rng.standard_normal(w4s)
    b = rng.standard_normal(cout)
    iv = ints(mod, k, s, p, d, a)
    o = out_size(mod, i, k, s, p, d, a)
    gout = rng.standard_normal((n, cout) + tuple(o))

    def loss(x_, w_, b_):
        return float(np.sum(th_forward(nn, real, mod, x_, w_, b_, iv) * gout))

    _, gin, gw, gb = th_all(nn, real, mod, x, w, b, gout, iv)
    close(gin, fd_grad(lambda v: loss(v, w, b), x), real, tol=1e-7)
    close(gw, fd_grad(lambda v: loss(x, v, b), w), real, tol=1e-7)
    close(gb, fd_grad(lambda v: loss(x, w, v), b), real, tol=1e-7)


def test_thread_count_independent(nn, lib, rng):
    """Bitwise the same results on 1 and 3 threads (batch-parallel pieces, gradient slots)."""
    real = "Float"
    x = rng.standard_normal((5, 3, 12, 11)).astype(np.float32)
    w = rng.standard_normal((8, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    gout = rng.standard_normal((5, 8, 12, 11)).astype(np.float32)
    iv = [3, 3, 1, 1, 1, 1]
    old = lib.dll.THGetNumThreads()
    res = []
    try:
        for t in (1, 3):
            lib.dll.THSetNumThreads(C.c_int(t))
            res.append(th_all(nn, real, "SpatialConvolutionMM", x, w, b, gout, iv))
    finally:
        lib.dll.THSetNumThreads(C.c_int(old))
    for r1, r3 in zip(*res):
        assert np.array_equal(r1, r3)


def test_buffers_reused_and_aliasing(nn, rng):
    """A caller's buffer is resized and reused; a buffer that is the output does not corrupt it."""
    real = "Double"
    x = rng.standard_normal((2, 2, 5, 5))
    w = rng.standard_normal((3, 2, 3, 3))
    want = F.conv2d(torch.tensor(x), torch.tensor(w), padding=1).numpy()
    fin = nn.empty(real)
    for _ in range(2):
        out = nn.empty(real)
        nn.call(real, "SpatialConvolutionMM_updateOutput", x, out, w, None, fin, None, 3, 3, 1, 1, 1, 1)
        close(out.numpy(), want, real)
    assert fin.numpy().size > 0
    out = nn.empty(real)
    nn.call(real, "SpatialConvolutionMM_updateOutput", x, out, w, None, out, out, 3, 3, 1, 1, 1, 1)
    close(out.numpy(), want, real)


# ---- SpatialDepthWiseConvolution: weight M x C x kH x kW, output plane i*M + m


def dw_torch(x, w, b, gout, s, p, scale):
    m, c = w.shape[:2]
    tw = torch.tensor(np.ascontiguousarray(w.transpose(1, 0, 2, 3)).reshape(c * m, 1, *w.shape[2:]), requires_grad=True)
    tb = torch.tensor(np.ascontiguousarray(b.T).reshape(-1), requires_grad=True) if b is not None else None
    tx = torch.tensor(x, requires_grad=True)
    y = F.conv2d(tx, tw, tb, stride=s, padding=p, groups=c)
    y.backward(torch.tensor(gout))
    gw = tw.grad.numpy().reshape(c, m, *w.shape[2:]).transpose(1, 0, 2, 3)
    gb = tb.grad.numpy().reshape(c, m).T if tb is not None else None
    return y.detach().numpy(), tx.grad.numpy(), scale * gw, (scale * gb if gb is not None else None)


def dw_th(nn, real, x, w, b, gout, iv, scale=1.0, gw0=None, gb0=None):
    out, gin = nn.empty(real), nn.empty(real)
    nn.call(real, "SpatialDepthWiseConvolution_updateOutput", x, out, w, b, None, None, *iv)
    nn.call(real, "SpatialDepthWiseConvolution_updateGradInput", x, gout, gin, w, None, None, *iv)
    gw = nn.tensor(real, np.zeros(w.shape) if gw0 is None else gw0)
    gb = nn.tensor(real, np.zeros(b.shape) if gb0 is None else gb0) if b is not None else None
    nn.call(real, "SpatialDepthWiseConvolution_accGradParameters", x, gout, gw, gb, None, None, *iv, scale)
    return out.numpy(), gin.numpy(), gw.numpy(), (gb.numpy() if gb is not None else None)


DW_CASES = [  # batch, C, M, (H, W), (kH, kW), (dH, dW), (padH, padW), bias, 2-D weight
    (2, 3, 2, (7, 5), (3, 3), (1, 1), (1, 1), True, False),
    (None, 2, 1, (6, 9), (2, 3), (2, 3), (0, 1), False, True),
    (3, 1, 3, (5, 5), (5, 1), (1, 2), (2, 0), True, False),
    # planes wider than a block of columns (whole blocks and a partial one)
    (2, 4, 1, (37, 41), (3, 3), (1, 1), (1, 1), True, False),
    (1, 2, 2, (20, 35), (3, 3), (2, 2), (1, 1), True, False),
    (2, 3, 1, (19, 23), (3, 5), (3, 2), (2, 3), False, False),
    (None, 2, 1, (4, 70), (1, 7), (1, 3), (0, 3), True, True),
    # padding beyond kernel - 1 (outputs that see only zeros), a 1x1 plane
    (1, 2, 2, (9, 18), (2, 3), (1, 1), (3, 4), True, False),
    (2, 3, 2, (11, 33), (4, 4), (3, 5), (5, 6), True, False),
    (3, 2, 1, (1, 1), (1, 1), (1, 1), (0, 0), True, False),
]


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("case", range(len(DW_CASES)))
def test_depthwise_against_torch(nn, rng, real, case):
    n, c, m, i, k, s, p, bias, flat = DW_CASES[case]
    cast = lambda v: v.astype(NP[real]).astype(np.float64)  # noqa: E731
    x = cast(rng.standard_normal(((n,) if n else ()) + (c,) + i))
    w = cast(rng.standard_normal((m, c) + k))
    b = cast(rng.standard_normal((m, c))) if bias else None
    o = [(ii + 2 * pp - kk) // ss + 1 for ii, kk, ss, pp in zip(i, k, s, p)]
    gout = cast(rng.standard_normal(((n,) if n else ()) + (c * m,) + tuple(o)))
    gw0 = cast(rng.standard_normal(w.shape))
    gb0 = cast(rng.standard_normal((m, c))) if bias else None
    wt = w.reshape(m, -1) if flat else w
    iv = [k[1], k[0], s[1], s[0], p[1], p[0]]
    xt = x.astype(NP[real])
    gt = gout.astype(NP[real])
    if case in (0, 3):
        xt = np.ascontiguousarray(np.swapaxes(xt, -1, -2)).swapaxes(-1, -2)
    if case == 3:
        gt = np.ascontiguousarray(np.swapaxes(gt, -1, -2)).swapaxes(-1, -2)
    got = dw_th(nn, real, xt, wt.astype(NP[real]), None if b is None else b.astype(NP[real]), gt,
                iv, 0.5, gw0.reshape(wt.shape).astype(NP[real]), None if gb0 is None else gb0.astype(NP[real]))
    want = dw_torch(x if n else x[None], w, b, gout if n else gout[None], s, p, 0.5)
    if not n:
        want = (want[0][0], want[1][0], want[2], want[3])
    sc = float(np.sqrt(np.prod(k) * (n or 1) * np.prod(o)))
    close(got[0], want[0], real, scale=sc)
    close(got[1], want[1], real, scale=sc)
    close(got[2], gw0.reshape(wt.shape) + want[2].reshape(wt.shape), real, scale=sc)
    if bias:
        close(got[3], gb0 + want[3], real, scale=sc)


def test_depthwise_thread_count_independent(nn, lib, rng):
    """Bitwise the same results on 1 and 3 threads, and into non-contiguous outputs."""
    real = "Float"
    x = rng.standard_normal((3, 5, 30, 29)).astype(np.float32)
    w = rng.standard_normal((2, 5, 3, 3)).astype(np.float32)
    b = rng.standard_normal((2, 5)).astype(np.float32)
    gout = rng.standard_normal((3, 10, 30, 29)).astype(np.float32)
    iv = [3, 3, 1, 1, 1, 1]
    old = lib.dll.THGetNumThreads()
    res = []
    try:
        for t in (1, 3):
            lib.dll.THSetNumThreads(C.c_int(t))
            res.append(dw_th(nn, real, x, w, b, gout, iv))
    finally:
        lib.dll.THSetNumThreads(C.c_int(old))
    for r1, r3 in zip(*res):
        assert np.array_equal(r1, r3)
    # outputs given non-contiguous, already of the right shape, keep their strides
    out = nn.tensor(real, np.zeros((3, 10, 29, 30), np.float32).swapaxes(-1, -2))
    gin = nn.tensor(real, np.zeros((3, 5, 29, 30), np.float32).swapaxes(-1, -2))
    nn.call(real, "SpatialDepthWiseConvolution_updateOutput", x, out, w, b, None, None, *iv)
    nn.call(real, "SpatialDepthWiseConvolution_updateGradInput", x, gout, gin, w, None, None, *iv)
    assert np.array_equal(out.numpy(), res[0][0]) and np.array_equal(gin.numpy(), res[0][1])


def test_depthwise_split_grad_output_and_fd(nn, rng):
    real = "Double"
    x = rng.standard_normal((2, 2, 4, 5))
    w = rng.standard_normal((2, 2, 2, 3))
    b = rng.standard_normal((2, 2))
    iv = [3, 2, 2, 1, 1, 0]  # kW kH dW dH padW padH
    gout = rng.standard_normal((2, 4, 3, 3))

    def loss(x_, w_, b_):
        out = nn.empty(real)
        nn.call(real, "SpatialDepthWiseConvolution_updateOutput", x_, out, w_, b_, None, None, *iv)
        return float(np.sum(out.numpy() * gout))

    _, gin, gw, gb = dw_th(nn, real, x, w, b, gout, iv)
    close(gin, fd_grad(lambda v: loss(v, w, b), x), real, tol=1e-7)
    close(gw, fd_grad(lambda v: loss(x, v, b), w), real, tol=1e-7)
    close(gb, fd_grad(lambda v: loss(x, w, v), b), real, tol=1e-7)
    # the 5-D form of gradOutput (B x C x M x oH x oW) is accepted too
    _, gin5, gw5, gb5 = dw_th(nn, real, x, w, b, gout.reshape(2, 2, 2, 3, 3), iv)
    assert np.array_equal(gin5, gin) and np.array_equal(gw5, gw) and np.array_equal(gb5, gb)


# ---- unfolded_copy / unfolded_acc against F.unfold / F.fold


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("cfg", [((3, 6, 7), (2, 3), (1, 1), (0, 0)), ((2, 5, 5), (3, 3), (2, 2), (1, 1)),
                                 ((1, 4, 9), (1, 4), (3, 2), (0, 2))])
def test_unfolded(nn, rng, real, cfg):
    (c, h, w), (kh, kw), (sh, sw), (ph, pw) = cfg
    oh, ow = (h + 2 * ph - kh) // sh + 1, (w + 2 * pw - kw) // sw + 1
    x = rng.standard_normal((c, h, w)).astype(NP[real])
    fin = nn.tensor(real, np.full((c * kh * kw, oh * ow), 9.0))
    nn.call(real, "unfolded_copy", fin, x, kw, kh, sw, sh, pw, ph, c, w, h, ow, oh)
    want = F.unfold(torch.tensor(x[None], dtype=torch.float64), (kh, kw), padding=(ph, pw), stride=(sh, sw))[0]
    close(fin.numpy(), want.numpy(), real)
    cols = rng.standard_normal((c * kh * kw, oh * ow)).astype(NP[real])
    base = rng.standard_normal((c, h, w)).astype(NP[real])
    inp = nn.tensor(real, base)
    nn.call(real, "unfolded_acc", cols, inp, kw, kh, sw, sh, pw, ph, c, w, h, ow, oh)
    folded = F.fold(torch.tensor(cols[None], dtype=torch.float64), (h, w), (kh, kw), padding=(ph, pw), stride=(sh, sw))[0]
    close(inp.numpy(), base + folded.numpy(), real, scale=4.0)


# ---- errors


def test_errors_leave_outputs(nn, rng):
    real = "Float"
    f32 = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    out = nn.tensor(real, np.full((2, 2), 7.0))
    x, w = f32(2, 3, 5, 5), f32(4, 3, 3, 3)
    mm = "THNN_FloatSpatialConvolutionMM_updateOutput"
    with pytest.raises(THError, match=mm + r": argument 2 \(input\)"):
        nn.call(real, "SpatialConvolutionMM_updateOutput", f32(2, 2, 5, 5), out, w, None, None, None, 3, 3, 1, 1, 0, 0)
    with pytest.raises(THError, match=r"argument 2 \(input\).*too small"):
        nn.call(real, "SpatialConvolutionMM_updateOutput", f32(2, 3, 2, 5), out, w, None, None, None, 3, 3, 1, 1, 0, 0)
    with pytest.raises(THError, match=r"argument 5 \(bias\)"):
        nn.call(real, "SpatialConvolutionMM_updateOutput", x, out, w, f32(3), None, None, 3, 3, 1, 1, 0, 0)
    with pytest.raises(THError, match=r"argument 4 \(weight\)"):
        nn.call(real, "SpatialConvolutionMM_updateOutput", x, out, w, None, None, None, 2, 3, 1, 1, 0, 0)
    with pytest.raises(THError, match=r"argument 9 \(kH\)"):
        nn.call(real, "SpatialConvolutionMM_updateOutput", x, out, w, None, None, None, 3, 0, 1, 1, 0, 0)
    with pytest.raises(THError, match=r"argument 10 \(dW\)"):
        nn.call(real, "SpatialConvolutionMM_updateOutput", x, out, w, None, None, None, 3, 3, 0, 1, 0, 0)
    with pytest.raises(THError, match=r"argument 13 \(padH\)"):
        nn.call(real, "SpatialConvolutionMM_updateOutput", x, out, w, None, None, None, 3, 3, 1, 1, 0, -1)
    with pytest.raises(THError, match=r"argument 15 \(dilationH\)"):
        nn.call(real, "SpatialDilatedConvolution_updateOutput", x, out, w, None, None, None, 3, 3, 1, 1, 0, 0, 1, 0)
    wt = f32(3, 4, 3, 3)
    with pytest.raises(THError, match=r"THNN_FloatSpatialFullConvolution_updateOutput: argument 14 \(adjW\).*output padding"):
        nn.call(real, "SpatialFullConvolution_updateOutput", x, out, wt, None, None, None, 3, 3, 2, 2, 0, 0, 2, 0)
    with pytest.raises(THError, match=r"argument 4 \(weight\)"):
        nn.call(real, "VolumetricConvolution_updateOutput", f32(3, 4, 4, 4), out, f32(2, 3, 3, 3), None, None, None,
                1, 1, 1, 0, 0, 0)
    assert (out.numpy() == 7.0).all() and out.numpy().shape == (2, 2)
    # updateGradInput: gradOutput of the wrong shape leaves gradInput alone
    gin = nn.tensor(real, np.full((3,), 5.0))
    with pytest.raises(THError, match=r"SpatialConvolutionMM_updateGradInput: argument 3 \(gradOutput\)"):
        nn.call(real, "SpatialConvolutionMM_updateGradInput", x, f32(2, 4, 3, 4), gin, w, None, None, 3, 3, 1, 1, 0, 0)
    with pytest.raises(THError, match=r"VolumetricConvolutionMM_updateGradInput: argument 9 \(kW\)"):
        nn.call(real, "VolumetricConvolutionMM_updateGradInput", f32(3, 4, 4, 4), f32(2, 2, 2, 2), gin, f32(2, 3, 3, 3, 3),
                None, None, 3, 0, 3, 1, 1, 1, 0, 0, 0)
    assert (gin.numpy() == 5.0).all()
    # accGradParameters: gradBias of the wrong size leaves gradWeight alone
    gw = nn.tensor(real, np.full((4, 3, 3, 3), 1.0))
    gb = nn.tensor(real, np.full((3,), 2.0))
    with pytest.raises(THError, match=r"accGradParameters: argument 5 \(gradBias\)"):
        nn.call(real, "SpatialConvolutionMM_accGradParameters", x, f32(2, 4, 3, 3), gw, gb, None, None, 3, 3, 1, 1, 0, 0, 1.0)
    assert (gw.numpy() == 1.0).all() and (gb.numpy() == 2.0).all()
    # depthwise
    dwo = nn.tensor(real, np.full((2,), 3.0))
    with pytest.raises(THError, match=r"SpatialDepthWiseConvolution_updateOutput: argument 5 \(bias\)"):
        nn.call(real, "SpatialDepthWiseConvolution_updateOutput", x, dwo, f32(2, 3, 3, 3), f32(3), None, None, 3, 3, 1, 1, 0, 0)
    with pytest.raises(THError, match=r"argument 2 \(input\)"):
        nn.call(real, "SpatialDepthWiseConvolution_updateOutput", f32(2, 4, 5, 5), dwo, f32(2, 3, 3, 3), None, None, None,
                3, 3, 1, 1, 0, 0)
    assert (dwo.numpy() == 3.0).all()
    # unfolded: sizes inconsistent with the geometry
    fin = nn.tensor(real, np.full((27, 9), 4.0))
    with pytest.raises(THError, match=r"THNN_Floatunfolded_copy: argument 12 \(outputWidth\)"):
        nn.call(real, "unfolded_copy", fin, f32(3, 5, 5), 3, 3, 1, 1, 0, 0, 3, 5, 5, 4, 3)
    with pytest.raises(THError, match=r"argument 1 \(finput\)"):
        nn.call(real, "unfolded_copy", nn.tensor(real, np.full((26, 9), 4.0)), f32(3, 5, 5), 3, 3, 1, 1, 0, 0, 3, 5, 5, 3, 3)
    with pytest.raises(THError, match=r"argument 2 \(input\)"):
        nn.call(real, "unfolded_acc", fin, nn.tensor(real, np.zeros((3, 5, 4))), 3, 3, 1, 1, 0, 0, 3, 5, 5, 3, 3)
    assert (fin.numpy() == 4.0).all()


@pytest.mark.parametrize("mod", ["SpatialConvolutionMM", "SpatialDilatedConvolution", "SpatialFullConvolution"])
def test_blocked_columns(nn, rng, mod):
    """Inputs large enough that the columns are built a block of output rows at a time."""
    case = (2, 16, 12, (29, 41), (3, 3), (1, 1), (1, 1), (2, 1), (0, 0), True, False)
    if mod == "SpatialFullConvolution":
        case = (2, 12, 16, (30, 25), (3, 3), (2, 2), (1, 1), (1, 1), (1, 0), True, False)
    run_case(nn, rng, "Double", mod, case)
    run_case(nn, rng, "Float", mod, case)


@pytest.mark.parametrize("real", REALS)
def test_implicit_gemm_shapes(nn, rng, real):
    """Shapes the implicit-GEMM forward takes (no im2col columns): padded and strided, strides
    that leave the last rows and columns unread, odd sizes, 3-D."""
    cases2 = [
        (2, 8, 16, (16, 17), (3, 3), (2, 2), (1, 1), (1, 1), (0, 0), True, False),
        (3, 6, 8, (20, 23), (5, 3), (1, 2), (2, 1), (1, 1), (0, 0), False, True),
        (1, 5, 12, (9, 30), (2, 4), (3, 1), (0, 2), (1, 1), (0, 0), True, False),
    ]
    for case in cases2:
        run_case(nn, rng, real, "SpatialConvolutionMM", case)
    run_case(nn, rng, real, "VolumetricConvolutionMM",
             (2, 4, 8, (6, 9, 20), (3, 3, 3), (1, 1, 2), (1, 1, 1), (1, 1, 1), (0, 0, 0), True, False))
