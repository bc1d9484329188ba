"""numpy differential tests for the apply engine's fast paths: the tiled walk (transposed
operands), streamed (non-temporal) outputs of large ops, the contiguous fast path with aliasing,
and the vectorized float functions (exp, log, tanh, sigmoid) over wide ranges in ulps."""

import ctypes as C

import numpy as np
import pytest
from cases import random_values
from thlib import DTYPES

from test_pointwise import assert_close, compute, th


def ulps(got, want):
    """Distance in units in the last place (float32/float64 arrays of the same dtype)."""
    got, want = np.asarray(got), np.asarray(want)
    it = np.int32 if got.dtype == np.float32 else np.int64
    key = lambda x: np.where(x.view(it) < 0, np.iinfo(it).min - x.view(it), x.view(it)).astype(np.int64)
    d = np.abs(key(got) - key(want)).astype(np.float64)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    return np.where(same, 0, d)


@pytest.mark.parametrize("real", ["Float", "Double", "Half", "Int", "Byte"])
def test_transposed_operands_tiled(lib, rng, real):
    shapes = [(37, 70), (70, 37), (130, 129), (3, 40, 129), (2, 17, 5, 66)]
    for shape in shapes:
        a = random_values(rng, real, shape, low=-50, high=50)
        b = random_values(rng, real, shape, low=-50, high=50)
        perm = list(range(len(shape)))
        perm[-1], perm[-2] = perm[-2], perm[-1]
        at = np.ascontiguousarray(a.transpose(perm)).transpose(perm)  # a's values, transposed layout
        bt = np.ascontiguousarray(b.transpose(perm)).transpose(perm)
        for x, y in ((at, b), (a, bt), (at, bt)):
            r = lib.new(real)
            lib.call(f"TH{real}Tensor_cadd", None, r, th(lib, x, real), lib.scalar(real, 1), th(lib, y, real))
            assert_close(real, r.numpy(), compute(real, lambda p, q: p + q, x, y))
            lib.call(f"TH{real}Tensor_cmul", None, r, th(lib, x, real), th(lib, y, real))
            assert_close(real, r.numpy(), compute(real, lambda p, q: p * q, x, y))
        # output transposed, inputs contiguous: r keeps its (transposed) strides
        r = th(lib, at, real)
        lib.call(f"TH{real}Tensor_cadd", None, r, th(lib, a, real), lib.scalar(real, 1), th(lib, b, real))
        assert r.stride(len(shape) - 2) == 1
        assert_close(real, r.numpy(), compute(real, lambda p, q: p + q, a, b))
        # transposed input with a broadcast row
        row = random_values(rng, real, shape[-1:], low=-50, high=50)
        lib.call(f"TH{real}Tensor_cadd", None, r, th(lib, at, real), lib.scalar(real, 1), th(lib, row, real))
        assert_close(real, r.numpy(), compute(real, lambda p, q: p + q, at, row))


@pytest.mark.parametrize("real", ["Float", "Double"])
def test_large_ops_streamed(lib, rng, real):
    """Outputs larger than the last-level cache are written with streaming stores; check every
    element, at unaligned offsets, for the unary, binary, scalar and fill paths."""
    n = 3_300_000 if real == "Float" else 1_700_000  # > 32 MiB touched
    big = random_values(rng, real, (n + 3,), low=-5, high=5)
    a, b = big[1:n + 1], big[3:n + 3][::-1].copy()
    ta, tb = th(lib, a, real), th(lib, b, real)
    r = lib.new(real)
    lib.call(f"TH{real}Tensor_cadd", None, r, ta, lib.scalar(real, 2), tb)
    assert_close(real, r.numpy(), a + np.asarray(2, a.dtype) * b)
    lib.call(f"TH{real}Tensor_cmul", None, r, ta, tb)
    assert_close(real, r.numpy(), a * b)
    lib.call(f"TH{real}Tensor_add", None, r, ta, lib.scalar(real, 1.5))
    assert_close(real, r.numpy(), a + np.asarray(1.5, a.dtype))
    lib.call(f"TH{real}Tensor_exp", None, r, ta)
    assert_close(real, r.numpy(), np.exp(a.astype(np.float64)).astype(a.dtype), rtol=1e-6 if real == "Float" else 1e-14)
    # an output view at an odd offset of a bigger storage
    out = th(lib, np.zeros(n + 5, dtype=a.dtype), real)
    lib.call(f"TH{real}Tensor_narrow", None, out, None, C.c_int(0), C.c_int64(3), C.c_int64(n))
    lib.call(f"TH{real}Tensor_cadd", None, out, ta, lib.scalar(real, 1), tb)
    assert_close(real, out.numpy(), a + b)
    lib.call(f"TH{real}Tensor_fill", None, out, lib.scalar(real, 4))
    assert (out.numpy() == 4).all()


