//! `THC_sleep` (`THCSleep.h`): a one-thread kernel (`kernels/sleep.cuh`) spinning for a number
//! of clock cycles on the current device's current stream; the call returns once it is queued
//! (the emulator runs it synchronously, counting one cycle per nanosecond).

use super::gpu::LaunchCfg;
use super::runtime;
use crate::core::dtype::DType;
use crate::core::error::{Error, Result};

/// The kernel's parameter (`THCSleep`).
#[repr(C)]
struct THCSleep {
    cycles: i64,
}

/// The sleep kernel lives in the `float` module (it has no dtype).
pub fn kernel_names(d: DType) -> Vec<String> {
    if d == DType::Float { vec!["th_sleep".into()] } else { vec![] }
}

/// Queues the spin on the current stream; `cycles == 0` queues nothing, negative is an error.
pub fn sleep(cycles: i64) -> Result<()> {
    if cycles < 0 {
        return Err(Error::invalid(format!("THC_sleep: negative cycle count {cycles}")).at_arg(2));
    }
    // The device first: without one, even a zero count is an error (as any THC call).
    let dev = runtime::device(runtime::current())?;
    if cycles == 0 {
        return Ok(());
    }
    let mut p = THCSleep { cycles };
    let cfg = LaunchCfg { grid: [1, 1, 1], block: [1, 1, 1], shared: 0 };
    let mut args = [&mut p as *mut THCSleep as *mut std::ffi::c_void];
    // SAFETY: the kernel reads only its by-value parameter; `p` outlives the launch call.
    unsafe { dev.gpu.launch("th_sleep", &cfg, &mut args, runtime::stream(dev.ordinal)) }
}
