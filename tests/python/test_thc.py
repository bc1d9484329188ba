"""THC (device tensors) against TH (host tensors) and numpy, through the C API.

Run: TH_CUDA_EMULATOR=1 TH_LIB=$PWD/target/debug/libth.so python -m pytest -q tests/python/test_thc.py
(a `--features cuda-emulator` build runs THC on the CPU emulator). Without TH_CUDA_EMULATOR and
without a CUDA device the module is skipped; with TH_CUDA_EMULATOR=1 and a library that cannot
start the emulator it fails.

Every operation runs twice on the same values and layouts: TH{R}Tensor_op on host tensors, and
THCuda{R}Tensor_op on device tensors (strided device views made with the library's own
select/transpose/narrow/expand). Results, whole output storages (elements outside a view must be
untouched), inputs, and errors (same message, output untouched) must agree. Bit-exact, except:
- any NaN equals any NaN (payloads and signs of NaN are not compared);
- transcendental functions: within CUDA's documented maximum ULP errors (+1 for the host libm),
  one ULP for Half/BFloat16 (computed in float, then rounded);
- on a real GPU (not the emulator) a multiply-add (cadd/csub, addcmul, addcdiv, lerp) may be fused
  by NVRTC: one ULP;
- float reductions: the summation order differs, so relative tolerances as in test_reduce.
Groups whose functions the library lacks are skipped and listed at the end of the run."""

import ctypes as C

import numpy as np
import pytest
from cases import random_shape, random_values
from thclib import (ALL_REALS, CMPS, ELEMENTWISE, REDUCE, ULPS_FLOAT, FLOATS, INTS, THC_REALS, DevSide, Groups, HostSide, Layout, Thc, as_values, contiguous,
                    emulated, geometry, header_restype, mismatch, on_storage, raw_dtype, storage_of, th_error_text, tname, ulps,
                    view_values)
from thlib import DTYPES, Lib, THError, f32_to_bf16

LIB = Lib()
try:
    THC = Thc(LIB)
except (THError, AttributeError) as e:
    if emulated():
        pytest.fail(f"TH_CUDA_EMULATOR=1 but the library cannot start the CUDA emulator ({e}); build it with "
                    "`cargo build --features cuda-emulator` and point TH_LIB at target/debug/libth.so", pytrace=False)
    pytest.skip(f"no CUDA device: TH_CUDA_EMULATOR is unset and THCudaInit failed ({e}); set TH_CUDA_EMULATOR=1 "
                "with a `--features cuda-emulator` build to run THC on the CPU emulator", allow_module_level=True)
HOST, DEV = HostSide(LIB), DevSide(THC)
SIDES = (HOST, DEV)
GROUPS = Groups()


@pytest.fixture(scope="session", autouse=True)
def _group_report(request):
    class Report:
        def pytest_terminal_summary(self, terminalreporter):
            terminalreporter.write_sep("-", "THC groups")
            if not GROUPS.missing:
                terminalreporter.write_line("every group ran")
            GROUPS.report(terminalreporter.write_line)

    request.config.pluginmanager.register(Report(), "thc-group-report")
    yield


def need(group, *names):
    why = GROUPS.need(group, names, lambda n: hasattr(LIB.dll, n))
    if why:
        pytest.skip(why)


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


def assert_same(real, got, want, what, ulps=0):
    bad = mismatch(real, got, want, ulps)
    assert bad is None, f"{what}: device != host: {bad}"


# ---------------------------------------------------------------------------------------------
# copies


def dev_view_of(rng, real, a_raw, expand=True):
    """(numpy view, host view, device view) of the same random layout holding values `a_raw`-like."""
    lay = Layout(rng, a_raw.shape, expand=expand)
    base = vals(rng, real, lay.base_shape)
    return lay.numpy(base), lay.build(HOST, real, base), lay.build(DEV, real, base)


