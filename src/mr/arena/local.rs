//! Local arenas: the superblocks of one thread or one stream, and their blocks.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use crate::spin_lock::SpinLock;

use crate::error::{Error, Result};
use crate::runtime::{DeviceId, Event, Runtime, Stream};

use super::global::OrderKey;
use super::heap::{Heap, PtrMap, NIL};
use super::NAME;
use crate::mr::size_classes::{bin_above, bin_of, BIN_CAPS, CACHED_MAX, CLASSES};

/// Blocks of a request's own size class looked at (beyond the O(1) lookup) before a local
/// arena takes a new superblock.
const LOCAL_SCAN: usize = 8;

/// Bytes a local arena's block cache holds at most (see [`ArenaState`]); also at most
/// [`CACHE_SHARE`]th of the arena.
pub(super) const CACHE_BYTES: usize = 16 << 20;
/// See [`CACHE_BYTES`]. Every thread and stream has a local arena, so their caches together
/// must stay a small part of the arena: with 1/64, the four stream arenas of the streams
/// workload needed an arena 1.53 times its peak live bytes (1.38 without caches); with
/// 1/1024, 1.41.
pub(super) const CACHE_SHARE: usize = 1024;

/// Whom a local arena serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ArenaKind {
    /// One thread's default and per-thread-default streams.
    Thread,
    /// One non-default stream.
    Stream(Stream),
}

/// A superblock of a local arena.
#[derive(Clone, Copy)]
struct Sb {
    addr: usize,
    size: usize,
    /// Its first block in the arena's heap (stable while the superblock exists).
    first: u32,
    /// Its span descriptor in the global arena.
    span: u32,
    /// Links of the list of entirely free superblocks (or of vacant slots).
    prev_empty: u32,
    next_empty: u32,
    empty: bool,
}

const NO_SB: Sb = Sb {
    addr: 0,
    size: 0,
    first: NIL,
    span: NIL,
    prev_empty: NIL,
    next_empty: NIL,
    empty: false,
};

/// A local arena's superblocks and blocks (behind its lock).
///
/// Its **block cache** keeps blocks of up to [`CACHED_MAX`] that are freed into it whole,
/// by size class, instead of merging them back into their superblocks (as the pool's
/// per-thread fronts do, by the same classes and bin capacities): the arena's next request
/// whose class they fill takes one back in a few instructions, with no split, no merge
/// and no walk of the free lists. A cached block stays used as far as the heap is
/// concerned, so it keeps its superblock from becoming empty; the cache is flushed back
/// into the heap before the arena gives its empty superblocks back (out of memory, thread
/// exit, stream destruction). Its blocks count as free. A block handed out from the cache
/// for a smaller request keeps its size: the difference ([`slack`](Self::slack)) is
/// neither free nor live until the block is freed.
pub(super) struct ArenaState {
    /// Blocks of every superblock, one region each; a block's tag is its superblock.
    heap: Heap,
    /// Live blocks: address → descriptor.
    live: PtrMap,
    /// Superblock slots (slot 0 is a dummy, so `NIL` links write into it).
    sbs: Vec<Sb>,
    /// Vacant slots, linked through `next_empty`.
    sb_vacant: u32,
    /// Superblocks held, and their bytes.
    pub sb_count: usize,
    pub owned_bytes: usize,
    /// Entirely free superblocks (doubly linked), and their bytes.
    empty_head: u32,
    pub empty_bytes: usize,
    /// The owning thread exited: empty superblocks go back to the global arena at once.
    pub retired: bool,
    /// Event for cross-stream frees into this arena; re-recorded each time (a wait
    /// captures the record at the time of the call, so one event can be reused).
    pub scratch_event: Option<Event>,
    /// Foreign stream arenas only: recorded on the stream at every free on it and after
    /// every superblock taken, so it covers all of the arena's free memory (see the module
    /// docs). `None` until then, or after a failed record (then the device is
    /// synchronized instead of trusting it).
    pub free_event: Option<Event>,
    /// The block cache's bins (lists through [`Heap::used_next`]) and their lengths.
    bins: [u32; CLASSES],
    bin_counts: [u8; CLASSES],
    /// Bytes in the block cache, and the most it may hold (0: the cache is off).
    cached_bytes: usize,
    pub cache_budget: usize,
    /// Bytes of live blocks beyond their requests (blocks from the cache).
    slack: usize,
}

