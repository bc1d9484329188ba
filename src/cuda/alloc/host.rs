//! THCCachingHostAllocator: page-locked (pinned) host memory, which asynchronous copies need and
//! which is slow to allocate and free, cached in whole blocks.
//!
//! Rules:
//! - a request is rounded up to a power of two and served by a free block of exactly that size
//!   (so a small request never pins down a large block), else by a new raw allocation; 0 bytes
//!   gives address 0 and no block;
//! - every stream that copies from or to a block is named by `record_event` after the copy is
//!   queued; when the block is freed, an event is recorded on each of those streams and the
//!   block is reused only when all have completed (the host could otherwise overwrite memory a
//!   queued copy still reads). Completions are checked lazily at the start of `malloc`, `free`
//!   and `empty_cache`;
//! - when pinning fails for lack of memory, every free block is released and the allocation
//!   tried once more.

use super::Memory;
use super::events::{Events, State, alloc_retry, lock, not_live, oom_error};
use crate::core::error::{Error, Result};
use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

pub use super::events::Stats;

const WHO: &str = "THCCachingHostAllocator";

struct Block {
    size: usize,
    state: State,
    /// Streams that queued copies using the block since it was handed out.
    streams: Vec<u64>,
}

#[derive(Default)]
struct Inner {
    blocks: HashMap<u64, Block>,
    /// Free blocks as (size, address).
    free: BTreeSet<(usize, u64)>,
    events: Events,
    stats: Stats,
}

/// THC's caching pinned-host allocator over a `Memory`. Thread-safe: all state is behind one
/// lock. `Stats::segments` counts the pinned blocks held.
pub struct HostCache<M: Memory> {
    mem: M,
    inner: Mutex<Inner>,
}

impl<M: Memory> HostCache<M> {
    pub fn new(mem: M) -> Self {
        HostCache { mem, inner: Mutex::new(Inner::default()) }
    }

    pub fn memory(&self) -> &M {
        &self.mem
    }

    /// A pinned block of at least `bytes` (0 bytes: address 0).
    ///
    /// A failed query of an earlier event (a device error) fails the call, as THC's check of
    /// `cudaEventQuery` did; the event stays queued and is asked again next time.
    pub fn malloc(&self, bytes: usize) -> Result<u64> {
        let mut g = lock(&self.inner);
        g.process_events(&self.mem)?;
        if bytes == 0 {
            return Ok(0);
        }
        let size = bytes
            .checked_next_power_of_two()
            .ok_or_else(|| Error::alloc(format!("{WHO}: cannot allocate {bytes} bytes (too large)")))?;
        let inner = &mut *g;
        let ptr = match inner.free.range((size, 0)..).next().copied().filter(|&(s, _)| s == size) {
            Some(key) => {
                inner.free.remove(&key);
                inner.stats.cached_free -= size;
                key.1
            }
            None => {
                let ptr = alloc_retry(&self.mem, size, || inner.release_cached(&self.mem))
                    .map_err(|e| oom_error(WHO, e, bytes, &inner.stats))?;
                inner.stats.reserve(size);
                ptr
            }
        };
        inner.blocks.insert(ptr, Block { size, state: State::Live, streams: Vec::new() });
        inner.stats.hand_out(size);
        Ok(ptr)
    }

    /// Returns a block from `malloc` (0: nothing to do). It is reused only once every copy
    /// named by `record_event` has completed.
    ///
    /// Failing to query earlier events does not fail a free (those blocks just stay held
    /// back); failing to record this block's events does, and the block then stays allocated.
    pub fn free(&self, ptr: u64) -> Result<()> {
        let mut g = lock(&self.inner);
        let _ = g.process_events(&self.mem);
        if ptr == 0 {
            return Ok(());
        }
        let streams = g.live(ptr, "free")?.streams.clone();
        let inner = &mut *g;
        let state = if streams.is_empty() {
            State::Free
        } else {
            State::Waiting(inner.events.record(&self.mem, ptr, &streams)?)
        };
        let Some(b) = inner.blocks.get_mut(&ptr) else { return Ok(()) };
        b.streams.clear();
        b.state = state;
        let size = b.size;
        inner.stats.take_back(size);
        if state == State::Free {
            inner.make_free(ptr, size);
        }
        Ok(())
    }

    /// Notes that a copy using the block at `ptr` was queued on `stream` (THC's
    /// `THCCachingHostAllocator_recordEvent`); the event itself is recorded when the block is
    /// freed, so it covers every such copy.
    pub fn record_event(&self, ptr: u64, stream: u64) -> Result<()> {
        let mut g = lock(&self.inner);
        g.live(ptr, "record_event")?;
        if let Some(b) = g.blocks.get_mut(&ptr)
            && !b.streams.contains(&stream)
        {
            b.streams.push(stream);
        }
        Ok(())
    }

    /// Unpins every free block.
    pub fn empty_cache(&self) {
        let mut g = lock(&self.inner);
        let _ = g.process_events(&self.mem);
        g.release_cached(&self.mem);
    }

    pub fn stats(&self) -> Stats {
        lock(&self.inner).stats
    }

    /// Sets the peaks to the current values.
    pub fn reset_peak(&self) {
        lock(&self.inner).stats.reset_peak();
    }

    /// The size of the live block `ptr` (its request rounded up to a power of two).
    pub fn block_size(&self, ptr: u64) -> Option<usize> {
        lock(&self.inner).blocks.get(&ptr).filter(|b| b.state == State::Live).map(|b| b.size)
    }
}

impl Inner {
    fn live(&self, ptr: u64, what: &str) -> Result<&Block> {
        match self.blocks.get(&ptr) {
            Some(b) if b.state == State::Live => Ok(b),
            b => Err(not_live(WHO, what, ptr, b.is_some())),
        }
    }

    fn make_free(&mut self, ptr: u64, size: usize) {
        self.free.insert((size, ptr));
        self.stats.cached_free += size;
    }

    fn process_events<M: Memory>(&mut self, mem: &M) -> Result<()> {
        let mut ready = Vec::new();
        let res = self.events.poll(mem, |ptr| ready.push(ptr));
        for ptr in ready {
            let Some(b) = self.blocks.get_mut(&ptr) else { continue };
            match b.state {
                State::Waiting(1) => {
                    b.state = State::Free;
                    let size = b.size;
                    self.make_free(ptr, size);
                }
                State::Waiting(n) => b.state = State::Waiting(n - 1),
                _ => {}
            }
        }
        res
    }

    /// Unpins every free block.
    fn release_cached<M: Memory>(&mut self, mem: &M) {
        for (size, ptr) in std::mem::take(&mut self.free) {
            self.blocks.remove(&ptr);
            self.stats.cached_free -= size;
            self.stats.unreserve(size);
            mem.raw_free(ptr);
        }
    }
}

impl<M: Memory> Drop for HostCache<M> {
    fn drop(&mut self) {
        let inner = self.inner.get_mut().unwrap_or_else(|e| e.into_inner());
        inner.events.clear(&self.mem);
        for &ptr in inner.blocks.keys() {
            self.mem.raw_free(ptr);
        }
        inner.blocks.clear();
    }
}

#[cfg(test)]
mod tests;
