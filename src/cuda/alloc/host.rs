//! Pinned host memory for asynchronous copies (`THCudaHostAlloc`). This first step allocates
//! and frees directly (copies through it are synchronized before returning, so no event has to
//! guard reuse); the caching host allocator replaces it behind the same API.

use super::Memory;
use crate::core::error::{Error, Result};
use std::collections::HashMap;
use std::sync::Mutex;

pub struct HostCache<M: Memory> {
    mem: M,
    live: Mutex<HashMap<u64, usize>>,
}

impl<M: Memory> HostCache<M> {
    pub fn new(mem: M) -> Self {
        HostCache { mem, live: Mutex::new(HashMap::new()) }
    }

    fn live(&self) -> std::sync::MutexGuard<'_, HashMap<u64, usize>> {
        self.live.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn malloc(&self, bytes: usize) -> Result<u64> {
        if bytes == 0 {
            return Ok(0);
        }
        let p = self.mem.raw_alloc(bytes)?;
        self.live().insert(p, bytes);
        Ok(p)
    }

    pub fn free(&self, ptr: u64) -> Result<()> {
        if ptr == 0 {
            return Ok(());
        }
        self.live()
            .remove(&ptr)
            .ok_or_else(|| Error::invalid(format!("{ptr:#x} was not allocated by THCudaHostAlloc")))?;
        self.mem.raw_free(ptr);
        Ok(())
    }

    /// Checks the block is live (see the module docs).
    pub fn record_event(&self, ptr: u64, _stream: u64) -> Result<()> {
        if self.live().contains_key(&ptr) {
            Ok(())
        } else {
            Err(Error::invalid(format!("{ptr:#x} was not allocated by THCudaHostAlloc")))
        }
    }

    pub fn empty_cache(&self) {}
}

impl<M: Memory> Drop for HostCache<M> {
    fn drop(&mut self) {
        for (&p, _) in self.live().iter() {
            self.mem.raw_free(p);
        }
    }
}
