"""Device tensors in the `th` package. With a CUDA device (a GPU, or an emulator build of libth
run with TH_CUDA_EMULATOR=1): round trips host <-> device for every dtype, ops on the device
against numpy, DLPack export (capsule fields read through ctypes) and import of device
capsules, the stream argument, allocator statistics. Without one: `is_available()` is False and
moving a tensor to the device raises a clear error. torch interop runs only where torch has
CUDA."""

import ctypes as C
import gc

import numpy as np
import pytest

import th
from _data import random_array

HAVE_CUDA = th.cuda.is_available()
needs_cuda = pytest.mark.skipif(not HAVE_CUDA, reason="no CUDA device (TH_CUDA_EMULATOR=1 with an emulator build)")
without_cuda = pytest.mark.skipif(HAVE_CUDA, reason="a CUDA device is available")

NUMPY_DTYPES = ["uint8", "int8", "int16", "int32", "int64", "float32", "float64", "float16", "bool"]
rng = np.random.default_rng(99)


def rand(shape, dtype):
    return random_array(rng, shape, dtype, high=50, scale=4)


# ---- without a device ----


@without_cuda
def test_no_device_is_reported_cleanly():
    assert th.cuda.is_available() is False
    assert th.cuda.device_count() == 0
    t = th.tensor([1.0, 2.0])
    assert t.device == "cpu" and not t.is_cuda and t.__dlpack_device__() == (1, 0)
    with pytest.raises(th.THCudaError, match="CUDA is not available"):
        t.cuda()
    with pytest.raises(th.THCudaError, match="CUDA is not available"):
        th.tensor([1.0], device="cuda")
    with pytest.raises(th.THCudaError):
        t.to("cuda:0")
    with pytest.raises(th.THCudaError):
        th.cuda.memory_allocated()
    with pytest.raises(th.THCudaError):
        th.cuda.synchronize()
    # The host side is unaffected, and no error is left pending.
    assert (t + 1).tolist() == [2.0, 3.0] and t.cpu() is t


# ---- with a device ----


@needs_cuda
def test_device_count_and_devices():
    assert th.cuda.device_count() >= 1
    assert th.cuda.current_device() == 0
    assert th.device("cuda:0") == th.device("cuda", 0) == "cuda:0"
    assert str(th.device("cpu")) == "cpu" and th.device("cuda:1").index == 1
    with pytest.raises(ValueError):
        th.device("tpu")
    with pytest.raises(th.THCudaError, match="invalid device ordinal"):
        th.tensor([1.0], device=f"cuda:{th.cuda.device_count()}")
    th.cuda.synchronize()


@needs_cuda
@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_round_trip_every_dtype(dtype):
    a = rand((3, 4), dtype)
    d = th.tensor(a, device="cuda")
    assert d.is_cuda and d.device == "cuda:0" and d.dtype.name == dtype
    assert d.shape == (3, 4) and d.strides == (4, 1)
    assert d.__dlpack_device__() == (2, 0)
    h = d.cpu()
    assert not h.is_cuda and h.device == "cpu"
    np.testing.assert_array_equal(h.numpy(), a)
    np.testing.assert_array_equal(np.array(d.tolist(), dtype=dtype), a)
    # a strided device view comes back with its own layout
    np.testing.assert_array_equal(d.t().cpu().numpy(), a.T)
    np.testing.assert_array_equal(d[1:, ::2].cpu().numpy(), a[1:, ::2])


@needs_cuda
def test_moves_and_conversions():
    a = rand((2, 5), "float32")
    h = th.tensor(a)
    d = h.cuda()
    assert d.cuda() is d and h.cpu() is h
    assert d.to("cuda:0").is_cuda
    d64 = h.to("cuda", "float64")
    assert d64.is_cuda and d64.dtype is th.float64
    np.testing.assert_array_equal(d64.cpu().numpy(), a.astype(np.float64))
    i = d.to(dtype="int32")  # a conversion on the device
    assert i.is_cuda
    np.testing.assert_array_equal(i.cpu().numpy(), a.astype(np.int32))
    back = d.to(device="cpu", dtype=th.float16)
    assert not back.is_cuda
    np.testing.assert_array_equal(back.numpy(), a.astype(np.float16))
    z = th.zeros(2, 3, device="cuda")
    assert z.is_cuda and z.cpu().tolist() == [[0.0] * 3] * 2
    o = th.full((2,), 7, dtype="int64", device="cuda")
    assert o.tolist() == [7, 7]
    r = th.arange(5, device="cuda")
    assert r.is_cuda and r.tolist() == [0, 1, 2, 3, 4]
    e = th.tensor([], device="cuda")
    assert e.is_cuda and e.numel() == 0 and e.cpu().numel() == 0
    # copy_ across devices
    t = th.zeros(2, 5, device="cuda")
    t.copy_(h)
    np.testing.assert_array_equal(t.cpu().numpy(), a)
    u = th.zeros(2, 5)
    u.copy_(d)
    np.testing.assert_array_equal(u.numpy(), a)
    # element access
    assert d[1, 2] == pytest.approx(float(a[1, 2]))
    d[0, 0] = 42
    assert d[0, 0] == 42


