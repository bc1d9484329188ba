//! Device storages (to be written).
