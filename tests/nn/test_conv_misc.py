"""THNN's other convolutions (TemporalConvolution, TemporalSubSampling, TemporalRowConvolution,
SpatialSubSampling, SpatialConvolutionMap, SpatialFullConvolutionMap, SpatialConvolutionLocal)
against torch.nn.functional in float64 (gradients through autograd; per-connection conv2d /
conv_transpose2d for the Map modules, plus a naive loop), finite differences of th's own forward
in Double, batched / unbatched / non-contiguous operands, and errors that leave outputs alone."""

import ctypes as C

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from nnlib import NP, close, fd_grad
from thlib import THError

REALS = ["Float", "Double"]


def leaf(a):
    return None if a is None else torch.tensor(a, dtype=torch.float64, requires_grad=True)


def grads(y, gout, *leaves):
    y.backward(torch.tensor(gout, dtype=torch.float64))
    return [y.detach().numpy()] + [None if t is None else t.grad.numpy() for t in leaves]


def layout(a, how):
    """`a` (same values) as a C-contiguous, Fortran-ordered or sliced numpy view."""
    if how == "f":
        return np.asfortranarray(a)
    if how == "slice":
        return np.repeat(a, 2, axis=-1)[..., ::2]
    return np.ascontiguousarray(a)


# ---- the modules: th forward, th backward (gradInput + accGradParameters), torch reference ----


class TemporalConv:
    @staticmethod
    def fwd(nn, real, x, w, b, o):
        out = nn.empty(real)
        nn.call(real, "TemporalConvolution_updateOutput", x, out, w, b, o["kW"], o["dW"], x.shape[-1], w.shape[0])
        return out.numpy()

    @staticmethod
    def bwd(nn, real, x, w, b, gout, o, scale, gw, gb):
        gin = nn.empty(real)
        nn.call(real, "TemporalConvolution_updateGradInput", x, gout, gin, w, o["kW"], o["dW"])
        nn.call(real, "TemporalConvolution_accGradParameters", x, gout, gw, gb, o["kW"], o["dW"], scale)
        return gin.numpy()

    @staticmethod
    def ref(x, w, b, gout, o):
        tx, tw, tb = leaf(x), leaf(w), leaf(b)
        c_out, c = w.shape[0], x.shape[-1]
        k = tw.reshape(c_out, o["kW"], c).permute(0, 2, 1)
        y = F.conv1d(tx.transpose(-1, -2), k, tb, stride=o["dW"]).transpose(-1, -2)
        return grads(y, gout, tx, tw, tb)


class TemporalSub:
    @staticmethod
    def fwd(nn, real, x, w, b, o):
        out = nn.empty(real)
        nn.call(real, "TemporalSubSampling_updateOutput", x, out, w, b, o["kW"], o["dW"], x.shape[-1])
        return out.numpy()

    @staticmethod
    def bwd(nn, real, x, w, b, gout, o, scale, gw, gb):
        gin = nn.empty(real)
        nn.call(real, "TemporalSubSampling_updateGradInput", x, gout, gin, w, o["kW"], o["dW"])
        nn.call(real, "TemporalSubSampling_accGradParameters", x, gout, gw, gb, o["kW"], o["dW"], scale)
        return gin.numpy()

    @staticmethod
    def ref(x, w, b, gout, o):
        tx, tw, tb = leaf(x), leaf(w), leaf(b)
        f = w.shape[0]
        k = tw[:, None, None] * torch.ones(f, 1, o["kW"], dtype=torch.float64)
        y = F.conv1d(tx.transpose(-1, -2), k, tb, stride=o["dW"], groups=f).transpose(-1, -2)
        return grads(y, gout, tx, tw, tb)


class TemporalRow:
    @staticmethod
    def fwd(nn, real, x, w, b, o):
        out = nn.empty(real)
        nn.call(real, "TemporalRowConvolution_updateOutput", x, out, w, b, nn.empty(real), nn.empty(real),
                o["kW"], o["dW"], o["padW"], o["featFirst"])
        return out.numpy()

    @staticmethod
    def bwd(nn, real, x, w, b, gout, o, scale, gw, gb):
        gin = nn.empty(real)
        nn.call(real, "TemporalRowConvolution_updateGradInput", x, gout, gin, w, None, None,
                o["kW"], o["dW"], o["padW"], o["featFirst"])
        nn.call(real, "TemporalRowConvolution_accGradParameters", x, gout, gw, gb, None, None,
                o["kW"], o["dW"], o["padW"], o["featFirst"], scale)
        return gin.numpy()

    @staticmethod
    def ref(x, w, b, gout, o):
        tx, tw, tb = leaf(x), leaf(w), leaf(b)
        xf = tx if o["featFirst"] else tx.transpose(-1, -2)
        y = F.conv1d(xf, tw, tb, stride=o["dW"], padding=o["padW"], groups=w.shape[0])
        if not o["featFirst"]:
            y = y.transpose(-1, -2)
        return grads(y, gout, tx, tw, tb)


