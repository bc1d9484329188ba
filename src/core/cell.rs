//! `ContractCell`: the interior mutability of tensors' geometry and storages' buffers.
//!
//! TH's thread-safety contract (docs/reliability.md) leaves it to the caller never to change a
//! tensor or a storage while another thread uses it. Under that contract a writer never meets
//! a reader, so the cell needs no lock: a read-write lock would only add two atomic
//! read-modify-writes per operand to every call, the larger part of a small op's cost.
//!
//! Within one thread the library itself never writes a cell while reading it (a lock would have
//! deadlocked there). Debug builds, which the tests run, check both rules: they count readers
//! and mark a writer, and a write that meets a reader (or a read that meets a writer) panics,
//! which the C boundary turns into an error, instead of being undefined.

use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};

/// A value read freely and written only under the thread-safety contract (module docs).
pub struct ContractCell<T> {
    value: UnsafeCell<T>,
    #[cfg(debug_assertions)]
    state: debug::State,
}

// SAFETY: writes happen only while no other thread uses the cell (the contract; checked in
// debug builds), so sharing the cell across threads shares only reads of a `T: Sync`.
unsafe impl<T: Send + Sync> Sync for ContractCell<T> {}

impl<T> ContractCell<T> {
    pub fn new(value: T) -> Self {
        ContractCell {
            value: UnsafeCell::new(value),
            #[cfg(debug_assertions)]
            state: debug::State::default(),
        }
    }

    /// Exclusive access through an exclusive borrow (no check needed).
    pub fn get_mut(&mut self) -> &mut T {
        self.value.get_mut()
    }

    /// Shared access for as long as the guard lives.
    #[inline]
    pub fn read(&self) -> Read<'_, T> {
        #[cfg(debug_assertions)]
        self.state.begin_read();
        Read(self)
    }

    /// Exclusive access for as long as the guard lives.
    #[inline]
    pub fn write(&self) -> Write<'_, T> {
        #[cfg(debug_assertions)]
        self.state.begin_write();
        Write(self)
    }
}

/// A reader of a `ContractCell`.
pub struct Read<'a, T>(&'a ContractCell<T>);

impl<T> Deref for Read<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: no writer while a reader lives (the contract, checked in debug builds).
        unsafe { &*self.0.value.get() }
    }
}

impl<T> Drop for Read<'_, T> {
    #[inline]
    fn drop(&mut self) {
        #[cfg(debug_assertions)]
        self.0.state.end_read();
    }
}

/// The writer of a `ContractCell`.
pub struct Write<'a, T>(&'a ContractCell<T>);

impl<T> Deref for Write<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: the only access while the writer lives (the contract, checked in debug builds).
        unsafe { &*self.0.value.get() }
    }
}

impl<T> DerefMut for Write<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as for `deref`, and `&mut self` makes this borrow unique among the guard's.
        unsafe { &mut *self.0.value.get() }
    }
}

impl<T> Drop for Write<'_, T> {
    #[inline]
    fn drop(&mut self) {
        #[cfg(debug_assertions)]
        self.0.state.end_write();
    }
}

#[cfg(debug_assertions)]
mod debug {
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

    const WRITER: usize = 1 << (usize::BITS - 1);

    /// Readers counted in the low bits, a writer in the top bit.
    #[derive(Default)]
    pub(super) struct State(AtomicUsize);

    impl State {
        pub(super) fn begin_read(&self) {
            let prev = self.0.fetch_add(1, SeqCst);
            if prev & WRITER != 0 {
                self.0.fetch_sub(1, SeqCst);
                panic!("a tensor or storage was read while it was being changed");
            }
        }

        pub(super) fn end_read(&self) {
            self.0.fetch_sub(1, SeqCst);
        }

        pub(super) fn begin_write(&self) {
            if self.0.compare_exchange(0, WRITER, SeqCst, SeqCst).is_err() {
                panic!("a tensor or storage was changed while it was in use");
            }
        }

        pub(super) fn end_write(&self) {
            self.0.fetch_and(!WRITER, SeqCst);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_nest_and_writes_are_exclusive() {
        let c = ContractCell::new(vec![1, 2]);
        {
            let a = c.read();
            let b = c.read();
            assert_eq!(a.len() + b.len(), 4);
        }
        c.write().push(3);
        assert_eq!(*c.read(), [1, 2, 3]);
    }

    #[cfg(debug_assertions)]
    #[test]
    fn debug_builds_catch_a_write_during_a_read() {
        let c = ContractCell::new(0);
        let r = c.read();
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| *c.write() = 1));
        assert!(caught.is_err());
        assert_eq!(*r, 0);
        drop(r);
        *c.write() = 2;
        assert_eq!(*c.read(), 2);
    }
}
