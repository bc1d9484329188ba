//! The rest of `THCGeneral.h` that has a meaning here: THC's reserved stream pool (stream
//! indices), peer access between devices, the CUDA status checks, heap accounting and
//! `THCMagma_init`.
//!
//! - Stream pool: `THCState_reserveStreams(n)` gives every device streams 1..=n (index 0 is the
//!   default stream); `setCurrentStreamIndex` makes one current on the current device for this
//!   thread, as `THCState_setStream` does. The pool is process-wide, like the devices.
//! - Peer access: th never lets a kernel touch another device's memory (every operand of a call
//!   must be on one device; copies move data between devices), so access is on for a device to
//!   itself and off between two devices, and turning it on between two devices is an error.
//! - Not provided (left out of the header): cuSPARSE handles (no sparse tensors), the scratch
//!   space (kernels here allocate their temporaries from the caching allocator),
//!   `getCurrentDeviceProperties` (the layout of `cudaDeviceProp` depends on the CUDA version
//!   a caller compiles against), the UVA allocator and `setDeviceAllocator` (every device storage
//!   comes from the caching allocator).

use super::thc::*;
use super::*;
use crate::core::error::{Code, Error, Result};
use crate::cuda::runtime;
use std::ffi::{CStr, c_char, c_int};
use std::sync::Mutex;

/// Streams 1..=n of each device (`POOL[device][i - 1]`), as raw stream ids owned by the pool for
/// the life of the process (THC never freed its reserved streams either).
static POOL: Mutex<Vec<Vec<u64>>> = Mutex::new(Vec::new());

fn pool() -> std::sync::MutexGuard<'static, Vec<Vec<u64>>> {
    POOL.lock().unwrap_or_else(|e| e.into_inner())
}

/// The stream id of pool index `index` on `device` (0: the default stream).
fn pooled(device: i32, index: c_int) -> Result<u64> {
    if index == 0 {
        return Ok(0);
    }
    let p = pool();
    let n = p.get(device as usize).map_or(0, |v| v.len());
    usize::try_from(index).ok().filter(|&i| i <= n).map(|i| p[device as usize][i - 1]).ok_or_else(|| {
        Error::index(format!("stream index {index} out of range: {n} streams reserved (0 is the default stream)"))
    })
}

/// The device ordinal argument `arg`, checked.
fn device_arg(device: c_int, arg: u32) -> Result<i32> {
    runtime::device(device).map(|d| d.ordinal).map_err(|e| e.at_arg(arg))
}

/// THC's `cudaError_t` checks: `cudaSuccess` (0) passes; any other status is an error naming
/// it, the file and the line.
fn check(what: &str, status: c_int, file: *const c_char, line: c_int) -> Result<()> {
    if status == 0 {
        return Ok(());
    }
    let file = if file.is_null() {
        "?".into()
    } else {
        // SAFETY: a NUL-terminated string from the caller (`__FILE__`).
        unsafe { CStr::from_ptr(file) }.to_string_lossy().into_owned()
    };
    Err(Error::new(Code::TH_ERR_CUDA, format!("{what} error {status} at {file}:{line}")))
}

