//! TH's `THFile` (`THFile.h`, `THDiskFile.h`, `THMemoryFile.h`): a serialization stream with
//! binary and ASCII modes, over one of three backends reached through a trait object (the vtable
//! of torch7's `THFilePrivate.h`): a disk file or a pipe (C `FILE *` from `fopen`/`popen`), or a
//! memory file backed by a NUL-terminated `Storage<i8>` (TH's `THCharStorage`).
//!
//! Format (torch7's): binary mode transfers the raw element bytes, swapped per element when a
//! disk file's encoding is not the CPU's; `long_size` 4 stores `Long` as 4 bytes. ASCII mode
//! writes Byte/Char as raw bytes, integers as `%d`, Float/Half/BFloat16 as `%.9g`, Double as
//! `%.17g` (Bool as `0`/`1`), separated by one space with a `'\n'` after each call (auto-spacing);
//! reading skips white space and consumes one trailing `'\n'`.
//!
//! Errors: a short transfer sets `has_error`; a quiet file then returns the count transferred, a
//! pedantic one (the default) fails with `read error: read N blocks instead of M`. Misuse (closed
//! file, reading a write-only file, ...) is always an error.

use crate::core::dtype::{DType, Format, Prim, Scalar};
use crate::core::error::{Error, Result};
use crate::core::refcount::Rc;
use crate::core::storage::Storage;
use std::ffi::{CStr, CString, c_char, c_int};
use std::sync::{Mutex, MutexGuard};

/// The byte-stream operations a file kind provides (torch7's `THFileVTable`, lower half).
pub trait Backend: Send {
    /// Reads up to `buf.len()` bytes; returns how many were read (short at end of stream).
    fn read(&mut self, buf: &mut [u8]) -> usize;
    /// Writes `buf`; returns how many bytes were written.
    fn write(&mut self, buf: &[u8]) -> Result<usize>;
    /// Next byte, or None at end of stream.
    fn getc(&mut self) -> Option<u8>;
    /// Pushes back the byte just read by `getc`.
    fn ungetc(&mut self, c: u8);
    fn seek(&mut self, pos: usize) -> Result<()>;
    fn seek_end(&mut self) -> Result<()>;
    fn position(&mut self) -> Result<usize>;
    fn flush(&mut self) -> Result<()>;
    fn close(&mut self) -> Result<()>;
    fn is_open(&self) -> bool;
    /// The disk-file state (disk files and pipes only).
    fn disk(&mut self) -> Option<&mut DiskFile> {
        None
    }
    /// The memory-file state (memory files only).
    fn memory(&mut self) -> Option<&mut MemoryFile> {
        None
    }
}

/// How a stream of elements of one dtype is written in ASCII mode.
enum Ascii {
    /// Raw bytes (Byte, Char).
    Raw,
    /// A decimal integer in `[min, max]`.
    Int(i64, i64),
    /// A float printed with this many significant digits (`%.Ng`); `true` for double precision.
    Float(usize, bool),
}

fn ascii_kind(d: DType) -> Ascii {
    let max = ((1u64 << d.digits()) - 1) as i64;
    match d.format() {
        Format::UInt | Format::Int if d.size() == 1 => Ascii::Raw,
        Format::UInt => Ascii::Int(0, max),
        Format::Int => Ascii::Int(-max - 1, max),
        Format::Bool => Ascii::Int(0, 1),
        // double precision gets 17 digits, every other float 9 (printed from f32)
        Format::Float | Format::BFloat => {
            if d.digits() > f32::MANTISSA_DIGITS {
                Ascii::Float(17, true)
            } else {
                Ascii::Float(9, false)
            }
        }
    }
}

