"""numpy differential tests for generic/THTensorLapack.h (Float, Double): every factorization is
checked by reconstructing its input from the factors (residuals in units of n * eps * |A|, next to
numpy.linalg's own), and solves/eigenvalues/singular values are compared with numpy.linalg.
Inputs come as contiguous, transposed (Fortran-order) and strided views; only the `uplo` triangle
of symmetric inputs is meaningful (the other holds garbage). Error cases check the message, the
code, and that outputs are left untouched.

Run as a script (`python tests/python/test_lapack.py`) to print the residual table."""

import ctypes as C

import numpy as np
import pytest
from thlib import THError

REALS = ["Float", "Double"]
NP = {"Float": np.float32, "Double": np.float64}
EPS = {"Float": float(np.finfo(np.float32).eps), "Double": float(np.finfo(np.float64).eps)}
RES_MAX = 30.0  # accepted residual, in units of n * eps * |A|_F
N = 5  # random cases per test and dtype
MAXN = 100


def s(x):
    return C.c_char_p(x.encode())


def view(rng, a):
    """`a` as a random layout: C order, Fortran order (a transposed TH tensor), or strided."""
    kind = int(rng.integers(0, 3))
    if kind == 1:
        return np.asfortranarray(a)
    if kind == 2:
        big = np.zeros((a.shape[0] * 2,) + a.shape[1:] if a.ndim == 1 else (a.shape[0] * 2, a.shape[1] * 3), a.dtype)
        if a.ndim == 1:
            big[::2] = a
            return big[::2]
        big[::2, ::3] = a
        return big[::2, ::3]
    return np.ascontiguousarray(a)


def th(lib, rng, a, real):
    return lib.from_numpy(view(rng, np.asarray(a, NP[real])), real)


def res(a, recon, real):
    """|A - recon|_F / (n eps |A|_F)."""
    a = np.asarray(a, np.float64)
    n = max(a.shape)
    return float(np.linalg.norm(a - np.asarray(recon, np.float64)) / (n * EPS[real] * max(np.linalg.norm(a), 1e-300)))


def orth(q, real):
    """|Q^T Q - I|_F / (n eps)."""
    q = np.asarray(q, np.float64)
    k = q.shape[1]
    return float(np.linalg.norm(q.T @ q - np.eye(k)) / (max(q.shape) * EPS[real]))


def size(rng, lo=1, hi=MAXN):
    return int(rng.integers(lo, hi + 1))


def sizes(rng, count):
    """A mix of small and up-to-MAXN sizes."""
    return [size(rng, 1, 8) if i % 2 == 0 else size(rng, 9, MAXN) for i in range(count)]


def colmajor(t):
    return t.ndim() == 2 and t.stride(0) == 1 and (t.size(1) == 1 or t.stride(1) == t.size(0))


def rel(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-300))


def np_lu(a):
    """LAPACK getf2 in numpy: packed LU and 1-based ipiv."""
    m = np.array(a, np.float64)
    n = m.shape[0]
    ipiv = np.zeros(n, np.int32)
    for j in range(n):
        p = j + int(np.argmax(np.abs(m[j:, j])))
        ipiv[j] = p + 1
        if m[p, j] != 0:
            m[[j, p]] = m[[p, j]]
            m[j + 1 :, j] /= m[j, j]
        m[j + 1 :, j + 1 :] -= np.outer(m[j + 1 :, j], m[j, j + 1 :])
    return m, ipiv


def perm_of(ipiv):
    """Row order of P A for LAPACK's ipiv."""
    p = np.arange(len(ipiv))
    for i, q in enumerate(ipiv):
        p[[i, q - 1]] = p[[q - 1, i]]
    return p


def spd(rng, n, real):
    m = rng.standard_normal((n, n))
    return (m @ m.T / n + np.eye(n)).astype(NP[real])


def with_garbage(a, uplo, rng):
    """`a` with the triangle LAPACK must not read replaced by garbage."""
    g = np.array(a)
    other = np.tril(np.ones(a.shape, bool), -1) if uplo == "U" else np.triu(np.ones(a.shape, bool), 1)
    g[other] = rng.uniform(-100, 100, size=int(other.sum()))
    return g


# ---------------------------------------------------------------------------------------------
# solves
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("real", REALS)
def test_gesv(lib, rng, real):
    for n in sizes(rng, N):
        a = rng.standard_normal((n, n)).astype(NP[real])
        one = rng.integers(0, 2) == 0
        b = rng.standard_normal(n if one else (n, size(rng, 1, 5))).astype(NP[real])
        rb, ra = lib.new(real), lib.new(real)
        lib.call(f"TH{real}Tensor_gesv", None, rb, ra, th(lib, rng, b, real), th(lib, rng, a, real))
        x = rb.numpy()
        assert x.shape == (n, 1 if one else b.shape[1]) and colmajor(rb) and colmajor(ra)
        want = np.linalg.solve(a.astype(np.float64), b.reshape(n, -1).astype(np.float64))
        cond = np.linalg.cond(a.astype(np.float64))
        assert rel(x, want) < 50 * n * cond * EPS[real]
        lu = ra.numpy()
        ref, ipiv = np_lu(a)
        L, U = np.tril(lu, -1) + np.eye(n), np.triu(lu)
        assert res(a[perm_of(ipiv)], L @ U, real) < RES_MAX
        assert rel(lu, ref) < 50 * n * cond * EPS[real]


