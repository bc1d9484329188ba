"""THC index, mask and scatter/gather functions (THCTensorIndex.h, THCTensorMasked.h,
THCTensorScatterGather.h, nonzero) against TH's on the same values, through the C API.

Run: TH_CUDA_EMULATOR=1 TH_LIB=$PWD/target/debug/libth.so python -m pytest -q tests/python/test_thc_index.py

Every case builds the same operands (values and layouts: contiguous, transposed, narrowed,
selected, expanded inputs) on the host and on the device, runs TH{R}Tensor_op and
THCuda{R}Tensor_op, and compares every operand's whole storage bit for bit (outputs, elements
outside the views, inputs), result sizes, and errors (same message, nothing written). Indices
repeat, so scatter-like results depend on the order of the writes (the last wins) and of the
additions."""

import ctypes as C

import numpy as np
import pytest
from thccases import assert_same, scalar_of, vals
from thclib import start_thc, ALL_REALS, DevSide, DTensor, HostSide, Layout, Thc, contiguous, emulated, geometry, storage_of, th_error_text, tname
from thlib import Lib, THError

LIB = Lib()
THC = start_thc(LIB)
HOST, DEV = HostSide(LIB), DevSide(THC)
NUM_REALS = [r for r in ALL_REALS if r != "Bool"]
KINDS = ["contig", "perm", "narrow", "select", "mixed"]


def shape_of(rng, max_dims=3, max_size=5):
    return tuple(int(rng.integers(1, max_size + 1)) for _ in range(int(rng.integers(1, max_dims + 1))))


class Operand:
    """A tensor to build identically on both sides: dtype, layout and base values; `host=True`
    builds it on the host for the device call too (the `_long` / `*Byte` forms)."""

    def __init__(self, rng, real, shape, base=None, expand=False, kind=None, host=False):
        self.real, self.host = real, host
        self.lay = Layout(rng, shape, kind="contig" if 0 in shape else kind, expand=expand)
        self.base = vals(rng, real, self.lay.base_shape) if base is None else base(self.lay.base_shape)

    def build(self, side):
        return self.lay.build(HOST if self.host else side, self.real, self.base)

    def values(self):
        return self.lay.numpy(self.base)


def index_operand(rng, shape, size, **kw):
    return Operand(rng, "Long", shape, base=lambda s: rng.integers(0, size, size=s).astype(np.int64), **kw)


def mask_operand(rng, real, shape, **kw):
    return Operand(rng, real, shape, base=lambda s: (rng.random(s) < 0.5).astype(np.uint8 if real == "Byte" else np.bool_),
                   **kw)


def run_both(real, names, build, call):
    """Builds `build(side)` (a dict of tensors) on both sides, calls `call(side, fn, ts)` with the
    side's function name, and compares errors, sizes and whole storages. Returns the host error."""
    out = {}
    for side, name in ((HOST, names[0]), (DEV, names[1])):
        ts = build(side)
        before = {k: storage_of(side_of(t), t) for k, t in ts.items()}
        err = None
        try:
            call(side, name, ts)
        except THError as e:
            err = e
        out[side.kind] = (ts, err, before)
    (hts, herr, hbefore), (dts, derr, dbefore) = out["host"], out["device"]
    what = f"{names[1]}"
    if herr is not None:
        assert derr is not None, f"{what}: the host raised {herr}, the device did not"
        assert th_error_text(derr) == th_error_text(herr), f"{what}: device error {derr} != host error {herr}"
    else:
        assert derr is None, f"{what}: the device raised {derr} (the host did not)"
    for k in hts:
        hs, ds = (HOST, hts[k]), (side_of(dts[k]), dts[k])
        assert geometry(*ds)[0] == geometry(*hs)[0], f"{what}: sizes of {k} differ"
        got, want = storage_of(*ds), storage_of(*hs)
        if not geometry(*hs)[0]:
            continue  # an empty result: storages are allocated differently, and hold nothing
        assert_same(dts[k].real, got, want, f"{what} {k}")
        if herr is not None:  # a failing call writes nothing
            assert_same(dts[k].real, got, dbefore[k], f"{what} {k} after the error")
            assert_same(hts[k].real, want, hbefore[k], f"{what} {k} after the host error")
    return herr


def side_of(t):
    return DEV if isinstance(t, DTensor) else HOST


def fn(side, real, name):
    return f"{tname(real)}_{name}" if side is DEV else f"TH{real}Tensor_{name}"


