//! The free-block index of the coalescing sub-allocators (the pool's structures and the
//! arena's heaps): block descriptors in a slab, and free blocks in a TLSF index (two-level
//! segregated fits) of intrusive lists.
//!
//! * [`Slab`]: descriptors in a `Vec` with an intrusive list of vacant slots, so splitting
//!   and merging blocks reuse slots instead of touching the host heap (the slab grows by
//!   doubling, rarely). Slot 0 is a dummy descriptor standing for "no block" ([`NIL`]),
//!   never free: links may be written into it instead of branching on a missing neighbour.
//! * [`Classes`]: a first-level bitmap of power-of-two size classes, a second-level bitmap
//!   of [`SL_COUNT`] linear subclasses each, and the head of each subclass's list of free
//!   blocks, linked through the descriptors. Filing and unlinking a block are O(1); finding
//!   a non-empty class at or above a size is a couple of bit scans.
//!
//! What is shared is the index itself. The users keep what genuinely differs between them:
//! their descriptors (a pool block carries its stream and free epoch, an arena block its
//! owner's tag and the request it serves, see [`Linked`]), how they search a class (the
//! pool takes the best of the first few blocks of a class, to keep free memory in fewer,
//! larger blocks; the arena takes a class's head, the cheapest), and when free neighbours
//! merge (in the pool only blocks free on the same stream; in the arena any two of a
//! region, keeping the larger tag).

use std::borrow::BorrowMut;

use super::ALLOCATION_ALIGNMENT;

/// "No block" in links: slot 0 of the slab, a dummy descriptor that is never a real block
/// (never free, size 0), so a link update may write into "no block" instead of branching.
pub(crate) const NIL: u32 = 0;
/// log2 of the number of second-level classes per first-level class.
pub(crate) const SL_BITS: u32 = 4;
/// Second-level classes per first-level class.
pub(crate) const SL_COUNT: usize = 1 << SL_BITS;
/// First-level classes (sizes are counted in 256-byte units, so 64 covers any `usize`).
pub(crate) const FL_COUNT: usize = 64;
/// log2 of [`ALLOCATION_ALIGNMENT`]: sizes are indexed in units of 256 bytes.
pub(crate) const UNIT_SHIFT: u32 = ALLOCATION_ALIGNMENT.trailing_zeros();

/// The class `(fl, sl)` a free block of `units` (256-byte units, >= 1) is filed under.
/// Below 16 units every size has its own class (exact fit for small blocks); above, class
/// `fl` covers `[2^(fl+3), 2^(fl+4))` units split into 16 equal subranges.
#[inline(always)]
pub(crate) fn mapping_insert(units: usize) -> (usize, usize) {
    debug_assert!(units >= 1);
    // Branch-free (sizes are unpredictable): below 16 units `l < 4`, so both subtractions
    // saturate to 0 and the class is `(0, units)`.
    let l = usize::BITS - 1 - (units | 1).leading_zeros();
    let fl = l.saturating_sub(SL_BITS - 1) as usize;
    let sl = (units >> l.saturating_sub(SL_BITS)) & (SL_COUNT - 1);
    (fl, sl)
}

/// The first class whose every block is at least `units`: the request rounded up to its
/// class's upper boundary, so any block found there fits without looking at it;
/// `(FL_COUNT, 0)` past the largest class.
#[inline(always)]
pub(crate) fn mapping_search(units: usize) -> (usize, usize) {
    let l = usize::BITS - 1 - (units | 1).leading_zeros();
    // 0 below 16 units (exact classes), like `mapping_insert`.
    let round = (1usize << l.saturating_sub(SL_BITS)) - 1;
    match units.checked_add(round) {
        Some(u) => mapping_insert(u),
        None => (FL_COUNT, 0),
    }
}

