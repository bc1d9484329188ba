//! A real GPU through cudarc's driver API (`cuda*` calls of THC become `cu*` calls here).
//!
//! cudarc loads `libcuda.so` at the first call and panics when it is missing, so discovery asks
//! `is_culib_present()` first and turns absence into `TH_ERR_NO_CUDA`. Each device uses its
//! primary context (what the CUDA runtime, and so PyTorch and CuPy, use too), made current on the
//! calling thread before every call. Kernel modules are compiled by NVRTC for the device's own
//! architecture at first use and cached per device.
//!
//! BLAS: cuBLAS (`libcublas`, also loaded at first use; its absence is a `TH_ERR_NO_CUDA` error
//! asked of `is_culib_present()` once, never cudarc's panic). One handle per (thread, device),
//! created lazily and bound to the call's stream before each call, as THC did.

use super::gpu::{DeviceInfo, GemmCall, Gpu, LaunchCfg};
use super::kernels;
use crate::core::dtype::DType;
use crate::core::error::{Code, Error, Result};
use cudarc::driver::result::{self, DriverError};
use cudarc::driver::sys::{self, CUresult};
use std::collections::HashMap;
use std::ffi::{CString, c_void};
use std::sync::{Arc, Mutex};

/// A driver error as TH reports it: THC's "cuda runtime error (N) : text" with the name.
fn cuda_error(what: &str, e: DriverError) -> Error {
    let name = e.error_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|_| format!("{:?}", e.0));
    let text = e.error_string().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let code = match e.0 {
        CUresult::CUDA_ERROR_OUT_OF_MEMORY => Code::TH_ERR_ALLOC,
        CUresult::CUDA_ERROR_NO_DEVICE | CUresult::CUDA_ERROR_INVALID_DEVICE => Code::TH_ERR_NO_DEVICE,
        _ => Code::TH_ERR_CUDA,
    };
    Error::new(code, format!("{what}: cuda error {name} ({}) : {text}", e.0 as i32))
}

/// `TH_CUDA_LAUNCH_BLOCKING=1`: every launch waits for its kernel, so a fault is reported by
/// the launch that caused it, with the kernel's name (read once).
fn launch_blocking() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("TH_CUDA_LAUNCH_BLOCKING").is_ok_and(|v| v == "1"))
}

trait Check<T> {
    fn check(self, what: &str) -> Result<T>;
}

impl<T> Check<T> for std::result::Result<T, DriverError> {
    fn check(self, what: &str) -> Result<T> {
        self.map_err(|e| cuda_error(what, e))
    }
}

impl Check<()> for CUresult {
    fn check(self, what: &str) -> Result<()> {
        self.result().check(what)
    }
}

/// The devices the driver reports; `TH_ERR_NO_CUDA` without a driver, `TH_ERR_NO_DEVICE`
/// with one but no GPU.
pub fn devices() -> Result<Vec<Arc<dyn Gpu>>> {
    // SAFETY: only tries to load the library; never calls into it.
    if !unsafe { sys::is_culib_present() } {
        return Err(Error::no_cuda("no CUDA driver: libcuda.so could not be loaded (is the NVIDIA driver installed?)"));
    }
    result::init().check("cuInit")?;
    let n = result::device::get_count().check("cuDeviceGetCount")?;
    (0..n).map(|i| Ok(Arc::new(Driver::new(i)?) as Arc<dyn Gpu>)).collect()
}

pub struct Driver {
    info: DeviceInfo,
    /// The primary context, as an address (raw CUDA handles are not `Send`).
    ctx: usize,
    /// Loaded modules by name, and functions by kernel name (as addresses).
    modules: Mutex<HashMap<&'static str, usize>>,
    functions: Mutex<HashMap<String, usize>>,
}

impl Driver {
    fn new(ordinal: i32) -> Result<Self> {
        let dev = result::device::get(ordinal).check("cuDeviceGet")?;
        let attr = |a| {
            // SAFETY: dev came from cuDeviceGet.
            unsafe { result::device::get_attribute(dev, a) }.check("cuDeviceGetAttribute")
        };
        use sys::CUdevice_attribute as A;
        let arch = (
            attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        );
        let info = DeviceInfo {
            name: result::device::get_name(dev).check("cuDeviceGetName")?,
            arch,
            // SAFETY: as above.
            total_mem: unsafe { result::device::total_mem(dev) }.check("cuDeviceTotalMem")?,
            multiprocessors: attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
        };
        // SAFETY: dev is valid; the primary context is released in Drop.
        let ctx = unsafe { result::primary_ctx::retain(dev) }.check("cuDevicePrimaryCtxRetain")? as usize;
        Ok(Driver { info, ctx, modules: Mutex::new(HashMap::new()), functions: Mutex::new(HashMap::new()) })
    }

