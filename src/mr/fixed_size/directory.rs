//! Which batch a block address belongs to, and which blocks are live.
//!
//! A *batch* is one upstream allocation of `blocks_to_preallocate` blocks. Batches get
//! dense ids (`u32`) in the order they are taken; each has one atomic byte per block that
//! says whether the block is live, so that two threads freeing blocks of one batch under
//! different shard locks still agree on which block is live: a free *swaps* the byte to
//! zero, so of two frees of one block exactly one sees it live (a double free is caught
//! even when both race). Handing a block out only *stores* one: the block is free and in
//! the hands of the shard that pops it, so no other operation may claim it. Only threads
//! that use blocks of the same batch touch its bytes' cache lines.
//!
//! The address → batch index is a [`View`]: each shard keeps its own copy, updated under
//! the shard's lock from the resource's list of batches when that list has grown (a
//! length compared on each operation: a load of a cache line that changes only when the
//! resource grows, so it stays shared between threads, never bounced). A view maps each
//! *page* of `2^shift` bytes (the largest power of two not above a batch's size) to the at
//! most two batches overlapping it, so a lookup is one hash probe and two range checks.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use crate::fast_map::FastMap;

/// Blocks per line of live bytes at most: the bytes of each batch are their own
/// allocation of whole 64-byte lines, so two batches never share a line.
const LINE_BLOCKS: usize = 64;
/// Device bytes a line of live bytes covers at least. Blocks of one line that are used by
/// different threads make their line bounce between cores on every allocation and free
/// (blocks move between shards by halves of stacks, so a batch's blocks end up spread over
/// threads): large blocks get a line each, small ones share one, which bounds the host
/// memory of the bytes to one line per 16 KiB of blocks.
const LINE_COVERS: usize = 16 << 10;

/// log2 of the blocks per line of a batch of `block_size`-byte blocks.
pub(super) fn line_shift(block_size: usize) -> u8 {
    let per_line = (LINE_COVERS / block_size.max(1)).clamp(1, LINE_BLOCKS);
    // The largest power of two not above `per_line`.
    (usize::BITS - 1 - per_line.leading_zeros()) as u8
}

#[repr(align(64))]
struct Line([AtomicU8; LINE_BLOCKS]);

impl Default for Line {
    fn default() -> Self {
        Line(std::array::from_fn(|_| AtomicU8::new(0)))
    }
}

/// The shape of every batch of one resource.
#[derive(Clone, Copy, Debug)]
pub(super) struct Geometry {
    /// Bytes per block (a multiple of 256).
    pub block_size: usize,
    /// Blocks per batch (at most `u32::MAX`).
    pub blocks: usize,
    /// `block_size * blocks`.
    pub bytes: usize,
    /// log2 of the page size: the largest power of two not above `bytes`.
    pub shift: u32,
    /// log2 of `block_size` when it is a power of two (an offset's block is then a shift,
    /// not a division).
    pub block_shift: Option<u32>,
}

impl Geometry {
    pub fn new(block_size: usize, blocks: usize) -> Self {
        let bytes = block_size * blocks;
        Geometry {
            block_size,
            blocks,
            bytes,
            shift: usize::BITS - 1 - bytes.leading_zeros(),
            block_shift: block_size
                .is_power_of_two()
                .then(|| block_size.trailing_zeros()),
        }
    }

    /// Block number and whether `off` (an offset into a batch) is at its start.
    #[inline(always)]
    fn block_of(&self, off: usize) -> (usize, bool) {
        match self.block_shift {
            Some(s) => (off >> s, off & (self.block_size - 1) == 0),
            None => {
                let index = off / self.block_size;
                (index, index * self.block_size == off)
            }
        }
    }

    /// The pages overlapping a batch at `base`.
    fn pages(&self, base: usize) -> std::ops::RangeInclusive<usize> {
        (base >> self.shift)..=(base.saturating_add(self.bytes - 1) >> self.shift)
    }
}

/// One upstream allocation of blocks: its address and its blocks' live bytes. Cloning
/// shares the bytes (each shard's view holds a clone: the base address and the pointer to
/// the bytes side by side, one load away from the byte).
#[derive(Clone)]
pub(super) struct Batch {
    /// Address of block 0.
    pub base: usize,
    live: Arc<[Line]>,
    /// log2 of the blocks per line of `live` (see [`line_shift`]).
    shift: u8,
}

