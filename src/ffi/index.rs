//! (filled in by the index work; see issue 3)
