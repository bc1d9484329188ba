"""ctypes helpers for the THC differential tests (test_thc.py): the same operation runs on TH host
tensors and on THC device tensors built from the same numpy values and the same layouts, and the
two results are compared element for element.

- `Thc(lib)`: a `THCState` plus `call(name, restype, *args)`, which passes the state first.
- `HostSide` / `DevSide`: one interface over the two families (`TH{R}Tensor_op(...)` vs
  `THCuda{R}Tensor_op(state, ...)`), so a test builds its operands and calls its op once per side.
- `Layout`: a random way of presenting a numpy value as a view (select / transposes / narrows /
  expand of a contiguous base), applied the same way to numpy, host and device tensors.
- `storage_of(side, t)`: a tensor's whole storage as numpy (raw element bits for BFloat16), read
  back through a contiguous storage copy, so results are compared without relying on strided
  device->host copies, and elements outside a view are checked to be untouched.
- `Groups`: which test groups could not run because the library lacks their functions.
"""

import ctypes as C
import os
from collections import defaultdict

import numpy as np
from thlib import DTYPES, THError, Tensor, bf16_to_f32

THC_REALS = ["Byte", "Char", "Short", "Int", "Long", "Float", "Double", "Half"]
ALL_REALS = THC_REALS + ["BFloat16", "Bool"]
FLOATS = ["Float", "Double", "Half", "BFloat16"]
INTS = ["Byte", "Char", "Short", "Int", "Long"]


def tname(real):
    """THC's tensor type name: THCudaTensor for Float, THCuda{Real}Tensor otherwise."""
    return "THCudaTensor" if real == "Float" else f"THCuda{real}Tensor"


def sname(real):
    return "THCudaStorage" if real == "Float" else f"THCuda{real}Storage"


def raw_dtype(real):
    """numpy dtype of a storage's elements (BFloat16 as its raw uint16 bits)."""
    return np.dtype(DTYPES[real][0])


def as_values(real, raw):
    """Raw storage elements as comparable numpy values (BFloat16 widened to float32)."""
    return bf16_to_f32(raw) if real == "BFloat16" else np.asarray(raw)


def i64s(xs):
    return (C.c_int64 * max(len(xs), 1))(*xs)


class Thc:
    """A THCState on the loaded library; `call` is `lib.call` with the state as first argument."""

    def __init__(self, lib):
        self.lib = lib
        self.state = C.c_void_p(lib.call("THCState_alloc", C.c_void_p))
        lib.call("THCudaInit", None, self.state)

    def has(self, name):
        return hasattr(self.lib.dll, name)

    def call(self, name, restype, *args):
        return self.lib.call(name, restype, self.state, *args)

    def sync(self):
        self.call("THCudaSynchronize", None)


class DTensor(Tensor):
    """An owned THC tensor handle (freed with the state when garbage-collected)."""

    def __init__(self, thc, real, ptr):
        super().__init__(thc.lib, real, ptr)
        self.thc = thc

    def __del__(self):
        if self.ptr:
            self.lib.dll[f"{tname(self.real)}_free"](self.thc.state, C.c_void_p(self.ptr))
            self.ptr = None

    def ndim(self):
        return self.thc.call(f"{tname(self.real)}_nDimension", C.c_int, C.c_void_p(self.ptr))

    def size(self, d):
        return self.thc.call(f"{tname(self.real)}_size", C.c_int64, C.c_void_p(self.ptr), C.c_int(d))

    def stride(self, d):
        return self.thc.call(f"{tname(self.real)}_stride", C.c_int64, C.c_void_p(self.ptr), C.c_int(d))


class HostSide:
    """TH's host family: `TH{R}Tensor_op(args)`."""

    kind = "host"

    def __init__(self, lib):
        self.lib = lib

    def fn(self, real, op):
        return f"TH{real}Tensor_{op}"

    def sfn(self, real, op):
        return f"TH{real}Storage_{op}"

    def call(self, real, op, restype, *args):
        return self.lib.call(self.fn(real, op), restype, *args)

    def scall(self, real, op, restype, *args):
        return self.lib.call(self.sfn(real, op), restype, *args)

    def has(self, real, op):
        return hasattr(self.lib.dll, self.fn(real, op))

    def wrap(self, real, ptr):
        return Tensor(self.lib, real, ptr)

    def new(self, real):
        return self.lib.new(real)

    def storage(self, real, raw):
        """A new storage (+1, raw pointer) holding the 1-d raw array."""
        raw = np.ascontiguousarray(raw, dtype=raw_dtype(real))
        st = self.lib.call(f"TH{real}Storage_newWithSize", C.c_void_p, C.c_ssize_t(raw.size))
        if raw.size:
            self.lib.call(f"TH{real}Storage_rawCopy", None, C.c_void_p(st), C.c_void_p(raw.ctypes.data))
        return st

    def storage_numpy(self, real, st):
        n = self.scall(real, "size", C.c_ssize_t, C.c_void_p(st))
        dt = raw_dtype(real)
        if n == 0:
            return np.zeros(0, dtype=dt)
        p = self.scall(real, "data", C.c_void_p, C.c_void_p(st))
        return np.ctypeslib.as_array((C.c_uint8 * (n * dt.itemsize)).from_address(p)).view(dt).copy()

    def free_storage(self, real, st):
        self.scall(real, "free", None, C.c_void_p(st))


