//! How work is walked on the host: iteration plans over shapes and strides, the overlap rules,
//! the thread pool, the choice of backend (`backend`), the reduction plan (`reduce`) and the
//! host copy (`copy`). Nothing here names a device engine: the op layer (`ops`) picks the
//! engine from the backend and calls a device's itself.

pub mod backend;
pub mod copy;
pub mod overlap;
pub mod parallel;
pub mod plan;
pub mod reduce;
