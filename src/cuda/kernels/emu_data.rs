//! Test data of the emulator tests: each dtype's sample values and the layouts operands are
//! stored in.

use crate::core::dtype::{Bool, Scalar};
use half::{bf16, f16};

pub const ROWS: usize = 5;
pub const COLS: usize = 9;
pub const N: usize = ROWS * COLS;

pub fn bits<T: Scalar>(v: T) -> u64 {
    let mut b = 0u64;
    // SAFETY: copies size_of::<T>() <= 8 bytes of `v` into `b`.
    unsafe {
        std::ptr::copy_nonoverlapping(&v as *const T as *const u8, &mut b as *mut u64 as *mut u8, size_of::<T>())
    };
    b
}

pub fn is_nan<T: Scalar>(v: T) -> bool {
    matches!(v.to_prim(), crate::core::dtype::Prim::F(x) if x.is_nan())
}

/// A dtype's test values.
pub trait Sample: Scalar + PartialOrd {
    fn samples() -> Vec<Self>;
}

macro_rules! int_samples {
    ($($T:ty),*) => {$(
        impl Sample for $T {
            fn samples() -> Vec<$T> {
                let mut v: Vec<$T> = vec![0, 1, 2, 3, 7, 100, <$T>::MAX, <$T>::MAX - 1, <$T>::MIN, <$T>::MIN.wrapping_add(1)];
                v.extend([1 as $T, 2, 7, 100, 63, 64].map(|x| (0 as $T).wrapping_sub(x)));
                let mut s = 0x9e37_79b9_7f4a_7c15u64;
                while v.len() < 40 {
                    s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    v.push(if v.len() % 2 == 0 { (s >> 58) as $T } else { (s >> 17) as $T });
                }
                v
            }
        }
    )*};
}
int_samples!(u8, i8, i16, i32, i64);

fn float_values() -> Vec<f64> {
    let mut v = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        1.5,
        2.5,
        -2.5,
        3.7,
        -3.7,
        1e-3,
        100.25,
        -1e10,
        1e10,
        7.0,
        -7.0,
        0.3,
        65504.0,
        70000.0,
        1e-7,
        3.0,
        -0.75,
        12.5,
        -100.0,
        -740.0,
        88.5,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        6e-8,
        2.0,
    ];
    let mut s = 12345u64;
    while v.len() < 41 {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        v.push(((s >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 40.0);
    }
    v
}

impl Sample for f32 {
    fn samples() -> Vec<f32> {
        let mut v: Vec<f32> = float_values().iter().map(|&x| x as f32).collect();
        v.extend([f32::MAX, f32::MIN, f32::MIN_POSITIVE, f32::from_bits(1), -f32::from_bits(0x7f)]);
        v
    }
}
impl Sample for f64 {
    fn samples() -> Vec<f64> {
        let mut v = float_values();
        v.extend([f64::MAX, f64::MIN_POSITIVE, f64::from_bits(3), 1e300, -1e-300]);
        v
    }
}
macro_rules! half_samples {
    ($($T:ty: $extra:expr),*) => {$(
        impl Sample for $T {
            fn samples() -> Vec<$T> {
                let mut v: Vec<$T> = float_values().iter().map(|&x| <$T>::from_f64(x)).collect();
                v.extend($extra.map(<$T>::from_bits));
                v
            }
        }
    )*};
}
half_samples!(f16: [0x0001u16, 0x8003, 0x7bff, 0x03ff, 0x0400], bf16: [0x0001u16, 0x8003, 0x7f7f, 0x007f, 0x0080]);
impl Sample for Bool {
    fn samples() -> Vec<Bool> {
        // Any byte can come from C; writes store 0 or 1.
        [0u8, 1, 1, 0, 2, 1, 0, 0, 255, 1, 0].map(Bool).to_vec()
    }
}

/// How an operand of the 5 x 9 shape is stored.
#[derive(Clone, Copy, Debug)]
pub enum Layout {
    Contiguous,
    Transposed,
    /// Every other element of a twice larger buffer.
    Gapped,
    /// One row of 9, stride 0 along the rows.
    Broadcast,
}

impl Layout {
    pub fn strides(self) -> [i64; 2] {
        match self {
            Layout::Contiguous => [COLS as i64, 1],
            Layout::Transposed => [1, ROWS as i64],
            Layout::Gapped => [2 * COLS as i64, 2],
            Layout::Broadcast => [0, 1],
        }
    }
    pub fn at(self, i: usize) -> usize {
        let s = self.strides();
        (i / COLS) * s[0] as usize + (i % COLS) * s[1] as usize
    }
    /// Stores `logical` (row-major), filling gaps with `pad`.
    pub fn store<T: Copy>(self, logical: &[T], pad: T) -> Vec<T> {
        let mut buf = vec![pad; 2 * N];
        for (i, &x) in logical.iter().enumerate() {
            buf[self.at(i)] = x;
        }
        buf
    }
    pub fn load<T: Copy>(self, buf: &[T]) -> Vec<T> {
        (0..N).map(|i| buf[self.at(i)]).collect()
    }
}
