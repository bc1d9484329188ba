"""Operations beyond elementwise math, every one a call into libth: products (`@`, `matmul`,
`mm`, `mv`, `bmm`, `dot`), comparisons giving Bool tensors, logical operators on Bool
tensors, `where`, `clamp`, `cat`/`stack`, `sort`/`argsort`/`topk`, and reductions along a
dimension (`argmax`, `all`, `any`, `cumsum`, `norm`, `median`).

Device tensors use THC's function of the same name; where THC has none the error says so.
"""

import ctypes as C
import math

from . import _lib as L
from . import tensor as _T
from ._lib import THTypeError, THValueError

from typing import TYPE_CHECKING, Any, Iterable, Sequence, Tuple, Union

if TYPE_CHECKING:
    from .tensor import Tensor

Number = Union[int, float, bool]

P = C.c_void_p


def broadcast_shapes(*shapes: Sequence[int]) -> Tuple[int, ...]:
    """numpy's broadcasting rule over shapes (tuples)."""
    n = max((len(s) for s in shapes), default=0)
    out = [1] * n
    for s in shapes:
        for i, x in enumerate((1,) * (n - len(s)) + tuple(s)):
            if x != 1:
                if out[i] not in (1, x):
                    raise THValueError(f"shapes {' and '.join(map(str, shapes))} do not broadcast")
                out[i] = x
    return tuple(out)


def _check_pair(a, b, what):
    if not isinstance(b, _T.Tensor):
        raise TypeError(f"{what} expects a Tensor, got {type(b).__name__}")
    a._same_device(b)
    if a._dtype is not b._dtype:
        raise THTypeError(f"dtype mismatch: {a._dtype.name} and {b._dtype.name} (convert with .to())")


def _bool_from_byte(byte):
    """A Bool tensor with the 0/1 values of a Byte tensor (the library's conversion)."""
    out = byte._new_empty(L.bool_)
    F = out._F
    F.resizeAs(out._h, byte._h)
    if byte._dev is None:
        F.copyByte(out._h, byte._h)
    else:
        F.copyCudaByte(out._h, byte._h)
    return out


def _byte_from_bool(t):
    out = t._new_empty(L.uint8)
    out._F.resizeAs(out._h, t._h)
    out._c("copyBool" if t._dev is None else "copyCudaBool", None, [P, P], out._h, t._h)
    return out


