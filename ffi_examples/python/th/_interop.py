"""numpy and DLPack interop (zero-copy both ways) and sharing a tensor's memory with other
processes (POSIX shared memory through THRefcountedMapAllocator)."""

import ctypes as C
import os

from . import _lib as L
from . import cuda as _cuda
from . import tensor as _T
from ._lib import THBufferError, THTypeError, THValueError, as_dtype, call, fn

P = C.c_void_p


class InteropMixin:
    """numpy / DLPack / shared-memory methods of `th.Tensor` (th/_interop.py)."""

    __slots__ = ()

    # ---- numpy / DLPack ----
    # numpy.asarray(t) calls __array__, which describes the memory through `__array_interface__`
    # on a holder with its own tensor reference (the array's `base`), so the array stays valid
    # after `t.close()`.

    def __array__(self, dtype=None, copy=None):
        import numpy as np

        self._host_only("convert to numpy")
        a = np.asarray(_ArrayView(self))
        if dtype is not None and np.dtype(dtype) != a.dtype:
            if copy is False:
                raise ValueError("a dtype conversion needs a copy")
            return a.astype(dtype)
        return a.copy() if copy else a

    def numpy(self):
        """A numpy array sharing this tensor's memory (not for bfloat16: numpy has no such
        dtype; use .float() first)."""
        import numpy as np

        self._host_only("convert to numpy")
        return np.asarray(_ArrayView(self))

    def __dlpack_device__(self):
        """(1, 0) for host tensors, (2, ordinal) (kDLCUDA) for device tensors."""
        return (1, 0) if self._dev is None else (2, self._dev)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule (zero-copy unless `copy`). For a device tensor, `stream` is the
        consumer's CUDA stream (None: the legacy default stream, 1; 2: the per-thread default
        stream; -1: no synchronization; else a cudaStream_t): it is made to wait, through an
        event, for the work queued so far on this thread's current stream of the device."""
        here = self.__dlpack_device__()
        if dl_device is not None and tuple(dl_device) != here:
            raise BufferError(f"th cannot export a tensor on {here} to device {tuple(dl_device)} through DLPack: "
                              "use .cpu() / .cuda() first")
        if self._dev is None:
            if stream is not None:
                raise BufferError("a host tensor's __dlpack__ takes no stream (stream must be None)")
        else:
            L.call("THCState_dlpackSync", None, [P, C.c_int, C.c_int64], None, self._dev,
                   1 if stream is None else int(stream), kind=THBufferError)
        src = self.clone() if copy else self
        if max_version is None or max_version[0] < 1:
            m = src._c("toDLPackUnversioned", P, [P], src.handle)
            return L.PyCapsule_New(m, L.CAPSULE_L, L.DESTRUCTOR_L)
        m = src._c("toDLPack", P, [P], src.handle)
        if copy:
            L.DLManagedTensorVersioned.from_address(m).flags |= L.S.FLAG_IS_COPIED
        return L.PyCapsule_New(m, L.CAPSULE_V, L.DESTRUCTOR_V)

    # ---- shared memory ----

    def _host_only(self, what):
        if self._dev is not None:
            raise THTypeError(f"can't {what} a tensor on {self.device}: copy it to host memory with .cpu() first")

    def share_memory_(self, name=None):
        """Moves the data into a POSIX shared-memory segment (THRefcountedMapAllocator) another
        process can open with `Tensor.from_shared(t.shared_name, t.shape, t.dtype)`. The
        segment is removed when the last user (in any process) frees it. Returns self."""
        self._host_only("share")
        if self._shm_name is not None:
            return self
        if name is None:
            name = f"/th_{os.getpid()}_{id(self):x}_{os.urandom(4).hex()}"
        n = self.numel()
        if n == 0:
            raise THValueError("cannot share an empty tensor")
        ctx = call("THMapAllocatorContext_new", P, [C.c_char_p, C.c_int], name.encode(),
                   MAPPED_SHAREDMEM | MAPPED_EXCLUSIVE)
        try:
            st = call(f"TH{self._dtype.th}Storage_newWithAllocator", P, [C.c_ssize_t, P, P], n,
                      _rc_allocator(), ctx)
        except Exception:
            fn("THMapAllocatorContext_free", None, [P])(ctx)
            raise
        try:
            shape = self.shape
            with L.LongList(shape) as sz:
                tmp = _T.Tensor._adopt(self._c("newWithStorage", P, [P, C.c_ssize_t, P, P], st, 0, sz, None),
                                    self._dtype)
            tmp.copy_(self)
            self._c("set", None, [P, P], self.handle, tmp.handle)
            tmp.close()
        finally:
            fn(f"TH{self._dtype.th}Storage_free", None, [P])(st)
        self._shm_name = name
        return self

    @property
    def shared_name(self):
        """The shared-memory name after share_memory_() (else None)."""
        return self._shm_name

    def is_shared(self):
        return self._shm_name is not None

    @classmethod
    def from_shared(cls, name, shape, dtype="float32"):
        """Opens the shared segment `name` made by `share_memory_()` in another process (the
        same memory: writes are seen on both sides)."""
        d = as_dtype(dtype)
        shape = _T._shape_arg((shape,)) if not isinstance(shape, int) else [shape]
        ctx = call("THMapAllocatorContext_new", P, [C.c_char_p, C.c_int], name.encode(),
                   MAPPED_SHAREDMEM | MAPPED_NOCREATE)
        try:
            st = call(f"TH{d.th}Storage_newWithAllocator", P, [C.c_ssize_t, P, P], 0, _rc_allocator(), ctx)
        except Exception:
            fn("THMapAllocatorContext_free", None, [P])(ctx)
            raise
        try:
            with L.LongList(shape) as sz:
                h = call(f"TH{d.th}Tensor_newWithStorage", P, [P, C.c_ssize_t, P, P], st, 0, sz, None)
        finally:
            fn(f"TH{d.th}Storage_free", None, [P])(st)
        t = _T.Tensor._adopt(h, d)
        t._shm_name = name
        return t


