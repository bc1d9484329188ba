"""Loading libth and calling it: signatures, dtypes, and errors as Python exceptions."""

import ctypes as C
import os

from . import _dlpack_structs as S

_HERE = os.path.dirname(os.path.abspath(__file__))


def _find_library():
    env = os.environ.get("TH_LIB")
    if env:
        return env
    return os.path.join(_HERE, "libth.so")


dll = C.CDLL(_find_library())
dll.THGetLastError.restype = C.c_char_p
dll.THGetLastError.argtypes = []
dll.THGetLastErrorCode.restype = C.c_int
dll.THGetLastErrorCode.argtypes = []
dll.THClearLastError.restype = None
dll.THClearLastError.argtypes = []

# ---- errors ----

TH_ERR_NULL_ARG, TH_ERR_INVALID_ARG, TH_ERR_SIZE, TH_ERR_INDEX, TH_ERR_DTYPE, TH_ERR_ALLOC = 1, 2, 3, 4, 5, 6


class THError(RuntimeError):
    """An error reported by libth; `msg` is the library's message (THGetLastError), `code` its
    TH_ERR_* code."""

    def __init__(self, msg, code=0):
        super().__init__(msg)
        self.msg = msg
        self.code = code


class THValueError(THError, ValueError):
    pass


class THIndexError(THError, IndexError):
    pass


class THTypeError(THError, TypeError):
    pass


class THMemoryError(THError, MemoryError):
    pass


class THBufferError(THError, BufferError):
    pass


_BY_CODE = {
    TH_ERR_NULL_ARG: THValueError,
    TH_ERR_INVALID_ARG: THValueError,
    TH_ERR_SIZE: THValueError,
    TH_ERR_INDEX: THIndexError,
    TH_ERR_DTYPE: THTypeError,
    TH_ERR_ALLOC: THMemoryError,
}


def last_error(kind=None):
    """The pending library error as an exception (None if there is none)."""
    code = dll.THGetLastErrorCode()
    if not code:
        return None
    msg = (dll.THGetLastError() or b"unknown error").decode("utf-8", "replace")
    cls = kind or _BY_CODE.get(code, THError)
    return cls(msg, code)


_fns = {}


def fn(name, restype, argtypes):
    """A private foreign-function object for `name` with this signature (never shared)."""
    key = (name, restype, tuple(argtypes))
    f = _fns.get(key)
    if f is None:
        try:
            f = dll[name]
        except AttributeError:
            raise THTypeError(f"libth has no function {name}") from None
        f.restype = restype
        f.argtypes = list(argtypes)
        _fns[key] = f
    return f


def has(name):
    try:
        dll[name]
        return True
    except AttributeError:
        return False


def call(name, restype, argtypes, *args, kind=None):
    """Calls `name`; raises the library's error (as `kind` if given) when the call records one."""
    f = fn(name, restype, argtypes)
    dll.THClearLastError()
    r = f(*args)
    err = last_error(kind)
    if err is not None:
        dll.THClearLastError()
        raise err
    return r


_get_code = dll.THGetLastErrorCode


def raise_last(kind=None):
    """Raises the pending library error (and forgets it, so the next call starts clean)."""
    err = last_error(kind) or THError("libth reported an error without a message")
    dll.THClearLastError()
    raise err


def _checked(f, lead):
    """`f` with the error check after the call (and THC's NULL state first when `lead`).

    The binding keeps "no error pending" as an invariant (every error read is cleared), so the
    check costs one foreign call (THGetLastErrorCode) instead of a clear before and a read after."""
    get_code = _get_code
    if lead:
        def call_dev(*a):
            r = f(None, *a)
            if get_code():
                raise_last()
            return r
        return call_dev

    def call_host(*a):
        r = f(*a)
        if get_code():
            raise_last()
        return r
    return call_host


