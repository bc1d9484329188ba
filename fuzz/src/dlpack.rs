//! The `dlpack` fuzz driver: builds malformed and well-formed DLPack managed tensors from bytes
//! (version, flags, device, dtype, ndim, shape, strides, byte offset, data pointer) and imports
//! them with every dtype's `fromDLPack` / `fromDLPackUnversioned`, as a C consumer would.
//!
//! Shared by the libFuzzer target (`fuzz/fuzz_targets/dlpack.rs`) and the stable regression test
//! (`tests/fuzz_dlpack.rs`, which includes this file with `#[path]`).
//!
//! The producer's side of the contract is kept where DLPack gives a consumer no way to check it:
//! the data pointer is a real buffer (or NULL), and shape/strides arrays hold `ndim` entries
//! whenever `ndim` is in a range the arrays can cover. Everything else is hostile. Checked (a
//! violation panics, which libFuzzer reports as a crash):
//! - no call ends in `TH_ERR_PANIC` or `TH_ERR_INTERNAL`;
//! - a rejected import leaves the managed tensor untouched and does not call its deleter; an
//!   error is recorded;
//! - an accepted import has the descriptor's geometry (sizes, strides, or the contiguous ones
//!   when `strides` is NULL), points at `data + byte_offset`, and was of the matching dtype,
//!   a CPU device and a writable, supported version;
//! - its deleter runs exactly once, when the last tensor on the memory goes (a view is taken
//!   and freed after the imported tensor to check that), and never before;
//! - when the described elements lie inside the buffer, reading all of them through the
//!   library (a contiguous copy) gives the bytes at those addresses; an export of the imported
//!   tensor describes the same memory.

#![allow(clippy::missing_safety_doc)]

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};

use th::ffi::dlpack::*;
use th::ffi::general::{THClearLastError, THGetLastErrorCode};
use th::ffi::tensor::*;
use th::io::dlpack::{DLDataType, DLDevice, DLManagedTensor, DLManagedTensorVersioned, DLPackVersion, DLTensor};

const TH_ERR_INTERNAL: c_int = 10;
const TH_ERR_PANIC: c_int = 11;

/// Bytes of the data buffer a descriptor points into.
const BUF: usize = 4096;
/// Dims whose sizes and strides come from the input; further entries of the arrays are 1
/// (sizes) and 0 (strides).
const MAX_ND: usize = 8;
/// Length of the shape and strides arrays: every ndim up to this is in the producer's contract
/// (the library accepts up to 64 dims); a larger ndim must be rejected before the arrays are read.
const ARR: usize = 64;
/// Devices whose memory the host can read (kDLCPU, kDLCUDAHost, kDLROCMHost, kDLCUDAManaged).
const HOST_DEVICES: [i32; 4] = [1, 3, 11, 13];

const HOSTILE: [i64; 12] =
    [i64::MAX, i64::MIN, -1, -2, 1 << 62, 1 << 42, (1 << 31) - 1, 1 << 31, 1 << 32, 3 << 61, 0, 1];

/// Reads the fuzz input front to back; zeros when it runs out.
struct Bytes<'a>(&'a [u8]);
impl Bytes<'_> {
    fn u8(&mut self) -> u8 {
        match self.0.split_first() {
            Some((b, rest)) => {
                self.0 = rest;
                *b
            }
            None => 0,
        }
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }
    /// A size/stride/offset: mostly small, sometimes negative or hostile.
    fn dim(&mut self) -> i64 {
        match self.u8() {
            b @ 0..=191 => (b % 9) as i64,
            b @ 192..=223 => -((b % 4) as i64) - 1,
            b @ 224..=239 => HOSTILE[(b - 224) as usize % HOSTILE.len()],
            _ => self.u32() as i64 - (1 << 31),
        }
    }
}

/// Deleter calls, per managed tensor (the driver makes one at a time).
static DELETED: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn delete_versioned(_m: *mut DLManagedTensorVersioned) {
    DELETED.fetch_add(1, Ordering::SeqCst);
}
unsafe extern "C" fn delete_unversioned(_m: *mut DLManagedTensor) {
    DELETED.fetch_add(1, Ordering::SeqCst);
}

fn check_code(what: &str) -> c_int {
    let code = THGetLastErrorCode();
    assert!(code != TH_ERR_PANIC && code != TH_ERR_INTERNAL, "{what}: error code {code}");
    code
}

