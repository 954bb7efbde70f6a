//! The arena's bookkeeping structures, shared by the global arena (spans of the one
//! upstream allocation) and the local arenas (blocks of their superblocks). Nothing here
//! touches the host heap on the steady-state path, and every operation is O(1) (apart
//! from the out-of-line fallbacks named below).
//!
//! * [`Heap`]: block descriptors in a slab, free blocks in a TLSF index (two-level
//!   segregated fits), both the pool's ([`crate::mr::free_index`]). Each block
//!   knows its address neighbours within its *region* (a range added with
//!   [`Heap::add_region`]); a freed block merges with free neighbours of its region, never
//!   across regions. The first block of a region (the lowest address) keeps its descriptor
//!   for as long as the region exists: splits keep the lower part's descriptor, merges keep
//!   the lower block's.
//! * [`PtrMap`]: live blocks by address, in an open-addressing table (linear probing,
//!   backward-shift deletion, load at most 1/8 or, once large, 1/4, doubled when full), so
//!   steady-state inserts and removes never allocate and a free costs one probe sequence.
//! * [`Directory`]: ranges of at most [`DIRECTORY_PAGE`] bytes (superblocks) by address,
//!   for "which range contains this address": each range is filed under the one or two
//!   pages it touches, in an open-addressing multimap of the same kind, so inserts, removes
//!   and lookups are O(1) (a page holds few ranges).

use super::ALLOCATION_ALIGNMENT;
pub(super) use crate::mr::free_index::NIL;
use crate::mr::free_index::{
    linked_block, mapping_insert, mapping_search, Classes, Heads, Slab, UNIT_SHIFT,
};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    Free,
    Used,
    /// A slot in the slab's list of vacant descriptors.
    Vacant,
}

/// One block of a region (free or used), or a vacant slab slot.
#[derive(Clone, Copy, Debug)]
pub(super) struct Block {
    pub addr: usize,
    pub size: usize,
    pub prev_phys: u32,
    pub next_phys: u32,
    prev_free: u32,
    next_free: u32,
    /// The owner's tag: the superblock in a local arena; the release sequence number of a
    /// free span in the global arena (merged blocks keep the larger).
    pub aux: u64,
    /// A local arena's used block: the request it was handed out for, in 256-byte units
    /// (less than its size when it came from the arena's block cache). Fits in what was
    /// padding.
    req_units: u32,
    state: State,
}

impl Block {
    const DUMMY: Block = Block {
        addr: 0,
        size: 0,
        prev_phys: NIL,
        next_phys: NIL,
        prev_free: NIL,
        next_free: NIL,
        aux: 0,
        req_units: 0,
        state: State::Vacant,
    };

    /// The block is a whole region (no address neighbours).
    #[inline(always)]
    pub fn is_region(&self) -> bool {
        self.prev_phys == NIL && self.next_phys == NIL
    }

    pub fn is_free(&self) -> bool {
        self.state == State::Free
    }
}

linked_block!(Block, State, |b| aux: b.aux, req_units: 0);

/// Blocks of any number of disjoint regions, with a TLSF index of the free ones.
pub(super) struct Heap {
    slab: Slab<Block>,
    index: Classes<Box<Heads>>,
    bytes_free: usize,
    free_count: usize,
}

impl Default for Heap {
    fn default() -> Self {
        Heap::new()
    }
}

impl Heap {
    pub fn new() -> Self {
        Heap {
            slab: Slab::new(Block::DUMMY, 64),
            index: Classes::boxed(),
            bytes_free: 0,
            free_count: 0,
        }
    }

    /// Bytes in free blocks.
    pub fn bytes_free(&self) -> usize {
        self.bytes_free
    }

    /// Number of free blocks.
    #[cfg(test)]
    pub fn free_count(&self) -> usize {
        self.free_count
    }

    /// Block `i` (an index this heap handed out).
    #[inline(always)]
    pub fn block(&self, i: u32) -> &Block {
        self.slab.get(i)
    }

    /// The request used block `i` was handed out for (see [`Block`]), in bytes.
    #[inline(always)]
    pub fn req(&self, i: u32) -> usize {
        (self.block(i).req_units as usize) << UNIT_SHIFT
    }

    /// Records the request (a multiple of 256 bytes, at most the block's size) that used
    /// block `i` is handed out for.
    #[inline(always)]
    pub fn set_req(&mut self, i: u32, size: usize) {
        debug_assert!(size <= self.block(i).size && self.block(i).state == State::Used);
        // At most the block's size, which is at most a superblock's: fits.
        self.blk_mut(i).req_units = (size >> UNIT_SHIFT) as u32;
    }

