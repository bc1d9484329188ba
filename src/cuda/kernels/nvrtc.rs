//! NVRTC: a module's CUDA C to a CUBIN for one real architecture, through cudarc's raw
//! bindings (its safe wrapper has no CUBIN getter). libnvrtc is loaded at first use; cudarc
//! finds it by name only, so `TH_NVRTC_DIR` may name the folder of `libnvrtc.so.13` (the PyPI
//! wheel, `scripts/nvrtc.sh`): both of its libraries are then opened by absolute path first and
//! kept open, and cudarc's later lookups by soname find them. cudarc tries the unversioned
//! `libnvrtc.so` before `libnvrtc.so.13`, so another toolkit's NVRTC can win the lookup: the
//! loaded library's version is checked once (`check_major`), and anything but NVRTC 13 is a
//! `TH_ERR_NO_CUDA` error that says how to point th at the right one.

use super::Module;
use crate::core::error::{Code, Error, Result};

/// A compiled module: the CUBIN and NVRTC's log (ptxas's verbose report included).
#[derive(Clone, Debug)]
pub struct Compiled {
    pub cubin: Vec<u8>,
    pub log: String,
}

/// The options every module is compiled with. `--fmad=false`: no multiply-add is fused, so
/// float results have the CPU engine's bits (it never fuses). ptxas reports each kernel's
/// resources (`resource_report`); a spill is not an error here, where another NVRTC version
/// spilling one kernel would disable a whole dtype, but the NVRTC test gate refuses any.
pub fn options(arch: (i32, i32)) -> Vec<String> {
    let mut v = vec![format!("--gpu-architecture=sm_{}{}", arch.0, arch.1)];
    for o in ["--std=c++17", "-default-device", "--fmad=false", "--ptxas-options=--verbose"] {
        v.push(o.to_string());
    }
    v
}

/// Compiles `m` to a CUBIN for `sm_<major><minor>`. No libnvrtc: `TH_ERR_NO_CUDA`; a compile
/// error: `TH_ERR_CUDA` with NVRTC's log.
pub fn compile(m: &Module, arch: (i32, i32)) -> Result<Compiled> {
    imp::compile(m, arch)
}

/// NVRTC's (major, minor) version.
pub fn version() -> Result<(i32, i32)> {
    imp::version()
}

/// The NVRTC major version the kernel sources, the compile options and the shipped CUBINs are
/// made for.
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
const NVRTC_MAJOR: i32 = 13;

/// Whether the loaded NVRTC, version `found`, is the one th needs; else why not.
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
fn check_major(found: (i32, i32)) -> std::result::Result<(), String> {
    if found.0 == NVRTC_MAJOR {
        return Ok(());
    }
    Err(format!(
        "the libnvrtc found is NVRTC {}.{}, but th's kernels need CUDA {NVRTC_MAJOR}'s (cudarc looks for \
         libnvrtc.so before libnvrtc.so.{NVRTC_MAJOR}, so another toolkit's came first): set TH_NVRTC_DIR to the \
         folder of libnvrtc.so.{NVRTC_MAJOR}",
        found.0, found.1
    ))
}

#[cfg(not(feature = "cuda"))]
mod imp {
    use super::*;
    pub fn compile(_m: &Module, _arch: (i32, i32)) -> Result<Compiled> {
        Err(Error::new(Code::TH_ERR_NO_CUDA, "built without CUDA"))
    }
    pub fn version() -> Result<(i32, i32)> {
        Err(Error::new(Code::TH_ERR_NO_CUDA, "built without CUDA"))
    }
}

#[cfg(feature = "cuda")]
mod imp {
    use super::*;
    use cudarc::nvrtc::sys;
    use std::ffi::{CString, c_char};
    use std::sync::OnceLock;

