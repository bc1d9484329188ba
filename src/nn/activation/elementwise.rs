//! The elementwise activations on th's pointwise engine (see the family's conventions in
//! [`super`]).

use super::{ActReal, backward, check_nelement, forward, input_backward, paired, real, value};
use crate::core::error::Result;
use crate::core::tensor::{Tensor, View};
use crate::cuda::launch::Call;
use crate::nn::{NnElem, check, one, zero};
use crate::ops::num::{Num, Real};
use crate::ops::{self, arith};

/// `Abs_updateOutput`: `output = |input|` (TH's `abs`).
pub fn abs_update_output<T: NnElem>(input: &View<T>, output: &Tensor<T>) -> Result<()> {
    arith::abs(output, input)
}

/// `Abs_updateGradInput`: `gradInput = gradOutput * (input >= 0 ? 1 : -1)` (torch7's sign,
/// +1 at 0).
pub fn abs_update_grad_input<T: NnElem>(
    input: &View<T>,
    grad_output: &Tensor<T>,
    grad_input: &Tensor<T>,
) -> Result<()> {
    let k = Call::new("nnAbsBack");
    input_backward::<true, T>(input, grad_output, grad_input, false, k, |x, g| if x >= zero(x) { g } else { -g })
}

/// `ELU_updateOutput`: `x > 0 ? x : alpha * (exp(x) - 1)`.
pub fn elu_update_output<T: NnElem>(input: &Tensor<T>, output: &Tensor<T>, alpha: f64, inplace: bool) -> Result<()> {
    let a = real::<T>(alpha);
    let k = Call::new("nnElu").value(value::<T>(alpha));
    forward::<false, T>(input, output, inplace, k, move |x| if x <= zero(x) { x.expm1() * a } else { x })
}

/// `ELU_updateGradInput`: from `output`: `output > 0 ? g : g * (output + alpha)`.
pub fn elu_update_grad_input<T: NnElem>(
    input: &View<T>,
    grad_output: &Tensor<T>,
    grad_input: &Tensor<T>,
    output: &View<T>,
    alpha: f64,
    inplace: bool,
) -> Result<()> {
    let g = grad_output.view();
    check_nelement(&g, input, "input")?;
    check::same_numel(output, 5, "output", &g, "gradOutput")?;
    let a = real::<T>(alpha);
    let k = Call::new("nnEluBack").value(value::<T>(alpha));
    backward::<true, T>(output.clone(), &output.sizes, grad_output, grad_input, inplace, k, move |y, g| {
        if y <= zero(y) { g * (y + a) } else { g }
    })
}

/// `HardShrink_updateOutput`: `|x| > lambda ? x : 0`.
pub fn hard_shrink_update_output<T: NnElem>(input: &Tensor<T>, output: &Tensor<T>, lambda: f64) -> Result<()> {
    let l = real::<T>(lambda);
    let k = Call::new("nnHardShrink").value(value::<T>(lambda));
    forward::<true, T>(input, output, false, k, move |x| if x > l || x < -l { x } else { zero(x) })
}

/// `HardShrink_updateGradInput`: `|x| > lambda ? g : 0`.
pub fn hard_shrink_update_grad_input<T: NnElem>(
    input: &View<T>,
    grad_output: &Tensor<T>,
    grad_input: &Tensor<T>,
    lambda: f64,
) -> Result<()> {
    shrink_grad(input, grad_output, grad_input, lambda)
}

/// `HardTanh_updateOutput`: `x` clamped to `[min_val, max_val]`.
pub fn hard_tanh_update_output<T: NnElem>(
    input: &Tensor<T>,
    output: &Tensor<T>,
    min_val: f64,
    max_val: f64,
    inplace: bool,
) -> Result<()> {
    let (lo, hi) = (real::<T>(min_val), real::<T>(max_val));
    let k = Call::new("nnHardTanh").value(value::<T>(min_val)).value(value::<T>(max_val));
    forward::<true, T>(input, output, inplace, k, move |x| {
        if x < lo {
            lo
        } else if x > hi {
            hi
        } else {
            x
        }
    })
}