class SpatialSub:
    @staticmethod
    def fwd(nn, real, x, w, b, o):
        out = nn.empty(real)
        nn.call(real, "SpatialSubSampling_updateOutput", x, out, w, b, o["kW"], o["kH"], o["dW"], o["dH"])
        return out.numpy()

    @staticmethod
    def bwd(nn, real, x, w, b, gout, o, scale, gw, gb):
        gin = nn.empty(real)
        nn.call(real, "SpatialSubSampling_updateGradInput", x, gout, gin, w, o["kW"], o["kH"], o["dW"], o["dH"])
        nn.call(real, "SpatialSubSampling_accGradParameters", x, gout, gw, gb, o["kW"], o["kH"], o["dW"], o["dH"], scale)
        return gin.numpy()

    @staticmethod
    def ref(x, w, b, gout, o):
        tx, tw, tb = leaf(x), leaf(w), leaf(b)
        c = w.shape[0]
        k = tw[:, None, None, None] * torch.ones(c, 1, o["kH"], o["kW"], dtype=torch.float64)
        y = F.conv2d(tx, k, tb, stride=(o["dH"], o["dW"]), groups=c)
        return grads(y, gout, tx, tw, tb)


class Map:
    full = False
    name = "SpatialConvolutionMap"

    @classmethod
    def fwd(cls, nn, real, x, w, b, o):
        out = nn.empty(real)
        nn.call(real, f"{cls.name}_updateOutput", x, out, w, b, o["conn"].astype(NP[real]), o["nIn"], o["nOut"],
                o["dW"], o["dH"])
        return out.numpy()

    @classmethod
    def bwd(cls, nn, real, x, w, b, gout, o, scale, gw, gb):
        gin, conn = nn.empty(real), o["conn"].astype(NP[real])
        nn.call(real, f"{cls.name}_updateGradInput", x, gout, gin, w, b, conn, o["nIn"], o["nOut"], o["dW"], o["dH"])
        nn.call(real, f"{cls.name}_accGradParameters", x, gout, gw, gb, conn, o["nIn"], o["nOut"], o["dW"], o["dH"],
                scale)
        return gin.numpy()

    @classmethod
    def ref(cls, x, w, b, gout, o):
        tx, tw, tb = leaf(x), leaf(w), leaf(b)
        xb = tx if x.ndim == 4 else tx[None]
        conv = F.conv_transpose2d if cls.full else F.conv2d
        parts = [[] for _ in range(o["nOut"])]
        for k, (i, p) in enumerate(o["conn"].astype(int)):
            parts[p].append(conv(xb[:, i:i + 1], tw[k][None, None], stride=(o["dH"], o["dW"])))
        shape = parts[int(o["conn"][0, 1])][0].shape
        y = torch.cat([sum(ps, torch.zeros(shape, dtype=torch.float64)) for ps in parts], dim=1)
        if tb is not None:
            y = y + tb[None, :, None, None]
        if x.ndim == 3:
            y = y[0]
        return grads(y, gout, tx, tw, tb)


class FullMap(Map):
    full = True
    name = "SpatialFullConvolutionMap"


class Local:
    @staticmethod
    def args(o):
        return [o[k] for k in ("kW", "kH", "dW", "dH", "padW", "padH", "iW", "iH", "oW", "oH")]

    @staticmethod
    def fwd(nn, real, x, w, b, o):
        out = nn.empty(real)
        nn.call(real, "SpatialConvolutionLocal_updateOutput", x, out, w, b, nn.empty(real), nn.empty(real),
                *Local.args(o))
        return out.numpy()

    @staticmethod
    def bwd(nn, real, x, w, b, gout, o, scale, gw, gb):
        gin = nn.empty(real)
        nn.call(real, "SpatialConvolutionLocal_updateGradInput", x, gout, gin, w, nn.empty(real), nn.empty(real),
                *Local.args(o))
        nn.call(real, "SpatialConvolutionLocal_accGradParameters", x, gout, gw, gb, None, None, *Local.args(o), scale)
        return gin.numpy()

    @staticmethod
    def ref(x, w, b, gout, o):
        tx, tw, tb = leaf(x), leaf(w), leaf(b)
        xb = tx if x.ndim == 4 else tx[None]
        cols = F.unfold(xb, (o["kH"], o["kW"]), padding=(o["padH"], o["padW"]), stride=(o["dH"], o["dW"]))
        n_out, L = o["nOut"], o["oH"] * o["oW"]
        y = torch.einsum("lok,nkl->nol", tw.reshape(L, n_out, -1), cols).reshape(xb.shape[0], n_out, o["oH"], o["oW"])
        if tb is not None:
            y = y + tb
        if x.ndim == 3:
            y = y[0]
        return grads(y, gout, tx, tw, tb)


# ---- the generic checks ----


