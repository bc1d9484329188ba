//! NVRTC's CUBINs kept on disk, so a program compiles a module once per machine and
//! architecture, not once per process: `<dir>/<module>-sm<MM>-<key>.cubin`, the key a hash of
//! everything the CUBIN depends on (the source, the options, NVRTC's version), so a changed
//! kernel or toolkit never loads a stale image. `TH_CUDA_CACHE_DIR` names the folder (set but
//! empty: no disk cache); by default `$XDG_CACHE_HOME/th/cubin`, else `~/.cache/th/cubin`. A
//! missing, unreadable or unwritable cache only costs a compile; files are written whole
//! (a temporary renamed into place), so concurrent processes never read half a CUBIN.

use super::Module;
use super::nvrtc::{self, compile, options};
use crate::core::error::Result;
use std::path::{Path, PathBuf};

/// The CUBIN of `m` for `sm_<arch>`: from the disk cache, or compiled (and then cached).
pub fn cubin(m: &Module, arch: (i32, i32)) -> Result<Vec<u8>> {
    cubin_in(default_dir().as_deref(), m, arch)
}

/// `cubin` with the cache in `dir` (None: no disk cache).
pub fn cubin_in(dir: Option<&Path>, m: &Module, arch: (i32, i32)) -> Result<Vec<u8>> {
    let Some(dir) = dir else { return Ok(compile(m, arch)?.cubin) };
    let path = dir.join(file_name(m, arch, nvrtc::version()?));
    if let Ok(b) = std::fs::read(&path)
        && b.starts_with(b"\x7fELF")
    {
        return Ok(b);
    }
    let c = compile(m, arch)?;
    let _ = store(dir, &path, &c.cubin); // a cache that cannot be written is only slower
    Ok(c.cubin)
}

/// Writes `cubin`, compiled elsewhere from `m` for `sm_<arch>`, into the cache folder `dir`
/// under the name a later `cubin_in(Some(dir), ..)` looks for: how a build machine ships
/// CUBINs to a GPU machine (scripts/pack_gpu.sh), so nothing compiles there. The key holds this
/// machine's NVRTC version: a GPU machine with another one compiles anew.
pub fn store_in(dir: &Path, m: &Module, arch: (i32, i32), cubin: &[u8]) -> Result<PathBuf> {
    let path = dir.join(file_name(m, arch, nvrtc::version()?));
    store(dir, &path, cubin).map_err(|e| crate::core::error::Error::io(format!("{}: {e}", path.display())))?;
    Ok(path)
}

fn store(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

fn default_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("TH_CUDA_CACHE_DIR") {
        return (!d.is_empty()).then(|| PathBuf::from(d));
    }
    let base = match std::env::var_os("XDG_CACHE_HOME") {
        Some(x) if !x.is_empty() => PathBuf::from(x),
        _ => PathBuf::from(std::env::var_os("HOME")?).join(".cache"),
    };
    Some(base.join("th").join("cubin"))
}

/// `<module>-sm<MM>-<key>.cubin`.
fn file_name(m: &Module, arch: (i32, i32), nvrtc_version: (i32, i32)) -> String {
    let mut h = Fnv::default();
    h.add(m.source.as_bytes());
    for o in options(arch) {
        h.add(o.as_bytes());
    }
    h.add(format!("nvrtc {}.{}", nvrtc_version.0, nvrtc_version.1).as_bytes());
    format!("{}-sm{}{}-{:016x}.cubin", m.name, arch.0, arch.1, h.0)
}

/// 64-bit FNV-1a: stable across Rust versions and platforms (std's hasher is not), which a
/// key that outlives the process needs. Each part is followed by a 0xff separator.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    fn add(&mut self, bytes: &[u8]) {
        for &b in bytes.iter().chain([0xffu8].iter()) {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(source: &'static str) -> Module {
        Module { name: "float", source, register_budget: 64 }
    }

    #[test]
    fn the_key_changes_with_everything_the_cubin_depends_on() {
        let (a, b) = (module("kernel a"), module("kernel b"));
        let base = file_name(&a, (8, 0), (13, 0));
        assert!(base.starts_with("float-sm80-") && base.ends_with(".cubin"), "{base}");
        assert_eq!(base, file_name(&a, (8, 0), (13, 0)), "stable");
        assert_ne!(base, file_name(&b, (8, 0), (13, 0)), "source");
        assert_ne!(base, file_name(&a, (9, 0), (13, 0)), "architecture");
        assert_ne!(base, file_name(&a, (8, 0), (13, 1)), "NVRTC version");
    }

    #[test]
    fn fnv_matches_its_reference_value() {
        // FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c; with the separator byte appended:
        let mut h = Fnv::default();
        for &b in b"a" {
            h.0 ^= b as u64;
            h.0 = h.0.wrapping_mul(0x0100_0000_01b3);
        }
        assert_eq!(h.0, 0xaf63_dc4c_8601_ec8c);
    }
}