/// `HardTanh_updateGradInput`: `min_val < x < max_val ? g : 0`.
pub fn hard_tanh_update_grad_input<T: NnElem>(
    input: &View<T>,
    grad_output: &Tensor<T>,
    grad_input: &Tensor<T>,
    min_val: f64,
    max_val: f64,
    inplace: bool,
) -> Result<()> {
    let (lo, hi) = (real::<T>(min_val), real::<T>(max_val));
    let k = Call::new("nnHardTanhBack").value(value::<T>(min_val)).value(value::<T>(max_val));
    input_backward::<true, T>(
        input,
        grad_output,
        grad_input,
        inplace,
        k,
        move |x, g| {
            if x <= lo || x >= hi { zero(x) } else { g }
        },
    )
}

/// `LeakyReLU_updateOutput`: `x > 0 ? x : negval * x`.
pub fn leaky_relu_update_output<T: NnElem>(
    input: &Tensor<T>,
    output: &Tensor<T>,
    negval: f64,
    inplace: bool,
) -> Result<()> {
    let s = real::<T>(negval);
    let k = Call::new("nnLeakyRelu").value(value::<T>(negval));
    forward::<true, T>(input, output, inplace, k, move |x| if x > zero(x) { x } else { x * s })
}

/// `LeakyReLU_updateGradInput`: `x > 0 ? g : negval * g`.
pub fn leaky_relu_update_grad_input<T: NnElem>(
    input: &View<T>,
    grad_output: &Tensor<T>,
    grad_input: &Tensor<T>,
    negval: f64,
    inplace: bool,
) -> Result<()> {
    let s = real::<T>(negval);
    let k = Call::new("nnLeakyReluBack").value(value::<T>(negval));
    input_backward::<true, T>(
        input,
        grad_output,
        grad_input,
        inplace,
        k,
        move |x, g| if x > zero(x) { g } else { g * s },
    )
}

/// `LogSigmoid_updateOutput`: `log(1 / (1 + exp(-x)))`, computed as `min(x, 0) - log1p(exp(-|x|))`.
/// th ignores `buffer` (torch7 stores `1 + exp(-|x|)`-like terms there for the backward pass;
/// th's backward recomputes from `input`).
pub fn log_sigmoid_update_output<T: NnElem>(input: &Tensor<T>, output: &Tensor<T>) -> Result<()> {
    forward::<false, T>(input, output, false, Call::new("nnLogSigmoid"), |x| {
        let m = if x < zero(x) { x } else { zero(x) };
        m - (-x.abs()).exp().ln_1p()
    })
}

/// `LogSigmoid_updateGradInput`: `g * (1 - sigmoid(x))` (`buffer` ignored).
pub fn log_sigmoid_update_grad_input<T: NnElem>(
    input: &View<T>,
    grad_output: &Tensor<T>,
    grad_input: &Tensor<T>,
) -> Result<()> {
    input_backward::<false, T>(input, grad_output, grad_input, false, Call::new("nnLogSigmoidBack"), |x, g| {
        let e = (-x.abs()).exp();
        let d = if x < zero(x) { one(x) } else { e };
        g * d / (one(x) + e)
    })
}

/// `Sigmoid_updateOutput`: TH's `sigmoid`.
pub fn sigmoid_update_output<T: NnElem>(input: &View<T>, output: &Tensor<T>) -> Result<()> {
    arith::unary(output, input, arith::Unary::Sigmoid)
}

