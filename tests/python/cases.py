"""Random shapes, views and values for the differential tests."""

import numpy as np

from thlib import DTYPES, bf16_to_f32, f32_to_bf16


def random_shape(rng, max_dims=5, max_size=6):
    nd = int(rng.integers(1, max_dims + 1))
    return tuple(int(rng.integers(1, max_size + 1)) for _ in range(nd))


def random_values(rng, real, shape, low=None, high=None, nonzero=False):
    """Values of dtype `real` (BFloat16 as float32 values exactly representable in bf16)."""
    npdt = DTYPES[real][0]
    if real == "Bool":
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if real in ("Float", "Double", "Half", "BFloat16"):
        lo, hi = (-4.0 if low is None else low), (4.0 if high is None else high)
        v = rng.uniform(lo, hi, size=shape)
        if nonzero:
            v = np.where(np.abs(v) < 0.25, 0.5, v)
        if real == "BFloat16":
            return bf16_to_f32(f32_to_bf16(v.astype(np.float32)))
        return v.astype(npdt)
    info = np.iinfo(npdt)
    lo = info.min if low is None else max(low, info.min)
    hi = info.max if high is None else min(high, info.max)
    v = rng.integers(lo, hi, size=shape, endpoint=True, dtype=np.int64).astype(npdt)
    if nonzero:
        v = np.where(v == 0, npdt(1), v)
    return v


def random_view(rng, a):
    """`a`'s values presented as a random non-contiguous numpy view: a transposed copy
    transposed back, and/or every other element of a bigger array."""
    kind = int(rng.integers(0, 3))
    if kind == 0 or a.ndim == 0:
        return a
    if kind == 1:
        perm = rng.permutation(a.ndim)
        inv = np.argsort(perm)
        return np.ascontiguousarray(a.transpose(perm)).transpose(inv)
    big = np.zeros(tuple(2 * n for n in a.shape), dtype=a.dtype)
    sl = tuple(slice(0, 2 * n, 2) for n in a.shape)
    big[sl] = a
    return big[sl]


def broadcast_partner(rng, shape):
    """A shape that broadcasts with `shape`: some dims set to 1, maybe fewer leading dims."""
    s = [1 if rng.random() < 0.3 else n for n in shape]
    drop = int(rng.integers(0, len(s)))
    return tuple(s[drop:]) if rng.random() < 0.3 else tuple(s)


def round_to(real, x):
    """Round float64/float32 reference values to what dtype `real` stores."""
    if real == "Half":
        return np.asarray(x, dtype=np.float32).astype(np.float16)
    if real == "BFloat16":
        return bf16_to_f32(f32_to_bf16(np.asarray(x, dtype=np.float32)))
    return np.asarray(x).astype(DTYPES[real][0])
