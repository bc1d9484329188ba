//! A `Memory` for the caches' tests: addresses from a counter (raw allocations are adjacent
//! and never reused, so a reused address can only come from a cache), a capacity to force
//! out-of-memory, events that complete only when the test says so, and counters.

use super::Memory;
use crate::core::error::{Code, Error, Result};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

/// First address handed out.
pub const BASE: u64 = 0x7000_0000_0000;

#[derive(Clone)]
pub struct FakeState {
    next: u64,
    /// Bytes `raw_alloc` may hold at once.
    pub capacity: usize,
    /// Bytes held.
    pub used: usize,
    /// Raw allocations held: address -> size.
    pub live: BTreeMap<u64, usize>,
    pub allocs: usize,
    pub frees: usize,
    /// `raw_alloc` calls refused for lack of capacity.
    pub ooms: usize,
    /// Event id -> (stream, completed).
    pub events: HashMap<u64, (u64, bool)>,
    next_event: u64,
    pub recorded: usize,
    pub released: usize,
    /// Makes every `raw_alloc` fail with this (non-OOM) code.
    pub fail_with: Option<Code>,
}

/// Cloning shares the state, so a test keeps a handle after giving one to a cache.
#[derive(Clone)]
pub struct Fake(Arc<Mutex<FakeState>>);

impl Fake {
    pub fn new(capacity: usize) -> Self {
        Fake(Arc::new(Mutex::new(FakeState {
            next: BASE,
            capacity,
            used: 0,
            live: BTreeMap::new(),
            allocs: 0,
            frees: 0,
            ooms: 0,
            events: HashMap::new(),
            next_event: 1,
            recorded: 0,
            released: 0,
            fail_with: None,
        })))
    }

    pub fn st(&self) -> MutexGuard<'_, FakeState> {
        // A failed assertion of one test must not turn the cache's `Drop` into a second panic.
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A copy of the state (to read several fields in one expression without locking twice).
    pub fn snap(&self) -> FakeState {
        self.st().clone()
    }

    /// Completes the work before `event`.
    pub fn complete(&self, event: u64) {
        self.st().events.get_mut(&event).expect("completing an unknown event").1 = true;
    }

    pub fn complete_all(&self) {
        self.st().events.values_mut().for_each(|e| e.1 = true);
    }

    /// Ids of the events alive now, ascending, with their streams.
    pub fn alive_events(&self) -> Vec<(u64, u64)> {
        let mut v: Vec<_> = self.st().events.iter().map(|(&id, &(stream, _))| (id, stream)).collect();
        v.sort();
        v
    }

    /// Ids of events recorded from `from` on (ids are handed out in order).
    pub fn events_since(&self, from: u64) -> Vec<u64> {
        let mut v: Vec<_> = self.st().events.keys().copied().filter(|&id| id >= from).collect();
        v.sort();
        v
    }

    pub fn next_event_id(&self) -> u64 {
        self.st().next_event
    }
}

impl Memory for Fake {
    fn raw_alloc(&self, bytes: usize) -> Result<u64> {
        let mut s = self.st();
        assert!(bytes > 0, "raw_alloc(0)");
        if let Some(code) = s.fail_with {
            return Err(Error::new(code, "fake device failure"));
        }
        if s.used + bytes > s.capacity {
            s.ooms += 1;
            return Err(Error::alloc(format!("fake device: {bytes} bytes do not fit")));
        }
        let ptr = s.next;
        s.next += bytes as u64;
        s.used += bytes;
        s.allocs += 1;
        s.live.insert(ptr, bytes);
        Ok(ptr)
    }

    fn raw_free(&self, ptr: u64) {
        let mut s = self.st();
        let bytes = s.live.remove(&ptr).expect("raw_free of an address not from raw_alloc");
        s.used -= bytes;
        s.frees += 1;
    }

    fn record_event(&self, stream: u64) -> Result<u64> {
        let mut s = self.st();
        let id = s.next_event;
        s.next_event += 1;
        s.recorded += 1;
        s.events.insert(id, (stream, false));
        Ok(id)
    }

    fn event_done(&self, event: u64) -> Result<bool> {
        Ok(self.st().events.get(&event).expect("querying a released event").1)
    }

    fn free_event(&self, event: u64) {
        let mut s = self.st();
        s.events.remove(&event).expect("releasing an unknown event");
        s.released += 1;
    }
}
