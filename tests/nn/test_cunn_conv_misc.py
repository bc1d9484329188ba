"""THCUNN's SpatialDepthWiseConvolution, SpatialConvolutionLocal, SpatialSubSampling and
TemporalRowConvolution on the device against the host THNN on the same values and layouts (the
host layers are checked against PyTorch in test_conv.py and test_conv_misc.py): updateOutput,
updateGradInput and accGradParameters (accumulated, scaled) for Cuda, CudaDouble and CudaHalf;
batched and unbatched, stride and padding, overlapping and gapped windows, non-contiguous
operands, NULL bias; refused calls that leave outputs alone.

Run on the CPU emulator: TH_CUDA_EMULATOR=1 TH_LIB=$PWD/target/debug/libth.so .venv/bin/python -m
pytest -q tests/nn/test_cunn_conv_misc.py (skipped without a device)."""

import numpy as np
import pytest
from cunnlib import HOST, NP, REALS, Cunn, agree, exact
from thlib import THError


def strided(v):
    """The same values as a non-contiguous view (reversed dimension order, transposed back)."""
    return np.ascontiguousarray(v.transpose(*reversed(range(v.ndim)))).transpose(*reversed(range(v.ndim)))


def same(v):
    return v


# Each module: the three calls given (x, out/gin/gw, ...) and its integer options `o`.
class DepthWise:
    name = "SpatialDepthWiseConvolution"

    @staticmethod
    def ints(o):
        return [o["k"][1], o["k"][0], o["s"][1], o["s"][0], o["p"][1], o["p"][0]]

    @classmethod
    def shapes(cls, o, lead):
        (h, w), (kh, kw), (sh, sw), (ph, pw) = o["i"], o["k"], o["s"], o["p"]
        oh, ow = (h + 2 * ph - kh) // sh + 1, (w + 2 * pw - kw) // sw + 1
        c, m = o["c"], o["m"]
        return lead + [c, h, w], [m, c, kh, kw], [m, c], lead + [c * m, oh, ow]

    @classmethod
    def forward(cls, fam, real, x, out, w, b, o):
        fam.call(real, f"{cls.name}_updateOutput", x, out, w, b, fam.empty(real), fam.empty(real), *cls.ints(o))

    @classmethod
    def backward(cls, fam, real, x, gout, gin, w, o):
        fam.call(real, f"{cls.name}_updateGradInput", x, gout, gin, w, fam.empty(real), fam.empty(real),
                 *cls.ints(o))

    @classmethod
    def acc(cls, fam, real, x, gout, gw, gb, o, scale):
        fam.call(real, f"{cls.name}_accGradParameters", x, gout, gw, gb, fam.empty(real), fam.empty(real),
                 *cls.ints(o), scale)


class Local:
    name = "SpatialConvolutionLocal"

    @staticmethod
    def out_hw(o):
        (h, w), (kh, kw), (sh, sw), (ph, pw) = o["i"], o["k"], o["s"], o["p"]
        return (h + 2 * ph - kh) // sh + 1, (w + 2 * pw - kw) // sw + 1

    @classmethod
    def ints(cls, o):
        oh, ow = cls.out_hw(o)
        (h, w) = o["i"]
        return [o["k"][1], o["k"][0], o["s"][1], o["s"][0], o["p"][1], o["p"][0], w, h, ow, oh]

    @classmethod
    def shapes(cls, o, lead):
        oh, ow = cls.out_hw(o)
        c, no, (kh, kw) = o["c"], o["m"], o["k"]
        return lead + [c] + list(o["i"]), [oh * ow, no, c * kh * kw], [no, oh, ow], lead + [no, oh, ow]

    @classmethod
    def forward(cls, fam, real, x, out, w, b, o):
        fam.call(real, f"{cls.name}_updateOutput", x, out, w, b, fam.empty(real), fam.empty(real), *cls.ints(o))

    @classmethod
    def backward(cls, fam, real, x, gout, gin, w, o):
        fam.call(real, f"{cls.name}_updateGradInput", x, gout, gin, w, fam.empty(real), fam.empty(real),
                 *cls.ints(o))

    @classmethod
    def acc(cls, fam, real, x, gout, gw, gb, o, scale):
        fam.call(real, f"{cls.name}_accGradParameters", x, gout, gw, gb, fam.empty(real), fam.empty(real),
                 *cls.ints(o), scale)


