use super::*;
use crate::core::error::Code;
use crate::cuda::alloc::fake::Fake;
use std::collections::BTreeMap;

fn cache(capacity: usize) -> (HostCache<Fake>, Fake) {
    let fake = Fake::new(capacity);
    (HostCache::new(fake.clone()), fake)
}

#[test]
fn sizes_are_powers_of_two_and_reuse_is_by_exact_class() {
    let (c, f) = cache(usize::MAX);
    assert_eq!(c.malloc(0), Ok(0));
    assert_eq!(f.st().allocs, 0);
    for (bytes, class) in [(1, 1), (3, 4), (1000, 1024), (1024, 1024), (1025, 2048), (100_000, 131_072)] {
        let p = c.malloc(bytes).unwrap();
        assert_eq!(c.block_size(p), Some(class), "{bytes} bytes");
        assert_eq!(f.st().live.get(&p), Some(&class), "{bytes} bytes are pinned as {class}");
    }
    let a = c.malloc(700).unwrap();
    let big = c.malloc(5000).unwrap();
    c.free(a).unwrap();
    c.free(big).unwrap();
    let allocs = f.st().allocs;
    // Same class: the cached block.
    assert_eq!(c.malloc(600).unwrap(), a);
    // A smaller class does not take the cached 8192 block; a larger one cannot.
    let small = c.malloc(4000).unwrap();
    assert_ne!(small, big);
    assert_eq!(c.block_size(small), Some(4096));
    assert_ne!(c.malloc(9000).unwrap(), big);
    assert_eq!(f.st().allocs, allocs + 2);
    assert_eq!(c.malloc(8192).unwrap(), big);
    let e = c.malloc(usize::MAX).unwrap_err();
    assert_eq!(e.code, Code::TH_ERR_ALLOC);
}

#[test]
fn a_freed_block_is_reused_only_after_its_events() {
    let (c, f) = cache(usize::MAX);
    let p = c.malloc(4096).unwrap();
    c.record_event(p, 3).unwrap();
    c.record_event(p, 5).unwrap();
    c.record_event(p, 3).unwrap(); // two copies on one stream: one event covers both
    assert_eq!(f.st().recorded, 0, "events are recorded when the block is freed");
    c.free(p).unwrap();
    let ev = f.alive_events();
    assert_eq!(ev.iter().map(|e| e.1).collect::<Vec<_>>(), vec![3, 5]);
    assert_eq!(c.stats().cached_free, 0, "a waiting block is not free");
    let q = c.malloc(4096).unwrap();
    assert_ne!(q, p);
    c.empty_cache();
    assert_eq!(f.st().frees, 0, "a waiting block is not released");
    f.complete(ev[1].0);
    let r = c.malloc(4096).unwrap();
    assert_ne!(r, p, "one event still pending");
    f.complete(ev[0].0);
    assert_eq!(c.malloc(4096).unwrap(), p);
    assert_eq!((f.snap().recorded, f.snap().released), (2, 2));
    // The reused block starts with no streams: freeing it records nothing.
    c.free(p).unwrap();
    assert_eq!(f.st().recorded, 2);
    assert_eq!(c.malloc(4096).unwrap(), p);
    // A block without copies is reusable at once.
    c.free(q).unwrap();
    assert_eq!(c.malloc(4096).unwrap(), q);
}

#[test]
fn bad_pointers_are_argument_errors() {
    let (c, _) = cache(usize::MAX);
    let p = c.malloc(64).unwrap();
    for bad in [p + 8, 4242] {
        assert_eq!(c.free(bad).unwrap_err().code, Code::TH_ERR_INVALID_ARG);
        let e = c.record_event(bad, 1).unwrap_err();
        assert!(e.code == Code::TH_ERR_INVALID_ARG && e.msg.contains("not a pointer returned"), "{}", e.msg);
    }
    assert_eq!(c.free(0), Ok(()));
    c.free(p).unwrap();
    assert!(c.free(p).unwrap_err().msg.contains("already freed"));
    assert_eq!(c.record_event(p, 1).unwrap_err().code, Code::TH_ERR_INVALID_ARG);
}

