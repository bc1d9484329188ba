//! The aliasing rules, defined once: when an output may be written by several threads at once,
//! and when an op must read its inputs before writing its output (through a temporary or a
//! dense copy). Every op asks these functions; none decides aliasing on its own.

use crate::core::dtype::Scalar;
use crate::core::tensor::View;

/// How two views relate in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alias {
    /// No element in common: different storages, an empty view, or element ranges that don't
    /// meet.
    Disjoint,
    /// The same positions of one storage (same offset, sizes and strides).
    Same,
    /// One storage and element ranges that meet, as different views: writing one may change
    /// elements of the other before they are read.
    Partial,
}

/// Storage elements `[lo, hi]` that a view with at least one element can touch (strides may
/// be negative).
pub fn span(offset: usize, sizes: &[i64], strides: &[i64]) -> (i64, i64) {
    let (mut lo, mut hi) = (offset as i64, offset as i64);
    for (&n, &t) in sizes.iter().zip(strides) {
        let reach = (n - 1).saturating_mul(t);
        if reach < 0 { lo = lo.saturating_add(reach) } else { hi = hi.saturating_add(reach) }
    }
    (lo, hi)
}

/// How `a` and `b` alias (see `Alias`).
pub fn alias<A: Scalar, B: Scalar>(a: &View<A>, b: &View<B>) -> Alias {
    let (Some(sa), Some(sb)) = (&a.storage, &b.storage) else { return Alias::Disjoint };
    let same_storage = std::ptr::eq(
        crate::core::refcount::Rc::as_ptr(sa) as *const u8,
        crate::core::refcount::Rc::as_ptr(sb) as *const u8,
    );
    if !same_storage || a.numel() == 0 || b.numel() == 0 {
        return Alias::Disjoint;
    }
    if a.offset == b.offset && a.sizes == b.sizes && a.strides == b.strides {
        return Alias::Same;
    }
    let ((a0, a1), (b0, b1)) = (span(a.offset, &a.sizes, &a.strides), span(b.offset, &b.sizes, &b.strides));
    if a0 <= b1 && b0 <= a1 { Alias::Partial } else { Alias::Disjoint }
}

/// Writing `a` could change `b` (the same view included).
pub fn may_overlap<A: Scalar, B: Scalar>(a: &View<A>, b: &View<B>) -> bool {
    alias(a, b) != Alias::Disjoint
}

/// Writing `a` could change elements of `b` at other positions: an elementwise op from `b`
/// into `a` must then read `b` first.
pub fn partial_overlap<A: Scalar, B: Scalar>(a: &View<A>, b: &View<B>) -> bool {
    alias(a, b) == Alias::Partial
}

/// True when two different positions of a view can address the same element (a stride-0 dim,
/// or strides that interleave): such outputs are written serially, so the last write wins
/// deterministically.
pub fn self_overlapping(sizes: &[i64], strides: &[i64]) -> bool {
    let mut dims: Vec<(u64, i64)> =
        sizes.iter().zip(strides).filter(|(n, _)| **n > 1).map(|(&n, &t)| (t.unsigned_abs(), n)).collect();
    dims.sort_unstable();
    // Sorted by stride, each dim must step past everything the smaller ones reach.
    let mut extent = 0u64;
    for (t, n) in dims {
        if t <= extent {
            return true;
        }
        extent = extent.saturating_add((n as u64 - 1).saturating_mul(t));
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::tensor::View;

    #[test]
    fn self_overlap() {
        assert!(!self_overlapping(&[3, 4], &[4, 1]));
        assert!(!self_overlapping(&[3, 4], &[1, 3])); // transposed
        assert!(!self_overlapping(&[3, 4], &[-4, 1])); // flipped rows
        assert!(!self_overlapping(&[1, 4], &[0, 1])); // size-1 dims don't count
        assert!(!self_overlapping(&[], &[]));
        assert!(self_overlapping(&[3, 4], &[0, 1])); // expanded
        assert!(self_overlapping(&[3, 4], &[2, 1])); // rows interleave
        assert!(self_overlapping(&[2, 2], &[1, 1]));
        assert!(!self_overlapping(&[2, 2], &[2, 1]));
        assert!(self_overlapping(&[2, 3], &[-2, 1]));
    }

    #[test]
    fn spans() {
        assert_eq!(span(5, &[3, 4], &[4, 1]), (5, 16));
        assert_eq!(span(8, &[3, 4], &[-4, 1]), (0, 11));
        assert_eq!(span(2, &[], &[]), (2, 2));
    }

    #[test]
    fn aliases() {
        let base = View::<f32>::contiguous(&[4, 4]).unwrap();
        let row = |r: usize| {
            let mut v = base.clone();
            v.offset = 4 * r;
            v.sizes = vec![4];
            v.strides = vec![1];
            v
        };
        let other = View::<f32>::contiguous(&[4, 4]).unwrap();
        assert_eq!(alias(&base, &base.clone()), Alias::Same);
        assert_eq!(alias(&base, &other), Alias::Disjoint);
        assert_eq!(alias(&row(0), &row(1)), Alias::Disjoint);
        assert_eq!(alias(&base, &row(2)), Alias::Partial);
        let mut t = base.clone();
        t.strides = vec![1, 4];
        assert_eq!(alias(&base, &t), Alias::Partial); // same elements, other positions
        assert!(may_overlap(&base, &base) && !partial_overlap(&base, &base));
        assert!(may_overlap(&base, &t) && partial_overlap(&base, &t));
        let mut e = row(0);
        e.sizes = vec![0];
        assert_eq!(alias(&base, &e), Alias::Disjoint);
    }
}
