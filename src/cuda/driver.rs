//! A real GPU through cudarc (to be written).
