//! The library's private rayon pool, sized by `THSetNumThreads` / `TH_NUM_THREADS` / the core
//! count, and the grain size below which loops stay on the calling thread.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

/// Elements below which a loop is not split (splitting costs a few microseconds).
pub const GRAIN: usize = 32 * 1024;

/// Pieces per thread a split loop is cut into (load balancing on a shared machine).
const PIECES_PER_THREAD: usize = 4;

static POOL: RwLock<Option<(usize, Arc<rayon::ThreadPool>)>> = RwLock::new(None);

/// The pool for the current thread count (rebuilt when `THSetNumThreads` changed it).
pub fn pool() -> Option<Arc<rayon::ThreadPool>> {
    let n = crate::ffi::general::num_threads();
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

/// Runs `f(start, end)` over `[0, n)`. When `work` (elements touched) is at least `GRAIN` and
/// the pool has several threads, the range is cut into pieces (a few per thread, each at least
/// half a grain of work) that the calling thread and the pool's workers take in turn, so the
/// caller starts at once and a thread slowed down by other processes on its core takes fewer
/// pieces; otherwise `f(0, n)` runs on this thread.
pub fn for_range(n: usize, work: usize, f: impl Fn(usize, usize) + Sync) {
    if n == 0 {
        return;
    }
    let pool = if work >= GRAIN && n > 1 { pool() } else { None };
    let Some(pool) = pool else {
        f(0, n);
        return;
    };
    let threads = pool.current_num_threads();
    let pieces = (threads * PIECES_PER_THREAD).min(work / (GRAIN / 2)).clamp(threads, n.max(threads)).min(n);
    let next = AtomicUsize::new(0);
    let take = || {
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= pieces {
                break;
            }
            f(n * i / pieces, n * (i + 1) / pieces);
        }
    };
    pool.in_place_scope(|s| {
        for _ in 1..threads.min(pieces) {
            s.spawn(|_| take());
        }
        take();
    });
}
