//! THC: the CUDA half of the library, on `cudarc`.
//!
//! Device tensors are the same `Tensor`/`View`/`Storage` objects as host ones; their storage's
//! allocator says `Device::Cuda(i)` and hands out device addresses. Everything about geometry
//! (views, broadcasting, output resizing, overlap rules, dimension merging) is the host code's;
//! this module adds what only a device has:
//! - `gpu`: the seam to a device (memory, copies, streams, events, kernel launches), with two
//!   implementations: `driver` (a real GPU through cudarc, libraries loaded at first use) and
//!   `emulator` (the same CUDA C kernel sources compiled by the host C++ compiler, run on host
//!   threads: proves kernel logic, not GPU speed);
//! - `runtime`: lazy, process-wide device discovery, the current device and stream per thread;
//! - `alloc`: THC's caching device allocator and caching pinned-host allocator;
//! - `kernels`, `launch`: the CUDA C sources, NVRTC compilation, and launch parameters built
//!   from the shared geometry; `lines`: launches of the kernels that walk a line per item
//!   (index ops, scans, sorts); `scan`: cumsum/cumprod, tiled for long lines; `reduce`: the
//!   device engine of the reductions;
//! - `storage`: the `THAllocator` that backs device storages;
//! - `copy`: the copy engine (transfers, the device copy kernel, element access);
//! - `blas`: the products through `Gpu::gemm` (cuBLAS) and THC's raw BLAS; `conv`, `random`:
//!   the parameters and launches of their kernels;
//! - `dlpack`: the stream ordering of a device tensor handed out through DLPack;
//! - `trace`: `TH_CUDA_TRACE`, one line per launch, copy and synchronization.
//!
//! This is the device backend only: the device halves of the ops live beside their host halves
//! (`ops::conv::device`, `ops::random::device`, `ops::index::device`, `ops::reduce`'s dispatch,
//! `linalg::lapack::device`), which call in here. Nothing here calls the op layer (`ops`).

pub mod alloc;
pub mod blas;
pub mod conv;
pub mod copy;
pub mod dlpack;
pub mod gpu;
pub mod kernels;
pub mod launch;
pub mod lines;
pub mod nn;
pub mod ops;
pub mod random;
pub mod reduce;
pub mod runtime;
pub mod scan;
pub mod sleep;
pub mod sort;
pub mod storage;
pub mod trace;

#[cfg(feature = "cuda")]
mod driver;
#[cfg(feature = "cuda-emulator")]
mod emulator;

/// For the tests that run on the emulated device: sets `TH_CUDA_EMULATOR=1` (once per process,
/// before its first device discovery, which is the variable's only reader) and discovers the
/// devices, so device 0 is the emulator.
#[cfg(all(test, feature = "cuda-emulator"))]
pub(crate) fn use_emulator_in_tests() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if std::env::var("TH_CUDA_EMULATOR").as_deref() != Ok("1") {
            // SAFETY: set once, before this process's first device discovery (this Once runs
            // before every test's first device use; the discovery is the only reader).
            unsafe { std::env::set_var("TH_CUDA_EMULATOR", "1") };
        }
    });
    runtime::devices().expect("the emulated device");
}
