//! `THFile.h`, `THDiskFile.h`, `THMemoryFile.h` over the core in `crate::io::file`.
//!
//! `THFile` is an opaque, reference-counted handle: the `new` functions return +1,
//! `THFile_free` drops one (closing the file with the last one), `THFile_retain` (an extension)
//! adds one. Element functions exist for every dtype (`THFile_readFloat`, `..._writeBoolRaw`, ...).
//! A read that fails in pedantic mode leaves the destination untouched; in quiet mode the
//! elements read are stored and the count returned (check `THFile_hasError`).

use super::*;
use crate::core::allocator::th_alloc;
use crate::core::limits::try_filled;
use crate::io::file::{File, FileState, check_long_size};
use std::ffi::{CStr, c_char, c_int};
use std::ptr;

handle!(
    /// Opaque handle to a file (disk file, pipe or memory file).
    THFile => File
);

/// Runs `f` on the locked state of the file handle `p` (argument 1).
///
/// # Safety
/// `p` must be NULL or a live file handle.
unsafe fn with<R>(p: *mut THFile, f: impl FnOnce(&mut FileState) -> Result<R>) -> Result<R> {
    // SAFETY: caller contract.
    let file = unsafe { obj(p, 1)? };
    f(&mut file.lock())
}

/// A NUL-terminated C string argument.
///
/// # Safety
/// `p` must be NULL or a NUL-terminated string.
unsafe fn c_str<'a>(p: *const c_char, what: &str, arg: u32) -> Result<&'a CStr> {
    if p.is_null() {
        return Err(Error::null(arg, what));
    }
    // SAFETY: caller contract.
    Ok(unsafe { CStr::from_ptr(p) })
}

/// A file mode string (`"r"`, `"w"`, `"rw"`).
///
/// # Safety
/// As for `c_str`.
unsafe fn c_mode<'a>(p: *const c_char, arg: u32) -> Result<&'a str> {
    // SAFETY: forwarded contract.
    let s = unsafe { c_str(p, "mode", arg)? };
    s.to_str().map_err(|_| Error::invalid("file mode is not valid UTF-8").at_arg(arg))
}

/// Reads `n` elements into `dst` through a temporary, so a failing pedantic read leaves `dst`
/// untouched. `dst` is argument 2 (`data`): NULL with `n > 0` is an error.
///
/// # Safety
/// `dst` must point to `n` writable elements (it may be NULL when `n == 0`).
unsafe fn read_to<T: crate::Scalar>(p: *mut THFile, dst: *mut T, n: usize) -> Result<usize> {
    if dst.is_null() && n > 0 {
        return Err(Error::null(2, "data"));
    }
    let mut tmp = try_filled(n, T::default())?;
    // SAFETY: forwarded contract.
    let got = unsafe { with(p, |s| s.read(&mut tmp))? };
    if got > 0 {
        // SAFETY: got <= n elements fit at dst (caller contract).
        unsafe { ptr::copy_nonoverlapping(tmp.as_ptr(), dst, got) };
    }
    Ok(got)
}

/// Writes `n` elements from `src`, argument 2 (`data`) as in `read_to`.
///
/// # Safety
/// `src` must point to `n` readable elements (it may be NULL when `n == 0`).
unsafe fn write_from<T: crate::Scalar>(p: *mut THFile, src: *const T, n: usize) -> Result<usize> {
    if src.is_null() && n > 0 {
        return Err(Error::null(2, "data"));
    }
    let data: &[T] = if n == 0 {
        &[]
    } else {
        // SAFETY: caller contract.
        unsafe { std::slice::from_raw_parts(src, n) }
    };
    // SAFETY: forwarded contract.
    unsafe { with(p, |s| s.write(data)) }
}

