//! Reducers that also run on CUDA devices: a host reducer paired with the device fold that
//! computes the same thing (`exec::reduce::Reducer::device`).

use super::*;
use crate::cuda::reduce::DeviceAcc;
use crate::exec::reduce::DeviceFold;

/// `host` on host operands, `fold` on device ones (its accumulators read back as `host`'s).
pub struct OnDevice<R> {
    pub host: R,
    pub fold: DeviceFold,
}

impl<T: Scalar, R: Reducer<T, N>, const N: usize> Reducer<T, N> for OnDevice<R>
where
    R::Acc: DeviceAcc,
{
    type Acc = R::Acc;
    fn identity(&self) -> R::Acc {
        self.host.identity()
    }
    #[inline]
    unsafe fn fold_run(&self, acc: R::Acc, p: [*const T; N], s: [isize; N], len: usize, first: usize) -> R::Acc {
        // SAFETY: forwarded contract.
        unsafe { self.host.fold_run(acc, p, s, len, first) }
    }
    #[inline]
    unsafe fn fold_cols(&self, acc: &mut [R::Acc], p: [*const T; N], s: [isize; N], ridx: usize) {
        // SAFETY: forwarded contract.
        unsafe { self.host.fold_cols(acc, p, s, ridx) }
    }
    unsafe fn fold_cols_rows(
        &self,
        acc: &mut [R::Acc],
        p: [*const T; N],
        s: [isize; N],
        rs: [isize; N],
        ridx: usize,
        rows: usize,
    ) {
        // SAFETY: forwarded contract.
        unsafe { self.host.fold_cols_rows(acc, p, s, rs, ridx, rows) }
    }
    unsafe fn fold_runs(
        &self,
        p: [[*const T; N]; rk::MULTI],
        s: [isize; N],
        len: usize,
        first: [usize; rk::MULTI],
    ) -> [R::Acc; rk::MULTI] {
        // SAFETY: forwarded contract.
        unsafe { self.host.fold_runs(p, s, len, first) }
    }
    fn combine(&self, a: R::Acc, b: R::Acc) -> R::Acc {
        self.host.combine(a, b)
    }
    fn device(&self) -> Option<DeviceFold> {
        Some(self.fold)
    }
    fn device_acc(&self, raw: &[u8]) -> Option<R::Acc> {
        R::Acc::read(raw)
    }
}

/// `host` with the device fold `fold`.
pub fn on_device<R>(host: R, fold: DeviceFold) -> OnDevice<R> {
    OnDevice { host, fold }
}
