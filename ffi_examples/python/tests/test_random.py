"""Random numbers: th.Generator reproducibility (exact) and the distributions (loosely: moments,
a Kolmogorov-Smirnov distance, ranges)."""

import math

import numpy as np
import pytest

import th

N = 20000


def ks_normal(x):
    x = np.sort(x)
    cdf = 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))
    i = np.arange(1, len(x) + 1)
    return max(np.max(i / len(x) - cdf), np.max(cdf - (i - 1) / len(x)))


def test_seed_reproduces_exactly():
    a = th.rand(100, generator=th.Generator(42)).numpy()
    b = th.rand(100, generator=th.Generator(42)).numpy()
    c = th.rand(100, generator=th.Generator(43)).numpy()
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    g = th.Generator(7)
    x = th.randn(10, generator=g).numpy()
    g.manual_seed(7)
    assert np.array_equal(th.randn(10, generator=g).numpy(), x)
    assert g.initial_seed() == 7
    s = g.get_state()
    y = th.randint(0, 100, (20,), generator=g).numpy()
    g.set_state(s)
    assert np.array_equal(th.randint(0, 100, (20,), generator=g).numpy(), y)
    th.manual_seed(5)
    u = th.rand(5).numpy()
    th.manual_seed(5)
    assert np.array_equal(th.rand(5).numpy(), u)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_distributions(dtype):
    g = th.Generator(123)
    u = th.rand(N, generator=g, dtype=dtype).numpy()
    assert u.dtype == np.dtype(dtype) and u.min() >= 0 and u.max() < 1
    assert abs(u.mean() - 0.5) < 0.01 and abs(u.var() - 1 / 12) < 0.005
    assert np.max(np.abs(np.sort(u) - (np.arange(N) + 0.5) / N)) < 0.015  # KS against U(0, 1)
    n = th.randn(N, generator=g, dtype=dtype).numpy()
    assert abs(n.mean()) < 0.03 and abs(n.std() - 1) < 0.03 and ks_normal(n) < 0.015
    t = th.empty(N, dtype=dtype).uniform_(-2, 3, generator=g).numpy()
    assert t.min() >= -2 and t.max() < 3 and abs(t.mean() - 0.5) < 0.05
    t = th.empty(N, dtype=dtype).normal_(10, 2, generator=g).numpy()
    assert abs(t.mean() - 10) < 0.1 and abs(t.std() - 2) < 0.1
    b = th.empty(N, dtype=dtype).bernoulli_(0.3, generator=g).numpy()
    assert set(np.unique(b)) <= {0, 1} and abs(b.mean() - 0.3) < 0.02
    e = th.empty(N, dtype=dtype).exponential_(2.0, generator=g).numpy()
    assert e.min() >= 0 and abs(e.mean() - 0.5) < 0.03
    s = th.normal(1.0, 0.5, (N,), generator=g, dtype=dtype).numpy()
    assert abs(s.mean() - 1) < 0.03


@pytest.mark.parametrize("dtype", ["uint8", "int16", "int32", "int64", "float32"])
def test_integers(dtype):
    g = th.Generator(9)
    r = th.randint(-3 if dtype != "uint8" else 0, 7, (N,), generator=g, dtype=dtype).numpy()
    lo = -3 if dtype != "uint8" else 0
    assert r.min() == lo and r.max() == 6
    counts = np.bincount((r - lo).astype(np.int64))
    assert counts.min() > N / (7 - lo) * 0.85
    c = th.empty(N, dtype=dtype).random_(5, generator=g).numpy()
    assert c.min() == 0 and c.max() == 4
    p = th.randperm(50, generator=g)
    assert sorted(p.tolist()) == list(range(50)) and p.tolist() != list(range(50))


def test_device_generator_rule():
    if not th.cuda.is_available():
        pytest.skip("no CUDA device")
    with pytest.raises(TypeError, match="generator"):
        th.zeros(3, device="cuda").uniform_(generator=th.Generator(1))