def in_range(rng, src, dst, shape):
    """Values of dtype `src` that dtype `dst` represents (casts of out-of-range values are tested
    separately)."""
    lo, hi = -100, 100
    if "Byte" in (src, dst):
        lo = 0
    if src == "Bool" or dst == "Bool":
        lo, hi = 0, 1
    return vals(rng, src, shape, lo=lo, hi=hi)


@pytest.mark.parametrize("src", ALL_REALS)
@pytest.mark.parametrize("dst", ALL_REALS)
def test_copy_host_to_device_casts(rng, dst, src):
    need("copy", f"{tname(dst)}_copy{src}")
    for _ in range(3):
        shape = random_shape(rng, max_dims=4)
        a = in_range(rng, src, dst, shape)
        hsrc = contiguous(HOST, src, a) if rng.random() < 0.5 else LIB.from_numpy(as_values(src, a), src)
        out = Layout(rng, shape, expand=False)
        junk = vals(rng, dst, out.base_shape)
        hd, dd = out.build(HOST, dst, junk), out.build(DEV, dst, junk)
        LIB.call(f"TH{dst}Tensor_copy{src}", None, hd, hsrc)
        THC.call(f"{tname(dst)}_copy{src}", None, dd, hsrc)
        assert_same(dst, storage_of(DEV, dd), storage_of(HOST, hd), f"copy{src} into a {out.kind} view")


@pytest.mark.parametrize("src", ALL_REALS)
@pytest.mark.parametrize("dst", ALL_REALS)
def test_copy_device_to_host_and_device_casts(rng, dst, src):
    need("copy", f"TH{dst}Tensor_copyCuda{src}", f"{tname(dst)}_copyCuda{src}")
    for _ in range(3):
        shape = random_shape(rng, max_dims=4)
        lay = Layout(rng, shape)
        base = in_range(rng, src, dst, lay.base_shape)
        hs, ds = lay.build(HOST, src, base), lay.build(DEV, src, base)
        out = Layout(rng, shape, expand=False)
        junk = vals(rng, dst, out.base_shape)
        want = out.build(HOST, dst, junk)
        LIB.call(f"TH{dst}Tensor_copy{src}", None, want, hs)
        got_host = out.build(HOST, dst, junk)  # device -> host
        THC.call(f"TH{dst}Tensor_copyCuda{src}", None, got_host, ds)
        assert_same(dst, storage_of(HOST, got_host), storage_of(HOST, want), f"{lay.kind} device -> {out.kind} host")
        got_dev = out.build(DEV, dst, junk)  # device -> device
        THC.call(f"{tname(dst)}_copyCuda{src}", None, got_dev, ds)
        assert_same(dst, storage_of(DEV, got_dev), storage_of(HOST, want), f"{lay.kind} device -> {out.kind} device")


@pytest.mark.parametrize("src", ["Float", "Double", "Half", "BFloat16", "Long", "Int"])
def test_copy_casts_out_of_range(rng, src):
    """Values the destination cannot hold (NaN, inf, overflow) convert as the host's casts do."""
    need("copy", f"{tname('Int')}_copyCuda{src}")
    for dst in ALL_REALS:
        a = vals(rng, src, (40,), special=True)
        hs, ds = contiguous(HOST, src, a), contiguous(DEV, src, a)
        want, got = LIB.new(dst), DEV.new(dst)
        LIB.call(f"TH{dst}Tensor_resize1d", None, want, C.c_int64(40))
        THC.call(f"{tname(dst)}_resize1d", None, got, C.c_int64(40))
        LIB.call(f"TH{dst}Tensor_copy{src}", None, want, hs)
        THC.call(f"{tname(dst)}_copyCuda{src}", None, got, ds)
        assert_same(dst, storage_of(DEV, got), storage_of(HOST, want), f"{src} specials -> {dst}")


