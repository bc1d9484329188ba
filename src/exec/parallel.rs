//! The library's private rayon pool, sized by `THSetNumThreads` / `TH_NUM_THREADS` / the core
//! count, and the grain size below which loops stay on the calling thread.

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

/// Elements below which a loop is not split (splitting costs a few microseconds).
pub(crate) const GRAIN: usize = 32 * 1024;

/// Pieces per thread a split loop is cut into (load balancing on a shared machine).
const PIECES_PER_THREAD: usize = 4;

static NUM_THREADS: AtomicUsize = AtomicUsize::new(0);

/// Number of worker threads the library's parallel loops use (the `TH_NUM_THREADS`
/// environment variable, else the number of cores, until `THSetNumThreads`).
pub fn num_threads() -> usize {
    match NUM_THREADS.load(Ordering::Relaxed) {
        0 => {
            let n = std::env::var("TH_NUM_THREADS")
                .ok()
                .and_then(|v| v.parse::<usize>().ok())
                .filter(|&n| n > 0)
                .unwrap_or_else(num_cores);
            NUM_THREADS.store(n, Ordering::Relaxed);
            n
        }
        n => n,
    }
}

pub fn num_cores() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// Sets the thread count for parallel loops (>= 1; the caller checks).
pub fn set_num_threads(n: usize) {
    NUM_THREADS.store(n.max(1), Ordering::Relaxed);
}

/// Forgets the count set by `set_num_threads`: back to `TH_NUM_THREADS` or the core count.
pub fn infer_num_threads() {
    NUM_THREADS.store(0, Ordering::Relaxed);
    num_threads();
}

static POOL: RwLock<Option<(usize, Arc<rayon::ThreadPool>)>> = RwLock::new(None);

/// The pool for the current thread count (rebuilt when `THSetNumThreads` changed it).
pub fn pool() -> Option<Arc<rayon::ThreadPool>> {
    let n = num_threads();
    if n <= 1 {
        return None;
    }
    if let Some((m, p)) = POOL.read().unwrap_or_else(|e| e.into_inner()).as_ref()
        && *m == n
    {
        return Some(p.clone());
    }
    let mut w = POOL.write().unwrap_or_else(|e| e.into_inner());
    if let Some((m, p)) = w.as_ref()
        && *m == n
    {
        return Some(p.clone());
    }
    let p = Arc::new(
        rayon::ThreadPoolBuilder::new().num_threads(n).thread_name(|i| format!("th-worker-{i}")).build().ok()?,
    );
    *w = Some((n, p.clone()));
    Some(p)
}

thread_local! {
    /// Set while the calling thread of `for_range` runs pieces of it.
    static IN_PIECE: Cell<bool> = const { Cell::new(false) };
}

/// Whether this thread is running a piece of a parallel loop: a pool worker, or the caller of
/// `for_range` inside one of its pieces. Work started here stays on this thread (the other
/// threads are busy with the outer loop; splitting again would only add hand-offs).
pub fn nested() -> bool {
    rayon::current_thread_index().is_some() || IN_PIECE.with(Cell::get)
}

/// Runs `f(start, end)` over `[0, n)`. When `work` (elements touched) is at least `GRAIN` and
/// the pool has several threads, the range is cut into pieces (a few per thread, each at least
/// half a grain of work) that the calling thread and the pool's workers claim in turn: the
/// caller starts at once, and it never waits for a worker that has not started (on a machine
/// shared with other processes a worker may not get a core for a while); it only waits for
/// pieces already claimed. Otherwise (and inside a piece of another parallel loop, see
/// `nested`) `f(0, n)` runs on this thread.
#[inline]
pub fn for_range(n: usize, work: usize, f: impl Fn(usize, usize) + Sync) {
    for_range_dyn(n, work, &f)
}

/// `for_range` compiled once: `f` is called through the reference.
fn for_range_dyn(n: usize, work: usize, f: &(dyn Fn(usize, usize) + Sync)) {
    if n == 0 {
        return;
    }
    if work < GRAIN || n == 1 {
        f(0, n);
        return;
    }
    for_range_split(n, work, f);
}

