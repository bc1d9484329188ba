"""Saving and loading: `th.save(t, path)` / `th.load(path)` through NumPy's `.npy` format
(libth's reader and writer, TH{Real}Tensor_saveNpy / loadNpy: the files open in numpy with
`np.load`, and numpy's `np.save` files load here), and pickling by value (`pickle.dumps(t)`
holds the bytes, dtype, shape and device, never a pointer).
"""

import ast
import ctypes as C
import os

from . import _lib as L
from . import tensor as _T
from ._lib import THValueError

from typing import TYPE_CHECKING, Any, Union

if TYPE_CHECKING:
    from .tensor import Tensor

P = C.c_void_p

# numpy's `descr` strings for each dtype (bfloat16 is written by libth with its own descr).
_NPY = {"|u1": "uint8", "|i1": "int8", "<i2": "int16", "<i4": "int32", "<i8": "int64", "<f4": "float32",
        "<f8": "float64", "<f2": "float16", "|b1": "bool"}


def save(t: "Tensor", path: Union[str, "os.PathLike[str]"]) -> None:
    """Writes `t` (any strides, host or device) to `path` as a `.npy` file
    (TH{Real}Tensor_saveNpy: format 1.0, little-endian, C order)."""
    host = t.cpu()
    L.call(f"TH{t.dtype.th}Tensor_saveNpy", None, [C.c_char_p, P], os.fsencode(path), host.handle)


def _npy_dtype(path):
    """The dtype named in a `.npy` header (the header only: libth reads the data)."""
    with open(path, "rb") as f:
        head = f.read(10)
        if head[:6] != b"\x93NUMPY":
            raise THValueError(f"{os.fspath(path)!r} is not a .npy file")
        major = head[6]
        if major == 1:
            n = int.from_bytes(head[8:10], "little")
        else:
            n = int.from_bytes(head[8:10] + f.read(2), "little")
        header = ast.literal_eval(f.read(n).decode("latin1"))
    descr = header.get("descr")
    name = _NPY.get(descr)
    if name is None and isinstance(descr, str):
        name = {"<u2": "bfloat16"}.get(descr) if "bfloat16" in str(header) else None
        for d in L.DTYPES:
            if d.typestr == descr or d.name == descr:
                name = d.name
    if name is None:
        raise THValueError(f"{os.fspath(path)!r} holds dtype {descr!r}, which th does not have")
    return L.as_dtype(name)


def load(path: Union[str, "os.PathLike[str]"], device: Any = None) -> "Tensor":
    """Reads a `.npy` file into a new contiguous tensor (TH{Real}Tensor_loadNpy), on `device`
    if given."""
    d = _npy_dtype(path)
    h = L.call(f"TH{d.th}Tensor_loadNpy", P, [C.c_char_p], os.fsencode(path))
    t = _T.Tensor._adopt(h, d)
    return t if device is None else _T._placed(t, device)


def _rebuild(data, dtype, shape, device):
    d = L.as_dtype(dtype)
    t = _T._new_sized(d, None, list(shape))
    if data:
        C.memmove(t.data_ptr(), data, len(data))
    return t if device is None else _T._placed(t, device)


class SerialMixin:
    """Pickling support of `th.Tensor` (th/serialization.py)."""

    __slots__ = ()

    def __reduce__(self):
        """Pickles by value: (bytes in C order, dtype name, shape, device or None)."""
        host = self.cpu().contiguous()
        n = host.numel() * host.itemsize
        data = C.string_at(host.data_ptr(), n) if n else b""
        return (_rebuild, (data, self.dtype.name, self.shape, None if self._dev is None else str(self.device)))

    def __copy__(self):
        return self.clone()

    def __deepcopy__(self, memo):
        return self.clone()