class DevSide(HostSide):
    """THC's device family: `THCuda{R}Tensor_op(state, args)`; storages filled from host ones."""

    kind = "device"

    def __init__(self, thc):
        super().__init__(thc.lib)
        self.thc = thc

    def fn(self, real, op):
        return f"{tname(real)}_{op}"

    def sfn(self, real, op):
        return f"{sname(real)}_{op}"

    def call(self, real, op, restype, *args):
        return self.thc.call(self.fn(real, op), restype, *args)

    def scall(self, real, op, restype, *args):
        return self.thc.call(self.sfn(real, op), restype, *args)

    def wrap(self, real, ptr):
        return DTensor(self.thc, real, ptr)

    def new(self, real):
        return DTensor(self.thc, real, self.call(real, "new", C.c_void_p))

    def storage(self, real, raw):
        host = HostSide(self.lib)
        hs = host.storage(real, raw)
        ds = self.scall(real, "newWithSize", C.c_void_p, C.c_ssize_t(np.size(raw)))
        self.scall(real, "copyCPU", None, C.c_void_p(ds), C.c_void_p(hs))
        host.free_storage(real, hs)
        return ds

    def storage_numpy(self, real, st):
        host = HostSide(self.lib)
        n = self.scall(real, "size", C.c_ssize_t, C.c_void_p(st))
        hs = self.lib.call(f"TH{real}Storage_newWithSize", C.c_void_p, C.c_ssize_t(n))
        try:
            self.lib.call(f"TH{real}Storage_copyCuda", None, self.thc.state, C.c_void_p(hs), C.c_void_p(st))
            return host.storage_numpy(real, hs)
        finally:
            host.free_storage(real, hs)

    def free_storage(self, real, st):
        self.scall(real, "free", None, C.c_void_p(st))


def on_storage(side, real, st, offset, sizes, strides):
    """A new tensor of `side` viewing storage `st` (retained) at offset/sizes/strides."""
    t = side.new(real)
    side.call(real, "setStorageNd", None, t, C.c_void_p(st), C.c_ssize_t(offset), C.c_int(len(sizes)),
              i64s(sizes), i64s(strides))
    return t


def geometry(side, t):
    nd = side.call(t.real, "nDimension", C.c_int, t)
    sizes = tuple(side.call(t.real, "size", C.c_int64, t, C.c_int(d)) for d in range(nd))
    strides = tuple(side.call(t.real, "stride", C.c_int64, t, C.c_int(d)) for d in range(nd))
    off = side.call(t.real, "storageOffset", C.c_ssize_t, t)
    return sizes, strides, off


def storage_of(side, t):
    """The whole storage of `t` as a 1-d raw numpy array (empty when it has none)."""
    st = side.call(t.real, "storage", C.c_void_p, t)
    if not st:
        return np.zeros(0, dtype=raw_dtype(t.real))
    return side.storage_numpy(t.real, st)


def view_values(side, t):
    """`t`'s elements (raw) in its shape, read through its storage."""
    sizes, strides, off = geometry(side, t)
    raw = storage_of(side, t)
    if 0 in sizes:
        return np.zeros(sizes, dtype=raw.dtype)
    isz = raw.itemsize
    return np.lib.stride_tricks.as_strided(raw[off:], shape=sizes, strides=[s * isz for s in strides]).copy()


