//! THCCachingAllocator: device memory handed out in blocks carved from cached segments, so a
//! freed block is reused without a `cudaFree`/`cudaMalloc` round trip (both synchronize the
//! device).
//!
//! THC's rules, kept here:
//! - request sizes are rounded up to a multiple of 512 B; 0 bytes gives address 0 and no block;
//! - requests of at most 1 MiB are served from the *small* pool, whose segments are 2 MiB;
//!   larger requests from the *large* pool: under 10 MiB they get a 20 MiB segment, from
//!   10 MiB on a segment of their own size rounded up to 2 MiB;
//! - free blocks are kept per pool in a set ordered by (stream, size, address), and a request
//!   takes the smallest free block of its stream that fits (best fit, lowest address first);
//! - a block larger than the request is split and the rest stays free if it is worth keeping:
//!   in the small pool any rest (at least 512 B), in the large pool a rest above 1 MiB;
//! - a block is reused only by the stream it was allocated on (work on one stream is ordered,
//!   so a block freed on it can be reused by later work on it at once). A block used by other
//!   streams (`record_stream`) gets one event per such stream when freed and is not reused
//!   until all have completed; completions are checked lazily at the start of `malloc`,
//!   `free` and `empty_cache`;
//! - a freed block merges with its free neighbours in the same segment;
//! - when the device is out of memory, every entirely free segment is released and the
//!   allocation tried once more.

