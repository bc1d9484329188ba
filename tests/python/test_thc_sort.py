"""THC sorts, top-k, selections, scans and renorm (device tensors) against TH (host tensors).

Run: TH_CUDA_EMULATOR=1 TH_LIB=$PWD/target/debug/libth.so python -m pytest -q tests/python/test_thc_sort.py

Every call runs on host tensors (TH{R}Tensor_op) and on device tensors (THCuda{R}Tensor_op) built
from the same values and layouts (contiguous, transposed, narrowed, selected); values have many
ties, NaN, +-inf, -0.0 and 0.0. Values and indices must agree bit for bit (any NaN equals any
NaN), whole output storages included; errors must carry the host's message and leave outputs
untouched. `renorm` is compared within a few ULPs: its norms come from the reductions, whose
summation order differs between the engines (test_thc.py's rule for float reductions)."""

import ctypes as C

import numpy as np
import pytest
from thccases import assert_same, raw, scalar_of
from thclib import start_thc, ALL_REALS, FLOATS, DevSide, HostSide, Layout, Thc, contiguous, emulated, geometry, storage_of, \
    th_error_text, view_values
from thlib import DTYPES, Lib, THError

LIB = Lib()
THC = start_thc(LIB)
HOST, DEV = HostSide(LIB), DevSide(THC)
SIDES = (HOST, DEV)
NUMS = [r for r in ALL_REALS if r != "Bool"]
LAYOUTS = ["contig", "perm", "narrow", "select", "mixed"]


def tied(rng, real, shape):
    """Raw values with many ties (a small pool), NaN, +-inf, -0.0 and 0.0 for floats."""
    if real == "Bool":
        return raw(real, rng.integers(0, 2, size=shape).astype(bool))
    if real in FLOATS:
        pool = np.array([-2.5, -1.0, -0.0, 0.0, 0.5, 1.0, 3.0, np.nan, np.inf, -np.inf])
        v = np.where(rng.random(shape) < 0.6, pool[rng.integers(len(pool), size=shape)],
                     rng.integers(-20, 20, size=shape) / 4.0)
        return raw(real, v)
    lo = 0 if real == "Byte" else -4
    return raw(real, rng.integers(lo, lo + 8, size=shape))


def views(rng, real, shape, kind):
    lay = Layout(rng, shape, kind=kind, expand=False)
    base = tied(rng, real, lay.base_shape)
    return [lay.build(side, real, base) for side in SIDES]


def dim_arg(side, d):
    """THC's `long` dims where THC has them (the TH functions take int)."""
    return C.c_long(d) if side is DEV else C.c_int(d)


def both(real, fn, outs, what):
    """Runs fn(side) on both sides; compares the outputs' views and whole storages, or the
    errors (same message, outputs untouched)."""
    res, errs, before = [], [], []
    for side in SIDES:
        o = outs(side)
        before.append([storage_of(side, t) for t in o])
        try:
            fn(side, *o)
            errs.append(None)
        except THError as e:
            errs.append(th_error_text(e))
        res.append(o)
    assert errs[1] == errs[0], f"{what}: device error {errs[1]!r} != host error {errs[0]!r}"
    for k, (h, d) in enumerate(zip(*res)):
        r = h.real
        if errs[0] is not None:
            assert_same(r, storage_of(DEV, d), before[1][k], f"{what}: output {k} after the error")
            continue
        hg, dg = geometry(HOST, h)[0], geometry(DEV, d)[0]
        assert hg == dg, f"{what}: output {k}: device size {dg} != host size {hg}"
        if hg == ():  # TH's empty tensor: no dimensions
            continue
        hv = view_values(HOST, h)
        assert_same(r, view_values(DEV, d), hv, f"{what}: output {k}")
        if hv.size:  # an empty output's storage holds uninitialised elements
            assert_same(r, storage_of(DEV, d), storage_of(HOST, h), f"{what}: output {k} storage")
    return errs[0]


def fresh(real, *reals):
    return lambda side: [side.new(r) for r in (real,) + reals]


SHAPES = [(5, 7), (3, 1, 6), (40, 3), (1, 9), (9,)]


