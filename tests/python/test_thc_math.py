"""THC's constructors and shape functions (THCTensorMath.h) and `cross` on device tensors against
the same TH functions on host tensors: same values, same layouts, results compared bit for bit
(trace: THC's accreal against TH's, to the rounding of the narrower one), errors with the same
message and the output untouched.

Run: TH_CUDA_EMULATOR=1 TH_LIB=$PWD/target/debug/libth.so python -m pytest -q tests/python/test_thc_math.py"""

import ctypes as C

import numpy as np
import pytest
from thccases import assert_same, vals
from thclib import start_thc, ALL_REALS, FLOATS, DevSide, HostSide, Layout, Thc, emulated, i64s, th_error_text, view_values
from thlib import Lib, THError

LIB = Lib()
THC = start_thc(LIB)
HOST, DEV = HostSide(LIB), DevSide(THC)
NUMS = [r for r in ALL_REALS if r != "Bool"]
# THC's accreal for range/arange/trace: float for Float and the 16-bit floats, double for Double.
THC_ACC = {"Float": C.c_float, "Double": C.c_double, "Half": C.c_float, "BFloat16": C.c_float}
TH_ACC = {"Float": C.c_double, "Double": C.c_double, "Half": C.c_float, "BFloat16": C.c_float}


def acc(side, real):
    table = THC_ACC if side is DEV else TH_ACC
    return table.get(real, C.c_int64)


def sizes(shape):
    s = LIB.call("THLongStorage_newWithSize", C.c_void_p, C.c_ssize_t(len(shape)))
    if shape:
        LIB.call("THLongStorage_rawCopy", None, C.c_void_p(s), i64s(shape))
    return s


def both(rng, real, shape, expand=False, lo=None, hi=None):
    """The same random values and layout as a host view and a device view."""
    lay = Layout(rng, shape, expand=expand)
    base = vals(rng, real, lay.base_shape, lo=lo, hi=hi, special=True)
    return lay.build(HOST, real, base), lay.build(DEV, real, base)


def run(real, op, args_of, restype=None):
    """Calls op on both sides: `args_of(side)` gives (output or None, args); returns both
    outputs' values (or results) after checking errors agree."""
    got = {}
    for side in (HOST, DEV):
        out, args = args_of(side)
        try:
            r = side.call(real, op, restype, *args)
            got[side.kind] = ("ok", view_values(side, out) if out is not None else r)
        except THError as e:
            got[side.kind] = ("error", th_error_text(e))
    h, d = got["host"], got["device"]
    assert h[0] == d[0], f"{op} {real}: host {h}, device {d}"
    return h[1], d[1], h[0] == "ok"


@pytest.mark.parametrize("real", ALL_REALS)
def test_fills_and_reshape(real):
    rng = np.random.default_rng(1)
    for shape in [(3, 4), (7,), (2, 1, 5)]:
        for op in ["zeros", "ones"]:
            h, d, ok = run(real, op, lambda s: (o := s.new(real), [o, C.c_void_p(sizes(shape))]))
            assert ok
            assert_same(real, d, h, f"{op}{shape}")
        for op in ["zerosLike", "onesLike"]:
            def args(s, ins={}):
                x = ins.setdefault("x", both(rng, real, shape))
                return (o := s.new(real), [o, x[0 if s is HOST else 1]])
            h, d, ok = run(real, op, args)
            assert ok
            assert_same(real, d, h, f"{op}{shape}")
    for src, dst in [((3, 4), (2, 6)), ((2, 3, 2), (12,)), ((4,), (2, 2)), ((3, 4), (5, 2))]:
        x = both(rng, real, src)
        h, d, ok = run(real, "reshape", lambda s: (o := s.new(real), [o, x[s is DEV], C.c_void_p(sizes(dst))]))
        if ok:
            assert_same(real, d, h, f"reshape {src}->{dst}")
        numel = [side.call(real, "numel", C.c_ssize_t, x[side is DEV]) for side in (HOST, DEV)]
        assert numel[0] == numel[1] == int(np.prod(src))


