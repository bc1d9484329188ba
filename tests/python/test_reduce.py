"""numpy differential tests for the reductions: random dtypes, shapes up to 5-D, transposed and
strided (and broadcast) views, every dimension and keepdim, index outputs, scans, statistics,
norms, histograms, sumTo, and the exactness / thread-independence of float sums.

Index outputs follow numpy's argmax/argmin (the first occurrence; the first NaN wins);
kthvalue/median use a stable order (equal values in position order); mode reports the smallest
of the most frequent values and the position of its last occurrence."""

import ctypes as C
import warnings

import numpy as np
import pytest
from cases import broadcast_partner, random_shape, random_values, random_view, round_to
from thlib import DTYPES, FLOATS, NUMERIC, THError, Tensor

N = 60  # random cases per test function and dtype

# relative/absolute tolerance of results stored in each floating dtype
TOL = {"Float": 1e-5, "Double": 1e-12, "Half": 4e-3, "BFloat16": 3e-2}
# tolerance of accreal results (double for Float/Double, float for Half/BFloat16)
ACC_TOL = {"Float": 1e-10, "Double": 1e-12, "Half": 2e-5, "BFloat16": 2e-5}


def acc_ct(real):
    if real in ("Float", "Double"):
        return C.c_double
    if real in ("Half", "BFloat16"):
        return C.c_float
    return C.c_int64


def real_ct(real):
    return DTYPES[real][1]


def npdtype(real):
    return np.float32 if real == "BFloat16" else DTYPES[real][0]


def assert_close(real, got, want, tol=None):
    want = np.asarray(want)
    got = np.asarray(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    if real in TOL:
        t = TOL[real] if tol is None else tol
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=t, atol=t, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want.astype(got.dtype))


def red_shape(shape, d, keep):
    s = list(shape)
    s[d] = 1
    if not keep and len(s) > 1:
        del s[d]
    return tuple(s)


def acc_ref(real, a):
    """`a` as the reference accumulates it: int64 for integers/Bool, float64 for floats."""
    return np.asarray(a).astype(np.float64 if real in FLOATS else np.int64)


def th(lib, a, real):
    return lib.from_numpy(a, real)


def flags(d, keep):
    return C.c_int(d), C.c_int(int(keep))


def case(rng, real, low=-3, high=3, max_dims=5, max_size=6):
    shape = random_shape(rng, max_dims=max_dims, max_size=max_size)
    a = random_view(rng, random_values(rng, real, shape, low=low, high=high))
    return a


@pytest.mark.parametrize("real", NUMERIC)
def test_sum_prod_along_dims(lib, rng, real):
    for _ in range(N):
        a = case(rng, real, low=-50, high=50) if rng.random() < 0.5 else case(rng, real)
        d = int(rng.integers(a.ndim))
        keep = bool(rng.integers(2))
        r = lib.new(real)
        lib.call(f"TH{real}Tensor_sum", None, r, th(lib, a, real), *flags(d, keep))
        want = np.sum(acc_ref(real, a), axis=d, keepdims=True).reshape(red_shape(a.shape, d, keep))
        assert_close(real, r.numpy(), round_to(real, want) if real in FLOATS else want.astype(DTYPES[real][0]))
        small = random_view(rng, random_values(rng, real, a.shape, low=-2, high=2))
        lib.call(f"TH{real}Tensor_prod", None, r, th(lib, small, real), *flags(d, keep))
        want = np.prod(acc_ref(real, small), axis=d, keepdims=True).reshape(red_shape(a.shape, d, keep))
        assert_close(real, r.numpy(), round_to(real, want) if real in FLOATS else want.astype(DTYPES[real][0]))