@pytest.mark.parametrize("real", ["Float", "Int", "Half", "Byte", "Double"])
def test_copy_overlapping_device_views(rng, real):
    """dst and src are views of one storage that overlap: the result is as if src were read first."""
    need("copy", f"{tname(real)}_copy")
    for _ in range(6):
        n, k = int(rng.integers(3, 40)), int(rng.integers(1, 5))
        base = vals(rng, real, (n + k,))
        sides = []
        for side in SIDES:
            st = side.storage(real, base)
            dst = on_storage(side, real, st, k, (n,), (1,))
            src = on_storage(side, real, st, 0, (n,), (1,))
            side.free_storage(real, st)
            sides.append((dst, src))
        (hd, hs), (dd, ds) = sides
        if rng.random() < 0.5:  # copy backwards instead
            hd, hs, dd, ds = hs, hd, ds, dd
        LIB.call(f"TH{real}Tensor_copy", None, hd, hs)
        THC.call(f"{tname(real)}_copy", None, dd, ds)
        assert_same(real, storage_of(DEV, dd), storage_of(HOST, hd), "overlapping 1-d copy")
    # a square matrix copied into its own transpose
    m = vals(rng, real, (7, 7))
    res = []
    for side in SIDES:
        t = contiguous(side, real, m)
        tt = side.new(real)
        side.call(real, "transpose", None, tt, t, C.c_int(0), C.c_int(1))
        side.call(real, "copy", None, tt, t)
        res.append(storage_of(side, t))
    assert_same(real, res[1], res[0], "copy into own transpose")
    assert_same(real, res[1].reshape(7, 7), m.T, "copy into own transpose vs numpy")


@pytest.mark.parametrize("real", ALL_REALS)
def test_copy_strided_views_and_large(rng, real):
    """Same-dtype copies between every kind of device view, and one > 2^16 elements (grid-stride)."""
    need("copy", f"{tname(real)}_copy")
    for kind in ["contig", "perm", "narrow", "select", "mixed", "expand"]:
        shape = random_shape(rng, max_dims=4)
        lay, out = Layout(rng, shape, kind=kind), Layout(rng, shape, expand=False)
        base, junk = vals(rng, real, lay.base_shape), vals(rng, real, out.base_shape)
        hs, ds = lay.build(HOST, real, base), lay.build(DEV, real, base)
        hd, dd = out.build(HOST, real, junk), out.build(DEV, real, junk)
        LIB.call(f"TH{real}Tensor_copy", None, hd, hs)
        THC.call(f"{tname(real)}_copy", None, dd, ds)
        assert_same(real, storage_of(DEV, dd), storage_of(HOST, hd), f"{kind} -> {out.kind}")
        assert_same(real, view_values(DEV, dd), lay.numpy(base), f"{kind} -> {out.kind} vs numpy")
    big = vals(rng, real, (300, 230))
    ds = contiguous(DEV, real, big)
    dt = DEV.new(real)
    THC.call(f"{tname(real)}_transpose", None, dt, ds, C.c_int(0), C.c_int(1))
    dd = contiguous(DEV, real, np.zeros((230, 300), dtype=raw_dtype(real)))
    THC.call(f"{tname(real)}_copy", None, dd, dt)
    assert_same(real, storage_of(DEV, dd).reshape(230, 300), big.T, "69000-element transposed copy")


