//! One structure of a pool (the global pool or a shard): its blocks, their descriptors and
//! free-block index ([`super::super::free_index`]), its chunks, and the operations on
//! them: find, take, free and merge.

use std::ffi::c_void;
use std::sync::Arc;

use super::epochs::Epochs;
use super::{front, round_up, ALIGN, NAME};
use crate::error::{Error, Result};
use crate::mr::free_index::{
    linked_block, mapping_insert, mapping_search, Classes, Slab, NIL, UNIT_SHIFT,
};
use crate::mr::ptr_map::{PtrMap, SlotHint};
use crate::mr::stream_ordered::{PerStreamLists, StreamRegistry, READY};
use crate::runtime::Stream;

/// Free blocks [`Inner::find`] looks at in a class list for the smallest that fits (lowest
/// address among equals), where TLSF takes the list's head. A class spans 6% of sizes, so
/// the head can be 6% larger than a block behind it, and splitting the larger one scatters
/// small remainders. Best fit in address order keeps free memory in fewer, larger blocks:
/// over the streams workload's trace on one stream, taking the head held 1.27 times the
/// peak live bytes, looking at 2 blocks 1.23 times, at 4, 8 or 64 1.18 times (exact best
/// fit: 1.15 times).
const SCAN: usize = 8;

#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub(in crate::mr) enum State {
    Free,
    Used,
    /// Used by the global pool as a shard's slab (see
    /// [`PoolMemoryResource`](super::PoolMemoryResource)'s docs): not a caller's allocation,
    /// though a caller's first block in the slab has its address.
    Slab,
    /// Slot in the slab's free-slot list (and the dummy, slot 0).
    #[default]
    Vacant,
    /// Held by a thread's front cache (see [`front`]): free or handed out again, which only
    /// the front knows. Allocated as far as this structure is concerned.
    Cached,
}

/// One block of pool memory (free or in use), or a vacant slab slot (the default, with no
/// links: [`NIL`]).
#[derive(Clone, Copy, Debug, Default)]
pub(in crate::mr) struct Block {
    pub(in crate::mr) addr: usize,
    pub(in crate::mr) size: usize,
    pub(in crate::mr) prev_phys: u32,
    pub(in crate::mr) next_phys: u32,
    pub(in crate::mr) prev_free: u32,
    pub(in crate::mr) next_free: u32,
    /// Stream slot the block is free on (or was allocated on).
    pub(in crate::mr) stream: u32,
    pub(in crate::mr) state: State,
    /// When `Cached`, the front holding the block; when `Free`, the free epoch of its
    /// stream slot it was filed in (see [`Epochs`]).
    pub(in crate::mr) tag: u16,
}

// The default descriptor's links (0) say "no block".
const _: () = assert!(NIL == 0);

linked_block!(Block, State, |b| stream: b.stream, tag: b.tag);

/// A chunk taken from upstream.
#[derive(Debug)]
pub(in crate::mr) struct Chunk {
    pub(in crate::mr) addr: usize,
    pub(in crate::mr) size: usize,
    /// Descriptor of the lowest block; stable because merges keep the lower descriptor.
    pub(in crate::mr) first: u32,
}

/// What a structure did with a free (see [`Inner::free_if_owned`]).
#[derive(Debug)]
pub(super) enum Owned {
    /// Not a live allocation here.
    No,
    /// Freed into the lists.
    Freed,
    /// Held by front `.0`, which decides.
    Cached(u16),
    /// Marked `Cached` for the adopting front, which must now keep it (or give it back).
    Adopted { block: u32, size: usize },
}

#[derive(Debug)]
pub(in crate::mr) struct Inner {
    /// Block descriptors; slot 0 is the dummy standing for "no block".
    pub(super) slab: Slab<Block>,
    pub(in crate::mr) streams: StreamRegistry,
    /// TLSF indexes of the free blocks by stream slot; [`READY`]'s first.
    pub(in crate::mr) lists: Vec<Classes>,
    /// Free epochs by stream slot (see [`Epochs`]).
    pub(super) epochs: Vec<Epochs>,
    /// Memory was taken across streams here: record and ripen free epochs.
    pub(super) multi: bool,
    /// Times an allocation came from another stream slot than the one before (wrapping): a
    /// slot records a new epoch only if this changed since its last one, so a stream that
    /// reuses its own memory alone makes no runtime call however much it frees.
    pub(super) switches: u32,
    /// The slot of the last allocation.
    pub(super) last_slot: u32,
    pub(super) live: PtrMap,
    /// Chunks, or in contiguous mode (`granule > 0`) the extents of mapped memory: chunks
    /// that touch are one extent, whose blocks are linked and merge.
    pub(in crate::mr) chunks: Vec<Chunk>,
    /// Contiguous mode: the upstream hands out granule multiples of one address range and
    /// can map more at a chosen place (a [`Placement`](super::Placement)). 0: chunked.
    pub(in crate::mr) granule: usize,
    pub(in crate::mr) pool_size: usize,
    pub(in crate::mr) bytes_free: usize,
    pub(super) free_count: usize,
}