@pytest.mark.parametrize("real", ALL_REALS)
def test_cat(real):
    rng = np.random.default_rng(2)
    for a, b, dim in [((2, 3), (4, 3), 0), ((2, 3), (2, 5), 1), ((2, 3), (2, 3), 2),
                      ((2, 3), (2, 4), 0), ((2, 3), (2, 3), -1)]:
        x, y = both(rng, real, a), both(rng, real, b)
        h, d, ok = run(real, "cat", lambda s: (o := s.new(real), [o, x[s is DEV], y[s is DEV], C.c_int(dim)]))
        if ok:
            assert_same(real, d, h, f"cat {a} {b} {dim}")
    parts = [both(rng, real, (2, n)) for n in (1, 3, 2)]

    def arr(s):
        a = (C.c_void_p * len(parts))(*[p[s is DEV].ptr for p in parts])
        return (o := s.new(real), [o, a, C.c_int(len(parts)), C.c_int(1)])
    h, d, ok = run(real, "catArray", arr)
    assert ok
    assert_same(real, d, h, "catArray")


@pytest.mark.parametrize("real", ALL_REALS)
def test_triangles_diag_eye(real):
    rng = np.random.default_rng(3)
    for shape in [(4, 5), (6, 3), (1, 1), (1, 4)]:
        x = both(rng, real, shape)
        for k in [0, 1, -2, 7, -9, 2**62, -(2**62)]:
            for op in ["tril", "triu"]:
                h, d, ok = run(real, op, lambda s: (o := s.new(real), [o, x[s is DEV], C.c_int64(k)]))
                assert ok
                assert_same(real, d, h, f"{op} {shape} k={k}")
            kk = max(min(k, 50), -50)
            h, d, ok = run(real, "diag", lambda s: (o := s.new(real), [o, x[s is DEV],
                                                                       C.c_int(kk) if s is HOST else C.c_long(kk)]))
            if ok:
                assert_same(real, d, h, f"diag {shape} k={kk}")
        # tril in place (the output is the input)
        h, d, ok = run(real, "tril", lambda s: (x[s is DEV], [x[s is DEV], x[s is DEV], C.c_int64(-1)]))
        assert ok
        assert_same(real, d, h, "tril in place")
    v = both(rng, real, (4,))
    for k in [0, 2, -3]:
        h, d, ok = run(real, "diag", lambda s: (o := s.new(real), [o, v[s is DEV], C.c_int(k) if s is HOST else C.c_long(k)]))
        assert ok
        assert_same(real, d, h, f"diag vector k={k}")
    bad = both(rng, real, (2, 2, 2))
    h, d, ok = run(real, "tril", lambda s: (o := s.new(real), [o, bad[s is DEV], C.c_int64(0)]))
    assert not ok
    for n, m in [(3, 0), (2, 5), (4, 1), (0, 2)]:
        h, d, ok = run(real, "eye", lambda s: (o := s.new(real), [o, C.c_int64(n), C.c_int64(m)]))
        if ok:
            assert_same(real, d, h, f"eye {n} {m}")


@pytest.mark.parametrize("real", NUMS)
def test_trace_and_cross(real):
    rng = np.random.default_rng(4)
    for shape in [(3, 3), (2, 5), (6, 2), (1, 1)]:
        x = both(rng, real, shape, lo=-3, hi=3)
        r = [side.call(real, "trace", acc(side, real), x[side is DEV]) for side in (HOST, DEV)]
        want = np.float32(r[0]) if real in ("Float", "Half", "BFloat16") else r[0]
        assert r[1] == want or (np.isnan(r[1]) and np.isnan(want)), f"trace {shape}: {r}"
    for shape, dim in [((3,), 0), ((4, 3), 1), ((3, 5), 0), ((2, 3, 4), -1), ((2, 3, 3), 2)]:
        a, b = both(rng, real, shape), both(rng, real, shape)
        h, d, ok = run(real, "cross", lambda s: (o := s.new(real), [o, a[s is DEV], b[s is DEV], C.c_int(dim)]))
        assert ok
        assert_same(real, d, h, f"cross {shape} {dim}")
        # the output aliasing an input goes through a temporary
        h, d, ok = run(real, "cross", lambda s: (a[s is DEV], [a[s is DEV], a[s is DEV], b[s is DEV], C.c_int(dim)]))
        assert ok
        assert_same(real, d, h, f"cross in place {shape} {dim}")
    a, b = both(rng, real, (2, 4)), both(rng, real, (2, 4))
    h, d, ok = run(real, "cross", lambda s: (o := s.new(real), [o, a[s is DEV], b[s is DEV], C.c_int(1)]))
    assert not ok


