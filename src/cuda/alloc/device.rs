//! Device memory accounting. This first step hands each request straight to the device (no
//! cache: `empty_cache` has nothing to release and `record_stream` nothing to delay, since a
//! block is returned to the driver, which waits for its pending work, when freed) and keeps
//! THC's statistics. The caching allocator with THC's rules (512 B rounding, 2 MiB segments,
//! per-stream best fit, split/coalesce, events, OOM retry) replaces it behind the same API.

use super::Memory;
use crate::core::error::{Error, Result};
use std::collections::HashMap;
use std::sync::Mutex;

/// Bytes (and counts) of a device's allocator.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub allocated: usize,
    pub reserved: usize,
    pub peak_allocated: usize,
    pub peak_reserved: usize,
    pub segments: usize,
    pub active_blocks: usize,
    pub cached_free: usize,
}

struct State {
    live: HashMap<u64, usize>,
    stats: Stats,
}

pub struct DeviceCache<M: Memory> {
    mem: M,
    state: Mutex<State>,
}

impl<M: Memory> DeviceCache<M> {
    pub fn new(mem: M) -> Self {
        DeviceCache { mem, state: Mutex::new(State { live: HashMap::new(), stats: Stats::default() }) }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `bytes` of device memory (0 bytes: address 0, no block).
    pub fn malloc(&self, bytes: usize, _stream: u64) -> Result<u64> {
        if bytes == 0 {
            return Ok(0);
        }
        let p = self.mem.raw_alloc(bytes)?;
        let mut s = self.state();
        s.live.insert(p, bytes);
        let st = &mut s.stats;
        st.allocated += bytes;
        st.reserved += bytes;
        st.segments += 1;
        st.active_blocks += 1;
        st.peak_allocated = st.peak_allocated.max(st.allocated);
        st.peak_reserved = st.peak_reserved.max(st.reserved);
        Ok(p)
    }

    /// Returns a block (0 is ignored; an unknown address is an error).
    pub fn free(&self, ptr: u64) -> Result<()> {
        if ptr == 0 {
            return Ok(());
        }
        let mut s = self.state();
        let n = s.live.remove(&ptr).ok_or_else(|| Error::invalid(format!("{ptr:#x} is not a live device block")))?;
        let st = &mut s.stats;
        st.allocated -= n;
        st.reserved -= n;
        st.segments -= 1;
        st.active_blocks -= 1;
        drop(s);
        self.mem.raw_free(ptr);
        Ok(())
    }

    /// Notes that `stream` uses the block (checked to be live; see the module docs).
    pub fn record_stream(&self, ptr: u64, _stream: u64) -> Result<()> {
        self.block_size(ptr).map(|_| ()).ok_or_else(|| Error::invalid(format!("{ptr:#x} is not a live device block")))
    }

    /// Nothing is cached (see the module docs).
    pub fn empty_cache(&self) {}

    pub fn stats(&self) -> Stats {
        self.state().stats
    }

    /// The allocation holding `ptr` (each block is its own allocation here).
    pub fn base_allocation(&self, ptr: u64) -> Option<(u64, usize)> {
        let s = self.state();
        s.live.iter().find(|&(&p, &n)| ptr >= p && ptr < p + n as u64).map(|(&p, &n)| (p, n))
    }

    pub fn block_size(&self, ptr: u64) -> Option<usize> {
        self.state().live.get(&ptr).copied()
    }

    /// The largest cached free block (none are cached).
    pub fn largest_free(&self) -> usize {
        0
    }
}

impl<M: Memory> Drop for DeviceCache<M> {
    fn drop(&mut self) {
        for (&p, _) in self.state().live.iter() {
            self.mem.raw_free(p);
        }
    }
}
