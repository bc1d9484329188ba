//! Triangles, concatenation, cross product (§4.13, §4.10).

use super::*;
use crate::cuda::launch::device_base;
use crate::cuda::lines::{self, LineOperand};

/// `r` = `t` (a matrix) with the elements outside the triangle zeroed: lower keeps `c <= r + k`,
/// upper keeps `c >= r + k`.
pub fn triangle<T: Scalar>(r: &Tensor<T>, t: &View<T>, k: i64, upper: bool) -> Result<()> {
    if t.ndim() != 2 {
        return Err(Error::size(format!("expected a matrix, got a tensor of size {}", size_desc(&t.sizes))).at_arg(2));
    }
    let out = resize_out(r, &t.sizes)?;
    assign(&out, t)?;
    let (rows, cols) = (out.sizes[0], out.sizes[1]);
    if let Backend::Cuda(dev) = Backend::of(&[out.device()])? {
        // Item r zeroes its row's columns outside the triangle; k clamped so r + k cannot
        // overflow (every |k| >= rows + cols selects the same elements).
        let reach = rows.saturating_add(cols);
        let call = Call::new("tri").value(k.clamp(-reach, reach)).value(upper as i64);
        let line =
            LineOperand { base: device_base(&out)?, strides: &out.strides[..1], len: cols, step: out.strides[1] };
        // SAFETY: the items and lines are the positions of `out`, checked against its storage.
        return unsafe { lines::run(dev, &call, T::DTYPE, &[rows], &[line]) };
    }
    let Some(p) = out.host_ptr()? else { return Ok(()) };
    let zero = T::default();
    for i in 0..rows {
        let edge = i.saturating_add(k);
        let (lo, hi) = if upper { (0, edge.clamp(0, cols)) } else { (edge.saturating_add(1).clamp(0, cols), cols) };
        for c in lo..hi {
            let o = out.offset + (i * out.strides[0] + c * out.strides[1]) as usize;
            // SAFETY: (i, c) is a position of out, whose elements lie inside its storage (host_ptr).
            unsafe { ptr::write(p.add(o), zero) };
        }
    }
    Ok(())
}

pub fn tril<T: Scalar>(r: &Tensor<T>, t: &View<T>, k: i64) -> Result<()> {
    triangle(r, t, k, false)
}

pub fn triu<T: Scalar>(r: &Tensor<T>, t: &View<T>, k: i64) -> Result<()> {
    triangle(r, t, k, true)
}

/// TH's `catArray`: the inputs joined along `dim` (-1: the last dimension). Empty inputs are
/// skipped; an input with fewer dims counts as having trailing size-1 dims; `dim` may be one
/// past the largest rank (adding a size-1 dim); every other size must match. All inputs empty:
/// `r` becomes empty.
pub fn cat<T: Scalar>(r: &Tensor<T>, inputs: &[View<T>], dim: i32) -> Result<()> {
    if inputs.is_empty() {
        return Err(Error::size("invalid number of inputs 0").at_arg(3));
    }
    let max_nd = inputs.iter().map(|v| v.ndim()).max().unwrap_or(0);
    let cd = match dim {
        -1 => max_nd.saturating_sub(1),
        d if d >= 0 => d as usize,
        d => return Err(Error::index(format!("invalid dimension {d} (use -1 for the last one)")).at_arg(4)),
    };
    // As in torch7, a dimension past the inputs' adds size-1 dimensions; each costs memory, so a
    // huge one (INT_MAX would need a 16 GiB size list) is an error rather than an allocation.
    if cd >= max_nd.max(crate::core::limits::MAX_NEW_DIMS) {
        return Err(Error::index(format!(
            "dimension {cd} out of range: cat adds dimensions only up to {}",
            crate::core::limits::MAX_NEW_DIMS
        ))
        .at_arg(4));
    }
    let nd = max_nd.max(cd + 1);
    let size_at = |v: &View<T>, i: usize| if i < v.ndim() { v.sizes[i] } else { 1 };
    let live: Vec<(usize, &View<T>)> = inputs.iter().enumerate().filter(|(_, v)| v.ndim() > 0).collect();
    let Some(&(j0, first)) = live.first() else {
        resize_out(r, &[])?;
        return Ok(());
    };
    let mut shape = vec![0i64; nd];
    for (i, s) in shape.iter_mut().enumerate() {
        if i == cd {
            *s = live
                .iter()
                .try_fold(0i64, |acc, (_, v)| acc.checked_add(size_at(v, i)))
                .ok_or_else(|| Error::size("concatenated size overflows int64_t").at_arg(2))?;
            continue;
        }
        *s = size_at(first, i);
        if let Some((j, v)) = live.iter().find(|(_, v)| size_at(v, i) != *s) {
            return Err(Error::size(format!(
                "inconsistent tensor sizes: input {j} of size {} and input {j0} of size {} differ at dimension {i} \
                 (concatenating along dimension {cd})",
                size_desc(&v.sizes),
                size_desc(&first.sizes)
            ))
            .at_arg(2));
        }
    }
    numel(&shape)?;
    let out = resize_out(r, &shape)?;
    let through_tmp = live.iter().any(|(_, v)| may_overlap(&out, v));
    let target = if through_tmp { View::contiguous(&shape)? } else { out.clone() };
    let mut off = 0i64;
    for (_, v) in &live {
        let len = size_at(v, cd);
        // The input with its missing trailing dims added (size 1), shaped like its slot.
        let mut src = (*v).clone();
        src.sizes.resize(nd, 1);
        src.strides.resize(nd, 1);
        assign(&target.narrow(cd as i32, off, len)?, &src)?;
        off += len;
    }
    if through_tmp {
        assign(&out, &target)?;
    }
    Ok(())
}

