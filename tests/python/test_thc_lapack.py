"""THC's LAPACK (THCTensorMathMagma.h), batched getrf/getrs/getri (THCBlas.h) and THC_sleep.

Run: TH_CUDA_EMULATOR=1 TH_LIB=$PWD/target/debug/libth.so python -m pytest -q tests/python/test_thc_lapack.py

- Every THCuda{,Double}Tensor LAPACK function against TH{Float,Double}Tensor's on the same values
  and layouts (contiguous, column-major with padding at an offset; fresh, pre-shaped and in-place
  outputs): the device staging runs the host code, so results must be bit-identical, geometry
  (sizes, strides) included; plus independent checks against numpy (solve, inverse, products
  reconstructing A from its factors).
- Errors (singular gesv/getri, non-square, non-positive-definite potrf, bad option strings,
  cutorch's 2-D b and m >= n): the host's message, every output untouched (values and geometry).
- THCudaBlas_{S,D}getr{f,s,i}: device arrays of device matrix pointers (THCudaTensor data
  pointers) against numpy's LU-based solve and inverse, pivots against the LAPACK rule, info.
- THC_sleep returns (and rejects negative counts).
"""

import ctypes as C

import numpy as np
import pytest
from thclib import (start_thc, DevSide, HostSide, contiguous, geometry, on_storage, raw_dtype, storage_of,
                    th_error_text, view_values)
from thlib import Lib, THError

LIB = Lib()
THC = start_thc(LIB)
HOST, DEV = HostSide(LIB), DevSide(THC)
REALS = ["Float", "Double"]
EPS = {"Float": 2.0**-24, "Double": 2.0**-53}


def padded(side, real, a):
    """`a` (2-D) as a column-major view with leading dimension rows+2, at offset 3; a 1-D `a`
    with stride 2."""
    if a.ndim == 1:
        buf = np.full(3 + 2 * len(a), 7.0)
        buf[3::2] = a
        st = side.storage(real, buf.astype(raw_dtype(real)))
        t = on_storage(side, real, st, 3, a.shape, (2,))
        side.free_storage(real, st)
        return t
    rows, cols = a.shape
    ld = rows + 2
    buf = np.full(3 + ld * max(cols, 1), 7.0)
    for j in range(cols):
        buf[3 + j * ld:3 + j * ld + rows] = a[:, j]
    st = side.storage(real, buf.astype(raw_dtype(real)))
    t = on_storage(side, real, st, 3, a.shape, (1, ld))
    side.free_storage(real, st)
    return t


def make(side, real, a, layout):
    return padded(side, real, a) if layout == "padded" else contiguous(side, real, a)


def state(side, ts):
    return [(geometry(side, t)[:2], view_values(side, t).tobytes()) for t in ts]


def spd(rng, n):
    m = rng.uniform(-1, 1, (n, n))
    return m @ m.T + n * np.eye(n)


def s(x):
    return C.c_char_p(x.encode())