/// `%.{prec}g` of `v`, exactly as C prints it.
fn format_g(v: f64, prec: usize) -> Vec<u8> {
    let mut buf = [0u8; 64];
    let fmt: &CStr = if prec == 17 { c"%.17g" } else { c"%.9g" };
    // SAFETY: buf has 64 bytes (a %.17g double needs at most 25), the format takes one double.
    let n = unsafe { libc::snprintf(buf.as_mut_ptr() as *mut c_char, buf.len(), fmt.as_ptr(), v) };
    buf[..(n.max(0) as usize).min(buf.len() - 1)].to_vec()
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// A number token the way `fscanf` takes one: leading white space skipped, then the longest
/// prefix that fits the grammar (`float`: also `.`, exponents, `inf`/`nan`). The first byte
/// that does not fit is pushed back.
fn read_token(b: &mut dyn Backend, float: bool) -> Vec<u8> {
    let mut tok = Vec::new();
    let mut c = b.getc();
    while let Some(x) = c {
        if !is_space(x) {
            break;
        }
        c = b.getc();
    }
    if let Some(x @ (b'+' | b'-')) = c {
        tok.push(x);
        c = b.getc();
    }
    if float && c.is_some_and(|x| x.is_ascii_alphabetic()) {
        while let Some(x) = c.filter(|x| x.is_ascii_alphanumeric() || *x == b'(' || *x == b')' || *x == b'_') {
            tok.push(x);
            c = b.getc();
        }
    } else {
        let mut seen_e = false;
        while let Some(x) = c {
            let prev = tok.last().copied();
            let ok = x.is_ascii_digit()
                || (float && x == b'.' && !seen_e)
                || (float
                    && (x == b'e' || x == b'E')
                    && !seen_e
                    && prev.is_some_and(|p| p.is_ascii_digit() || p == b'.'))
                || (float && (x == b'+' || x == b'-') && matches!(prev, Some(b'e' | b'E')));
            if !ok {
                break;
            }
            seen_e |= x == b'e' || x == b'E';
            tok.push(x);
            c = b.getc();
        }
    }
    if let Some(x) = c {
        b.ungetc(x);
    }
    tok
}

fn parse_float(tok: &[u8], double: bool) -> Option<f64> {
    let s = std::str::from_utf8(tok).ok()?;
    let (neg, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let lower = body.to_ascii_lowercase();
    let v = if lower == "inf" || lower == "infinity" {
        f64::INFINITY
    } else if lower == "nan" || (lower.starts_with("nan(") && lower.ends_with(')')) {
        f64::NAN
    } else if double {
        body.parse::<f64>().ok()?
    } else {
        body.parse::<f32>().ok()? as f64
    };
    Some(if neg { -v } else { v })
}

/// The state shared by every file kind (torch7's `THFile` fields).
pub struct FileState {
    backend: Box<dyn Backend>,
    pub readable: bool,
    pub writable: bool,
    pub binary: bool,
    pub auto_spacing: bool,
    pub quiet: bool,
    pub has_error: bool,
}

fn closed() -> Error {
    Error::invalid("attempt to use a closed file").at_arg(1)
}

impl FileState {
    fn new(backend: Box<dyn Backend>, readable: bool, writable: bool, quiet: bool) -> Self {
        FileState { backend, readable, writable, binary: false, auto_spacing: true, quiet, has_error: false }
    }

    pub fn is_open(&self) -> bool {
        self.backend.is_open()
    }

    fn check_open(&self) -> Result<()> {
        if self.backend.is_open() { Ok(()) } else { Err(closed()) }
    }

    fn check_read(&self) -> Result<()> {
        self.check_open()?;
        if !self.readable {
            return Err(Error::invalid("attempt to read in a write-only file").at_arg(1));
        }
        Ok(())
    }

    fn check_write(&self) -> Result<()> {
        self.check_open()?;
        if !self.writable {
            return Err(Error::invalid("attempt to write in a read-only file").at_arg(1));
        }
        Ok(())
    }

    /// The disk-file part, or an error naming what the file is.
    pub fn disk(&mut self) -> Result<&mut DiskFile> {
        self.backend.disk().ok_or_else(|| Error::invalid("not a disk file").at_arg(1))
    }

    pub fn memory(&mut self) -> Result<&mut MemoryFile> {
        self.backend.memory().ok_or_else(|| Error::invalid("not a memory file").at_arg(1))
    }

    fn swap_bytes(&mut self) -> bool {
        self.backend.disk().is_some_and(|d| !d.native)
    }

    fn long_size(&mut self) -> usize {
        if let Some(d) = self.backend.disk() {
            return d.long_size;
        }
        self.backend.memory().map_or(0, |m| m.long_size)
    }

    /// Ends a transfer of `done` of `want` items: sets `has_error` when short, and fails unless
    /// quiet.
    fn finish(&mut self, what: &str, done: usize, want: usize) -> Result<usize> {
        if done != want {
            self.has_error = true;
            if !self.quiet {
                let (verb, past) = if what == "read" { ("read", "read") } else { ("write", "wrote") };
                return Err(Error::io(format!("{verb} error: {past} {done} blocks instead of {want}")));
            }
        }
        Ok(done)
    }

    /// Reads `out.len()` elements into `out`; returns how many were read (see the module docs).
    pub fn read<T: Scalar>(&mut self, out: &mut [T]) -> Result<usize> {
        self.check_read()?;
        let n = out.len();
        let size = std::mem::size_of::<T>();
        let nread = if self.binary {
            if T::DTYPE == DType::Long && self.long_size() == 4 {
                let mut buf = vec![0u8; n * 4];
                let got = self.backend.read(&mut buf) / 4;
                let swap = self.swap_bytes();
                for (o, ch) in out.iter_mut().zip(buf.chunks_exact_mut(4)).take(got) {
                    if swap {
                        ch.reverse();
                    }
                    *o = T::from_prim(Prim::I(i32::from_ne_bytes([ch[0], ch[1], ch[2], ch[3]]) as i64));
                }
                got
            } else {
                // SAFETY: every element type is plain old data (integers, floats, u16 bit
                // patterns, a byte for Bool) for which any byte pattern is a valid value.
                let bytes =
                    unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr() as *mut u8, std::mem::size_of_val(out)) };
                let got = self.backend.read(bytes) / size;
                if size > 1 && self.swap_bytes() {
                    bytes[..got * size].chunks_exact_mut(size).for_each(|c| c.reverse());
                }
                got
            }
        } else {
            let got = match ascii_kind(T::DTYPE) {
                Ascii::Raw => {
                    // SAFETY: as above (one-byte elements).
                    let bytes = unsafe {
                        std::slice::from_raw_parts_mut(out.as_mut_ptr() as *mut u8, std::mem::size_of_val(out))
                    };
                    self.backend.read(bytes) / size
                }
                Ascii::Int(lo, hi) => {
                    let mut got = 0;
                    for o in out.iter_mut() {
                        let tok = read_token(&mut *self.backend, false);
                        match std::str::from_utf8(&tok).ok().and_then(|s| s.parse::<i64>().ok()) {
                            Some(v) if (lo..=hi).contains(&v) => *o = T::from_prim(Prim::I(v)),
                            _ => break,
                        }
                        got += 1;
                    }
                    got
                }
                Ascii::Float(_, double) => {
                    let mut got = 0;
                    for o in out.iter_mut() {
                        let tok = read_token(&mut *self.backend, true);
                        match parse_float(&tok, double) {
                            Some(v) => *o = T::from_prim(Prim::F(v)),
                            None => break,
                        }
                        got += 1;
                    }
                    got
                }
            };
            if self.auto_spacing && n > 0 {
                match self.backend.getc() {
                    Some(b'\n') | None => {}
                    Some(c) => self.backend.ungetc(c),
                }
            }
            got
        };
        self.finish("read", nread, n)
    }

    /// Writes the elements of `data`; returns how many were written.
    pub fn write<T: Scalar>(&mut self, data: &[T]) -> Result<usize> {
        self.check_write()?;
        let n = data.len();
        let size = std::mem::size_of::<T>();
        let nwrite = if self.binary {
            let swap = size > 1 && self.swap_bytes();
            let buf: Vec<u8> = if T::DTYPE == DType::Long && self.long_size() == 4 {
                let swap = self.swap_bytes();
                let mut b = Vec::with_capacity(n * 4);
                for &x in data {
                    let v = match x.to_prim() {
                        Prim::I(v) => v as i32,
                        Prim::F(v) => v as i32,
                    };
                    let mut e = v.to_ne_bytes();
                    if swap {
                        e.reverse();
                    }
                    b.extend_from_slice(&e);
                }
                b
            } else {
                // SAFETY: plain old data elements (see `read`), read as bytes.
                let bytes =
                    unsafe { std::slice::from_raw_parts(data.as_ptr() as *const u8, std::mem::size_of_val(data)) };
                let mut b = bytes.to_vec();
                if swap {
                    b.chunks_exact_mut(size).for_each(|c| c.reverse());
                }
                b
            };
            let esize = buf.len().checked_div(n).unwrap_or(size);
            self.backend.write(&buf)? / esize.max(1)
        } else {
            let mut text = Vec::new();
            let spacing = self.auto_spacing;
            match ascii_kind(T::DTYPE) {
                Ascii::Raw => {
                    // SAFETY: one-byte plain elements.
                    let bytes =
                        unsafe { std::slice::from_raw_parts(data.as_ptr() as *const u8, std::mem::size_of_val(data)) };
                    text.extend_from_slice(bytes);
                }
                kind => {
                    for (i, &x) in data.iter().enumerate() {
                        match (&kind, x.to_prim()) {
                            (Ascii::Float(p, _), Prim::F(v)) => text.extend(format_g(v, *p)),
                            (_, Prim::I(v)) => text.extend(v.to_string().into_bytes()),
                            (_, Prim::F(v)) => text.extend(format_g(v, 17)),
                        }
                        if spacing && i + 1 < n {
                            text.push(b' ');
                        }
                    }
                }
            }
            let body = text.len();
            if spacing && n > 0 {
                text.push(b'\n');
            }
            let w = self.backend.write(&text)?;
            if w >= body {
                n
            } else if matches!(ascii_kind(T::DTYPE), Ascii::Raw) {
                w / size
            } else {
                // items fully written before the cut
                let cut = &text[..w];
                if spacing { cut.iter().filter(|&&c| c == b' ').count() } else { 0 }
            }
        };
        self.finish("write", nwrite, n)
    }

    /// TH's `readStringRaw`: `"*a"` reads to the end, `"*l"` one line (without its `'\n'`),
    /// `"*n"` one number token (an extension: leading white space skipped).
    pub fn read_string(&mut self, format: &[u8]) -> Result<Option<Vec<u8>>> {
        self.check_read()?;
        let mode = match format {
            [b'*', m @ (b'a' | b'l' | b'n'), ..] => *m,
            _ => return Err(Error::invalid("format must be '*a', '*l' or '*n'").at_arg(2)),
        };
        let mut out = Vec::new();
        let mut any = false;
        match mode {
            b'a' => {
                let mut chunk = [0u8; 4096];
                loop {
                    let k = self.backend.read(&mut chunk);
                    out.extend_from_slice(&chunk[..k]);
                    if k < chunk.len() {
                        break;
                    }
                }
                any = !out.is_empty();
            }
            b'l' => {
                while let Some(c) = self.backend.getc() {
                    any = true;
                    if c == b'\n' {
                        break;
                    }
                    out.push(c);
                }
            }
            _ => {
                out = read_token(&mut *self.backend, true);
                any = parse_float(&out, true).is_some();
            }
        }
        if !any {
            self.finish("read", 0, 1)?;
            return Ok(None);
        }
        Ok(Some(out))
    }

    /// TH's `writeStringRaw`: the bytes as they are, in either mode.
    pub fn write_string(&mut self, s: &[u8]) -> Result<usize> {
        self.check_write()?;
        let w = self.backend.write(s)?;
        self.finish("write", w, s.len())
    }

    pub fn seek(&mut self, pos: usize) -> Result<()> {
        self.check_open()?;
        match self.backend.seek(pos) {
            Ok(()) => Ok(()),
            Err(e) => {
                self.has_error = true;
                if self.quiet { Ok(()) } else { Err(e) }
            }
        }
    }

    pub fn seek_end(&mut self) -> Result<()> {
        self.check_open()?;
        match self.backend.seek_end() {
            Ok(()) => Ok(()),
            Err(e) => {
                self.has_error = true;
                if self.quiet { Ok(()) } else { Err(e) }
            }
        }
    }

    pub fn position(&mut self) -> Result<usize> {
        self.check_open()?;
        self.backend.position()
    }

    pub fn synchronize(&mut self) -> Result<()> {
        self.check_open()?;
        self.backend.flush()
    }

    pub fn close(&mut self) -> Result<()> {
        self.check_open()?;
        self.backend.close()
    }
}