impl Inner {
    /// A structure whose live-allocation table publishes its slots in `hint`, if given.
    pub(super) fn new(
        rt: &'static dyn crate::runtime::Runtime,
        device: crate::runtime::DeviceId,
        hint: Option<Arc<SlotHint>>,
    ) -> Self {
        let dummy = Block {
            stream: u32::MAX,
            ..Block::default()
        };
        Inner {
            slab: Slab::new(dummy, 1024),
            streams: StreamRegistry::with_ready_slot(rt, device),
            lists: vec![Classes::new()],
            epochs: vec![Epochs::default()],
            multi: false,
            switches: 0,
            last_slot: READY,
            live: match hint {
                Some(h) => PtrMap::with_hint(1024, h),
                None => PtrMap::with_capacity(1024),
            },
            chunks: Vec::new(),
            granule: 0,
            pool_size: 0,
            bytes_free: 0,
            free_count: 0,
        }
    }

    #[inline(always)]
    pub(in crate::mr) fn new_block(&mut self, b: Block) -> u32 {
        self.slab.add(b)
    }

    #[inline(always)]
    pub(in crate::mr) fn vacate(&mut self, i: u32) {
        self.slab.vacate(i);
    }

    /// Block `i` (bounds-checked in debug builds only: descriptor indices come from the
    /// pool's own links, never from callers).
    #[inline(always)]
    pub(in crate::mr) fn blk(&self, i: u32) -> &Block {
        self.slab.get(i)
    }

    #[inline(always)]
    pub(in crate::mr) fn blk_mut(&mut self, i: u32) -> &mut Block {
        self.slab.get_mut(i)
    }

    /// Files block `i` (not in any list) in its stream's free list.
    #[inline(always)]
    pub(in crate::mr) fn list_insert(&mut self, i: u32) {
        let (size, stream) = {
            let b = self.blk(i);
            (b.size, b.stream)
        };
        let head = self.lists[stream as usize].push(size, i);
        self.bytes_free += size;
        self.free_count += 1;
        self.slab.link_front(i, head);
    }

    /// Unlinks free block `i` from its stream's free list.
    #[inline(always)]
    pub(in crate::mr) fn list_remove(&mut self, i: u32) {
        let stream = self.blk(i).stream;
        let (size, head) = self.slab.unlink(i);
        self.bytes_free -= size;
        self.free_count -= 1;
        if let Some(next) = head {
            self.lists[stream as usize].unlink_head(size, i, next);
        }
    }

    /// Files block `i` as free on stream slot `s`, merging it with free address neighbours
    /// of the same stream.
    #[inline]
    pub(super) fn free_insert(&mut self, mut i: u32, s: u32) {
        let (next, prev) = {
            let b = self.blk_mut(i);
            b.stream = s;
            (b.next_phys, b.prev_phys)
        };
        // A missing neighbour is the dummy (never `Free`), so no `NIL` checks; links
        // written into the dummy are ignored.
        let n = *self.blk(next);
        if n.state == State::Free && n.stream == s {
            self.list_remove(next);
            let b = self.blk_mut(i);
            b.size += n.size;
            b.next_phys = n.next_phys;
            self.blk_mut(n.next_phys).prev_phys = i;
            self.vacate(next);
        }
        let p = self.blk(prev);
        if p.state == State::Free && p.stream == s {
            self.list_remove(prev);
            let b = *self.blk(i);
            let pb = self.blk_mut(prev);
            pb.size += b.size;
            pb.next_phys = b.next_phys;
            self.blk_mut(b.next_phys).prev_phys = prev;
            self.vacate(i);
            i = prev;
        }
        self.blk_mut(i).tag = self.epochs[s as usize].cur;
        self.list_insert(i);
    }

