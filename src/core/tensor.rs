//! `Tensor<T>`: a view (storage, offset, sizes, strides) with TH's semantics.
//!
//! `View<T>` is the geometry as a value: every TH view operation (narrow, select, transpose,
//! unfold, squeeze, expand, resize, ...) is a function from a `View` to a new, validated `View`.
//! `Tensor<T>` is the shared, mutable handle C sees: a view in a `ContractCell`, replaced whole
//! on success, so a failed call leaves the tensor exactly as it was.
//!
//! Invariants of a `View` (checked when it is made, with checked arithmetic):
//! 1. every size is >= 1 (torch7 has no zero-length dims; no dims means "empty", 0 elements);
//! 2. every stride is >= 0 (TH has no negative strides; 0 comes from `expand`);
//! 3. the element count fits in `i64`, and `offset + 1 + sum((size-1)*stride)` fits in the
//!    storage when the view has elements.
//!
//! Storages can shrink later (`THStorage_resize`), so every data access re-checks 3.

use crate::core::allocator::Device;
use crate::core::cell::ContractCell;
use crate::core::dtype::Scalar;
use crate::core::error::{Error, Result};
use crate::core::geometry::Offsets;
use crate::core::refcount::Rc;
use crate::core::storage::Storage;
use std::ptr;

/// The geometry of a tensor.
#[derive(Clone)]
pub struct View<T: Scalar> {
    pub storage: Option<Rc<Storage<T>>>,
    pub offset: usize,
    pub sizes: Vec<i64>,
    pub strides: Vec<i64>,
}

/// Cuts a TH size list at its end marker: the list ends at the first 0 or -1 (the `*1d..*5d`
/// functions pad with -1, as in TH); any other negative size is an error.
pub fn parse_sizes(sizes: &[i64]) -> Result<Vec<i64>> {
    let mut out = Vec::with_capacity(sizes.len());
    for (d, &s) in sizes.iter().enumerate() {
        if s == 0 || s == -1 {
            break;
        }
        if s < 0 {
            return Err(Error::size(format!("invalid size {s} for dimension {d}: sizes must be positive")));
        }
        out.push(s);
    }
    Ok(out)
}

/// Product of sizes, checked against `i64` overflow.
pub fn numel(sizes: &[i64]) -> Result<usize> {
    let mut n: i64 = 1;
    for &s in sizes {
        n = n
            .checked_mul(s)
            .ok_or_else(|| Error::size(format!("size {} has more elements than fit in int64_t", size_desc(sizes))))?;
    }
    Ok(if sizes.is_empty() { 0 } else { n as usize })
}

/// Row-major strides for `sizes`, keeping each given stride that is >= 0 (TH: a negative or
/// missing stride means "contiguous").
pub fn fill_strides(sizes: &[i64], given: Option<&[i64]>) -> Result<Vec<i64>> {
    let n = sizes.len();
    let mut st = vec![0i64; n];
    for d in (0..n).rev() {
        match given.and_then(|g| g.get(d)).copied() {
            Some(s) if s >= 0 => st[d] = s,
            _ => {
                st[d] = if d + 1 == n {
                    1
                } else {
                    st[d + 1]
                        .checked_mul(sizes[d + 1].max(1))
                        .ok_or_else(|| Error::size(format!("strides of size {} overflow int64_t", size_desc(sizes))))?
                }
            }
        }
    }
    Ok(st)
}

/// Elements of storage a view needs: `offset + 1 + sum((size-1)*stride)`, or 0 if empty.
pub fn required_len(offset: usize, sizes: &[i64], strides: &[i64]) -> Result<usize> {
    if sizes.is_empty() {
        return Ok(0);
    }
    let overflow =
        || Error::size(format!("size {} with strides {:?} overflows the address space", size_desc(sizes), strides));
    let mut hi: i64 = i64::try_from(offset).map_err(|_| overflow())?;
    for (&s, &t) in sizes.iter().zip(strides) {
        hi = (s - 1).checked_mul(t).and_then(|x| hi.checked_add(x)).ok_or_else(overflow)?;
    }
    Ok(hi.checked_add(1).ok_or_else(overflow)? as usize)
}