    /// Makes libnvrtc loadable by cudarc: with `TH_NVRTC_DIR`, opens `libnvrtc-builtins.so.13.*`
    /// (which libnvrtc opens by name) and `libnvrtc.so.13` there, once, and never closes them.
    /// Then checks that cudarc can load it (its calls panic otherwise).
    pub fn load() -> Result<()> {
        static PRELOAD: OnceLock<std::result::Result<(), String>> = OnceLock::new();
        let pre = PRELOAD.get_or_init(|| {
            let Some(dir) = std::env::var_os("TH_NVRTC_DIR") else { return Ok(()) };
            // The builtins by pattern (libnvrtc-builtins.so.13.<minor>: the minor follows the
            // toolkit), then libnvrtc itself.
            let builtins = std::fs::read_dir(&dir)
                .map_err(|e| format!("TH_NVRTC_DIR={}: {e}", std::path::Path::new(&dir).display()))?
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| n.starts_with("libnvrtc-builtins.so.13"))
                .min()
                .ok_or_else(|| {
                    format!("no libnvrtc-builtins.so.13.* in TH_NVRTC_DIR={}", std::path::Path::new(&dir).display())
                })?;
            for lib in [builtins.as_str(), "libnvrtc.so.13"] {
                let path = std::path::Path::new(&dir).join(lib);
                let c = CString::new(path.as_os_str().as_encoded_bytes()).map_err(|_| "TH_NVRTC_DIR contains NUL")?;
                // SAFETY: a NUL-terminated path; the handle is deliberately leaked (kept loaded).
                let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
                if h.is_null() {
                    // SAFETY: dlerror returns NULL or a NUL-terminated message.
                    let e = unsafe { libc::dlerror() };
                    let why = if e.is_null() {
                        String::new()
                    } else {
                        // SAFETY: checked non-NULL above.
                        unsafe { std::ffi::CStr::from_ptr(e) }.to_string_lossy().into_owned()
                    };
                    return Err(format!("cannot load {} (TH_NVRTC_DIR): {why}", path.display()));
                }
            }
            Ok(())
        });
        if let Err(e) = pre {
            return Err(Error::new(Code::TH_ERR_NO_CUDA, e.clone()));
        }
        // SAFETY: only tries to open the library (never panics, unlike the calls it guards).
        if !unsafe { sys::is_culib_present() } {
            return Err(Error::new(
                Code::TH_ERR_NO_CUDA,
                "libnvrtc.so.13 not found (install CUDA 13's NVRTC, or set TH_NVRTC_DIR to the folder holding it; \
                 scripts/nvrtc.sh installs the PyPI wheel)",
            ));
        }
        static MAJOR: OnceLock<std::result::Result<(), String>> = OnceLock::new();
        let major = MAJOR.get_or_init(|| {
            let (mut major, mut minor) = (0, 0);
            // SAFETY: two out-parameters; the library is present (checked above).
            let rc = unsafe { sys::nvrtcVersion(&mut major, &mut minor) };
            if rc != sys::nvrtcResult::NVRTC_SUCCESS {
                return Err(format!("nvrtcVersion failed ({rc:?})"));
            }
            check_major((major, minor))
        });
        major.clone().map_err(|e| Error::new(Code::TH_ERR_NO_CUDA, e))
    }

    /// Destroys the program when dropped.
    struct Program(sys::nvrtcProgram);
    impl Drop for Program {
        fn drop(&mut self) {
            // SAFETY: a program from nvrtcCreateProgram, destroyed once.
            unsafe { sys::nvrtcDestroyProgram(&mut self.0) };
        }
    }

    fn check(r: sys::nvrtcResult, what: &str) -> Result<()> {
        if r == sys::nvrtcResult::NVRTC_SUCCESS {
            return Ok(());
        }
        // SAFETY: nvrtcGetErrorString returns a static NUL-terminated string.
        let s = unsafe { std::ffi::CStr::from_ptr(sys::nvrtcGetErrorString(r)) };
        Err(Error::new(Code::TH_ERR_CUDA, format!("NVRTC {what}: {}", s.to_string_lossy())))
    }

    pub fn version() -> Result<(i32, i32)> {
        load()?;
        let (mut major, mut minor) = (0, 0);
        // SAFETY: two out-parameters.
        check(unsafe { sys::nvrtcVersion(&mut major, &mut minor) }, "nvrtcVersion")?;
        Ok((major, minor))
    }

    pub fn compile(m: &Module, arch: (i32, i32)) -> Result<Compiled> {
        load()?;
        let src = CString::new(m.source).map_err(|_| Error::internal("kernel source contains NUL"))?;
        let name = CString::new(format!("{}.cu", m.name)).map_err(|_| Error::internal("module name contains NUL"))?;
        let mut raw: sys::nvrtcProgram = std::ptr::null_mut();
        let (null, no_names) = (std::ptr::null(), std::ptr::null());
        // SAFETY: valid NUL-terminated strings, no headers.
        let rc = unsafe { sys::nvrtcCreateProgram(&mut raw, src.as_ptr(), name.as_ptr(), 0, null, no_names) };
        check(rc, "nvrtcCreateProgram")?;
        let prog = Program(raw);
        let opts = options(arch)
            .into_iter()
            .map(CString::new)
            .collect::<std::result::Result<Vec<CString>, _>>()
            .map_err(|_| Error::internal("NVRTC option contains NUL"))?;
        let ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
        // SAFETY: `ptrs` holds opts.len() valid strings that outlive the call.
        let rc = unsafe { sys::nvrtcCompileProgram(prog.0, ptrs.len() as i32, ptrs.as_ptr()) };
        let log = program_log(&prog)?;
        if rc != sys::nvrtcResult::NVRTC_SUCCESS {
            return Err(Error::new(
                Code::TH_ERR_CUDA,
                format!("NVRTC could not compile kernel module '{}' for sm_{}{}:\n{log}", m.name, arch.0, arch.1),
            ));
        }
        let mut size = 0usize;
        // SAFETY: a compiled program; `size` receives the CUBIN's length.
        check(unsafe { sys::nvrtcGetCUBINSize(prog.0, &mut size) }, "nvrtcGetCUBINSize")?;
        let mut cubin = vec![0u8; size];
        // SAFETY: `cubin` has the `size` bytes NVRTC writes.
        check(unsafe { sys::nvrtcGetCUBIN(prog.0, cubin.as_mut_ptr() as *mut c_char) }, "nvrtcGetCUBIN")?;
        Ok(Compiled { cubin, log })
    }

    fn program_log(prog: &Program) -> Result<String> {
        let mut size = 0usize;
        // SAFETY: a live program; `size` receives the log's length (its NUL included).
        check(unsafe { sys::nvrtcGetProgramLogSize(prog.0, &mut size) }, "nvrtcGetProgramLogSize")?;
        let mut buf = vec![0u8; size.max(1)];
        // SAFETY: `buf` has the `size` bytes NVRTC writes.
        check(unsafe { sys::nvrtcGetProgramLog(prog.0, buf.as_mut_ptr() as *mut c_char) }, "nvrtcGetProgramLog")?;
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        Ok(String::from_utf8_lossy(&buf[..end]).into_owned())
    }
}

