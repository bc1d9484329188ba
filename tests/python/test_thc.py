"""THC (device tensors) against TH (host tensors) and numpy, through the C API.

Run: TH_CUDA_EMULATOR=1 TH_LIB=$PWD/target/debug/libth.so python -m pytest -q tests/python/test_thc.py
(a `--features cuda-emulator` build runs THC on the CPU emulator). Without TH_CUDA_EMULATOR and
without a CUDA device the module is skipped; with TH_CUDA_EMULATOR=1 and a library that cannot
start the emulator it fails.

Every operation runs twice on the same values and layouts: TH{R}Tensor_op on host tensors, and
THCuda{R}Tensor_op on device tensors (strided device views made with the library's own
select/transpose/narrow/expand). Results, whole output storages (elements outside a view must be
untouched), inputs, and errors (same message, output untouched) must agree, bit for bit, except:
- any NaN equals any NaN (payloads and signs of NaN are not compared);
- on a real GPU (not the emulator, whose kernels call the host's libm), transcendental functions
  are within CUDA's documented maximum ULP errors plus one for the host's libm, one ULP for
  Half/BFloat16 (computed in float, then rounded). The kernels are built with --fmad=false, so
  multiply-adds (cadd, addcmul, lerp, ...) stay bit-exact there too;
- float reductions (sum, prod, mean, var, std, norm, dist and their *all forms): the summation
  order differs, so the relative tolerances of test_reduce.
Results are also checked against numpy for the ops with a simple numpy reference.
Groups whose functions the library lacks are skipped and listed at the end of the run."""

import ctypes as C

import numpy as np
import pytest
import thccases
from cases import random_shape
from thccases import (ELEMENTWISE, Case, RCase, assert_same, check_case, check_numpy, check_reduce, check_reduce_numpy,
                      elementwise_params, raw, reduce_params, role_values, scalar_of, vals)
from thclib import (ALL_REALS, INTS, DevSide, Groups, HostSide, Layout, as_values, contiguous, expand,
                    geometry, start_thc, on_storage, raw_dtype, storage_of, th_error_text, tname, view_values)
from thlib import DTYPES, Lib, THError

LIB = Lib()
THC = start_thc(LIB)
HOST, DEV = HostSide(LIB), DevSide(THC)
SIDES = (HOST, DEV)
thccases.bind(HOST, DEV)
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

@pytest.mark.parametrize("op,real", reduce_params())
def test_reduce(rng, op, real):
    need("reduce", DEV.fn(real, op))
    if op == "dist" and real in INTS:  # THC's integer dist: no host counterpart
        for i in range(6):
            check_integer_dist(RCase(rng, op, real, special=i >= 4, prealloc=False))
        return
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
    if not HOST.has(real, op):
        pytest.skip(f"TH{real}Tensor_{op} does not exist: no host result to compare with")
    for _ in range(2):
        check_reduce(RCase(rng, op, real, special=False, prealloc=False, shape=(270, 260)))


