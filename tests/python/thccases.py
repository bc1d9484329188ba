"""Cases for the THC differential tests: random operands of THC's elementwise functions and
reductions, built identically on the host and the device (`Case`, `RCase`), run on both and
compared (`check_case`, `check_reduce`), plus numpy references for the ops that have a simple one.
`bind(host, dev)` (from test_thc) sets the two sides."""

import ctypes as C
import math

import numpy as np
import pytest
from cases import random_shape, random_values
from thclib import (ALL_REALS, FLOATS, THC_REALS, Layout, as_values, emulated, geometry, header_restype, mismatch,
                    on_storage, raw_dtype, storage_of, th_error_text, view_values)
from thlib import DTYPES, THError, f32_to_bf16

HOST = DEV = None


def bind(host, dev):
    global HOST, DEV
    HOST, DEV = host, dev


# ---------------------------------------------------------------------------------------------
# THC's elementwise functions (THCTensorMath{Pointwise,Pairwise,Compare,CompareT}.h): name ->
# (argument pattern after the output, dtypes THC declares it for). Pattern letters: t the main
# tensor, u/w further tensors (may broadcast), v/x scalars, d an int dimension; "cmp" outputs
# are Byte tensors, "equal" returns an int.

FL3 = ["Half", "Float", "Double"]
CMPS = ["lt", "gt", "le", "ge", "eq", "ne"]


def _ops(names, sig, reals):
    return {n: (sig, reals) for n in names.split()}


ELEMENTWISE = {
    "pointwise": {
        **_ops("sigmoid log lgamma log1p exp cos acos cosh sin asin sinh tan atan tanh sqrt rsqrt ceil floor round "
               "trunc frac cinv", "t", FL3),
        **_ops("neg", "t", ["Short", "Int", "Long"] + FL3),
        **_ops("abs sign", "t", THC_REALS),
        "atan2": ("tu", FL3), "pow": ("tv", FL3), "tpow": ("vt", FL3), "lerp": ("tuv", FL3),
        "clamp": ("tvx", THC_REALS), "cross": ("tud", THC_REALS),
        **_ops("cadd csub", "tvu", THC_REALS),
        **_ops("cmul cpow cdiv clshift crshift cmax cmin cfmod cremainder cbitand cbitor cbitxor", "tu", THC_REALS),
        **_ops("cmaxValue cminValue", "tv", THC_REALS),
        **_ops("addcmul addcdiv", "tvuw", THC_REALS),
    },
    "pairwise": {**_ops("add sub mul div lshift rshift fmod remainder bitand bitor bitxor", "tv", THC_REALS),
                 "equal": ("equal", THC_REALS)},
    "compare": {**{f"{c}Value": ("cmp:tv", THC_REALS) for c in CMPS}, **{f"{c}ValueT": ("tv", THC_REALS) for c in CMPS}},
    "compareT": {**{f"{c}Tensor": ("cmp:tu", THC_REALS) for c in CMPS},
                 **{f"{c}TensorT": ("tu", THC_REALS) for c in CMPS}},
}

# Maximum ULP differences allowed against the host on a real GPU (see test_thc's docstring): CUDA's
# documented maximum errors of its single / double precision functions, plus one for the host's
# libm. On the emulator the kernels call the host's libm, so every result must be bit-exact
# (but for `ALGO_ULPS`).
ULPS_FLOAT = {"exp": 3, "log": 2, "log1p": 2, "sin": 3, "cos": 3, "tan": 5, "asin": 3, "acos": 3, "atan": 3,
              "sinh": 4, "cosh": 3, "tanh": 3, "sigmoid": 4, "pow": 5, "tpow": 5, "cpow": 5, "atan2": 4,
              "rsqrt": 3, "lgamma": 7, **dict.fromkeys(("lshift", "rshift", "clshift", "crshift"), 6)}
