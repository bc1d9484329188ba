//! Where an op runs: the one spot that picks the engine for a call from where its operands live.
//!
//! Everything before the engine is device-independent and shared by every backend: views
//! (shapes, strides, offsets, a refcounted storage that records its `Device`), broadcasting and
//! output resizing in `ops`, the overlap rules, and the plans of `exec` (`plan::Plan`,
//! `reduce::Geometry`), which hold shapes and strides only and take base addresses when they
//! run. A backend supplies what is left: memory it can address and the kernels that walk a plan.
//!
//! The engines that THC also has (pointwise, reductions, copies, index gathers) `match` on
//! `Backend::of(..)?`, so a new backend is a compile error in each until that engine handles
//! it; an engine not yet ported to the device says so by name (`host_only`). Host-only engines (sorting, LAPACK, convolution, random fills) reach
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
    /// Device `i`'s memory and the CUDA kernels of `cuda::kernels` (through `cuda::ops`).
    Cuda(i32),
}

impl Backend {
    /// The backend for a call whose operands live on `devices`: every operand must be on the
    /// same one (THC's rule: no implicit transfers; copies move data between devices).
    pub fn of(devices: &[Device]) -> Result<Backend> {
        let first = devices.first().copied().unwrap_or(Device::Cpu);
        if let Some(other) = devices.iter().find(|&&d| d != first) {
            return Err(Error::invalid(format!(
                "operands on {} and {}: every tensor of a call must be on the same device",
                name(first),
                name(*other)
            )));
        }
        Ok(match first {
            Device::Cpu => Backend::Host,
            Device::Cuda(i) => Backend::Cuda(i),
        })
    }

    /// The error of an engine that has no device implementation yet.
    pub fn host_only(self, what: &str) -> Result<()> {
        match self {
            Backend::Host => Ok(()),
            Backend::Cuda(i) => Err(Error::invalid(format!(
                "{what}: an operand is on cuda:{i}, and this function takes host (CPU) tensors"
            ))),
        }
    }
}

fn name(d: Device) -> String {
    match d {
        Device::Cpu => "the CPU".into(),
        Device::Cuda(i) => format!("cuda:{i}"),
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
    fn mixed_devices_are_refused_by_name() {
        let e = Backend::of(&[Device::Cpu, Device::Cuda(1)]).unwrap_err();
        assert!(e.to_string().contains("cuda:1"), "{e}");
        let e = Backend::of(&[Device::Cuda(0), Device::Cuda(1)]).unwrap_err();
        assert!(e.to_string().contains("cuda:0") && e.to_string().contains("cuda:1"), "{e}");
        assert_eq!(Backend::of(&[Device::Cuda(1), Device::Cuda(1)]).unwrap(), Backend::Cuda(1));
    }

    #[test]
    fn host_only_engines_name_the_device() {
        assert!(Backend::Host.host_only("sort").is_ok());
        let e = Backend::Cuda(0).host_only("sort").unwrap_err();
        assert!(e.to_string().starts_with("sort: an operand is on cuda:0"), "{e}");
    }
}