class Funcs:
    """The C functions of one family (`TH{Real}Tensor_*` or THC's `THCuda{Real}Tensor_*`) as
    checked Python callables, bound once: `F.cadd(r, a, 1.0, b)`. Names in `SIGS` resolve by
    attribute; anything else through `bind(name, restype, argtypes)`. Each callable is cached on
    the instance, so after the first call an op costs an attribute lookup, the foreign call and
    one error-code read."""

    def __init__(self, d, cuda):
        self._d = d
        self._cuda = cuda
        self._prefix = family(d, 0 if cuda else None) + "_"
        self._types = {
            "T": C.c_void_p, "r": d.ctype, "a": d.cuda_acc if cuda else d.acc, "i": C.c_int,
            "D": C.c_long if cuda else C.c_int, "l": C.c_int64, "f": C.c_double, "z": C.c_ssize_t,
            "P": C.POINTER(C.c_void_p), "s": C.c_char_p, "": None,
        }

    def bind(self, name, restype, argtypes):
        f = self.__dict__.get(name)
        if f is None:
            full = self._prefix + name
            try:
                raw = dll[full]
            except AttributeError:
                raise THTypeError(f"libth has no function {full}") from None
            raw.restype = restype
            raw.argtypes = ([C.c_void_p] if self._cuda else []) + list(argtypes)
            if name in UNCHECKED:
                f = (lambda *a: raw(None, *a)) if self._cuda else raw
            else:
                f = _checked(raw, self._cuda)
            self.__dict__[name] = f
        return f

    def has(self, name):
        return name in self.__dict__ or has(self._prefix + name)

    def __getattr__(self, name):
        if name == "free_raw":
            # `{family}_free` without the error check (freeing never fails), bound on first use
            # (a library without THC has no device family).
            f = fn(self._prefix + "free", None, [C.c_void_p] * (2 if self._cuda else 1))
            r = self.__dict__["free_raw"] = (lambda h: f(None, h)) if self._cuda else f
            return r
        sig = SIGS.get(name)
        if sig is None:
            raise AttributeError(name)
        ret, args = sig
        t = self._types
        return self.bind(name, t[ret], [t[x] for x in args.split(",")] if args else [])