/// The parallel part of `for_range`, apart so that a small loop never touches the thread-locals
/// `nested` reads (their addresses would otherwise be computed on entry, at two `__tls_get_addr`
/// calls per loop).
#[inline(never)]
fn for_range_split(n: usize, work: usize, f: &(dyn Fn(usize, usize) + Sync)) {
    let Some(pool) = (if nested() { None } else { pool() }) else {
        f(0, n);
        return;
    };
    let threads = pool.current_num_threads();
    let pieces = (threads * PIECES_PER_THREAD).min(work / (GRAIN / 2)).max(threads).min(n);
    run(&pool, pieces, n, f);
}

/// Runs `f(i)` for every `i < n`, on the calling thread and (with `parallel`, outside another
/// loop's piece) the pool's workers. Indices are claimed one at a time in increasing order, and
/// a claimed index runs to its end on a thread that is running, so `f(i)` may wait (spin) for
/// the work of lower indices: the lowest unfinished claimed index never waits on anything
/// unfinished. Without a pool, `f(0)`, `f(1)`, ... run in turn on this thread.
#[inline]
pub fn for_each_ordered(n: usize, parallel: bool, f: impl Fn(usize) + Sync) {
    for_each_ordered_dyn(n, parallel, &f)
}

/// `for_each_ordered` compiled once: `f` is called through the reference.
fn for_each_ordered_dyn(n: usize, parallel: bool, f: &(dyn Fn(usize) + Sync)) {
    let pool = if parallel && n > 1 && !nested() { pool() } else { None };
    let Some(pool) = pool else {
        (0..n).for_each(f);
        return;
    };
    run(&pool, n, n, &|a, b| (a..b).for_each(&f));
}

/// Spins (then yields) until `ready()`: for waits on a piece that another running thread of
/// the same loop is finishing.
pub fn wait_until(ready: impl Fn() -> bool) {
    // (Miri interprets each spin thousands of times slower, and switches threads at a yield)
    let limit = if cfg!(miri) { 0 } else { 1 << 12 };
    let mut spins = 0u32;
    while !ready() {
        if spins < limit {
            std::hint::spin_loop();
            spins += 1;
        } else {
            std::thread::yield_now();
        }
    }
}

/// `[0, n)` cut into `pieces` pieces (piece `i` is `n*i/pieces .. n*(i+1)/pieces`), claimed in
/// turn by this thread and up to `pieces - 1` of the pool's workers; returns when every piece
/// has run.
fn run(pool: &rayon::ThreadPool, pieces: usize, n: usize, f: &(dyn Fn(usize, usize) + Sync)) {
    // SAFETY: the 'static lifetime is a lie told only to `Job`: a worker calls `f` only for a
    // piece it claimed (index < pieces), and this function does not return before every
    // claimed piece has finished (`done == pieces` below); later claims fail and never touch `f`
    // (also those of a lingering worker that took the job from `HOT` late).
    let f: &'static (dyn Fn(usize, usize) + Sync) = unsafe { std::mem::transmute(f) };
    let helpers = pool.current_num_threads().min(pieces) - 1;
    let job = Arc::new(Job {
        next: AtomicUsize::new(0),
        done: AtomicUsize::new(0),
        panicked: AtomicBool::new(false),
        seats: AtomicUsize::new(helpers),
        pieces,
        n,
        f: f as *const (dyn Fn(usize, usize) + Sync),
    });
    // workers lingering after a loop of their own take this one from HOT; the rest are spawned
    let hot = HOT.publish(&job);
    let lingerers = pool.current_num_threads() - 1;
    for _ in hot.min(helpers)..helpers {
        let job = job.clone();
        pool.spawn(move || {
            job.help();
            HOT.linger(lingerers);
        });
    }
    IN_PIECE.with(|p| p.set(true));
    job.work();
    IN_PIECE.with(|p| p.set(false));
    wait_until(|| job.done.load(Ordering::Acquire) >= pieces);
    HOT.retire(&job);
    if job.panicked.load(Ordering::Relaxed) {
        panic!("a parallel piece panicked");
    }
}