class OpsMixin:
    """Methods of `th.Tensor` defined in th/_ops.py."""

    __slots__ = ()

    # ---- comparisons: Bool tensors ----

    def _compare(self, other, op):
        if isinstance(other, _T.Tensor):
            _check_pair(self, other, op)
            name, arg = op + "Tensor", other._h
        elif isinstance(other, (int, float, bool)):
            name, arg = op + "Value", self._dtype.arg(other)
        else:
            return NotImplemented
        byte = self._new_empty(L.uint8)
        self._need(name)
        getattr(self._F, name)(byte._h, self._h, arg)
        return _bool_from_byte(byte)

    def __lt__(self, o):
        """`self < o` elementwise as a Bool tensor (TH{Real}Tensor_ltValue / ltTensor, which
        broadcast)."""
        return self._compare(o, "lt")

    def __le__(self, o):
        return self._compare(o, "le")

    def __gt__(self, o):
        return self._compare(o, "gt")

    def __ge__(self, o):
        return self._compare(o, "ge")

    def __eq__(self, o):
        return self._compare(o, "eq")

    def __ne__(self, o):
        return self._compare(o, "ne")

    __hash__ = object.__hash__

    def lt(self, o):
        return self._compare(o, "lt")

    def le(self, o):
        return self._compare(o, "le")

    def gt(self, o):
        return self._compare(o, "gt")

    def ge(self, o):
        return self._compare(o, "ge")

    def eq(self, o):
        return self._compare(o, "eq")

    def ne(self, o):
        return self._compare(o, "ne")

    def equal(self, other: "Tensor") -> bool:
        """True when both tensors have the same shape and elements (TH{Real}Tensor_equal)."""
        _check_pair(self, other, "equal")
        return bool(self._F.equal(self._h, other._h))

    # ---- logical operators on Bool tensors (through Byte's bit operations) ----

    def _logical(self, other, op):
        if self._dtype is not L.bool_:
            raise THTypeError(f"&, |, ^ and ~ are defined for bool tensors, not {self._dtype.name}")
        a = _byte_from_bool(self)
        if isinstance(other, bool):
            other = _T.full_like(self, other)
        _check_pair(self, other, op)
        b = _byte_from_bool(other)
        r = a._new_empty()
        a._c(op, None, [P, P, P], r._h, a._h, b._h)
        return _bool_from_byte(r)

    def __and__(self, o):
        """Elementwise AND of Bool tensors (THByteTensor_cbitand on their 0/1 bytes)."""
        return self._logical(o, "cbitand")

    def __or__(self, o):
        return self._logical(o, "cbitor")

    def __xor__(self, o):
        return self._logical(o, "cbitxor")

    __rand__, __ror__, __rxor__ = __and__, __or__, __xor__

    def __invert__(self):
        """Logical NOT of a Bool tensor (eqValue 0)."""
        if self._dtype is not L.bool_:
            raise THTypeError(f"~ is defined for bool tensors, not {self._dtype.name}")
        return self._compare(False, "eq")

    def logical_not(self):
        return ~self

    def all(self) -> bool:
        """True when every element is set (THBoolTensor_logicalall; other dtypes: != 0)."""
        b = self if self._dtype is L.bool_ else (self != 0)
        return bool(b._F.logicalall(b._h))

    def any(self) -> bool:
        """True when some element is set (THBoolTensor_logicalany; other dtypes: != 0)."""
        b = self if self._dtype is L.bool_ else (self != 0)
        return bool(b._F.logicalany(b._h))

    # ---- products ----

    def _gemm(self, fname, shape, m1, m2):
        """r (uninitialised, `shape`) = 0 * r + 1 * op(m1, m2): TH's addmm/addmv/baddbmm with
        beta 0, which does not read r."""
        self._need(fname)
        r = _T._new_sized(self._dtype, self._dev, shape)
        a = self._dtype.arg
        getattr(self._F, fname)(r._h, a(0), r._h, a(1), m1._h, m2._h)
        return r

    def mm(self, other: "Tensor") -> "Tensor":
        """Matrix product of 2-d tensors (TH{Real}Tensor_addmm with beta 0: r = m1 @ m2)."""
        _check_pair(self, other, "mm")
        if self.ndim != 2 or other.ndim != 2:
            raise THValueError(f"mm expects 2-d tensors, got {self.ndim}-d and {other.ndim}-d")
        (n, k), (k2, p) = self.shape, other.shape
        if k != k2:
            raise THValueError(f"mm: shapes {self.shape} and {other.shape} do not match (k {k} != {k2})")
        if n * p == 0 or k == 0:
            return _T.zeros(n, p, dtype=self._dtype, device=self.device)
        return self._gemm("addmm", (n, p), self, other)

    def mv(self, vec: "Tensor") -> "Tensor":
        """Matrix-vector product (TH{Real}Tensor_addmv with beta 0)."""
        _check_pair(self, vec, "mv")
        if self.ndim != 2 or vec.ndim != 1:
            raise THValueError(f"mv expects a 2-d and a 1-d tensor, got {self.ndim}-d and {vec.ndim}-d")
        n, k = self.shape
        if k != vec.shape[0]:
            raise THValueError(f"mv: shapes {self.shape} and {vec.shape} do not match")
        if n == 0 or k == 0:
            return _T.zeros(n, dtype=self._dtype, device=self.device)
        return self._gemm("addmv", (n,), self, vec)

    def bmm(self, other: "Tensor") -> "Tensor":
        """Batched matrix product of 3-d tensors (TH{Real}Tensor_baddbmm with beta 0)."""
        _check_pair(self, other, "bmm")
        if self.ndim != 3 or other.ndim != 3:
            raise THValueError(f"bmm expects 3-d tensors, got {self.ndim}-d and {other.ndim}-d")
        (b, n, k), (b2, k2, p) = self.shape, other.shape
        if b != b2 or k != k2:
            raise THValueError(f"bmm: shapes {self.shape} and {other.shape} do not match")
        return self._gemm("baddbmm", (b, n, p), self, other)

    def dot(self, other: "Tensor") -> Number:
        """Inner product of two 1-d tensors, a Python number (TH{Real}Tensor_dot, accumulated
        in accreal)."""
        _check_pair(self, other, "dot")
        if self.ndim != 1 or other.ndim != 1 or self.shape != other.shape:
            raise THValueError(f"dot expects 1-d tensors of one length, got {self.shape} and {other.shape}")
        self._need("dot")
        v = self._F.dot(self._h, other._h)
        return self._dtype.from_c(v) if self._dtype.kind != "float" else float(v)

    def outer(self, other: "Tensor") -> "Tensor":
        """Outer product of two 1-d tensors (TH{Real}Tensor_addr with beta 0)."""
        _check_pair(self, other, "outer")
        return self._gemm("addr", (self.shape[0], other.shape[0]), self, other)

    def matmul(self, other: "Tensor") -> Any:
        """numpy's `matmul`: 1-d @ 1-d is `dot` (a Python number: th has no 0-d tensors), 2-d @
        2-d `mm`, 2-d @ 1-d `mv`, 1-d @ 2-d a vector-matrix product, and N-d operands are
        stacks of matrices whose batch dimensions broadcast (TH{Real}Tensor_baddbmm)."""
        _check_pair(self, other, "matmul")
        na, nb = self.ndim, other.ndim
        if na == 0 or nb == 0:
            raise THValueError("matmul: empty operands have no dimensions")
        if na == 1 and nb == 1:
            return self.dot(other)
        if na == 2 and nb == 2:
            return self.mm(other)
        if na == 2 and nb == 1:
            return self.mv(other)
        if na == 1 and nb == 2:
            return other.t().mv(self)
        a = self.unsqueeze(0) if na == 1 else self
        b = other.unsqueeze(1) if nb == 1 else other
        sa, sb = a.shape, b.shape
        if sa[-1] != sb[-2]:
            raise THValueError(f"matmul: shapes {self.shape} and {other.shape} do not match")
        batch = broadcast_shapes(sa[:-2], sb[:-2])
        nbatch = math.prod(batch)
        a3 = a.expand(*batch, *sa[-2:]).reshape(nbatch, *sa[-2:])
        b3 = b.expand(*batch, *sb[-2:]).reshape(nbatch, *sb[-2:])
        r = a3.bmm(b3).view(*batch, sa[-2], sb[-1])
        if na == 1:
            r = r.squeeze(-2)
        if nb == 1:
            r = r.squeeze(-1)
        return r

    def __matmul__(self, other):
        if not isinstance(other, _T.Tensor):
            return NotImplemented
        return self.matmul(other)

    def __rmatmul__(self, other):
        return NotImplemented

    # ---- clamp, where ----

    def clamp(self, min: Union["Tensor", Number, None] = None,
              max: Union["Tensor", Number, None] = None) -> "Tensor":
        """Elementwise `min(max(t, min), max)` (TH{Real}Tensor_clamp; with one bound cmaxValue or
        cminValue; tensor bounds cmax/cmin). TH's rule for NaN: cmaxValue/cminValue give the
        bound for a NaN element."""
        r = self._new_empty()
        self._clamp_into(r, min, max)
        return r

    def clamp_(self, min=None, max=None):
        """In-place clamp."""
        self._clamp_into(self, min, max)
        return self

    def _clamp_into(self, r, lo, hi):
        F, a = self._F, self._dtype.arg
        if lo is None and hi is None:
            raise THValueError("clamp needs min or max")
        src = self
        if isinstance(lo, _T.Tensor) or isinstance(hi, _T.Tensor):
            for bound, op in ((lo, "cmax"), (hi, "cmin")):
                if bound is None:
                    continue
                if not isinstance(bound, _T.Tensor):
                    bound = _T.full_like(self, bound)
                _check_pair(self, bound, "clamp")
                getattr(F, op)(r._h, src._h, bound._h)
                src = r
            return
        if lo is not None and hi is not None:
            self._need("clamp")
            F.clamp(r._h, self._h, a(lo), a(hi))
        elif lo is not None:
            self._need("cmaxValue")
            F.cmaxValue(r._h, self._h, a(lo))
        else:
            self._need("cminValue")
            F.cminValue(r._h, self._h, a(hi))

    # ---- sorting ----

    def sort(self, dim: int = -1, descending: bool = False) -> Tuple["Tensor", "Tensor"]:
        """(values, indices) sorted along `dim` (TH{Real}Tensor_sort: stable, NaN last
        ascending); indices are int64."""
        v, i = self._new_empty(), self._new_empty(L.int64)
        self._need("sort")
        self._F.sort(v._h, i._h, self._h, _T._wrap_dim(dim, self.ndim), int(bool(descending)))
        return v, i

    def argsort(self, dim=-1, descending=False):
        return self.sort(dim, descending)[1]

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Tuple["Tensor", "Tensor"]:
        """(values, indices) of the k largest (or smallest) along `dim`, in sorted order
        (TH{Real}Tensor_topk)."""
        v, i = self._new_empty(), self._new_empty(L.int64)
        self._need("topk")
        self._F.topk(v._h, i._h, self._h, int(k), _T._wrap_dim(dim, self.ndim), int(bool(largest)), int(bool(sorted)))
        return v, i

    # ---- reductions along a dimension ----

    def argmax(self, dim=None, keepdim=False):
        """Index of the largest element (along `dim`; over the flattened tensor when None, as
        a Python int) (TH{Real}Tensor_max)."""
        if dim is None:
            return self.contiguous().view(-1).max(0)[1].item()
        return self.max(dim, keepdim)[1]

    def argmin(self, dim=None, keepdim=False):
        if dim is None:
            return self.contiguous().view(-1).min(0)[1].item()
        return self.min(dim, keepdim)[1]

    def cumsum(self, dim):
        """Cumulative sum along `dim` (TH{Real}Tensor_cumsum)."""
        r = self._new_empty()
        self._need("cumsum")
        self._F.cumsum(r._h, self._h, _T._wrap_dim(dim, self.ndim))
        return r

    def cumprod(self, dim):
        r = self._new_empty()
        self._need("cumprod")
        self._F.cumprod(r._h, self._h, _T._wrap_dim(dim, self.ndim))
        return r

    def norm(self, p=2, dim=None, keepdim=False):
        """The p-norm (over everything as a Python number: TH{Real}Tensor_normall; along
        `dim`: TH{Real}Tensor_norm)."""
        a = self._dtype.arg
        if dim is None:
            self._need("normall")
            return float(self._F.normall(self._h, a(p)))
        r = self._new_empty()
        self._need("norm")
        self._F.norm(r._h, self._h, a(p), _T._wrap_dim(dim, self.ndim), int(keepdim))
        return r

    def median(self, dim=None, keepdim=False):
        """The lower median (TH's rule) over everything (a Python number) or (values,
        indices) along `dim`."""
        if dim is None:
            return self._reduce_all("medianall", acc=False)
        return self._minmax("median", dim, keepdim)