/// The object behind a `THFile *` handle: the state behind a lock (one file may be shared by
/// threads through retain; calls on it are serialised).
pub struct File {
    state: Mutex<FileState>,
}

impl File {
    pub fn lock(&self) -> MutexGuard<'_, FileState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wrap(backend: Box<dyn Backend>, readable: bool, writable: bool, quiet: bool) -> Rc<File> {
        Rc::new(File { state: Mutex::new(FileState::new(backend, readable, writable, quiet)) })
    }

    /// TH's `THDiskFile_new`: mode `"r"`, `"w"` or `"rw"`. `Ok(None)` when the file cannot be
    /// opened and `quiet` is set.
    pub fn disk(name: &CStr, mode: &str, quiet: bool) -> Result<Option<Rc<File>>> {
        let (r, w) = parse_mode(mode, true)?;
        let cmode: &CStr = match (r, w) {
            (true, true) => c"r+b",
            (true, false) => c"rb",
            _ => c"wb",
        };
        // SAFETY: both are NUL-terminated strings.
        let mut h = unsafe { libc::fopen(name.as_ptr(), cmode.as_ptr()) };
        if h.is_null() && r && w {
            // "rw" creates the file when it does not exist
            // SAFETY: as above.
            let c = unsafe { libc::fopen(name.as_ptr(), c"wb".as_ptr()) };
            if !c.is_null() {
                // SAFETY: c is an open stream; then reopen in update mode.
                unsafe {
                    libc::fclose(c);
                    h = libc::fopen(name.as_ptr(), cmode.as_ptr());
                }
            }
        }
        File::stream(h, name, false, mode, (r, w), quiet)
    }

    /// TH's `THPipeFile_new`: runs `command` through `popen`, mode `"r"` or `"w"`.
    pub fn pipe(command: &CStr, mode: &str, quiet: bool) -> Result<Option<Rc<File>>> {
        let (r, w) = parse_mode(mode, false)?;
        let cmode: &CStr = if r { c"r" } else { c"w" };
        // SAFETY: both are NUL-terminated strings.
        let h = unsafe { libc::popen(command.as_ptr(), cmode.as_ptr()) };
        File::stream(h, command, true, mode, (r, w), quiet)
    }

    /// The file over the stream `h` that `fopen` (`popen` when `pipe`) returned for `name` in
    /// `mode` (`(readable, writable)`); NULL is an error, or `Ok(None)` when `quiet`.
    fn stream(
        h: *mut libc::FILE,
        name: &CStr,
        pipe: bool,
        mode: &str,
        (r, w): (bool, bool),
        quiet: bool,
    ) -> Result<Option<Rc<File>>> {
        if h.is_null() {
            if quiet {
                return Ok(None);
            }
            let why = std::io::Error::last_os_error();
            return Err(Error::io(format!("cannot open <{}> in mode {mode} ({why})", name.to_string_lossy())));
        }
        let d = DiskFile::new(h, name, pipe);
        Ok(Some(File::wrap(Box::new(d), r, w, quiet)))
    }

    /// TH's `THMemoryFile_newWithStorage` (`storage` None: a fresh one-byte `"\0"` storage).
    pub fn memory(storage: Option<Rc<Storage<i8>>>, mode: &str) -> Result<Rc<File>> {
        let storage = match storage {
            Some(s) => {
                let len = s.len();
                if len == 0 || s.get(len as isize - 1)? != 0 {
                    return Err(Error::invalid("provided CharStorage must be terminated by 0").at_arg(1));
                }
                s
            }
            None => Storage::from_slice(&[0i8])?,
        };
        let (r, w) = parse_mode(mode, true).map_err(|e| Error { arg: Some(2), ..e })?;
        let size = storage.len() - 1;
        let m = MemoryFile { storage: Some(storage), size, pos: 0, long_size: 0 };
        Ok(File::wrap(Box::new(m), r, w, false))
    }
}

