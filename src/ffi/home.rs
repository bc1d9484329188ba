//! Where a family of C handles keeps its elements: `Host` (TH's `TH{Real}Tensor`) or `Cuda`
//! (THC's `THCuda{Real}Tensor`, on the calling thread's current device). The storage and
//! tensor APIs are written once, over this trait: geometry is the same for both families, and
//! only making storages, touching elements and copying differ.

use crate::core::dtype::Scalar;
use crate::core::error::{Error, Result};
use crate::core::refcount::{Rc, Shared};
use crate::core::storage::Storage;
use crate::core::tensor::View;
use crate::cuda;

pub trait Home {
    /// The storage a view of this family is made on when none is given (`None`: the host's
    /// storages are created on demand by `View::on_storage`).
    fn fresh<T: Scalar>() -> Result<Option<Rc<Storage<T>>>>;
    /// A new storage of `n` uninitialised elements.
    fn new_storage<T: Scalar>(n: usize) -> Result<Rc<Storage<T>>>;
    /// A new storage holding `v`.
    fn storage_from<T: Scalar>(v: &[T]) -> Result<Rc<Storage<T>>>;
    /// TH's `data()` of a view (a device address for `Cuda`).
    fn data_ptr<T: Scalar>(v: &View<T>) -> Result<*mut T>;
    fn get<T: Scalar>(v: &View<T>, idx: &[i64]) -> Result<T>;
    fn set<T: Scalar>(v: &View<T>, idx: &[i64], x: T) -> Result<()>;
    /// TH's copy between views (either may be host or device memory).
    fn copy<D: Scalar, S: Scalar>(dst: &View<D>, src: &View<S>) -> Result<()>;
    /// `s[i]`, `s[i] = x`, fill, and copy (equal sizes) of this family's storages.
    fn storage_get<T: Scalar>(s: &Shared<Storage<T>>, i: isize) -> Result<T>;
    fn storage_set<T: Scalar>(s: &Shared<Storage<T>>, i: isize, x: T) -> Result<()>;
    fn storage_fill<T: Scalar>(s: &Shared<Storage<T>>, x: T) -> Result<()>;
    fn storage_copy<D: Scalar, S: Scalar>(dst: &Shared<Storage<D>>, src: &Shared<Storage<S>>) -> Result<()>;
}

/// A new reference to a borrowed storage.
fn rc<T: Scalar>(s: &Shared<Storage<T>>) -> Rc<Storage<T>> {
    // SAFETY: `s` is a live storage object (borrowed from a handle), so adding a reference is sound.
    unsafe { Rc::clone_raw(s as *const Shared<Storage<T>>) }
}

/// The 1-d view of element `i` of a storage (bounds-checked, argument 2).
fn element<T: Scalar>(s: &Shared<Storage<T>>, i: isize) -> Result<View<T>> {
    let len = s.len();
    let i = usize::try_from(i)
        .ok()
        .filter(|&u| u < len)
        .ok_or_else(|| Error::index(format!("index {i} out of bounds for storage of size {len}")).at_arg(2))?;
    View::on_storage(Some(rc(s)), i as isize, &[1], None)
}

/// A storage seen as a 1-d view (empty when it has no elements).
pub fn whole<T: Scalar>(s: &Rc<Storage<T>>) -> Result<View<T>> {
    let n = s.len() as i64;
    View::on_storage(Some(s.clone()), 0, if n == 0 { &[] } else { std::slice::from_ref(&n) }, None)
}

pub struct Host;