class SubSampling:
    name = "SpatialSubSampling"

    @staticmethod
    def ints(o):
        return [o["k"][1], o["k"][0], o["s"][1], o["s"][0]]

    @classmethod
    def shapes(cls, o, lead):
        (h, w), (kh, kw), (sh, sw) = o["i"], o["k"], o["s"]
        oh, ow = (h - kh) // sh + 1, (w - kw) // sw + 1
        c = o["c"]
        return lead + [c, h, w], [c], [c], lead + [c, oh, ow]

    @classmethod
    def forward(cls, fam, real, x, out, w, b, o):
        fam.call(real, f"{cls.name}_updateOutput", x, out, w, b, *cls.ints(o))

    @classmethod
    def backward(cls, fam, real, x, gout, gin, w, o):
        fam.call(real, f"{cls.name}_updateGradInput", x, gout, gin, w, *cls.ints(o))

    @classmethod
    def acc(cls, fam, real, x, gout, gw, gb, o, scale):
        fam.call(real, f"{cls.name}_accGradParameters", x, gout, gw, gb, *cls.ints(o), scale)


class Row:
    name = "TemporalRowConvolution"

    @staticmethod
    def ints(o):
        return [o["k"], o["s"], o["p"], o["ff"]]

    @classmethod
    def shapes(cls, o, lead):
        f, t = o["c"], o["i"]
        to = (t + 2 * o["p"] - o["k"]) // o["s"] + 1
        seq = (lambda n: [f, n]) if o["ff"] else (lambda n: [n, f])
        return lead + seq(t), [f, 1, o["k"]], [f], lead + seq(to)

    @classmethod
    def forward(cls, fam, real, x, out, w, b, o):
        fam.call(real, f"{cls.name}_updateOutput", x, out, w, b, None, None, *cls.ints(o))

    @classmethod
    def backward(cls, fam, real, x, gout, gin, w, o):
        fam.call(real, f"{cls.name}_updateGradInput", x, gout, gin, w, None, None, *cls.ints(o))

    @classmethod
    def acc(cls, fam, real, x, gout, gw, gb, o, scale):
        fam.call(real, f"{cls.name}_accGradParameters", x, gout, gw, gb, None, None, *cls.ints(o), scale)


def run(fam, real, mod, o, x, w, b, gout, gw0, gb0, scale, layout):
    """(output, gradInput, gradWeight, gradBias) of `mod` on `fam` (the device's Cunn or the
    host's NN), every array operand passed through `layout`."""
    dev = isinstance(fam, Cunn)
    typ = NP[real] if dev else {"Float": np.float32, "Double": np.float64}[real]
    read = fam.numpy if dev else (lambda t: t.numpy())
    x, w, gout = (layout(a.astype(typ)) for a in (x, w, gout))
    b = None if b is None else layout(b.astype(typ))
    out, gin = fam.empty(real), fam.empty(real)
    mod.forward(fam, real, x, out, w, b, o)
    mod.backward(fam, real, x, gout, gin, w, o)
    gw = fam.tensor(real, layout(gw0.astype(typ)))
    gb = None if gb0 is None else fam.tensor(real, layout(gb0.astype(typ)))
    mod.acc(fam, real, x, gout, gw, gb, o, scale)
    return read(out), read(gin), read(gw), None if gb is None else read(gb)


def check(nn, cunn, rng, real, mod, o, batch, bias=True, scale=0.5, layout=same):
    lead = [batch] if batch else []
    xs, ws, bs, gs = mod.shapes(o, lead)
    x = exact(real, rng.standard_normal(xs))
    w = exact(real, rng.standard_normal(ws) * 0.5)
    b = exact(real, rng.standard_normal(bs)) if bias else None
    gout = exact(real, rng.standard_normal(gs))
    gw0 = exact(real, rng.standard_normal(ws))
    gb0 = exact(real, rng.standard_normal(bs)) if bias else None
    dev = run(cunn, real, mod, o, x, w, b, gout, gw0, gb0, scale, layout)
    host = run(nn, HOST[real], mod, o, x, w, b, gout, gw0, gb0, scale, layout)
    assert list(dev[0].shape) == gs and list(dev[1].shape) == xs
    for what, got, want in zip(("output", "gradInput", "gradWeight", "gradBias"), dev, host):
        if want is None:
            assert got is None
            continue
        try:
            agree(got, want, real, ulps=64)
        except AssertionError as e:
            raise AssertionError(f"{mod.name} {real} {what} (batch {batch}, bias {bias}, {o}): {e}") from None


