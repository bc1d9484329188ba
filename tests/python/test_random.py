"""The random family: torch7's MT19937 streams bit for bit against an independent reference
(a pure-Python MT19937 written from the published algorithm, and numpy's RandomState, whose
init_genrand seeding is the same for 32-bit seeds), distribution statistics with fixed seeds,
independence of the thread count, and parameter errors."""

import ctypes as C
import math

import numpy as np
import pytest
from thlib import FLOATS, NUMERIC, THError

STATE_BYTES = 5048  # sizeof(THGenerator) in torch7 on LP64


class RefMT:
    """MT19937 (Matsumoto & Nishimura, init_genrand seeding) and torch7's THRandom formulas."""

    def __init__(self, seed):
        mt = [seed & 0xFFFFFFFF]
        for i in range(1, 624):
            mt.append((1812433253 * (mt[-1] ^ (mt[-1] >> 30)) + i) & 0xFFFFFFFF)
        self.mt, self.idx, self.cached = mt, 624, None

    def _twist(self):
        mt = self.mt
        for i in range(624):
            y = (mt[i] & 0x80000000) | (mt[(i + 1) % 624] & 0x7FFFFFFF)
            mt[i] = mt[(i + 397) % 624] ^ (y >> 1) ^ (0x9908B0DF if y & 1 else 0)
        self.idx = 0

    def random(self):
        if self.idx >= 624:
            self._twist()
        y = self.mt[self.idx]
        self.idx += 1
        y ^= y >> 11
        y ^= (y << 7) & 0x9D2C5680
        y ^= (y << 15) & 0xEFC60000
        y ^= y >> 18
        return y & 0xFFFFFFFF

    def unit(self):
        return self.random() * (1.0 / 4294967296.0)

    def uniform(self, a, b):
        return self.unit() * (b - a) + a

    def normal(self, mean, stdv):
        if self.cached is None:
            x = self.unit()
            y = self.unit()
            rho = math.sqrt(-2.0 * math.log(1.0 - y))
            self.cached = (x, rho)
            return rho * math.cos(2.0 * math.pi * x) * stdv + mean
        x, rho = self.cached
        self.cached = None
        return rho * math.sin(2.0 * math.pi * x) * stdv + mean

    def exponential(self, lam):
        return (-1.0 / lam) * math.log(1.0 - self.unit())

    def cauchy(self, median, sigma):
        return median + sigma * math.tan(math.pi * (self.unit() - 0.5))

    def log_normal(self, mean, stdv):
        return math.exp(self.normal(mean, stdv))

    def geometric(self, p):
        return int(math.log(1.0 - self.unit()) / math.log(p)) + 1

    def bernoulli(self, p):
        return int(self.unit() <= p)


@pytest.fixture
def gen(lib):
    g = C.c_void_p(lib.call("THGenerator_new", C.c_void_p))
    yield g
    lib.dll.THGenerator_free(g)


def seed(lib, g, s):
    lib.call("THRandom_manualSeed", None, g, C.c_uint64(s))


def draw(lib, g, name, *params, restype=C.c_double):
    return lib.call(f"THRandom_{name}", restype, g, *[C.c_double(p) for p in params])


def zeros(lib, real, shape):
    return lib.from_numpy(np.zeros(shape), real)


def long_sizes(lib, *sizes):
    fn = f"THLongStorage_newWithSize{len(sizes)}"
    return C.c_void_p(lib.call(fn, C.c_void_p, *[C.c_int64(s) for s in sizes]))


def rng_state(lib, g):
    t = lib.new("Byte")
    lib.call("THByteTensor_getRNGState", None, g, t)
    return t.numpy()


# ------------------------------------------------------------------------------------------
# bit-exact streams


@pytest.mark.parametrize("s", [0, 1, 42, 5489, 2**31, 2**32 - 1, 123456789])
def test_random_stream_matches_reference_mt19937(lib, gen, s):
    seed(lib, gen, s)
    got = [lib.call("THRandom_random", C.c_uint64, gen) for _ in range(1500)]  # crosses 2 refills
    ref = RefMT(s)
    assert got == [ref.random() for _ in range(1500)]
    want = np.random.RandomState(s).randint(0, 2**32, size=1500, dtype=np.uint32)
    assert got == want.tolist()


