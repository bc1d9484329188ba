"""numpy differential tests for THTensorConv (conv2D*/conv3D*, the pointer helpers, conv2d/conv3d,
convsize) against a naive reference written here from the definitions:

- valid cross-correlation: out[o] = sum over taps j of k[j] * in[o*s + j] (one strided slice of the
  input per kernel tap); 'C' (convolution) = the same with the kernel flipped in every dim;
- full: the scatter form out[i*s + j] += in[i] * k[j] for convolution, flipped kernel for 'X';
- Rev: out[o] = sum over j of k[j] * in[j*s + o] (kernel gradient of a strided valid xcorr).

Every dtype (integers wrap: the reference runs in int64 and is cast), random sizes, strides,
alpha/beta, non-contiguous inputs and outputs, TH's output rules (fresh / reused / reshaped /
wrong-size r_), the pointer helpers on raw buffers, and errors that leave r_ untouched."""

import ctypes as C
import itertools

import numpy as np
import pytest
from cases import random_values, random_view, round_to
from thlib import DTYPES, INTS, NUMERIC, THError, bf16_to_f32, f32_to_bf16

# relative tolerance against the magnitude of the terms (sum of |products|)
TOL = {"Float": 3e-5, "Double": 1e-12, "Half": 2e-3, "BFloat16": 1e-2}


# ---------------------------------------------------------------- reference (float64 / int64)


def taps(shape):
    return itertools.product(*[range(n) for n in shape])


