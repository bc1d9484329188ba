"""numpy differential tests for the index/shape family: masks, nonzero, indexSelect/Copy/Add/Fill,
gather/scatter, constructors, reshape, sort/topk, tril/triu, cat/catArray, cross and ranges.
Random dtypes (all ten where the op exists), shapes up to 5-D, transposed/strided views."""

import ctypes as C

import numpy as np
import pytest
from cases import random_shape, random_values, random_view, round_to
from thlib import DTYPES, FLOATS, INTS, NUMERIC, THError

ALL = NUMERIC + ["Bool"]
N = 40  # random cases per (test, dtype)
TOL = {"Float": 2e-6, "Double": 1e-12, "Half": 2e-3, "BFloat16": 1.6e-2}
ACC = {"Float": C.c_double, "Double": C.c_double, "Half": C.c_float, "BFloat16": C.c_float}


def th(lib, a, real):
    return lib.from_numpy(a, real)


def long_t(lib, a):
    return lib.from_numpy(np.asarray(a, dtype=np.int64), "Long")


def np_real(real):
    """The numpy dtype to_numpy returns for `real`."""
    return np.float32 if real == "BFloat16" else DTYPES[real][0]


def vals(rng, real, shape, nan=False):
    """Small values (so sorts see ties), as the dtype's numpy representation."""
    lo, hi = (0, 9) if real in INTS else (-4, 4)
    a = random_values(rng, real, shape, low=lo, high=hi)
    if real in FLOATS:
        a = round_to(real, np.round(np.asarray(a, dtype=np.float64) * 2) / 2)  # halves: many ties
        if nan and a.size:
            a = a.copy()
            a.flat[rng.integers(0, a.size, size=max(1, a.size // 5))] = np.nan
    return a


def assert_same(real, got, want):
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_array_equal(got, want.astype(got.dtype))


def assert_close(real, got, want, tol=None):
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    if real in TOL:
        t = TOL[real] if tol is None else tol
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=t, atol=t, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want.astype(got.dtype))


def pick_real(rng, reals):
    return reals[int(rng.integers(len(reals)))]


def long_storage(lib, sizes):
    s = lib.call("THLongStorage_newWithSize", C.c_void_p, C.c_ssize_t(len(sizes)))
    for i, v in enumerate(sizes):
        lib.call("THLongStorage_set", None, C.c_void_p(s), C.c_ssize_t(i), C.c_int64(v))
    return s


def free_storage(lib, s):
    lib.call("THLongStorage_free", None, C.c_void_p(s))


def full_index(idx, axis, dst_ndim):
    """Index tuple addressing dst[..., idx, ...] at every position of idx."""
    grids = list(np.indices(idx.shape, sparse=False))
    grids[axis] = idx
    return tuple(grids)


# ------------------------------------------------------------------ index ops


@pytest.mark.parametrize("real", ALL)
def test_index_select(lib, rng, real):
    for _ in range(N):
        shape = random_shape(rng)
        d = int(rng.integers(len(shape)))
        a = random_view(rng, vals(rng, real, shape))
        idx = rng.integers(0, shape[d], size=int(rng.integers(1, 7)))
        r = lib.new(real)
        lib.call(f"TH{real}Tensor_indexSelect", None, r, th(lib, a, real), C.c_int(d), long_t(lib, random_view(rng, idx)))
        assert_same(real, r.numpy(), np.take(a, idx, axis=d))


@pytest.mark.parametrize("real", ALL)
def test_index_copy_add_fill(lib, rng, real):
    for _ in range(N):
        shape = random_shape(rng)
        d = int(rng.integers(len(shape)))
        a = vals(rng, real, shape)
        k = int(rng.integers(1, 7))
        idx = rng.integers(0, shape[d], size=k)
        sshape = list(shape)
        sshape[d] = k
        src = random_view(rng, vals(rng, real, sshape))
        ops = ["indexCopy", "indexFill"] + (["indexAdd"] if real != "Bool" else [])
        op = ops[int(rng.integers(len(ops)))]
        t = th(lib, random_view(rng, a), real)
        want = np.array(a, copy=True)
        sl = lambda j: (slice(None),) * d + (j,)  # noqa: E731
        if op == "indexFill":
            v = vals(rng, real, ()).item()
            lib.call(f"TH{real}Tensor_indexFill", None, t, C.c_int(d), long_t(lib, idx), lib.scalar(real, v))
            want[sl(idx)] = v
        else:
            lib.call(f"TH{real}Tensor_{op}", None, t, C.c_int(d), long_t(lib, idx), th(lib, src, real))
            for i, j in enumerate(idx):  # in index order: the last copy wins, adds accumulate
                if op == "indexCopy":
                    want[sl(j)] = src[sl(i)]
                else:
                    want[sl(j)] = round_to(real, want[sl(j)].astype(np.float64) + src[sl(i)])
        assert_close(real, t.numpy(), want)


@pytest.mark.parametrize("real", ALL)
def test_gather(lib, rng, real):
    for _ in range(N):
        shape = random_shape(rng)
        d = int(rng.integers(len(shape)))
        a = random_view(rng, vals(rng, real, shape))
        ishape = list(shape)
        ishape[d] = int(rng.integers(1, 7))
        idx = random_view(rng, rng.integers(0, shape[d], size=ishape))
        r = lib.new(real)
        lib.call(f"TH{real}Tensor_gather", None, r, th(lib, a, real), C.c_int(d), long_t(lib, idx))
        assert_same(real, r.numpy(), np.take_along_axis(a, idx, axis=d))


@pytest.mark.parametrize("real", ALL)
def test_scatter_family(lib, rng, real):
    for _ in range(N):
        shape = random_shape(rng)
        d = int(rng.integers(len(shape)))
        dst = vals(rng, real, shape)
        k = int(rng.integers(1, shape[d] + 1))
        ishape = list(shape)
        ishape[d] = k
        # distinct targets within each slice (np.put_along_axis has no defined order for repeats)
        perm = np.argsort(rng.random(shape), axis=d)
        idx = np.take(perm, np.arange(k), axis=d)
        src = vals(rng, real, ishape)
        t = th(lib, random_view(rng, dst), real)
        want = np.array(dst, copy=True)
        op = ["scatter", "scatterFill", "scatterAdd"][int(rng.integers(2 if real == "Bool" else 3))]
        if op == "scatter":
            lib.call(f"TH{real}Tensor_scatter", None, t, C.c_int(d), long_t(lib, random_view(rng, idx)), th(lib, random_view(rng, src), real))
            np.put_along_axis(want, idx, src, axis=d)
        elif op == "scatterFill":
            v = vals(rng, real, ()).item()
            lib.call(f"TH{real}Tensor_scatterFill", None, t, C.c_int(d), long_t(lib, idx), lib.scalar(real, v))
            np.put_along_axis(want, idx, np.asarray(v, dtype=want.dtype), axis=d)
        else:
            # repeated indices allowed: they accumulate
            idx = rng.integers(0, shape[d], size=ishape)
            lib.call(f"TH{real}Tensor_scatterAdd", None, t, C.c_int(d), long_t(lib, idx), th(lib, src, real))
            if real in INTS:
                np.add.at(want, full_index(idx, d, len(shape)), src)
            else:
                w = want.astype(np.float64)
                for pos in np.ndindex(*ishape):  # sequential, rounding after every add
                    q = list(pos)
                    q[d] = idx[pos]
                    w[tuple(q)] = round_to(real, w[tuple(q)] + src[pos])
                want = w
        assert_close(real, t.numpy(), want)


def test_index_errors_leave_output_untouched(lib):
    src = th(lib, np.arange(12, dtype=np.float32).reshape(3, 4), "Float")
    out = th(lib, np.full(5, 9, dtype=np.float32), "Float")
    with pytest.raises(THError, match=r"index 7 .*dimension 0 with size 3"):
        lib.call("THFloatTensor_indexSelect", None, out, src, C.c_int(0), long_t(lib, [0, 7]))
    assert_same("Float", out.numpy(), np.full(5, 9))
    with pytest.raises(THError, match=r"index -1 "):
        lib.call("THFloatTensor_indexFill", None, src, C.c_int(1), long_t(lib, [0, -1]), C.c_float(0))
    with pytest.raises(THError, match=r"index 4 .*size 4"):
        lib.call("THFloatTensor_scatterAdd", None, src, C.c_int(1), long_t(lib, [[0, 4], [0, 0], [1, 1]]), src)
    with pytest.raises(THError, match=r"index 3 .*size 3"):
        lib.call("THFloatTensor_gather", None, out, src, C.c_int(0), long_t(lib, [[0, 3, 0, 0]]))
    assert_same("Float", out.numpy(), np.full(5, 9))
    assert_same("Float", src.numpy(), np.arange(12).reshape(3, 4))
    with pytest.raises(THError, match="dimension 2 out of range"):
        lib.call("THFloatTensor_indexSelect", None, out, src, C.c_int(2), long_t(lib, [0]))


# ------------------------------------------------------------------ masks, nonzero


def random_mask(rng, shape, kind):
    m = rng.integers(0, 2, size=shape)
    if kind == "Bool":
        return m.astype(np.bool_)
    return m.astype(np.uint8)


def mask_shape(rng, shape):
    """The tensor's shape, or a shape that broadcasts to it."""
    if rng.random() < 0.5:
        return tuple(shape)
    s = [1 if rng.random() < 0.4 else n for n in shape]
    return tuple(s[int(rng.integers(0, len(s))):])


@pytest.mark.parametrize("real", ALL)
@pytest.mark.parametrize("kind", ["Byte", "Bool"])
def test_masked_ops(lib, rng, real, kind):
    sfx = "Bool" if kind == "Bool" else ""
    for _ in range(N):
        shape = random_shape(rng)
        a = vals(rng, real, shape)
        m = random_mask(rng, mask_shape(rng, shape), kind)
        mb = np.broadcast_to(m, shape).astype(bool)
        mt = th(lib, random_view(rng, m), kind)
        # maskedFill
        v = vals(rng, real, ()).item()
        t = th(lib, random_view(rng, a), real)
        lib.call(f"TH{real}Tensor_maskedFill{sfx}", None, t, mt, lib.scalar(real, v))
        want = np.array(a, copy=True)
        want[mb] = v
        assert_same(real, t.numpy(), want)
        # maskedCopy: successive source elements, source may be longer
        cnt = int(mb.sum())
        src = vals(rng, real, (cnt + int(rng.integers(0, 3)),))
        t = th(lib, random_view(rng, a), real)
        lib.call(f"TH{real}Tensor_maskedCopy{sfx}", None, t, mt, th(lib, src, real))
        want = np.array(a, copy=True)
        want[mb] = src[:cnt]
        assert_same(real, t.numpy(), want)
        # maskedSelect (source and mask broadcast together)
        r = lib.new(real)
        av = random_view(rng, a)
        lib.call(f"TH{real}Tensor_maskedSelect{sfx}", None, r, th(lib, av, real), mt)
        sa, sm = np.broadcast_arrays(av, m.astype(bool))
        want = sa[sm]
        got = r.numpy()
        assert_same(real, got, want if want.size else np.zeros((0,), dtype=got.dtype))


def test_mask_errors(lib):
    t = th(lib, np.arange(6, dtype=np.int32).reshape(2, 3), "Int")
    bad = th(lib, np.array([[0, 2, 0], [1, 0, 0]], dtype=np.uint8), "Byte")
    with pytest.raises(THError, match="0 and 1"):
        lib.call("THIntTensor_maskedFill", None, t, bad, C.c_int32(-1))
    with pytest.raises(THError, match="0 and 1"):
        lib.call("THIntTensor_maskedCopy", None, t, bad, th(lib, np.zeros(6, np.int32), "Int"))
    assert_same("Int", t.numpy(), np.arange(6).reshape(2, 3))
    ok = th(lib, np.array([1, 1, 1, 1, 0, 0], dtype=np.uint8), "Byte")  # same count: paired row-major
    with pytest.raises(THError, match="source has only 2"):
        lib.call("THIntTensor_maskedCopy", None, t, ok, th(lib, np.zeros(2, np.int32), "Int"))
    assert_same("Int", t.numpy(), np.arange(6).reshape(2, 3))
    lib.call("THIntTensor_maskedFill", None, t, ok, C.c_int32(-1))
    assert_same("Int", t.numpy(), [[-1, -1, -1], [-1, 4, 5]])
    with pytest.raises(THError, match="mask of size"):
        lib.call("THIntTensor_maskedFill", None, t, th(lib, np.ones(4, np.uint8), "Byte"), C.c_int32(0))


@pytest.mark.parametrize("real", ALL)
def test_nonzero(lib, rng, real):
    for _ in range(N):
        shape = random_shape(rng)
        a = vals(rng, real, shape, nan=True)
        if real != "Bool":
            a = np.where(rng.random(shape) < 0.5, np.zeros((), a.dtype), a)
        r = lib.new("Long")
        lib.call(f"TH{real}Tensor_nonzero", None, r, th(lib, random_view(rng, a), real))
        want = np.argwhere(a)
        got = r.numpy()
        if want.shape[0] == 0:
            assert r.ndim() == 0
        else:
            assert_same("Long", got, want)


# ------------------------------------------------------------------ sort, topk


def stable_order(a, axis, descending):
    """Stable sort positions; NaN largest (last ascending, first descending)."""
    if not descending:
        return np.argsort(a, axis=axis, kind="stable")
    if a.dtype.kind == "f":
        key = np.where(np.isnan(a), -np.inf, -a.astype(np.float64))
    else:
        key = -a.astype(np.int64)
    return np.argsort(key, axis=axis, kind="stable")


@pytest.mark.parametrize("real", ALL)
def test_sort(lib, rng, real):
    for _ in range(N):
        shape = random_shape(rng)
        d = int(rng.integers(len(shape)))
        a = vals(rng, real, shape, nan=True)
        desc = bool(rng.integers(2))
        rt, ri = lib.new(real), lib.new("Long")
        lib.call(f"TH{real}Tensor_sort", None, rt, ri, th(lib, random_view(rng, a), real), C.c_int(d), C.c_int(int(desc)))
        order = stable_order(a, d, desc)
        assert_same("Long", ri.numpy(), order)
        assert_same(real, rt.numpy(), np.take_along_axis(a, order, axis=d))


@pytest.mark.parametrize("real", ALL)
def test_topk(lib, rng, real):
    for _ in range(N):
        shape = random_shape(rng)
        d = int(rng.integers(len(shape)))
        a = vals(rng, real, shape, nan=True)
        k = int(rng.integers(1, shape[d] + 1))
        largest = bool(rng.integers(2))
        rt, ri = lib.new(real), lib.new("Long")
        lib.call(f"TH{real}Tensor_topk", None, rt, ri, th(lib, random_view(rng, a), real), C.c_int64(k), C.c_int(d),
                 C.c_int(int(largest)), C.c_int(1))
        order = np.take(stable_order(a, d, largest), np.arange(k), axis=d)
        assert_same("Long", ri.numpy(), order)
        assert_same(real, rt.numpy(), np.take_along_axis(a, order, axis=d))


def test_sort_in_place_and_big(lib, rng):
    a = rng.standard_normal((3, 5000)).astype(np.float32)
    t = th(lib, a, "Float")
    ri = lib.new("Long")
    lib.call("THFloatTensor_sort", None, t, ri, t, C.c_int(1), C.c_int(0))
    assert_same("Float", t.numpy(), np.sort(a, axis=1, kind="stable"))
    assert_same("Long", ri.numpy(), np.argsort(a, axis=1, kind="stable"))
    b = rng.integers(0, 50, size=(40000, 3)).astype(np.int32)
    rt = lib.new("Int")
    lib.call("THIntTensor_sort", None, rt, ri, th(lib, b, "Int"), C.c_int(0), C.c_int(1))
    order = np.argsort(-b.astype(np.int64), axis=0, kind="stable")
    assert_same("Long", ri.numpy(), order)


# ------------------------------------------------------------------ triangles, cat, cross


@pytest.mark.parametrize("real", ALL)
def test_tril_triu(lib, rng, real):
    for _ in range(N):
        shape = tuple(int(x) for x in rng.integers(1, 8, size=2))
        a = vals(rng, real, shape)
        k = int(rng.integers(-4, 5))
        for name, f in (("tril", np.tril), ("triu", np.triu)):
            r = lib.new(real)
            lib.call(f"TH{real}Tensor_{name}", None, r, th(lib, random_view(rng, a), real), C.c_int64(k))
            assert_same(real, r.numpy(), f(a, k))
        t = th(lib, a, real)  # in place
        lib.call(f"TH{real}Tensor_tril", None, t, t, C.c_int64(k))
        assert_same(real, t.numpy(), np.tril(a, k))


@pytest.mark.parametrize("real", ALL)
def test_cat(lib, rng, real):
    for _ in range(N):
        shape = random_shape(rng)
        d = int(rng.integers(len(shape)))
        n = int(rng.integers(1, 5))
        parts = []
        for _ in range(n):
            s = list(shape)
            s[d] = int(rng.integers(1, 4))
            parts.append(random_view(rng, vals(rng, real, s)))
        want = np.concatenate(parts, axis=d)
        ts = [th(lib, p, real) for p in parts]
        r = lib.new(real)
        if n == 2 and rng.random() < 0.5:
            lib.call(f"TH{real}Tensor_cat", None, r, ts[0], ts[1], C.c_int(d))
        else:
            arr = (C.c_void_p * n)(*[t.ptr for t in ts])
            dim = -1 if d == len(shape) - 1 and rng.random() < 0.5 else d
            lib.call(f"TH{real}Tensor_catArray", None, r, arr, C.c_int(n), C.c_int(dim))
        assert_same(real, r.numpy(), want)


def test_cat_th_rules(lib):
    a = th(lib, np.array([1, 2], dtype=np.int64), "Long")
    b = th(lib, np.array([[3, 4], [5, 6]], dtype=np.int64), "Long")
    e = lib.new("Long")
    r = lib.new("Long")
    arr = (C.c_void_p * 3)(a.ptr, e.ptr, b.ptr)
    lib.call("THLongTensor_catArray", None, r, arr, C.c_int(3), C.c_int(1))  # [2] counts as [2, 1]
    assert_same("Long", r.numpy(), [[1, 3, 4], [2, 5, 6]])
    lib.call("THLongTensor_cat", None, r, a, a, C.c_int(1))  # one past the last dim
    assert_same("Long", r.numpy(), [[1, 1], [2, 2]])
    lib.call("THLongTensor_cat", None, a, a, a, C.c_int(0))  # output is an input
    assert_same("Long", a.numpy(), [1, 2, 1, 2])
    with pytest.raises(THError, match="inconsistent tensor sizes"):
        lib.call("THLongTensor_cat", None, r, a, b, C.c_int(0))
    with pytest.raises(THError, match="invalid number of inputs"):
        lib.call("THLongTensor_catArray", None, r, arr, C.c_int(0), C.c_int(0))


@pytest.mark.parametrize("real", NUMERIC)
def test_cross(lib, rng, real):
    for _ in range(N):
        shape = list(random_shape(rng, max_dims=4))
        d = int(rng.integers(len(shape)))
        shape[d] = 3
        lo, hi = (0, 5) if real == "Byte" else (-5, 5)
        a = random_values(rng, real, shape, low=lo, high=hi)
        b = random_values(rng, real, shape, low=lo, high=hi)
        r = lib.new(real)
        first3 = shape.index(3)
        dim = -1 if d == first3 and rng.random() < 0.5 else d
        lib.call(f"TH{real}Tensor_cross", None, r, th(lib, random_view(rng, a), real), th(lib, random_view(rng, b), real),
                 C.c_int(dim))
        if real in INTS:
            want = np.cross(a, b, axis=d)
        else:
            want = round_to(real, np.cross(a.astype(np.float64), b.astype(np.float64), axis=d))
        assert_close(real, r.numpy(), want)


def colmajor(x):
    """`x` with each trailing matrix stored column by column (unit stride on the second-last dim)."""
    return np.ascontiguousarray(np.swapaxes(x, -1, -2)).swapaxes(-1, -2)


@pytest.mark.parametrize("real", ALL)
def test_gathers_read_column_major_inputs(lib, rng, real):
    """Inputs whose unit stride is not the output's inner dim, 2K+ elements a slice: the layout
    on which the apply engine packs transposed tiles of pointwise inputs. Gathers, scatters and
    cross read their inputs at offsets along `dim` (not through the tile), so they must walk
    them whole (a seed of test_index_select once hit this: 62 % of the elements wrong)."""
    shape, d = (6, 48, 48), 0
    a = colmajor(vals(rng, real, shape))
    idx = rng.integers(0, shape[d], size=5)
    r = lib.new(real)
    lib.call(f"TH{real}Tensor_indexSelect", None, r, th(lib, a, real), C.c_int(d), long_t(lib, idx))
    assert_same(real, r.numpy(), np.take(a, idx, axis=d))
    gidx = rng.integers(0, shape[d], size=(5, 48, 48))
    lib.call(f"TH{real}Tensor_gather", None, r, th(lib, a, real), C.c_int(d), long_t(lib, gidx))
    assert_same(real, r.numpy(), np.take_along_axis(a, gidx, axis=d))
    # indexCopy / scatter with a column-major source: distinct targets
    src = colmajor(vals(rng, real, (4, 48, 48)))
    pick = rng.permutation(shape[d])[:4]
    dst = vals(rng, real, shape)
    t = th(lib, dst, real)
    lib.call(f"TH{real}Tensor_indexCopy", None, t, C.c_int(d), long_t(lib, pick), th(lib, src, real))
    want = np.array(dst, copy=True)
    want[pick] = src
    assert_same(real, t.numpy(), want)
    sidx = np.argsort(rng.random(shape), axis=d)[:4]
    t = th(lib, dst, real)
    lib.call(f"TH{real}Tensor_scatter", None, t, C.c_int(d), long_t(lib, sidx), th(lib, src, real))
    want = np.array(dst, copy=True)
    np.put_along_axis(want, sidx, src, axis=d)
    assert_same(real, t.numpy(), want)
    if real != "Bool":
        lo, hi = (0, 5) if real == "Byte" else (-5, 5)
        x, y = (colmajor(random_values(rng, real, (3, 48, 48), low=lo, high=hi)) for _ in range(2))
        lib.call(f"TH{real}Tensor_cross", None, r, th(lib, x, real), th(lib, y, real), C.c_int(0))
        if real in INTS:
            want = np.cross(x, y, axis=0)
        else:
            want = round_to(real, np.cross(x.astype(np.float64), y.astype(np.float64), axis=0))
        assert_close(real, r.numpy(), want)


# ------------------------------------------------------------------ constructors, reshape, ranges


@pytest.mark.parametrize("real", ALL)
def test_constructors(lib, rng, real):
    dt = np_real(real)
    for _ in range(N // 4):
        shape = random_shape(rng)
        s = long_storage(lib, shape)
        r = lib.new(real)
        lib.call(f"TH{real}Tensor_zeros", None, r, C.c_void_p(s))
        assert_same(real, r.numpy(), np.zeros(shape, dt))
        lib.call(f"TH{real}Tensor_ones", None, r, C.c_void_p(s))
        assert_same(real, r.numpy(), np.ones(shape, dt))
        free_storage(lib, s)
        like = th(lib, random_view(rng, vals(rng, real, shape)), real)
        r = lib.new(real)
        lib.call(f"TH{real}Tensor_onesLike", None, r, like)
        assert_same(real, r.numpy(), np.ones(shape, dt))
        lib.call(f"TH{real}Tensor_zerosLike", None, r, like)
        assert_same(real, r.numpy(), np.zeros(shape, dt))
        n, m = int(rng.integers(1, 6)), int(rng.integers(-1, 6))
        lib.call(f"TH{real}Tensor_eye", None, r, C.c_int64(n), C.c_int64(m))
        assert_same(real, r.numpy(), np.eye(n, m if m > 0 else n, dtype=dt))
        # diag: vector -> matrix, matrix -> vector
        k = int(rng.integers(-3, 4))
        v = vals(rng, real, (int(rng.integers(1, 5)),))
        lib.call(f"TH{real}Tensor_diag", None, r, th(lib, v, real), C.c_int(k))
        assert_same(real, r.numpy(), np.diag(v, k))
        mat = random_view(rng, vals(rng, real, tuple(int(x) for x in rng.integers(1, 6, size=2))))
        lib.call(f"TH{real}Tensor_diag", None, r, th(lib, mat, real), C.c_int(k))
        want = np.diag(mat, k)
        if want.size:
            assert_same(real, r.numpy(), want)
        else:
            assert r.ndim() == 0
        # reshape (row-major order of a strided source)
        a = random_view(rng, vals(rng, real, shape))
        new = list(rng.permutation(list(a.shape)))
        s = long_storage(lib, new)
        lib.call(f"TH{real}Tensor_reshape", None, r, th(lib, a, real), C.c_void_p(s))
        free_storage(lib, s)
        assert_same(real, r.numpy(), a.reshape(new))


@pytest.mark.parametrize("real", ALL)
def test_arange_range(lib, rng, real):
    acc = ACC.get(real, C.c_int64)
    for _ in range(N):
        if real in FLOATS:
            step = float(rng.choice([0.25, 0.5, 1.0, 2.0, -0.5, -1.0]))
            xmin = float(rng.integers(-8, 8)) / 2
            n = int(rng.integers(1, 20))
            xmax = xmin + step * (n - 1) + (step * float(rng.choice([0.0, 0.5])))
        else:
            step = int(rng.choice([1, 2, 3, -1, -2]))
            xmin = int(rng.integers(-10, 10)) if real not in ("Byte",) else int(rng.integers(0, 6))
            n = int(rng.integers(1, 20))
            xmax = xmin + step * (n - 1) + int(rng.integers(0, abs(step))) * (1 if step > 0 else -1)
        r = lib.new(real)
        lib.call(f"TH{real}Tensor_range", None, r, acc(xmin), acc(xmax), acc(step))
        cnt = int(np.floor((xmax - xmin) / step)) + 1
        want = xmin + step * np.arange(cnt)
        assert_close(real, r.numpy(), round_to(real, want) if real != "Bool" else want != 0)
        lib.call(f"TH{real}Tensor_arange", None, r, acc(xmin), acc(xmax), acc(step))
        want = np.arange(xmin, xmax, step, dtype=np.float64)
        if want.size:
            assert_close(real, r.numpy(), round_to(real, want) if real != "Bool" else want != 0)
        else:
            assert r.ndim() == 0
    # TH's rule: the output keeps its shape when it has the right element count
    t = th(lib, np.zeros((2, 2), np_real(real)), real)
    lib.call(f"TH{real}Tensor_range", None, t, acc(0), acc(3), acc(1))
    assert_same(real, t.numpy(), np.arange(4).reshape(2, 2).astype(np_real(real)))
    with pytest.raises(THError, match="sign of step"):
        lib.call(f"TH{real}Tensor_range", None, t, acc(0), acc(3), acc(-1))
    with pytest.raises(THError, match="nonzero"):
        lib.call(f"TH{real}Tensor_arange", None, t, acc(0), acc(3), acc(0))


@pytest.mark.parametrize("real", FLOATS)
def test_linspace_logspace(lib, rng, real):
    for _ in range(N):
        a, b = (float(x) for x in rng.uniform(-3, 3, size=2))
        a, b = float(round_to(real, a)), float(round_to(real, b))
        n = int(rng.integers(2, 40))
        r = lib.new(real)
        lib.call(f"TH{real}Tensor_linspace", None, r, lib.scalar(real, a), lib.scalar(real, b), C.c_int64(n))
        assert_close(real, r.numpy(), round_to(real, np.linspace(a, b, n)))
        lib.call(f"TH{real}Tensor_logspace", None, r, lib.scalar(real, a), lib.scalar(real, b), C.c_int64(n))
        assert_close(real, r.numpy(), round_to(real, np.logspace(a, b, n)), tol=TOL[real] * 4)
    r = lib.new(real)
    lib.call(f"TH{real}Tensor_linspace", None, r, lib.scalar(real, 2), lib.scalar(real, 2), C.c_int64(1))
    assert_close(real, r.numpy(), [2.0])
    with pytest.raises(THError, match="number of points"):
        lib.call(f"TH{real}Tensor_linspace", None, r, lib.scalar(real, 0), lib.scalar(real, 1), C.c_int64(1))


def test_float_only_and_numeric_only_symbols(lib):
    for real in INTS + ["Bool"]:
        with pytest.raises(AttributeError):
            lib.dll[f"TH{real}Tensor_linspace"]
    with pytest.raises(AttributeError):
        lib.dll["THBoolTensor_indexAdd"]
    with pytest.raises(AttributeError):
        lib.dll["THBoolTensor_cross"]
    for real in ALL:
        lib.dll[f"TH{real}Tensor_maskedSelectBool"]
        lib.dll[f"TH{real}Tensor_catArray"]


def test_big_tensors_parallel_paths(lib, rng):
    """Above the parallel grain (32K elements): both index engines split work across threads."""
    a = rng.standard_normal((3000, 40)).astype(np.float32)
    idx = rng.integers(0, 3000, size=2500)
    r = lib.new("Float")
    lib.call("THFloatTensor_indexSelect", None, r, th(lib, a, "Float"), C.c_int(0), long_t(lib, idx))
    assert_same("Float", r.numpy(), a[idx])
    lib.call("THFloatTensor_indexSelect", None, r, th(lib, a.T, "Float"), C.c_int(1), long_t(lib, idx))
    assert_same("Float", r.numpy(), a.T[:, idx])
    g = rng.integers(0, 40, size=(3000, 40))
    lib.call("THFloatTensor_gather", None, r, th(lib, a, "Float"), C.c_int(1), long_t(lib, g))
    assert_same("Float", r.numpy(), np.take_along_axis(a, g, axis=1))
    # scatterAdd / indexAdd with many repeats: integer sums are exact whatever the split
    b = rng.integers(-50, 50, size=(400, 300)).astype(np.int64)
    si = rng.integers(0, 300, size=(400, 300))
    t = th(lib, np.zeros((400, 300), np.int64), "Long")
    lib.call("THLongTensor_scatterAdd", None, t, C.c_int(1), long_t(lib, si), th(lib, b, "Long"))
    want = np.zeros((400, 300), np.int64)
    np.add.at(want, full_index(si, 1, 2), b)
    assert_same("Long", t.numpy(), want)
    ii = rng.integers(0, 50, size=400)
    t = th(lib, np.zeros((50, 300), np.int64), "Long")
    lib.call("THLongTensor_indexAdd", None, t, C.c_int(0), long_t(lib, ii), th(lib, b, "Long"))
    want = np.zeros((50, 300), np.int64)
    np.add.at(want, ii, b)
    assert_same("Long", t.numpy(), want)
    m = rng.integers(0, 2, size=(3000, 40)).astype(np.uint8)
    t = th(lib, a, "Float")
    lib.call("THFloatTensor_maskedFill", None, t, th(lib, m, "Byte"), C.c_float(-7))
    assert_same("Float", t.numpy(), np.where(m.astype(bool), np.float32(-7), a))
    rt, ri = lib.new("Float"), lib.new("Long")
    lib.call("THFloatTensor_topk", None, rt, ri, th(lib, a.T, "Float"), C.c_int64(5), C.c_int(1), C.c_int(1), C.c_int(1))
    order = np.argsort(-a.T, axis=1, kind="stable")[:, :5]
    assert_same("Long", ri.numpy(), order)
