"""numpy differential tests for the matrix products (addmm, addmv, addr, addbmm, baddbmm, match,
dot, trace): random sizes up to 600 (the product of the three GEMM dims is kept small so the suite
stays fast), transposed / narrowed / broadcast (stride 0) operands, alpha/beta combinations
including beta = 0 with NaN in t, in-place (r = t) and outputs that alias an operand, every
numeric dtype. Integer results wrap like numpy's int64 products cast back; float results are
checked against a float64 reference with an error bound from the dtype's unit roundoff."""

import ctypes as C

import numpy as np
import pytest
from cases import random_values, random_view
from thlib import FLOATS, INTS, NUMERIC, THError

# unit roundoff of the stored result and of the accumulation
EPS_STORE = {"Float": 2.0**-24, "Double": 2.0**-53, "Half": 2.0**-11, "BFloat16": 2.0**-8}
EPS_ACC = {"Float": 2.0**-24, "Double": 2.0**-53, "Half": 2.0**-24, "BFloat16": 2.0**-24}
MAX_WORK = 1_500_000  # m*n*k per random case


def dims(rng, n, max_size=600, work=MAX_WORK):
    """`n` sizes in 1..max_size whose product is at most `work` (one of them often large)."""
    while True:
        ds = [int(rng.integers(1, 9)) if rng.random() < 0.5 else int(rng.integers(1, max_size + 1)) for _ in range(n)]
        if np.prod(ds) <= work:
            return ds


def values(rng, real, shape):
    lo, hi = (-3, 3) if real in FLOATS else (None, None)
    if real == "Byte":
        lo, hi = 0, 255
    return random_values(rng, real, shape, low=lo, high=hi)


def operand(rng, real, shape, transposed=None):
    """Values of `shape` as a random view: contiguous, transposed storage, narrowed, strided."""
    a = values(rng, real, shape)
    if transposed is None:
        transposed = rng.random() < 0.35
    if transposed and a.ndim >= 2:
        return np.ascontiguousarray(np.swapaxes(a, -1, -2)).swapaxes(-1, -2)
    if rng.random() < 0.2:
        big = values(rng, real, tuple(n + 3 for n in shape))
        sl = tuple(slice(1, 1 + n) for n in shape)
        big[sl] = a
        return big[sl]
    return random_view(rng, a)


def scalars(rng, real):
    pool = [0, 1, -1, 2, 0.5, -1.5] if real in FLOATS else [0, 1, -1, 2, 3, -7]
    if real == "Byte":
        pool = [0, 1, 2, 3, 255]
    return pool[int(rng.integers(len(pool)))], pool[int(rng.integers(len(pool)))]


def ref_int(real, npdt, beta, t, alpha, prod):
    """beta*t + alpha*prod in wrapping int64, cast to the dtype (C's result modulo 2^bits)."""
    with np.errstate(over="ignore"):
        r = np.int64(beta) * t.astype(np.int64) + np.int64(alpha) * prod
    return r.astype(npdt)