def ref_valid(inp, ker, s):
    nd = ker.ndim
    o = [(inp.shape[d] - ker.shape[d]) // s[d] + 1 for d in range(nd)]
    out = np.zeros(o, dtype=inp.dtype)
    for j in taps(ker.shape):
        sl = tuple(slice(j[d], j[d] + (o[d] - 1) * s[d] + 1, s[d]) for d in range(nd))
        out = out + ker[j] * inp[sl]
    return out


def ref_full(inp, ker, s):
    nd = ker.ndim
    o = [(inp.shape[d] - 1) * s[d] + ker.shape[d] for d in range(nd)]
    out = np.zeros(o, dtype=inp.dtype)
    for j in taps(ker.shape):
        sl = tuple(slice(j[d], j[d] + (inp.shape[d] - 1) * s[d] + 1, s[d]) for d in range(nd))
        out[sl] = out[sl] + ker[j] * inp
    return out


def ref_rev(inp, ker, s):
    nd = ker.ndim
    o = [inp.shape[d] - (ker.shape[d] - 1) * s[d] for d in range(nd)]
    out = np.zeros(o, dtype=inp.dtype)
    for j in taps(ker.shape):
        sl = tuple(slice(j[d] * s[d], j[d] * s[d] + o[d]) for d in range(nd))
        out = out + ker[j] * inp[sl]
    return out


def flip(k):
    return k[tuple(slice(None, None, -1) for _ in range(k.ndim))]


def ref_conv(inp, ker, s, vf, xc):
    if vf == "V":
        return ref_valid(inp, flip(ker) if xc == "C" else ker, s)
    return ref_full(inp, flip(ker) if xc == "X" else ker, s)


def outsize(n, k, s, vf):
    return (n - k) // s + 1 if vf == "V" else (n - 1) * s + k


# --------------------------------------------------------------------------- helpers


def wide(real, a):
    a = np.asarray(a)
    return a.astype(np.int64) if real in INTS else a.astype(np.float64)


def pick_scalars(rng, real):
    if real in INTS:
        vals = [0, 1, 2, 3, -1] if real != "Byte" else [0, 1, 2, 3, 255]
        return int(rng.choice(vals[1:])), int(rng.choice(vals))
    a = float(rng.choice([1.0, 0.5, -2.0, 1.5]))
    b = float(rng.choice([0.0, 1.0, 0.25, -1.0]))
    return a, b


def vals(rng, real, shape):
    if real in INTS:
        return random_values(rng, real, shape)  # full range: exercises wrap-around
    return random_values(rng, real, shape, -2.0, 2.0)


def as_dtype(real, x):
    return round_to(real, x) if real not in INTS else np.asarray(x).astype(DTYPES[real][0])


def check(real, got, want, mag):
    got = np.asarray(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    if real in INTS:
        np.testing.assert_array_equal(got, want.astype(DTYPES[real][0]))
    else:
        err = np.abs(got.astype(np.float64) - want.astype(np.float64))
        bound = TOL[real] * (mag + 1e-30) + (1e-6 if real in ("Half", "BFloat16") else 0)
        assert np.all(err <= bound), (np.max(err - bound), got, want)


def sv(rng, a):
    """Maybe a non-contiguous view of `a`."""
    return random_view(rng, a)


def out_tensor(lib, rng, real, shape, beta):
    """An output tensor and the 'old' values the reference must scale: one of a fresh tensor,
    a same-shape (maybe transposed) tensor, a same-numel different shape, or a wrong size."""
    kind = int(rng.integers(0, 4))
    n = int(np.prod(shape))
    if kind == 0:
        return lib.new(real), wide(real, np.zeros(shape))
    if kind == 1:
        r0 = vals(rng, real, shape)
        return lib.from_numpy(sv(rng, r0), real), wide(real, r0)
    if kind == 2 and len(shape) > 1:
        r0 = vals(rng, real, (n,))
        return lib.from_numpy(r0.reshape(shape[::-1]) if shape[::-1] != shape else r0, real), wide(real, r0).reshape(shape)
    r0 = vals(rng, real, (n + 3,))
    return lib.from_numpy(r0, real), wide(real, np.zeros(shape))  # element count changes: zeroed


def combine(real, beta, old, alpha, conv):
    if real in INTS:
        return (np.int64(beta) * old + np.int64(alpha) * conv) if beta != 0 else np.int64(alpha) * conv
    return (beta * old if beta != 0 else 0) + alpha * conv


STR = {v: C.c_char_p(v.encode()) for v in "VFXC"}


# ------------------------------------------------------------------------- the functions
# each spec: (input dims, kernel dims, output builder) in terms of the reference


def run_case(lib, rng, real, fn, nd, vf, xc, big=False):
    """One random call of tensor function `fn`; returns nothing, asserts. `big`: sizes past the
    library's GEMM thresholds: mv/mm with >= 4 output planes, >= 16 kernel taps over all input
    planes and >= 16 output positions (full mode: unit strides); Rev forms with >= 4 kernels of
    >= 64 taps. On an AVX2 CPU these run as implicit GEMM (Rev: with kernel rows of 8 or more),
    else (and under TH_CPU_CAPABILITY=scalar) as im2col + GEMM."""
    is_rev = fn.endswith("Revger") or fn.endswith("Revgerm")
    s = [int(rng.integers(1, 3 if big else 4)) for _ in range(nd)]
    if big and vf == "F" and not is_rev:
        s = [1] * nd
    ksz = [int(rng.integers(2 if big else 1, 4)) for _ in range(nd)]
    if big and is_rev:
        # 3-D: rows of 8-9 taps in the last dimension (the implicit-GEMM Rev kernel needs 8)
        ksz = [int(rng.integers(8, 12)) for _ in range(2)] if nd == 2 else [int(rng.integers(4, 6)), int(rng.integers(4, 6)), int(rng.integers(8, 10))]
        isz = list(ksz)  # grown below to a non-empty Rev output
    elif big and vf == "F":
        isz = [int(rng.integers(8, 14) if nd == 2 else rng.integers(3, 6)) for _ in range(nd)]
    elif big:
        isz = [ksz[d] + int(rng.integers(14, 21) if nd == 2 else rng.integers(6, 9)) for d in range(nd)]
    elif vf == "V" or fn.endswith("Revger") or fn.endswith("Revgerm"):
        isz = [ksz[d] + int(rng.integers(0, 7)) for d in range(nd)]
    else:
        isz = [int(rng.integers(1, 6)) for _ in range(nd)]
    if fn.endswith("Revger") or fn.endswith("Revgerm"):
        # output must be non-empty: in - (k-1)*s >= 1
        isz = [max(isz[d], (ksz[d] - 1) * s[d] + 1 + int(rng.integers(0, 3))) for d in range(nd)]
    alpha, beta = pick_scalars(rng, real)
    nin, nout, nb = int(rng.integers(1, 4)), int(rng.integers(1, 4)), int(rng.integers(1, 3))
    if big:
        nin, nout = int(rng.integers(2, 5)), int(rng.integers(4, 8))
    base = fn[6:]  # after "conv2D"/"conv3D"
    mapm = None
    if base == "mul":
        tin, tk = vals(rng, real, isz), vals(rng, real, ksz)
    elif base in ("Revger", "ger"):
        tin, tk = vals(rng, real, [nin] + isz), vals(rng, real, [nout] + ksz)
    elif base == "Revgerm":
        tin, tk = vals(rng, real, [nb, nin] + isz), vals(rng, real, [nb, nout] + ksz)
    elif base == "mv":
        tin, tk = vals(rng, real, [nin] + isz), vals(rng, real, [nout, nin] + ksz)
    elif base == "mm":
        tin, tk = vals(rng, real, [nb, nin] + isz), vals(rng, real, [nout, nin] + ksz)
    elif base in ("cmul", "map"):
        tin, tk = vals(rng, real, [nin] + isz), vals(rng, real, [nin] + ksz)
        if base == "map":
            m = int(rng.integers(1, nin + 1))
            mapm = np.stack([rng.integers(1, nin + 1, size=m), rng.integers(1, nin + 1, size=m)], axis=1)
    else:
        raise AssertionError(fn)
    wi, wk = wide(real, tin), wide(real, tk)
    ai, ak = np.abs(wi).astype(np.float64), np.abs(wk).astype(np.float64)

    rev = base in ("Revger", "Revgerm")

    def one(i, k):
        return ref_rev(i, k, s) if rev else ref_conv(i, k, s, vf, xc)

    def compute(i_all, k_all):
        if base == "mul":
            return one(i_all, k_all)
        if base in ("Revger", "ger"):
            return np.stack([np.stack([one(i_all[i], k_all[k]) for i in range(nin)]) for k in range(nout)])
        if base == "Revgerm":
            return np.stack(
                [np.stack([sum(one(i_all[b, i], k_all[b, k]) for b in range(nb)) for i in range(nin)]) for k in range(nout)]
            )
        if base == "mv":
            return np.stack([sum(one(i_all[i], k_all[o, i]) for i in range(nin)) for o in range(nout)])
        if base == "mm":
            return np.stack(
                [np.stack([sum(one(i_all[b, i], k_all[o, i]) for i in range(nin)) for o in range(nout)]) for b in range(nb)]
            )
        if base == "cmul":
            return np.stack([one(i_all[p], k_all[p]) for p in range(nin)])
        if base == "map":
            o = np.zeros((nin,) + one(i_all[0], k_all[0]).shape, dtype=i_all.dtype)
            for row, (f, t) in enumerate(mapm):
                o[t - 1] = o[t - 1] + one(i_all[f - 1], k_all[row])
            return o

    conv = compute(wi, wk)
    mag_conv = compute(ai, ak)
    r, old = out_tensor(lib, rng, real, conv.shape, beta)
    args = [r, lib.scalar(real, beta), lib.scalar(real, alpha), lib.from_numpy(sv(rng, tin), real), lib.from_numpy(sv(rng, tk), real)]
    if mapm is not None:
        args.append(lib.from_numpy(mapm.astype(np.float64 if real not in INTS else np.int64), real))
    args += [C.c_int64(v) for v in s]
    if not rev:
        args += [STR[vf], STR[xc]]
    lib.call(f"TH{real}Tensor_{fn}", None, *args)
    want = combine(real, beta, old, alpha, conv)
    mag = (abs(beta) * np.abs(old) if beta != 0 else 0) + abs(alpha) * mag_conv
    check(real, lib.to_numpy(r), want, mag)


FNS2 = ["conv2Dmv", "conv2Dmm", "conv2Dger", "conv2Dmul", "conv2Dcmul", "conv2Dmap", "conv2DRevger", "conv2DRevgerm"]
FNS3 = ["conv3Dmv", "conv3Dger", "conv3Dmul", "conv3Dcmul", "conv3Dmap", "conv3DRevger"]


@pytest.mark.parametrize("real", NUMERIC)
@pytest.mark.parametrize("fn", FNS2 + FNS3)
def test_tensor_functions(lib, rng, real, fn):
    nd = 2 if fn.startswith("conv2D") else 3
    modes = [("V", "X"), ("V", "C"), ("F", "X"), ("F", "C")]
    if "Rev" in fn:
        modes = [("V", "X")] * 2
    for vf, xc in modes:
        for _ in range(2 if nd == 2 else 1):
            run_case(lib, rng, real, fn, nd, vf, xc)


@pytest.mark.parametrize("real", ["Float", "Double", "Half", "BFloat16"])
@pytest.mark.parametrize("fn", ["conv2Dmv", "conv2Dmm", "conv3Dmv", "conv2DRevger", "conv2DRevgerm", "conv3DRevger"])
def test_gemm_path(lib, rng, real, fn):
    """Calls large enough for the im2col + GEMM paths: mv/mm in valid and full mode (a valid
    product on a zero-padded input), both kernel orientations; the Rev forms."""
    nd = 3 if fn.startswith("conv3D") else 2
    modes = [("V", "X")] if "Rev" in fn else [("V", "X"), ("V", "C"), ("F", "X"), ("F", "C")]
    for vf, xc in modes:
        for _ in range(2):
            run_case(lib, rng, real, fn, nd, vf, xc, big=True)


# (C name stem, mode; None = Rev)
PTR = [("validXCorr", ("V", "X")), ("validConv", ("V", "C")), ("fullXCorr", ("F", "X")), ("fullConv", ("F", "C")), ("validXCorr", None)]


def ptr(a):
    return C.c_void_p(a.ctypes.data)


@pytest.mark.parametrize("real", NUMERIC)
@pytest.mark.parametrize("nd", [2, 3])
def test_pointer_helpers(lib, rng, real, nd):
    npdt = DTYPES[real][0]
    for name, mode in PTR + [(f"conv{nd}d", m) for _, m in PTR if m]:
        s = [int(rng.integers(1, 4)) for _ in range(nd)]
        k = [int(rng.integers(1, 4)) for _ in range(nd)]
        if mode is None:
            i = [(k[d] - 1) * s[d] + 1 + int(rng.integers(0, 4)) for d in range(nd)]
        elif mode[0] == "V":
            i = [k[d] + int(rng.integers(0, 6)) for d in range(nd)]
        else:
            i = [int(rng.integers(1, 6)) for _ in range(nd)]
        tin, tk = vals(rng, real, i), vals(rng, real, k)
        wi, wk = wide(real, tin), wide(real, tk)
        if mode is None:
            conv = ref_rev(wi, wk, s)
            mag = ref_rev(np.abs(wi).astype(float), np.abs(wk).astype(float), s)
        else:
            conv = ref_conv(wi, wk, s, *mode)
            mag = ref_conv(np.abs(wi).astype(float), np.abs(wk).astype(float), s, *mode)
        alpha = pick_scalars(rng, real)[0]
        r0 = vals(rng, real, conv.shape)
        bufs = [np.array(x if real != "BFloat16" else round_to(real, x), copy=True, order="C") for x in (r0, tin, tk)]
        if real == "BFloat16":
            bufs = [np.ascontiguousarray(f32_to_bf16(b)) for b in bufs]
        rb, tb, kb = bufs
        if name in ("conv2d", "conv3d"):
            fname = f"TH{real}Tensor_{name}"
            tail = [STR[mode[0]], STR[mode[1]]]
        else:
            fname = f"TH{real}Tensor_{name}{nd}D{'Rev' if mode is None else ''}ptr"
            tail = []
        args = [ptr(rb), lib.scalar(real, alpha), ptr(tb)] + [C.c_int64(v) for v in i]
        args += [ptr(kb)] + [C.c_int64(v) for v in k] + [C.c_int64(v) for v in s] + tail
        lib.call(fname, None, *args)
        got = rb if real != "BFloat16" else bf16_to_f32(rb)
        want = wide(real, r0) + (np.int64(alpha) if real in INTS else alpha) * conv
        check(real, got, want, np.abs(wide(real, r0)).astype(float) + abs(alpha) * mag)


def test_convsize(lib):
    def f(x, k, s, vf):
        return lib.call("THFloatTensor_convsize", C.c_int64, C.c_int64(x), C.c_int64(k), C.c_int64(s), STR[vf])

    assert f(10, 3, 1, "V") == 8
    assert f(10, 3, 3, "V") == 3
    assert f(10, 3, 2, "F") == 21
    with pytest.raises(THError):
        f(10, 3, 0, "V")
    with pytest.raises(THError):
        lib.call("THFloatTensor_convsize", C.c_int64, C.c_int64(3), C.c_int64(1), C.c_int64(1), C.c_char_p(b"Q"))


def test_errors_leave_output_untouched(lib, rng):
    real = "Float"
    r0 = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = lib.from_numpy(np.ones((2, 5, 5), np.float32), real)
    k4 = lib.from_numpy(np.ones((3, 2, 2, 2), np.float32), real)
    kbig = lib.from_numpy(np.ones((3, 2, 6, 2), np.float32), real)
    one, zero = lib.scalar(real, 1.0), lib.scalar(real, 0.0)
    cases = [
        ("conv2Dmv", [t, k4, C.c_int64(0), C.c_int64(1), STR["V"], STR["X"]]),  # stride < 1
        ("conv2Dmv", [t, k4, C.c_int64(1), C.c_int64(1), C.c_char_p(b"Q"), STR["X"]]),  # bad vf
        ("conv2Dmv", [t, k4, C.c_int64(1), C.c_int64(1), STR["V"], C.c_char_p(b"x")]),  # bad xc
        ("conv2Dmv", [t, kbig, C.c_int64(1), C.c_int64(1), STR["V"], STR["X"]]),  # kernel too big
        ("conv2Dmv", [k4, k4, C.c_int64(1), C.c_int64(1), STR["V"], STR["X"]]),  # 4-D input
        ("conv2Dmv", [t, lib.from_numpy(np.ones((3, 3, 2, 2), np.float32), real), C.c_int64(1), C.c_int64(1), STR["V"], STR["X"]]),
        ("conv2Dger", [t, k4, C.c_int64(1), C.c_int64(1), STR["V"], STR["X"]]),  # 4-D kernel
        ("conv2DRevger", [t, lib.from_numpy(np.ones((3, 3, 3), np.float32), real), C.c_int64(3), C.c_int64(1)]),  # empty out
        ("conv2DRevgerm", [lib.from_numpy(np.ones((2, 2, 5, 5), np.float32), real), lib.from_numpy(np.ones((3, 2, 2, 2), np.float32), real), C.c_int64(1), C.c_int64(1)]),
        ("conv2Dmv", [None, k4, C.c_int64(1), C.c_int64(1), STR["V"], STR["X"]]),  # NULL input
        ("conv2Dmv", [t, k4, C.c_int64(1), C.c_int64(1), None, STR["X"]]),  # NULL vf
        ("conv2Dcmul", [t, lib.from_numpy(np.ones((3, 2, 2), np.float32), real), C.c_int64(1), C.c_int64(1), STR["V"], STR["X"]]),
    ]
    for fn, rest in cases:
        r = lib.from_numpy(r0, real)
        with pytest.raises(THError):
            lib.call(f"THFloatTensor_{fn}", None, r, zero, one, *rest)
        np.testing.assert_array_equal(lib.to_numpy(r), r0)
    # map: out-of-range (0 is invalid: map indices are 1-based), too many rows
    tt = lib.from_numpy(np.ones((2, 4, 4), np.float32), real)
    kk = lib.from_numpy(np.ones((2, 2, 2), np.float32), real)
    for m in (np.array([[0, 1]]), np.array([[1, 3]]), np.array([[1, 1], [2, 2], [1, 2]])):
        r = lib.from_numpy(r0, real)
        with pytest.raises(THError):
            lib.call("THFloatTensor_conv2Dmap", None, r, zero, one, tt, kk, lib.from_numpy(m.astype(np.float32), real),
                     C.c_int64(1), C.c_int64(1), STR["V"], STR["X"])
        np.testing.assert_array_equal(lib.to_numpy(r), r0)


def test_output_aliasing_input(lib, rng):
    """r_ == t_: the input is read before the output is written."""
    real = "Double"
    a = rng.normal(size=(4, 4))
    k = rng.normal(size=(2, 2))
    t = lib.from_numpy(a, real)
    lib.call("THDoubleTensor_conv2Dmul", None, t, lib.scalar(real, 0.5), lib.scalar(real, 2.0), t, lib.from_numpy(k, real),
             C.c_int64(1), C.c_int64(1), STR["F"], STR["C"])
    want = 2.0 * ref_full(a, k, [1, 1])  # element count changed: zeroed, not scaled
    np.testing.assert_allclose(lib.to_numpy(t), want, rtol=1e-12, atol=1e-12)
    t = lib.from_numpy(a, real)
    k = rng.normal(size=(1, 1))
    lib.call("THDoubleTensor_conv2Dmul", None, t, lib.scalar(real, 0.5), lib.scalar(real, 2.0), t, lib.from_numpy(k, real),
             C.c_int64(1), C.c_int64(1), STR["V"], STR["X"])
    np.testing.assert_allclose(lib.to_numpy(t), 0.5 * a + 2.0 * k[0, 0] * a, rtol=1e-12)


def test_beta_zero_ignores_nan(lib):
    r = lib.from_numpy(np.full((3, 3), np.nan, np.float32), "Float")
    lib.call("THFloatTensor_conv2Dmul", None, r, lib.scalar("Float", 0.0), lib.scalar("Float", 1.0),
             lib.from_numpy(np.ones((4, 4), np.float32), "Float"), lib.from_numpy(np.ones((2, 2), np.float32), "Float"),
             C.c_int64(1), C.c_int64(1), STR["V"], STR["X"])
    np.testing.assert_array_equal(lib.to_numpy(r), np.full((3, 3), 4.0, np.float32))


def test_larger_parallel_case(lib, rng):
    """Big enough to split over threads; compared with the reference."""
    real = "Float"
    t = rng.normal(size=(6, 40, 37)).astype(np.float32)
    k = rng.normal(size=(5, 6, 5, 4)).astype(np.float32)
    r = lib.new(real)
    for vf, xc in (("V", "X"), ("F", "C")):
        lib.call("THFloatTensor_conv2Dmv", None, r, lib.scalar(real, 0.0), lib.scalar(real, 1.0), lib.from_numpy(t, real),
                 lib.from_numpy(k, real), C.c_int64(1), C.c_int64(2), STR[vf], STR[xc])
        want = np.stack([sum(ref_conv(t[i].astype(float), k[o, i].astype(float), [1, 2], vf, xc) for i in range(6)) for o in range(5)])
        mag = np.stack([sum(ref_conv(np.abs(t[i]).astype(float), np.abs(k[o, i]).astype(float), [1, 2], vf, xc) for i in range(6)) for o in range(5)])
        check(real, lib.to_numpy(r), want, mag)


@pytest.mark.parametrize("real", ["Float", "Int"])
def test_weight_gradient_shapes(lib, rng, real):
    """conv2DRevger / Revgerm with kernels (gradients) nearly as large as the input: few output
    columns, long kernel rows (the dot-product path), with and without strides."""
    for s in ([1, 1], [2, 1], [1, 2]):
        oh, ow = 20, 40
        kh, kw = 3, 4
        h, w = (oh - 1) * s[0] + kh, (ow - 1) * s[1] + kw
        x = vals(rng, real, (2, 2, h, w))
        g = vals(rng, real, (2, 3, oh, ow))
        r = lib.new(real)
        lib.call(f"TH{real}Tensor_conv2DRevgerm", None, r, lib.scalar(real, 0), lib.scalar(real, 1), lib.from_numpy(x, real),
                 lib.from_numpy(sv(rng, g), real), C.c_int64(s[0]), C.c_int64(s[1]))
        wx, wg = wide(real, x), wide(real, g)
        want = np.stack([np.stack([sum(ref_rev(wx[b, i], wg[b, k], s) for b in range(2)) for i in range(2)]) for k in range(3)])
        mag = np.stack([np.stack([sum(ref_rev(np.abs(wx[b, i]).astype(float), np.abs(wg[b, k]).astype(float), s) for b in range(2)) for i in range(2)]) for k in range(3)])
        assert want.shape[2:] == (h - (oh - 1) * s[0], w - (ow - 1) * s[1])
        check(real, lib.to_numpy(r), want, mag)


@pytest.mark.parametrize("real", ["Float", "Double"])
def test_full_mode_non_finite_kernel(lib, rng, real):
    """Full mode sums input elements only (TH's scatter form): an infinite kernel value gives
    +-inf where it meets non-zero inputs, and no NaN from the zero border a padded (GEMM)
    evaluation would multiply it by. Sizes past the GEMM thresholds."""
    dt = np.float32 if real == "Float" else np.float64
    t = (rng.integers(1, 4, size=(3, 12, 13)) * rng.choice([-1, 1], size=(3, 12, 13))).astype(dt)
    k = rng.integers(1, 4, size=(5, 3, 3, 4)).astype(dt)
    k[2, 1, 0, 3] = np.inf
    r = lib.new(real)
    lib.call(f"TH{real}Tensor_conv2Dmv", None, r, lib.scalar(real, 0.0), lib.scalar(real, 1.0), lib.from_numpy(t, real),
             lib.from_numpy(k, real), C.c_int64(1), C.c_int64(1), STR["F"], STR["X"])
    with np.errstate(invalid="ignore"):
        want = np.stack([sum(ref_conv(t[i].astype(float), k[o, i].astype(float), [1, 1], "F", "X") for i in range(3)) for o in range(5)])
    got = lib.to_numpy(r)
    assert np.isinf(want).any()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[np.isinf(want)], want[np.isinf(want)])
    fin = np.isfinite(want)
    np.testing.assert_allclose(got[fin], want[fin], rtol=1e-5)
