"""THC random numbers (THCTensorRandom.h) through the C API, on the emulator or a GPU.

Run: TH_CUDA_EMULATOR=1 TH_LIB=$PWD/target/debug/libth.so python -m pytest -q tests/python/test_thc_random.py

- uniform bits against a numpy Philox4x32-10 (written here from the SC'11 paper and checked on
  Random123's known answers) under the stream contract of src/cuda/random.rs: element i of a
  call at (seed, offset) uses word i (two words for Double) of the blocks from `offset`;
- reproducibility: manualSeed, getRNGState / setRNGState round trips, format checks;
- statistics of every distribution for every floating dtype (fixed seeds; KS distance < 0.02 on
  20000 draws, the 1% critical value being 0.0115), integer ranges, bernoulli with p tensors,
  multinomial with and without replacement, the alias method;
- refused calls leave the output (and the generator) as they were.
"""

import ctypes as C
import math

import numpy as np
import pytest
from thclib import start_thc, FLOATS, INTS, DevSide, Thc, as_values, contiguous, emulated, tname, view_values
from thlib import Lib, THError

LIB = Lib()
THC = start_thc(LIB)
DEV = DevSide(THC)
if not THC.has("THCRandom_manualSeed"):
    pytest.skip("THCTensorRandom.h is not in this library", allow_module_level=True)

N = 20000


def seed(s):
    THC.call("THCRandom_manualSeed", None, C.c_uint64(s))


def dev(real, shape, fill=0):
    return contiguous(DEV, real, np.full(shape, fill, dtype=np.float64 if real in FLOATS else np.int64)
                      if real != "BFloat16" else np.zeros(shape, dtype=np.uint16))


def vals(t):
    return as_values(t.real, view_values(DEV, t)).astype(np.float64)


def call(real, op, *args):
    return DEV.call(real, op, None, *args)


def rng_state():
    t = LIB.new("Byte")
    THC.call("THCRandom_getRNGState", None, t)
    return t, LIB.to_numpy(t).tobytes()


# ---- Philox reference ----

M0, M1, W0, W1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85
MASK = (1 << 32) - 1


def philox(ctr, key):
    """Philox4x32-10 on numpy uint64 arrays of 32-bit words: ctr (4 arrays), key (2 ints)."""
    x0, x1, x2, x3 = [np.asarray(c, dtype=np.uint64) for c in ctr]
    k0, k1 = key
    for r in range(10):
        if r:
            k0, k1 = (k0 + W0) & MASK, (k1 + W1) & MASK
        a, b = np.uint64(M0) * x0, np.uint64(M1) * x2
        x0, x1, x2, x3 = (b >> np.uint64(32)) ^ x1 ^ np.uint64(k0), b & np.uint64(MASK), \
            (a >> np.uint64(32)) ^ x3 ^ np.uint64(k1), a & np.uint64(MASK)
    return x0, x1, x2, x3