@pytest.mark.parametrize("real", REALS)
def test_gesv_in_place(lib, rng, real):
    n = 7
    a = rng.standard_normal((n, n)).astype(NP[real])
    b = rng.standard_normal((n, 2)).astype(NP[real])
    ta, tb = lib.from_numpy(np.asfortranarray(a), real), lib.from_numpy(b, real)
    lib.call(f"TH{real}Tensor_gesv", None, tb, ta, None, None)
    # same shape: results written through the tensors' own layouts
    assert (tb.stride(0), tb.stride(1)) == (2, 1) and colmajor(ta)
    np.testing.assert_allclose(tb.numpy(), np.linalg.solve(a, b), rtol=1e-3 if real == "Float" else 1e-10, atol=1e-4)
    ref, _ = np_lu(a)
    np.testing.assert_allclose(ta.numpy(), ref, rtol=1e-3 if real == "Float" else 1e-9, atol=1e-4)


@pytest.mark.parametrize("real", REALS)
def test_in_place_and_output_layouts(lib, rng, real):
    n = 6
    a = spd(rng, n, real)
    tol = 1e-4 if real == "Float" else 1e-12
    # a == NULL: the output is the input; a row-major square output keeps its layout
    t = lib.from_numpy(a, real)
    lib.call(f"TH{real}Tensor_getri", None, t, None)
    assert (t.stride(0), t.stride(1)) == (n, 1)
    np.testing.assert_allclose(t.numpy(), np.linalg.inv(a.astype(np.float64)), rtol=tol, atol=tol)
    t = lib.from_numpy(a, real)
    lib.call(f"TH{real}Tensor_potrf", None, t, t, s("L"))  # a == ra_
    np.testing.assert_allclose(t.numpy(), np.linalg.cholesky(a.astype(np.float64)), rtol=tol, atol=tol)
    # a distinct output of another shape becomes column-major on its own storage
    out = lib.from_numpy(np.zeros((2, 9), NP[real]), real)
    lib.call(f"TH{real}Tensor_potrf", None, out, lib.from_numpy(a, real), s("U"))
    assert colmajor(out) and out.size(0) == n
    np.testing.assert_allclose(out.numpy(), np.linalg.cholesky(a.astype(np.float64)).T, rtol=tol, atol=tol)
    # a non-contiguous output of the right shape is re-laid out column-major
    big = lib.from_numpy(np.zeros((n, 2 * n), NP[real])[:, ::2], real)
    lib.call(f"TH{real}Tensor_getri", None, big, lib.from_numpy(a, real))
    assert colmajor(big)
    # syev with a == NULL reads rv_ and overwrites it with the eigenvectors
    sym = lib.from_numpy(a, real)
    re = lib.new(real)
    lib.call(f"TH{real}Tensor_syev", None, re, sym, None, s("V"), s("L"))
    v = sym.numpy().astype(np.float64)
    assert res(a, v @ np.diag(re.numpy()) @ v.T, real) < RES_MAX


@pytest.mark.parametrize("real", REALS)
def test_trtrs(lib, rng, real):
    for n in sizes(rng, 4):
        for uplo in "UL":
            for trans in "NT":
                for diag in "NU":
                    t = rng.standard_normal((n, n)) + 4 * np.eye(n) * np.sign(rng.standard_normal(n))
                    tri = np.triu(t) if uplo == "U" else np.tril(t)
                    if diag == "U":
                        np.fill_diagonal(tri, 1)
                    a = with_garbage(tri, uplo, rng).astype(NP[real])
                    if diag == "U":
                        np.fill_diagonal(a, rng.uniform(-9, 9, n))  # must not be read either
                    b = rng.standard_normal((n, 3)).astype(NP[real])
                    rb, ra = lib.new(real), lib.new(real)
                    lib.call(f"TH{real}Tensor_trtrs", None, rb, ra, th(lib, rng, b, real), th(lib, rng, a, real),
                             s(uplo), s(trans), s(diag))
                    op = tri if trans == "N" else tri.T
                    want = np.linalg.solve(op.astype(np.float64), b.astype(np.float64))
                    assert rel(rb.numpy(), want) < 100 * n * np.linalg.cond(op) * EPS[real]
                    np.testing.assert_array_equal(ra.numpy(), a)
                    assert colmajor(ra) and colmajor(rb)


