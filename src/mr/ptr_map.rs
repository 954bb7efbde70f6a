//! The live-allocation table shared by the pool and the arena.

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;

use super::ALLOCATION_ALIGNMENT;

/// log2 of [`ALLOCATION_ALIGNMENT`]: addresses are hashed in units of 256 bytes.
const UNIT_SHIFT: u32 = ALLOCATION_ALIGNMENT.trailing_zeros();

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

/// Asks the CPU to bring the cache line at `addr` in, without waiting for it: a probe that
/// will miss the caches starts while other work goes on. A hint only (nothing is read, and
/// a stale or unmapped address is harmless); a no-op where no prefetch instruction is used.
#[inline(always)]
pub(crate) fn prefetch(addr: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing architecturally and never faults, whatever the
    // address (Intel SDM, PREFETCHh); newer compilers make the intrinsic safe.
    #[allow(unused_unsafe)]
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(addr as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = addr;
}

/// Tables of fewer slots than this (256 KiB of narrow slots) are not prefetched: they stay
/// in the caches, where a prefetch would only cost instructions.
const PREFETCH_SLOTS: usize = 1 << 15;

/// Whether a table of `2^(64 - shift)` slots is large enough to prefetch (see
/// [`PREFETCH_SLOTS`]).
#[inline(always)]
fn worth_prefetching(shift: u32) -> bool {
    64 - shift >= PREFETCH_SLOTS.trailing_zeros()
}

/// Where a [`PtrMap`]'s slots are, published for threads that do not hold the map's lock,
/// so that a free can start the probe's cache miss before it takes the lock
/// ([`Self::prefetch`]). Updated whenever the table is replaced; read without ordering: a
/// stale view only prefetches a useless line.
#[derive(Debug, Default)]
pub(crate) struct SlotHint {
    base: AtomicUsize,
    /// `shift | log2(slot bytes) << 8`, 0 while nothing is published.
    geometry: AtomicU32,
}

impl SlotHint {
    /// Publishes a table of `2^(64 - shift)` slots of `slot_bytes` at `base`; a table
    /// smaller than [`PREFETCH_SLOTS`] as nothing.
    fn publish(&self, base: usize, shift: u32, slot_bytes: usize) {
        let geometry = if worth_prefetching(shift) {
            shift | slot_bytes.trailing_zeros() << 8
        } else {
            0
        };
        self.base.store(base, Ordering::Relaxed);
        self.geometry.store(geometry, Ordering::Relaxed);
    }

    /// The published base address and geometry.
    #[cfg(test)]
    pub fn published(&self) -> (usize, u32) {
        (
            self.base.load(Ordering::Relaxed),
            self.geometry.load(Ordering::Relaxed),
        )
    }

    /// Prefetches the home slot of `key` in the published table.
    #[inline(always)]
    pub fn prefetch(&self, key: usize) {
        let g = self.geometry.load(Ordering::Relaxed);
        if g != 0 {
            let base = self.base.load(Ordering::Relaxed);
            prefetch(base + (home_slot(key, g & 0xff) << (g >> 8)));
        }
    }
}

/// One slot's representation: `(address, value)` or empty (address 0).
trait Slot: Copy {
    const EMPTY: Self;
    /// The slot for `(key, val)`, if this representation can hold them.
    fn pack(key: usize, val: u32) -> Option<Self>;
    fn key(self) -> usize;
    fn val(self) -> u32;
    fn is_empty(self) -> bool;
}

/// Bits of a [`Narrow`] slot that hold the value.
const NARROW_VAL_BITS: u32 = 24;
/// Addresses a [`Narrow`] slot holds are below this (48-bit virtual addresses: x86-64 with
/// 4-level paging, AArch64, CUDA's and HIP's device address spaces).
const NARROW_KEY_LIMIT: usize = 1 << (64 - NARROW_VAL_BITS + UNIT_SHIFT);

/// `(addr >> 8) << 24 | value` in 8 bytes: 256-byte aligned addresses below 2^48 and values
/// below 2^24 (descriptor indices), so that a table holds eight slots to a cache line
/// rather than four. A table switches to [`Wide`] slots the first time either does not fit.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Narrow(u64);

impl Narrow {
    /// Whether `key` can be in a narrow table at all (every key stored is).
    #[inline(always)]
    fn may_hold(key: usize) -> bool {
        key & (ALLOCATION_ALIGNMENT - 1) == 0 && key < NARROW_KEY_LIMIT
    }
}

impl Slot for Narrow {
    const EMPTY: Self = Narrow(0);

    #[inline(always)]
    fn pack(key: usize, val: u32) -> Option<Self> {
        (Narrow::may_hold(key) && val >> NARROW_VAL_BITS == 0)
            .then(|| Narrow(((key as u64) >> UNIT_SHIFT) << NARROW_VAL_BITS | u64::from(val)))
    }

    #[inline(always)]
    fn key(self) -> usize {
        ((self.0 >> NARROW_VAL_BITS) << UNIT_SHIFT) as usize
    }

    #[inline(always)]
    fn val(self) -> u32 {
        (self.0 & ((1 << NARROW_VAL_BITS) - 1)) as u32
    }

    #[inline(always)]
    fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// Any nonzero address and any value, in 16 bytes.
#[derive(Clone, Copy)]
struct Wide(usize, u32);

impl Slot for Wide {
    const EMPTY: Self = Wide(0, 0);

    #[inline(always)]
    fn pack(key: usize, val: u32) -> Option<Self> {
        Some(Wide(key, val))
    }

    #[inline(always)]
    fn key(self) -> usize {
        self.0
    }

    #[inline(always)]
    fn val(self) -> u32 {
        self.1
    }

    #[inline(always)]
    fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// An open-addressing table of `S` slots (see [`PtrMap`]).
struct Table<S: Slot> {
    slots: Box<[S]>,
    len: usize,
    /// `64 - log2(capacity)`: the hash's top bits index the table.
    shift: u32,
}

impl<S: Slot> Table<S> {
    fn with_capacity(n: usize) -> Self {
        let cap = (4 * n).next_power_of_two().max(16);
        Table {
            slots: vec![S::EMPTY; cap].into_boxed_slice(),
            len: 0,
            shift: 64 - cap.trailing_zeros(),
        }
    }

    #[inline(always)]
    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    #[inline(always)]
    fn at(&self, i: usize) -> S {
        debug_assert!(i < self.slots.len());
        // SAFETY: every caller masks `i` with `mask()`, so `i < slots.len()`.
        unsafe { *self.slots.get_unchecked(i) }
    }

    #[inline(always)]
    fn set(&mut self, i: usize, s: S) {
        debug_assert!(i < self.slots.len());
        // SAFETY: as in `at`.
        unsafe { *self.slots.get_unchecked_mut(i) = s }
    }

    /// Puts `slot` (its key not present) in the first empty slot of its probe sequence;
    /// the caller has made room.
    #[inline(always)]
    fn put(&mut self, slot: S) {
        let mask = self.mask();
        let mut i = home_slot(slot.key(), self.shift);
        while !self.at(i).is_empty() {
            debug_assert!(self.at(i).key() != slot.key(), "duplicate key");
            i = (i + 1) & mask;
        }
        self.set(i, slot);
        self.len += 1;
    }

    /// The slot index holding `key` (nonzero), if any.
    #[inline(always)]
    fn find(&self, key: usize) -> Option<usize> {
        let mask = self.mask();
        let mut i = home_slot(key, self.shift);
        loop {
            let e = self.at(i);
            if e.key() == key {
                return Some(i);
            }
            if e.is_empty() {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// Empties slot `i` (occupied), by backward-shift deletion: later entries of the run
    /// move into the hole when their home allows it, so lookups never need tombstones.
    #[inline(always)]
    fn vacate(&mut self, i: usize) {
        let mask = self.mask();
        let mut hole = i;
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            let e = self.at(j);
            if e.is_empty() {
                break;
            }
            let home = home_slot(e.key(), self.shift);
            if (j.wrapping_sub(home) & mask) >= (j.wrapping_sub(hole) & mask) {
                self.set(hole, e);
                hole = j;
            }
        }
        self.set(hole, S::EMPTY);
        self.len -= 1;
    }

    /// Every `(key, value)`.
    fn entries(&self) -> impl Iterator<Item = (usize, u32)> + '_ {
        self.slots
            .iter()
            .filter(|s| !s.is_empty())
            .map(|s| (s.key(), s.val()))
    }
}

/// Live allocations of a sub-allocator (pool, arena): block address → descriptor index, in
/// an open-addressing table (linear probing, multiplicative hash of `addr >> 8`,
/// backward-shift deletion, load at most 1/8 while the table is small and 1/4 once it is
/// large: short probe runs keep the probe loops' branches predictable; see [`is_full`]).
/// One probe sequence per insert or remove, no tombstones, and the table is doubled only
/// when full, so steady-state inserts and removes never allocate. Address 0 marks an empty slot (no allocator hands out address 0).
///
/// Slots are 8 bytes ([`Narrow`]) while every address and value fits, 16 bytes ([`Wide`])
/// from the first that does not: with 100 000 live blocks the table is 1 MiB rather than 2,
/// and a free's probe misses the caches less often.
pub(crate) struct PtrMap {
    repr: Repr,
    /// Where the slots are published for lock-free prefetches, if anyone asked.
    hint: Option<Arc<SlotHint>>,
}

/// [`PtrMap`]'s table, by slot representation.
enum Repr {
    Narrow(Table<Narrow>),
    Wide(Table<Wide>),
}

/// Where [`PtrMap::find`] found a key, for [`PtrMap::remove_found`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Found(usize);

impl Default for PtrMap {
    fn default() -> Self {
        PtrMap::with_capacity(16)
    }
}

impl std::fmt::Debug for PtrMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PtrMap")
            .field("len", &self.len())
            .field("wide", &matches!(self.repr, Repr::Wide(_)))
            .finish()
    }
}

impl PtrMap {
    pub fn with_capacity(n: usize) -> Self {
        PtrMap {
            repr: Repr::Narrow(Table::with_capacity(n)),
            hint: None,
        }
    }

    /// A map that publishes where its slots are in `hint` (see [`SlotHint`]).
    pub fn with_hint(n: usize, hint: Arc<SlotHint>) -> Self {
        let map = PtrMap {
            repr: Repr::Narrow(Table::with_capacity(n)),
            hint: Some(hint),
        };
        map.publish();
        map
    }

    /// The table's base address, shift and slot size in bytes.
    #[inline(always)]
    fn geometry(&self) -> (usize, u32, usize) {
        match &self.repr {
            Repr::Narrow(t) => (t.slots.as_ptr() as usize, t.shift, 8),
            Repr::Wide(t) => (t.slots.as_ptr() as usize, t.shift, 16),
        }
    }

    /// Publishes the current table to the hint, if any.
    fn publish(&self) {
        if let Some(h) = &self.hint {
            let (base, shift, slot_bytes) = self.geometry();
            h.publish(base, shift, slot_bytes);
        }
    }

    /// Prefetches the home slot of `key`, for a lookup or insert a little later.
    #[inline(always)]
    pub fn prefetch(&self, key: usize) {
        let (base, shift, slot_bytes) = self.geometry();
        if worth_prefetching(shift) {
            prefetch(base + slot_bytes * home_slot(key, shift));
        }
    }

    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Narrow(t) => t.len,
            Repr::Wide(t) => t.len,
        }
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Where the table's slots are.
    #[cfg(test)]
    pub fn slots_addr(&self) -> usize {
        self.geometry().0
    }

    /// Whether slots are 16 bytes (an address or value did not fit in 8).
    #[cfg(test)]
    pub fn is_wide(&self) -> bool {
        matches!(self.repr, Repr::Wide(_))
    }

    /// Inserts `key` (nonzero, not present).
    #[inline]
    pub fn insert(&mut self, key: usize, val: u32) {
        debug_assert!(key != 0);
        let grew = match &mut self.repr {
            Repr::Narrow(t) => match Narrow::pack(key, val) {
                Some(s) => {
                    let full = is_full(t.len, t.slots.len());
                    if full {
                        *t = grown(t);
                    }
                    t.put(s);
                    full
                }
                None => {
                    self.widen();
                    self.insert(key, val);
                    false
                }
            },
            Repr::Wide(t) => {
                let full = is_full(t.len, t.slots.len());
                if full {
                    *t = grown(t);
                }
                t.put(Wide(key, val));
                full
            }
        };
        if grew {
            self.publish();
        }
    }

    /// Where `key` is, with its value, if present.
    #[inline]
    pub fn find(&self, key: usize) -> Option<(Found, u32)> {
        if key == 0 {
            return None;
        }
        match &self.repr {
            Repr::Narrow(t) => {
                if !Narrow::may_hold(key) {
                    return None;
                }
                t.find(key).map(|i| (Found(i), t.at(i).val()))
            }
            Repr::Wide(t) => t.find(key).map(|i| (Found(i), t.at(i).val())),
        }
    }

    /// The value of `key`, if present.
    #[inline]
    pub fn get(&self, key: usize) -> Option<u32> {
        self.find(key).map(|(_, v)| v)
    }

    /// Removes the entry [`Self::find`] found (the map unchanged since).
    #[inline]
    pub fn remove_found(&mut self, at: Found) {
        match &mut self.repr {
            Repr::Narrow(t) => t.vacate(at.0),
            Repr::Wide(t) => t.vacate(at.0),
        }
    }

    /// Removes `key`, returning its value.
    #[inline]
    pub fn remove(&mut self, key: usize) -> Option<u32> {
        let (at, val) = self.find(key)?;
        self.remove_found(at);
        Some(val)
    }

    /// Moves every entry to 16-byte slots (once, when one does not fit in 8).
    #[cold]
    #[inline(never)]
    fn widen(&mut self) {
        if let Repr::Narrow(t) = &self.repr {
            let mut w = Table::<Wide>::with_capacity(t.slots.len() / 4);
            for (k, v) in t.entries() {
                w.put(Wide(k, v));
            }
            log::debug!("live-allocation table: 16-byte slots from now on");
            self.repr = Repr::Wide(w);
            self.publish();
        }
    }
}

/// Tables below this many slots (256 KiB of narrow slots) grow when an eighth full, larger
/// ones when a quarter full. A free's backward-shift deletion walks the run after its slot,
/// whose length is unpredictable and mispredicts the loop's exit: a sparse table keeps
/// runs short where the table fits in the caches anyway, and a large one stays dense
/// enough to miss them less often.
const SPARSE_SLOTS: usize = 1 << 15;

/// Whether a table of `slots` holding `len` entries must grow before one more insert.
#[inline(always)]
fn is_full(len: usize, slots: usize) -> bool {
    let share = if slots < SPARSE_SLOTS { 8 } else { 4 };
    share * (len + 1) > slots
}

/// `t` doubled (only when full: see [`is_full`]).
#[cold]
#[inline(never)]
fn grown<S: Slot>(t: &Table<S>) -> Table<S> {
    let mut g = Table::with_capacity(t.slots.len() / 2);
    for e in t.slots.iter().filter(|s| !s.is_empty()) {
        g.put(*e);
    }
    g
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_slots_round_trip_and_refuse_what_does_not_fit() {
        let key = (NARROW_KEY_LIMIT - ALLOCATION_ALIGNMENT) | 0x4200;
        let s = Narrow::pack(key & !(ALLOCATION_ALIGNMENT - 1), (1 << 24) - 1).unwrap();
        assert_eq!(s.key(), key & !(ALLOCATION_ALIGNMENT - 1));
        assert_eq!(s.val(), (1 << 24) - 1);
        assert!(
            Narrow::pack(NARROW_KEY_LIMIT, 1).is_none(),
            "address too high"
        );
        assert!(Narrow::pack(0x1000, 1 << 24).is_none(), "value too large");
        assert!(Narrow::pack(0x1001, 1).is_none(), "unaligned address");
    }

    #[test]
    fn a_narrow_map_finds_no_unaligned_or_high_neighbour_of_a_key() {
        let mut m = PtrMap::with_capacity(4);
        m.insert(0x7f00_0000_1000, 7);
        assert!(!m.is_wide());
        // Same `addr >> 8`: an unaligned pointer into the block is not the block.
        assert_eq!(m.get(0x7f00_0000_1001), None);
        assert_eq!(m.remove(0x7f00_0000_10ff), None);
        // Same low 48 bits.
        assert_eq!(m.get(0x7f00_0000_1000 | (1 << 60)), None);
        assert_eq!(m.get(0x7f00_0000_1000), Some(7));
    }

    #[test]
    fn the_map_widens_for_high_addresses_large_values_and_unaligned_keys_keeping_entries() {
        for (key, val) in [
            (NARROW_KEY_LIMIT + 0x100, 3u32),
            (0x2100, 1 << 24),
            (0x2110, 5),
            (usize::MAX & !0xff, u32::MAX),
        ] {
            let mut m = PtrMap::with_capacity(4);
            let old: Vec<(usize, u32)> = (1..100).map(|i| (i << 12, i as u32)).collect();
            for &(k, v) in &old {
                m.insert(k, v);
            }
            assert!(!m.is_wide());
            m.insert(key, val);
            assert!(m.is_wide(), "{key:#x} → {val}");
            assert_eq!(m.len(), old.len() + 1);
            assert_eq!(m.get(key), Some(val));
            for &(k, v) in &old {
                assert_eq!(m.get(k), Some(v));
            }
            assert_eq!(m.remove(key), Some(val));
            for &(k, v) in &old {
                assert_eq!(m.remove(k), Some(v));
            }
            assert!(m.is_empty());
        }
    }

    /// Slots of a narrow map's table.
    fn slots(m: &PtrMap) -> usize {
        match &m.repr {
            Repr::Narrow(t) => t.slots.len(),
            Repr::Wide(t) => t.slots.len(),
        }
    }

    #[test]
    fn tables_stay_an_eighth_full_below_sparse_slots_and_a_quarter_above() {
        let mut m = PtrMap::with_capacity(4);
        let mut grew_at = Vec::new();
        for i in 1..=20_000usize {
            let before = slots(&m);
            m.insert(i << 8, i as u32);
            let n = slots(&m);
            if n != before {
                assert_eq!(n, 2 * before, "tables double");
                grew_at.push((before, i));
            }
            let share = if n < SPARSE_SLOTS { 8 } else { 4 };
            assert!(share * m.len() <= n, "{} entries in {n} slots", m.len());
        }
        // Each growth happened exactly when the table became full, not before.
        for (before, i) in grew_at {
            let share = if before < SPARSE_SLOTS { 8 } else { 4 };
            assert_eq!(
                share * i,
                before + share,
                "grew from {before} slots at entry {i}"
            );
        }
        assert_eq!(
            slots(&m),
            1 << 17,
            "20 000 entries take 2^17 slots at a quarter load"
        );
        for i in 1..=20_000usize {
            assert_eq!(m.remove(i << 8), Some(i as u32));
        }
        assert!(m.is_empty());
    }

    #[test]
    fn remove_found_removes_exactly_what_find_found() {
        let mut m = PtrMap::with_capacity(4);
        for i in 1..200usize {
            m.insert(i << 8, i as u32);
        }
        for i in (1..200usize).step_by(3) {
            let (at, v) = m.find(i << 8).unwrap();
            assert_eq!(v, i as u32);
            m.remove_found(at);
            assert_eq!(m.get(i << 8), None);
        }
        for i in 1..200usize {
            assert_eq!(m.get(i << 8), (i % 3 != 1).then_some(i as u32));
        }
    }

    #[test]
    fn slot_hint_follows_the_table_once_it_is_large() {
        let hint = Arc::new(SlotHint::default());
        let mut m = PtrMap::with_hint(4, hint.clone());
        let published = |h: &SlotHint| h.published();
        assert_eq!(published(&hint).1, 0, "a small table is not prefetched");
        let mut i = 0usize;
        while slots(&m) < PREFETCH_SLOTS {
            i += 1;
            m.insert(i << 8, i as u32);
        }
        let (base, shift, size) = m.geometry();
        assert_eq!(published(&hint), (base, shift | 3 << 8));
        assert_eq!(size, 8);
        // Prefetching any key, present or not, is harmless.
        hint.prefetch(12345 << 8);
        m.prefetch(usize::MAX & !0xff);
        // An address that needs 16-byte slots moves the table.
        let far = NARROW_KEY_LIMIT + (1 << 8);
        m.insert(far, 7);
        assert!(m.is_wide());
        let (base, shift, size) = m.geometry();
        assert_eq!(size, 16);
        assert_eq!(published(&hint), (base, shift | 4 << 8));
        assert_eq!(m.get(far), Some(7));
        assert_eq!(m.get(i << 8), Some(i as u32));
    }
}