    /// Makes this device's context current on the calling thread.
    fn bind(&self) -> Result<()> {
        // SAFETY: ctx is our retained primary context.
        unsafe { result::ctx::set_current(self.ctx as sys::CUcontext) }.check("cuCtxSetCurrent")
    }

    /// The function `kernel`, loading (and compiling) its module on first use.
    fn function(&self, kernel: &str) -> Result<sys::CUfunction> {
        if let Some(&f) = self.functions.lock().unwrap_or_else(|e| e.into_inner()).get(kernel) {
            return Ok(f as sys::CUfunction);
        }
        let m = kernels::module_of(kernel).ok_or_else(|| Error::internal(format!("no module has kernel {kernel}")))?;
        let mut modules = self.modules.lock().unwrap_or_else(|e| e.into_inner());
        let module = match modules.get(m.name) {
            Some(&h) => h as sys::CUmodule,
            None => {
                let cubin = kernels::cache::cubin(m, self.info.arch)?;
                // SAFETY: a CUBIN image for this device's architecture, alive during the call.
                let h =
                    unsafe { result::module::load_data(cubin.as_ptr() as *const c_void) }.check("cuModuleLoadData")?;
                modules.insert(m.name, h as usize);
                h
            }
        };
        let name = CString::new(kernel).map_err(|_| Error::internal("kernel name with a NUL"))?;
        // SAFETY: a loaded module and a NUL-terminated name.
        let f = unsafe { result::module::get_function(module, name) }.check("cuModuleGetFunction")?;
        self.functions.lock().unwrap_or_else(|e| e.into_inner()).insert(kernel.to_string(), f as usize);
        Ok(f)
    }
}

impl Gpu for Driver {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn mem_info(&self) -> Result<(usize, usize)> {
        self.bind()?;
        result::mem_get_info().check("cuMemGetInfo")
    }

    fn malloc(&self, bytes: usize) -> Result<u64> {
        self.bind()?;
        // SAFETY: a plain allocation; freed by `free`.
        unsafe { result::malloc_sync(bytes.max(1)) }.check("cuMemAlloc")
    }

    fn free(&self, ptr: u64) -> Result<()> {
        self.bind()?;
        // SAFETY: ptr came from malloc (the caching allocator's contract).
        unsafe { result::free_sync(ptr) }.check("cuMemFree")
    }

    fn malloc_host(&self, bytes: usize) -> Result<*mut u8> {
        self.bind()?;
        // SAFETY: a plain pinned allocation (flags 0: portable-less, cached, readable by the CPU).
        unsafe { result::malloc_host(bytes.max(1), 0) }.map(|p| p as *mut u8).check("cuMemHostAlloc")
    }

    fn free_host(&self, ptr: *mut u8) -> Result<()> {
        self.bind()?;
        // SAFETY: ptr came from malloc_host.
        unsafe { result::free_host(ptr as *mut c_void) }.check("cuMemFreeHost")
    }

    unsafe fn htod(&self, dst: u64, src: *const u8, bytes: usize, stream: u64) -> Result<()> {
        self.bind()?;
        // SAFETY: caller contract.
        unsafe { sys::cuMemcpyHtoDAsync_v2(dst, src as *const c_void, bytes, stream as sys::CUstream) }
            .check("cuMemcpyHtoDAsync")
    }

    unsafe fn dtoh(&self, dst: *mut u8, src: u64, bytes: usize, stream: u64) -> Result<()> {
        self.bind()?;
        // SAFETY: caller contract.
        unsafe { sys::cuMemcpyDtoHAsync_v2(dst as *mut c_void, src, bytes, stream as sys::CUstream) }
            .check("cuMemcpyDtoHAsync")
    }

    unsafe fn dtod(&self, dst: u64, src: u64, bytes: usize, stream: u64) -> Result<()> {
        self.bind()?;
        // SAFETY: caller contract.
        unsafe { sys::cuMemcpyDtoDAsync_v2(dst, src, bytes, stream as sys::CUstream) }.check("cuMemcpyDtoDAsync")
    }

    unsafe fn memset(&self, dst: u64, value: u8, bytes: usize, stream: u64) -> Result<()> {
        self.bind()?;
        // SAFETY: caller contract.
        unsafe { sys::cuMemsetD8Async(dst, value, bytes, stream as sys::CUstream) }.check("cuMemsetD8Async")
    }