def call(side, real, name, *args):
    side.call(real, name, None, *args) if side is DEV else LIB.call(fn(side, real, name), None, *args)


def out_tensor(rng, real, shape):
    """A fresh output, or one already of `shape` (kept, with its strides), or of another shape."""
    pick = rng.integers(3)
    if pick == 0 or 0 in shape:
        return lambda side: {"out": side.new(real)}
    o = Operand(rng, real, shape if pick == 1 else shape_of(rng), expand=False)
    return lambda side: {"out": o.build(side)}


# ---------------------------------------------------------------------------------------------
# indexSelect / indexCopy / indexAdd / indexFill (device and host `_long` indices)


@pytest.mark.parametrize("real", ALL_REALS)
@pytest.mark.parametrize("host_index", [False, True])
def test_index_select(rng, real, host_index):
    for _ in range(6):
        shape = shape_of(rng)
        d = int(rng.integers(len(shape)))
        k = int(rng.integers(1, 7))
        src = Operand(rng, real, shape, expand=True)
        idx = index_operand(rng, (k,), shape[d], host=host_index, expand=True)
        oshape = tuple(k if e == d else n for e, n in enumerate(shape))
        mk = out_tensor(rng, real, oshape)
        sfx = "_long" if host_index else ""
        run_both(real, ("indexSelect", "indexSelect" + sfx), lambda s: {**mk(s), "src": src.build(s), "idx": idx.build(s)},
                 lambda s, n, t: call(s, real, n, t["out"], t["src"], C.c_int(d), t["idx"]))


@pytest.mark.parametrize("real", ALL_REALS)
@pytest.mark.parametrize("op", ["indexCopy", "indexAdd", "indexFill"])
@pytest.mark.parametrize("host_index", [False, True])
def test_index_update(rng, real, op, host_index):
    if op == "indexAdd" and real == "Bool":
        pytest.skip("indexAdd is numeric only")
    for _ in range(6):
        shape = shape_of(rng)
        d = int(rng.integers(len(shape)))
        k = int(rng.integers(1, 3 * shape[d] + 1))  # longer than the dim: indices repeat
        t = Operand(rng, real, shape)
        idx = index_operand(rng, (k,), shape[d], host=host_index, expand=True)
        sshape = tuple(k if e == d else n for e, n in enumerate(shape))
        src = Operand(rng, real, sshape, expand=True)
        value = scalar_of(real, vals(rng, real, (1,))[0])
        sfx = "_long" if host_index else ""

        def go(s, n, ts):
            last = value if op == "indexFill" else ts["src"]
            call(s, real, n, ts["t"], C.c_int(d), ts["idx"], last)

        run_both(real, (op, op + sfx), lambda s: {"t": t.build(s), "idx": idx.build(s), "src": src.build(s)}, go)


@pytest.mark.parametrize("real", ["Float", "Long", "Bool"])
def test_empty_index(rng, real):
    """An index with no elements selects nothing and writes nothing."""
    shape = shape_of(rng)
    d = int(rng.integers(len(shape)))
    src = Operand(rng, real, shape)
    value = scalar_of(real, vals(rng, real, (1,))[0])

    def empty(side):
        t = side.new("Long")
        call(side, "Long", "resize1d", t, C.c_int64(0))
        return t

    run_both(real, ("indexSelect", "indexSelect"), lambda s: {"out": s.new(real), "src": src.build(s), "idx": empty(s)},
             lambda s, n, t: call(s, real, n, t["out"], t["src"], C.c_int(d), t["idx"]))
    run_both(real, ("indexFill", "indexFill"), lambda s: {"t": src.build(s), "idx": empty(s)},
             lambda s, n, t: call(s, real, n, t["t"], C.c_int(d), t["idx"], value))


# ---------------------------------------------------------------------------------------------
# gather / scatter / scatterAdd / scatterFill


@pytest.mark.parametrize("real", ALL_REALS)
def test_gather(rng, real):
    for _ in range(8):
        shape = shape_of(rng)
        d = int(rng.integers(len(shape)))
        ishape = tuple(int(rng.integers(1, 6)) if e == d else n for e, n in enumerate(shape))
        src = Operand(rng, real, shape, expand=True)
        idx = index_operand(rng, ishape, shape[d], expand=True)
        mk = out_tensor(rng, real, ishape)
        run_both(real, ("gather", "gather"), lambda s: {**mk(s), "src": src.build(s), "idx": idx.build(s)},
                 lambda s, n, t: call(s, real, n, t["out"], t["src"], C.c_int(d), t["idx"]))