use super::Memory;
use super::events::{Events, State, alloc_retry, lock, not_live, oom_error};
use crate::core::error::{Error, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

pub use super::events::Stats;

const WHO: &str = "THCCachingAllocator";
/// Sizes are multiples of this.
const ROUND: usize = 512;
/// Largest request served from the small pool.
const SMALL_SIZE: usize = 1 << 20;
/// Segment size of the small pool.
const SMALL_SEGMENT: usize = 2 << 20;
/// Segment size of the large pool for requests under `MIN_LARGE_ALLOC`.
const LARGE_SEGMENT: usize = 20 << 20;
/// From this size on a request gets a segment of its own.
const MIN_LARGE_ALLOC: usize = 10 << 20;
/// Own segments are multiples of this.
const ROUND_LARGE: usize = 2 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pool {
    Small = 0,
    Large = 1,
}

/// A piece of a segment. Blocks of a segment tile it without gaps, so a block's neighbours are
/// the blocks at the addresses just below and at `address + size`.
struct Block {
    size: usize,
    stream: u64,
    /// Base address of the segment holding the block.
    segment: u64,
    pool: Pool,
    state: State,
    /// Streams other than `stream` that used the block (`record_stream`).
    uses: Vec<u64>,
}

#[derive(Default)]
struct Inner {
    /// Every block, by address.
    blocks: BTreeMap<u64, Block>,
    /// Segment base -> size.
    segments: BTreeMap<u64, usize>,
    /// Free blocks per pool as (stream, size, address).
    free: [BTreeSet<(u64, usize, u64)>; 2],
    events: Events,
    stats: Stats,
}

/// THC's caching device allocator over a `Memory`. Thread-safe: all state is behind one lock.
pub struct DeviceCache<M: Memory> {
    mem: M,
    inner: Mutex<Inner>,
}

/// The pool and segment size for a rounded request size, or `None` if it overflows.
fn segment_for(size: usize) -> Option<(Pool, usize)> {
    if size <= SMALL_SIZE {
        Some((Pool::Small, SMALL_SEGMENT))
    } else if size < MIN_LARGE_ALLOC {
        Some((Pool::Large, LARGE_SEGMENT))
    } else {
        Some((Pool::Large, size.checked_next_multiple_of(ROUND_LARGE)?))
    }
}

impl<M: Memory> DeviceCache<M> {
    pub fn new(mem: M) -> Self {
        DeviceCache { mem, inner: Mutex::new(Inner::default()) }
    }

    pub fn memory(&self) -> &M {
        &self.mem
    }

    /// A block of at least `bytes` for work on `stream` (0 bytes: address 0).
    ///
    /// A failed query of an earlier event (a device error) fails the call, as THC's check of
    /// `cudaEventQuery` did; the event stays queued and is asked again next time.
    pub fn malloc(&self, bytes: usize, stream: u64) -> Result<u64> {
        let mut g = lock(&self.inner);
        g.process_events(&self.mem)?;
        if bytes == 0 {
            return Ok(0);
        }
        let too_big = || Error::alloc(format!("{WHO}: cannot allocate {bytes} bytes (too large)"));
        let size = bytes.checked_next_multiple_of(ROUND).ok_or_else(too_big)?;
        let (pool, seg_size) = segment_for(size).ok_or_else(too_big)?;
        let ptr = match g.take_free(pool, stream, size) {
            Some(ptr) => ptr,
            None => {
                let inner = &mut *g;
                let base = alloc_retry(&self.mem, seg_size, || inner.release_cached(&self.mem))
                    .map_err(|e| oom_error(WHO, e, bytes, &inner.stats))?;
                inner.segments.insert(base, seg_size);
                inner.stats.reserve(seg_size);
                let block = Block { size: seg_size, stream, segment: base, pool, state: State::Free, uses: Vec::new() };
                inner.blocks.insert(base, block);
                base
            }
        };
        g.split(ptr, size);
        let inner = &mut *g;
        let block = inner.blocks.get_mut(&ptr).ok_or_else(|| Error::internal(format!("lost block {ptr:#x}")))?;
        block.state = State::Live;
        inner.stats.hand_out(block.size);
        Ok(ptr)
    }

    /// Returns a block from `malloc` (0: nothing to do). If other streams used it, it is
    /// reused only once the work they had queued at this point has completed.
    ///
    /// Failing to query earlier events does not fail a free (those blocks just stay held
    /// back); failing to record this block's events does, and the block then stays allocated.
    pub fn free(&self, ptr: u64) -> Result<()> {
        let mut g = lock(&self.inner);
        let _ = g.process_events(&self.mem);
        if ptr == 0 {
            return Ok(());
        }
        let (size, uses) = g.live(ptr, "free")?;
        if !uses.is_empty() {
            let n = g.events.record(&self.mem, ptr, &uses)?;
            if let Some(b) = g.blocks.get_mut(&ptr) {
                b.state = State::Waiting(n);
                b.uses.clear();
            }
        } else {
            g.release_block(ptr);
        }
        g.stats.take_back(size);
        Ok(())
    }

    /// Marks that work on `stream` uses the block at `ptr`, so that freeing it waits for that
    /// work (nothing to do for the block's own stream).
    pub fn record_stream(&self, ptr: u64, stream: u64) -> Result<()> {
        let mut g = lock(&self.inner);
        g.live(ptr, "record_stream")?;
        if let Some(b) = g.blocks.get_mut(&ptr)
            && b.stream != stream
            && !b.uses.contains(&stream)
        {
            b.uses.push(stream);
        }
        Ok(())
    }

    /// Returns every entirely free segment to the device.
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

    /// The segment (base, size) holding the live block `ptr`, as
    /// `THCCachingAllocator_getBaseAllocation`.
    pub fn base_allocation(&self, ptr: u64) -> Option<(u64, usize)> {
        let g = lock(&self.inner);
        let b = g.blocks.get(&ptr).filter(|b| b.state == State::Live)?;
        Some((b.segment, *g.segments.get(&b.segment)?))
    }

    /// The size of the live block `ptr` (its rounded size, or more if it was not split).
    pub fn block_size(&self, ptr: u64) -> Option<usize> {
        lock(&self.inner).blocks.get(&ptr).filter(|b| b.state == State::Live).map(|b| b.size)
    }

    /// The largest free block ready for reuse, in either pool (`THCudaMemGetInfoCached`).
    pub fn largest_free(&self) -> usize {
        let g = lock(&self.inner);
        g.free.iter().flatten().map(|&(_, size, _)| size).max().unwrap_or(0)
    }
}

impl Inner {
    /// The size and other-stream uses of the live block `ptr`, or an argument error.
    fn live(&self, ptr: u64, what: &str) -> Result<(usize, Vec<u64>)> {
        match self.blocks.get(&ptr) {
            Some(b) if b.state == State::Live => Ok((b.size, b.uses.clone())),
            b => Err(not_live(WHO, what, ptr, b.is_some())),
        }
    }

    /// Takes the smallest free block of `stream` in `pool` holding `size` bytes out of the
    /// free list.
    fn take_free(&mut self, pool: Pool, stream: u64, size: usize) -> Option<u64> {
        let set = &mut self.free[pool as usize];
        let &key @ (s, found, ptr) = set.range((stream, size, 0)..).next()?;
        if s != stream {
            return None;
        }
        set.remove(&key);
        self.stats.cached_free -= found;
        Some(ptr)
    }

    /// Shrinks the (taken) block `ptr` to `size` if the rest is worth keeping as a free block.
    fn split(&mut self, ptr: u64, size: usize) {
        let Some(b) = self.blocks.get_mut(&ptr) else { return };
        let rest = b.size - size;
        let worth = match b.pool {
            Pool::Small => rest >= ROUND,
            Pool::Large => rest > SMALL_SIZE,
        };
        if !worth {
            return;
        }
        b.size = size;
        let tail = Block {
            size: rest,
            stream: b.stream,
            segment: b.segment,
            pool: b.pool,
            state: State::Free,
            uses: Vec::new(),
        };
        self.insert_free(ptr + size as u64, tail);
    }

    fn insert_free(&mut self, ptr: u64, mut b: Block) {
        b.state = State::Free;
        self.free[b.pool as usize].insert((b.stream, b.size, ptr));
        self.stats.cached_free += b.size;
        self.blocks.insert(ptr, b);
    }

    /// Removes the free block `ptr` from the free list and the block map.
    fn remove_free(&mut self, ptr: u64) -> Option<Block> {
        let b = self.blocks.remove(&ptr)?;
        self.free[b.pool as usize].remove(&(b.stream, b.size, ptr));
        self.stats.cached_free -= b.size;
        Some(b)
    }

    /// Makes the block `ptr` free, merged with its free neighbours in the same segment.
    fn release_block(&mut self, ptr: u64) {
        let Some(mut b) = self.blocks.remove(&ptr) else { return };
        let mut start = ptr;
        let end = ptr + b.size as u64;
        if let Some(next) = self.blocks.get(&end)
            && next.segment == b.segment
            && next.state == State::Free
            && let Some(next) = self.remove_free(end)
        {
            b.size += next.size;
        }
        if let Some((&p, prev)) = self.blocks.range(..ptr).next_back()
            && prev.segment == b.segment
            && prev.state == State::Free
            && p + prev.size as u64 == ptr
            && let Some(prev) = self.remove_free(p)
        {
            start = p;
            b.size += prev.size;
        }
        self.insert_free(start, b);
    }

    /// Frees the blocks whose events all completed. Returns the first failed query.
    fn process_events<M: Memory>(&mut self, mem: &M) -> Result<()> {
        let mut ready = Vec::new();
        let res = self.events.poll(mem, |ptr| ready.push(ptr));
        for ptr in ready {
            let Some(b) = self.blocks.get_mut(&ptr) else { continue };
            match b.state {
                State::Waiting(1) => self.release_block(ptr),
                State::Waiting(n) => b.state = State::Waiting(n - 1),
                _ => {}
            }
        }
        res
    }

    /// Returns every segment made of one free block to the device.
    fn release_cached<M: Memory>(&mut self, mem: &M) {
        let whole: Vec<u64> = self
            .free
            .iter()
            .flatten()
            .filter(|&&(_, size, ptr)| self.segments.get(&ptr) == Some(&size))
            .map(|&(_, _, ptr)| ptr)
            .collect();
        for ptr in whole {
            self.remove_free(ptr);
            if let Some(size) = self.segments.remove(&ptr) {
                self.stats.unreserve(size);
            }
            mem.raw_free(ptr);
        }
    }
}

impl<M: Memory> Drop for DeviceCache<M> {
    fn drop(&mut self) {
        let inner = self.inner.get_mut().unwrap_or_else(|e| e.into_inner());
        inner.events.clear(&self.mem);
        for &base in inner.segments.keys() {
            self.mem.raw_free(base);
        }
        inner.segments.clear();
    }
}

#[cfg(test)]
mod tests;
