//! The library's private rayon pool, sized by `THSetNumThreads` / `TH_NUM_THREADS` / the core
//! count, and the grain size below which loops stay on the calling thread.

use std::sync::{Arc, RwLock};

/// Elements below which a loop is not split (splitting costs a few microseconds).
pub(crate) const GRAIN: usize = 32 * 1024;

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

/// Runs `f(start, end)` over `[0, n)`, split into about one chunk per thread when `work`
/// (elements touched) is at least `GRAIN`; otherwise in one call on this thread.
pub fn for_range(n: usize, work: usize, f: impl Fn(usize, usize) + Sync) {
    if n == 0 {
        return;
    }
    let pool = if work >= GRAIN && n > 1 { pool() } else { None };
    let Some(pool) = pool else {
        f(0, n);
        return;
    };
    let chunks = pool.current_num_threads().min(n);
    pool.scope(|s| {
        for c in 0..chunks {
            let (a, b) = (n * c / chunks, n * (c + 1) / chunks);
            let f = &f;
            s.spawn(move |_| f(a, b));
        }
    });
}
