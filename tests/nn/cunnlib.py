"""THCUNN calls for the differential tests: the same layer on device tensors (THNN_Cuda*,
THNN_CudaDouble*, THNN_CudaHalf*) and on host tensors (THNN_Float*, THNN_Double*), from the same
numpy values and the same strided layouts.

`Cunn(lib)` holds a THCState. `cunn.call(real, fn, *args)` calls `THNN_<real><fn>` with the state
first; a numpy argument becomes a new device tensor of the call's type, with the array's shape,
strides and values; a device tensor (`cunn.tensor`, `cunn.empty`) is passed as is; None is NULL;
numbers become the parameter's C type (read from the committed header). `.numpy(t)` reads a device
tensor back (through its storage, so strided views read exactly their elements).

HOST maps a device real to the host real that is its reference: Cuda and CudaHalf to Float (Half
computes in f32 and rounds once per stored value, so the reference is the Float layer on the
half-rounded inputs, rounded), CudaDouble to Double.
"""

import ctypes as C
import os
import re

import numpy as np
from thclib import DevSide, Thc, on_storage, view_values
from thlib import ROOT, THError

HEADER = os.path.join(ROOT, "include", "TH", "TH.h")
PROTO = re.compile(r"\bvoid\s+(THNN_Cuda\w+)\s*\(([^)]*)\)\s*;", re.S)
SCALARS = {"bool": C.c_bool, "int": C.c_int, "int64_t": C.c_int64, "double": C.c_double, "float": C.c_float}

REALS = ["Cuda", "CudaDouble", "CudaHalf"]
HOST = {"Cuda": "Float", "CudaDouble": "Double", "CudaHalf": "Float"}
# THC's element type name of each THCUNN real (thclib's reals)
ELEM = {"Cuda": "Float", "CudaDouble": "Double", "CudaHalf": "Half"}
NP = {"Cuda": np.float32, "CudaDouble": np.float64, "CudaHalf": np.float16}


def _param(decl):
    decl = decl.strip()
    if "*" in decl:
        return ("ptr", None)
    words = decl.replace("const ", "").split()
    return ("scalar", SCALARS[" ".join(words[:-1])])


def prototypes():
    out = {}
    for name, params in PROTO.findall(open(HEADER).read()):
        out[name] = [_param(p) for p in params.split(",") if p.strip()]
    return out


