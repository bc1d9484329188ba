"""THC products (THCTensorMathBlas.h) and raw device BLAS (THCBlas.h) through the C API.

Run: TH_CUDA_EMULATOR=1 TH_LIB=$PWD/target/debug/libth.so python -m pytest -q tests/python/test_thc_blas.py

- Products (addmm, addmv, addr, addbmm, baddbmm, dot) x every THC dtype with products (Float, Double,
  Half, BFloat16, Byte, Char, Short, Int, Long) x operand layouts (contiguous, transposed, narrowed,
  selected, expanded, mixed) x fresh output / output aliased with `t`: THCuda*Tensor_op on device
  tensors against TH*Tensor_op on host tensors holding the same values in the same layouts.
  Integers: bit-exact, whole output storages. Floats: the host result within a relative bound
  (k + 2) * eps_acc * (|alpha| |x|@|y| + |beta| |t|) + eps_out * |host|, eps_acc being the
  accumulation's unit roundoff (f32 for Float, Half, BFloat16; f64 for Double) and eps_out the
  element type's (one final rounding, which an f32 difference can tip by one ulp); elements of the
  output's storage outside the view must be untouched.
- THCudaBlas_*: column-major device arrays against numpy (float64), the same relative bound.
- Errors (size mismatch, NULL, bad transpose char, invalid leading dimension): raised like the host's,
  outputs untouched.
"""

import ctypes as C

import numpy as np
import pytest
from thccases import raw, vals
from thclib import (start_thc, DevSide, HostSide, Layout, Thc, as_values, contiguous, emulated, geometry, storage_of,
                    th_error_text, view_values)
from thlib import Lib, THError

LIB = Lib()
THC = start_thc(LIB)
HOST, DEV = HostSide(LIB), DevSide(THC)

FLOATS = ["Float", "Double", "Half", "BFloat16"]
INTS = ["Byte", "Char", "Short", "Int", "Long"]
REALS = FLOATS + INTS
EPS_ACC = {"Float": 2.0**-24, "Double": 2.0**-53, "Half": 2.0**-24, "BFloat16": 2.0**-24}
EPS_OUT = {"Float": 2.0**-24, "Double": 2.0**-53, "Half": 2.0**-11, "BFloat16": 2.0**-8}
DOT_RES = {"Float": C.c_float, "Double": C.c_double, "Half": C.c_float, "BFloat16": C.c_float}
HOST_DOT_RES = {"Float": C.c_double, "Double": C.c_double, "Half": C.c_float, "BFloat16": C.c_float}

# op: shapes of (t, x, y) from (n, k, p, batches)
SHAPES = {
    "addmm": lambda n, k, p, b: ((n, p), (n, k), (k, p)),
    "addmv": lambda n, k, p, b: ((n,), (n, k), (k,)),
    "addr": lambda n, k, p, b: ((n, p), (n,), (p,)),
    "addbmm": lambda n, k, p, b: ((n, p), (b, n, k), (b, k, p)),
    "baddbmm": lambda n, k, p, b: ((b, n, p), (b, n, k), (b, k, p)),
}
KINDS = ["contig", "perm", "narrow", "select", "expand", "mixed"]


def tname(real):
    return "THCudaTensor" if real == "Float" else f"THCuda{real}Tensor"


def scalars(real):
    if real in FLOATS:
        return [(1.0, 0.0), (0.5, -2.0), (0.0, 1.5)]
    return [(1, 0), (3, 2), (0, 5)]


def numpy_product(op, alpha, beta, t, x, y):
    """float64 reference and its error scale (|alpha| |x|@|y| + |beta| |t|)."""
    mul = {"addmm": np.matmul, "addmv": np.matmul, "addr": np.outer,
           "addbmm": lambda a, b: np.matmul(a, b).sum(0), "baddbmm": np.matmul}[op]
    prod = mul(x, y)
    scale = abs(alpha) * mul(np.abs(x), np.abs(y)) + abs(beta) * np.abs(t)
    return alpha * prod + (beta * t if beta else 0), scale


def view_index(side, t):
    """Flat storage indices of `t`'s elements, in its shape."""
    sizes, strides, off = geometry(side, t)
    idx = np.full(sizes, off, dtype=np.int64)
    for d, (n, s) in enumerate(zip(sizes, strides)):
        shape = [1] * len(sizes)
        shape[d] = n
        idx = idx + (np.arange(n) * s).reshape(shape)
    return idx


