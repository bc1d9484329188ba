"""Indexing with Bool masks and integer tensors (read and assignment), against numpy."""

import numpy as np
import pytest

import th
from _data import random_array

rng = np.random.default_rng(11)
DTYPES = ["uint8", "int16", "int32", "int64", "float32", "float64", "float16", "bool"]


def rand(shape, dtype):
    return random_array(rng, shape, dtype, high=10, scale=4)


@pytest.mark.parametrize("dtype", DTYPES)
def test_bool_mask_read_and_write(dtype):
    a = rand((4, 5), dtype)
    t = th.tensor(a)
    m = rng.random((4, 5)) < 0.4
    tm = th.tensor(m)
    np.testing.assert_array_equal(t[tm].numpy(), a[m])
    rows = np.array([True, False, True, True])
    np.testing.assert_array_equal(t[th.tensor(rows)].numpy(), a[rows])
    np.testing.assert_array_equal(t[:, th.tensor(m[0])].numpy(), a[:, m[0]])
    t[tm] = 1
    a[m] = 1
    np.testing.assert_array_equal(t.numpy(), a)
    vals = rand((int(m.sum()),), dtype)
    t[tm] = th.tensor(vals)
    a[m] = vals
    np.testing.assert_array_equal(t.numpy(), a)
    t[th.tensor(rows)] = 0
    a[rows] = 0
    np.testing.assert_array_equal(t.numpy(), a)


def test_the_issue_example():
    a = rand((3, 4), "float32")
    t = th.tensor(a)
    np.testing.assert_array_equal(t[t > 0].numpy(), a[a > 0])
    t[t < 0] = 0
    a[a < 0] = 0
    np.testing.assert_array_equal(t.numpy(), a)


@pytest.mark.parametrize("dtype", DTYPES)
def test_integer_tensor_read_and_write(dtype):
    a = rand((5, 6), dtype)
    t = th.tensor(a)
    idx = np.array([4, 0, 2, 2])
    ti = th.tensor(idx)
    np.testing.assert_array_equal(t[ti].numpy(), a[idx])
    np.testing.assert_array_equal(t[[1, -1]].numpy(), a[[1, -1]])
    np.testing.assert_array_equal(t[:, ti].numpy(), a[:, idx])
    np.testing.assert_array_equal(t[1:, [0, 5]].numpy(), a[1:, [0, 5]])
    np.testing.assert_array_equal(t[2, [0, 5]].numpy(), a[2, [0, 5]])
    np.testing.assert_array_equal(t[..., th.tensor([-1, 0])].numpy(), a[..., [-1, 0]])
    i2 = np.array([[0, 1], [3, 4]])
    np.testing.assert_array_equal(t[th.tensor(i2)].numpy(), a[i2])
    # several integer indices: paired elements
    r, c = np.array([0, 4, 2]), np.array([5, 0, 3])
    np.testing.assert_array_equal(t[th.tensor(r), th.tensor(c)].numpy(), a[r, c])
    # assignment
    t[th.tensor([0, 3])] = 1
    a[[0, 3]] = 1
    np.testing.assert_array_equal(t.numpy(), a)
    v = rand((2, 6), dtype)
    t[[1, 2]] = th.tensor(v)
    a[[1, 2]] = v
    np.testing.assert_array_equal(t.numpy(), a)
    t[:, [0, -1]] = 0
    a[:, [0, -1]] = 0
    np.testing.assert_array_equal(t.numpy(), a)
    row = rand((5,), dtype)
    t[:, [2]] = th.tensor(row).view(5, 1)
    a[:, [2]] = row.reshape(5, 1)
    np.testing.assert_array_equal(t.numpy(), a)


def test_index_errors():
    t = th.zeros(3, 4)
    with pytest.raises(th.THError):
        t[th.tensor([5])]
    with pytest.raises(IndexError):
        t[th.tensor([True, False])]
    with pytest.raises(IndexError):
        t[th.tensor([0.5])]