/// `"[2 x 3 x 4]"`, as TH's `_THSizeDesc`.
pub fn size_desc(sizes: &[i64]) -> String {
    let inner: Vec<String> = sizes.iter().map(|s| s.to_string()).collect();
    format!("[{}]", inner.join(" x "))
}

/// numpy broadcasting of two size lists (TH's `inferSize2`).
pub fn broadcast_shapes(a: &[i64], b: &[i64]) -> Result<Vec<i64>> {
    let n = a.len().max(b.len());
    let mut out = vec![0i64; n];
    for i in 0..n {
        let x = if i < n - a.len() { 1 } else { a[i - (n - a.len())] };
        let y = if i < n - b.len() { 1 } else { b[i - (n - b.len())] };
        out[i] = if x == y || y == 1 {
            x
        } else if x == 1 {
            y
        } else {
            return Err(Error::size(format!(
                "the size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton dimension {i}: \
                 {} and {} do not broadcast",
                size_desc(a),
                size_desc(b)
            )));
        };
    }
    Ok(out)
}

/// Sizes with at most one -1 replaced so that they hold `n` elements (TH's `newInferSize`).
pub fn infer_size(sizes: &[i64], n: usize) -> Result<Vec<i64>> {
    let mut out = sizes.to_vec();
    let mut infer = None;
    let mut prod: i64 = 1;
    for (d, &s) in sizes.iter().enumerate() {
        if s == -1 {
            if infer.is_some() {
                return Err(Error::size("only one dimension can be inferred").at_arg(1));
            }
            infer = Some(d);
        } else if s <= 0 {
            return Err(Error::size(format!("invalid size {s} for dimension {d}")).at_arg(1));
        } else {
            prod = prod.checked_mul(s).ok_or_else(|| Error::size("size overflows int64_t").at_arg(1))?;
        }
    }
    let bad = || Error::size(format!("size '{}' is invalid for input with {n} elements", size_desc(sizes))).at_arg(2);
    match infer {
        Some(d) => {
            if prod == 0 || n as i64 % prod != 0 || n == 0 {
                return Err(bad());
            }
            out[d] = n as i64 / prod;
        }
        None => {
            if numel(&out)? != n {
                return Err(bad());
            }
        }
    }
    Ok(out)
}

/// The sizes and strides of a view of sizes `from` and `strides` broadcast to `sizes` (numpy
/// rules; -1 keeps a size; new leading dims get stride 0).
pub fn expand_geometry(from: &[i64], strides: &[i64], sizes: &[i64]) -> Result<(Vec<i64>, Vec<i64>)> {
    if from.is_empty() {
        return Err(Error::size("can't expand an empty tensor").at_arg(2));
    }
    let n = sizes.len();
    if n < from.len() {
        return Err(Error::size(format!(
            "the number of sizes provided ({n}) must be greater or equal to the number of dimensions in the tensor ({})",
            from.len()
        ))
        .at_arg(3));
    }
    let lead = n - from.len();
    let mut out_s = vec![0i64; n];
    let mut out_t = vec![0i64; n];
    for i in 0..n {
        let want = sizes[i];
        if i < lead {
            if want <= 0 {
                return Err(
                    Error::size(format!("invalid size {want} for new leading dimension {i} in expand")).at_arg(3)
                );
            }
            out_s[i] = want;
            out_t[i] = 0;
            continue;
        }
        let (have, st) = (from[i - lead], strides[i - lead]);
        if want == -1 || want == have {
            out_s[i] = have;
            out_t[i] = st;
        } else if have == 1 && want > 0 {
            out_s[i] = want;
            out_t[i] = 0;
        } else {
            return Err(Error::size(format!(
                "the expanded size of the tensor ({want}) must match the existing size ({have}) at non-singleton dimension {i}: \
                 cannot expand {} to {}",
                size_desc(from),
                size_desc(sizes)
            ))
            .at_arg(3));
        }
    }
    numel(&out_s)?;
    Ok((out_s, out_t))
}

fn check_dim(d: i32, ndim: usize, arg: u32) -> Result<usize> {
    usize::try_from(d)
        .ok()
        .filter(|&u| u < ndim)
        .ok_or_else(|| Error::index(format!("dimension {d} out of range of {ndim}D tensor")).at_arg(arg))
}