@pytest.mark.parametrize("real", ALL_REALS)
@pytest.mark.parametrize("kind", LAYOUTS)
def test_sort_and_topk(rng, real, kind):
    for shape in SHAPES:
        h, d = views(rng, real, shape, kind)
        ins = {id(HOST): h, id(DEV): d}
        for dim in range(len(shape)):
            for desc in (0, 1):
                both(real, lambda s, r, i: s.call(real, "sort", None, r, i, ins[id(s)], C.c_int(dim), C.c_int(desc)),
                     fresh(real, "Long"), f"sort {shape} dim {dim} desc {desc}")
            n = shape[dim]
            for k in sorted({0, 1, n // 2, n}):
                for largest in (0, 1):
                    both(real, lambda s, r, i: s.call(real, "topk", None, r, i, ins[id(s)], C.c_int64(k), C.c_int(dim),
                                                      C.c_int(largest), C.c_int(1)),
                         fresh(real, "Long"), f"topk {shape} dim {dim} k {k} largest {largest}")


@pytest.mark.parametrize("real", ["Float", "Half", "Long", "Byte", "Double", "BFloat16"])
def test_sort_long_and_many_lines(rng, real):
    """Lines longer than a block (5000: a padded 8192-wide network) and many short lines."""
    for shape, dim in (((2, 5000), 1), ((5000, 3), 0), ((700, 5), 1), ((3, 1000), 1)):
        h, d = views(rng, real, shape, "contig")
        ins = {id(HOST): h, id(DEV): d}
        for desc in (0, 1):
            both(real, lambda s, r, i: s.call(real, "sort", None, r, i, ins[id(s)], C.c_int(dim), C.c_int(desc)),
                 fresh(real, "Long"), f"sort {shape} desc {desc}")
        both(real, lambda s, r, i: s.call(real, "topk", None, r, i, ins[id(s)], C.c_int64(17), C.c_int(dim),
                                          C.c_int(1), C.c_int(1)), fresh(real, "Long"), f"topk {shape}")


@pytest.mark.parametrize("real", ["Float", "Int", "Half", "Bool"])
def test_sort_into_its_input(rng, real):
    """The values output is the input itself (and a transposed view of it)."""
    for kind in ("contig", "perm"):
        h, d = views(rng, real, (6, 9), kind)
        both(real, lambda s, t, i: s.call(real, "sort", None, t, i, t, C.c_int(1), C.c_int(0)),
             lambda s: [h if s is HOST else d, s.new("Long")], f"sort in place {kind}")


@pytest.mark.parametrize("real", NUMS)
def test_selections(rng, real):
    """median (THC) and kthvalue (TH's name on device tensors), mode, medianall."""
    for shape in SHAPES + [(3, 300)]:
        for kind in ("contig", "perm", "narrow"):
            h, d = views(rng, real, shape, kind)
            ins = {id(HOST): h, id(DEV): d}
            for dim in range(len(shape)):
                for keep in (0, 1):
                    both(real, lambda s, v, i: s.call(real, "median", None, v, i, ins[id(s)], dim_arg(s, dim),
                                                      C.c_int(keep)), fresh(real, "Long"), f"median {shape} {dim}")
                    both(real, lambda s, v, i: s.call(real, "mode", None, v, i, ins[id(s)], C.c_int(dim),
                                                      C.c_int(keep)), fresh(real, "Long"), f"mode {shape} {dim}")
                    k = shape[dim] // 3 + 1
                    both(real, lambda s, v, i: LIB.call(f"TH{real}Tensor_kthvalue", None, v, i, ins[id(s)],
                                                        C.c_int64(k), C.c_int(dim), C.c_int(keep)),
                         fresh(real, "Long"), f"kthvalue {shape} {dim} k {k}")
            rt = DTYPES[real][1] if real not in ("Half", "BFloat16") else C.c_uint16
            hm = HOST.call(real, "medianall", rt, h)
            dm = DEV.call(real, "medianall", rt, d)
            assert_same(real, np.array([dm]).astype(np.asarray(storage_of(HOST, h)).dtype),
                        np.array([hm]).astype(np.asarray(storage_of(HOST, h)).dtype), f"medianall {shape}")


@pytest.mark.parametrize("real", NUMS)
def test_scans(rng, real):
    for shape in ((5, 7), (4, 1, 300), (9,)):
        for kind in LAYOUTS:
            h, d = views(rng, real, shape, kind)
            ins = {id(HOST): h, id(DEV): d}
            for dim in range(len(shape)):
                for op in ("cumsum", "cumprod"):
                    both(real, lambda s, r: s.call(real, op, None, r, ins[id(s)], dim_arg(s, dim)), fresh(real),
                         f"{op} {shape} {kind} dim {dim}")
            # into the input itself
            both(real, lambda s, t: s.call(real, "cumsum", None, t, t, dim_arg(s, 0)),
                 lambda s: [h if s is HOST else d], f"cumsum in place {shape} {kind}")


@pytest.mark.parametrize("real", FLOATS)
def test_renorm(rng, real):
    for shape in ((5, 7), (3, 4, 6)):
        for kind in ("contig", "perm", "narrow"):
            lay = Layout(rng, shape, kind=kind, expand=False)
            base = raw(real, rng.normal(0, 3, size=lay.base_shape))
            h, d = (lay.build(s, real, base) for s in SIDES)
            for dim in range(len(shape)):
                for p in (1.0, 2.0, 3.0):
                    outs = []
                    for s, t in ((HOST, h), (DEV, d)):
                        r = s.new(real)
                        s.call(real, "renorm", None, r, t, scalar_of(real, raw(real, [p])[0]), dim_arg(s, dim),
                               scalar_of(real, raw(real, [4.0])[0]))
                        outs.append(view_values(s, r))
                    assert_same(real, outs[1], outs[0], f"renorm {shape} {kind} dim {dim} p {p}", ulps=4)


@pytest.mark.parametrize("real", ["Float", "Int", "Half", "Long", "Bool"])
def test_sort_key_value_inplace(rng, real):
    """Keys sorted in place, values permuted alongside (checked against TH's sort + numpy)."""
    for shape, dim in (((6, 9), 1), ((6, 9), 0), ((3, 40), 1)):
        for desc in (0, 1):
            keys = tied(rng, real, shape)
            vals = rng.integers(-1000, 1000, size=shape).astype(np.int64)
            h, d = contiguous(HOST, real, keys), contiguous(DEV, real, keys)
            hs, hi = HOST.new(real), HOST.new("Long")
            HOST.call(real, "sort", None, hs, hi, h, C.c_int(dim), C.c_int(desc))
            dv = contiguous(DEV, "Long", vals)
            DEV.call(real, "sortKeyValueInplace", None, d, dv, C.c_int(dim), C.c_int(desc))
            assert_same(real, view_values(DEV, d), view_values(HOST, hs), f"keys {shape} {dim}")
            want = np.take_along_axis(vals, view_values(HOST, hi), axis=dim)
            assert np.array_equal(view_values(DEV, dv), want), f"values {shape} {dim}"


def test_errors_match_the_host(rng):
    real = "Float"
    h, d = views(rng, real, (4, 5), "contig")
    ins = {id(HOST): h, id(DEV): d}
    cases = [("sort dim", lambda s, r, i: s.call(real, "sort", None, r, i, ins[id(s)], C.c_int(2), C.c_int(0))),
             ("topk k", lambda s, r, i: s.call(real, "topk", None, r, i, ins[id(s)], C.c_int64(6), C.c_int(1),
                                               C.c_int(1), C.c_int(1))),
             ("topk -k", lambda s, r, i: s.call(real, "topk", None, r, i, ins[id(s)], C.c_int64(-1), C.c_int(1),
                                                C.c_int(1), C.c_int(1))),
             ("mode dim", lambda s, r, i: s.call(real, "mode", None, r, i, ins[id(s)], C.c_int(-1), C.c_int(0))),
             ("median dim", lambda s, r, i: s.call(real, "median", None, r, i, ins[id(s)], dim_arg(s, 5), C.c_int(0))),
             ("kthvalue k", lambda s, r, i: LIB.call("THFloatTensor_kthvalue", None, r, i, ins[id(s)], C.c_int64(9),
                                                     C.c_int(0), C.c_int(0)))]
    for what, fn in cases:
        prev = lambda s: [contiguous(s, real, np.ones(3, np.float32)), contiguous(s, "Long", np.arange(3))]
        assert both(real, fn, prev, what) is not None, f"{what}: no error"
    for what, fn in (("cumsum dim", lambda s, r: s.call(real, "cumsum", None, r, ins[id(s)], dim_arg(s, 3))),
                     ("renorm p", lambda s, r: s.call(real, "renorm", None, r, ins[id(s)], C.c_float(-1),
                                                      dim_arg(s, 0), C.c_float(1))),
                     ("renorm 1-D", lambda s, r: s.call(real, "renorm", None, r, r, C.c_float(2),
                                                        dim_arg(s, 0), C.c_float(1)))):
        assert both(real, fn, lambda s: [contiguous(s, real, np.ones(3, np.float32))], what) is not None


def test_mixed_devices_raise(rng):
    a = tied(rng, "Float", (3, 4))
    h, d = contiguous(HOST, "Float", a), contiguous(DEV, "Float", a)
    for name, args in (("THCudaTensor_sort", (HOST.new("Float"), DEV.new("Long"), d, C.c_int(0), C.c_int(0))),
                       ("THCudaTensor_topk", (DEV.new("Float"), DEV.new("Long"), h, C.c_long(1), C.c_int(0),
                                              C.c_int(1), C.c_int(1))),
                       ("THCudaTensor_cumsum", (HOST.new("Float"), d, C.c_long(0))),
                       ("THCudaTensor_mode", (DEV.new("Float"), HOST.new("Long"), d, C.c_int(0), C.c_int(0)))):
        with pytest.raises(THError, match="device|host|CPU|cuda"):
            THC.call(name, None, *args)
    assert_same("Float", storage_of(DEV, d), a.reshape(-1), "input after the failed calls")