macro_rules! flag_getters {
    ($($name:ident => $e:expr;)*) => { $(
        th_fn! {
            #[doc = concat!("TH's `", stringify!($name), "` (1 or 0).")]
            fn $name(self_: *mut THFile as obj) -> c_int = 0; {
                Ok($e(&mut self_.lock()) as c_int)
            }
        }
    )* };
}
flag_getters! {
    THFile_isOpened => |s: &mut FileState| s.is_open();
    THFile_isQuiet => |s: &mut FileState| s.quiet;
    THFile_isReadable => |s: &mut FileState| s.readable;
    THFile_isWritable => |s: &mut FileState| s.writable;
    THFile_isBinary => |s: &mut FileState| s.binary;
    THFile_isAutoSpacing => |s: &mut FileState| s.auto_spacing;
    THFile_hasError => |s: &mut FileState| s.has_error;
}

macro_rules! flag_setters {
    ($($name:ident => $e:expr, $doc:literal;)*) => { $(
        th_fn! {
            #[doc = $doc]
            fn $name(self_: *mut THFile as obj) {
                $e(&mut self_.lock());
                Ok(())
            }
        }
    )* };
}
flag_setters! {
    THFile_binary => |s: &mut FileState| s.binary = true, "Binary mode: raw element bytes.";
    THFile_ascii => |s: &mut FileState| s.binary = false, "ASCII mode (the default): elements as text.";
    THFile_autoSpacing => |s: &mut FileState| s.auto_spacing = true, "ASCII: a space between elements, a newline after each call (the default).";
    THFile_noAutoSpacing => |s: &mut FileState| s.auto_spacing = false, "ASCII: no separators.";
    THFile_quiet => |s: &mut FileState| s.quiet = true, "Quiet mode: a short transfer only sets `hasError`.";
    THFile_pedantic => |s: &mut FileState| s.quiet = false, "Pedantic mode (the default): a short transfer is an error.";
    THFile_clearError => |s: &mut FileState| s.has_error = false, "Clears `hasError`.";
}

th_fn! {
    /// Flushes buffered writes.
    fn THFile_synchronize(self_: *mut THFile as obj) {
        self_.lock().synchronize()
    }

    /// Moves to byte offset `position` from the start (past the end of a memory file: an error,
    /// or only `hasError` when quiet).
    fn THFile_seek(self_: *mut THFile as obj, position: usize) {
        self_.lock().seek(position)
    }

    /// Moves to the end of the file.
    fn THFile_seekEnd(self_: *mut THFile as obj) {
        self_.lock().seek_end()
    }

    /// The current byte offset.
    fn THFile_position(self_: *mut THFile as obj) -> usize = 0; {
        self_.lock().position()
    }

    /// Closes the file (`isOpened` becomes 0); the handle stays valid until freed. A memory file
    /// releases its storage.
    fn THFile_close(self_: *mut THFile as obj) {
        self_.lock().close()
    }
}

/// Drops a reference; the last one closes the file if needed and frees it (NULL is ignored).
///
/// # Safety
/// `self_` must be NULL or a live file handle the caller owns a reference on.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn THFile_free(self_: *mut THFile) {
    // SAFETY: caller contract.
    unsafe { release(self_) }
}

/// Adds a reference (an extension: torch7's files were not refcounted). NULL is ignored.
///
/// # Safety
/// `self_` must be NULL or a live file handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn THFile_retain(self_: *mut THFile) {
    // SAFETY: caller contract.
    unsafe { retain(self_) }
}

