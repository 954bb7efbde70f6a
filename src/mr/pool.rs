//! `pool_memory_resource`: a coalescing, stream-ordered sub-allocator over an upstream.
//!
//! # Data structures (why they look like this)
//! - Block descriptors live in a slab (`Vec<Block>`) with an intrusive free-slot list, so
//!   splitting and merging reuse slots instead of touching the host heap; the slab grows
//!   by doubling, rarely.
//! - Each stream has a TLSF index (two-level segregated fits: a first-level bitmap of
//!   power-of-two classes, a second-level bitmap of 16 linear subclasses each, and list
//!   heads), with free lists linked through descriptor indices. Finding a fitting block is
//!   a couple of bit scans: O(1), however many blocks are free. RMM's pool scans its free
//!   list linearly and slows down 15x from 10 000 to 100 000 live allocations.
//! - Live allocations are found by pointer in an open-addressing table (`PtrMap`: linear
//!   probing, load at most 1/8 or, once large, 1/4, doubled only when full), so steady-state
//!   insert/remove never allocates and a free costs one probe sequence. It also makes
//!   foreign, double and wrong-size frees detectable in O(1).
//!   Once it is out of the caches (100 000 live blocks), a free its front does not hold
//!   prefetches its slot before the locks ([`SlotHint`]), and a take prefetches the slot of
//!   its insert before splitting: W1 with 100 000 live blocks 2-4% faster on the H100
//!   machine (prefetching before the front's lookup too cost W2 2-4%).
//! - Slab slot 0 is a dummy descriptor standing for "no block", so hot-path link updates
//!   write into it instead of branching; the last stream used is cached, so same-stream
//!   operations skip the stream lookup.
//! - Each block keeps its address neighbours (`prev_phys`/`next_phys`); a freed block
//!   merges with free neighbours of the same stream (blocks of other streams may still be
//!   in use by work enqueued there, so they merge only once moved to the same stream).
//!
//! Stream ordering follows [`super::stream_ordered`]: same-stream reuse makes no runtime
//! call; taking memory freed on another stream records an event there and waits on it
//! (on a foreign stream, the event is recorded at each free instead, and waited on later).
//! The per-stream state sits behind its own `Arc` so that [`super::stream_lifetime`] can
//! make the pool forget a stream that is being destroyed (see "Tracked and foreign
//! streams" there).

use std::any::Any;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

use super::free_index::{
    linked_block, mapping_insert, mapping_search, Classes, Slab, NIL, UNIT_SHIFT,
};
use super::ptr_map::{PtrMap, SlotHint};
use super::stream_lifetime::{self, StreamState};
use super::stream_ordered::{thread_number, PerStreamLists, StreamRegistry, EPOCH_EVENTS, READY};
use super::thread_slot::{on_thread_exit, thread_slot, ThreadExit};
use super::ALLOCATION_ALIGNMENT as ALIGN;
use super::{current_device_or_unknown, DeviceMemoryResource, SharedResource};
use crate::error::{Error, Result};
use crate::runtime::{runtime, Stream};

const NAME: &str = "pool_memory_resource";
/// Free blocks [`Inner::find`] looks at in a class list for the smallest that fits (lowest
/// address among equals), where TLSF takes the list's head. A class spans 6% of sizes, so
/// the head can be 6% larger than a block behind it, and splitting the larger one scatters
/// small remainders. Best fit in address order keeps free memory in fewer, larger blocks:
/// W4 (one stream) took 1.27x its peak live bytes with the head, 1.23x looking at 2 blocks,
/// 1.18x at 4, 8 or 64 (exact best fit over the same trace: 1.15x).
const SCAN: usize = 8;
/// The first size to try growing a pool of `pool_size` bytes by, for a request of `bytes`
/// (aligned), or `None` when the request does not fit under `maximum` (RMM's
/// `size_to_grow`): half the aligned room left, at least the request, with a maximum.
/// Without one, at least the request and, beyond that: the pool size (doubling it) up to
/// [`GROW_STEP`], then `GROW_STEP` or a 32nd of the pool, whichever is larger. RMM doubles
/// at every size, which leaves up to half of what a growing pool took from upstream unused
/// (2.58x the peak live bytes in the W4 benchmark); growing by a 32nd bounds that overshoot
/// to 3% at a cost of more upstream calls while the pool grows (about 270 from 4 MiB to
/// 40 GiB, each of them a small part of the time the driver takes to map that much
/// memory). On the H100, W4 through binning (whose bins take batches from the pool) took
/// 3.16x its peak live bytes with a 32nd, 3.73x with a sixteenth and 8 MiB steps.
pub(crate) fn size_to_grow(
    bytes: usize,
    pool_size: usize,
    maximum: Option<usize>,
) -> Option<usize> {
    match maximum {
        Some(max) => {
            let room = round_up(max.saturating_sub(pool_size))?;
            (bytes <= room).then(|| bytes.max(round_up(room / 2).unwrap_or(room)).min(room))
        }
        None => {
            let share = round_up(pool_size / GROW_SHARE)?;
            Some(bytes.max(pool_size.min(share.max(GROW_STEP))))
        }
    }
}

/// Without a maximum, a pool doubles up to this size, then grows by this much or a
/// [`GROW_SHARE`]th of its size, whichever is larger (see [`size_to_grow`]).
const GROW_STEP: usize = 4 << 20;
/// See [`GROW_STEP`].
const GROW_SHARE: usize = 32;

/// Rounds `bytes` up to the allocation alignment; `None` on overflow.
fn round_up(bytes: usize) -> Option<usize> {
    bytes.checked_add(ALIGN - 1).map(|b| b & !(ALIGN - 1))
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    Free,
    Used,
    /// Used by the global pool as a shard's slab (see [`PoolMemoryResource`]'s docs): not a
    /// caller's allocation, though a caller's first block in the slab has its address.
    Slab,
    /// Slot in the slab's free-slot list.
    Vacant,
    /// Held by a thread's front cache (see [`front`]): free or handed out again, which only
    /// the front knows. Allocated as far as this structure is concerned.
    Cached,
}

/// One block of pool memory (free or in use), or a vacant slab slot.
#[derive(Clone, Copy, Debug)]
struct Block {
    addr: usize,
    size: usize,
    prev_phys: u32,
    next_phys: u32,
    prev_free: u32,
    next_free: u32,
    /// Stream slot the block is free on (or was allocated on).
    stream: u32,
    state: State,
    /// When `Cached`, the front holding the block; when `Free`, the free epoch of its
    /// stream slot it was filed in (see [`Epochs`]).
    tag: u16,
}

linked_block!(Block, State);

/// The free epochs of one stream slot of a pool structure. Memory freed on stream T may
/// be used by another stream S only once the work enqueued on T before the free has
/// completed. Rather than make S wait on an event recorded on T whenever S runs short (a
/// record, a wait, and the block moves to S only), the structure records an *epoch* event
/// on T every [`Inner::epoch_bytes`] bytes freed there, during a free on T, and queries it
/// later, without waiting: once it has completed, every block freed on T before it moves
/// to the [`READY`] slot, where it merges with its free neighbours whichever stream freed
/// them and serves any stream with no event. Only structures that have taken memory
/// across streams do this (a single stream never needs it). Under the W4 benchmark (four
/// streams, each block freed on another stream than the one it was allocated on), a
/// growing pool took 1.70x its peak live bytes from upstream before: per-stream lists that
/// cannot merge with each other fragment it.
#[derive(Debug, Default, Clone, Copy)]
struct Epochs {
    /// The tag of blocks freed on the slot now (the next epoch to record).
    cur: u16,
    /// The oldest recorded epoch not yet seen complete, when `outstanding > 0`.
    oldest: u16,
    /// Recorded epochs not yet seen complete: `oldest ..` (at most [`EPOCH_EVENTS`]).
    outstanding: u16,
    /// Bytes freed on the slot since its last record or query.
    since: usize,
    /// [`Inner::switches`] at the slot's last record.
    seen: u32,
}

/// A chunk taken from upstream.
#[derive(Debug)]
struct Chunk {
    addr: usize,
    size: usize,
    /// Descriptor of the lowest block; stable because merges keep the lower descriptor.
    first: u32,
}

