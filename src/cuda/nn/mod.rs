//! The launch side of THCUNN's layer kernels that take their own parameter struct (one file per
//! family, each beside its `kernels/nn_<family>.cuh`); the layers that launch them are `nn::`.

pub mod rnn;