/// What the index needs of a block descriptor: its size, its free-list links, its address
/// neighbours' links and whether it is free. Implemented with [`linked_block!`] by
/// descriptors that have those fields (`size`, `prev_free`, `next_free`, `prev_phys`,
/// `next_phys`) and a `State` with `Free` and `Vacant`.
pub(crate) trait Linked: Copy {
    fn size(&self) -> usize;
    fn set_size(&mut self, size: usize);
    fn next_phys(&self) -> u32;
    fn set_prev_phys(&mut self, i: u32);
    fn set_next_phys(&mut self, i: u32);
    fn prev_free(&self) -> u32;
    fn next_free(&self) -> u32;
    fn set_prev_free(&mut self, i: u32);
    fn set_next_free(&mut self, i: u32);
    fn is_free(&self) -> bool;
    /// Marks the descriptor free (it was just filed in a list).
    fn set_free(&mut self);
    /// Marks the descriptor a vacant slab slot.
    fn set_vacant(&mut self);
    /// The free block made of this block's bytes from `at` on, whose lower address
    /// neighbour is `prev` (what splitting it at `at` leaves above; the owner's data as the
    /// owner's rules say).
    fn rest(&self, at: usize, prev: u32) -> Self;
}

/// Implements [`Linked`] for a descriptor type `$block` with fields `addr`, `size`,
/// `prev_free`, `next_free`, `prev_phys`, `next_phys` and `state: $state`, whose
/// `$state::Free` and `$state::Vacant` mean free and vacant. The owner's other fields of
/// [`Linked::rest`] follow `|b|`, computed from the block `b` being split.
macro_rules! linked_block {
    ($block:ident, $state:ident, |$b:ident| $($field:ident: $value:expr),* $(,)?) => {
        impl $crate::mr::free_index::Linked for $block {
            #[inline(always)]
            fn size(&self) -> usize {
                self.size
            }
            #[inline(always)]
            fn set_size(&mut self, size: usize) {
                self.size = size;
            }
            #[inline(always)]
            fn next_phys(&self) -> u32 {
                self.next_phys
            }
            #[inline(always)]
            fn set_prev_phys(&mut self, i: u32) {
                self.prev_phys = i;
            }
            #[inline(always)]
            fn set_next_phys(&mut self, i: u32) {
                self.next_phys = i;
            }
            #[inline(always)]
            fn prev_free(&self) -> u32 {
                self.prev_free
            }
            #[inline(always)]
            fn next_free(&self) -> u32 {
                self.next_free
            }
            #[inline(always)]
            fn set_prev_free(&mut self, i: u32) {
                self.prev_free = i;
            }
            #[inline(always)]
            fn set_next_free(&mut self, i: u32) {
                self.next_free = i;
            }
            #[inline(always)]
            fn is_free(&self) -> bool {
                self.state == $state::Free
            }
            #[inline(always)]
            fn set_free(&mut self) {
                self.state = $state::Free;
            }
            #[inline(always)]
            fn set_vacant(&mut self) {
                self.state = $state::Vacant;
            }
            #[inline(always)]
            fn rest(&self, at: usize, prev: u32) -> Self {
                let $b = self;
                $block {
                    addr: $b.addr + at,
                    size: $b.size - at,
                    prev_phys: prev,
                    next_phys: $b.next_phys,
                    prev_free: $crate::mr::free_index::NIL,
                    next_free: $crate::mr::free_index::NIL,
                    state: $state::Free,
                    $($field: $value),*
                }
            }
        }
    };
}
pub(crate) use linked_block;

/// Block descriptors with an intrusive list of vacant slots (see the module docs). Slot 0
/// is the dummy ([`NIL`]).
#[derive(Debug)]
pub(crate) struct Slab<B> {
    blocks: Vec<B>,
    /// The first vacant slot ([`NIL`]: none), linked through `next_free`.
    vacant: u32,
}

impl<B: Linked> Slab<B> {
    /// A slab holding only the dummy descriptor `dummy` (never free), with room for
    /// `capacity` descriptors.
    pub fn new(dummy: B, capacity: usize) -> Self {
        debug_assert!(!dummy.is_free());
        let mut blocks = Vec::with_capacity(capacity);
        blocks.push(dummy);
        Slab {
            blocks,
            vacant: NIL,
        }
    }