def run_product(rng, op, real, kinds, alias, alpha, beta, dims=(3, 4, 5, 2)):
    n, k, p, b = dims
    ts, xs, ys = SHAPES[op](n, k, p, b)
    lays = [Layout(rng, s, kind=kd, expand=(i > 0 or not alias)) for i, (s, kd) in enumerate(zip((ts, xs, ys), kinds))]
    bases = [vals(rng, real, lay.base_shape) for lay in lays]
    out = {}
    for side in (HOST, DEV):
        t, x, y = [lay.build(side, real, base) for lay, base in zip(lays, bases)]
        r = t if alias else side.new(real)
        inputs = [as_values(real, view_values(side, v)).astype(np.float64) for v in (t, x, y)]
        side.call(real, op, None, r, LIB.scalar(real, beta), t, LIB.scalar(real, alpha), x, y)
        out[side.kind] = (view_values(side, r), storage_of(side, r), view_index(side, r), inputs)
    (hv, hs, hi, (t64, x64, y64)), (dv, ds, di, _) = out["host"], out["device"]
    what = f"{op} {real} {kinds} alias={alias} alpha={alpha} beta={beta}"
    assert hv.shape == dv.shape, what
    if real in INTS:
        np.testing.assert_array_equal(dv, hv, err_msg=what)
        np.testing.assert_array_equal(ds, hs, err_msg=f"{what}: storage")
        return
    want, scale = numpy_product(op, alpha, beta, t64, x64, y64)
    kk = k * (b if op == "addbmm" else 1)
    got, host = as_values(real, dv).astype(np.float64), as_values(real, hv).astype(np.float64)
    bound = (kk + 2) * EPS_ACC[real] * scale + EPS_OUT[real] * np.abs(host)
    if op == "addbmm":  # both engines round to the element type after each batch
        bound = bound + b * EPS_OUT[real] * scale
    fin = np.isfinite(host)
    assert np.all(np.abs(got - host)[fin] <= bound[fin]), f"{what}: device {got} host {host}"
    assert np.array_equal(np.isfinite(got), fin), what
    # The host result itself against numpy (same bound, twice: host and numpy round separately).
    assert np.all(np.abs(host - want)[fin] <= 2 * bound[fin] + 1e-300), f"{what}: host vs numpy"
    # Elements outside the view untouched.
    if alias:
        mask = np.ones(ds.shape, bool)
        mask[di.reshape(-1)] = False
        np.testing.assert_array_equal(ds[mask], hs[mask], err_msg=f"{what}: outside the view")


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("op", list(SHAPES))
def test_products_match_host(rng, op, real):
    for kind in KINDS:
        for alias in (False, True):
            for alpha, beta in scalars(real):
                kinds = ["narrow" if alias and kind == "expand" else kind, kind, kind]
                run_product(rng, op, real, kinds, alias, alpha, beta)
    # Size-1 dims and larger k.
    for dims in [(1, 1, 1, 1), (1, 7, 1, 3), (5, 1, 4, 1), (9, 33, 7, 2)]:
        run_product(rng, op, real, ["mixed", "mixed", "perm"], False, *scalars(real)[1], dims=dims)


@pytest.mark.parametrize("real", FLOATS)
def test_beta_zero_ignores_nan_in_t(real):
    t = raw(real, np.full((2, 3), np.nan, np.float32 if real == "BFloat16" else None))
    x, y = raw(real, np.ones((2, 4))), raw(real, np.ones((4, 3)))
    for side in (HOST, DEV):
        tt, xx, yy = (contiguous(side, real, a) for a in (t, x, y))
        r = side.new(real)
        side.call(real, "addmm", None, r, LIB.scalar(real, 0), tt, LIB.scalar(real, 1), xx, yy)
        np.testing.assert_array_equal(as_values(real, view_values(side, r)), np.full((2, 3), 4.0))


@pytest.mark.parametrize("real", REALS)
def test_dot(rng, real):
    for kind in KINDS:
        lays = [Layout(rng, (3, 5), kind=kind) for _ in range(2)]
        bases = [vals(rng, real, lay.base_shape, lo=-3, hi=3) for lay in lays]
        res = {}
        for side in (HOST, DEV):
            a, b = (lay.build(side, real, base) for lay, base in zip(lays, bases))
            rt = (DOT_RES.get(real, C.c_long) if side is DEV else HOST_DOT_RES.get(real, C.c_int64))
            res[side.kind] = side.call(real, "dot", rt, a, b)
            x64 = [as_values(real, view_values(side, v)).astype(np.float64) for v in (a, b)]
        want = float((x64[0] * x64[1]).sum())
        if real in INTS:
            assert res["device"] == res["host"], (real, kind)
        else:
            bound = 17 * EPS_ACC[real] * float((np.abs(x64[0]) * np.abs(x64[1])).sum()) + 2.0**-24 * abs(want)
            assert abs(res["device"] - res["host"]) <= bound and abs(res["device"] - want) <= 2 * bound, (real, kind)


