//! Typed inner loops and the instruction-set dispatch.
//!
//! Each loop is written once, generically, as an `#[inline(always)]` body, then compiled three
//! times: plain (x86-64 baseline SSE2 / the target's default), with AVX2+FMA, and with AVX-512;
//! `isa()` picks the best the CPU has, once (`TH_CPU_CAPABILITY=scalar|avx2|avx512` forces one,
//! for tests and benchmarks). Bodies take a contiguous fast path (all strides 1), a
//! broadcast-scalar path (an input stride 0) and a strided path; LLVM vectorizes the first two.

use std::sync::OnceLock;

/// The instruction sets the kernels are compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isa {
    Scalar,
    Avx2,
    Avx512,
}

/// The instruction set in use (chosen once).
pub fn isa() -> Isa {
    static ISA: OnceLock<Isa> = OnceLock::new();
    *ISA.get_or_init(|| {
        let best = detect();
        match std::env::var("TH_CPU_CAPABILITY").as_deref() {
            Ok("scalar") | Ok("default") => Isa::Scalar,
            Ok("avx2") if best != Isa::Scalar => Isa::Avx2,
            _ => best,
        }
    })
}

#[cfg(target_arch = "x86_64")]
fn detect() -> Isa {
    if is_x86_feature_detected!("avx512f")
        && is_x86_feature_detected!("avx512bw")
        && is_x86_feature_detected!("avx512dq")
        && is_x86_feature_detected!("avx512vl")
        && is_x86_feature_detected!("fma")
    {
        Isa::Avx512
    } else if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
        Isa::Avx2
    } else {
        Isa::Scalar
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn detect() -> Isa {
    Isa::Scalar
}

/// Defines `pub unsafe fn $name` dispatching to AVX-512 / AVX2 / plain copies of `$body`.
macro_rules! multiversion {
    ($(#[$m:meta])* fn $name:ident<$($g:ident $(: $b:path)?),*>($($a:ident : $t:ty),*) $(where $($wc:tt)*)? => $body:ident) => {
        $(#[$m])*
        ///
        /// # Safety
        /// The pointers must be valid for `n` elements at the given strides.
        #[inline]
        pub unsafe fn $name<$($g $(: $b)?),*>($($a: $t),*) $(where $($wc)*)? {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,avx2,fma")]
                unsafe fn v512<$($g $(: $b)?),*>($($a: $t),*) $(where $($wc)*)? {
                    // SAFETY: forwarded contract; the CPU has AVX-512 (checked by isa()).
                    unsafe { $body($($a),*) }
                }
                #[target_feature(enable = "avx2,fma")]
                unsafe fn v256<$($g $(: $b)?),*>($($a: $t),*) $(where $($wc)*)? {
                    // SAFETY: forwarded contract; the CPU has AVX2+FMA (checked by isa()).
                    unsafe { $body($($a),*) }
                }
                match isa() {
                    // SAFETY: forwarded contract; isa() only reports features the CPU has.
                    Isa::Avx512 => return unsafe { v512($($a),*) },
                    // SAFETY: as above.
                    Isa::Avx2 => return unsafe { v256($($a),*) },
                    Isa::Scalar => {}
                }
            }
            // SAFETY: forwarded contract.
            unsafe { $body($($a),*) }
        }
    };
}

#[inline(always)]
unsafe fn fill_body<O: Copy, F: Fn() -> O>(n: usize, o: *mut O, so: isize, f: &F) {
    // SAFETY: caller contract: o is valid for n elements at stride so.
    unsafe {
        if so == 1 {
            for i in 0..n {
                o.add(i).write(f());
            }
        } else {
            for i in 0..n as isize {
                o.offset(i * so).write(f());
            }
        }
    }
}

#[inline(always)]
unsafe fn map1_body<O: Copy, A: Copy, F: Fn(A) -> O>(n: usize, o: *mut O, so: isize, a: *const A, sa: isize, f: &F) {
    // SAFETY: caller contract: both pointers valid for n elements at their strides.
    unsafe {
        if so == 1 && sa == 1 {
            for i in 0..n {
                o.add(i).write(f(a.add(i).read()));
            }
        } else {
            for i in 0..n as isize {
                o.offset(i * so).write(f(a.offset(i * sa).read()));
            }
        }
    }
}

#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn map2_body<O: Copy, A: Copy, B: Copy, F: Fn(A, B) -> O>(
    n: usize,
    o: *mut O,
    so: isize,
    a: *const A,
    sa: isize,
    b: *const B,
    sb: isize,
    f: &F,
) {
    // SAFETY: caller contract: all pointers valid for n elements at their strides.
    unsafe {
        if so == 1 && sa == 1 && sb == 1 {
            for i in 0..n {
                o.add(i).write(f(a.add(i).read(), b.add(i).read()));
            }
        } else if so == 1 && sa == 1 && sb == 0 {
            let bv = b.read();
            for i in 0..n {
                o.add(i).write(f(a.add(i).read(), bv));
            }
        } else if so == 1 && sa == 0 && sb == 1 {
            let av = a.read();
            for i in 0..n {
                o.add(i).write(f(av, b.add(i).read()));
            }
        } else {
            for i in 0..n as isize {
                o.offset(i * so).write(f(a.offset(i * sa).read(), b.offset(i * sb).read()));
            }
        }
    }
}

#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn map3_body<O: Copy, A: Copy, B: Copy, C: Copy, F: Fn(A, B, C) -> O>(
    n: usize,
    o: *mut O,
    so: isize,
    a: *const A,
    sa: isize,
    b: *const B,
    sb: isize,
    c: *const C,
    sc: isize,
    f: &F,
) {
    // SAFETY: caller contract: all pointers valid for n elements at their strides.
    unsafe {
        if so == 1 && sa == 1 && sb == 1 && sc == 1 {
            for i in 0..n {
                o.add(i).write(f(a.add(i).read(), b.add(i).read(), c.add(i).read()));
            }
        } else {
            for i in 0..n as isize {
                o.offset(i * so).write(f(a.offset(i * sa).read(), b.offset(i * sb).read(), c.offset(i * sc).read()));
            }
        }
    }
}

multiversion! {
    /// `o[i] = f()`.
    fn fill_run<O: Copy, F: Fn() -> O>(n: usize, o: *mut O, so: isize, f: &F) => fill_body
}
multiversion! {
    /// `o[i] = f(a[i])`.
    fn map1_run<O: Copy, A: Copy, F: Fn(A) -> O>(n: usize, o: *mut O, so: isize, a: *const A, sa: isize, f: &F) => map1_body
}
multiversion! {
    /// `o[i] = f(a[i], b[i])`.
    #[allow(clippy::too_many_arguments)]
    fn map2_run<O: Copy, A: Copy, B: Copy, F: Fn(A, B) -> O>(n: usize, o: *mut O, so: isize, a: *const A, sa: isize, b: *const B, sb: isize, f: &F) => map2_body
}
multiversion! {
    /// `o[i] = f(a[i], b[i], c[i])`.
    #[allow(clippy::too_many_arguments)]
    fn map3_run<O: Copy, A: Copy, B: Copy, C: Copy, F: Fn(A, B, C) -> O>(n: usize, o: *mut O, so: isize, a: *const A, sa: isize, b: *const B, sb: isize, c: *const C, sc: isize, f: &F) => map3_body
}