@needs_cuda
def test_ops_on_the_device_equal_numpy():
    a, b = rand((4, 6), "float32"), rand((4, 6), "float32")
    x, y = th.tensor(a, device="cuda"), th.tensor(b, device="cuda")
    for r, want in [
        (x + y, a + b), (x - y, a - b), (x * y, a * b), (x * 2.5, a * np.float32(2.5)), (-x, -a),
        (x.abs(), np.abs(a)), (x.exp(), np.exp(a)), (x.sin(), np.sin(a)), (x.t() + y.t(), (a + b).T),
    ]:
        assert r.is_cuda
        np.testing.assert_allclose(r.cpu().numpy(), want, rtol=1e-6, atol=1e-6)
    assert x.sum() == pytest.approx(float(a.astype(np.float64).sum()), rel=1e-5)
    np.testing.assert_allclose(x.sum(1).cpu().numpy(), a.sum(1), rtol=1e-5)
    np.testing.assert_allclose(x.mean(0, keepdim=True).cpu().numpy(), a.mean(0, keepdims=True), rtol=1e-5)
    v, i = x.max(1)
    assert v.is_cuda and i.is_cuda and i.dtype is th.int64
    np.testing.assert_array_equal(v.cpu().numpy(), a.max(1))
    np.testing.assert_array_equal(i.cpu().numpy(), a.argmax(1))
    assert x.max() == a.max() and x.min() == a.min()
    z = x.clone()
    z += y
    np.testing.assert_allclose(z.cpu().numpy(), a + b, rtol=1e-6)
    n = th.tensor(rand((5,), "int32"), device="cuda")
    np.testing.assert_array_equal((n * 3).cpu().numpy(), n.cpu().numpy() * 3)
    assert n.sum() == int(n.cpu().numpy().sum())


@needs_cuda
def test_clear_errors_on_the_device():
    d = th.tensor([1.0, 2.0], device="cuda")
    with pytest.raises(TypeError, match=r"\.cpu\(\)"):
        d.numpy()
    with pytest.raises(TypeError, match=r"\.cpu\(\)"):
        np.asarray(d)
    with pytest.raises(ValueError, match="same device"):
        d + th.tensor([1.0, 2.0])
    with pytest.raises(TypeError, match=r"\.cpu\(\)"):
        d.share_memory_()
    # A TH function without a THC form is named as such (whichever of these still lacks one).
    lib = th._lib
    missing = [n for n in ("saveNpy", "loadNpy", "conv2Dmv", "gesv") if not lib.has(f"THCudaTensor_{n}")]
    if missing:
        assert lib.has(f"THFloatTensor_{missing[0]}")
        with pytest.raises(TypeError, match=f"{missing[0]} has no CUDA form.*THCudaTensor_{missing[0]}.*cpu"):
            d._need(missing[0])


# ---- DLPack ----


def capsule_managed(cap):
    """The DLManagedTensorVersioned inside an unconsumed versioned capsule."""
    assert th._lib.PyCapsule_GetName(cap) == b"dltensor_versioned"
    return th._lib.DLManagedTensorVersioned.from_address(th._lib.PyCapsule_GetPointer(cap, b"dltensor_versioned"))