def test_seeding_matches_numpy_state_and_torch7_layout(lib, gen):
    for s in (7, 2**32 - 5):
        seed(lib, gen, s)
        raw = rng_state(lib, gen)
        assert raw.shape == (STATE_BYTES,)
        words = raw[24 : 24 + 624 * 8].view(np.uint64)
        np.testing.assert_array_equal(words, np.random.RandomState(s).get_state()[1].astype(np.uint64))
        assert raw[0:8].view(np.uint64)[0] == s  # the_initial_seed
        assert raw[8:12].view(np.int32)[0] == 1  # left
        assert raw[12:16].view(np.int32)[0] == 1  # seeded
        assert raw[16:24].view(np.uint64)[0] == 0  # next
    # the low 32 bits seed the state, the whole value is the initial seed
    seed(lib, gen, (5 << 32) | 9)
    assert lib.call("THRandom_initialSeed", C.c_uint64, gen) == (5 << 32) | 9
    assert lib.call("THRandom_random", C.c_uint64, gen) == RefMT(9).random()


def test_torch7_probe_values(lib, gen):
    # TH_API.md 14.6: outputs of torch7's own build
    seed(lib, gen, 42)
    assert [lib.call("THRandom_random", C.c_uint64, gen) for _ in range(3)] == [1608637542, 3421126067, 4083286876]
    seed(lib, gen, 42)
    assert draw(lib, gen, "uniform", 0, 1) == 0.37454011430963874
    assert draw(lib, gen, "normal", 0, 1) == 0.70734813624035553
    assert draw(lib, gen, "normal", 0, 1) == -2.3494471019969621
    seed(lib, gen, 1)
    t = zeros(lib, "Float", (3,))
    lib.call("THFloatTensor_uniform", None, t, gen, C.c_double(0), C.c_double(1))
    np.testing.assert_array_equal(t.numpy(), np.array([0.41702199, 0.997184813, 0.720324516], dtype=np.float32))


def test_scalar_distributions_are_bit_exact(lib, gen):
    seed(lib, gen, 2024)
    ref = RefMT(2024)
    for i in range(400):
        k = i % 8
        if k == 0:
            assert draw(lib, gen, "uniform", -3.5, 7.25) == ref.uniform(-3.5, 7.25)
        elif k in (1, 2):  # consecutive normals share one Box-Muller pair
            assert draw(lib, gen, "normal", 1.5, 2.0) == ref.normal(1.5, 2.0)
        elif k == 3:
            assert draw(lib, gen, "exponential", 0.7) == ref.exponential(0.7)
        elif k == 4:
            assert draw(lib, gen, "cauchy", -1.0, 0.5) == ref.cauchy(-1.0, 0.5)
        elif k == 5:
            assert draw(lib, gen, "logNormal", 0.1, 0.3) == ref.log_normal(0.1, 0.3)
        elif k == 6:
            assert draw(lib, gen, "geometric", 0.2, restype=C.c_int) == ref.geometric(0.2)
        else:
            assert draw(lib, gen, "bernoulli", 0.35, restype=C.c_int) == ref.bernoulli(0.35)


def test_manual_seed_clears_the_cached_normal(lib, gen):
    seed(lib, gen, 3)
    draw(lib, gen, "normal", 0, 1)  # leaves the sine half cached
    seed(lib, gen, 3)
    assert draw(lib, gen, "normal", 0, 1) == RefMT(3).normal(0, 1)


@pytest.mark.parametrize("real", NUMERIC)
def test_tensor_random_modulus_and_order(lib, gen, real):
    mod = {"Byte": 256, "Char": 128, "Short": 2**15, "Int": 2**31, "Long": 2**63,
           "Float": 2**24 + 1, "Double": 2**53 + 1, "Half": 2**11 + 1, "BFloat16": 2**8 + 1}[real]
    # a transposed, non-contiguous view: elements are drawn in its row-major (logical) order
    base = np.zeros((5, 7))
    t = lib.from_numpy(base.T, real)
    seed(lib, gen, 77)
    lib.call(f"TH{real}Tensor_random", None, t, gen)
    ref = RefMT(77)
    want = np.array([ref.random() % mod for _ in range(35)], dtype=np.float64).reshape(7, 5)
    got = t.numpy().astype(np.float64)
    np.testing.assert_array_equal(got, want)