fn parse_mode(mode: &str, allow_rw: bool) -> Result<(bool, bool)> {
    match mode {
        "r" => Ok((true, false)),
        "w" => Ok((false, true)),
        "rw" if allow_rw => Ok((true, true)),
        _ => {
            let what = if allow_rw { "'r', 'w' or 'rw'" } else { "'r' or 'w'" };
            Err(Error::invalid(format!("invalid file mode \"{mode}\": must be {what}")).at_arg(2))
        }
    }
}

/// A C stream (`fopen` or `popen`).
pub struct DiskFile {
    handle: *mut libc::FILE,
    name: CString,
    pipe: bool,
    /// Byte order of binary data is the CPU's.
    pub native: bool,
    /// Bytes per `Long` in binary mode (0 or 8: native, 4: truncated to 32 bits).
    pub long_size: usize,
    /// The last transfer was a write (C streams need a seek between a write and a read).
    last_write: Option<bool>,
}

// SAFETY: a C `FILE *` may be used from any thread (stdio locks each stream); the stream is only
// reached through the `File` mutex.
unsafe impl Send for DiskFile {}

impl DiskFile {
    fn new(handle: *mut libc::FILE, name: &CStr, pipe: bool) -> Self {
        DiskFile { handle, name: name.to_owned(), pipe, native: true, long_size: 0, last_write: None }
    }