/// `Sigmoid_updateGradInput`: from `output`: `g * (1 - y) * y` (`input` is not read).
pub fn sigmoid_update_grad_input<T: NnElem>(
    grad_output: &Tensor<T>,
    grad_input: &Tensor<T>,
    output: &View<T>,
) -> Result<()> {
    check::same_numel(&grad_output.view(), 3, "gradOutput", output, "output")?;
    let k = Call::new("nnSigmoidBack");
    backward::<true, T>(output.clone(), &output.sizes, grad_output, grad_input, false, k, |y, g| g * (one(y) - y) * y)
}

/// `SoftPlus_updateOutput`: `x * beta > threshold ? x : log1p(exp(beta * x)) / beta`.
pub fn soft_plus_update_output<T: NnElem>(
    input: &Tensor<T>,
    output: &Tensor<T>,
    beta: f64,
    threshold: f64,
) -> Result<()> {
    let (b, t) = (real::<T>(beta), real::<T>(threshold));
    let k = Call::new("nnSoftPlus").value(value::<T>(beta)).value(value::<T>(threshold));
    forward::<false, T>(input, output, false, k, move |x| if x * b > t { x } else { (x * b).exp().ln_1p() / b })
}

/// `SoftPlus_updateGradInput`: `x * beta > threshold ? g : g * (1 - exp(-beta * y))` (`y`:
/// output; `1 - exp(-beta * y)` is `sigmoid(beta * x)`, torch7's `(z - 1) / z` with `z =
/// exp(beta * y)`, computed as `-expm1`). The branch tests `input`, as the forward pass does
/// (torch7 tests `output * beta`, which differs from the derivative just below the threshold).
pub fn soft_plus_update_grad_input<T: NnElem>(
    input: &View<T>,
    grad_output: &Tensor<T>,
    grad_input: &Tensor<T>,
    output: &View<T>,
    beta: f64,
    threshold: f64,
) -> Result<()> {
    let g = grad_output.view();
    check_nelement(&g, input, "input")?;
    check::same_numel(output, 5, "output", &g, "gradOutput")?;
    let (b, t) = (real::<T>(beta), real::<T>(threshold));
    let k = Call::new("nnSoftPlusBack").value(value::<T>(beta)).value(value::<T>(threshold));
    let (x, g) = (paired(input.clone(), &output.sizes)?, paired(g, &output.sizes)?);
    ops::pointwise3(grad_input, &x, output, &g, k, move |x: T, y: T, g: T| {
        let (x, y, g) = (x.to_r(), y.to_r(), g.to_r());
        T::from_r(if x * b > t { g } else { -g * (-(y * b)).expm1() })
    })
}

/// `SoftShrink_updateOutput`: `x > lambda ? x - lambda : x < -lambda ? x + lambda : 0`.
pub fn soft_shrink_update_output<T: NnElem>(input: &Tensor<T>, output: &Tensor<T>, lambda: f64) -> Result<()> {
    let l = real::<T>(lambda);
    let k = Call::new("nnSoftShrink").value(value::<T>(lambda));
    forward::<true, T>(input, output, false, k, move |x| {
        if x > l {
            x - l
        } else if x < -l {
            x + l
        } else {
            zero(x)
        }
    })
}

/// `SoftShrink_updateGradInput`: `|x| > lambda ? g : 0`.
pub fn soft_shrink_update_grad_input<T: NnElem>(
    input: &View<T>,
    grad_output: &Tensor<T>,
    grad_input: &Tensor<T>,
    lambda: f64,
) -> Result<()> {
    shrink_grad(input, grad_output, grad_input, lambda)
}

/// The gradient of both shrinks: `|x| > lambda ? g : 0` (their outputs differ, their slopes
/// do not).
fn shrink_grad<T: NnElem>(input: &View<T>, grad_output: &Tensor<T>, grad_input: &Tensor<T>, lambda: f64) -> Result<()> {
    let l = real::<T>(lambda);
    let k = Call::new("nnShrinkBack").value(value::<T>(lambda));
    input_backward::<true, T>(
        input,
        grad_output,
        grad_input,
        false,
        k,
        move |x, g| {
            if x > l || x < -l { g } else { zero(x) }
        },
    )
}

