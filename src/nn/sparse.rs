//! LookupTable, IndexLinear, SparseLinear (and its legacy forms).
