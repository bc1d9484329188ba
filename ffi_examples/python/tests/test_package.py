"""The installed `th` package: dtypes, views and indexing against numpy, math, numpy zero-copy
both ways, DLPack (versioned and legacy, deleters exactly once, keep-alive, refusals), error
messages, and sharing a tensor with another process through shared memory."""

import ctypes as C
import gc
import os
import subprocess
import sys
import textwrap
import weakref

import numpy as np
import pytest

import th
from _data import random_array

NUMPY_DTYPES = ["uint8", "int8", "int16", "int32", "int64", "float32", "float64", "float16", "bool"]
rng = np.random.default_rng(1234)


def rand(shape, dtype):
    return random_array(rng, shape, dtype, high=100, scale=10)


# ---- a counting allocator: observes exactly when (and how often) a storage's memory is freed ----

ALLOC_FN = C.CFUNCTYPE(C.c_void_p, C.c_void_p, C.c_ssize_t)
REALLOC_FN = C.CFUNCTYPE(C.c_void_p, C.c_void_p, C.c_void_p, C.c_ssize_t)
FREE_FN = C.CFUNCTYPE(None, C.c_void_p, C.c_void_p)


class THAllocator(C.Structure):
    _fields_ = [("malloc", ALLOC_FN), ("realloc", REALLOC_FN), ("free", FREE_FN)]


libc = C.CDLL(None)
libc.malloc.restype = C.c_void_p
libc.malloc.argtypes = [C.c_size_t]
libc.free.argtypes = [C.c_void_p]
frees = []
_alloc = THAllocator(
    ALLOC_FN(lambda ctx, n: libc.malloc(max(n, 1))),
    REALLOC_FN(lambda ctx, p, n: None),
    FREE_FN(lambda ctx, p: (frees.append(p), libc.free(p))),
)


def counted_tensor(n=6, dtype=th.float32):
    """A tensor whose storage memory is freed through `frees`."""
    lib = th._lib
    frees.clear()
    R = dtype.th
    st = lib.call(f"TH{R}Storage_newWithAllocator", C.c_void_p, [C.c_ssize_t, C.c_void_p, C.c_void_p], n,
                  C.addressof(_alloc), None)
    with lib.LongList([n]) as sz:
        h = lib.call(f"TH{R}Tensor_newWithStorage", C.c_void_p, [C.c_void_p, C.c_ssize_t, C.c_void_p, C.c_void_p],
                     st, 0, sz, None)
    lib.fn(f"TH{R}Storage_free", None, [C.c_void_p])(st)
    t = th.Tensor._adopt(h, dtype)
    for i in range(n):
        t[i] = i
    return t, t.data_ptr()


# ---- basics ----


@pytest.mark.parametrize("dtype", [d.name for d in th.DTYPES])
def test_every_dtype_basics(dtype):
    t = th.zeros(2, 3, dtype=dtype)
    assert t.dtype is th.as_dtype(dtype)
    assert t.shape == (2, 3) and t.strides == (3, 1) and t.ndim == 2 and t.numel() == 6 and len(t) == 2
    t[1, 2] = 1
    assert t[1, 2] == 1 and t[0, 0] == 0
    assert t.tolist() == [[0, 0, 0], [0, 0, 1]]
    r = repr(t)
    assert r.startswith("tensor([[") and f"dtype={t.dtype.name}" in r
    u = t.to("float64")
    assert u.dtype is th.float64 and u.tolist() == [[0, 0, 0], [0, 0, 1.0]]


def test_bfloat16_values():
    t = th.tensor([1.0, 2.5, -3.0, 1e30], dtype="bfloat16")
    assert t.tolist()[:3] == [1.0, 2.5, -3.0]
    assert abs(t.tolist()[3] - 1e30) / 1e30 < 1e-2
    assert t.sum() == pytest.approx(1e30, rel=1e-2)
    with pytest.raises(TypeError, match="bfloat16"):
        np.asarray(t)


