//! The fused GRU and LSTM cells (GRUFused, LSTMFused): THCUNN's kernels, on device tensors for
//! THCUNN and on the CPU for THNN (torch7's THNN versions only abort).

use super::*;
use crate::nn::rnn;

macro_rules! rnn_api {
    (@$family:ident $R:ident, $T:ty, $S:ty, $A:ty, $I:ty) => { pastey::paste! { nn_fn! {
        /// `hy` (resized like `hx`) = one GRU step from the gate pre-activations `input` and
        /// `hidden` (rows of 3H: reset, update, new) and the biases (3H, may be NULL); `storage`
        /// (resized: last size times 5) keeps what `updateGradInput` needs.
        fn [<THNN_ $R GRUFused_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as view, hidden: *mut [<TH $R Tensor>] as view, bias1: *mut [<TH $R Tensor>] as opt_view, bias2: *mut [<TH $R Tensor>] as opt_view, hx: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, storage: *mut [<TH $R Tensor>] as obj) {
            rnn::gru_update_output::<$T>(&input, &hidden, bias1.as_ref(), bias2.as_ref(), &hx, output, storage)
        }
        /// The gradients of the input gates (`gradInInput`), the hidden gates (`gradInHidden`),
        /// both resized to 3H rows, and of `hx` (`gradInputHx`) from `gradOutput` and `storage`.
        fn [<THNN_ $R GRUFused_updateGradInput>](state: *mut $S, grad_in_input: *mut [<TH $R Tensor>] as obj, grad_in_hidden: *mut [<TH $R Tensor>] as obj, grad_output: *mut [<TH $R Tensor>] as view, grad_input_hx: *mut [<TH $R Tensor>] as obj, storage: *mut [<TH $R Tensor>] as view) {
            rnn::gru_update_grad_input::<$T>(grad_in_input, grad_in_hidden, &grad_output, grad_input_hx, &storage)
        }
        /// `cy = f * cx + i * g`, `hy = o * tanh(cy)` (resized like `cx`) from the gate
        /// pre-activations `input` and `hidden` (rows of 4H: input, forget, cell, output) and
        /// the biases (4H, may be NULL); `input` is overwritten with the activated gates.
        fn [<THNN_ $R LSTMFused_updateOutput>](state: *mut $S, input: *mut [<TH $R Tensor>] as obj, hidden: *mut [<TH $R Tensor>] as view, bias1: *mut [<TH $R Tensor>] as opt_view, bias2: *mut [<TH $R Tensor>] as opt_view, cell: *mut [<TH $R Tensor>] as view, output: *mut [<TH $R Tensor>] as obj, output_cell: *mut [<TH $R Tensor>] as obj) {
            rnn::lstm_update_output::<$T>(input, &hidden, bias1.as_ref(), bias2.as_ref(), &cell, output, output_cell)
        }
        /// `gradInGates` (resized to 4H rows: the gradient of the gate pre-activations) and
        /// `gradInputCx` (the gradient of `cx`) from the activated gates `storage`, `cx`, `cy`
        /// and the gradients of `hy` and `cy`.
        fn [<THNN_ $R LSTMFused_updateGradInput>](state: *mut $S, storage: *mut [<TH $R Tensor>] as view, grad_in_gates: *mut [<TH $R Tensor>] as obj, cx: *mut [<TH $R Tensor>] as view, cy: *mut [<TH $R Tensor>] as view, grad_output: *mut [<TH $R Tensor>] as view, grad_output_cell: *mut [<TH $R Tensor>] as view, grad_input_cx: *mut [<TH $R Tensor>] as obj) {
            rnn::lstm_update_grad_input::<$T>(&storage, grad_in_gates, &cx, &cy, &grad_output, &grad_output_cell, grad_input_cx)
        }
    } } };
}
nn_families!(rnn_api);