def check_against_torch(nn, rng, real, M, xs, ws, bs, o, how="c", bias=True, scale=0.5):
    cast = lambda a: a.astype(NP[real]).astype(np.float64)  # noqa: E731
    x, w = cast(rng.standard_normal(xs)), cast(rng.standard_normal(ws))
    b = cast(rng.standard_normal(bs)) if bias else None
    th = lambda a: None if a is None else layout(a, how).astype(NP[real])  # noqa: E731
    out = M.fwd(nn, real, th(x), th(w), th(b), o)
    gout = cast(rng.standard_normal(out.shape))
    gw0 = cast(rng.standard_normal(ws))
    gb0 = cast(rng.standard_normal(bs)) if bias else None
    gw = nn.tensor(real, gw0.astype(NP[real]))
    gb = nn.tensor(real, gb0.astype(NP[real])) if bias else None
    gin = M.bwd(nn, real, th(x), th(w), th(b), th(gout), o, scale, gw, gb)
    y, gx, tgw, tgb = M.ref(x, w, b, gout, o)
    tol = 1e-4 if real == "Float" else None
    close(out, y, real, tol=tol)
    close(gin, gx, real, tol=tol)
    close(gw.numpy().reshape(ws), gw0 + scale * tgw, real, tol=tol, scale=float(np.max(np.abs(scale * tgw))))
    if bias:
        close(gb.numpy().reshape(bs), gb0 + scale * tgb, real, tol=tol, scale=float(np.max(np.abs(scale * tgb))))
    return out


def check_fd(nn, rng, M, xs, ws, bs, o):
    real = "Double"
    x, w, b = rng.standard_normal(xs), rng.standard_normal(ws), rng.standard_normal(bs)
    out = M.fwd(nn, real, x, w, b, o)
    gout = rng.standard_normal(out.shape)

    def loss(x_, w_, b_):
        return float(np.sum(M.fwd(nn, real, x_, w_, b_, o) * gout))

    gw, gb = nn.tensor(real, np.zeros(ws)), nn.tensor(real, np.zeros(bs))
    gin = M.bwd(nn, real, x, w, b, gout, o, 1.0, gw, gb)
    close(gin, fd_grad(lambda v: loss(v, w, b), x), real, tol=1e-7)
    close(gw.numpy().reshape(ws), fd_grad(lambda v: loss(x, v, b), w), real, tol=1e-7)
    close(gb.numpy().reshape(bs), fd_grad(lambda v: loss(x, w, v), b), real, tol=1e-7)


def raises(fn_name, arg, name, f):
    with pytest.raises(THError, match=rf"{fn_name}: argument {arg} \({name}\)"):
        f()


# ---- TemporalConvolution ----


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("xs,c_out,kw,dw", [((7, 3), 5, 3, 1), ((2, 11, 4), 3, 4, 3), ((3, 5, 1), 1, 5, 2),
                                            ((2, 13, 2), 6, 2, 5), ((1, 4), 2, 1, 1)])
@pytest.mark.parametrize("how", ["c", "f", "slice"])
def test_temporal_convolution(nn, rng, real, xs, c_out, kw, dw, how):
    o = {"kW": kw, "dW": dw}
    check_against_torch(nn, rng, real, TemporalConv, xs, (c_out, kw * xs[-1]), (c_out,), o, how=how)


def test_temporal_convolution_fd_and_no_bias(nn, rng):
    o = {"kW": 3, "dW": 2}
    check_fd(nn, rng, TemporalConv, (2, 7, 3), (4, 9), (4,), o)
    check_against_torch(nn, rng, "Double", TemporalConv, (2, 6, 2), (3, 6), (3,), o, bias=False)


def test_temporal_convolution_errors(nn, rng):
    real, fn = "Float", "THNN_FloatTemporalConvolution"
    out = nn.tensor(real, np.full((2, 2), 7.0, np.float32))
    x = np.zeros((5, 3), np.float32)
    w, b = np.zeros((4, 6), np.float32), np.zeros(4, np.float32)
    upd = lambda x_, w_, kw, dw, ifs, ofs: nn.call(real, "TemporalConvolution_updateOutput", x_, out, w_, b, kw, dw, ifs, ofs)  # noqa: E731
    raises(fn + "_updateOutput", 2, "input", lambda: upd(np.zeros(5, np.float32), w, 2, 1, 3, 4))
    raises(fn + "_updateOutput", 6, "kW", lambda: upd(x, w, 0, 1, 3, 4))
    raises(fn + "_updateOutput", 7, "dW", lambda: upd(x, w, 2, 0, 3, 4))
    raises(fn + "_updateOutput", 2, "input", lambda: upd(x, w, 2, 1, 4, 4))  # inputFrameSize
    raises(fn + "_updateOutput", 4, "weight", lambda: upd(x, np.zeros((4, 5), np.float32), 2, 1, 3, 4))
    raises(fn + "_updateOutput", 2, "input", lambda: upd(np.zeros((1, 3), np.float32), w, 2, 1, 3, 4))
    with pytest.raises(THError, match=r"argument 5 \(bias\)"):
        nn.call(real, "TemporalConvolution_updateOutput", x, out, w, np.zeros(3, np.float32), 2, 1, 3, 4)
    gin = nn.tensor(real, np.full((2, 2), 7.0, np.float32))
    raises(fn + "_updateGradInput", 3, "gradOutput",
           lambda: nn.call(real, "TemporalConvolution_updateGradInput", x, np.zeros((3, 4), np.float32), gin, w, 2, 1))
    gw = nn.tensor(real, np.full((4, 5), 7.0, np.float32))
    raises(fn + "_accGradParameters", 4, "gradWeight",
           lambda: nn.call(real, "TemporalConvolution_accGradParameters", x, np.zeros((4, 4), np.float32), gw, None, 2, 1, 1.0))
    for t in (out, gin, gw):
        assert (t.numpy() == 7.0).all()
    assert out.numpy().shape == (2, 2)