#[test]
fn out_of_memory_frees_the_cache_and_retries_once() {
    let (c, f) = cache(12 * 1024);
    let a = c.malloc(4096).unwrap();
    let b = c.malloc(2048).unwrap();
    c.free(a).unwrap();
    c.free(b).unwrap();
    // 8192 next to 6144 cached bytes exceed 12 KiB: the cache is released, the retry fits.
    let big = c.malloc(8000).unwrap();
    assert_eq!((f.snap().ooms, f.snap().frees, f.snap().allocs), (1, 2, 3));
    assert_eq!(c.stats().reserved, 8192);
    let e = c.malloc(5000).unwrap_err();
    assert_eq!(e.code, Code::TH_ERR_ALLOC);
    assert!(e.msg.contains("5000 bytes") && e.msg.contains("8192 bytes allocated"), "{}", e.msg);
    assert_eq!(f.st().ooms, 3);
    c.free(big).unwrap();
    f.st().fail_with = Some(Code::TH_ERR_CUDA);
    assert_eq!(c.malloc(100).unwrap_err().code, Code::TH_ERR_CUDA);
    assert_eq!(c.stats().cached_free, 8192, "other errors do not empty the cache");
}

#[test]
fn stats_and_no_leaks() {
    let (c, f) = cache(usize::MAX);
    let ptrs: Vec<u64> = (1..=30).map(|i| c.malloc(i * 1000).unwrap()).collect();
    let classes: usize = (1..=30usize).map(|i| (i * 1000).next_power_of_two()).sum();
    let s = c.stats();
    assert_eq!((s.allocated, s.reserved, s.segments, s.active_blocks, s.cached_free), (classes, classes, 30, 30, 0));
    for (i, &p) in ptrs.iter().enumerate() {
        if i % 3 == 0 {
            c.record_event(p, i as u64 % 4).unwrap();
        }
        c.free(p).unwrap();
    }
    let s = c.stats();
    assert_eq!((s.allocated, s.active_blocks, s.peak_allocated), (0, 0, classes));
    let waiting: usize = (1..=30usize).step_by(3).map(|i| (i * 1000).next_power_of_two()).sum();
    assert_eq!(s.cached_free, classes - waiting);
    c.reset_peak();
    c.empty_cache();
    assert_eq!(c.stats().reserved, waiting);
    f.complete_all();
    c.empty_cache();
    assert_eq!(c.stats(), Stats { peak_reserved: classes, ..Stats::default() });
    let s = f.st();
    assert_eq!((s.allocs, s.recorded, s.used), (s.frees, s.released, 0));
    drop(s);

    let (c, f) = cache(usize::MAX);
    let p = c.malloc(10).unwrap();
    c.record_event(p, 1).unwrap();
    c.free(p).unwrap();
    let _live = c.malloc(10).unwrap();
    drop(c);
    let s = f.st();
    assert_eq!((s.allocs, s.frees, s.recorded, s.released), (2, 2, 1, 1));
}

/// Random mallocs, frees, copies and completions from several threads at once: no two live
/// blocks overlap and the counters match.
#[test]
fn random_use_from_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<HostCache<Fake>>();
    let (c, f) = cache(usize::MAX);
    let live: Vec<(u64, usize)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..3u64)
            .map(|t| {
                let (c, f) = (&c, &f);
                s.spawn(move || {
                    let mut x = 12345 + t;
                    let mut mine: Vec<(u64, usize)> = Vec::new();
                    for _ in 0..1500 {
                        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        let r = (x >> 33) as usize;
                        match r % 10 {
                            0..=4 => {
                                let bytes = 1 + (r >> 4) % 30_000;
                                let p = c.malloc(bytes).unwrap();
                                mine.push((p, bytes.next_power_of_two()));
                            }
                            5..=7 if !mine.is_empty() => {
                                let (p, _) = mine.swap_remove((r >> 4) % mine.len());
                                c.free(p).unwrap();
                            }
                            8 if !mine.is_empty() => c.record_event(mine[(r >> 4) % mine.len()].0, t).unwrap(),
                            _ => f.complete_all(),
                        }
                    }
                    mine
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let map: BTreeMap<u64, usize> = live.iter().copied().collect();
    assert_eq!(map.len(), live.len(), "a block handed out twice");
    let mut end = 0;
    for (&p, &size) in &map {
        assert!(end <= p, "live blocks overlap at {p:#x}");
        assert_eq!(f.st().live.get(&p), Some(&size), "a live block is a whole pinned allocation");
        end = p + size as u64;
    }
    let s = c.stats();
    assert_eq!((s.allocated, s.active_blocks), (map.values().sum(), map.len()));
    assert_eq!((s.reserved, s.segments), (f.snap().used, f.snap().live.len()));
    for &p in map.keys() {
        c.free(p).unwrap();
    }
    f.complete_all();
    c.empty_cache();
    let s = f.st();
    assert_eq!((s.allocs, s.recorded, s.used), (s.frees, s.released, 0));
}