@pytest.mark.parametrize("real", ALL_REALS)
@pytest.mark.parametrize("op", ["scatter", "scatterAdd", "scatterFill"])
def test_scatter(rng, real, op):
    if op == "scatterAdd" and real == "Bool":
        pytest.skip("scatterAdd is numeric only")
    for _ in range(8):
        shape = shape_of(rng)
        d = int(rng.integers(len(shape)))
        ishape = tuple(int(rng.integers(1, 2 * n + 2)) if e == d else n for e, n in enumerate(shape))
        sshape = tuple(n + int(rng.integers(0, 2)) if e == d else n for e, n in enumerate(ishape))
        t = Operand(rng, real, shape)
        idx = index_operand(rng, ishape, shape[d], expand=True)
        src = Operand(rng, real, sshape, expand=True)
        value = scalar_of(real, vals(rng, real, (1,))[0])

        def go(s, n, ts):
            last = value if op == "scatterFill" else ts["src"]
            call(s, real, n, ts["t"], C.c_int(d), ts["idx"], last)

        run_both(real, (op, op), lambda s: {"t": t.build(s), "idx": idx.build(s), "src": src.build(s)}, go)


# ---------------------------------------------------------------------------------------------
# masks and nonzero

MASK_FORMS = [("Byte", "", ""), ("Byte", "", "Byte"), ("Bool", "Bool", "Bool")]  # mask, host suffix, device suffix


def mask_shape(rng, shape):
    """The tensor's shape, a shape that broadcasts to it, or another with as many elements."""
    pick = rng.integers(4)
    if pick == 0 and len(shape) > 1:
        return shape[1:]
    if pick == 1:
        return tuple(1 if rng.random() < 0.5 else n for n in shape)
    if pick == 2:
        return (int(np.prod(shape)),)
    return shape


@pytest.mark.parametrize("real", ALL_REALS)
@pytest.mark.parametrize("form", MASK_FORMS, ids=lambda f: f[0] + f[2])
@pytest.mark.parametrize("op", ["maskedFill", "maskedCopy"])
def test_masked_fill_copy(rng, real, form, op):
    mreal, hsfx, dsfx = form
    for _ in range(6):
        shape = shape_of(rng)
        t = Operand(rng, real, shape)
        mask = mask_operand(rng, mreal, mask_shape(rng, shape), expand=True, host=dsfx == "Byte")
        src = Operand(rng, real, (int(np.prod(shape)) + int(rng.integers(0, 3)),), expand=True)
        value = scalar_of(real, vals(rng, real, (1,))[0])

        def go(s, n, ts):
            last = value if op == "maskedFill" else ts["src"]
            call(s, real, n, ts["t"], ts["mask"], last)

        run_both(real, (op + hsfx, op + dsfx), lambda s: {"t": t.build(s), "mask": mask.build(s), "src": src.build(s)}, go)


@pytest.mark.parametrize("real", ALL_REALS)
@pytest.mark.parametrize("form", MASK_FORMS, ids=lambda f: f[0] + f[2])
def test_masked_select(rng, real, form):
    mreal, hsfx, dsfx = form
    for _ in range(6):
        shape = shape_of(rng)
        src = Operand(rng, real, shape, expand=True)
        mask = mask_operand(rng, mreal, mask_shape(rng, shape), expand=True, host=dsfx == "Byte")
        mk = out_tensor(rng, real, (3,))
        run_both(real, ("maskedSelect" + hsfx, "maskedSelect" + dsfx),
                 lambda s: {**mk(s), "src": src.build(s), "mask": mask.build(s)},
                 lambda s, n, t: call(s, real, n, t["out"], t["src"], t["mask"]))


@pytest.mark.parametrize("real", ALL_REALS)
def test_nonzero(rng, real):
    for i in range(8):
        shape = shape_of(rng, max_dims=4)
        zero = rng.random() < 0.5 if i else 1.0  # the first case: all zeros
        def base(s, zero=zero):
            a = vals(rng, real, s)
            a[rng.random(s) < zero] = 0
            return a

        t = Operand(rng, real, shape, expand=True, base=base)
        mk = out_tensor(rng, "Long", (2, len(shape)))
        run_both(real, ("nonzero", "nonzero"), lambda s: {**mk(s), "t": t.build(s)},
                 lambda s, n, ts: call(s, real, n, ts["out"], ts["t"]))


