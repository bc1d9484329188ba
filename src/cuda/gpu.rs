//! The device seam (to be written).
