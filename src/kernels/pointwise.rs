//! The pointwise inner loops (one run of the plan each), compiled per instruction set by
//! `kernels::multiversion!`. Bodies take a contiguous fast path (all strides 1), a
//! broadcast-scalar path (an input stride 0) and a strided path; LLVM vectorizes the first two.
//!
//! Contiguous outputs can be written with non-temporal (streaming) stores (`nt`): the values are
//! computed into a 4 KiB buffer in L1, then copied out with `movnt` stores, 64-byte aligned,
//! so outputs far larger than the last-level cache skip the read-for-ownership and don't evict
//! the inputs. The copy is per instruction set (`Streamer`: SSE2 / AVX2 / AVX-512 stores; plain
//! copies off x86-64; implemented by the instruction-set markers). The caller issues
//! `store_fence()` once per thread after such stores.

use super::{Avx2, Avx512, Base, multiversion};
use std::sync::OnceLock;

/// Copies whole 64-byte blocks with streaming stores: `dst` 64-byte aligned, `src` 64-byte
/// aligned, `bytes` a multiple of 64.
pub trait Streamer {
    /// # Safety
    /// Both ranges valid for `bytes` bytes, aligned as above, not overlapping.
    unsafe fn stream(dst: *mut u8, src: *const u8, bytes: usize);
}

/// The streaming copy loop: `$W`-byte vectors `$V`, each loaded (aligned) by `$load` and stored
/// by `$stream`. Expanded in the marker's `stream`, which is only inlined into kernel copies
/// compiled with its instruction set.
macro_rules! movnt_copy {
    ($dst:ident, $src:ident, $bytes:ident, $W:literal, $V:ident, $load:ident, $stream:ident) => {{
        use std::arch::x86_64::{$V, $load, $stream};
        let mut k = 0;
        while k < $bytes {
            // SAFETY: caller contract (both 64-byte aligned, k a multiple of $W below bytes); the
            // instruction set is there: SSE2 is part of x86-64, and the AVX2 / AVX-512 kernel
            // copies only run where isa() found them.
            unsafe { $stream($dst.add(k) as *mut $V, $load($src.add(k) as *const $V)) };
            k += $W;
        }
    }};
}

/// The baseline copy: SSE2 `movntdq` on x86-64 (every x86-64 CPU has it), plain copies elsewhere
/// (and under Miri, which cannot run the instruction).
impl Streamer for Base {
    #[inline(always)]
    unsafe fn stream(dst: *mut u8, src: *const u8, bytes: usize) {
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        movnt_copy!(dst, src, bytes, 16, __m128i, _mm_load_si128, _mm_stream_si128);
        #[cfg(any(not(target_arch = "x86_64"), miri))]
        // SAFETY: caller contract.
        unsafe {
            std::ptr::copy_nonoverlapping(src, dst, bytes)
        }
    }
}

#[cfg(target_arch = "x86_64")]
/// 32-byte `vmovntdq`.
impl Streamer for Avx2 {
    #[inline(always)]
    unsafe fn stream(dst: *mut u8, src: *const u8, bytes: usize) {
        movnt_copy!(dst, src, bytes, 32, __m256i, _mm256_load_si256, _mm256_stream_si256);
    }
}

#[cfg(target_arch = "x86_64")]
/// 64-byte `vmovntdq`.
impl Streamer for Avx512 {
    #[inline(always)]
    unsafe fn stream(dst: *mut u8, src: *const u8, bytes: usize) {
        movnt_copy!(dst, src, bytes, 64, __m512i, _mm512_load_si512, _mm512_stream_si512);
    }
}

