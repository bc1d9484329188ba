"""th.save / th.load through .npy (numpy reads what th writes and the other way round), and
pickling by value."""

import copy
import pickle

import numpy as np
import pytest

import th
from _data import random_array

rng = np.random.default_rng(3)
DTYPES = ["uint8", "int8", "int16", "int32", "int64", "float32", "float64", "float16", "bool"]


def rand(shape, dtype):
    return random_array(rng, shape, dtype, high=100, scale=10)


@pytest.mark.parametrize("dtype", DTYPES)
def test_save_load_npy_with_numpy(dtype, tmp_path):
    a = rand((3, 4, 2), dtype)
    t = th.tensor(a)
    p = tmp_path / "t.npy"
    th.save(t.transpose(0, 2), p)  # any strides
    np.testing.assert_array_equal(np.load(p), a.transpose(2, 1, 0))
    np.save(tmp_path / "n.npy", a)
    u = th.load(tmp_path / "n.npy")
    assert u.dtype.name == dtype and u.shape == a.shape
    np.testing.assert_array_equal(u.numpy(), a)
    th.save(u, str(p))
    assert th.load(str(p)).tolist() == a.tolist()


def test_load_errors(tmp_path):
    p = tmp_path / "x.npy"
    np.save(p, np.arange(3, dtype=np.uint16))
    with pytest.raises(th.THError, match="uint16|<u2|dtype"):
        th.load(p)
    q = tmp_path / "y.npy"
    q.write_bytes(b"not a npy file")
    with pytest.raises(th.THError):
        th.load(q)


@pytest.mark.parametrize("dtype", [d.name for d in th.DTYPES])
def test_pickle_by_value(dtype):
    t = th.tensor(rand((3, 5), "float32").tolist(), dtype=dtype)
    v = t.t()[1:]
    s = pickle.dumps(v)
    assert str(v.data_ptr()).encode() not in s or len(s) > 32
    w = pickle.loads(s)
    assert w.dtype is v.dtype and w.shape == v.shape and w.tolist() == v.tolist()
    assert w.data_ptr() != v.data_ptr()
    w2 = copy.deepcopy(v)
    assert w2.tolist() == v.tolist() and w2.data_ptr() != v.data_ptr()
    red = v.__reduce__()
    assert isinstance(red[1][0], bytes) and red[1][1] == dtype and red[1][2] == v.shape