    /// A free block for slot `s`: its own, else a [`READY`] one.
    #[inline(always)]
    pub(super) fn find_any(&self, s: u32, bytes: usize) -> Option<u32> {
        if self.lists[READY as usize].fl_bitmap == 0 {
            return self.find(s, bytes);
        }
        match (self.find(s, bytes), self.find(READY, bytes)) {
            (Some(a), Some(b)) => Some(if self.blk(b).size < self.blk(a).size {
                b
            } else {
                a
            }),
            (a, b) => a.or(b),
        }
    }

    /// A free block of stream slot `s` with at least `bytes`, in O(1) (at most 2 × [`SCAN`]
    /// blocks looked at).
    #[inline]
    pub(super) fn find(&self, s: u32, bytes: usize) -> Option<u32> {
        let t = &self.lists[s as usize];
        let units = bytes >> UNIT_SHIFT;
        // Blocks of the request's own class may fit even though the class as a whole does
        // not guarantee it: the best of its first few keeps near-exact fits.
        let (fl, sl) = mapping_insert(units);
        if let Some(i) = self.best_in_list(t.head(fl, sl), bytes) {
            return Some(i);
        }
        let (fl, sl) = mapping_search(units);
        t.find_class(fl, sl)
            .and_then(|(fl, sl)| self.best_in_list(t.head(fl, sl), bytes))
    }

    /// The smallest block of at least `bytes` (lowest address among equals) among the
    /// first [`SCAN`] of the free list starting at `i`. An empty list's head is the dummy,
    /// which ends the walk at once.
    #[inline]
    pub(super) fn best_in_list(&self, mut i: u32, bytes: usize) -> Option<u32> {
        let mut best: Option<(usize, usize, u32)> = None;
        let mut n = 0;
        while i != NIL && n < SCAN {
            let b = self.blk(i);
            if b.size >= bytes && best.map_or(true, |(s, a, _)| (b.size, b.addr) < (s, a)) {
                best = Some((b.size, b.addr, i));
            }
            i = b.next_free;
            n += 1;
        }
        best.map(|x| x.2)
    }

    /// Marks free block `i` used for `bytes` on slot `s`, splitting off the rest.
    #[inline]
    pub(super) fn take(&mut self, i: u32, bytes: usize, s: u32) -> *mut c_void {
        // The insert at the end misses the caches in a large table: start it now.
        self.live.prefetch(self.blk(i).addr);
        if s != self.last_slot {
            self.switches = self.switches.wrapping_add(1);
            self.last_slot = s;
        }
        self.list_remove(i);
        let b = *self.blk(i);
        if b.size > bytes {
            let j = self.slab.split(i, bytes);
            // The rest cannot merge with anything: its neighbours were checked when `i` was
            // filed as free on `s`.
            self.list_insert(j);
        }
        let bm = self.blk_mut(i);
        bm.state = State::Used;
        bm.stream = s;
        self.live.insert(b.addr, i);
        b.addr as *mut c_void
    }

    /// Moves every free block of slot `t` to slot `s` (merging neighbours). The caller has
    /// ordered `s` after `t` (or synchronized `t`).
    pub(in crate::mr) fn merge_stream(&mut self, t: u32, s: u32) {
        while let Some((fl, sl)) = self.lists[t as usize].top_class() {
            let i = self.lists[t as usize].heads[fl][sl];
            self.list_remove(i);
            self.free_insert(i, s);
        }
    }

    /// The largest free block on any stream.
    pub(super) fn largest_free(&self) -> usize {
        self.lists
            .iter()
            .map(|t| t.largest(&self.slab))
            .max()
            .unwrap_or(0)
    }

    /// Frees `ptr` (of `bytes`) on `stream` if this structure owns it as a caller's
    /// allocation (or, with `slab`, as a shard's slab). With `adopt`, a block small enough
    /// for a front is marked `Cached` for that front instead of freed. A block already held
    /// by a front is left alone and its front named. A wrong size is an error and changes
    /// nothing.
    #[inline]
    pub(super) fn free_if_owned(
        &mut self,
        ptr: *mut c_void,
        bytes: usize,
        stream: Stream,
        slab: bool,
        adopt: Option<u16>,
    ) -> Result<Owned> {
        let Some((at, i)) = self.live.find(ptr as usize) else {
            return Ok(Owned::No);
        };
        let b = *self.blk(i);
        if b.state == State::Cached {
            return Ok(if slab {
                Owned::No
            } else {
                Owned::Cached(b.tag)
            });
        }
        if (b.state == State::Slab) != slab {
            return Ok(Owned::No);
        }
        if round_up(bytes) != Some(b.size) {
            return Err(Error::invalid(format!(
                "{NAME}: cannot free {ptr:p} with bytes = {bytes}: it was allocated with \
                 {} bytes (rounded to {ALIGN})",
                b.size
            )));
        }
        if let Some(f) = adopt.filter(|_| b.size <= front::FRONT_MAX) {
            let bm = self.blk_mut(i);
            bm.state = State::Cached;
            bm.tag = f;
            return Ok(Owned::Adopted {
                block: i,
                size: b.size,
            });
        }
        self.live.remove_found(at);
        let s = self.slot(stream);
        self.free_insert(i, s);
        // A foreign stream's event is recorded now; nothing for a tracked stream.
        self.streams.refresh(s);
        self.after_free(s, b.size);
        Ok(Owned::Freed)
    }