# ---- TemporalSubSampling ----


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("xs,kw,dw", [((9, 3), 3, 2), ((2, 7, 5), 2, 1), ((11, 1), 4, 3), ((1, 5, 2), 5, 1)])
@pytest.mark.parametrize("how", ["c", "f"])
def test_temporal_subsampling(nn, rng, real, xs, kw, dw, how):
    f = xs[-1]
    check_against_torch(nn, rng, real, TemporalSub, xs, (f,), (f,), {"kW": kw, "dW": dw}, how=how)


def test_temporal_subsampling_fd_and_no_bias(nn, rng):
    check_fd(nn, rng, TemporalSub, (8, 3), (3,), (3,), {"kW": 3, "dW": 2})
    check_fd(nn, rng, TemporalSub, (2, 5, 2), (2,), (2,), {"kW": 2, "dW": 1})
    check_against_torch(nn, rng, "Double", TemporalSub, (6, 2), (2,), (2,), {"kW": 2, "dW": 2}, bias=False)


def test_temporal_subsampling_errors(nn):
    real, fn = "Float", "THNN_FloatTemporalSubSampling"
    out = nn.tensor(real, np.full(3, 7.0, np.float32))
    x, w = np.zeros((6, 3), np.float32), np.zeros(3, np.float32)
    upd = lambda x_, w_, kw, dw, ifs: nn.call(real, "TemporalSubSampling_updateOutput", x_, out, w_, None, kw, dw, ifs)  # noqa: E731
    raises(fn + "_updateOutput", 2, "input", lambda: upd(np.zeros((1, 2, 6, 3), np.float32), w, 2, 1, 3))
    raises(fn + "_updateOutput", 4, "weight", lambda: upd(x, np.zeros(2, np.float32), 2, 1, 3))
    raises(fn + "_updateOutput", 2, "input", lambda: upd(x, w, 2, 1, 2))
    raises(fn + "_updateOutput", 2, "input", lambda: upd(x, w, 7, 1, 3))
    raises(fn + "_updateOutput", 6, "kW", lambda: upd(x, w, -1, 1, 3))
    gin = nn.tensor(real, np.full(3, 7.0, np.float32))
    raises(fn + "_updateGradInput", 3, "gradOutput",
           lambda: nn.call(real, "TemporalSubSampling_updateGradInput", x, np.zeros((4, 3), np.float32), gin, w, 2, 1))
    gb = nn.tensor(real, np.full(2, 7.0, np.float32))
    raises(fn + "_accGradParameters", 5, "gradBias",
           lambda: nn.call(real, "TemporalSubSampling_accGradParameters", x, np.zeros((5, 3), np.float32),
                           nn.tensor(real, np.zeros(3, np.float32)), gb, 2, 1, 1.0))
    for t in (out, gin, gb):
        assert (t.numpy() == 7.0).all()


# ---- TemporalRowConvolution ----


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("feat_first", [True, False])
@pytest.mark.parametrize("shape,kw,dw,pad", [((2, 3, 9), 3, 1, 0), ((4, 7), 2, 3, 1), ((1, 5, 5), 5, 2, 2),
                                             ((3, 1, 6), 1, 1, 0), ((2, 11), 4, 2, 3)])
def test_temporal_row_convolution(nn, rng, real, feat_first, shape, kw, dw, pad):
    # shape is feature-major (.., F, T); time-major calls get (.., T, F)
    f = shape[-2]
    xs = shape if feat_first else shape[:-2] + (shape[-1], f)
    o = {"kW": kw, "dW": dw, "padW": pad, "featFirst": feat_first}
    check_against_torch(nn, rng, real, TemporalRow, xs, (f, 1, kw), (f,), o, how="f" if kw % 2 else "c")


