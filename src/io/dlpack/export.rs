//! Export: a managed tensor viewing a tensor's geometry, holding a storage reference.

use super::*;

/// Everything an exported managed tensor owns, in the one block its deleter frees. The managed
/// struct comes first, so a pointer to it is a pointer to the block.
#[repr(C)]
struct Export<M, T: Scalar> {
    managed: M,
    _storage: Option<Rc<Storage<T>>>,
    shape: Vec<i64>,
    strides: Vec<i64>,
}

/// The DLPack device and first-element address of `v`, exported for `side`.
fn placement<T: Scalar>(v: &View<T>, side: Side) -> Result<(DLDevice, *mut c_void)> {
    let device = match (side, v.device()) {
        (Side::Host, Device::Cpu) => DLDevice { device_type: KDL_CPU, device_id: 0 },
        (Side::Cuda, Device::Cuda(i)) => DLDevice { device_type: KDL_CUDA, device_id: i },
        // A THC tensor without storage (or elements) is on the current device.
        (Side::Cuda, Device::Cpu) if v.storage.is_none() => {
            DLDevice { device_type: KDL_CUDA, device_id: crate::cuda::runtime::current() }
        }
        (Side::Host, Device::Cuda(i)) => {
            return Err(Error::invalid(format!(
                "the tensor is on CUDA device {i}: export it with THCuda{}Tensor_toDLPack",
                thc_real(T::DTYPE)
            )));
        }
        (Side::Cuda, Device::Cpu) => {
            return Err(Error::invalid(format!(
                "the tensor is in host memory, not on a CUDA device: export it with TH{}Tensor_toDLPack",
                T::DTYPE
            )));
        }
    };
    if v.numel() == 0 {
        return Ok((device, ptr::null_mut()));
    }
    let data = match side {
        Side::Host => {
            v.host_ptr()?;
            v.data_ptr()? as *mut c_void
        }
        // A device address: computed, never dereferenced.
        Side::Cuda => v.storage_ptr()?.map_or(ptr::null_mut(), |p| p.wrapping_add(v.offset) as *mut c_void),
    };
    Ok((device, data))
}

/// THC's spelling of a dtype in names (`THCudaTensor` is Float's).
fn thc_real(d: DType) -> String {
    if d == DType::Float { String::new() } else { d.to_string() }
}

/// The DLTensor describing `v` (pointers into `shape`/`strides`, which the caller keeps alive).
fn describe<T: Scalar>(v: &View<T>, side: Side) -> Result<(DLTensor, Vec<i64>, Vec<i64>)> {
    let (shape, strides) = if v.sizes.is_empty() {
        // TH's empty tensor (no dims, 0 elements) is a 1-d tensor of length 0 in DLPack
        // (0 dims would mean a scalar with one element).
        (vec![0i64], vec![1i64])
    } else {
        (v.sizes.clone(), v.strides.clone())
    };
    let (device, data) = placement(v, side)?;
    let dl = DLTensor {
        data,
        device,
        ndim: shape.len() as i32,
        dtype: dl_dtype(T::DTYPE),
        shape: ptr::null_mut(),
        strides: ptr::null_mut(),
        byte_offset: 0,
    };
    Ok((dl, shape, strides))
}

/// The deleter of an exported `M`: frees its block.
unsafe extern "C" fn delete<M: Managed, T: Scalar>(m: *mut M) {
    if !m.is_null() {
        // SAFETY: `m` is the first field of an Export block made by `export`; the DLPack
        // contract is that the deleter is called once.
        drop(unsafe { Box::from_raw(m as *mut Export<M, T>) });
    }
}

/// A managed tensor (made by `managed` from the DLTensor) viewing `t`'s current geometry; it
/// holds a reference on the storage until its deleter runs. The caller owns the result.
fn export<M: Managed, T: Scalar>(t: &Tensor<T>, side: Side, managed: impl FnOnce(DLTensor) -> M) -> Result<*mut M> {
    let v = t.view();
    let (dl, shape, strides) = describe(&v, side)?;
    let b = Box::into_raw(Box::new(Export { managed: managed(dl), _storage: v.storage, shape, strides }));
    // SAFETY: `b` is a fresh, uniquely owned block; the Vec buffers do not move with it.
    unsafe {
        let e = &mut *b;
        *e.managed.manager_ctx() = b as *mut c_void;
        e.managed.dl_tensor().shape = e.shape.as_mut_ptr();
        e.managed.dl_tensor().strides = e.strides.as_mut_ptr();
    }
    Ok(b as *mut M)
}

/// A versioned managed tensor viewing `t`'s current geometry (see `export`); `t` must be in the
/// memory of `side`.
pub fn to_dlpack<T: Scalar>(t: &Tensor<T>, side: Side) -> Result<*mut DLManagedTensorVersioned> {
    export(t, side, |dl_tensor| DLManagedTensorVersioned {
        version: DLPACK_VERSION,
        manager_ctx: ptr::null_mut(),
        deleter: Some(delete::<_, T>),
        flags: 0,
        dl_tensor,
    })
}

/// The legacy (unversioned) form of `to_dlpack`.
pub fn to_dlpack_unversioned<T: Scalar>(t: &Tensor<T>, side: Side) -> Result<*mut DLManagedTensor> {
    export(t, side, |dl_tensor| DLManagedTensor {
        dl_tensor,
        manager_ctx: ptr::null_mut(),
        deleter: Some(delete::<_, T>),
    })
}
