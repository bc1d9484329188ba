//! THNN (torch7 nn's `lib/THNN`): `THNN_<Real><Module>_<fn>` for Float and Double, and THCUNN
//! (cunn's `lib/THCUNN`) for Cuda, CudaDouble and CudaHalf on device tensors, one file per
//! family as in `nn/`. Both families call the same `nn::` functions: the engine runs a call
//! where its tensors live. The wrappers only turn handles into views and objects; `nn::` checks and
//! computes. Argument positions in errors count the state as argument 1, as torch7's do.
//!
//! `THNNState *` is accepted and ignored (NULL is fine). Optional tensors (`bias`, `weights`,
//! ...) may be NULL where torch7 allows it.

pub mod activation;
pub mod conv;
pub mod conv_misc;
pub mod criterion;
pub mod linear;
pub mod norm;
pub mod pool;
pub mod rnn;
pub mod sample;
pub mod sparse;

use super::thc::{THCudaDoubleTensor, THCudaHalfTensor, THCudaTensor};
use super::*;

/// torch7's `THNNState` (there `typedef void`): an opaque type that th never reads; pass NULL.
pub struct THNNState {
    _private: [u8; 0],
}

/// Runs `$api!(Real, type)` for THNN's element types (torch7 generates THNN for these two).
macro_rules! nn_reals {
    ($api:ident) => {
        $api!(Float, f32);
        $api!(Double, f64);
    };
}
pub(crate) use nn_reals;

/// Runs `$api!(@thnn Real, type, state, accreal, index tensor)` for THNN's element types and
/// `$api!(@thcunn Real, type, state, accreal, index tensor)` for THCUNN's (cunn generates
/// `Cuda`, `CudaDouble` and `CudaHalf`; its accreal is float but for CudaDouble, its indices
/// `THCudaLongTensor`s). A family's macro defines the modules both have once, for all five.
macro_rules! nn_families {
    ($api:ident) => {
        $api!(@thnn Float, f32, THNNState, f64, THLongTensor);
        $api!(@thnn Double, f64, THNNState, f64, THLongTensor);
        $api!(@thcunn Cuda, f32, $crate::ffi::thc::THCState, f32, $crate::ffi::thc::THCudaLongTensor);
        $api!(@thcunn CudaDouble, f64, $crate::ffi::thc::THCState, f64, $crate::ffi::thc::THCudaLongTensor);
        $api!(@thcunn CudaHalf, half::f16, $crate::ffi::thc::THCState, f32, $crate::ffi::thc::THCudaLongTensor);
    };
}
pub(crate) use nn_families;

/// `th_fn!` for THNN functions, whose first parameter is the state (argument 1, unused).
macro_rules! nn_fn {
    ($($(#[$m:meta])* fn $name:ident($s:ident: $st:ty, $($args:tt)*) $body:block)+) => {
        $crate::ffi::th_fn! { $( $(#[$m])* fn $name($s: $st, $($args)*) { let _ = $s; $body } )+ }
    };
}
pub(crate) use nn_fn;

/// The view of an optional tensor argument (NULL: `None`).
///
/// # Safety
/// `p` must be NULL or a live handle.
pub(crate) unsafe fn opt_view<H: Handle<Obj = Tensor<T>>, T: Scalar>(p: *const H, arg: u32) -> Result<Option<View<T>>> {
    // SAFETY: forwarded contract.
    if p.is_null() { Ok(None) } else { Ok(Some(unsafe { view(p, arg)? })) }
}

/// The object behind an optional handle (NULL: `None`).
///
/// # Safety
/// `p` must be NULL or a live handle.
pub(crate) unsafe fn opt_obj<'a, H: Handle>(p: *const H, arg: u32) -> Result<Option<&'a Shared<H::Obj>>> {
    // SAFETY: forwarded contract.
    if p.is_null() { Ok(None) } else { Ok(Some(unsafe { obj(p, arg)? })) }
}
