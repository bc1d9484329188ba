"""numpy differential tests for the pointwise math: random dtypes, shapes up to 5-D,
transposed/strided views, broadcasting, and in-place aliasing."""

import ctypes as C

import numpy as np
import pytest
from cases import broadcast_partner, random_shape, random_values, random_view, round_to
from thlib import DTYPES, FLOATS, INTS, NUMERIC, THError

N = 60  # random cases per test function (several test functions per family)

TOL = {"Float": 2e-6, "Double": 1e-12, "Half": 2e-3, "BFloat16": 1.6e-2}


def assert_close(real, got, want, rtol=None):
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    if real in TOL:
        tol = TOL[real] if rtol is None else rtol
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want.astype(got.dtype))


def compute(real, f, *xs):
    """Reference: f on float32 (or the int type) values, rounded to `real`."""
    if real in ("Half", "BFloat16"):
        xs = [np.asarray(x, dtype=np.float32) for x in xs]
    with np.errstate(all="ignore"):
        return round_to(real, f(*xs))


def th(lib, a, real):
    return lib.from_numpy(a, real)


@pytest.mark.parametrize("real", NUMERIC)
def test_binary_broadcast(lib, rng, real):
    ops = {
        "cmul": lambda a, b: a * b,
        "cmax": np.maximum,
        "cmin": np.minimum,
    }
    if real in FLOATS:
        # remainder: C's double floor makes `b * floor(a / b)` and the difference double (TH)
        f64 = lambda x: np.asarray(x, dtype=np.float64)  # noqa: E731
        ops.update(cdiv=lambda a, b: a / b, cfmod=np.fmod, cremainder=lambda a, b: f64(a) - f64(b) * f64(np.floor(a / b)))
    else:
        ops.update(
            cdiv=lambda a, b: np.trunc(a.astype(np.float64) / b).astype(a.dtype),
            cfmod=np.fmod,
            cremainder=np.remainder,
            cbitand=np.bitwise_and,
            cbitor=np.bitwise_or,
            cbitxor=np.bitwise_xor,
        )
    for _ in range(N):
        name = list(ops)[int(rng.integers(len(ops)))]
        shape = random_shape(rng)
        bshape = broadcast_partner(rng, shape)
        a = random_view(rng, random_values(rng, real, shape, low=-100, high=100))
        b = random_view(rng, random_values(rng, real, bshape, low=-100, high=100, nonzero=True))
        r = lib.new(real)
        lib.call(f"TH{real}Tensor_{name}", None, r, th(lib, a, real), th(lib, b, real))
        assert_close(real, r.numpy(), compute(real, ops[name], a, b))


@pytest.mark.parametrize("real", NUMERIC)
def test_cadd_csub_scalar_value(lib, rng, real):
    for _ in range(N):
        shape = random_shape(rng)
        a = random_view(rng, random_values(rng, real, shape, low=-50, high=50))
        b = random_view(rng, random_values(rng, real, broadcast_partner(rng, shape), low=-50, high=50))
        v = random_values(rng, real, (), low=-3, high=3)
        v = v.item() if real != "BFloat16" else float(v)
        npv = np.asarray(v, dtype=np.float32 if real in ("Half", "BFloat16") else a.dtype)
        for name, f in (("cadd", lambda x, y: x + round_to(real, npv * y)), ("csub", lambda x, y: x - round_to(real, npv * y))):
            r = lib.new(real)
            lib.call(f"TH{real}Tensor_{name}", None, r, th(lib, a, real), lib.scalar(real, v), th(lib, b, real))
            assert_close(real, r.numpy(), compute(real, f, a, b))


@pytest.mark.parametrize("real", NUMERIC)
def test_scalar_ops(lib, rng, real):
    ops = {
        "add": lambda a, v: a + v,
        "sub": lambda a, v: a - v,
        "mul": lambda a, v: a * v,
        "cmaxValue": np.maximum,
        "cminValue": np.minimum,
    }
    if real in FLOATS:
        ops.update(div=lambda a, v: a / v, fmod=np.fmod)
    else:
        ops.update(
            div=lambda a, v: np.trunc(a.astype(np.float64) / v).astype(a.dtype),
            fmod=np.fmod,
            remainder=np.remainder,
            bitand=np.bitwise_and,
            bitxor=np.bitwise_xor,
        )
    for _ in range(N):
        name = list(ops)[int(rng.integers(len(ops)))]
        shape = random_shape(rng)
        a = random_view(rng, random_values(rng, real, shape, low=-100, high=100))
        v = random_values(rng, real, (), low=-9, high=9, nonzero=True)
        v = float(v) if real in FLOATS else int(v)
        npv = np.asarray(v, dtype=np.float32 if real in ("Half", "BFloat16") else a.dtype)
        r = lib.new(real)
        lib.call(f"TH{real}Tensor_{name}", None, r, th(lib, a, real), lib.scalar(real, v))
        assert_close(real, r.numpy(), compute(real, ops[name], a, npv))


