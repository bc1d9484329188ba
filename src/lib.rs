//! th: a tensor engine with Torch TH's C ABI.
//!
//! Layers (see README): `dtype` (the one dtype list), `error`, `refcount`, `allocator` +
//! `mapping`, `storage`, `tensor` + `iter` form a safe generic core usable from Rust; `ffi` is
//! the C ABI, made only of macro-generated wrappers over that core.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod allocator;
pub mod apply;
pub mod conv;
pub mod dlpack;
pub mod dtype;
pub mod error;
pub mod ffi;
pub mod file;
pub mod iter;
pub mod limits;
pub mod linalg;
pub mod mapping;
pub mod npy;
pub mod ops;
pub mod parallel;
pub mod refcount;
pub(crate) mod simd;
pub mod storage;
pub mod tensor;

pub use dtype::{DType, Scalar};
pub use error::{Error, Result};
pub use storage::Storage;
pub use tensor::{Tensor, View};