/// Orders this thread's streaming stores before its later stores (`sfence`); call once after a
/// batch of `nt` kernel calls, before the results are handed to another thread.
#[inline]
pub fn store_fence() {
    // (Miri cannot run sfence; under it the kernels take the portable path, which makes no
    // streaming stores, so there is nothing to order)
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    // SAFETY: sfence has no preconditions (SSE is part of x86-64).
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

/// Bytes computed per streaming chunk (an L1-resident buffer).
const CHUNK: usize = 4096;

#[repr(C, align(64))]
struct ChunkBuf([std::mem::MaybeUninit<u8>; CHUNK]);

/// Smallest contiguous output (bytes) worth streaming.
const MIN_STREAM: usize = 256;

/// `o[i] = g(i)` for `i < n`, `o` contiguous, through `write_pieces`.
#[inline(always)]
unsafe fn write_contig<S: Streamer, O: Copy>(n: usize, o: *mut O, nt: bool, g: impl Fn(usize) -> O) {
    // SAFETY: caller contract; each piece writes its len elements at dst from g(i..i + len).
    unsafe {
        write_pieces::<S, O>(n, o, nt, |i, len, dst| {
            for j in 0..len {
                dst.add(j).write(g(i + j));
            }
        })
    }
}

/// `o[i]` for `i < n`, `o` contiguous, written by `piece(i, len, dst)`, which writes elements
/// `i..i + len` at `dst`; with `nt`, the 64-byte aligned middle is computed chunk by chunk into
/// an L1 buffer and streamed out (head and tail use ordinary stores).
///
/// Every piece (the whole output without `nt`; head, chunks and tail with it) goes through the
/// one call, so each kernel holds one vectorized copy of its loop, not one per piece.
#[inline(always)]
unsafe fn write_pieces<S: Streamer, O: Copy>(n: usize, o: *mut O, nt: bool, piece: impl Fn(usize, usize, *mut O)) {
    let sz = size_of::<O>();
    let stream = nt && sz != 0 && n * sz >= MIN_STREAM && (o as usize).is_multiple_of(sz) && 64usize.is_multiple_of(sz);
    // elements before the first 64-byte line, per chunk, per line (streamed pieces only)
    let (head, per, line) =
        if stream { ((((64 - (o as usize) % 64) % 64) / sz).min(n), CHUNK / sz, 64 / sz) } else { (0, 0, 1) };
    let mut buf = ChunkBuf([std::mem::MaybeUninit::uninit(); CHUNK]);
    let b = buf.0.as_mut_ptr() as *mut O;
    let mut i = 0;
    while i < n {
        // the next piece [i, i + len), streamed through the buffer or written in place
        let (len, streamed) = if !stream {
            (n, false)
        } else if i < head {
            (head, false)
        } else {
            // whole lines only; the rest is the tail
            match per.min(n - i) / line * line {
                0 => (n - i, false),
                len => (len, true),
            }
        };
        // SAFETY: caller contract: o is valid for n elements; piece writes i..i + len < n. The
        // buffer holds CHUNK / sz >= len elements of O, 64-byte aligned, and both o + i (a
        // multiple of 64 bytes past the head) and the buffer are aligned when streamed.
        unsafe {
            let dst = if streamed { b } else { o.add(i) };
            piece(i, len, dst);
            if streamed {
                S::stream(o.add(i) as *mut u8, b as *const u8, len * sz);
            }
        }
        i += len;
    }
}

/// A kernel operand: a pointer to its first element and the stride (in elements) between
/// elements.
#[derive(Clone, Copy)]
pub struct Strided<P>(pub P, pub isize);

#[inline(always)]
unsafe fn fill_body<S: Streamer, O: Copy, F: Fn() -> O>(n: usize, o: Strided<*mut O>, nt: bool, f: &F) {
    let Strided(o, so) = o;
    // SAFETY: caller contract: o is valid for n elements at stride so.
    unsafe {
        if so == 1 {
            write_contig::<S, O>(n, o, nt, |_| f());
        } else {
            for i in 0..n as isize {
                o.offset(i * so).write(f());
            }
        }
    }
}

#[inline(always)]
unsafe fn map1_body<S: Streamer, O: Copy, A: Copy, F: Fn(A) -> O>(
    n: usize,
    o: Strided<*mut O>,
    a: Strided<*const A>,
    nt: bool,
    f: &F,
) {
    let (Strided(o, so), Strided(a, sa)) = (o, a);
    // SAFETY: caller contract: both pointers valid for n elements at their strides.
    unsafe {
        if so == 1 && sa == 1 {
            write_contig::<S, O>(n, o, nt, |i| f(a.add(i).read()));
        } else {
            for i in 0..n as isize {
                o.offset(i * so).write(f(a.offset(i * sa).read()));
            }
        }
    }
}

#[inline(always)]
unsafe fn map2_body<S: Streamer, O: Copy, A: Copy, B: Copy, F: Fn(A, B) -> O>(
    n: usize,
    o: Strided<*mut O>,
    a: Strided<*const A>,
    b: Strided<*const B>,
    nt: bool,
    f: &F,
) {
    let (Strided(o, so), Strided(a, sa), Strided(b, sb)) = (o, a, b);
    // SAFETY: caller contract: all pointers valid for n elements at their strides.
    unsafe {
        if so == 1 && sa == 1 && sb == 1 {
            write_contig::<S, O>(n, o, nt, |i| f(a.add(i).read(), b.add(i).read()));
        } else if so == 1 && sa == 1 && sb == 0 {
            let bv = b.read();
            write_contig::<S, O>(n, o, nt, |i| f(a.add(i).read(), bv));
        } else if so == 1 && sa == 0 && sb == 1 {
            let av = a.read();
            write_contig::<S, O>(n, o, nt, |i| f(av, b.add(i).read()));
        } else {
            for i in 0..n as isize {
                o.offset(i * so).write(f(a.offset(i * sa).read(), b.offset(i * sb).read()));
            }
        }
    }
}

#[inline(always)]
unsafe fn map3_body<S: Streamer, O: Copy, A: Copy, B: Copy, C: Copy, F: Fn(A, B, C) -> O>(
    n: usize,
    o: Strided<*mut O>,
    a: Strided<*const A>,
    b: Strided<*const B>,
    c: Strided<*const C>,
    nt: bool,
    f: &F,
) {
    let (Strided(o, so), Strided(a, sa), Strided(b, sb), Strided(c, sc)) = (o, a, b, c);
    // SAFETY: caller contract: all pointers valid for n elements at their strides.
    unsafe {
        if so == 1 && sa == 1 && sb == 1 && sc == 1 {
            write_contig::<S, O>(n, o, nt, |i| f(a.add(i).read(), b.add(i).read(), c.add(i).read()));
        } else {
            for i in 0..n as isize {
                o.offset(i * so).write(f(a.offset(i * sa).read(), b.offset(i * sb).read(), c.offset(i * sc).read()));
            }
        }
    }
}

multiversion! {
    /// `o[i] = f()`; `nt`: stream a contiguous output (see the module docs).
    pub fn fill_run<O: Copy, F: Fn() -> O>(n: usize, o: Strided<*mut O>, nt: bool, f: &F) => fill_body
}
multiversion! {
    /// `o[i] = f(a[i])`.
    pub fn map1_run<O: Copy, A: Copy, F: Fn(A) -> O>(n: usize, o: Strided<*mut O>, a: Strided<*const A>, nt: bool, f: &F) => map1_body
}
multiversion! {
    /// `o[i] = f(a[i], b[i])`.
    pub fn map2_run<O: Copy, A: Copy, B: Copy, F: Fn(A, B) -> O>(n: usize, o: Strided<*mut O>, a: Strided<*const A>, b: Strided<*const B>, nt: bool, f: &F) => map2_body
}
multiversion! {
    /// `o[i] = f(a[i], b[i], c[i])`.
    pub fn map3_run<O: Copy, A: Copy, B: Copy, C: Copy, F: Fn(A, B, C) -> O>(n: usize, o: Strided<*mut O>, a: Strided<*const A>, b: Strided<*const B>, c: Strided<*const C>, nt: bool, f: &F) => map3_body
}

multiversion! { @base
    /// `map1_run`'s plain copy alone.
    pub fn map1_base<O: Copy, A: Copy, F: Fn(A) -> O>(n: usize, o: Strided<*mut O>, a: Strided<*const A>, nt: bool, f: &F) => map1_body
}
multiversion! { @base
    /// `map2_run`'s plain copy alone.
    pub fn map2_base<O: Copy, A: Copy, B: Copy, F: Fn(A, B) -> O>(n: usize, o: Strided<*mut O>, a: Strided<*const A>, b: Strided<*const B>, nt: bool, f: &F) => map2_body
}

/// A slice kernel: `o[i] = f(a[i])` for `i < n`, `a` and `o` contiguous (equal or not
/// overlapping), written in one instruction set's intrinsics (`vmath::block` hands them out).
pub type Block<O, A> = unsafe fn(*const A, *mut O, usize);

#[inline(always)]
unsafe fn block_body<S: Streamer, O: Copy, A: Copy>(n: usize, o: *mut O, a: *const A, nt: bool, block: Block<O, A>) {
    // SAFETY: caller contract: a and o valid for n elements, each piece within them.
    unsafe { write_pieces::<S, O>(n, o, nt, |i, len, dst| block(a.add(i), dst, len)) }
}

/// `map1_run` for contiguous operands through a slice kernel (in place of a per-element
/// closure); `nt` as there. The slice kernels are AVX-512 code, so this is the AVX-512 copy.
///
/// # Safety
/// `a` and `o` valid for `n` elements (equal or not overlapping); `block` one that
/// `vmath::block` handed out (so the CPU runs AVX-512).
pub unsafe fn map1_block<O: Copy, A: Copy>(n: usize, o: *mut O, a: *const A, nt: bool, block: Block<O, A>) {
    #[cfg(target_arch = "x86_64")]
    {
        multiversion!(@copy Avx512, fn v512<O: Copy, A: Copy>(n: usize, o: *mut O, a: *const A, nt: bool, block: Block<O, A>)
            => block_body::<Avx512, O, A>(n, o, a, nt, block));
        // SAFETY: caller contract (the CPU has AVX-512).
        unsafe { v512(n, o, a, nt, block) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: caller contract.
    unsafe {
        block_body::<Base, O, A>(n, o, a, nt, block)
    }
}

/// Bytes an elementwise op must touch (all operands) before its contiguous output is streamed:
/// `TH_STREAM_BYTES` when set, else the last-level cache size as Linux's sysfs reports it for
/// cpu0 (32 MiB when unknown). (`sysconf(_SC_LEVEL3_CACHE_SIZE)` is not used: in VMs it can
/// report the whole package's cache, 8x too much on the project's machine.)
pub fn stream_threshold() -> usize {
    static T: OnceLock<usize> = OnceLock::new();
    *T.get_or_init(|| {
        if let Some(v) = std::env::var("TH_STREAM_BYTES").ok().and_then(|s| s.trim().parse().ok()) {
            return v;
        }
        let sysfs = |level: &str| -> Option<usize> {
            let s = std::fs::read_to_string(format!("/sys/devices/system/cpu/cpu0/cache/{level}/size")).ok()?;
            let s = s.trim();
            let (num, mult) = match s.as_bytes().last()? {
                b'K' => (&s[..s.len() - 1], 1 << 10),
                b'M' => (&s[..s.len() - 1], 1 << 20),
                _ => (s, 1),
            };
            num.parse::<usize>().ok().map(|n| n * mult)
        };
        sysfs("index3").filter(|&b| b >= 1 << 20).unwrap_or(32 << 20)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streaming_writes_match_plain_writes() {
        // Every alignment of the output and lengths around the chunk size.
        let src: Vec<f32> = (0..40_000).map(|i| i as f32 * 0.5).collect();
        // (under Miri every fourth offset and lengths up to two chunks)
        for off in (0..17).step_by(if cfg!(miri) { 4 } else { 1 }) {
            for &n in &[0usize, 1, 15, 2047, 2048, 2049, 4096, 10_000, 39_000] {
                if cfg!(miri) && n > 4096 {
                    continue;
                }
                let mut a = vec![-1.0f32; n + 40];
                let mut b = vec![-1.0f32; n + 40];
                // SAFETY: both outputs hold off + n elements; src holds n.
                unsafe {
                    map1_run(n, Strided(a.as_mut_ptr().add(off), 1), Strided(src.as_ptr(), 1), true, &|x: f32| x + 1.0);
                    map1_run(n, Strided(b.as_mut_ptr().add(off), 1), Strided(src.as_ptr(), 1), false, &|x: f32| {
                        x + 1.0
                    });
                    let mut c = vec![0u8; n + 70];
                    fill_run(n, Strided(c.as_mut_ptr().add(off), 1), true, &|| 7u8);
                    assert!(c[off..off + n].iter().all(|&x| x == 7) && c[..off].iter().all(|&x| x == 0));
                    assert!(c[off + n..].iter().all(|&x| x == 0));
                }
                store_fence();
                assert_eq!(a, b, "off {off} n {n}");
            }
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "no AVX-512 kernels under Miri")]
    fn streamed_blocks_match_direct_ones() {
        let Some(b) = crate::kernels::vmath::block::<f32>(crate::kernels::vmath::Sliced::Tanh) else {
            return; // not an AVX-512 run
        };
        let src: Vec<f32> = (0..40_000).map(|i| i as f32 * 0.001 - 20.0).collect();
        for off in 0..17 {
            for &n in &[0usize, 1, 15, 2047, 2049, 4096, 10_000, 39_000] {
                let mut a = vec![-1.0f32; n + 40];
                let mut want = vec![-1.0f32; n + 40];
                // SAFETY: both outputs hold off + n elements; src holds n; block came from
                // vmath::block, so the CPU runs it.
                unsafe {
                    map1_block(n, a.as_mut_ptr().add(off), src.as_ptr(), true, b);
                    b(src.as_ptr(), want.as_mut_ptr().add(off), n);
                }
                store_fence();
                assert_eq!(a, want, "off {off} n {n}");
            }
        }
    }
}