    /// Frees a block a front let go of (`Cached` here) on `stream`.
    #[inline]
    pub(super) fn free_cached(&mut self, r: &front::Returned) {
        debug_assert_eq!(self.live.get(r.addr), Some(r.block));
        debug_assert_eq!(self.blk(r.block).state, State::Cached);
        self.live.remove(r.addr);
        self.blk_mut(r.block).state = State::Used;
        // Another thread may be emptying the front: name the stream as its owner did.
        let s = self.slot_of_thread(r.stream, r.thread);
        let size = self.blk(r.block).size;
        self.free_insert(r.block, s);
        self.streams.refresh(s);
        self.after_free(s, size);
    }

    /// Files `size` bytes at `addr` (just obtained in stream order on slot `s`'s stream) as
    /// a new chunk, free on `s`. In contiguous mode, a chunk that touches an extent joins
    /// it, and its memory merges with the free blocks it touches.
    pub(super) fn add_chunk_at(&mut self, addr: usize, size: usize, s: u32) {
        if self.granule != 0 {
            self.add_extent_at(addr, size, s);
            return;
        }
        let i = self.new_block(Block {
            addr,
            size,
            prev_phys: NIL,
            next_phys: NIL,
            prev_free: NIL,
            next_free: NIL,
            stream: s,
            state: State::Free,
            tag: 0,
        });
        self.chunks.push(Chunk {
            addr,
            size,
            first: i,
        });
        self.pool_size += size;
        self.free_insert(i, s);
    }

    /// The last block of the extent whose first block is `first`.
    pub(super) fn last_block(&self, first: u32) -> u32 {
        let mut i = first;
        while self.blk(i).next_phys != NIL {
            i = self.blk(i).next_phys;
        }
        i
    }

    /// [`Inner::add_chunk_at`] in contiguous mode.
    pub(super) fn add_extent_at(&mut self, addr: usize, size: usize, s: u32) {
        let end = addr + size;
        let below = self.chunks.iter().position(|c| c.addr + c.size == addr);
        let above = self.chunks.iter().position(|c| c.addr == end);
        let prev = below.map_or(NIL, |c| self.last_block(self.chunks[c].first));
        let next = above.map_or(NIL, |c| self.chunks[c].first);
        let i = self.new_block(Block {
            addr,
            size,
            prev_phys: prev,
            next_phys: next,
            prev_free: NIL,
            next_free: NIL,
            stream: s,
            state: State::Free,
            tag: 0,
        });
        // Links into the dummy when there is no such neighbour: ignored.
        self.blk_mut(prev).next_phys = i;
        self.blk_mut(next).prev_phys = i;
        match (below, above) {
            (Some(b), Some(a)) => {
                let upper = self.chunks[a].size;
                self.chunks[b].size += size + upper;
                self.chunks.swap_remove(a);
            }
            (Some(b), None) => self.chunks[b].size += size,
            (None, Some(a)) => {
                let c = &mut self.chunks[a];
                c.addr = addr;
                c.size += size;
                c.first = i;
            }
            (None, None) => self.chunks.push(Chunk {
                addr,
                size,
                first: i,
            }),
        }
        self.pool_size += size;
        self.free_insert(i, s);
    }
}

impl PerStreamLists for Inner {
    #[inline(always)]
    fn registry(&mut self) -> &mut StreamRegistry {
        &mut self.streams
    }

    fn push_lists(&mut self) {
        self.lists.push(Classes::new());
        self.epochs.push(Epochs::default());
    }

    fn has_free(&self, slot: u32) -> bool {
        !self.lists[slot as usize].is_empty()
    }

    fn move_free(&mut self, from: u32, to: u32) {
        self.merge_stream(from, to);
    }
}