@pytest.mark.parametrize("real", REALS)
def test_gels(lib, rng, real):
    for i in range(2 * N):
        m, n = size(rng, 1, 60), size(rng, 1, 60)
        if i % 2:
            m, n = n, m
        a = rng.standard_normal((m, n)).astype(NP[real])
        nrhs = size(rng, 1, 4)
        b = rng.standard_normal((m, nrhs)).astype(NP[real])
        rb, ra = lib.new(real), lib.new(real)
        lib.call(f"TH{real}Tensor_gels", None, rb, ra, th(lib, rng, b, real), th(lib, rng, a, real))
        x = rb.numpy()
        assert x.shape == (n, nrhs) and (rb.stride(0), rb.stride(1)) == (1, max(m, n))
        want = np.linalg.lstsq(a.astype(np.float64), b.astype(np.float64), rcond=None)[0]
        cond = np.linalg.cond(a.astype(np.float64))
        assert rel(x, want) < 100 * max(m, n) * cond**2 * EPS[real] + 100 * cond * max(m, n) * EPS[real]
        # ra: LAPACK's packed QR (m >= n) / LQ (m < n) factors, as numpy's raw QR shows them
        h, tau = np.linalg.qr(a if m >= n else a.T, mode="raw")
        packed = h.T if m >= n else h
        assert ra.numpy().shape == (m, n) and colmajor(ra)
        assert rel(ra.numpy(), packed) < 100 * max(m, n) * cond * EPS[real]


@pytest.mark.parametrize("real", REALS)
def test_gels_residual_rows(lib, rng, real):
    """Rows n..m of rb_'s column block hold Q^T b's tail: its norm is the residual norm."""
    m, n = 9, 4
    a = rng.standard_normal((m, n)).astype(NP[real])
    b = rng.standard_normal((m, 1)).astype(NP[real])
    rb, ra = lib.new(real), lib.new(real)
    lib.call(f"TH{real}Tensor_gels", None, rb, ra, lib.from_numpy(b, real), lib.from_numpy(a, real))
    p = lib.call(f"TH{real}Tensor_data", C.c_void_p, C.c_void_p(rb.ptr))
    block = np.ctypeslib.as_array((C.c_byte * (m * np.dtype(NP[real]).itemsize)).from_address(p)).view(NP[real])
    x = np.linalg.lstsq(a.astype(np.float64), b.astype(np.float64), rcond=None)[0]
    r = np.linalg.norm(a.astype(np.float64) @ x - b)
    assert abs(np.linalg.norm(block[n:]) - r) < 1e-4 * max(1, r)


# ---------------------------------------------------------------------------------------------
# eigen / singular values
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("real", REALS)
def test_syev(lib, rng, real):
    for n in sizes(rng, N):
        sym = rng.standard_normal((n, n))
        sym = (sym + sym.T).astype(NP[real])
        uplo = "UL"[int(rng.integers(0, 2))]
        a = with_garbage(sym, uplo, rng).astype(NP[real])
        for jobz in "VN":
            re, rv = lib.new(real), lib.new(real)
            lib.call(f"TH{real}Tensor_syev", None, re, rv, th(lib, rng, a, real), s(jobz), s(uplo))
            w = re.numpy()
            want = np.linalg.eigvalsh(sym.astype(np.float64))
            norm = np.linalg.norm(sym.astype(np.float64), 2)
            assert np.all(np.diff(w) >= 0)
            assert np.max(np.abs(w - want)) < 20 * n * EPS[real] * max(norm, 1e-30)
            if jobz == "V":
                v = rv.numpy().astype(np.float64)
                assert colmajor(rv)
                assert res(sym, v @ np.diag(w) @ v.T, real) < RES_MAX
                assert orth(v, real) < RES_MAX


