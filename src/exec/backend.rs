//! Where an op runs: the one spot that picks the engine for a call from where its operands live.
//!
//! Everything before the engine is device-independent and shared by every backend: views
//! (shapes, strides, offsets, a refcounted storage that records its `Device`), broadcasting and
//! output resizing in `ops`, the overlap rules, and the plans of `exec` (`plan::Plan`,
//! `reduce::Geometry`), which hold shapes and strides only and take base addresses when they
//! run. A backend supplies what is left: memory it can address and the kernels that walk a plan.
//!
//! The engines that THC also has (pointwise, reductions, copies, index gathers) bind their
//! backend with `let Backend::Host = Backend::of(..)?`: adding a device variant here makes each
//! of those lines a compile error until that engine handles it, so the compiler lists the work
//! of a second backend. Host-only engines (sorting, LAPACK, convolution, random fills) reach
//! memory through `View::host_ptr`, which refuses device storages with a clear error.

use crate::core::allocator::Device;
use crate::core::dtype::Scalar;
use crate::core::error::{Error, Result};
use crate::core::tensor::View;

/// The engines a call can run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// Host memory, the CPU kernels of `kernels` and the rayon pool of `parallel`.
    Host,
}

impl Backend {
    /// The backend for a call whose operands live on `devices`: every operand must be on the
    /// same one. Device storages have no engine in this crate yet.
    pub fn of(devices: &[Device]) -> Result<Backend> {
        match devices.iter().find(|&&d| d != Device::Cpu) {
            None => Ok(Backend::Host),
            Some(Device::Cuda(i)) => {
                Err(Error::invalid(format!("an operand is on cuda:{i}: this function takes host (CPU) tensors")))
            }
            Some(Device::Cpu) => unreachable!("filtered above"),
        }
    }
}

/// The host engine's address of element 0 of `v` (NULL when it has no elements), after
/// checking that the whole view lies inside its storage.
pub fn host_base<T: Scalar>(v: &View<T>) -> Result<*mut u8> {
    Ok(match v.host_ptr()? {
        // SAFETY: the offset is inside the storage (host_ptr checked the whole view).
        Some(p) => unsafe { p.add(v.offset) as *mut u8 },
        None => std::ptr::null_mut(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_operands_pick_the_host_engine() {
        assert_eq!(Backend::of(&[]).unwrap(), Backend::Host);
        assert_eq!(Backend::of(&[Device::Cpu, Device::Cpu]).unwrap(), Backend::Host);
    }

    #[test]
    fn a_device_operand_is_refused_by_name() {
        let e = Backend::of(&[Device::Cpu, Device::Cuda(1)]).unwrap_err();
        assert!(e.to_string().contains("cuda:1"), "{e}");
    }
}