# Signatures of the functions bound by attribute: (restype, argtypes) in tokens: T a tensor (or
# storage) pointer, r the dtype's scalar, a its accreal, i int, D a dimension (int in TH, long in
# THC), l int64, f double, P an array of tensor pointers, s a C string, "" void.
SIGS = {
    "new": ("T", ""), "newWithSize": ("T", "T,T"), "newClone": ("T", "T"), "newContiguous": ("T", "T"),
    "newWithTensor": ("T", "T"), "nDimension": ("i", "T"), "resizeAs": ("", "T,T"), "resize": ("", "T,T,T"),
    "fill": ("", "T,r"), "zero": ("", "T"), "isContiguous": ("i", "T"), "data": ("T", "T"),
    "add": ("", "T,T,r"), "sub": ("", "T,T,r"), "mul": ("", "T,T,r"), "div": ("", "T,T,r"),
    "cadd": ("", "T,T,r,T"), "csub": ("", "T,T,r,T"), "cmul": ("", "T,T,T"), "cdiv": ("", "T,T,T"),
    "sumall": ("a", "T"), "prodall": ("a", "T"), "meanall": ("a", "T"),
    "sum": ("", "T,T,D,i"), "prod": ("", "T,T,D,i"), "mean": ("", "T,T,D,i"),
    "clamp": ("", "T,T,r,r"), "cmaxValue": ("", "T,T,r"), "cminValue": ("", "T,T,r"),
    "cmax": ("", "T,T,T"), "cmin": ("", "T,T,T"), "pow": ("", "T,T,r"), "cpow": ("", "T,T,T"),
    "fmod": ("", "T,T,r"), "remainder": ("", "T,T,r"), "cfmod": ("", "T,T,T"), "cremainder": ("", "T,T,T"),
    "addmm": ("", "T,r,T,r,T,T"), "addmv": ("", "T,r,T,r,T,T"), "baddbmm": ("", "T,r,T,r,T,T"),
    "addr": ("", "T,r,T,r,T,T"), "dot": ("a", "T,T"),
    "maskedSelectBool": ("", "T,T,T"), "maskedFillBool": ("", "T,T,r"), "maskedCopyBool": ("", "T,T,T"),
    "indexSelect": ("", "T,T,i,T"), "indexCopy": ("", "T,i,T,T"), "indexFill": ("", "T,i,T,r"),
    "nonzero": ("", "T,T"), "catArray": ("", "T,P,i,i"), "sort": ("", "T,T,T,i,i"),
    "topk": ("", "T,T,T,l,i,i,i"), "copyByte": ("", "T,T"), "copyCudaByte": ("", "T,T"),
    "logicalall": ("i", "T"), "logicalany": ("i", "T"), "equal": ("i", "T,T"),
    "newWithSize1d": ("T", "l"), "newWithSize2d": ("T", "l,l"), "newWithSize3d": ("T", "l,l,l"),
    "newWithSize4d": ("T", "l,l,l,l"),
    "get1d": ("r", "T,l"), "set1d": ("", "T,l,r"), "newSelect": ("T", "T,i,l"), "newNarrow": ("T", "T,i,l,l"),
    "size": ("l", "T,i"), "stride": ("l", "T,i"), "storageOffset": ("z", "T"), "nElement": ("l", "T"),
    "storage": ("T", "T"), "newWithStorage": ("T", "T,z,T,T"),
    "cumsum": ("", "T,T,D"), "cumprod": ("", "T,T,D"), "norm": ("", "T,T,r,D,i"), "normall": ("a", "T,r"),
}
# Queries that cannot fail on a live tensor with an in-range dimension (every caller passes
# one): bound without the error check, which would cost as much as the query.
UNCHECKED = {"nDimension", "size", "stride", "storageOffset", "nElement", "isContiguous", "data", "storage"}

for _op in ("lt", "le", "gt", "ge", "eq", "ne"):
    SIGS[_op + "Value"] = ("", "T,T,r")
    SIGS[_op + "Tensor"] = ("", "T,T,T")


# ---- dtypes ----


class THHalf(C.Structure):
    _fields_ = [("x", C.c_uint16)]


class THBFloat16(C.Structure):
    _fields_ = [("x", C.c_uint16)]


def _f2h(v):
    return call("TH_float2half", THHalf, [C.c_float], float(v))


def _h2f(h):
    return call("TH_half2float", C.c_float, [THHalf], h)


def _f2b(v):
    return call("TH_float2bfloat16", THBFloat16, [C.c_float], float(v))


def _b2f(b):
    return call("TH_bfloat162float", C.c_float, [THBFloat16], b)


class DType:
    """A th dtype: `name` as in TH (`Float`), `numpy` name (`float32`, None for bfloat16),
    element size, the ctypes scalar type, how Python values go in and out, and the DLPack
    (code, bits)."""

    def __init__(self, th, np_name, typestr, itemsize, ctype, acc, to_c, from_c, dl, kind):
        self.th = th
        self.name = np_name or th.lower()
        self.numpy = np_name
        self.typestr = typestr
        self.itemsize = itemsize
        self.ctype = ctype
        self.acc = acc
        self.to_c = to_c
        self.from_c = from_c
        self.dl = dl
        self.kind = kind  # "int", "float", "bool"

    def __repr__(self):
        return f"th.{self.name}"

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))


def _int_in(ct):
    return lambda v: ct(int(v))


def _ident(v):
    return v


def _bool_in(v):
    return C.c_uint8(1 if v else 0)