@pytest.mark.parametrize("real", INTS)
def test_shifts_are_logical(lib, rng, real):
    npdt = DTYPES[real][0]
    udt = np.dtype(npdt).str.replace("i", "u")
    bits = np.dtype(npdt).itemsize * 8
    for _ in range(N // 2):
        a = random_view(rng, random_values(rng, real, random_shape(rng)))
        s = int(rng.integers(0, bits))
        for name, f in (("lshift", np.left_shift), ("rshift", np.right_shift)):
            r = lib.new(real)
            lib.call(f"TH{real}Tensor_{name}", None, r, th(lib, a, real), lib.scalar(real, s))
            want = f(a.astype(udt), np.asarray(s, dtype=udt)).astype(udt).view(npdt)
            assert_close(real, r.numpy(), want)


@pytest.mark.parametrize("real", FLOATS)
def test_float_unary(lib, rng, real):
    rnd = lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5)  # C round(): halves away from zero
    ops = {
        "exp": (np.exp, -5, 5),
        "log": (np.log, 0.01, 50),
        "log1p": (np.log1p, -0.9, 50),
        "sqrt": (np.sqrt, 0, 100),
        "rsqrt": (lambda x: 1 / np.sqrt(x), 0.01, 100),
        "sin": (np.sin, -10, 10),
        "cos": (np.cos, -10, 10),
        "tan": (np.tan, -1.4, 1.4),
        "asin": (np.arcsin, -1, 1),
        "acos": (np.arccos, -1, 1),
        "atan": (np.arctan, -10, 10),
        "sinh": (np.sinh, -5, 5),
        "cosh": (np.cosh, -5, 5),
        "tanh": (np.tanh, -5, 5),
        "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), -10, 10),
        "ceil": (np.ceil, -10, 10),
        "floor": (np.floor, -10, 10),
        "round": (rnd, -10, 10),
        "trunc": (np.trunc, -10, 10),
        "frac": (lambda x: x - np.trunc(x), -10, 10),
        "abs": (np.abs, -10, 10),
        "neg": (np.negative, -10, 10),
        "sign": (np.sign, -10, 10),
        "cinv": (lambda x: 1 / x, 0.5, 10),
    }
    for name, (f, lo, hi) in ops.items():
        for _ in range(4):
            a = random_view(rng, random_values(rng, real, random_shape(rng), low=lo, high=hi))
            r = lib.new(real)
            lib.call(f"TH{real}Tensor_{name}", None, r, th(lib, a, real))
            tol = TOL[real] * (4 if real in ("Float",) else 1)
            ref = f(np.asarray(a, dtype=np.float64))
            assert_close(real, r.numpy(), round_to(real, ref), rtol=tol)


