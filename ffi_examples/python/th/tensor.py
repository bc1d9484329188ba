"""The `Tensor` class: a Python handle on a TH{Real}Tensor — lifetime, geometry, views,
element access, elementwise math and reductions — and the constructors. The rest of its
methods live with their subject and come in as mixins: th/_ops.py (products, comparisons,
where/clamp, sort/topk, cat/stack), th/_index.py (masks and integer-tensor indexing),
th/random.py (samplers), th/serialization.py (pickling), th/_interop.py (numpy, DLPack,
shared memory); printing is th/_format.py. Calls go through th/_lib.py's `Funcs`: one checked
ctypes callable per C function, bound once."""

import ctypes as C
import math

from . import _format
from . import _lib as L
from . import cuda as _cuda
from ._index import IndexMixin, basic_index
from ._lib import THError, THIndexError, THTypeError, THValueError, as_dtype, call
from ._ops import OpsMixin
from .random import RandomMixin
from .serialization import SerialMixin
from ._interop import InteropMixin

P = C.c_void_p




class Tensor(OpsMixin, IndexMixin, RandomMixin, SerialMixin, InteropMixin):
    """A th tensor of any dtype. Views share memory (TH semantics: strides >= 0, no 0-d
    tensors: a tensor without dimensions is empty). Release it with `close()` or a `with` block;
    otherwise the garbage collector does.

    A tensor lives in host memory (`device` "cpu", TH's functions) or on a CUDA device
    (`device` "cuda:N", THC's `THCuda*` functions, which every operation here dispatches to by
    the tensor's device). `.cuda()`, `.cpu()` and `.to(device)` copy between them."""

    __slots__ = ("_h", "_dtype", "_dev", "_F", "_keep", "_shm_name", "__weakref__")

    # ---- construction / lifetime ----

    @classmethod
    def _adopt(cls, h, dtype, keep=None, dev=None):
        """Wraps a new (+1) handle (a device tensor's when `dev` is its ordinal)."""
        if not h:
            raise THError("libth returned NULL")
        t = object.__new__(cls)
        t._h = h
        t._dtype = dtype
        t._dev = dev
        t._F = dtype.host_funcs if dev is None else dtype.cuda_funcs
        t._keep = keep
        t._shm_name = None
        return t

    def __init__(self, *shape, dtype="float32", device=None):
        """`Tensor(2, 3, dtype="float32", device="cuda")`: uninitialised contents (use
        th.zeros/th.tensor)."""
        d = as_dtype(dtype)
        dev = None if device is None else _cuda.resolve(device)
        shape = _shape_arg(shape)
        with L.LongList(shape) as s:
            h = _new_with_size(d, dev, s)
        Tensor._init_from(self, h, d, dev)

    def _init_from(self, h, d, dev=None):
        self._h = h
        self._dtype = d
        self._dev = dev
        self._F = L.funcs(d, dev)
        self._keep = None
        self._shm_name = None

    @property
    def handle(self):
        """The TH{Real}Tensor pointer (borrowed)."""
        if self._h is None:
            raise ValueError("tensor is released")
        return self._h

    def close(self):
        """Drops this object's reference now (idempotent). Views, numpy arrays and DLPack
        capsules made from it keep their own references."""
        h = self._h
        if h is not None:
            self._h = None
            self._F.free_raw(h)

    release = close

    def __del__(self):
        try:
            h = self._h
            if h is not None:
                self._h = None
                self._F.free_raw(h)
        except Exception:  # a half-built object, or interpreter shutdown with the library gone
            pass

    @property
    def closed(self):
        return self._h is None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _f(self, name):
        return f"{L.family(self._dtype, self._dev)}_{name}"

    def _c(self, name, restype, argtypes, *args, kind=None):
        """Calls this tensor's family's `name` (THC's with a NULL state first)."""
        if kind is not None:
            return L.fam_call(self._dtype, self._dev, name, restype, argtypes, *args, kind=kind)
        return self._F.bind(name, restype, argtypes)(*args)

    def _fn(self, name, restype, argtypes):
        return self._F.bind(name, restype, argtypes)

    def _has(self, name):
        return self._F.has(name)

    def _need(self, name):
        """Raises a clear error when this tensor's family has no function `name`."""
        if not self._has(name):
            if self._dev is not None and L.has(f"TH{self._dtype.th}Tensor_{name}"):
                raise THTypeError(f"{name} has no CUDA form for {self._dtype.name} tensors ({self._f(name)} does "
                                  f"not exist): move the tensor to the host with .cpu() first")
            raise THTypeError(f"{name} is not defined for {self._dtype.name} tensors")

    def _new_empty(self, dtype=None):
        d = dtype or self._dtype
        return Tensor._adopt(L.funcs(d, self._dev).new(), d, dev=self._dev)

    def _same_device(self, other):
        if other._dev != self._dev:
            raise THValueError(f"expected all tensors on the same device, got {self.device} and {other.device}")

    # ---- geometry ----

    @property
    def dtype(self):
        return self._dtype

    @property
    def ndim(self):
        return self._F.nDimension(self.handle)

    def dim(self):
        return self.ndim

    @property
    def shape(self):
        """The sizes, a tuple (`()` for an empty tensor: TH has no 0-d tensors)."""
        h = self.handle
        F = self._F
        n = F.nDimension(h)
        if n == 1:
            return (F.size(h, 0),)
        f = F.size
        return tuple([f(h, i) for i in range(n)])

    def size(self, dim=None):
        s = self.shape
        return s if dim is None else s[_wrap_dim(dim, len(s))]

    @property
    def strides(self):
        """Strides in elements."""
        h = self.handle
        F = self._F
        f = F.stride
        return tuple([f(h, i) for i in range(F.nDimension(h))])

    def stride(self, dim=None):
        s = self.strides
        return s if dim is None else s[_wrap_dim(dim, len(s))]

    def storage_offset(self):
        return self._F.storageOffset(self.handle)

    def numel(self):
        return self._F.nElement(self.handle)

    def __len__(self):
        s = self.shape
        if not s:
            return 0
        return s[0]

    def is_contiguous(self):
        return bool(self._c("isContiguous", C.c_int, [P], self.handle))

    def data_ptr(self):
        """Address of the first element (0 when empty)."""
        return self._c("data", P, [P], self.handle) or 0

    @property
    def itemsize(self):
        return self._dtype.itemsize

    # ---- views ----

    def _view(self, offset, sizes, strides):
        F = self._F
        st = F.storage(self.handle)
        with L.LongList(sizes) as sz, L.LongList(strides) as sd:
            h = F.newWithStorage(st, offset, sz, sd)
        return Tensor._adopt(h, self._dtype, self._keep, self._dev)

    def narrow(self, dim, start, length):
        dim = _wrap_dim(dim, self.ndim)
        h = self._c("newNarrow", P, [P, C.c_int, C.c_int64, C.c_int64], self.handle, dim, start, length)
        return Tensor._adopt(h, self._dtype, self._keep, self._dev)

    def select(self, dim, index):
        shape = self.shape
        dim = _wrap_dim(dim, len(shape))
        if index < 0:
            index += shape[dim]
        h = self._c("newSelect", P, [P, C.c_int, C.c_int64], self.handle, dim, index)
        return Tensor._adopt(h, self._dtype, self._keep, self._dev)

    def transpose(self, d0, d1):
        n = self.ndim
        h = self._c("newTranspose", P, [P, C.c_int, C.c_int], self.handle, _wrap_dim(d0, n), _wrap_dim(d1, n))
        return Tensor._adopt(h, self._dtype, self._keep, self._dev)

    def t(self):
        if self.ndim != 2:
            raise ValueError(f"t() expects a 2-d tensor, got {self.ndim}-d")
        return self.transpose(0, 1)

    @property
    def T(self):
        n = self.ndim
        return self.permute(*reversed(range(n)))

    def permute(self, *dims):
        dims = _shape_arg(dims)
        shape, strides = self.shape, self.strides
        if sorted(_wrap_dim(d, len(shape)) for d in dims) != list(range(len(shape))):
            raise ValueError(f"permute{tuple(dims)} is not a permutation of {len(shape)} dims")
        dims = [_wrap_dim(d, len(shape)) for d in dims]
        return self._view(self.storage_offset(), [shape[d] for d in dims], [strides[d] for d in dims])

    def view(self, *shape):
        shape = _shape_arg(shape)
        with L.LongList(shape) as s:
            h = self._c("newView", P, [P, P], self.handle, s)
        return Tensor._adopt(h, self._dtype, self._keep, self._dev)

    def reshape(self, *shape):
        shape = _shape_arg(shape)
        if self.is_contiguous():
            return self.view(*shape)
        n = self.numel()
        if shape.count(-1) == 1:
            known = math.prod(x for x in shape if x != -1)
            if known > 0 and n % known == 0:
                shape[shape.index(-1)] = n // known
        r = self._new_empty()
        with L.LongList(shape) as s:
            self._c("reshape", None, [P, P, P], r.handle, self.handle, s)
        return r

    def expand(self, *shape):
        shape = _shape_arg(shape)
        with L.LongList(shape) as s:
            h = self._c("newExpand", P, [P, P], self.handle, s)
        return Tensor._adopt(h, self._dtype, self._keep, self._dev)

    def unsqueeze(self, dim):
        n = self.ndim
        if dim < 0:
            dim += n + 1
        r = self._shallow()
        self._c("unsqueeze1d", None, [P, P, C.c_int], r.handle, self.handle, dim)
        return r

    def squeeze(self, dim=None):
        r = self._shallow()
        if dim is None:
            self._c("squeeze", None, [P, P], r.handle, self.handle)
        else:
            self._c("squeeze1d", None, [P, P, C.c_int], r.handle, self.handle, _wrap_dim(dim, self.ndim))
        return r

    def _shallow(self):
        h = self._c("newWithTensor", P, [P], self.handle)
        return Tensor._adopt(h, self._dtype, self._keep, self._dev)

    def contiguous(self):
        h = self._c("newContiguous", P, [P], self.handle)
        return Tensor._adopt(h, self._dtype, self._keep, self._dev)

    def clone(self):
        return Tensor._adopt(self._c("newClone", P, [P], self.handle), self._dtype, dev=self._dev)

    def to(self, *args, dtype=None, device=None):
        """A copy converted to `dtype` (C casts) and/or moved to `device`: `t.to("float64")`,
        `t.to("cuda")`, `t.to("cuda:0", "float32")`, `t.to(device="cpu")`. A device argument is a
        string naming a device ("cpu", "cuda", "cuda:N") or a `th.device`."""
        for a in args:
            if isinstance(a, _cuda.device) or (isinstance(a, str) and a.partition(":")[0] in ("cpu", "cuda")):
                device = a
            else:
                dtype = a
        d = self._dtype if dtype is None else as_dtype(dtype)
        dev = self._dev if device is None else _cuda.resolve(device)
        r = _new_sized(d, dev, self.shape)
        if self.numel():
            _copy(r, self)
        return r

    def astype(self, dtype):
        return self.to(dtype=dtype)

    @property
    def device(self):
        """`th.device("cpu")` or `th.device("cuda", N)`."""
        return _cuda.device("cpu") if self._dev is None else _cuda.device("cuda", self._dev)

    @property
    def is_cuda(self):
        return self._dev is not None

    def cuda(self, device=None):
        """A copy on the CUDA device (default: the current one); `self` if it is already
        there. Raises THCudaError (with the library's reason) when CUDA is unavailable."""
        dev = _cuda.resolve("cuda" if device is None else _cuda.device(device))
        return self if dev == self._dev else self.to(device=_cuda.device("cuda", dev))

    def cpu(self):
        """A copy in host memory; `self` if it is already there."""
        return self if self._dev is None else self.to(device="cpu")

    def float(self):
        return self.to(L.float32)

    def double(self):
        return self.to(L.float64)

    def long(self):
        return self.to(L.int64)

    # ---- element access ----

    def _basic_get(self, key):
        # Fast paths (one or two foreign calls): t[i] with i >= 0 (get1d on a 1-d tensor,
        # newSelect otherwise) and t[a:b] (newNarrow); the library checks the bounds.
        if self._dev is None:
            tk = type(key)
            if tk is int and key >= 0:
                F = self._F
                h = self.handle
                n = F.nDimension(h)
                if n == 1:
                    return _py(self._dtype, F.get1d(h, key))
                if n > 1:
                    return Tensor._adopt(F.newSelect(h, 0, key), self._dtype, self._keep)
            elif tk is slice and key.step in (None, 1):
                F = self._F
                h = self.handle
                if F.nDimension(h):
                    start, stop, _ = key.indices(F.size(h, 0))
                    if stop > start:
                        return Tensor._adopt(F.newNarrow(h, 0, start, stop - start), self._dtype, self._keep)
        r = basic_index(self, key)
        if r is None:
            return self._new_empty()
        offset, sizes, strides = r
        if not sizes:  # every dimension indexed: a Python scalar
            st = self._c("storage", P, [P], self.handle)
            v = self._sc("get", self._dtype.ctype, [P, C.c_ssize_t], st, offset)
            return _py(self._dtype, v)
        return self._view(offset, sizes, strides)

    def _basic_set(self, key, value):
        r = basic_index(self, key)
        if r is None:
            return
        offset, sizes, strides = r
        if not sizes:
            st = self._c("storage", P, [P], self.handle)
            self._sc("set", None, [P, C.c_ssize_t, self._dtype.ctype], st, offset, self._dtype.to_c(value))
            return
        v = self._view(offset, sizes, strides)
        try:
            v.copy_(value) if isinstance(value, Tensor) else v.fill_(value)
        finally:
            v.close()

    def _sc(self, name, restype, argtypes, *args):
        """Calls this tensor's storage family's `name`."""
        f = f"{L.family(self._dtype, self._dev, 'Storage')}_{name}"
        if self._dev is None:
            return call(f, restype, argtypes, *args)
        return call(f, restype, [P, *argtypes], None, *args)

    def fill_(self, value):
        """Sets every element to `value` (TH{Real}Tensor_fill)."""
        self._F.fill(self.handle, self._dtype.arg(value))
        return self

    def zero_(self):
        """Sets every element to 0 (TH{Real}Tensor_zero)."""
        self._F.zero(self.handle)
        return self

    def copy_(self, src):
        """Copies `src` (a Tensor of any dtype, or anything th.tensor accepts) into self."""
        if not isinstance(src, Tensor):
            src = tensor(src, dtype=self._dtype)
        _copy(self, src)
        return self

    def tolist(self):
        shape = self.shape
        if not shape:
            return []
        if self._dev is not None:
            with self.cpu() as h:
                return h.tolist()
        c = self.contiguous()
        n = c.numel()
        ptr = C.cast(c.data_ptr(), C.POINTER(self._dtype.ctype))
        flat = [_py(self._dtype, ptr[i]) for i in range(n)]
        c.close()

        def build(level, start):
            if level == len(shape) - 1:
                return flat[start:start + shape[level]]
            step = math.prod(shape[level + 1:])
            return [build(level + 1, start + i * step) for i in range(shape[level])]

        return build(0, 0)

    def item(self):
        if self.numel() != 1:
            raise ValueError(f"item() needs exactly one element, the tensor has {self.numel()}")
        return self.tolist_flat()[0]

    def tolist_flat(self):
        if self._dev is not None:
            with self.cpu() as h:
                return h.tolist_flat()
        c = self.contiguous()
        ptr = C.cast(c.data_ptr(), C.POINTER(self._dtype.ctype))
        out = [_py(self._dtype, ptr[i]) for i in range(c.numel())]
        c.close()
        return out

    def __bool__(self):
        """The truth of a one-element tensor; more elements are ambiguous (ValueError), as in
        numpy: use `.any()` or `.all()`."""
        if self.numel() != 1:
            raise ValueError(f"the truth value of a tensor with {self.numel()} elements is ambiguous: use .any() "
                             "or .all()")
        return bool(self.item())

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self._dtype.kind not in ("int", "bool"):
            raise TypeError(f"only integer tensors of one element can be used as an index, not {self._dtype.name}")
        return int(self.item())

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    # ---- math ----

    def _binary(self, other, op, cop, reverse=False, inplace=False):
        """`self op other` through TH{Real}Tensor_{op} (a number) or _{cop} (a tensor,
        broadcasting); `inplace` writes into self."""
        F = self._F
        if isinstance(other, Tensor):
            if other._dev != self._dev:
                self._same_device(other)
            if other._dtype is not self._dtype:
                raise THTypeError(f"dtype mismatch: {self._dtype.name} and {other._dtype.name} (convert with .to())")
            a, b = (other, self) if reverse else (self, other)
            try:
                f = getattr(F, cop)
            except THTypeError:
                self._need(cop)
                raise
            r = self if inplace else Tensor._adopt(F.new(), self._dtype, None, self._dev)
            if cop in ("cadd", "csub"):
                f(r._h, a._h, self._dtype.arg(1), b._h)
            else:
                f(r._h, a._h, b._h)
            return r
        if isinstance(other, (int, float, bool)):
            if reverse:
                if op in ("add", "mul"):
                    return self._binary(other, op, cop)
                full = full_like(self, other)
                return full._binary(self, op, cop)
            try:
                f = getattr(F, op)
            except THTypeError:
                self._need(op)
                raise
            r = self if inplace else Tensor._adopt(F.new(), self._dtype, None, self._dev)
            f(r._h, self._h, self._dtype.arg(other))
            return r
        return NotImplemented

    def add_(self, other):
        """In place `self += other`."""
        return self._binary(other, "add", "cadd", inplace=True)

    def sub_(self, other):
        return self._binary(other, "sub", "csub", inplace=True)

    def mul_(self, other):
        return self._binary(other, "mul", "cmul", inplace=True)

    def div_(self, other):
        return self._binary(other, "div", "cdiv", inplace=True)

    def add(self, other):
        return self._binary(other, "add", "cadd")

    def sub(self, other):
        return self._binary(other, "sub", "csub")

    def mul(self, other):
        return self._binary(other, "mul", "cmul")

    def div(self, other):
        return self._binary(other, "div", "cdiv")

    def __pow__(self, o):
        """`self ** o` (TH{Real}Tensor_pow for a number, cpow for a tensor)."""
        return self._binary(o, "pow", "cpow")

    def __ipow__(self, o):
        return self._binary(o, "pow", "cpow", inplace=True)

    def __mod__(self, o):
        """`self % o` with the divisor's sign, as numpy (TH{Real}Tensor_remainder / cremainder)."""
        return self._binary(o, "remainder", "cremainder")

    def __imod__(self, o):
        return self._binary(o, "remainder", "cremainder", inplace=True)

    def fmod(self, o):
        """C's fmod (the dividend's sign) (TH{Real}Tensor_fmod / cfmod)."""
        return self._binary(o, "fmod", "cfmod")

    def maximum(self, o):
        """Elementwise max (TH{Real}Tensor_cmax / cmaxValue; TH's NaN rule: the other value)."""
        return self._binary(o, "cmaxValue", "cmax")

    def minimum(self, o):
        return self._binary(o, "cminValue", "cmin")

    def __add__(self, o):
        return self._binary(o, "add", "cadd")

    def __radd__(self, o):
        return self._binary(o, "add", "cadd", reverse=True)

    def __iadd__(self, o):
        return self._binary(o, "add", "cadd", inplace=True)

    def __sub__(self, o):
        return self._binary(o, "sub", "csub")

    def __rsub__(self, o):
        return self._binary(o, "sub", "csub", reverse=True)

    def __isub__(self, o):
        return self._binary(o, "sub", "csub", inplace=True)

    def __mul__(self, o):
        return self._binary(o, "mul", "cmul")

    def __rmul__(self, o):
        return self._binary(o, "mul", "cmul", reverse=True)

    def __imul__(self, o):
        return self._binary(o, "mul", "cmul", inplace=True)

    def __truediv__(self, o):
        return self._binary(o, "div", "cdiv")

    def __rtruediv__(self, o):
        return self._binary(o, "div", "cdiv", reverse=True)

    def __itruediv__(self, o):
        return self._binary(o, "div", "cdiv", inplace=True)

    def __neg__(self):
        r = self._new_empty()
        self._c("neg", None, [P, P], r.handle, self.handle)
        return r

    def __pos__(self):
        return self

    def __abs__(self):
        return self.abs()

    def _unary(self, name):
        self._need(name)
        r = self._new_empty()
        self._c(name, None, [P, P], r.handle, self.handle)
        return r

    # ---- reductions ----

    def _acc(self):
        return self._dtype.acc if self._dev is None else self._dtype.cuda_acc

    def _dimtype(self):
        """A dimension argument: TH's `int`, THC's `long`."""
        return C.c_int if self._dev is None else C.c_long

    def _reduce_all(self, name, acc=True):
        restype = self._acc() if acc else self._dtype.ctype
        self._need(name)
        v = self._c(name, restype, [P], self.handle)
        return _py(self._dtype, v) if not acc else (v if isinstance(v, (int, float)) else v.value)

    def _reduce_dim(self, name, dim, keepdim, extra=()):
        self._need(name)
        dim = _wrap_dim(dim, self.ndim)
        r = self._new_empty()
        argt = [P, P, self._dimtype()] + [C.c_int] * len(extra) + [C.c_int]
        self._c(name, None, argt, r.handle, self.handle, dim, *extra, int(keepdim))
        return r

    def sum(self, dim=None, keepdim=False):
        """The sum of the elements: over everything as a Python number (TH{Real}Tensor_sumall,
        accumulated in accreal: double for float/double, float for half, int64 for integers
        and bool), or along `dim` as a tensor (TH{Real}Tensor_sum, accumulated in accreal and
        stored in the tensor's dtype; `keepdim` keeps the reduced dimension with size 1)."""
        if dim is None:
            try:
                v = self._F.sumall(self._h)
            except THTypeError:
                self._need("sumall")
                raise
            return v if isinstance(v, (int, float)) else v.value
        return self._reduce_dim("sum", dim, keepdim)

    def prod(self, dim=None, keepdim=False):
        """The product of the elements (TH{Real}Tensor_prodall as a Python number, or
        TH{Real}Tensor_prod along `dim`)."""
        return self._reduce_all("prodall") if dim is None else self._reduce_dim("prod", dim, keepdim)

    def mean(self, dim=None, keepdim=False):
        """The mean (TH{Real}Tensor_meanall as a Python number, or TH{Real}Tensor_mean along
        `dim`)."""
        return self._reduce_all("meanall") if dim is None else self._reduce_dim("mean", dim, keepdim)

    def std(self, dim=None, unbiased=True, keepdim=False):
        """The standard deviation, divided by n-1 when `unbiased` (TH{Real}Tensor_stdall, or
        TH{Real}Tensor_std along `dim`)."""
        if dim is None:
            self._need("stdall")
            return self._c("stdall", self._fp_acc(), [P, C.c_int], self.handle, 0 if unbiased else 1)
        return self._reduce_dim("std", dim, keepdim, extra=(0 if unbiased else 1,))

    def var(self, dim=None, unbiased=True, keepdim=False):
        """The variance, divided by n-1 when `unbiased` (TH{Real}Tensor_varall, or
        TH{Real}Tensor_var along `dim`)."""
        if dim is None:
            self._need("varall")
            return self._c("varall", self._fp_acc(), [P, C.c_int], self.handle, 0 if unbiased else 1)
        return self._reduce_dim("var", dim, keepdim, extra=(0 if unbiased else 1,))

    def _fp_acc(self):
        acc = self._acc()
        return acc if acc in (C.c_float, C.c_double) else C.c_double

    def _minmax(self, name, dim, keepdim):
        if dim is None:
            return self._reduce_all(name + "all", acc=False)
        self._need(name)
        values = self._new_empty()
        idx = self._new_empty(L.int64)
        self._c(name, None, [P, P, P, self._dimtype(), C.c_int], values.handle, idx.handle, self.handle,
                _wrap_dim(dim, self.ndim), int(keepdim))
        return values, idx

    def max(self, dim=None, keepdim=False):
        """The largest element as a Python number (TH{Real}Tensor_maxall), or along `dim` the
        pair (values, int64 indices of the first maximum) (TH{Real}Tensor_max)."""
        return self._minmax("max", dim, keepdim)

    def min(self, dim=None, keepdim=False):
        """The smallest element (TH{Real}Tensor_minall), or (values, indices) along `dim`
        (TH{Real}Tensor_min)."""
        return self._minmax("min", dim, keepdim)

    # ---- printing ----

    def __repr__(self):
        """numpy's layout (see th/_format.py): `tensor([1. , 2.5], dtype=float32)`."""
        if self.closed:
            return "tensor(<released>)"
        return _format.tensor_repr(self)

    __str__ = __repr__


