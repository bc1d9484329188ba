//! The apply engine: every elementwise loop in the library runs through here.
//!
//! Given an output shape and N operands (each a base pointer and strides already broadcast to
//! that shape, 0 where an operand is broadcast), a `Plan` drops size-1 dims, orders dims by the
//! output's strides (so the output is written in memory order), merges dims that are contiguous
//! in every operand, and leaves one inner dim walked with constant strides. Work above
//! `parallel::GRAIN` elements is split across the private rayon pool: by rows of the outer dims,
//! or by pieces of the inner run when there is only one dim. The typed kernels in
//! `ops::kernels` then pick a contiguous (vectorized) or strided inner loop per run.

use crate::parallel;

/// A merged iteration space for N operands (operand 0 is the output).
pub struct Plan<const N: usize> {
    /// Dim sizes, outermost first; never empty (a scalar is one dim of size 1).
    sizes: Vec<usize>,
    /// Per dim, the stride of each operand in elements.
    strides: Vec<[isize; N]>,
}

impl<const N: usize> Plan<N> {
    /// `shape` is the output shape; `strides[k]` the strides of operand k for it.
    pub fn new(shape: &[i64], strides: [&[i64]; N]) -> Self {
        let mut dims: Vec<(usize, [isize; N])> = Vec::with_capacity(shape.len());
        for (d, &s) in shape.iter().enumerate() {
            if s == 1 {
                continue;
            }
            let mut st = [0isize; N];
            for k in 0..N {
                st[k] = strides[k][d] as isize;
            }
            dims.push((s as usize, st));
        }
        // Output memory order: larger output strides outside (stable, so ties keep row-major).
        dims.sort_by(|a, b| b.1[0].unsigned_abs().cmp(&a.1[0].unsigned_abs()));
        let mut sizes: Vec<usize> = Vec::with_capacity(dims.len());
        let mut strides: Vec<[isize; N]> = Vec::with_capacity(dims.len());
        for (s, st) in dims {
            if let (Some(ls), Some(lt)) = (sizes.last_mut(), strides.last_mut())
                && (0..N).all(|k| lt[k] == st[k] * s as isize)
            {
                *ls *= s;
                *lt = st;
                continue;
            }
            sizes.push(s);
            strides.push(st);
        }
        if sizes.is_empty() {
            sizes.push(1);
            strides.push([0; N]);
        }
        Plan { sizes, strides }
    }

    pub fn numel(&self) -> usize {
        self.sizes.iter().product()
    }

    /// Length and strides of the inner run.
    pub fn inner(&self) -> (usize, [isize; N]) {
        (*self.sizes.last().unwrap_or(&1), *self.strides.last().unwrap_or(&[0; N]))
    }

    /// Calls `f(pointers, inner strides, len)` for every inner run, in parallel when large.
    /// `bases[k]` points at element 0 of operand k and `elem[k]` is its element size in bytes.
    /// When `serial` is set the runs go in order on this thread (an output that overlaps itself).
    ///
    /// # Safety
    /// Every element the plan reaches from each base must be valid for the kernel's accesses,
    /// and the kernel must tolerate running concurrently on disjoint runs of the output.
    pub unsafe fn run<F>(&self, bases: [*mut u8; N], elem: [usize; N], serial: bool, f: F)
    where
        F: Fn([*mut u8; N], [isize; N], usize) + Sync,
    {
        let nd = self.sizes.len();
        let (inner, ist) = self.inner();
        let rows: usize = self.sizes[..nd - 1].iter().product();
        let total = rows * inner;
        let addr = bases.map(|p| p as usize);
        let work = if serial { 0 } else { total };
        if rows == 1 {
            // One run: split it into pieces.
            parallel::for_range(inner, work, |a, b| {
                let mut p = [std::ptr::null_mut::<u8>(); N];
                for k in 0..N {
                    p[k] = (addr[k] as *mut u8).wrapping_offset(a as isize * ist[k] * elem[k] as isize);
                }
                f(p, ist, b - a);
            });
            return;
        }
        parallel::for_range(rows, work, |a, b| {
            let outer = &self.sizes[..nd - 1];
            let mut idx = vec![0usize; nd - 1];
            let mut r = a;
            for d in (0..nd - 1).rev() {
                idx[d] = r % outer[d];
                r /= outer[d];
            }
            let mut p = [std::ptr::null_mut::<u8>(); N];
            for k in 0..N {
                let off: isize = (0..nd - 1).map(|d| idx[d] as isize * self.strides[d][k]).sum();
                p[k] = (addr[k] as *mut u8).wrapping_offset(off * elem[k] as isize);
            }
            for _ in a..b {
                f(p, ist, inner);
                // Advance the odometer over the outer dims.
                let mut d = nd - 1;
                while d > 0 {
                    d -= 1;
                    idx[d] += 1;
                    for k in 0..N {
                        p[k] = p[k].wrapping_offset(self.strides[d][k] * elem[k] as isize);
                    }
                    if idx[d] < outer[d] {
                        break;
                    }
                    for k in 0..N {
                        p[k] = p[k].wrapping_offset(-(self.strides[d][k] * outer[d] as isize) * elem[k] as isize);
                    }
                    idx[d] = 0;
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn plan_merges_and_orders() {
        let p = Plan::<2>::new(&[4, 5, 6], [&[30, 6, 1], &[30, 6, 1]]);
        assert_eq!(p.sizes, vec![120]);
        // transposed output: iterate in output memory order
        let p = Plan::<2>::new(&[3, 4], [&[1, 3], &[4, 1]]);
        assert_eq!(p.sizes, vec![4, 3]);
        assert_eq!(p.strides, vec![[3, 1], [1, 4]]);
        // broadcast operand keeps stride 0
        let p = Plan::<2>::new(&[2, 3], [&[3, 1], &[0, 1]]);
        assert_eq!(p.sizes, vec![2, 3]);
        let p = Plan::<1>::new(&[1, 1], [&[1, 1]]);
        assert_eq!((p.sizes.clone(), p.numel()), (vec![1], 1));
    }

    #[test]
    fn run_visits_every_element_once() {
        for &(shape, st) in &[
            (&[3i64, 70_000][..], &[70_000i64, 1][..]),
            (&[200_000][..], &[1][..]),
            (&[7, 9, 11][..], &[1, 7, 63][..]),
        ] {
            let n: i64 = shape.iter().product();
            let hits = Mutex::new(vec![0u32; n as usize]);
            let p = Plan::<1>::new(shape, [st]);
            // SAFETY: the kernel only records offsets, never dereferences.
            unsafe {
                p.run([std::ptr::null_mut()], [1], false, |ptr, s, len| {
                    let mut h = hits.lock().unwrap();
                    for i in 0..len {
                        h[ptr[0] as usize + i * s[0] as usize] += 1;
                    }
                })
            };
            assert!(hits.into_inner().unwrap().iter().all(|&c| c == 1));
        }
    }
}
