//! NumPy `.npy` files (format versions 1.0, 2.0 and 3.0) for tensors.
//!
//! Saving writes a version 1.0 header (2.0 when the header would not fit in 65535 bytes) with
//! a little-endian `descr`, `fortran_order: False` and the tensor's shape, then the elements in
//! row-major order (any strides; Bool normalised to 0/1). An empty tensor (no dimensions) is
//! saved with shape `(0,)`.
//!
//! Loading requires the file's dtype to be the tensor's (no silent conversion) and accepts
//! little-, big- and native-endian descrs, `fortran_order` True (the result is contiguous
//! row-major), shape `()` (loaded as a 1-element 1-D tensor: TH has no 0-d tensors) and shapes
//! with a zero extent (loaded as an empty tensor). BFloat16 is not a NumPy dtype: it is saved as
//! 2-byte void `'|V2'` (what `numpy.save` writes for an `ml_dtypes.bfloat16` array; view the
//! loaded array with `.view(ml_dtypes.bfloat16)`), and a BFloat16 load accepts `V2` files.
//!
//! Corrupt files give clear errors: bad magic or version, a header that is not the dict NumPy
//! writes, unknown keys, sizes that overflow, or data shorter than the shape needs. Nothing is
//! allocated beyond what the file's size can back.

use crate::core::dtype::{DType, Format, Scalar};
use crate::core::error::{Error, Result};
use crate::core::limits::try_filled;
use crate::core::tensor::View;
use std::io::{Read, Write};

const MAGIC: &[u8] = b"\x93NUMPY";
/// Upper bound on a header we are willing to parse (NumPy's own reader stops at 10000 bytes by
/// default; large-rank shapes need more, so allow some room).
const MAX_HEADER: usize = 1 << 20;

/// The descr `numpy.save` writes for each dtype: byte order, kind letter and size (bfloat16,
/// which numpy lacks, as 2 opaque bytes).
fn descr_of(d: DType) -> String {
    let (order, kind) = match d.format() {
        Format::UInt => ('<', 'u'),
        Format::Int => ('<', 'i'),
        Format::Float => ('<', 'f'),
        Format::BFloat => ('|', 'V'),
        Format::Bool => ('|', 'b'),
    };
    let order = if d.size() == 1 { '|' } else { order };
    format!("{order}{kind}{}", d.size())
}

/// Parses a descr; returns (dtype kind+size without byte order, big-endian?).
fn parse_descr(s: &str) -> Result<(&str, bool)> {
    let (order, body) = match s.as_bytes().first() {
        Some(b'<') | Some(b'|') => (false, &s[1..]),
        Some(b'>') => (true, &s[1..]),
        Some(b'=') => (cfg!(target_endian = "big"), &s[1..]),
        _ => (false, s),
    };
    Ok((body, order))
}

/// Whether a descr body (e.g. `"f4"`) is the file form of dtype `d`.
fn descr_matches(d: DType, body: &str) -> bool {
    let want = &descr_of(d)[1..];
    body == want
        // numpy's one-character aliases of the byte-sized types
        || (d.size() == 1 && body == match d.format() {
            Format::Bool => "?",
            Format::Int => "b",
            Format::UInt => "B",
            _ => "",
        })
}

/// A value of the header dict.
#[derive(Debug, PartialEq)]
enum Lit {
    Str(String),
    Bool(bool),
    Tuple(Vec<i64>),
}