@pytest.mark.parametrize("real", REALS)
def test_geev(lib, rng, real):
    for n in [min(k, 60) for k in sizes(rng, N)]:
        a = rng.standard_normal((n, n)).astype(NP[real])
        re, rv = lib.new(real), lib.new(real)
        lib.call(f"TH{real}Tensor_geev", None, re, rv, th(lib, rng, a, real), s("V"))
        e = re.numpy()
        assert e.shape == (n, 2)
        lam = e[:, 0] + 1j * e[:, 1]
        want = np.linalg.eigvals(a.astype(np.float64))
        key = lambda z: (round(float(z.real), 3), round(float(z.imag), 3))  # noqa: E731
        got_s, want_s = sorted(lam, key=key), sorted(want, key=key)
        tol = 1e-2 if real == "Float" else 1e-7
        assert np.max(np.abs(np.array(got_s) - np.array(want_s))) < tol * max(1, np.abs(want).max())
        # LAPACK's real form of the vectors: pairs (v_j +- i v_j+1), positive imaginary first
        vr = rv.numpy().astype(np.float64)
        assert colmajor(rv)
        vecs = np.zeros((n, n), complex)
        j = 0
        while j < n:
            if e[j, 1] == 0:
                vecs[:, j] = vr[:, j]
                j += 1
            else:
                assert e[j, 1] > 0 and e[j + 1, 1] == -e[j, 1] and e[j + 1, 0] == e[j, 0]
                vecs[:, j] = vr[:, j] + 1j * vr[:, j + 1]
                vecs[:, j + 1] = vr[:, j] - 1j * vr[:, j + 1]
                k = int(np.argmax(np.abs(vecs[:, j])))
                assert vr[k, j + 1] == 0  # largest component real
                j += 2
        np.testing.assert_allclose(np.linalg.norm(vecs, axis=0), 1, rtol=1e-5 if real == "Float" else 1e-12)
        r = np.linalg.norm(a.astype(np.float64) @ vecs - vecs * lam) / (n * EPS[real] * np.linalg.norm(a))
        assert r < RES_MAX * 10
        # eigenvalues only: the same values
        re2, rv2 = lib.new(real), lib.new(real)
        lib.call(f"TH{real}Tensor_geev", None, re2, rv2, th(lib, rng, a, real), s("N"))
        lam2 = re2.numpy()[:, 0] + 1j * re2.numpy()[:, 1]
        assert np.max(np.abs(np.array(sorted(lam2, key=key)) - np.array(want_s))) < tol * max(1, np.abs(want).max())
        assert rv2.ndim() == 0  # untouched with "N"


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("jobu", ["A", "S"])
def test_gesvd(lib, rng, real, jobu):
    for i in range(N):
        m, n = size(rng, 1, 70), size(rng, 1, 70)
        a = rng.standard_normal((m, n)).astype(NP[real])
        k = min(m, n)
        ru, rs, rv, ra = lib.new(real), lib.new(real), lib.new(real), lib.new(real)
        if i % 2:
            lib.call(f"TH{real}Tensor_gesvd2", None, ru, rs, rv, ra, th(lib, rng, a, real), s(jobu))
            np.testing.assert_array_equal(ra.numpy(), a)
        else:
            lib.call(f"TH{real}Tensor_gesvd", None, ru, rs, rv, th(lib, rng, a, real), s(jobu))
        u, sv, v = ru.numpy().astype(np.float64), rs.numpy(), rv.numpy().astype(np.float64)
        assert u.shape == ((m, m) if jobu == "A" else (m, k)) and colmajor(ru)
        assert v.shape == ((n, n) if jobu == "A" else (n, k)) and rv.stride(1) == 1  # V, row-major
        want = np.linalg.svd(a.astype(np.float64), compute_uv=False)
        assert np.all(np.diff(sv) <= 0)
        assert np.max(np.abs(sv - want)) < 20 * max(m, n) * EPS[real] * want[0]
        assert res(a, u[:, :k] @ np.diag(sv) @ v[:, :k].T, real) < RES_MAX
        assert orth(u, real) < RES_MAX and orth(v, real) < RES_MAX


# ---------------------------------------------------------------------------------------------
# inverse, Cholesky
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("real", REALS)
def test_getri(lib, rng, real):
    for n in sizes(rng, N):
        a = rng.standard_normal((n, n)).astype(NP[real])
        ra = lib.new(real)
        lib.call(f"TH{real}Tensor_getri", None, ra, th(lib, rng, a, real))
        inv = ra.numpy().astype(np.float64)
        assert colmajor(ra)
        cond = np.linalg.cond(a.astype(np.float64))
        assert rel(inv, np.linalg.inv(a.astype(np.float64))) < 50 * n * cond * EPS[real]
        r = np.linalg.norm(a @ inv - np.eye(n)) / (n * EPS[real] * cond)
        assert r < RES_MAX


@pytest.mark.parametrize("real", REALS)
def test_potrf_potrs_potri(lib, rng, real):
    for n in sizes(rng, N):
        a = spd(rng, n, real)
        uplo = "UL"[int(rng.integers(0, 2))]
        g = with_garbage(a, uplo, rng).astype(NP[real])
        rf = lib.new(real)
        lib.call(f"TH{real}Tensor_potrf", None, rf, th(lib, rng, g, real), s(uplo))
        f = rf.numpy().astype(np.float64)
        assert colmajor(rf)
        lref = np.linalg.cholesky(a.astype(np.float64))
        if uplo == "U":
            assert np.all(np.tril(f, -1) == 0)
            assert res(a, f.T @ f, real) < RES_MAX
            assert rel(f, lref.T) < 50 * n * EPS[real] * np.linalg.cond(a)
        else:
            assert np.all(np.triu(f, 1) == 0)
            assert res(a, f @ f.T, real) < RES_MAX
            assert rel(f, lref) < 50 * n * EPS[real] * np.linalg.cond(a)
        # potrs with the factor (garbage in the other triangle must be ignored)
        fg = with_garbage(f, uplo, rng).astype(NP[real])
        b = rng.standard_normal((n, 2)).astype(NP[real])
        rb = lib.new(real)
        lib.call(f"TH{real}Tensor_potrs", None, rb, th(lib, rng, b, real), th(lib, rng, fg, real), s(uplo))
        want = np.linalg.solve(a.astype(np.float64), b.astype(np.float64))
        assert rel(rb.numpy(), want) < 50 * n * np.linalg.cond(a) * EPS[real]
        # potri
        ri = lib.new(real)
        lib.call(f"TH{real}Tensor_potri", None, ri, th(lib, rng, fg, real), s(uplo))
        inv = ri.numpy().astype(np.float64)
        assert np.array_equal(inv, inv.T)
        assert rel(inv, np.linalg.inv(a.astype(np.float64))) < 50 * n * np.linalg.cond(a) * EPS[real]


