"""`th.cuda`: the CUDA devices libth can use, and its caching allocator's statistics.

Without a GPU (and without an emulator build run with TH_CUDA_EMULATOR=1) `is_available()` is
False and `device_count()` 0; moving a tensor to the device then raises `THCudaError` with the
library's reason (no driver, no device, or built without CUDA).
"""

import ctypes as C

from . import _lib as L
from ._lib import THCudaError

P = C.c_void_p


class device:
    """A device: `th.device("cpu")`, `th.device("cuda")` (the current device), `"cuda:1"`,
    `th.device("cuda", 1)`. `type` is "cpu" or "cuda", `index` the ordinal (None for cpu)."""

    __slots__ = ("type", "index")

    def __init__(self, spec, index=None):
        if isinstance(spec, device):
            spec, index = spec.type, spec.index if index is None else index
        elif isinstance(spec, int) and not isinstance(spec, bool):
            spec, index = "cuda", spec
        if not isinstance(spec, str):
            raise TypeError(f"a device is 'cpu', 'cuda', 'cuda:N' or an ordinal, not {spec!r}")
        kind, _, n = spec.partition(":")
        if kind not in ("cpu", "cuda"):
            raise ValueError(f"unknown device type {kind!r} (th has 'cpu' and 'cuda')")
        if n:
            if index is not None:
                raise ValueError(f"device {spec!r} already has an index")
            if not n.isdigit():
                raise ValueError(f"bad device index in {spec!r}")
            index = int(n)
        if kind == "cpu" and index not in (None, 0):
            raise ValueError("the cpu device has no index other than 0")
        self.type = kind
        self.index = None if kind == "cpu" else index

    def __repr__(self):
        return f"device(type={self.type!r}" + ("" if self.index is None else f", index={self.index}") + ")"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, (str, int)):
            try:
                other = device(other)
            except (TypeError, ValueError):
                return False
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))


def _count():
    """(number of devices, the library's reason when there are none)."""
    f = L.fn("THCState_getNumDevices", C.c_int, [P])
    L.dll.THClearLastError()
    n = f(None)
    err = L.last_error(THCudaError)
    L.dll.THClearLastError()
    return n, (err.msg if err is not None else "no CUDA device")


def is_available():
    """Whether libth has at least one CUDA device (never raises)."""
    return _count()[0] > 0


def device_count():
    """The number of CUDA devices (0 without a driver, a device, or CUDA support)."""
    return _count()[0]


def current_device():
    """This thread's current device ordinal."""
    _require()
    return L.call("THCudaGetDevice", C.c_int, [P], None)


def set_device(index):
    _require()
    L.call("THCudaSetDevice", None, [P, C.c_int], None, _index(index))


def _require():
    n, why = _count()
    if n == 0:
        raise THCudaError(f"CUDA is not available: {why}", L.TH_ERR_NO_CUDA)
    return n


def _index(d):
    """The ordinal of a device argument (None: the current device)."""
    if d is None:
        return L.call("THCudaGetDevice", C.c_int, [P], None)
    d = device(d) if not isinstance(d, device) else d
    if d.type != "cuda":
        raise ValueError(f"expected a CUDA device, got {d}")
    return d.index if d.index is not None else L.call("THCudaGetDevice", C.c_int, [P], None)


def resolve(d):
    """A device argument as libth's placement: None for the host, else a checked ordinal."""
    d = device(d) if not isinstance(d, device) else d
    if d.type == "cpu":
        return None
    n = _require()
    i = _index(d)
    if not 0 <= i < n:
        raise THCudaError(f"invalid device ordinal {i}: there are {n} CUDA device(s)", L.TH_ERR_NO_CUDA)
    return i


def synchronize(device=None):
    """Waits until all work queued on the device (default: the current one) has completed."""
    _require()
    i = _index(device)
    prev = L.call("THCudaGetDevice", C.c_int, [P], None)
    L.call("THCudaSetDevice", None, [P, C.c_int], None, i)
    try:
        L.call("THCudaSynchronize", None, [P], None)
    finally:
        L.call("THCudaSetDevice", None, [P, C.c_int], None, prev)


def _stats(device):
    _require()
    out = [C.c_size_t() for _ in range(4)]
    L.call("THCudaMemoryStats", None, [P, C.c_int] + [C.POINTER(C.c_size_t)] * 4, None, _index(device),
           *[C.byref(x) for x in out])
    return [x.value for x in out]


def memory_allocated(device=None):
    """Bytes of device memory held by tensors (the caching allocator's allocated blocks)."""
    return _stats(device)[0]


def memory_reserved(device=None):
    """Bytes the caching allocator holds from the device (allocated plus cached)."""
    return _stats(device)[1]


def max_memory_allocated(device=None):
    """The peak of `memory_allocated`."""
    return _stats(device)[2]


def max_memory_reserved(device=None):
    """The peak of `memory_reserved`."""
    return _stats(device)[3]


def empty_cache():
    """Returns the cached free blocks of every device to the driver."""
    _require()
    L.call("THCudaEmptyCache", None, [P], None)


def current_stream_handle(index):
    """The `cudaStream_t` of this thread's current stream on device `index`, as DLPack's stream
    argument: 1 (the legacy default stream) for the default stream."""
    s = L.call("THCState_getCurrentStreamOnDevice", P, [P, C.c_int], None, index)
    return s or 1
