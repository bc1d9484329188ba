//! Import: a producer's managed tensor becomes a non-resizable storage whose `free` runs its
//! deleter.

use super::*;

unsafe extern "C" fn import_malloc(_ctx: *mut c_void, _size: isize) -> *mut c_void {
    fail(Error::invalid("a storage imported from DLPack cannot allocate"));
    ptr::null_mut()
}

unsafe extern "C" fn import_realloc(_ctx: *mut c_void, _p: *mut c_void, _size: isize) -> *mut c_void {
    fail(Error::invalid("a storage imported from DLPack cannot be resized"));
    ptr::null_mut()
}

unsafe extern "C" fn import_free<M: Managed>(ctx: *mut c_void, _p: *mut c_void) {
    let m = ctx as *mut M;
    if !m.is_null() {
        // SAFETY: the context is the managed tensor handed to `from_dlpack*`, which this storage
        // owns; its storage is being freed, so this is the one deleter call.
        unsafe { call_deleter(m) }
    }
}

pub(super) static IMPORT_VERSIONED: THAllocator = THAllocator {
    malloc: Some(import_malloc),
    realloc: Some(import_realloc),
    free: Some(import_free::<DLManagedTensorVersioned>),
};
pub(super) static IMPORT_UNVERSIONED: THAllocator = THAllocator {
    malloc: Some(import_malloc),
    realloc: Some(import_realloc),
    free: Some(import_free::<DLManagedTensor>),
};

/// Where an imported DLTensor's storage lives for `side`, or why `side` cannot take it. The
/// host takes host-addressable memory (pageable, pinned, managed); THC takes memory of an
/// existing CUDA device, and managed memory (`cudaMallocManaged` addresses are valid device
/// addresses; DLPack gives them device id 0, so they go to the current device).
fn storage_device(d: DLDevice, side: Side) -> Result<Device> {
    let (t, id) = (d.device_type, d.device_id);
    match side {
        Side::Host if matches!(t, KDL_CPU | KDL_CUDA_HOST | KDL_ROCM_HOST | KDL_CUDA_MANAGED) => Ok(Device::Cpu),
        Side::Host if t == KDL_CUDA => Err(Error::invalid(format!(
            "DLPack tensor is in CUDA device memory (kDLCUDA, device {id}); TH tensors read host memory only: \
             import it with THCuda*Tensor_fromDLPack (or copy it to the host first)"
        ))),
        Side::Host => Err(Error::invalid(format!(
            "DLPack tensor is on device {} (id {id}); th only reads host memory (kDLCPU, or pinned/managed memory)",
            device_name(t)
        ))),
        Side::Cuda if t == KDL_CUDA => {
            let dev = crate::cuda::runtime::device(id).map_err(|e| {
                Error::new(e.code, format!("DLPack tensor is on CUDA device {id}, which th cannot use: {}", e.msg))
            })?;
            Ok(Device::Cuda(dev.ordinal))
        }
        Side::Cuda if t == KDL_CUDA_MANAGED => {
            Ok(Device::Cuda(crate::cuda::runtime::device(crate::cuda::runtime::current())?.ordinal))
        }
        Side::Cuda => Err(Error::invalid(format!(
            "DLPack tensor is on device {} (id {id}); THC tensors take CUDA device memory (kDLCUDA, or \
             kDLCUDAManaged): import host memory with TH*Tensor_fromDLPack and copy it to the device",
            device_name(t)
        ))),
    }
}