def cat(tensors: Iterable["Tensor"], dim: int = 0) -> "Tensor":
    """Tensors joined along `dim` (TH{Real}Tensor_catArray); all of one dtype and device."""
    tensors = list(tensors)
    if not tensors:
        raise THValueError("cat needs at least one tensor")
    first = tensors[0]
    for t in tensors[1:]:
        _check_pair(first, t, "cat")
    ndim = max(t.ndim for t in tensors)
    arr = (C.c_void_p * len(tensors))(*[t._h for t in tensors])
    r = first._new_empty()
    first._need("catArray")
    first._F.catArray(r._h, arr, len(tensors), _T._wrap_dim(dim, ndim))
    return r


def stack(tensors: Iterable["Tensor"], dim: int = 0) -> "Tensor":
    """Tensors of one shape joined along a new dimension `dim` (unsqueeze, then catArray)."""
    tensors = list(tensors)
    if not tensors:
        raise THValueError("stack needs at least one tensor")
    shape = tensors[0].shape
    for t in tensors[1:]:
        if t.shape != shape:
            raise THValueError(f"stack expects tensors of one shape, got {shape} and {t.shape}")
    n = len(shape) + 1
    d = dim + n if dim < 0 else dim
    return cat([t.unsqueeze(d) for t in tensors], d)


