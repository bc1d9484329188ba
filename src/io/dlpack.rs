//! DLPack (v1.x) export and import: zero-copy exchange of tensors with numpy, PyTorch, JAX, ...
//!
//! The structs mirror `dlpack.h` field for field (`#[repr(C)]`, sizes 48/64/80 bytes on 64-bit
//! targets). Values that arrive from other libraries (device types, dtype codes) are plain
//! integers, never Rust enums, so an unknown value is an error instead of undefined behaviour.
//!
//! Export: the managed tensor owns a reference on the storage (through a snapshot of the view),
//! plus its own shape and strides arrays, all in one heap block that the deleter frees.
//! Import: the producer's memory becomes a non-resizable storage whose allocator's `free` calls
//! the producer's deleter, so it runs exactly once, when the last tensor on the storage goes.
//!
//! One mechanism serves TH (host memory) and THC (CUDA device memory): a `Side` says which, and
//! only the device checks and the device the imported storage reports differ. A device import
//! never goes through the caching allocator: the memory is the producer's until its deleter runs.

use crate::core::allocator::{Allocator, Device, THAllocator, fail};
use crate::core::dtype::{DType, Format, Scalar};
use crate::core::error::{Error, Result};
use crate::core::refcount::Rc;
use crate::core::storage::{Storage, TH_STORAGE_RESIZABLE};
use crate::core::tensor::{Tensor, View};
use std::ffi::c_void;
use std::ptr;

/// `DLPackVersion`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DLPackVersion {
    pub major: u32,
    pub minor: u32,
}

/// `DLDevice` (`device_type` is the C enum `DLDeviceType`, int-sized).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DLDevice {
    pub device_type: i32,
    pub device_id: i32,
}

/// `DLDataType`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DLDataType {
    pub code: u8,
    pub bits: u8,
    pub lanes: u16,
}

/// `DLTensor`.
#[repr(C)]
pub struct DLTensor {
    pub data: *mut c_void,
    pub device: DLDevice,
    pub ndim: i32,
    pub dtype: DLDataType,
    pub shape: *mut i64,
    pub strides: *mut i64,
    pub byte_offset: u64,
}

/// `DLManagedTensor` (legacy, unversioned).
#[repr(C)]
pub struct DLManagedTensor {
    pub dl_tensor: DLTensor,
    pub manager_ctx: *mut c_void,
    pub deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

/// `DLManagedTensorVersioned`.
#[repr(C)]
pub struct DLManagedTensorVersioned {
    pub version: DLPackVersion,
    pub manager_ctx: *mut c_void,
    pub deleter: Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>,
    pub flags: u64,
    pub dl_tensor: DLTensor,
}

/// The DLPack version this library produces and understands.
pub const DLPACK_VERSION: DLPackVersion = DLPackVersion { major: 1, minor: 1 };

pub(crate) const KDL_CPU: i32 = 1;
pub(crate) const KDL_CUDA: i32 = 2;
pub(crate) const KDL_CUDA_HOST: i32 = 3;
pub(crate) const KDL_ROCM_HOST: i32 = 11;
pub(crate) const KDL_CUDA_MANAGED: i32 = 13;

pub(crate) const KDL_INT: u8 = 0;
pub(crate) const KDL_UINT: u8 = 1;
pub(crate) const KDL_FLOAT: u8 = 2;
pub(crate) const KDL_BFLOAT: u8 = 4;
pub(crate) const KDL_BOOL: u8 = 6;

pub(crate) const FLAG_READ_ONLY: u64 = 1;

/// Which family a DLPack call serves: TH (host memory) or THC (CUDA device memory).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Host,
    Cuda,
}

/// Most dimensions an imported tensor may have (numpy's limit).
const MAX_DIMS: i32 = 64;

/// The DLPack dtype of a TH dtype.
pub fn dl_dtype(d: DType) -> DLDataType {
    let code = match d.format() {
        Format::UInt => KDL_UINT,
        Format::Int => KDL_INT,
        Format::Float => KDL_FLOAT,
        Format::BFloat => KDL_BFLOAT,
        Format::Bool => KDL_BOOL,
    };
    let bits = (8 * d.size()) as u8;
    DLDataType { code, bits, lanes: 1 }
}