/// A tiny parser for the Python dict literal of an `.npy` header.
struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn err(&self, what: &str) -> Error {
        Error::io(format!("corrupt .npy header: {what} at byte {} of the header", self.i))
    }
    fn ws(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }
    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, c: u8) -> Result<()> {
        if self.eat(c) { Ok(()) } else { Err(self.err(&format!("expected '{}'", c as char))) }
    }
    fn string(&mut self) -> Result<String> {
        self.ws();
        let q = match self.s.get(self.i) {
            Some(&q @ (b'\'' | b'"')) => q,
            _ => return Err(self.err("expected a string")),
        };
        self.i += 1;
        let start = self.i;
        while self.i < self.s.len() && self.s[self.i] != q {
            if self.s[self.i] == b'\\' {
                return Err(self.err("escapes are not supported in strings"));
            }
            self.i += 1;
        }
        if self.i >= self.s.len() {
            return Err(self.err("unterminated string"));
        }
        let v = std::str::from_utf8(&self.s[start..self.i]).map_err(|_| self.err("string is not UTF-8"))?.to_string();
        self.i += 1;
        Ok(v)
    }
    fn int(&mut self) -> Result<i64> {
        self.ws();
        let start = self.i;
        while self.i < self.s.len() && self.s[self.i].is_ascii_digit() {
            self.i += 1;
        }
        let digits = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
        if digits.is_empty() {
            return Err(self.err("expected a dimension"));
        }
        // Python 2 era files may write `3L`.
        if self.s.get(self.i) == Some(&b'L') {
            self.i += 1;
        }
        digits.parse::<i64>().map_err(|_| self.err(&format!("dimension {digits} is too large")))
    }
    fn value(&mut self) -> Result<Lit> {
        self.ws();
        match self.s.get(self.i) {
            Some(b'\'' | b'"') => Ok(Lit::Str(self.string()?)),
            Some(b'[') => Err(self.err("structured dtypes (a list descr) are not supported")),
            Some(b'(') => {
                self.i += 1;
                let mut v = Vec::new();
                if self.eat(b')') {
                    return Ok(Lit::Tuple(v));
                }
                loop {
                    v.push(self.int()?);
                    if v.len() > 64 {
                        return Err(self.err("more than 64 dimensions"));
                    }
                    if self.eat(b')') {
                        break;
                    }
                    self.expect(b',')?;
                    if self.eat(b')') {
                        break;
                    }
                }
                Ok(Lit::Tuple(v))
            }
            _ => {
                for (word, b) in [(&b"True"[..], true), (&b"False"[..], false)] {
                    if self.s[self.i..].starts_with(word) {
                        self.i += word.len();
                        return Ok(Lit::Bool(b));
                    }
                }
                Err(self.err("expected a string, a tuple, True or False"))
            }
        }
    }
    fn dict(&mut self) -> Result<Vec<(String, Lit)>> {
        self.expect(b'{')?;
        let mut out = Vec::new();
        loop {
            if self.eat(b'}') {
                break;
            }
            let k = self.string()?;
            self.expect(b':')?;
            let v = self.value()?;
            out.push((k, v));
            if self.eat(b'}') {
                break;
            }
            self.expect(b',')?;
        }
        self.ws();
        if self.i != self.s.len() {
            return Err(self.err("trailing bytes after the dict"));
        }
        Ok(out)
    }
}

/// What an `.npy` header says.
#[derive(Debug, PartialEq)]
pub struct Header {
    pub descr: String,
    pub fortran_order: bool,
    pub shape: Vec<i64>,
}