uint8 = DType("Byte", "uint8", "|u1", 1, C.c_uint8, C.c_int64, _int_in(C.c_uint8), int, (1, 8), "int")
int8 = DType("Char", "int8", "|i1", 1, C.c_int8, C.c_int64, _int_in(C.c_int8), int, (0, 8), "int")
int16 = DType("Short", "int16", "<i2", 2, C.c_int16, C.c_int64, _int_in(C.c_int16), int, (0, 16), "int")
int32 = DType("Int", "int32", "<i4", 4, C.c_int32, C.c_int64, _int_in(C.c_int32), int, (0, 32), "int")
int64 = DType("Long", "int64", "<i8", 8, C.c_int64, C.c_int64, _int_in(C.c_int64), int, (0, 64), "int")
float32 = DType("Float", "float32", "<f4", 4, C.c_float, C.c_double, lambda v: C.c_float(float(v)), float, (2, 32), "float")
float64 = DType("Double", "float64", "<f8", 8, C.c_double, C.c_double, lambda v: C.c_double(float(v)), float, (2, 64), "float")
float16 = DType("Half", "float16", "<f2", 2, THHalf, C.c_float, _f2h, _h2f, (2, 16), "float")
bfloat16 = DType("BFloat16", None, None, 2, THBFloat16, C.c_float, _f2b, _b2f, (4, 16), "float")
bool_ = DType("Bool", "bool", "|b1", 1, C.c_uint8, C.c_int64, _bool_in, bool, (6, 8), "bool")
bool_.name = "bool"

DTYPES = [uint8, int8, int16, int32, int64, float32, float64, float16, bfloat16, bool_]
_BY_NAME = {}
for _d in DTYPES:
    _BY_NAME[_d.name] = _d
    _BY_NAME[_d.th] = _d
_BY_NAME["bfloat16"] = bfloat16
_BY_DL = {d.dl: d for d in DTYPES}


def _dtype_by_name(name):
    return _BY_NAME[name]


def as_dtype(d):
    """A DType from a DType, a name (`float32`, `Float`), a numpy dtype or a Python type."""
    if isinstance(d, DType):
        return d
    if d is float:
        return float64
    if d is int:
        return int64
    if d is bool:
        return bool_
    name = getattr(d, "name", None) if not isinstance(d, str) else d
    if name is None:
        try:
            import numpy as np

            name = np.dtype(d).name
        except Exception:
            name = str(d)
    r = _BY_NAME.get(name)
    if r is None:
        raise TypeError(f"th has no dtype {d!r} (it has {', '.join(x.name for x in DTYPES)})")
    return r


def dtype_from_dl(code, bits, lanes):
    d = _BY_DL.get((code, bits)) if lanes == 1 else None
    if d is None:
        raise THBufferError(f"DLPack dtype (code {code}, bits {bits}, lanes {lanes}) has no th dtype")
    return d


# ---- long storages (size / stride lists) ----


_ls_new = fn("THLongStorage_newWithSize", C.c_void_p, [C.c_ssize_t])
_ls_data = fn("THLongStorage_data", C.POINTER(C.c_int64), [C.c_void_p])
_ls_free = fn("THLongStorage_free", None, [C.c_void_p])


def long_storage(values):
    """A new THLongStorage holding `values` (caller frees)."""
    n = len(values)
    h = _ls_new(n)
    if not h:
        raise_last()
    if n:
        data = _ls_data(h)
        for i, v in enumerate(values):
            data[i] = int(v)
    return h


def free_long_storage(h):
    _ls_free(h)


class LongList:
    """Context manager: a temporary THLongStorage."""

    def __init__(self, values):
        self.values = values
        self.h = None

    def __enter__(self):
        self.h = long_storage(self.values)
        return self.h

    def __exit__(self, *exc):
        free_long_storage(self.h)


# ---- DLPack capsule plumbing (the destructors live in libth) ----

