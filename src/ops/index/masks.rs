//! Masks and nonzero (§4.2).

use super::device::{check_mask_on, masked_copy_on, masked_fill_on, masked_select_on, nonzero_on, positions};
use super::*;
use crate::core::limits::try_push;
use crate::cuda::launch::Call;
use crate::ops::reduce::Elem;

/// A mask element type: Byte (values must be 0 or 1, as in TH) or Bool (any nonzero byte is true).
pub trait MaskElem: Elem {
    fn valid(self) -> bool;
    fn on(self) -> bool;
}

impl MaskElem for u8 {
    #[inline(always)]
    fn valid(self) -> bool {
        self <= 1
    }
    #[inline(always)]
    fn on(self) -> bool {
        self != 0
    }
}

impl MaskElem for Bool {
    #[inline(always)]
    fn valid(self) -> bool {
        true
    }
    #[inline(always)]
    fn on(self) -> bool {
        self.get()
    }
}

/// `mask` presented at `shape`: as is, broadcast to it, or (equal element counts) paired in
/// row-major order.
fn mask_at<M: Scalar>(mask: &View<M>, shape: &[i64], arg: u32) -> Result<View<M>> {
    if mask.sizes == shape {
        return Ok(mask.clone());
    }
    if mask.ndim() > 0
        && !shape.is_empty()
        && let Ok(v) = mask.expand(shape)
    {
        return Ok(v);
    }
    let n = numel(shape)?;
    if mask.numel() == n && n > 0 {
        let mut m = if mask.is_contiguous() { mask.clone() } else { dense(mask)? };
        m.sizes = shape.to_vec();
        m.strides = crate::core::tensor::fill_strides(shape, None)?;
        return Ok(m);
    }
    Err(Error::size(format!(
        "mask of size {} does not match (broadcast to, or have as many elements as) a tensor of size {}",
        size_desc(&mask.sizes),
        size_desc(shape)
    ))
    .at_arg(arg))
}

/// Checks every mask value and returns how many are set.
pub(super) fn check_mask<M: MaskElem>(m: &View<M>, arg: u32) -> Result<usize> {
    let mut count = 0;
    scan(m, |i, v| {
        if !v.valid() {
            return Err(Error::invalid(format!(
                "mask tensor can take 0 and 1 values only (found {v:?} at position {i})"
            ))
            .at_arg(arg));
        }
        count += v.on() as usize;
        Ok(())
    })?;
    Ok(count)
}

/// `t[i] = value` where `mask[i]` is set (in place).
pub fn masked_fill<T: Scalar, M: MaskElem>(t: &View<T>, mask: &View<M>, value: T) -> Result<()> {
    let be = Backend::of(&[t.device(), mask.device()])?;
    let m = mask_at(mask, &t.sizes, 2)?;
    match be {
        Backend::Host => check_mask(&m, 2).map(|_| ())?,
        Backend::Cuda(_) => check_mask_on(&m, 2)?,
    }
    if t.numel() == 0 {
        return Ok(());
    }
    let m = if may_overlap(t, &m) { dense(&m)? } else { m };
    if let Backend::Cuda(i) = be {
        return masked_fill_on(i, t, &m, value);
    }
    map2(t, t, &m, Call::host_only("maskedFill"), move |x: T, b: M| if b.on() { value } else { x })
}

/// Where `mask[i]` is set, `t[i]` takes the next element of `src` (row-major); `src` must have
/// at least as many elements as the mask has set values.
pub fn masked_copy<T: Scalar, M: MaskElem>(t: &View<T>, mask: &View<M>, src: &View<T>) -> Result<()> {
    let be = Backend::of(&[t.device(), mask.device(), src.device()])?;
    let m = mask_at(mask, &t.sizes, 2)?;
    if let Backend::Cuda(i) = be {
        check_mask_on(&m, 2)?;
        let (pos, count) = positions(i, &m)?;
        enough_source(count, src)?;
        return if count == 0 { Ok(()) } else { masked_copy_on(i, t, &pos, src) };
    }
    let count = check_mask(&m, 2)?;
    enough_source(count, src)?;
    if count == 0 {
        return Ok(());
    }
    let mv = m.to_vec()?;
    let sv = src.to_vec()?;
    let Some(p) = t.host_ptr()? else { return Ok(()) };
    let mut next = sv.into_iter();
    for (o, b) in Offsets::new(t.offset, &t.sizes, &t.strides, t.numel()).zip(mv) {
        if b.on()
            && let Some(x) = next.next()
        {
            // SAFETY: every offset of t lies inside its storage (host_ptr checked).
            unsafe { ptr::write(p.add(o), x) };
        }
    }
    Ok(())
}

