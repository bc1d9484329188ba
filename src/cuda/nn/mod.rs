//! The launch sides of THCUNN's layer kernels that take their own parameter struct
//! (`kernels/nn_*.cuh`), one file per family; the layers built on them are `nn::<family>`'s
//! device halves.

pub mod conv;
pub mod pool;
pub mod rnn;
pub mod sample;