ULPS_DOUBLE = {"exp": 2, "log": 2, "log1p": 2, "sin": 3, "cos": 3, "tan": 3, "asin": 3, "acos": 3, "atan": 3,
               "sinh": 3, "cosh": 2, "tanh": 2, "sigmoid": 3, "pow": 3, "tpow": 3, "cpow": 3, "atan2": 3,
               "rsqrt": 2, "lgamma": 5, **dict.fromkeys(("lshift", "rshift", "clshift", "crshift"), 4)}


# Where the host runs another algorithm than the device, on the emulator too: on AVX-512 the
# host computes contiguous runs of these with slice kernels (src/kernels/vmath/avx512.rs, within
# 1 ulp), the device with the generic code (within 2 ulp in f32, 3 in f64).
ALGO_ULPS = {("log", "Float"): 3, ("tanh", "Float"): 3, ("log", "Double"): 4}


def ulps(op, real):
    """ULPs allowed between device and host results of `op` on dtype `real`."""
    if real not in FLOATS:
        return 0
    algo = ALGO_ULPS.get((op, real), 0)
    if emulated():
        return algo
    n = max(algo, (ULPS_DOUBLE if real == "Double" else ULPS_FLOAT).get(op, 0))
    return min(n, 1) if real in ("Half", "BFloat16") else n  # 16-bit: computed in float, then rounded


# THC's reductions (THCTensorMathReduce.h): name -> (argument pattern, dtypes THC declares it for).
# Patterns: "dk" (r, t, dim, keepdim); "dbk" (r, t, dim, biased, keepdim); "vdk" (r, t, p, dim,
# keepdim); "vdm" (r, t, p, dim, maxnorm); "idk" (values, indices, t, dim, keepdim); "all" (t);
# "allb" (t, biased); "allv" (t, p); "dist" (a, b, p). Scalar results per the header.
REDUCE = {
    **_ops("sum prod mean", "dk", THC_REALS), **_ops("var std", "dbk", FL3), "norm": ("vdk", FL3),
    "renorm": ("vdm", FL3), **_ops("min max median", "idk", THC_REALS),
    **_ops("sumall prodall meanall minall maxall medianall", "all", THC_REALS), **_ops("varall stdall", "allb", FL3),
    "normall": ("allv", FL3), "dist": ("dist", THC_REALS),
}


def raw(real, v):
    """Values as raw storage elements (BFloat16 bits)."""
    return f32_to_bf16(np.asarray(v, dtype=np.float32)) if real == "BFloat16" else np.asarray(v).astype(raw_dtype(real))


def special_pool(real, zero=True):
    if real in FLOATS:
        big = {"Half": 6e4, "BFloat16": 1e38, "Float": 3e38, "Double": 1e300}[real]
        tiny = {"Half": 6e-8, "BFloat16": 1e-39, "Float": 1e-40, "Double": 1e-310}[real]
        p = [np.nan, np.inf, -np.inf, -0.0, big, -big, tiny, 0.5, -2.5]
        return p + ([0.0] if zero else [])
    if real == "Bool":
        return [0, 1]
    info = np.iinfo(DTYPES[real][0])
    p = [info.min, info.max, 1, info.max - 1] + ([-1, info.min + 1] if info.min < 0 else [])
    return p + ([0] if zero else [])


def vals(rng, real, shape, lo=None, hi=None, nonzero=False, special=False):
    v = random_values(rng, real, shape, low=lo, high=hi, nonzero=nonzero)
    if special and v.size:
        pool = np.array(special_pool(real, zero=not nonzero), dtype=np.float64 if real in FLOATS else np.int64)
        pick = pool[rng.integers(len(pool), size=shape)]
        v = np.where(rng.random(shape) < 0.3, pick, v.astype(pick.dtype))
        if real == "Bool":
            v = v != 0
    return raw(real, np.asarray(v).astype(np.float32) if real == "BFloat16" else v)


