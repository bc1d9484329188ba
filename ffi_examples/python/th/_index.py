"""Indexing beyond views: Bool masks and integer tensors (or lists), read and assigned, as numpy
does it for one advanced index.

- `t[mask]` (a Bool tensor of t's shape): the selected elements, 1-d
  (TH{Real}Tensor_maskedSelectBool); a mask over the leading k dimensions selects sub-tensors
  (THBoolTensor_nonzero, then indexSelect).
- `t[idx]`, `t[:, idx]`, `t[..., idx]` (an int64 tensor, list or tuple of ints; negative
  indices count from the end): TH{Real}Tensor_indexSelect along that dimension, the result
  shaped `idx.shape` there.
- `t[mask] = v` (maskedFillBool for a number, maskedCopyBool for a tensor of values),
  `t[idx] = v` (indexFill / indexCopy): in place.
- Several integer indices at once (`t[i, j]`) go through their flat positions
  (`i * stride0 + j * stride1`, computed by the library) into the contiguous data.

Basic indices (ints, slices with positive steps, None, ...) make views first; the advanced
index then applies to the view.
"""

import ctypes as C
import operator

from . import _lib as L
from . import tensor as _T
from ._lib import THIndexError

P = C.c_void_p


def _is_advanced(k):
    return isinstance(k, (_T.Tensor, list)) or (hasattr(k, "__array_interface__") and not isinstance(k, (int, slice)))


def _as_index_tensor(k, t):
    """An advanced key as a Tensor (lists and numpy arrays through th.tensor)."""
    if isinstance(k, _T.Tensor):
        if k._dev != t._dev:
            k = k.to(device=t.device)
        return k
    if isinstance(k, list) and k and all(isinstance(x, bool) for x in k):
        return _T.tensor(k, dtype="bool", device=t.device if t.is_cuda else None)
    r = _T.tensor(k, device=t.device if t.is_cuda else None)
    return r


def _view_dims_before(key, stop, ndim):
    """How many dimensions of the view the entries key[:stop] produce."""
    n_real = sum(1 for k in key if k is not Ellipsis and k is not None)
    dims = 0
    for k in key[:stop]:
        if k is Ellipsis:
            dims += ndim - n_real
        elif k is None or isinstance(k, slice) or _is_advanced(k):
            dims += 1
    return dims


def _locate(t, key):
    """(view, dim, index tensor) for a key with one advanced entry, or (view, None, None) for
    several (handled by _multi)."""
    if not isinstance(key, tuple):
        key = (key,)
    adv = [i for i, k in enumerate(key) if _is_advanced(k)]
    basic = tuple(slice(None) if i in adv else k for i, k in enumerate(key))
    view = t._basic_get(basic)
    dims = [_view_dims_before(key, i, t.ndim) for i in adv]
    # integer entries before an advanced one remove dimensions: _view_dims_before skips them
    return view, dims, [key[i] for i in adv]


class IndexMixin:
    """`__getitem__`/`__setitem__` of `th.Tensor` with advanced indices (th/_index.py)."""

    __slots__ = ()

    def nonzero(self, as_tuple=False):
        """The subscripts of the nonzero elements, an (n, ndim) int64 tensor
        (TH{Real}Tensor_nonzero), or with `as_tuple` one 1-d tensor per dimension."""
        r = self._new_empty(L.int64)
        self._need("nonzero")
        self._F.nonzero(r._h, self._h)
        if not as_tuple:
            return r
        if r.numel() == 0:
            return tuple(self._new_empty(L.int64) for _ in range(self.ndim))
        return tuple(r.select(1, i).contiguous() for i in range(self.ndim))

    def __getitem__(self, key):
        """numpy indexing: ints, slices (positive steps), None and ... give views (an element
        gives a Python number); a Bool mask or an integer tensor/list gives a copy."""
        if type(key) is int or type(key) is slice or not _has_advanced(key):
            return self._basic_get(key)
        view, dims, idxs = _locate(self, key)
        if len(idxs) > 1:
            return _multi_get(view, dims, [_as_index_tensor(k, self) for k in idxs])
        dim, idx = dims[0], _as_index_tensor(idxs[0], self)
        if idx.dtype is L.bool_:
            return _mask_get(view, dim, idx)
        return _take(view, dim, idx)

    def __setitem__(self, key, value):
        """Assignment through any index `__getitem__` accepts: a number fills, a tensor (or
        anything th.tensor accepts) is copied in, broadcast to the indexed shape."""
        if type(key) is int or type(key) is slice or not _has_advanced(key):
            return self._basic_set(key, value)
        view, dims, idxs = _locate(self, key)
        if len(idxs) > 1:
            raise THIndexError("assignment through several integer index tensors is not supported: index one "
                               "dimension at a time")
        dim, idx = dims[0], _as_index_tensor(idxs[0], self)
        if idx.dtype is L.bool_:
            return _mask_set(view, dim, idx, value)
        return _put(view, dim, idx, value)


def _has_advanced(key):
    if isinstance(key, tuple):
        return any(_is_advanced(k) for k in key)
    return _is_advanced(key)


def _norm_index(idx, size):
    """Long indices with negatives wrapped (`idx + size` where negative: the library's
    ltValue/maskedFill arithmetic) and flattened to 1-d."""
    if idx.dtype is not L.int64:
        if idx.dtype.kind != "int":
            raise THIndexError(f"index tensors must be integers or bools, got {idx.dtype.name}")
        idx = idx.to(L.int64)
    flat = idx.contiguous().view(-1) if idx.ndim != 1 else idx
    if flat.numel() and flat.min() < 0:
        neg = flat < 0
        flat = flat.clone()
        fixed = flat + size
        flat[neg] = fixed[neg]
    return flat


