"""Random numbers: `th.Generator` (a THGenerator), the in-place samplers of `th.Tensor`
(`uniform_`, `normal_`, `bernoulli_`, `random_`, `exponential_`, `geometric_`, `cauchy_`,
`log_normal_`) and the constructors `th.rand`, `th.randn`, `th.randint`, `th.randperm`.

Every sampler takes `generator=`; without one it uses `th.default_generator` (seed it with
`th.manual_seed`). A seed fixes the sequence exactly. Device tensors draw from THC's per-device
generator (`THCRandom_*`), which takes no THGenerator: passing `generator=` for a device tensor
is an error.
"""

import ctypes as C

from . import _lib as L
from . import tensor as _T
from ._lib import THTypeError

from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    from .tensor import Tensor

P = C.c_void_p
_new = L.fn("THGenerator_new", P, [])
_free = L.fn("THGenerator_free", None, [P])


class Generator:
    """A random generator (libth's THGenerator: a Mersenne Twister, torch7's). `Generator(seed)`
    is seeded with `seed` (THRandom_manualSeed); `Generator()` from /dev/urandom."""

    __slots__ = ("_h",)

    def __init__(self, seed: Optional[int] = None) -> None:
        self._h = None
        self._h = L.call("THGenerator_new", P, [])
        if seed is not None:
            self.manual_seed(seed)

    def manual_seed(self, seed: int) -> "Generator":
        """Restarts the sequence from `seed` (an int below 2**64). Returns self."""
        L.call("THRandom_manualSeed", None, [P, C.c_uint64], self._h, int(seed) & (2**64 - 1))
        return self

    def seed(self):
        """Reseeds from /dev/urandom; returns the new seed (THRandom_seed)."""
        return L.call("THRandom_seed", C.c_uint64, [P], self._h)

    def initial_seed(self):
        """The seed the sequence started from (THRandom_initialSeed)."""
        return L.call("THRandom_initialSeed", C.c_uint64, [P], self._h)

    def get_state(self):
        """A copy of the whole state (a new Generator: THGenerator_copy)."""
        g = Generator()
        L.call("THGenerator_copy", P, [P, P], g._h, self._h)
        return g

    def set_state(self, state):
        """Restores a state from `get_state()` (THGenerator_copy). Returns self."""
        L.call("THGenerator_copy", P, [P, P], self._h, state._h)
        return self

    @property
    def handle(self):
        return self._h

    def __del__(self):
        h = getattr(self, "_h", None)
        if h:
            self._h = None
            try:
                _free(h)
            except Exception:
                pass


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Seeds `th.default_generator`; returns it."""
    return default_generator.manual_seed(seed)


def _gen(t, generator):
    if t._dev is not None:
        if generator is not None:
            raise THTypeError("device tensors draw from THC's per-device generator: generator= is for host tensors")
        return ()
    return ((generator or default_generator)._h,)


class RandomMixin:
    """In-place samplers of `th.Tensor` (th/random.py)."""

    __slots__ = ()

    def _sample(self, name, argtypes, *args, generator=None):
        self._need(name)
        g = _gen(self, generator)
        self._c(name, None, [P] + [P] * len(g) + argtypes, self.handle, *g, *args)
        return self

    def uniform_(self, a=0.0, b=1.0, *, generator=None):
        """Fills with uniform samples in [a, b) (TH{Real}Tensor_uniform; float dtypes)."""
        return self._sample("uniform", [C.c_double, C.c_double], float(a), float(b), generator=generator)

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        """Fills with normal(mean, std) samples (TH{Real}Tensor_normal; float dtypes)."""
        return self._sample("normal", [C.c_double, C.c_double], float(mean), float(std), generator=generator)

    def bernoulli_(self, p=0.5, *, generator=None):
        """Fills with 1 (probability p) or 0 (TH{Real}Tensor_bernoulli)."""
        return self._sample("bernoulli", [C.c_double], float(p), generator=generator)

    def exponential_(self, lambd=1.0, *, generator=None):
        """Fills with exponential samples of rate `lambd` (TH{Real}Tensor_exponential)."""
        return self._sample("exponential", [C.c_double], float(lambd), generator=generator)

    def geometric_(self, p, *, generator=None):
        """Fills with geometric samples, torch7's convention P(X=i) = (1-p) p^(i-1)
        (TH{Real}Tensor_geometric)."""
        return self._sample("geometric", [C.c_double], float(p), generator=generator)

    def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
        """Fills with Cauchy samples (TH{Real}Tensor_cauchy)."""
        return self._sample("cauchy", [C.c_double, C.c_double], float(median), float(sigma), generator=generator)

    def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
        """Fills with log-normal samples (TH{Real}Tensor_logNormal)."""
        return self._sample("logNormal", [C.c_double, C.c_double], float(mean), float(std), generator=generator)

    def random_(self, low=None, high=None, *, generator=None):
        """Fills with integers: `random_()` the dtype's full range (TH{Real}Tensor_random),
        `random_(high)` [0, high) (cappedRandom), `random_(low, high)` [low, high)
        (clampedRandom)."""
        if low is None:
            return self._sample("random", [], generator=generator)
        if high is None:
            return self._sample("cappedRandom", [C.c_int64], int(low), generator=generator)
        return self._sample("clampedRandom", [C.c_int64, C.c_int64], int(low), int(high), generator=generator)


def _sized(shape, dtype, device):
    shape = _T._shape_arg(shape)
    return _T.empty(*shape, dtype=dtype, device=device)


def rand(*shape: int, generator: Optional[Generator] = None, dtype: Any = "float32", device: Any = None) -> "Tensor":
    """Uniform samples in [0, 1) of `shape` (uniform_)."""
    return _sized(shape, dtype, device).uniform_(0.0, 1.0, generator=generator)


def randn(*shape: int, generator: Optional[Generator] = None, dtype: Any = "float32", device: Any = None) -> "Tensor":
    """Standard normal samples of `shape` (normal_)."""
    return _sized(shape, dtype, device).normal_(0.0, 1.0, generator=generator)


def randint(low: int, high: Optional[int] = None, size: Any = (1,), *, generator: Optional[Generator] = None,
            dtype: Any = "int64", device: Any = None) -> "Tensor":
    """Integers in [low, high) (or [0, low) without `high`) of shape `size` (clampedRandom)."""
    if high is None:
        low, high = 0, low
    size = (size,) if isinstance(size, int) else tuple(size)
    return _sized(size, dtype, device).random_(low, high, generator=generator)


def randperm(n: int, *, generator: Optional[Generator] = None, dtype: Any = "int64") -> "Tensor":
    """A random permutation of 0..n-1 (TH{Real}Tensor_randperm)."""
    d = L.as_dtype(dtype)
    t = _T.Tensor._adopt(d.host_funcs.new(), d)
    t._c("randperm", None, [P, P, C.c_int64], t.handle, (generator or default_generator)._h, int(n))
    return t


def normal(mean, std, size, *, generator=None, dtype="float32", device=None):
    """Normal(mean, std) samples of shape `size`."""
    size = (size,) if isinstance(size, int) else tuple(size)
    return _sized(size, dtype, device).normal_(mean, std, generator=generator)