/// What a structure did with a free (see [`Inner::free_if_owned`]).
#[derive(Debug)]
enum Owned {
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
struct Inner {
    /// Block descriptors; slot 0 is the dummy standing for "no block".
    slab: Slab<Block>,
    streams: StreamRegistry,
    /// TLSF indexes of the free blocks by stream slot; [`READY`]'s first.
    lists: Vec<Classes>,
    /// Free epochs by stream slot (see [`Epochs`]).
    epochs: Vec<Epochs>,
    /// Memory was taken across streams here: record and ripen free epochs.
    multi: bool,
    /// Times an allocation came from another stream slot than the one before (wrapping): a
    /// slot records a new epoch only if this changed since its last one, so a stream that
    /// reuses its own memory alone makes no runtime call however much it frees.
    switches: u32,
    /// The slot of the last allocation.
    last_slot: u32,
    live: PtrMap,
    /// Chunks, or in contiguous mode (`granule > 0`) the extents of mapped memory: chunks
    /// that touch are one extent, whose blocks are linked and merge.
    chunks: Vec<Chunk>,
    /// Contiguous mode: the upstream hands out granule multiples of one address range
    /// ([`super::vmm_pool::VirtualSpace`]) and takes back any whole granules. 0: chunked.
    granule: usize,
    pool_size: usize,
    bytes_free: usize,
    free_count: usize,
}

impl Inner {
    #[inline(always)]
    fn new_block(&mut self, b: Block) -> u32 {
        self.slab.add(b)
    }

    #[inline(always)]
    fn vacate(&mut self, i: u32) {
        self.slab.vacate(i);
    }

    /// Block `i` (bounds-checked in debug builds only: descriptor indices come from the
    /// pool's own links, never from callers).
    #[inline(always)]
    fn blk(&self, i: u32) -> &Block {
        self.slab.get(i)
    }

    #[inline(always)]
    fn blk_mut(&mut self, i: u32) -> &mut Block {
        self.slab.get_mut(i)
    }

    /// Files block `i` (not in any list) in its stream's free list.
    #[inline(always)]
    fn list_insert(&mut self, i: u32) {
        let stream = self.blk(i).stream;
        let size = self.lists[stream as usize].insert(&mut self.slab, i);
        self.bytes_free += size;
        self.free_count += 1;
    }

    /// Unlinks free block `i` from its stream's free list.
    #[inline(always)]
    fn list_remove(&mut self, i: u32) {
        let stream = self.blk(i).stream;
        let size = self.lists[stream as usize].remove(&mut self.slab, i);
        self.bytes_free -= size;
        self.free_count -= 1;
    }

