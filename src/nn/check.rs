//! Argument checks with torch7's numbering: `arg` is the 1-based position in the C call, the
//! `THNNState *` being argument 1 (the first tensor is argument 2). Every error says which
//! argument and what was expected; `ffi::boundary` prefixes the function's name.

use crate::Scalar;
use crate::core::error::{Error, Result};
use crate::core::tensor::View;

/// An error about argument `arg` (`name`): `"argument 2 (input): <msg>"`, code `TH_ERR_SIZE`.
#[cold]
pub fn size_err(arg: u32, name: &str, msg: impl std::fmt::Display) -> Error {
    Error::size(format!("argument {arg} ({name}): {msg}")).at_arg(arg)
}

/// As `size_err`, code `TH_ERR_INVALID_ARG` (a bad flag, kernel size, stride, ...).
#[cold]
pub fn invalid(arg: u32, name: &str, msg: impl std::fmt::Display) -> Error {
    Error::invalid(format!("argument {arg} ({name}): {msg}")).at_arg(arg)
}

/// As `size_err`, code `TH_ERR_INDEX` (a target, index or lookup row out of range).
#[cold]
pub fn index_err(arg: u32, name: &str, msg: impl std::fmt::Display) -> Error {
    Error::index(format!("argument {arg} ({name}): {msg}")).at_arg(arg)
}

/// `v` has one of the dimensionalities `dims`.
pub fn dims<T: Scalar>(v: &View<T>, arg: u32, name: &str, dims: &[usize]) -> Result<()> {
    if dims.contains(&v.ndim()) {
        return Ok(());
    }
    let want: Vec<String> = dims.iter().map(|d| format!("{d}D")).collect();
    Err(size_err(arg, name, format_args!("expected a {} tensor, got {}", want.join(" or "), v.desc())))
}

/// `v` has exactly the sizes `sizes`.
pub fn shape<T: Scalar>(v: &View<T>, arg: u32, name: &str, sizes: &[i64]) -> Result<()> {
    if v.sizes == sizes {
        return Ok(());
    }
    Err(size_err(arg, name, format_args!("expected size {}, got {}", crate::core::tensor::size_desc(sizes), v.desc())))
}

/// `v` holds `n` elements (whatever its shape).
pub fn numel<T: Scalar>(v: &View<T>, arg: u32, name: &str, n: usize) -> Result<()> {
    if v.numel() == n {
        return Ok(());
    }
    Err(size_err(arg, name, format_args!("expected {n} elements, got {}", v.desc())))
}

/// `v` has as many elements as `like` (torch7's pointwise layers pair elements by count).
pub fn same_numel<T: Scalar, U: Scalar>(
    v: &View<T>,
    arg: u32,
    name: &str,
    like: &View<U>,
    like_name: &str,
) -> Result<()> {
    if v.numel() == like.numel() {
        return Ok(());
    }
    Err(size_err(
        arg,
        name,
        format_args!("has {} elements but {like_name} has {} ({})", v.numel(), like.numel(), like.desc()),
    ))
}

/// `v` has exactly the shape of `like`.
pub fn same_shape<T: Scalar, U: Scalar>(
    v: &View<T>,
    arg: u32,
    name: &str,
    like: &View<U>,
    like_name: &str,
) -> Result<()> {
    if v.sizes == like.sizes {
        return Ok(());
    }
    Err(size_err(arg, name, format_args!("expected the size of {like_name} ({}), got {}", like.desc(), v.desc())))
}

/// `x >= 1` (kernel sizes, strides, dilations, plane counts).
pub fn positive(x: i64, arg: u32, name: &str) -> Result<()> {
    if x >= 1 {
        return Ok(());
    }
    Err(invalid(arg, name, format_args!("must be positive, got {x}")))
}

/// `x >= 0` (paddings, `adj`).
pub fn non_negative(x: i64, arg: u32, name: &str) -> Result<()> {
    if x >= 0 {
        return Ok(());
    }
    Err(invalid(arg, name, format_args!("must be non-negative, got {x}")))
}

/// Every value of the index tensor `idx` lies in `[lo, hi)`; `skip` (e.g. `ignore_index`) is
/// allowed too.
pub fn indices(idx: &[i64], arg: u32, name: &str, lo: i64, hi: i64, skip: Option<i64>) -> Result<()> {
    for (i, &v) in idx.iter().enumerate() {
        if (v < lo || v >= hi) && Some(v) != skip {
            return Err(index_err(arg, name, format_args!("element {i} is {v}, out of range [{lo}, {hi})")));
        }
    }
    Ok(())
}
