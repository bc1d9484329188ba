//! BatchNormalization.
