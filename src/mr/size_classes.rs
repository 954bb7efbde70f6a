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

/// Bin capacities for a cache of `budget` bytes: ⌊k·√(1 MiB / class size)⌉ between 1 and
/// 255, with k such that full bins would hold [`FULL_BINS_OVER_BUDGET`] times the budget,
/// but no cap below [`BIN_CAPS`]'s. The budget then binds about as often as the caps (with
/// less, bins of large blocks run dry; with more, they take the budget from the small
/// ones). Below [`BIN_CAPS`]'s, caps made a pool growing from nothing take more from
/// upstream (the vmm pool's streams workload: 1.23 times the live bytes instead of 1.18).
/// Integer arithmetic: a pool recomputes its fronts' caps whenever it grows.
pub(crate) fn caps_for(budget: usize) -> [u8; CLASSES] {
    let held = (budget as u64).saturating_mul(FULL_BINS_OVER_BUDGET.0) / FULL_BINS_OVER_BUDGET.1;
    let mut caps = BIN_CAPS;
    for (c, cap) in caps.iter_mut().enumerate().skip(1) {
        // held × weight ÷ HELD_AT_ONE, rounded; at most 2^40 × 2^16: no overflow.
        let v = (2 * held.min(1 << 40) * SQRT_WEIGHTS[c] + HELD_AT_ONE) / (2 * HELD_AT_ONE);
        *cap = (*cap).max(v.clamp(1, 255) as u8);
    }
    caps
}

/// Bytes that full bins hold over the budget in [`caps_for`], as a fraction: of 2, 2.7, 3.5
/// and 4.5, 2.7 gave the pool's fronts the most hits on the churn workload at each budget
/// tried (host runtime): 98.9% of operations at 128 MiB, 99.4% at 160 MiB and 99.8% at
/// 256 MiB, where [`BIN_CAPS`] gave 96.2% at 128 MiB.
const FULL_BINS_OVER_BUDGET: (u64, u64) = (27, 10);

/// √(1 MiB / class size) in 1024ths, by class (0 for class 0, which no block has).
const SQRT_WEIGHTS: [u64; CLASSES] = sqrt_weights();

/// The bytes full bins hold with a cap of √(1 MiB / class size) each, in 1024ths.
const HELD_AT_ONE: u64 = held_at_one();

const fn sqrt_weights() -> [u64; CLASSES] {
    let mut w = [0u64; CLASSES];
    let mut c = 1;
    while c < CLASSES {
        w[c] = isqrt((((CACHED_MAX / ALLOCATION_ALIGNMENT) << 20) / class_units(c)) as u64);
        c += 1;
    }
    w
}

const fn held_at_one() -> u64 {
    let mut sum = 0u64;
    let mut c = 1;
    while c < CLASSES {
        sum += SQRT_WEIGHTS[c] * (class_units(c) * ALLOCATION_ALIGNMENT) as u64;
        c += 1;
    }
    sum
}

/// The smallest size of class `c` in 256-byte units (the inverse of the TLSF class
/// mapping); 0 for class 0, which no block has.
const fn class_units(c: usize) -> usize {
    let (fl, sl) = (c / 16, c % 16);
    if fl == 0 {
        sl
    } else {
        (16 + sl) << (fl - 1)
    }
}

/// For a request of `units` 256-byte units (1 ..= [`CACHED_MAX`] / 256): its own class
/// ([`bin_of`]) and the first class whose every block fits it ([`bin_above`]). With `s` the
/// request's shift (its highest bit less 4, at least 0), the classes of one power of two
/// are `16 s + (units >> s)`: its own class rounds `units` down, the next rounds it up (a
/// count that rounds up to the next power of two lands on that power's first class).
#[inline(always)]
pub(crate) fn bins_of_request(units: usize) -> (usize, usize) {
    debug_assert!((1..=CACHED_MAX / ALLOCATION_ALIGNMENT).contains(&units));
    let s = (usize::BITS - 1 - (units | 16).leading_zeros()) - 4;
    let base = (s as usize) << 4;
    (base + (units >> s), base + ((units + (1 << s) - 1) >> s))
}

/// ⌊√n⌋ (`u64::isqrt` is newer than the crate's minimum Rust): Newton's method from above.
const fn isqrt(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let mut x = n;
    let mut y = x.div_ceil(2);
    while y < x {
        x = y;
        y = (x + n / x) / 2;
    }
    x
}

/// [`BIN_CAPS`]: ⌊3·√(1 MiB / class size)⌋, between 1 and 32.
const fn bin_caps() -> [u8; CLASSES] {
    let max_units = CACHED_MAX / ALLOCATION_ALIGNMENT;
    let mut caps = [0u8; CLASSES];
    let mut c = 0;
    while c < CLASSES {
        let units = class_units(c);
        let cap = match (9 * max_units).checked_div(units) {
            Some(q) => isqrt(q as u64),
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

    #[test]
    fn bins_of_a_request_are_its_class_and_the_first_that_fits() {
        for units in 1..=CACHED_MAX / ALLOCATION_ALIGNMENT {
            let size = units * ALLOCATION_ALIGNMENT;
            assert_eq!(
                bins_of_request(units),
                (bin_of(size), bin_above(size)),
                "{units}"
            );
        }
    }

    #[test]
    fn caps_for_a_budget_hold_the_chosen_multiple_of_it_when_full() {
        // Where few bins are clamped to one block.
        for budget in [64usize << 20, 128 << 20, 256 << 20] {
            let caps = caps_for(budget);
            assert!(caps.windows(2).skip(1).all(|w| w[0] >= w[1]), "{caps:?}");
            let held: usize = (1..CLASSES)
                .map(|c| caps[c] as usize * class_units(c) * ALLOCATION_ALIGNMENT)
                .sum();
            let ratio = held as f64 / budget as f64;
            let want = FULL_BINS_OVER_BUDGET.0 as f64 / FULL_BINS_OVER_BUDGET.1 as f64;
            assert!(
                (want - 0.2..want + 0.2).contains(&ratio),
                "{budget}: {ratio}"
            );
        }
        // Twice the budget, twice the blocks in each bin (within rounding).
        let (a, b) = (caps_for(128 << 20), caps_for(256 << 20));
        for c in 1..CLASSES {
            if b[c] < 255 {
                assert!(
                    (2 * a[c] as i32 - b[c] as i32).abs() <= 1,
                    "{c}: {} {}",
                    a[c],
                    b[c]
                );
            }
        }
        // A tiny budget keeps the fixed caps; a huge one saturates without overflow.
        assert_eq!(caps_for(1 << 20), BIN_CAPS);
        assert!(caps_for(usize::MAX)[1..].iter().all(|&c| c == 255));
    }
}
