//! Tensors in and out of the process: TH's `THFile` streams, `.npy`, DLPack exchange, and
//! storages backed by file or shared-memory mappings.

pub mod dlpack;
pub mod file;
pub mod mapping;
pub mod npy;
