//! The live-allocation table shared by the pool and the arena.

use super::ALLOCATION_ALIGNMENT;

/// log2 of [`ALLOCATION_ALIGNMENT`]: addresses are hashed in units of 256 bytes.
const UNIT_SHIFT: u32 = ALLOCATION_ALIGNMENT.trailing_zeros();

/// Live allocations of a sub-allocator (pool, arena): block address → descriptor index, in
/// an open-addressing table (linear probing, multiplicative hash of `addr >> 8`,
/// backward-shift deletion, load at most 1/4: short probe runs keep the probe loops'
/// branches predictable). One probe sequence per insert or remove, no tombstones, and the
/// table is doubled only when a quarter full, so steady-state inserts and removes never
/// allocate. Address 0 marks an empty slot (no allocator hands out address 0).
pub(crate) struct PtrMap {
    /// `(address, descriptor)` side by side: one cache line per probe.
    slots: Box<[(usize, u32)]>,
    len: usize,
    /// `64 - log2(capacity)`: the hash's top bits index the table.
    shift: u32,
}

/// The home slot of block address `key` in an open-addressed table of `2^(64 - shift)`
/// slots: a multiplicative hash of `key >> 8` (addresses are 256-byte aligned), top bits.
#[inline(always)]
pub(crate) fn home_slot(key: usize, shift: u32) -> usize {
    (address_hash(key) >> shift) as usize
}

/// The multiplicative hash of block address `key` behind [`home_slot`] (its top bits
/// index a table; the bits below them are still well mixed).
#[inline(always)]
pub(crate) fn address_hash(key: usize) -> u64 {
    (key as u64 >> UNIT_SHIFT).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

impl Default for PtrMap {
    fn default() -> Self {
        PtrMap::with_capacity(16)
    }
}

impl std::fmt::Debug for PtrMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PtrMap").field("len", &self.len).finish()
    }
}

impl PtrMap {
    pub fn with_capacity(n: usize) -> Self {
        let cap = (4 * n).next_power_of_two().max(16);
        PtrMap {
            slots: vec![(0, 0); cap].into_boxed_slice(),
            len: 0,
            shift: 64 - cap.trailing_zeros(),
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline(always)]
    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    #[inline(always)]
    fn home(&self, key: usize) -> usize {
        home_slot(key, self.shift)
    }

    #[inline(always)]
    fn at(&mut self, i: usize) -> &mut (usize, u32) {
        debug_assert!(i < self.slots.len());
        // SAFETY: every caller masks `i` with `mask()`, so `i < slots.len()`.
        unsafe { self.slots.get_unchecked_mut(i) }
    }

    /// Inserts `key` (nonzero, not present).
    #[inline]
    pub fn insert(&mut self, key: usize, val: u32) {
        debug_assert!(key != 0);
        if 4 * (self.len + 1) > self.slots.len() {
            self.grow();
        }
        let mask = self.mask();
        let mut i = self.home(key);
        loop {
            let e = self.at(i);
            if e.0 == 0 {
                *e = (key, val);
                self.len += 1;
                return;
            }
            debug_assert!(e.0 != key, "duplicate key");
            i = (i + 1) & mask;
        }
    }

    /// The value of `key`, if present.
    pub fn get(&self, key: usize) -> Option<u32> {
        if key == 0 {
            return None;
        }
        let mask = self.mask();
        let mut i = self.home(key);
        loop {
            let e = self.slots[i];
            if e.0 == key {
                return Some(e.1);
            }
            if e.0 == 0 {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// Removes `key`, returning its value.
    #[inline]
    pub fn remove(&mut self, key: usize) -> Option<u32> {
        if key == 0 {
            return None;
        }
        let mask = self.mask();
        let mut i = self.home(key);
        let val = loop {
            let e = *self.at(i);
            if e.0 == key {
                break e.1;
            }
            if e.0 == 0 {
                return None;
            }
            i = (i + 1) & mask;
        };
        // Backward-shift deletion: later entries of the run move into the hole when their
        // home allows it, so lookups never need tombstones.
        let mut hole = i;
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            let e = *self.at(j);
            if e.0 == 0 {
                break;
            }
            let home = self.home(e.0);
            if (j.wrapping_sub(home) & mask) >= (j.wrapping_sub(hole) & mask) {
                *self.at(hole) = e;
                hole = j;
            }
        }
        self.at(hole).0 = 0;
        self.len -= 1;
        Some(val)
    }

    /// Doubles the table (only when a quarter full).
    #[cold]
    fn grow(&mut self) {
        let old = std::mem::take(&mut self.slots);
        *self = PtrMap::with_capacity(old.len() / 2);
        for &(k, v) in old.iter() {
            if k != 0 {
                self.insert(k, v);
            }
        }
    }
}
