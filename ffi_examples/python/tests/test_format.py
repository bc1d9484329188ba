"""Printing: th.array2string (and the body of repr) against numpy's np.array2string with its
defaults, on random and special arrays of float, int and bool dtypes, small and summarised."""

import numpy as np
import pytest

import th

pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered")
rng = np.random.default_rng(20261125)
FLOATS = ["float32", "float64", "float16"]
SHAPES = [(1,), (5,), (3, 4), (2, 3, 4), (2, 2, 2, 3), (40,), (7, 11), (1001,), (40, 40), (3, 20, 20), (2, 3, 4, 50)]


def special(dtype):
    vals = [0.0, -0.0, 1.0, -1.5, np.nan, np.inf, -np.inf, 1e-9, 123456789.0, 0.1, 1e30, 2.5e-5, 1000.25]
    info = np.finfo(dtype)
    vals += [float(info.max), float(info.tiny), float(info.eps)]
    return np.array(vals, dtype=dtype)


def float_arrays(dtype):
    out = []
    for shape in SHAPES:
        out.append(rng.standard_normal(shape).astype(dtype))
        out.append((rng.random(shape) * 10).round(1).astype(dtype))  # few decimals: trailing-dot rules
        out.append(rng.integers(-5, 5, shape).astype(dtype))  # integral floats: "1." style
        out.append((rng.standard_normal(shape) * 1e6).astype(dtype))
        out.append((rng.standard_normal(shape) * 1e-6).astype(dtype))
    out.append(special(dtype))
    s = special(dtype)
    out.append(s[np.isfinite(s)])
    out.append(np.array([np.nan, 1.0], dtype=dtype))
    out.append(np.array([-np.inf, 0.5], dtype=dtype))
    out.append(np.array([np.nan, np.nan], dtype=dtype))
    out.append(np.array([1e-5, 1.0], dtype=dtype))
    out.append(np.array([0.0, 0.0], dtype=dtype))
    out.append(np.array([1.0, 1000.0, 1000.5], dtype=dtype))
    out.append(np.array([1.0, 1001.0], dtype=dtype))
    out.append(np.array([99999999.0, 1.0], dtype=dtype))
    out.append(np.array([0.123456789, 12.3456789], dtype=dtype))
    out.append(np.array([1.100000001, -2.0000000049], dtype=dtype))
    return out


def check(a):
    t = th.tensor(a)
    want = np.array2string(a)
    assert th.array2string(t) == want, f"\nnumpy:\n{want}\nth:\n{th.array2string(t)}"
    name = a.dtype.name
    want_repr = "tensor(" + np.array2string(a, separator=", ", prefix="tensor(", suffix=")")
    got = repr(t)
    assert got.startswith(want_repr), f"\nnumpy:\n{want_repr}\nth:\n{got}"
    assert got.endswith(f"dtype={name})")


@pytest.mark.parametrize("dtype", FLOATS)
def test_floats_match_numpy(dtype):
    for a in float_arrays(dtype):
        check(a)


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64"])
def test_ints_match_numpy(dtype):
    info = np.iinfo(dtype)
    for shape in SHAPES:
        check(rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True))
        check(rng.integers(0, 10, shape).astype(dtype))
    check(np.array([info.min, info.max, 0], dtype=dtype))


def test_bools_match_numpy():
    for shape in SHAPES:
        check(rng.random(shape) < 0.5)
    check(np.array([True]))
    check(np.array([False, False]))


def test_empty_and_wrapping():
    assert repr(th.zeros(0)) == "tensor([], dtype=float32)"
    assert th.array2string(th.tensor([])) == "[]"
    # the example: floats keep their decimals
    assert repr(th.tensor([[1.0, 2.0, 3.0]])) == "tensor([[1., 2., 3.]], dtype=float32)"
    assert repr(th.tensor([1.5, 2.25])) == "tensor([1.5 , 2.25], dtype=float32)"
    assert str(th.tensor([True, False])) == "tensor([ True, False], dtype=bool)"
    # a long last line puts the dtype on a line of its own
    r = repr(th.arange(25, dtype="float64") * 1.5)
    assert r.endswith("\n       dtype=float64)") or len(r.splitlines()[-1]) <= 75


def test_bfloat16_prints_its_own_shortest_digits():
    t = th.tensor([0.1, 1.0, 3.140625], dtype="bfloat16")
    assert th.array2string(t) == "[0.1  1.   3.14]"
    assert "dtype=bfloat16" in repr(t)


@pytest.mark.parametrize("dtype", FLOATS)
def test_many_random_scales(dtype):
    for _ in range(150):
        shape = tuple(int(x) for x in rng.integers(1, 7, size=rng.integers(1, 4)))
        scale = 10.0 ** rng.integers(-12, 12)
        a = (rng.standard_normal(shape) * scale).astype(dtype)
        if rng.random() < 0.3:
            a = a.round(int(rng.integers(0, 4)))
        if rng.random() < 0.2:
            a.flat[0] = rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0])
        check(a)
