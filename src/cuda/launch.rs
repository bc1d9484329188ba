//! Launch parameters from the shared geometry (to be written).