th_fn! {
    /// Reads a string: `format` `"*a"` (to the end), `"*l"` (one line, without its `'\n'`) or
    /// `"*n"` (one number token, an extension). Returns the length; `*str_` receives a `THAlloc`'d
    /// copy (NUL-terminated here, release with `THFree`), or NULL when nothing could be read.
    fn THFile_readStringRaw(self_: *mut THFile, format: *const c_char as c_str("format"), str_: *mut *mut c_char) -> usize = 0; {
        if str_.is_null() {
            return Err(Error::null(3, "str"));
        }
        // SAFETY: str_ is a valid out pointer (NULL until a string is read).
        unsafe { *str_ = ptr::null_mut() };
        // SAFETY: a handle from the caller.
        let got = unsafe { with(self_, |s| s.read_string(format.to_bytes()))? };
        let Some(bytes) = got else { return Ok(0) };
        let p = th_alloc(bytes.len() as isize + 1)?;
        // SAFETY: p holds len + 1 bytes; str_ is a valid out pointer.
        unsafe {
            ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len());
            *p.add(bytes.len()) = 0;
            *str_ = p as *mut c_char;
        }
        Ok(bytes.len())
    }

    /// Writes `size` bytes of `str_` as they are (in either mode); returns the count written.
    fn THFile_writeStringRaw(self_: *mut THFile, str_: *const c_char, size: usize) -> usize = 0; {
        if str_.is_null() && size > 0 {
            return Err(Error::null(2, "str"));
        }
        let bytes: &[u8] = if size == 0 {
            &[]
        } else {
            // SAFETY: the caller passes `size` readable bytes.
            unsafe { std::slice::from_raw_parts(str_ as *const u8, size) }
        };
        // SAFETY: a handle from the caller.
        unsafe { with(self_, |s| s.write_string(bytes)) }
    }

    /// Opens `name` in mode `"r"`, `"w"` (truncates) or `"rw"` (creates if needed); binary data
    /// in the CPU's byte order, ASCII mode with auto-spacing, pedantic unless `isQuiet`. When the
    /// file cannot be opened: NULL, with an error unless `isQuiet` (+1).
    fn THDiskFile_new(name: *const c_char as c_str("name"), mode: *const c_char as c_mode, is_quiet: c_int) -> *mut THFile = ptr::null_mut(); {
        Ok(File::disk(name, mode, is_quiet != 0)?.map_or(ptr::null_mut(), into_handle))
    }

    /// Runs the shell command `name` with `popen`, mode `"r"` (read its output) or `"w"` (write
    /// its input); closing waits for it (+1). Pipes cannot seek.
    fn THPipeFile_new(name: *const c_char as c_str("name"), mode: *const c_char as c_mode, is_quiet: c_int) -> *mut THFile = ptr::null_mut(); {
        Ok(File::pipe(name, mode, is_quiet != 0)?.map_or(ptr::null_mut(), into_handle))
    }

    /// The name the disk file (or pipe command) was opened with (borrowed, valid while the handle
    /// lives).
    fn THDiskFile_name(self_: *mut THFile as obj) -> *const c_char = ptr::null(); {
        Ok(self_.lock().disk()?.name().as_ptr())
    }
}

/// 1 on a little-endian CPU.
#[unsafe(no_mangle)]
pub extern "C" fn THDiskFile_isLittleEndianCPU() -> c_int {
    cfg!(target_endian = "little") as c_int
}

/// 1 on a big-endian CPU.
#[unsafe(no_mangle)]
pub extern "C" fn THDiskFile_isBigEndianCPU() -> c_int {
    cfg!(target_endian = "big") as c_int
}

