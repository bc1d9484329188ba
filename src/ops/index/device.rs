//! The device engine of the index, scatter/gather and mask ops (`cuda/kernels/index.cuh`).
//!
//! The callers (select.rs, masks.rs) make the same checks as on the host first; index and mask
//! values are checked with device reductions (min/max, counts), and only a failing check copies
//! the values to the host, so the error names the first bad value exactly as the host does.
//! Masked ops and nonzero compute each set element's row-major rank on the device
//! (`positions`). Outputs whose elements overlap (expanded views) are written by a single
//! device thread in the host's order, so the result is the host's.

use super::masks::check_mask;
use super::*;
use crate::core::dtype::DType;
use crate::cuda::gpu::LaunchCfg;
use crate::cuda::launch::device_base;
use crate::cuda::lines::{LineOperand, THCLines};
use crate::cuda::reduce::{DeviceFold, Finish, reduce_into};
use crate::cuda::runtime;
use crate::cuda::sort::Sorted;
use crate::ops::reduce::{self, Elem};
use crate::ops::temp_like;

/// `v` as a line operand: item strides `strides`, line of `len` elements `step` apart.
fn line<'a, T: Scalar>(v: &View<T>, strides: &'a [i64], len: i64, step: i64) -> Result<LineOperand<'a>> {
    Ok(LineOperand { base: device_base(v)?, strides, len, step })
}