    pub fn name(&self) -> &CStr {
        &self.name
    }

    /// Switches an update stream between reading and writing as C requires.
    fn direction(&mut self, write: bool) {
        if !self.pipe && self.last_write.is_some_and(|w| w != write) {
            // SAFETY: an open stream; a zero seek only resets the direction.
            unsafe { libc::fseeko(self.handle, 0, libc::SEEK_CUR) };
        }
        self.last_write = Some(write);
    }

    pub fn no_buffer(&mut self) -> Result<()> {
        if self.handle.is_null() {
            return Err(closed());
        }
        // SAFETY: an open stream.
        if unsafe { libc::setvbuf(self.handle, std::ptr::null_mut(), libc::_IONBF, 0) } != 0 {
            return Err(Error::io("error: cannot disable buffer"));
        }
        Ok(())
    }
}

impl Backend for DiskFile {
    fn read(&mut self, buf: &mut [u8]) -> usize {
        if buf.is_empty() {
            return 0;
        }
        self.direction(false);
        // SAFETY: an open stream and a buffer of buf.len() bytes.
        unsafe { libc::fread(buf.as_mut_ptr() as *mut libc::c_void, 1, buf.len(), self.handle) }
    }
    fn write(&mut self, buf: &[u8]) -> Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        self.direction(true);
        // SAFETY: as above.
        Ok(unsafe { libc::fwrite(buf.as_ptr() as *const libc::c_void, 1, buf.len(), self.handle) })
    }
    fn getc(&mut self) -> Option<u8> {
        self.direction(false);
        // SAFETY: an open stream.
        let c = unsafe { libc::fgetc(self.handle) };
        (c != libc::EOF).then_some(c as u8)
    }
    fn ungetc(&mut self, c: u8) {
        // SAFETY: an open stream; one byte of push-back is always available.
        unsafe { libc::ungetc(c as c_int, self.handle) };
    }
    fn seek(&mut self, pos: usize) -> Result<()> {
        let off = libc::off_t::try_from(pos).map_err(|_| Error::io(format!("unable to seek to position {pos}")))?;
        self.last_write = None;
        // SAFETY: an open stream.
        if unsafe { libc::fseeko(self.handle, off, libc::SEEK_SET) } != 0 {
            return Err(Error::io(format!("unable to seek to position {pos}")));
        }
        Ok(())
    }
    fn seek_end(&mut self) -> Result<()> {
        self.last_write = None;
        // SAFETY: an open stream.
        if unsafe { libc::fseeko(self.handle, 0, libc::SEEK_END) } != 0 {
            return Err(Error::io("unable to seek at end of file"));
        }
        Ok(())
    }
    fn position(&mut self) -> Result<usize> {
        // SAFETY: an open stream.
        let p = unsafe { libc::ftello(self.handle) };
        usize::try_from(p).map_err(|_| Error::io("unable to obtain disk file offset (maybe a pipe?)"))
    }
    fn flush(&mut self) -> Result<()> {
        // SAFETY: an open stream.
        if unsafe { libc::fflush(self.handle) } != 0 {
            return Err(Error::io(format!("cannot flush <{}>", self.name.to_string_lossy())));
        }
        Ok(())
    }
    fn close(&mut self) -> Result<()> {
        let h = std::mem::replace(&mut self.handle, std::ptr::null_mut());
        // SAFETY: h is the open stream, closed once (the handle is cleared first).
        let rc = unsafe { if self.pipe { libc::pclose(h) } else { libc::fclose(h) } };
        if rc == -1 {
            return Err(Error::io(format!("error closing <{}>", self.name.to_string_lossy())));
        }
        Ok(())
    }
    fn is_open(&self) -> bool {
        !self.handle.is_null()
    }
    fn disk(&mut self) -> Option<&mut DiskFile> {
        Some(self)
    }
}

