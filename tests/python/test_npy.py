"""`.npy` files: TH{Real}Tensor_saveNpy files read by numpy.load, and numpy.save files (C and
Fortran order, big-endian, format versions 1.0/2.0/3.0, 0-d and empty arrays) read by
TH{Real}Tensor_loadNpy, for every numpy dtype on random shapes and non-contiguous views;
BFloat16 through 2-byte void ('|V2'); corrupt and hostile files give errors."""

import ctypes as C

import numpy as np
import pytest
from cases import random_shape, random_values, random_view
from thlib import DTYPES, THError

NP = ["Byte", "Char", "Short", "Int", "Long", "Float", "Double", "Half", "Bool"]
N = 6  # random cases per dtype and direction


def values(rng, real, shape):
    a = random_values(rng, real, shape, low=-100, high=100) if real not in ("Byte", "Bool") else random_values(rng, real, shape)
    a = np.asarray(a).astype(DTYPES[real][0])
    if real in ("Float", "Double", "Half") and a.size:
        a = a.copy()
        a.flat[0] = -0.0
        a.flat[-1] = np.nan if a.size > 2 else a.flat[-1]
    return a


def save(lib, t, path):
    lib.call(f"TH{t.real}Tensor_saveNpy", None, C.c_char_p(str(path).encode()), t)


def load(lib, real, path):
    from thlib import Tensor

    return Tensor(lib, real, lib.call(f"TH{real}Tensor_loadNpy", C.c_void_p, C.c_char_p(str(path).encode())))


def same(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("real", NP)
def test_save_then_numpy_load(lib, rng, tmp_path, real):
    for i in range(N):
        a = random_view(rng, values(rng, real, random_shape(rng, max_dims=4)))
        t = lib.from_numpy(a, real)
        p = tmp_path / f"{i}.npy"
        save(lib, t, p)
        b = np.load(p)
        assert same(b, np.ascontiguousarray(a)), (a, b)
        assert b.dtype.byteorder in ("<", "|", "=")
        with open(p, "rb") as f:
            assert f.read(8) == b"\x93NUMPY\x01\x00"
        assert p.stat().st_size % 64 == (a.nbytes % 64)  # the header is padded to 64 bytes


@pytest.mark.parametrize("real", NP)
def test_numpy_save_then_load(lib, rng, tmp_path, real):
    for i in range(N):
        a = values(rng, real, random_shape(rng, max_dims=4))
        p = tmp_path / f"{i}.npy"
        kind = i % 4
        if kind == 0:
            np.save(p, a)
        elif kind == 1:
            np.save(p, np.asfortranarray(a))
        elif kind == 2:
            np.save(p, a.astype(a.dtype.newbyteorder(">")))
        else:
            with open(p, "wb") as f:
                np.lib.format.write_array(f, a, version=(2, 0) if i % 8 == 3 else (3, 0))
        t = load(lib, real, p)
        assert t.ndim() == a.ndim
        assert all(t.stride(d) == int(np.prod(a.shape[d + 1 :])) for d in range(a.ndim))  # contiguous
        assert same(lib.to_numpy(t), a)


def test_zero_d_and_empty(lib, tmp_path):
    p = tmp_path / "s.npy"
    np.save(p, np.float64(2.5))
    t = load(lib, "Double", p)
    assert t.ndim() == 1 and t.size(0) == 1 and lib.to_numpy(t)[0] == 2.5
    np.save(p, np.zeros((3, 0), dtype=np.int32))
    assert load(lib, "Int", p).ndim() == 0
    save(lib, lib.new("Float"), p)
    b = np.load(p)
    assert b.shape == (0,) and b.dtype == np.float32


def test_bfloat16_as_void(lib, rng, tmp_path):
    bits = rng.integers(0, 2**16, size=(3, 4)).astype(np.uint16)
    t = lib.from_numpy(bits.T, "BFloat16")
    p = tmp_path / "b.npy"
    save(lib, t, p)
    b = np.load(p)
    assert b.dtype == np.dtype("V2")
    assert same(b.view(np.uint16), np.ascontiguousarray(bits.T))
    np.save(p, bits.view("V2"))
    back = load(lib, "BFloat16", p)
    raw = lib.call("THBFloat16Tensor_data", C.c_void_p, back)
    got = np.ctypeslib.as_array((C.c_uint16 * bits.size).from_address(raw)).reshape(bits.shape)
    assert same(got, bits)


def test_dtype_mismatch(lib, tmp_path):
    p = tmp_path / "x.npy"
    np.save(p, np.zeros(3, dtype=np.int64))
    with pytest.raises(THError, match="'<i8', not Float"):
        load(lib, "Float", p)
    np.save(p, np.zeros(3, dtype=np.uint32))
    with pytest.raises(THError, match="dtype"):
        load(lib, "Int", p)
    np.save(p, np.zeros(3, dtype=[("a", "<i4"), ("b", "<f4")]))
    with pytest.raises(THError, match="structured"):
        load(lib, "Int", p)


def header(d, version=(1, 0), pad=True):
    h = repr(d).encode("latin1")
    if pad:
        h += b" " * (63 - (len(h) + 10) % 64) + b"\n"
    size = len(h).to_bytes(2 if version[0] == 1 else 4, "little")
    return b"\x93NUMPY" + bytes(version) + size + h


@pytest.mark.parametrize(
    "blob, msg",
    [
        (b"", "magic"),
        (b"\x93NUMPX\x01\x00", "magic"),
        (b"\x93NUMPY\x09\x00\x10\x00", "version"),
        (b"\x93NUMPY\x01\x00\xff\xff{'descr'", "exceeds"),
        (b"\x93NUMPY\x02\x00\xff\xff\xff\x7f{}", "exceeds"),
        (header({"descr": "<f4", "fortran_order": False, "shape": (10**12,)}), "truncated"),
        (header({"descr": "<f4", "fortran_order": False, "shape": (2**40, 2**40)}), "overflow"),
        (header({"descr": "<f4", "fortran_order": False, "shape": (2, 3)}) + b"\0" * 23, "truncated"),
        (header({"descr": "<f4", "fortran_order": False}), "no 'shape'"),
        (header({"descr": "<f4", "fortran_order": 0, "shape": (1,)}), "corrupt"),
        (header({"descr": "<f4", "fortran_order": False, "shape": (-1,)}), "corrupt"),
        (header({"descr": "<f4", "fortran_order": False, "shape": (1,), "x": 1}), "corrupt"),
        (header({"descr": "<f4", "fortran_order": False, "shape": (1,)})[:-3], "exceeds"),
        (b"\x93NUMPY\x01\x00\x3d\x00{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} junk\n" + b"\0" * 4, "trailing"),
    ],
)
def test_corrupt_files(lib, tmp_path, blob, msg):
    p = tmp_path / "bad.npy"
    p.write_bytes(blob)
    with pytest.raises(THError, match=msg):
        load(lib, "Float", p)


def test_io_errors(lib, tmp_path):
    with pytest.raises(THError, match="cannot read"):
        load(lib, "Float", tmp_path / "missing.npy")
    t = lib.from_numpy(np.ones(3, dtype=np.float32), "Float")
    with pytest.raises(THError, match="cannot write"):
        save(lib, t, tmp_path / "no" / "such" / "dir.npy")
