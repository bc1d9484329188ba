//! `.npy` save/load for tensors of every dtype (see `crate::io::npy` for the format rules):
//! `TH{Real}Tensor_saveNpy(path, t)` and `TH{Real}Tensor_loadNpy(path)` (+1).

use super::*;
use crate::io::npy;
use std::ffi::{CStr, c_char};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::ptr;

/// A path argument.
///
/// # Safety
/// `p` must be NULL or a NUL-terminated string.
unsafe fn c_path<'a>(p: *const c_char, arg: u32) -> Result<&'a Path> {
    if p.is_null() {
        return Err(Error::null(arg, "path"));
    }
    // SAFETY: caller contract.
    let s = unsafe { CStr::from_ptr(p) };
    Ok(Path::new(std::ffi::OsStr::from_bytes(s.to_bytes())))
}

macro_rules! npy_api {
    ($(($R:ident, $T:ty, $C:ty, $A:ty, $D:ident, $K:ident)),* $(,)?) => { pastey::paste! { $(
        th_fn! {
            #[doc = "Writes `tensor` (any strides) to `path` as a NumPy `.npy` file (format 1.0, little-endian, C order)."]
            fn [<TH $R Tensor_saveNpy>](path: *const c_char as c_path, tensor: *mut [<TH $R Tensor>] as obj) {
                tensor.with_view(|v| npy::save(path, v))
            }
            #[doc = "Reads a NumPy `.npy` file holding " $R " data into a new contiguous tensor (+1); any other dtype is an error."]
            fn [<TH $R Tensor_loadNpy>](path: *const c_char as c_path) -> *mut [<TH $R Tensor>] = ptr::null_mut(); {
                Ok(into_handle(Tensor::new(npy::load::<$T>(path)?)))
            }
        }
    )* } };
}
crate::th_dtypes!(npy_api);
