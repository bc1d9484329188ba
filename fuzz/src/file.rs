//! The `file` fuzz driver: corrupt input for libth's file readers, through the C API.
//!
//! Shared by the libFuzzer target (`fuzz/fuzz_targets/file.rs`) and the stable regression test
//! (`tests/fuzz_file.rs`, which includes this file with `#[path]`). An input is
//! `[kind] [program...] 0xFF [content...]`:
//! - kind even: `content` is a THMemoryFile (binary or ASCII, quiet or pedantic, a `longSize`,
//!   with or without the terminating 0 byte a memory file needs), and the program is a list of
//!   reads: scalars, raw arrays and storages of every dtype, strings (`*a`, `*l`, `*n`), seeks.
//! - kind odd: `content` is written to a file that `TH<dtype>Tensor_loadNpy` reads.
//!
//! Checked (a violation panics, which libFuzzer reports as a crash): no call ends in
//! `TH_ERR_PANIC` or `TH_ERR_INTERNAL`; a read never reports more elements than asked for, nor
//! a string longer than the content; the position stays within the content; a loaded `.npy`
//! tensor's elements are all readable (a clone reads each) and its element count fits the file.
//! Out-of-bounds reads and writes are AddressSanitizer's to find (buffers are exactly as long
//! as the counts passed).

#![allow(clippy::missing_safety_doc)]

use std::ffi::{CString, c_char, c_int, c_void};

use th::ffi::file::*;
use th::ffi::general::{THClearLastError, THFree, THGetLastErrorCode};
use th::ffi::npy::*;
use th::ffi::storage::*;
use th::ffi::tensor::*;

const TH_ERR_INTERNAL: c_int = 10;
const TH_ERR_PANIC: c_int = 11;

/// Runs `$go!(Name, element type)` for dtype `$k % 10` (the library's ten dtypes).
macro_rules! by_dtype {
    ($k:expr, $go:ident) => {
        match $k % 10 {
            0 => $go!(Byte, u8),
            1 => $go!(Char, i8),
            2 => $go!(Short, i16),
            3 => $go!(Int, i32),
            4 => $go!(Long, i64),
            5 => $go!(Float, f32),
            6 => $go!(Double, f64),
            7 => $go!(Half, u16),
            8 => $go!(BFloat16, u16),
            _ => $go!(Bool, u8),
        }
    };
}

fn check_code(what: &str) -> c_int {
    let code = THGetLastErrorCode();
    assert!(code != TH_ERR_PANIC && code != TH_ERR_INTERNAL, "{what}: error code {code}");
    code
}

/// One read of `count` elements of dtype `k` from `f`, as a C caller does it.
///
/// # Safety
/// `f` must be a live THFile.
unsafe fn read_op(f: *mut THFile, op: u8, k: u8, count: usize, content_len: usize) {
    // SAFETY: f is a live file; every buffer is exactly as long as the count passed.
    unsafe {
        THClearLastError();
        match op % 8 {
            0 => {
                // scalar
                macro_rules! go {
                    ($R:ident, $T:ty) => {
                        pastey::paste! {{ let _ = [<THFile_read $R Scalar>](f); }}
                    };
                }
                by_dtype!(k, go);
                check_code("readScalar");
            }
            1 | 2 => {
                // raw array into a buffer of exactly `count` elements (8-byte aligned)
                macro_rules! go {
                    ($R:ident, $T:ty) => {{
                        let bytes = count * std::mem::size_of::<$T>();
                        let mut buf = vec![0u64; bytes.div_ceil(8)];
                        let got = pastey::paste! { [<THFile_read $R Raw>](f, buf.as_mut_ptr() as *mut _, count) };
                        check_code("readRaw");
                        assert!(got <= count, "readRaw returned {got} of {count}");
                    }};
                }
                by_dtype!(k, go)
            }
            3 => {
                // into a storage of `count` elements
                macro_rules! go {
                    ($R:ident, $T:ty) => {{
                        pastey::paste! {
                            let s = [<TH $R Storage_newWithSize>](count as isize as _);
                            assert!(!s.is_null());
                            let got = [<THFile_read $R>](f, s);
                            check_code("read(storage)");
                            assert!(got <= count, "read(storage) returned {got} of {count}");
                            [<TH $R Storage_free>](s);
                        }
                    }};
                }
                by_dtype!(k, go)
            }
            4 => {
                let fmt: &[u8] = [b"*a\0".as_slice(), b"*l\0", b"*n\0", b"*x\0", b"\0"][k as usize % 5];
                let mut out: *mut c_char = std::ptr::null_mut();
                let n = THFile_readStringRaw(f, fmt.as_ptr() as *const c_char, &mut out);
                check_code("readStringRaw");
                assert!(n <= content_len, "readStringRaw returned {n} bytes of a {content_len}-byte file");
                if !out.is_null() {
                    assert!(std::ffi::CStr::from_ptr(out).to_bytes().len() <= n);
                    THFree(out as *mut c_void);
                }
            }
            5 => {
                THFile_seek(f, if k & 0x80 != 0 { usize::MAX - k as usize } else { count * 3 });
                check_code("seek");
            }
            6 => {
                THFile_seekEnd(f);
                check_code("seekEnd");
            }
            _ => {
                THFile_clearError(f);
                check_code("clearError");
            }
        }
        let pos = THFile_position(f);
        check_code("position");
        assert!(pos <= content_len, "position {pos} beyond the {content_len}-byte content");
    }
}

