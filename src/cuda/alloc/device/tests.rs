use super::*;
use crate::core::error::Code;
use crate::cuda::alloc::fake::{BASE, Fake};

const KB: usize = 1 << 10;
const MB: usize = 1 << 20;

fn cache(capacity: usize) -> (DeviceCache<Fake>, Fake) {
    let fake = Fake::new(capacity);
    (DeviceCache::new(fake.clone()), fake)
}

#[test]
fn sizes_round_to_512_and_zero_is_no_block() {
    let (c, f) = cache(usize::MAX);
    assert_eq!(c.malloc(0, 0), Ok(0));
    assert_eq!(f.st().allocs, 0);
    let cases = [(1, 512), (511, 512), (512, 512), (513, 1024), (1000, 1024), (4097, 4608)];
    let mut total = 0;
    for (bytes, rounded) in cases {
        let p = c.malloc(bytes, 0).unwrap();
        assert_eq!(c.block_size(p), Some(rounded), "{bytes} bytes");
        total += rounded;
    }
    assert_eq!(c.stats().allocated, total);
    assert_eq!(c.free(0), Ok(()));
}

#[test]
fn segment_sizes_follow_thc() {
    // (request, segment it gets when nothing is cached)
    let cases = [
        (1, 2 * MB),
        (MB, 2 * MB),
        (MB + 1, 20 * MB),
        (10 * MB - 512, 20 * MB),
        (10 * MB, 10 * MB),
        (10 * MB + 1, 12 * MB),
        (11 * MB, 12 * MB),
        (31 * MB, 32 * MB),
    ];
    for (bytes, seg) in cases {
        let (c, f) = cache(usize::MAX);
        let p = c.malloc(bytes, 0).unwrap();
        assert_eq!(c.base_allocation(p), Some((p, seg)), "{bytes} bytes");
        assert_eq!(f.st().live.values().copied().collect::<Vec<_>>(), vec![seg]);
        assert_eq!(c.stats().reserved, seg);
    }
    let (c, _) = cache(usize::MAX);
    let e = c.malloc(usize::MAX - 100, 0).unwrap_err();
    assert_eq!(e.code, Code::TH_ERR_ALLOC);
}

#[test]
fn small_requests_share_one_segment() {
    let (c, f) = cache(usize::MAX);
    let sizes = [512, 1024, 3000, 100, MB];
    let mut expect = BASE;
    for bytes in sizes {
        let p = c.malloc(bytes, 0).unwrap();
        assert_eq!(p, expect, "blocks are carved one after the other");
        assert_eq!(c.base_allocation(p), Some((BASE, 2 * MB)));
        expect += bytes.next_multiple_of(512) as u64;
    }
    assert_eq!(f.st().allocs, 1);
    // What is left of the segment: 2 MiB - (512 + 1024 + 3072 + 512 + 1 MiB).
    let rest = 2 * MB - (512 + 1024 + 3072 + 512 + MB);
    assert_eq!(c.largest_free(), rest);
    let last = c.malloc(rest, 0).unwrap();
    assert_eq!(last, expect);
    assert_eq!(c.largest_free(), 0, "the segment is exactly used up");
    let next = c.malloc(1, 0).unwrap();
    assert_eq!(c.base_allocation(next), Some((BASE + 2 * MB as u64, 2 * MB)));
    assert_eq!(f.st().allocs, 2);
}

#[test]
fn best_fit_takes_the_smallest_fitting_block_and_splits_it() {
    let (c, _) = cache(usize::MAX);
    // Free blocks of 1024, 2048 and 4096 B, kept apart by live 512 B blocks.
    let sizes = [1024, 512, 2048, 512, 4096, 512];
    let p: Vec<u64> = sizes.iter().map(|&s| c.malloc(s, 0).unwrap()).collect();
    for i in [0, 2, 4] {
        c.free(p[i]).unwrap();
    }
    let free_before = c.stats().cached_free;
    assert_eq!(free_before, 2 * MB - 3 * 512);
    // 1536 B: the 2048 block is the smallest that fits; it is split and 512 B stay free.
    let a = c.malloc(1500, 0).unwrap();
    assert_eq!(a, p[2]);
    assert_eq!(c.block_size(a), Some(1536));
    assert_eq!(c.stats().cached_free, free_before - 1536);
    // 512 B: the rest of that split is now the smallest free block.
    assert_eq!(c.malloc(512, 0).unwrap(), p[2] + 1536);
    // 1024 B: the 1024 block fits exactly (not the 4096 one, not the tail).
    assert_eq!(c.malloc(1024, 0).unwrap(), p[0]);
    // 4096 B: next best is the 4096 block.
    assert_eq!(c.malloc(4000, 0).unwrap(), p[4]);
    // Two free blocks of equal size: the lower address wins.
    let q: Vec<u64> = (0..4).map(|_| c.malloc(512, 0).unwrap()).collect();
    c.free(q[2]).unwrap();
    c.free(q[0]).unwrap();
    assert_eq!(c.malloc(512, 0).unwrap(), q[0]);
}

