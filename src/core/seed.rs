//! Seeds from the OS, for every generator the library creates unseeded: the host's
//! `THGenerator_new` (`ops::random`) and each device's Philox generator (`cuda::random`).

/// 64 bits from the OS (`/dev/urandom`, as torch7), else from the standard library's
/// randomly keyed hasher.
pub fn os_seed() -> u64 {
    use std::io::Read;
    let mut b = [0u8; 8];
    if std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut b)).is_ok() {
        return u64::from_ne_bytes(b);
    }
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    h.finish()
}