/// How long a worker that ran pieces of a loop keeps watching for the next loop (`Hot`) before
/// it goes back to rayon, which soon puts it to sleep. Waking a sleeping worker takes a futex
/// call and, on a virtual machine, the host rescheduling an idle vCPU: measured on the 2-vCPU
/// Zen 5 kind, f32 1024^3 products called back to back ran on both cores at 430-457 GFLOP/s
/// but fell to 216-320 (the caller alone: the worker joined late or not at all) in 9 of 40
/// calls; with the worker lingering, in none after the first. OpenBLAS's threads spin the same
/// way after a call. `TH_LINGER_US` (microseconds, read once) sets another time; 0 turns it off.
fn linger_time() -> std::time::Duration {
    static LINGER: std::sync::OnceLock<std::time::Duration> = std::sync::OnceLock::new();
    *LINGER.get_or_init(|| {
        let us = std::env::var("TH_LINGER_US").ok().and_then(|v| v.trim().parse::<u64>().ok()).unwrap_or(1000);
        std::time::Duration::from_micros(us)
    })
}

/// The loop most recently started by `run`, for lingering workers to join.
///
/// `run` publishes its job here and spawns rayon jobs only for the helpers that are not
/// already lingering. (Two callers starting loops at once may both count the same lingering
/// worker; one of them then runs without it: slower, never wrong, as any piece left unclaimed
/// is run by its caller.)
struct Hot {
    /// Bumped by each `publish`.
    generation: AtomicUsize,
    /// Workers lingering now.
    idle: AtomicUsize,
    /// The CPU the thread that started the last loop ran on then.
    caller_cpu: AtomicUsize,
    job: Mutex<Option<Arc<Job>>>,
}

static HOT: Hot = Hot {
    generation: AtomicUsize::new(0),
    idle: AtomicUsize::new(0),
    caller_cpu: AtomicUsize::new(usize::MAX),
    job: Mutex::new(None),
};

/// The CPU this thread runs on now (`usize::MAX` where that cannot be told, as under Miri).
fn current_cpu() -> usize {
    #[cfg(all(target_os = "linux", not(miri)))]
    {
        // SAFETY: sched_getcpu takes no arguments and only returns a number (or -1).
        let cpu = unsafe { libc::sched_getcpu() };
        if cpu >= 0 {
            return cpu as usize;
        }
    }
    usize::MAX
}

impl Hot {
    /// The slot, unless another thread holds it: callers never block on it (a process forked
    /// while a worker held it would otherwise hang at its first parallel loop).
    fn slot(&self) -> Option<std::sync::MutexGuard<'_, Option<Arc<Job>>>> {
        match self.job.try_lock() {
            Ok(g) => Some(g),
            Err(std::sync::TryLockError::Poisoned(e)) => Some(e.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }

    /// Makes `job` the current loop; returns how many lingering workers will join it (none
    /// when the slot is busy: the helpers are then all spawned).
    fn publish(&self, job: &Arc<Job>) -> usize {
        let Some(mut slot) = self.slot() else { return 0 };
        *slot = Some(job.clone());
        drop(slot);
        self.caller_cpu.store(current_cpu(), Ordering::Relaxed);
        // SeqCst, as in `linger`: either this load counts a worker that has not yet stopped
        // lingering, and that worker then sees the new generation and joins; or the worker's
        // decrement comes first and is not counted (a rayon job is spawned in its place).
        self.generation.fetch_add(1, Ordering::SeqCst);
        self.idle.load(Ordering::SeqCst)
    }

    /// Empties the slot if it still holds `job` (finished), so that it is freed now.
    /// (A busy slot keeps it until the next `publish`: harmless, as every piece is claimed.)
    fn retire(&self, job: &Arc<Job>) {
        let Some(mut slot) = self.slot() else { return };
        if slot.as_ref().is_some_and(|j| Arc::ptr_eq(j, job)) {
            *slot = None;
        }
    }

    /// Counts one more lingering worker, unless `most` linger already (then false).
    fn enter(&self, most: usize) -> bool {
        self.idle.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| (n < most).then_some(n + 1)).is_ok()
    }

    /// Whether this thread runs on the CPU that the last loop's caller ran on.
    fn beside_caller(&self) -> bool {
        let cpu = current_cpu();
        cpu != usize::MAX && cpu == self.caller_cpu.load(Ordering::Relaxed)
    }

