"""Every THC entry point the header declares, called where CUDA is unusable (no driver here; a
driver without a device in scripts/libcuda_nodevice.sh's setting): with NULL for every pointer
and 0 for every number, each call returns (no crash, no abort) and, unless it is one of the few
that are meaningful without a device, records an error: one of the library's codes, almost
always no CUDA, no device, or a NULL argument (geometry checks may come first, e.g. a count of
0). Skipped where a device exists (the GPU suite covers that machine)."""

import ctypes as C
import os
import re

import pytest
from thlib import Lib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DECL = re.compile(r"^([A-Za-z_][\w \*]*?)\b((?:THC(?!har|lear)|TH\w+Tensor_copy(?:Async)?Cuda)\w*)\(([^;]*?)\);", re.M | re.S)
TH_ERR_NULL_ARG, TH_ERR_NO_CUDA, TH_ERR_PANIC, TH_ERR_NO_DEVICE = 1, 7, 11, 13

# Meaningful without a device: conversions (of 0 elements for the device-array ones), the static
# allocator tables and the caching flag, state objects, the no-op MAGMA init, heap accounting,
# the kernel peer-access flag (always off), the random generators' shutdown and (absent, NULL)
# per-thread states, frees / retains / releases of NULL
# (no-ops, as in TH), handler setup, the caching allocator's static table, a shutdown with
# nothing to release, element sizes.
NO_DEVICE_OK = re.compile(
    r"^(THC_float2half|THC_half2float|THCFloat2Half|THCHalf2Float|THCState_getCudaHostAllocator"
    r"|THCState_isCachingAllocatorEnabled|THCState_getDeviceAllocator|THCState_alloc|THCState_free|THCSetGCHandler|THCCachingAllocator_get"
    r"|THCMagma_init|THCHeapUpdate|THCRandom_shutdown|THCRandom_generatorStates|THCState_(get|set)KernelPeerToPeerAccessEnabled"
    r"|THCudaShutdown|THCudaFree|THCudaHostFree|THCStream_free|THCStream_retain|THCuda\w*_(free|retain|release)"
    r"|THCuda\w*Storage_elementSize)$")


class DescBuff(C.Structure):
    _fields_ = [("str", C.c_char * 64)]


def ctype(t):
    t = t.replace("const", "").replace("struct", "").strip()
    if "*" in t:
        return C.c_void_p
    if t == "void":
        return None
    if t == "float":
        return C.c_float
    if t == "double":
        return C.c_double
    if t in ("THDescBuff", "THCDescBuff"):
        return DescBuff
    if t in ("THHalf", "THBFloat16"):
        return C.c_uint16
    return C.c_int64


def declarations():
    with open(os.path.join(ROOT, "include", "TH", "TH.h")) as f:
        text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
    out = []
    for m in DECL.finditer(text):
        ret, name, params = m.group(1).strip(), m.group(2), m.group(3).strip()
        args = [] if params in ("", "void") else [p.strip() for p in params.split(",")]
        types = [ctype(re.sub(r"\w+$", "", a) if not a.endswith("*") else a) for a in args]
        out.append((name, ctype(ret), types))
    return out


@pytest.fixture(scope="module")
def lib():
    lib = Lib()
    cdll = lib.lib if hasattr(lib, "lib") else C.CDLL(os.environ.get("TH_LIB", os.path.join(ROOT, "target/debug/libth.so")))
    cdll.THCState_alloc.restype = C.c_void_p
    state = cdll.THCState_alloc()
    cdll.THCState_getNumDevices.argtypes = [C.c_void_p]
    if cdll.THCState_getNumDevices(C.c_void_p(state)) > 0:
        pytest.skip("a CUDA device is present: the GPU suite (scripts/test_gpu.sh) covers this machine")
    return cdll


def test_every_thc_entry_point_fails_cleanly_without_a_device(lib):
    decls = declarations()
    assert len(decls) > 1500, f"only {len(decls)} THC declarations parsed"
    lib.THGetLastErrorCode.restype = C.c_int
    silent, bad_code, codes = [], [], {}
    for name, ret, types in decls:
        f = getattr(lib, name)
        f.restype, f.argtypes = ret, types
        lib.THClearLastError()
        f(*[t() if t is not None else None for t in types])
        code = lib.THGetLastErrorCode()
        if code == 0:
            if not NO_DEVICE_OK.match(name):
                silent.append(name)
        elif not 1 <= code <= TH_ERR_NO_DEVICE or code == TH_ERR_PANIC:
            bad_code.append((name, code))
        else:
            codes[code] = codes.get(code, 0) + 1
    assert not silent, f"{len(silent)} THC calls succeeded without a device: {silent[:20]}"
    assert not bad_code, f"codes outside the library's: {bad_code[:20]}"
    # most calls stop at the missing device or at a NULL handle
    assert codes.get(TH_ERR_NULL_ARG, 0) + codes.get(TH_ERR_NO_CUDA, 0) + codes.get(TH_ERR_NO_DEVICE, 0) > 0.9 * len(decls), codes
