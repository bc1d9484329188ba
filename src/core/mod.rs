//! The safe generic core: the dtype list, errors, intrusive refcounts, allocators, storages and
//! strided views (`Tensor`, `View`), and the checked size arithmetic every layer uses.

pub mod allocator;
pub mod cell;
pub mod compare;
pub mod dtype;
pub mod error;
pub mod geometry;
pub mod limits;
pub mod refcount;
pub mod seed;
pub mod storage;
pub mod tensor;
