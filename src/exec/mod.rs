//! How work is walked, independent of element types and of where memory lives: iteration
//! plans over shapes and strides, the overlap rules, and the thread pool.

pub mod overlap;
pub mod parallel;
pub mod plan;
pub mod reduce;