@pytest.mark.parametrize("real", ["Float", "Long"])
def test_errors_leave_outputs_untouched(rng, real):
    cases = [("addmm", [(3, 5), (3, 4), (5, 5)]), ("addmv", [(3,), (3, 4), (5,)]), ("addr", [(3, 5), (3,), (4,)]),
             ("baddbmm", [(2, 3, 5), (2, 3, 4), (3, 4, 5)]), ("addbmm", [(3, 5), (2, 3, 4), (2, 5, 5)])]
    for op, shapes in cases:
        base = [vals(rng, real, s) for s in shapes]
        errs = {}
        for side in (HOST, DEV):
            t, x, y = (contiguous(side, real, a) for a in base)
            r = contiguous(side, real, vals(rng, real, (2, 2)))
            before = view_values(side, r)
            for args, tag in (((t, x, y), "size"), ((t, None, y), "null")):
                with pytest.raises(THError) as e:
                    side.call(real, op, None, r, LIB.scalar(real, 1), args[0], LIB.scalar(real, 1), *args[1:])
                errs[(side.kind, tag)] = th_error_text(e.value)
                np.testing.assert_array_equal(view_values(side, r), before)
        assert errs[("device", "size")] == errs[("host", "size")], op
        # The NULL message names the handle type (THFloatTensor / THCudaTensor): same argument.
        assert errs[("device", "null")].split(" (")[0] == errs[("host", "null")].split(" (")[0] == "argument 5", op


# ---------------------------------------------------------------------------------------------
# THCBlas.h: raw column-major BLAS on device pointers

NP = {"S": np.float32, "D": np.float64, "H": np.float16}
REAL_OF = {"S": "Float", "D": "Double", "H": "Half"}
CT = {"S": C.c_float, "D": C.c_double, "H": C.c_uint16}


def sc(p, x):
    return C.c_uint16(int(np.float16(x).view(np.uint16))) if p == "H" else CT[p](x)


class DevBuf:
    """A 1-D device tensor holding `arr` (flattened in memory order) and its device pointer."""

    def __init__(self, real, arr):
        self.real = real
        self.t = contiguous(DEV, real, np.asarray(arr).reshape(-1, order="A"))
        self.ptr = C.c_void_p(THC.call(f"{tname(real)}_data", C.c_void_p, self.t))

    def values(self):
        THC.sync()
        return as_values(self.real, view_values(DEV, self.t)).astype(np.float64)


def colmajor(rng, rows, cols, ld, dtype):
    """A column-major `rows x cols` matrix with leading dimension `ld` (padding filled too)."""
    buf = rng.uniform(-2, 2, size=(max(cols, 1), ld)).astype(dtype)
    return buf, buf.T[:rows, :cols].astype(np.float64)


def blas(name, restype, *args):
    return THC.call(f"THCudaBlas_{name}", restype, *args)


def close(p, got, want, scale, k):
    eps = {"S": 2.0**-24, "D": 2.0**-53, "H": 2.0**-11}[p]
    return np.all(np.abs(got - want) <= (k + 2) * eps * scale + eps * np.abs(want) + 1e-300)


@pytest.mark.parametrize("p", ["S", "D", "H"])
def test_raw_gemm(rng, p):
    for ta, tb in [("n", "n"), ("t", "n"), ("n", "T"), ("c", "t"), ("N", "C")]:
        for m, n, k in [(3, 4, 5), (1, 4, 2), (3, 1, 1), (1, 1, 6)]:
            ra, ca = (k, m) if ta in "tTcC" else (m, k)
            rb, cb = (n, k) if tb in "tTcC" else (k, n)
            a, am = colmajor(rng, ra, ca, ra + 2, NP[p])
            b, bm = colmajor(rng, rb, cb, rb + 1, NP[p])
            c, cm = colmajor(rng, m, n, m + 3, NP[p])
            opa, opb = (am.T if ta in "tTcC" else am), (bm.T if tb in "tTcC" else bm)
            A, B, Cb = DevBuf(REAL_OF[p], a), DevBuf(REAL_OF[p], b), DevBuf(REAL_OF[p], c)
            alpha, beta = 1.5, -0.5
            blas(f"{p}gemm", None, C.c_char(ta.encode()), C.c_char(tb.encode()), C.c_long(m), C.c_long(n), C.c_long(k),
                 sc(p, alpha), A.ptr, C.c_long(ra + 2), B.ptr, C.c_long(rb + 1), sc(p, beta), Cb.ptr, C.c_long(m + 3))
            got = Cb.values().reshape(c.shape)
            want = c.astype(np.float64).copy()
            want.T[:m, :n] = alpha * opa @ opb + beta * cm
            scale = np.zeros_like(want)
            scale.T[:m, :n] = abs(alpha) * np.abs(opa) @ np.abs(opb) + abs(beta) * np.abs(cm)
            assert close(p, got, want, scale, k), (ta, tb, m, n, k)