def np_pstrf(a):
    """Greedy complete-pivoting Cholesky (LAPACK dpstf2's rule, lower): 0-based pivots, L."""
    m = np.array(a, np.float64)
    n = m.shape[0]
    piv = np.arange(n)
    for j in range(n):
        p = j + int(np.argmax(np.diag(m)[j:]))
        m[[j, p]] = m[[p, j]]
        m[:, [j, p]] = m[:, [p, j]]
        piv[[j, p]] = piv[[p, j]]
        m[j, j] = np.sqrt(m[j, j])
        m[j + 1 :, j] /= m[j, j]
        m[j + 1 :, j + 1 :] -= np.outer(m[j + 1 :, j], m[j + 1 :, j])
    return piv, np.tril(m)


@pytest.mark.parametrize("real", REALS)
def test_pstrf(lib, rng, real):
    for n in sizes(rng, N):
        a = spd(rng, n, real)
        a = (a + np.diag(rng.uniform(0, 5, n))).astype(NP[real])  # well separated diagonal
        uplo = "UL"[int(rng.integers(0, 2))]
        rf, rp = lib.new(real), lib.new("Int")
        lib.call(f"TH{real}Tensor_pstrf", None, rf, rp, th(lib, rng, with_garbage(a, uplo, rng), real), s(uplo),
                 lib.scalar(real, -1.0))
        f, piv = rf.numpy().astype(np.float64), rp.numpy()
        assert sorted(piv) == list(range(n)) and colmajor(rf)
        pa = a.astype(np.float64)[np.ix_(piv, piv)]  # P^T A P
        recon = f.T @ f if uplo == "U" else f @ f.T
        assert res(pa, recon, real) < RES_MAX
        want_piv, want_l = np_pstrf(a)
        np.testing.assert_array_equal(piv, want_piv)
        assert rel(f, want_l.T if uplo == "U" else want_l) < 100 * n * EPS[real] * np.linalg.cond(a)


# ---------------------------------------------------------------------------------------------
# QR family
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("real", REALS)
def test_qr_geqrf_orgqr(lib, rng, real):
    for i in range(N):
        m, n = size(rng, 1, 80), size(rng, 1, 80)
        a = rng.standard_normal((m, n)).astype(NP[real])
        k = min(m, n)
        rq, rr = lib.new(real), lib.new(real)
        lib.call(f"TH{real}Tensor_qr", None, rq, rr, th(lib, rng, a, real))
        q, r = rq.numpy().astype(np.float64), rr.numpy().astype(np.float64)
        assert q.shape == (m, k) and r.shape == (k, n) and colmajor(rq) and rr.stride(1) == 1
        assert np.all(np.tril(r, -1) == 0)
        assert res(a, q @ r, real) < RES_MAX and orth(q, real) < RES_MAX
        cond = np.linalg.cond(a[:, :k].astype(np.float64))
        qn, rn = np.linalg.qr(a.astype(np.float64))  # LAPACK's signs: same Householder convention
        assert rel(q, qn) < 100 * max(m, n) * cond * EPS[real]
        assert rel(r, rn) < 100 * max(m, n) * cond * EPS[real]
        # geqrf against numpy's raw LAPACK output
        ra, rt = lib.new(real), lib.new(real)
        lib.call(f"TH{real}Tensor_geqrf", None, ra, rt, th(lib, rng, a, real))
        h, tau = np.linalg.qr(a.astype(np.float64), mode="raw")
        assert colmajor(ra) and rt.numpy().shape == (k,)
        assert rel(ra.numpy(), h.T) < 100 * max(m, n) * cond * EPS[real]
        assert np.max(np.abs(rt.numpy() - tau)) < 100 * max(m, n) * cond * EPS[real]
        # orgqr: the first k columns become Q, the others keep a's
        ro = lib.new(real)
        lib.call(f"TH{real}Tensor_orgqr", None, ro, ra, rt)
        o = ro.numpy().astype(np.float64)
        assert o.shape == (m, n)
        np.testing.assert_allclose(o[:, :k], q, atol=1e-4 if real == "Float" else 1e-12)
        np.testing.assert_array_equal(o[:, k:], ra.numpy()[:, k:])


@pytest.mark.parametrize("real", REALS)
def test_ormqr(lib, rng, real):
    for i in range(N):
        m, n = size(rng, 1, 50), size(rng, 1, 50)
        a = rng.standard_normal((m, n)).astype(NP[real])
        ra, rt = lib.new(real), lib.new(real)
        lib.call(f"TH{real}Tensor_geqrf", None, ra, rt, lib.from_numpy(a, real))
        qfull = np.linalg.qr(a.astype(np.float64), mode="complete")[0]  # H_1 ... H_k
        for side in "LR":
            for trans in "NT":
                c = rng.standard_normal((m, size(rng, 1, 20)) if side == "L" else (size(rng, 1, 20), m))
                c = c.astype(NP[real])
                qo = qfull if trans == "N" else qfull.T
                want = qo @ c if side == "L" else c @ qo
                out = lib.new(real)
                lib.call(f"TH{real}Tensor_ormqr", None, out, ra, rt, th(lib, rng, c, real), s(side), s(trans))
                assert colmajor(out)
                assert rel(out.numpy(), want) < 100 * m * EPS[real] * np.linalg.cond(a[:, : min(m, n)])


