//! Intrusive atomic reference counting: the only refcount code in the library.
//!
//! A `Shared<T>` is one heap block holding the count, TH's `REFCOUNTED` flag and the value. An
//! `Rc<T>` owns one count. The C handles (`THFloatTensor *`, ...) are pointers to a `Shared<T>`;
//! `into_raw` gives a count away to C without changing it (release), `from_raw` takes one back
//! (reclaim), `retain_raw` adds one. The orderings are `Arc`'s: increments are relaxed,
//! decrements release, and the thread that drops the last count acquires before freeing.
//!
//! Clearing the `REFCOUNTED` flag (TH's `clearFlag(TH_*_REFCOUNTED)`) makes retain and release
//! no-ops, so the object lives forever, as in TH.

use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering, fence};

/// A value with an intrusive reference count.
pub struct Shared<T> {
    count: AtomicUsize,
    refcounted: AtomicBool,
    value: T,
}

impl<T> Shared<T> {
    /// Current count (for tests and diagnostics; racy by nature).
    pub fn count(&self) -> usize {
        self.count.load(Ordering::Relaxed)
    }
    pub fn is_refcounted(&self) -> bool {
        self.refcounted.load(Ordering::Relaxed)
    }
    pub fn set_refcounted(&self, on: bool) {
        self.refcounted.store(on, Ordering::Relaxed)
    }
    fn inc(&self) {
        if self.is_refcounted() {
            let old = self.count.fetch_add(1, Ordering::Relaxed);
            // A count this high can only come from a leak loop; stop before it wraps to 0
            // and frees a live object (Arc does the same).
            if old > isize::MAX as usize {
                std::process::abort();
            }
        }
    }
}

impl<T> Deref for Shared<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

/// An owning pointer to a `Shared<T>` (one count).
pub struct Rc<T> {
    ptr: NonNull<Shared<T>>,
}

// SAFETY: like Arc<T>: the count is atomic, and the value is shared across threads, so T must be
// Send + Sync for the pointer to be sent or shared.
unsafe impl<T: Send + Sync> Send for Rc<T> {}
// SAFETY: see above.
unsafe impl<T: Send + Sync> Sync for Rc<T> {}

impl<T> Rc<T> {
    /// A new object with count 1.
    pub fn new(value: T) -> Self {
        let b = Box::new(Shared { count: AtomicUsize::new(1), refcounted: AtomicBool::new(true), value });
        Rc { ptr: NonNull::from(Box::leak(b)) }
    }

    /// Gives this count away as a raw pointer (release); the count is unchanged.
    pub fn into_raw(this: Self) -> *mut Shared<T> {
        let p = this.ptr.as_ptr();
        std::mem::forget(this);
        p
    }

    /// Takes back one count from a raw pointer (reclaim).
    ///
    /// # Safety
    /// `p` must come from `into_raw` (or a `Shared` reached through one) and the caller must own
    /// one count on it, which this `Rc` now owns.
    pub unsafe fn from_raw(p: *mut Shared<T>) -> Self {
        // SAFETY: caller guarantees p is a live, non-null Shared<T>.
        Rc { ptr: unsafe { NonNull::new_unchecked(p) } }
    }

    /// A new count on a borrowed raw pointer.
    ///
    /// # Safety
    /// `p` must point to a live `Shared<T>` for the duration of the call.
    pub unsafe fn clone_raw(p: *const Shared<T>) -> Self {
        // SAFETY: caller guarantees p is live.
        let s = unsafe { &*p };
        s.inc();
        Rc { ptr: NonNull::from(s) }
    }

    /// Adds one count to a raw pointer (TH's `retain`).
    ///
    /// # Safety
    /// `p` must point to a live `Shared<T>`.
    pub unsafe fn retain_raw(p: *const Shared<T>) {
        // SAFETY: caller guarantees p is live.
        unsafe { &*p }.inc();
    }

    /// Drops one count of a raw pointer (TH's `free`).
    ///
    /// # Safety
    /// `p` must point to a live `Shared<T>` and the caller must own one count on it.
    pub unsafe fn release_raw(p: *mut Shared<T>) {
        // SAFETY: forwarded contract.
        drop(unsafe { Rc::from_raw(p) });
    }

