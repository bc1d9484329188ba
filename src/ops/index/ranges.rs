//! Ranges (§4.12 arange/range, §4.18 linspace/logspace).

use super::*;

/// `accreal` of the range functions: i64 (integer types and Bool), f64 (Float, Double),
/// f32 (Half, BFloat16).
pub trait RangeAcc: Copy + PartialOrd + std::fmt::Display {
    fn is_finite(self) -> bool;
    fn is_zero(self) -> bool;
    fn positive(self) -> bool;
    /// Number of points of `[xmin, xmax]` (`inclusive`) or `[xmin, xmax)` at `step`
    /// (`step` nonzero, `xmax - xmin` of `step`'s sign or zero).
    fn count(xmin: Self, xmax: Self, step: Self, inclusive: bool) -> Option<u64>;
    /// `xmin + i * step`, computed in this type.
    fn nth(xmin: Self, step: Self, i: u64) -> Prim;
}

impl RangeAcc for i64 {
    fn is_finite(self) -> bool {
        true
    }
    fn is_zero(self) -> bool {
        self == 0
    }
    fn positive(self) -> bool {
        self > 0
    }
    fn count(xmin: i64, xmax: i64, step: i64, inclusive: bool) -> Option<u64> {
        let (diff, step) = (xmax as i128 - xmin as i128, step as i128);
        let q = diff / step;
        let n = if inclusive || diff % step != 0 { q + 1 } else { q };
        u64::try_from(n).ok()
    }
    fn nth(xmin: i64, step: i64, i: u64) -> Prim {
        Prim::I((xmin as i128 + i as i128 * step as i128) as i64)
    }
}

macro_rules! float_range_acc {
    ($($F:ty),*) => {$(
        impl RangeAcc for $F {
            fn is_finite(self) -> bool {
                <$F>::is_finite(self)
            }
            fn is_zero(self) -> bool {
                self == 0.0
            }
            fn positive(self) -> bool {
                self > 0.0
            }
            fn count(xmin: $F, xmax: $F, step: $F, inclusive: bool) -> Option<u64> {
                let q = ((xmax - xmin) / step) as f64;
                let n = if inclusive { q.floor() + 1.0 } else { q.ceil() };
                if !(0.0..9.0e15).contains(&n) {
                    return None;
                }
                Some(n as u64)
            }
            fn nth(xmin: $F, step: $F, i: u64) -> Prim {
                Prim::F((xmin + i as $F * step) as f64)
            }
        }
    )*};
}
// The native floats are also the accumulators of every float dtype (Half ranges run in f32).
crate::th_dtypes!(float_range_acc; float);

/// `r` (resized to 1-D only when its element count differs) = `f(0), f(1), ..., f(n-1)` in
/// row-major order.
fn fill_sequence<T: Scalar>(r: &Tensor<T>, n: u64, f: impl Fn(u64) -> T) -> Result<()> {
    let len = i64::try_from(n).map_err(|_| Error::size(format!("{n} elements do not fit in int64_t")))?;
    let cur = r.with_view(|v| v.numel());
    let out = if cur as u64 == n { r.view() } else { resize_out(r, &[len])? };
    if n == 0 {
        return Ok(());
    }
    // Computed on the host (a function of the position only), then one copy to `out`'s device.
    let data: Vec<T> = crate::core::limits::try_collect(n as usize, (0..n).map(f))?;
    copy(&out, &View::from_slice(&data, &[len])?)
}

/// TH's `range` (`inclusive`: `[xmin, xmax]`) and `arange` (`[xmin, xmax)`): `xmin + i*step`
/// computed in `accreal`, then cast to the element type. `r` keeps its shape when it already
/// has as many elements as the result.
pub fn range<T: Scalar, A: RangeAcc>(r: &Tensor<T>, xmin: A, xmax: A, step: A, inclusive: bool) -> Result<()> {
    if !xmin.is_finite() || !xmax.is_finite() {
        return Err(Error::invalid(format!("range bounds must be finite, got {xmin} and {xmax}")).at_arg(2));
    }
    if !step.is_finite() || step.is_zero() {
        return Err(Error::invalid(format!("step must be a nonzero finite number, got {step}")).at_arg(4));
    }
    if (step.positive() && xmax < xmin) || (!step.positive() && xmax > xmin) {
        return Err(Error::invalid(format!(
            "upper bound {xmax} and lower bound {xmin} are inconsistent with the sign of step {step}"
        ))
        .at_arg(3));
    }
    let n = A::count(xmin, xmax, step, inclusive)
        .ok_or_else(|| Error::size(format!("range({xmin}, {xmax}, {step}) has too many elements")).at_arg(4))?;
    fill_sequence(r, n, |i| T::from_prim(A::nth(xmin, step, i)))
}

fn check_points<T: Float>(a: T, b: T, n: i64) -> Result<u64> {
    if n > 1 || (n == 1 && a == b) {
        return Ok(n as u64);
    }
    Err(Error::size(format!("invalid number of points {n} (need n > 1, or n == 1 with a == b)")).at_arg(4))
}

/// `n` points from `a` to `b` inclusive: `a + i*(b-a)/(n-1)` (computed in double).
pub fn linspace<T: Float>(r: &Tensor<T>, a: T, b: T, n: i64) -> Result<()> {
    let cnt = check_points(a, b, n)?;
    let (x, y) = (a.to_f64(), b.to_f64());
    let den = (n - 1).max(1) as f64;
    fill_sequence(r, cnt, |i| T::from_f64(x + i as f64 * (y - x) / den))
}

/// `10^linspace(a, b, n)` (computed in double).
pub fn logspace<T: Float>(r: &Tensor<T>, a: T, b: T, n: i64) -> Result<()> {
    let cnt = check_points(a, b, n)?;
    let (x, y) = (a.to_f64(), b.to_f64());
    let den = (n - 1).max(1) as f64;
    fill_sequence(r, cnt, |i| T::from_f64(10f64.powf(x + i as f64 * (y - x) / den)))
}