/// The driver's own reading of a descriptor: does `ndim`/`shape`/`strides` describe elements
/// that all lie inside `BUF` bytes from `data`, and which byte offsets are they (row-major)?
fn element_offsets(sizes: &[i64], strides: &[i64], byte_offset: u64, esize: usize) -> Option<Vec<usize>> {
    let n = sizes.iter().try_fold(1i64, |a, &s| if s < 0 { None } else { a.checked_mul(s) })?;
    if n > 4096 {
        return None;
    }
    let mut out = Vec::with_capacity(n as usize);
    let mut idx = vec![0i64; sizes.len()];
    for _ in 0..n {
        let mut e = 0i64;
        for (i, s) in idx.iter().zip(strides) {
            e = e.checked_add(i.checked_mul(*s)?)?;
        }
        let byte = (byte_offset as i64).checked_add(e.checked_mul(esize as i64)?)?;
        if byte < 0 || byte as usize + esize > BUF {
            return None;
        }
        out.push(byte as usize);
        for d in (0..sizes.len()).rev() {
            idx[d] += 1;
            if idx[d] < sizes[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    Some(out)
}

macro_rules! dtypes {
    ($mac:ident) => {
        $mac! {
            0 => Byte, u8, (1, 8);
            1 => Char, i8, (0, 8);
            2 => Short, i16, (0, 16);
            3 => Int, i32, (0, 32);
            4 => Long, i64, (0, 64);
            5 => Float, f32, (2, 32);
            6 => Double, f64, (2, 64);
            7 => Half, u16, (2, 16);
            8 => BFloat16, u16, (4, 16);
            9 => Bool, u8, (6, 8);
        }
    };
}

/// Per-dtype entry points, all on `*mut c_void` tensors.
struct Api {
    esize: usize,
    code: (u8, u8),
    from_v: unsafe fn(*mut DLManagedTensorVersioned) -> *mut c_void,
    from_u: unsafe fn(*mut DLManagedTensor) -> *mut c_void,
    to_v: unsafe fn(*mut c_void) -> *mut DLManagedTensorVersioned,
    ndim: unsafe fn(*mut c_void) -> c_int,
    size: unsafe fn(*mut c_void, c_int) -> i64,
    stride: unsafe fn(*mut c_void, c_int) -> i64,
    data: unsafe fn(*mut c_void) -> *mut c_void,
    contiguous: unsafe fn(*mut c_void) -> *mut c_void,
    view: unsafe fn(*mut c_void) -> *mut c_void,
    free: unsafe fn(*mut c_void),
}

macro_rules! api_table {
    ($($i:literal => $R:ident, $T:ty, ($code:literal, $bits:literal);)*) => { pastey::paste! {
        fn api(k: u8) -> Api {
            // SAFETY (every closure below): the driver passes live handles of this dtype, and
            // valid managed tensors, exactly as the C API requires.
            match k % 10 {
                $($i => Api {
                    esize: std::mem::size_of::<$T>(),
                    code: ($code, $bits),
                    from_v: |m| unsafe { [<TH $R Tensor_fromDLPack>](m) as *mut c_void },
                    from_u: |m| unsafe { [<TH $R Tensor_fromDLPackUnversioned>](m) as *mut c_void },
                    to_v: |t| unsafe { [<TH $R Tensor_toDLPack>](t as _) },
                    ndim: |t| unsafe { [<TH $R Tensor_nDimension>](t as _) },
                    size: |t, d| unsafe { [<TH $R Tensor_size>](t as _, d) },
                    stride: |t, d| unsafe { [<TH $R Tensor_stride>](t as _, d) },
                    data: |t| unsafe { [<TH $R Tensor_data>](t as _) as *mut c_void },
                    contiguous: |t| unsafe { [<TH $R Tensor_newContiguous>](t as _) as *mut c_void },
                    view: |t| unsafe { [<TH $R Tensor_newWithTensor>](t as _) as *mut c_void },
                    free: |t| unsafe { [<TH $R Tensor_free>](t as _) },
                },)*
                _ => unreachable!(),
            }
        }
    } };
}
dtypes!(api_table);

/// One import per input: the bytes describe the managed tensor and which dtype imports it.
pub fn run(data: &[u8]) {
    let mut b = Bytes(data);
    let a = api(b.u8());
    let versioned = b.u8() & 1 == 0;
    // dtype: usually the importer's, sometimes anything
    let sel = b.u8();
    let dtype = if sel < 160 {
        DLDataType { code: a.code.0, bits: a.code.1, lanes: 1 }
    } else {
        DLDataType { code: b.u8() % 8, bits: b.u8(), lanes: if sel < 240 { 1 } else { b.u8() as u16 } }
    };
    let device = match b.u8() {
        0..=223 => DLDevice { device_type: 1, device_id: 0 },
        d => DLDevice { device_type: (d % 16) as i32, device_id: b.u8() as i32 - 1 },
    };
    let ndim: i32 = match b.u8() {
        n @ 0..=239 => (n % (MAX_ND as u8 + 1)) as i32,
        n @ 240..=247 => -((n - 239) as i32),
        _ => [i32::MAX, i32::MIN, 64, 65, 1000, 9, 25, 33][b.u8() as usize % 8],
    };
    let in_contract = (0..=ARR as i32).contains(&ndim);
    let nd = if in_contract { ndim as usize } else { 0 };
    let mut shape: Vec<i64> = (0..ARR).map(|d| if d < MAX_ND { b.dim() } else { 1 }).collect();
    let mut strides: Vec<i64> = (0..ARR).map(|d| if d < MAX_ND { b.dim() } else { 0 }).collect();
    let no_strides = b.u8() & 3 == 0;
    let null_shape = b.u8() == 255;
    let null_data = b.u8() == 255;
    let byte_offset: u64 = match b.u8() {
        o @ 0..=199 => o as u64 % 64,
        o @ 200..=251 => (o as u64 - 200) * a.esize as u64,
        252 => u64::MAX,
        253 => 1 << 63,
        254 => (1 << 40) + 1,
        _ => b.u32() as u64,
    };
    let (major, minor) = match b.u8() {
        0..=239 => (1, b.u8() as u32 % 4),
        v => ((v - 238) as u32 % 4, 0),
    };
    let flags: u64 = match b.u8() {
        0..=223 => 0,
        f => 1u64 << (f % 4),
    };

    let mut buf = vec![0u8; BUF];
    for (i, x) in buf.iter_mut().enumerate() {
        *x = (i as u8).wrapping_mul(37).wrapping_add(b.u8());
    }
    let base = if null_data { std::ptr::null_mut() } else { buf.as_mut_ptr() as *mut c_void };
    let (shape_p, strides_p) = (shape.as_mut_ptr(), strides.as_mut_ptr());
    let dl = || DLTensor {
        data: base,
        device,
        ndim,
        dtype,
        shape: if null_shape { std::ptr::null_mut() } else { shape_p },
        strides: if no_strides { std::ptr::null_mut() } else { strides_p },
        byte_offset,
    };
    let mut mv = DLManagedTensorVersioned {
        version: DLPackVersion { major, minor },
        manager_ctx: 7 as *mut c_void,
        deleter: Some(delete_versioned),
        flags,
        dl_tensor: dl(),
    };
    let mut mu = DLManagedTensor { dl_tensor: dl(), manager_ctx: 7 as *mut c_void, deleter: Some(delete_unversioned) };
    DELETED.store(0, Ordering::SeqCst);

    THClearLastError();
    // SAFETY: the managed tensors are valid structs whose arrays cover `nd` entries.
    let t = unsafe { if versioned { (a.from_v)(&mut mv) } else { (a.from_u)(&mut mu) } };
    let code = check_code("fromDLPack");
    if t.is_null() {
        assert!(code != 0, "fromDLPack returned NULL without an error");
        assert_eq!(DELETED.load(Ordering::SeqCst), 0, "a rejected import called the deleter");
        return;
    }
    assert_eq!(code, 0, "fromDLPack returned a tensor and an error");
    assert_eq!(DELETED.load(Ordering::SeqCst), 0, "the deleter ran on import");

    // What the importer must have checked.
    assert!(in_contract, "accepted ndim {ndim}");
    assert!(!null_shape || nd == 0, "accepted a NULL shape");
    assert!(HOST_DEVICES.contains(&device.device_type), "accepted device {}", device.device_type);
    assert_eq!((dtype.code, dtype.bits, dtype.lanes), (a.code.0, a.code.1, 1), "accepted another dtype");
    assert_eq!(byte_offset % a.esize as u64, 0, "accepted a misaligned byte_offset");
    if versioned {
        assert!(major == 1 && flags & 1 == 0, "accepted version {major}.{minor} flags {flags:#x}");
    }
    let sizes = &shape[..nd];
    let strides_used: Vec<i64> = if no_strides {
        let mut s = vec![1i64; nd];
        for d in (0..nd.saturating_sub(1)).rev() {
            s[d] = s[d + 1].saturating_mul(sizes[d + 1].max(1));
        }
        s
    } else {
        strides[..nd].to_vec()
    };
    let numel = sizes.iter().product::<i64>();
    assert!(
        strides_used.iter().zip(sizes).all(|(&st, &n)| st >= 0 || n <= 1 || numel == 0),
        "accepted a negative stride"
    );
    // TH's geometry: no dims for an empty tensor, one dim of size 1 for a DLPack scalar.
    let (th_sizes, th_strides): (Vec<i64>, Vec<i64>) = match (nd, numel) {
        (_, 0) => (vec![], vec![]),
        (0, _) => (vec![1], vec![1]),
        _ => (sizes.to_vec(), strides_used.clone()),
    };
    // SAFETY: t is a live tensor handle; the queries read only its geometry.
    unsafe {
        assert_eq!((a.ndim)(t), th_sizes.len() as c_int, "ndim");
        for d in 0..th_sizes.len() {
            assert_eq!((a.size)(t, d as c_int), th_sizes[d], "size of dim {d}");
            if th_sizes[d] > 1 {
                assert_eq!((a.stride)(t, d as c_int), th_strides[d], "stride of dim {d}");
            }
        }
        if numel > 0 {
            let want = (base as *mut u8).wrapping_add(byte_offset as usize);
            assert_eq!((a.data)(t) as *mut u8, want, "data pointer");
        }
    }
    THClearLastError();

    // Read through the library only when the elements are really inside the buffer.
    if !null_data && let Some(offs) = element_offsets(sizes, &strides_used, byte_offset, a.esize) {
        // SAFETY: every element of t lies inside buf (just checked).
        unsafe {
            let c = (a.contiguous)(t);
            check_code("newContiguous");
            assert!(!c.is_null());
            let p = (a.data)(c) as *const u8;
            for (i, &o) in offs.iter().enumerate() {
                let got = std::slice::from_raw_parts(p.add(i * a.esize), a.esize);
                let want = &buf[o..o + a.esize];
                // Bool normalizes any nonzero byte to 1 when read through the library.
                if a.code.0 == 6 {
                    assert_eq!(got[0] != 0, want[0] != 0, "element {i}");
                } else {
                    assert_eq!(got, want, "element {i}");
                }
            }
            (a.free)(c);
            // An export of the import describes the same memory; dropping it keeps t alive.
            let e = (a.to_v)(t);
            check_code("toDLPack");
            assert!(!e.is_null());
            let dl = &(*e).dl_tensor;
            let shape_out: Vec<i64> = (0..dl.ndim.max(0) as usize).map(|d| *dl.shape.add(d)).collect();
            if th_sizes.is_empty() {
                // an empty TH tensor (no dims) goes out as DLPack shape (0,)
                assert_eq!(shape_out, [0], "export of an empty tensor");
            } else {
                assert_eq!(shape_out, th_sizes, "exported shape");
            }
            if numel > 0 {
                let p = ((*e).dl_tensor.data as *mut u8).wrapping_add((*e).dl_tensor.byte_offset as usize);
                assert_eq!(p, (base as *mut u8).wrapping_add(byte_offset as usize));
            }
            ((*e).deleter.unwrap())(e);
        }
    }

    // The deleter runs once, when the last tensor on the memory goes.
    // SAFETY: t is live; v is a new handle on the same storage.
    unsafe {
        let v = (a.view)(t);
        check_code("newWithTensor");
        (a.free)(t);
        assert_eq!(DELETED.load(Ordering::SeqCst), 0, "the deleter ran while a view was alive");
        (a.free)(v);
    }
    assert_eq!(DELETED.load(Ordering::SeqCst), 1, "the deleter did not run exactly once");
}

/// `n` pseudo-random inputs of `len` bytes from `seed` (the stable test's stand-in for libFuzzer).
pub fn random_inputs(seed: u64, n: usize, len: usize) {
    let mut s = seed | 1;
    for _ in 0..n {
        let input: Vec<u8> = (0..len)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s >> 24) as u8
            })
            .collect();
        run(&input);
    }
}
