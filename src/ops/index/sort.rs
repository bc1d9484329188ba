//! Sort and top-k (§4.13).

use super::*;

/// A total order on elements: numbers ascending, NaN after every number, -0.0 == 0.0,
/// Bool false < true.
pub trait SortKey: Scalar {
    fn key_cmp(&self, o: &Self) -> Ordering;
}

macro_rules! int_key {
    ($($T:ty),*) => {$(
        impl SortKey for $T {
            #[inline(always)]
            fn key_cmp(&self, o: &Self) -> Ordering {
                self.cmp(o)
            }
        }
    )*};
}
crate::th_dtypes!(int_key; int);

#[inline(always)]
fn nan_last<F: PartialOrd>(a: F, b: F, a_nan: bool, b_nan: bool) -> Ordering {
    match (a_nan, b_nan) {
        (false, false) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
    }
}

macro_rules! float_key {
    ($($T:ty),*) => {$(
        impl SortKey for $T {
            #[inline(always)]
            fn key_cmp(&self, o: &Self) -> Ordering {
                let (a, b) = (self.to_r(), o.to_r());
                nan_last(a, b, a.is_nan(), b.is_nan())
            }
        }
    )*};
}
crate::th_dtypes!(float_key; float half);

impl SortKey for Bool {
    #[inline(always)]
    fn key_cmp(&self, o: &Self) -> Ordering {
        self.get().cmp(&o.get())
    }
}

#[derive(Clone, Copy)]
enum Pick {
    /// All elements, stable, ascending or descending.
    Sort { descending: bool },
    /// The `k` largest (or smallest), ties by position, in sorted order.
    Top { k: usize, largest: bool },
}

/// Runs `pick` on every slice of `t` along `d`: values into `rt`, source positions into `ri`.
fn along_sorted<T: SortKey>(rt: &Tensor<T>, ri: &Tensor<i64>, t: &View<T>, d: usize, pick: Pick) -> Result<()> {
    let len = t.sizes[d] as usize;
    let k = match pick {
        Pick::Sort { .. } => len,
        Pick::Top { k, .. } => k,
    };
    let mut shape = t.sizes.clone();
    shape[d] = k as i64;
    let backend = Backend::of(&[rt.with_view(|v| v.device()), ri.with_view(|v| v.device()), t.device()])?;
    // Outputs on one storage (possible for Long, whose indices tensor has the values' type) are
    // refused before either is resized, so that the error leaves both as they were.
    if let (Some(a), Some(b)) = (&rt.view().storage, &ri.view().storage)
        && ptr::eq(Rc::as_ptr(a) as *const u8, Rc::as_ptr(b) as *const u8)
    {
        return Err(Error::invalid("the values and indices outputs share a storage").at_arg(2));
    }
    if k == 0 {
        resize_out(rt, &[])?;
        resize_out(ri, &[])?;
        return Ok(());
    }
    let vo = resize_out(rt, &shape)?;
    let io = resize_out(ri, &shape)?;
    if may_overlap(&vo, &io) {
        return Err(Error::invalid("the values and indices outputs share memory").at_arg(2));
    }
    if let Backend::Cuda(dev) = backend {
        return on_device(dev, &vo, &io, t, d, pick);
    }
    // Each slice is read whole before it is written, so `rt` may be `t` itself.
    let t = if partial_overlap(&vo, t) || may_overlap(&io, t) { dense(t)? } else { t.clone() };
    let (vd, id, td) = (vo.strides[d] as isize, io.strides[d] as isize, t.strides[d] as isize);
    // Slice starts (storage offsets), one per position of the shape without dim d.
    let (so, si, st) = (slice_starts(&vo, d)?, slice_starts(&io, d)?, slice_starts(&t, d)?);
    // One slice's (value, position) pairs per worker: probe that much memory up front so that
    // a slice longer than memory is an error here rather than an abort in a worker.
    drop(crate::core::limits::try_vec::<(T, i64)>(len)?);
    let (Some(pv), Some(pi), Some(pt)) = (vo.host_ptr()?, io.host_ptr()?, t.host_ptr()?) else {
        return Err(Error::internal("sort: a non-empty tensor without data"));
    };
    let (pv, pi, pt) = (pv as usize, pi as usize, pt as usize);
    let serial = self_overlapping(&vo.sizes, &vo.strides) || self_overlapping(&io.sizes, &io.strides);
    let work = if serial { 0 } else { so.len().saturating_mul(len.max(2)) };
    parallel::for_range(so.len(), work, |a, b| {
        let mut buf: Vec<(T, i64)> = Vec::with_capacity(len);
        for j in a..b {
            // SAFETY: host_ptr checked every view against its storage; a slice start plus
            // q * stride(d) for q < len (t) or q < k (outputs) is an element of that view.
            // Different slices write disjoint output elements unless an output overlaps itself
            // (then this runs on one thread); the outputs share no memory with each other and
            // share memory with t only when vo is t's own view, whose slice is read whole first.
            unsafe {
                let (o, oi, x) = ((pv as *mut T).add(so[j]), (pi as *mut i64).add(si[j]), (pt as *const T).add(st[j]));
                buf.clear();
                buf.extend((0..len).map(|q| (x.offset(q as isize * td).read(), q as i64)));
                match pick {
                    Pick::Sort { descending: false } => buf.sort_by(|x, y| x.0.key_cmp(&y.0)),
                    Pick::Sort { descending: true } => buf.sort_by(|x, y| y.0.key_cmp(&x.0)),
                    Pick::Top { k, largest } => {
                        let cmp = |x: &(T, i64), y: &(T, i64)| {
                            let c = if largest { y.0.key_cmp(&x.0) } else { x.0.key_cmp(&y.0) };
                            c.then(x.1.cmp(&y.1))
                        };
                        if k < len {
                            buf.select_nth_unstable_by(k - 1, cmp);
                            buf.truncate(k);
                        }
                        buf.sort_unstable_by(cmp);
                    }
                }
                for (q, &(v, i)) in buf.iter().take(k).enumerate() {
                    o.offset(q as isize * vd).write(v);
                    oi.offset(q as isize * id).write(i);
                }
            }
        }
    });
    Ok(())
}