def scalar_of(real, r):
    """A raw storage element as the C scalar argument of dtype `real`."""
    if real in ("Half", "BFloat16"):
        return C.c_uint16(int(np.asarray(r).view(np.uint16)))
    return DTYPES[real][1](r.item() if hasattr(r, "item") else r)


def assert_same(real, got, want, what, ulps=0, atol=0.0):
    bad = mismatch(real, got, want, ulps, atol)
    assert bad is None, f"{what}: device != host: {bad}"


DOMAIN = {"log": (0.01, 50), "lgamma": (0.1, 10), "log1p": (-0.9, 50), "sqrt": (0, 100), "rsqrt": (0.01, 100),
          "asin": (-1, 1), "acos": (-1, 1), "tan": (-1.4, 1.4), "cinv": (0.5, 10), "cpow": (0.1, 4)}
DIVISORS = {"cdiv": "u", "cfmod": "u", "cremainder": "u", "addcdiv": "w", "div": "v", "fmod": "v", "remainder": "v"}
SHIFTS = {"lshift": "v", "rshift": "v", "clshift": "u", "crshift": "u"}
NO_BROADCAST = {"cross", "lerp", "atan2"}


def elementwise_params():
    out = []
    for group, ops in ELEMENTWISE.items():
        for op, (_, reals) in ops.items():
            for real in ALL_REALS:
                cpu = HOST.has(real, op)
                if real in reals or (real in ("BFloat16", "Bool") and cpu) or (cpu and DEV.has(real, op)):
                    out.append(pytest.param(group, op, real, id=f"{op}-{real}"))
    return out


def bits(real):
    return np.dtype(DTYPES[real][0]).itemsize * 8


def role_values(rng, op, real, role, shape, special):
    """Raw values of tensor operand `role` of `op`."""
    lo, hi = (-100, 100) if real not in FLOATS else DOMAIN.get(op, (-4, 4))
    if SHIFTS.get(op) == role:
        lo, hi = (0, bits(real) - 1) if real not in FLOATS else (0, 5)
    if op == "cpow" and real not in FLOATS:
        lo, hi = (0, 5) if role == "u" else (-5, 5)
    return vals(rng, real, shape, lo=lo, hi=hi, nonzero=DIVISORS.get(op) == role, special=special)


def scalar_value(rng, op, real, special):
    """One raw scalar argument of `op`."""
    if special and rng.random() < 0.3:
        return vals(rng, real, (1,), nonzero=DIVISORS.get(op) == "v", special=True)[0]
    if op in SHIFTS:
        x = int(rng.integers(0, bits(real))) if real not in FLOATS else int(rng.integers(0, 5))
    elif op == "pow":
        x = [2, 0.5, -1, 1.7, 3, 0][int(rng.integers(6))]
    elif op == "tpow":
        x = [1.5, 2, 0.5][int(rng.integers(3))]
    elif op == "lerp":
        x = float(rng.uniform(-1, 2))
    elif real == "Bool":
        x = int(rng.integers(0, 2))
    elif real in FLOATS:
        x = float(rng.uniform(-3, 3))
    else:
        x = int(rng.integers(1 if real == "Byte" else -9, 10))
        x = x or 1
    return raw(real, np.float32(x) if real == "BFloat16" else x)


