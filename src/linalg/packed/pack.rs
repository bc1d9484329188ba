//! Packing: panels of a and b in the kernel's layout, from every source element type.

use super::*;

/// Packs panels `panels` of `b[pc.., jc..]` (`kb x nb`), each `nr` columns, k-major, the last
/// zero-padded to a whole panel: panel `jp` at `out + jp * kb * nr`.
///
/// # Safety
/// The block is inside `b`; the panels' `kb * nr` elements each are writable at `out`.
pub(super) unsafe fn pack_b<E: Lane, S: Source<E>>(
    b: MatRef<S>,
    pc: usize,
    jc: usize,
    kb: usize,
    nb: usize,
    nr: usize,
    panels: Range<usize>,
    out: *mut E,
) {
    // SAFETY: reads (pc + p, j0 + j) with p < kb, j < cols: inside the block; writes panel jp's
    // kb * nr elements at jp * kb * nr.
    unsafe {
        for jp in panels {
            let dst = out.add(jp * kb * nr);
            let j0 = jc + jp * nr;
            let cols = nr.min(nb - jp * nr);
            let at = |p: usize, j: usize| b.ptr.offset((pc + p) as isize * b.rs + (j0 + j) as isize * b.cs);
            if b.cs == 1 {
                for p in 0..kb {
                    S::run(at(p, 0), dst.add(p * nr), 1, cols);
                }
            } else if b.rs == 1 {
                // b's columns are contiguous along k
                S::columns(at(0, 0), b.cs, kb, cols, nr, dst);
            } else {
                for p in 0..kb {
                    for j in 0..cols {
                        *dst.add(p * nr + j) = (*at(p, j)).get();
                    }
                }
            }
            for p in 0..kb {
                for j in cols..nr {
                    *dst.add(p * nr + j) = E::zero();
                }
            }
        }
    }
}

/// Packs `a[ic.., pc..]` (`mb x kb`) as panels of `MR` rows, k-major, zero-padded to a whole
/// panel.
///
/// # Safety
/// The block is inside `a`; `out` is writable for `mb.next_multiple_of(MR) * kb` elements.
#[inline(always)]
pub(super) unsafe fn pack_a<E: Lane, S: Source<E>>(
    a: MatRef<S>,
    ic: usize,
    pc: usize,
    mb: usize,
    kb: usize,
    mr: usize,
    out: *mut E,
) {
    // SAFETY: reads (i0 + i, pc + p) with i < rows, p < kb: inside the block; writes panel ip's
    // kb * mr elements at ip * kb * mr.
    unsafe {
        let mut first = 0;
        if a.rs == 1 && mb >= mr {
            // a's columns are contiguous: the whole panels take each column's run of rows at
            // once (panel by panel, each step of each panel would read a new column: with long
            // columns, a new page)
            first = mb / mr;
            let src = a.ptr.offset(ic as isize + pc as isize * a.cs);
            match mr {
                MAX_MR => spread::<E, S, MAX_MR>(src, a.cs, kb, first, out),
                MR => spread::<E, S, MR>(src, a.cs, kb, first, out),
                // (any other height: panel by panel below)
                _ => first = 0,
            }
        }
        for ip in first..mb.div_ceil(mr) {
            let dst = out.add(ip * kb * mr);
            let i0 = ic + ip * mr;
            let rows = mr.min(mb - ip * mr);
            let at = |i: usize, p: usize| a.ptr.offset((i0 + i) as isize * a.rs + (pc + p) as isize * a.cs);
            if rows == mr && a.cs == 1 {
                // each row is kb contiguous elements: the panel is their transpose
                S::columns(at(0, 0), a.rs, kb, mr, mr, dst);
            } else if rows == mr {
                let src: [*const S; MAX_MR] = std::array::from_fn(|i| at(i.min(mr - 1), 0));
                S::rows(&src[..mr], a.cs, kb, dst);
            } else {
                for p in 0..kb {
                    for i in 0..mr {
                        *dst.add(p * mr + i) = if i < rows { (*at(i, p)).get() } else { E::zero() };
                    }
                }
            }
        }
    }
}