@pytest.mark.parametrize("seed", range(6))
def test_views_and_indexing_match_numpy(seed):
    r = np.random.default_rng(seed)
    shape = tuple(int(s) for s in r.integers(1, 6, size=r.integers(1, 5)))
    a = r.random(shape).astype(np.float32)
    t = th.tensor(a)
    assert np.array_equal(np.asarray(t), a)
    keys = [0, -1, slice(None), slice(1, None), slice(None, None, 2), (Ellipsis, 0), (slice(0, 2), Ellipsis)]
    for k in keys:
        want = a[k]
        got = t[k]
        if np.ndim(want) == 0:
            assert got == pytest.approx(float(want))
        elif want.size == 0:
            assert got.numel() == 0
        else:
            assert got.shape == want.shape
            assert np.array_equal(np.asarray(got), want)
    if len(shape) >= 2:
        assert np.array_equal(np.asarray(t.transpose(0, 1)), a.swapaxes(0, 1))
        assert np.array_equal(np.asarray(t.T), a.T)
        assert np.array_equal(np.asarray(t.narrow(1, 0, 1)), a[:, 0:1])
        assert np.array_equal(np.asarray(t.select(0, shape[0] - 1)), a[-1])
    if len(shape) == 2:
        assert np.array_equal(np.asarray(t.t()), a.T)
    assert np.array_equal(np.asarray(t.view(-1)), a.reshape(-1))
    assert np.array_equal(np.asarray(t.T.reshape(-1)), a.T.reshape(-1))
    e = t.unsqueeze(0).expand(3, *shape)
    assert e.strides[0] == 0 and np.array_equal(np.asarray(e), np.broadcast_to(a, (3,) + shape))
    # views share memory
    if len(shape) >= 2:
        v = t[..., 0]
        v[(0,) * v.ndim] = 42.0
        assert np.asarray(t)[(0,) * len(shape)] == 42.0


def test_setitem_and_iteration():
    t = th.zeros(3, 4, dtype="int32")
    t[1] = 7
    t[:, 2] = th.tensor([1, 2, 3], dtype="int32")
    t[2, 1:3] = 5
    want = np.zeros((3, 4), np.int32)
    want[1] = 7
    want[:, 2] = [1, 2, 3]
    want[2, 1:3] = 5
    assert np.array_equal(np.asarray(t), want)
    assert [row.tolist() for row in t] == want.tolist()


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "float16"])
def test_math_matches_numpy(dtype):
    a = rand((3, 4), dtype)
    b = rand((3, 4), dtype)
    if dtype.startswith("int"):
        b = b + 1  # no division by zero
    ta, tb = th.tensor(a), th.tensor(b)
    tol = dict(rtol=1e-2, atol=1e-2) if dtype == "float16" else dict(rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ta + tb), a + b, **tol)
    np.testing.assert_allclose(np.asarray(ta - tb), a - b, **tol)
    np.testing.assert_allclose(np.asarray(ta * tb), a * b, **tol)
    np.testing.assert_allclose(np.asarray(ta + 2), a + 2, **tol)
    np.testing.assert_allclose(np.asarray(3 - ta), 3 - a, **tol)
    np.testing.assert_allclose(np.asarray(2 * ta), 2 * a, **tol)
    np.testing.assert_allclose(np.asarray(-ta), -a, **tol)
    # broadcasting
    np.testing.assert_allclose(np.asarray(ta + tb[0]), a + b[0], **tol)
    if dtype.startswith("float"):
        np.testing.assert_allclose(np.asarray(ta / tb), a / b, **tol)
        np.testing.assert_allclose(np.asarray(ta / 4), a / 4, **tol)
        np.testing.assert_allclose(np.asarray(1 / tb), 1 / b, **tol)
        np.testing.assert_allclose(np.asarray(ta.abs().sqrt()), np.sqrt(np.abs(a)), **tol)
        np.testing.assert_allclose(np.asarray(ta.exp()), np.exp(a), rtol=1e-2 if dtype == "float16" else 1e-6)
        np.testing.assert_allclose(np.asarray(ta.tanh()), np.tanh(a), **tol)
        assert ta.mean() == pytest.approx(float(a.astype(np.float64).mean()), rel=1e-2)
        np.testing.assert_allclose(np.asarray(ta.mean(1)), a.mean(1), **tol)
        assert ta.std() == pytest.approx(float(a.astype(np.float64).std(ddof=1)), rel=1e-2)
    assert ta.sum() == pytest.approx(float(a.astype(np.float64).sum()), rel=1e-3)
    np.testing.assert_allclose(np.asarray(ta.sum(0)), a.sum(0), **tol)
    assert ta.sum(1, keepdim=True).shape == (3, 1)
    assert ta.max() == pytest.approx(float(a.max()))
    values, idx = ta.max(1)
    np.testing.assert_allclose(np.asarray(values), a.max(1))
    assert np.array_equal(np.asarray(idx), a.argmax(1))
    c = ta.clone()
    c += tb
    c *= 2
    np.testing.assert_allclose(np.asarray(c), (a + b) * 2, **tol)


def test_context_manager_and_release():
    with th.ones(2, 2) as t:
        a = np.asarray(t)
        d = np.from_dlpack(t)
    assert t.closed
    assert "released" in repr(t)
    with pytest.raises(ValueError, match="released"):
        t.shape
    # arrays made before the release keep the memory
    assert a.tolist() == [[1, 1], [1, 1]] and d.tolist() == [[1, 1], [1, 1]]
    t.close()  # idempotent


