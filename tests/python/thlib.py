"""A small ctypes binding of libth for the numpy differential tests.

`Lib()` loads libth (TH_LIB, else target/debug/libth.so); `lib.from_numpy(a, "Float")` makes a TH
tensor sharing nothing with `a` but with the same shape and element strides (so transposed,
sliced and broadcast numpy views become the matching TH views); `lib.to_numpy(t)` copies back.
Every call goes through `lib.call(name, restype, *args)`, which raises `THError` with the
library's message when the call fails.
"""

import ctypes as C
import os

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# TH name -> (numpy dtype used for data, ctypes type of a scalar argument)
DTYPES = {
    "Byte": (np.uint8, C.c_uint8),
    "Char": (np.int8, C.c_int8),
    "Short": (np.int16, C.c_int16),
    "Int": (np.int32, C.c_int32),
    "Long": (np.int64, C.c_int64),
    "Float": (np.float32, C.c_float),
    "Double": (np.float64, C.c_double),
    "Half": (np.float16, C.c_uint16),
    "BFloat16": (np.uint16, C.c_uint16),  # raw bits; see bf16_to_f32 / f32_to_bf16
    "Bool": (np.bool_, C.c_uint8),
}
FLOATS = ["Float", "Double", "Half", "BFloat16"]
INTS = ["Byte", "Char", "Short", "Int", "Long"]
NUMERIC = INTS + FLOATS


def bf16_to_f32(bits):
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16(x):
    """Round-to-nearest-even float32 -> bfloat16 bits (NaN kept quiet)."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(x, dtype=np.float32))
    return np.where(nan, np.uint16(0x7FC0), r).astype(np.uint16)


class THError(Exception):
    def __init__(self, code, msg):
        super().__init__(f"[{code}] {msg}")
        self.code = code
        self.msg = msg


class Lib:
    def __init__(self, path=None):
        path = path or os.environ.get("TH_LIB") or os.path.join(ROOT, "target", "debug", "libth.so")
        self.dll = C.CDLL(path)
        self.dll.THGetLastError.restype = C.c_char_p
        self.dll.THGetLastErrorCode.restype = C.c_int
        self._fns = {}

    def fn(self, name, restype, argtypes):
        key = (name, restype, tuple(argtypes))
        f = self._fns.get(key)
        if f is None:
            f = self.dll[name]  # a fresh function object per signature (getattr would share one)
            f.restype = restype
            f.argtypes = list(argtypes)
            self._fns[key] = f
        return f

    def call(self, name, restype, *args):
        """Calls `name` with ctypes-typed `args`; raises THError if it records an error."""
        argtypes = [C.c_void_p if (a is None or isinstance(a, Tensor)) else type(a) for a in args]
        raw = [a.ptr if isinstance(a, Tensor) else a for a in args]
        self.dll.THClearLastError()
        r = self.fn(name, restype, argtypes)(*raw)
        code = self.dll.THGetLastErrorCode()
        if code:
            raise THError(code, self.dll.THGetLastError().decode())
        return r

    def scalar(self, real, x):
        """A Python number as the C scalar argument type of dtype `real`."""
        ct = DTYPES[real][1]
        if real == "Half":
            return ct(int(np.float16(x).view(np.uint16)))
        if real == "BFloat16":
            return ct(int(f32_to_bf16(np.float32(x))))
        if real == "Bool":
            return ct(1 if x else 0)
        return ct(x)

    def unscalar(self, real, v):
        if real == "Half":
            return float(np.uint16(v).view(np.float16))
        if real == "BFloat16":
            return float(bf16_to_f32(np.uint16(v)))
        return v

    def new(self, real):
        return Tensor(self, real, self.call(f"TH{real}Tensor_new", C.c_void_p))

    def from_numpy(self, a, real):
        """A TH tensor with `a`'s shape, element strides (>= 0) and values."""
        npdt = DTYPES[real][0]
        a = np.asarray(a)
        if real == "BFloat16" and a.dtype != np.uint16:
            a = f32_to_bf16(a) if a.ndim else f32_to_bf16(a)
        else:
            a = a.astype(npdt, copy=False) if a.dtype != npdt else a
        if a.ndim == 0:
            a = a.reshape(1)
        isz = a.itemsize
        assert all(s >= 0 for s in a.strides), "negative strides are not supported"
        span = 1 + sum((n - 1) * (s // isz) for n, s in zip(a.shape, a.strides)) if a.size else 0
        # the bytes a's view spans, copied into a fresh storage
        base = np.lib.stride_tricks.as_strided(a, shape=(span,), strides=(isz,)) if a.size else a.reshape(0)
        buf = np.ascontiguousarray(base)
        st = self.call(f"TH{real}Storage_newWithSize", C.c_void_p, C.c_ssize_t(span))
        if span:
            self.call(f"TH{real}Storage_rawCopy", None, C.c_void_p(st), C.c_void_p(buf.ctypes.data))
        nd = a.ndim
        sizes = (C.c_int64 * nd)(*a.shape)
        strides = (C.c_int64 * nd)(*[s // isz for s in a.strides])
        t = self.call(f"TH{real}Tensor_new", C.c_void_p)
        self.call(f"TH{real}Tensor_setStorageNd", None, C.c_void_p(t), C.c_void_p(st), C.c_ssize_t(0),
                  C.c_int(nd), sizes, strides)
        self.call(f"TH{real}Storage_free", None, C.c_void_p(st))
        return Tensor(self, real, t)

    def to_numpy(self, t):
        """A copy of `t`'s elements as a numpy array of its shape (BFloat16 as float32)."""
        real = t.real
        nd = t.ndim()
        shape = [t.size(d) for d in range(nd)]
        strides = [t.stride(d) for d in range(nd)]
        npdt = np.dtype(DTYPES[real][0])
        if nd == 0:
            return np.zeros((0,), dtype=npdt)
        p = self.call(f"TH{real}Tensor_data", C.c_void_p, C.c_void_p(t.ptr))
        span = 1 + sum((n - 1) * s for n, s in zip(shape, strides))
        raw = np.ctypeslib.as_array((C.c_uint8 * (span * npdt.itemsize)).from_address(p))
        flat = raw.view(npdt)
        out = np.lib.stride_tricks.as_strided(flat, shape=shape, strides=[s * npdt.itemsize for s in strides]).copy()
        if real == "BFloat16":
            out = bf16_to_f32(out)
        return out


class Tensor:
    """An owned TH tensor handle (freed when garbage-collected)."""

    def __init__(self, lib, real, ptr):
        self.lib, self.real, self.ptr = lib, real, ptr

    def __del__(self):
        if self.ptr:
            self.lib.dll[f"TH{self.real}Tensor_free"](C.c_void_p(self.ptr))
            self.ptr = None

    def ndim(self):
        return self.lib.call(f"TH{self.real}Tensor_nDimension", C.c_int, C.c_void_p(self.ptr))

    def size(self, d):
        return self.lib.call(f"TH{self.real}Tensor_size", C.c_int64, C.c_void_p(self.ptr), C.c_int(d))

    def stride(self, d):
        return self.lib.call(f"TH{self.real}Tensor_stride", C.c_int64, C.c_void_p(self.ptr), C.c_int(d))

    def numpy(self):
        return self.lib.to_numpy(self)