# name -> (inputs from rng, number of outputs, call(side, real, outs, ins))
def cases(rng):
    a, b = rng.uniform(-2, 2, (4, 4)) + 4 * np.eye(4), rng.uniform(-2, 2, (4, 3))
    tall, tb = rng.uniform(-2, 2, (5, 3)), rng.uniform(-2, 2, (5, 2))
    sym, p = rng.uniform(-2, 2, (4, 4)), spd(rng, 4)
    chol = np.linalg.cholesky(p).T  # U with P = U^T U
    wide = rng.uniform(-2, 2, (3, 5))
    return {
        "gesv": ([b, a], 2, lambda sd, r, o, i: sd.call(r, "gesv", None, o[0], o[1], i[0], i[1])),
        "gels": ([tb, tall], 2, lambda sd, r, o, i: sd.call(r, "gels", None, o[0], o[1], i[0], i[1])),
        "syevV": ([sym], 2, lambda sd, r, o, i: sd.call(r, "syev", None, o[0], o[1], i[0], s("V"), s("U"))),
        "syevN": ([sym], 2, lambda sd, r, o, i: sd.call(r, "syev", None, o[0], o[1], i[0], s("N"), s("L"))),
        "geev": ([a], 2, lambda sd, r, o, i: sd.call(r, "geev", None, o[0], o[1], i[0], s("V"))),
        "gesvdA": ([wide], 3, lambda sd, r, o, i: sd.call(r, "gesvd", None, o[0], o[1], o[2], i[0], s("A"))),
        "gesvdS": ([tall], 3, lambda sd, r, o, i: sd.call(r, "gesvd", None, o[0], o[1], o[2], i[0], s("S"))),
        "gesvd2": ([tall], 4, lambda sd, r, o, i: sd.call(r, "gesvd2", None, o[0], o[1], o[2], o[3], i[0], s("S"))),
        "getri": ([a], 1, lambda sd, r, o, i: sd.call(r, "getri", None, o[0], i[0])),
        "potrfU": ([p], 1, lambda sd, r, o, i: sd.call(r, "potrf", None, o[0], i[0], s("U"))),
        "potrfL": ([p], 1, lambda sd, r, o, i: sd.call(r, "potrf", None, o[0], i[0], s("L"))),
        "potri": ([chol], 1, lambda sd, r, o, i: sd.call(r, "potri", None, o[0], i[0], s("U"))),
        "potrs": ([b, chol], 1, lambda sd, r, o, i: sd.call(r, "potrs", None, o[0], i[0], i[1], s("U"))),
        "qr": ([wide], 2, lambda sd, r, o, i: sd.call(r, "qr", None, o[0], o[1], i[0])),
    }


def run_both(real, ins, nout, call, layout, outs_init=None):
    res = {}
    for side in (HOST, DEV):
        I = [make(side, real, x, layout) for x in ins]
        O = [side.new(real) if outs_init is None else make(side, real, outs_init[k], "padded") for k in range(nout)]
        call(side, real, O, I)
        res[side.kind] = (state(side, O), [view_values(side, t).astype(np.float64) for t in O])
    return res


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("layout", ["contig", "padded"])
@pytest.mark.parametrize("name", list(cases(np.random.default_rng(0))))
def test_device_equals_host(rng, real, layout, name):
    ins, nout, call = cases(rng)[name]
    res = run_both(real, ins, nout, call, layout)
    assert res["device"][0] == res["host"][0]  # geometry and bits
    # pre-shaped, strided outputs (kept or re-laid out by the host's rules)
    shapes = [v.shape for v in res["host"][1]]
    init = [rng.uniform(-1, 1, sh) for sh in shapes]
    res2 = run_both(real, ins, nout, call, layout, init)
    assert res2["device"][0] == res2["host"][0]


@pytest.mark.parametrize("real", REALS)
def test_results_against_numpy(rng, real):
    tol = 1e3 * EPS[real]
    c = cases(rng)
    (b, a), _, _ = c["gesv"]
    res = run_both(real, [b, a], 2, c["gesv"][2], "padded")
    np.testing.assert_allclose(res["device"][1][0], np.linalg.solve(a, b), rtol=tol, atol=tol)
    res = run_both(real, [a], 1, c["getri"][2], "contig")
    np.testing.assert_allclose(res["device"][1][0], np.linalg.inv(a), rtol=tol, atol=tol)
    (p,), _, _ = c["potrfU"]
    u = run_both(real, [p], 1, c["potrfU"][2], "padded")["device"][1][0]
    np.testing.assert_allclose(u.T @ u, p, rtol=tol, atol=tol * np.abs(p).max())
    assert np.all(np.tril(u, -1) == 0)
    (sym,), _, _ = c["syevV"]
    e, v = run_both(real, [sym], 2, c["syevV"][2], "contig")["device"][1]
    full = np.triu(sym) + np.triu(sym, 1).T
    np.testing.assert_allclose(v @ np.diag(e) @ v.T, full, atol=tol * 10)
    (wide,), _, _ = c["gesvdA"]
    U, S, V = run_both(real, [wide], 3, c["gesvdA"][2], "padded")["device"][1]
    np.testing.assert_allclose(U @ np.diag(S) @ V[:, :3].T, wide, atol=tol * 10)
    q, r = run_both(real, [wide], 2, c["qr"][2], "contig")["device"][1]
    np.testing.assert_allclose(q @ r, wide, atol=tol * 10)
    (tb, tall), _, _ = c["gels"]
    x = run_both(real, [tb, tall], 2, c["gels"][2], "contig")["device"][1][0]
    np.testing.assert_allclose(x[:3], np.linalg.lstsq(tall, tb, rcond=None)[0], atol=tol * 10)


