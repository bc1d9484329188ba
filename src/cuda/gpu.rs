//! The seam between THC and a device: what the rest of `cuda` may ask of one. Two backends
//! implement it: `driver` (a real GPU through cudarc) and `emulator` (host memory and the same
//! kernel sources compiled for the host). Nothing above this trait knows which one it has.
//!
//! Addresses are `u64`: device addresses from the driver, host addresses in the emulator.
//! Streams and events are small ids owned by the backend; stream 0 is the device's default
//! (legacy NULL) stream. Every call may be made from any thread.

use crate::core::dtype::DType;
use crate::core::error::Result;
use std::ffi::c_void;

/// One cuBLAS `gemmStridedBatched` call, with cuBLAS's column-major contract: for each batch
/// `p < batch`, `C_p = alpha*op(A_p)*op(B_p) + beta*C_p` where `C_p` is `m x n` at
/// `c + p*stride_c` (element `(i, j)` at `i + j*ldc`), `op(A_p)` is `m x k` (`A_p[i + l*lda]`,
/// or `A_p[l + i*lda]` when `transa`), `op(B_p)` is `k x n` likewise. Strides and leading
/// dimensions count elements; addresses are device addresses of `dtype` elements (Float,
/// Double, Half, BFloat16; the 16-bit ones computed in f32). `beta == 0` does not read `C`;
/// `alpha == 0` or `k == 0` does not read `A`, `B`. An `ld` below `max(1, rows)` or a negative
/// size is cuBLAS's `CUBLAS_STATUS_INVALID_VALUE`, a `TH_ERR_CUDA` error.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GemmCall {
    pub dtype: DType,
    pub transa: bool,
    pub transb: bool,
    pub m: i64,
    pub n: i64,
    pub k: i64,
    /// Converted to the dtype's compute type (f32 for Float, Half, BFloat16; f64 for Double).
    pub alpha: f64,
    pub a: u64,
    pub lda: i64,
    pub stride_a: i64,
    pub b: u64,
    pub ldb: i64,
    pub stride_b: i64,
    pub beta: f64,
    pub c: u64,
    pub ldc: i64,
    pub stride_c: i64,
    pub batch: i64,
}

/// A kernel launch shape: THC's `dim3 grid, block` and dynamic shared memory bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchCfg {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared: u32,
}

/// Identifies a device to the user: `THCState_getCurrentDeviceProperties`'s essentials.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    pub name: String,
    /// Compute capability (major, minor).
    pub arch: (i32, i32),
    pub total_mem: usize,
    pub multiprocessors: i32,
}

/// One device. Implementations keep their own context current on the calling thread.
pub trait Gpu: Send + Sync {
    fn info(&self) -> &DeviceInfo;
    /// (free, total) bytes of device memory.
    fn mem_info(&self) -> Result<(usize, usize)>;
    /// Fresh device memory (uncached: the caching allocator sits above). Out of memory is a
    /// `TH_ERR_ALLOC` error.
    fn malloc(&self, bytes: usize) -> Result<u64>;
    /// Returns memory from `malloc`.
    fn free(&self, ptr: u64) -> Result<()>;
    /// Page-locked host memory (`cudaMallocHost`), usable for asynchronous copies.
    fn malloc_host(&self, bytes: usize) -> Result<*mut u8>;
    fn free_host(&self, ptr: *mut u8) -> Result<()>;
    /// Queues a host-to-device copy on `stream`. The source must stay valid until the stream
    /// reaches the copy (callers with pageable memory synchronize the stream afterwards).
    ///
    /// # Safety
    /// `src` holds `bytes` readable bytes; `dst` is device memory of at least `bytes`.
    unsafe fn htod(&self, dst: u64, src: *const u8, bytes: usize, stream: u64) -> Result<()>;
    /// Queues a device-to-host copy on `stream` (complete after `stream_sync`).
    ///
    /// # Safety
    /// `dst` holds `bytes` writable bytes; `src` is device memory of at least `bytes`.
    unsafe fn dtoh(&self, dst: *mut u8, src: u64, bytes: usize, stream: u64) -> Result<()>;
    /// Queues a device-to-device copy on `stream`.
    ///
    /// # Safety
    /// Both are device memory of at least `bytes`.
    unsafe fn dtod(&self, dst: u64, src: u64, bytes: usize, stream: u64) -> Result<()>;
    /// Queues `memset(dst, value, bytes)` on `stream`.
    ///
    /// # Safety
    /// `dst` is device memory of at least `bytes`.
    unsafe fn memset(&self, dst: u64, value: u8, bytes: usize, stream: u64) -> Result<()>;
    /// Launches `kernel` (an `extern "C"` name from `kernels`) on `stream`; `params` points to
    /// each kernel argument's value, as for `cuLaunchKernel`. Compiles and loads the kernel's
    /// module first if needed.
    ///
    /// # Safety
    /// `params` matches the kernel's parameter list; every address inside is valid device
    /// memory for what the kernel touches.
    unsafe fn launch(&self, kernel: &str, cfg: &LaunchCfg, params: &mut [*mut c_void], stream: u64) -> Result<()>;
    /// A new stream (`non_blocking`: does not synchronize with the default stream).
    fn stream_new(&self, non_blocking: bool, priority: i32) -> Result<u64>;
    fn stream_free(&self, stream: u64) -> Result<()>;
    /// Waits until everything queued on `stream` has completed.
    fn stream_sync(&self, stream: u64) -> Result<()>;
    /// Makes future work on `stream` wait for `event`.
    fn stream_wait(&self, stream: u64, event: u64) -> Result<()>;
    /// Records an event on `stream`.
    fn event_record(&self, stream: u64) -> Result<u64>;
    /// Whether the work before `event` has completed.
    fn event_done(&self, event: u64) -> Result<bool>;
    fn event_free(&self, event: u64);
    /// Waits until all work on the device has completed.
    fn sync(&self) -> Result<()>;
    /// Queues one strided batched GEMM (see `GemmCall`) on `stream`: cuBLAS on a GPU, the
    /// emulator's literal column-major reference on the emulator. The matrix-vector products,
    /// outer products and dots of THC are expressed as such GEMMs (`cuda::blas`).
    ///
    /// # Safety
    /// Every matrix the call touches (by its sizes, leading dimensions and batch strides) is
    /// device memory of this device; `C`'s batches do not overlap each other, `A` or `B`.
    unsafe fn gemm(&self, call: &GemmCall, stream: u64) -> Result<()>;
}