    /// Descriptor `i` (bounds-checked in debug builds only: indices come from the users'
    /// own links and from descriptors the slab handed out, never from callers, and slots
    /// are never removed).
    #[inline(always)]
    pub fn get(&self, i: u32) -> &B {
        debug_assert!((i as usize) < self.blocks.len());
        // SAFETY: every index stored in a link or handed out names a slab slot, and the
        // slab never shrinks.
        unsafe { self.blocks.get_unchecked(i as usize) }
    }

    /// Descriptor `i`, to change (see [`Slab::get`]).
    #[inline(always)]
    pub fn get_mut(&mut self, i: u32) -> &mut B {
        debug_assert!((i as usize) < self.blocks.len());
        // SAFETY: as in `get`.
        unsafe { self.blocks.get_unchecked_mut(i as usize) }
    }

    /// Stores `b` in a vacant slot (or a new one) and returns its index.
    #[inline(always)]
    pub fn add(&mut self, b: B) -> u32 {
        if self.vacant != NIL {
            let i = self.vacant;
            let slot = self.get_mut(i);
            let next = slot.next_free();
            *slot = b;
            self.vacant = next;
            i
        } else {
            self.blocks.push(b);
            u32::try_from(self.blocks.len() - 1).expect("fewer than 2^32 block descriptors")
        }
    }

    /// Splits block `i` at `at` bytes (`0 < at <` its size): `i` keeps its first `at` bytes,
    /// and a new block, returned, the rest ([`Linked::rest`]), linked between `i` and its
    /// upper neighbour. Neither is filed in a list.
    #[inline(always)]
    pub fn split(&mut self, i: u32, at: usize) -> u32 {
        let b = *self.get(i);
        let j = self.add(b.rest(at, i));
        // Into the dummy when `i` was last in its range.
        self.get_mut(b.next_phys()).set_prev_phys(j);
        let bm = self.get_mut(i);
        bm.set_next_phys(j);
        bm.set_size(at);
        j
    }

    /// Links block `i` in front of `head` in a free list (the list's old head, or [`NIL`])
    /// and marks it free (see [`Classes::push`]).
    #[inline(always)]
    pub fn link_front(&mut self, i: u32, head: u32) {
        // Into the dummy when the list was empty: no branch.
        self.get_mut(head).set_prev_free(i);
        let b = self.get_mut(i);
        b.set_next_free(head);
        b.set_prev_free(NIL);
        b.set_free();
    }

    /// Unlinks free block `i` from its free-list neighbours. Returns its size and, when it
    /// was its list's head, the block after it, for [`Classes::unlink_head`].
    #[inline(always)]
    pub fn unlink(&mut self, i: u32) -> (usize, Option<u32>) {
        let (size, prev, next) = {
            let b = self.get(i);
            debug_assert!(b.is_free());
            (b.size(), b.prev_free(), b.next_free())
        };
        // Into the dummy when `i` was last: no branch.
        self.get_mut(next).set_prev_free(prev);
        if prev != NIL {
            self.get_mut(prev).set_next_free(next);
            return (size, None);
        }
        (size, Some(next))
    }

    /// Makes slot `i` vacant (its descriptor is no block any more).
    #[inline(always)]
    pub fn vacate(&mut self, i: u32) {
        let vacant = self.vacant;
        let b = self.get_mut(i);
        b.set_vacant();
        b.set_next_free(vacant);
        self.vacant = i;
    }
}

/// The list heads of a [`Classes`], by first- and second-level class.
pub(crate) type Heads = [[u32; SL_COUNT]; FL_COUNT];

/// One TLSF index of free blocks (see the module docs), over the descriptors of a
/// [`Slab`]. The heads are inline (`Heads`, for a pool's index per stream, kept in a `Vec`)
/// or boxed (`Box<Heads>`, for an arena's heap, which moves with its owner).
#[derive(Debug)]
pub(crate) struct Classes<H = Heads> {
    pub fl_bitmap: u64,
    pub sl_bitmap: [u16; FL_COUNT],
    pub heads: H,
}

impl Classes<Heads> {
    /// An empty index with inline heads.
    pub fn new() -> Self {
        Classes::with_heads([[NIL; SL_COUNT]; FL_COUNT])
    }
}