@pytest.mark.parametrize("real", REALS)
def test_in_place(rng, real):
    """`a` NULL (the output in place) keeps the output's layout, as on the host."""
    a, b = rng.uniform(-2, 2, (4, 4)) + 4 * np.eye(4), rng.uniform(-2, 2, (4, 2))
    res = {}
    for side in (HOST, DEV):
        ra, rb = padded(side, real, a), padded(side, real, b)
        side.call(real, "gesv", None, rb, ra, None, None)
        ri = contiguous(side, real, a)
        side.call(real, "getri", None, ri, ri)
        res[side.kind] = state(side, [ra, rb, ri]), storage_of(side, rb).tobytes()
    assert res["device"] == res["host"]
    assert res["device"][0][1][0] == ((4, 2), (1, 6))


@pytest.mark.parametrize("real", REALS)
def test_errors_leave_outputs_untouched(rng, real):
    sing = np.ones((3, 3))
    b = rng.uniform(-1, 1, (3, 2))
    notpd = -np.eye(3)
    sq = rng.uniform(-1, 1, (3, 3)) + 3 * np.eye(3)
    bad = [
        ("gesv", 2, [b, sing], lambda sd, r, o, i: sd.call(r, "gesv", None, o[0], o[1], i[0], i[1]), "singular"),
        ("gesv", 2, [b, b], lambda sd, r, o, i: sd.call(r, "gesv", None, o[0], o[1], i[0], i[1]), "square"),
        ("getri", 1, [sing], lambda sd, r, o, i: sd.call(r, "getri", None, o[0], i[0]), "singular"),
        ("getri", 1, [b], lambda sd, r, o, i: sd.call(r, "getri", None, o[0], i[0]), "square"),
        ("potrf", 1, [notpd], lambda sd, r, o, i: sd.call(r, "potrf", None, o[0], i[0], s("U")), "positive"),
        ("potrf", 1, [sq], lambda sd, r, o, i: sd.call(r, "potrf", None, o[0], i[0], s("X")), "uplo"),
        ("syev", 2, [sq], lambda sd, r, o, i: sd.call(r, "syev", None, o[0], o[1], i[0], s("Q"), s("U")), "jobz"),
        ("geev", 2, [sq], lambda sd, r, o, i: sd.call(r, "geev", None, o[0], o[1], i[0], s("Z")), "jobvr"),
        ("gesvd", 3, [sq], lambda sd, r, o, i: sd.call(r, "gesvd", None, o[0], o[1], o[2], i[0], s("Q")), "jobu"),
        ("potrs", 1, [b, sq], lambda sd, r, o, i: sd.call(r, "potrs", None, o[0], i[0], i[1], None), ""),
    ]
    for name, nout, ins, call, msg in bad:
        errs = {}
        for side in (HOST, DEV):
            I = [contiguous(side, real, x) for x in ins]
            O = [padded(side, real, rng.uniform(-1, 1, (2, 3))) for _ in range(nout)]
            before = state(side, O)
            with pytest.raises(THError) as e:
                call(side, real, O, I)
            errs[side.kind] = th_error_text(e.value)
            assert state(side, O) == before, (name, side.kind)
        assert errs["device"] == errs["host"], name
        assert msg in errs["device"], (name, errs)


@pytest.mark.parametrize("real", REALS)
def test_cutorch_checks(rng, real):
    """cutorch's MAGMA code required a 2-D b (gesv, gels) and m >= n (gels); TH did not."""
    a, b1 = rng.uniform(-1, 1, (3, 3)) + 3 * np.eye(3), rng.uniform(-1, 1, 3)
    wide, wb = rng.uniform(-1, 1, (2, 4)), rng.uniform(-1, 1, (2, 1))
    for op, b, A, msg in (("gesv", b1, a, "2 dimensional"), ("gels", b1, a, "2 dimensional"),
                          ("gels", wb, wide, "m >= n")):
        O = [padded(DEV, real, np.zeros((2, 2))) for _ in range(2)]
        before = state(DEV, O)
        with pytest.raises(THError) as e:
            DEV.call(real, op, None, O[0], O[1], contiguous(DEV, real, b), contiguous(DEV, real, A))
        assert msg in th_error_text(e.value)
        assert state(DEV, O) == before
        HOST.call(real, op, None, HOST.new(real), HOST.new(real), contiguous(HOST, real, b),
                  contiguous(HOST, real, A))  # the host accepts these