impl<T: Scalar> View<T> {
    /// No dims, no storage (TH's `new()`).
    pub fn empty() -> Self {
        View { storage: None, offset: 0, sizes: Vec::new(), strides: Vec::new() }
    }

    pub fn ndim(&self) -> usize {
        self.sizes.len()
    }

    /// Where the elements live (the host when there is no storage).
    pub fn device(&self) -> Device {
        self.storage.as_ref().map_or(Device::Cpu, |s| s.device())
    }

    /// Element count (0 when empty). Cannot overflow: invariant 3.
    pub fn numel(&self) -> usize {
        if self.sizes.is_empty() { 0 } else { self.sizes.iter().product::<i64>() as usize }
    }

    /// A fresh contiguous tensor of `sizes` (contents uninitialised).
    pub fn contiguous(sizes: &[i64]) -> Result<Self> {
        Self::empty().resize(sizes, None)
    }

    /// A fresh contiguous tensor holding `data` with shape `sizes`.
    pub fn from_slice(data: &[T], sizes: &[i64]) -> Result<Self> {
        let sizes = parse_sizes(sizes)?;
        if numel(&sizes)? != data.len() {
            return Err(Error::size(format!("{} elements given for size {}", data.len(), size_desc(&sizes))));
        }
        let strides = fill_strides(&sizes, None)?;
        let storage = if data.is_empty() { None } else { Some(Storage::from_slice(data)?) };
        Ok(View { storage, offset: 0, sizes, strides })
    }

    /// TH's `setStorageNd`/`resizeNd`: the view of `storage` at `offset` with `sizes` (cut at the
    /// end marker) and `strides` (negative or missing = contiguous). A storage that is too
    /// small is grown (TH semantics; an error if it is not resizable); a missing one is created.
    pub fn on_storage(
        storage: Option<Rc<Storage<T>>>,
        offset: isize,
        sizes: &[i64],
        strides: Option<&[i64]>,
    ) -> Result<Self> {
        let offset = usize::try_from(offset).map_err(|_| Error::size(format!("invalid storage offset {offset}")))?;
        let sizes = parse_sizes(sizes)?;
        numel(&sizes)?;
        let strides = fill_strides(&sizes, strides)?;
        let need = required_len(offset, &sizes, &strides)?;
        let storage = match storage {
            Some(s) => {
                if need > s.len() {
                    s.resize(need).map_err(|e| Error {
                        msg: format!(
                            "size {} at offset {offset} needs {need} elements but the storage has {} ({})",
                            size_desc(&sizes),
                            s.len(),
                            e.msg
                        ),
                        arg: None,
                        ..e
                    })?;
                }
                Some(s)
            }
            None if need > 0 => Some(Storage::new(need)?),
            None => None,
        };
        Ok(View { storage, offset, sizes, strides })
    }

    /// TH's `resizeNd`: same storage and offset, new sizes/strides; no-op when they already
    /// match; the storage grows when needed and never shrinks; data is not moved.
    pub fn resize(&self, sizes: &[i64], strides: Option<&[i64]>) -> Result<Self> {
        let parsed = parse_sizes(sizes)?;
        let same_sizes = parsed == self.sizes;
        let same_strides = match strides {
            None => true,
            Some(g) => g.iter().zip(&self.strides).all(|(&a, &b)| a < 0 || a == b),
        };
        if same_sizes && same_strides {
            return Ok(self.clone());
        }
        Self::on_storage(self.storage.clone(), self.offset as isize, &parsed, strides)
    }

    /// Checks invariant 3 against the storage's current length and that it is host memory;
    /// returns the data pointer (at offset 0 of the storage) when there are elements.
    pub fn host_ptr(&self) -> Result<Option<*mut T>> {
        if self.device() != Device::Cpu && !self.sizes.is_empty() {
            return Err(Error::invalid("tensor is not in host memory"));
        }
        self.storage_ptr()
    }

    /// Checks invariant 3 against the storage's current length, wherever the storage lives;
    /// returns its address (at offset 0: a device address for device storages) when the view
    /// has elements.
    pub fn storage_ptr(&self) -> Result<Option<*mut T>> {
        let Some(s) = &self.storage else { return Ok(None) };
        if self.sizes.is_empty() {
            return Ok(None);
        }
        let (p, len) = s.raw_parts();
        let need = required_len(self.offset, &self.sizes, &self.strides)?;
        if need > len {
            return Err(Error::size(format!(
                "tensor of size {} at offset {} needs {need} elements but its storage has {len} (was the storage shrunk?)",
                size_desc(&self.sizes),
                self.offset
            )));
        }
        Ok(Some(p))
    }

