//! The devices of the process and each thread's current device and streams (THCState's
//! per-thread part).
//!
//! Discovery is lazy: the first THC call that needs a device loads the backend, and a program
//! that only uses host tensors never touches CUDA. The outcome (devices, or the reason there are
//! none) is kept for the life of the process, as a driver cannot appear later.
//!
//! Which backend: with the `cuda-emulator` feature and `TH_CUDA_EMULATOR=1`, one emulated device
//! and no driver; otherwise, with the `cuda` feature, the driver's devices; otherwise none
//! ("built without CUDA").

use super::alloc::Memory;
use super::alloc::device::DeviceCache;
use super::alloc::host::HostCache;
use super::gpu::Gpu;
use crate::core::error::{Code, Error, Result};
use std::cell::{Cell, RefCell};
use std::sync::{Arc, OnceLock};

/// One device with its allocators.
pub struct Device {
    pub ordinal: i32,
    pub gpu: Arc<dyn Gpu>,
    /// THC's caching device allocator: every device storage comes from it.
    pub cache: DeviceCache<Raw>,
    /// THC's caching pinned-host allocator (`THCudaHostAllocator`, async copies).
    pub host: HostCache<Pinned>,
}

/// Memory of one device for a caching allocator: device memory (`Raw`) or page-locked host
/// memory (`Pinned`); both record events on the device's streams.
pub struct Mem<const PINNED: bool>(pub Arc<dyn Gpu>);
pub type Raw = Mem<false>;
pub type Pinned = Mem<true>;

impl<const PINNED: bool> Memory for Mem<PINNED> {
    fn raw_alloc(&self, bytes: usize) -> Result<u64> {
        if PINNED { self.0.malloc_host(bytes).map(|p| p as u64) } else { self.0.malloc(bytes) }
    }
    fn raw_free(&self, ptr: u64) {
        let _ = if PINNED { self.0.free_host(ptr as *mut u8) } else { self.0.free(ptr) };
    }
    fn record_event(&self, stream: u64) -> Result<u64> {
        self.0.event_record(stream)
    }
    fn event_done(&self, event: u64) -> Result<bool> {
        self.0.event_done(event)
    }
    fn free_event(&self, event: u64) {
        self.0.event_free(event)
    }
}

static DEVICES: OnceLock<std::result::Result<Vec<Device>, Error>> = OnceLock::new();

fn discover() -> Result<Vec<Arc<dyn Gpu>>> {
    #[cfg(feature = "cuda-emulator")]
    if std::env::var("TH_CUDA_EMULATOR").is_ok_and(|v| v == "1") {
        return Ok(vec![Arc::new(super::emulator::Emulator::new())]);
    }
    #[cfg(feature = "cuda")]
    {
        super::driver::devices()
    }
    #[cfg(not(feature = "cuda"))]
    {
        Err(Error::no_cuda("this library was built without CUDA (the `cuda` feature)"))
    }
}

/// Every device, discovering them on first use; the error says why there are none.
pub fn devices() -> Result<&'static [Device]> {
    let found = DEVICES.get_or_init(|| {
        super::trace::open_from_env()?;
        let gpus = discover()?;
        if gpus.is_empty() {
            return Err(Error::no_device("no CUDA-capable device is detected"));
        }
        Ok(gpus
            .into_iter()
            .enumerate()
            .map(|(i, gpu)| (i, Arc::new(super::trace::Traced::new(gpu)) as Arc<dyn Gpu>))
            .map(|(i, gpu)| Device {
                ordinal: i as i32,
                cache: DeviceCache::new(Mem(gpu.clone())),
                host: HostCache::new(Mem(gpu.clone())),
                gpu,
            })
            .collect())
    });
    found.as_ref().map(|v| v.as_slice()).map_err(Error::clone)
}

/// Whether discovery has already run (so shutdown paths do not trigger it).
pub fn initialized() -> bool {
    DEVICES.get().is_some()
}

/// The device `ordinal`.
pub fn device(ordinal: i32) -> Result<&'static Device> {
    let all = devices()?;
    usize::try_from(ordinal).ok().and_then(|i| all.get(i)).ok_or_else(|| {
        Error::new(
            Code::TH_ERR_NO_DEVICE,
            format!("invalid device ordinal {ordinal}: there are {} device(s)", all.len()),
        )
    })
}

thread_local! {
    static CURRENT: Cell<i32> = const { Cell::new(0) };
    /// The current stream of each device on this thread (0: the default stream).
    static STREAMS: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// This thread's current device (`cudaGetDevice`): 0 until `set_current` changes it.
pub fn current() -> i32 {
    CURRENT.with(Cell::get)
}

/// Makes `ordinal` this thread's current device (checked).
pub fn set_current(ordinal: i32) -> Result<()> {
    device(ordinal)?;
    CURRENT.with(|c| c.set(ordinal));
    Ok(())
}

/// This thread's current stream on `ordinal`.
pub fn stream(ordinal: i32) -> u64 {
    STREAMS.with(|s| s.borrow().get(ordinal as usize).copied().unwrap_or(0))
}

/// Sets this thread's current stream on `ordinal` (0: the default stream).
pub fn set_stream(ordinal: i32, stream: u64) {
    STREAMS.with(|s| {
        let mut s = s.borrow_mut();
        let i = ordinal.max(0) as usize;
        if s.len() <= i {
            s.resize(i + 1, 0);
        }
        s[i] = stream;
    })
}
