//! Fallible allocation of Rust-side buffers whose length the caller controls.
//!
//! Storages live on the C heap and report failure as `TH_ERR_ALLOC`, but Rust's `Vec` aborts
//! the whole process when an allocation fails (and `collect` from an exactly-sized iterator
//! allocates up front), which no `catch_unwind` can turn into an error. Every temporary whose
//! length comes from a tensor's element count (which `expand` can make huge without memory) or
//! from another caller-controlled number goes through these helpers instead.

use crate::core::error::{Error, Result};

/// The most dimensions an operation creates from a caller's number alone (`cat` along a
/// dimension past its inputs' adds size-1 dimensions up to it, as in torch7).
pub(crate) const MAX_NEW_DIMS: usize = 1024;

fn too_big<T>(n: usize) -> Error {
    Error::alloc(format!(
        "not enough memory: tried to allocate a temporary buffer of {n} elements of {} bytes",
        std::mem::size_of::<T>()
    ))
}

/// An empty `Vec` with room for `n` elements, or `TH_ERR_ALLOC`.
pub fn try_vec<T>(n: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| too_big::<T>(n))?;
    Ok(v)
}

/// `n` copies of `x`, or `TH_ERR_ALLOC`.
pub fn try_filled<T: Clone>(n: usize, x: T) -> Result<Vec<T>> {
    let mut v = try_vec(n)?;
    v.resize(n, x);
    Ok(v)
}

/// The items of `it` (at most `n` of them, reserved up front), or `TH_ERR_ALLOC`.
pub fn try_collect<T>(n: usize, it: impl Iterator<Item = T>) -> Result<Vec<T>> {
    let mut v = try_vec(n)?;
    v.extend(it.take(n));
    Ok(v)
}

/// Grows `v` to `n` elements, the new ones copies of `x` (a longer `v` stays as it is), or
/// `TH_ERR_ALLOC` (`v` unchanged).
pub fn try_grow<T: Clone>(v: &mut Vec<T>, n: usize, x: T) -> Result<()> {
    if v.len() < n {
        v.try_reserve_exact(n - v.len()).map_err(|_| too_big::<T>(n))?;
        v.resize(n, x);
    }
    Ok(())
}

/// Appends `x`, growing fallibly.
pub fn try_push<T>(v: &mut Vec<T>, x: T) -> Result<()> {
    if v.len() == v.capacity() {
        let extra = v.len().max(16);
        v.try_reserve(extra).map_err(|_| too_big::<T>(v.len() + extra))?;
    }
    v.push(x);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(miri, ignore = "Miri stops at an allocation it cannot satisfy instead of failing it")]
    fn huge_requests_are_errors() {
        let e = try_vec::<u64>(usize::MAX / 2).unwrap_err();
        assert_eq!(e.code, crate::core::error::Code::TH_ERR_ALLOC);
        assert!(try_vec::<u8>(1 << 62).is_err());
        assert!(try_filled(1usize << 61, 0u32).is_err());
        assert!(try_collect(1usize << 61, 0..3u64).is_err());
        assert_eq!(try_collect(3, 0..10).unwrap(), vec![0, 1, 2]);
        let mut g = vec![1u8, 2];
        assert!(try_grow(&mut g, 1 << 62, 0).is_err());
        try_grow(&mut g, 4, 7).unwrap();
        try_grow(&mut g, 3, 9).unwrap();
        assert_eq!(g, [1, 2, 7, 7]);
        let mut v = Vec::new();
        for i in 0..100 {
            try_push(&mut v, i).unwrap();
        }
        assert_eq!(v.len(), 100);
    }
}