impl Drop for DiskFile {
    fn drop(&mut self) {
        if !self.handle.is_null() {
            let _ = self.close();
        }
    }
}

/// A stream over a NUL-terminated char storage: `size` bytes of content, then a 0.
pub struct MemoryFile {
    storage: Option<Rc<Storage<i8>>>,
    size: usize,
    pos: usize,
    /// Bytes per `Long` in binary mode (0 or 8: native, 4: truncated to 32 bits).
    pub long_size: usize,
}

impl MemoryFile {
    /// The storage, trimmed to the content plus its terminating 0 (TH's `THMemoryFile_storage`).
    pub fn storage(&mut self) -> Result<&Rc<Storage<i8>>> {
        let s = self.storage.as_ref().ok_or_else(closed)?;
        s.resize(self.size + 1)?;
        Ok(s)
    }

    /// Content bytes usable now (the storage may have been shrunk behind our back).
    fn avail(&self) -> (*mut u8, usize) {
        match &self.storage {
            Some(s) => {
                let (p, n) = s.raw_parts();
                (p as *mut u8, self.size.min(n.saturating_sub(1)))
            }
            None => (std::ptr::null_mut(), 0),
        }
    }
}

impl Backend for MemoryFile {
    fn read(&mut self, buf: &mut [u8]) -> usize {
        let (p, size) = self.avail();
        let k = buf.len().min(size.saturating_sub(self.pos));
        if k > 0 {
            // SAFETY: pos + k <= size < storage length.
            unsafe { std::ptr::copy_nonoverlapping(p.add(self.pos), buf.as_mut_ptr(), k) };
        }
        self.pos += k;
        k
    }
    fn write(&mut self, buf: &[u8]) -> Result<usize> {
        let s = self.storage.as_ref().ok_or_else(closed)?;
        let end = self.pos.checked_add(buf.len()).ok_or_else(|| Error::size("memory file too large"))?;
        let len = s.len();
        if end + 1 > len {
            let grown = (len + len / 2).max(end + 1);
            s.resize(grown).map_err(|e| Error::io(format!("cannot grow the memory file's storage: {e}")))?;
        }
        let (p, _) = s.raw_parts();
        // SAFETY: the storage now holds at least end + 1 bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(buf.as_ptr(), (p as *mut u8).add(self.pos), buf.len());
        }
        self.pos = end;
        if self.pos > self.size {
            self.size = self.pos;
            // SAFETY: size < storage length.
            unsafe { *(p as *mut u8).add(self.size) = 0 };
        }
        Ok(buf.len())
    }
    fn getc(&mut self) -> Option<u8> {
        let (p, size) = self.avail();
        if self.pos < size {
            // SAFETY: pos < size < storage length.
            let c = unsafe { *p.add(self.pos) };
            self.pos += 1;
            Some(c)
        } else {
            None
        }
    }
    fn ungetc(&mut self, _c: u8) {
        self.pos = self.pos.saturating_sub(1);
    }
    fn seek(&mut self, pos: usize) -> Result<()> {
        if pos > self.size {
            return Err(Error::io(format!("unable to seek to position {pos}")));
        }
        self.pos = pos;
        Ok(())
    }
    fn seek_end(&mut self) -> Result<()> {
        self.pos = self.size;
        Ok(())
    }
    fn position(&mut self) -> Result<usize> {
        Ok(self.pos)
    }
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }
    fn close(&mut self) -> Result<()> {
        self.storage = None;
        Ok(())
    }
    fn is_open(&self) -> bool {
        self.storage.is_some()
    }
    fn memory(&mut self) -> Option<&mut MemoryFile> {
        Some(self)
    }
}

