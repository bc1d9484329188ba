//! Fuzz drivers for libth's C API, shared by the libFuzzer targets in `fuzz_targets/` and the
//! stable regression tests of the main crate (which include the driver files by path).
//!
//! One module per input format:
//! - `api`: programs of C API calls (create / view / resize / copy / math / free) across dtypes.
//! - `dlpack`: DLPack import of malformed and well-formed managed tensors (every dtype, both
//!   the versioned and the legacy form).
//! - `file`: THMemoryFile reads (binary/ASCII, every dtype, strings, seeks) and `.npy` loading of
//!   corrupt content.
//!
//! Each has a target in `fuzz_targets/`, a saved-input directory in `regressions/`, and a test in
//! `tests/` of the main crate; see fuzz/README.md.

pub mod api;
pub mod dlpack;
pub mod file;