# Add the elementwise functions as methods: t.exp(), t.sqrt(), ...
_UNARY = ["abs", "exp", "log", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
          "cosh", "tanh", "sigmoid", "floor", "ceil", "round", "trunc", "frac", "sign", "neg", "lgamma"]


def _unary_method(name):
    def method(self: "Tensor") -> "Tensor":
        return self._unary(name)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = (f"Elementwise {name}, a new tensor (TH{{Real}}Tensor_{name}; THC's THCuda{{Real}}Tensor_{name} "
                      "for a device tensor). Not defined for every dtype: the error says so.")
    return method


for _name in _UNARY:
    setattr(Tensor, _name, _unary_method(_name))

def _py(d, v):
    if d is L.float16 or d is L.bfloat16:
        return d.from_c(v)
    if isinstance(v, (int, float)):
        return d.from_c(v)
    return d.from_c(v.value)


def _wrap_dim(d, n):
    if not -n <= d < max(n, 1):
        raise THIndexError(f"dimension {d} out of range of {n}-d tensor")
    return d % n if n else d


def _shape_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return [int(s) for s in shape]


# ---- module-level constructors ----


def _new_with_size(d, dev, size_storage):
    return L.fam_call(d, dev, "newWithSize", P, [P, P], size_storage, None)


def _new_sized(d, dev, shape):
    """A new contiguous tensor of `shape` (contents uninitialised; TH's empty tensor for no
    elements) of dtype `d` on `dev`."""
    F = L.funcs(d, dev)
    if not shape or 0 in shape:
        return Tensor._adopt(F.new(), d, dev=dev)
    n = len(shape)
    if n <= 4:  # one call: newWithSize{n}d
        return Tensor._adopt(getattr(F, _SIZED[n])(*shape), d, dev=dev)
    with L.LongList(shape) as s:
        return Tensor._adopt(_new_with_size(d, dev, s), d, dev=dev)


