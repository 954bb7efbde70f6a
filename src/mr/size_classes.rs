//! Size classes and bin capacities of the caches that keep freed blocks whole for the next
//! request of their size (the pool's per-thread fronts, the arena's block caches): TLSF's
//! classes of 256-byte units, 16 per power of two, for blocks up to [`CACHED_MAX`].

use super::free_index::{mapping_insert, mapping_search};
use super::ALLOCATION_ALIGNMENT;

/// Blocks up to this size are cached.
pub(crate) const CACHED_MAX: usize = 1 << 20;
/// Size classes of blocks up to [`CACHED_MAX`]: class `fl * 16 + sl` for TLSF class
/// `(fl, sl)`.
pub(crate) const CLASSES: usize = 10 * 16;
/// Blocks each bin holds at most, by class. A bin's fill does a random walk in a churn, so
/// it is empty (a miss) about 1/(cap + 1) of the time, and holding its blocks costs cap ×
/// size bytes of the cache's budget: the misses for a given budget are fewest with caps in
/// proportion to 1/√size. Here 3 blocks of 1 MiB, 12 of 64 KiB, at most 32 of small ones
/// (the churn workload through the pool: 95% of operations hit a front, against 83% with 8
/// blocks in every bin).
pub(crate) static BIN_CAPS: [u8; CLASSES] = bin_caps();

/// The bin of a block of `size` bytes (a multiple of 256, at most [`CACHED_MAX`]): its TLSF
/// class.
#[inline(always)]
pub(crate) fn bin_of(size: usize) -> usize {
    let (fl, sl) = mapping_insert(size / ALLOCATION_ALIGNMENT);
    fl * 16 + sl
}

/// The bin whose every block holds `size` bytes (a multiple of 256, at most
/// [`CACHED_MAX`]): the first class at or above the request's rounded-up class.
#[inline(always)]
pub(crate) fn bin_above(size: usize) -> usize {
    let (fl, sl) = mapping_search(size / ALLOCATION_ALIGNMENT);
    fl * 16 + sl
}

/// ⌊√n⌋ (`usize::isqrt` is newer than the crate's minimum Rust).
const fn isqrt(n: usize) -> usize {
    let mut r = 0;
    while (r + 1) * (r + 1) <= n {
        r += 1;
    }
    r
}

/// [`BIN_CAPS`]: ⌊3·√(1 MiB / class size)⌋, between 1 and 32.
const fn bin_caps() -> [u8; CLASSES] {
    let max_units = CACHED_MAX / ALLOCATION_ALIGNMENT;
    let mut caps = [0u8; CLASSES];
    let mut c = 0;
    while c < CLASSES {
        let (fl, sl) = (c / 16, c % 16);
        // The class's smallest size in units (the inverse of the TLSF class mapping).
        let units = if fl == 0 { sl } else { (16 + sl) << (fl - 1) };
        let cap = match (9 * max_units).checked_div(units) {
            Some(q) => isqrt(q),
            None => 32,
        };
        caps[c] = if cap < 1 {
            1
        } else if cap > 32 {
            32
        } else {
            cap as u8
        };
        c += 1;
    }
    caps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_fall_with_the_square_root_of_the_size() {
        assert_eq!(BIN_CAPS[1], 32); // 256 bytes
        assert_eq!(BIN_CAPS[5 * 16], 12); // 64 KiB
        assert_eq!(BIN_CAPS[6 * 16], 8); // 128 KiB
        assert_eq!(BIN_CAPS[9 * 16], 3); // 1 MiB
        assert!(BIN_CAPS.windows(2).skip(1).all(|w| w[0] >= w[1]));
    }
}