/// `along_sorted` on device `dev`: every line sorted in a device workspace (a copy of `t`, so
/// the outputs may be `t`), then its first `k` elements copied out.
fn on_device<T: SortKey>(dev: i32, vo: &View<T>, io: &View<i64>, t: &View<T>, d: usize, pick: Pick) -> Result<()> {
    use crate::cuda::sort::{Line, Sorted, check_output};
    let (what, descending) = match pick {
        Pick::Sort { descending } => ("sort", descending),
        Pick::Top { largest, .. } => ("topk", largest),
    };
    check_output(what, vo)?;
    check_output(what, io)?;
    Sorted::new(dev, t, d, descending)?.copy(0, &Line::along(vo, d)?, &Line::along(io, d)?)
}

/// Storage offsets of the slice starts of `v` along `d` (row-major over the other dims).
fn slice_starts<T: Scalar>(v: &View<T>, d: usize) -> Result<Vec<usize>> {
    let (sz, st) = (without(&v.sizes, d), without(&v.strides, d));
    let n = sz.iter().product::<i64>() as usize;
    crate::core::limits::try_collect(n, Offsets::new(v.offset, &sz, &st, n))
}

/// `rt` = `t` sorted along `dim` (stable; NaN last, first when descending), `ri` = the 0-based
/// source positions.
pub fn sort<T: SortKey>(rt: &Tensor<T>, ri: &Tensor<i64>, t: &View<T>, dim: i32, descending: bool) -> Result<()> {
    let d = dim_index(dim, t.ndim(), 4)?;
    along_sorted(rt, ri, t, d, Pick::Sort { descending })
}

/// The `k` largest (`largest`) or smallest elements along `dim`, in sorted order (descending
/// for largest), ties by position; `k == 0` gives empty outputs.
pub fn topk<T: SortKey>(rt: &Tensor<T>, ri: &Tensor<i64>, t: &View<T>, k: i64, dim: i32, largest: bool) -> Result<()> {
    let d = dim_index(dim, t.ndim(), 5)?;
    if k < 0 || k > t.sizes[d] {
        return Err(Error::index(format!(
            "selected number k = {k} out of range for dimension {d} with size {}",
            t.sizes[d]
        ))
        .at_arg(4));
    }
    along_sorted(rt, ri, t, d, Pick::Top { k: k as usize, largest })
}

/// THC's `sortKeyValueInplace`: `keys` sorted in place along `dim` (as `sort`: stable, NaN
/// last, first when descending) and `values` (of the same size) permuted alongside, so that
/// `values[q]` is the old value at the position the key now at `q` came from.
pub fn sort_key_value<T: SortKey>(keys: &Tensor<T>, values: &Tensor<i64>, dim: i32, descending: bool) -> Result<()> {
    let (kv, vv) = (keys.view(), values.view());
    let d = dim_index(dim, kv.ndim(), 3)?;
    if kv.sizes != vv.sizes {
        return Err(Error::size(format!(
            "sortKeyValueInplace: the values of size {} do not match the keys of size {}",
            size_desc(&vv.sizes),
            size_desc(&kv.sizes)
        ))
        .at_arg(2));
    }
    let backend = Backend::of(&[kv.device(), vv.device()])?;
    if may_overlap(&kv, &vv) {
        return Err(Error::invalid("sortKeyValueInplace: the keys and values share memory").at_arg(2));
    }
    if kv.numel() == 0 {
        return Ok(());
    }
    let old = crate::ops::temp_like(&vv, &vv.sizes)?;
    copy(&old, &vv)?;
    if let Backend::Cuda(dev) = backend {
        use crate::cuda::sort::{Line, Sorted, check_output};
        check_output("sortKeyValueInplace", &kv)?;
        check_output("sortKeyValueInplace", &vv)?;
        let pos = crate::ops::temp_like::<i64, T>(&kv, &kv.sizes)?;
        let sorted = Sorted::new(dev, &kv, d, descending)?;
        sorted.copy(0, &Line::along(&kv, d)?, &Line::along(&pos, d)?)?;
        return sorted.permute::<i64>(&Line::along(&vv, d)?, &Line::along(&old, d)?);
    }
    let pos = Tensor::new(View::contiguous(&kv.sizes)?);
    along_sorted(keys, &pos, &kv, d, Pick::Sort { descending })?;
    gather(values, &old, dim, &pos.view())
}