def _take(view, dim, idx):
    size = view.shape[dim]
    shape = idx.shape
    flat = _norm_index(idx, size)
    r = view._new_empty()
    view._need("indexSelect")
    view._F.indexSelect(r._h, view._h, dim, flat._h)
    if len(shape) != 1:
        vs = view.shape
        r = r.view(*vs[:dim], *shape, *vs[dim + 1:]) if shape else r
    return r


def _put(view, dim, idx, value):
    flat = _norm_index(idx, view.shape[dim])
    F = view._F
    if isinstance(value, (int, float, bool)):
        view._need("indexFill")
        F.indexFill(view._h, dim, flat._h, view._dtype.arg(value))
        return
    if not isinstance(value, _T.Tensor):
        value = _T.tensor(value, dtype=view.dtype, device=view.device if view.is_cuda else None)
    vs = list(view.shape)
    vs[dim] = flat.numel()
    src = value.expand(*vs).contiguous() if tuple(value.shape) != tuple(vs) else value
    if src.dtype is not view.dtype:
        src = src.to(view.dtype)
    view._need("indexCopy")
    F.indexCopy(view._h, dim, flat._h, src._h)


def _mask_rows(view, dim, mask):
    """A mask covering dims [dim, dim + mask.ndim) of `view` as flat row indices."""
    if tuple(view.shape[dim:dim + mask.ndim]) != tuple(mask.shape):
        raise THIndexError(f"boolean index of shape {mask.shape} does not match the indexed tensor's "
                           f"shape {view.shape} at dimension {dim}")
    vs = view.shape
    flat_view = view.reshape(*vs[:dim], -1, *vs[dim + mask.ndim:]) if mask.ndim != 1 else view
    rows = mask.contiguous().view(-1).nonzero().select(1, 0).contiguous() if mask.numel() else None
    return flat_view, rows


def _mask_get(view, dim, mask):
    if dim == 0 and mask.shape == view.shape:
        r = view._new_empty()
        view._F.maskedSelectBool(r._h, view._h, mask._h)
        return r
    flat_view, rows = _mask_rows(view, dim, mask)
    if rows is None or rows.numel() == 0:
        return view._new_empty()
    return _take(flat_view, dim, rows)


def _mask_set(view, dim, mask, value):
    if dim == 0 and mask.shape == view.shape:
        F = view._F
        if isinstance(value, (int, float, bool)):
            F.maskedFillBool(view._h, mask._h, view._dtype.arg(value))
            return
        if not isinstance(value, _T.Tensor):
            value = _T.tensor(value, dtype=view.dtype, device=view.device if view.is_cuda else None)
        n = mask.sum()
        if value.numel() != n:
            value = value.expand(int(n)).contiguous()
        F.maskedCopyBool(view._h, mask._h, value._h)
        return
    flat_view, rows = _mask_rows(view, dim, mask)
    if rows is None or rows.numel() == 0:
        return
    _put(flat_view, dim, rows, value)


def _multi_get(view, dims, idxs):
    """Several integer index tensors on consecutive dims: flat positions into the contiguous
    data, then one indexSelect."""
    if dims != list(range(dims[0], dims[0] + len(dims))):
        raise THIndexError("several index tensors must index consecutive dimensions")
    if any(i.dtype is L.bool_ for i in idxs):
        raise THIndexError("a bool mask cannot be combined with other index tensors")
    from ._ops import broadcast_shapes

    d0 = dims[0]
    vs = view.shape
    shape = broadcast_shapes(*[i.shape for i in idxs])
    sizes = vs[d0:d0 + len(idxs)]
    flat = None
    stride = 1
    for i, size in reversed(list(zip(idxs, sizes))):
        part = _norm_index(i, size).view(*i.shape) if i.ndim else i
        part = part.expand(*shape).contiguous() * stride
        flat = part if flat is None else flat + part
        stride *= size
    merged = view.contiguous().view(*vs[:d0], stride, *vs[d0 + len(idxs):])
    return _take(merged, d0, flat)


def basic_index(t, key):
    """(offset, sizes, strides) for basic indexing with ints, slices, Ellipsis and None, or None
    when a slice selects nothing."""
    if not isinstance(key, tuple):
        key = (key,)
    shape, strides = list(t.shape), list(t.strides)
    if not shape:
        raise THIndexError("cannot index an empty tensor")
    if sum(1 for k in key if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis")
    n_real = sum(1 for k in key if k is not Ellipsis and k is not None)
    if n_real > len(shape):
        raise IndexError(f"too many indices for a {len(shape)}-d tensor: {n_real}")
    expanded = []
    for k in key:
        if k is Ellipsis:
            expanded.extend([slice(None)] * (len(shape) - n_real))
        else:
            expanded.append(k)
    offset = t.storage_offset()
    out_sizes, out_strides = [], []
    d = 0
    for k in expanded:
        if k is None:
            out_sizes.append(1)
            out_strides.append(0)
            continue
        size, stride = shape[d], strides[d]
        if isinstance(k, slice):
            start, stop, step = k.indices(size)
            if step <= 0:
                raise IndexError("th views need a positive slice step (TH strides are >= 0)")
            count = max(0, (stop - start + step - 1) // step)
            if count == 0:
                return None
            offset += start * stride
            out_sizes.append(count)
            out_strides.append(stride * step)
        else:
            try:
                i = operator.index(k)
            except TypeError:
                raise TypeError(f"th indices are ints, slices, None, ..., bool masks or integer tensors; got "
                                f"{type(k).__name__}") from None
            if i < -size or i >= size:
                raise IndexError(f"index {i} is out of bounds for dimension {d} with size {size}")
            offset += (i % size) * stride
        d += 1
    out_sizes += shape[d:]
    out_strides += strides[d:]
    return offset, out_sizes, out_strides
