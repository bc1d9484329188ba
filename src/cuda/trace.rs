//! The launch trace: every device's `Gpu` is wrapped in `Traced`, which forwards each call and,
//! when tracing is on, appends one tab-separated line per event:
//!
//! ```text
//! launch  KERNEL  GRIDX,GRIDY,GRIDZ  BLOCKX,BLOCKY,BLOCKZ  STREAM
//! copy    HtoD|DtoH|DtoD  BYTES  sync|async
//! sync    stream STREAM | device
//! memset  BYTES  STREAM
//! gemm    DTYPE  M,N,K  BATCH  STREAM
//! ```
//!
//! Tracing is on for the whole process when `TH_CUDA_TRACE=FILE` is set at device discovery
//! (lines appended to FILE, written as they happen, so a crash loses nothing), and for one
//! thread inside `capture` (tests: the events that thread causes, in order, whatever other
//! threads do). A host copy is `async` when its host side lies in page-locked memory from this
//! device's `malloc_host`; from pageable memory the caller synchronizes right after (`Gpu::htod`'s
//! contract), so it is `sync`. A device-to-device copy is always `async`.

use super::gpu::{DeviceInfo, GemmCall, Gpu, LaunchCfg};
use crate::core::error::{Error, Result};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ffi::c_void;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// The process-wide trace file (`TH_CUDA_TRACE`).
static FILE: OnceLock<Mutex<std::fs::File>> = OnceLock::new();
/// Whether any thread is inside `capture` (so the common untraced path costs one load).
static CAPTURING: AtomicBool = AtomicBool::new(false);

thread_local! {
    static LINES: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
}

/// Opens `TH_CUDA_TRACE` for appending, once per process (at device discovery). A file that
/// cannot be opened is an error of discovery: the user asked for a trace.
pub(super) fn open_from_env() -> Result<()> {
    let Some(path) = std::env::var_os("TH_CUDA_TRACE").filter(|p| !p.is_empty()) else { return Ok(()) };
    let f =
        std::fs::OpenOptions::new().create(true).append(true).open(&path).map_err(|e| {
            Error::invalid(format!("TH_CUDA_TRACE={}: cannot open it for appending: {e}", path.display()))
        })?;
    let _ = FILE.set(Mutex::new(f));
    Ok(())
}

fn on() -> bool {
    FILE.get().is_some() || CAPTURING.load(Ordering::Relaxed)
}

fn emit(line: String) {
    LINES.with(|l| {
        if let Some(v) = l.borrow_mut().as_mut() {
            v.push(line.clone());
        }
    });
    if let Some(f) = FILE.get() {
        let mut f = f.lock().unwrap_or_else(|e| e.into_inner());
        // One write per line, so lines of concurrent threads never interleave; a failed write
        // loses that line only (tracing must never fail the traced call).
        let _ = f.write_all(format!("{line}\n").as_bytes());
    }
}

/// Runs `f`, returning what it returned and the trace lines this thread caused meanwhile.
pub fn capture<R>(f: impl FnOnce() -> R) -> (R, Vec<String>) {
    static ACTIVE: Mutex<usize> = Mutex::new(0);
    let enter = |d: isize| {
        let mut n = ACTIVE.lock().unwrap_or_else(|e| e.into_inner());
        *n = n.saturating_add_signed(d);
        CAPTURING.store(*n > 0, Ordering::Relaxed);
    };
    let outer = LINES.with(|l| l.borrow_mut().replace(Vec::new()));
    enter(1);
    let r = f();
    enter(-1);
    let lines = LINES.with(|l| std::mem::replace(&mut *l.borrow_mut(), outer)).unwrap_or_default();
    // A capture inside another one: the outer also sees the inner's events.
    LINES.with(|l| {
        if let Some(v) = l.borrow_mut().as_mut() {
            v.extend(lines.iter().cloned());
        }
    });
    (r, lines)
}

/// A device whose calls are traced.
pub struct Traced {
    inner: Arc<dyn Gpu>,
    /// Page-locked allocations of this device: start -> bytes.
    pinned: Mutex<BTreeMap<usize, usize>>,
}

impl Traced {
    pub fn new(inner: Arc<dyn Gpu>) -> Self {
        Traced { inner, pinned: Mutex::new(BTreeMap::new()) }
    }