_api = C.pythonapi
PyCapsule_New = C.PYFUNCTYPE(C.py_object, C.c_void_p, C.c_char_p, C.c_void_p)(("PyCapsule_New", _api))
PyCapsule_GetPointer = C.PYFUNCTYPE(C.c_void_p, C.py_object, C.c_char_p)(("PyCapsule_GetPointer", _api))
PyCapsule_GetName = C.PYFUNCTYPE(C.c_char_p, C.py_object)(("PyCapsule_GetName", _api))
PyCapsule_SetName = C.PYFUNCTYPE(C.c_int, C.py_object, C.c_char_p)(("PyCapsule_SetName", _api))
PyCapsule_IsValid = C.PYFUNCTYPE(C.c_int, C.py_object, C.c_char_p)(("PyCapsule_IsValid", _api))

# Names must outlive every capsule: module-level bytes objects.
CAPSULE_V = b"dltensor_versioned"
CAPSULE_V_USED = b"used_dltensor_versioned"
CAPSULE_L = b"dltensor"
CAPSULE_L_USED = b"used_dltensor"

fn("THDLPack_setCapsuleApi", None, [C.c_void_p, C.c_void_p])(
    C.cast(_api.PyCapsule_IsValid, C.c_void_p), C.cast(_api.PyCapsule_GetPointer, C.c_void_p)
)
DESTRUCTOR_V = C.cast(dll.THDLPack_capsuleDestructor, C.c_void_p).value
DESTRUCTOR_L = C.cast(dll.THDLPack_capsuleDestructorUnversioned, C.c_void_p).value

DLManagedTensorVersioned = S.DLManagedTensorVersioned
DLManagedTensor = S.DLManagedTensor


# ---- families: TH (host tensors) and THC (CUDA device tensors) ----
# A device tensor is the same kind of object in libth; only the function family differs:
# `THCuda{Real}Tensor_op(THCState *, ...)` (`THCudaTensor` for Float), with the state a token
# that may be NULL.

TH_ERR_NO_CUDA, TH_ERR_CUDA = 7, 8


class THCudaError(THError):
    """CUDA is unavailable (no driver, no device, or a library built without CUDA) or failed."""


_BY_CODE[TH_ERR_NO_CUDA] = THCudaError
_BY_CODE[TH_ERR_CUDA] = THCudaError

# THC's accreal (`sumall` and friends): float for Float/Half/BFloat16, double for Double, long
# for the integer dtypes and Bool.
for _d in DTYPES:
    _d.cuda_acc = {"Float": C.c_float, "Half": C.c_float, "BFloat16": C.c_float, "Double": C.c_double}.get(
        _d.th, C.c_int64)


def family(d, dev, kind="Tensor"):
    """`TH{Real}Tensor` on the host (dev None), THC's `THCuda{Real}Tensor` on a device."""
    if dev is None:
        return f"TH{d.th}{kind}"
    return f"THCuda{kind}" if d.th == "Float" else f"THCuda{d.th}{kind}"


def funcs(d, dev):
    """The `Funcs` of dtype `d` on the host (`dev` None) or a device."""
    return d.host_funcs if dev is None else d.cuda_funcs


for _d in DTYPES:
    _d.host_funcs = Funcs(_d, False)
    _d.cuda_funcs = Funcs(_d, True)
    # The fastest way a Python value reaches a scalar argument: ctypes converts ints and floats
    # itself; Half/BFloat16 need the library's conversion.
    _d.arg = {"float": float, "int": int, "bool": bool}[_d.kind] if _d.ctype not in (THHalf, THBFloat16) \
        else _d.to_c


def fam_call(d, dev, name, restype, argtypes, *args, kind=None):
    """Calls `{family}_{name}`, passing a NULL THCState first for the device family."""
    f = f"{family(d, dev)}_{name}"
    if dev is None:
        return call(f, restype, argtypes, *args, kind=kind)
    return call(f, restype, [C.c_void_p, *argtypes], None, *args, kind=kind)