#[test]
fn large_blocks_split_only_when_more_than_1_mib_is_left() {
    let (c, f) = cache(usize::MAX);
    let p = c.malloc(12 * MB, 0).unwrap();
    c.free(p).unwrap();
    // 11 MiB from the free 12 MiB block: 1 MiB would be left, not worth a block.
    assert_eq!(c.malloc(11 * MB, 0).unwrap(), p);
    assert_eq!(c.block_size(p), Some(12 * MB));
    assert_eq!(c.stats().allocated, 12 * MB);
    c.free(p).unwrap();
    // 10 MiB + 512 B: 2 MiB - 512 B would be left, more than 1 MiB: split.
    assert_eq!(c.malloc(10 * MB + 512, 0).unwrap(), p);
    assert_eq!(c.block_size(p), Some(10 * MB + 512));
    assert_eq!(c.largest_free(), 2 * MB - 512);
    // A 2 MiB request is a large-pool request: it takes the rest, and nothing is split off.
    let q = c.malloc(2 * MB - 1024, 0).unwrap();
    assert_eq!(q, p + (10 * MB + 512) as u64);
    assert_eq!(c.block_size(q), Some(2 * MB - 512));
    assert_eq!(f.st().allocs, 1);
}

#[test]
fn small_and_large_pools_do_not_mix() {
    let (c, f) = cache(usize::MAX);
    let big = c.malloc(5 * MB, 0).unwrap();
    c.free(big).unwrap();
    // A small request does not use the free 20 MiB large segment.
    let small = c.malloc(1024, 0).unwrap();
    assert_eq!(c.base_allocation(small), Some((small, 2 * MB)));
    assert_eq!(f.st().allocs, 2);
}

/// Frees three adjacent blocks (and the free tail after them) in `order`; the segment must end
/// up one free block, released by `empty_cache`.
fn coalesce_in_order(order: [usize; 3]) {
    let (c, f) = cache(usize::MAX);
    let p: Vec<u64> = [1024, 4096, 512].iter().map(|&s| c.malloc(s, 0).unwrap()).collect();
    assert_eq!((p[1] - p[0], p[2] - p[1]), (1024, 4096));
    let tail = 2 * MB - 1024 - 4096 - 512;
    assert_eq!(c.largest_free(), tail);
    let sizes = [1024, 4096, 512];
    let mut free = tail;
    for &i in &order {
        c.free(p[i]).unwrap();
        free += sizes[i];
        assert_eq!(c.stats().cached_free, free);
    }
    assert_eq!(c.largest_free(), 2 * MB, "order {order:?}: one block spans the segment");
    assert_eq!(f.st().frees, 0, "freeing does not release segments");
    c.empty_cache();
    assert_eq!((f.snap().allocs, f.snap().frees), (1, 1), "order {order:?}");
    assert_eq!(c.stats(), Stats { peak_allocated: 1024 + 4096 + 512, peak_reserved: 2 * MB, ..Stats::default() });
}

#[test]
fn coalescing_in_every_order() {
    for order in [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]] {
        coalesce_in_order(order);
    }
}

#[test]
fn adjacent_segments_do_not_merge() {
    let (c, f) = cache(usize::MAX);
    let a = c.malloc(MB, 0).unwrap();
    let b = c.malloc(MB, 0).unwrap();
    let d = c.malloc(MB, 0).unwrap();
    assert_eq!((b - a, d - b), (MB as u64, MB as u64), "the fake's segments are adjacent");
    assert_ne!(c.base_allocation(b), c.base_allocation(d));
    c.free(b).unwrap();
    c.free(d).unwrap();
    c.free(a).unwrap();
    assert_eq!(c.largest_free(), 2 * MB, "blocks of different segments stay apart");
    assert_eq!(c.stats().cached_free, 4 * MB);
    c.empty_cache();
    assert_eq!(f.st().frees, 2);
    assert!(f.st().live.is_empty());
}

#[test]
fn a_block_is_reused_only_by_its_stream() {
    let (c, f) = cache(usize::MAX);
    let p = c.malloc(1000, 1).unwrap();
    c.free(p).unwrap();
    assert_eq!(p, BASE);
    let q = c.malloc(1000, 2).unwrap();
    assert_ne!(c.base_allocation(q).unwrap().0, BASE);
    assert_eq!(f.st().allocs, 2, "stream 2 got its own segment");
    assert_eq!(c.malloc(1000, 1).unwrap(), p, "stream 1 gets its block back");
    // Large pool too.
    let big = c.malloc(30 * MB, 3).unwrap();
    c.free(big).unwrap();
    assert_ne!(c.malloc(30 * MB, 0).unwrap(), big);
    assert_eq!(c.malloc(30 * MB, 3).unwrap(), big);
}