    unsafe fn launch(&self, kernel: &str, cfg: &LaunchCfg, params: &mut [*mut c_void], stream: u64) -> Result<()> {
        self.bind()?;
        let f = self.function(kernel)?;
        let (g, b) = (cfg.grid, cfg.block);
        // SAFETY: caller contract (params match the kernel's signature).
        unsafe {
            result::launch_kernel(
                f,
                (g[0], g[1], g[2]),
                (b[0], b[1], b[2]),
                cfg.shared,
                stream as sys::CUstream,
                params,
            )
        }
        .check(kernel)?;
        if launch_blocking() {
            // SAFETY: a live stream (or the NULL stream).
            unsafe { result::stream::synchronize(stream as sys::CUstream) }
                .check(&format!("{kernel} (checked by TH_CUDA_LAUNCH_BLOCKING=1)"))?;
        }
        Ok(())
    }

    fn stream_new(&self, non_blocking: bool, priority: i32) -> Result<u64> {
        self.bind()?;
        let kind =
            if non_blocking { result::stream::StreamKind::NonBlocking } else { result::stream::StreamKind::Default };
        result::stream::create_with_priority(kind, priority).map(|s| s as u64).check("cuStreamCreateWithPriority")
    }

    fn stream_free(&self, stream: u64) -> Result<()> {
        if stream == 0 {
            return Ok(());
        }
        self.bind()?;
        // SAFETY: a stream from stream_new, no longer used by the caller.
        unsafe { result::stream::destroy(stream as sys::CUstream) }.check("cuStreamDestroy")
    }

    fn stream_sync(&self, stream: u64) -> Result<()> {
        self.bind()?;
        // SAFETY: a live stream (or the NULL stream).
        unsafe { result::stream::synchronize(stream as sys::CUstream) }.check("cuStreamSynchronize")
    }

    fn stream_wait(&self, stream: u64, event: u64) -> Result<()> {
        self.bind()?;
        // SAFETY: a live stream and event.
        unsafe { sys::cuStreamWaitEvent(stream as sys::CUstream, event as sys::CUevent, 0) }.check("cuStreamWaitEvent")
    }

    fn event_record(&self, stream: u64) -> Result<u64> {
        self.bind()?;
        let e = result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING).check("cuEventCreate")?;
        // SAFETY: a fresh event and a live stream.
        if let Err(err) = unsafe { result::event::record(e, stream as sys::CUstream) } {
            // SAFETY: the event is ours and unused.
            let _ = unsafe { result::event::destroy(e) };
            return Err(cuda_error("cuEventRecord", err));
        }
        Ok(e as u64)
    }

    fn event_done(&self, event: u64) -> Result<bool> {
        self.bind()?;
        // SAFETY: a live event from event_record.
        match unsafe { result::event::query(event as sys::CUevent) } {
            Ok(()) => Ok(true),
            Err(DriverError(CUresult::CUDA_ERROR_NOT_READY)) => Ok(false),
            Err(e) => Err(cuda_error("cuEventQuery", e)),
        }
    }

    fn event_free(&self, event: u64) {
        if self.bind().is_ok() {
            // SAFETY: an event from event_record, not used afterwards.
            let _ = unsafe { result::event::destroy(event as sys::CUevent) };
        }
    }

    fn sync(&self) -> Result<()> {
        self.bind()?;
        result::ctx::synchronize().check("cuCtxSynchronize")
    }

    unsafe fn gemm(&self, g: &GemmCall, stream: u64) -> Result<()> {
        self.bind()?;
        let handle = blas::handle(self.ctx)?;
        // SAFETY: a live handle of this context and a live stream (or the NULL stream); the
        // matrices are the caller's contract.
        unsafe { blas::gemm(handle, g, stream) }
    }
}

/// cuBLAS through cudarc's raw bindings.
mod blas {
    use super::*;
    use cudarc::cublas::result::{self as cb, CublasError};
    use cudarc::cublas::sys::{self as cs, cublasComputeType_t, cublasOperation_t, cudaDataType_t};
    use std::cell::RefCell;
    use std::sync::OnceLock;

    /// A cuBLAS status as TH reports it (the status's name).
    fn status(what: &str, e: CublasError) -> Error {
        Error::new(Code::TH_ERR_CUDA, format!("{what}: cuBLAS error {:?} ({})", e.0, e.0 as i32))
    }

    /// A handle, destroyed with its thread.
    struct Handle(cs::cublasHandle_t);

    impl Drop for Handle {
        fn drop(&mut self) {
            // SAFETY: created by create_handle and dropped once; a failure at thread exit
            // (driver already shut down) leaves nothing to release.
            let _ = unsafe { cb::destroy_handle(self.0) };
        }
    }

    thread_local! {
        /// This thread's handles by context.
        static HANDLES: RefCell<HashMap<usize, Handle>> = RefCell::new(HashMap::new());
    }