    pub fn as_ptr(this: &Self) -> *mut Shared<T> {
        this.ptr.as_ptr()
    }

    pub fn ptr_eq(a: &Self, b: &Self) -> bool {
        a.ptr == b.ptr
    }

    pub fn shared(this: &Self) -> &Shared<T> {
        // SAFETY: an Rc owns a count, so the block is alive while `this` is borrowed.
        unsafe { this.ptr.as_ref() }
    }
}

impl<T> Clone for Rc<T> {
    fn clone(&self) -> Self {
        Rc::shared(self).inc();
        Rc { ptr: self.ptr }
    }
}

impl<T> Deref for Rc<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &Rc::shared(self).value
    }
}

impl<T> Drop for Rc<T> {
    fn drop(&mut self) {
        let s = Rc::shared(self);
        if !s.is_refcounted() {
            return;
        }
        if s.count.fetch_sub(1, Ordering::Release) != 1 {
            return;
        }
        fence(Ordering::Acquire);
        // SAFETY: the count reached zero, so this was the last owner; the block came from
        // Box::leak in `new`.
        drop(unsafe { Box::from_raw(self.ptr.as_ptr()) });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicUsize;

    struct Probe(Arc<AtomicUsize>);
    impl Drop for Probe {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn raw_roundtrip_and_counts() {
        let drops = Arc::new(AtomicUsize::new(0));
        let a = Rc::new(Probe(drops.clone()));
        let p = Rc::into_raw(a);
        // SAFETY: p is live and we own its single count.
        unsafe {
            Rc::retain_raw(p);
            assert_eq!((*p).count(), 2);
            let b = Rc::clone_raw(p);
            assert_eq!(b.count_for_test(), 3);
            drop(b);
            Rc::release_raw(p);
            assert_eq!(drops.load(Ordering::SeqCst), 0);
            Rc::release_raw(p);
        }
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn not_refcounted_is_never_freed_by_release() {
        let drops = Arc::new(AtomicUsize::new(0));
        let a = Rc::new(Probe(drops.clone()));
        Rc::shared(&a).set_refcounted(false);
        let b = a.clone();
        let raw = Rc::into_raw(a.clone());
        drop(a);
        drop(b);
        assert_eq!(drops.load(Ordering::SeqCst), 0);
        // Turn counting back on and let the one real count go (frees it: no leak).
        // SAFETY: raw points at the object, still live with its one count.
        let c = unsafe { Rc::from_raw(raw) };
        Rc::shared(&c).set_refcounted(true);
        drop(c);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn threads_free_exactly_once() {
        /// The shared object's address, handed to threads with its provenance (not as a usize).
        #[derive(Clone, Copy)]
        struct Handle(*mut Shared<Probe>);
        // SAFETY: the pointee is Sync (atomics and an Arc), and each thread owns a count.
        unsafe impl Send for Handle {}
        let rounds = if cfg!(miri) { 200 } else { 10_000 };
        let drops = Arc::new(AtomicUsize::new(0));
        let p = Handle(Rc::into_raw(Rc::new(Probe(drops.clone()))));
        let hs: Vec<_> = (0..8)
            .map(|_| {
                // SAFETY: the main thread holds a count until all threads are joined.
                unsafe { Rc::retain_raw(p.0) };
                std::thread::spawn(move || {
                    let p = p;
                    for _ in 0..rounds {
                        // SAFETY: this thread owns a count, so p stays live.
                        unsafe {
                            Rc::retain_raw(p.0);
                            Rc::release_raw(p.0);
                        }
                    }
                    // SAFETY: releases this thread's own count.
                    unsafe { Rc::release_raw(p.0) };
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(drops.load(Ordering::SeqCst), 0);
        // SAFETY: the last count.
        unsafe { Rc::release_raw(p.0) };
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    }

    impl<T> Rc<T> {
        fn count_for_test(&self) -> usize {
            Rc::shared(self).count()
        }
    }
}