MAPPED_SHAREDMEM, MAPPED_EXCLUSIVE, MAPPED_NOCREATE = 2, 4, 8


def _rc_allocator():
    return C.addressof(C.c_char.in_dll(L.dll, "THRefcountedMapAllocator"))


class _ArrayView:
    """Holds its own reference on a tensor and describes it to numpy (`arr.base`), so arrays
    stay valid after the Tensor object is closed."""

    def __init__(self, t):
        if t._dtype.numpy is None:
            raise THTypeError("bfloat16 has no numpy dtype: convert with .float() (or use th's own DLPack path)")
        self.t = t._shallow()
        shape, strides = self.t.shape, self.t.strides
        ptr = self.t.data_ptr()
        if not shape:
            shape, strides = (0,), (1,)
        if not ptr:
            ptr = C.addressof(_EMPTY)
        isz = t._dtype.itemsize
        self.__array_interface__ = {
            "version": 3,
            "shape": tuple(shape),
            "typestr": t._dtype.typestr,
            "data": (ptr, False),
            "strides": tuple(s * isz for s in strides),
        }


_EMPTY = (C.c_char * 16)()


# ---- numpy / DLPack import ----


def from_dlpack(x):
    """A tensor sharing `x`'s memory: any object with `__dlpack__` (numpy arrays, torch tensors,
    th tensors, ...) or a DLPack PyCapsule. The producer's deleter runs when the last th tensor
    on the memory is freed. Raises BufferError with the library's message when the tensor
    cannot be taken (read-only, negative strides, unsupported dtype or device)."""
    if hasattr(x, "__dlpack__"):
        kw = {}
        dev = x.__dlpack_device__() if hasattr(x, "__dlpack_device__") else (1, 0)
        if dev[0] == 2:
            # A device producer orders its work before our current stream of that device.
            kw["stream"] = _cuda.current_stream_handle(_cuda.resolve(_cuda.device("cuda", dev[1])))
        try:
            cap = x.__dlpack__(max_version=(1, 1), **kw)
        except TypeError:
            cap = x.__dlpack__(**kw)
    else:
        cap = x
    name = L.PyCapsule_GetName(cap)
    if name == L.CAPSULE_V:
        ptr = L.PyCapsule_GetPointer(cap, L.CAPSULE_V)
        m = L.DLManagedTensorVersioned.from_address(ptr)
        func, used = "fromDLPack", L.CAPSULE_V_USED
    elif name == L.CAPSULE_L:
        ptr = L.PyCapsule_GetPointer(cap, L.CAPSULE_L)
        m = L.DLManagedTensor.from_address(ptr)
        func, used = "fromDLPackUnversioned", L.CAPSULE_L_USED
    else:
        raise BufferError(f"not an unconsumed DLPack capsule (name {name!r})")
    dt = m.dl_tensor.dtype
    d = L.dtype_from_dl(dt.code, dt.bits, dt.lanes)
    # CUDA device memory (kDLCUDA) and managed memory with a device library go to THC's import,
    # which checks the device; everything else to TH's (which refuses device memory).
    dev = None
    if m.dl_tensor.device.device_type == 2:
        dev = _cuda.resolve(_cuda.device("cuda", m.dl_tensor.device.device_id))
    h = L.fam_call(d, dev, func, P, [P], ptr, kind=THBufferError)
    L.PyCapsule_SetName(cap, used)  # consumed: the th tensor owns the managed tensor now
    return _T.Tensor._adopt(h, d, dev=dev)


def from_numpy(a):
    """A tensor sharing the numpy array's memory (zero-copy); the array stays alive as long as
    any th tensor uses it. Read-only arrays and negative strides are refused (BufferError)."""
    return from_dlpack(a)