/// Whether libnvrtc can be loaded (after `TH_NVRTC_DIR`'s preload): what `compile` needs.
pub fn available() -> bool {
    #[cfg(feature = "cuda")]
    {
        imp::load().is_ok()
    }
    #[cfg(not(feature = "cuda"))]
    {
        false
    }
}

/// Each kernel's (name, registers, spill bytes: stores + loads) from ptxas's verbose report in a
/// compile log, in the log's order.
pub fn resource_report(log: &str) -> Vec<(String, u32, u32)> {
    let mut out: Vec<(String, u32, u32)> = Vec::new();
    // The entry being reported: ptxas prints "Compiling entry function 'k'", then
    // "Function properties for k" (stack and spills), then "Used N registers".
    let mut entry: Option<usize> = None;
    let number_before = |line: &str, word: &str| -> Option<u32> {
        let at = line.find(word)?;
        line[..at].split_whitespace().last()?.parse().ok()
    };
    for line in log.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            let name = rest.split('\'').next().unwrap_or("").to_string();
            out.push((name, 0, 0));
            entry = Some(out.len() - 1);
        } else if let Some(i) = entry {
            if let Some(r) = number_before(line, " registers") {
                out[i].1 = r;
            }
            let spills = number_before(line, " bytes spill stores").unwrap_or(0)
                + number_before(line, " bytes spill loads").unwrap_or(0);
            out[i].2 += spills;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_nvrtc_13_is_accepted() {
        assert!(check_major((13, 0)).is_ok() && check_major((13, 2)).is_ok());
        let e = check_major((12, 8)).unwrap_err();
        assert!(e.contains("NVRTC 12.8") && e.contains("TH_NVRTC_DIR"), "{e}");
    }
}