@pytest.mark.parametrize("real", ["Float", "Long", "Half", "Byte"])
def test_copy_async_through_pinned_memory(rng, real):
    """copyAsync between device tensors and host tensors on pinned storages (THCudaHostAllocator
    and THCudaHostAlloc), on the default stream and on a new stream."""
    need("copy", f"{tname(real)}_copyAsyncCPU", f"TH{real}Tensor_copyAsyncCuda", "THCudaHostAlloc")
    alloc = THC.call("THCState_getCudaHostAllocator", C.c_void_p)
    isz = raw_dtype(real).itemsize
    for use_stream in (False, True):
        stream = THC.lib.call("THCStream_new", C.c_void_p, C.c_int(1)) if use_stream else None
        if stream:
            THC.call("THCState_setStream", None, C.c_void_p(stream))
        try:
            n = int(rng.integers(1, 3000)) if not use_stream else 70000
            a = vals(rng, real, (n,))
            pin = LIB.call(f"TH{real}Storage_newWithAllocator", C.c_void_p, C.c_ssize_t(n), C.c_void_p(alloc), None)
            LIB.call(f"TH{real}Storage_rawCopy", None, C.c_void_p(pin), C.c_void_p(np.ascontiguousarray(a).ctypes.data))
            hp = on_storage(HOST, real, pin, 0, (n,), (1,))
            HOST.free_storage(real, pin)
            d = DEV.new(real)
            THC.call(f"{tname(real)}_resize1d", None, d, C.c_int64(n))
            THC.call(f"{tname(real)}_copyAsyncCPU", None, d, hp)
            p = THC.call("THCudaHostAlloc", C.c_void_p, C.c_size_t(n * isz))
            back_st = LIB.call(f"TH{real}Storage_newWithDataAndAllocator", C.c_void_p, C.c_void_p(p), C.c_ssize_t(n),
                               C.c_void_p(alloc), None)
            back = on_storage(HOST, real, back_st, 0, (n,), (1,))
            HOST.free_storage(real, back_st)
            THC.call(f"TH{real}Tensor_copyAsyncCuda", None, back, d)
            THC.sync()
            assert_same(real, storage_of(HOST, back), a, f"pinned round trip of {n} elements (stream={use_stream})")
        finally:
            if stream:
                THC.call("THCState_setStream", None, None)
                THC.lib.call("THCStream_free", None, C.c_void_p(stream))


@pytest.mark.parametrize("real", ALL_REALS)
def test_fill_zero(rng, real):
    need("fill", f"{tname(real)}_fill", f"{tname(real)}_zero")
    for kind in ["contig", "perm", "narrow", "select", "mixed"]:
        lay = Layout(rng, random_shape(rng, max_dims=4), kind=kind, expand=False)
        base = vals(rng, real, lay.base_shape)
        x = scalar_of(real, vals(rng, real, (1,), special=True)[0])
        for op, args in (("fill", (x,)), ("zero", ())):
            h, d = lay.build(HOST, real, base), lay.build(DEV, real, base)
            HOST.call(real, op, None, h, *args)
            DEV.call(real, op, None, d, *args)
            assert_same(real, storage_of(DEV, d), storage_of(HOST, h), f"{op} of a {kind} view")


@pytest.mark.parametrize("real", ALL_REALS)
def test_storage_fill_and_elements(rng, real):
    v = vals(rng, real, (1,))[0]
    n = int(rng.integers(1, 500))
    st = DEV.storage(real, vals(rng, real, (n,)))
    try:
        x = scalar_of(real, v)
        DEV.scall(real, "fill", None, C.c_void_p(st), x)
        assert_same(real, DEV.storage_numpy(real, st), np.full(n, v), "storage fill")
    finally:
        DEV.free_storage(real, st)


# ---------------------------------------------------------------------------------------------
# elementwise math (pointwise, pairwise, compare, compareT)

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
        for role in self.sig:
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
    if case.sig == "equal":
        assert dres == hres, f"{what}: device {dres} != host {hres}"
    elif hr is not None:
        assert geometry(DEV, dr)[0] == geometry(HOST, hr)[0], f"{what}: result sizes differ"
        assert_same(case.out_real, storage_of(DEV, dr), storage_of(HOST, hr), f"{what} output storage", n)
    for role in hops:
        assert_same(case.real, storage_of(DEV, dops[role]), storage_of(HOST, hops[role]), f"{what} operand {role}", n)
    return dr, herr


def _cmp(f):
    return {"t": f, "T": f}


_TRUNC_DIV = lambda a, b: np.trunc(np.asarray(a, np.float64) / b)  # noqa: E731
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


@pytest.mark.parametrize("group,op,real", elementwise_params())
def test_elementwise(rng, group, op, real):
    need(group, DEV.fn(real, op))
    if not HOST.has(real, op):
        pytest.skip(f"TH{real}Tensor_{op} does not exist: no host result to compare with")
    sig = ELEMENTWISE[group][op][0]
    modes = ["new", "strided", "strided", "new"]
    if not sig.startswith("cmp:") and sig != "equal":
        modes += ["alias", "overlap"]
    for i, mode in enumerate(modes):
        special = i in (1, 3) or i >= 4
        case = Case(rng, op, real, sig, mode, special)
        dr, herr = check_case(case)
        if not special and herr is None and dr is not None:
            check_numpy(case, dr)