/// Runs line op `call` over the items of `shape` on device `dev`; `serial`: on one thread (the
/// output has overlapping elements, so items must run in order).
fn run(dev: i32, call: &Call, dtype: DType, shape: &[i64], ops: &[LineOperand<'_>], serial: bool) -> Result<()> {
    let Some(mut l) = call.lines(dtype, shape, ops)? else { return Ok(()) };
    if serial {
        l.cfg = LaunchCfg { grid: [1, 1, 1], block: [1, 1, 1], shared: 0 };
    }
    let d = runtime::device(dev)?;
    let mut args = [&mut l.params as *mut THCLines as *mut std::ffi::c_void];
    // SAFETY: every operand came from `line`, whose `device_base` checked the view against its
    // storage on this device; lines and item strides stay inside the views, and the index
    // values the kernels follow were checked by the callers against the sizes they address.
    unsafe { d.gpu.launch(&l.kernel, &l.cfg, &mut args, runtime::stream(dev)) }
}

fn overlapping<T: Scalar>(v: &View<T>) -> bool {
    self_overlapping(&v.sizes, &v.strides)
}

/// `check_indices` for a device index: its min and max reduced on the device into one buffer,
/// then one copy to the host (one round trip); the host's scan (on a copy) only to word the error.
pub(super) fn check_indices_on(idx: &View<i64>, size: i64, dim: usize, arg: u32) -> Result<()> {
    if idx.numel() == 0 {
        return Ok(());
    }
    let crate::core::allocator::Device::Cuda(dev) = idx.device() else {
        return Err(Error::internal("check_indices_on: a host index"));
    };
    // [min, its position, max, its position]
    let bounds: View<i64> = temp_like(idx, &[4])?;
    let base = device_base(&bounds)?;
    let all = vec![true; idx.ndim()];
    for (fold, at) in [(DeviceFold::Min, 0u64), (DeviceFold::Max, 16)] {
        reduce_into(dev, idx, &all, fold, Finish::Best, || Ok(Some([base + at, base + at + 8])))?;
    }
    let b = crate::ops::copy::values(&bounds)?;
    if b[0] >= 0 && b[2] < size {
        return Ok(());
    }
    let host = View::from_slice(&crate::ops::copy::values(idx)?, &idx.sizes)?;
    check_indices(&host, size, dim, arg)
}

/// `check_mask`'s value check for a device mask: a Byte mask's max must be 1 at most (else the
/// host's scan of a copy words the error).
pub(super) fn check_mask_on<M: MaskElem + Elem>(m: &View<M>, arg: u32) -> Result<()> {
    if m.numel() > 0 && M::DTYPE != DType::Bool && !reduce::maxall(m)?.valid() {
        let host = View::from_slice(&crate::ops::copy::values(m)?, &m.sizes)?;
        check_mask(&host, arg)?;
    }
    Ok(())
}

/// `gather_run` on the device (`op`: indexSelect or gather, same contract).
pub(super) fn gather_on<T: Scalar>(
    dev: i32,
    op: &'static str,
    dst: &View<T>,
    src: &View<T>,
    d: usize,
    idx: &View<i64>,
) -> Result<()> {
    let mut ss = src.strides.clone();
    ss[d] = 0;
    let ops =
        [line(dst, &dst.strides, 0, 0)?, line(src, &ss, src.sizes[d], src.strides[d])?, line(idx, &idx.strides, 0, 0)?];
    run(dev, &Call::new(op), T::DTYPE, &dst.sizes, &ops, overlapping(dst))
}

/// Index lines at least this long are sorted first when their items alone would leave the
/// device idle (`scatter_on`); shorter ones cost each thread little.
const SORTED_MIN_LINE: i64 = 32;
/// Items enough to occupy a device with one thread per line (2^16 threads).
const BUSY_ITEMS: i64 = 1 << 16;

/// `scatter_run` on the device: `op` with `src` (indexCopy/Add, scatter/Add), or its fill form
/// with `value` (same contract).
pub(super) fn scatter_on<T: Scalar>(
    dev: i32,
    op: &'static str,
    dst: &View<T>,
    src: Option<&View<T>>,
    value: T,
    d: usize,
    idx: &View<i64>,
) -> Result<()> {
    if idx.numel() == 0 {
        return Ok(());
    }
    let shape = without(&idx.sizes, d);
    let (dst_st, idx_st) = (without(&dst.strides, d), without(&idx.strides, d));
    let k = idx.sizes[d];
    let shared = idx_st.iter().all(|&x| x == 0);
    let Some(s) = src else {
        // A fill's writes all store `value`: one item per index element, in any order.
        let (dst_st, idx_st) = (spread(shared, dst_st, 0), spread(shared, idx_st, idx.strides[d]));
        let ops = [line(dst, &dst_st, dst.sizes[d], dst.strides[d])?, line(idx, &idx_st, k, idx.strides[d])?];
        return run(dev, &Call::new(op).value(value), T::DTYPE, &spread(shared, shape, k), &ops, false);
    };
    let s_st = without(&s.strides, d);
    let items = shape.iter().product::<i64>();
    if k >= SORTED_MIN_LINE && (shared || items < BUSY_ITEMS) && !overlapping(dst) {
        return scatter_sorted(dev, op, (dst, dst_st), (s, s_st), d, idx, shared);
    }
    let ops = [
        line(dst, &dst_st, dst.sizes[d], dst.strides[d])?,
        line(s, &s_st, s.sizes[d], s.strides[d])?,
        line(idx, &idx_st, k, idx.strides[d])?,
    ];
    run(dev, &Call::new(op), T::DTYPE, &shape, &ops, overlapping(dst))
}

/// Item sizes or strides `v` with the index line's (`along`) added as the iteration's first dim
/// when every item shares the index (`shared`: neighbouring threads then take neighbouring
/// items of one index, so their loads and stores coalesce), else as its last.
fn spread(shared: bool, v: Vec<i64>, along: i64) -> Vec<i64> {
    if shared { [vec![along], v].concat() } else { [v, vec![along]].concat() }
}

/// `scatter_on` for long index lines: the lines sorted stably (once when every item shares
/// one: `shared`), then one item per (line, index) of which the first of each run of equal
/// indices folds the run in index order (`th_lines_scatter_sorted`): the host's result, with
/// a thread per distinct slot instead of one per line. `dst` and `src` come with their item strides.
fn scatter_sorted<T: Scalar>(
    dev: i32,
    op: &'static str,
    (dst, dst_st): (&View<T>, Vec<i64>),
    (src, src_st): (&View<T>, Vec<i64>),
    d: usize,
    idx: &View<i64>,
    shared: bool,
) -> Result<()> {
    let k = idx.sizes[d];
    let shape = without(&idx.sizes, d);
    // The indices were checked to lie in 0..dst.sizes[d].
    let sorted = if shared {
        let one = View { sizes: vec![k], strides: vec![idx.strides[d]], ..idx.clone() };
        Sorted::below(dev, &one, 0, dst.sizes[d])?
    } else {
        Sorted::below(dev, idx, d, dst.sizes[d])?
    };
    // Row r of the sorted workspace (`p` wide) is the index line of item r (row-major).
    let p = sorted.keys.sizes[1];
    let mut ks = if shared { vec![0; shape.len()] } else { crate::core::tensor::fill_strides(&shape, None)? };
    ks.iter_mut().for_each(|x| *x *= p);
    let ks = spread(shared, ks, 1);
    let (dst_st, src_st) = (spread(shared, dst_st, 0), spread(shared, src_st, 0));
    // Items after the index line's dim in the iteration shape: the kernel's divisor for j.
    let inner = if shared { shape.iter().product::<i64>() } else { 1 };
    let ops = [
        line(dst, &dst_st, dst.sizes[d], dst.strides[d])?,
        line(src, &src_st, src.sizes[d], src.strides[d])?,
        line(&sorted.keys, &ks, k, 1)?,
        line(&sorted.pos, &ks, k, 1)?,
    ];
    let kernel = if op.ends_with("Add") { "scatterAddSorted" } else { "scatterSorted" };
    run(dev, &Call::new(kernel).value(inner), T::DTYPE, &spread(shared, shape, k), &ops, false)
}

/// `t[i] = value` where the mask (at `t`'s shape, sharing no memory with `t`) is set.
pub(super) fn masked_fill_on<T: Scalar, M: MaskElem>(dev: i32, t: &View<T>, m: &View<M>, value: T) -> Result<()> {
    let op = if M::DTYPE == DType::Bool { "maskedFillBool" } else { "maskedFill" };
    let ops = [line(t, &t.strides, 0, 0)?, line(m, &m.strides, 0, 0)?];
    run(dev, &Call::new(op).value(value), T::DTYPE, &t.sizes, &ops, overlapping(t))
}

/// A contiguous Long tensor at `v`'s shape on its device: for each nonzero element of `v` its
/// rank among the nonzero ones in row-major order, -1 for the others; and how many there are.
/// The 0/1 flags' cumsum (`cuda::scan`: tile by tile past 1024 elements) counts the set ones
/// up to each element, so flags * counts - 1 is the rank where set and -1 elsewhere.
pub(super) fn positions<T: Scalar>(dev: i32, v: &View<T>) -> Result<(View<i64>, usize)> {
    let pos: View<i64> = temp_like(v, &v.sizes)?;
    let n = v.numel() as i64;
    if n == 0 {
        return Ok((pos, 0));
    }
    let ops = [line(&pos, &pos.strides, 0, 0)?, line(v, &v.strides, 0, 0)?];
    run(dev, &Call::new("flagNonzero"), T::DTYPE, &v.sizes, &ops, false)?;
    let flags = View { sizes: vec![n], strides: vec![1], ..pos.clone() };
    let counts: View<i64> = temp_like(v, &[n])?;
    crate::cuda::scan::scan(dev, &counts, &flags, 0, false)?;
    let ranks = Tensor::new(flags.clone());
    crate::ops::arith::binary_op(&ranks, &flags, crate::ops::arith::ArithOp::Mul, &counts)?;
    crate::ops::arith::scalar_op(&ranks, &flags, crate::ops::arith::ArithOp::Add, -1)?;
    // The last position + 1 (-1 + 1 when none is set): the count, consistent with the ranks.
    let count = reduce::maxall(&pos)? + 1;
    Ok((pos, count as usize))
}

/// Where `pos` (`positions` of the mask at `t`'s shape) is set, `t[i]` takes the next element
/// of `src` in row-major order (`src` has as many elements as the mask has set values, or more).
pub(super) fn masked_copy_on<T: Scalar>(dev: i32, t: &View<T>, pos: &View<i64>, src: &View<T>) -> Result<()> {
    let src = if src.is_contiguous() && !may_overlap(t, src) { src.clone() } else { dense(src)? };
    let zeros = vec![0i64; t.ndim()];
    let ops = [line(t, &t.strides, 0, 0)?, line(pos, &pos.strides, 0, 0)?, line(&src, &zeros, src.numel() as i64, 1)?];
    run(dev, &Call::new("maskedCopy"), T::DTYPE, &t.sizes, &ops, overlapping(t))
}

/// `r` (1-D) = the elements of `s` where the mask is set (`pos`, `count`: its `positions` at
/// `s`'s shape).
pub(super) fn masked_select_on<T: Scalar>(
    dev: i32,
    r: &Tensor<T>,
    s: &View<T>,
    pos: &View<i64>,
    count: usize,
) -> Result<()> {
    let out = resize_out(r, &[count as i64])?;
    if count == 0 {
        return Ok(());
    }
    let detach = may_overlap(&out, s);
    let target = if detach { temp_like(&out, &out.sizes)? } else { out.clone() };
    let zeros = vec![0i64; s.ndim()];
    let o = line(&target, &zeros, count as i64, target.strides[0])?;
    let ops = [o, line(s, &s.strides, 0, 0)?, line(pos, &pos.strides, 0, 0)?];
    run(dev, &Call::new("maskedSelect"), T::DTYPE, &s.sizes, &ops, overlapping(&target))?;
    if detach { copy(&out, &target) } else { Ok(()) }
}

/// `r` (nnz x ndim) = the subscripts of the nonzero elements of `t` in row-major order.
pub(super) fn nonzero_on<T: Scalar>(dev: i32, r: &Tensor<i64>, t: &View<T>) -> Result<()> {
    let nd = t.ndim() as i64;
    let (pos, count) = positions(dev, t)?;
    let out = resize_out(r, &[count as i64, nd])?;
    if count == 0 {
        return Ok(());
    }
    let sizes: View<i64> = temp_like(t, &[nd])?;
    copy(&sizes, &View::from_slice(&t.sizes, &[nd])?)?;
    let zeros = vec![0i64; t.ndim()];
    let ops = [line(&out, &zeros, nd, out.strides[1])?, line(&pos, &pos.strides, 0, 0)?, line(&sizes, &zeros, nd, 1)?];
    run(dev, &Call::new("nonzero").value(out.strides[0]), DType::Long, &t.sizes, &ops, overlapping(&out))
}

#[cfg(all(test, feature = "cuda-emulator"))]
mod tests {
    use super::*;
    use crate::cuda;

    fn on_device<T: Scalar>(data: &[T], sizes: &[i64], strides: &[i64]) -> View<T> {
        let n = data.len() as i64;
        let st = cuda::storage::new::<T>(0, data.len()).unwrap();
        let flat = View::on_storage(Some(st.clone()), 0, &[n], None).unwrap();
        copy(&flat, &View::from_slice(data, &[n]).unwrap()).unwrap();
        View::on_storage(Some(st), 0, sizes, Some(strides)).unwrap()
    }

    /// Ranks of a transposed 0/1 pattern spanning many scan chunks, against a row-major count.
    #[test]
    fn positions_count_in_row_major_order_across_chunks() {
        crate::cuda::use_emulator_in_tests();
        let (rows, cols) = (150i64, 131i64); // 19650 elements: 20 chunks of 1024
        let data: Vec<i32> = (0..rows * cols).map(|i| ((i * 7919) % 5 == 0 || i % 13 == 0) as i32 * 3).collect();
        // the view is the transpose of a cols x rows storage
        let v = on_device(&data, &[rows, cols], &[1, rows]);
        let (pos, count) = positions(0, &v).unwrap();
        let got = crate::ops::copy::values(&pos).unwrap();
        let mut want = Vec::new();
        let mut next = 0i64;
        for r in 0..rows {
            for c in 0..cols {
                if data[(c * rows + r) as usize] != 0 {
                    want.push(next);
                    next += 1;
                } else {
                    want.push(-1);
                }
            }
        }
        assert_eq!(count as i64, next);
        assert_eq!(got, want);
    }

    /// nonzero of an expanded device view and a serial scatter into an expanded output.
    #[test]
    fn nonzero_and_overlapping_outputs_match_the_host() {
        crate::cuda::use_emulator_in_tests();
        let data = [0.0f32, -0.0, 2.5, f32::NAN, 0.0, 1.0];
        let d = on_device(&data, &[4, 6], &[0, 1]);
        let h = View::from_slice(&data, &[6]).unwrap().expand(&[4, 6]).unwrap();
        let rd = Tensor::new(
            View::<i64>::on_storage(Some(cuda::storage::new::<i64>(0, 0).unwrap()), 0, &[0], None).unwrap(),
        );
        let rh = Tensor::new(View::<i64>::empty());
        nonzero(&rd, &d).unwrap();
        nonzero(&rh, &h).unwrap();
        assert_eq!(crate::ops::copy::values(&rd.view()).unwrap(), rh.view().to_vec().unwrap());
        assert_eq!(rh.view().sizes, vec![12, 2]);
        // index_fill into a stride-0 dim: every write lands on one element, the last wins
        let t = on_device(&[1.0f32, 2.0], &[3, 2], &[0, 1]);
        let idx = on_device(&[2i64, 0, 1], &[3], &[1]);
        index_fill(&t, 0, &idx, 9.0).unwrap();
        assert_eq!(
            crate::ops::copy::values(&View::on_storage(t.storage.clone(), 0, &[2], None).unwrap()).unwrap(),
            [9.0, 9.0]
        );
    }
}