/// `"float32"`-style name of a DLPack dtype (for messages).
pub fn dl_dtype_name(t: DLDataType) -> String {
    let base = match t.code {
        KDL_INT => "int",
        KDL_UINT => "uint",
        KDL_FLOAT => "float",
        KDL_BFLOAT => "bfloat",
        3 => "opaque",
        5 => "complex",
        KDL_BOOL => "bool",
        c => return format!("code {c} (bits {}, lanes {})", t.bits, t.lanes),
    };
    if t.lanes == 1 { format!("{base}{}", t.bits) } else { format!("{base}{}x{}", t.bits, t.lanes) }
}

pub(crate) fn device_name(t: i32) -> String {
    let n = match t {
        1 => "kDLCPU",
        2 => "kDLCUDA",
        3 => "kDLCUDAHost",
        4 => "kDLOpenCL",
        7 => "kDLVulkan",
        8 => "kDLMetal",
        9 => "kDLVPI",
        10 => "kDLROCM",
        11 => "kDLROCMHost",
        12 => "kDLExtDev",
        13 => "kDLCUDAManaged",
        14 => "kDLOneAPI",
        15 => "kDLWebGPU",
        16 => "kDLHexagon",
        17 => "kDLMAIA",
        18 => "kDLTrn",
        _ => return format!("unknown device type {t}"),
    };
    format!("{n} ({t})")
}

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

/// What export and import need of the two managed-tensor structs.
trait Managed: Sized + 'static {
    /// The allocator of imported storages: its `free` runs the producer's deleter.
    const IMPORT: &'static THAllocator;
    fn dl_tensor(&mut self) -> &mut DLTensor;
    fn manager_ctx(&mut self) -> &mut *mut c_void;
    fn deleter(&self) -> Option<unsafe extern "C" fn(*mut Self)>;
}

macro_rules! managed {
    ($($M:ty => $import:ident),*) => {$(
        impl Managed for $M {
            const IMPORT: &'static THAllocator = &$import;
            fn dl_tensor(&mut self) -> &mut DLTensor {
                &mut self.dl_tensor
            }
            fn manager_ctx(&mut self) -> &mut *mut c_void {
                &mut self.manager_ctx
            }
            fn deleter(&self) -> Option<unsafe extern "C" fn(*mut Self)> {
                self.deleter
            }
        }
    )*};
}
managed!(DLManagedTensorVersioned => IMPORT_VERSIONED, DLManagedTensor => IMPORT_UNVERSIONED);

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

// ---- import ----

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