class Case:
    """One call of `op` with random operands, built identically on both sides."""

    def __init__(self, rng, op, real, sig, mode, special):
        self.op, self.real, self.mode = op, real, mode
        self.cmp = sig.startswith("cmp:")
        self.sig = sig.split(":")[-1]
        self.out_real = "Byte" if self.cmp else real
        shape = list(random_shape(rng, max_dims=4, max_size=5))
        self.dim = None
        if "d" in self.sig:
            self.dim = int(rng.integers(len(shape)))
            shape[self.dim] = 3
        self.shape = shape = tuple(shape)
        self.tensors, self.scalars = {}, {}
        for role in self.sig if self.sig != "equal" else "tu":
            if role in "tuw":
                s = shape
                if role != "t" and op not in NO_BROADCAST and mode != "new" and rng.random() < 0.5:
                    s = tuple(1 if rng.random() < 0.3 else n for n in shape)[int(rng.integers(0, min(2, len(shape)))):]
                lay = Layout(rng, s, kind="contig" if mode == "new" else None, expand=not (role == "t" and mode == "alias"))
                self.tensors[role] = (lay, role_values(rng, op, real, role, lay.base_shape, special))
            elif role in "vx":
                self.scalars[role] = scalar_value(rng, op, real, special)
        if "v" in self.scalars and "x" in self.scalars and real != "Bool":  # clamp(lo, hi)
            lo, hi = sorted([self.scalars["v"], self.scalars["x"]], key=lambda r: as_values(real, np.array([r]))[0])
            self.scalars["v"], self.scalars["x"] = lo, hi
        self.k = int(rng.integers(1, 4))
        self.ov_base = role_values(rng, op, real, "t", (int(np.prod(shape)) + self.k,), special)
        self.ov_swap = bool(rng.integers(2))
        self.out_lay = Layout(rng, shape, expand=False)
        self.out_base = vals(rng, self.out_real, self.out_lay.base_shape)

    def build(self, side):
        real = self.real
        ops = {role: lay.build(side, real, base) for role, (lay, base) in self.tensors.items()}
        r = None
        if self.mode == "overlap":
            st = side.storage(real, self.ov_base)
            strides = [int(np.prod(self.shape[i + 1:])) for i in range(len(self.shape))]
            ot, orr = (self.k, 0) if self.ov_swap else (0, self.k)
            ops["t"] = on_storage(side, real, st, ot, self.shape, strides)
            r = on_storage(side, real, st, orr, self.shape, strides)
            side.free_storage(real, st)
        elif self.mode == "alias":
            r = ops["t"]
        elif self.mode == "strided":
            r = self.out_lay.build(side, self.out_real, self.out_base)
        elif self.sig != "equal":
            r = side.new(self.out_real)
        args = [] if r is None else [r]
        for role in self.sig if self.sig != "equal" else "tu":
            if role in "tuw":
                args.append(ops[role])
            elif role == "d":
                args.append(C.c_int(self.dim))
            else:
                args.append(scalar_of(real, self.scalars[role]))
        return r, ops, args

    def run(self, side):
        r, ops, args = self.build(side)
        try:
            res = side.call(self.real, self.op, C.c_int if self.sig == "equal" else None, *args)
            return r, ops, res, None
        except THError as e:
            return r, ops, None, e


def check_case(case):
    """Runs `case` on both sides and compares results, storages, inputs and errors."""
    what = f"{case.op}({case.mode}, shape {case.shape})"
    hr, hops, hres, herr = case.run(HOST)
    dr, dops, dres, derr = case.run(DEV)
    if herr is not None:
        assert derr is not None, f"{what}: the host raised {herr}, the device did not"
        assert th_error_text(derr) == th_error_text(herr), f"{what}: device error {derr} != host error {herr}"
    else:
        assert derr is None, f"{what}: the device raised {derr} (the host did not)"
    n = ulps(case.op, case.real)
    # Near its zeros (x = 1, 2) lgamma's error is bounded in absolute terms, not in ulps.
    atol = n * float(np.finfo(np.float64 if case.real == "Double" else np.float32).eps) if case.op == "lgamma" else 0.0
    if case.sig == "equal":
        assert dres == hres, f"{what}: device {dres} != host {hres}"
    elif hr is not None:
        assert geometry(DEV, dr)[0] == geometry(HOST, hr)[0], f"{what}: result sizes differ"
        assert_same(case.out_real, storage_of(DEV, dr), storage_of(HOST, hr), f"{what} output storage", n, atol)
    for role in hops:
        assert_same(case.real, storage_of(DEV, dops[role]), storage_of(HOST, hops[role]), f"{what} operand {role}", n, atol)
    return dr, herr