@pytest.mark.parametrize("p", ["S", "D"])
def test_raw_batched(rng, p):
    m, n, k, nb = 3, 4, 2, 3
    a = rng.uniform(-2, 2, size=(nb, k, m + 1)).astype(NP[p])  # each batch: m x k, lda m+1
    b = rng.uniform(-2, 2, size=(nb, k, n)).astype(NP[p])  # each: B n x k column-major (ldb n), op(B) = B^T
    c = rng.uniform(-2, 2, size=(nb, n, m)).astype(NP[p])
    want = c.astype(np.float64).copy()
    for i in range(nb):
        opa = a[i].T[:m, :k].astype(np.float64)
        opb = b[i].astype(np.float64)  # B^T: the buffer read row-major
        want[i].T[:, :] = 2.0 * opa @ opb + 1.0 * c[i].T
    real = REAL_OF[p]
    for form in ("StridedBatched", "Batched"):
        A, B, Cb = DevBuf(real, a), DevBuf(real, b), DevBuf(real, c)
        common = [C.c_char(b"n"), C.c_char(b"t"), C.c_long(m), C.c_long(n), C.c_long(k), sc(p, 2.0)]
        size = np.dtype(NP[p]).itemsize
        if form == "StridedBatched":
            blas(f"{p}gemmStridedBatched", None, *common, A.ptr, C.c_long(m + 1), C.c_long(a[0].size), B.ptr,
                 C.c_long(n), C.c_long(b[0].size), sc(p, 1.0), Cb.ptr, C.c_long(m), C.c_long(c[0].size), C.c_long(nb))
        else:
            ptrs = [DevBuf("Long", np.array([X.ptr.value + i * arr[0].size * size for i in range(nb)], np.int64))
                    for X, arr in ((A, a), (B, b), (Cb, c))]
            blas(f"{p}gemmBatched", None, *common, ptrs[0].ptr, C.c_long(m + 1), ptrs[1].ptr, C.c_long(n), sc(p, 1.0),
                 ptrs[2].ptr, C.c_long(m), C.c_long(nb))
        got = Cb.values().reshape(c.shape)
        assert np.allclose(got, want, rtol=1e-5, atol=1e-5), form


@pytest.mark.parametrize("p", ["S", "D"])
def test_raw_gemv_ger_dot(rng, p):
    real, dt = REAL_OF[p], NP[p]
    m, n, lda = 4, 3, 6
    a, am = colmajor(rng, m, n, lda, dt)
    for tr in "nt":
        lx, ly = (m, n) if tr == "t" else (n, m)
        x = rng.uniform(-2, 2, size=lx * 2).astype(dt)
        y = rng.uniform(-2, 2, size=ly * 3).astype(dt)
        A, X, Y = DevBuf(real, a), DevBuf(real, x), DevBuf(real, y)
        blas(f"{p}gemv", None, C.c_char(tr.encode()), C.c_long(m), C.c_long(n), sc(p, 2.0), A.ptr, C.c_long(lda),
             X.ptr, C.c_long(2), sc(p, 0.5), Y.ptr, C.c_long(3))
        op = am.T if tr == "t" else am
        want = y.astype(np.float64).copy()
        want[::3] = 2.0 * op @ x[::2].astype(np.float64) + 0.5 * y[::3]
        assert np.allclose(Y.values(), want, rtol=1e-5, atol=1e-5), tr
    x = rng.uniform(-2, 2, size=m * 2).astype(dt)
    y = rng.uniform(-2, 2, size=n).astype(dt)
    A, X, Y = DevBuf(real, a), DevBuf(real, x), DevBuf(real, y)
    blas(f"{p}ger", None, C.c_long(m), C.c_long(n), sc(p, -1.5), X.ptr, C.c_long(2), Y.ptr, C.c_long(1), A.ptr,
         C.c_long(lda))
    want = a.astype(np.float64).copy()
    want.T[:m, :n] += -1.5 * np.outer(x[::2], y)
    assert np.allclose(A.values().reshape(a.shape), want, rtol=1e-5, atol=1e-5)
    for pp in (p, "H") if p == "S" else (p,):
        xs = rng.uniform(-2, 2, size=10).astype(NP[pp])
        ys = rng.uniform(-2, 2, size=15).astype(NP[pp])
        X, Y = DevBuf(REAL_OF[pp], xs), DevBuf(REAL_OF[pp], ys)
        got = blas(f"{pp}dot", C.c_double if pp == "D" else C.c_float, C.c_long(5), X.ptr, C.c_long(2), Y.ptr,
                   C.c_long(3))
        want = float(xs[::2].astype(np.float64) @ ys[::3].astype(np.float64))
        assert abs(got - want) <= (1e-2 if pp == "H" else 1e-5) * (1 + abs(want)), pp