/// maskedCopy's `src` must have at least `count` (the mask's set values) elements.
fn enough_source<T: Scalar>(count: usize, src: &View<T>) -> Result<()> {
    if src.numel() < count {
        return Err(Error::size(format!(
            "mask has {count} set elements but the source has only {} elements",
            src.numel()
        ))
        .at_arg(3));
    }
    Ok(())
}

/// `src` and `mask` at a common shape: numpy broadcasting, or paired in row-major order.
fn broadcast_pair<T: Scalar, M: Scalar>(src: &View<T>, mask: &View<M>) -> Result<(View<T>, View<M>)> {
    if src.sizes == mask.sizes {
        return Ok((src.clone(), mask.clone()));
    }
    if src.ndim() > 0
        && mask.ndim() > 0
        && let Ok(shape) = broadcast_shapes(&src.sizes, &mask.sizes)
    {
        return Ok((src.expand(&shape)?, mask.expand(&shape)?));
    }
    Ok((src.clone(), mask_at(mask, &src.sizes, 3)?))
}

/// `r` = the elements of `src` where `mask` is set, as a 1-D tensor (row-major order).
pub fn masked_select<T: Scalar, M: MaskElem>(r: &Tensor<T>, src: &View<T>, mask: &View<M>) -> Result<()> {
    let be = Backend::of(&[r.with_view(|v| v.device()), src.device(), mask.device()])?;
    let (s, m) = broadcast_pair(src, mask)?;
    if let Backend::Cuda(i) = be {
        check_mask_on(&m, 3)?;
        let (pos, count) = positions(i, &m)?;
        return masked_select_on(i, r, &s, &pos, count);
    }
    let count = check_mask(&m, 3)?;
    let mut out: Vec<T> = crate::core::limits::try_vec(count)?;
    match (s.host_ptr()?, m.host_ptr()?) {
        (Some(sp), Some(mp)) if s.is_contiguous() && m.is_contiguous() => {
            for i in 0..s.numel() {
                // SAFETY: both views are contiguous runs of numel elements from their offsets,
                // inside their storages (host_ptr checked).
                let (x, b) = unsafe { (sp.add(s.offset + i).read(), mp.add(m.offset + i).read()) };
                if b.on() {
                    out.push(x);
                }
            }
        }
        _ => out.extend(s.to_vec()?.into_iter().zip(m.to_vec()?).filter(|(_, b)| b.on()).map(|(x, _)| x)),
    }
    set_result(r, &out, &[out.len() as i64])
}

/// `r` (nnz x ndim) = the subscripts of the nonzero elements of `t`, in row-major order.
pub fn nonzero<T: Scalar>(r: &Tensor<i64>, t: &View<T>) -> Result<()> {
    if let Backend::Cuda(i) = Backend::of(&[r.with_view(|v| v.device()), t.device()])? {
        return nonzero_on(i, r, t);
    }
    let nd = t.ndim();
    let zero = T::default();
    let mut subs: Vec<i64> = Vec::new();
    let mut at = vec![0i64; nd];
    scan(t, |_, v| {
        if v != zero {
            for &a in &at {
                try_push(&mut subs, a)?;
            }
        }
        for e in (0..nd).rev() {
            at[e] += 1;
            if at[e] < t.sizes[e] {
                break;
            }
            at[e] = 0;
        }
        Ok(())
    })?;
    let n = subs.len().checked_div(nd).unwrap_or(0) as i64;
    set_result(r, &subs, &[n, nd as i64])
}