/// Reads and checks the preamble and header; returns the header and its total length in bytes.
pub fn read_header(r: &mut impl Read, file_len: u64) -> Result<(Header, u64)> {
    let mut pre = [0u8; 8];
    r.read_exact(&mut pre).map_err(|_| Error::io("not an .npy file: shorter than its magic string"))?;
    if &pre[..6] != MAGIC {
        return Err(Error::io("not an .npy file: bad magic string"));
    }
    let (major, minor) = (pre[6], pre[7]);
    let (hlen, pre_len) = match major {
        1 => {
            let mut b = [0u8; 2];
            r.read_exact(&mut b).map_err(|_| Error::io("truncated .npy header"))?;
            (u16::from_le_bytes(b) as u64, 10u64)
        }
        2 | 3 => {
            let mut b = [0u8; 4];
            r.read_exact(&mut b).map_err(|_| Error::io("truncated .npy header"))?;
            (u32::from_le_bytes(b) as u64, 12u64)
        }
        _ => return Err(Error::io(format!("unsupported .npy format version {major}.{minor}"))),
    };
    if minor != 0 {
        return Err(Error::io(format!("unsupported .npy format version {major}.{minor}")));
    }
    if hlen > MAX_HEADER as u64 || pre_len + hlen > file_len {
        return Err(Error::io(format!("corrupt .npy file: header length {hlen} exceeds the file")));
    }
    let mut h = vec![0u8; hlen as usize];
    r.read_exact(&mut h).map_err(|_| Error::io("truncated .npy header"))?;
    if major < 3 && !h.is_ascii() {
        return Err(Error::io("corrupt .npy header: not ASCII (only format 3.0 headers may be UTF-8)"));
    }
    let mut p = Parser { s: &h, i: 0 };
    let dict = p.dict()?;
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    for (k, v) in dict {
        match (k.as_str(), v) {
            ("descr", Lit::Str(s)) => descr = Some(s),
            ("fortran_order", Lit::Bool(b)) => fortran = Some(b),
            ("shape", Lit::Tuple(t)) => shape = Some(t),
            ("descr", _) => {
                return Err(Error::io(
                    "corrupt .npy header: 'descr' is not a string (structured arrays are not supported)",
                ));
            }
            ("fortran_order" | "shape", _) => {
                return Err(Error::io(format!("corrupt .npy header: bad value for '{k}'")));
            }
            _ => return Err(Error::io(format!("corrupt .npy header: unknown key '{k}'"))),
        }
    }
    let header = Header {
        descr: descr.ok_or_else(|| Error::io("corrupt .npy header: no 'descr'"))?,
        fortran_order: fortran.ok_or_else(|| Error::io("corrupt .npy header: no 'fortran_order'"))?,
        shape: shape.ok_or_else(|| Error::io("corrupt .npy header: no 'shape'"))?,
    };
    Ok((header, pre_len + hlen))
}

/// The complete header bytes (preamble, dict, padding, newline) for `descr` and `shape`.
pub fn make_header(descr: &str, shape: &[i64]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let tuple = if dims.len() == 1 { format!("({},)", dims[0]) } else { format!("({})", dims.join(", ")) };
    let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {tuple}, }}");
    // Total length a multiple of 64, the dict padded with spaces and ended by '\n'.
    let pad_to = |pre: usize| (pre + dict.len() + 1).div_ceil(64) * 64 - pre;
    let (mut out, hlen) = if pad_to(10) <= u16::MAX as usize {
        let hlen = pad_to(10);
        let mut o = MAGIC.to_vec();
        o.extend_from_slice(&[1, 0]);
        o.extend_from_slice(&(hlen as u16).to_le_bytes());
        (o, hlen)
    } else {
        let hlen = pad_to(12);
        let mut o = MAGIC.to_vec();
        o.extend_from_slice(&[2, 0]);
        o.extend_from_slice(&(hlen as u32).to_le_bytes());
        (o, hlen)
    };
    out.extend_from_slice(dict.as_bytes());
    out.resize(out.len() + hlen - dict.len() - 1, b' ');
    out.push(b'\n');
    out
}

/// Writes `v` (any strides) to `path` as `.npy`.
pub fn save<T: Scalar>(path: &std::path::Path, v: &View<T>) -> Result<()> {
    let shape: Vec<i64> = if v.sizes.is_empty() { vec![0] } else { v.sizes.clone() };
    let mut data = v.to_vec()?;
    if T::DTYPE == DType::Bool {
        // normalise any nonzero byte to 1, as NumPy's bool requires
        data.iter_mut().for_each(|x| *x = T::from_prim(x.to_prim()));
    }
    let mut bytes = make_header(&descr_of(T::DTYPE), &shape);
    let size = std::mem::size_of::<T>();
    // SAFETY: every element type is plain old data; viewing it as bytes is sound.
    let raw = unsafe { std::slice::from_raw_parts(data.as_ptr() as *const u8, data.len() * size) };
    if cfg!(target_endian = "big") && size > 1 {
        let start = bytes.len();
        bytes.extend_from_slice(raw);
        bytes[start..].chunks_exact_mut(size).for_each(|c| c.reverse());
    } else {
        bytes.extend_from_slice(raw);
    }
    let io = |e: std::io::Error| Error::io(format!("cannot write {}: {e}", path.display()));
    let mut f = std::fs::File::create(path).map_err(io)?;
    f.write_all(&bytes).map_err(io)?;
    f.flush().map_err(io)
}