def test_tensor_fills_follow_the_scalar_streams(lib, gen):
    n = 1001  # odd: the last normal leaves its pair half cached
    cases = [
        ("uniform", (2.0, 5.0), lambda r: r.uniform(2.0, 5.0)),
        ("normal", (-1.0, 3.0), lambda r: r.normal(-1.0, 3.0)),
        ("exponential", (1.5,), lambda r: r.exponential(1.5)),
        ("cauchy", (0.5, 2.0), lambda r: r.cauchy(0.5, 2.0)),
        ("logNormal", (0.0, 0.5), lambda r: r.log_normal(0.0, 0.5)),
        ("geometric", (0.3,), lambda r: r.geometric(0.3)),
        ("bernoulli", (0.6,), lambda r: r.bernoulli(0.6)),
    ]
    for name, params, f in cases:
        seed(lib, gen, 99)
        ref = RefMT(99)
        t = zeros(lib, "Double", (n,))
        lib.call(f"THDoubleTensor_{name}", None, t, gen, *[C.c_double(p) for p in params])
        want = np.array([f(ref) for _ in range(n)])
        np.testing.assert_array_equal(t.numpy(), want, err_msg=name)
        # the generator continues where the tensor left it (including a cached normal)
        assert draw(lib, gen, "normal", 0, 1) == ref.normal(0, 1), name
    # Float rounds the double values (torch7's (real) cast)
    seed(lib, gen, 5)
    ref = RefMT(5)
    t = zeros(lib, "Float", (64,))
    lib.call("THFloatTensor_normal", None, t, gen, C.c_double(0), C.c_double(1))
    np.testing.assert_array_equal(t.numpy(), np.array([ref.normal(0, 1) for _ in range(64)], dtype=np.float32))


def test_clamped_capped_random(lib, gen):
    seed(lib, gen, 8)
    ref = RefMT(8)
    t = zeros(lib, "Long", (500,))
    lib.call("THLongTensor_clampedRandom", None, t, gen, C.c_int64(-20), C.c_int64(13))
    np.testing.assert_array_equal(t.numpy(), [ref.random() % 33 - 20 for _ in range(500)])
    lib.call("THLongTensor_cappedRandom", None, t, gen, C.c_int64(6))
    np.testing.assert_array_equal(t.numpy(), [ref.random() % 6 for _ in range(500)])
    f = zeros(lib, "Float", (500,))
    lib.call("THFloatTensor_clampedRandom", None, f, gen, C.c_int64(-3), C.c_int64(3))
    v = f.numpy()
    assert v.min() == -3 and v.max() == 2 and np.all(v == np.round(v))


def test_randperm_reproduces_torch7_and_is_a_permutation(lib, gen):
    for real, n in [("Long", 1000), ("Int", 1), ("Byte", 256), ("Double", 333), ("Half", 2049), ("BFloat16", 257)]:
        seed(lib, gen, 31)
        t = lib.new(real)
        lib.call(f"TH{real}Tensor_randperm", None, t, gen, C.c_int64(n))
        got = t.numpy().astype(np.int64)
        ref, want = RefMT(31), list(range(n))
        for i in range(n - 1):
            z = ref.random() % (n - i)
            want[i], want[i + z] = want[i + z], want[i]
        np.testing.assert_array_equal(got, want, err_msg=real)
        assert sorted(got.tolist()) == list(range(n))


# ------------------------------------------------------------------------------------------
# statistics (fixed seeds; tolerances are 6 standard errors)


def moments_ok(x, mean, var, mu4=None, k=6.0):
    n = x.size
    m = x.mean()
    assert abs(m - mean) < k * math.sqrt(var / n), (m, mean)
    if mu4 is not None:
        v = x.var()
        assert abs(v - var) < k * math.sqrt((mu4 - var**2) / n), (v, var)


def fill(lib, gen, real, name, n, *params):
    t = zeros(lib, real, (n,))
    lib.call(f"TH{real}Tensor_{name}", None, t, gen, *[C.c_double(p) for p in params])
    return t.numpy().astype(np.float64)