# ---------------------------------------------------------------------------------------------
# batched LU
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("real", REALS)
def test_btrifact_btrisolve(lib, rng, real):
    for _ in range(3):
        nb, n = size(rng, 1, 4), size(rng, 1, 30)
        a = rng.standard_normal((nb, n, n)).astype(NP[real])
        ra, rp, ri = lib.new(real), lib.new("Int"), lib.new("Int")
        lib.call(f"TH{real}Tensor_btrifact", None, ra, rp, ri, C.c_int(1), lib.from_numpy(a, real))
        lu, piv, info = ra.numpy(), rp.numpy(), ri.numpy()
        assert lu.shape == a.shape and piv.shape == (nb, n) and list(info) == [0] * nb
        for i in range(nb):
            ref, ipiv = np_lu(a[i])
            np.testing.assert_array_equal(piv[i], ipiv)
            assert rel(lu[i], ref) < 50 * n * np.linalg.cond(a[i]) * EPS[real]
        b = rng.standard_normal((nb, n, 2)).astype(NP[real])
        for bb in (b, b[:, :, 0]):
            rb = lib.new(real)
            lib.call(f"TH{real}Tensor_btrisolve", None, rb, lib.from_numpy(bb, real), ra, rp)
            want = np.linalg.solve(a.astype(np.float64), bb.reshape(nb, n, -1).astype(np.float64)).reshape(bb.shape)
            assert rb.numpy().shape == bb.shape
            for i in range(nb):
                assert rel(rb.numpy()[i], want[i]) < 50 * n * np.linalg.cond(a[i]) * EPS[real]


@pytest.mark.parametrize("real", REALS)
def test_btrifact_singular(lib, real):
    a = np.array([[[2, 1, 0], [4, 2, 0], [1, 5, 0]], [[1, 2, 3], [0, 1, 4], [5, 6, 0]]], NP[real])
    ra, rp, ri = lib.new(real), lib.new("Int"), lib.new("Int")
    lib.call(f"TH{real}Tensor_btrifact", None, ra, rp, ri, C.c_int(1), lib.from_numpy(a, real))
    # batch 0: second pivot column is exactly zero after elimination -> info 2 (LAPACK skips it)
    ref, ipiv = np_lu(a[0])
    assert list(ri.numpy()) == [3 if ref[2, 2] == 0 and ref[1, 1] != 0 else 2, 0] or ri.numpy()[0] > 0
    assert np.all(np.isfinite(ra.numpy()))
    np.testing.assert_allclose(ra.numpy()[0], ref, atol=1e-6)
    np.testing.assert_array_equal(rp.numpy()[0], ipiv)
    # without rinfo_ it is an error and the outputs stay as they were
    ra2, rp2 = lib.from_numpy(np.ones((1,)), real), lib.new("Int")
    with pytest.raises(THError, match="batch element 0"):
        lib.call(f"TH{real}Tensor_btrifact", None, ra2, rp2, None, C.c_int(1), lib.from_numpy(a, real))
    assert ra2.numpy().tolist() == [1.0] and rp2.ndim() == 0
    with pytest.raises(THError, match="without pivoting"):
        lib.call(f"TH{real}Tensor_btrifact", None, ra, rp, ri, C.c_int(0), lib.from_numpy(a, real))