class Cunn:
    def __init__(self, lib):
        self.lib = lib
        self.thc = Thc(lib)
        self.dev = DevSide(self.thc)
        self.protos = prototypes()

    def tensor(self, real, a):
        """A device tensor of `real` with `a`'s shape, element strides (>= 0) and values."""
        elem = ELEM[real]
        a = np.asarray(a).astype(NP[real], copy=False)
        isz = a.itemsize
        assert all(s >= 0 for s in a.strides), "negative strides are not supported"
        span = 1 + sum((n - 1) * (s // isz) for n, s in zip(a.shape, a.strides)) if a.size else 0
        base = np.lib.stride_tricks.as_strided(a, shape=(span,), strides=(isz,)) if a.size else a.reshape(0)
        st = self.dev.storage(elem, np.ascontiguousarray(base))
        t = on_storage(self.dev, elem, st, 0, a.shape, [s // isz for s in a.strides])
        self.dev.free_storage(elem, st)
        return t

    def empty(self, real):
        return self.dev.new(ELEM[real])

    def numpy(self, t):
        return view_values(self.dev, t)

    def call(self, real, fn, *args):
        name = f"THNN_{real}{fn}"
        params = self.protos.get(name)
        assert params is not None, f"{name} is not declared in {HEADER}"
        params = params[1:]
        assert len(args) == len(params), f"{name} takes {len(params)} arguments after the state, got {len(args)}"
        keep, raw = [], []
        for a, (kind, detail) in zip(args, params):
            if a is None:
                raw.append(C.c_void_p(None))
            elif kind == "ptr" and isinstance(a, np.ndarray):
                t = self.tensor(real, a)
                keep.append(t)
                raw.append(C.c_void_p(t.ptr))
            elif kind == "ptr":
                raw.append(C.c_void_p(a.ptr))
            else:
                raw.append(detail(a))
        raw.insert(0, self.thc.state)
        self.lib.dll.THClearLastError()
        self.lib.fn(name, None, [type(r) for r in raw])(*raw)
        code = self.lib.dll.THGetLastErrorCode()
        if code:
            raise THError(code, self.lib.dll.THGetLastError().decode())


def half_round(a):
    """float64 values rounded to the nearest float16, as float64."""
    return np.asarray(a, dtype=np.float64).astype(np.float16).astype(np.float64)


def agree(got, want, real, ulps=8):
    """Device result `got` against the host reference `want` (float64 arrays). On the emulator
    the two run the same operations in the same order, so results are expected to match to
    within a few ulps of the compute type (a GPU's libm may differ in the last bits; `ulps` more
    where the two sum in different orders); Half results within a half ulp or two of the reference
    rounded to half."""
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, f"shape {got.shape} != {want.shape}"
    if real == "CudaHalf":
        want = half_round(want)
        # one half ulp (2^-10 relative), doubled for a result just under a power of 2 that the
        # reference's f32 rounding puts on the other side
        tol = np.maximum(np.abs(want), 2.0**-14) * 2.0**-9
    else:
        eps = 2.0**-23 if real == "Cuda" else 2.0**-52
        tol = np.maximum(np.abs(want), 1.0) * ulps * eps
    same_nan = np.isnan(got) == np.isnan(want)
    assert same_nan.all(), "NaN positions differ"
    finite = ~np.isnan(want)
    bad = np.abs(got - want)[finite] > tol[finite]
    assert not bad.any(), f"{int(bad.sum())} of {got.size} differ; max error {np.max(np.abs(got - want)[finite])}"


def exact(real, x):
    """`x` as values the device real holds exactly, as float64 (so both engines start from the
    same values); None stays None."""
    if x is None:
        return None
    return half_round(x) if real == "CudaHalf" else np.asarray(x).astype(NP[real]).astype(np.float64)


def host_type(real):
    """The numpy type of the host THNN real that computes `real`'s layers."""
    return np.float32 if HOST[real] == "Float" else np.float64


class InOut:
    """An argument tensor that the call updates (read back afterwards)."""

    def __init__(self, a):
        self.a = a


def both(nn, cunn, real, fn, args, layout=None):
    """Runs THNN_<real><fn> on the device and THNN_<host><fn> on the host; numpy arrays become
    tensors of each side (in `layout`), "OUT" a fresh output, InOut an updated tensor, anything
    else (None: NULL, numbers) is passed as is; returns the outputs and updated tensors of each
    side, read back as float64."""
    res = []
    for dev in (True, False):
        fam, r = (cunn, real) if dev else (nn, HOST[real])
        typ = NP[real] if dev else host_type(real)
        outs, call = [], []
        for a in args:
            if isinstance(a, str) and a == "OUT":
                t = fam.empty(r)
                outs.append(t)
            elif isinstance(a, InOut):
                t = fam.tensor(r, a.a.astype(typ))
                outs.append(t)
            elif isinstance(a, np.ndarray):
                v = a.astype(typ)
                t = fam.tensor(r, layout(v) if layout else v)
            else:
                t = a
            call.append(t)
        fam.call(r, fn, *call)
        res.append([(cunn.numpy(t) if dev else t.numpy()).astype(np.float64) for t in outs])
    return res


def check(nn, cunn, real, fn, args, layout=None, ulps=8):
    """`both`, each device result against the host's (`agree` within `ulps`); the device's."""
    got, want = both(nn, cunn, real, fn, args, layout)
    for g, w in zip(got, want):
        agree(g, w, real, ulps=ulps)
    return got