@pytest.mark.parametrize("real", ALL_REALS)
def test_ranges(real):
    cases = [(0, 10, 1), (10, 0, -3), (1, 2, 0.25), (5, 5, 1), (0, 10, 0), (10, 0, 1)]
    for op in ["range", "arange"]:
        for lo, hi, step in cases:
            if real not in FLOATS and step != int(step):
                continue
            h, d, ok = run(real, op, lambda s: (o := s.new(real), [o] + [acc(s, real)(v) for v in (lo, hi, step)]))
            if ok:
                assert_same(real, d, h, f"{op}({lo}, {hi}, {step})")
    if real not in FLOATS:
        return
    for op in ["linspace", "logspace"]:
        if not hasattr(LIB.dll, DEV.fn(real, op)):
            continue
        for a, b, n in [(0, 1, 5), (-2, 3, 7), (1, 1, 1), (0, 1, 0), (2, -1, 100)]:
            h, d, ok = run(real, op, lambda s: (o := s.new(real), [o, LIB.scalar(real, a), LIB.scalar(real, b),
                                                                   C.c_int64(n)]))
            if ok:
                assert_same(real, d, h, f"{op}({a}, {b}, {n})")


def test_general_stream_pool_peer_access_checks():
    call = THC.call
    call("THCState_reserveStreams", None, C.c_int(2), C.c_int(1))
    call("THCState_reserveStreams", None, C.c_int(1), C.c_int(0))  # fewer: a no-op
    assert call("THCState_getNumStreams", C.c_int) == 2
    s1 = call("THCState_getDeviceStream", C.c_void_p, C.c_int(0), C.c_int(1))
    s2 = call("THCState_getDeviceStream", C.c_void_p, C.c_int(0), C.c_int(2))
    assert s1 and s2 and s1 != s2
    assert call("THCState_getDeviceStream", C.c_void_p, C.c_int(0), C.c_int(0)) is None
    with pytest.raises(THError, match="stream index 3 out of range"):
        call("THCState_getDeviceStream", C.c_void_p, C.c_int(0), C.c_int(3))
    try:
        call("THCState_setCurrentStreamIndex", None, C.c_int(2))
        assert call("THCState_getCurrentStreamIndex", C.c_int) == 2
        assert call("THCState_getCurrentStream", C.c_void_p) == s2
        # work on a reserved stream gives the same results
        x = DEV.new("Float")
        DEV.call("Float", "range", None, x, C.c_float(0), C.c_float(4), C.c_float(1))
        assert view_values(DEV, x).tolist() == [0, 1, 2, 3, 4]
    finally:
        call("THCState_setCurrentStreamIndex", None, C.c_int(0))
    assert call("THCState_getCurrentStreamIndex", C.c_int) == 0
    assert call("THCState_getPeerToPeerAccess", C.c_int, C.c_int(0), C.c_int(0)) == 1
    call("THCState_setPeerToPeerAccess", None, C.c_int(0), C.c_int(0), C.c_int(1))
    with pytest.raises(THError, match="always accesses its own memory"):
        call("THCState_setPeerToPeerAccess", None, C.c_int(0), C.c_int(0), C.c_int(0))
    with pytest.raises(THError, match="invalid device ordinal 5"):
        call("THCState_getPeerToPeerAccess", C.c_int, C.c_int(0), C.c_int(5))
    assert call("THCState_getKernelPeerToPeerAccessEnabled", C.c_int) == 0
    call("THCState_setKernelPeerToPeerAccessEnabled", None, C.c_int(0))
    with pytest.raises(THError, match="not supported"):
        call("THCState_setKernelPeerToPeerAccessEnabled", None, C.c_int(1))
    call("THCMagma_init", None)
    call("THCHeapUpdate", None, C.c_ssize_t(0))
    LIB.call("__THCudaCheck", None, C.c_int(0), C.c_char_p(b"x.c"), C.c_int(1))
    with pytest.raises(THError, match=r"CUDA error 2 at x\.c:7"):
        LIB.call("__THCudaCheck", None, C.c_int(2), C.c_char_p(b"x.c"), C.c_int(7))
    with pytest.raises(THError, match=r"cuBLAS error 13 at \?:3"):
        LIB.call("__THCublasCheck", None, C.c_int(13), None, C.c_int(3))
    LIB.call("__THCudaCheckWarn", None, C.c_int(1), C.c_char_p(b"w.c"), C.c_int(2))  # a warning only