NUMPY = {  # op -> numpy reference on the operands' values (ints keep their dtype, floats in float64)
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "cmul": np.multiply, "cmax": np.fmax, "cmin": np.fmin,
    "cmaxValue": np.fmax, "cminValue": np.fmin, "abs": np.abs, "neg": np.negative,
    "cadd": lambda a, v, b: a + v * b, "csub": lambda a, v, b: a - v * b, "clamp": lambda a, lo, hi: np.clip(a, lo, hi),
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "tanh": np.tanh, "atan": np.arctan,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
    "bitand": np.bitwise_and, "bitor": np.bitwise_or, "bitxor": np.bitwise_xor, "cbitand": np.bitwise_and,
    "cbitor": np.bitwise_or, "cbitxor": np.bitwise_xor, "atan2": np.arctan2, "lerp": lambda a, b, w: a + w * (b - a),
    **{f"{c}{k}": f for c, f in zip(CMPS, [np.less, np.greater, np.less_equal, np.greater_equal, np.equal,
                                          np.not_equal]) for k in ("Value", "ValueT", "Tensor", "TensorT")},
}
NP_TOL = {"Float": 1e-5, "Double": 1e-12, "Half": 2e-3, "BFloat16": 1.6e-2}


def check_numpy(case, dr):
    """The device result against numpy on the operands' values (ops with a reference only)."""
    f = NUMPY.get(case.op)
    if f is None:
        return
    real = case.real
    fl = real in FLOATS
    args = []
    for role in case.sig:
        if role in "tuw":
            lay, base = case.tensors[role]
            v = as_values(real, lay.numpy(base))
            args.append(v.astype(np.float64) if fl else v)
        elif role in "vx":
            v = as_values(real, np.array([case.scalars[role]]))[0]
            args.append(np.float64(v) if fl else v)
    if real == "Bool" and case.op in ("cmax", "cmin", "add", "mul", "cadd", "csub", "sub"):
        return
    with np.errstate(all="ignore"):
        want = np.asarray(f(*args))
    want = np.broadcast_to(want, case.shape)
    got = as_values(case.out_real, view_values(DEV, dr))
    if case.out_real in FLOATS:
        want = as_values(case.out_real, raw(case.out_real, want.astype(np.float32) if case.out_real == "BFloat16" else want))
        tol = NP_TOL[case.out_real] * (4 if case.op in ULPS_FLOAT else 1)
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol, equal_nan=True,
                                   err_msg=f"{case.op}: device vs numpy")
    else:
        np.testing.assert_array_equal(got, want.astype(got.dtype), err_msg=f"{case.op}: device vs numpy")


SUMMING = {"sum", "prod", "mean", "var", "std", "norm", "renorm", "sumall", "prodall", "meanall", "varall", "stdall",
           "normall", "dist"}
RED_TOL = {"Float": 1e-5, "Double": 1e-12, "Half": 4e-3, "BFloat16": 3e-2}


def reduce_params():
    out = []
    for op, (_, reals) in REDUCE.items():
        for real in ALL_REALS:
            cpu = HOST.has(real, op)
            if real in reals or (real in ("BFloat16", "Bool") and cpu) or (cpu and DEV.has(real, op)):
                out.append(pytest.param(op, real, id=f"{op}-{real}"))
    return out


def red_shape(shape, d, keep):
    s = list(shape)
    s[d] = 1
    if not keep and len(s) > 1:
        del s[d]
    return tuple(s)