    /// Runs the pieces of each loop published within `linger_time()` of the last one this worker
    /// worked on; returns when none came, or at once when `most` workers linger already.
    ///
    /// With the caller, `most` (the pool's size less one) lingering workers keep every core
    /// busy; one more would make more spinning threads than cores. And a worker that finds
    /// itself on the CPU of the last loop's caller stops lingering: the scheduler at times puts
    /// it there (on a wake-up), and spinning it then kept the caller off its core to the end of
    /// the lingering. Measured on the 2-vCPU Zen 5 kind, f32 1024^2 matrix-vector products back
    /// to back (2000 calls; numpy 22-25 us a call on average): before, 0.5 % of the calls took
    /// 1-4 ms (with `TH_LINGER_US=300`, 0.3 ms) and the mean was 36-52 us; with the cap alone,
    /// 1 ms outliers remained (mean 27-30 us); with both, none past 0.1 ms, mean 24.2-24.4 us.
    fn linger(&self, most: usize) {
        let limit = linger_time();
        if limit.is_zero() {
            return;
        }
        let mut seen = self.generation.load(Ordering::SeqCst);
        loop {
            if !self.enter(most) {
                return;
            }
            let start = Instant::now();
            let mut spins = 0u32;
            while self.generation.load(Ordering::SeqCst) == seen {
                std::hint::spin_loop();
                spins = spins.wrapping_add(1);
                // (the scheduler at times puts this worker on the core of the thread that
                // started the last loop; the worker then leaves that core to it at once, not at
                // the end of its lingering)
                if spins.is_multiple_of(64) && (start.elapsed() >= limit || self.beside_caller()) {
                    break;
                }
            }
            self.idle.fetch_sub(1, Ordering::SeqCst);
            // (read after the decrement: a loop published before it counted this worker)
            let now = self.generation.load(Ordering::SeqCst);
            if now == seen {
                return;
            }
            seen = now;
            let job = self.job.lock().unwrap_or_else(|e| e.into_inner()).clone();
            if let Some(job) = job {
                job.help();
            }
        }
    }
}

/// A raw pointer shared with the pieces of a parallel loop. It keeps the pointer's provenance
/// (an address cast to `usize` and back would lose it, and Miri could then no longer tell
/// which allocation an access may touch). Whoever shares one guarantees that the pieces only
/// read through it, or write disjoint elements, while the memory is alive.
#[derive(Debug)]
pub(crate) struct SharedPtr<T>(pub *mut T);

// (not derived: the derive would require `T: Copy`)
impl<T> Clone for SharedPtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SharedPtr<T> {}

// SAFETY: see the type's contract; the pointer itself is plain data.
unsafe impl<T> Send for SharedPtr<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for SharedPtr<T> {}

impl<T> SharedPtr<T> {
    /// The pointer `count` elements away (wrapping arithmetic: validity is checked at use).
    #[inline(always)]
    pub fn offset(self, count: isize) -> *mut T {
        self.0.wrapping_offset(count)
    }
}

/// A split loop shared by the caller and the workers (see `for_range`).
struct Job {
    next: AtomicUsize,
    done: AtomicUsize,
    panicked: AtomicBool,
    /// Workers that may still join (the pool's size less the caller): spawned and lingering
    /// workers together never put more threads on a loop than the pool has, so no claimed
    /// piece waits behind a thread the cores cannot run.
    seats: AtomicUsize,
    pieces: usize,
    n: usize,
    f: *const (dyn Fn(usize, usize) + Sync),
}

// SAFETY: `f` points to a `Sync` closure that is only called while `for_range` waits for it.
unsafe impl Send for Job {}
// SAFETY: as above; the counters are atomics.
unsafe impl Sync for Job {}

impl Job {
    /// `work`, for a worker that gets one of the job's seats (else nothing).
    fn help(&self) {
        if self.seats.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |s| s.checked_sub(1)).is_ok() {
            self.work();
        }
    }

    fn work(&self) {
        loop {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            if i >= self.pieces {
                return;
            }
            let (a, b) = (self.n * i / self.pieces, self.n * (i + 1) / self.pieces);
            // SAFETY: piece i was claimed, so for_range is still waiting and `f` is alive.
            let f = unsafe { &*self.f };
            if catch_unwind(AssertUnwindSafe(|| f(a, b))).is_err() {
                self.panicked.store(true, Ordering::Relaxed);
            }
            self.done.fetch_add(1, Ordering::Release);
        }
    }
}