@pytest.mark.parametrize("real", ["Byte", "Char", "Int", "Long"])
def test_integer_mean_follows_thc(rng, real):
    """THC's integer mean (no host counterpart): the long sum divided by the dim's size (C
    division), then cast; meanall: the long sum divided by the count."""
    dt = DTYPES[real][0]
    a = rng.integers(np.iinfo(dt).min // 2 if real != "Byte" else 0, 100, size=(7, 130)).astype(dt)
    d = contiguous(DEV, real, a)
    for dim in (0, 1):
        r = DEV.new(real)
        THC.call(DEV.fn(real, "mean"), None, r, d, C.c_long(dim), C.c_int(0))
        s = a.astype(np.int64).sum(axis=dim)
        n = a.shape[dim]
        want = (np.sign(s) * (np.abs(s) // n)).astype(dt)  # C division truncates toward zero
        got = storage_of(DEV, r)[: want.size]
        assert np.array_equal(got, want), f"mean {real} dim {dim}: {got[:8]} != {want[:8]}"
    total = int(a.astype(np.int64).sum())
    want_all = abs(total) // a.size * (1 if total >= 0 else -1)
    assert THC.call(DEV.fn(real, "meanall"), C.c_int64, d) == want_all


def check_integer_dist(case):
    """THC's integer dist against numpy: the p-norm of the difference in float64, truncated
    toward zero and saturated to long. Exact while the sums stay below 2^53 (p is 1 or 2)."""
    _, _, got, err = case.run(DEV)
    assert err is None, f"dist {case.real}: {err}"
    a, b = (as_values(case.real, lay.numpy(base)).astype(np.float64).ravel()
            for lay, base in ((case.lay, case.base), (case.lay2, case.base2)))
    p = float(case.p)
    want = float(np.sum(np.abs(a - b) ** p) ** (1 / p))
    want_int = int(np.clip(np.trunc(want), -2.0**63, 2.0**63 - 1024)) if want < 2.0**63 else 2**63 - 1
    exact = want < 2.0**53
    assert abs(got - want_int) <= (0 if exact else 1e-12 * want), f"dist {case.real} p={p}: {got} != {want_int}"


@pytest.mark.parametrize("real", INTS)
def test_integer_dist_follows_thc(real):
    """Hand-computed: differences in double (no wrap), |d|^p summed, the 1/p power, truncated."""
    a, b = [1, 2, 3, 0], [4, 0, 3, 100]
    if real == "Byte":
        a[3], b[3] = 0, 255  # the difference is -255, not a wrapped byte
    da, db = contiguous(DEV, real, np.array(a, dtype=DTYPES[real][0])), contiguous(DEV, real, np.array(b, dtype=DTYPES[real][0]))
    d = np.abs(np.array(a, dtype=np.float64) - np.array(b, dtype=np.float64))
    for p, want in [(1, int(d.sum())), (2, int(np.sqrt((d**2).sum()))), (0, 3), (3, int(((d**3).sum()) ** (1 / 3)))]:
        got = THC.call(DEV.fn(real, "dist"), C.c_long, da, db, DTYPES[real][1](p))
        assert got == want, f"dist {real} p={p}: {got} != {want}"
    assert THC.call(DEV.fn(real, "dist"), C.c_long, da, da, DTYPES[real][1](2)) == 0
    with pytest.raises(THError):
        THC.call(DEV.fn(real, "dist"), C.c_long, da, contiguous(DEV, real, np.zeros(3, dtype=DTYPES[real][0])),
                 DTYPES[real][1](1))


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


def test_expanded_output_is_refused_on_the_device(rng):
    """A stride-0 (expanded) output is an error on the device (threads would race to write it;
    docs/cuda.md), raised before anything is written."""
    a = vals(rng, "Float", (4, 1))
    src = contiguous(DEV, "Float", vals(rng, "Float", (4, 3)))
    for op, args in (("add", lambda r: (r, src, C.c_float(1))), ("cmul", lambda r: (r, src, src)),
                     ("copy", lambda r: (r, src)), ("fill", lambda r: (r, C.c_float(2)))):
        need("errors", DEV.fn("Float", op))
        r = expand(DEV, contiguous(DEV, "Float", a), (4, 3))
        assert geometry(DEV, r)[1][1] == 0
        with pytest.raises(THError):
            DEV.call("Float", op, None, *args(r))
        assert_same("Float", storage_of(DEV, r), a.reshape(-1), f"{op}: expanded output after the error")


def test_copy_size_mismatch_and_geometry(rng):
    d = contiguous(DEV, "Float", vals(rng, "Float", (3, 4)))
    h = contiguous(HOST, "Float", vals(rng, "Float", (5,)))
    with pytest.raises(THError, match="size|element"):
        THC.call("THCudaTensor_copyFloat", None, d, h)
    with pytest.raises(THError, match="size|element"):
        THC.call("THFloatTensor_copyCuda", None, h, d)
    assert geometry(DEV, d)[0] == (3, 4)