# ---- batched getrf / getrs / getri on device pointer arrays ----


class Mats:
    """`batch` column-major n x cols device matrices (leading dimension ld) in separate tensors,
    and a device array (Long tensor) of their addresses."""

    def __init__(self, real, mats, ld):
        self.real, self.ld = real, ld
        self.ts, self.ptrs = [], []
        for m in mats:
            buf = np.full((m.shape[1], ld), 9.0)
            buf[:, :m.shape[0]] = m.T
            t = contiguous(DEV, real, buf.reshape(-1))
            self.ts.append(t)
            self.ptrs.append(THC.call(f"{'THCudaTensor' if real == 'Float' else 'THCudaDoubleTensor'}_data",
                                      C.c_void_p, t))
        self.arr = contiguous(DEV, "Long", np.array(self.ptrs, dtype=np.int64))
        self.p = C.c_void_p(THC.call("THCudaLongTensor_data", C.c_void_p, self.arr))

    def values(self, rows):
        out = []
        for t in self.ts:
            buf = view_values(DEV, t).astype(np.float64).reshape(-1, self.ld)
            out.append(buf[:, :rows].T.copy())
        return out

    def padding(self, rows):
        return [view_values(DEV, t).astype(np.float64).reshape(-1, self.ld)[:, rows:] for t in self.ts]


def ints(n):
    t = contiguous(DEV, "Int", np.zeros(n, dtype=np.int32))
    return t, C.c_void_p(THC.call("THCudaIntTensor_data", C.c_void_p, t))


def lapack_lu(a):
    """Reference getrf (partial pivoting, first largest |pivot|) in float64: packed LU, ipiv."""
    m = a.copy()
    n = len(m)
    piv = []
    for j in range(n):
        p = j + int(np.argmax(np.abs(m[j:, j])))
        piv.append(p + 1)
        m[[j, p]] = m[[p, j]]
        m[j + 1:, j] /= m[j, j]
        m[j + 1:, j + 1:] -= np.outer(m[j + 1:, j], m[j, j + 1:])
    return m, piv


@pytest.mark.parametrize("pp,real", [("S", "Float"), ("D", "Double")])
def test_batched_getrf_getrs_getri(rng, pp, real):
    n, batch, ld, nrhs = 4, 3, 6, 2
    tol = 1e3 * EPS[real]
    As = [rng.uniform(-2, 2, (n, n)) for _ in range(batch)]
    As[1][:, 2] = 0  # singular: info reports the zero pivot (3)
    A = Mats(real, As, ld)
    piv, pivp = ints(n * batch)
    info, infop = ints(batch)
    THC.call(f"THCudaBlas_{pp}getrf", None, C.c_int(n), A.p, C.c_int(ld), pivp, infop, C.c_int(batch))
    lus, pivots, infos = A.values(n), view_values(DEV, piv).reshape(batch, n), view_values(DEV, info)
    for i in range(batch):
        L, U = np.tril(lus[i], -1) + np.eye(n), np.triu(lus[i])
        P = np.eye(n)
        for k, p in enumerate(pivots[i]):
            P[[k, p - 1]] = P[[p - 1, k]]
        np.testing.assert_allclose(L @ U, P @ As[i], atol=tol * 10)
        if i != 1:
            stored = As[i].astype(np.float32 if real == "Float" else np.float64).astype(np.float64)
            assert list(pivots[i]) == lapack_lu(stored)[1]
    assert list(infos) == [0, 3, 0]
    assert all(np.all(p == 9.0) for p in A.padding(n))  # rows past n untouched
    # getrs: A_i X = B_i and A_i^T X = B_i for the nonsingular ones
    good = [0, 2]
    LU = Mats(real, [lus[i] for i in good], ld)
    gpiv = contiguous(DEV, "Int", pivots[good].reshape(-1).astype(np.int32))
    gpivp = C.c_void_p(THC.call("THCudaIntTensor_data", C.c_void_p, gpiv))
    for tr in ("n", "t"):
        Bs = [rng.uniform(-1, 1, (n, nrhs)) for _ in good]
        B = Mats(real, Bs, ld)
        hinfo = C.c_int(99)
        THC.call(f"THCudaBlas_{pp}getrs", None, C.c_char(tr.encode()), C.c_int(n), C.c_int(nrhs), LU.p, C.c_int(ld),
                 gpivp, B.p, C.c_int(ld), C.c_void_p(C.addressof(hinfo)), C.c_int(len(good)))
        assert hinfo.value == 0
        for x, i, b in zip(B.values(n), good, Bs):
            M = As[i] if tr == "n" else As[i].T
            np.testing.assert_allclose(x, np.linalg.solve(M, b), atol=tol * 100)
    # getri: inverses; the singular matrix reports info and leaves C untouched
    Cm = Mats(real, [np.zeros((n, n))] * batch, ld)
    THC.call(f"THCudaBlas_{pp}getri", None, C.c_int(n), A.p, C.c_int(ld), pivp, Cm.p, C.c_int(ld), infop,
             C.c_int(batch))
    inv, infos = Cm.values(n), view_values(DEV, info)
    for i in good:
        np.testing.assert_allclose(inv[i], np.linalg.inv(As[i]), atol=tol * 100)
    assert list(infos) == [0, 3, 0] and np.all(inv[1] == 0)