/// Checks a `longSize` argument (0, 4 or 8).
pub fn check_long_size(size: c_int) -> Result<usize> {
    match size {
        0 | 4 | 8 => Ok(size as usize),
        _ => Err(Error::invalid(format!("invalid long size {size}: must be 0, 4 or 8")).at_arg(2)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::{bf16, f16};

    fn mem() -> Rc<File> {
        File::memory(None, "rw").unwrap()
    }

    fn roundtrip<T: Scalar>(vals: &[T], binary: bool) -> Vec<T> {
        let f = mem();
        let mut s = f.lock();
        s.binary = binary;
        assert_eq!(s.write(vals).unwrap(), vals.len());
        s.seek(0).unwrap();
        let mut out = vec![T::default(); vals.len()];
        assert_eq!(s.read(&mut out).unwrap(), vals.len());
        out
    }

    #[test]
    #[cfg_attr(miri, ignore = "ASCII numbers are formatted by C's snprintf, which Miri cannot call")]
    fn ascii_and_binary_roundtrip() {
        for binary in [false, true] {
            assert_eq!(roundtrip(&[0u8, 10, 255, 32], binary), [0u8, 10, 255, 32]);
            assert_eq!(roundtrip(&[-128i8, 10, 127], binary), [-128i8, 10, 127]);
            assert_eq!(roundtrip(&[i16::MIN, -1, i16::MAX], binary), [i16::MIN, -1, i16::MAX]);
            assert_eq!(roundtrip(&[i32::MIN, 7, i32::MAX], binary), [i32::MIN, 7, i32::MAX]);
            assert_eq!(roundtrip(&[i64::MIN, 7, i64::MAX], binary), [i64::MIN, 7, i64::MAX]);
            let fl = [0.1f32, -3.4e38, f32::MIN_POSITIVE, 1.0e-45, f32::INFINITY];
            assert_eq!(roundtrip(&fl, binary), fl);
            let db = [0.1f64, -1.7e308, 5e-324, f64::NEG_INFINITY, 1.0 / 3.0];
            assert_eq!(roundtrip(&db, binary), db);
            let h = [f16::from_f32(0.1), f16::MAX, f16::MIN_POSITIVE_SUBNORMAL];
            assert_eq!(roundtrip(&h, binary), h);
            let b = [bf16::from_f32(0.1), bf16::MAX, bf16::from_f32(-2.5)];
            assert_eq!(roundtrip(&b, binary), b);
            let bo = [crate::core::dtype::Bool(1), crate::core::dtype::Bool(0)];
            assert_eq!(roundtrip(&bo, binary), bo);
            assert!(roundtrip(&[f64::NAN], binary)[0].is_nan());
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "ASCII numbers are formatted by C's snprintf, which Miri cannot call")]
    fn ascii_text_is_torch7s() {
        let f = mem();
        let mut s = f.lock();
        s.write(&[1i32, -2, 3]).unwrap();
        s.write(&[0.1f32]).unwrap();
        s.write(&[0.1f64]).unwrap();
        s.write(b"ab".as_slice()).unwrap();
        let st = s.memory().unwrap().storage().unwrap().clone();
        let text: Vec<u8> = (0..st.len()).map(|i| st.get(i as isize).unwrap() as u8).collect();
        assert_eq!(text, b"1 -2 3\n0.100000001\n0.10000000000000001\nab\n\0");
    }

    #[test]
    fn short_reads_quiet_and_pedantic() {
        let f = mem();
        let mut s = f.lock();
        s.write(&[1i32, 2]).unwrap();
        s.seek(0).unwrap();
        let mut out = [0i32; 3];
        let e = s.read(&mut out).unwrap_err();
        assert_eq!(e.msg, "read error: read 2 blocks instead of 3");
        assert!(s.has_error);
        s.has_error = false;
        s.quiet = true;
        s.seek(0).unwrap();
        assert_eq!(s.read(&mut out).unwrap(), 2);
        assert_eq!(&out[..2], &[1, 2]);
        assert!(s.has_error);
    }

    #[test]
    fn long_size_four() {
        let f = mem();
        let mut s = f.lock();
        s.binary = true;
        s.memory().unwrap().long_size = 4;
        s.write(&[-5i64, 70000]).unwrap();
        assert_eq!(s.position().unwrap(), 8);
        s.seek(0).unwrap();
        let mut out = [0i64; 2];
        s.read(&mut out).unwrap();
        assert_eq!(out, [-5, 70000]);
    }

    #[test]
    fn strings() {
        let f = mem();
        let mut s = f.lock();
        s.write_string(b"line one\nline two\n  -1.5e3 rest").unwrap();
        s.seek(0).unwrap();
        assert_eq!(s.read_string(b"*l").unwrap().unwrap(), b"line one");
        assert_eq!(s.read_string(b"*l").unwrap().unwrap(), b"line two");
        assert_eq!(s.read_string(b"*n").unwrap().unwrap(), b"-1.5e3");
        assert_eq!(s.read_string(b"*a").unwrap().unwrap(), b" rest");
        assert!(s.read_string(b"*a").is_err());
        assert!(s.read_string(b"*x").is_err());
    }
}