    /// Pointer to the first element (TH's `data()`); NULL when there is no storage.
    pub fn data_ptr(&self) -> Result<*mut T> {
        match &self.storage {
            None => Ok(ptr::null_mut()),
            Some(s) => {
                if !self.sizes.is_empty() {
                    self.host_ptr()?;
                }
                let (p, len) = s.raw_parts();
                if p.is_null() || self.offset > len {
                    return Ok(ptr::null_mut());
                }
                // SAFETY: offset <= len, so this stays within (or one past) the allocation.
                Ok(unsafe { p.add(self.offset) })
            }
        }
    }

    pub fn is_contiguous(&self) -> bool {
        let mut expect = 1i64;
        for d in (0..self.ndim()).rev() {
            if self.sizes[d] != 1 {
                if self.strides[d] != expect {
                    return false;
                }
                expect *= self.sizes[d];
            }
        }
        true
    }

    pub fn same_storage(&self, other: &View<T>) -> bool {
        match (&self.storage, &other.storage) {
            (Some(a), Some(b)) => Rc::ptr_eq(a, b),
            _ => false,
        }
    }

    pub fn is_set_to(&self, other: &View<T>) -> bool {
        self.same_storage(other)
            && self.offset == other.offset
            && self.sizes == other.sizes
            && self.strides == other.strides
    }

    pub fn narrow(&self, dim: i32, first: i64, size: i64) -> Result<Self> {
        let d = check_dim(dim, self.ndim(), 3)?;
        let n = self.sizes[d];
        if first < 0 || first >= n {
            return Err(
                Error::index(format!("out of range: first index {first} for dimension {dim} of size {n}")).at_arg(4)
            );
        }
        if size <= 0 || first.checked_add(size).is_none_or(|e| e > n) {
            return Err(Error::index(format!(
                "out of range: narrow({dim}, {first}, {size}) on a dimension of size {n}"
            ))
            .at_arg(5));
        }
        let mut v = self.clone();
        v.offset += (first * self.strides[d]) as usize;
        v.sizes[d] = size;
        Ok(v)
    }

    pub fn select(&self, dim: i32, index: i64) -> Result<Self> {
        if self.ndim() <= 1 {
            return Err(Error::index("cannot select on a vector").at_arg(2));
        }
        let d = check_dim(dim, self.ndim(), 3)?;
        let n = self.sizes[d];
        if index < 0 || index >= n {
            return Err(Error::index(format!("out of range: index {index} for dimension {dim} of size {n}")).at_arg(4));
        }
        let mut v = self.clone();
        v.offset += (index * self.strides[d]) as usize;
        v.sizes.remove(d);
        v.strides.remove(d);
        Ok(v)
    }

    pub fn transpose(&self, d1: i32, d2: i32) -> Result<Self> {
        let a = check_dim(d1, self.ndim(), 3)?;
        let b = check_dim(d2, self.ndim(), 4)?;
        let mut v = self.clone();
        v.sizes.swap(a, b);
        v.strides.swap(a, b);
        Ok(v)
    }

    pub fn unfold(&self, dim: i32, size: i64, step: i64) -> Result<Self> {
        if self.ndim() == 0 {
            return Err(Error::index("cannot unfold an empty tensor").at_arg(2));
        }
        let d = check_dim(dim, self.ndim(), 3)?;
        if size <= 0 || size > self.sizes[d] {
            return Err(Error::size(format!(
                "unfold size {size} is out of range for dimension {dim} of size {}",
                self.sizes[d]
            ))
            .at_arg(4));
        }
        if step <= 0 {
            return Err(Error::size(format!("unfold step {step} must be positive")).at_arg(5));
        }
        let mut v = self.clone();
        v.sizes[d] = (self.sizes[d] - size) / step + 1;
        v.strides[d] = step
            .checked_mul(self.strides[d])
            .ok_or_else(|| Error::size("unfold step times stride overflows int64_t").at_arg(5))?;
        v.sizes.push(size);
        v.strides.push(self.strides[d]);
        Ok(v)
    }