impl Classes<Box<Heads>> {
    /// An empty index with boxed heads.
    pub fn boxed() -> Self {
        Classes::with_heads(Box::new([[NIL; SL_COUNT]; FL_COUNT]))
    }
}

impl<H: BorrowMut<Heads>> Classes<H> {
    fn with_heads(heads: H) -> Self {
        Classes {
            fl_bitmap: 0,
            sl_bitmap: [0; FL_COUNT],
            heads,
        }
    }

    /// Whether no block is filed here.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.fl_bitmap == 0
    }

    /// The first block of class `(fl, sl)`'s list ([`NIL`] when it is empty).
    #[inline(always)]
    pub fn head(&self, fl: usize, sl: usize) -> u32 {
        self.heads.borrow()[fl & (FL_COUNT - 1)][sl & (SL_COUNT - 1)]
    }

    /// Makes block `i` (of `size` bytes, in no list) the head of its class's list and
    /// returns the old head ([`NIL`] when the class was empty), which
    /// [`Slab::link_front`] then links behind `i`. (Filing a block is these two steps, and
    /// taking it out [`Slab::unlink`] then [`Classes::unlink_head`], so that each user
    /// counts its free bytes in between, in the order its hot path was tuned with.)
    #[inline(always)]
    pub fn push(&mut self, size: usize, i: u32) -> u32 {
        let (fl, sl) = mapping_insert(size >> UNIT_SHIFT);
        let (fl, sl) = (fl & (FL_COUNT - 1), sl & (SL_COUNT - 1));
        let heads = self.heads.borrow_mut();
        let head = heads[fl][sl];
        heads[fl][sl] = i;
        self.fl_bitmap |= 1 << fl;
        self.sl_bitmap[fl] |= 1 << sl;
        head
    }

    /// After [`Slab::unlink`] found block `i` (of `size` bytes) at the head of its class's
    /// list: `next` becomes the head (the class empties when it is [`NIL`]).
    #[inline(always)]
    pub fn unlink_head(&mut self, size: usize, i: u32, next: u32) {
        let (fl, sl) = mapping_insert(size >> UNIT_SHIFT);
        let (fl, sl) = (fl & (FL_COUNT - 1), sl & (SL_COUNT - 1));
        let heads = self.heads.borrow_mut();
        debug_assert_eq!(heads[fl][sl], i);
        heads[fl][sl] = next;
        if next == NIL {
            self.sl_bitmap[fl] &= !(1 << sl);
            if self.sl_bitmap[fl] == 0 {
                self.fl_bitmap &= !(1 << fl);
            }
        }
    }

    /// The first non-empty class at or above `(fl, sl)`.
    #[inline(always)]
    pub fn find_class(&self, fl: usize, sl: usize) -> Option<(usize, usize)> {
        if fl >= FL_COUNT {
            return None;
        }
        let sl_map = u32::from(self.sl_bitmap[fl]) & (!0u32 << sl);
        if sl_map != 0 {
            return Some((fl, sl_map.trailing_zeros() as usize));
        }
        let fl_map = if fl + 1 >= FL_COUNT {
            0
        } else {
            self.fl_bitmap & (!0u64 << (fl + 1))
        };
        if fl_map == 0 {
            return None;
        }
        let fl = fl_map.trailing_zeros() as usize;
        Some((fl, self.sl_bitmap[fl].trailing_zeros() as usize))
    }

    /// The highest non-empty class.
    pub fn top_class(&self) -> Option<(usize, usize)> {
        if self.fl_bitmap == 0 {
            return None;
        }
        let fl = 63 - self.fl_bitmap.leading_zeros() as usize;
        let sl = 15 - self.sl_bitmap[fl].leading_zeros() as usize;
        Some((fl, sl))
    }

    /// The size of the largest free block filed here (blocks within one class differ in
    /// size: walks the top class only).
    pub fn largest<B: Linked>(&self, slab: &Slab<B>) -> usize {
        let Some((fl, sl)) = self.top_class() else {
            return 0;
        };
        let mut best = 0;
        let mut i = self.head(fl, sl);
        while i != NIL {
            best = best.max(slab.get(i).size());
            i = slab.get(i).next_free();
        }
        best
    }
}
