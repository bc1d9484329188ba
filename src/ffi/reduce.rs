//! (filled in by the reduce work; see issue 3)