impl Default for ArenaState {
    fn default() -> Self {
        ArenaState {
            heap: Heap::new(),
            live: PtrMap::default(),
            sbs: vec![NO_SB],
            sb_vacant: NIL,
            sb_count: 0,
            owned_bytes: 0,
            empty_head: NIL,
            empty_bytes: 0,
            retired: false,
            scratch_event: None,
            free_event: None,
            bins: [NIL; CLASSES],
            bin_counts: [0; CLASSES],
            cached_bytes: 0,
            cache_budget: 0,
            slack: 0,
        }
    }
}

impl ArenaState {
    /// Serves `size` bytes (a multiple of 256) from the block cache, else carves them from
    /// a superblock, if one has room.
    #[inline]
    pub fn alloc(&mut self, size: usize) -> Option<usize> {
        if size <= CACHED_MAX {
            let bin = bin_above(size);
            let i = self.bins[bin];
            if i != NIL {
                self.bins[bin] = self.heap.used_next(i);
                self.bin_counts[bin] -= 1;
                let b = self.heap.block(i);
                let (addr, held) = (b.addr, b.size);
                self.cached_bytes -= held;
                self.slack += held - size;
                self.heap.set_req(i, size);
                self.live.insert(addr, i);
                return Some(addr);
            }
        }
        let i = self.heap.find_exhaustive(size, LOCAL_SCAN)?;
        let b = *self.heap.block(i);
        if b.is_region() {
            self.unlink_empty(b.aux as u32);
        }
        self.heap.take(i, size);
        self.heap.set_req(i, size);
        self.live.insert(b.addr, i);
        Some(b.addr)
    }

    /// Removes live block `ptr` of `size` bytes (rounded) from the live set: its
    /// descriptor, or the size it was allocated with when that differs (nothing changes
    /// then), or `None` when it is not live here.
    #[inline]
    pub fn take_live(
        &mut self,
        ptr: usize,
        size: usize,
    ) -> Option<std::result::Result<u32, usize>> {
        let i = self.live.remove(ptr)?;
        let actual = self.heap.req(i);
        if actual != size {
            self.live.insert(ptr, i);
            return Some(Err(actual));
        }
        Some(Ok(i))
    }

    /// Puts back a block that [`take_live`](Self::take_live) took out (its free failed).
    pub fn live_reinsert(&mut self, ptr: usize, i: u32) {
        self.live.insert(ptr, i);
    }

    /// Returns block `i` (already out of the live set) to the block cache when its bin has
    /// room, else to its superblock; returns the superblock when it became entirely free.
    #[inline]
    pub fn free(&mut self, i: u32) -> Option<u32> {
        let b = self.heap.block(i);
        let (held, sb) = (b.size, b.aux);
        self.slack -= held - self.heap.req(i);
        if held <= CACHED_MAX {
            let bin = bin_of(held);
            if self.bin_counts[bin] < BIN_CAPS[bin] && self.cached_bytes + held <= self.cache_budget
            {
                self.heap.set_used_next(i, self.bins[bin]);
                self.bins[bin] = i;
                self.bin_counts[bin] += 1;
                self.cached_bytes += held;
                return None;
            }
        }
        self.release_block(i, sb)
    }

    /// Merges used block `i` of superblock `sb` back into it; returns the superblock when
    /// it became entirely free.
    #[inline]
    fn release_block(&mut self, i: u32, sb: u64) -> Option<u32> {
        let m = self.heap.release(i, sb);
        if self.heap.block(m).is_region() {
            let sb = sb as u32;
            self.link_empty(sb);
            Some(sb)
        } else {
            None
        }
    }

    /// Merges every cached block back into its superblock (superblocks that become
    /// entirely free join the empty list).
    pub fn flush_cache(&mut self) {
        if self.cached_bytes == 0 {
            return;
        }
        for bin in 0..CLASSES {
            let mut i = std::mem::replace(&mut self.bins[bin], NIL);
            while i != NIL {
                let next = self.heap.used_next(i);
                let sb = self.heap.block(i).aux;
                self.release_block(i, sb);
                i = next;
            }
            self.bin_counts[bin] = 0;
        }
        self.cached_bytes = 0;
    }

    /// Bytes of live blocks beyond their requests (see [`ArenaState`]).
    pub fn slack(&self) -> usize {
        self.slack
    }

    fn link_empty(&mut self, sb: u32) {
        let head = self.empty_head;
        self.sbs[head as usize].prev_empty = sb;
        let s = &mut self.sbs[sb as usize];
        debug_assert!(!s.empty);
        s.prev_empty = NIL;
        s.next_empty = head;
        s.empty = true;
        self.empty_bytes += s.size;
        self.empty_head = sb;
    }