    /// Files block `i` as free on stream slot `s`, merging it with free address neighbours
    /// of the same stream.
    #[inline]
    fn free_insert(&mut self, mut i: u32, s: u32) {
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

    /// Bytes freed on a stream slot between two epoch events (see [`Epochs`]): a 128th of
    /// the structure, at least 1 MiB; in contiguous mode (the vmm pool, whose point is
    /// memory) a 512th, at least 512 KiB. Each epoch costs a record and a query or two, and
    /// a slot holds back at most about two epochs from the other streams. On the H100, W4
    /// (four streams) took 1.36x its peak live bytes with a 64th, 1.28x with a 128th and
    /// with a 256th, recording 0.019, 0.036 and 0.048 events per operation. With best fit
    /// in class lists ([`SCAN`]), on the host runtime (which reads 1.26x and 1.27x as the
    /// H100 does with a 128th): the vmm pool 1.27x with a 128th, 1.23x with a 256th, 1.18x
    /// with a 512th (0.077 events per operation, as one stream does).
    #[inline]
    fn epoch_bytes(&self) -> usize {
        if self.granule != 0 {
            (self.pool_size / 512).max(1 << 19)
        } else {
            (self.pool_size / 128).max(1 << 20)
        }
    }

    /// After `bytes` were freed on slot `s` by an operation on its stream: advances its
    /// free epochs (see [`Epochs`]) when this structure takes memory across streams.
    #[inline(always)]
    fn after_free(&mut self, s: u32, bytes: usize) {
        if self.multi {
            self.advance_epoch(s, bytes);
        }
    }

    #[inline(never)]
    fn advance_epoch(&mut self, s: u32, bytes: usize) {
        let threshold = self.epoch_bytes();
        let e = &mut self.epochs[s as usize];
        e.since += bytes;
        if e.since < threshold {
            return;
        }
        e.since = 0;
        self.poll(s);
        if self.epochs[s as usize].seen != self.switches {
            self.record(s);
        }
    }

    /// Records slot `s`'s next epoch (during an operation on its stream), unless
    /// [`EPOCH_EVENTS`] are outstanding.
    fn record(&mut self, s: u32) {
        let e = self.epochs[s as usize];
        if usize::from(e.outstanding) < EPOCH_EVENTS && self.streams.record_epoch(s, e.cur) {
            self.epoch_recorded(s);
        }
    }

    /// Counts slot `s`'s epoch `cur` as recorded: blocks freed on `s` from now on belong
    /// to the next one.
    fn epoch_recorded(&mut self, s: u32) {
        let switches = self.switches;
        let e = &mut self.epochs[s as usize];
        if e.outstanding == 0 {
            e.oldest = e.cur;
        }
        e.outstanding += 1;
        e.cur = e.cur.wrapping_add(1);
        e.seen = switches;
    }

    /// Orders slot `s` after slot `t` before using `t`'s free memory, with an epoch event
    /// of `t` when one can be recorded (then all of `t`'s free memory becomes ready for
    /// every stream once it completes, and the next miss on `s` finds it there with no
    /// event). Returns `true` when the device was synchronized instead (see
    /// [`StreamRegistry::order_after`]).
    fn order_after(&mut self, s: u32, t: u32) -> Result<bool> {
        let e = self.epochs[t as usize];
        if usize::from(e.outstanding) < EPOCH_EVENTS
            && self.streams.order_after_epoch(s, t, e.cur)?
        {
            self.epoch_recorded(t);
            return Ok(false);
        }
        self.streams.order_after(s, t)
    }

    /// Queries slot `t`'s outstanding epochs, oldest first, and ripens up to the last one
    /// that has completed.
    fn poll(&mut self, t: u32) {
        let mut done = None;
        loop {
            let e = self.epochs[t as usize];
            if e.outstanding == 0 || !self.streams.epoch_done(t, e.oldest) {
                break;
            }
            done = Some(e.oldest);
            let e = &mut self.epochs[t as usize];
            e.oldest = e.oldest.wrapping_add(1);
            e.outstanding -= 1;
        }
        if let Some(done) = done {
            self.ripen(t, done);
        }
    }

    /// Records slot `s`'s next epoch now (during an operation on its stream), so that every
    /// block on its list (just gathered from other streams) becomes ready once it
    /// completes.
    fn seal(&mut self, s: u32) {
        if self.multi && s != READY {
            self.record(s);
        }
    }

    /// Moves every free block of slot `t` freed up to epoch `done` (completed) to
    /// [`READY`] (merging there).
    fn ripen(&mut self, t: u32, done: u16) {
        let mut fl_bits = self.lists[t as usize].fl_bitmap;
        while fl_bits != 0 {
            let fl = fl_bits.trailing_zeros() as usize;
            fl_bits &= fl_bits - 1;
            let mut sl_bits = self.lists[t as usize].sl_bitmap[fl];
            while sl_bits != 0 {
                let sl = sl_bits.trailing_zeros() as usize;
                sl_bits &= sl_bits - 1;
                let mut i = self.lists[t as usize].heads[fl][sl];
                while i != NIL {
                    let b = *self.blk(i);
                    // Tags in a list are at most EPOCH_EVENTS + 1 epochs apart: no
                    // wrap-around issue.
                    if done.wrapping_sub(b.tag) < u16::MAX / 2 {
                        // Merging in READY never touches `t`'s blocks: `next_free` holds.
                        self.list_remove(i);
                        self.free_insert(i, READY);
                    }
                    i = b.next_free;
                }
            }
        }
    }

    /// Moves to [`READY`] what every slot's completed epoch event covers (the slow path,
    /// before taking memory from another stream with an event).
    fn ripen_all(&mut self) {
        for t in 1..self.lists.len() as u32 {
            self.poll(t);
        }
    }

    /// A free block for slot `s`: its own, else a [`READY`] one.
    #[inline(always)]
    fn find_any(&self, s: u32, bytes: usize) -> Option<u32> {
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
    fn find(&self, s: u32, bytes: usize) -> Option<u32> {
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
    fn best_in_list(&self, mut i: u32, bytes: usize) -> Option<u32> {
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
    fn take(&mut self, i: u32, bytes: usize, s: u32) -> *mut c_void {
        // The insert at the end misses the caches in a large table: start it now.
        self.live.prefetch(self.blk(i).addr);
        if s != self.last_slot {
            self.switches = self.switches.wrapping_add(1);
            self.last_slot = s;
        }
        self.list_remove(i);
        let b = *self.blk(i);
        if b.size > bytes {
            let j = self.new_block(Block {
                addr: b.addr + bytes,
                size: b.size - bytes,
                prev_phys: i,
                next_phys: b.next_phys,
                prev_free: NIL,
                next_free: NIL,
                stream: b.stream,
                state: State::Free,
                tag: b.tag,
            });
            // Into the dummy when `i` was last in its chunk.
            self.blk_mut(b.next_phys).prev_phys = j;
            let bm = self.blk_mut(i);
            bm.next_phys = j;
            bm.size = bytes;
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
    fn merge_stream(&mut self, t: u32, s: u32) {
        while let Some((fl, sl)) = self.lists[t as usize].top_class() {
            let i = self.lists[t as usize].heads[fl][sl];
            self.list_remove(i);
            self.free_insert(i, s);
        }
    }

    /// The largest free block on any stream.
    fn largest_free(&self) -> usize {
        self.lists
            .iter()
            .map(|t| t.largest(&self.slab))
            .max()
            .unwrap_or(0)
    }
}

/// Requests up to this size go to the calling thread's shard once the pool is sharded;
/// larger ones always use the global pool (they are rare and large enough that a lock is
/// not what they cost).
const SHARD_MAX: usize = 1 << 20;
/// The smallest slab a shard takes from the global pool; a shard's slabs double with its
/// size up to [`SLAB_MAX`], so a thread's memory grows in few global operations.
const SLAB_MIN: usize = 4 << 20;
/// The largest slab a shard takes at once.
const SLAB_MAX: usize = 64 << 20;
/// Contended acquisitions of the global lock before the pool turns sharding on.
const CONTENTION_TO_SHARD: u32 = 64;

/// The per-thread shards of a pool (see [`PoolMemoryResource`]'s docs).
struct Shards {
    /// Turned on (once, for good) when the global lock was found contended
    /// [`CONTENTION_TO_SHARD`] times, or by [`PoolMemoryResource::set_sharded`].
    active: AtomicBool,
    contended: AtomicU32,
    list: Box<[OnceLock<Arc<Mutex<Inner>>>]>,
}

impl Shards {
    fn new() -> Self {
        let n = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(8)
            .clamp(2, 64)
            .next_power_of_two();
        Shards {
            active: AtomicBool::new(false),
            contended: AtomicU32::new(0),
            list: (0..n).map(|_| OnceLock::new()).collect(),
        }
    }

    #[inline(always)]
    fn active(&self) -> bool {
        self.active.load(Ordering::Relaxed)
    }

    /// The calling thread's shard index (the count is a power of two: a mask, not a
    /// division, on the hot path).
    #[inline(always)]
    fn mine(&self) -> usize {
        thread_number() & (self.list.len() - 1)
    }

    /// The shards made so far.
    fn made(&self) -> impl Iterator<Item = (usize, &Arc<Mutex<Inner>>)> {
        self.list
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.get().map(|s| (i, s)))
    }
}

/// A pool's free memory, read in one pass ([`PoolMemoryResource::free_summary`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FreeSummary {
    /// Bytes taken from upstream (or mapped) and not allocated.
    pub bytes_free: usize,
    /// Number of free blocks.
    pub free_block_count: usize,
    /// Size of the largest free block (never above `bytes_free`).
    pub largest_free_block: usize,
}

impl FreeSummary {
    /// `1 - largest_free_block / bytes_free`, or 0 when nothing is free; within [0, 1].
    pub fn fragmentation(&self) -> f64 {
        if self.bytes_free == 0 {
            0.0
        } else {
            1.0 - self.largest_free_block as f64 / self.bytes_free as f64
        }
    }
}

/// A coalescing pool sub-allocator (hipMM's `pool_memory_resource`), growing from its
/// upstream on demand up to an optional maximum. See the module docs for its structure
/// and [`super::stream_ordered`] for the stream rules (including destroyed streams).
///
/// # Threads
/// A pool starts as one structure behind one lock (the *global* pool). When that lock is
/// found contended (many threads allocating at once), the pool turns *sharded*: each
/// thread (thread number modulo the CPU count) then serves requests up to [`SHARD_MAX`]
/// from its own shard, a structure of the same kind with its own lock, whose chunks are
/// *slabs* allocated from the global pool in stream order. A free goes to the structure
/// that owns the pointer (the thread's shard first, then the global pool, then the other
/// shards), so every structure keeps the stream rules on its own. A shard that runs dry
/// takes another slab; when the global pool cannot grow, the request falls back to the
/// global pool after the shards' entirely free slabs are returned to it. Single-threaded
/// programs never shard.
///
/// In front of all of it, each thread has a front cache of the blocks up to 1 MiB it freed
/// on its stream (see [`front`]): its next requests on that stream take them back without
/// touching the pool's locks or lists.
pub struct PoolMemoryResource {
    upstream: SharedResource,
    maximum: Option<usize>,
    core: Arc<Core>,
    /// Contiguous mode's upstream, which can map at a chosen place.
    space: Option<Arc<super::vmm_pool::VirtualSpace>>,
    /// The class name errors give (the resource this pool is the core of).
    name: &'static str,
}

/// The structures of a pool, shared (weakly) with [`stream_lifetime`] and with the
/// thread-exit hooks of the threads that used its fronts.
struct Core {
    /// The global pool.
    inner: Mutex<Inner>,
    /// Where the global pool's live-allocation table is, for a free to prefetch its probe
    /// before taking the lock (with 100 000 live blocks the table is out of the L2 cache).
    live_hint: Arc<SlotHint>,
    shards: Shards,
    fronts: front::Fronts,
    /// Batches of freed blocks taken out of a front and not yet back in their structure
    /// (counted under the front's lock). Introspection and release wait for it to reach
    /// zero after emptying the fronts: without that, a thread ending (or switching streams)
    /// at that moment would hold blocks the caller already freed where neither sees them.
    returning: AtomicUsize,
}

impl Core {
    /// The structure a front entry's `owner` names.
    fn structure(&self, owner: u32) -> &Mutex<Inner> {
        if owner == 0 {
            &self.inner
        } else {
            self.shards.list[owner as usize - 1]
                .get()
                .expect("a front holds a block of a shard that exists")
        }
    }

    /// Frees `ptr` (`bytes`, on `stream`) in front `f` (locked), keeping it there if
    /// `keep` and the front has room within the budget.
    #[inline(always)]
    fn front_free(
        &self,
        f: &mut front::Front,
        ptr: *mut c_void,
        bytes: usize,
        stream: Stream,
        keep: bool,
    ) -> Result<front::Freed> {
        f.free(
            ptr as usize,
            bytes,
            front::norm(stream),
            keep,
            self.fronts.budget(),
        )
    }

    /// Frees blocks that left fronts into their structures.
    fn give_back(&self, blocks: &[front::Returned]) {
        for r in blocks {
            self.structure(r.owner).lock().free_cached(r);
        }
    }

    /// Empties front `f` (locked) into `out`, counting the batch in [`Core::returning`]
    /// until [`Core::give_back_drained`] has freed it.
    fn drain(&self, f: &mut front::Front, out: &mut Vec<front::Returned>) -> usize {
        let before = out.len();
        f.drain(out);
        let batches = usize::from(out.len() > before);
        if batches > 0 {
            self.returning.fetch_add(batches, Ordering::Relaxed);
        }
        batches
    }

    /// Frees what [`Core::drain`] took (`batches` of it) into the structures.
    fn give_back_drained(&self, out: &[front::Returned], batches: usize) {
        // Most calls (a free's front claim) drained nothing: no atomic read-modify-write of
        // the shared count for them.
        if batches == 0 {
            debug_assert!(out.is_empty());
            return;
        }
        #[cfg(test)]
        front_tests::pause_if_armed(self);
        self.give_back(out);
        self.returning.fetch_sub(batches, Ordering::Release);
    }

    /// Empties the fronts (those caching for `only` when given) into their structures.
    fn flush_fronts(&self, only: Option<Stream>) {
        let only = only.map(front::norm);
        let (mut out, mut batches) = (Vec::new(), 0);
        for cell in self.fronts.all() {
            let mut f = cell.lock();
            if f.cached_count > 0 && (only.is_none() || f.stream == only) {
                batches += self.drain(&mut f, &mut out);
            }
            if only.is_some() && f.stream == only {
                f.stream = None;
            }
        }
        self.give_back_drained(&out, batches);
    }

    /// Empties every front and waits until blocks other threads took out of fronts are
    /// back in their structures: then every block freed before the call is seen as free.
    fn settle(&self) {
        self.flush_fronts(None);
        while self.returning.load(Ordering::Acquire) != 0 {
            std::thread::yield_now();
        }
    }
}

impl StreamState for Core {
    fn forget_stream(&self, stream: Stream) -> Result<()> {
        // Fronts first: their blocks go back as freed on `stream`, which the structures
        // then order after its work like the rest of its memory.
        self.flush_fronts(Some(stream));
        self.inner.lock().forget(stream)?;
        for (_, shard) in self.shards.made() {
            shard.lock().forget(stream)?;
        }
        Ok(())
    }
}

impl ThreadExit for Core {
    fn thread_exited(&self, slot: usize) {
        let (mut out, mut batches) = (Vec::new(), 0);
        {
            let mut f = self.fronts.of(slot).lock();
            if f.owner == slot {
                batches = self.drain(&mut f, &mut out);
                f.owner = front::UNCLAIMED;
                f.stream = None;
            }
        }
        self.give_back_drained(&out, batches);
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

impl Inner {
    /// A structure whose live-allocation table publishes its slots in `hint`, if given.
    fn new(
        rt: &'static dyn crate::runtime::Runtime,
        device: crate::runtime::DeviceId,
        hint: Option<Arc<SlotHint>>,
    ) -> Self {
        let dummy = Block {
            addr: 0,
            size: 0,
            prev_phys: NIL,
            next_phys: NIL,
            prev_free: NIL,
            next_free: NIL,
            stream: u32::MAX,
            state: State::Vacant,
            tag: 0,
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

    /// Files `size` bytes at `addr` (just obtained in stream order on slot `s`'s stream) as
    /// a new chunk, free on `s`. In contiguous mode, a chunk that touches an extent joins
    /// it, and its memory merges with the free blocks it touches.
    fn add_chunk_at(&mut self, addr: usize, size: usize, s: u32) {
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
    fn last_block(&self, first: u32) -> u32 {
        let mut i = first;
        while self.blk(i).next_phys != NIL {
            i = self.blk(i).next_phys;
        }
        i
    }

    /// [`Inner::add_chunk_at`] in contiguous mode.
    fn add_extent_at(&mut self, addr: usize, size: usize, s: u32) {
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

    /// Contiguous mode: unmaps the whole granules inside free blocks, each given back
    /// through `give_back(addr, size, stream)` on the stream its block was freed on (a
    /// foreign stream's blocks on the default stream, ordered after it). With `only_idle`, only
    /// blocks of streams whose frees have completed, and only until at most `keep`
    /// bytes are free. The blocks around a given-back range stay; an extent it cuts in two
    /// becomes two. Returns the bytes given back, and whether a block was left for its
    /// stream's work.
    fn release_free_granules(
        &mut self,
        keep: usize,
        only_idle: bool,
        mut give_back: impl FnMut(usize, usize, Stream) -> Result<()>,
    ) -> Result<(usize, bool)> {
        let g = self.granule;
        if !only_idle && self.bytes_free > keep {
            // Free blocks of different streams never merge, so granules they share would
            // stay mapped: bring every stream's free memory to the default stream first
            // (ordered after each), where touching blocks merge.
            let d = self.slot(Stream::DEFAULT);
            for t in 0..self.lists.len() as u32 {
                if t != d && self.lists[t as usize].fl_bitmap != 0 {
                    self.streams.order_after(d, t)?;
                    self.merge_stream(t, d);
                }
            }
        }
        let mut candidates = Vec::new();
        for c in &self.chunks {
            let mut i = c.first;
            while i != NIL {
                let b = self.blk(i);
                let lo = b.addr.next_multiple_of(g);
                let hi = (b.addr + b.size) / g * g;
                if b.state == State::Free && hi > lo {
                    candidates.push(i);
                }
                i = b.next_phys;
            }
        }
        let mut released = 0;
        let mut first_err = None;
        let mut busy = false;
        let mut idle_slots: Vec<Option<bool>> = vec![None; self.lists.len()];
        for i in candidates {
            if self.bytes_free <= keep {
                break;
            }
            let b = *self.blk(i);
            let mut s0 = b.stream;
            if only_idle {
                let streams = &self.streams;
                let slot = &mut idle_slots[s0 as usize];
                if !*slot.get_or_insert_with(|| streams.frees_done(s0)) {
                    busy = true;
                    continue;
                }
                if !streams.nameable(s0) {
                    // Its frees are done (and a foreign stream may be gone).
                    s0 = self.slot(Stream::DEFAULT);
                }
            } else if !self.streams.nameable(s0) {
                // Give back on the default stream, ordered after the stream's frees.
                let d = self.slot(Stream::DEFAULT);
                if let Err(e) = self.streams.order_after(d, s0) {
                    first_err.get_or_insert(e);
                    continue;
                }
                s0 = d;
            }
            let hi = (b.addr + b.size) / g * g;
            let mut lo = b.addr.next_multiple_of(g);
            if keep > 0 {
                // Give back only what is above `keep`, from the block's top (its bottom stays,
                // where it may merge with what lies below).
                let excess = (self.bytes_free - keep) / g * g;
                if excess == 0 {
                    break;
                }
                lo = lo.max(hi - excess.min(hi - lo));
            }
            let c = self
                .chunks
                .iter()
                .position(|c| c.addr <= b.addr && b.addr < c.addr + c.size)
                .expect("a free block lies in an extent");
            self.list_remove(i);
            // The part below the granules stays as `i`; the part above becomes a new block.
            let upper = if b.addr + b.size > hi {
                let j = self.new_block(Block {
                    addr: hi,
                    size: b.addr + b.size - hi,
                    prev_phys: NIL,
                    next_phys: b.next_phys,
                    prev_free: NIL,
                    next_free: NIL,
                    stream: b.stream,
                    state: State::Free,
                    tag: b.tag,
                });
                self.blk_mut(b.next_phys).prev_phys = j;
                self.list_insert(j);
                self.blk_mut(j).tag = b.tag;
                j
            } else {
                self.blk_mut(b.next_phys).prev_phys = NIL;
                b.next_phys
            };
            let lower_kept = lo > b.addr;
            if lower_kept {
                let bm = self.blk_mut(i);
                bm.size = lo - b.addr;
                bm.next_phys = NIL;
                self.list_insert(i);
                self.blk_mut(i).tag = b.tag;
            } else {
                self.blk_mut(b.prev_phys).next_phys = NIL;
                self.vacate(i);
            }
            // Split the extent around [lo, hi).
            let (c_addr, c_end, c_first) = {
                let c = &self.chunks[c];
                (c.addr, c.addr + c.size, c.first)
            };
            let lower_first = if c_addr < lo { Some(c_first) } else { None };
            let upper_part = (hi < c_end).then_some(upper);
            self.chunks.swap_remove(c);
            if let Some(first) = lower_first {
                self.chunks.push(Chunk {
                    addr: c_addr,
                    size: lo - c_addr,
                    first,
                });
            }
            if let Some(first) = upper_part {
                self.chunks.push(Chunk {
                    addr: hi,
                    size: c_end - hi,
                    first,
                });
            }
            self.pool_size -= hi - lo;
            released += hi - lo;
            let stream = self.streams.get(s0).stream;
            if let Err(e) = give_back(lo, hi - lo, stream) {
                first_err.get_or_insert(e);
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok((released, busy)),
        }
    }

    /// The allocation path when stream slot `s` has no fitting block, before growing: take
    /// another stream's free memory (ordered after it).
    fn steal(&mut self, rounded: usize, s: u32) -> Result<Option<*mut c_void>> {
        // Nothing moves for a request that all the free memory could not serve: a failed
        // request changes nothing.
        if self.multi && self.bytes_free >= rounded {
            self.ripen_all();
            if let Some(i) = self.find(READY, rounded) {
                return Ok(Some(self.take(i, rounded, s)));
            }
        }
        // Path 1: a stream whose free memory has a fitting block. Only that block moves
        // (after the event), not the stream's whole list: with many threads, moving whole
        // lists made them bounce between streams at O(free blocks) per miss.
        for t in 0..self.lists.len() as u32 {
            if t != s {
                if let Some(i) = self.find(t, rounded) {
                    self.multi = true;
                    if self.order_after(s, t)? {
                        // The device was synchronized: all of `t`'s memory is safe here.
                        self.merge_stream(t, s);
                        self.seal(s);
                        if let Some(i) = self.find(s, rounded) {
                            return Ok(Some(self.take(i, rounded, s)));
                        }
                    } else {
                        // `s` is ordered after `t`: carve the request out of `t`'s block,
                        // whose rest stays `t`'s (moving the whole block to `s` scattered
                        // large free blocks over the streams).
                        return Ok(Some(self.take(i, rounded, s)));
                    }
                }
            }
        }
        // Path 2: enough bytes are free over all streams that merging them may create a
        // block that fits: gather every stream's free memory here before growing. Each
        // free block moves at most once per time it is freed, so this stays amortized O(1).
        if self.bytes_free >= rounded {
            for t in 0..self.lists.len() as u32 {
                if t != s && self.lists[t as usize].fl_bitmap != 0 {
                    self.multi = true;
                    self.streams.order_after(s, t)?;
                    self.merge_stream(t, s);
                }
            }
            // What merged here is `s`'s now: make it ready for every stream soon.
            self.seal(s);
            if let Some(i) = self.find(s, rounded) {
                return Ok(Some(self.take(i, rounded, s)));
            }
        }
        Ok(None)
    }

    /// Frees `ptr` (of `bytes`) on `stream` if this structure owns it as a caller's
    /// allocation (or, with `slab`, as a shard's slab). With `adopt`, a block small enough
    /// for a front is marked `Cached` for that front instead of freed. A block already held
    /// by a front is left alone and its front named. A wrong size is an error and changes
    /// nothing.
    #[inline]
    fn free_if_owned(
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
    fn free_cached(&mut self, r: &front::Returned) {
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

    /// Takes every entirely free chunk out, each to be given back in stream order on the
    /// stream its first block was freed on (after waiting for the streams that freed its
    /// other blocks) through `give_back(addr, size, stream)`. Returns the bytes released.
    fn release_free_chunks(
        &mut self,
        mut give_back: impl FnMut(usize, usize, Stream) -> Result<()>,
    ) -> Result<usize> {
        let mut released = 0;
        let mut first_err = None;
        let mut c = self.chunks.len();
        while c > 0 {
            c -= 1;
            let first = self.chunks[c].first;
            let mut i = first;
            let mut all_free = true;
            while i != NIL {
                if self.blk(i).state != State::Free {
                    all_free = false;
                    break;
                }
                i = self.blk(i).next_phys;
            }
            if !all_free {
                continue;
            }
            let mut s0 = self.blk(first).stream;
            if !self.streams.nameable(s0) {
                // Free on the default stream, ordered after the stream's frees like every
                // other block's (see `nameable`).
                s0 = self.slot(Stream::DEFAULT);
            }
            let mut i = first;
            while i != NIL {
                let b = *self.blk(i);
                if b.stream != s0 {
                    if let Err(e) = self.streams.order_after(s0, b.stream) {
                        first_err.get_or_insert(e);
                    }
                }
                self.list_remove(i);
                self.vacate(i);
                i = b.next_phys;
            }
            let chunk = self.chunks.swap_remove(c);
            self.pool_size -= chunk.size;
            released += chunk.size;
            let stream = self.streams.get(s0).stream;
            if let Err(e) = give_back(chunk.addr, chunk.size, stream) {
                first_err.get_or_insert(e);
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(released),
        }
    }
}

impl PoolMemoryResource {
    /// A pool over `upstream` that takes `initial_pool_size` bytes at once (0: grow on
    /// demand) and never holds more than `maximum_pool_size` (unbounded when `None`).
    /// Both sizes must be multiples of 256 and initial must not exceed maximum.
    pub fn new(
        upstream: SharedResource,
        initial_pool_size: usize,
        maximum_pool_size: Option<usize>,
    ) -> Result<Self> {
        if initial_pool_size % ALIGN != 0 {
            return Err(Error::invalid(format!(
                "{NAME}: Initial pool size required to be a multiple of {ALIGN} bytes: \
                 initial_pool_size = {initial_pool_size}"
            )));
        }
        if let Some(max) = maximum_pool_size {
            if max % ALIGN != 0 {
                return Err(Error::invalid(format!(
                    "{NAME}: Maximum pool size required to be a multiple of {ALIGN} bytes: \
                     maximum_pool_size = {max}"
                )));
            }
            if initial_pool_size > max {
                return Err(Error::invalid(format!(
                    "{NAME}: Initial pool size exceeds the maximum pool size: \
                     initial_pool_size = {initial_pool_size} > maximum_pool_size = {max}"
                )));
            }
        }
        let rt = runtime()?;
        let device = current_device_or_unknown(rt);
        let live_hint = Arc::new(SlotHint::default());
        let pool = PoolMemoryResource {
            upstream,
            maximum: maximum_pool_size,
            core: Arc::new(Core {
                inner: Mutex::new(Inner::new(rt, device, Some(live_hint.clone()))),
                live_hint,
                shards: Shards::new(),
                fronts: front::Fronts::new(),
                returning: AtomicUsize::new(0),
            }),
            space: None,
            name: NAME,
        };
        if initial_pool_size > 0 {
            let mut inner = pool.core.inner.lock();
            let s = inner.slot(Stream::DEFAULT);
            pool.add_chunk(&mut inner, initial_pool_size, Stream::DEFAULT, s)?;
        }
        stream_lifetime::register(Arc::downgrade(&pool.core) as _);
        Ok(pool)
    }

    /// A pool in contiguous mode over `space` (see [`Inner::granule`]): grows in multiples
    /// of `granule`, merges memory across growths, and releases whole free granules
    /// anywhere. For [`super::vmm_pool::VmmPoolMemoryResource`].
    pub(crate) fn contiguous(
        space: Arc<super::vmm_pool::VirtualSpace>,
        granule: usize,
        initial_pool_size: usize,
        maximum_pool_size: Option<usize>,
    ) -> Result<Self> {
        let mut pool =
            PoolMemoryResource::new(space.clone() as SharedResource, 0, maximum_pool_size)?;
        pool.space = Some(space);
        pool.name = super::vmm_pool::NAME;
        let mut inner = pool.core.inner.lock();
        inner.granule = granule;
        if initial_pool_size > 0 {
            let s = inner.slot(Stream::DEFAULT);
            pool.add_chunk(&mut inner, initial_pool_size, Stream::DEFAULT, s)?;
        }
        drop(inner);
        Ok(pool)
    }

    /// Contiguous mode: unmaps free granules of streams with no work left until at most
    /// `keep` bytes are free in the global pool. Returns the bytes released, the bytes the
    /// global pool still holds free, and whether some were left for their stream's work.
    pub(crate) fn release_idle(&self, keep: usize) -> Result<(usize, usize, bool)> {
        let mut inner = self.core.inner.lock();
        let upstream = &self.upstream;
        let (id, device) = (self.history_id(), inner.streams.device());
        let released = inner.release_free_granules(keep, true, |addr, size, stream| {
            crate::counters::upstream_free();
            if crate::history::recorder::enabled() {
                let kind = crate::history::recorder::EventKind::Release;
                crate::history::recorder::record(kind, addr, size, stream.0, device, self.name, id);
            }
            upstream.deallocate(addr as *mut c_void, size, stream)
        });
        self.core.fronts.set_pool_size(inner.pool_size);
        let (released, busy) = released?;
        Ok((released, inner.bytes_free, busy))
    }

    /// Whether the global pool holds more than `bytes` free (false when its lock is busy:
    /// the caller's check is a heuristic).
    #[inline]
    pub(crate) fn global_bytes_free_above(&self, bytes: usize) -> bool {
        self.core
            .inner
            .try_lock()
            .is_some_and(|inner| inner.bytes_free > bytes)
    }

    /// The global pool's chunks (extents in contiguous mode) and the shards' slabs, each
    /// with its blocks, after the fronts were emptied.
    pub fn segments_of(&self, chunk_kind: &'static str) -> Vec<super::Segment> {
        let mut out = Vec::new();
        let mut kind = chunk_kind;
        self.each_structure(|inner| {
            for c in &inner.chunks {
                let mut blocks = Vec::new();
                let mut i = c.first;
                while i != NIL {
                    let b = inner.blk(i);
                    blocks.push(super::SegmentBlock {
                        addr: b.addr,
                        size: b.size,
                        state: match b.state {
                            State::Free => "free",
                            State::Slab => "slab",
                            _ => "used",
                        },
                    });
                    i = b.next_phys;
                }
                out.push(super::Segment {
                    kind,
                    addr: c.addr,
                    size: c.size,
                    blocks,
                });
            }
            // Every structure after the global pool is a shard.
            kind = "shard_slab";
        });
        out
    }

    /// Turns per-thread shards on (or off for new requests: memory already in shards
    /// stays there until freed and released). Pools shard by themselves when their lock is
    /// contended; this is for tests and for programs that know they are multi-threaded.
    pub fn set_sharded(&self, on: bool) {
        self.core.shards.active.store(on, Ordering::Relaxed);
    }

    /// Whether per-thread shards are on (see the type's docs).
    pub fn is_sharded(&self) -> bool {
        self.core.shards.active()
    }

    /// The upstream resource.
    pub fn upstream(&self) -> SharedResource {
        self.upstream.clone()
    }

    /// Bytes currently taken from upstream.
    pub fn pool_size(&self) -> usize {
        self.core.inner.lock().pool_size
    }

    /// The maximum pool size, if any.
    pub fn maximum_pool_size(&self) -> Option<usize> {
        self.maximum
    }

    /// `f` over the global pool and every shard, each locked in turn, after the fronts
    /// were emptied into them (so cached blocks count as free blocks).
    fn each_structure(&self, mut f: impl FnMut(&Inner)) {
        self.core.settle();
        f(&self.core.inner.lock());
        for (_, shard) in self.core.shards.made() {
            f(&shard.lock());
        }
    }

    /// Number of free blocks, over all streams (and shards).
    pub fn free_block_count(&self) -> usize {
        self.free_summary().free_block_count
    }

    /// Size of the largest free block, over all streams (and shards).
    pub fn largest_free_block(&self) -> usize {
        self.free_summary().largest_free_block
    }

    /// Bytes free in the pool (taken from upstream and not allocated). Memory in a
    /// shard's slabs that is not allocated counts as free.
    pub fn bytes_free(&self) -> usize {
        self.free_summary().bytes_free
    }

    /// `1 - largest_free_block / bytes_free`, or 0 when nothing is free: 0 means all free
    /// memory is one block.
    pub fn fragmentation(&self) -> f64 {
        self.free_summary().fragmentation()
    }

    /// Free bytes, free blocks and the largest free block, read in one pass over the
    /// global pool and the shards, so that they agree with each other while other threads
    /// allocate and free (separate reads could see a largest block above the free bytes:
    /// a fragmentation below 0, found by the C ABI fuzzer on a GPU).
    pub fn free_summary(&self) -> FreeSummary {
        let mut s = FreeSummary::default();
        self.each_structure(|i| {
            s.bytes_free += i.bytes_free;
            s.free_block_count += i.free_count;
            s.largest_free_block = s.largest_free_block.max(i.largest_free());
        });
        s
    }

    /// Returns every shard's entirely free slabs to the global pool (in stream order), then
    /// every entirely free chunk of the global pool to upstream, each deallocated in stream
    /// order on the stream its first block was freed on (after waiting for the streams that
    /// freed its other blocks). Returns the bytes released to upstream.
    pub fn release(&self) -> Result<usize> {
        self.core.settle();
        let shards = self.reclaim_slabs();
        let mut inner = self.core.inner.lock();
        let upstream = &self.upstream;
        let (id, device) = (self.history_id(), inner.streams.device());
        let give_back = |addr: usize, size: usize, stream: Stream| {
            crate::counters::upstream_free();
            if crate::history::recorder::enabled() {
                let kind = crate::history::recorder::EventKind::Release;
                crate::history::recorder::record(kind, addr, size, stream.0, device, self.name, id);
            }
            upstream.deallocate(addr as *mut c_void, size, stream)
        };
        let released = if inner.granule != 0 {
            inner
                .release_free_granules(0, false, give_back)
                .map(|(n, _)| n)
        } else {
            inner.release_free_chunks(give_back)
        };
        self.core.fronts.set_pool_size(inner.pool_size);
        match (shards, released) {
            (Err(e), _) | (Ok(()), Err(e)) => Err(e),
            (Ok(()), Ok(n)) => Ok(n),
        }
    }

    /// Gives every shard's entirely free slabs back to the global pool.
    fn reclaim_slabs(&self) -> Result<()> {
        let mut first_err = None;
        for (_, shard) in self.core.shards.made() {
            let mut sh = shard.lock();
            // Lock order: a shard, then the global pool (never the other way round).
            let r = sh.release_free_chunks(|addr, size, stream| {
                let mut g = self.core.inner.lock();
                match g.free_if_owned(addr as *mut c_void, size, stream, true, None) {
                    Ok(Owned::Freed) => Ok(()),
                    Ok(_) => Err(Error::invalid(format!(
                        "{NAME}: internal error: slab {addr:#x} ({size} bytes) is not \
                         allocated in the global pool (please report this as a bug)"
                    ))),
                    Err(e) => Err(e),
                }
            });
            if let Err(e) = r {
                first_err.get_or_insert(e);
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Forgets `stream` (which must still be alive): the default stream is ordered after
    /// its work (an event recorded on it; the host does not wait), its free blocks move to
    /// the default stream, and the pool never touches it again (unless it is used again).
    /// Destroying a stream through the library (`rmm_stream_destroy`,
    /// [`stream_destroyed`](super::stream_destroyed)) does this for every live pool.
    pub fn forget_stream(&self, stream: Stream) -> Result<()> {
        self.core.forget_stream(stream)?;
        Ok(())
    }

    /// The global lock; counts contention, which turns sharding on.
    #[inline(always)]
    fn lock_global(&self) -> parking_lot::MutexGuard<'_, Inner> {
        if let Some(g) = self.core.inner.try_lock() {
            return g;
        }
        self.note_contention();
        crate::counters::bump(crate::counters::Counter::LockWaits);
        self.core.inner.lock()
    }

    #[cold]
    fn note_contention(&self) {
        if self.core.shards.contended.fetch_add(1, Ordering::Relaxed) + 1 >= CONTENTION_TO_SHARD {
            self.core.shards.active.store(true, Ordering::Relaxed);
        }
    }

    /// The calling thread's shard, made on first use.
    fn my_shard(&self) -> &Arc<Mutex<Inner>> {
        self.core.shards.list[self.core.shards.mine()].get_or_init(|| {
            let (rt, device) = {
                let g = self.core.inner.lock();
                (g.streams.runtime(), g.streams.device())
            };
            // The pool's `Core` makes shards forget destroyed streams.
            Arc::new(Mutex::new(Inner::new(rt, device, None)))
        })
    }

    /// Takes a chunk of `size` from upstream on `stream` and files it as free on slot `s`.
    fn add_chunk(&self, inner: &mut Inner, size: usize, stream: Stream, s: u32) -> Result<()> {
        let p = self.upstream.allocate(size, stream)?;
        crate::counters::upstream_alloc();
        let addr = p as usize;
        if p.is_null() || addr % ALIGN != 0 {
            if !p.is_null() {
                // Give it back; a failure to do so changes nothing for the caller.
                let _ = self.upstream.deallocate(p, size, stream);
            }
            return Err(Error::BadAlloc {
                requested: size,
                resource: NAME,
                detail: format!(
                    "upstream {} returned {p:p}, which is not aligned to {ALIGN} bytes",
                    self.upstream.name()
                ),
            });
        }
        inner.add_chunk_at(addr, size, s);
        self.core.fronts.set_pool_size(inner.pool_size);
        self.note(
            crate::history::recorder::EventKind::Grow,
            inner,
            addr,
            size,
            stream,
        );
        Ok(())
    }

    /// The pool's name in memory-history events: its address, as snapshots name resources
    /// (a vmm pool holds its pool as its first field, so the two addresses are one).
    fn history_id(&self) -> usize {
        self as *const Self as usize
    }

    /// A memory-history event of this pool's growth or release, when recording.
    #[inline]
    fn note(
        &self,
        kind: crate::history::recorder::EventKind,
        inner: &Inner,
        addr: usize,
        size: usize,
        stream: Stream,
    ) {
        if crate::history::recorder::enabled() {
            let id = self.history_id();
            crate::history::recorder::record(
                kind,
                addr,
                size,
                stream.0,
                inner.streams.device(),
                self.name,
                id,
            );
        }
    }

    fn oom(&self, inner: &Inner, requested: usize, why: &str) -> Error {
        let max = match self.maximum {
            Some(m) => format!("{m} bytes"),
            None => "unbounded".into(),
        };
        Error::OutOfMemory {
            requested,
            resource: self.name,
            device: inner.streams.device(),
            detail: format!(
                "{why}: pool size {} bytes, maximum {max}, {} bytes free, largest free block \
                 {} bytes",
                inner.pool_size,
                inner.bytes_free,
                inner.largest_free()
            ),
        }
    }

    /// The global pool's allocation path when stream slot `s` has no fitting block: take
    /// another stream's free memory (ordered after it), then grow when `grow` allows
    /// (`None` when it would have to and may not).
    #[cold]
    #[inline(never)]
    fn allocate_slow(
        &self,
        inner: &mut Inner,
        rounded: usize,
        stream: Stream,
        s: u32,
        grow: bool,
    ) -> Result<Option<*mut c_void>> {
        if let Some(p) = inner.steal(rounded, s)? {
            return Ok(Some(p));
        }
        if !grow {
            return Ok(None);
        }
        // Grow (every other stream's free memory is already here, or could not have made
        // a fitting block).
        self.grow(inner, rounded, stream, s)?;
        // The new chunk may be ordered on `stream` by the upstream: cover it.
        inner.streams.refresh(s);
        let i = inner
            .find(s, rounded)
            .expect("the pool just grew by at least the request");
        Ok(Some(inner.take(i, rounded, s)))
    }

    /// Allocates `rounded` bytes from the global pool on `stream` (for a shard's slab with
    /// `slab`); `None` when the pool would have to grow and `grow` is false.
    fn allocate_global(
        &self,
        rounded: usize,
        stream: Stream,
        slab: bool,
        grow: bool,
    ) -> Result<Option<*mut c_void>> {
        let mut inner = self.lock_global();
        let s = inner.slot(stream);
        let p = match inner.find_any(s, rounded) {
            Some(i) => inner.take(i, rounded, s),
            None => match self.allocate_slow(&mut inner, rounded, stream, s, grow)? {
                Some(p) => p,
                None => return Ok(None),
            },
        };
        if slab {
            let i = inner.live.get(p as usize).expect("just allocated");
            inner.blk_mut(i).state = State::Slab;
        }
        Ok(Some(p))
    }

    /// A shard's allocation path when stream slot `s` has no fitting block: another
    /// stream's free memory in the shard, then a new slab from the global pool (halving
    /// the slab down to the request when the global pool cannot give it).
    #[cold]
    #[inline(never)]
    fn shard_slow(
        &self,
        sh: &mut Inner,
        rounded: usize,
        stream: Stream,
        s: u32,
        grow: bool,
    ) -> Result<Option<*mut c_void>> {
        if let Some(p) = sh.steal(rounded, s)? {
            return Ok(Some(p));
        }
        let mut slab = sh.pool_size.clamp(SLAB_MIN, SLAB_MAX);
        if let Some(max) = self.maximum {
            // A bounded pool keeps most of its room in the global pool, where any thread
            // and any size can use it.
            slab = slab.min(round_up(max / 64).unwrap_or(max));
        }
        let mut slab = slab.max(rounded);
        let addr = loop {
            match self.allocate_global(slab, stream, true, grow) {
                Ok(Some(p)) => break p as usize,
                // Without growing, a smaller slab may still be there.
                Ok(None) if slab > rounded => {
                    slab = round_up(slab / 2).unwrap_or(rounded).max(rounded);
                }
                Ok(None) => return Ok(None),
                Err(Error::OutOfMemory { .. }) if slab > rounded => {
                    slab = round_up(slab / 2).unwrap_or(rounded).max(rounded);
                }
                Err(e) => return Err(e),
            }
        };
        sh.add_chunk_at(addr, slab, s);
        // The slab is ordered on `stream` by the global pool: cover it.
        sh.streams.refresh(s);
        let i = sh
            .find(s, rounded)
            .expect("the shard just took a slab of at least the request");
        Ok(Some(sh.take(i, rounded, s)))
    }

    /// Grows the pool by at least `bytes` (already aligned), RMM's rule: with a maximum,
    /// try max(`bytes`, half the room left), failing at once when `bytes` exceeds the room;
    /// without one, try max(`bytes`, pool size). On upstream out-of-memory, halve the try
    /// down to `bytes`.
    /// Contiguous mode: grows by mapping right after the extent whose last block is free on
    /// slot `s` and largest, so that block and the new memory make one block of `bytes`;
    /// false when no such extent can be extended.
    fn grow_in_place(&self, inner: &mut Inner, bytes: usize, s: u32) -> Result<bool> {
        let Some(space) = &self.space else {
            return Ok(false);
        };
        let g = inner.granule;
        let mut best: Option<(usize, usize)> = None; // (extent end, free tail bytes)
        for c in &inner.chunks {
            let last = inner.blk(inner.last_block(c.first));
            if last.state == State::Free
                && last.stream == s
                && best.map_or(true, |b| last.size > b.1)
            {
                best = Some((c.addr + c.size, last.size));
            }
        }
        let Some((end, tail)) = best else {
            return Ok(false);
        };
        let Some(need) = bytes.saturating_sub(tail).checked_next_multiple_of(g) else {
            return Ok(false);
        };
        let over = |m: usize| inner.pool_size.checked_add(need).map_or(true, |t| t > m);
        if need == 0 || self.maximum.is_some_and(over) {
            return Ok(false);
        }
        // Beyond the request, grow as the pool's rule says (in granules, under the maximum).
        // Growth here is cheap to undo (release unmaps any free granule), so the pool grows
        // by its unbounded rule even under a maximum (RMM's rule, half the room left, would
        // map gigabytes for a first small request); the maximum caps it below.
        let mut want = size_to_grow(need, inner.pool_size, None)
            .and_then(|w| w.checked_next_multiple_of(g))
            .unwrap_or(need)
            .max(need);
        if let Some(m) = self.maximum {
            want = want.min(m - inner.pool_size);
        }
        for size in [want, need] {
            // Out of memory for the larger try: the smaller may still fit.
            let mapped = match space.map_at(end, size) {
                Err(Error::OutOfMemory { .. }) if size > need => false,
                r => r?,
            };
            if mapped {
                crate::counters::upstream_alloc();
                inner.add_chunk_at(end, size, s);
                self.core.fronts.set_pool_size(inner.pool_size);
                let stream = inner.streams.get(s).stream;
                self.note(
                    crate::history::recorder::EventKind::Grow,
                    inner,
                    end,
                    size,
                    stream,
                );
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn grow(&self, inner: &mut Inner, bytes: usize, stream: Stream, s: u32) -> Result<()> {
        if inner.granule != 0 && self.grow_in_place(inner, bytes, s)? {
            return Ok(());
        }
        // Contiguous mode grows in whole granules (the maximum is one already).
        let g = inner.granule.max(1);
        let granules = |n: usize| n.checked_next_multiple_of(g);
        let (Some(bytes), Some(mut try_size)) = (
            granules(bytes),
            // Contiguous mode grows by the unbounded rule under a maximum too (see
            // `grow_in_place`); the room check and cap below keep the maximum.
            size_to_grow(
                bytes,
                inner.pool_size,
                if inner.granule != 0 {
                    None
                } else {
                    self.maximum
                },
            )
            .and_then(granules),
        ) else {
            return Err(self.oom(inner, bytes, "maximum pool size exceeded"));
        };
        if self
            .maximum
            .is_some_and(|m| inner.pool_size.checked_add(bytes).map_or(true, |t| t > m))
        {
            return Err(self.oom(inner, bytes, "maximum pool size exceeded"));
        }
        if let Some(m) = self.maximum {
            try_size = try_size.min(m - inner.pool_size);
        }
        loop {
            match self.add_chunk(inner, try_size, stream, s) {
                Ok(()) => {
                    log::debug!("{NAME}: grew by {try_size} bytes to {}", inner.pool_size);
                    return Ok(());
                }
                Err(Error::OutOfMemory { detail, .. }) => {
                    if try_size == bytes {
                        let why = format!(
                            "upstream {} could not grow the pool ({detail})",
                            self.upstream.name()
                        );
                        return Err(self.oom(inner, bytes, &why));
                    }
                    try_size = granules(round_up(try_size / 2).unwrap_or(bytes))
                        .unwrap_or(bytes)
                        .max(bytes);
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// The allocation path of a sharded pool for a small request.
    #[inline]
    fn allocate_sharded(
        &self,
        rounded: usize,
        stream: Stream,
        grow: bool,
    ) -> Result<Option<*mut c_void>> {
        let mut sh = crate::counters::lock(self.my_shard());
        let s = sh.slot(stream);
        if let Some(i) = sh.find_any(s, rounded) {
            return Ok(Some(sh.take(i, rounded, s)));
        }
        match self.shard_slow(&mut sh, rounded, stream, s, grow) {
            Err(Error::OutOfMemory { .. }) => {}
            r => return r,
        }
        drop(sh);
        // The global pool could not give a slab: return the shards' free slabs to it and
        // serve this request there.
        self.reclaim_slabs()?;
        self.allocate_global(rounded, stream, false, grow)
    }

    /// Allocates from the pool's structures (the thread's shard or the global pool);
    /// `None` when that needs growth and `grow` is false.
    #[inline]
    fn allocate_structures(
        &self,
        rounded: usize,
        stream: Stream,
        grow: bool,
    ) -> Result<Option<*mut c_void>> {
        if rounded <= SHARD_MAX && self.core.shards.active() {
            self.allocate_sharded(rounded, stream, grow)
        } else {
            self.allocate_global(rounded, stream, false, grow)
        }
    }

    /// Frees `ptr` into the structure that owns it: the calling thread's shard, the global
    /// pool, then the other shards (only the global pool while nothing was sharded). A
    /// block small enough is adopted by front `adopt` instead. Returns what happened and
    /// the structure that answered (0 global, k + 1 shard k).
    #[inline]
    fn free_structures(
        &self,
        ptr: *mut c_void,
        bytes: usize,
        stream: Stream,
        adopt: Option<u16>,
    ) -> Result<(Owned, u32)> {
        if !(self.core.shards.active() || self.any_shard()) {
            let done = self
                .lock_global()
                .free_if_owned(ptr, bytes, stream, false, adopt)?;
            return Ok((done, 0));
        }
        let mine = self.core.shards.mine();
        if let Some(shard) = self.core.shards.list[mine].get() {
            match shard
                .lock()
                .free_if_owned(ptr, bytes, stream, false, adopt)?
            {
                Owned::No => {}
                done => return Ok((done, mine as u32 + 1)),
            }
        }
        match self
            .lock_global()
            .free_if_owned(ptr, bytes, stream, false, adopt)?
        {
            Owned::No => {}
            done => return Ok((done, 0)),
        }
        for (i, shard) in self.core.shards.made() {
            if i != mine {
                match shard
                    .lock()
                    .free_if_owned(ptr, bytes, stream, false, adopt)?
                {
                    Owned::No => {}
                    done => return Ok((done, i as u32 + 1)),
                }
            }
        }
        Ok((Owned::No, 0))
    }

    /// The slow free path: the pool's structures, and the fronts holding blocks the
    /// caller's front does not.
    #[cold]
    #[inline(never)]
    fn deallocate_slow(&self, ptr: *mut c_void, bytes: usize, stream: Stream) -> Result<()> {
        // The global table's probe comes after the front's second lock and the pool's lock,
        // and misses the caches when the table is large: start it now.
        self.core.live_hint.prefetch(ptr as usize);
        let me = thread_slot();
        let (adopt, settled) = self.front_for(me, bytes, stream);
        let (done, owner) = self.free_structures(ptr, bytes, stream, adopt)?;
        let r = self.finish_free(ptr, bytes, stream, me, adopt, done, owner);
        if r.is_ok() && !settled {
            // Only a good free may claim or switch the thread's front: bad input changes
            // nothing.
            self.update_front(me, bytes, stream);
        }
        r
    }

    /// The rest of [`Self::deallocate_slow`] once a structure has answered.
    #[allow(clippy::too_many_arguments)]
    fn finish_free(
        &self,
        ptr: *mut c_void,
        bytes: usize,
        stream: Stream,
        me: usize,
        adopt: Option<u16>,
        done: Owned,
        owner: u32,
    ) -> Result<()> {
        match done {
            Owned::Freed => Ok(()),
            Owned::No => Err(Error::invalid(format!(
                "{NAME}: cannot free {ptr:p} ({bytes} bytes): it was not allocated by this \
                 pool or was already freed"
            ))),
            Owned::Adopted { block, size } => {
                let f = adopt.expect("adopted for this front") as usize;
                let kept = {
                    let mut g = self.core.fronts.of(f).lock();
                    // The front may have filled up (or been emptied) since it was asked.
                    g.owner == me
                        && g.adopt(
                            ptr as usize,
                            size,
                            block,
                            owner,
                            front::norm(stream),
                            self.core.fronts.budget(),
                        )
                };
                if !kept {
                    self.core.give_back(&[front::Returned {
                        addr: ptr as usize,
                        block,
                        owner,
                        stream,
                        thread: thread_number(),
                    }]);
                }
                Ok(())
            }
            Owned::Cached(f) => {
                // Held by front `f` (handed out by it, or freed already).
                let freed = {
                    let mut g = self.core.fronts.of(f as usize).lock();
                    let keep = g.owner == me;
                    self.core.front_free(&mut g, ptr, bytes, stream, keep)?
                };
                match freed {
                    front::Freed::Kept => Ok(()),
                    front::Freed::Return(r) => {
                        self.core.give_back(&[r]);
                        Ok(())
                    }
                    front::Freed::NotHere => Err(Error::invalid(format!(
                        "{NAME}: cannot free {ptr:p} ({bytes} bytes): it was already freed"
                    ))),
                }
            }
        }
    }

    /// The front of thread slot `me` when it should keep a block of `bytes` freed on
    /// `stream`, and whether that front is already `me`'s and caching for `stream` (then
    /// [`Self::update_front`] would change nothing, and a free need not lock the front again
    /// to make it). One lock of the front.
    fn front_for(&self, me: usize, bytes: usize, stream: Stream) -> (Option<u16>, bool) {
        // Where `update_front` returns early, it does nothing either.
        if me == super::thread_slot::NO_SLOT {
            return (None, true);
        }
        let Some(size) = round_up(bytes).filter(|&s| s <= front::FRONT_MAX) else {
            return (None, true);
        };
        let norm = front::norm(stream);
        let f = self.core.fronts.of(me).lock();
        let keep = f.owner == me && f.would_keep(size, norm, self.core.fronts.budget());
        (
            keep.then_some((me & (self.core.fronts.len() - 1)) as u16),
            f.owner == me && f.stream == Some(norm),
        )
    }

    /// After a good free of `bytes` on `stream`: claims thread slot `me`'s front if no
    /// thread has it, and switches the front to `stream` after enough frees on it (tracked
    /// streams only).
    fn update_front(&self, me: usize, bytes: usize, stream: Stream) {
        let stream = front::norm(stream);
        if me == super::thread_slot::NO_SLOT
            || !round_up(bytes).is_some_and(|size| size <= front::FRONT_MAX)
        {
            return;
        }
        let (mut out, mut batches) = (Vec::new(), 0);
        {
            let mut f = self.core.fronts.of(me).lock();
            if f.owner != me && f.owner != front::UNCLAIMED {
                return;
            }
            if f.stream != Some(stream) {
                f.misses = f.misses.saturating_add(1);
            }
            if front::should_retarget(&f, stream) && f.declined != Some(stream) {
                if !stream_lifetime::is_tracked(stream) {
                    f.declined = Some(stream);
                } else {
                    if f.owner == front::UNCLAIMED {
                        f.owner = me;
                        on_thread_exit(Arc::downgrade(&self.core) as _);
                    }
                    batches = self.core.drain(&mut f, &mut out);
                    f.stream = Some(stream);
                    f.stream_thread = thread_number();
                    f.misses = 0;
                }
            }
        }
        self.core.give_back_drained(&out, batches);
    }

    /// Bytes held free in the fronts (without emptying them).
    #[cfg(test)]
    fn front_cached(&self) -> usize {
        self.core.fronts.all().map(|c| c.lock().cached_bytes).sum()
    }

    /// Whether any shard was made (memory may then live in shards even if sharding was
    /// turned off since).
    fn any_shard(&self) -> bool {
        self.core.shards.made().next().is_some()
    }
}

impl std::fmt::Debug for PoolMemoryResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let size = self.core.inner.try_lock().map(|i| i.pool_size);
        write!(
            f,
            "{NAME}(upstream: {}, pool_size: {size:?}, maximum: {:?}, sharded: {})",
            self.upstream.name(),
            self.maximum,
            self.core.shards.active()
        )
    }
}

impl DeviceMemoryResource for PoolMemoryResource {
    fn allocate(&self, bytes: usize, stream: Stream) -> Result<*mut c_void> {
        if bytes == 0 {
            return Ok(std::ptr::null_mut());
        }
        let Some(rounded) = round_up(bytes) else {
            let inner = self.core.inner.lock();
            return Err(self.oom(&inner, bytes, "request too large"));
        };
        if rounded <= front::FRONT_MAX {
            let me = thread_slot();
            let mut f = self.core.fronts.of(me).lock();
            if f.owner == me && f.stream == Some(front::norm(stream)) {
                if let Some(p) = f.take(rounded) {
                    crate::counters::bump(crate::counters::Counter::FrontHits);
                    return Ok(p as *mut c_void);
                }
            }
        }
        if let Some(p) = self.allocate_structures(rounded, stream, false)? {
            return Ok(p);
        }
        // The pool would have to grow: first give it what the fronts hold.
        self.core.settle();
        Ok(self
            .allocate_structures(rounded, stream, true)?
            .expect("growth allowed"))
    }

    fn deallocate(&self, ptr: *mut c_void, bytes: usize, stream: Stream) -> Result<()> {
        if ptr.is_null() {
            return Ok(());
        }
        let me = thread_slot();
        let freed = {
            let mut f = self.core.fronts.of(me).lock();
            if f.owner == me {
                self.core.front_free(&mut f, ptr, bytes, stream, true)?
            } else {
                front::Freed::NotHere
            }
        };
        match freed {
            front::Freed::Kept => {
                crate::counters::bump(crate::counters::Counter::FrontHits);
                Ok(())
            }
            front::Freed::Return(r) => {
                self.core.give_back(&[r]);
                Ok(())
            }
            front::Freed::NotHere => self.deallocate_slow(ptr, bytes, stream),
        }
    }

    fn name(&self) -> &'static str {
        NAME
    }

    fn segments(&self) -> Vec<super::Segment> {
        self.segments_of("pool_chunk")
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn upstream(&self) -> Option<SharedResource> {
        Some(self.upstream.clone())
    }
}

impl Drop for PoolMemoryResource {
    fn drop(&mut self) {
        if crate::runtime::process_is_exiting() {
            return;
        }
        // Cached blocks are free: not to be counted as the user's live allocations.
        self.core.settle();
        // Slabs are live allocations of the global pool: they go back to upstream with its
        // chunks. The shards' own live allocations are the user's.
        let (mut live, mut slabs) = (0, 0);
        for (_, shard) in self.core.shards.made() {
            let sh = shard.lock();
            live += sh.live.len();
            slabs += sh.chunks.len();
        }
        // `stream_lifetime` may hold the state for a moment: lock rather than `get_mut`.
        let mut inner = self.core.inner.lock();
        live += inner.live.len().saturating_sub(slabs);
        if live > 0 {
            log::warn!(
                "{NAME} dropped with {live} live allocations; their memory goes back to upstream"
            );
        }
        for chunk in inner.chunks.drain(..) {
            // Nothing useful to do with a failure while dropping.
            let _ =
                self.upstream
                    .deallocate(chunk.addr as *mut c_void, chunk.size, Stream::DEFAULT);
        }
        inner.pool_size = 0;
    }
}

mod front;
#[cfg(test)]
mod front_tests;
#[cfg(test)]
mod tests;
