//! A fast hasher and the maps built on it, for the small integer keys of hot paths: a leaf
//! utility of the crate (the pools' stream registries, the fixed-size directory and the
//! memory-history recorder use it), depending on nothing else in the crate.

use std::collections::HashMap;

/// A fast hasher for the small integer keys of the hot path (addresses, stream keys):
/// std's SipHash is DoS-resistant but costs more than the rest of a pool operation, and
/// these keys are not attacker-controlled. FxHash-style mixing plus a final fold, so that
/// both the low bits (bucket index) and the high bits (control byte) vary.
#[derive(Default, Clone, Copy)]
pub(crate) struct FastHasher(u64);

impl std::hash::Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 29)
    }
}

/// A `HashMap` with [`FastHasher`].
pub(crate) type FastMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<FastHasher>>;

/// A `HashSet` with [`FastHasher`].
pub(crate) type FastSet<K> =
    std::collections::HashSet<K, std::hash::BuildHasherDefault<FastHasher>>;