# ---------------------------------------------------------------------------------------------
# errors: singular / non-PD / shapes / options; outputs untouched
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("real", REALS)
def test_errors_leave_outputs_untouched(lib, real):
    sing = np.array([[1, 2, 3], [2, 4, 6], [1, 0, 1]], NP[real])
    b = np.ones((3, 1), NP[real])
    keep = np.arange(6, dtype=NP[real]).reshape(2, 3)

    def fresh():
        return lib.from_numpy(keep, real)

    def untouched(*ts):
        for t in ts:
            assert t.numpy().tolist() == keep.tolist() and (t.stride(0), t.stride(1)) == (3, 1)

    rb, ra = fresh(), fresh()
    with pytest.raises(THError, match=r"singular") as e:
        lib.call(f"TH{real}Tensor_gesv", None, rb, ra, lib.from_numpy(b, real), lib.from_numpy(sing, real))
    assert e.value.code == 2 and "U(3,3)" in e.value.msg  # LAPACK: the third pivot is zero
    untouched(rb, ra)
    with pytest.raises(THError, match=r"singular"):
        lib.call(f"TH{real}Tensor_getri", None, ra, lib.from_numpy(sing, real))
    untouched(ra)
    notpd = np.array([[4, 2, 0], [2, 1, 0], [0, 0, 1]], NP[real])  # minor of order 2 is singular
    with pytest.raises(THError, match=r"order 2 is not positive definite"):
        lib.call(f"TH{real}Tensor_potrf", None, ra, lib.from_numpy(notpd, real), s("L"))
    untouched(ra)
    with pytest.raises(THError, match=r"order 1 is not positive definite"):
        lib.call(f"TH{real}Tensor_potrf", None, ra, lib.from_numpy(-np.eye(2, dtype=NP[real]), real), s("U"))
    rp = lib.new("Int")
    with pytest.raises(THError, match=r"rank deficient"):
        lib.call(f"TH{real}Tensor_pstrf", None, ra, rp, lib.from_numpy(np.ones((3, 3), NP[real]), real), s("U"),
                 lib.scalar(real, -1.0))
    untouched(ra)
    assert rp.ndim() == 0
    with pytest.raises(THError, match=r"A\(2,2\) is zero, singular A"):
        lib.call(f"TH{real}Tensor_trtrs", None, rb, ra, lib.from_numpy(b, real),
                 lib.from_numpy(np.array([[1, 2, 3], [0, 0, 6], [0, 0, 1]], NP[real]), real),
                 s("U"), s("N"), s("N"))
    untouched(rb, ra)
    with pytest.raises(THError, match=r"diagonal element of the triangular factor"):
        lib.call(f"TH{real}Tensor_gels", None, rb, ra, lib.from_numpy(np.ones((4, 1), NP[real]), real),
                 lib.from_numpy(np.zeros((4, 2), NP[real]), real))
    untouched(rb, ra)
    # shapes
    with pytest.raises(THError, match=r"A,B size incompatible") as e:
        lib.call(f"TH{real}Tensor_gesv", None, rb, ra, lib.from_numpy(np.ones((4, 1), NP[real]), real),
                 lib.from_numpy(np.eye(3, dtype=NP[real]), real))
    assert e.value.code == 3
    with pytest.raises(THError, match=r"square"):
        lib.call(f"TH{real}Tensor_getri", None, ra, lib.from_numpy(np.ones((2, 3), NP[real]), real))
    with pytest.raises(THError, match=r"2 dimensions"):
        lib.call(f"TH{real}Tensor_potrf", None, ra, lib.from_numpy(np.ones(3, NP[real]), real), s("U"))
    with pytest.raises(THError, match=r"uplo"):
        lib.call(f"TH{real}Tensor_potrf", None, ra, lib.from_numpy(np.eye(2, dtype=NP[real]), real), s("X"))
    with pytest.raises(THError, match=r"jobu"):
        lib.call(f"TH{real}Tensor_gesvd", None, rb, ra, fresh(), lib.from_numpy(np.eye(2, dtype=NP[real]), real), None)
    with pytest.raises(THError, match=r"NULL"):
        lib.call(f"TH{real}Tensor_gesv", None, None, ra, lib.from_numpy(b, real), lib.from_numpy(np.eye(3), real))
    untouched(rb, ra)
    with pytest.raises(THError, match=r"out of range"):
        lib.call(f"TH{real}Tensor_btrisolve", None, rb, lib.from_numpy(np.ones((1, 2)), real),
                 lib.from_numpy(np.ones((1, 2, 2)), real), lib.from_numpy(np.array([[3, 2]]), "Int"))
    untouched(rb)


# ---------------------------------------------------------------------------------------------
# the residual table (python tests/python/test_lapack.py)
# ---------------------------------------------------------------------------------------------


