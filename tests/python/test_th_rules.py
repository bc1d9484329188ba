"""TH's own C expressions where they differ from numpy/IEEE habits (issue 27): the NaN rules of
cmax/cmin/cmaxValue/cminValue/sign/clamp and C's integer promotion in addcdiv and the shifts.
Every case runs on contiguous, transposed, narrowed (strided), broadcast and in-place operands
(small contiguous ones take the flat fast path)."""

import numpy as np
import pytest
from cases import round_to
from thlib import DTYPES, FLOATS, INTS, NUMERIC

LAYOUTS = ["contig", "transposed", "narrowed", "broadcast", "inplace"]
BITS = {"Byte": 8, "Char": 8, "Short": 16, "Int": 32, "Long": 64}


def specials(real):
    """The values every case mixes in: NaN/inf/-0 for floats, the extremes for integers."""
    if real in FLOATS:
        return [np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 2.0, -3.5, 100.0]
    info = np.iinfo(DTYPES[real][0])
    return sorted({info.min, info.min + 1, -1 if info.min else 0, 0, 1, 2, 3, 7, 100 % (info.max + 1), info.max - 1, info.max})


def values(rng, real, shape, nonzero=False):
    v = rng.choice(np.array(specials(real), dtype=object), size=shape)
    if nonzero:
        v = np.where(v == 0, 1, v)
    return np.array(v.tolist() if shape else v, dtype=np.float64 if real in FLOATS else DTYPES[real][0])


def ref_dtype(real):
    return {"Half": np.float16, "BFloat16": np.float32}.get(real, DTYPES[real][0])


def as_ref(real, a):
    """Values as stored by `real` (floats rounded to the dtype)."""
    return round_to(real, a) if real in FLOATS else np.asarray(a, dtype=DTYPES[real][0])


def view(rng, lib, real, a, layout):
    """A TH tensor holding `a` in `layout` (broadcast is the caller's shape choice)."""
    if layout == "transposed" and a.ndim >= 2:
        return lib.from_numpy(np.ascontiguousarray(a.T).T, real)
    if layout == "narrowed":
        big = np.zeros(tuple(2 * n + 1 for n in a.shape), dtype=a.dtype)
        sl = tuple(slice(1, 2 * n + 1, 2) for n in a.shape)
        big[sl] = a
        return lib.from_numpy(big[sl], real)
    return lib.from_numpy(a, real)


def shapes(rng, layout):
    shape = (int(rng.integers(1, 5)), int(rng.integers(2, 7)))
    other = (1, shape[1]) if layout == "broadcast" else shape
    return shape, other


def run(lib, real, name, layout, t, *args):
    """Calls TH{real}Tensor_{name}(r, t, *args); in place: r is t."""
    r = t if layout == "inplace" else lib.new(real)
    lib.call(f"TH{real}Tensor_{name}", None, r, t, *args)
    return r.numpy()