def test_batched_no_pivoting_and_errors(rng):
    n, ld = 3, 3
    a = rng.uniform(-1, 1, (n, n)) + 4 * np.eye(n)
    A = Mats("Double", [a], ld)
    info, infop = ints(1)
    THC.call("THCudaBlas_Dgetrf", None, C.c_int(n), A.p, C.c_int(ld), None, infop, C.c_int(1))
    lu = A.values(n)[0]
    np.testing.assert_allclose((np.tril(lu, -1) + np.eye(n)) @ np.triu(lu), a, atol=1e-12)
    B = Mats("Double", [np.eye(n)], ld)
    hinfo = C.c_int(5)
    THC.call("THCudaBlas_Dgetrs", None, C.c_char(b"n"), C.c_int(n), C.c_int(n), A.p, C.c_int(ld), None, B.p,
             C.c_int(ld), C.c_void_p(C.addressof(hinfo)), C.c_int(1))
    np.testing.assert_allclose(B.values(n)[0], np.linalg.inv(a), atol=1e-12)
    before = B.values(n)[0]
    for args, want_info in (((b"n", n, n, 2, ld), -5), ((b"n", -1, n, ld, ld), -2), ((b"n", n, n, ld, 1), -8)):
        tr, nn, nr, lda, ldb = args
        with pytest.raises(THError):
            THC.call("THCudaBlas_Dgetrs", None, C.c_char(tr), C.c_int(nn), C.c_int(nr), A.p, C.c_int(lda), None, B.p,
                     C.c_int(ldb), C.c_void_p(C.addressof(hinfo)), C.c_int(1))
        assert hinfo.value == want_info
    with pytest.raises(THError):
        THC.call("THCudaBlas_Dgetrs", None, C.c_char(b"x"), C.c_int(n), C.c_int(n), A.p, C.c_int(ld), None, B.p,
                 C.c_int(ld), C.c_void_p(C.addressof(hinfo)), C.c_int(1))
    with pytest.raises(THError):
        THC.call("THCudaBlas_Dgetrf", None, C.c_int(n), A.p, C.c_int(1), None, infop, C.c_int(1))
    with pytest.raises(THError):
        THC.call("THCudaBlas_Dgetri", None, C.c_int(n), None, C.c_int(ld), None, B.p, C.c_int(ld), infop, C.c_int(1))
    np.testing.assert_array_equal(B.values(n)[0], before)


def test_sleep():
    THC.call("THC_sleep", None, C.c_longlong(100000))
    THC.call("THC_sleep", None, C.c_longlong(0))
    THC.sync()
    with pytest.raises(THError):
        THC.call("THC_sleep", None, C.c_longlong(-1))