def test_philox_known_answers():
    def one(c, k):
        return [int(v[0]) for v in philox([[w] for w in c], k)]
    assert one([0] * 4, [0, 0]) == [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
    assert one([MASK] * 4, [MASK, MASK]) == [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]
    got = one([0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344], [0xa4093822, 0x299f31d0])
    assert got == [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]


def words(seed_, offset, n):
    """The first n 32-bit words of a call at (seed, offset)."""
    blocks = np.arange((n + 3) // 4, dtype=np.uint64) + np.uint64(offset)
    out = philox([blocks & np.uint64(MASK), blocks >> np.uint64(32), np.zeros_like(blocks), np.zeros_like(blocks)],
                 [seed_ & MASK, seed_ >> 32])
    return np.stack(out, axis=1).reshape(-1)[:n]


@pytest.mark.parametrize("real", ["Float", "Double", "Half"])
def test_uniform_bits_match_the_reference(real):
    s = 0xDEADBEEF12345678
    seed(s)
    n = 1003
    t = dev(real, (n,))
    call(real, "uniform", t, C.c_double(-1.0), C.c_double(2.0))
    got = vals(t)
    if real == "Double":
        w = words(s, 0, 2 * n).reshape(n, 2)
        u = ((w[:, 0] << np.uint64(32) | w[:, 1]) >> np.uint64(11)).astype(np.float64) * 2.0**-53
    else:
        u = words(s, 0, n).astype(np.float64) * 2.0**-32
    want = (u * 3.0 - 1.0).astype({"Float": np.float32, "Double": np.float64, "Half": np.float16}[real])
    want = want.astype(np.float64)
    assert np.all(want < 2.0)  # no element rounded up to b with these draws
    np.testing.assert_array_equal(got, want)
    _, st = rng_state()
    assert st[:8] == b"THCphx10"
    assert int.from_bytes(st[8:16], "little") == s
    assert int.from_bytes(st[16:24], "little") == -(-n * (2 if real == "Double" else 1) // 4)


def test_transposed_output_takes_values_by_position():
    seed(5)
    a = dev("Float", (6, 7))
    call("Float", "uniform", a, C.c_double(0), C.c_double(1))
    seed(5)
    b = dev("Float", (7, 6))
    call("Float", "transpose", b, None, C.c_int(0), C.c_int(1))
    call("Float", "uniform", b, C.c_double(0), C.c_double(1))
    np.testing.assert_array_equal(vals(a), vals(b))


def test_state_round_trip_and_format_check():
    seed(1234)
    assert THC.call("THCRandom_initialSeed", C.c_uint64) == 1234
    t = dev("Double", (50,))
    call("Double", "normal", t, C.c_double(0), C.c_double(1))
    saved, _ = rng_state()
    call("Double", "normal", t, C.c_double(0), C.c_double(1))
    first = vals(t)
    THC.call("THCRandom_setRNGState", None, saved)
    call("Double", "normal", t, C.c_double(0), C.c_double(1))
    np.testing.assert_array_equal(vals(t), first)
    bad = LIB.from_numpy(np.zeros(24, dtype=np.uint8), "Byte")
    with pytest.raises(THError, match="not a state"):
        THC.call("THCRandom_setRNGState", None, bad)
    with pytest.raises(THError, match="24 bytes"):
        THC.call("THCRandom_setRNGState", None, LIB.from_numpy(np.zeros(5, dtype=np.uint8), "Byte"))
    s = THC.call("THCRandom_seed", C.c_uint64)
    assert THC.call("THCRandom_initialSeed", C.c_uint64) == s
    THC.call("THCRandom_manualSeedAll", None, C.c_uint64(77))
    assert THC.call("THCRandom_initialSeed", C.c_uint64) == 77
    assert THC.call("THCRandom_generatorStates", C.c_void_p) is None


def ks(x, cdf):
    x = np.sort(x)
    f = cdf(x)
    n = len(x)
    return max(np.max(np.abs(f - np.arange(n) / n)), np.max(np.abs(f - np.arange(1, n + 1) / n)))


def phi(x):
    return 0.5 * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))


@pytest.mark.parametrize("real", FLOATS)
def test_distribution_statistics(real):
    seed(100 + FLOATS.index(real))
    t = dev(real, (N,))
    call(real, "uniform", t, C.c_double(2.0), C.c_double(4.0))
    x = vals(t)
    assert x.min() >= 2.0 and x.max() < 4.0
    assert ks(x, lambda v: (v - 2.0) / 2.0) < 0.02
    call(real, "normal", t, C.c_double(-1.0), C.c_double(2.0))
    assert ks(vals(t), lambda v: phi((v + 1.0) / 2.0)) < 0.02
    call(real, "logNormal", t, C.c_double(0.2), C.c_double(0.3))
    assert ks(np.log(vals(t)), lambda v: phi((v - 0.2) / 0.3)) < 0.02
    call(real, "exponential", t, C.c_double(0.5))
    assert ks(vals(t), lambda v: 1.0 - np.exp(-0.5 * v)) < 0.02
    call(real, "cauchy", t, C.c_double(1.0), C.c_double(2.0))
    assert ks(vals(t), lambda v: 0.5 + np.arctan((v - 1.0) / 2.0) / np.pi) < 0.02
    call(real, "geometric", t, C.c_double(0.5))
    x = vals(t)
    assert x.min() >= 1 and np.all(x == np.round(x)) and abs(x.mean() - 2.0) < 0.05
    call(real, "bernoulli", t, C.c_double(0.7))
    x = vals(t)
    assert set(np.unique(x)) <= {0.0, 1.0} and abs(x.mean() - 0.7) < 0.015


@pytest.mark.parametrize("real", ["Float", "Double", "Half", "BFloat16"])
def test_rand_randn(real):
    seed(3)
    t = DEV.new(real)
    size = LIB.call("THLongStorage_newWithSize", C.c_void_p, C.c_ssize_t(2))
    LIB.call("THLongStorage_rawCopy", None, C.c_void_p(size), (C.c_int64 * 2)(100, 200))
    call(real, "rand", t, C.c_void_p(size))
    x = vals(t)
    assert x.shape == (100, 200) and x.min() >= 0 and x.max() < 1 and abs(x.mean() - 0.5) < 0.01
    call(real, "randn", t, C.c_void_p(size))
    x = vals(t)
    assert abs(x.mean()) < 0.02 and abs(x.std() - 1.0) < 0.02
    LIB.call("THLongStorage_free", None, C.c_void_p(size))


@pytest.mark.parametrize("real", INTS + ["Float", "Double"])
def test_integer_ranges(real):
    seed(9)
    t = dev(real, (5000,))
    call(real, "clampedRandom", t, C.c_int64(-3 if real != "Byte" else 3), C.c_int64(9))
    x = vals(t)
    lo = -3 if real != "Byte" else 3
    assert x.min() == lo and x.max() == 8
    counts = np.bincount((x - lo).astype(int))
    assert counts.min() > 5000 / (9 - lo) * 0.8
    call(real, "cappedRandom", t, C.c_int64(2))
    assert set(np.unique(vals(t))) == {0.0, 1.0}
    call(real, "random", t)
    top = {"Byte": 255, "Char": 127, "Short": 32767, "Int": 2**31 - 1, "Long": 2**32, "Float": 2**24,
           "Double": 2**32}[real]
    x = vals(t)
    assert x.min() >= 0 and x.max() <= top and len(np.unique(x)) > 100


@pytest.mark.parametrize("real", ["Byte", "Long", "Float", "Half"])
@pytest.mark.parametrize("preal", ["Float", "Double"])
def test_bernoulli_probability_tensor(real, preal):
    seed(17)
    p = np.tile([0.0, 1.0, 0.4], 2000)
    pt = contiguous(DEV, preal, p)
    t = dev(real, (2000, 3))
    call(real, f"bernoulli_{preal}Tensor", t, pt)
    x = vals(t)
    assert np.all(x[:, 0] == 0) and np.all(x[:, 1] == 1) and abs(x[:, 2].mean() - 0.4) < 0.04
    bad = contiguous(DEV, preal, np.array([0.5] * 5999 + [1.5]))
    before = vals(t)
    with pytest.raises(THError, match=r"\[0, 1\]"):
        call(real, f"bernoulli_{preal}Tensor", t, bad)
    np.testing.assert_array_equal(vals(t), before)


@pytest.mark.parametrize("real", ["Float", "Double", "Half"])
def test_normal_tensor_parameters(real):
    seed(23)
    means = contiguous(DEV, real, np.tile([0.0, 50.0], 3000))
    t = DEV.new(real)
    call(real, "normal_means", t, means, C.c_double(1.0))
    x = vals(t).reshape(-1, 2)
    assert abs(x[:, 0].mean()) < 0.1 and abs(x[:, 1].mean() - 50) < 0.15 and abs(x[:, 0].std() - 1) < 0.1
    sds = contiguous(DEV, real, np.tile([0.0, 4.0], 3000))
    call(real, "normal_stddevs", t, C.c_double(3.0), sds)
    x = vals(t).reshape(-1, 2)
    assert np.all(x[:, 0] == 3.0) and abs(x[:, 1].std() - 4.0) < 0.3
    m = contiguous(DEV, real, np.array([[1.0], [2.0]]))
    s = contiguous(DEV, real, np.zeros((1, 3)))
    call(real, "normal_means_stddevs", t, m, s)
    np.testing.assert_array_equal(vals(t), [[1, 1, 1], [2, 2, 2]])


@pytest.mark.parametrize("real", ["Float", "Double", "Half"])
def test_multinomial(real):
    seed(31)
    w = np.array([[0.2, 0.0, 0.5, 0.3], [0.0, 0.0, 1.0, 3.0]])
    prob = contiguous(DEV, real, w)
    out = DEV.new("Long")
    call(real, "multinomial", out, prob, C.c_int(8000), C.c_int(1))
    x = vals(out).astype(int)
    assert x.shape == (2, 8000)
    for r in range(2):
        f = np.bincount(x[r], minlength=4) / 8000
        np.testing.assert_allclose(f, w[r] / w[r].sum(), atol=0.025)
        assert np.all(f[w[r] == 0] == 0)
    for _ in range(10):
        call(real, "multinomial", out, prob, C.c_int(2), C.c_int(0))
        x = vals(out).astype(int)
        assert sorted(x[1]) == [2, 3] and len(set(x[0])) == 2 and 1 not in x[0]
    with pytest.raises(THError, match="without replacement"):
        call(real, "multinomial", out, prob, C.c_int(3), C.c_int(0))
    assert vals(out).shape == (2, 2)


@pytest.mark.parametrize("real", ["Float", "Double"])
def test_alias_method(real):
    seed(41)
    w = np.array([0.5, 0.1, 0.0, 0.4])
    prob = contiguous(DEV, real, w)
    J, q = DEV.new("Long"), DEV.new(real)
    call(real, "multinomialAliasSetup", prob, J, q)
    out = dev("Long", (20000,))
    call(real, "multinomialAliasDraw", out, J, q)
    f = np.bincount(vals(out).astype(int), minlength=4) / 20000
    np.testing.assert_allclose(f, w, atol=0.015)


@pytest.mark.parametrize("real", FLOATS)
def test_refused_calls_leave_everything(real):
    seed(2)
    t = dev(real, (10,))
    call(real, "uniform", t, C.c_double(0), C.c_double(1))
    before, (_, st) = vals(t), rng_state()
    for op, args in [("uniform", (C.c_double(1), C.c_double(0))), ("normal", (C.c_double(0), C.c_double(-1))),
                     ("exponential", (C.c_double(0),)), ("bernoulli", (C.c_double(1.01),)),
                     ("geometric", (C.c_double(0),)), ("cauchy", (C.c_double(0), C.c_double(0))),
                     ("clampedRandom", (C.c_int64(3), C.c_int64(3)))]:
        with pytest.raises(THError):
            call(real, op, t, *args)
    np.testing.assert_array_equal(vals(t), before)
    assert rng_state()[1] == st
    assert tname(real)  # names resolve for every floating dtype, BFloat16 included