def test_temporal_row_convolution_fd_and_no_bias(nn, rng):
    for ff in (True, False):
        o = {"kW": 3, "dW": 2, "padW": 1, "featFirst": ff}
        check_fd(nn, rng, TemporalRow, (2, 3, 6) if ff else (2, 6, 3), (3, 1, 3), (3,), o)
        check_against_torch(nn, rng, "Double", TemporalRow, (2, 5) if ff else (5, 2), (2, 1, 3), (2,), o, bias=False)


def test_temporal_row_convolution_errors(nn):
    real, fn = "Float", "THNN_FloatTemporalRowConvolution"
    out = nn.tensor(real, np.full(3, 7.0, np.float32))
    x, w = np.zeros((2, 3, 6), np.float32), np.zeros((3, 1, 2), np.float32)
    upd = lambda x_, w_, kw, dw, pad, ff: nn.call(real, "TemporalRowConvolution_updateOutput", x_, out, w_, None, None, None, kw, dw, pad, ff)  # noqa: E731
    raises(fn + "_updateOutput", 4, "weight", lambda: upd(x, np.zeros((3, 2), np.float32), 2, 1, 0, True))
    raises(fn + "_updateOutput", 4, "weight", lambda: upd(x, w, 3, 1, 0, True))  # weight is [3, 1, 2]
    raises(fn + "_updateOutput", 10, "padW", lambda: upd(x, w, 2, 1, -1, True))
    raises(fn + "_updateOutput", 9, "dW", lambda: upd(x, w, 2, 0, 0, True))
    raises(fn + "_updateOutput", 2, "input", lambda: upd(x, w, 2, 1, 0, False))  # 6 features expected in dim 2
    raises(fn + "_updateOutput", 2, "input", lambda: upd(np.zeros((3, 1), np.float32), w, 2, 1, 0, True))
    upd(np.zeros((3, 1), np.float32), w, 2, 1, 1, True)  # padding makes room for the kernel
    assert out.numpy().shape == (3, 2)
    out2 = nn.tensor(real, np.full(3, 7.0, np.float32))
    gin = nn.tensor(real, np.full(3, 7.0, np.float32))
    raises(fn + "_updateGradInput", 3, "gradOutput",
           lambda: nn.call(real, "TemporalRowConvolution_updateGradInput", x, np.zeros((2, 3, 6), np.float32), gin, w,
                           None, None, 2, 1, 0, True))
    gw = nn.tensor(real, np.full((3, 2), 7.0, np.float32))
    raises(fn + "_accGradParameters", 4, "gradWeight",
           lambda: nn.call(real, "TemporalRowConvolution_accGradParameters", x, np.zeros((2, 3, 5), np.float32), gw,
                           None, None, None, 2, 1, 0, True, 1.0))
    for t in (out2, gin, gw):
        assert (t.numpy() == 7.0).all()


# ---- SpatialSubSampling ----


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("xs,k,d", [((3, 7, 8), (2, 3), (2, 1)), ((2, 2, 5, 5), (5, 5), (1, 1)),
                                    ((1, 1, 9, 4), (3, 1), (3, 2)), ((2, 6, 7), (1, 2), (1, 3))])
@pytest.mark.parametrize("how", ["c", "slice"])
def test_spatial_subsampling(nn, rng, real, xs, k, d, how):
    c = xs[-3]
    o = {"kH": k[0], "kW": k[1], "dH": d[0], "dW": d[1]}
    check_against_torch(nn, rng, real, SpatialSub, xs, (c,), (c,), o, how=how)


def test_spatial_subsampling_fd_and_no_bias(nn, rng):
    o = {"kH": 2, "kW": 3, "dH": 2, "dW": 1}
    check_fd(nn, rng, SpatialSub, (2, 2, 5, 4), (2,), (2,), o)
    check_against_torch(nn, rng, "Double", SpatialSub, (3, 4, 4), (3,), (3,), o, bias=False)


def test_spatial_subsampling_errors(nn):
    real, fn = "Float", "THNN_FloatSpatialSubSampling"
    out = nn.tensor(real, np.full(3, 7.0, np.float32))
    x, w = np.zeros((2, 4, 5), np.float32), np.zeros(2, np.float32)
    upd = lambda x_, w_, kw, kh, dw, dh: nn.call(real, "SpatialSubSampling_updateOutput", x_, out, w_, None, kw, kh, dw, dh)  # noqa: E731
    raises(fn + "_updateOutput", 2, "input", lambda: upd(np.zeros((4, 5), np.float32), w, 2, 2, 1, 1))
    raises(fn + "_updateOutput", 2, "input", lambda: upd(x, w, 2, 5, 1, 1))  # kH > H
    raises(fn + "_updateOutput", 4, "weight", lambda: upd(x, np.zeros(3, np.float32), 2, 2, 1, 1))
    raises(fn + "_updateOutput", 9, "dH", lambda: upd(x, w, 2, 2, 1, 0))
    raises(fn + "_updateOutput", 6, "kW", lambda: upd(x, w, 0, 2, 1, 1))
    with pytest.raises(THError, match=r"argument 5 \(bias\)"):
        nn.call(real, "SpatialSubSampling_updateOutput", x, out, w, np.zeros(1, np.float32), 2, 2, 1, 1)
    gin = nn.tensor(real, np.full(3, 7.0, np.float32))
    raises(fn + "_updateGradInput", 3, "gradOutput",
           lambda: nn.call(real, "SpatialSubSampling_updateGradInput", x, np.zeros((2, 3, 3), np.float32), gin, w, 2, 2, 1, 1))
    gw = nn.tensor(real, np.full(3, 7.0, np.float32))
    raises(fn + "_accGradParameters", 4, "gradWeight",
           lambda: nn.call(real, "SpatialSubSampling_accGradParameters", x, np.zeros((2, 3, 4), np.float32), gw, None,
                           2, 2, 1, 1, 1.0))
    for t in (out, gin, gw):
        assert (t.numpy() == 7.0).all()


