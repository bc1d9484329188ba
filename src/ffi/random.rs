//! (filled in by the random work; see issue 3)