def check(real, got, want, bound):
    got = np.asarray(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    if real in INTS:
        np.testing.assert_array_equal(got, want)
        return
    err = np.abs(got.astype(np.float64) - want)
    # Half's subnormals (below 2^-14) have a fixed absolute spacing of 2^-24
    tol = 2 * (EPS_STORE[real] * np.abs(want) + bound) + (2.0**-24 if real == "Half" else 1e-300)
    bad = ~(err <= tol)
    assert not bad.any(), f"{bad.sum()} of {bad.size} elements off; worst {err[bad].max()} (tol {tol[bad].min()})"


def product_ref(real, beta, t, alpha, mm, a_abs_b_abs, k):
    """Float reference and error bound of beta*t + alpha*mm."""
    want = (beta * t.astype(np.float64) if beta != 0 else 0.0) + alpha * mm
    mag = abs(alpha) * a_abs_b_abs + (abs(beta) * np.abs(t.astype(np.float64)) if beta != 0 else 0.0)
    return want, (k + 2) * EPS_ACC[real] * mag


def npval(real, x):
    """numpy values as the dtype computes them (BFloat16 arrives as float32 values)."""
    return np.asarray(x)


def make_t(rng, lib, real, shape, beta):
    t = operand(rng, real, shape)
    if beta == 0 and real in FLOATS:
        t = np.full(shape, np.nan, dtype=t.dtype)  # must be ignored
    return t


def output(rng, lib, real, shape, tt):
    """The r_ argument: a fresh tensor, t itself, or a transposed tensor of the right shape."""
    u = rng.random()
    if u < 0.3:
        return tt, True
    if u < 0.45 and len(shape) == 2:
        return lib.from_numpy(np.zeros(shape[::-1], dtype=np.asarray(values(rng, real, (1,))).dtype).T, real), False
    return lib.new(real), False


@pytest.mark.parametrize("real", NUMERIC)
def test_addmm(lib, rng, real):
    for _ in range(12):
        m, n, k = dims(rng, 3)
        beta, alpha = scalars(rng, real)
        a, b = operand(rng, real, (m, k)), operand(rng, real, (k, n))
        t = make_t(rng, lib, real, (m, n), beta)
        tt = lib.from_numpy(t, real)
        r, inplace = output(rng, lib, real, (m, n), tt)
        lib.call(f"TH{real}Tensor_addmm", None, r, lib.scalar(real, beta), tt, lib.scalar(real, alpha),
                 lib.from_numpy(a, real), lib.from_numpy(b, real))
        got = r.numpy()
        if real in INTS:
            with np.errstate(over="ignore"):
                want = ref_int(real, got.dtype, beta, t, alpha, a.astype(np.int64) @ b.astype(np.int64))
            check(real, got, want, None)
        else:
            a64, b64 = a.astype(np.float64), b.astype(np.float64)
            want, bound = product_ref(real, beta, t, alpha, a64 @ b64, np.abs(a64) @ np.abs(b64), k)
            check(real, got, want, bound)
        if inplace:
            assert r is tt


@pytest.mark.parametrize("real", NUMERIC)
def test_addmv(lib, rng, real):
    for _ in range(12):
        m, k = dims(rng, 2)
        beta, alpha = scalars(rng, real)
        a, v = operand(rng, real, (m, k)), operand(rng, real, (k,))
        t = make_t(rng, lib, real, (m,), beta)
        tt = lib.from_numpy(t, real)
        r, _ = output(rng, lib, real, (m,), tt)
        lib.call(f"TH{real}Tensor_addmv", None, r, lib.scalar(real, beta), tt, lib.scalar(real, alpha),
                 lib.from_numpy(a, real), lib.from_numpy(v, real))
        got = r.numpy()
        if real in INTS:
            with np.errstate(over="ignore"):
                want = ref_int(real, got.dtype, beta, t, alpha, a.astype(np.int64) @ v.astype(np.int64))
            check(real, got, want, None)
        else:
            a64, v64 = a.astype(np.float64), v.astype(np.float64)
            want, bound = product_ref(real, beta, t, alpha, a64 @ v64, np.abs(a64) @ np.abs(v64), k)
            check(real, got, want, bound)


@pytest.mark.parametrize("real", NUMERIC)
def test_addr(lib, rng, real):
    for _ in range(10):
        m, n = dims(rng, 2)
        beta, alpha = scalars(rng, real)
        x, y = operand(rng, real, (m,)), operand(rng, real, (n,))
        t = make_t(rng, lib, real, (m, n), beta)
        tt = lib.from_numpy(t, real)
        r, _ = output(rng, lib, real, (m, n), tt)
        lib.call(f"TH{real}Tensor_addr", None, r, lib.scalar(real, beta), tt, lib.scalar(real, alpha),
                 lib.from_numpy(x, real), lib.from_numpy(y, real))
        got = r.numpy()
        if real in INTS:
            with np.errstate(over="ignore"):
                want = ref_int(real, got.dtype, beta, t, alpha, np.outer(x.astype(np.int64), y.astype(np.int64)))
            check(real, got, want, None)
        else:
            x64, y64 = x.astype(np.float64), y.astype(np.float64)
            want, bound = product_ref(real, beta, t, alpha, np.outer(x64, y64), np.abs(np.outer(x64, y64)), 1)
            check(real, got, want, bound)


@pytest.mark.parametrize("real", NUMERIC)
@pytest.mark.parametrize("op", ["baddbmm", "addbmm"])
def test_batched(lib, rng, real, op):
    for _ in range(8):
        nb = int(rng.integers(1, 7))
        m, n, k = dims(rng, 3, max_size=200, work=MAX_WORK // nb)
        beta, alpha = scalars(rng, real)
        a, b = operand(rng, real, (nb, m, k)), operand(rng, real, (nb, k, n))
        tshape = (nb, m, n) if op == "baddbmm" else (m, n)
        t = make_t(rng, lib, real, tshape, beta)
        tt = lib.from_numpy(t, real)
        r, _ = output(rng, lib, real, tshape, tt)
        lib.call(f"TH{real}Tensor_{op}", None, r, lib.scalar(real, beta), tt, lib.scalar(real, alpha),
                 lib.from_numpy(a, real), lib.from_numpy(b, real))
        got = r.numpy()
        if real in INTS:
            with np.errstate(over="ignore"):
                p = np.matmul(a.astype(np.int64), b.astype(np.int64))
                if op == "addbmm":
                    p = p.sum(axis=0)
            want = ref_int(real, got.dtype, beta, t, alpha, p)
            check(real, got, want, None)
        else:
            a64, b64 = a.astype(np.float64), b.astype(np.float64)
            p, pa = np.matmul(a64, b64), np.matmul(np.abs(a64), np.abs(b64))
            if op == "addbmm":
                p, pa = p.sum(axis=0), pa.sum(axis=0)
                # TH sums the batches one addmm at a time: each step rounds to the dtype
                kk = nb * (k + 2) * (EPS_STORE[real] / EPS_ACC[real] if real in ("Half", "BFloat16") else 1)
            else:
                kk = k
            want, bound = product_ref(real, beta, t, alpha, p, pa, kk)
            check(real, got, want, bound)


@pytest.mark.parametrize("real", ["Float", "Double", "Half", "BFloat16"])
def test_large_square_and_threads(lib, rng, real):
    """One product big enough for the threaded AVX-512 paths, with transposed operands."""
    m = n = k = 300
    a = operand(rng, real, (m, k), transposed=True)
    b = operand(rng, real, (k, n), transposed=False)
    r = lib.new(real)
    for threads in (1, 2):
        lib.call("THSetNumThreads", None, C.c_int(threads))
        lib.call(f"TH{real}Tensor_addmm", None, r, lib.scalar(real, 0), lib.from_numpy(np.zeros((m, n)), real),
                 lib.scalar(real, 1), lib.from_numpy(a, real), lib.from_numpy(b, real))
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        want, bound = product_ref(real, 0, np.zeros((m, n)), 1, a64 @ b64, np.abs(a64) @ np.abs(b64), k)
        check(real, r.numpy(), want, bound)


@pytest.mark.parametrize("real", NUMERIC)
def test_broadcast_operands_and_aliasing(lib, rng, real):
    m, n, k = 7, 5, 9
    # stride-0 operands (numpy broadcast_to views become TH expand views)
    a = np.broadcast_to(values(rng, real, (1, k)), (m, k))
    b = np.broadcast_to(values(rng, real, (k, 1)), (k, n))
    t = values(rng, real, (m, n))
    r = lib.new(real)
    lib.call(f"TH{real}Tensor_addmm", None, r, lib.scalar(real, 1), lib.from_numpy(t, real), lib.scalar(real, 1),
             lib.from_numpy(a, real), lib.from_numpy(b, real))
    if real in INTS:
        with np.errstate(over="ignore"):
            want = ref_int(real, r.numpy().dtype, 1, t, 1, a.astype(np.int64) @ b.astype(np.int64))
        check(real, r.numpy(), want, None)
    else:
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        want, bound = product_ref(real, 1, t, 1, a64 @ b64, np.abs(a64) @ np.abs(b64), k)
        check(real, r.numpy(), want, bound)
    # r is m1 (square): the product must read the old m1
    s = values(rng, real, (6, 6))
    s2 = values(rng, real, (6, 6))
    ts = lib.from_numpy(s, real)
    lib.call(f"TH{real}Tensor_addmm", None, ts, lib.scalar(real, 0), lib.from_numpy(s, real), lib.scalar(real, 1),
             ts, lib.from_numpy(s2, real))
    if real in INTS:
        with np.errstate(over="ignore"):
            want = (s.astype(np.int64) @ s2.astype(np.int64)).astype(s.dtype)
        check(real, ts.numpy(), want, None)
    else:
        s64, s264 = s.astype(np.float64), s2.astype(np.float64)
        want, bound = product_ref(real, 0, s64, 1, s64 @ s264, np.abs(s64) @ np.abs(s264), 6)
        check(real, ts.numpy(), want, bound)


@pytest.mark.parametrize("real", ["Int", "Long", "Char", "Byte", "Short"])
def test_integer_overflow_wraps(lib, rng, real):
    info = np.iinfo({"Int": np.int32, "Long": np.int64, "Char": np.int8, "Byte": np.uint8, "Short": np.int16}[real])
    a = rng.integers(info.min, info.max, size=(33, 70), endpoint=True, dtype=np.int64).astype(info.dtype)
    b = rng.integers(info.min, info.max, size=(70, 21), endpoint=True, dtype=np.int64).astype(info.dtype)
    r = lib.new(real)
    lib.call(f"TH{real}Tensor_addmm", None, r, lib.scalar(real, 0), lib.from_numpy(np.zeros((33, 21), info.dtype), real),
             lib.scalar(real, 3), lib.from_numpy(a, real), lib.from_numpy(b, real))
    with np.errstate(over="ignore"):
        want = (np.int64(3) * (a.astype(np.int64) @ b.astype(np.int64))).astype(info.dtype)
    np.testing.assert_array_equal(r.numpy(), want)
    # numpy's own product in the dtype wraps the same way
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(r.numpy(), (a @ b) * info.dtype.type(3))


@pytest.mark.parametrize("real", NUMERIC)
def test_match(lib, rng, real):
    for _ in range(5):
        n1, n2 = int(rng.integers(1, 30)), int(rng.integers(1, 30))
        inner = (int(rng.integers(1, 5)), int(rng.integers(1, 5)))
        lo, hi = (-3, 3) if real in FLOATS else (0, 9)
        m1 = random_view(rng, random_values(rng, real, (n1,) + inner, low=lo, high=hi))
        m2 = random_view(rng, random_values(rng, real, (n2, inner[0] * inner[1]), low=lo, high=hi))
        gain = 0.5 if real in FLOATS else 2
        r = lib.new(real)
        lib.call(f"TH{real}Tensor_match", None, r, lib.from_numpy(m1, real), lib.from_numpy(m2, real),
                 lib.scalar(real, gain))
        x = m1.reshape(n1, -1)
        if real in INTS:
            d = x.astype(x.dtype)[:, None, :] - m2.astype(x.dtype)[None, :, :]  # difference in the dtype (wraps)
            with np.errstate(over="ignore"):
                want = (gain * (d.astype(np.int64) ** 2).sum(-1)).astype(x.dtype)
            np.testing.assert_array_equal(r.numpy(), want)
        else:
            d = x.astype(np.float64)[:, None, :] - m2.astype(np.float64)[None, :, :]
            want = gain * (d**2).sum(-1)
            check(real, r.numpy(), want, EPS_STORE[real] * 8 * gain * (d**2).sum(-1))


@pytest.mark.parametrize("real", NUMERIC)
def test_dot_trace_consistent(lib, rng, real):
    acc = {"Float": C.c_double, "Double": C.c_double, "Half": C.c_float, "BFloat16": C.c_float}.get(real, C.c_int64)
    a, b = operand(rng, real, (13, 17)), operand(rng, real, (13, 17))
    got = lib.call(f"TH{real}Tensor_dot", acc, lib.from_numpy(a, real), lib.from_numpy(b, real))
    tr = lib.call(f"TH{real}Tensor_trace", acc, lib.from_numpy(a, real))
    if real in INTS:
        with np.errstate(over="ignore"):
            assert got == int((a.astype(np.int64) * b.astype(np.int64)).sum())
        assert tr == int(np.trace(a.astype(np.int64)))
    else:
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        assert abs(got - (a64 * b64).sum()) <= 1e-5 * (np.abs(a64 * b64).sum() + 1)
        assert abs(tr - np.trace(a64)) <= 1e-5 * (np.abs(np.diag(a64)).sum() + 1)
        # dot of two vectors equals addmv of a 1 x n matrix (the same GEMM path)
        r = lib.new(real)
        lib.call(f"TH{real}Tensor_addmv", None, r, lib.scalar(real, 0), lib.from_numpy(np.zeros(1), real),
                 lib.scalar(real, 1), lib.from_numpy(a.reshape(1, -1) if a.flags.c_contiguous else np.ascontiguousarray(a).reshape(1, -1), real),
                 lib.from_numpy(np.ascontiguousarray(b).reshape(-1), real))
        assert abs(r.numpy()[0] - got) <= 2 * EPS_STORE[real] * (np.abs(a64 * b64).sum() + 1)


@pytest.mark.parametrize("real", ["Float", "Int", "BFloat16"])
def test_shape_errors_name_shapes_and_leave_r_alone(lib, rng, real):
    r = lib.from_numpy(np.ones((2, 2)), real)
    t = lib.from_numpy(np.ones((3, 5)), real)
    m1 = lib.from_numpy(np.ones((3, 4)), real)
    m2 = lib.from_numpy(np.ones((6, 5)), real)
    one = lib.scalar(real, 1)
    with pytest.raises(THError, match=r"size mismatch, m1: \[3 x 4\], m2: \[6 x 5\]"):
        lib.call(f"TH{real}Tensor_addmm", None, r, one, t, one, m1, m2)
    with pytest.raises(THError, match=r"size mismatch, t: \[3 x 5\]"):
        lib.call(f"TH{real}Tensor_addmm", None, r, one, t, one, m1, lib.from_numpy(np.ones((4, 6)), real))
    with pytest.raises(THError, match=r"matrix expected"):
        lib.call(f"TH{real}Tensor_addmm", None, r, one, t, one, lib.from_numpy(np.ones(3), real), m2)
    with pytest.raises(THError, match=r"size mismatch, mat: \[3 x 4\], vec: \[5\]"):
        lib.call(f"TH{real}Tensor_addmv", None, r, one, lib.from_numpy(np.ones(3), real), one, m1,
                 lib.from_numpy(np.ones(5), real))
    with pytest.raises(THError, match=r"vec1"):
        lib.call(f"TH{real}Tensor_addr", None, r, one, t, one, m1, lib.from_numpy(np.ones(5), real))
    b1 = lib.from_numpy(np.ones((2, 3, 4)), real)
    with pytest.raises(THError, match=r"equal number of batches expected, got 2, 3"):
        lib.call(f"TH{real}Tensor_baddbmm", None, r, one, t, one, b1, lib.from_numpy(np.ones((3, 4, 5)), real))
    with pytest.raises(THError, match=r"wrong matrix size, batch1: \[2 x 3 x 4\], batch2: \[2 x 5 x 5\]"):
        lib.call(f"TH{real}Tensor_addbmm", None, r, one, t, one, b1, lib.from_numpy(np.ones((2, 5, 5)), real))
    with pytest.raises(THError, match=r"inner vector dim"):
        lib.call(f"TH{real}Tensor_match", None, r, m1, m2, one)
    with pytest.raises(THError, match="THFloatTensor|TH.*Tensor"):
        lib.call(f"TH{real}Tensor_addmm", None, r, one, None, one, m1, m2)
    np.testing.assert_array_equal(r.numpy(), np.ones((2, 2)))