    /// The next block in the owner's list of used blocks that `i` is on (a local arena's
    /// block cache), linked through the free-list field that a used block does not use.
    #[inline(always)]
    pub fn used_next(&self, i: u32) -> u32 {
        debug_assert_eq!(self.block(i).state, State::Used);
        self.block(i).next_free
    }

    /// Sets the link [`used_next`](Self::used_next) reads.
    #[inline(always)]
    pub fn set_used_next(&mut self, i: u32, next: u32) {
        debug_assert_eq!(self.block(i).state, State::Used);
        self.blk_mut(i).next_free = next;
    }

    #[inline(always)]
    fn blk_mut(&mut self, i: u32) -> &mut Block {
        self.slab.get_mut(i)
    }

    #[inline(always)]
    fn new_block(&mut self, b: Block) -> u32 {
        self.slab.add(b)
    }

    #[inline(always)]
    fn vacate(&mut self, i: u32) {
        self.slab.vacate(i);
    }

    /// Files block `i` (in no list) as free.
    #[inline(always)]
    fn list_insert(&mut self, i: u32) {
        let size = self.block(i).size;
        let head = self.index.push(size, i);
        self.bytes_free += size;
        self.free_count += 1;
        self.slab.link_front(i, head);
    }

    /// Unlinks free block `i` from its list (its state stays `Free`; callers set it).
    #[inline(always)]
    fn list_remove(&mut self, i: u32) {
        let (size, head) = self.slab.unlink(i);
        self.bytes_free -= size;
        self.free_count -= 1;
        if let Some(next) = head {
            self.index.unlink_head(size, i, next);
        }
    }

    /// Adds the free region `[addr, addr + size)` (`size` a positive multiple of 256,
    /// disjoint from every other region); returns its first block.
    pub fn add_region(&mut self, addr: usize, size: usize, aux: u64) -> u32 {
        debug_assert!(size > 0 && size % ALLOCATION_ALIGNMENT == 0);
        let i = self.new_block(Block {
            addr,
            size,
            aux,
            state: State::Free,
            ..Block::DUMMY
        });
        self.list_insert(i);
        i
    }

    /// Removes a region that is entirely free (`i` is its only block); returns its
    /// `(addr, size)`.
    pub fn remove_region(&mut self, i: u32) -> (usize, usize) {
        let b = *self.block(i);
        debug_assert!(b.is_region() && b.state == State::Free);
        self.list_remove(i);
        self.vacate(i);
        (b.addr, b.size)
    }

    /// A free block of at least `size` bytes (a multiple of 256) in O(1), or `None`.
    /// Good fit, not best fit: when the request's own class holds a fitting block that is
    /// not the class's first, this misses it; [`find_exhaustive`](Self::find_exhaustive)
    /// does not.
    #[inline]
    pub fn find(&self, size: usize) -> Option<u32> {
        let units = size >> UNIT_SHIFT;
        let (fl, sl) = mapping_insert(units);
        let head = self.index.head(fl, sl);
        // An empty class's head is the dummy, whose size 0 never fits.
        if self.block(head).size >= size {
            return Some(head);
        }
        let (fl, sl) = mapping_search(units);
        self.index
            .find_class(fl, sl)
            .map(|(fl, sl)| self.index.head(fl, sl))
    }

    /// Like [`find`](Self::find), then walks at most `limit` blocks of the request's own
    /// class for one that fits: `None` then means no free block fits, when `limit` is at
    /// least the number of free blocks.
    pub fn find_exhaustive(&self, size: usize, limit: usize) -> Option<u32> {
        if let Some(i) = self.find(size) {
            return Some(i);
        }
        let (fl, sl) = mapping_insert(size >> UNIT_SHIFT);
        let mut i = self.index.head(fl, sl);
        let mut n = 0;
        while i != NIL && n < limit {
            if self.block(i).size >= size {
                return Some(i);
            }
            i = self.block(i).next_free;
            n += 1;
        }
        None
    }

