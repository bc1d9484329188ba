"""Products, comparisons, where, clamp, cat/stack, sort/topk, reductions with dim/keepdim,
in-place operators and the function forms, each against numpy."""

import numpy as np
import pytest

import th
from _data import random_array

rng = np.random.default_rng(7)
FLOAT = ["float32", "float64"]
NUMERIC = ["uint8", "int8", "int16", "int32", "int64", "float32", "float64", "float16"]


def rand(shape, dtype):
    return random_array(rng, shape, dtype, high=10, scale=4)


def tol(dtype):
    return dict(rtol=2e-2, atol=2e-2) if dtype == "float16" else dict(rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", NUMERIC)
def test_matmul_forms(dtype):
    a, b = rand((3, 4), dtype), rand((4, 5), dtype)
    v, w = rand((4,), dtype), rand((3,), dtype)
    ta, tb, tv, tw = th.tensor(a), th.tensor(b), th.tensor(v), th.tensor(w)
    wide = a.astype(np.float64) if dtype.startswith("float") else a.astype(np.int64)
    np.testing.assert_allclose((ta @ tb).numpy(), (a @ b).astype(dtype), **tol(dtype))
    np.testing.assert_allclose(ta.mm(tb).numpy(), (a @ b).astype(dtype), **tol(dtype))
    np.testing.assert_allclose((ta @ tv).numpy(), (a @ v).astype(dtype), **tol(dtype))
    np.testing.assert_allclose(th.matmul(tw, ta).numpy(), (w @ a).astype(dtype), **tol(dtype))
    assert tv.dot(tv) == pytest.approx(float(wide[0] @ wide[0]) if False else float(v.astype(np.float64) @ v), rel=2e-2)
    assert (tv @ tv) == pytest.approx(float(v.astype(np.float64) @ v), rel=2e-2)
    np.testing.assert_allclose(tv.outer(tw).numpy(), np.outer(v, w).astype(dtype), **tol(dtype))


@pytest.mark.parametrize("dtype", FLOAT)
def test_matmul_batched_and_broadcast(dtype):
    a, b = rand((2, 3, 4), dtype), rand((2, 4, 5), dtype)
    np.testing.assert_allclose(th.tensor(a).bmm(th.tensor(b)).numpy(), a @ b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose((th.tensor(a) @ th.tensor(b)).numpy(), a @ b, rtol=1e-5, atol=1e-5)
    c, d = rand((3, 1, 2, 4), dtype), rand((5, 4, 3), dtype)
    np.testing.assert_allclose((th.tensor(c) @ th.tensor(d)).numpy(), c @ d, rtol=1e-5, atol=1e-5)
    e = rand((4,), dtype)
    np.testing.assert_allclose((th.tensor(a) @ th.tensor(e)).numpy(), a @ e, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose((th.tensor(e) @ th.tensor(b)).numpy(), e @ b, rtol=1e-5, atol=1e-5)
    t = th.tensor(rand((3, 4), dtype))
    np.testing.assert_allclose((t @ t.t()).numpy(), t.numpy() @ t.numpy().T, rtol=1e-5)  # the example
    with pytest.raises(th.THValueError):
        th.tensor(a) @ th.tensor(a)


@pytest.mark.parametrize("dtype", NUMERIC + ["bool"])
def test_comparisons_give_bool(dtype):
    a, b = rand((3, 4), dtype), rand((3, 4), dtype)
    ta, tb = th.tensor(a), th.tensor(b)
    for op in ["__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"]:
        r = getattr(ta, op)(tb)
        assert r.dtype is th.bool_
        assert np.array_equal(r.numpy(), getattr(a, op)(b))
        s = getattr(ta, op)(1)
        assert np.array_equal(s.numpy(), getattr(a, op)(a.dtype.type(1)))
    assert np.array_equal((ta < tb[0]).numpy(), a < b[0])  # broadcasting
    assert ta.equal(ta.clone()) and th.equal(ta, th.tensor(a))


def test_logical_operators():
    a, b = rand((5, 6), "bool"), rand((5, 6), "bool")
    ta, tb = th.tensor(a), th.tensor(b)
    assert np.array_equal((ta & tb).numpy(), a & b)
    assert np.array_equal((ta | tb).numpy(), a | b)
    assert np.array_equal((ta ^ tb).numpy(), a ^ b)
    assert np.array_equal((~ta).numpy(), ~a)
    x = rand((5, 6), "float32")
    tx = th.tensor(x)
    assert np.array_equal(((tx > 0) & (tx < 1)).numpy(), (x > 0) & (x < 1))
    assert ta.any() == a.any() and ta.all() == a.all() and th.ones(3, dtype="bool").all()


@pytest.mark.parametrize("dtype", NUMERIC)
def test_where_and_clamp(dtype):
    a, b = rand((4, 5), dtype), rand((4, 5), dtype)
    ta, tb = th.tensor(a), th.tensor(b)
    c = a > b
    tc = ta > tb
    np.testing.assert_array_equal(th.where(tc, ta, tb).numpy(), np.where(c, a, b))
    np.testing.assert_array_equal(th.where(tc, ta, 0).numpy(), np.where(c, a, a.dtype.type(0)))
    np.testing.assert_array_equal(th.where(tc, 3, tb).numpy(), np.where(c, b.dtype.type(3), b))
    np.testing.assert_array_equal(th.where(tc[0], ta, tb).numpy(), np.where(c[0], a, b))  # broadcast
    for got, want in zip(th.where(tc), np.where(c)):
        np.testing.assert_array_equal(got.numpy(), want)
    lo, hi = (2, 6) if dtype.startswith(("int", "uint")) else (-0.5, 0.5)
    np.testing.assert_array_equal(ta.clamp(lo, hi).numpy(), np.clip(a, a.dtype.type(lo), a.dtype.type(hi)))
    np.testing.assert_array_equal(ta.clamp(min=lo).numpy(), np.maximum(a, a.dtype.type(lo)))
    np.testing.assert_array_equal(th.clamp(ta, max=hi).numpy(), np.minimum(a, a.dtype.type(hi)))
    np.testing.assert_array_equal(ta.clamp(tb, None).numpy(), np.maximum(a, b))
    t = ta.clone()
    t.clamp_(lo, hi)
    np.testing.assert_array_equal(t.numpy(), np.clip(a, a.dtype.type(lo), a.dtype.type(hi)))


@pytest.mark.parametrize("dtype", NUMERIC + ["bool"])
def test_cat_and_stack(dtype):
    a, b, c = rand((2, 3), dtype), rand((4, 3), dtype), rand((2, 3), dtype)
    ta, tb, tc = th.tensor(a), th.tensor(b), th.tensor(c)
    np.testing.assert_array_equal(th.cat([ta, tb]).numpy(), np.concatenate([a, b]))
    np.testing.assert_array_equal(th.cat([ta, tc], dim=1).numpy(), np.concatenate([a, c], 1))
    np.testing.assert_array_equal(th.cat([ta, tc], dim=-1).numpy(), np.concatenate([a, c], -1))
    for d in (0, 1, 2, -1):
        np.testing.assert_array_equal(th.stack([ta, tc], d).numpy(), np.stack([a, c], d))
    with pytest.raises(th.THError):
        th.cat([ta, th.tensor(rand((2, 4), dtype))])


@pytest.mark.parametrize("dtype", NUMERIC)
def test_sort_and_topk(dtype):
    a = rand((4, 9), dtype)
    ta = th.tensor(a)
    v, i = ta.sort()
    np.testing.assert_array_equal(v.numpy(), np.sort(a, axis=-1))
    np.testing.assert_array_equal(i.numpy(), np.argsort(a, axis=-1, kind="stable"))
    v, i = ta.sort(0, descending=True)
    np.testing.assert_array_equal(v.numpy(), -np.sort(-a.astype(np.float64), axis=0))
    np.testing.assert_array_equal(ta.argsort(1).numpy(), np.argsort(a, 1, kind="stable"))
    v, i = ta.topk(3)
    np.testing.assert_array_equal(v.numpy(), -np.sort(-a.astype(np.float64), axis=-1)[:, :3])
    np.testing.assert_array_equal(np.take_along_axis(a, i.numpy(), -1), v.numpy())
    v, i = ta.topk(2, dim=0, largest=False)
    np.testing.assert_array_equal(v.numpy(), np.sort(a, axis=0)[:2])


@pytest.mark.parametrize("dtype", FLOAT + ["int32", "int64"])
def test_reductions_with_dim_and_keepdim(dtype):
    a = rand((3, 4, 5), dtype)
    ta = th.tensor(a)
    for dim in (0, 1, 2, -1):
        for keepdim in (False, True):
            np.testing.assert_allclose(ta.sum(dim, keepdim).numpy(), a.sum(dim, keepdims=keepdim), rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(ta.prod(dim, keepdim=keepdim).numpy(), a.prod(dim, keepdims=keepdim),
                                       rtol=1e-4)
            v, i = ta.max(dim, keepdim)
            np.testing.assert_array_equal(v.numpy(), a.max(dim, keepdims=keepdim))
            np.testing.assert_array_equal(i.numpy(), a.argmax(dim, keepdims=keepdim))
            v, i = ta.min(dim, keepdim)
            np.testing.assert_array_equal(v.numpy(), a.min(dim, keepdims=keepdim))
            np.testing.assert_array_equal(ta.argmin(dim, keepdim).numpy(), a.argmin(dim, keepdims=keepdim))
            if dtype in FLOAT:
                np.testing.assert_allclose(ta.mean(dim, keepdim).numpy(), a.mean(dim, keepdims=keepdim), rtol=1e-5, atol=1e-5)
                np.testing.assert_allclose(ta.std(dim, keepdim=keepdim).numpy(),
                                           a.std(dim, ddof=1, keepdims=keepdim), rtol=1e-4)
                np.testing.assert_allclose(ta.var(dim, unbiased=False, keepdim=keepdim).numpy(),
                                           a.var(dim, keepdims=keepdim), rtol=1e-4)
                np.testing.assert_allclose(ta.norm(2, dim, keepdim).numpy(),
                                           np.linalg.norm(a, axis=dim, keepdims=keepdim), rtol=1e-4)
        np.testing.assert_allclose(ta.cumsum(dim).numpy(), a.cumsum(dim), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(th.cumprod(ta, dim).numpy(), a.cumprod(dim), rtol=1e-4)
    assert ta.argmax() == a.argmax() and th.argmin(ta) == a.argmin()
    assert ta.sum() == pytest.approx(float(a.astype(np.float64).sum()), rel=1e-5)
    assert th.sum(ta, 1).shape == (3, 5)
    if dtype in FLOAT:
        assert ta.norm() == pytest.approx(float(np.linalg.norm(a.ravel())), rel=1e-5)
        assert ta.median() == float(np.sort(a.ravel())[(a.size - 1) // 2])


@pytest.mark.parametrize("dtype", NUMERIC)
def test_inplace_operators(dtype):
    a, b = rand((3, 4), dtype), rand((3, 4), dtype) + 1
    ta, tb = th.tensor(a), th.tensor(b)
    t = ta.clone()
    ptr = t.data_ptr()
    t += tb
    t -= 1
    t *= tb
    assert t.data_ptr() == ptr  # the same memory
    want = (a + b - a.dtype.type(1)) * b
    np.testing.assert_allclose(t.numpy(), want, **tol(dtype))
    u = ta.clone()
    u.add_(2).mul_(tb[0])
    np.testing.assert_allclose(u.numpy(), (a + a.dtype.type(2)) * b[0], **tol(dtype))
    if dtype.startswith("float"):
        u /= tb
        np.testing.assert_allclose(u.numpy(), (a + a.dtype.type(2)) * b[0] / b, **tol(dtype))
        np.testing.assert_allclose((ta ** 2).numpy(), a ** 2, **tol(dtype))
    else:
        np.testing.assert_array_equal((ta % 3).numpy(), a % a.dtype.type(3))
    np.testing.assert_array_equal(th.maximum(ta, tb).numpy(), np.maximum(a, b))


def test_errors_are_exceptions_with_the_library_message():
    with pytest.raises(th.THError, match="addmm|size|match"):
        th.zeros(2, 3)._gemm("addmm", (2, 2), th.zeros(2, 3), th.zeros(2, 3))
    with pytest.raises(TypeError, match="not defined for bool"):
        th.ones(2, 2, dtype="bool") @ th.ones(2, 2, dtype="bool")
    with pytest.raises(th.THError, match="THFloatTensor_topk"):
        th.zeros(3).topk(5)


def test_function_forms_have_the_method_docs():
    assert th.matmul.__doc__ == th.Tensor.matmul.__doc__
    assert "TH" in th.Tensor.sum.__doc__ and "sumall" in th.Tensor.sum.__doc__


def test_truth_and_conversions():
    assert bool(th.tensor([1.0])) and not bool(th.tensor([0]))
    with pytest.raises(ValueError, match="ambiguous"):
        bool(th.tensor([1.0, 2.0]))
    assert float(th.tensor([2.5])) == 2.5 and int(th.tensor([3])) == 3
    assert [10, 20, 30][th.tensor([2])] == 30