th_fn! {
    /// Reserves `numStreams` streams on every device (indices 1..=numStreams; fewer than already
    /// reserved is a no-op). `nonBlocking`: the new streams do not wait for the default stream.
    fn THCState_reserveStreams @[state: *mut THCState](num_streams: c_int, non_blocking: c_int) {
        let devices = runtime::devices()?;
        let mut p = pool();
        p.resize(devices.len(), Vec::new());
        for (d, streams) in devices.iter().zip(p.iter_mut()) {
            while (streams.len() as c_int) < num_streams {
                streams.push(d.gpu.stream_new(non_blocking != 0, 0)?);
            }
        }
        Ok(())
    }
    /// Number of reserved streams per device (not counting the default stream).
    fn THCState_getNumStreams @[state: *mut THCState]() -> c_int = 0; {
        let d = runtime::current();
        runtime::device(d)?;
        Ok(pool().get(d as usize).map_or(0, |v| v.len() as c_int))
    }
    /// Reserved stream `stream` of `device` (0: the default stream, NULL).
    fn THCState_getDeviceStream @[state: *mut THCState](device: c_int, stream: c_int) -> cudaStream_t = std::ptr::null_mut(); {
        let d = device_arg(device, 1)?;
        Ok(pooled(d, stream).map_err(|e| e.at_arg(2))? as cudaStream_t)
    }
    /// The pool index of this thread's current stream on the current device: 0 for the default
    /// stream, -1 when the current stream is not a reserved one.
    fn THCState_getCurrentStreamIndex @[state: *mut THCState]() -> c_int = -1; {
        let d = runtime::current();
        runtime::device(d)?;
        let s = runtime::stream(d);
        if s == 0 {
            return Ok(0);
        }
        Ok(pool().get(d as usize).and_then(|v| v.iter().position(|&x| x == s)).map_or(-1, |i| i as c_int + 1))
    }
    /// Makes reserved stream `stream` (0: the default stream) current on the current device for
    /// this thread.
    fn THCState_setCurrentStreamIndex @[state: *mut THCState](stream: c_int) {
        let d = runtime::current();
        runtime::device(d)?;
        let id = pooled(d, stream).map_err(|e| e.at_arg(1))?;
        runtime::set_stream(d, id);
        Ok(())
    }
    /// 1 when kernels on `dev` may access memory of `devToAccess`: only a device itself (see
    /// the module docs).
    fn THCState_getPeerToPeerAccess @[state: *mut THCState](dev: c_int, dev_to_access: c_int) -> c_int = 0; {
        Ok((device_arg(dev, 1)? == device_arg(dev_to_access, 2)?) as c_int)
    }
    /// Turning peer access off, or on for a device itself, is accepted; on between two devices
    /// is an error (th's kernels never access another device's memory).
    fn THCState_setPeerToPeerAccess @[state: *mut THCState](dev: c_int, dev_to_access: c_int, enable: c_int) {
        let (a, b) = (device_arg(dev, 1)?, device_arg(dev_to_access, 2)?);
        if enable != 0 && a != b {
            return Err(Error::invalid(format!(
                "peer access from cuda:{a} to cuda:{b}: th's kernels only touch their own device's memory; copy the tensor"
            ))
            .at_arg(3));
        }
        if enable == 0 && a == b {
            return Err(Error::invalid(format!("cuda:{a} always accesses its own memory")).at_arg(3));
        }
        Ok(())
    }
    /// 0: kernels never take operands on another device (see the module docs).
    fn THCState_getKernelPeerToPeerAccessEnabled @[state: *mut THCState]() -> c_int = 0; {
        Ok(0)
    }
    /// Only 0 is accepted (kernels taking operands on another device are not supported).
    fn THCState_setKernelPeerToPeerAccessEnabled @[state: *mut THCState](val: c_int) {
        if val != 0 {
            return Err(Error::invalid("kernel peer-to-peer access is not supported: every operand of a call must be on one device").at_arg(1));
        }
        Ok(())
    }
    /// Without MAGMA (th has none) THC's `THCMagma_init` does nothing; neither does this.
    fn THCMagma_init @[state: *mut THCState]() {
        Ok(())
    }
    /// Reports a change of `size` bytes in host heap usage (the running total of `THHeapUpdate`).
    fn THCHeapUpdate @[state: *mut THCState](size: isize) {
        crate::core::allocator::heap_update(size);
        Ok(())
    }
    /// Records an error (`TH_ERR_CUDA`, naming the status, file and line) unless `err` is
    /// `cudaSuccess` (0): THC's `THCudaCheck`.
    fn __THCudaCheck(err: c_int, file: *const c_char, line: c_int) {
        check("CUDA", err, file, line)
    }
    /// As `__THCudaCheck` for cuBLAS statuses (`CUBLAS_STATUS_SUCCESS` is 0).
    fn __THCublasCheck(status: c_int, file: *const c_char, line: c_int) {
        check("cuBLAS", status, file, line)
    }
    /// As `__THCudaCheck` for cuSPARSE statuses (`CUSPARSE_STATUS_SUCCESS` is 0).
    fn __THCusparseCheck(status: c_int, file: *const c_char, line: c_int) {
        check("cuSPARSE", status, file, line)
    }
}

/// THC's `THCudaCheckWarn`: prints a warning to stderr unless `err` is `cudaSuccess` (0); never
/// an error.
///
/// # Safety
/// `file` must be NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __THCudaCheckWarn(err: c_int, file: *const c_char, line: c_int) {
    if let Err(e) = check("CUDA", err, file, line) {
        use std::io::Write;
        // A warning only: a failed write to stderr is ignored (never a panic at the boundary).
        let _ = writeln!(std::io::stderr(), "THCudaCheckWarn: {e}");
    }
}