@needs_cuda
def test_device_capsule_fields():
    a = rand((3, 4), "float32")
    d = th.tensor(a, device="cuda")
    v = d[1:, 1:]
    cap = v.__dlpack__(max_version=(1, 1))
    m = capsule_managed(cap)
    dl = m.dl_tensor
    assert (m.version.major, m.version.minor) == (1, 1) and m.flags == 0
    assert (dl.device.device_type, dl.device.device_id) == (2, 0)
    assert dl.data == v.data_ptr() == d.data_ptr() + 5 * 4 and dl.byte_offset == 0
    assert (dl.dtype.code, dl.dtype.bits, dl.dtype.lanes) == (2, 32, 1)
    assert dl.ndim == 2 and [dl.shape[i] for i in range(2)] == [2, 3] and [dl.strides[i] for i in range(2)] == [4, 1]
    del cap, m, dl
    gc.collect()
    legacy = d.__dlpack__()  # no max_version: a legacy capsule
    assert th._lib.PyCapsule_GetName(legacy) == b"dltensor"
    lm = th._lib.DLManagedTensor.from_address(th._lib.PyCapsule_GetPointer(legacy, b"dltensor"))
    assert (lm.dl_tensor.device.device_type, lm.dl_tensor.data) == (2, d.data_ptr())
    with pytest.raises(BufferError):
        d.__dlpack__(max_version=(1, 1), dl_device=(1, 0))
    with pytest.raises(BufferError, match="ambiguous"):
        d.__dlpack__(max_version=(1, 1), stream=0)
    for s in (None, -1, 1, 2):  # the stream values DLPack defines for CUDA
        d.__dlpack__(max_version=(1, 1), stream=s)
    with pytest.raises(BufferError, match="stream must be None"):
        th.tensor([1.0]).__dlpack__(stream=1)


@needs_cuda
def test_from_dlpack_of_a_device_capsule_is_zero_copy():
    a = rand((2, 3), "float64")
    d = th.tensor(a, device="cuda")
    u = th.from_dlpack(d)
    assert u.is_cuda and u.device == "cuda:0" and u.data_ptr() == d.data_ptr() and u.dtype is th.float64
    u += 1.0
    np.testing.assert_array_equal(d.cpu().numpy(), a + 1)
    cap = d.t().__dlpack__(max_version=(1, 1))
    w = th.from_dlpack(cap)
    assert th._lib.PyCapsule_GetName(cap) == b"used_dltensor_versioned"
    assert w.strides == (1, 3) and w.data_ptr() == d.data_ptr()
    np.testing.assert_array_equal(w.cpu().numpy(), (a + 1).T)
    # The memory outlives the producer object: the import holds the storage.
    gc.collect()
    before = th.cuda.memory_allocated()
    d.close()
    u.close()
    gc.collect()
    assert th.cuda.memory_allocated() == before
    np.testing.assert_array_equal(w.cpu().numpy(), (a + 1).T)
    w.close()
    gc.collect()
    assert th.cuda.memory_allocated() < before


@needs_cuda
def test_families_refuse_each_others_capsules():
    lib = th._lib
    d = th.tensor([1.0, 2.0], device="cuda")
    cap = d.__dlpack__(max_version=(1, 1))
    ptr = lib.PyCapsule_GetPointer(cap, b"dltensor_versioned")
    with pytest.raises(th.THError, match="kDLCUDA"):
        lib.call("THFloatTensor_fromDLPack", C.c_void_p, [C.c_void_p], ptr)
    h = th.tensor([1.0, 2.0])
    hcap = h.__dlpack__(max_version=(1, 1))
    hptr = lib.PyCapsule_GetPointer(hcap, b"dltensor_versioned")
    with pytest.raises(th.THError, match="kDLCPU"):
        lib.call("THCudaTensor_fromDLPack", C.c_void_p, [C.c_void_p, C.c_void_p], None, hptr)
    # Both capsules are still unconsumed: their destructors run the deleters.
    assert lib.PyCapsule_GetName(cap) == b"dltensor_versioned" == lib.PyCapsule_GetName(hcap)


@needs_cuda
def test_allocator_statistics():
    th.cuda.synchronize()
    gc.collect()
    base = th.cuda.memory_allocated()
    t = th.zeros(1024, 256, device="cuda")  # 1 MiB
    assert th.cuda.memory_allocated() >= base + (1 << 20)
    assert th.cuda.memory_reserved() >= th.cuda.memory_allocated()
    assert th.cuda.max_memory_allocated() >= th.cuda.memory_allocated()
    t.close()
    assert th.cuda.memory_allocated() == base
    th.cuda.empty_cache()


# ---- torch (only where torch has CUDA) ----


def _torch_cuda():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device")
    if not HAVE_CUDA:
        pytest.skip("th has no CUDA device")
    return torch