def check(real, got, want):
    want = as_ref(real, want)
    got = np.asarray(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    if real in FLOATS:
        g, w = got.astype(np.float64), want.astype(np.float64)
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
        np.testing.assert_array_equal(np.where(np.isnan(g), 0, g), np.where(np.isnan(w), 0, w))
        # signed zeros too (sign gives +0 for -0 and NaN)
        np.testing.assert_array_equal(np.signbit(g) & ~np.isnan(g), np.signbit(w) & ~np.isnan(w))
    else:
        np.testing.assert_array_equal(got, want)


# ---- NaN rules: TH's compare-selects ----


def th_cmax(t, s):
    return np.where(t > s, t, s)


def th_cmin(t, s):
    return np.where(t < s, t, s)


def th_sign(t):
    return np.where(t > 0, 1.0, np.where(t < 0, -1.0, 0.0)).astype(t.dtype)


def th_clamp(t, lo, hi):
    return np.where(t < lo, lo, np.where(t > hi, hi, t)).astype(t.dtype)


@pytest.mark.parametrize("real", NUMERIC)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_cmax_cmin(lib, rng, real, layout):
    for _ in range(8):
        shape, other = shapes(rng, layout)
        a, b = as_ref(real, values(rng, real, shape)), as_ref(real, values(rng, real, other))
        for name, f in (("cmax", th_cmax), ("cmin", th_cmin)):
            got = run(lib, real, name, layout, view(rng, lib, real, a, layout), view(rng, lib, real, b, layout))
            check(real, got, f(a.astype(ref_dtype(real)), b.astype(ref_dtype(real))))


@pytest.mark.parametrize("real", NUMERIC)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_cmax_cmin_value_sign_clamp(lib, rng, real, layout):
    for _ in range(6):
        shape, _ = shapes(rng, layout)
        a = as_ref(real, values(rng, real, shape)).astype(ref_dtype(real))
        for v in specials(real):
            vr = as_ref(real, np.asarray(v)).astype(ref_dtype(real))
            for name, f in (("cmaxValue", th_cmax), ("cminValue", th_cmin)):
                got = run(lib, real, name, layout, view(rng, lib, real, a, layout), lib.scalar(real, v))
                check(real, got, f(a, vr))
        if real != "Byte":
            got = run(lib, real, "sign", layout, view(rng, lib, real, a, layout))
            check(real, got, th_sign(a))
        sp = specials(real)
        for lo, hi in [(sp[1], sp[-2]), (sp[-2], sp[1])] + ([(np.nan, 1.0), (-1.0, np.nan), (np.nan, np.nan)] if real in FLOATS else []):
            lo_r, hi_r = (as_ref(real, np.asarray(x)).astype(ref_dtype(real)) for x in (lo, hi))
            got = run(lib, real, "clamp", layout, view(rng, lib, real, a, layout), lib.scalar(real, lo), lib.scalar(real, hi))
            check(real, got, th_clamp(a, lo_r, hi_r))


@pytest.mark.parametrize("real", ["Byte"])
def test_sign_byte(lib, rng, real):
    a = np.array([0, 1, 200, 255], dtype=np.uint8)
    got = run(lib, real, "sign", "contig", lib.from_numpy(a, real))
    check(real, got, np.array([0, 1, 1, 1], dtype=np.uint8))


def test_issue_table(lib):
    """The rows of issue 27, verbatim."""
    nan = np.nan
    for real in FLOATS:
        t, s = lib.from_numpy(np.array([nan, 1.0]), real), lib.from_numpy(np.array([1.0, nan]), real)
        check(real, run(lib, real, "cmax", "contig", t, s), np.array([1.0, nan]))
        check(real, run(lib, real, "cmin", "contig", t, s), np.array([1.0, nan]))
        t = lib.from_numpy(np.array([nan, 3.0]), real)
        check(real, run(lib, real, "cmaxValue", "contig", t, lib.scalar(real, 2.0)), np.array([2.0, 3.0]))
        check(real, run(lib, real, "cminValue", "contig", t, lib.scalar(real, 2.0)), np.array([2.0, 2.0]))
        check(real, run(lib, real, "sign", "contig", lib.from_numpy(np.array([nan, -2.0, 0.0]), real)), np.array([0.0, -1.0, 0.0]))
    for real, v, s1, s2, want in (("Byte", 3, 200, 10, 60), ("Char", 2, 100, 4, 50), ("Short", 3, 30000, 10, 9000)):
        z = lambda x: lib.from_numpy(np.array([x]), real)  # noqa: E731
        got = run(lib, real, "addcdiv", "contig", z(0), lib.scalar(real, v), z(s1), z(s2))
        check(real, got, np.array([want]))


# ---- C integer promotion ----


def wrap(x, bits, signed=True):
    x &= (1 << bits) - 1
    return x - (1 << bits) if signed and x >> (bits - 1) else x


def c_width(real):
    return max(BITS[real], 32)  # Byte/Char/Short promote to int


def c_div(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def th_addcdiv(real, t, v, s1, s2):
    """C's `t + v * s1 / s2` in the promoted width, converted back to the type."""
    w, signed = c_width(real), real != "Byte"

    def one(t, a, b):
        p = wrap(int(v) * int(a), w)
        return wrap(wrap(int(t) + wrap(c_div(p, int(b)), w), w), BITS[real], signed)

    return np.vectorize(one, otypes=[object])(t, s1, s2).astype(DTYPES[real][0])


def th_addcmul(real, t, v, s1, s2):
    w, signed = c_width(real), real != "Byte"
    return np.vectorize(lambda t, a, b: wrap(int(t) + wrap(int(v) * int(a) * int(b), w), BITS[real], signed), otypes=[object])(
        t, s1, s2
    ).astype(DTYPES[real][0])


def th_shift(real, t, c, left):
    """`((unsigned real) t) << c` in the promoted width, the count modulo that width (x86)."""
    w, signed = c_width(real), real != "Byte"

    def one(x, c):
        u, n = int(x) & ((1 << BITS[real]) - 1), (int(c) & 0xFFFFFFFF) & (w - 1)
        return wrap((u << n) if left else (u >> n), BITS[real], signed)

    return np.vectorize(one, otypes=[object])(t, c).astype(DTYPES[real][0])


@pytest.mark.parametrize("real", INTS)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_addcdiv_addcmul_promote(lib, rng, real, layout):
    for _ in range(6):
        shape, other = shapes(rng, layout)
        t, s1, s2 = values(rng, real, shape), values(rng, real, other), values(rng, real, other, nonzero=True)
        for v in specials(real):
            for name, f in (("addcdiv", th_addcdiv), ("addcmul", th_addcmul)):
                args = (view(rng, lib, real, s1, layout), view(rng, lib, real, s2, layout))
                got = run(lib, real, name, layout, view(rng, lib, real, t, layout), lib.scalar(real, int(v)), *args)
                check(real, got, f(real, t, v, s1, s2))


@pytest.mark.parametrize("real", INTS)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_shifts_promote(lib, rng, real, layout):
    counts = [c for c in (0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, -1, -8) if wrap(c, BITS[real], real != "Byte") == c]
    for _ in range(4):
        shape, other = shapes(rng, layout)
        t = values(rng, real, shape)
        for c in counts:
            for name, left in (("lshift", True), ("rshift", False)):
                got = run(lib, real, name, layout, view(rng, lib, real, t, layout), lib.scalar(real, c))
                check(real, got, th_shift(real, t, c, left))
        cs = np.array(rng.choice(counts, size=other), dtype=DTYPES[real][0])
        for name, left in (("clshift", True), ("crshift", False)):
            got = run(lib, real, name, layout, view(rng, lib, real, t, layout), view(rng, lib, real, cs, layout))
            check(real, got, th_shift(real, t, np.broadcast_to(cs, shape), left))


# ---- float pow and remainder: TH's special values and C's double intermediates ----


def th_pow_value(a, v):
    """TH's pow(r, t, value) on float/double `a` (the value's own type)."""
    one = a.dtype.type(1)
    special = {1: lambda: a, 2: lambda: a * a, 3: lambda: a * a * a, 0.5: lambda: np.sqrt(a), -0.5: lambda: one / np.sqrt(a),
               -1: lambda: one / a, -2: lambda: one / (a * a)}
    return special.get(v, lambda: np.power(a, a.dtype.type(v)))()


@pytest.mark.parametrize("real", ["Float", "Double"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_pow_cpow_remainder(lib, rng, real, layout):
    npdt = DTYPES[real][0]
    for _ in range(4):
        shape, other = shapes(rng, layout)
        a = values(rng, real, shape).astype(npdt)
        with np.errstate(all="ignore"):
            for v in (1.0, 2.0, 3.0, 0.5, -0.5, -1.0, -2.0):
                got = run(lib, real, "pow", layout, view(rng, lib, real, a, layout), lib.scalar(real, v))
                check(real, got, th_pow_value(a, v))
            b = values(rng, real, other).astype(npdt)
            # cpow and tpow: C's double pow, rounded once
            got = run(lib, real, "cpow", layout, view(rng, lib, real, a, layout), view(rng, lib, real, b, layout))
            check(real, got, np.power(a.astype(np.float64), b.astype(np.float64)).astype(npdt))
            r = lib.new(real)
            lib.call(f"TH{real}Tensor_tpow", None, r, lib.scalar(real, 1.5), view(rng, lib, real, a, layout))
            check(real, r.numpy(), np.power(1.5, a.astype(np.float64)).astype(npdt))
            # remainder: t / v in the type, then v * floor(...) and the difference in double
            big = (a * npdt(1e6)).astype(npdt)
            for v in (3.0, -7.0, 0.1, 0.0, np.nan, np.inf):
                q = np.floor(big / npdt(v)).astype(np.float64)
                want = np.full(shape, np.nan) if v == 0 else big.astype(np.float64) - np.float64(npdt(v)) * q
                got = run(lib, real, "remainder", layout, view(rng, lib, real, big, layout), lib.scalar(real, v))
                check(real, got, want.astype(npdt))
            bb = np.where(b == 0, npdt(3), b)
            q = np.floor(big / np.broadcast_to(bb, shape)).astype(np.float64)
            got = run(lib, real, "cremainder", layout, view(rng, lib, real, big, layout), view(rng, lib, real, bb, layout))
            check(real, got, (big.astype(np.float64) - bb.astype(np.float64) * q).astype(npdt))


def test_remainder_float_double_intermediate(lib):
    """1e8 - 3 * floor(1e8 / 3) with 1e8 / 3 = 33333334 in float: TH's double product gives -2,
    float arithmetic 0 (3 * 33333334 rounds to 1e8)."""
    got = run(lib, "Float", "remainder", "contig", lib.from_numpy(np.array([1e8], dtype=np.float32), "Float"), lib.scalar("Float", 3.0))
    assert got[0] == -2.0