def test_nonzero_large_and_special_values(rng):
    """Several scan chunks (counts, their scan, ranks); -0.0 is zero, NaN is not."""
    for real, n in (("Float", 5000), ("Half", 3000), ("Byte", 70000)):
        a = vals(rng, real, (n,))
        a[rng.random(n) < 0.6] = 0
        if real == "Float":
            a[:4] = [np.float32(-0.0), np.nan, 0, -np.inf]
        hs, ds = contiguous(HOST, real, a), contiguous(DEV, real, a)
        ho, do = HOST.new("Long"), DEV.new("Long")
        LIB.call(f"TH{real}Tensor_nonzero", None, ho, hs)
        DEV.call(real, "nonzero", None, do, ds)
        want = storage_of(HOST, ho)
        assert_same("Long", storage_of(DEV, do), want, f"nonzero of {n} {real}")
        np.testing.assert_array_equal(want, np.flatnonzero(a != 0))


# ---------------------------------------------------------------------------------------------
# aliased operands: outputs that are, or share memory with, an input


@pytest.mark.parametrize("real", ["Float", "Half", "Long", "Bool"])
def test_aliased(rng, real):
    for _ in range(4):
        shape = shape_of(rng, max_dims=2, max_size=4)
        d = int(rng.integers(len(shape)))
        t = Operand(rng, real, shape)
        idx = index_operand(rng, (int(rng.integers(1, 5)),), shape[d])
        same = tuple(n for n in shape)
        gidx = index_operand(rng, same, shape[d])
        mask = mask_operand(rng, "Byte", shape)
        # the result into its own source
        run_both(real, ("indexSelect", "indexSelect"), lambda s: {"t": t.build(s), "idx": idx.build(s)},
                 lambda s, n, ts: call(s, real, n, ts["t"], ts["t"], C.c_int(d), ts["idx"]))
        run_both(real, ("gather", "gather"), lambda s: {"t": t.build(s), "idx": gidx.build(s)},
                 lambda s, n, ts: call(s, real, n, ts["t"], ts["t"], C.c_int(d), ts["idx"]))
        run_both(real, ("maskedSelect", "maskedSelect"), lambda s: {"t": t.build(s), "mask": mask.build(s)},
                 lambda s, n, ts: call(s, real, n, ts["t"], ts["t"], ts["mask"]))
        # in place from itself (a source reading what the op writes)
        run_both(real, ("scatter", "scatter"), lambda s: {"t": t.build(s), "idx": gidx.build(s)},
                 lambda s, n, ts: call(s, real, n, ts["t"], C.c_int(d), ts["idx"], ts["t"]))
        run_both(real, ("maskedCopy", "maskedCopy"), lambda s: {"t": t.build(s), "mask": mask.build(s)},
                 lambda s, n, ts: call(s, real, n, ts["t"], ts["mask"], ts["t"]))
        sq = (shape[d],) * 2 if d == 0 else None
        if sq is not None and real != "Bool":
            sqt = Operand(rng, real, sq)
            sidx = index_operand(rng, (sq[0],), sq[0])
            # src = the transpose of t itself
            def go(s, n, ts):
                tr = s.new(real)
                call(s, real, "transpose", tr, ts["t"], C.c_int(0), C.c_int(1))
                call(s, real, n, ts["t"], C.c_int(0), ts["idx"], tr)

            run_both(real, ("indexAdd", "indexAdd"), lambda s: {"t": sqt.build(s), "idx": sidx.build(s)}, go)


# ---------------------------------------------------------------------------------------------
# errors: same message as the host, nothing written