#[test]
fn record_stream_delays_reuse_until_the_events_complete() {
    let (c, f) = cache(usize::MAX);
    let p = c.malloc(4096, 1).unwrap();
    c.record_stream(p, 2).unwrap();
    c.record_stream(p, 5).unwrap();
    c.record_stream(p, 1).unwrap(); // its own stream: nothing to wait for
    c.record_stream(p, 2).unwrap(); // already noted
    c.free(p).unwrap();
    let ev = f.alive_events();
    assert_eq!(ev.iter().map(|e| e.1).collect::<Vec<_>>(), vec![2, 5], "one event per other stream");
    let s = c.stats();
    assert_eq!((s.allocated, s.active_blocks), (0, 0));
    assert_eq!(s.cached_free, 2 * MB - 4096, "the waiting block is not free");
    let q = c.malloc(4096, 1).unwrap();
    assert_ne!(q, p);
    assert_eq!(c.free(p).unwrap_err().code, Code::TH_ERR_INVALID_ARG, "double free");
    c.free(q).unwrap();
    c.empty_cache();
    assert_eq!(f.st().frees, 0, "the segment holds a waiting block");
    f.complete(ev[0].0);
    assert_ne!(c.malloc(4096, 1).unwrap(), p, "one event is still pending");
    f.complete(ev[1].0);
    let r = c.malloc(4096, 1).unwrap();
    assert_eq!(r, p, "both events done: the block is reusable");
    assert_eq!(f.st().released, 2);
    assert!(f.alive_events().is_empty());
    // A reused block starts with no recorded streams.
    c.free(r).unwrap();
    assert_eq!(f.st().recorded, 2);
}

#[test]
fn a_waiting_block_keeps_its_segment_until_empty_cache_after_completion() {
    let (c, f) = cache(usize::MAX);
    let p = c.malloc(MB, 0).unwrap();
    c.record_stream(p, 7).unwrap();
    c.free(p).unwrap();
    c.empty_cache();
    assert_eq!(c.stats().segments, 1);
    f.complete_all();
    c.empty_cache();
    assert_eq!((f.snap().allocs, f.snap().frees, f.snap().recorded, f.snap().released), (1, 1, 1, 1));
    assert_eq!(c.stats().reserved, 0);
}

#[test]
fn bad_pointers_are_argument_errors() {
    let (c, _) = cache(usize::MAX);
    let p = c.malloc(2048, 0).unwrap();
    for bad in [p + 512, p + 4096, 12345] {
        let e = c.free(bad).unwrap_err();
        assert_eq!(e.code, Code::TH_ERR_INVALID_ARG);
        assert!(e.msg.contains("not a pointer returned"), "{}", e.msg);
        assert_eq!(c.record_stream(bad, 1).unwrap_err().code, Code::TH_ERR_INVALID_ARG);
        assert_eq!(c.base_allocation(bad), None);
        assert_eq!(c.block_size(bad), None);
    }
    c.free(p).unwrap();
    let e = c.free(p).unwrap_err();
    assert!(e.msg.contains("already freed"), "{}", e.msg);
    assert_eq!(c.record_stream(p, 1).unwrap_err().code, Code::TH_ERR_INVALID_ARG);
    assert_eq!(c.block_size(p), None);
}

#[test]
fn out_of_memory_frees_the_cache_and_retries_once() {
    let (c, f) = cache(21 * MB);
    let small = c.malloc(512, 1).unwrap();
    c.free(small).unwrap();
    // 20 MiB do not fit next to the cached 2 MiB segment: it is released and the retry works.
    let p = c.malloc(5 * MB, 0).unwrap();
    assert_eq!((f.snap().ooms, f.snap().allocs, f.snap().frees), (1, 2, 1));
    assert_eq!(c.stats().reserved, 20 * MB);
    // Nothing cached can help now (the 15 MiB rest is in a segment in use).
    let e = c.malloc(5 * MB, 2).unwrap_err();
    assert_eq!(e.code, Code::TH_ERR_ALLOC);
    for part in ["5242880 bytes", "5242880 bytes allocated", "20971520 bytes reserved", "15728640 bytes cached"] {
        assert!(e.msg.contains(part), "{part:?} not in {:?}", e.msg);
    }
    assert_eq!(f.st().ooms, 3, "one retry");
    // The cache is intact: the same stream can still use its segment.
    let s = c.stats();
    assert_eq!((s.allocated, s.reserved, s.active_blocks), (5 * MB, 20 * MB, 1));
    let q = c.malloc(5 * MB, 0).unwrap();
    assert_eq!(q, p + 5 * MB as u64);
    c.free(p).unwrap();
    c.free(q).unwrap();
    // Other device errors are passed on and do not empty the cache.
    f.st().fail_with = Some(Code::TH_ERR_CUDA);
    assert_eq!(c.malloc(4 * MB, 9).unwrap_err().code, Code::TH_ERR_CUDA);
    assert_eq!(c.stats().segments, 1);
}