impl std::fmt::Debug for Batch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Batch({:#x}, {} live)", self.base, self.live_count())
    }
}

impl Batch {
    /// A batch of `blocks` blocks of `block_size` bytes at `base`, none live.
    pub fn new(base: usize, blocks: usize, block_size: usize) -> Self {
        let shift = line_shift(block_size);
        Batch {
            base,
            live: (0..blocks.div_ceil(1 << shift))
                .map(|_| Line::default())
                .collect(),
            shift,
        }
    }

    #[inline(always)]
    fn byte(&self, index: u32) -> &AtomicU8 {
        let i = index as usize;
        // `& (LINE_BLOCKS - 1)` changes nothing (`shift` is at most 6) but tells the
        // compiler the index is in the line, which saves a bounds check per operation.
        &self.live[i >> self.shift].0[i & ((1 << self.shift) - 1) & (LINE_BLOCKS - 1)]
    }

    /// Marks free block `index`, just popped from a free stack under its shard's lock,
    /// live: a plain store (see the module docs). Relaxed, as every access to the bytes:
    /// the blocks themselves change hands under shard locks or through the program's own
    /// synchronization, which orders the bytes too.
    #[inline(always)]
    pub fn set_live(&self, index: u32) {
        let b = self.byte(index);
        debug_assert_eq!(b.load(Ordering::Relaxed), 0, "a free block was live");
        b.store(1, Ordering::Relaxed);
    }

    /// Marks block `index` free; `false` if it was not live (a double free).
    #[inline(always)]
    pub fn clear_live(&self, index: u32) -> bool {
        self.byte(index).swap(0, Ordering::Relaxed) != 0
    }

    /// Whether block `index` is live (snapshots).
    pub fn is_live(&self, index: u32) -> bool {
        self.byte(index).load(Ordering::Relaxed) != 0
    }

    /// Live blocks of this batch (diagnostics and tests).
    pub fn live_count(&self) -> usize {
        self.live
            .iter()
            .flat_map(|l| l.0.iter())
            .filter(|b| b.load(Ordering::Relaxed) != 0)
            .count()
    }
}

/// What an address is to a resource.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Lookup {
    /// Block `index` of batch `batch`.
    Block { batch: u32, index: u32 },
    /// Inside a batch, but not at the start of a block.
    Interior,
    /// Not in any batch of the resource.
    Foreign,
}

/// A shard's copy of the address → batch index (see the module docs).
#[derive(Default)]
pub(super) struct View {
    batches: Vec<Batch>,
    /// Page number → up to two batch ids, each plus one (0: none), low half first.
    pages: FastMap<usize, u64>,
}

impl std::fmt::Debug for View {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "View({} batches)", self.batches.len())
    }
}