def test_errors_carry_the_library_message():
    t = th.zeros(2, 3)
    with pytest.raises(th.THError, match="THFloatTensor_newNarrow") as e:
        t.narrow(1, 2, 5)
    assert isinstance(e.value, ValueError) or isinstance(e.value, IndexError)
    assert e.value.msg and e.value.code
    with pytest.raises(th.THError, match="THFloatTensor_newView"):
        t.view(4, 2)
    with pytest.raises(th.THError, match="does not broadcast|must match"):
        t + th.zeros(4)
    with pytest.raises(TypeError, match="dtype mismatch"):
        t + th.zeros(2, 3, dtype="float64")
    with pytest.raises(IndexError):
        t[2]
    with pytest.raises(TypeError, match="not defined for uint8"):
        th.zeros(2, dtype="uint8").exp()


# ---- numpy zero-copy ----


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_numpy_asarray_zero_copy(dtype):
    t = th.tensor(rand((3, 5), dtype))
    a = np.asarray(t)
    assert a.dtype == np.dtype(dtype) and a.shape == (3, 5)
    assert a.ctypes.data == t.data_ptr()
    # strided views
    v = t.transpose(0, 1)[1:, ::2]
    av = np.asarray(v)
    assert av.ctypes.data == v.data_ptr()
    assert np.array_equal(av, a.T[1:, ::2])
    # writes both ways
    a[0, 0] = 1
    assert t[0, 0] == 1
    t[2, 4] = 0
    assert a[2, 4] == 0
    assert np.asarray(t).flags.writeable


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_from_numpy_zero_copy_and_keepalive(dtype):
    a = rand((4, 6), dtype)
    view = a[1:, ::2].T  # strided, offset
    want = view.copy()
    t = th.from_numpy(view)
    assert t.shape == view.shape and t.dtype.name == dtype
    assert t.data_ptr() == view.ctypes.data
    assert t.strides == tuple(s // view.itemsize for s in view.strides)
    assert np.array_equal(np.asarray(t), want)
    t[0, 0] = 0
    assert view[0, 0] == 0
    view[1, 1] = 1
    assert t[1, 1] == 1
    want = view.copy()
    alive = weakref.ref(view)
    del view, a
    gc.collect()
    assert alive() is not None  # numpy's managed tensor keeps the array alive
    assert np.array_equal(np.asarray(t), want)  # still valid without any numpy names
    t.close()
    gc.collect()
    assert alive() is None  # and lets go when the last th tensor goes


def test_from_numpy_releases_exactly_once():
    a = np.arange(12.0).reshape(3, 4)
    base = sys.getrefcount(a)
    t = th.from_numpy(a)
    v = t[1:]
    assert sys.getrefcount(a) == base + 1
    t.close()
    assert sys.getrefcount(a) == base + 1  # the view still uses it
    v.close()
    gc.collect()
    assert sys.getrefcount(a) == base  # numpy's deleter ran, once (twice would underflow)


def test_from_numpy_refusals():
    a = np.arange(6.0)
    a.flags.writeable = False
    with pytest.raises(BufferError, match="read-only"):
        th.from_numpy(a)
    b = np.arange(6.0)
    base = sys.getrefcount(b)
    with pytest.raises(BufferError, match="negative"):
        th.from_numpy(b[::-1])
    gc.collect()
    assert sys.getrefcount(b) == base  # the refused capsule was released
    with pytest.raises(BufferError, match="no th dtype"):
        th.from_numpy(np.arange(3, dtype=np.uint16))
    with pytest.raises(BufferError):
        th.from_numpy(np.arange(3, dtype=np.complex64))


# ---- DLPack ----


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_numpy_from_dlpack(dtype):
    t = th.tensor(rand((4, 3), dtype))
    v = t.transpose(0, 1).narrow(1, 1, 3)
    a = np.from_dlpack(v)
    assert a.ctypes.data == v.data_ptr()
    assert a.flags.writeable  # versioned capsule
    assert np.array_equal(a, np.asarray(t).T[:, 1:])
    a[0, 0] = 0
    assert v[0, 0] == 0
    # our import of numpy's capsule: same memory
    back = th.from_dlpack(a)
    assert back.data_ptr() == a.ctypes.data and back.dtype is t.dtype


def test_dlpack_legacy_capsule():
    t = th.tensor([1.0, 2.0, 3.0])
    cap = t.__dlpack__()
    assert th._lib.PyCapsule_GetName(cap) == b"dltensor"
    u = th.from_dlpack(cap)
    assert u.data_ptr() == t.data_ptr() and u.tolist() == [1.0, 2.0, 3.0]
    assert th._lib.PyCapsule_GetName(cap) == b"used_dltensor"


@pytest.mark.parametrize("dtype", [d.name for d in th.DTYPES])
def test_dlpack_round_trip_every_dtype(dtype):
    t = th.tensor(rand((2, 5), "float32").tolist(), dtype=dtype)
    u = th.from_dlpack(t)
    assert u.dtype is t.dtype and u.data_ptr() == t.data_ptr() and u.shape == t.shape
    cap = t.__dlpack__(max_version=(1, 0))
    assert th._lib.PyCapsule_GetName(cap) == b"dltensor_versioned"
    w = th.from_dlpack(cap)
    assert w.data_ptr() == t.data_ptr() and w.tolist() == t.tolist()


def test_export_deleter_runs_once_when_consumer_is_done():
    t, ptr = counted_tensor()
    a = np.from_dlpack(t)
    t.close()
    gc.collect()
    assert frees == [] or ptr not in frees
    assert a.tolist() == [0, 1, 2, 3, 4, 5]  # kept alive by the managed tensor
    del a
    gc.collect()
    assert frees.count(ptr) == 1


def test_unconsumed_capsule_runs_deleter_once():
    t, ptr = counted_tensor()
    cap = t.__dlpack__(max_version=(1, 0))
    legacy = t.__dlpack__()
    t.close()
    del cap
    gc.collect()
    assert ptr not in frees  # the legacy capsule still holds it
    del legacy
    gc.collect()
    assert frees.count(ptr) == 1


def test_rejected_capsule_reports_error_and_frees_once():
    t, ptr = counted_tensor(dtype=th.bfloat16)
    v = t.view(2, 3)
    with pytest.raises((RuntimeError, BufferError), match="[Uu]nsupported dtype"):
        np.from_dlpack(v)  # numpy rejects bfloat16: its error must survive our destructor
    with pytest.raises((RuntimeError, BufferError), match="[Uu]nsupported dtype"):
        np.from_dlpack(v)
    t.close()
    gc.collect()
    assert ptr not in frees  # v still holds the storage (the two capsules let go of theirs)
    v.close()
    gc.collect()
    assert frees.count(ptr) == 1


def test_bfloat16_through_dlpack():
    t = th.tensor([[1.0, -2.0], [0.5, 8.0]], dtype="bfloat16")
    u = th.from_dlpack(t)
    assert u.dtype is th.bfloat16 and u.data_ptr() == t.data_ptr()
    u[0, 0] = 3.0
    assert t[0, 0] == 3.0
    m = th._lib.DLManagedTensorVersioned.from_address(
        th._lib.PyCapsule_GetPointer(t.__dlpack__(max_version=(1, 0)), b"dltensor_versioned"))
    assert (m.dl_tensor.dtype.code, m.dl_tensor.dtype.bits, m.dl_tensor.dtype.lanes) == (4, 16, 1)


def test_dlpack_copy_and_device_arguments():
    t = th.tensor([1.0, 2.0])
    c = np.from_dlpack(t, copy=True)
    assert c.ctypes.data != t.data_ptr() and c.tolist() == [1.0, 2.0]
    assert t.__dlpack_device__() == (1, 0)
    with pytest.raises(BufferError, match="stream"):
        t.__dlpack__(stream=1)
    with pytest.raises(BufferError, match="device"):
        t.__dlpack__(dl_device=(2, 0))


def test_keepalive_after_producer_names_go():
    a = np.from_dlpack(th.tensor([[1, 2], [3, 4]], dtype="int64"))
    gc.collect()
    assert a.tolist() == [[1, 2], [3, 4]]
    t = th.from_dlpack(np.arange(5, dtype=np.int16))
    gc.collect()
    assert t.tolist() == [0, 1, 2, 3, 4]


# ---- shared memory between processes ----


def test_share_memory_between_processes():
    t = th.tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
    old_ptr = t.data_ptr()
    t.share_memory_()
    name = t.shared_name
    assert t.is_shared() and t.data_ptr() != old_ptr
    assert os.path.exists("/dev/shm" + name)
    assert t.tolist() == np.arange(12, dtype=np.float32).reshape(3, 4).tolist()
    child = textwrap.dedent(f"""
        import th
        u = th.Tensor.from_shared({name!r}, (3, 4), "float32")
        assert u.tolist()[2] == [8.0, 9.0, 10.0, 11.0], u.tolist()
        u[0] = -1.0          # the parent must see this
        u.close()
        print("ok")
    """)
    env = dict(os.environ)
    out = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
    assert t[0].tolist() == [-1.0] * 4
    assert os.path.exists("/dev/shm" + name)  # the parent still uses it
    a = np.asarray(t)
    t.close()
    assert os.path.exists("/dev/shm" + name)  # and so does the numpy view
    del a
    gc.collect()
    assert not os.path.exists("/dev/shm" + name)  # last user gone: segment removed


def test_shared_open_errors():
    with pytest.raises(th.THError, match="unable to open shared memory"):
        th.Tensor.from_shared("/th_no_such_segment_%d" % os.getpid(), (2,), "float32")