/// Steps ahead at which `spread` fetches a column (a few lines, likely on a page of their own:
/// strides too long for the hardware to fetch ahead).
const COLS_AHEAD: usize = 8;

/// `panels` panels of `N` rows of `a` whose columns are contiguous, one column at a time: panel
/// `ip` gets `dst[ip*kb*N + p*N + i] = src[ip*N + i + p*cs]` for `i < N`, `p < kb`.
///
/// # Safety
/// Those elements are readable at `src` and writable at `dst`.
#[inline(always)]
unsafe fn spread<E: Lane, S: Source<E>, const N: usize>(
    src: *const S,
    cs: isize,
    kb: usize,
    panels: usize,
    dst: *mut E,
) {
    let lines = (panels * N * size_of::<S>()).div_ceil(LINE) + 1;
    // SAFETY: per the contract (a fetch is a hint, of any address).
    unsafe {
        for p in 0..kb {
            let col = src.offset(p as isize * cs);
            if p + COLS_AHEAD < kb {
                let next = col.wrapping_offset(COLS_AHEAD as isize * cs).cast::<u8>();
                for l in 0..lines {
                    prefetch(next.wrapping_add(l * LINE));
                }
            }
            for ip in 0..panels {
                let (from, to) = (col.add(ip * N), dst.add(ip * kb * N + p * N));
                if size_of::<S>() == size_of::<E>() {
                    // fixed-length moves, not a `memcpy` call per step
                    for i in 0..N {
                        *to.add(i) = (*from.add(i)).get();
                    }
                } else {
                    S::run(from, to, 1, N);
                }
            }
        }
    }
}

/// The element types of operands the packed kernel of `E` takes: `E` itself, and Half/BFloat16
/// for f32 (converted as they are packed, the `half` crate's F16C conversion where the CPU has
/// it).
pub(crate) trait Source<E: Lane>: Copy + Send + Sync {
    /// The element as `E` (exact: f16 and bf16 are subsets of f32).
    fn get(self) -> E;
    /// `dst[q * ds] = src[q]` for `q < len`.
    ///
    /// # Safety
    /// `src` is readable for `len` elements, `dst` writable at those `len` places.
    unsafe fn run(src: *const Self, dst: *mut E, ds: usize, len: usize);
    /// Packs `cols` columns of `kb` elements, column `j` contiguous at `src + j*cs`, as rows of
    /// `nr`: `dst[p*nr + j] = src[p + j*cs]`.
    ///
    /// # Safety
    /// Those elements are readable; `dst` is writable for `kb * nr` elements (`cols <= nr`).
    unsafe fn columns(src: *const Self, cs: isize, kb: usize, cols: usize, nr: usize, dst: *mut E);
    /// Packs `mr = src.len()` rows of `kb` elements (row `i` at `src[i]`, elements `cs` apart)
    /// k-major: `dst[p*mr + i] = src[i][p*cs]`.
    ///
    /// # Safety
    /// Those elements are readable; `dst` is writable for `kb * mr` elements.
    #[inline(always)]
    unsafe fn rows(src: &[*const Self], cs: isize, kb: usize, dst: *mut E) {
        let mr = src.len();
        // SAFETY: forwarded contract.
        unsafe {
            for p in 0..kb {
                for (i, s) in src.iter().enumerate() {
                    *dst.add(p * mr + i) = (*s.offset(p as isize * cs)).get();
                }
            }
        }
    }
}

