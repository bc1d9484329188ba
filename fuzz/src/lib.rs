//! Fuzz drivers for libth's C API, shared by the libFuzzer targets in `fuzz_targets/` and the
//! stable regression tests of the main crate (which include the driver files by path).
//!
//! One module per input format:
//! - `api`: programs of C API calls (create / view / resize / copy / math / free) across dtypes.
//!
//! The DLPack import (malformed `DLTensor`s) and THFile / `.npy` reader (corrupt files) drivers
//! belong here as `dlpack.rs` and `file.rs`, each with a target in `fuzz_targets/`, a saved-input
//! directory in `regressions/`, and a test in `tests/` of the main crate; see fuzz/README.md.

pub mod api;