#[test]
fn stats_after_a_sequence() {
    let (c, _) = cache(usize::MAX);
    let a = c.malloc(1000, 0).unwrap(); // 1024 in a 2 MiB segment
    let b = c.malloc(3 * MB, 0).unwrap(); // 3 MiB in a 20 MiB segment
    let d = c.malloc(12 * MB + 7, 1).unwrap(); // 12 MiB + 512 in a 14 MiB segment
    let s = c.stats();
    let alloc = 1024 + 3 * MB + 12 * MB + 512;
    assert_eq!(
        s,
        Stats {
            allocated: alloc,
            reserved: 36 * MB,
            peak_allocated: alloc,
            peak_reserved: 36 * MB,
            segments: 3,
            active_blocks: 3,
            // The rests of the three segments; 14 MiB - (12 MiB + 512) is more than 1 MiB.
            cached_free: (2 * MB - 1024) + 17 * MB + (2 * MB - 512),
        }
    );
    c.free(b).unwrap();
    c.free(d).unwrap();
    let s = c.stats();
    assert_eq!((s.allocated, s.peak_allocated, s.active_blocks), (1024, alloc, 1));
    assert_eq!(s.cached_free, 36 * MB - 1024);
    c.reset_peak();
    c.empty_cache();
    let s = c.stats();
    assert_eq!((s.reserved, s.peak_reserved, s.segments, s.peak_allocated), (2 * MB, 36 * MB, 1, 1024));
    c.reset_peak();
    assert_eq!(c.stats().peak_reserved, 2 * MB);
    c.free(a).unwrap();
    c.empty_cache();
    assert_eq!(c.stats(), Stats { peak_allocated: 1024, peak_reserved: 2 * MB, ..Stats::default() });
}

#[test]
fn nothing_leaks_after_free_and_empty_cache_or_drop() {
    let (c, f) = cache(usize::MAX);
    let ptrs: Vec<u64> = (0..40).map(|i| c.malloc((i * 777_777) % (25 * MB) + 1, i as u64 % 3).unwrap()).collect();
    for (i, &p) in ptrs.iter().enumerate() {
        if i % 4 == 0 {
            c.record_stream(p, 10).unwrap();
        }
    }
    for &p in ptrs.iter().rev() {
        c.free(p).unwrap();
    }
    f.complete_all();
    c.empty_cache();
    let s = f.st();
    assert!(s.allocs > 3);
    assert_eq!((s.allocs, s.recorded, s.used), (s.frees, s.released, 0));
    drop(s);
    assert_eq!(c.stats().segments, 0);

    // Dropping a cache with live and waiting blocks returns everything.
    let (c, f) = cache(usize::MAX);
    let p = c.malloc(100, 0).unwrap();
    let q = c.malloc(20 * MB, 1).unwrap();
    c.record_stream(q, 4).unwrap();
    c.free(q).unwrap();
    assert_ne!(p, 0);
    drop(c);
    let s = f.st();
    assert_eq!((s.allocs, s.frees, s.recorded, s.released, s.used), (2, 2, 1, 1, 0));
}

#[test]
fn the_cache_is_shared_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<DeviceCache<Fake>>();
    let (c, f) = cache(usize::MAX);
    let mut live: Vec<(u64, usize)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4u64)
            .map(|t| {
                let c = &c;
                s.spawn(move || {
                    let mut mine = Vec::new();
                    for i in 0..300usize {
                        let bytes = (i * 7919 + t as usize * 131) % (3 * MB) + 1;
                        mine.push((c.malloc(bytes, t).unwrap(), bytes.next_multiple_of(512)));
                        if i % 3 == 2 {
                            let (p, _) = mine.swap_remove(i % mine.len());
                            c.free(p).unwrap();
                        }
                    }
                    mine
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    live.sort();
    for w in live.windows(2) {
        assert!(w[0].0 + w[0].1 as u64 <= w[1].0, "blocks {w:?} overlap");
    }
    let sizes: usize = live.iter().map(|&(p, _)| c.block_size(p).unwrap()).sum();
    assert_eq!(c.stats().allocated, sizes);
    assert_eq!(c.stats().active_blocks, live.len());
    for &(p, _) in &live {
        c.free(p).unwrap();
    }
    c.empty_cache();
    assert_eq!(f.st().used, 0);
}

#[path = "tests_random.rs"]
mod random;
