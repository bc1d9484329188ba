//! CUDA C kernel sources and their compilation (to be written).
