//! Constructors (§4.12) and reshape.

use super::*;
use crate::ops::arith::fill_view;

/// `r` resized to `size` (a TH size list) and filled with `value`.
pub fn fill_sized<T: Scalar>(r: &Tensor<T>, size: &[i64], value: T) -> Result<()> {
    let shape = parse_sizes(size).map_err(|e| e.at_arg(2))?;
    let out = resize_out(r, &shape)?;
    fill_view(&out, value)
}

/// `r` resized like `like` and filled with `value`.
pub fn fill_like<T: Scalar>(r: &Tensor<T>, like: &View<T>, value: T) -> Result<()> {
    let out = resize_out(r, &like.sizes)?;
    fill_view(&out, value)
}

pub fn zeros<T: Scalar>(r: &Tensor<T>, size: &[i64]) -> Result<()> {
    fill_sized(r, size, T::default())
}

pub fn ones<T: Scalar>(r: &Tensor<T>, size: &[i64]) -> Result<()> {
    fill_sized(r, size, one())
}

pub fn zeros_like<T: Scalar>(r: &Tensor<T>, like: &View<T>) -> Result<()> {
    fill_like(r, like, T::default())
}

pub fn ones_like<T: Scalar>(r: &Tensor<T>, like: &View<T>) -> Result<()> {
    fill_like(r, like, one())
}

/// The `k`-th diagonal of a matrix as a 1-D view (None when it is empty).
fn diagonal<T: Scalar>(m: &View<T>, k: i64) -> Option<View<T>> {
    let (rows, cols) = (m.sizes[0], m.sizes[1]);
    let (len, off) = if k >= 0 {
        (rows.min(cols.saturating_sub(k)), k.saturating_mul(m.strides[1]))
    } else {
        (rows.saturating_add(k).min(cols), k.saturating_neg().saturating_mul(m.strides[0]))
    };
    if len <= 0 {
        return None;
    }
    // len >= 2 implies (len-1)*(s0+s1) fits (the view's own extent does), so the sum does too.
    let stride = if len == 1 { 1 } else { m.strides[0] + m.strides[1] };
    Some(View { storage: m.storage.clone(), offset: m.offset + off as usize, sizes: vec![len], strides: vec![stride] })
}

/// `t` 1-D: `r` = the square matrix with `t` on its `k`-th diagonal (zeros elsewhere);
/// `t` 2-D: `r` = the `k`-th diagonal of `t` (empty when `k` is past the matrix).
pub fn diag<T: Scalar>(r: &Tensor<T>, t: &View<T>, k: i32) -> Result<()> {
    let k = k as i64;
    match t.ndim() {
        1 => {
            let n = t.sizes[0] + k.abs();
            let out = resize_out(r, &[n, n])?;
            let t = detached(&out, t)?;
            fill_view(&out, T::default())?;
            match diagonal(&out, k) {
                Some(dv) => assign(&dv, &t),
                None => Err(Error::internal("diag: empty diagonal of a non-empty matrix")),
            }
        }
        2 => match diagonal(t, k) {
            Some(dv) => {
                let out = resize_out(r, &dv.sizes)?;
                assign(&out, &dv)
            }
            None => {
                resize_out(r, &[])?;
                Ok(())
            }
        },
        n => Err(Error::size(format!("diag: a matrix or a vector expected, got a {n}D tensor")).at_arg(2)),
    }
}

/// `r` = the `n` x `m` identity (`m <= 0` means `m = n`).
pub fn eye<T: Scalar>(r: &Tensor<T>, n: i64, m: i64) -> Result<()> {
    if n <= 0 {
        return Err(Error::size(format!("eye: invalid number of rows {n} (must be positive)")).at_arg(2));
    }
    let m = if m <= 0 { n } else { m };
    let out = resize_out(r, &[n, m])?;
    fill_view(&out, T::default())?;
    match diagonal(&out, 0) {
        Some(dv) => fill_view(&dv, one::<T>()),
        None => Ok(()),
    }
}

/// `r` resized to `size` (a TH size list, no -1 inference) holding `t`'s elements in row-major order.
pub fn reshape<T: Scalar>(r: &Tensor<T>, t: &View<T>, size: &[i64]) -> Result<()> {
    let shape = parse_sizes(size).map_err(|e| e.at_arg(3))?;
    if numel(&shape)? != t.numel() {
        return Err(Error::size(format!(
            "cannot reshape a tensor of size {} ({} elements) to size {}",
            size_desc(&t.sizes),
            t.numel(),
            size_desc(&shape)
        ))
        .at_arg(3));
    }
    let out = resize_out(r, &shape)?;
    copy(&out, t)
}
