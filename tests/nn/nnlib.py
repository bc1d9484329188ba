"""THNN calls for the tests, typed from the committed header.

`NN(lib)` reads every `THNN_*` prototype from include/TH/TH.h. `nn.call(real, "Linear_updateOutput",
x, out, w, b, None)` calls `THNN_<real>Linear_updateOutput` with the state (NULL) prepended:
- a numpy array becomes a new TH tensor of the parameter's type (THFloatTensor, THLongTensor,
  THIntTensor, ...) with the array's shape, strides (>= 0) and values;
- a thlib.Tensor (e.g. `nn.empty(real)`, an output to read back) or a Generator is passed as is;
- None is NULL; Python numbers become the parameter's C type.
It raises thlib.THError when the call records an error. `nn.tensor(real, a)` makes a tensor
explicitly, so one tensor can be passed to several calls or read back with `.numpy()`.

Also here: `fd_grad` (central finite differences of a scalar function) and torch helpers.
"""

import ctypes as C
import os
import re

import numpy as np
from thlib import ROOT, THError

HEADER = os.path.join(ROOT, "include", "TH", "TH.h")
PROTO = re.compile(r"\bvoid\s+(THNN_\w+)\s*\(([^)]*)\)\s*;", re.S)
TENSOR = re.compile(r"TH(Float|Double|Long|Int|Byte|Char|Short)Tensor\b")
SCALARS = {
    "bool": C.c_bool,
    "int": C.c_int,
    "int32_t": C.c_int32,
    "int64_t": C.c_int64,
    "long": C.c_long,
    "double": C.c_double,
    "float": C.c_float,
}


def _param(decl):
    """(kind, detail) of one C parameter: ('tensor', 'Float'), ('ptr', None) or ('scalar', ctype)."""
    decl = decl.strip()
    if "*" in decl:
        m = TENSOR.search(decl)
        return ("tensor", m.group(1)) if m else ("ptr", None)
    words = decl.replace("const ", "").split()
    typ = " ".join(words[:-1])
    return ("scalar", SCALARS[typ])


def prototypes(path=HEADER):
    text = open(path).read()
    out = {}
    for name, params in PROTO.findall(text):
        ps = [p for p in params.split(",") if p.strip()]
        out[name] = [_param(p) for p in ps]
    return out


class Generator:
    """A THGenerator handle (freed when garbage-collected)."""

    def __init__(self, lib, seed):
        self.lib = lib
        self.ptr = lib.call("THGenerator_new", C.c_void_p)
        lib.call("THRandom_manualSeed", None, C.c_void_p(self.ptr), C.c_uint64(seed))

    def __del__(self):
        if self.ptr:
            self.lib.dll.THGenerator_free(C.c_void_p(self.ptr))
            self.ptr = None


class NN:
    def __init__(self, lib):
        self.lib = lib
        self.protos = prototypes()

    def empty(self, real):
        """A new empty tensor (an output for a call to resize)."""
        return self.lib.new(real)

    def tensor(self, real, a):
        return self.lib.from_numpy(np.asarray(a), real)

    def generator(self, seed=1):
        return Generator(self.lib, seed)

    def call(self, real, fn, *args):
        name = f"THNN_{real}{fn}"
        params = self.protos.get(name)
        assert params is not None, f"{name} is not declared in {HEADER}"
        has_state = bool(params) and params[0] == ("ptr", None) and not fn.startswith("unfolded_")
        if has_state:
            params = params[1:]
        assert len(args) == len(params), f"{name} takes {len(params)} arguments after the state, got {len(args)}"
        keep, raw = [], []
        for a, (kind, detail) in zip(args, params):
            if a is None:
                raw.append(C.c_void_p(None))
            elif kind == "tensor" and isinstance(a, np.ndarray):
                t = self.lib.from_numpy(a, detail)
                keep.append(t)
                raw.append(C.c_void_p(t.ptr))
            elif kind in ("tensor", "ptr"):
                assert hasattr(a, "ptr"), f"{name}: expected a tensor or handle, got {type(a)}"
                raw.append(C.c_void_p(a.ptr))
            else:
                raw.append(detail(a))
        if has_state:
            raw.insert(0, C.c_void_p(None))
        argtypes = [type(r) for r in raw]
        self.lib.dll.THClearLastError()
        self.lib.fn(name, None, argtypes)(*raw)
        code = self.lib.dll.THGetLastErrorCode()
        if code:
            raise THError(code, self.lib.dll.THGetLastError().decode())


def fd_grad(f, x, eps=1e-6):
    """d f(x) / d x by central differences, f returning a scalar (x float64, copied)."""
    x = np.array(x, dtype=np.float64, order="C")  # reshape(-1) below must be a view
    g = np.zeros_like(x)
    flat = x.reshape(-1)
    gf = g.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + eps
        hi = f(x)
        flat[i] = old - eps
        lo = f(x)
        flat[i] = old
        gf[i] = (hi - lo) / (2 * eps)
    return g


# float tolerances for Float results against a float64 reference (relative to the scale)
TOL = {"Float": 2e-5, "Double": 1e-12}
NP = {"Float": np.float32, "Double": np.float64}


def close(got, want, real, scale=None, tol=None):
    """Asserts |got - want| <= tol * max(1, scale) elementwise (scale: max |want| by default)."""
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, f"shape {got.shape} != {want.shape}"
    if scale is None:
        scale = float(np.max(np.abs(want))) if want.size else 1.0
    t = (tol if tol is not None else TOL[real]) * max(1.0, scale)
    err = float(np.max(np.abs(got - want))) if want.size else 0.0
    assert err <= t, f"max error {err} > {t}"