/// A raw array written by workers at disjoint indices.
pub struct Sink<X>(pub *mut X);
// SAFETY: the workers sharing a Sink write disjoint elements while its owner waits for them.
unsafe impl<X: Send> Send for Sink<X> {}
// SAFETY: as above.
unsafe impl<X: Send> Sync for Sink<X> {}

impl<X> Sink<X> {
    /// # Safety
    /// `i` must be in bounds and no other thread may access element `i` meanwhile.
    pub unsafe fn put(&self, i: usize, x: X) {
        // SAFETY: caller contract.
        unsafe { *self.0.add(i) = x }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn nested_loops_stay_on_their_thread() {
        assert!(!nested());
        let moved = AtomicBool::new(false);
        for_range(4, 1 << 20, |_, _| {
            let me = std::thread::current().id();
            for_range(100, 1 << 20, |_, _| {
                if std::thread::current().id() != me {
                    moved.store(true, Ordering::Relaxed);
                }
            });
        });
        assert!(!moved.load(Ordering::Relaxed));
        assert!(!nested(), "the caller's flag is cleared after its pieces");
    }

    #[test]
    fn back_to_back_loops_from_several_callers() {
        // loops started within linger_time() of each other (joined by lingering workers, or by
        // spawned ones when none lingers), from several threads at once: each covers its range
        // exactly once
        std::thread::scope(|s| {
            for caller in 0..3 {
                s.spawn(move || {
                    for round in 0..200 {
                        let n = 64 + caller * 7 + round % 5;
                        let seen: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
                        for_range(n, 1 << 20, |a, b| {
                            for x in &seen[a..b] {
                                x.fetch_add(1, Ordering::Relaxed);
                            }
                        });
                        assert!(seen.iter().all(|x| x.load(Ordering::Relaxed) == 1), "caller {caller} round {round}");
                    }
                });
            }
        });
        // and the lingering workers leave (other tests' loops may keep one busy for a while)
        let end = Instant::now() + std::time::Duration::from_secs(10);
        while HOT.idle.load(Ordering::SeqCst) != 0 {
            assert!(Instant::now() < end, "a worker lingers on");
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
    }

    #[test]
    fn a_loop_runs_on_at_most_the_pools_threads() {
        // loops back to back on a 2-thread pool of their own, so that workers lingering from
        // earlier loops (of this pool or the library's) and spawned ones meet: the caller and
        // the workers together never exceed the pool's size
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        for round in 0..300 {
            let ids = Mutex::new(std::collections::HashSet::new());
            run(&pool, 64, 64, &|_, _| {
                ids.lock().unwrap().insert(std::thread::current().id());
                std::hint::black_box((0..2000u64).sum::<u64>());
            });
            let seen = ids.into_inner().unwrap().len();
            assert!(seen <= 2, "round {round}: {seen} threads");
        }
    }

    #[test]
    fn no_more_workers_linger_than_allowed() {
        // on a `Hot` of its own: with two allowed, a third worker is turned away until one leaves
        let hot = Hot {
            generation: AtomicUsize::new(0),
            idle: AtomicUsize::new(0),
            caller_cpu: AtomicUsize::new(usize::MAX),
            job: Mutex::new(None),
        };
        assert!(hot.enter(2) && hot.enter(2));
        assert!(!hot.enter(2));
        assert_eq!(hot.idle.load(Ordering::SeqCst), 2);
        hot.idle.fetch_sub(1, Ordering::SeqCst);
        assert!(hot.enter(2));
        // a worker turned away returns from `linger` at once, counting nothing
        hot.linger(2);
        assert_eq!(hot.idle.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn for_range_covers_the_range_once() {
        for &(n, work) in &[(1usize, 1usize << 20), (7, 1 << 20), (1000, 1 << 20), (100_000, 100_000), (10, 10)] {
            let seen = Mutex::new(vec![0u32; n]);
            for_range(n, work, |a, b| {
                let mut s = seen.lock().unwrap();
                for i in a..b {
                    s[i] += 1;
                }
            });
            assert!(seen.into_inner().unwrap().iter().all(|&c| c == 1), "n {n}");
        }
    }
}