# ---- SpatialConvolutionMap / SpatialFullConvolutionMap ----

TABLES = {
    # (nIn, nOut, rows of (input plane, output plane), 0-based)
    "full": (2, 3, [(i, o) for o in range(3) for i in range(2)]),
    "one-to-one": (3, 3, [(0, 0), (1, 1), (2, 2)]),
    "random": (4, 3, [(3, 0), (0, 0), (1, 2), (3, 2), (3, 2), (2, 1)]),  # a repeated pair, plane 3 twice
}


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("M", [Map, FullMap])
@pytest.mark.parametrize("table", list(TABLES))
@pytest.mark.parametrize("batch", [None, 2])
@pytest.mark.parametrize("k,d", [((3, 2), (1, 1)), ((2, 3), (2, 3)), ((1, 1), (1, 2))])
def test_map(nn, rng, real, M, table, batch, k, d):
    n_in, n_out, rows = TABLES[table]
    xs = (n_in, 6, 7) if batch is None else (batch, n_in, 5, 4)
    o = {"conn": np.array(rows, np.float64), "nIn": n_in, "nOut": n_out, "dH": d[0], "dW": d[1]}
    check_against_torch(nn, rng, real, M, xs, (len(rows),) + k, (n_out,), o, how="f" if batch else "slice")


