//! The device engine of the elementwise calls: `ops` hands it the output and inputs (same
//! shape, broadcast inputs with stride 0) and a `launch::Call`; it launches the kernel on the
//! device's current stream. Kernels are asynchronous: a later transfer to the host on the same
//! stream (or a synchronize) sees their results, as in THC.

use super::launch::{Call, Operand, device_base};
use super::runtime::{self, Device as Dev};
use crate::core::dtype::Scalar;
use crate::core::error::{Error, Result};
use crate::core::tensor::View;
use crate::exec::overlap::{Alias, alias, self_overlapping};

/// A view as a launch operand.
pub fn operand<T: Scalar>(v: &View<T>) -> Result<Operand<'_>> {
    Ok(Operand { base: device_base(v)?, strides: &v.strides, dtype: T::DTYPE })
}

/// Runs `call` on device `ordinal` over `out`'s shape: `out` then `inputs` (each shaped like
/// `out`). The output must not have overlapping elements (an expanded view): the kernel's
/// threads would race to write them.
pub fn run<O: Scalar>(ordinal: i32, call: &Call, out: &View<O>, inputs: &[Operand<'_>]) -> Result<()> {
    if self_overlapping(&out.sizes, &out.strides) {
        return Err(Error::invalid(format!(
            "{}: the output has overlapping elements (an expanded or stride-0 view), which device threads \
             cannot write deterministically; write into a contiguous tensor",
            call.op
        )));
    }
    let dev = runtime::device(ordinal)?;
    let mut operands = Vec::with_capacity(1 + inputs.len());
    operands.push(operand(out)?);
    operands.extend_from_slice(inputs);
    let Some(mut p) = call.launch(&out.sizes, &operands)? else { return Ok(()) };
    let mut args = p.args();
    // SAFETY: `p` was built for this kernel from views checked against their storages (the
    // device addresses cover every element the kernel touches), and it outlives the launch.
    unsafe { dev.gpu.launch(&p.kernel, &p.cfg, &mut args, runtime::stream(ordinal)) }
}

/// `dst = src` elementwise on one device (same element count; casts as the host's). A source
/// that partially overlaps the destination is copied to a temporary first.
pub fn copy_kernel<D: Scalar, S: Scalar>(dev: &Dev, dst: &View<D>, src: &View<S>) -> Result<()> {
    if dst.numel() == 0 {
        return Ok(());
    }
    let same_bytes = D::DTYPE == S::DTYPE;
    match alias(dst, src) {
        Alias::Same if same_bytes => return Ok(()),
        Alias::Disjoint => {}
        _ => {
            let tmp = super::copy::empty_like::<S>(dev, &src.sizes)?;
            copy_kernel(dev, &tmp, src)?;
            return copy_kernel(dev, dst, &tmp);
        }
    }
    if same_bytes && dst.is_contiguous() && src.is_contiguous() {
        let bytes = dst.numel() * size_of::<D>();
        // SAFETY: two disjoint contiguous runs of `bytes` inside their storages (device_base
        // checked each view against its storage).
        return unsafe { dev.gpu.dtod(device_base(dst)?, device_base(src)?, bytes, runtime::stream(dev.ordinal)) };
    }
    // TH pairs elements in row-major order whatever the shapes: view the source with the
    // destination's shape when it has another one.
    let src = if src.sizes == dst.sizes { src.clone() } else { reshaped_like(dev, src, &dst.sizes)? };
    run(dev.ordinal, &Call::new("copy"), dst, &[operand(&src)?])
}

/// `v` with `shape` (same element count): the view itself when contiguous, else a contiguous
/// device copy of it.
fn reshaped_like<T: Scalar>(dev: &Dev, v: &View<T>, shape: &[i64]) -> Result<View<T>> {
    let c = if v.is_contiguous() { v.clone() } else { super::copy::contiguous_on(dev, v)? };
    View::on_storage(c.storage.clone(), c.offset as isize, shape, None)
}

/// `v[i] = x` for every element of a device view.
pub fn fill<T: Scalar>(dev: &Dev, v: &View<T>, x: T) -> Result<()> {
    run(dev.ordinal, &Call::new("fill").value(x), v, &[])
}

/// Converts `n` contiguous elements at the device address `src` (`S`) into `dst` (`D`) with
/// the copy kernel, on device `dev`'s current stream.
///
/// # Safety
/// `dst` and `src` must hold `n` elements of their types on `dev` and not partially overlap.
pub unsafe fn convert_raw<D: Scalar, S: Scalar>(dev: &Dev, dst: u64, src: u64, n: usize) -> Result<()> {
    let one = [1i64];
    let shape = [n as i64];
    let operands =
        [Operand { base: dst, strides: &one, dtype: D::DTYPE }, Operand { base: src, strides: &one, dtype: S::DTYPE }];
    let Some(mut p) = Call::new("copy").launch(&shape, &operands)? else { return Ok(()) };
    let mut args = p.args();
    // SAFETY: caller contract: both runs of n elements are device memory of `dev`.
    unsafe { dev.gpu.launch(&p.kernel, &p.cfg, &mut args, runtime::stream(dev.ordinal)) }
}