macro_rules! same_source {
    ($($E:ty),*) => {$(
        impl Source<$E> for $E {
            #[inline(always)]
            fn get(self) -> $E {
                self
            }
            #[inline(always)]
            unsafe fn run(src: *const Self, dst: *mut $E, ds: usize, len: usize) {
                // SAFETY: forwarded contract.
                unsafe {
                    if ds == 1 {
                        std::ptr::copy_nonoverlapping(src, dst, len);
                    } else {
                        for q in 0..len {
                            *dst.add(q * ds) = *src.add(q);
                        }
                    }
                }
            }
            unsafe fn columns(src: *const Self, cs: isize, kb: usize, cols: usize, nr: usize, dst: *mut $E) {
                let l = block_lanes::<$E>();
                // SAFETY: forwarded contract: (p, j) with p < kb, j < cols are read at
                // src + p + j*cs and written at dst + p*nr + j (l x l blocks of them at once).
                unsafe {
                    let mut p0 = 0;
                    if l > 0 && cols >= l {
                        // l x l blocks transposed in registers; when l does not divide cols, the
                        // last block starts at cols - l and writes some columns twice (the same
                        // values)
                        let starts = (0..cols - l).step_by(l).chain([cols - l]);
                        let ahead = PACK_AHEAD / size_of::<$E>();
                        while p0 + l <= kb {
                            if (p0 * size_of::<$E>()).is_multiple_of(LINE) {
                                // each column's line PACK_AHEAD on (a hint: past the column's
                                // end it fetches what is there, or nothing)
                                for j in 0..cols {
                                    prefetch(src.wrapping_offset((p0 + ahead) as isize + j as isize * cs));
                                }
                            }
                            for j in starts.clone() {
                                transpose_block(src.offset(p0 as isize + j as isize * cs), cs, dst.add(p0 * nr + j), nr as isize);
                            }
                            p0 += l;
                        }
                    }
                    for j in 0..cols {
                        for p in p0..kb {
                            *dst.add(p * nr + j) = *src.offset(p as isize + j as isize * cs);
                        }
                    }
                }
            }
        }
    )*};
}
crate::th_dtypes!(same_source; float);

macro_rules! half_source {
    ($($S:ty),*) => {$(
        impl Source<f32> for $S {
            #[inline(always)]
            fn get(self) -> f32 {
                self.to_f32()
            }
            unsafe fn run(src: *const Self, dst: *mut f32, ds: usize, len: usize) {
                use half::slice::HalfFloatSliceExt;
                // SAFETY: forwarded contract.
                unsafe {
                    let src = std::slice::from_raw_parts(src, len);
                    if ds == 1 {
                        src.convert_to_f32_slice(std::slice::from_raw_parts_mut(dst, len));
                        return;
                    }
                    // converted in runs through a buffer, then spread
                    const RUN: usize = 64;
                    let mut buf = [0f32; RUN];
                    for (q, run) in src.chunks(RUN).enumerate() {
                        run.convert_to_f32_slice(&mut buf[..run.len()]);
                        for (r, &v) in buf[..run.len()].iter().enumerate() {
                            *dst.add((q * RUN + r) * ds) = v;
                        }
                    }
                }
            }
            unsafe fn columns(src: *const Self, cs: isize, kb: usize, cols: usize, nr: usize, dst: *mut f32) {
                // runs of CHUNK elements of each column converted (contiguous, F16C where the
                // CPU has it) to an f32 buffer of columns, which f32's `columns` transposes in
                // registers (rather than storing one converted element at a time into the
                // panel, a strided store per element)
                const CHUNK: usize = 64;
                let mut buf = [0f32; CHUNK * MAX_NR];
                // SAFETY: forwarded contract: column j is kb contiguous elements at src + j*cs
                // (wider panels than the buffer's are spread one element at a time); the
                // buffer holds cols <= MAX_NR columns of CHUNK elements; rows p0..
                // p0 + len of the panel are at dst + p0*nr.
                unsafe {
                    if cols > MAX_NR {
                        for j in 0..cols {
                            Self::run(src.offset(j as isize * cs), dst.add(j), nr, kb);
                        }
                        return;
                    }
                    for p0 in (0..kb).step_by(CHUNK) {
                        let len = CHUNK.min(kb - p0);
                        for j in 0..cols {
                            Self::run(src.offset(j as isize * cs + p0 as isize), buf.as_mut_ptr().add(j * CHUNK), 1, len);
                        }
                        <f32 as Source<f32>>::columns(buf.as_ptr(), CHUNK as isize, len, cols, nr, dst.add(p0 * nr));
                    }
                }
            }
        }
    )*};
}
crate::th_dtypes!(half_source; half);