fn memory_file(mode: u8, program: &[u8], content: &[u8]) {
    // SAFETY: every call gets live handles and buffers as long as the counts passed.
    unsafe {
        let terminated = mode & 0x10 == 0;
        let len = content.len() + terminated as usize;
        let st = THCharStorage_newWithSize(len as _);
        assert!(!st.is_null());
        let data = THCharStorage_data(st) as *mut u8;
        std::ptr::copy_nonoverlapping(content.as_ptr(), data, content.len());
        if terminated {
            *data.add(content.len()) = 0;
        }
        THClearLastError();
        let f = THMemoryFile_newWithStorage(st, c"r".as_ptr());
        let code = check_code("newWithStorage");
        THCharStorage_free(st);
        if f.is_null() {
            assert!(code != 0);
            return;
        }
        if mode & 1 != 0 {
            THFile_binary(f);
        }
        if mode & 2 != 0 {
            THFile_quiet(f);
        }
        if mode & 4 != 0 {
            THFile_noAutoSpacing(f);
        }
        THMemoryFile_longSize(f, [0, 4, 8, 3][(mode >> 5) as usize % 4]);
        check_code("longSize");
        for op in program.chunks(3) {
            let (o, k, c) = (op[0], *op.get(1).unwrap_or(&0), *op.get(2).unwrap_or(&1));
            read_op(f, o, k, (c % 64) as usize, content.len());
        }
        THFile_close(f);
        check_code("close");
        THFile_free(f);
    }
}

fn npy_file(k: u8, content: &[u8]) {
    let path = std::env::temp_dir().join(format!("th_fuzz_npy_{}.npy", std::process::id()));
    std::fs::write(&path, content).expect("cannot write the temporary .npy file");
    let cpath = CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    macro_rules! go {
        ($R:ident, $T:ty) => {
            pastey::paste! {
                // SAFETY: a NUL-terminated path; the loaded tensor is a live handle until freed.
                unsafe {
                    THClearLastError();
                    let t = [<TH $R Tensor_loadNpy>](cpath.as_ptr());
                    let code = check_code("loadNpy");
                    if t.is_null() {
                        assert!(code != 0, "loadNpy returned NULL without an error");
                    } else {
                        let n = [<TH $R Tensor_nElement>](t) as usize;
                        let bytes = n * std::mem::size_of::<$T>();
                        assert!(bytes <= content.len(), "{n} elements from a {}-byte file", content.len());
                        let c = [<TH $R Tensor_newClone>](t);
                        check_code("newClone");
                        [<TH $R Tensor_free>](c);
                        [<TH $R Tensor_free>](t);
                    }
                }
            }
        };
    }
    by_dtype!(k, go);
    let _ = std::fs::remove_file(&path);
}

/// One input (see the module docs).
pub fn run(data: &[u8]) {
    let Some((&kind, rest)) = data.split_first() else { return };
    let split = rest.iter().position(|&b| b == 0xFF).unwrap_or(rest.len());
    let (program, content) = (&rest[..split], rest.get(split + 1..).unwrap_or(&[]));
    if kind & 1 == 0 {
        memory_file(kind >> 1, program, content);
    } else {
        npy_file(kind >> 1, content);
    }
}

/// `n` pseudo-random inputs from `seed` (the stable test's stand-in for libFuzzer): memory
/// files with random programs over random or number-like text, and `.npy` files made from a
/// valid header with random damage.
pub fn random_inputs(seed: u64, n: usize) {
    let mut s = seed | 1;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 24) as u8
    };
    for i in 0..n {
        let mut input = vec![next()];
        if i % 2 == 0 {
            input[0] &= 0xFE;
            input.extend((0..next() % 48).map(|_| next() % 0xFF));
            input.push(0xFF);
            let text = b"0123456789 -+.eE\n\tinfnan";
            let textual = next() & 1 == 0;
            input.extend(
                (0..next() as usize * 2).map(|_| if textual { text[next() as usize % text.len()] } else { next() }),
            );
        } else {
            input[0] |= 1;
            input.push(0xFF);
            let k = (input[0] >> 1) % 10;
            let descr = ["|u1", "|i1", "<i2", "<i4", "<i8", "<f4", "<f8", "<f2", "|V2", "|b1"][k as usize];
            let shape = match next() % 4 {
                0 => "()".to_string(),
                1 => format!("({},)", next() % 20),
                2 => format!("({}, {})", next() % 9, next() % 9),
                _ => format!("({}, {}, {})", next(), next(), next()),
            };
            let order = if next() % 8 == 0 { "True" } else { "False" };
            let dict = format!("{{'descr': '{descr}', 'fortran_order': {order}, 'shape': {shape}, }}");
            let mut header = b"\x93NUMPY\x01\x00".to_vec();
            let pad = (64 - (10 + dict.len() + 1) % 64) % 64;
            let hlen = dict.len() + pad + 1;
            header.extend((hlen as u16).to_le_bytes());
            header.extend(dict.as_bytes());
            header.extend(std::iter::repeat_n(b' ', pad));
            header.push(b'\n');
            header.extend((0..next() as usize * 4).map(|_| next()));
            for _ in 0..next() % 4 {
                let at = next() as usize % header.len();
                header[at] = next();
            }
            if next() % 4 == 0 {
                header.truncate(next() as usize % header.len());
            }
            input.extend(header);
        }
        run(&input);
    }
}