/// `r` = the cross product of `a` and `b` (broadcast together) along `dim`, which must have
/// size 3; `dim < 0` picks the first dimension of size 3. Floats compute in double.
pub fn cross<T: Num>(r: &Tensor<T>, a: &View<T>, b: &View<T>, dim: i32) -> Result<()> {
    if a.ndim() == 0 || b.ndim() == 0 {
        return Err(Error::size("cross: empty input").at_arg(if a.ndim() == 0 { 2 } else { 3 }));
    }
    let shape = broadcast_shapes(&a.sizes, &b.sizes).map_err(|e| e.at_arg(3))?;
    let d =
        if dim < 0 {
            shape.iter().position(|&s| s == 3).ok_or_else(|| {
                Error::size(format!("cross: no dimension of size 3 in {}", size_desc(&shape))).at_arg(4)
            })?
        } else {
            let d = dim_index(dim, shape.len(), 4)?;
            if shape[d] != 3 {
                return Err(Error::size(format!("cross: dimension {d} of {} does not have size 3", size_desc(&shape)))
                    .at_arg(4));
            }
            d
        };
    let (a, b) = (a.expand(&shape)?, b.expand(&shape)?);
    let out = resize_out(r, &shape)?;
    let through_tmp = may_overlap(&out, &a) || may_overlap(&out, &b);
    let target = if through_tmp { crate::ops::temp_like(&out, &shape)? } else { out.clone() };
    let sshape = without(&shape, d);
    if let Backend::Cuda(dev) = Backend::of(&[out.device(), a.device(), b.device()])? {
        if self_overlapping(&target.sizes, &target.strides) {
            return Err(Error::invalid("cross: the output has overlapping elements (an expanded view)").at_arg(1));
        }
        let (so, sa, sb) = (without(&target.strides, d), without(&a.strides, d), without(&b.strides, d));
        let line = |base, strides, step| LineOperand { base, strides, len: 3, step };
        let ops = [
            line(device_base(&target)?, &so[..], target.strides[d]),
            line(device_base(&a)?, &sa[..], a.strides[d]),
            line(device_base(&b)?, &sb[..], b.strides[d]),
        ];
        // SAFETY: items and lines are positions of the three views (size 3 along d), each
        // checked against its storage; target shares no memory with a or b.
        unsafe { lines::run(dev, &Call::new("cross"), T::DTYPE, &sshape, &ops)? };
        return if through_tmp { assign(&out, &target) } else { Ok(()) };
    }
    let st = [target.strides[d] as isize, a.strides[d] as isize, b.strides[d] as isize];
    let plan =
        Plan::<3>::new(&sshape, [&without(&target.strides, d), &without(&a.strides, d), &without(&b.strides, d)]);
    let bases = [base_ptr(&target)?, base_ptr(&a)?, base_ptr(&b)?];
    let elem = [size_of::<T>(); 3];
    // SAFETY: the views were checked against their storages (base_ptr); each slice touches
    // positions 0..3 along d, inside every view (size 3 there); slices write disjoint elements of
    // target unless it overlaps itself (then serial), and target shares no memory with a or b.
    unsafe {
        plan.run(bases, elem, self_overlapping(&target.sizes, &target.strides), |p, s, n| {
            for j in 0..n as isize {
                let (o, x, y) = (
                    (p[0] as *mut T).offset(j * s[0]),
                    (p[1] as *const T).offset(j * s[1]),
                    (p[2] as *const T).offset(j * s[2]),
                );
                let xa = [x.read(), x.offset(st[1]).read(), x.offset(2 * st[1]).read()];
                let ya = [y.read(), y.offset(st[2]).read(), y.offset(2 * st[2]).read()];
                for c in 0..3 {
                    let (u, v) = ((c + 1) % 3, (c + 2) % 3);
                    let z = if T::IS_FLOAT {
                        T::from_f64(xa[u].to_f64() * ya[v].to_f64() - xa[v].to_f64() * ya[u].to_f64())
                    } else {
                        xa[u].mul(ya[v]).sub(xa[v].mul(ya[u]))
                    };
                    o.offset(c as isize * st[0]).write(z);
                }
            }
        })
    };
    if through_tmp {
        assign(&out, &target)?;
    }
    Ok(())
}