def where(condition: "Tensor", x: Union["Tensor", Number, None] = None,
          y: Union["Tensor", Number, None] = None) -> Any:
    """`x` where `condition` (a Bool tensor) is set, else `y` (tensors or Python numbers,
    broadcast together): y's values are copied, then TH{Real}Tensor_maskedSelectBool and
    maskedCopyBool (or maskedFillBool for a number x) put x's in. With only `condition`: the
    indices of its set elements, one int64 tensor per dimension (`nonzero`)."""
    if x is None and y is None:
        return condition.nonzero(as_tuple=True)
    if condition.dtype is not L.bool_:
        condition = condition != 0
    proto = x if isinstance(x, _T.Tensor) else y
    if not isinstance(proto, _T.Tensor):
        raise TypeError("where needs x or y to be a Tensor (its dtype is the result's)")
    shapes = [condition.shape] + [v.shape for v in (x, y) if isinstance(v, _T.Tensor)]
    shape = broadcast_shapes(*shapes)
    if isinstance(y, _T.Tensor):
        _check_pair(proto, y, "where")
        out = y.expand(*shape).clone()  # (contiguous() may return y itself)
    else:
        out = _T.full(shape, y, dtype=proto.dtype, device=proto.device)
    mask = condition.expand(*shape)
    F = out._F
    if isinstance(x, _T.Tensor):
        _check_pair(proto, x, "where")
        sel = out._new_empty()
        xe = x.expand(*shape)  # a name keeps the view alive through the call
        F.maskedSelectBool(sel._h, xe._h, mask._h)
        F.maskedCopyBool(out._h, mask._h, sel._h)
    else:
        F.maskedFillBool(out._h, mask._h, out._dtype.arg(x))
    return out