@pytest.mark.parametrize("real", INTS)
@pytest.mark.parametrize("op", ["div", "fmod", "remainder", "cdiv", "cfmod", "cremainder"])
def test_integer_division_by_zero(rng, op, real):
    group = "pairwise" if op in ("div", "fmod", "remainder") else "pointwise"
    need(group, DEV.fn(real, op))
    sig = ELEMENTWISE[group][op][0]
    for _ in range(3):
        case = Case(rng, op, real, sig, "strided", special=False)
        if "u" in case.tensors:
            lay, base = case.tensors["u"]
            base = base.copy()
            base.reshape(-1)[int(rng.integers(base.size))] = 0
            if lay.kind != "contig":  # the zero must be inside the view
                base[...] = 0
            case.tensors["u"] = (lay, base)
        else:
            case.scalars["v"] = raw(real, 0)
        _, herr = check_case(case)
        assert herr is not None and "division by zero" in herr.msg, f"host: {herr}"


@pytest.mark.parametrize("op,real", [("add", "Float"), ("cmul", "Int"), ("cadd", "Half"), ("ltTensor", "Double"),
                                     ("exp", "Float"), ("cdiv", "Long")])
def test_elementwise_large(rng, op, real):
    """> 2^16 elements, transposed or narrowed, so the kernels' grid-stride loops run."""
    group = next(g for g, ops in ELEMENTWISE.items() if op in ops)
    need(group, DEV.fn(real, op))
    sig = ELEMENTWISE[group][op][0]
    case = Case(rng, op, real, sig, "strided", special=False)
    shape = (260, 270)
    case.shape = shape
    for role in list(case.tensors):
        lay = Layout(rng, shape, kind=["perm", "narrow"][int(rng.integers(2))])
        case.tensors[role] = (lay, role_values(rng, op, real, role, lay.base_shape, False))
    case.out_lay = Layout(rng, shape, kind="perm", expand=False)
    case.out_base = vals(rng, case.out_real, case.out_lay.base_shape)
    check_case(case)


# ---------------------------------------------------------------------------------------------
# reductions

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
        if herr is None:
            if isinstance(hres, int) and case.real in ("Half", "BFloat16"):  # a real-typed result: raw bits
                h, d = (np.array([x], dtype=np.uint16) for x in (hres, dres))
                if case.real == "Half":
                    h, d = h.view(np.float16), d.view(np.float16)
                assert_same(case.real, d, h, what)
            elif isinstance(hres, int):
                assert dres == hres, f"{what}: device {dres} != host {hres}"
            elif fuzzy:
                close("Double", [dres], [hres], what, RED_TOL[case.real])
            else:
                assert_same("Double", np.array([dres]), np.array([hres]), what)
        return None, dres, derr
    for (r, _, _), h, d in zip(case.outs, houts, douts):
        assert geometry(DEV, d)[0] == geometry(HOST, h)[0], f"{what}: result sizes differ"
        if fuzzy and r == case.real:
            close(r, storage_of(DEV, d), storage_of(HOST, h), what, RED_TOL[case.real])
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


@pytest.mark.parametrize("op,real", reduce_params())
def test_reduce(rng, op, real):
    need("reduce", DEV.fn(real, op))
    if not HOST.has(real, op):
        pytest.skip(f"TH{real}Tensor_{op} does not exist: no host result to compare with")
    for i in range(6):
        case = RCase(rng, op, real, special=i >= 4, prealloc=i % 2 == 1)
        douts, dres, derr = check_reduce(case)
        if i < 4 and derr is None:
            check_reduce_numpy(case, douts, dres)