def contiguous(side, real, raw):
    """A contiguous tensor of `side` holding the raw numpy array: `newWithSize` + a copy from a
    host tensor on the device side, `setStorageNd` on a fresh storage on the host side."""
    raw = np.ascontiguousarray(raw, dtype=raw_dtype(real))
    if side.kind == "host":
        st = side.storage(real, raw.reshape(-1))
        t = on_storage(side, real, st, 0, raw.shape, [s // raw.itemsize for s in raw.strides])
        side.free_storage(real, st)
        return t
    host = HostSide(side.lib)
    h = contiguous(host, real, raw)
    size = side.lib.call("THLongStorage_newWithSize", C.c_void_p, C.c_ssize_t(raw.ndim))
    if raw.ndim:
        side.lib.call("THLongStorage_rawCopy", None, C.c_void_p(size), i64s(raw.shape))
    t = side.wrap(real, side.call(real, "newWithSize", C.c_void_p, C.c_void_p(size), None))
    side.lib.call("THLongStorage_free", None, C.c_void_p(size))
    side.call(real, f"copy{real}", None, t, h)
    return t


def expand(side, t, shape):
    """A new view of `t` broadcast to `shape` (the library's `expand`)."""
    size = side.lib.call("THLongStorage_newWithSize", C.c_void_p, C.c_ssize_t(len(shape)))
    side.lib.call("THLongStorage_rawCopy", None, C.c_void_p(size), i64s(shape))
    r = side.new(t.real)
    try:
        side.call(t.real, "expand", None, r, t, C.c_void_p(size))
    finally:
        side.lib.call("THLongStorage_free", None, C.c_void_p(size))
    return r


class Layout:
    """A random view of `shape`: a contiguous base, then (maybe) select on a leading dimension,
    transposes undoing a permutation, narrows of padded dimensions, and an expand of size-1
    dimensions (only when `expand`, as expanded views cannot be written)."""

    def __init__(self, rng, shape, kind=None, expand=True):
        kinds = ["contig", "perm", "narrow", "select", "mixed"] + (["expand"] if expand else [])
        self.kind = kind or kinds[int(rng.integers(len(kinds)))]
        k, shape, nd = self.kind, tuple(shape), len(shape)
        mixed = k == "mixed"
        ex = [d for d in range(nd) if (k == "expand" or (mixed and expand)) and rng.random() < 0.5]
        s1 = tuple(1 if d in ex else n for d, n in enumerate(shape))
        pad = [(int(rng.integers(0, 3)), int(rng.integers(0, 3))) if k in ("narrow", "mixed") else (0, 0) for _ in s1]
        s2 = tuple(n + a + b for n, (a, b) in zip(s1, pad))
        perm = list(rng.permutation(nd)) if k in ("perm", "mixed") and nd > 1 else list(range(nd))
        s3 = tuple(s2[p] for p in perm)
        self.sel = (int(rng.integers(2, 4)), 0) if k in ("select", "mixed") and nd else None
        if self.sel:
            self.sel = (self.sel[0], int(rng.integers(self.sel[0])))
        self.base_shape = ((self.sel[0],) if self.sel else ()) + s3
        self.shape, self.s1, self.pad, self.perm, self.ex = shape, s1, pad, perm, ex

    def numpy(self, base):
        v = base[self.sel[1]] if self.sel else base
        v = v.transpose(np.argsort(self.perm))
        v = v[tuple(slice(a, a + n) for n, (a, _) in zip(self.s1, self.pad))]
        return np.broadcast_to(v, self.shape) if self.ex else v

    def build(self, side, real, base):
        """The view on `side`, made from a contiguous tensor holding `base` with the library's
        own view functions (select, transpose, narrow, expand)."""
        t = contiguous(side, real, base)
        if self.sel:
            side.call(real, "select", None, t, None, C.c_int(0), C.c_int64(self.sel[1]))
        cur = list(self.perm)
        for i in range(len(cur)):
            j = cur.index(i)
            if j != i:
                side.call(real, "transpose", None, t, None, C.c_int(i), C.c_int(j))
                cur[i], cur[j] = cur[j], cur[i]
        for d, (n, (a, b)) in enumerate(zip(self.s1, self.pad)):
            if a or b:
                side.call(real, "narrow", None, t, None, C.c_int(d), C.c_int64(a), C.c_int64(n))
        return expand(side, t, self.shape) if self.ex else t


def ordered(real, raw):
    """Float bits mapped to integers whose order and differences are the values' ULP order."""
    vals = as_values(real, raw)
    if real == "BFloat16":
        vals = np.asarray(raw, dtype=np.uint16)
        mag, sign = (vals & 0x7FFF).astype(np.int64), (vals >> 15).astype(bool)
    else:
        u = vals.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[vals.itemsize])
        bits = vals.itemsize * 8
        mag = (u & ~np.array(1 << (bits - 1), dtype=u.dtype)).astype(np.int64)
        sign = (u >> (bits - 1)).astype(bool)
    return np.where(sign, -mag, mag)


def mismatch(real, got, want, ulps=0, atol=0.0):
    """None when raw arrays match (any NaN equals any NaN; floats within `ulps`, or within `atol`
    of each other), else a report of the first differing elements."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return f"shape {got.shape} != expected {want.shape}"
    if real in FLOATS:
        gv, wv = as_values(real, got), as_values(real, want)
        nan = np.isnan(gv) & np.isnan(wv)
        dist = np.abs(ordered(real, got) - ordered(real, want))
        with np.errstate(invalid="ignore"):  # inf - inf: NaN, never near
            near = (dist <= ulps) | (np.abs(gv.astype(np.float64) - wv.astype(np.float64)) <= atol)
        bad = ~nan & (~near | (np.isnan(gv) != np.isnan(wv)) | (np.isinf(gv) != np.isinf(wv)))
    else:
        gv, wv = got, want
        bad = got != want
    if not bad.any():
        return None
    idx = np.argwhere(bad)[:5]
    rows = ", ".join(f"{tuple(int(x) for x in i)}: got {gv[tuple(i)]!r} want {wv[tuple(i)]!r}" for i in idx)
    return f"{int(bad.sum())} of {bad.size} elements differ ({rows})"


class Groups:
    """Per test group, the functions the library lacks (so those tests were skipped)."""

    def __init__(self):
        self.missing = defaultdict(set)
        self.ran = defaultdict(int)

    def need(self, group, names, have):
        gone = [n for n in names if not have(n)]
        if gone:
            self.missing[group].update(gone)
            return f"{group}: not in libth yet: {', '.join(gone)}"
        self.ran[group] += 1
        return None

    def report(self, write):
        for g in sorted(self.missing):
            names = sorted(self.missing[g])
            shown = ", ".join(names[:8]) + (f", ... ({len(names)} functions)" if len(names) > 8 else "")
            write(f"{g}: {'partly run' if self.ran[g] else 'DID NOT RUN'} ({self.ran[g]} tests ran); missing: {shown}")


def emulated():
    return os.environ.get("TH_CUDA_EMULATOR") == "1"


def th_error_text(e):
    """A THError's message without the leading function name (host and device names differ)."""
    msg = e.msg if isinstance(e, THError) else str(e)
    return msg.split(": ", 1)[1] if ": " in msg else msg


_CTYPES = {"double": C.c_double, "float": C.c_float, "int64_t": C.c_int64, "long": C.c_long, "int": C.c_int,
           "int32_t": C.c_int32, "THBool": C.c_uint8, "int16_t": C.c_int16, "int8_t": C.c_int8, "uint8_t": C.c_uint8, "bool": C.c_bool,
           "struct THHalf": C.c_uint16, "THHalf": C.c_uint16, "struct THBFloat16": C.c_uint16, "THBFloat16": C.c_uint16}
_HEADER = None


def header_restype(name):
    """The ctypes return type of `name` as include/TH/TH.h declares it (None if not declared)."""
    global _HEADER
    if _HEADER is None:
        import re

        text = open(os.path.join(os.path.dirname(__file__), "..", "..", "include", "TH", "TH.h")).read()
        _HEADER = {m.group(2): m.group(1).strip() for m in re.finditer(r"^([A-Za-z_][\w ]*?)\s+\**(TH\w+)\(", text, re.M)}
    c = _HEADER.get(name)
    return _CTYPES.get(c) if c else None


def start_thc(lib):
    """A `Thc` on `lib`, or the module skipped (no device, TH_CUDA_EMULATOR unset) or failed
    (TH_CUDA_EMULATOR=1 but the library cannot start the emulator; TH_REQUIRE_DEVICE=1, which
    scripts/test_gpu.sh sets once it has found a device, but THCudaInit fails)."""
    import pytest
    from thlib import THError
    try:
        return Thc(lib)
    except (THError, AttributeError) as e:
        if emulated():
            pytest.fail(f"TH_CUDA_EMULATOR=1 but the library cannot start the CUDA emulator ({e}); build it with "
                        "`cargo build --features cuda-emulator` and point TH_LIB at target/debug/libth.so", pytrace=False)
        if os.environ.get("TH_REQUIRE_DEVICE") == "1":
            pytest.fail(f"TH_REQUIRE_DEVICE=1 but THCudaInit failed ({e})", pytrace=False)
        pytest.skip(f"no CUDA device: TH_CUDA_EMULATOR is unset and THCudaInit failed ({e})", allow_module_level=True)