def naive_map(x, w, b, conn, dh, dw, full):
    """The unbatched forward by plain loops."""
    n_out, (kh, kw), (c, h, wd) = len(b), w.shape[1:], x.shape
    oh, ow = ((h - 1) * dh + kh, (wd - 1) * dw + kw) if full else ((h - kh) // dh + 1, (wd - kw) // dw + 1)
    out = np.zeros((n_out, oh, ow)) + b[:, None, None]
    for k, (i, p) in enumerate(conn.astype(int)):
        for y in range(h if full else oh):
            for xx in range(wd if full else ow):
                for ky in range(kh):
                    for kx in range(kw):
                        if full:
                            out[p, y * dh + ky, xx * dw + kx] += x[i, y, xx] * w[k, ky, kx]
                        else:
                            out[p, y, xx] += x[i, y * dh + ky, xx * dw + kx] * w[k, ky, kx]
    return out


@pytest.mark.parametrize("M", [Map, FullMap])
def test_map_naive_loops_fd_and_extra_planes(nn, rng, M):
    real = "Double"
    n_in, n_out, rows = TABLES["random"]
    conn = np.array(rows, np.float64)
    o = {"conn": conn, "nIn": n_in, "nOut": n_out, "dH": 2, "dW": 1}
    x, w, b = rng.standard_normal((n_in, 5, 6)), rng.standard_normal((len(rows), 2, 3)), rng.standard_normal(n_out)
    close(M.fwd(nn, real, x, w, b, o), naive_map(x, w, b, conn, 2, 1, M.full), real)
    check_fd(nn, rng, M, (2, n_in, 4, 3), (len(rows), 2, 2), (n_out,), o)
    check_against_torch(nn, rng, real, M, (n_in, 4, 4), (len(rows), 2, 2), (n_out,), o, bias=False)
    # an input with more planes than nInputPlane: the extra plane is not read, its gradient is 0
    x5 = np.concatenate([x, rng.standard_normal((1, 5, 6))])
    close(M.fwd(nn, real, x5, w, b, o), naive_map(x, w, b, conn, 2, 1, M.full), real)
    out = M.fwd(nn, real, x5, w, b, o)
    gin = M.bwd(nn, real, x5, w, b, np.ones(out.shape), o, 1.0, nn.tensor(real, np.zeros(w.shape)), None)
    assert gin.shape == x5.shape and (gin[n_in] == 0).all() and (gin[:n_in] != 0).any()


@pytest.mark.parametrize("name", ["SpatialConvolutionMap", "SpatialFullConvolutionMap"])
def test_map_errors(nn, name):
    real, fn = "Float", f"THNN_Float{name}"
    out = nn.tensor(real, np.full(3, 7.0, np.float32))
    x, w = np.zeros((2, 5, 5), np.float32), np.zeros((3, 2, 2), np.float32)
    conn = np.array([[0, 0], [1, 0], [1, 1]], np.float32)

    def upd(x_=x, w_=w, conn_=conn, n_in=2, n_out=2, b=None):
        nn.call(real, f"{name}_updateOutput", x_, out, w_, b, conn_, n_in, n_out, 1, 1)

    raises(fn + "_updateOutput", 6, "connTable", lambda: upd(conn_=conn + 1))  # torch7's 1-based table
    raises(fn + "_updateOutput", 6, "connTable", lambda: upd(conn_=conn + 0.5))
    raises(fn + "_updateOutput", 6, "connTable", lambda: upd(n_out=1))
    raises(fn + "_updateOutput", 6, "connTable", lambda: upd(conn_=np.zeros((3, 3), np.float32)))
    raises(fn + "_updateOutput", 4, "weight", lambda: upd(w_=np.zeros((2, 2, 2), np.float32)))
    raises(fn + "_updateOutput", 2, "input", lambda: upd(x_=np.zeros((1, 5, 5), np.float32)))
    raises(fn + "_updateOutput", 2, "input", lambda: upd(x_=np.zeros((5, 5), np.float32)))
    raises(fn + "_updateOutput", 7, "nInputPlane", lambda: upd(n_in=0))
    raises(fn + "_updateOutput", 5, "bias", lambda: upd(b=np.zeros(3, np.float32)))
    if "Full" not in name:
        raises(fn + "_updateOutput", 2, "input", lambda: upd(w_=np.zeros((3, 6, 2), np.float32)))
    gin = nn.tensor(real, np.full(3, 7.0, np.float32))
    raises(fn + "_updateGradInput", 3, "gradOutput",
           lambda: nn.call(real, f"{name}_updateGradInput", x, np.zeros((2, 9, 9), np.float32), gin, w, None, conn, 2, 2, 1, 1))
    raises(fn + "_updateGradInput", 7, "connTable",
           lambda: nn.call(real, f"{name}_updateGradInput", x, np.zeros((2, 4, 4), np.float32), gin, w, None, conn - 1, 2, 2, 1, 1))
    gw = nn.tensor(real, np.full((3, 2, 2), 7.0, np.float32))
    gb = nn.tensor(real, np.full(3, 7.0, np.float32))
    go = np.zeros((2, 4, 4) if "Full" not in name else (2, 6, 6), np.float32)
    raises(fn + "_accGradParameters", 5, "gradBias",
           lambda: nn.call(real, f"{name}_accGradParameters", x, go, gw, gb, conn, 2, 2, 1, 1, 1.0))
    raises(fn + "_accGradParameters", 4, "gradWeight",
           lambda: nn.call(real, f"{name}_accGradParameters", x, go, nn.tensor(real, np.zeros((2, 2, 2), np.float32)),
                           None, conn, 2, 2, 1, 1, 1.0))
    for t in (out, gin, gw, gb):
        assert (t.numpy() == 7.0).all()
    assert out.numpy().shape == (3,)


# ---- SpatialConvolutionLocal ----


def local_opts(xs, n_out, k, d, p):
    ih, iw = xs[-2:]
    oh, ow = (ih + 2 * p[0] - k[0]) // d[0] + 1, (iw + 2 * p[1] - k[1]) // d[1] + 1
    return {"kH": k[0], "kW": k[1], "dH": d[0], "dW": d[1], "padH": p[0], "padW": p[1], "iH": ih, "iW": iw,
            "oH": oh, "oW": ow, "nOut": n_out}


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("xs,n_out,k,d,p", [((2, 5, 6), 3, (3, 2), (1, 1), (0, 0)), ((2, 3, 7, 5), 4, (2, 3), (2, 1), (1, 2)),
                                            ((1, 1, 4, 4), 1, (4, 4), (1, 1), (0, 0)), ((3, 6, 3), 2, (1, 1), (3, 2), (1, 0))])
@pytest.mark.parametrize("six_d", [False, True])
def test_local(nn, rng, real, xs, n_out, k, d, p, six_d):
    o = local_opts(xs, n_out, k, d, p)
    c = xs[-3]
    ws = (o["oH"], o["oW"], n_out, c) + k if six_d else (o["oH"] * o["oW"], n_out, c * k[0] * k[1])
    check_against_torch(nn, rng, real, Local, xs, ws, (n_out, o["oH"], o["oW"]), o, how="f" if six_d else "c")


def test_local_fd_buffers_and_no_bias(nn, rng):
    o = local_opts((2, 2, 4, 5), 2, (2, 3), (1, 2), (1, 1))
    ws, bs = (o["oH"] * o["oW"], 2, 2 * 6), (2, o["oH"], o["oW"])
    check_fd(nn, rng, Local, (2, 2, 4, 5), ws, bs, o)
    check_against_torch(nn, rng, "Double", Local, (2, 4, 5), ws, bs, o, bias=False)
    # finput / fgradInput are resized to torch7's sizes
    real, x = "Double", rng.standard_normal((3, 2, 4, 5))
    finput, fgin, out = nn.empty(real), nn.empty(real), nn.empty(real)
    nn.call(real, "SpatialConvolutionLocal_updateOutput", x, out, rng.standard_normal(ws), None, finput, fgin, *Local.args(o))
    L = o["oH"] * o["oW"]
    assert finput.numpy().shape == (3, 12, L)
    gin = nn.empty(real)
    nn.call(real, "SpatialConvolutionLocal_updateGradInput", x, np.ones(out.numpy().shape), gin, rng.standard_normal(ws),
            finput, fgin, *Local.args(o))
    assert fgin.numpy().shape == (3, 12, L) and gin.numpy().shape == x.shape


def test_local_errors(nn):
    real, fn = "Float", "THNN_FloatSpatialConvolutionLocal"
    x = np.zeros((2, 5, 6), np.float32)
    o = local_opts(x.shape, 3, (3, 2), (1, 1), (0, 0))
    ws = (o["oH"] * o["oW"], 3, 12)
    w, b = np.zeros(ws, np.float32), np.zeros((3, o["oH"], o["oW"]), np.float32)
    out = nn.tensor(real, np.full(3, 7.0, np.float32))

    def upd(x_=x, w_=w, b_=b, **kw):
        a = Local.args(dict(o, **kw))
        nn.call(real, "SpatialConvolutionLocal_updateOutput", x_, out, w_, b_, None, None, *a)

    raises(fn + "_updateOutput", 14, "inputWidth", lambda: upd(iW=5))
    raises(fn + "_updateOutput", 15, "inputHeight", lambda: upd(iH=6))
    raises(fn + "_updateOutput", 17, "outputHeight", lambda: upd(oH=2))
    raises(fn + "_updateOutput", 16, "outputWidth", lambda: upd(oW=9))
    raises(fn + "_updateOutput", 4, "weight", lambda: upd(w_=np.zeros((ws[0], 3, 11), np.float32)))
    raises(fn + "_updateOutput", 4, "weight", lambda: upd(w_=np.zeros((ws[0], 36), np.float32)))
    raises(fn + "_updateOutput", 5, "bias", lambda: upd(b_=np.zeros(3, np.float32)))
    raises(fn + "_updateOutput", 2, "input", lambda: upd(x_=np.zeros((5, 6), np.float32)))
    raises(fn + "_updateOutput", 12, "padW", lambda: upd(padW=-1))
    raises(fn + "_updateOutput", 2, "input", lambda: upd(kH=6))
    gin = nn.tensor(real, np.full(3, 7.0, np.float32))
    go = np.zeros((3, o["oH"], o["oW"]), np.float32)
    raises(fn + "_updateGradInput", 3, "gradOutput",
           lambda: nn.call(real, "SpatialConvolutionLocal_updateGradInput", x, go[:2], gin, w, None, None, *Local.args(o)))
    gw = nn.tensor(real, np.full(ws, 7.0, np.float32))
    gb = nn.tensor(real, np.full((3, 1), 7.0, np.float32))
    raises(fn + "_accGradParameters", 5, "gradBias",
           lambda: nn.call(real, "SpatialConvolutionLocal_accGradParameters", x, go, gw, gb, None, None, *Local.args(o), 1.0))
    for t in (out, gin, gw, gb):
        assert (t.numpy() == 7.0).all()


# ---- results do not depend on the thread count ----


def test_thread_count_independent(nn, lib, rng):
    real = "Float"
    o = local_opts((8, 4, 12, 12), 8, (3, 3), (1, 1), (1, 1))
    ws = (o["oH"] * o["oW"], 8, 36)
    x, w = rng.standard_normal((8, 4, 12, 12)).astype(np.float32), rng.standard_normal(ws).astype(np.float32)
    xt = rng.standard_normal((8, 40, 16)).astype(np.float32)
    wt = rng.standard_normal((16, 16 * 3)).astype(np.float32)
    old = lib.dll.THGetNumThreads()

    def run():
        out = Local.fwd(nn, real, x, w, None, o)
        gw = nn.tensor(real, np.zeros(ws, np.float32))
        gin = Local.bwd(nn, real, x, w, None, np.ones(out.shape, np.float32), o, 1.0, gw, None)
        t = TemporalConv.fwd(nn, real, xt, wt, None, {"kW": 3, "dW": 1})
        return out, gin, gw.numpy(), t

    try:
        lib.dll.THSetNumThreads(C.c_int(1))
        one = run()
        lib.dll.THSetNumThreads(C.c_int(4))
        four = run()
    finally:
        lib.dll.THSetNumThreads(C.c_int(old))
    for a, b in zip(one, four):
        assert np.array_equal(a, b)