def test_raw_errors_leave_memory_untouched(rng):
    a, _ = colmajor(rng, 3, 3, 3, np.float32)
    A, Cb = DevBuf("Float", a), DevBuf("Float", a.copy())
    before = Cb.values()
    bad = [
        ("x", "n", 3, 3),  # bad transpose char
        ("n", "n", 3, 2),  # ldc (2) < m (3): cuBLAS's invalid value
        ("n", "n", -1, 3),  # negative size
    ]
    for ta, tb, m, ldc in bad:
        with pytest.raises(THError):
            blas("Sgemm", None, C.c_char(ta.encode()), C.c_char(tb.encode()), C.c_long(m), C.c_long(3), C.c_long(3),
                 C.c_float(1), A.ptr, C.c_long(3), A.ptr, C.c_long(3), C.c_float(0), Cb.ptr, C.c_long(ldc))
        np.testing.assert_array_equal(Cb.values(), before)
    with pytest.raises(THError):
        blas("Sgemv", None, C.c_char(b"n"), C.c_long(3), C.c_long(3), C.c_float(1), A.ptr, C.c_long(3), A.ptr,
             C.c_long(0), C.c_float(0), Cb.ptr, C.c_long(1))
    np.testing.assert_array_equal(Cb.values(), before)


@pytest.mark.parametrize("real", ["Float", "Double"])
def test_btrifact_btrisolve_staged_through_the_host(rng, real):
    nb, n = 3, 4
    a = vals(rng, real, (nb, n, n))
    b = vals(rng, real, (nb, n))
    out = {}
    for side in (HOST, DEV):
        A, B = contiguous(side, real, a), contiguous(side, real, b)
        ra, rb = side.new(real), side.new(real)
        piv, info = side.new("Int"), side.new("Int")
        side.call(real, "btrifact", None, ra, piv, info, C.c_int(1), A)
        side.call(real, "btrisolve", None, rb, B, ra, piv)
        out[side.kind] = [view_values(side, t) for t in (ra, piv, info, rb)]
        with pytest.raises(THError) as e:  # a 2-D matrix: the host's check, outputs untouched
            side.call(real, "btrifact", None, ra, piv, info, C.c_int(1), B)
        assert "expected 3D tensor" in th_error_text(e.value)
        np.testing.assert_array_equal(view_values(side, ra), out[side.kind][0])
    for got, want in zip(out["device"], out["host"]):
        np.testing.assert_array_equal(got, want)


def test_raw_null_matrices_are_errors():
    a = np.ones((3, 3), np.float32)
    Cb = DevBuf("Float", a)
    for name, pos in (("a", 7), ("c", 12)):
        ptrs = {"a": Cb.ptr, "c": Cb.ptr, name: None}
        with pytest.raises(THError) as e:
            blas("Sgemm", None, C.c_char(b"n"), C.c_char(b"n"), C.c_long(3), C.c_long(3), C.c_long(3), C.c_float(1),
                 C.c_void_p(ptrs["a"] and ptrs["a"].value), C.c_long(3), Cb.ptr, C.c_long(3), C.c_float(0),
                 C.c_void_p(ptrs["c"] and ptrs["c"].value), C.c_long(3))
        assert f"argument {pos}" in th_error_text(e.value)
        np.testing.assert_array_equal(Cb.values(), np.ones(9))
