//! Device DLPack on the emulated device (`TH_CUDA_EMULATOR=1`, set before the first device
//! use): zero-copy round trips, the producer's deleter running once and its memory staying out
//! of the caching allocator, the host and device families refusing each other's tensors.

use super::*;
use crate::core::refcount::Rc;
use crate::core::tensor::{Tensor, View};
use crate::cuda::{copy, launch, storage};
use crate::io::dlpack::{self, DLDataType, DLDevice, DLManagedTensorVersioned, DLPACK_VERSION, DLTensor, Side};
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A device tensor of `sizes` (contiguous) holding `data`.
fn device_tensor(data: &[f32], sizes: &[i64]) -> Rc<Tensor<f32>> {
    let host = View::from_slice(data, sizes).unwrap();
    let st = storage::new::<f32>(0, data.len()).unwrap();
    let dev = View::on_storage(Some(st), 0, sizes, None).unwrap();
    copy::copy(&dev, &host).unwrap();
    Tensor::new(dev)
}

/// A device view's elements in row-major order, read back through a host copy.
fn to_host(v: &View<f32>) -> Vec<f32> {
    let host = View::<f32>::contiguous(&v.sizes).unwrap();
    copy::copy(&host, v).unwrap();
    host.to_vec().unwrap()
}

#[test]
fn device_round_trip_is_zero_copy() {
    crate::cuda::use_emulator_in_tests();
    let t = device_tensor(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let tt = Tensor::new(t.view().transpose(0, 1).unwrap().narrow(0, 1, 2).unwrap());
    let m = dlpack::to_dlpack(&tt, Side::Cuda).unwrap();
    // SAFETY: a fresh export.
    let dl = unsafe { &(*m).dl_tensor };
    assert_eq!((dl.device.device_type, dl.device.device_id), (2, 0));
    assert_eq!(dl.data as u64, launch::device_base(&tt.view()).unwrap());
    // SAFETY: shape/strides hold ndim values.
    let (shape, strides) =
        unsafe { (std::slice::from_raw_parts(dl.shape, 2), std::slice::from_raw_parts(dl.strides, 2)) };
    assert_eq!((shape, strides), (&[2i64, 2][..], &[1i64, 3][..]));
    // SAFETY: m is fresh from to_dlpack.
    let back = unsafe { dlpack::from_dlpack::<f32>(m, Side::Cuda) }.unwrap();
    let bv = back.view();
    assert_eq!(bv.device(), crate::core::allocator::Device::Cuda(0));
    assert_eq!(launch::device_base(&bv).unwrap(), launch::device_base(&tt.view()).unwrap(), "same device memory");
    assert_eq!(to_host(&bv), vec![2.0, 5.0, 3.0, 6.0]);
    // A write through the import is seen by the original (the same memory).
    let one = View::from_slice(&[40.0f32], &[1]).unwrap();
    copy::copy(&bv.select(0, 1).unwrap().narrow(0, 0, 1).unwrap(), &one).unwrap();
    assert_eq!(to_host(&t.view()), vec![1.0, 2.0, 40.0, 4.0, 5.0, 6.0]);
    // The legacy form too.
    let m = dlpack::to_dlpack_unversioned(&t, Side::Cuda).unwrap();
    // SAFETY: m is fresh.
    let back = unsafe { dlpack::from_dlpack_unversioned::<f32>(m, Side::Cuda) }.unwrap();
    assert_eq!(launch::device_base(&back.view()).unwrap(), launch::device_base(&t.view()).unwrap());
}

static DELETED: AtomicUsize = AtomicUsize::new(0);

/// The producer's block and the arrays a hand-made managed tensor points to.
struct Producer {
    shape: [i64; 1],
    strides: [i64; 1],
}

unsafe extern "C" fn count_delete(m: *mut DLManagedTensorVersioned) {
    DELETED.fetch_add(1, Ordering::SeqCst);
    // SAFETY: made by `producer_tensor` below; the deleter runs once.
    unsafe {
        drop(Box::from_raw((*m).manager_ctx as *mut Producer));
        drop(Box::from_raw(m));
    }
}

/// A managed tensor over `n` floats of device memory at `data`, as another library would make it.
fn producer_tensor(data: u64, n: i64) -> *mut DLManagedTensorVersioned {
    let p = Box::into_raw(Box::new(Producer { shape: [n], strides: [1] }));
    // SAFETY: p is fresh; its arrays live until the deleter frees it.
    let (shape, strides) = unsafe { ((*p).shape.as_mut_ptr(), (*p).strides.as_mut_ptr()) };
    Box::into_raw(Box::new(DLManagedTensorVersioned {
        version: DLPACK_VERSION,
        manager_ctx: p as *mut c_void,
        deleter: Some(count_delete),
        flags: 0,
        dl_tensor: DLTensor {
            data: data as *mut c_void,
            device: DLDevice { device_type: 2, device_id: 0 },
            ndim: 1,
            dtype: DLDataType { code: 2, bits: 32, lanes: 1 },
            shape,
            strides,
            byte_offset: 0,
        },
    }))
}

#[test]
fn imported_memory_stays_the_producers_and_its_deleter_runs_once() {
    crate::cuda::use_emulator_in_tests();
    let dev = runtime::device(0).unwrap();
    let block = storage::malloc(dev, 16).unwrap();
    let m = producer_tensor(block, 4);
    // SAFETY: a live managed tensor nobody else uses.
    let t = unsafe { dlpack::from_dlpack::<f32>(m, Side::Cuda) }.unwrap();
    let host = View::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
    copy::copy(&t.view(), &host).unwrap();
    let view = t.view();
    drop(t);
    assert_eq!(DELETED.load(Ordering::SeqCst), 0, "a view still holds the storage");
    assert_eq!(to_host(&view), vec![1.0, 2.0, 3.0, 4.0]);
    drop(view);
    assert_eq!(DELETED.load(Ordering::SeqCst), 1, "the deleter runs when the last reference goes");
    // The caching allocator never took the producer's block: it is still allocated, once.
    assert!(dev.cache.block_size(block).is_some());
    dev.cache.free(block).unwrap();
    assert_eq!(DELETED.load(Ordering::SeqCst), 1);
}

#[test]
fn host_and_device_refuse_each_others_tensors() {
    crate::cuda::use_emulator_in_tests();
    let d = device_tensor(&[1.0, 2.0], &[2]);
    let h = Tensor::new(View::from_slice(&[1.0f32, 2.0], &[2]).unwrap());
    let e = dlpack::to_dlpack(&d, Side::Host).unwrap_err().to_string();
    assert!(e.contains("CUDA device 0") && e.contains("THCudaTensor_toDLPack"), "{e}");
    let e = dlpack::to_dlpack(&h, Side::Cuda).unwrap_err().to_string();
    assert!(e.contains("host memory") && e.contains("THFloatTensor_toDLPack"), "{e}");

    let m = dlpack::to_dlpack(&d, Side::Cuda).unwrap();
    // SAFETY: a fresh export; on error it stays ours.
    let e = unsafe { dlpack::from_dlpack::<f32>(m, Side::Host) }.err().unwrap().to_string();
    assert!(e.contains("kDLCUDA") && e.contains("THCuda*Tensor_fromDLPack"), "{e}");
    // SAFETY: still ours after the refused import.
    unsafe { dlpack::call_versioned_deleter(m as *mut c_void) };

    let m = dlpack::to_dlpack(&h, Side::Host).unwrap();
    // SAFETY: as above.
    let e = unsafe { dlpack::from_dlpack::<f32>(m, Side::Cuda) }.err().unwrap().to_string();
    assert!(e.contains("kDLCPU") && e.contains("TH*Tensor_fromDLPack"), "{e}");
    // A device ordinal that does not exist.
    // SAFETY: m is still ours; the device field is plain data.
    unsafe { (*m).dl_tensor.device = DLDevice { device_type: 2, device_id: 3 } };
    // SAFETY: as above.
    let e = unsafe { dlpack::from_dlpack::<f32>(m, Side::Cuda) }.err().unwrap().to_string();
    assert!(e.contains("CUDA device 3") && e.contains("invalid device ordinal"), "{e}");
    // SAFETY: still ours.
    unsafe { dlpack::call_versioned_deleter(m as *mut c_void) };
    let st = h.view().storage.unwrap();
    assert_eq!(Rc::shared(&st).count(), 2, "the tensor and `st` only: the exports released theirs");
}

#[test]
fn sync_on_the_emulated_device() {
    crate::cuda::use_emulator_in_tests();
    sync(0, 1).unwrap();
    sync(0, -1).unwrap();
    assert!(sync(0, 0).unwrap_err().to_string().contains("ambiguous"));
    assert!(sync(5, 1).is_err());
}
