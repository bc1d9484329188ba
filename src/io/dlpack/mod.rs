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

mod capsule;
mod export;
mod import;

pub use capsule::{call_unversioned_deleter, call_versioned_deleter, capsule_destructor, set_capsule_api};
pub use export::{to_dlpack, to_dlpack_unversioned};
use import::{IMPORT_UNVERSIONED, IMPORT_VERSIONED};
pub use import::{from_dlpack, from_dlpack_unversioned};

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
