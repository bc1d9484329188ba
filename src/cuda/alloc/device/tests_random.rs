//! Thousands of random operations (mixed sizes and streams, `record_stream`, event
//! completions, `empty_cache`, out-of-memory) against a model of what must hold after each.

use super::*;
use std::collections::{HashMap, HashSet};

/// Knuth's MMIX linear congruential generator; the high bits are the usable ones.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

#[derive(Default)]
struct Model {
    /// Live block -> (size, stream, other streams that used it).
    live: BTreeMap<u64, (usize, u64, Vec<u64>)>,
    /// Freed blocks (address, size) held back by events.
    waiting: Vec<(u64, usize, Vec<u64>)>,
    /// Segment base -> the stream of its blocks.
    seg_stream: HashMap<u64, u64>,
    peak_allocated: usize,
    peak_reserved: usize,
}

/// Whether `event` may still be outstanding: alive and not completed.
fn pending(f: &Fake, event: u64) -> bool {
    f.st().events.get(&event).is_some_and(|e| !e.1)
}

fn draw_size(rng: &mut Lcg) -> usize {
    match rng.below(10) {
        0..=4 => 1 + rng.below(64 * KB as u64) as usize,
        5 | 6 => 1 + rng.below(MB as u64) as usize,
        7 | 8 => MB + 1 + rng.below(9 * MB as u64) as usize,
        _ => 10 * MB + rng.below(14 * MB as u64) as usize,
    }
}

fn check_new_block(c: &DeviceCache<Fake>, f: &Fake, m: &mut Model, p: u64, bytes: usize, stream: u64) {
    assert!(p != 0 && !m.live.contains_key(&p), "{p:#x} handed out twice");
    let size = c.block_size(p).unwrap();
    let rounded = bytes.next_multiple_of(512);
    if rounded <= MB {
        assert_eq!(size, rounded, "small blocks are split exactly");
    } else {
        assert!(size >= rounded && size - rounded <= MB, "{bytes} bytes got a {size}-byte block");
    }
    let (base, seg) = c.base_allocation(p).unwrap();
    assert_eq!(f.st().live.get(&base), Some(&seg), "the segment is a raw allocation");
    assert!(base <= p && p + size as u64 <= base + seg as u64, "the block lies inside its segment");
    assert_eq!(*m.seg_stream.entry(base).or_insert(stream), stream, "a segment serves one stream");
    for (w, wsize, events) in &m.waiting {
        if events.iter().any(|&e| pending(f, e)) {
            assert!(p + size as u64 <= *w || w + *wsize as u64 <= p, "reused a block whose events are pending");
        }
    }
    m.live.insert(p, (size, stream, Vec::new()));
}

fn check_invariants(c: &DeviceCache<Fake>, f: &Fake, m: &mut Model) {
    let mut end = 0;
    for (&p, &(size, _, _)) in &m.live {
        assert!(end <= p, "live blocks overlap at {p:#x}");
        end = p + size as u64;
    }
    let s = c.stats();
    let fs = f.st();
    assert_eq!(s.allocated, m.live.values().map(|b| b.0).sum::<usize>());
    assert_eq!(s.active_blocks, m.live.len());
    assert_eq!((s.reserved, s.segments), (fs.used, fs.live.len()));
    m.peak_allocated = m.peak_allocated.max(s.allocated);
    m.peak_reserved = m.peak_reserved.max(s.reserved);
    assert_eq!((s.peak_allocated, s.peak_reserved), (m.peak_allocated, m.peak_reserved));
    assert!(s.allocated + s.cached_free <= s.reserved);
    drop(fs);
    assert!(c.largest_free() <= s.cached_free);
}

/// After `empty_cache`, every segment still holds a live block or one waiting on an event.
fn check_emptied(f: &Fake, m: &Model) {
    let segs: Vec<(u64, usize)> = f.st().live.iter().map(|(&b, &s)| (b, s)).collect();
    for (base, size) in segs {
        let seg = base..base + size as u64;
        let live = m.live.range(seg.clone()).next().is_some();
        let waiting = m.waiting.iter().any(|(w, _, ev)| seg.contains(w) && ev.iter().any(|&e| pending(f, e)));
        assert!(live || waiting, "segment {base:#x} is entirely free after empty_cache");
    }
}

#[test]
fn random_operations_keep_the_invariants() {
    let (c, f) = cache(160 * MB);
    let mut m = Model::default();
    let mut rng = Lcg(0x5eed);
    let mut seen = HashSet::new();
    let (mut ok, mut failed, mut reused) = (0, 0, 0);
    for _ in 0..6000 {
        match rng.below(100) {
            0..=41 => {
                let (bytes, stream) = (draw_size(&mut rng), rng.below(4));
                let ooms = f.st().ooms;
                match c.malloc(bytes, stream) {
                    Ok(p) => {
                        check_new_block(&c, &f, &mut m, p, bytes, stream);
                        ok += 1;
                        reused += usize::from(!seen.insert(p));
                    }
                    Err(e) => {
                        assert_eq!(e.code, Code::TH_ERR_ALLOC);
                        assert!(e.msg.contains(&format!("{bytes} bytes")), "{}", e.msg);
                        assert_eq!(f.st().ooms, ooms + 2, "refused, then refused again after the release");
                        failed += 1;
                    }
                }
            }
            42..=79 if !m.live.is_empty() => {
                let p = *m.live.keys().nth(rng.below(m.live.len() as u64) as usize).unwrap();
                let (size, _, uses) = m.live.remove(&p).unwrap();
                let first = f.next_event_id();
                c.free(p).unwrap();
                let events = f.events_since(first);
                assert_eq!(events.len(), uses.len(), "one event per other stream");
                if !events.is_empty() {
                    m.waiting.push((p, size, events));
                }
            }
            80..=87 if !m.live.is_empty() => {
                let p = *m.live.keys().nth(rng.below(m.live.len() as u64) as usize).unwrap();
                let stream = rng.below(4);
                c.record_stream(p, stream).unwrap();
                let (_, own, uses) = m.live.get_mut(&p).unwrap();
                if stream != *own && !uses.contains(&stream) {
                    uses.push(stream);
                }
            }
            88..=93 => {
                let alive = f.alive_events();
                if !alive.is_empty() {
                    f.complete(alive[rng.below(alive.len() as u64) as usize].0);
                }
            }
            94 => f.complete_all(),
            95..=97 => {
                c.empty_cache();
                check_emptied(&f, &m);
            }
            98 => {
                c.reset_peak();
                let s = c.stats();
                (m.peak_allocated, m.peak_reserved) = (s.allocated, s.reserved);
            }
            _ => {
                assert_eq!(c.malloc(0, rng.below(4)), Ok(0));
                assert_eq!(c.free(0), Ok(()));
            }
        }
        m.waiting.retain(|(_, _, ev)| ev.iter().any(|&e| pending(&f, e)));
        check_invariants(&c, &f, &mut m);
    }
    assert!(ok > 1500 && failed > 0 && reused > 500, "ok {ok}, failed {failed}, reused {reused}");
    for &p in m.live.keys() {
        c.free(p).unwrap();
    }
    f.complete_all();
    c.empty_cache();
    let s = c.stats();
    assert_eq!((s.allocated, s.reserved, s.segments, s.active_blocks, s.cached_free), (0, 0, 0, 0, 0));
    let fs = f.st();
    assert_eq!((fs.allocs, fs.recorded, fs.used), (fs.frees, fs.released, 0));
}