static IMPORT_VERSIONED: THAllocator = THAllocator {
    malloc: Some(import_malloc),
    realloc: Some(import_realloc),
    free: Some(import_free::<DLManagedTensorVersioned>),
};
static IMPORT_UNVERSIONED: THAllocator = THAllocator {
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

// ---- Python capsule destructors ----

type IsValidFn = unsafe extern "C" fn(*mut c_void, *const std::ffi::c_char) -> std::ffi::c_int;
type GetPointerFn = unsafe extern "C" fn(*mut c_void, *const std::ffi::c_char) -> *mut c_void;

static CAPSULE_API: std::sync::RwLock<Option<(IsValidFn, GetPointerFn)>> = std::sync::RwLock::new(None);

/// Records CPython's `PyCapsule_IsValid` and `PyCapsule_GetPointer` (NULL falls back to looking
/// them up in the process).
///
/// # Safety
/// Non-NULL arguments must be those two functions.
pub unsafe fn set_capsule_api(is_valid: *mut c_void, get_pointer: *mut c_void) {
    let api = if is_valid.is_null() || get_pointer.is_null() {
        None
    } else {
        // SAFETY: caller contract: the addresses of the two CPython functions.
        Some(unsafe {
            (
                std::mem::transmute::<*mut c_void, IsValidFn>(is_valid),
                std::mem::transmute::<*mut c_void, GetPointerFn>(get_pointer),
            )
        })
    };
    *CAPSULE_API.write().unwrap_or_else(|e| e.into_inner()) = api;
}

fn capsule_api() -> Option<(IsValidFn, GetPointerFn)> {
    if let Some(a) = *CAPSULE_API.read().unwrap_or_else(|e| e.into_inner()) {
        return Some(a);
    }
    // SAFETY: dlsym on the global namespace with NUL-terminated names.
    let (v, g) = unsafe {
        (
            libc::dlsym(libc::RTLD_DEFAULT, c"PyCapsule_IsValid".as_ptr()),
            libc::dlsym(libc::RTLD_DEFAULT, c"PyCapsule_GetPointer".as_ptr()),
        )
    };
    if v.is_null() || g.is_null() {
        return None;
    }
    // SAFETY: the process's own CPython functions.
    unsafe { set_capsule_api(v, g) };
    *CAPSULE_API.read().unwrap_or_else(|e| e.into_inner())
}

/// The body of a capsule destructor: if the capsule still has its unconsumed `name`, the managed
/// tensor inside was never taken, so its deleter runs. Never touches Python's error state.
///
/// # Safety
/// `capsule` must be a live PyCapsule; `call` must be the deleter call for that capsule's kind.
pub unsafe fn capsule_destructor(capsule: *mut c_void, name: &std::ffi::CStr, call: unsafe fn(*mut c_void)) {
    let Some((is_valid, get_pointer)) = capsule_api() else { return };
    // SAFETY: CPython functions on a live capsule; both are documented not to raise when the
    // name matches (IsValid never raises).
    unsafe {
        if is_valid(capsule, name.as_ptr()) != 0 {
            let p = get_pointer(capsule, name.as_ptr());
            if !p.is_null() {
                call(p);
            }
        }
    }
}

/// Calls the deleter of the live managed tensor `m`.
///
/// # Safety
/// `m` must be a live managed tensor owned by the caller.
unsafe fn call_deleter<M: Managed>(m: *mut M) {
    // SAFETY: caller contract.
    unsafe {
        if let Some(d) = (*m).deleter() {
            d(m)
        }
    }
}

/// Calls a versioned managed tensor's deleter.
///
/// # Safety
/// `p` must be a live `DLManagedTensorVersioned` owned by the caller.
pub unsafe fn call_versioned_deleter(p: *mut c_void) {
    // SAFETY: caller contract.
    unsafe { call_deleter(p as *mut DLManagedTensorVersioned) }
}

/// Calls a legacy managed tensor's deleter.
///
/// # Safety
/// `p` must be a live `DLManagedTensor` owned by the caller.
pub unsafe fn call_unversioned_deleter(p: *mut c_void) {
    // SAFETY: caller contract.
    unsafe { call_deleter(p as *mut DLManagedTensor) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_dlpack_h() {
        use std::mem::{offset_of, size_of};
        assert_eq!(size_of::<DLTensor>(), 48);
        assert_eq!(size_of::<DLManagedTensor>(), 64);
        assert_eq!(size_of::<DLManagedTensorVersioned>(), 80);
        assert_eq!(offset_of!(DLTensor, dtype), 20);
        assert_eq!(offset_of!(DLTensor, byte_offset), 40);
        assert_eq!(offset_of!(DLManagedTensorVersioned, flags), 24);
        assert_eq!(offset_of!(DLManagedTensorVersioned, dl_tensor), 32);
    }

    #[test]
    fn round_trip_shares_memory() {
        let t = Tensor::new(View::<f32>::from_slice(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap());
        let tt = Tensor::new(t.view().transpose(0, 1).unwrap());
        let m = to_dlpack(&tt, Side::Host).unwrap();
        // SAFETY: m is fresh from to_dlpack.
        let back = unsafe { from_dlpack::<f32>(m, Side::Host) }.unwrap();
        assert_eq!(back.view().sizes, vec![3, 2]);
        assert_eq!(back.view().strides, vec![1, 3]);
        assert_eq!(back.view().to_vec().unwrap(), vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
        back.view().set(&[0, 1], 40.0).unwrap();
        assert_eq!(t.view().get(&[1, 0]).unwrap(), 40.0);
        let m2 = to_dlpack(&t, Side::Host).unwrap();
        // SAFETY: a fresh export that nobody took.
        assert!(unsafe { from_dlpack::<f64>(m2, Side::Host) }.is_err());
        // SAFETY: still ours after the failed import.
        unsafe { call_versioned_deleter(m2 as *mut c_void) };
    }
}
