//! The CPU emulator of a CUDA device (to be written).
