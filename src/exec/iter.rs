//! Strided iteration: walking a view's elements in row-major order as storage offsets.
//!
//! Dimensions that are contiguous with each other are merged first (TH's APPLY strategy), so a
//! dense tensor is one run and a transposed matrix is two nested runs, whatever its rank.
//! The math engine builds its apply loops on the same `merge_dims`.

/// Merges adjacent dims where `stride[i] == size[i+1] * stride[i+1]` and drops size-1 dims.
/// Returns (sizes, strides) innermost-last; an empty list means a single element.
pub fn merge_dims(sizes: &[i64], strides: &[i64]) -> (Vec<usize>, Vec<usize>) {
    let mut ms: Vec<usize> = Vec::with_capacity(sizes.len());
    let mut mt: Vec<usize> = Vec::with_capacity(sizes.len());
    for (&s, &t) in sizes.iter().zip(strides) {
        let (s, t) = (s as usize, t as usize);
        if s == 1 {
            continue;
        }
        if let (Some(ls), Some(lt)) = (ms.last_mut(), mt.last_mut())
            && *lt == s * t
        {
            *ls *= s;
            *lt = t;
            continue;
        }
        ms.push(s);
        mt.push(t);
    }
    (ms, mt)
}

/// Row-major iterator over the storage offsets of a view whose sizes are all >= 1.
pub struct Offsets {
    sizes: Vec<usize>,
    strides: Vec<usize>,
    idx: Vec<usize>,
    cur: usize,
    left: usize,
}

impl Offsets {
    /// `n` is the element count (the product of `sizes`, 0 for an empty view).
    pub fn new(offset: usize, sizes: &[i64], strides: &[i64], n: usize) -> Self {
        let (sizes, strides) = merge_dims(sizes, strides);
        let idx = vec![0; sizes.len()];
        Offsets { sizes, strides, idx, cur: offset, left: n }
    }

    /// Length of the innermost run and its stride (for callers that process runs).
    pub fn inner(&self) -> (usize, usize) {
        match (self.sizes.last(), self.strides.last()) {
            (Some(&s), Some(&t)) => (s, t),
            _ => (1, 1),
        }
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
        let out = self.cur;
        if self.left > 0 {
            let mut d = self.sizes.len();
            while d > 0 {
                d -= 1;
                self.idx[d] += 1;
                self.cur += self.strides[d];
                if self.idx[d] < self.sizes[d] {
                    break;
                }
                self.cur -= self.strides[d] * self.sizes[d];
                self.idx[d] = 0;
            }
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
        assert_eq!(merge_dims(&[2, 3, 4], &[12, 4, 1]), (vec![24], vec![1]));
        assert_eq!(merge_dims(&[3, 2], &[1, 3]), (vec![3, 2], vec![1, 3]));
        assert_eq!(merge_dims(&[1, 5, 1], &[9, 2, 7]), (vec![5], vec![2]));
        let v: Vec<_> = Offsets::new(1, &[2, 3], &[1, 2], 6).collect();
        assert_eq!(v, vec![1, 3, 5, 2, 4, 6]);
        let v: Vec<_> = Offsets::new(0, &[2, 2], &[0, 1], 4).collect();
        assert_eq!(v, vec![0, 1, 0, 1]);
        assert_eq!(Offsets::new(5, &[], &[], 1).collect::<Vec<_>>(), vec![5]);
        assert_eq!(Offsets::new(5, &[], &[], 0).count(), 0);
    }
}