    fn pinned(&self) -> std::sync::MutexGuard<'_, BTreeMap<usize, usize>> {
        self.pinned.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// "async" when `[p, p + bytes)` lies inside one page-locked allocation, else "sync".
    fn mode(&self, p: usize, bytes: usize) -> &'static str {
        let inside = self.pinned().range(..=p).next_back().is_some_and(|(&s, &n)| p + bytes <= s + n);
        if inside { "async" } else { "sync" }
    }

    fn copy(&self, dir: &str, bytes: usize, mode: &str) {
        if on() {
            emit(format!("copy\t{dir}\t{bytes}\t{mode}"));
        }
    }
}

impl Gpu for Traced {
    fn info(&self) -> &DeviceInfo {
        self.inner.info()
    }
    fn mem_info(&self) -> Result<(usize, usize)> {
        self.inner.mem_info()
    }
    fn malloc(&self, bytes: usize) -> Result<u64> {
        self.inner.malloc(bytes)
    }
    fn free(&self, ptr: u64) -> Result<()> {
        self.inner.free(ptr)
    }
    fn malloc_host(&self, bytes: usize) -> Result<*mut u8> {
        let p = self.inner.malloc_host(bytes)?;
        self.pinned().insert(p as usize, bytes);
        Ok(p)
    }
    fn free_host(&self, ptr: *mut u8) -> Result<()> {
        self.pinned().remove(&(ptr as usize));
        self.inner.free_host(ptr)
    }
    unsafe fn htod(&self, dst: u64, src: *const u8, bytes: usize, stream: u64) -> Result<()> {
        // SAFETY: forwarded contract.
        unsafe { self.inner.htod(dst, src, bytes, stream)? };
        if on() {
            self.copy("HtoD", bytes, self.mode(src as usize, bytes));
        }
        Ok(())
    }
    unsafe fn dtoh(&self, dst: *mut u8, src: u64, bytes: usize, stream: u64) -> Result<()> {
        // SAFETY: forwarded contract.
        unsafe { self.inner.dtoh(dst, src, bytes, stream)? };
        if on() {
            self.copy("DtoH", bytes, self.mode(dst as usize, bytes));
        }
        Ok(())
    }
    unsafe fn dtod(&self, dst: u64, src: u64, bytes: usize, stream: u64) -> Result<()> {
        // SAFETY: forwarded contract.
        unsafe { self.inner.dtod(dst, src, bytes, stream)? };
        self.copy("DtoD", bytes, "async");
        Ok(())
    }
    unsafe fn memset(&self, dst: u64, value: u8, bytes: usize, stream: u64) -> Result<()> {
        // SAFETY: forwarded contract.
        unsafe { self.inner.memset(dst, value, bytes, stream)? };
        if on() {
            emit(format!("memset\t{bytes}\t{stream}"));
        }
        Ok(())
    }
    unsafe fn launch(&self, kernel: &str, cfg: &LaunchCfg, params: &mut [*mut c_void], stream: u64) -> Result<()> {
        // SAFETY: forwarded contract.
        unsafe { self.inner.launch(kernel, cfg, params, stream)? };
        if on() {
            let [gx, gy, gz] = cfg.grid;
            let [bx, by, bz] = cfg.block;
            emit(format!("launch\t{kernel}\t{gx},{gy},{gz}\t{bx},{by},{bz}\t{stream}"));
        }
        Ok(())
    }
    fn stream_new(&self, non_blocking: bool, priority: i32) -> Result<u64> {
        self.inner.stream_new(non_blocking, priority)
    }
    fn stream_free(&self, stream: u64) -> Result<()> {
        self.inner.stream_free(stream)
    }
    fn stream_sync(&self, stream: u64) -> Result<()> {
        if on() {
            emit(format!("sync\tstream\t{stream}"));
        }
        self.inner.stream_sync(stream)
    }
    fn stream_wait(&self, stream: u64, event: u64) -> Result<()> {
        self.inner.stream_wait(stream, event)
    }
    fn event_record(&self, stream: u64) -> Result<u64> {
        self.inner.event_record(stream)
    }
    fn event_done(&self, event: u64) -> Result<bool> {
        self.inner.event_done(event)
    }
    fn event_free(&self, event: u64) {
        self.inner.event_free(event)
    }
    fn sync(&self) -> Result<()> {
        if on() {
            emit("sync\tdevice".into());
        }
        self.inner.sync()
    }
    unsafe fn gemm(&self, call: &GemmCall, stream: u64) -> Result<()> {
        // SAFETY: forwarded contract.
        unsafe { self.inner.gemm(call, stream)? };
        if on() {
            let c = call;
            emit(format!("gemm\t{}\t{},{},{}\t{}\t{stream}", c.dtype.name(), c.m, c.n, c.k, c.batch));
        }
        Ok(())
    }
}