    /// Marks free block `i` used for its first `size` bytes (a multiple of 256, at most its
    /// size); the rest stays free, with the same tag. Returns `i`.
    #[inline]
    pub fn take(&mut self, i: u32, size: usize) -> u32 {
        self.list_remove(i);
        let b = *self.block(i);
        debug_assert!(size <= b.size && size % ALLOCATION_ALIGNMENT == 0 && size > 0);
        if b.size > size {
            let j = self.slab.split(i, size);
            // The rest cannot merge: `i`'s neighbours were merged when it was freed.
            self.list_insert(j);
        }
        self.blk_mut(i).state = State::Used;
        i
    }

    /// Frees used block `i` with tag `aux`, merging it with free neighbours (the merged
    /// block keeps the largest tag); returns the merged block.
    #[inline]
    pub fn release(&mut self, mut i: u32, aux: u64) -> u32 {
        debug_assert_eq!(self.block(i).state, State::Used);
        let (next, prev) = {
            let b = self.blk_mut(i);
            b.aux = aux;
            (b.next_phys, b.prev_phys)
        };
        // A missing neighbour is the dummy (never `Free`): no `NIL` checks.
        let n = *self.block(next);
        if n.state == State::Free {
            self.list_remove(next);
            let b = self.blk_mut(i);
            b.size += n.size;
            b.next_phys = n.next_phys;
            b.aux = b.aux.max(n.aux);
            self.blk_mut(n.next_phys).prev_phys = i;
            self.vacate(next);
        }
        let p = *self.block(prev);
        if p.state == State::Free {
            self.list_remove(prev);
            let b = *self.block(i);
            let pb = self.blk_mut(prev);
            pb.size += b.size;
            pb.next_phys = b.next_phys;
            pb.aux = pb.aux.max(b.aux);
            self.blk_mut(b.next_phys).prev_phys = prev;
            self.vacate(i);
            i = prev;
        }
        self.list_insert(i);
        i
    }

    /// The size of the largest free block (walks the top class only).
    pub fn largest_free(&self) -> usize {
        self.index.largest(&self.slab)
    }

    /// The block of the region starting at block `first` that contains `addr`, walking
    /// the region in address order (error paths only).
    pub fn block_containing(&self, first: u32, addr: usize) -> Option<u32> {
        let mut i = first;
        while i != NIL {
            let b = self.block(i);
            if addr >= b.addr && addr < b.addr + b.size {
                return Some(i);
            }
            i = b.next_phys;
        }
        None
    }
}

pub(super) use crate::mr::ptr_map::PtrMap;

/// Page size of the [`Directory`], and the largest range it holds.
pub(super) const DIRECTORY_PAGE: usize = 1 << 20;

/// One directory slot: a range filed under one page (`page` is the page number plus one;
/// 0 marks an empty slot).
#[derive(Clone, Copy)]
struct DirSlot<T: Copy> {
    page: usize,
    start: usize,
    end: usize,
    val: T,
}

/// Disjoint ranges of at most [`DIRECTORY_PAGE`] bytes, by address (see the module docs).
/// Load at most 1/2: slots are larger than `PtrMap`'s, and a smaller table stays in cache.
pub(super) struct Directory<T: Copy + Default> {
    slots: Box<[DirSlot<T>]>,
    len: usize,
    shift: u32,
}

impl<T: Copy + Default> Default for Directory<T> {
    fn default() -> Self {
        Directory::with_capacity(16)
    }
}

impl<T: Copy + Default> Directory<T> {
    fn with_capacity(n: usize) -> Self {
        let cap = (2 * n).next_power_of_two().max(16);
        let empty = DirSlot {
            page: 0,
            start: 0,
            end: 0,
            val: T::default(),
        };
        Directory {
            slots: vec![empty; cap].into_boxed_slice(),
            len: 0,
            shift: 64 - cap.trailing_zeros(),
        }
    }