def test_torch_reads_a_th_device_tensor():
    torch = _torch_cuda()
    a = rand((3, 4), "float32")
    d = th.tensor(a, device="cuda")
    t = torch.from_dlpack(d)
    assert t.is_cuda and t.data_ptr() == d.data_ptr()
    np.testing.assert_array_equal(t.cpu().numpy(), a)
    back = th.from_dlpack(t * 2)
    assert back.is_cuda
    np.testing.assert_array_equal(back.cpu().numpy(), a * 2)


def test_torch_consumes_on_its_own_stream():
    """torch.from_dlpack passes its current stream to th's __dlpack__: th's queued work (a fill
    on th's stream) is ordered before torch's reads on a side stream; explicit `stream=` capsules
    from th are taken by torch too."""
    torch = _torch_cuda()
    d = th.zeros(1 << 20, device="cuda")
    d += 3.0  # queued on th's current stream
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        t = torch.from_dlpack(d)  # __dlpack__(stream=side.cuda_stream)
        total = t.sum()
    side.synchronize()
    assert t.data_ptr() == d.data_ptr() and total.item() == 3.0 * (1 << 20)
    for s in (None, -1, 1, 2, side.cuda_stream):
        cap = d.__dlpack__(max_version=(1, 1), stream=s)
        u = torch.from_dlpack(cap)
        assert u.data_ptr() == d.data_ptr() and u.shape == (1 << 20,)
    torch.cuda.synchronize()


def test_th_shares_torch_memory():
    torch = _torch_cuda()
    for dt in (torch.float32, torch.float64, torch.float16, torch.int64, torch.uint8, torch.bool):
        t = (torch.arange(24, device="cuda") % 5).to(dt).reshape(4, 6)
        v = t[1:, ::2]  # a strided view
        h = th.from_dlpack(v)
        assert h.is_cuda and h.data_ptr() == v.data_ptr() and h.shape == (3, 3) and h.strides == (6, 2)
        np.testing.assert_array_equal(h.cpu().numpy(), v.cpu().numpy())
    # Writes through th are seen by torch (one memory), ordered by a synchronize.
    t = torch.zeros(8, device="cuda")
    h = th.from_dlpack(t)
    h += 2.0
    th.cuda.synchronize()
    assert t.tolist() == [2.0] * 8


@needs_cuda
def test_new_ops_route_to_thc():
    """Products, comparisons, masks, integer indices, where, clamp, sort/topk, cat, random and
    pickling on device tensors (THC's functions of the same names) against numpy."""
    import pickle

    a, b = rand((3, 4), "float32"), rand((4, 5), "float32")
    x, y = th.tensor(a, device="cuda"), th.tensor(b, device="cuda")
    for r, want in [
        (x @ y, a @ b), (th.stack([x, x]) @ th.stack([y, y]), np.stack([a, a]) @ np.stack([b, b])),
        (x[x > 0.5], a[a > 0.5]), (x[[2, 0]], a[[2, 0]]), (th.where(x > 0.5, x, 0), np.where(a > 0.5, a, 0)),
        (x.clamp(-0.5, 0.5), np.clip(a, -0.5, 0.5)), (x.sort()[0], np.sort(a)), (x.topk(2)[0], -np.sort(-a)[:, :2]),
        (th.cat([x, x], 1), np.concatenate([a, a], 1)), (x.cumsum(1), a.cumsum(1)),
    ]:
        assert r.is_cuda
        np.testing.assert_allclose(r.cpu().numpy(), want, rtol=1e-5, atol=1e-6)
    m = (x > 0) & (x < 1)
    assert m.is_cuda and m.dtype is th.bool_
    np.testing.assert_array_equal(m.cpu().numpy(), (a > 0) & (a < 1))
    z = x.clone()
    z[z < 0] = 0
    np.testing.assert_array_equal(z.cpu().numpy(), np.where(a < 0, 0, a))
    assert x[0].dot(x[0]) == pytest.approx(float(a[0].astype(np.float64) @ a[0]), rel=1e-5)
    u = th.rand(1000, device="cuda")
    assert u.is_cuda and 0 <= u.min() and u.max() < 1
    p = pickle.loads(pickle.dumps(x))
    assert p.is_cuda and np.array_equal(p.cpu().numpy(), a)
    assert "device='cuda:0'" in repr(x)