impl View {
    /// Batches known to this view (ids `0..len`).
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.batches.len()
    }

    /// The batch with id `id`, which the view knows.
    #[inline(always)]
    pub fn batch(&self, id: u32) -> &Batch {
        &self.batches[id as usize]
    }

    /// Adds the batches of `all` it does not know yet (`all` extends what it knows).
    pub fn catch_up(&mut self, all: &[Batch], geo: &Geometry) {
        for (id, b) in all.iter().enumerate().skip(self.batches.len()) {
            let tag = id as u64 + 1;
            for page in geo.pages(b.base) {
                let e = self.pages.entry(page).or_insert(0);
                // Batches are disjoint and at least a page long: at most two per page.
                debug_assert!(*e >> 32 == 0, "a third batch on page {page:#x}");
                *e = if *e == 0 { tag } else { *e | tag << 32 };
            }
            self.batches.push(b.clone());
        }
    }

    /// Forgets every batch (after they all went back to upstream).
    pub fn clear(&mut self) {
        self.batches.clear();
        self.pages.clear();
    }

    /// What `addr` is: O(1), one hash probe.
    #[inline]
    pub fn find(&self, addr: usize, geo: &Geometry) -> Lookup {
        let Some(&e) = self.pages.get(&(addr >> geo.shift)) else {
            return Lookup::Foreign;
        };
        for tag in [e & 0xffff_ffff, e >> 32] {
            if tag == 0 {
                continue;
            }
            let id = (tag - 1) as u32;
            let off = addr.wrapping_sub(self.batches[id as usize].base);
            if off < geo.bytes {
                let (index, at_start) = geo.block_of(off);
                return if at_start {
                    Lookup::Block {
                        batch: id,
                        index: index as u32,
                    }
                } else {
                    Lookup::Interior
                };
            }
        }
        Lookup::Foreign
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_map_every_block_and_nothing_else() {
        // Odd sizes: batches of 3 blocks of 768 bytes (2304 bytes, pages of 2048).
        let geo = Geometry::new(768, 3);
        assert_eq!((geo.bytes, geo.shift), (2304, 11));
        // Adjacent and scattered batches, some straddling pages.
        let bases = [0x10_0000, 0x10_0900, 0x10_1200, 0x20_0100, 0x7fff_ff00];
        let all: Vec<Batch> = bases.iter().map(|&b| Batch::new(b, 3, 256)).collect();
        let mut v = View::default();
        v.catch_up(&all[..2], &geo);
        assert_eq!(v.len(), 2);
        v.catch_up(&all, &geo);
        assert_eq!(v.len(), 5);
        for (id, &base) in bases.iter().enumerate() {
            for k in 0..3 {
                let a = base + k * 768;
                assert_eq!(
                    v.find(a, &geo),
                    Lookup::Block {
                        batch: id as u32,
                        index: k as u32
                    }
                );
                assert_eq!(v.find(a + 256, &geo), Lookup::Interior);
            }
        }
        assert_eq!(v.find(0x10_0000 - 256, &geo), Lookup::Foreign);
        assert_eq!(v.find(0x20_0100 + 2304, &geo), Lookup::Foreign);
        assert_eq!(v.find(0x20_0000, &geo), Lookup::Foreign);
        assert_eq!(v.find(0, &geo), Lookup::Foreign);
        assert_eq!(v.find(usize::MAX - 255, &geo), Lookup::Foreign);
        v.clear();
        assert_eq!(v.find(0x10_0000, &geo), Lookup::Foreign);
    }

    #[test]
    fn power_of_two_blocks_are_found_by_shifting() {
        let geo = Geometry::new(1024, 3);
        assert_eq!(
            (geo.bytes, geo.shift, geo.block_shift),
            (3072, 11, Some(10))
        );
        assert_eq!(Geometry::new(768, 3).block_shift, None);
        let all = [Batch::new(0x40_0400, 3, 256)];
        let mut v = View::default();
        v.catch_up(&all, &geo);
        for k in 0..3u32 {
            let a = 0x40_0400 + k as usize * 1024;
            assert_eq!(v.find(a, &geo), Lookup::Block { batch: 0, index: k });
            assert_eq!(v.find(a + 512, &geo), Lookup::Interior);
        }
        assert_eq!(v.find(0x40_0400 + 3072, &geo), Lookup::Foreign);
        assert_eq!(v.find(0x40_0000, &geo), Lookup::Foreign);
    }

    #[test]
    fn live_bytes_catch_double_frees() {
        let b = Batch::new(0x1000, 100, 256);
        assert_eq!(b.live.len(), 2);
        for i in [0, 63, 64, 99] {
            b.set_live(i);
        }
        assert_eq!(b.live_count(), 4);
        let c = b.clone();
        assert!(c.clear_live(63));
        assert!(!b.clear_live(63), "a clone shares the bytes");
        assert!(!b.clear_live(1));
        assert_eq!(b.live_count(), 3);
    }

    #[test]
    fn large_blocks_get_a_line_each_and_small_ones_share() {
        assert_eq!(line_shift(256), 6);
        assert_eq!(line_shift(4096), 2);
        assert_eq!(line_shift(3 * 1024), 2);
        assert_eq!(line_shift(16 << 10), 0);
        assert_eq!(line_shift(1 << 20), 0);
        let big = Batch::new(0x10_0000, 128, 256 << 10);
        assert_eq!(big.live.len(), 128);
        let lines: Vec<*const Line> = (0..128).map(|i| &big.live[i] as *const Line).collect();
        for i in [0u32, 1, 127] {
            big.set_live(i);
            // Each block's byte is on its own line.
            let at = big.byte(i) as *const AtomicU8 as usize;
            assert_eq!(at, lines[i as usize] as usize);
        }
        assert_eq!(big.live_count(), 3);
        assert!(big.clear_live(1));
        assert!(!big.clear_live(1), "a double free is still caught");
        assert_eq!(big.live_count(), 2);
    }
}