    pub fn squeeze(&self) -> Self {
        let mut v = self.clone();
        if self.ndim() == 0 {
            return v;
        }
        let (sz, st): (Vec<i64>, Vec<i64>) =
            self.sizes.iter().zip(&self.strides).filter(|(s, _)| **s != 1).map(|(a, b)| (*a, *b)).unzip();
        if sz.is_empty() {
            v.sizes = vec![1];
            v.strides = vec![1];
        } else {
            v.sizes = sz;
            v.strides = st;
        }
        v
    }

    pub fn squeeze1d(&self, dim: i32) -> Result<Self> {
        let d = check_dim(dim, self.ndim(), 3)?;
        let mut v = self.clone();
        if self.sizes[d] == 1 && self.ndim() > 1 {
            v.sizes.remove(d);
            v.strides.remove(d);
        }
        Ok(v)
    }

    pub fn unsqueeze1d(&self, dim: i32) -> Result<Self> {
        if self.ndim() == 0 {
            return Err(Error::index("cannot unsqueeze an empty tensor").at_arg(2));
        }
        let d = usize::try_from(dim).ok().filter(|&u| u <= self.ndim()).ok_or_else(|| {
            Error::index(format!("dimension {dim} out of range for unsqueeze of a {}D tensor", self.ndim())).at_arg(3)
        })?;
        let stride = if d < self.ndim() {
            self.sizes[d].checked_mul(self.strides[d]).ok_or_else(|| Error::size("stride overflows int64_t"))?
        } else {
            1
        };
        let mut v = self.clone();
        v.sizes.insert(d, 1);
        v.strides.insert(d, stride);
        Ok(v)
    }

    /// Broadcast view to `sizes` (numpy rules; -1 keeps a size; new leading dims allowed).
    pub fn expand(&self, sizes: &[i64]) -> Result<Self> {
        let (s, t) = expand_geometry(&self.sizes, &self.strides, sizes)?;
        Ok(View { sizes: s, strides: t, ..self.clone() })
    }

    /// TH's `newView`: same storage, new contiguous sizes (one may be -1); needs contiguity.
    pub fn reshape_view(&self, sizes: &[i64]) -> Result<Self> {
        if !self.is_contiguous() {
            return Err(Error::invalid("input is not contiguous").at_arg(1));
        }
        let sizes = infer_size(sizes, self.numel())?;
        let strides = fill_strides(&sizes, None)?;
        let mut v = self.clone();
        v.sizes = sizes;
        v.strides = strides;
        Ok(v)
    }

    /// Storage offset of the element at `idx` (checked: rank and bounds; `first_arg` is the C
    /// position of the first index argument).
    pub fn offset_of(&self, idx: &[i64], first_arg: u32) -> Result<usize> {
        if idx.len() != self.ndim() {
            return Err(Error::index(format!(
                "tensor must have {} dimension(s) for this access, but has {}",
                idx.len(),
                self.ndim()
            ))
            .at_arg(1));
        }
        let mut off = self.offset;
        for (d, (&i, (&s, &t))) in idx.iter().zip(self.sizes.iter().zip(&self.strides)).enumerate() {
            if i < 0 || i >= s {
                return Err(Error::index(format!("index {i} is out of bounds for dimension {d} with size {s}"))
                    .at_arg(first_arg + d as u32));
            }
            off += (i * t) as usize;
        }
        Ok(off)
    }

    pub fn get(&self, idx: &[i64]) -> Result<T> {
        let off = self.offset_of(idx, 2)?;
        let p = self.host_ptr()?.ok_or_else(|| Error::index("tensor is empty"))?;
        // SAFETY: off is inside the view, which host_ptr checked lies inside the storage.
        Ok(unsafe { ptr::read(p.add(off)) })
    }

    pub fn set(&self, idx: &[i64], v: T) -> Result<()> {
        let off = self.offset_of(idx, 2)?;
        let p = self.host_ptr()?.ok_or_else(|| Error::index("tensor is empty"))?;
        // SAFETY: as in `get`.
        unsafe { ptr::write(p.add(off), v) };
        Ok(())
    }