@pytest.mark.parametrize("op,real", [("sum", "Float"), ("sumall", "Double"), ("max", "Int"), ("maxall", "Half"),
                                     ("mean", "Long"), ("normall", "Float")])
def test_reduce_large(rng, op, real):
    """> 2^16 elements (grid-stride loops and multi-block whole-tensor reductions)."""
    need("reduce", DEV.fn(real, op))
    for _ in range(2):
        check_reduce(RCase(rng, op, real, special=False, prealloc=False, shape=(270, 260)))


# ---------------------------------------------------------------------------------------------
# errors


def test_mixed_host_and_device_operands_raise(rng):
    a = vals(rng, "Float", (3, 4))
    h, d = contiguous(HOST, "Float", a), contiguous(DEV, "Float", a)
    for name, args in (("THFloatTensor_add", (LIB.new("Float"), d, C.c_float(1))),
                       ("THFloatTensor_cadd", (LIB.new("Float"), h, C.c_float(1), d))):
        with pytest.raises(THError, match="device|host|CPU|cuda"):
            LIB.call(name, None, *args)
    for name, args in (("THCudaTensor_add", (DEV.new("Float"), h, C.c_float(1))),
                       ("THCudaTensor_cadd", (DEV.new("Float"), d, C.c_float(1), h)),
                       ("THCudaTensor_cmul", (LIB.new("Float"), d, d)),
                       ("THCudaTensor_sum", (DEV.new("Float"), h, C.c_int64(0), C.c_int(1)))):
        if not THC.has(name):
            GROUPS.missing["errors"].add(name)
            continue
        with pytest.raises(THError, match="device|host|CPU|cuda"):
            THC.call(name, None, *args)
    assert_same("Float", storage_of(DEV, d), a.reshape(-1), "device operand after the failed calls")
    assert_same("Float", storage_of(HOST, h), a.reshape(-1), "host operand after the failed calls")


def test_bad_dims_raise_the_library_error(rng):
    a = vals(rng, "Float", (3, 4))
    calls = [("transpose", lambda s, t: (s.new("Float"), t, C.c_int(0), C.c_int(2))),
             ("narrow", lambda s, t: (s.new("Float"), t, C.c_int(1), C.c_int64(2), C.c_int64(5))),
             ("select", lambda s, t: (s.new("Float"), t, C.c_int(2), C.c_int64(0))),
             ("select", lambda s, t: (s.new("Float"), t, C.c_int(0), C.c_int64(3))),
             ("unfold", lambda s, t: (s.new("Float"), t, C.c_int(1), C.c_int64(9), C.c_int64(1))),
             ("sum", lambda s, t: (s.new("Float"), t, C.c_int(-3), C.c_int(0))),
             ("max", lambda s, t: (s.new("Float"), s.new("Long"), t, C.c_int(5), C.c_int(0))),
             ("cross", lambda s, t: (s.new("Float"), t, t, C.c_int(1)))]
    for op, mk in calls:
        if not THC.has(f"THCudaTensor_{op}"):
            GROUPS.missing["errors"].add(f"THCudaTensor_{op}")
            continue
        msgs = []
        for side in SIDES:
            t = contiguous(side, "Float", a)
            with pytest.raises(THError) as e:
                side.call("Float", op, None, *mk(side, t))
            msgs.append(th_error_text(e.value))
            assert_same("Float", storage_of(side, t), a.reshape(-1), f"{op} input after the error")
        assert msgs[1] == msgs[0], f"{op}: device error {msgs[1]!r} != host error {msgs[0]!r}"


def test_copy_size_mismatch_and_geometry(rng):
    d = contiguous(DEV, "Float", vals(rng, "Float", (3, 4)))
    h = contiguous(HOST, "Float", vals(rng, "Float", (5,)))
    with pytest.raises(THError, match="size|element"):
        THC.call("THCudaTensor_copyFloat", None, d, h)
    with pytest.raises(THError, match="size|element"):
        THC.call("THFloatTensor_copyCuda", None, h, d)
    assert geometry(DEV, d)[0] == (3, 4)