def residual_table(lib, n=100, seed=1, reps=3):
    """Max residual (units of n eps |A|_F) over 3 random n x n inputs, ours and numpy.linalg's."""
    rng = np.random.default_rng(seed)
    rows = []
    for real in REALS:
        dt = NP[real]
        acc = {}

        def put(name, ours, theirs):
            o, t = acc.get(name, (0.0, 0.0))
            acc[name] = (max(o, ours), max(t, theirs))

        for _ in range(reps):
            a = rng.standard_normal((n, n)).astype(dt)
            sym = (a + a.T).astype(dt)
            p = spd(rng, n, real)
            # LU (gesv's factors)
            rb, ra = lib.new(real), lib.new(real)
            lib.call(f"TH{real}Tensor_gesv", None, rb, ra, lib.from_numpy(np.eye(n, dtype=dt), real),
                     lib.from_numpy(a, real))
            lu = ra.numpy().astype(np.float64)
            _, ipiv = np_lu(a)
            put("LU P A = L U (gesv; numpy has no LU)", res(a[perm_of(ipiv)], (np.tril(lu, -1) + np.eye(n)) @ np.triu(lu), real), 0.0)
            put("solve A X = I (gesv)", res(np.eye(n), a.astype(np.float64) @ rb.numpy(), real),
                res(np.eye(n), a.astype(np.float64) @ np.linalg.solve(a, np.eye(n, dtype=dt)), real))
            ri = lib.new(real)
            lib.call(f"TH{real}Tensor_getri", None, ri, lib.from_numpy(a, real))
            put("inverse A A^-1 = I (getri)", res(np.eye(n), a.astype(np.float64) @ ri.numpy(), real),
                res(np.eye(n), a.astype(np.float64) @ np.linalg.inv(a), real))
            rq, rr = lib.new(real), lib.new(real)
            lib.call(f"TH{real}Tensor_qr", None, rq, rr, lib.from_numpy(a, real))
            qn, rn = np.linalg.qr(a)
            put("QR  A = QR (qr)", res(a, rq.numpy().astype(np.float64) @ rr.numpy(), real),
                res(a, qn.astype(np.float64) @ rn, real))
            put("QR  Q^T Q = I (qr)", orth(rq.numpy(), real), orth(qn, real))
            rf = lib.new(real)
            lib.call(f"TH{real}Tensor_potrf", None, rf, lib.from_numpy(p, real), s("L"))
            ln = np.linalg.cholesky(p)
            put("Cholesky A = L L^T (potrf)", res(p, rf.numpy().astype(np.float64) @ rf.numpy().T, real),
                res(p, ln.astype(np.float64) @ ln.T, real))
            re, rv = lib.new(real), lib.new(real)
            lib.call(f"TH{real}Tensor_syev", None, re, rv, lib.from_numpy(sym, real), s("V"), s("U"))
            w, v = np.linalg.eigh(sym)
            put("syev A = V W V^T", res(sym, rv.numpy().astype(np.float64) @ np.diag(re.numpy()) @ rv.numpy().T, real),
                res(sym, v.astype(np.float64) @ np.diag(w) @ v.T, real))
            put("syev V^T V = I", orth(rv.numpy(), real), orth(v, real))
            ru, rs, rvv = lib.new(real), lib.new(real), lib.new(real)
            lib.call(f"TH{real}Tensor_gesvd", None, ru, rs, rvv, lib.from_numpy(a, real), s("S"))
            un, sn, vtn = np.linalg.svd(a, full_matrices=False)
            put("SVD A = U S V^T (gesvd)", res(a, ru.numpy().astype(np.float64) @ np.diag(rs.numpy()) @ rvv.numpy().T, real),
                res(a, un.astype(np.float64) @ np.diag(sn) @ vtn, real))
            put("SVD U^T U = I", orth(ru.numpy(), real), orth(un, real))
            e1, e2 = lib.new(real), lib.new(real)
            lib.call(f"TH{real}Tensor_geev", None, e1, e2, lib.from_numpy(a, real), s("V"))
            e, vr = e1.numpy(), e2.numpy().astype(np.float64)
            lam = e[:, 0] + 1j * e[:, 1]
            vecs = np.zeros((n, n), complex)
            j = 0
            while j < n:
                if e[j, 1] == 0:
                    vecs[:, j] = vr[:, j]
                    j += 1
                else:
                    vecs[:, j], vecs[:, j + 1] = vr[:, j] + 1j * vr[:, j + 1], vr[:, j] - 1j * vr[:, j + 1]
                    j += 2
            ln2, vn = np.linalg.eig(a)
            an = np.linalg.norm(a.astype(np.float64))
            put("geev |A V - V L| (units n eps |A|)", np.linalg.norm(a.astype(np.float64) @ vecs - vecs * lam) / (n * EPS[real] * an),
                np.linalg.norm(a.astype(np.float64) @ vn - vn * ln2) / (n * EPS[real] * an))
            rb2, ra2 = lib.new(real), lib.new(real)
            m2 = rng.standard_normal((2 * n, n)).astype(dt)
            bb = rng.standard_normal((2 * n, 1)).astype(dt)
            lib.call(f"TH{real}Tensor_gels", None, rb2, ra2, lib.from_numpy(bb, real), lib.from_numpy(m2, real))
            xn = np.linalg.lstsq(m2, bb, rcond=None)[0]
            # normal-equation residual |A^T (A x - b)| / (n eps |A|^2 |x|)
            def ne(x):
                x = np.asarray(x, np.float64)
                a64 = m2.astype(np.float64)
                r = a64 @ x - bb
                return np.linalg.norm(a64.T @ r) / (2 * n * EPS[real] * np.linalg.norm(a64) * (
                    np.linalg.norm(a64) * np.linalg.norm(x) + np.linalg.norm(bb)))
            put("gels A^T(Ax-b) (2n x n)", ne(rb2.numpy()), ne(xn))
        for name, (o, t) in acc.items():
            rows.append((real, name, o, t))
    return rows


def test_residuals_at_numpy_level(lib):
    for real, name, ours, theirs in residual_table(lib, n=32, reps=2):
        assert ours < RES_MAX, (real, name, ours, theirs)


if __name__ == "__main__":
    import sys

    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    from thlib import Lib

    print(f"{'dtype':7s} {'check (max over 3 random 100x100)':38s} {'th':>9s} {'numpy':>9s}")
    for real, name, ours, theirs in residual_table(Lib()):
        print(f"{real:7s} {name:38s} {ours:9.3g} {theirs:9.3g}")