    fn unlink_empty(&mut self, sb: u32) {
        let s = self.sbs[sb as usize];
        debug_assert!(s.empty);
        self.sbs[s.next_empty as usize].prev_empty = s.prev_empty;
        if s.prev_empty == NIL {
            self.empty_head = s.next_empty;
        } else {
            self.sbs[s.prev_empty as usize].next_empty = s.next_empty;
        }
        self.sbs[sb as usize].empty = false;
        self.empty_bytes -= s.size;
    }

    /// Adds the span `[addr, addr + size)` (global descriptor `span`) as an empty
    /// superblock.
    pub fn add_superblock(&mut self, addr: usize, size: usize, span: u32) {
        let sb = if self.sb_vacant != NIL {
            let sb = self.sb_vacant;
            self.sb_vacant = self.sbs[sb as usize].next_empty;
            sb
        } else {
            self.sbs.push(NO_SB);
            u32::try_from(self.sbs.len() - 1).expect("fewer than 2^32 superblocks")
        };
        let first = self.heap.add_region(addr, size, u64::from(sb));
        self.sbs[sb as usize] = Sb {
            addr,
            size,
            first,
            span,
            ..NO_SB
        };
        self.link_empty(sb);
        self.sb_count += 1;
        self.owned_bytes += size;
    }

    /// Removes empty superblock `sb`; returns its `(addr, size, span)`.
    pub fn remove_superblock(&mut self, sb: u32) -> (usize, usize, u32) {
        self.unlink_empty(sb);
        let s = self.sbs[sb as usize];
        let removed = self.heap.remove_region(s.first);
        debug_assert_eq!(removed, (s.addr, s.size));
        self.sbs[sb as usize] = Sb {
            next_empty: self.sb_vacant,
            ..NO_SB
        };
        self.sb_vacant = sb;
        self.sb_count -= 1;
        self.owned_bytes -= s.size;
        (s.addr, s.size, s.span)
    }

    /// The entirely free superblocks.
    pub fn empties(&self) -> Vec<u32> {
        let mut v = Vec::new();
        let mut sb = self.empty_head;
        while sb != NIL {
            v.push(sb);
            sb = self.sbs[sb as usize].next_empty;
        }
        v
    }

    /// Drops the bookkeeping (the resource is gone; thread-local caches may keep the arena
    /// a while longer). Its events stay, for the arena's drop to destroy.
    pub fn clear(&mut self) {
        let events = (self.scratch_event.take(), self.free_event.take());
        *self = ArenaState::default();
        (self.scratch_event, self.free_event) = events;
    }

    /// Free bytes, the block cache's included.
    pub fn free_bytes(&self) -> usize {
        self.heap.bytes_free() + self.cached_bytes
    }

    pub fn largest_free(&self) -> usize {
        self.heap.largest_free()
    }

    pub fn live_blocks(&self) -> usize {
        self.live.len()
    }

    /// Why `ptr` is not a live block of this arena (error paths only: walks the
    /// superblock that contains it).
    pub fn why_not_live(&self, ptr: usize) -> String {
        let sb = self.sbs[1..]
            .iter()
            .find(|s| s.size > 0 && ptr >= s.addr && ptr < s.addr + s.size);
        let Some(sb) = sb else {
            return "it is not a live allocation (never allocated, or already freed)".into();
        };
        match self.heap.block_containing(sb.first, ptr) {
            // A used block that starts at `ptr` but is not live is in the block cache.
            Some(i) if self.heap.block(i).is_free() || self.heap.block(i).addr == ptr => {
                "it is already free (double free)".into()
            }
            Some(i) => {
                let b = self.heap.block(i);
                format!(
                    "it is not the start of a live allocation (it lies inside the block of {} \
                     bytes at {:#x})",
                    b.size, b.addr
                )
            }
            None => "it is not a live allocation (never allocated, or already freed)".into(),
        }
    }
}

/// A local arena and its lock ([`SpinLock`]: its thread is almost always the only one to
/// take it). Aligned so that no other thread's arena, or anything else written often,
/// shares its cache lines: every allocation and free writes the lock and the state.
#[repr(align(128))]
pub(super) struct ArenaCell {
    pub id: u64,
    pub kind: ArenaKind,
    pub rt: &'static dyn Runtime,
    pub state: SpinLock<ArenaState>,
    /// A stream arena whose stream was destroyed (see the module docs): ordered by the
    /// legacy stream, serving no allocations. Set under the state lock.
    pub orphaned: AtomicBool,
    /// A stream arena of a foreign stream (see the module docs), classified when created.
    pub foreign: bool,
    /// The owning thread of a thread arena (see `stream_ordered::thread_number`), else 0.
    pub thread: usize,
    /// This cell, for the directory (taken only when a superblock is).
    pub me: Weak<ArenaCell>,
}

