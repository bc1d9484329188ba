//! Dims of strided iteration, shared by every loop in the library: the pointwise plan
//! (`exec::plan`), the reductions (`exec::reduce`), index ops and views walking themselves
//! (`Offsets`). Shapes, strides and element offsets only: no element type, no pointer.
//!
//! Dimensions that are contiguous with each other in every operand are merged (TH's APPLY
//! strategy), so a dense tensor is one run and a transposed matrix two nested runs, whatever
//! its rank.

/// One dim of an iteration over `N` operands: its size and each operand's stride (elements).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dim<const N: usize> {
    pub size: usize,
    pub st: [isize; N],
}

impl<const N: usize> Dim<N> {
    /// A dim of size 1 (what an iteration over nothing but one element has).
    pub const UNIT: Dim<N> = Dim { size: 1, st: [0; N] };

    /// Dim `d` of a shape, with `strides[k][d]` for operand k.
    pub fn of(size: i64, strides: [&[i64]; N], d: usize) -> Self {
        Dim { size: size as usize, st: std::array::from_fn(|k| strides[k][d] as isize) }
    }
}

/// Appends `d` after `v`'s last dim (the faster one), merging the two when `d` continues it in
/// every operand (`outer stride == d.size * d.stride`).
pub fn push_merged<const N: usize>(v: &mut Vec<Dim<N>>, d: Dim<N>) {
    if let Some(l) = v.last_mut()
        && (0..N).all(|k| l.st[k] == d.st[k] * d.size as isize)
    {
        l.size *= d.size;
        l.st = d.st;
        return;
    }
    v.push(d);
}

/// The dims of a shape, size-1 dims dropped and neighbours merged, outermost first, in the
/// shape's order (empty for a single element).
pub fn merged<const N: usize>(sizes: &[i64], strides: [&[i64]; N]) -> Vec<Dim<N>> {
    let mut v = Vec::with_capacity(sizes.len());
    for (d, &n) in sizes.iter().enumerate() {
        if n != 1 {
            push_merged(&mut v, Dim::of(n, strides, d));
        }
    }
    v
}

/// Row-major walk over `dims` (last fastest) tracking each operand's element offset.
pub struct Odometer<'a, const N: usize> {
    dims: &'a [Dim<N>],
    idx: Vec<usize>,
    /// Each operand's offset (elements) at the current position.
    pub off: [isize; N],
}

impl<'a, const N: usize> Odometer<'a, N> {
    /// Positioned at linear index `start`.
    pub fn new(dims: &'a [Dim<N>], start: usize) -> Self {
        let mut idx = vec![0; dims.len()];
        let mut off = [0isize; N];
        let mut r = start;
        for (d, dim) in dims.iter().enumerate().rev() {
            idx[d] = r % dim.size;
            r /= dim.size;
            for (o, s) in off.iter_mut().zip(dim.st) {
                *o += idx[d] as isize * s;
            }
        }
        Odometer { dims, idx, off }
    }

    /// Steps to the next position (after the last one it wraps to the first).
    #[inline]
    pub fn advance(&mut self) {
        step(self.dims, &mut self.idx, &mut self.off);
    }
}

/// One row-major step of the position `idx` over `dims`, moving each operand's offset `off`.
#[inline(always)]
fn step<const N: usize>(dims: &[Dim<N>], idx: &mut [usize], off: &mut [isize; N]) {
    for d in (0..dims.len()).rev() {
        let dim = &dims[d];
        idx[d] += 1;
        for (o, s) in off.iter_mut().zip(dim.st) {
            *o += s;
        }
        if idx[d] < dim.size {
            return;
        }
        for (o, s) in off.iter_mut().zip(dim.st) {
            *o -= s * dim.size as isize;
        }
        idx[d] = 0;
    }
}

/// Row-major iterator over the storage offsets of a view whose sizes are all >= 1.
pub struct Offsets {
    dims: Vec<Dim<1>>,
    idx: Vec<usize>,
    cur: [isize; 1],
    left: usize,
}

impl Offsets {
    /// `n` is the element count (the product of `sizes`, 0 for an empty view).
    pub fn new(offset: usize, sizes: &[i64], strides: &[i64], n: usize) -> Self {
        let dims = merged(sizes, [strides]);
        let idx = vec![0; dims.len()];
        Offsets { dims, idx, cur: [offset as isize], left: n }
    }
}

impl Iterator for Offsets {
    type Item = usize;
    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let out = self.cur[0] as usize;
        if self.left > 0 {
            step(&self.dims, &mut self.idx, &mut self.cur);
        }
        Some(out)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_and_walks() {
        let flat = |sizes: &[i64], strides: &[i64]| -> Vec<(usize, isize)> {
            merged(sizes, [strides]).iter().map(|d| (d.size, d.st[0])).collect()
        };
        assert_eq!(flat(&[2, 3, 4], &[12, 4, 1]), vec![(24, 1)]);
        assert_eq!(flat(&[3, 2], &[1, 3]), vec![(3, 1), (2, 3)]);
        assert_eq!(flat(&[1, 5, 1], &[9, 2, 7]), vec![(5, 2)]);
        // merged only where every operand continues
        let two = merged(&[2, 3], [&[3, 1], &[4, 1]]);
        assert_eq!(two.len(), 2);
        let v: Vec<_> = Offsets::new(1, &[2, 3], &[1, 2], 6).collect();
        assert_eq!(v, vec![1, 3, 5, 2, 4, 6]);
        let v: Vec<_> = Offsets::new(0, &[2, 2], &[0, 1], 4).collect();
        assert_eq!(v, vec![0, 1, 0, 1]);
        assert_eq!(Offsets::new(5, &[], &[], 1).collect::<Vec<_>>(), vec![5]);
        assert_eq!(Offsets::new(5, &[], &[], 0).count(), 0);
    }

    #[test]
    fn odometer_matches_offsets() {
        let dims = merged(&[3, 4, 5], [&[1, 3, 12], &[20, 5, 1]]);
        let mut o = Odometer::new(&dims, 7);
        let want: Vec<_> = Offsets::new(0, &[3, 4, 5], &[1, 3, 12], 60).collect();
        for w in &want[7..] {
            assert_eq!(o.off[0] as usize, *w);
            o.advance();
        }
    }
}