_SIZED = [None, "newWithSize1d", "newWithSize2d", "newWithSize3d", "newWithSize4d"]


def _copy(dst, src):
    """dst <- src (C casts), whichever memory each is in: THC's copies between the host and the
    device (`THCuda{R}Tensor_copy{S}` from a host tensor, `TH{R}Tensor_copyCuda{S}` to one,
    `THCuda{R}Tensor_copyCuda{S}` between device tensors)."""
    s = src._dtype.th
    if dst._dev is None and src._dev is None:
        return dst._c(f"copy{s}", None, [P, P], dst.handle, src.handle)
    if dst._dev is not None and src._dev is None:
        return dst._c(f"copy{s}", None, [P, P], dst.handle, src.handle)
    name = f"copyCuda{s}"
    if dst._dev is not None:
        return dst._c(name, None, [P, P], dst.handle, src.handle)
    return call(f"TH{dst._dtype.th}Tensor_{name}", None, [P, P, P], None, dst.handle, src.handle)


def _placed(t, device):
    """`t` (a new host tensor) moved to `device` (None: left on the host)."""
    if device is None:
        return t
    dev = _cuda.resolve(device)
    if dev is None:
        return t
    with t:
        return t.to(device=_cuda.device("cuda", dev))


def empty(*shape, dtype="float32", device=None):
    return Tensor(*shape, dtype=dtype, device=device)