/// `Sqrt_updateOutput`: TH's `sqrt` (`eps` is unused, as in torch7).
pub fn sqrt_update_output<T: NnElem>(input: &View<T>, output: &Tensor<T>) -> Result<()> {
    arith::unary(output, input, arith::Unary::Sqrt)
}

/// `Sqrt_updateGradInput`: from `output`: `y == 0 ? 0 : g / (2 y)`, shaped like `input`.
pub fn sqrt_update_grad_input<T: NnElem>(
    input: &View<T>,
    grad_output: &Tensor<T>,
    grad_input: &Tensor<T>,
    output: &View<T>,
) -> Result<()> {
    check::same_shape(&grad_output.view(), 3, "gradOutput", output, "output")?;
    check::same_numel(output, 5, "output", input, "input")?;
    let half = real::<T>(0.5);
    let k = Call::new("nnSqrtBack");
    backward::<true, T>(output.clone(), &input.sizes, grad_output, grad_input, false, k, move |y, g| {
        if y == zero(y) { zero(y) } else { half * (g / y) }
    })
}

/// `Square_updateOutput`: `x * x`.
pub fn square_update_output<T: NnElem>(input: &Tensor<T>, output: &Tensor<T>) -> Result<()> {
    forward::<true, T>(input, output, false, Call::new("nnSquare"), |x| x * x)
}

/// `Square_updateGradInput`: `2 * g * x`.
pub fn square_update_grad_input<T: NnElem>(
    input: &View<T>,
    grad_output: &Tensor<T>,
    grad_input: &Tensor<T>,
) -> Result<()> {
    check::same_shape(&grad_output.view(), 3, "gradOutput", input, "input")?;
    let two = real::<T>(2.0);
    let k = Call::new("nnSquareBack");
    backward::<true, T>(input.clone(), &input.sizes, grad_output, grad_input, false, k, move |x, g| two * g * x)
}

/// `Tanh_updateOutput`: TH's `tanh`.
pub fn tanh_update_output<T: NnElem>(input: &View<T>, output: &Tensor<T>) -> Result<()> {
    arith::unary(output, input, arith::Unary::Tanh)
}

/// `Tanh_updateGradInput`: from `output`: `g * (1 - y^2)` (`input` is not read).
pub fn tanh_update_grad_input<T: NnElem>(
    grad_output: &Tensor<T>,
    grad_input: &Tensor<T>,
    output: &View<T>,
) -> Result<()> {
    check::same_shape(&grad_output.view(), 3, "gradOutput", output, "output")?;
    let k = Call::new("nnTanhBack");
    backward::<true, T>(output.clone(), &output.sizes, grad_output, grad_input, false, k, |y, g| g * (one(y) - y * y))
}

/// `Threshold_updateOutput`: `x <= threshold ? val : x`.
pub fn threshold_update_output<T: NnElem>(
    input: &Tensor<T>,
    output: &Tensor<T>,
    threshold: f64,
    val: f64,
    inplace: bool,
) -> Result<()> {
    let (t, v) = (real::<T>(threshold), real::<T>(val));
    let k = Call::new("nnThreshold").value(value::<T>(threshold)).value(value::<T>(val));
    forward::<true, T>(input, output, inplace, k, move |x| if x <= t { v } else { x })
}

/// `Threshold_updateGradInput`: `x <= threshold ? 0 : g`.
pub fn threshold_update_grad_input<T: NnElem>(
    input: &View<T>,
    grad_output: &Tensor<T>,
    grad_input: &Tensor<T>,
    threshold: f64,
    inplace: bool,
) -> Result<()> {
    let t = real::<T>(threshold);
    let k = Call::new("nnThresholdBack").value(value::<T>(threshold));
    input_backward::<true, T>(input, grad_output, grad_input, inplace, k, move |x, g| if x <= t { zero(x) } else { g })
}