impl ArenaCell {
    pub fn new(
        id: u64,
        kind: ArenaKind,
        rt: &'static dyn Runtime,
        foreign: bool,
        thread: usize,
        cache_budget: usize,
    ) -> Arc<Self> {
        Arc::new_cyclic(|me| ArenaCell {
            id,
            kind,
            rt,
            state: SpinLock::new(ArenaState {
                cache_budget,
                ..ArenaState::default()
            }),
            orphaned: AtomicBool::new(false),
            foreign,
            thread,
            me: me.clone(),
        })
    }

    #[inline(always)]
    pub fn is_orphaned(&self) -> bool {
        self.orphaned.load(Ordering::Acquire)
    }

    /// The stream that orders this arena's reuse (see the module docs).
    pub fn order_stream(&self) -> Stream {
        match self.kind {
            _ if self.is_orphaned() => Stream::LEGACY,
            ArenaKind::Thread => Stream::LEGACY,
            ArenaKind::Stream(s) => s,
        }
    }

    /// Who orders this arena's memory, as the global arena sees it.
    pub fn order_key(&self) -> OrderKey {
        match self.kind {
            _ if self.is_orphaned() => OrderKey::legacy(0),
            ArenaKind::Thread => OrderKey::legacy(self.thread),
            ArenaKind::Stream(s) if s.is_default() => OrderKey::legacy(0),
            ArenaKind::Stream(s) => OrderKey::stream(s, self.foreign),
        }
    }

    /// Whether this arena's stream is foreign and it is not orphaned: its stream is then
    /// only touched by operations on that stream.
    #[inline(always)]
    pub fn is_foreign(&self) -> bool {
        self.foreign && !self.is_orphaned()
    }

    /// Records the arena's `free_event` on its (foreign) stream, from an operation on that
    /// stream. A failure is logged and drops the event (the device is synchronized instead
    /// when the arena's memory is ordered later).
    pub fn record_free_event(&self, st: &mut ArenaState) {
        let ArenaKind::Stream(stream) = self.kind else {
            return;
        };
        let event = match st.free_event {
            Some(e) => e,
            None => match self.rt.event_create() {
                Ok(e) => {
                    st.free_event = Some(e);
                    e
                }
                Err(e) => {
                    log::warn!(
                        "{NAME}: cannot create an event for stream {:#x}: {e}",
                        stream.0
                    );
                    return;
                }
            },
        };
        if let Err(e) = self.rt.event_record(event, stream) {
            log::warn!(
                "{NAME}: cannot record an event on stream {:#x}: {e}",
                stream.0
            );
            st.free_event = None;
            let _ = self.rt.event_destroy(event);
        }
    }

    /// Makes the legacy default stream wait for everything this foreign arena's memory was
    /// used for (its `free_event`), never touching the arena's stream; synchronizes the
    /// device when there is no event to wait on.
    pub fn order_legacy_after_free_event(
        &self,
        st: &ArenaState,
    ) -> std::result::Result<(), crate::runtime::RuntimeError> {
        match st.free_event {
            Some(e) => self.rt.stream_wait_event(Stream::LEGACY, e),
            None => self.rt.device_synchronize(),
        }
    }

    /// Whether a free on `stream` is already ordered before this arena's reuse.
    pub fn ordered_with(&self, stream: Stream) -> bool {
        match self.kind {
            _ if self.is_orphaned() => stream.is_default(),
            ArenaKind::Thread => stream.is_default(),
            ArenaKind::Stream(s) => s == stream,
        }
    }

    /// The arena's scratch event, created on first use.
    pub fn scratch_event(&self, st: &mut ArenaState, device: DeviceId) -> Result<Event> {
        match st.scratch_event {
            Some(e) => Ok(e),
            None => {
                let e = self
                    .rt
                    .event_create()
                    .map_err(|e| Error::runtime(device, e))?;
                st.scratch_event = Some(e);
                Ok(e)
            }
        }
    }
}

impl Drop for ArenaCell {
    fn drop(&mut self) {
        let st = self.state.get_mut();
        for e in [st.scratch_event.take(), st.free_event.take()]
            .into_iter()
            .flatten()
        {
            if !crate::runtime::process_is_exiting() {
                let _ = self.rt.event_destroy(e);
            }
        }
    }
}