def zeros(*shape, dtype="float32", device=None):
    return Tensor(*shape, dtype=dtype, device=device).zero_()


def ones(*shape, dtype="float32", device=None):
    return Tensor(*shape, dtype=dtype, device=device).fill_(1)


def full(shape, value, dtype="float32", device=None):
    shape = _shape_arg((shape,)) if not isinstance(shape, int) else [shape]
    return Tensor(*shape, dtype=dtype, device=device).fill_(value)


def full_like(t, value):
    return _new_sized(t.dtype, t._dev, t.shape).fill_(value) if t.numel() else t._new_empty()


def arange(n, dtype="int64", device=None):
    d = as_dtype(dtype)
    t = Tensor(n, dtype=d)
    ptr = C.cast(t.data_ptr(), C.POINTER(d.ctype))
    for i in range(n):
        ptr[i] = d.to_c(i)
    return _placed(t, device)


def tensor(data, dtype=None, device=None):
    """A new tensor holding a copy of `data` (nested lists/tuples of numbers, a numpy array, or
    a Tensor), in host memory or on `device` ("cuda", "cuda:N"). dtype defaults to int64 for
    ints, float32 for floats, bool for bools."""
    if device is not None:
        dev = _cuda.resolve(device)
        if dev is not None:
            if isinstance(data, Tensor):
                return data.to(dtype=dtype or data.dtype, device=_cuda.device("cuda", dev))
            return _placed(tensor(data, dtype), _cuda.device("cuda", dev))
    if isinstance(data, Tensor):
        return data.to(dtype=dtype or data.dtype, device="cpu")
    if hasattr(data, "__array_interface__") or hasattr(data, "__dlpack__"):
        import numpy as np

        a = np.ascontiguousarray(data)
        d = as_dtype(dtype or a.dtype)
        if d.numpy is not None:
            a = a.astype(d.numpy)
            src = from_dlpack(a)
            return src.clone()
        data = a.tolist()
    shape = []
    x = data
    while isinstance(x, (list, tuple)):
        shape.append(len(x))
        if not x:
            break
        x = x[0]
    flat = []

    def walk(v, level):
        if level == len(shape):
            if isinstance(v, (list, tuple)):
                raise ValueError("ragged nested sequence")
            flat.append(v)
            return
        if not isinstance(v, (list, tuple)) or len(v) != shape[level]:
            raise ValueError("ragged nested sequence")
        for e in v:
            walk(e, level + 1)

    walk(data, 0)
    if dtype is None:
        if flat and all(isinstance(v, bool) for v in flat):
            dtype = "bool"
        elif flat and all(isinstance(v, int) for v in flat):
            dtype = "int64"
        else:
            dtype = "float32"
    d = as_dtype(dtype)
    if not shape:  # a scalar: one element in one dimension (TH has no 0-d tensors)
        shape = [1]
    if 0 in shape:
        return Tensor._adopt(call(f"TH{d.th}Tensor_new", P, []), d)
    t = Tensor(*shape, dtype=d)
    ptr = C.cast(t.data_ptr(), C.POINTER(d.ctype))
    for i, v in enumerate(flat):
        ptr[i] = d.to_c(v)
    return t


from ._interop import from_dlpack, from_numpy  # noqa: E402,F401  (public through th.tensor too)
