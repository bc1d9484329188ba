//! Byte, Char, Short, Int, Long: a blocked kernel (packed A/B panels, `MR x NR` register tile)
//! in the element type's wrapping arithmetic.

use super::*;
use crate::core::limits::try_filled;
use crate::exec::parallel::SharedPtr;

const MR: usize = 4;
const NR: usize = 16;
const KC: usize = 256;
const MC: usize = 64;
const NC: usize = 4096;

/// `MR x NR` products of a packed A panel (`kb` x MR, k-major) and B panel (`kb` x NR).
#[inline(always)]
fn micro<T: Num>(kb: usize, ap: &[T], bp: &[T]) -> [[T; NR]; MR] {
    let mut acc = [[T::zero(); NR]; MR];
    for (a, b) in ap.chunks_exact(MR).zip(bp.chunks_exact(NR)).take(kb) {
        for i in 0..MR {
            for j in 0..NR {
                acc[i][j] = acc[i][j].add(a[i].mul(b[j]));
            }
        }
    }
    acc
}

/// Packs `lines` lines of `x` (element `p < kb` of line `l` at `x.at(l, p)`) into `out` as
/// panels of `R` lines, k-major (element `(l, p)` at `((l / R) * kb + p) * R + l % R`), the
/// last panel zero-padded; the panels are split between threads.
///
/// # Safety
/// `x` must be readable for `lines x kb` elements; `out` holds `lines.div_ceil(R) * kb * R`.
unsafe fn pack_panels<T: Num + Send + Sync, const R: usize>(x: MatRef<T>, lines: usize, kb: usize, out: &mut [T]) {
    let dst = SharedPtr(out.as_mut_ptr());
    parallel::for_range(lines.div_ceil(R), kb * lines, |lo, hi| {
        let dst = &dst;
        for panel in lo..hi {
            for p in 0..kb {
                for r in 0..R {
                    let l = panel * R + r;
                    let v = if l < lines {
                        // SAFETY: (l, p) is inside x.
                        unsafe { *x.at(l, p) }
                    } else {
                        T::zero()
                    };
                    // SAFETY: index < panels*kb*R <= out.len(); panels split.
                    unsafe { *dst.0.add((panel * kb + p) * R + r) = v };
                }
            }
        }
    });
}

/// Blocked GEMM in `T`'s own (wrapping) arithmetic.
///
/// # Safety
/// As [`Gemm::kernel`].
pub(super) unsafe fn int_gemm<T: Num + Send + Sync>(p: Product<T>) -> Result<()> {
    let Product { m, n, k, alpha, a, b, beta, c } = p;
    let mut apack = try_filled(m.div_ceil(MR) * MR * KC.min(k), T::zero())?;
    let mut bpack = try_filled(NC.min(n).div_ceil(NR) * NR * KC.min(k), T::zero())?;
    for jc in (0..n).step_by(NC) {
        let nb = NC.min(n - jc);
        let npanels = nb.div_ceil(NR);
        for pc in (0..k).step_by(KC) {
            let kb = KC.min(k - pc);
            // SAFETY: B[pc.., jc..] (kb x nb: its columns as the lines) and A[.., pc..] (m x kb)
            // are inside b and a; the buffers hold a block's panels.
            unsafe {
                pack_panels::<T, NR>(MatRef { ptr: b.at(pc, jc), rs: b.cs, cs: b.rs }, nb, kb, &mut bpack);
                pack_panels::<T, MR>(MatRef { ptr: a.at(0, pc), ..a }, m, kb, &mut apack);
            }
            let first = pc == 0;
            let (apk, bpk) = (&apack[..], &bpack[..]);
            let mblocks = m.div_ceil(MC);
            parallel::for_range(mblocks, m * nb * kb, |lo, hi| {
                for ib in lo..hi {
                    let i0 = ib * MC;
                    let i1 = (i0 + MC).min(m);
                    for jp in 0..npanels {
                        let bpanel = &bpk[jp * kb * NR..(jp + 1) * kb * NR];
                        for ip in (i0 / MR)..i1.div_ceil(MR) {
                            let acc = micro(kb, &apk[ip * kb * MR..(ip + 1) * kb * MR], bpanel);
                            for (ii, row) in acc.iter().enumerate() {
                                let i = ip * MR + ii;
                                if i >= i1 {
                                    break;
                                }
                                for (jj, &v) in row.iter().enumerate() {
                                    let j = jp * NR + jj;
                                    if j >= nb {
                                        break;
                                    }
                                    let p = c.at(i, jc + j);
                                    // SAFETY: (i, jc+j) is inside c; row blocks are split
                                    // between threads so no element is written twice at once.
                                    unsafe {
                                        let old = if !first {
                                            *p
                                        } else if beta.is_zero() {
                                            T::zero()
                                        } else {
                                            beta.mul(*p)
                                        };
                                        *p = old.add(alpha.mul(v));
                                    }
                                }
                            }
                        }
                    }
                }
            });
        }
    }
    Ok(())
}