@pytest.mark.parametrize("real", ["Float", "Int"])
def test_contiguous_fast_path_aliasing(lib, rng, real):
    a = random_values(rng, real, (4, 50), low=-9, high=9)
    b = random_values(rng, real, (4, 50), low=-9, high=9)
    t, s = th(lib, a, real), th(lib, b, real)
    lib.call(f"TH{real}Tensor_cadd", None, t, t, lib.scalar(real, 1), s)  # r == t
    assert_close(real, t.numpy(), compute(real, lambda x, y: x + y, a, b))
    lib.call(f"TH{real}Tensor_cmul", None, s, t, s)  # r == src
    assert_close(real, s.numpy(), compute(real, lambda x, y: (x + y) * y, a, b))
    # r a shifted view of t's storage: partial overlap goes through a temporary
    flat = random_values(rng, real, (200,), low=-9, high=9)
    t = th(lib, flat, real)
    r = lib.new(real)
    lib.call(f"TH{real}Tensor_set", None, r, t)
    lib.call(f"TH{real}Tensor_narrow", None, r, None, C.c_int(0), C.c_int64(1), C.c_int64(199))
    src = lib.new(real)
    lib.call(f"TH{real}Tensor_set", None, src, t)
    lib.call(f"TH{real}Tensor_narrow", None, src, None, C.c_int(0), C.c_int64(0), C.c_int64(199))
    lib.call(f"TH{real}Tensor_add", None, r, src, lib.scalar(real, 1))
    assert_close(real, t.numpy()[1:], compute(real, lambda x: x + 1, flat[:199]))


@pytest.mark.parametrize("real", ["Float", "Double"])
def test_float_functions_ulps(lib, rng, real):
    npdt = DTYPES[real][0]
    edge = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-45, -1e-45, 1e-300, 88.72, -87.3, -103.9,
                     -104.5, 89.0, 709.7, -745.1, 710.0, 1e30, -1e30], dtype=np.float64).astype(npdt)
    bits = rng.integers(0, 2**32 if real == "Float" else 2**63, size=200_000, dtype=np.uint64)
    anybits = bits.astype(np.uint32).view(np.float32) if real == "Float" else bits.view(np.float64)
    wide = rng.uniform(-120 if real == "Float" else -760, 120 if real == "Float" else 760, 200_000).astype(npdt)
    x = np.concatenate([edge, anybits.astype(npdt), wide])
    refs = {
        "exp": np.exp,
        "log": np.log,
        "tanh": np.tanh,
        "sigmoid": lambda v: np.where(v < 0, np.exp(v) / (1 + np.exp(v)), 1 / (1 + np.exp(-v))),
    }
    with np.errstate(all="ignore"):
        for name, f in refs.items():
            r = lib.new(real)
            lib.call(f"TH{real}Tensor_{name}", None, r, th(lib, x, real))
            got = r.numpy()
            want = f(x.astype(np.float64)) if real == "Float" else f(x)
            want = want.astype(npdt)
            d = ulps(got, want)
            worst = int(np.argmax(d))
            limit = 2 if real == "Float" else 4  # Double's reference (numpy in f64) is itself ~1 ulp
            assert d[worst] <= limit, f"{name}({x[worst]!r}) = {got[worst]!r}, want {want[worst]!r}: {d[worst]} ulps"