class RCase:
    """One call of reduction `op` on a random view, built identically on both sides."""

    def __init__(self, rng, op, real, special, prealloc, shape=None):
        self.op, self.real = op, real
        self.sig = REDUCE[op][0]
        self.shape = shape or random_shape(rng, max_dims=4, max_size=6)
        lo, hi = (-2, 2) if "prod" in op else ((-3, 3) if real in FLOATS else (-50, 50))
        self.lay = Layout(rng, self.shape)
        self.base = vals(rng, real, self.lay.base_shape, lo=lo, hi=hi, special=special)
        self.lay2 = Layout(rng, self.shape)
        self.base2 = vals(rng, real, self.lay2.base_shape, lo=lo, hi=hi, special=special)
        self.dim = int(rng.integers(len(self.shape)))
        self.keep, self.biased = int(rng.integers(2)), int(rng.integers(2))
        self.p = raw(real, [1, 2, 3, 0.5][int(rng.integers(4))] if real in FLOATS else int(rng.integers(1, 3)))
        self.maxnorm = raw(real, np.float32(rng.uniform(0.5, 3)) if real in FLOATS else 2)
        oshape = self.shape if self.sig == "vdm" else red_shape(self.shape, self.dim, self.keep)
        self.outs = []
        for r in ([real, "Long"] if self.sig == "idk" else [real]):
            lay = Layout(rng, oshape, kind=None if prealloc else "contig", expand=False)
            self.outs.append((r, lay if prealloc else None, vals(rng, r, lay.base_shape)))

    def run(self, side):
        t = self.lay.build(side, self.real, self.base)
        outs = [lay.build(side, r, junk) if lay else side.new(r) for r, lay, junk in self.outs]
        d, k, b = C.c_int(self.dim), C.c_int(self.keep), C.c_int(self.biased)
        p = scalar_of(self.real, self.p)
        args = {"dk": [t, d, k], "dbk": [t, d, b, k], "vdk": [t, p, d, k], "vdm": [t, p, d, scalar_of(self.real, self.maxnorm)],
                "idk": [t, d, k], "all": [t], "allb": [t, b], "allv": [t, p]}.get(self.sig)
        if self.sig == "dist":
            args = [t, self.lay2.build(side, self.real, self.base2), p]
        scalar = self.sig in ("all", "allb", "allv", "dist")
        rt = header_restype(side.fn(self.real, self.op)) or header_restype(HOST.fn(self.real, self.op))
        if rt is None and self.op == "dist" and self.real not in FLOATS:
            rt = C.c_long  # THC's integer dist returns long (declared by no host function)
        try:
            res = side.call(self.real, self.op, rt if scalar else None, *(args if scalar else outs + args))
            return t, outs, res, None
        except THError as e:
            return t, outs, None, e


def close(real, got, want, what, tol):
    g, w = as_values(real, np.asarray(got)).astype(np.float64), as_values(real, np.asarray(want)).astype(np.float64)
    scale = max(1.0, float(np.nanmax(np.abs(np.where(np.isinf(w), 0, w)), initial=0)))
    np.testing.assert_allclose(g, w, rtol=tol, atol=tol * scale, equal_nan=True, err_msg=f"{what}: device vs host")


