//! THC's two caching allocators, written against `Memory` so their bookkeeping is tested on
//! the host: `device` (THCCachingAllocator) and `host` (THCCachingHostAllocator). `events`
//! holds what they share (the event queue that holds freed blocks back, statistics, the
//! out-of-memory retry).

use crate::core::error::Result;

pub mod device;
mod events;
#[cfg(test)]
mod fake;
pub mod host;

pub use events::Stats;

/// What a caching allocator needs from a device: raw memory and events. Addresses are `u64`
/// (device addresses; pinned host addresses for the host cache); streams and events are the
/// backend's ids (stream 0 is the device's default stream).
pub trait Memory: Send + Sync {
    /// `bytes` of fresh memory. Out of memory is an `Error` with code `TH_ERR_ALLOC` (the
    /// caches then free what they hold and retry once); any other error is passed on.
    fn raw_alloc(&self, bytes: usize) -> Result<u64>;
    /// Returns memory from `raw_alloc` (errors are the backend's to report; ignored here).
    fn raw_free(&self, ptr: u64);
    /// Records an event on `stream` after the work queued so far; returns its id.
    fn record_event(&self, stream: u64) -> Result<u64>;
    /// Whether the work before the event has completed.
    fn event_done(&self, event: u64) -> Result<bool>;
    /// Releases an event.
    fn free_event(&self, event: u64);
}