# geometries: (module, options), small and odd-sized; k > s overlaps the windows, k < s gaps them
CASES = [
    (DepthWise, dict(c=3, m=2, i=(5, 6), k=(2, 3), s=(2, 1), p=(1, 1))),
    (DepthWise, dict(c=2, m=1, i=(4, 7), k=(3, 1), s=(1, 3), p=(0, 2))),
    (Local, dict(c=2, m=3, i=(5, 6), k=(2, 3), s=(1, 2), p=(1, 0))),
    (Local, dict(c=3, m=2, i=(4, 4), k=(1, 1), s=(2, 1), p=(0, 0))),
    (SubSampling, dict(c=3, i=(6, 7), k=(2, 3), s=(2, 2))),
    (SubSampling, dict(c=2, i=(5, 6), k=(3, 2), s=(1, 3))),
    (Row, dict(c=3, i=9, k=3, s=2, p=1, ff=True)),
    (Row, dict(c=4, i=7, k=2, s=3, p=2, ff=False)),
    (Row, dict(c=2, i=6, k=4, s=1, p=0, ff=False)),
]


@pytest.mark.parametrize("real", REALS)
@pytest.mark.parametrize("case", range(len(CASES)), ids=lambda i: f"{CASES[i][0].name}-{i}")
def test_against_host(nn, cunn, rng, real, case):
    mod, o = CASES[case]
    check(nn, cunn, rng, real, mod, o, batch=2)
    check(nn, cunn, rng, real, mod, o, batch=None, bias=False, scale=1.0)
    check(nn, cunn, rng, real, mod, o, batch=3, scale=2.0, layout=strided)


@pytest.mark.parametrize("real", ["Cuda", "CudaHalf"])
@pytest.mark.parametrize("case", [0, 2, 4, 7], ids=lambda i: CASES[i][0].name)
def test_strided_outputs(cunn, rng, real, case):
    """Outputs that already have their shape keep their (non-contiguous) strides: the same
    values land in them as in fresh outputs."""
    mod, o = CASES[case]
    xs, ws, bs, gs = mod.shapes(o, [2])
    x, w, b, g = (exact(real, rng.standard_normal(s)) for s in (xs, ws, bs, gs))
    out, gin = cunn.empty(real), cunn.empty(real)
    mod.forward(cunn, real, x, out, w, b, o)
    mod.backward(cunn, real, x, g, gin, w, o)
    out2, gin2 = cunn.tensor(real, strided(np.full(gs, 3.0))), cunn.tensor(real, strided(np.full(xs, 3.0)))
    mod.forward(cunn, real, x, out2, w, b, o)
    mod.backward(cunn, real, x, g, gin2, w, o)
    assert (cunn.numpy(out2) == cunn.numpy(out)).all() and (cunn.numpy(gin2) == cunn.numpy(gin)).all()


def raises(f, *words):
    with pytest.raises(THError) as e:
        f()
    for w in words:
        assert w in e.value.msg, e.value.msg


@pytest.mark.parametrize("case", [0, 2, 4, 7], ids=lambda i: CASES[i][0].name)
def test_errors_leave_outputs(nn, cunn, rng, case):
    real = "Cuda"
    mod, o = CASES[case]
    xs, ws, bs, gs = mod.shapes(o, [2])
    x, w, b, g = (rng.standard_normal(s) for s in (xs, ws, bs, gs))
    fn = f"THNN_Cuda{mod.name}"
    out = cunn.tensor(real, np.full((2,), 9.0))
    # a bias of the wrong size; a host weight among device tensors
    raises(lambda: mod.forward(cunn, real, x, out, w, b[..., :1], o), f"{fn}_updateOutput", "bias")
    raises(lambda: mod.forward(cunn, real, x, out, nn.tensor("Float", w.astype(np.float32)), b, o), "device")
    assert (cunn.numpy(out) == 9.0).all()
    # gradOutput of the wrong shape
    gin = cunn.tensor(real, np.full((3,), 7.0))
    raises(lambda: mod.backward(cunn, real, x, g[..., :1], gin, w, o), f"{fn}_updateGradInput", "gradOutput")
    assert (cunn.numpy(gin) == 7.0).all()
    # a gradBias of the wrong size leaves gradWeight alone
    gw = cunn.tensor(real, np.full(ws, 5.0))
    gb = cunn.tensor(real, np.full((1,), 5.0))
    raises(lambda: mod.acc(cunn, real, x, g, gw, gb, o, 1.0), f"{fn}_accGradParameters", "gradBias")
    assert (cunn.numpy(gw) == 5.0).all() and (cunn.numpy(gb) == 5.0).all()
