//! What both caches share: the queue of events that keep freed blocks from reuse, the state of
//! a block, the statistics, and the lock.

use super::Memory;
use crate::core::error::{Code, Error, Result};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Where a block is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum State {
    /// Handed out to a caller.
    Live,
    /// In a free list, reusable.
    Free,
    /// Freed by the caller, but work queued on other streams may still use it: `n` events are
    /// outstanding, and the block enters the free lists when the last one completes.
    Waiting(usize),
}

/// Counters of a cache, in bytes and counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Bytes of blocks handed out and not freed. A block's size is its rounded size (or the
    /// whole free block it came from, when the rest was too small to split off).
    pub allocated: usize,
    /// Bytes obtained from the device (`raw_alloc`) and not yet returned.
    pub reserved: usize,
    /// Highest `allocated` since creation or the last `reset_peak`.
    pub peak_allocated: usize,
    /// Highest `reserved` since creation or the last `reset_peak`.
    pub peak_reserved: usize,
    /// Number of raw allocations held (device segments, or pinned host blocks).
    pub segments: usize,
    /// Number of blocks handed out and not freed.
    pub active_blocks: usize,
    /// Bytes of free blocks ready for reuse (blocks waiting on events are not counted).
    pub cached_free: usize,
}

impl Stats {
    pub(super) fn hand_out(&mut self, size: usize) {
        self.allocated += size;
        self.active_blocks += 1;
        self.peak_allocated = self.peak_allocated.max(self.allocated);
    }
    pub(super) fn take_back(&mut self, size: usize) {
        self.allocated -= size;
        self.active_blocks -= 1;
    }
    pub(super) fn reserve(&mut self, size: usize) {
        self.reserved += size;
        self.segments += 1;
        self.peak_reserved = self.peak_reserved.max(self.reserved);
    }
    pub(super) fn unreserve(&mut self, size: usize) {
        self.reserved -= size;
        self.segments -= 1;
    }
    pub(super) fn reset_peak(&mut self) {
        self.peak_allocated = self.allocated;
        self.peak_reserved = self.reserved;
    }
}

/// Events recorded when a block used by other streams was freed, each with the block (its
/// address) it holds back.
#[derive(Default)]
pub(super) struct Events {
    queue: Vec<(u64, u64)>,
}

impl Events {
    /// Records one event on each of `streams` for `block`; returns how many. If one fails, the
    /// events already recorded are released and the error returned (nothing is queued).
    pub fn record<M: Memory>(&mut self, mem: &M, block: u64, streams: &[u64]) -> Result<usize> {
        let start = self.queue.len();
        for &stream in streams {
            match mem.record_event(stream) {
                Ok(event) => self.queue.push((event, block)),
                Err(e) => {
                    for (event, _) in self.queue.drain(start..) {
                        mem.free_event(event);
                    }
                    return Err(e);
                }
            }
        }
        Ok(streams.len())
    }

    /// Releases every completed event and calls `done(block)` for each. Events are checked in
    /// any order (those of different streams complete out of order). An event whose query
    /// fails stays queued (its block stays held back); the first such error is returned after
    /// the others were checked.
    pub fn poll<M: Memory>(&mut self, mem: &M, mut done: impl FnMut(u64)) -> Result<()> {
        let mut first_err = None;
        let mut i = 0;
        while i < self.queue.len() {
            let (event, block) = self.queue[i];
            match mem.event_done(event) {
                Ok(true) => {
                    mem.free_event(event);
                    self.queue.swap_remove(i);
                    done(block);
                }
                Ok(false) => i += 1,
                Err(e) => {
                    first_err.get_or_insert(e);
                    i += 1;
                }
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    /// Releases every event, complete or not (the cache is going away).
    pub fn clear<M: Memory>(&mut self, mem: &M) {
        for (event, _) in self.queue.drain(..) {
            mem.free_event(event);
        }
    }
}

/// Locks a cache's state. A panic while it was held (only possible from a backend's `Memory`
/// call) leaves the state as consistent as that call left it, so the lock is taken anyway
/// rather than making every later call panic.
pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `raw_alloc(bytes)`; on out-of-memory, `release()` frees what the cache holds and the
/// allocation is tried once more. The error of the second failure is returned as is.
pub(super) fn alloc_retry<M: Memory>(mem: &M, bytes: usize, release: impl FnOnce()) -> Result<u64> {
    let ptr = match mem.raw_alloc(bytes) {
        Err(e) if e.code == Code::TH_ERR_ALLOC => {
            release();
            mem.raw_alloc(bytes)?
        }
        r => r?,
    };
    // 0 is the "no block" answer for 0-byte requests, so it cannot name a real block.
    if ptr == 0 {
        return Err(Error::internal(format!("the device returned address 0 for {bytes} bytes")));
    }
    Ok(ptr)
}

/// The error of a request of `bytes` that failed: an out-of-memory error restated with what the
/// cache holds (after it released what it could), any other error as is.
pub(super) fn oom_error(who: &str, e: Error, bytes: usize, s: &Stats) -> Error {
    if e.code != Code::TH_ERR_ALLOC {
        return e;
    }
    Error::alloc(format!(
        "{who}: out of memory: tried to allocate {bytes} bytes; {} bytes allocated, {} bytes reserved, {} bytes \
         cached ({})",
        s.allocated, s.reserved, s.cached_free, e.msg
    ))
}

/// The error for a pointer that is not a live block: `known` if it is a block freed already.
pub(super) fn not_live(who: &str, what: &str, ptr: u64, known: bool) -> Error {
    if known {
        Error::invalid(format!("{who} {what}: block {ptr:#x} was already freed"))
    } else {
        Error::invalid(format!("{who} {what}: {ptr:#x} is not a pointer returned by this allocator"))
    }
}