def test_statistics_double(lib, gen):
    seed(lib, gen, 12345)
    n = 1_000_000
    u = fill(lib, gen, "Double", "uniform", n, -1.0, 3.0)
    assert u.min() >= -1.0 and u.max() < 3.0
    moments_ok(u, 1.0, 16 / 12, mu4=16 / 5)  # width 4: mu4 = w^4/80
    z = fill(lib, gen, "Double", "normal", n, 2.0, 0.5)
    moments_ok(z, 2.0, 0.25, mu4=3 * 0.5**4)
    e = fill(lib, gen, "Double", "exponential", n, 2.0)
    assert e.min() >= 0
    moments_ok(e, 0.5, 0.25, mu4=9 / 16)
    b = fill(lib, gen, "Double", "bernoulli", n, 0.3)
    assert set(np.unique(b)) <= {0.0, 1.0}
    moments_ok(b, 0.3, 0.21)
    g = fill(lib, gen, "Double", "geometric", n, 0.25)
    assert g.min() >= 1 and np.all(g == np.round(g))
    moments_ok(g, 1 / 0.75, 0.25 / 0.75**2)  # torch7's convention: P(i) = (1-p) p^(i-1)
    ln = fill(lib, gen, "Double", "logNormal", n, 0.5, 0.2)
    moments_ok(np.log(ln), 0.5, 0.04, mu4=3 * 0.2**4)
    c = fill(lib, gen, "Double", "cauchy", n, 1.0, 2.0)
    # median and quartiles of Cauchy(1, 2): 1 and 1 -+ 2
    q = np.quantile(c, [0.25, 0.5, 0.75])
    # the sample quartile's sd is sqrt(3/16) * 4 pi / sqrt(n) = 5.4e-3
    np.testing.assert_allclose(q, [-1.0, 1.0, 3.0], atol=0.04)


@pytest.mark.parametrize("real", FLOATS)
def test_statistics_every_float_dtype(lib, gen, real):
    seed(lib, gen, 4242)
    n = 200_000
    u = fill(lib, gen, real, "uniform", n, 0.0, 1.0)
    assert u.min() >= 0.0 and u.max() < 1.0  # also after rounding to the dtype
    moments_ok(u, 0.5, 1 / 12, k=8)
    z = fill(lib, gen, real, "normal", n, 0.0, 1.0)
    moments_ok(z, 0.0, 1.0, k=8)
    r = lib.new(real)
    sz = long_sizes(lib, 400, 500)
    lib.call(f"TH{real}Tensor_rand", None, r, gen, sz)
    v = r.numpy()
    assert v.shape == (400, 500) and v.min() >= 0 and v.max() < 1
    lib.call(f"TH{real}Tensor_randn", None, r, gen, sz)
    moments_ok(r.numpy().astype(np.float64).ravel(), 0.0, 1.0, k=8)
    lib.dll.THLongStorage_free(sz)


def test_bernoulli_tensor_probabilities(lib, gen):
    seed(lib, gen, 17)
    p = np.tile(np.array([0.0, 0.1, 0.5, 0.9, 1.0]), 40_000)
    for ptype in ("Float", "Double"):
        for real in ("Byte", "Int", "Double", "Half"):
            t = zeros(lib, real, (p.size,))
            lib.call(f"TH{real}Tensor_bernoulli_{ptype}Tensor", None, t, gen, lib.from_numpy(p, ptype))
            got = t.numpy().astype(np.float64).reshape(-1, 5)
            means = got.mean(axis=0)
            assert means[0] == 0.0 and means[4] == 1.0
            for m, q in zip(means[1:4], (0.1, 0.5, 0.9)):
                assert abs(m - q) < 6 * math.sqrt(q * (1 - q) / got.shape[0])


def check_frequencies(samples, probs):
    probs = np.asarray(probs, dtype=np.float64) / np.sum(probs)
    n = samples.size
    counts = np.bincount(samples.ravel(), minlength=probs.size)
    assert counts.size == probs.size
    for c, q in zip(counts, probs):
        if q == 0:
            assert c == 0
        else:
            assert abs(c / n - q) < 6 * math.sqrt(q * (1 - q) / n), (c / n, q)


@pytest.mark.parametrize("real", FLOATS)
def test_multinomial(lib, gen, real):
    seed(lib, gen, 55)
    w = np.array([0.5, 0.0, 2.0, 1.0, 0.25, 0.25])  # unnormalised weights, one zero
    out = lib.new("Long")
    lib.call(f"TH{real}Tensor_multinomial", None, out, gen, lib.from_numpy(w, real), C.c_int(100_000), C.c_int(1))
    s = out.numpy()
    assert s.shape == (100_000,)
    check_frequencies(s, w)
    # 2-D: one row per distribution; without replacement every row is distinct, zeros never drawn
    rows = np.array([[1.0, 2.0, 3.0, 4.0, 0.0], [0.0, 0.0, 1.0, 1.0, 1.0]])
    lib.call(f"TH{real}Tensor_multinomial", None, out, gen, lib.from_numpy(rows, real), C.c_int(3), C.c_int(0))
    s = out.numpy()
    assert s.shape == (2, 3)
    assert len(set(s[0])) == 3 and 4 not in s[0]
    assert sorted(s[1]) == [2, 3, 4]