/// Checks a DLTensor against `T` and `side` and returns the tensor's placement: (storage device,
/// first element, storage length in elements, sizes, strides). Reads the DLTensor only.
///
/// # Safety
/// `dl.shape`/`dl.strides` must be NULL or point to `dl.ndim` values.
unsafe fn check_dltensor<T: Scalar>(dl: &DLTensor, side: Side) -> Result<Placed<T>> {
    let device = storage_device(dl.device, side)?;
    let want = dl_dtype(T::DTYPE);
    if dl.dtype != want {
        return Err(Error::dtype(format!(
            "DLPack dtype {} (code {}, bits {}, lanes {}) does not match TH{}Tensor ({})",
            dl_dtype_name(dl.dtype),
            dl.dtype.code,
            dl.dtype.bits,
            dl.dtype.lanes,
            T::DTYPE,
            dl_dtype_name(want)
        )));
    }
    if !(0..=MAX_DIMS).contains(&dl.ndim) {
        return Err(Error::size(format!("DLPack ndim {} is out of range 0..={MAX_DIMS}", dl.ndim)));
    }
    let nd = dl.ndim as usize;
    if nd > 0 && dl.shape.is_null() {
        return Err(Error::invalid(format!("DLPack tensor has ndim {nd} but a NULL shape")));
    }
    let shape: Vec<i64> = if nd == 0 {
        Vec::new()
    } else {
        // SAFETY: caller contract: shape points to ndim values when ndim > 0 (checked non-NULL).
        unsafe { std::slice::from_raw_parts(dl.shape, nd) }.to_vec()
    };
    if let Some((d, &s)) = shape.iter().enumerate().find(|&(_, &s)| s < 0) {
        return Err(Error::size(format!("DLPack shape has negative size {s} in dimension {d}")));
    }
    let strides: Vec<i64> = if nd == 0 || dl.strides.is_null() {
        crate::core::tensor::fill_strides(&shape, None)?
    } else {
        // SAFETY: caller contract: strides points to ndim values when non-NULL.
        unsafe { std::slice::from_raw_parts(dl.strides, nd) }.to_vec()
    };
    let esize = std::mem::size_of::<T>() as u64;
    if !dl.byte_offset.is_multiple_of(esize) {
        return Err(Error::invalid(format!(
            "DLPack byte_offset {} is not a multiple of the element size {esize}",
            dl.byte_offset
        )));
    }
    let n = crate::core::tensor::numel(&shape)?;
    if nd > 0 && n == 0 {
        return Ok((device, ptr::null_mut(), 0, Vec::new(), Vec::new()));
    }
    // TH has no 0-d tensors: a DLPack scalar becomes a 1-d tensor of one element.
    let (sizes, strides) = if nd == 0 { (vec![1i64], vec![1i64]) } else { (shape, strides) };
    let mut extent: i64 = 1;
    for (d, (&s, &st)) in sizes.iter().zip(&strides).enumerate() {
        if st < 0 && s > 1 {
            return Err(Error::invalid(format!(
                "DLPack stride {st} in dimension {d} is negative; th strides are >= 0 (make a copy first)"
            )));
        }
        extent = (s - 1)
            .checked_mul(st.max(0))
            .and_then(|x| extent.checked_add(x))
            .ok_or_else(|| Error::size("DLPack shape and strides overflow int64_t"))?;
    }
    let strides: Vec<i64> = strides.iter().zip(&sizes).map(|(&st, &s)| if s == 1 { st.max(0) } else { st }).collect();
    let len = usize::try_from(extent).map_err(|_| Error::size("DLPack tensor too large"))?;
    len.checked_mul(esize as usize)
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or_else(|| Error::size(format!("DLPack tensor spans {len} elements, more than the address space")))?;
    if dl.data.is_null() {
        return Err(Error::invalid(format!("DLPack tensor of size {sizes:?} has a NULL data pointer")));
    }
    let off = usize::try_from(dl.byte_offset).map_err(|_| Error::size("DLPack byte_offset overflows"))?;
    let first = (dl.data as *mut u8).wrapping_add(off) as *mut T;
    if !(first as usize).is_multiple_of(std::mem::align_of::<T>()) {
        return Err(Error::invalid(format!("DLPack data {first:p} is not aligned for {}", T::DTYPE)));
    }
    Ok((device, first, len, sizes, strides))
}

/// What `check_dltensor` finds: storage device, first element, length, sizes, strides.
type Placed<T> = (Device, *mut T, usize, Vec<i64>, Vec<i64>);

/// A tensor over the memory of the managed tensor `m`, zero-copy: its storage's allocator
/// (`M::IMPORT`) runs the deleter when the last tensor on it goes.
///
/// # Safety
/// `m` must be a live managed tensor whose memory stays valid until its deleter runs.
unsafe fn import<M: Managed, T: Scalar>(m: *mut M, side: Side) -> Result<Rc<Tensor<T>>> {
    // SAFETY: caller contract: a valid DLTensor.
    let (device, first, len, sizes, strides) = unsafe { check_dltensor::<T>((*m).dl_tensor(), side)? };
    let alloc = match device {
        // SAFETY: a static vtable, context is the managed tensor.
        Device::Cpu => unsafe { Allocator::from_c(M::IMPORT, m as *mut c_void)? },
        // The same vtable (its free runs the deleter), reporting the device so THC accepts it.
        Device::Cuda(_) => Allocator::for_device(M::IMPORT, m as *mut c_void, device),
    };
    // SAFETY: caller contract; from_raw only records the pointer.
    let st = unsafe { Storage::from_raw(first, len, alloc)? };
    st.set_flags(0, TH_STORAGE_RESIZABLE);
    Ok(Tensor::new(View { storage: Some(st), offset: 0, sizes, strides }))
}

/// Takes over a versioned managed tensor: zero-copy, the deleter runs once when the last
/// tensor on the memory goes. On error nothing is taken: the caller still owns `m`.
///
/// # Safety
/// `m` must be a live managed tensor that is not used elsewhere after success.
pub unsafe fn from_dlpack<T: Scalar>(m: *mut DLManagedTensorVersioned, side: Side) -> Result<Rc<Tensor<T>>> {
    if m.is_null() {
        return Err(Error::null(1, "DLManagedTensorVersioned"));
    }
    // SAFETY: caller contract (the version and flags are at the stable head of the struct).
    let mt = unsafe { &*m };
    if mt.version.major != DLPACK_VERSION.major {
        return Err(Error::invalid(format!(
            "DLPack version {}.{} is not supported (this library understands {}.x)",
            mt.version.major, mt.version.minor, DLPACK_VERSION.major
        )));
    }
    if mt.flags & FLAG_READ_ONLY != 0 {
        return Err(Error::invalid(
            "DLPack tensor is read-only (DLPACK_FLAG_BITMASK_READ_ONLY) and th tensors are always writable; \
             export a writable tensor or a copy",
        ));
    }
    // SAFETY: caller contract.
    unsafe { import(m, side) }
}

/// `from_dlpack` for a legacy managed tensor (which cannot say it is read-only).
///
/// # Safety
/// As for `from_dlpack`.
pub unsafe fn from_dlpack_unversioned<T: Scalar>(m: *mut DLManagedTensor, side: Side) -> Result<Rc<Tensor<T>>> {
    if m.is_null() {
        return Err(Error::null(1, "DLManagedTensor"));
    }
    // SAFETY: caller contract.
    unsafe { import(m, side) }
}