def check_reduce(case):
    what = f"{case.op}({case.real}, shape {case.shape}, dim {case.dim}, keepdim {case.keep})"
    ht, houts, hres, herr = case.run(HOST)
    dt, douts, dres, derr = case.run(DEV)
    if herr is not None:
        assert derr is not None and th_error_text(derr) == th_error_text(herr), f"{what}: host {herr}, device {derr}"
    else:
        assert derr is None, f"{what}: the device raised {derr} (the host did not)"
    fuzzy = case.op in SUMMING and case.real in FLOATS
    if case.sig in ("all", "allb", "allv", "dist"):
        if herr is None and isinstance(hres, float) and case.real in ("Float", "Half", "BFloat16"):
            with np.errstate(over="ignore"):  # THC's accreal for these is float: the host's double rounded
                hres = float(np.float32(hres))
        if herr is None:
            if isinstance(hres, int) and case.real in ("Half", "BFloat16"):  # a real-typed result: raw bits
                h, d = (np.array([x], dtype=np.uint16) for x in (hres, dres))
                if case.real == "Half":
                    h, d = h.view(np.float16), d.view(np.float16)
                assert_same(case.real, d, h, what)
            elif isinstance(hres, int):
                assert dres == hres, f"{what}: device {dres} != host {hres}"
            elif fuzzy and case.op in ("varall", "stdall", "prodall") and not (math.isfinite(hres) and
                                                                             math.isfinite(dres)):
                # With inf, NaN, 0 and huge values among the inputs, which of inf, NaN (inf - inf,
                # inf * 0) or an overflow comes out depends on the order of the fold (the host's
                # two passes, the device's Welford update and chunked products).
                pass
            elif fuzzy:
                close("Double", [dres], [hres], what, RED_TOL[case.real])
            else:
                assert_same("Double", np.array([dres]), np.array([hres]), what)
        return None, dres, derr
    for (r, _, _), h, d in zip(case.outs, houts, douts):
        assert geometry(DEV, d)[0] == geometry(HOST, h)[0], f"{what}: result sizes differ"
        if fuzzy and r == case.real:
            dv, hv = storage_of(DEV, d), storage_of(HOST, h)
            if case.op in ("var", "std"):
                # The host's two-pass moments overflow where the sum of a run exceeds the
                # accumulator (giving inf); the device's Welford update does not (docs/cuda.md).
                keep = ~np.isinf(as_values(r, np.asarray(hv)).astype(np.float64))
                dv, hv = np.asarray(dv)[keep], np.asarray(hv)[keep]
            if case.op in ("prod", "var", "std"):
                # as for the *all forms: non-finite outcomes depend on the order of the fold
                keep = np.isfinite(as_values(r, np.asarray(hv)).astype(np.float64)) & np.isfinite(
                    as_values(r, np.asarray(dv)).astype(np.float64))
                dv, hv = np.asarray(dv)[keep], np.asarray(hv)[keep]
            close(r, dv, hv, what, RED_TOL[case.real])
        else:
            assert_same(r, storage_of(DEV, d), storage_of(HOST, h), f"{what} output ({r})")
    assert_same(case.real, storage_of(DEV, dt), storage_of(HOST, ht), f"{what} input")
    return douts, dres, derr


NP_RED = {"sum": np.sum, "prod": np.prod, "mean": np.mean, "max": np.max, "min": np.min, "sumall": np.sum,
          "maxall": np.max, "minall": np.min, "meanall": np.mean}


def check_reduce_numpy(case, douts, dres):
    """The device result against numpy (sum/prod/mean/max/min and their *all forms; first-occurrence
    indices for max/min)."""
    f = NP_RED.get(case.op)
    if f is None or (case.op.startswith("mean") and case.real not in FLOATS):
        return
    a = as_values(case.real, case.lay.numpy(case.base))
    acc = a.astype(np.float64 if case.real in FLOATS else np.int64)
    tol = RED_TOL.get(case.real, 0)
    if case.op.endswith("all"):
        want = f(acc) if case.op not in ("maxall", "minall") else f(a)
        got = dres
        if case.real in ("Half", "BFloat16") and case.op in ("maxall", "minall"):
            bits = np.array([dres], dtype=np.uint16)
            got = (bits.view(np.float16) if case.real == "Half" else as_values(case.real, bits))[0]
        np.testing.assert_allclose(np.float64(got), np.float64(want), rtol=tol, atol=tol, err_msg=f"{case.op} vs numpy")
        return
    shape = red_shape(case.shape, case.dim, case.keep)
    want = np.asarray(f(acc, axis=case.dim, keepdims=True)).reshape(shape)
    got = as_values(case.real, view_values(DEV, douts[0]))
    if case.real in FLOATS:
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=tol, err_msg=f"{case.op} vs numpy")
    else:
        np.testing.assert_array_equal(got, want.astype(got.dtype), err_msg=f"{case.op} vs numpy")
    if case.op in ("max", "min"):
        idx = (np.argmax if case.op == "max" else np.argmin)(a, axis=case.dim, keepdims=True).reshape(shape)
        np.testing.assert_array_equal(view_values(DEV, douts[1]), idx, err_msg=f"{case.op} indices vs numpy")