@pytest.mark.parametrize("real", ["Float", "Double"])
def test_lgamma_atan2_lerp_pow(lib, rng, real):
    import math

    for _ in range(N // 4):
        shape = random_shape(rng)
        a = random_values(rng, real, shape, low=0.1, high=10)
        b = random_values(rng, real, shape, low=-3, high=3, nonzero=True)
        r = lib.new(real)
        lib.call(f"TH{real}Tensor_lgamma", None, r, th(lib, a, real))
        assert_close(real, r.numpy(), np.vectorize(math.lgamma)(a.astype(np.float64)), rtol=1e-5)
        lib.call(f"TH{real}Tensor_atan2", None, r, th(lib, a, real), th(lib, b, real))
        assert_close(real, r.numpy(), np.arctan2(a, b))
        w = float(rng.uniform(-1, 2))
        lib.call(f"TH{real}Tensor_lerp", None, r, th(lib, a, real), th(lib, b, real), lib.scalar(real, w))
        assert_close(real, r.numpy(), a + np.asarray(w, a.dtype) * (b - a), rtol=1e-5)
        for p in (2.0, 0.5, -1.0, 1.7):
            lib.call(f"TH{real}Tensor_pow", None, r, th(lib, a, real), lib.scalar(real, p))
            assert_close(real, r.numpy(), np.power(a.astype(np.float64), p), rtol=1e-5)
        lib.call(f"TH{real}Tensor_tpow", None, r, lib.scalar(real, 1.5), th(lib, b, real))
        assert_close(real, r.numpy(), np.power(1.5, b.astype(np.float64)), rtol=1e-5)


@pytest.mark.parametrize("real", NUMERIC + ["Bool"])
def test_comparisons(lib, rng, real):
    ops = {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal, "ne": np.not_equal, "eq": np.equal}
    for _ in range(N // 2):
        name = list(ops)[int(rng.integers(len(ops)))]
        shape = random_shape(rng)
        a = random_view(rng, random_values(rng, real, shape, low=-3, high=3))
        b = random_view(rng, random_values(rng, real, broadcast_partner(rng, shape), low=-3, high=3))
        v = random_values(rng, real, (), low=-3, high=3)
        v = bool(v) if real == "Bool" else (float(v) if real in FLOATS else int(v))
        rb = lib.new("Byte")
        lib.call(f"TH{real}Tensor_{name}Tensor", None, rb, th(lib, a, real), th(lib, b, real))
        assert_close("Byte", rb.numpy(), ops[name](a, b).astype(np.uint8))
        lib.call(f"TH{real}Tensor_{name}Value", None, rb, th(lib, a, real), lib.scalar(real, v))
        assert_close("Byte", rb.numpy(), ops[name](a, v).astype(np.uint8))
        rt = lib.new(real)
        lib.call(f"TH{real}Tensor_{name}ValueT", None, rt, th(lib, a, real), lib.scalar(real, v))
        assert_close(real, rt.numpy(), round_to(real, ops[name](a, v).astype(np.float32)))


@pytest.mark.parametrize("real", NUMERIC)
def test_addcmul_addcdiv_clamp(lib, rng, real):
    for _ in range(N // 2):
        shape = random_shape(rng)
        t = random_view(rng, random_values(rng, real, shape, low=-20, high=20))
        s1 = random_values(rng, real, broadcast_partner(rng, shape), low=-5, high=5)
        s2 = random_values(rng, real, broadcast_partner(rng, shape), low=-5, high=5, nonzero=True)
        v = 2
        r = lib.new(real)
        lib.call(f"TH{real}Tensor_addcmul", None, r, th(lib, t, real), lib.scalar(real, v), th(lib, s1, real), th(lib, s2, real))
        assert_close(real, r.numpy(), compute(real, lambda a, b, c: a + round_to(real, round_to(real, v * b) * c), t, s1, s2))
        if real in FLOATS:
            lib.call(f"TH{real}Tensor_addcdiv", None, r, th(lib, t, real), lib.scalar(real, v), th(lib, s1, real), th(lib, s2, real))
            assert_close(real, r.numpy(), compute(real, lambda a, b, c: a + round_to(real, round_to(real, v * b) / c), t, s1, s2))
        lo, hi = (0 if real == "Byte" else -3), 7
        lib.call(f"TH{real}Tensor_clamp", None, r, th(lib, t, real), lib.scalar(real, lo), lib.scalar(real, hi))
        assert_close(real, r.numpy(), np.clip(t, lo, hi).astype(t.dtype))


@pytest.mark.parametrize("real", ["Float", "Int", "Half"])
def test_in_place_and_overlap(lib, rng, real):
    for _ in range(N // 3):
        shape = random_shape(rng, max_dims=3)
        a = random_values(rng, real, shape, low=-9, high=9)
        t = th(lib, a, real)
        lib.call(f"TH{real}Tensor_add", None, t, t, lib.scalar(real, 3))  # r == t
        assert_close(real, t.numpy(), compute(real, lambda x: x + 3, a))
    # r a transposed view of t's own storage: computed through a temporary
    m = random_values(rng, real, (5, 5), low=-9, high=9)
    t = th(lib, m, real)
    tt = lib.new(real)
    lib.call(f"TH{real}Tensor_set", None, tt, t)
    lib.call(f"TH{real}Tensor_transpose", None, tt, None, C.c_int(0), C.c_int(1))
    lib.call(f"TH{real}Tensor_cadd", None, tt, t, lib.scalar(real, 1), t)
    assert_close(real, t.numpy(), compute(real, lambda x: (x + x).T, m))


def test_errors_are_raised(lib):
    a = lib.from_numpy(np.arange(6, dtype=np.int32).reshape(2, 3), "Int")
    b = lib.from_numpy(np.zeros((2, 3), dtype=np.int32), "Int")
    r = lib.new("Int")
    with pytest.raises(THError, match="division by zero"):
        lib.call("THIntTensor_cdiv", None, r, a, b)
    with pytest.raises(THError, match="division by zero"):
        lib.call("THIntTensor_div", None, r, a, C.c_int32(0))
    f = lib.from_numpy(np.ones(3, dtype=np.float32), "Float")
    with pytest.raises(THError, match="integer types"):
        lib.call("THFloatTensor_bitand", None, lib.new("Float"), f, C.c_float(1))
    c = lib.from_numpy(np.ones((4,), dtype=np.int32), "Int")
    with pytest.raises(THError, match="broadcast"):
        lib.call("THIntTensor_cmul", None, r, a, c)


def test_fill_zero_all_dtypes(lib, rng):
    for real in NUMERIC + ["Bool"]:
        a = random_view(rng, random_values(rng, real, (3, 4)))
        t = th(lib, a, real)
        lib.call(f"TH{real}Tensor_fill", None, t, lib.scalar(real, 1))
        assert_close(real, t.numpy(), np.ones((3, 4), dtype=np.float32 if real == "BFloat16" else DTYPES[real][0]))
        lib.call(f"TH{real}Tensor_zero", None, t)
        assert_close(real, t.numpy(), np.zeros((3, 4), dtype=np.float32 if real == "BFloat16" else DTYPES[real][0]))