th_fn! {
    /// Binary data in the CPU's byte order (the default).
    fn THDiskFile_nativeEndianEncoding(self_: *mut THFile as obj) {
        self_.lock().disk()?.native = true;
        Ok(())
    }

    /// Binary data little-endian (swapped on a big-endian CPU).
    fn THDiskFile_littleEndianEncoding(self_: *mut THFile as obj) {
        self_.lock().disk()?.native = cfg!(target_endian = "little");
        Ok(())
    }

    /// Binary data big-endian (swapped on a little-endian CPU).
    fn THDiskFile_bigEndianEncoding(self_: *mut THFile as obj) {
        self_.lock().disk()?.native = cfg!(target_endian = "big");
        Ok(())
    }

    /// Bytes per Long element in binary mode: 4 (values truncated to 32 bits on write,
    /// sign-extended on read), 8, or 0 (native, 8).
    fn THDiskFile_longSize(self_: *mut THFile, size: c_int) {
        let n = check_long_size(size)?;
        // SAFETY: a handle from the caller.
        unsafe { with(self_, |s| { s.disk()?.long_size = n; Ok(()) }) }
    }

    /// Disables stdio buffering (call before the first transfer).
    fn THDiskFile_noBuffer(self_: *mut THFile as obj) {
        self_.lock().disk()?.no_buffer()
    }

    /// A memory file over `storage` (retained), which must end with a 0 byte; the content is
    /// everything before it. NULL `storage`: a new empty one. Mode `"r"`, `"w"` or `"rw"` (+1).
    fn THMemoryFile_newWithStorage(storage: *mut THCharStorage, mode: *const c_char as c_mode) -> *mut THFile = ptr::null_mut(); {
        // SAFETY: a handle from the caller (read after `mode`, whose errors come first).
        let storage = unsafe { opt_rc(storage, 1)? };
        Ok(into_handle(File::memory(storage, mode)?))
    }

    /// An empty memory file (+1).
    fn THMemoryFile_new(mode: *const c_char as c_mode) -> *mut THFile = ptr::null_mut(); {
        Ok(into_handle(File::memory(None, mode).map_err(|e| Error { arg: Some(1), ..e })?))
    }

    /// The memory file's storage, trimmed to its content plus the terminating 0 (borrowed: retain
    /// it to keep it past the file).
    fn THMemoryFile_storage(self_: *mut THFile as obj) -> *mut THCharStorage = ptr::null_mut(); {
        Ok(as_handle::<THCharStorage>(self_.lock().memory()?.storage()?))
    }

    /// As `THDiskFile_longSize`, for memory files.
    fn THMemoryFile_longSize(self_: *mut THFile, size: c_int) {
        let n = check_long_size(size)?;
        // SAFETY: a handle from the caller.
        unsafe { with(self_, |s| { s.memory()?.long_size = n; Ok(()) }) }
    }
}

macro_rules! file_api {
    ($(($R:ident, $T:ty, $C:ty, $A:ty, $D:ident, $K:ident)),* $(,)?) => { pastey::paste! { $(
        th_fn! {
            #[doc = "Reads one " $R " element (0 when the read fails)."]
            fn [<THFile_read $R Scalar>](self_: *mut THFile) -> $C = <$T>::default().to_c(); {
                let mut v = <$T>::default();
                // SAFETY: a handle from the caller; one element at &mut v.
                unsafe { read_to(self_, &mut v, 1)? };
                Ok(v.to_c())
            }
            #[doc = "Writes one " $R " element."]
            fn [<THFile_write $R Scalar>](self_: *mut THFile, scalar: $C) {
                let v = <$T>::from_c(scalar);
                // SAFETY: a handle from the caller; one element at &v.
                unsafe { write_from(self_, &v, 1)? };
                Ok(())
            }
            #[doc = "Reads `storage`'s size in " $R " elements into it (no resize); returns the count read."]
            fn [<THFile_read $R>](self_: *mut THFile, storage: *mut [<TH $R Storage>] as obj) -> usize = 0; {
                let (p, n) = storage.raw_parts();
                // SAFETY: the storage holds n elements at p.
                unsafe { read_to(self_, p, n) }
            }
            #[doc = "Writes all of `storage`'s " $R " elements; returns the count written."]
            fn [<THFile_write $R>](self_: *mut THFile, storage: *mut [<TH $R Storage>] as obj) -> usize = 0; {
                let (p, n) = storage.raw_parts();
                // SAFETY: the storage holds n elements at p.
                unsafe { write_from(self_, p, n) }
            }
            #[doc = "Reads `n` " $R " elements into `data`; returns the count read."]
            fn [<THFile_read $R Raw>](self_: *mut THFile, data: *mut $C, n: usize) -> usize = 0; {
                // SAFETY: the caller passes n writable elements ($C has $T's layout).
                unsafe { read_to(self_, data as *mut $T, n) }
            }
            #[doc = "Writes `n` " $R " elements from `data`; returns the count written."]
            fn [<THFile_write $R Raw>](self_: *mut THFile, data: *mut $C, n: usize) -> usize = 0; {
                // SAFETY: the caller passes n readable elements ($C has $T's layout).
                unsafe { write_from(self_, data as *const $T, n) }
            }
        }
    )* } };
}
crate::th_dtypes!(file_api);