@pytest.mark.parametrize("real", ["Float", "Byte", "BFloat16", "Bool"])
def test_errors(rng, real):
    for _ in range(4):
        shape = shape_of(rng, max_dims=3)
        d = int(rng.integers(len(shape)))
        t = Operand(rng, real, shape)
        bad = int(rng.choice([-1, shape[d], shape[d] + 5]))

        def bad_index(shape_):
            def base(s):
                a = rng.integers(0, shape[d], size=s).astype(np.int64)
                a.reshape(-1)[int(rng.integers(a.size))] = bad
                return a
            return base

        k = int(rng.integers(1, 5))
        idx = Operand(rng, "Long", (k,), base=bad_index((k,)), kind="contig")
        src = Operand(rng, real, tuple(k if e == d else n for e, n in enumerate(shape)))
        value = scalar_of(real, vals(rng, real, (1,))[0])
        for op, last in (("indexCopy", "src"), ("indexFill", None)):
            err = run_both(real, (op, op), lambda s: {"t": t.build(s), "idx": idx.build(s), "src": src.build(s)},
                           lambda s, n, ts, last=last: call(s, real, n, ts["t"], C.c_int(d), ts["idx"],
                                                           ts[last] if last else value))
            assert err is not None and "out of range" in err.msg
        err = run_both(real, ("indexSelect", "indexSelect_long"), lambda s: {"out": s.new(real), "t": t.build(s),
                                                                             "idx": idx.build(HOST)},
                       lambda s, n, ts: call(s, real, n, ts["out"], ts["t"], C.c_int(d), ts["idx"]))
        assert err is not None
        gidx = Operand(rng, "Long", shape, base=bad_index(shape), kind="contig")
        for op in ("scatter", "gather"):
            args = (lambda s, n, ts: call(s, real, n, ts["t"], C.c_int(d), ts["idx"], ts["src"])) if op == "scatter" else \
                (lambda s, n, ts: call(s, real, n, ts["out"], ts["t"], C.c_int(d), ts["idx"]))
            err = run_both(real, (op, op), lambda s: {"t": t.build(s), "idx": gidx.build(s), "src": t.build(s),
                                                      "out": s.new(real)}, args)
            assert err is not None and "out of range" in err.msg
        # size mismatch
        wrong = Operand(rng, real, tuple(n + 1 for n in shape))
        err = run_both(real, ("indexCopy", "indexCopy"),
                       lambda s: {"t": t.build(s), "idx": idx.build(s), "src": wrong.build(s)},
                       lambda s, n, ts: call(s, real, n, ts["t"], C.c_int(d), ts["idx"], ts["src"]))
        assert err is not None
        # a Byte mask value that is neither 0 nor 1
        mask = Operand(rng, "Byte", shape, base=lambda s: np.where(rng.random(s) < 0.3, 2, rng.integers(0, 2, s)).astype(np.uint8),
                       kind="contig")
        mask.base.reshape(-1)[0] = 3
        for op in ("maskedFill", "maskedCopy", "maskedSelect"):
            def go(s, n, ts, op=op):
                if op == "maskedSelect":
                    call(s, real, n, ts["out"], ts["t"], ts["mask"])
                else:
                    call(s, real, n, ts["t"], ts["mask"], value if op == "maskedFill" else ts["src"])
            err = run_both(real, (op, op), lambda s: {"t": t.build(s), "mask": mask.build(s), "src": src.build(s),
                                                      "out": s.new(real)}, go)
            assert err is not None and "0 and 1" in err.msg
        # maskedCopy with too short a source
        ones = Operand(rng, "Byte", shape, base=lambda s: np.ones(s, np.uint8))
        short = Operand(rng, real, (max(int(np.prod(shape)) - 1, 1),))
        if int(np.prod(shape)) > 1:
            err = run_both(real, ("maskedCopy", "maskedCopy"),
                           lambda s: {"t": t.build(s), "mask": ones.build(s), "src": short.build(s)},
                           lambda s, n, ts: call(s, real, n, ts["t"], ts["mask"], ts["src"]))
            assert err is not None and "source has only" in err.msg


def test_mixed_devices_are_refused(rng):
    """A THC function given a host operand (other than the documented host index / mask of the
    `_long` / `*Byte` forms) refuses, naming both devices, and writes nothing."""
    real = "Float"
    t = Operand(rng, real, (3, 4))
    idx = index_operand(rng, (2,), 3)
    dt, hsrc, didx = t.build(DEV), t.build(HOST), idx.build(DEV)
    before = storage_of(DEV, dt)
    for name, args in (("indexCopy", (dt, C.c_int(0), didx, hsrc)), ("scatter", (dt, C.c_int(0), idx.build(HOST), dt)),
                       ("maskedCopy", (dt, mask_operand(rng, "Byte", (3, 4)).build(HOST), dt))):
        with pytest.raises(THError) as e:
            DEV.call(real, name, None, *args)
        assert "same device" in e.value.msg and "cuda:0" in e.value.msg, e.value.msg
        assert_same(real, storage_of(DEV, dt), before, f"{name} after the error")