/// Reads an `.npy` file of dtype `T` into a new contiguous view.
pub fn load<T: Scalar>(path: &std::path::Path) -> Result<View<T>> {
    let io = |e: std::io::Error| Error::io(format!("cannot read {}: {e}", path.display()));
    let f = std::fs::File::open(path).map_err(io)?;
    let file_len = f.metadata().map_err(io)?.len();
    let mut r = std::io::BufReader::new(f);
    let (h, hdr_len) =
        read_header(&mut r, file_len).map_err(|e| Error { msg: format!("{}: {}", path.display(), e.msg), ..e })?;
    let (body, big) = parse_descr(&h.descr)?;
    if !descr_matches(T::DTYPE, body) {
        return Err(Error::dtype(format!(
            "{}: the file holds dtype '{}', not {} ('{}')",
            path.display(),
            h.descr,
            T::DTYPE.name(),
            descr_of(T::DTYPE)
        )));
    }
    let size = std::mem::size_of::<T>();
    let mut n: u64 = 1;
    for &d in &h.shape {
        n = n
            .checked_mul(d as u64)
            .ok_or_else(|| Error::size(format!("{}: shape {:?} overflows", path.display(), h.shape)))?;
    }
    let need = n
        .checked_mul(size as u64)
        .ok_or_else(|| Error::size(format!("{}: shape {:?} overflows", path.display(), h.shape)))?;
    let have = file_len - hdr_len;
    if need > have {
        return Err(Error::io(format!(
            "{}: truncated .npy file: shape {:?} needs {need} data bytes, the file has {have}",
            path.display(),
            h.shape
        )));
    }
    if n == 0 {
        return Ok(View::empty());
    }
    let n = usize::try_from(n).map_err(|_| Error::size("array too large"))?;
    let mut data = try_filled(n, T::default())?;
    // SAFETY: plain old data elements, every byte pattern valid.
    let raw = unsafe { std::slice::from_raw_parts_mut(data.as_mut_ptr() as *mut u8, n * size) };
    r.read_exact(raw).map_err(io)?;
    if size > 1 && big != cfg!(target_endian = "big") {
        raw.chunks_exact_mut(size).for_each(|c| c.reverse());
    }
    let shape: Vec<i64> = if h.shape.is_empty() { vec![1] } else { h.shape.clone() };
    if !h.fortran_order || shape.len() < 2 {
        return View::from_slice(&data, &shape);
    }
    // Column-major data: view it with reversed shape (row-major), transpose back, copy.
    let rev: Vec<i64> = shape.iter().rev().copied().collect();
    let mut fv = View::from_slice(&data, &rev)?;
    fv.sizes.reverse();
    fv.strides.reverse();
    let out = View::<T>::contiguous(&shape)?;
    crate::ops::copy::copy(&out, &fv)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_layout() {
        let h = make_header("<f4", &[2, 3]);
        assert_eq!(h.len() % 64, 0);
        assert_eq!(&h[..8], b"\x93NUMPY\x01\x00");
        assert_eq!(*h.last().unwrap(), b'\n');
        let (hd, len) = read_header(&mut &h[..], h.len() as u64).unwrap();
        assert_eq!(len as usize, h.len());
        assert_eq!(hd, Header { descr: "<f4".into(), fortran_order: false, shape: vec![2, 3] });
        let one = make_header("|u1", &[5]);
        assert!(std::str::from_utf8(&one[10..]).unwrap().contains("'shape': (5,)"));
    }

    #[test]
    fn header_errors() {
        let bad = |s: &[u8]| read_header(&mut &s[..], s.len() as u64).unwrap_err().msg;
        assert!(bad(b"\x93NUMPZ\x01\x00").contains("magic"));
        assert!(bad(b"\x93NUMPY\x04\x00\x00\x00").contains("version"));
        assert!(bad(b"\x93NUMPY\x01\x00\xff\xff{}").contains("exceeds"));
        let mut h = make_header("<f4", &[2]);
        let p = h.iter().position(|&c| c == b'}').unwrap();
        h[p] = b']';
        assert!(bad(&h).contains("corrupt"));
        let h = b"\x93NUMPY\x01\x00\x1a\x00{'descr': '<f4', 'x': 1}\n";
        assert!(bad(h).contains("corrupt"));
    }
}