    /// Number of ranges.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        // Each range is filed under one or two pages.
        let mut starts: Vec<usize> = self
            .slots
            .iter()
            .filter(|s| s.page != 0)
            .map(|s| s.start)
            .collect();
        starts.sort_unstable();
        starts.dedup();
        starts.len()
    }

    #[inline(always)]
    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    #[inline(always)]
    fn home(&self, page: usize) -> usize {
        ((page as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> self.shift) as usize
    }

    #[inline(always)]
    fn at(&self, i: usize) -> &DirSlot<T> {
        debug_assert!(i < self.slots.len());
        // SAFETY: every caller masks `i` with `mask()`, so `i < slots.len()`.
        unsafe { self.slots.get_unchecked(i) }
    }

    #[inline(always)]
    fn at_mut(&mut self, i: usize) -> &mut DirSlot<T> {
        debug_assert!(i < self.slots.len());
        // SAFETY: as in `at`.
        unsafe { self.slots.get_unchecked_mut(i) }
    }

    /// The pages (numbers plus one) that `[start, end)` touches: one or two.
    #[inline(always)]
    fn pages(start: usize, end: usize) -> (usize, usize) {
        debug_assert!(start < end && end - start <= DIRECTORY_PAGE);
        (start / DIRECTORY_PAGE + 1, (end - 1) / DIRECTORY_PAGE + 1)
    }

    #[inline]
    fn insert_slot(&mut self, slot: DirSlot<T>) {
        let mask = self.mask();
        let mut i = self.home(slot.page);
        while self.at(i).page != 0 {
            i = (i + 1) & mask;
        }
        *self.at_mut(i) = slot;
        self.len += 1;
    }

    /// Adds `[start, end)` (non-empty, at most a page, disjoint from every range held).
    pub fn insert(&mut self, start: usize, end: usize, val: T) {
        if 2 * (self.len + 2) > self.slots.len() {
            self.grow();
        }
        let (a, b) = Self::pages(start, end);
        let slot = DirSlot {
            page: a,
            start,
            end,
            val,
        };
        self.insert_slot(slot);
        if b != a {
            self.insert_slot(DirSlot { page: b, ..slot });
        }
    }

    #[inline]
    fn remove_slot(&mut self, page: usize, start: usize) -> bool {
        let mask = self.mask();
        let mut i = self.home(page);
        loop {
            let s = self.at(i);
            if s.page == 0 {
                return false;
            }
            if s.page == page && s.start == start {
                break;
            }
            i = (i + 1) & mask;
        }
        // Backward-shift deletion, as in `PtrMap`.
        let mut hole = i;
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            let e = *self.at(j);
            if e.page == 0 {
                break;
            }
            let home = self.home(e.page);
            if (j.wrapping_sub(home) & mask) >= (j.wrapping_sub(hole) & mask) {
                *self.at_mut(hole) = e;
                hole = j;
            }
        }
        self.at_mut(hole).page = 0;
        self.len -= 1;
        true
    }

    /// Removes the range `[start, end)`; false if it was not held.
    pub fn remove(&mut self, start: usize, end: usize) -> bool {
        let (a, b) = Self::pages(start, end);
        let found = self.remove_slot(a, start);
        if a != b {
            self.remove_slot(b, start);
        }
        found
    }

    /// The range containing `addr`, as `(start, end, val)`.
    pub fn find(&self, addr: usize) -> Option<(usize, usize, T)> {
        let page = addr / DIRECTORY_PAGE + 1;
        let mask = self.mask();
        let mut i = self.home(page);
        loop {
            let s = self.at(i);
            if s.page == 0 {
                return None;
            }
            if s.page == page && s.start <= addr && addr < s.end {
                return Some((s.start, s.end, s.val));
            }
            i = (i + 1) & mask;
        }
    }

    #[cold]
    fn grow(&mut self) {
        let old = std::mem::take(&mut self.slots);
        *self = Directory::with_capacity(old.len());
        for s in old.iter().filter(|s| s.page != 0) {
            self.insert_slot(*s);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashMap};

    use proptest::prelude::*;

    use super::*;
    use crate::mr::free_index::FL_COUNT;

    const U: usize = ALLOCATION_ALIGNMENT;

    #[test]
    fn classes_are_monotonic_and_search_classes_fit() {
        let mut last = (0, 0);
        for units in 1..100_000usize {
            let c = mapping_insert(units);
            assert!(c >= last, "{units}");
            last = c;
            // Every block filed in the search class or above holds the request.
            let (fl, sl) = mapping_search(units);
            let lowest_in_class = (1..=units * 2 + 16)
                .find(|&u| mapping_insert(u) == (fl, sl))
                .unwrap();
            assert!(lowest_in_class >= units, "{units}");
        }
        assert!(mapping_search(usize::MAX >> 8).0 < FL_COUNT);
        assert_eq!(mapping_search(usize::MAX), (FL_COUNT, 0));
    }

    /// The model: every region as an address-ordered map of blocks `start → (size, used)`.
    #[derive(Default)]
    struct Model {
        blocks: BTreeMap<usize, (usize, bool)>,
    }

    /// Checks the heap against the model: same blocks, free blocks fully merged within
    /// their regions, byte and block counts, and that exhaustive search finds a fit when
    /// one exists.
    fn check(h: &Heap, m: &Model, descr: &HashMap<usize, u32>, regions: &[(usize, usize)]) {
        let mut free_bytes = 0;
        let mut free_count = 0;
        let mut largest = 0;
        for &(addr, size) in regions {
            // Walk the region through the heap's links from its first block.
            let first = descr[&addr];
            let mut i = first;
            let mut at = addr;
            let mut prev = NIL;
            let mut prev_free = false;
            while i != NIL {
                let b = h.block(i);
                assert_eq!(b.addr, at, "blocks are contiguous");
                assert_eq!(b.prev_phys, prev);
                let (msize, used) = m.blocks[&b.addr];
                assert_eq!(b.size, msize);
                assert_eq!(b.is_free(), !used);
                if b.is_free() {
                    assert!(!prev_free, "two adjacent free blocks at {at:#x}");
                    free_bytes += b.size;
                    free_count += 1;
                    largest = largest.max(b.size);
                }
                prev_free = b.is_free();
                at += b.size;
                prev = i;
                i = b.next_phys;
            }
            assert_eq!(at, addr + size, "the region is covered");
        }
        assert_eq!(h.bytes_free(), free_bytes);
        assert_eq!(h.free_count(), free_count);
        assert_eq!(h.largest_free(), largest);
        for want in [U, 3 * U, 17 * U, 1000 * U, largest, largest + U] {
            if want == 0 {
                continue;
            }
            let got = h.find_exhaustive(want, usize::MAX);
            assert_eq!(
                got.is_some(),
                want <= largest,
                "find {want} (largest {largest})"
            );
            if let Some(i) = got {
                assert!(h.block(i).is_free() && h.block(i).size >= want);
            }
            if let Some(i) = h.find(want) {
                assert!(h.block(i).is_free() && h.block(i).size >= want);
            }
        }
    }

    #[derive(Clone, Debug)]
    enum Op {
        Alloc(usize),
        Free(usize),
        AddRegion(usize),
        RemoveEmptyRegion(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => (1usize..=4096).prop_map(Op::Alloc),
            1 => (1usize..=64).prop_map(|u| Op::Alloc(u * 1024)),
            5 => any::<usize>().prop_map(Op::Free),
            1 => (1usize..=2048).prop_map(Op::AddRegion),
            1 => any::<usize>().prop_map(Op::RemoveEmptyRegion),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn heap_matches_a_model(ops in proptest::collection::vec(op(), 1..400)) {
            let mut h = Heap::new();
            let mut m = Model::default();
            // Region start → its first block's descriptor (stable while the region exists).
            let mut descr: HashMap<usize, u32> = HashMap::new();
            let mut regions: Vec<(usize, usize)> = Vec::new();
            // Live blocks: (addr, descriptor, region index tag).
            let mut live: Vec<(usize, u32, u64)> = Vec::new();
            let mut next_addr = 1usize << 20;
            for op in ops {
                match op {
                    Op::AddRegion(units) => {
                        let (addr, size) = (next_addr, units * U);
                        // Leave a gap sometimes, adjacent other times: regions never merge.
                        next_addr += size + if units % 2 == 0 { 0 } else { 4 * U };
                        let tag = regions.len() as u64;
                        let i = h.add_region(addr, size, tag);
                        descr.insert(addr, i);
                        regions.push((addr, size));
                        m.blocks.insert(addr, (size, false));
                    }
                    Op::Alloc(units) => {
                        let size = units * U;
                        let fits = m.blocks.values().any(|&(s, used)| !used && s >= size);
                        let Some(i) = h.find_exhaustive(size, usize::MAX) else {
                            prop_assert!(!fits, "a fitting free block exists for {}", size);
                            continue;
                        };
                        let b = *h.block(i);
                        prop_assert!(b.is_free() && b.size >= size);
                        let j = h.take(i, size);
                        prop_assert_eq!(i, j);
                        m.blocks.insert(b.addr, (size, true));
                        if b.size > size {
                            m.blocks.insert(b.addr + size, (b.size - size, false));
                        }
                        live.push((b.addr, i, b.aux));
                    }
                    Op::Free(k) => {
                        if live.is_empty() {
                            continue;
                        }
                        let (addr, i, tag) = live.swap_remove(k % live.len());
                        prop_assert_eq!(h.block(i).addr, addr);
                        let merged = h.release(i, tag);
                        // Model: free and merge with free neighbours of the same region.
                        let region = regions[tag as usize];
                        let (mut start, (mut size, _)) = (addr, m.blocks[&addr]);
                        m.blocks.insert(addr, (size, false));
                        if let Some((&ps, &(pl, pu))) = m.blocks.range(..addr).next_back() {
                            if !pu && ps + pl == addr && ps >= region.0 {
                                m.blocks.remove(&addr);
                                start = ps;
                                size += pl;
                            }
                        }
                        let end = start + size;
                        if end < region.0 + region.1 {
                            if let Some(&(nl, nu)) = m.blocks.get(&end) {
                                if !nu {
                                    m.blocks.remove(&end);
                                    size += nl;
                                }
                            }
                        }
                        m.blocks.insert(start, (size, false));
                        prop_assert_eq!(h.block(merged).addr, start);
                        prop_assert_eq!(h.block(merged).size, size);
                    }
                    Op::RemoveEmptyRegion(k) => {
                        let empty: Vec<usize> = (0..regions.len())
                            .filter(|&r| {
                                let (a, s) = regions[r];
                                s > 0 && m.blocks.get(&a) == Some(&(s, false))
                            })
                            .collect();
                        if empty.is_empty() {
                            continue;
                        }
                        let r = empty[k % empty.len()];
                        let (a, s) = regions[r];
                        let i = descr.remove(&a).unwrap();
                        prop_assert!(h.block(i).is_region());
                        prop_assert_eq!(h.remove_region(i), (a, s));
                        m.blocks.remove(&a);
                        // Keep the index (tags name regions); mark it gone.
                        regions[r] = (a, 0);
                    }
                }
                let present: Vec<(usize, usize)> =
                    regions.iter().copied().filter(|&(_, s)| s > 0).collect();
                check(&h, &m, &descr, &present);
            }
        }

        #[test]
        fn directory_matches_an_ordered_map(
            ops in proptest::collection::vec((any::<bool>(), 0usize..64, 1usize..=4096, any::<u16>()), 1..600)
        ) {
            // Ranges of up to a page at 256-byte granularity within 64 pages, some exactly
            // a page, some crossing a page boundary.
            let mut d: Directory<u16> = Directory::default();
            let mut m: BTreeMap<usize, (usize, u16)> = BTreeMap::new();
            for (insert, page, units, val) in ops {
                let start = page * DIRECTORY_PAGE + (usize::from(val) % 4096) * U;
                let end = start + units * U;
                if insert {
                    let free = m.range(..end).next_back().map_or(true, |(_, &(e, _))| e <= start);
                    if free {
                        d.insert(start, end, val);
                        m.insert(start, (end, val));
                    }
                } else if let Some((&s, &(e, _))) = m.range(..=start).next_back() {
                    prop_assert!(d.remove(s, e));
                    m.remove(&s);
                    prop_assert!(!d.remove(s, e));
                }
                prop_assert_eq!(d.len(), m.len());
                // Probe addresses around every range and at random.
                let probes = m.iter().flat_map(|(&s, &(e, _))| [s.saturating_sub(1), s, e - 1, e])
                    .chain([start, end, page * DIRECTORY_PAGE]);
                for a in probes {
                    let want = m.range(..=a).next_back()
                        .filter(|(_, &(e, _))| a < e)
                        .map(|(&s, &(e, v))| (s, e, v));
                    prop_assert_eq!(d.find(a), want, "address {:#x}", a);
                }
            }
        }

        #[test]
        fn ptr_map_matches_a_hash_map(ops in proptest::collection::vec((any::<bool>(), 1usize..600), 1..2000)) {
            let mut p = PtrMap::with_capacity(4);
            let mut m: HashMap<usize, u32> = HashMap::new();
            for (n, (insert, k)) in ops.into_iter().enumerate() {
                // Keys share low bits (256-byte aligned), as block addresses do.
                let key = k * U;
                if insert && !m.contains_key(&key) {
                    p.insert(key, n as u32);
                    m.insert(key, n as u32);
                } else {
                    prop_assert_eq!(p.remove(key), m.remove(&key));
                }
                prop_assert_eq!(p.len(), m.len());
                prop_assert_eq!(p.get(key), m.get(&key).copied());
            }
            for (&k, &v) in &m {
                prop_assert_eq!(p.get(k), Some(v));
            }
            prop_assert_eq!(p.get(0), None);
        }
    }
}