def test_multinomial_without_replacement_first_draw_frequencies(lib, gen):
    # the first draw follows the weights; the full draw of all positive categories is a permutation
    seed(lib, gen, 56)
    w = np.array([1.0, 3.0, 0.0, 6.0])
    probs = np.tile(w, (20_000, 1))
    out = lib.new("Long")
    lib.call("THDoubleTensor_multinomial", None, out, gen, lib.from_numpy(probs, "Double"), C.c_int(3), C.c_int(0))
    s = out.numpy()
    check_frequencies(s[:, 0], w)
    assert np.all(np.sort(s, axis=1) == [0, 1, 3])


@pytest.mark.parametrize("real", FLOATS)
def test_multinomial_alias(lib, gen, real):
    seed(lib, gen, 57)
    w = np.array([0.1, 0.0, 0.3, 0.05, 0.55])
    J, q = lib.new("Long"), lib.new(real)
    lib.call(f"TH{real}Tensor_multinomialAliasSetup", None, lib.from_numpy(w, real), J, q)
    assert J.numpy().shape == (5,) and q.numpy().shape == (5,)
    out = zeros(lib, "Long", (400, 500))
    lib.call(f"TH{real}Tensor_multinomialAliasDraw", None, out, gen, J, q)
    check_frequencies(out.numpy(), w)


# ------------------------------------------------------------------------------------------
# reproducibility


def test_same_seed_same_tensor_for_any_thread_count(lib, gen):
    def run():
        res = []
        seed(lib, gen, 2718)
        for real in ("Float", "Double", "Half"):
            t = zeros(lib, real, (300, 400))  # big enough for the parallel paths
            lib.call(f"TH{real}Tensor_normal", None, t, gen, C.c_double(0), C.c_double(1))
            res.append(t.numpy())
            lib.call(f"TH{real}Tensor_uniform", None, t, gen, C.c_double(-1), C.c_double(1))
            res.append(t.numpy())
        b = zeros(lib, "Byte", (300, 400))
        lib.call("THByteTensor_bernoulli", None, b, gen, C.c_double(0.5))
        res.append(b.numpy())
        p = lib.new("Long")
        lib.call("THLongTensor_randperm", None, p, gen, C.c_int64(100_000))
        res.append(p.numpy())
        m = lib.new("Long")
        lib.call("THDoubleTensor_multinomial", None, m, gen, lib.from_numpy(np.ones((50, 40)), "Double"),
                 C.c_int(40), C.c_int(0))
        res.append(m.numpy())
        return res

    try:
        lib.call("THSetNumThreads", None, C.c_int(1))
        one = run()
        lib.call("THSetNumThreads", None, C.c_int(2))
        two = run()
    finally:
        lib.call("THInferNumThreads", None)
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)


def test_rng_state_round_trip_and_copy(lib, gen):
    seed(lib, gen, 1)
    for _ in range(700):
        lib.call("THRandom_random", C.c_uint64, gen)
    draw(lib, gen, "normal", 0, 1)  # a cached normal is part of the state
    st = lib.new("Byte")
    lib.call("THByteTensor_getRNGState", None, gen, st)
    a = [draw(lib, gen, "normal", 0, 1) for _ in range(5)]
    lib.call("THByteTensor_setRNGState", None, gen, st)
    assert [draw(lib, gen, "normal", 0, 1) for _ in range(5)] == a
    other = C.c_void_p(lib.call("THGenerator_new", C.c_void_p))
    try:
        lib.call("THByteTensor_setRNGState", None, gen, st)
        assert lib.call("THGenerator_copy", C.c_void_p, other, gen) == other.value
        assert lib.call("THGenerator_isValid", C.c_int, other) == 1
        assert [draw(lib, other, "normal", 0, 1) for _ in range(5)] == a
    finally:
        lib.dll.THGenerator_free(other)


# ------------------------------------------------------------------------------------------
# errors


