//! How work is walked, independent of element types and of where memory lives: iteration
//! plans over shapes and strides, the overlap rules, the thread pool, and the choice of
//! backend (`backend`).

pub mod backend;
pub mod overlap;
pub mod parallel;
pub mod plan;
pub mod reduce;
