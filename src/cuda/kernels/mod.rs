//! CUDA C kernel sources and their NVRTC compilation. The first kernels (fill, copy, pointwise)
//! land with the emulator and the NVRTC gate; until then no module holds a kernel, and launches
//! report that plainly.

use crate::core::error::{Error, Result};

/// A CUDA C source compiled as one NVRTC program.
pub struct Module {
    pub name: &'static str,
}

/// NVRTC's output for one module and architecture.
pub struct Compiled {
    pub cubin: Vec<u8>,
}

/// The module holding `kernel`.
pub fn module_of(_kernel: &str) -> Option<&'static Module> {
    None
}

/// Compiles `m` for `sm_<arch>`.
pub fn compile(m: &Module, arch: (i32, i32)) -> Result<Compiled> {
    Err(Error::internal(format!("module {} for sm_{}{}: no kernel sources yet", m.name, arch.0, arch.1)))
}
