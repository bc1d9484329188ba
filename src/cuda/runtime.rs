//! Devices and the current device/stream (to be written).