    /// This thread's handle for the context `ctx` (current on the thread), created on first use.
    pub fn handle(ctx: usize) -> Result<cs::cublasHandle_t> {
        static PRESENT: OnceLock<bool> = OnceLock::new();
        // SAFETY: only tries to load the library.
        if !*PRESENT.get_or_init(|| unsafe { cs::is_culib_present() }) {
            return Err(Error::no_cuda(
                "no cuBLAS: libcublas.so could not be loaded (is the CUDA toolkit's cuBLAS installed?)",
            ));
        }
        HANDLES.with(|h| {
            let mut h = h.borrow_mut();
            if let Some(x) = h.get(&ctx) {
                return Ok(x.0);
            }
            let x = cb::create_handle().map_err(|e| status("cublasCreate", e))?;
            h.insert(ctx, Handle(x));
            Ok(x)
        })
    }

    fn op(t: bool) -> cublasOperation_t {
        if t { cublasOperation_t::CUBLAS_OP_T } else { cublasOperation_t::CUBLAS_OP_N }
    }

    fn int(x: i64, what: &str) -> Result<i32> {
        i32::try_from(x).map_err(|_| Error::size(format!("cuBLAS: {what} = {x} does not fit an int")))
    }

    /// One `gemmStridedBatched` on `stream`: S/D for Float/Double, `GemmStridedBatchedEx` with
    /// f32 compute for Half and BFloat16.
    ///
    /// # Safety
    /// As `Gpu::gemm`; `h` is a live handle of the current context.
    pub unsafe fn gemm(h: cs::cublasHandle_t, g: &GemmCall, stream: u64) -> Result<()> {
        // SAFETY: a live handle and stream.
        unsafe { cb::set_stream(h, stream as cs::cudaStream_t) }.map_err(|e| status("cublasSetStream", e))?;
        let (m, n, k) = (int(g.m, "m")?, int(g.n, "n")?, int(g.k, "k")?);
        let (lda, ldb, ldc, batch) =
            (int(g.lda, "lda")?, int(g.ldb, "ldb")?, int(g.ldc, "ldc")?, int(g.batch, "batch")?);
        let (ta, tb) = (op(g.transa), op(g.transb));
        let r = match g.dtype {
            DType::Double => {
                let (alpha, beta) = (g.alpha, g.beta);
                // SAFETY: caller contract; alpha/beta are host scalars alive during the call.
                unsafe {
                    cb::dgemm_strided_batched(
                        h,
                        ta,
                        tb,
                        m,
                        n,
                        k,
                        &alpha,
                        g.a as *const f64,
                        lda,
                        g.stride_a,
                        g.b as *const f64,
                        ldb,
                        g.stride_b,
                        &beta,
                        g.c as *mut f64,
                        ldc,
                        g.stride_c,
                        batch,
                    )
                }
            }
            DType::Float => {
                let (alpha, beta) = (g.alpha as f32, g.beta as f32);
                // SAFETY: as above.
                unsafe {
                    cb::sgemm_strided_batched(
                        h,
                        ta,
                        tb,
                        m,
                        n,
                        k,
                        &alpha,
                        g.a as *const f32,
                        lda,
                        g.stride_a,
                        g.b as *const f32,
                        ldb,
                        g.stride_b,
                        &beta,
                        g.c as *mut f32,
                        ldc,
                        g.stride_c,
                        batch,
                    )
                }
            }
            DType::Half | DType::BFloat16 => {
                let ty = if g.dtype == DType::Half { cudaDataType_t::CUDA_R_16F } else { cudaDataType_t::CUDA_R_16BF };
                let (alpha, beta) = (g.alpha as f32, g.beta as f32);
                // SAFETY: as above; f32 scalars for CUBLAS_COMPUTE_32F.
                unsafe {
                    cb::gemm_strided_batched_ex(
                        h,
                        ta,
                        tb,
                        m,
                        n,
                        k,
                        &alpha as *const f32 as *const c_void,
                        g.a as *const c_void,
                        ty,
                        lda,
                        g.stride_a,
                        g.b as *const c_void,
                        ty,
                        ldb,
                        g.stride_b,
                        &beta as *const f32 as *const c_void,
                        g.c as *mut c_void,
                        ty,
                        ldc,
                        g.stride_c,
                        batch,
                        cublasComputeType_t::CUBLAS_COMPUTE_32F,
                        cs::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
                    )
                }
            }
            d => return Err(Error::dtype(format!("cuBLAS has no GEMM for {d:?}"))),
        };
        r.map_err(|e| status("cublasGemmStridedBatched", e))
    }
}