def test_invalid_parameters_raise_and_change_nothing(lib, gen):
    seed(lib, gen, 10)
    before = rng_state(lib, gen)
    d = lib.from_numpy(np.arange(6.0), "Double")
    L = lib.from_numpy(np.arange(4), "Long")
    B = lib.from_numpy(np.arange(4), "Byte")
    D = C.c_double
    bad = [
        ("THRandom_normal", C.c_double, gen, D(0), D(0)),
        ("THRandom_logNormal", C.c_double, gen, D(0), D(-1)),
        ("THRandom_bernoulli", C.c_int, gen, D(1.5)),
        ("THRandom_geometric", C.c_int, gen, D(0)),
        ("THRandom_exponential", C.c_double, gen, D(0)),
        ("THRandom_uniform", C.c_double, gen, D(1), D(0)),
        ("THDoubleTensor_normal", None, d, gen, D(0), D(-2)),
        ("THDoubleTensor_normal", None, d, gen, D(0), D(float("nan"))),
        ("THDoubleTensor_bernoulli", None, d, gen, D(-0.1)),
        ("THDoubleTensor_geometric", None, d, gen, D(1.5)),
        ("THDoubleTensor_exponential", None, d, gen, D(-1)),
        ("THDoubleTensor_cauchy", None, d, gen, D(0), D(0)),
        ("THDoubleTensor_uniform", None, d, gen, D(0), D(float("inf"))),
        ("THDoubleTensor_clampedRandom", None, d, gen, C.c_int64(3), C.c_int64(3)),
        ("THDoubleTensor_cappedRandom", None, d, gen, C.c_int64(0)),
        ("THDoubleTensor_bernoulli_DoubleTensor", None, d, gen, lib.from_numpy(np.full(6, 1.1), "Double")),
        ("THDoubleTensor_bernoulli_FloatTensor", None, d, gen, lib.from_numpy(np.full(5, 0.5), "Float")),
        ("THDoubleTensor_normal_stddevs", None, d, gen, D(0), lib.from_numpy(np.array([1.0, -1.0]), "Double")),
        ("THDoubleTensor_randperm", None, d, gen, C.c_int64(0)),
        ("THByteTensor_randperm", None, B, gen, C.c_int64(300)),
        ("THDoubleTensor_multinomial", None, L, gen, lib.from_numpy(np.array([1.0, -1.0]), "Double"), C.c_int(1), C.c_int(1)),
        ("THDoubleTensor_multinomial", None, L, gen, lib.from_numpy(np.zeros(3), "Double"), C.c_int(1), C.c_int(1)),
        ("THDoubleTensor_multinomial", None, L, gen, lib.from_numpy(np.ones(3), "Double"), C.c_int(0), C.c_int(1)),
        ("THDoubleTensor_multinomial", None, L, gen, lib.from_numpy(np.ones(3), "Double"), C.c_int(4), C.c_int(0)),
        ("THDoubleTensor_multinomial", None, L, gen, lib.from_numpy(np.array([1.0, 0, 0]), "Double"), C.c_int(2), C.c_int(0)),
        ("THDoubleTensor_multinomialAliasSetup", None, lib.from_numpy(np.array([1.0, float("nan")]), "Double"), L, d),
        ("THDoubleTensor_multinomialAliasDraw", None, L, gen, lib.from_numpy(np.array([0, 7]), "Long"),
         lib.from_numpy(np.array([0.5, 0.5]), "Double")),
        ("THByteTensor_setRNGState", None, gen, lib.from_numpy(np.zeros(STATE_BYTES), "Byte")),
        ("THByteTensor_setRNGState", None, gen, lib.from_numpy(np.zeros(10), "Byte")),
        ("THRandom_random", C.c_uint64, None),
    ]
    for name, restype, *args in bad:
        with pytest.raises(THError):
            lib.call(name, restype, *args)
    np.testing.assert_array_equal(d.numpy(), np.arange(6.0))
    np.testing.assert_array_equal(L.numpy(), np.arange(4))
    np.testing.assert_array_equal(B.numpy(), np.arange(4))
    np.testing.assert_array_equal(rng_state(lib, gen), before)
    assert lib.call("THRandom_random", C.c_uint64, gen) == RefMT(10).random()


def test_tampered_state_is_rejected(lib, gen):
    seed(lib, gen, 1)
    st = rng_state(lib, gen)
    for off, val in [(12, 0), (8, 200), (24 + 4, 1)]:  # seeded, left/next out of range, 33-bit word
        bad = st.copy()
        if off == 8:
            bad[8:12] = np.frombuffer(np.int32(300).tobytes(), np.uint8)
            bad[16:24] = np.frombuffer(np.uint64(400).tobytes(), np.uint8)
        else:
            bad[off] = val
        with pytest.raises(THError):
            lib.call("THByteTensor_setRNGState", None, gen, lib.from_numpy(bad, "Byte"))
    np.testing.assert_array_equal(rng_state(lib, gen), st)
