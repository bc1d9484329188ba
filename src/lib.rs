//! th: a tensor engine with Torch TH's C ABI.
//!
//! The modules are the layers, each using only those above it in this list (see README,
//! "Layout"):
//! - `core`: the dtype list, errors, refcounts, allocators, storages and strided views;
//! - `exec`: how work is walked: the iteration plans (dim merging, broadcasting, tiling, the
//!   reduction split), the overlap rules and the thread pool; shapes and strides only, no
//!   element types, so a device backend can reuse them;
//! - `kernels`: the instruction-set dispatch and the typed inner loops it selects;
//! - `ops`, `linalg`: TH's math by family, generic over the element type;
//! - `nn`: THNN, torch7 nn's layers (forward, backward, parameter gradients) by family, on
//!   `ops` and `linalg`;
//! - `io`: files, `.npy`, DLPack, memory mappings;
//! - `ffi`: the C ABI, made only of macro-generated wrappers over the above.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod core;
pub mod cuda;
pub mod exec;
pub mod ffi;
pub mod io;
pub mod kernels;
pub mod linalg;
pub mod nn;
pub mod ops;

pub use crate::core::dtype::{DType, Scalar};
pub use crate::core::error::{Error, Result};
pub use crate::core::storage::Storage;
pub use crate::core::tensor::{Tensor, View};
