//! A CPU emulator of one CUDA device, for testing without a GPU: "device" memory is host memory,
//! copies are `memcpy`, and kernels are the library's own CUDA C sources compiled by the host
//! C++ compiler (`csrc/cuda_emu`, linked in by `build.rs` with the `cuda-emulator` feature) and
//! run on host threads. Work runs synchronously at launch, so streams are already in order and
//! every event is complete when recorded.
//!
//! Its BLAS (`Gpu::gemm`) is `cuda::blas::reference`, cuBLAS's column-major contract taken
//! literally, so the mapping of row-major views onto it is tested for real.
//!
//! It proves kernel logic, launch parameters, the allocators and the C API end to end; it says
//! nothing about GPU speed. `TH_CUDA_EMULATOR_MEM` (bytes, default 4 GiB) caps its memory so
//! out-of-memory paths can be exercised.

use super::gpu::{DeviceInfo, GemmCall, Gpu, LaunchCfg};
use crate::core::error::{Error, Result};
use std::alloc::Layout;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Alignment of emulated device allocations (cudaMalloc gives at least 256).
const ALIGN: usize = 256;

pub struct Emulator {
    info: DeviceInfo,
    /// Live allocations (device and pinned host) by address: their layouts.
    blocks: Mutex<HashMap<u64, Layout>>,
    used: AtomicU64,
    ids: AtomicU64,
}

impl Emulator {
    pub fn new() -> Self {
        let total = std::env::var("TH_CUDA_EMULATOR_MEM").ok().and_then(|v| v.parse().ok()).unwrap_or(4usize << 30);
        Emulator {
            info: DeviceInfo {
                name: "th CPU emulator (not a GPU)".into(),
                arch: (9, 0),
                total_mem: total,
                multiprocessors: 2,
            },
            blocks: Mutex::new(HashMap::new()),
            used: AtomicU64::new(0),
            ids: AtomicU64::new(1),
        }
    }

    fn blocks(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Layout>> {
        self.blocks.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn alloc(&self, bytes: usize) -> Result<u64> {
        let used = self.used.load(Ordering::Relaxed) as usize;
        if bytes > self.info.total_mem.saturating_sub(used) {
            return Err(Error::alloc(format!(
                "CUDA error: out of memory (emulated device: tried to allocate {bytes} bytes, {used} of {} in use)",
                self.info.total_mem
            )));
        }
        let layout = Layout::from_size_align(bytes.max(1), ALIGN).map_err(|e| Error::alloc(e.to_string()))?;
        // SAFETY: a non-zero size with a valid alignment.
        let p = unsafe { std::alloc::alloc(layout) };
        if p.is_null() {
            return Err(Error::alloc(format!("CUDA error: out of memory (emulated device, {bytes} bytes)")));
        }
        self.used.fetch_add(layout.size() as u64, Ordering::Relaxed);
        self.blocks().insert(p as u64, layout);
        Ok(p as u64)
    }

    fn release(&self, ptr: u64) -> Result<()> {
        let layout = self
            .blocks()
            .remove(&ptr)
            .ok_or_else(|| Error::cuda(format!("CUDA error: invalid device pointer {ptr:#x} (emulated device)")))?;
        self.used.fetch_sub(layout.size() as u64, Ordering::Relaxed);
        // SAFETY: allocated above with this layout and removed from the table, so freed once.
        unsafe { std::alloc::dealloc(ptr as *mut u8, layout) };
        Ok(())
    }

    fn id(&self) -> u64 {
        self.ids.fetch_add(1, Ordering::Relaxed)
    }
}

impl Default for Emulator {
    fn default() -> Self {
        Self::new()
    }
}

impl Gpu for Emulator {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn mem_info(&self) -> Result<(usize, usize)> {
        let used = self.used.load(Ordering::Relaxed) as usize;
        Ok((self.info.total_mem.saturating_sub(used), self.info.total_mem))
    }

    fn malloc(&self, bytes: usize) -> Result<u64> {
        self.alloc(bytes)
    }

    fn free(&self, ptr: u64) -> Result<()> {
        self.release(ptr)
    }

    fn malloc_host(&self, bytes: usize) -> Result<*mut u8> {
        self.alloc(bytes).map(|p| p as *mut u8)
    }

    fn free_host(&self, ptr: *mut u8) -> Result<()> {
        self.release(ptr as u64)
    }

    unsafe fn htod(&self, dst: u64, src: *const u8, bytes: usize, _stream: u64) -> Result<()> {
        // SAFETY: caller contract; emulated device memory is host memory. `copy` allows overlap.
        unsafe { std::ptr::copy(src, dst as *mut u8, bytes) };
        Ok(())
    }

    unsafe fn dtoh(&self, dst: *mut u8, src: u64, bytes: usize, _stream: u64) -> Result<()> {
        // SAFETY: as in htod.
        unsafe { std::ptr::copy(src as *const u8, dst, bytes) };
        Ok(())
    }

    unsafe fn dtod(&self, dst: u64, src: u64, bytes: usize, _stream: u64) -> Result<()> {
        // SAFETY: as in htod.
        unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, bytes) };
        Ok(())
    }

    unsafe fn memset(&self, dst: u64, value: u8, bytes: usize, _stream: u64) -> Result<()> {
        // SAFETY: caller contract.
        unsafe { std::ptr::write_bytes(dst as *mut u8, value, bytes) };
        Ok(())
    }

    unsafe fn launch(&self, kernel: &str, cfg: &LaunchCfg, params: &mut [*mut c_void], _stream: u64) -> Result<()> {
        // SAFETY: the caller guarantees params match the kernel and address emulated memory.
        unsafe { super::kernels::emu_launch(kernel, cfg, params) }
            .map_err(|e| Error::cuda(format!("launch of {kernel} failed (emulated device): {}", e.msg)))
    }

    fn stream_new(&self, _non_blocking: bool, _priority: i32) -> Result<u64> {
        Ok(self.id())
    }

    fn stream_free(&self, _stream: u64) -> Result<()> {
        Ok(())
    }

    fn stream_sync(&self, _stream: u64) -> Result<()> {
        Ok(())
    }

    fn stream_wait(&self, _stream: u64, _event: u64) -> Result<()> {
        Ok(())
    }

    fn event_record(&self, _stream: u64) -> Result<u64> {
        Ok(self.id())
    }

    fn event_done(&self, _event: u64) -> Result<bool> {
        Ok(true)
    }

    fn event_free(&self, _event: u64) {}

    fn sync(&self) -> Result<()> {
        Ok(())
    }

    unsafe fn gemm(&self, call: &GemmCall, _stream: u64) -> Result<()> {
        // SAFETY: caller contract; emulated device memory is host memory. The reference takes
        // cuBLAS's column-major arguments literally (and rejects what cuBLAS rejects).
        unsafe { super::blas::reference::gemm(call) }
    }
}