    /// Elements in row-major order (a copy; for tests and small reads).
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let Some(p) = self.host_ptr()? else { return Ok(Vec::new()) };
        // A stride-0 view can have far more elements than memory: allocate fallibly.
        let n = self.numel();
        // SAFETY: every offset of the view lies inside the storage (host_ptr).
        crate::core::limits::try_collect(
            n,
            Offsets::new(self.offset, &self.sizes, &self.strides, n).map(|o| unsafe { ptr::read(p.add(o)) }),
        )
    }

    /// `"torch.FloatTensor of size 2x3"`.
    pub fn desc(&self) -> String {
        if self.sizes.is_empty() {
            return format!("torch.{}Tensor with no dimension", T::DTYPE.name());
        }
        let s: Vec<String> = self.sizes.iter().map(|s| s.to_string()).collect();
        format!("torch.{}Tensor of size {}", T::DTYPE.name(), s.join("x"))
    }
}

/// The shared, mutable tensor object behind a C handle. Its geometry changes only under the
/// thread-safety contract, so reading it takes no lock (`ContractCell`).
pub struct Tensor<T: Scalar> {
    view: ContractCell<View<T>>,
}

impl<T: Scalar> Tensor<T> {
    pub fn new(view: View<T>) -> Rc<Self> {
        Rc::new(Tensor { view: ContractCell::new(view) })
    }

    /// A snapshot of the geometry (retains the storage).
    pub fn view(&self) -> View<T> {
        self.view.read().clone()
    }

    /// Runs `f` on the geometry without cloning it.
    pub fn with_view<R>(&self, f: impl FnOnce(&View<T>) -> R) -> R {
        f(&self.view.read())
    }

    /// Replaces the geometry (the old storage reference is released after the cell is free).
    pub fn set_view(&self, v: View<T>) {
        let old = std::mem::replace(&mut *self.view.write(), v);
        drop(old);
    }

