"""th: Python bindings (ctypes) for libth, a tensor engine with Torch TH's C ABI.

    import th, numpy as np
    t = th.tensor([[1.0, 2.0], [3.0, 4.0]])
    a = np.asarray(t)                 # zero-copy
    u = th.from_numpy(np.arange(6.0)) # zero-copy, keeps the array alive
    v = np.from_dlpack(t)             # DLPack, zero-copy
    t @ t.t(); t[t > 2]; th.where(t > 2, t, 0); th.save(t, "t.npy")
    d = th.tensor([1.0, 2.0], device="cuda")   # on a CUDA device (th.cuda.is_available())
    (d * 2).cpu().numpy()
"""

from ._lib import (
    DTYPES,
    DType,
    THBufferError,
    THCudaError,
    THError,
    THIndexError,
    THMemoryError,
    THTypeError,
    THValueError,
    as_dtype,
    bfloat16,
    bool_,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
)
from . import cuda
from .cuda import device
from .tensor import Tensor, arange, empty, from_dlpack, from_numpy, full, full_like, ones, tensor, zeros
from ._ops import broadcast_shapes, cat, stack, where
from ._format import array2string
from .random import Generator, default_generator, manual_seed, normal, rand, randint, randn, randperm
from .serialization import load, save
from ._api import *  # noqa: F401,F403  (function forms: th.matmul(a, b), th.sum(t, dim), ...)
from ._api import __all__ as _api_all

__version__ = "0.1.0"

__all__ = [
    "DTYPES", "DType", "THBufferError", "THCudaError", "THError", "THIndexError", "THMemoryError", "THTypeError", "THValueError",
    "Tensor", "arange", "as_dtype", "bfloat16", "bool_", "cuda", "device", "empty", "float16", "float32", "float64", "from_dlpack",
    "from_numpy", "full", "full_like", "int8", "int16", "int32", "int64", "ones", "tensor", "uint8", "zeros",
    "Generator", "array2string", "broadcast_shapes", "cat", "default_generator", "load", "manual_seed", "normal",
    "rand", "randint", "randn", "randperm", "save", "stack", "where",
] + list(_api_all)
