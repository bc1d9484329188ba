//! Raw-pointer helpers (validXCorr2Dptr, ..., conv2d, conv3d).

use super::*;

/// `r += alpha * conv(t, k)` on raw contiguous buffers: `t` holds `i` (depth, rows, cols),
/// `k` holds `kk`, `r` the output of `kind` (`flip`: the kernel is reversed first).
///
/// # Safety
/// `r`, `t`, `k` must be valid for the output, input and kernel element counts.
#[allow(clippy::too_many_arguments)]
pub unsafe fn ptr_op<T: ConvElem>(
    r: *mut T,
    alpha: T,
    t: *const T,
    i: [i64; 3],
    k: *const T,
    kk: [i64; 3],
    s: [i64; 3],
    stride_args: [u32; 3],
    kind: Kind,
    flip: bool,
    name: &str,
) -> Result<()> {
    if r.is_null() {
        return Err(Error::null(1, "r_"));
    }
    if t.is_null() {
        return Err(Error::null(3, "t_"));
    }
    if k.is_null() {
        return Err(Error::null(if stride_args[0] == 0 { 6 } else { 7 }, "k_"));
    }
    let (g, o) = Geom::new(i, kk, s, kind, name, stride_args)?;
    let n_out: usize = o.iter().product();
    // SAFETY: caller contract: t and k hold the input and kernel volumes. They are copied so
    // that an output overlapping them cannot alias a shared borrow.
    let (ts, ks) = unsafe { (std::slice::from_raw_parts(t, g.in_len()), std::slice::from_raw_parts(k, g.k_len())) };
    let mut inp = zeros::<T::K>(ts.len())?;
    for (a, &b) in inp.iter_mut().zip(ts) {
        *a = b.to_k();
    }
    let mut kraw = zeros::<T::K>(ks.len())?;
    for (a, &b) in kraw.iter_mut().zip(ks) {
        *a = b.to_k();
    }
    let ker = prep_kernel(&kraw, g.k_len(), alpha.to_k(), flip)?;
    // SAFETY: caller contract: r holds the n_out outputs.
    let rs = unsafe { std::slice::from_raw_parts_mut(r, n_out) };
    if let Some(out) = T::as_k_mut(rs) {
        plane(out, kind, &g, o, &[(&inp, &ker)]);
    } else {
        let mut out = zeros::<T::K>(n_out)?;
        for (a, &b) in out.iter_mut().zip(rs.iter()) {
            *a = b.to_k();
        }
        plane(&mut out, kind, &g, o, &[(&inp, &ker)]);
        for (a, b) in rs.iter_mut().zip(out) {
            *a = T::from_k(b);
        }
    }
    Ok(())
}

/// (kind, flip) of a pointer helper's mode.
pub fn ptr_mode(m: Mode) -> (Kind, bool) {
    mode_kind(Some(m))
}