impl Home for Host {
    fn fresh<T: Scalar>() -> Result<Option<Rc<Storage<T>>>> {
        Ok(None)
    }
    fn new_storage<T: Scalar>(n: usize) -> Result<Rc<Storage<T>>> {
        Storage::new(n)
    }
    fn storage_from<T: Scalar>(v: &[T]) -> Result<Rc<Storage<T>>> {
        Storage::from_slice(v)
    }
    fn data_ptr<T: Scalar>(v: &View<T>) -> Result<*mut T> {
        v.data_ptr()
    }
    fn get<T: Scalar>(v: &View<T>, idx: &[i64]) -> Result<T> {
        v.get(idx)
    }
    fn set<T: Scalar>(v: &View<T>, idx: &[i64], x: T) -> Result<()> {
        v.set(idx, x)
    }
    fn copy<D: Scalar, S: Scalar>(dst: &View<D>, src: &View<S>) -> Result<()> {
        crate::ops::copy::copy(dst, src)
    }
    fn storage_get<T: Scalar>(s: &Shared<Storage<T>>, i: isize) -> Result<T> {
        s.get(i)
    }
    fn storage_set<T: Scalar>(s: &Shared<Storage<T>>, i: isize, x: T) -> Result<()> {
        s.set(i, x)
    }
    fn storage_fill<T: Scalar>(s: &Shared<Storage<T>>, x: T) -> Result<()> {
        s.fill(x)
    }
    fn storage_copy<D: Scalar, S: Scalar>(dst: &Shared<Storage<D>>, src: &Shared<Storage<S>>) -> Result<()> {
        dst.copy_from(src)
    }
}

pub struct Cuda;

impl Cuda {
    fn device() -> Result<&'static cuda::runtime::Device> {
        cuda::runtime::device(cuda::runtime::current())
    }

    /// The device of a view of this family (its storage's, else the current one).
    fn device_of<T: Scalar>(v: &View<T>) -> Result<&'static cuda::runtime::Device> {
        match &v.storage {
            Some(s) => cuda::storage::device_of(s, 1),
            None => Self::device(),
        }
    }
}

impl Home for Cuda {
    fn fresh<T: Scalar>() -> Result<Option<Rc<Storage<T>>>> {
        cuda::storage::new(cuda::runtime::current(), 0).map(Some)
    }
    fn new_storage<T: Scalar>(n: usize) -> Result<Rc<Storage<T>>> {
        cuda::storage::new(cuda::runtime::current(), n)
    }
    fn storage_from<T: Scalar>(v: &[T]) -> Result<Rc<Storage<T>>> {
        let s = Self::new_storage::<T>(v.len())?;
        cuda::copy::copy(&whole(&s)?, &View::from_slice(v, &[v.len() as i64])?)?;
        Ok(s)
    }
    fn data_ptr<T: Scalar>(v: &View<T>) -> Result<*mut T> {
        cuda::copy::data_ptr(v)
    }
    fn get<T: Scalar>(v: &View<T>, idx: &[i64]) -> Result<T> {
        cuda::copy::get(Self::device_of(v)?, v, idx)
    }
    fn set<T: Scalar>(v: &View<T>, idx: &[i64], x: T) -> Result<()> {
        cuda::copy::set(Self::device_of(v)?, v, idx, x)
    }
    fn copy<D: Scalar, S: Scalar>(dst: &View<D>, src: &View<S>) -> Result<()> {
        cuda::copy::copy(dst, src)
    }
    fn storage_get<T: Scalar>(s: &Shared<Storage<T>>, i: isize) -> Result<T> {
        Self::get(&element(s, i)?, &[0])
    }
    fn storage_set<T: Scalar>(s: &Shared<Storage<T>>, i: isize, x: T) -> Result<()> {
        Self::set(&element(s, i)?, &[0], x)
    }
    fn storage_fill<T: Scalar>(s: &Shared<Storage<T>>, x: T) -> Result<()> {
        let dst = whole(&rc(s))?;
        cuda::ops::fill(Self::device_of(&dst)?, &dst, x)
    }
    fn storage_copy<D: Scalar, S: Scalar>(dst: &Shared<Storage<D>>, src: &Shared<Storage<S>>) -> Result<()> {
        let (d, s) = (dst.len(), src.len());
        if d != s {
            return Err(Error::size(format!("size mismatch: cannot copy a storage of {s} elements into one of {d}")));
        }
        cuda::copy::copy(&whole(&rc(dst))?, &whole(&rc(src))?)
    }
}