@pytest.mark.parametrize("real", NUMERIC + ["Bool"])
def test_max_min_values_and_indices(lib, rng, real):
    for i in range(N):
        a = case(rng, real, low=-3, high=3)  # small range: many ties
        if real in FLOATS and i % 3 == 0:
            a = np.array(a, dtype=np.float32 if real == "BFloat16" else a.dtype)
            a[rng.random(a.shape) < 0.2] = np.nan
            a = random_view(rng, a)
        d = int(rng.integers(a.ndim))
        keep = bool(rng.integers(2))
        for name, fv, fi in (("max", np.max, np.argmax), ("min", np.min, np.argmin)):
            v, ix = lib.new(real), lib.new("Long")
            lib.call(f"TH{real}Tensor_{name}", None, v, ix, th(lib, a, real), *flags(d, keep))
            shape = red_shape(a.shape, d, keep)
            assert_close(real, v.numpy(), fv(a, axis=d, keepdims=True).reshape(shape))
            np.testing.assert_array_equal(ix.numpy(), fi(a, axis=d, keepdims=True).reshape(shape))
            assert ix.numpy().dtype == np.int64


@pytest.mark.parametrize("real", NUMERIC)
def test_whole_tensor_reductions(lib, rng, real):
    for _ in range(N):
        a = case(rng, real, low=-20, high=20)
        t = th(lib, a, real)
        ref = acc_ref(real, a)
        got = lib.call(f"TH{real}Tensor_sumall", acc_ct(real), t)
        if real in FLOATS:
            np.testing.assert_allclose(got, ref.sum(), rtol=ACC_TOL[real], atol=ACC_TOL[real] * np.abs(ref).sum())
        else:
            assert got == ref.sum()
        # products: at most 64 factors in [-2, 2] (no overflow of f32; tiny results may flush)
        small = case(rng, real, low=-2, high=2, max_dims=3, max_size=4)
        got = lib.call(f"TH{real}Tensor_prodall", acc_ct(real), th(lib, small, real))
        want = np.prod(acc_ref(real, small))
        if real in FLOATS:
            np.testing.assert_allclose(got, want, rtol=ACC_TOL[real] * 10, atol=1e-30)
        else:
            assert got == want
        for name, f in (("maxall", np.max), ("minall", np.min), ("medianall", lambda x: np.sort(x, axis=None)[(x.size - 1) // 2])):
            got = lib.unscalar(real, lib.call(f"TH{real}Tensor_{name}", real_ct(real), t))
            assert got == f(a).item(), name
        assert lib.call(f"TH{real}Tensor_numel", C.c_ssize_t, t) == a.size
        # dot pairs elements in row-major order, shapes may differ
        b = random_values(rng, real, (a.size,), low=-20, high=20)
        got = lib.call(f"TH{real}Tensor_dot", acc_ct(real), t, th(lib, b, real))
        want = np.dot(ref.reshape(-1), acc_ref(real, b))
        if real in FLOATS:
            np.testing.assert_allclose(got, want, rtol=ACC_TOL[real], atol=ACC_TOL[real] * np.abs(ref.reshape(-1) * acc_ref(real, b)).sum())
        else:
            assert got == want
        # equal: same sizes and values
        assert lib.call(f"TH{real}Tensor_equal", C.c_int, t, th(lib, np.ascontiguousarray(a), real)) == 1
        if a.ndim > 1:
            c = np.array(a)
            i = int(rng.integers(a.size))
            c.flat[i] = c.flat[i] + 1
            assert lib.call(f"TH{real}Tensor_equal", C.c_int, t, th(lib, c, real)) == 0
            assert lib.call(f"TH{real}Tensor_equal", C.c_int, t, th(lib, np.ascontiguousarray(a).reshape(-1), real)) == 0
        # trace of a 2-D view
        m = random_view(rng, random_values(rng, real, (int(rng.integers(1, 7)), int(rng.integers(1, 7))), low=-20, high=20))
        got = lib.call(f"TH{real}Tensor_trace", acc_ct(real), th(lib, m, real))
        want = np.trace(acc_ref(real, m))
        assert got == pytest.approx(want, rel=ACC_TOL.get(real, 0))


@pytest.mark.parametrize("real", NUMERIC)
def test_kthvalue_median_mode(lib, rng, real):
    for _ in range(N):
        a = case(rng, real, low=-3, high=3)
        d = int(rng.integers(a.ndim))
        keep = bool(rng.integers(2))
        n = a.shape[d]
        shape = red_shape(a.shape, d, keep)
        order = np.argsort(a, axis=d, kind="stable")
        srt = np.take_along_axis(a, order, axis=d)
        k = int(rng.integers(1, n + 1))
        for name, kk, extra in (("kthvalue", k, [C.c_int64(k)]), ("median", (n - 1) // 2 + 1, [])):
            v, ix = lib.new(real), lib.new("Long")
            lib.call(f"TH{real}Tensor_{name}", None, v, ix, th(lib, a, real), *extra, *flags(d, keep))
            assert_close(real, v.numpy(), np.take(srt, [kk - 1], axis=d).reshape(shape))
            np.testing.assert_array_equal(ix.numpy(), np.take(order, [kk - 1], axis=d).reshape(shape))
        v, ix = lib.new(real), lib.new("Long")
        lib.call(f"TH{real}Tensor_mode", None, v, ix, th(lib, a, real), *flags(d, keep))
        moved = np.moveaxis(a, d, -1).reshape(-1, n)
        wv, wi = [], []
        for row in moved:
            vals, counts = np.unique(row, return_counts=True)
            best = vals[np.argmax(counts)]
            wv.append(best)
            wi.append(np.nonzero(row == best)[0][-1])
        kshape = np.moveaxis(a, d, -1).shape[:-1]
        want_v = np.expand_dims(np.array(wv, dtype=a.dtype).reshape(kshape), d).reshape(shape)
        want_i = np.expand_dims(np.array(wi).reshape(kshape), d).reshape(shape)
        assert_close(real, v.numpy(), want_v)
        np.testing.assert_array_equal(ix.numpy(), want_i)


@pytest.mark.parametrize("real", NUMERIC)
def test_cumsum_cumprod(lib, rng, real):
    for _ in range(N // 2):
        a = case(rng, real, low=-9, high=9)
        d = int(rng.integers(a.ndim))
        r = lib.new(real)
        acc = np.float32 if real in ("Half", "BFloat16") else (np.float64 if real in FLOATS else np.int64)
        lib.call(f"TH{real}Tensor_cumsum", None, r, th(lib, a, real), C.c_int(d))
        assert_close(real, r.numpy(), round_to(real, np.cumsum(np.asarray(a).astype(acc), axis=d)))
        small = random_view(rng, random_values(rng, real, a.shape, low=-2, high=2))
        lib.call(f"TH{real}Tensor_cumprod", None, r, th(lib, small, real), C.c_int(d))
        assert_close(real, r.numpy(), round_to(real, np.cumprod(np.asarray(small).astype(acc), axis=d)))


@pytest.mark.parametrize("real", FLOATS)
def test_mean_var_std_norm_along_dims(lib, rng, real):
    for _ in range(N):
        a = case(rng, real, low=-4, high=4)
        if rng.random() < 0.2:
            a = random_view(rng, np.where(rng.random(a.shape) < 0.3, 0, a).astype(a.dtype))
        d = int(rng.integers(a.ndim))
        keep = bool(rng.integers(2))
        shape = red_shape(a.shape, d, keep)
        x = np.asarray(a, dtype=np.float64)
        t = th(lib, a, real)
        r = lib.new(real)
        lib.call(f"TH{real}Tensor_mean", None, r, t, *flags(d, keep))
        assert_close(real, r.numpy(), x.mean(axis=d, keepdims=True).reshape(shape))
        biased = int(rng.integers(2))
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want_var = x.var(axis=d, ddof=0 if biased else 1, keepdims=True).reshape(shape)
        lib.call(f"TH{real}Tensor_var", None, r, t, C.c_int(d), C.c_int(biased), C.c_int(int(keep)))
        assert_close(real, r.numpy(), want_var)
        lib.call(f"TH{real}Tensor_std", None, r, t, C.c_int(d), C.c_int(biased), C.c_int(int(keep)))
        assert_close(real, r.numpy(), np.sqrt(want_var))
        p = [0.0, 1.0, 2.0, 3.0, 0.5, np.inf][int(rng.integers(6))]
        lib.call(f"TH{real}Tensor_norm", None, r, t, lib.scalar(real, p), *flags(d, keep))
        if p == 0:
            want = np.count_nonzero(x, axis=d, keepdims=True)
        elif p == np.inf:
            want = np.abs(x).max(axis=d, keepdims=True)
        else:
            want = (np.abs(x) ** p).sum(axis=d, keepdims=True) ** (1 / p)
        assert_close(real, r.numpy(), want.reshape(shape))


@pytest.mark.parametrize("real", FLOATS)
def test_whole_tensor_stats(lib, rng, real):
    tol = ACC_TOL[real] * 100
    for _ in range(N):
        a = case(rng, real, low=-4, high=4)
        x = np.asarray(a, dtype=np.float64)
        t = th(lib, a, real)
        assert lib.call(f"TH{real}Tensor_meanall", acc_ct(real), t) == pytest.approx(x.mean(), rel=tol, abs=tol)
        for biased in (0, 1):
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                v = x.var(ddof=0 if biased else 1)
            got = lib.call(f"TH{real}Tensor_varall", acc_ct(real), t, C.c_int(biased))
            np.testing.assert_allclose(got, v, rtol=tol, atol=tol, equal_nan=True)
            got = lib.call(f"TH{real}Tensor_stdall", acc_ct(real), t, C.c_int(biased))
            np.testing.assert_allclose(got, np.sqrt(v), rtol=tol, atol=tol, equal_nan=True)
        for p in (0.0, 1.0, 2.0, 3.0, 1.5, np.inf):
            got = lib.call(f"TH{real}Tensor_normall", acc_ct(real), t, lib.scalar(real, p))
            if p == 0:
                want = np.count_nonzero(x)
            elif p == np.inf:
                want = np.abs(x).max()
            else:
                want = (np.abs(x) ** p).sum() ** (1 / p)
            assert got == pytest.approx(want, rel=tol, abs=tol), p
        b = random_values(rng, real, (a.size,), low=-4, high=4)
        diff = np.asarray(round_to(real, np.asarray(a, np.float32 if real in ("Half", "BFloat16") else a.dtype).reshape(-1) - b), np.float64)
        for p in (1.0, 2.0, 3.0):
            got = lib.call(f"TH{real}Tensor_dist", acc_ct(real), t, th(lib, b, real), lib.scalar(real, p))
            assert got == pytest.approx((np.abs(diff) ** p).sum() ** (1 / p), rel=tol, abs=tol)


@pytest.mark.parametrize("real", FLOATS)
def test_renorm(lib, rng, real):
    for _ in range(N // 2):
        a = case(rng, real, low=-4, high=4, max_dims=4)
        if a.ndim < 2:
            a = random_view(rng, random_values(rng, real, (3,) + a.shape, low=-4, high=4))
        d = int(rng.integers(a.ndim))
        p = [1.0, 2.0, 3.0][int(rng.integers(3))]
        x = np.asarray(a, dtype=np.float64)
        axes = tuple(i for i in range(a.ndim) if i != d)
        norms = (np.abs(x) ** p).sum(axis=axes, keepdims=True) ** (1 / p)
        # between the norms (a norm equal to maxnorm would make the comparison a rounding race)
        maxnorm = float(round_to(real, np.median(norms) * 1.01))
        factor = np.where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)
        r = lib.new(real)
        lib.call(f"TH{real}Tensor_renorm", None, r, th(lib, a, real), lib.scalar(real, p), C.c_int(d), lib.scalar(real, maxnorm))
        assert_close(real, r.numpy(), x * factor, tol=TOL[real] * 2)


@pytest.mark.parametrize("real", ["Float", "Int", "Half"])
def test_large_shapes(lib, rng, real):
    """Shapes big enough for the blocked, tiled and parallel paths (a few cases)."""
    for _ in range(3):
        nd = int(rng.integers(1, 4))
        sizes = [int(rng.integers(1, 600)) for _ in range(nd)]
        while np.prod(sizes) < 70_000:
            sizes[int(rng.integers(nd))] *= 3
        a = random_view(rng, random_values(rng, real, tuple(sizes), low=-9, high=9))
        d = int(rng.integers(a.ndim))
        t = th(lib, a, real)
        r, ix = lib.new(real), lib.new("Long")
        lib.call(f"TH{real}Tensor_sum", None, r, t, *flags(d, False))
        want = np.sum(acc_ref(real, a), axis=d, keepdims=True).reshape(red_shape(a.shape, d, False))
        assert_close(real, r.numpy(), round_to(real, want) if real in FLOATS else want.astype(DTYPES[real][0]))
        lib.call(f"TH{real}Tensor_max", None, r, ix, t, *flags(d, True))
        assert_close(real, r.numpy(), np.max(a, axis=d, keepdims=True))
        np.testing.assert_array_equal(ix.numpy(), np.argmax(a, axis=d, keepdims=True))
        lib.call(f"TH{real}Tensor_cumsum", None, r, t, C.c_int(d))
        acc = np.float32 if real == "Half" else (np.float64 if real in FLOATS else np.int64)
        assert_close(real, r.numpy(), round_to(real, np.cumsum(np.asarray(a).astype(acc), axis=d)))
        got = lib.call(f"TH{real}Tensor_sumall", acc_ct(real), t)
        ref = acc_ref(real, a)
        if real in FLOATS:
            assert got == pytest.approx(ref.sum(), rel=1e-5, abs=1e-5 * np.abs(ref).sum())
        else:
            assert got == ref.sum()


def ref_hist(x, nbins, lo, hi, ct):
    """TH's binning formula computed in the dtype's compute type `ct`."""
    x = np.asarray(x, dtype=ct).reshape(-1)
    lo, hi = ct(lo), ct(hi)
    inside = x[(x >= lo) & (x <= hi)]
    bins = ((inside - lo) / (hi - lo) * ct(nbins)).astype(np.int64)
    return np.bincount(np.minimum(bins, nbins - 1), minlength=nbins)


@pytest.mark.parametrize("real", FLOATS)
def test_histc_bhistc(lib, rng, real):
    ct = np.float64 if real == "Double" else np.float32
    for _ in range(N // 2):
        a = case(rng, real, low=-5, high=5, max_dims=3)
        nbins = int(rng.integers(1, 12))
        if rng.random() < 0.3:
            lo = hi = 0.0
            wlo, whi = float(np.min(np.asarray(a, ct))), float(np.max(np.asarray(a, ct)))
            if wlo == whi:
                wlo, whi = wlo - 1, whi + 1
        else:
            lo, hi = sorted(float(v) for v in random_values(rng, real, (2,), low=-6, high=6))
            if lo == hi:
                hi = lo + 1
            wlo, whi = lo, hi
        h = lib.new(real)
        lib.call(f"TH{real}Tensor_histc", None, h, th(lib, a, real), C.c_int64(nbins), lib.scalar(real, lo), lib.scalar(real, hi))
        assert_close(real, h.numpy(), ref_hist(a, nbins, wlo, whi, ct), tol=0)
        m = np.asarray(a).reshape(a.shape[0], -1)
        lib.call(f"TH{real}Tensor_bhistc", None, h, th(lib, m, real), C.c_int64(nbins), lib.scalar(real, lo), lib.scalar(real, hi))
        want = np.stack([ref_hist(row, nbins, wlo, whi, ct) for row in m])
        assert_close(real, h.numpy(), want, tol=0)


@pytest.mark.parametrize("real", NUMERIC)
def test_sum_to_undoes_broadcasting(lib, rng, real):
    for _ in range(N):
        shape = random_shape(rng)
        target = broadcast_partner(rng, shape)
        if rng.random() < 0.3:
            # a broadcast (stride-0) input, as produced by expand
            src = random_values(rng, real, target, low=-20, high=20)
            a = np.broadcast_to(src, shape)
        else:
            a = random_view(rng, random_values(rng, real, shape, low=-20, high=20))
        lead = a.ndim - len(target)
        axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(target) if n == 1 and a.shape[lead + i] != 1)
        want = np.sum(acc_ref(real, a), axis=axes, keepdims=True).reshape(target)
        sizes = lib.call("THLongStorage_newWithSize", C.c_void_p, C.c_ssize_t(len(target)))
        for i, n in enumerate(target):
            lib.call("THLongStorage_set", None, C.c_void_p(sizes), C.c_ssize_t(i), C.c_int64(n))
        r = lib.new(real)
        lib.call(f"TH{real}Tensor_sumTo", None, r, th(lib, a, real), C.c_void_p(sizes))
        lib.call("THLongStorage_free", None, C.c_void_p(sizes))
        assert_close(real, r.numpy(), round_to(real, want) if real in FLOATS else want.astype(DTYPES[real][0]))


def long_storage(lib, values):
    s = lib.call("THLongStorage_newWithSize", C.c_void_p, C.c_ssize_t(len(values)))
    for i, n in enumerate(values):
        lib.call("THLongStorage_set", None, C.c_void_p(s), C.c_ssize_t(i), C.c_int64(n))
    return s


def test_sum_to_rejects_non_broadcast_shapes(lib):
    a = lib.from_numpy(np.ones((2, 3, 4), np.float32), "Float")
    for bad in ([2, 4], [3, 3, 4], [1, 2, 3, 4]):
        s = long_storage(lib, bad)
        with pytest.raises(THError, match="broadcast"):
            lib.call("THFloatTensor_sumTo", None, lib.new("Float"), a, C.c_void_p(s))
        lib.call("THLongStorage_free", None, C.c_void_p(s))


@pytest.mark.parametrize("real", ["Byte", "Bool"])
def test_logical_and_bool_sums(lib, rng, real):
    for _ in range(N):
        a = case(rng, real, low=0, high=1)
        if rng.random() < 0.3:
            a = random_view(rng, np.ones(a.shape, dtype=DTYPES[real][0]))
        t = th(lib, a, real)
        assert lib.call(f"TH{real}Tensor_logicalall", C.c_int, t) == int(np.all(a))
        assert lib.call(f"TH{real}Tensor_logicalany", C.c_int, t) == int(np.any(a))
        assert lib.call(f"TH{real}Tensor_sumall", C.c_int64, t) == int(np.count_nonzero(a))


def test_bool_reductions(lib, rng):
    for _ in range(N):
        a = case(rng, "Bool")
        t = th(lib, a, "Bool")
        assert lib.call("THBoolTensor_maxall", C.c_uint8, t) == int(a.max())
        assert lib.call("THBoolTensor_minall", C.c_uint8, t) == int(a.min())
        b = np.array(a)
        assert lib.call("THBoolTensor_equal", C.c_int, t, th(lib, b, "Bool")) == 1
        b.flat[0] = not b.flat[0]
        assert lib.call("THBoolTensor_equal", C.c_int, t, th(lib, b, "Bool")) == 0


def test_outputs_reused_and_in_place(lib, rng):
    # an output that already has the result's shape keeps its (transposed) strides
    a = random_values(rng, "Double", (4, 5, 6))
    r = lib.from_numpy(np.zeros((6, 4)).T, "Double")  # shape (4, 6), non-contiguous
    lib.call("THDoubleTensor_sum", None, r, lib.from_numpy(a, "Double"), C.c_int(1), C.c_int(0))
    assert r.stride(0) == 1
    assert_close("Double", r.numpy(), a.sum(axis=1))
    # r_ == t: the input is read before the output is resized
    t = lib.from_numpy(a, "Double")
    lib.call("THDoubleTensor_sum", None, t, t, C.c_int(2), C.c_int(1))
    assert_close("Double", t.numpy(), a.sum(axis=2, keepdims=True))
    t = lib.from_numpy(a, "Double")
    lib.call("THDoubleTensor_cumsum", None, t, t, C.c_int(0))
    assert_close("Double", t.numpy(), np.cumsum(a, axis=0))
    v = lib.from_numpy(a, "Double")
    ix = lib.new("Long")
    lib.call("THDoubleTensor_max", None, v, ix, v, C.c_int(0), C.c_int(0))
    assert_close("Double", v.numpy(), a.max(axis=0))


@pytest.mark.parametrize("real", ["Float", "Half", "BFloat16"])
def test_thirty_million_ones_sum_exactly(lib, real):
    n = 30_000_000
    t = Tensor(lib, real, lib.call(f"TH{real}Tensor_newWithSize1d", C.c_void_p, C.c_int64(n)))
    lib.call(f"TH{real}Tensor_fill", None, t, lib.scalar(real, 1))
    assert lib.call(f"TH{real}Tensor_sumall", acc_ct(real), t) == n
    if real == "Float":
        # along dims, both loop shapes: sums of 3e6 ones per output
        m = lib.new(real)
        lib.call(f"TH{real}Tensor_resize2d", None, m, C.c_int64(10), C.c_int64(n // 10))
        lib.call(f"TH{real}Tensor_fill", None, m, lib.scalar(real, 1))
        r = lib.new(real)
        lib.call(f"TH{real}Tensor_sum", None, r, m, C.c_int(1), C.c_int(0))
        assert np.all(r.numpy() == n // 10)
        lib.call(f"TH{real}Tensor_resize2d", None, m, C.c_int64(n // 10), C.c_int64(10))
        lib.call(f"TH{real}Tensor_sum", None, r, m, C.c_int(0), C.c_int(0))
        assert np.all(r.numpy() == n // 10)


def test_results_do_not_depend_on_thread_count(lib, rng):
    a = rng.standard_normal(3_000_000).astype(np.float32) * 1e3
    t = lib.from_numpy(a, "Float")
    m = lib.from_numpy(a.reshape(1000, 3000), "Float")
    before = lib.dll.THGetNumThreads()
    results = []
    try:
        for n in (1, 2, 3):
            lib.call("THSetNumThreads", None, C.c_int(n))
            r0, r1 = lib.new("Float"), lib.new("Float")
            lib.call("THFloatTensor_sum", None, r0, m, C.c_int(0), C.c_int(0))
            lib.call("THFloatTensor_sum", None, r1, m, C.c_int(1), C.c_int(0))
            s = lib.call("THFloatTensor_sumall", C.c_double, t)
            v = lib.call("THFloatTensor_varall", C.c_double, t, C.c_int(0))
            results.append((s, v, r0.numpy().tobytes(), r1.numpy().tobytes()))
    finally:
        lib.call("THSetNumThreads", None, C.c_int(before))
    assert results[0] == results[1] == results[2]
    assert results[0][0] == pytest.approx(np.sum(a.astype(np.float64)), rel=1e-12, abs=1e-6)


def test_errors_are_raised(lib):
    f = lib.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3), "Float")
    r, ix = lib.new("Float"), lib.new("Long")
    with pytest.raises(THError, match="out of range"):
        lib.call("THFloatTensor_sum", None, r, f, C.c_int(2), C.c_int(0))
    with pytest.raises(THError, match="out of range"):
        lib.call("THFloatTensor_max", None, r, ix, f, C.c_int(-1), C.c_int(0))
    with pytest.raises(THError, match="k = 4"):
        lib.call("THFloatTensor_kthvalue", None, r, ix, f, C.c_int64(4), C.c_int(1), C.c_int(0))
    with pytest.raises(THError, match="empty"):
        lib.call("THFloatTensor_maxall", C.c_float, lib.new("Float"))
    with pytest.raises(THError, match="inconsistent tensor size"):
        lib.call("THFloatTensor_dot", C.c_double, f, lib.from_numpy(np.ones(5, np.float32), "Float"))
    with pytest.raises(THError, match="positive"):
        lib.call("THFloatTensor_renorm", None, r, f, C.c_float(0), C.c_int(0), C.c_float(1))
    with pytest.raises(THError, match="2-D"):
        lib.call("THFloatTensor_trace", C.c_double, lib.from_numpy(np.ones(3, np.float32), "Float"))
    with pytest.raises(THError, match="bins"):
        lib.call("THFloatTensor_histc", None, r, f, C.c_int64(0), C.c_float(0), C.c_float(1))
    # a failed call leaves its output untouched
    assert r.ndim() == 0


def test_empty_tensors(lib):
    e = lib.new("Double")
    assert lib.call("THDoubleTensor_sumall", C.c_double, e) == 0
    assert lib.call("THDoubleTensor_prodall", C.c_double, e) == 1
    assert lib.call("THDoubleTensor_normall", C.c_double, e, C.c_double(2)) == 0
    assert lib.call("THDoubleTensor_numel", C.c_ssize_t, e) == 0
    assert lib.call("THDoubleTensor_equal", C.c_int, e, lib.new("Double")) == 1
    assert lib.call("THByteTensor_logicalany", C.c_int, lib.new("Byte")) == 0
    with pytest.raises(THError, match="empty"):
        lib.call("THDoubleTensor_meanall", C.c_double, e)
    with pytest.raises(THError, match="empty"):
        lib.call("THByteTensor_logicalall", C.c_int, lib.new("Byte"))