    /// `self <- f(src's view)`: the TH in-place view pattern (`src == self` allowed).
    pub fn update_from(&self, src: &Tensor<T>, f: impl FnOnce(&View<T>) -> Result<View<T>>) -> Result<()> {
        let v = src.with_view(f)?;
        self.set_view(v);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::copy::copy;

    fn arange(sizes: &[i64]) -> View<f64> {
        let n = numel(sizes).unwrap();
        View::from_slice(&(0..n).map(|i| i as f64).collect::<Vec<_>>(), sizes).unwrap()
    }

    #[test]
    fn same_dtype_copies_keep_nan_payloads() {
        // 0x7D58 is a signalling f16 NaN: a round trip through f32 would set its quiet bit.
        let bits = [0x7D58u16, 0x3C00, 0xFC01, 0x0001];
        let vals: Vec<half::f16> = bits.iter().map(|&b| half::f16::from_bits(b)).collect();
        let src = View::from_slice(&vals, &[2, 2]).unwrap().transpose(0, 1).unwrap();
        let dst = View::<half::f16>::contiguous(&[2, 2]).unwrap();
        copy(&dst, &src).unwrap();
        let got: Vec<u16> = dst.to_vec().unwrap().iter().map(|x| x.to_bits()).collect();
        assert_eq!(got, [0x7D58, 0xFC01, 0x3C00, 0x0001]);
    }

    #[test]
    fn size_lists() {
        assert_eq!(parse_sizes(&[2, 3, -1, -1]).unwrap(), vec![2, 3]);
        assert_eq!(parse_sizes(&[0, 5]).unwrap(), Vec::<i64>::new());
        assert!(parse_sizes(&[2, -5]).is_err());
        assert!(numel(&[i64::MAX, 2]).is_err());
        assert_eq!(fill_strides(&[2, 3, 4], None).unwrap(), vec![12, 4, 1]);
        assert_eq!(fill_strides(&[2, 3], Some(&[1, -1])).unwrap(), vec![1, 1]);
        assert_eq!(infer_size(&[-1, 4], 12).unwrap(), vec![3, 4]);
        assert!(infer_size(&[-1, 5], 12).is_err());
        assert!(infer_size(&[-1, -1], 12).is_err());
        assert_eq!(broadcast_shapes(&[3, 1], &[4]).unwrap(), vec![3, 4]);
        assert!(broadcast_shapes(&[3], &[4]).is_err());
        assert_eq!(size_desc(&[2, 3]), "[2 x 3]");
    }

    #[test]
    fn views_match_naive_indexing() {
        let t = arange(&[3, 4, 5]);
        let tr = t.transpose(0, 2).unwrap();
        assert_eq!(tr.sizes, vec![5, 4, 3]);
        assert_eq!(tr.get(&[4, 1, 2]).unwrap(), t.get(&[2, 1, 4]).unwrap());
        let n = t.narrow(1, 1, 2).unwrap();
        assert_eq!(n.get(&[2, 1, 3]).unwrap(), (2 * 20 + 2 * 5 + 3) as f64);
        let s = t.select(0, 2).unwrap();
        assert_eq!(s.to_vec().unwrap(), (40..60).map(|i| i as f64).collect::<Vec<_>>());
        let u = arange(&[7]).unfold(0, 3, 2).unwrap();
        assert_eq!(u.sizes, vec![3, 3]);
        assert_eq!(u.to_vec().unwrap(), vec![0., 1., 2., 2., 3., 4., 4., 5., 6.]);
        let e = arange(&[3, 1]).expand(&[2, 3, 4]).unwrap();
        assert_eq!(e.strides, vec![0, 1, 0]);
        assert_eq!(e.get(&[1, 2, 3]).unwrap(), 2.0);
        assert!(arange(&[3]).expand(&[4]).is_err());
        assert_eq!(arange(&[1, 3, 1]).squeeze().sizes, vec![3]);
        assert_eq!(arange(&[1, 1]).squeeze().sizes, vec![1]);
        let q = arange(&[2, 3]).unsqueeze1d(1).unwrap();
        assert_eq!((q.sizes.clone(), q.strides.clone()), (vec![2, 1, 3], vec![3, 3, 1]));
        assert!(arange(&[3]).select(0, 1).is_err());
        assert!(t.narrow(1, 3, 2).is_err());
        assert!(t.narrow(3, 0, 1).is_err());
        assert!(t.narrow(1, 0, i64::MAX).is_err());
    }

    #[test]
    fn resize_keeps_data_and_grows() {
        let t = arange(&[2, 3]);
        let r = t.resize(&[3, 2], None).unwrap();
        assert_eq!(r.to_vec().unwrap(), t.to_vec().unwrap());
        let g = t.resize(&[4, 4], None).unwrap();
        assert_eq!(g.storage.as_ref().unwrap().len(), 16);
        // Only the kept prefix is defined: grown storage is uninitialized, as in TH (Miri
        // rejects reading the rest).
        assert_eq!(g.narrow(0, 0, 1).unwrap().to_vec().unwrap(), &[0., 1., 2., 3.]);
        assert_eq!(g.narrow(0, 1, 1).unwrap().narrow(1, 0, 2).unwrap().to_vec().unwrap(), &[4., 5.]);
    }

    #[test]
    fn copy_casts_and_handles_overlap() {
        let t = arange(&[2, 3]);
        let d: View<i32> = View::contiguous(&[3, 2]).unwrap();
        copy(&d, &t.transpose(0, 1).unwrap()).unwrap();
        assert_eq!(d.to_vec().unwrap(), vec![0, 3, 1, 4, 2, 5]);
        // Overlapping shift within one storage behaves as if read first.
        let v = arange(&[6]);
        let a = v.narrow(0, 1, 5).unwrap();
        let b = v.narrow(0, 0, 5).unwrap();
        copy(&a, &b).unwrap();
        assert_eq!(v.to_vec().unwrap(), vec![0., 0., 1., 2., 3., 4.]);
        // In-place transpose of a square matrix through a temporary.
        let m = arange(&[2, 2]);
        copy(&m, &m.transpose(0, 1).unwrap()).unwrap();
        assert_eq!(m.to_vec().unwrap(), vec![0., 2., 1., 3.]);
        assert!(copy(&d, &arange(&[5])).is_err());
    }

    #[test]
    fn shrunk_storage_is_detected() {
        let t = arange(&[4]);
        t.storage.as_ref().unwrap().resize(2).unwrap();
        assert!(t.get(&[3]).is_err());
        assert!(t.to_vec().is_err());
    }
}
