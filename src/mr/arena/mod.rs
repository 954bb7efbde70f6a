//! `arena_memory_resource`: a global arena plus per-thread and per-stream arenas, built
//! for many threads allocating at once (hipMM's `arena_memory_resource`).
//!
//! # Structure
//!
//! * The **global arena** is one upstream allocation of `arena_size` bytes, taken at
//!   construction and returned on drop: no other upstream call is ever made. Its free
//!   space is a set of spans that coalesce on return, indexed by size class (TLSF, see
//!   [`heap`]), so taking a span costs O(1) bit scans.
//! * **Large** requests (more than [`ARENA_SUPERBLOCK_SIZE`], 1 MiB, after rounding) are
//!   served by the global arena directly, as RMM does: one span of exactly the request,
//!   remembered in a table of live large allocations (O(1) to free).
//! * **Local arenas** own *superblocks*: spans taken from the global arena. Allocations on
//!   the default stream ([`Stream::DEFAULT`], [`Stream::LEGACY`]) and on the per-thread
//!   default stream ([`Stream::PER_THREAD`]) are served by the calling thread's arena;
//!   allocations on any other stream by that stream's arena. A request is carved from the
//!   arena's superblocks (TLSF over all of their free blocks); when none has room, the
//!   arena takes a new superblock: [`ARENA_SUPERBLOCK_SIZE`] bytes for requests of up to
//!   half that, else the request rounded up to a whole [`ARENA_LARGE_GRANULE`] (256 KiB);
//!   the rest of a superblock serves other requests. Only when the global arena has no
//!   such span left is a span of exactly the request taken.
//!   Every size is rounded up to [`ALLOCATION_ALIGNMENT`] (256) bytes; that rounding is
//!   the only difference between `bytes_free() + live bytes` and `arena_size()`.
//! * Each local arena keeps its blocks' descriptors in a slab, its free blocks in a TLSF
//!   index (a block merges with its free neighbours within its superblock) and its live
//!   blocks in an open-addressing table by address, so a wrong size or a double free is
//!   detected in O(1) and no operation depends on the number of superblocks or blocks
//!   (RMM's arena scans its superblocks, and slows down with many allocations). The
//!   steady-state paths allocate nothing on the host heap.
//! * Each local arena keeps blocks of up to 1 MiB that are freed into it whole, in a block
//!   cache by size class (as the pool's per-thread fronts do): its next request of a size
//!   they fit takes one back without splitting or merging. Cached blocks count as free; the
//!   cache holds at most a 1024th of the arena (16 MiB at most) and is merged back when the
//!   arena runs out of memory and when its thread or stream goes (see
//!   [`local::ArenaState`]).
//! * A superblock that becomes entirely free stays cached in its arena while the arena
//!   caches at most [`ARENA_CACHE_BYTES`] of entirely free superblocks; beyond that it
//!   goes back to the global arena. The cache stops a thread that frees and allocates
//!   around a superblock boundary from taking the global lock every time.
//!
//! # Locks
//!
//! Each local arena has its own mutex, which on the fast path is only ever taken by its
//! own thread (or stream user), so it is uncontended. A thread finds its arena through a
//! one-entry thread-local cache (no lock, no reference count). The global arena's mutex is
//! taken only for large allocations and to get or return superblocks; it also guards a
//! directory (superblock start → owner), consulted only when a block is freed through an
//! arena that does not own it. Lock order: local arena → global arena; no two local
//! arenas are ever held at once.
//!
//! # Stream safety
//!
//! Memory freed on stream S is reused only in S's order:
//! * A block freed through its owner arena's own stream goes straight back to its free list.
//! * A block freed on another stream (cross-stream or cross-thread free) gets an event
//!   recorded on the freeing stream, and the owner arena's stream waits on it before the
//!   block is put back, so later work on the owner's stream is ordered after the free.
//! * A span returned to the global arena (a superblock, or a large allocation) is
//!   *released* by an ordering key: its stream (the legacy stream, with the thread, for
//!   thread arenas and for large allocations freed on a default stream). Releases make no
//!   runtime call: as in [`super::stream_ordered`], events are recorded lazily. When a
//!   span is taken by another key, each key with releases (up to the span's sequence
//!   number; spans that coalesce keep the highest) not known to be complete gets its event
//!   recorded, once for all its releases so far, and the receiver's stream waits on it
//!   (only once per record). This is conservative (it may wait on more than needed) but
//!   never misses a release. A span taken back by the key that released it (one thread
//!   on the default stream, one stream) makes no runtime call at all.
//! * Thread arenas use the legacy default stream as their ordering stream: it orders with
//!   every blocking stream, including each thread's per-thread default stream, through an
//!   operation enqueued on it; so a span released by one thread's arena and taken by
//!   another thread's gets a record on the legacy stream (no wait). Blocks freed on
//!   [`Stream::PER_THREAD`] by another thread than the owner's get an explicit event.
//! * A stream about to be destroyed through the library first has its pending releases
//!   recorded on it; from then on they match no receiver, so a new stream reusing the
//!   handle waits on them. At most `MAX_GONE_RELEASERS` such records stay pending (beyond
//!   that the oldest is waited for on the host); records whose work is done are dropped.
//!
//! # Lifetimes
//!
//! A thread's arena is retired when the thread exits: its empty superblocks go back to the
//! global arena at once, the rest as their last blocks are freed, and the arena is then
//! forgotten. Thread-local caches hold the arenas they name, and the resource only weakly,
//! so a dropped resource leaves nothing dangling: its arenas' bookkeeping is dropped with
//! it, and the dead entries are pruned on the thread's next miss.
//!
//! A stream's arena lives until the stream is destroyed through the library
//! (`rmm_stream_destroy`, the interposer's `cudaStreamDestroy`, or
//! [`stream_destroyed`](super::stream_destroyed) first: see [`super::stream_lifetime`]).
//! Then, while the stream is still alive, its empty superblocks go back to the global arena
//! and the arena is *orphaned*: the legacy default stream waits on an event recorded on the
//! dying stream and becomes the arena's ordering stream, the arena serves no more
//! allocations (a new stream that reuses the handle gets a new arena) and, like a retired
//! thread arena, gives each superblock back once its last block is freed.
//!
//! That needs the stream to be *tracked* (see [`super::stream_ordered`], "Tracked and
//! foreign streams": a default stream, or one created through the library or seen created
//! by the interposer). A stream arena of a **foreign** stream (created with the runtime
//! directly, and possibly destroyed the same way at any time) never touches its stream
//! outside an operation on that stream: its `free_event` is re-recorded on the stream at
//! every free on it and after every superblock it takes from the global arena (one event
//! record per free, as RMM), a superblock it returns to the global arena is ordered by the
//! legacy default stream waiting on that event (and released by the legacy family), and
//! a block freed into it on another stream is synchronized on the host (the freeing
//! stream's event), as RMM does for every cross-arena free. A large allocation freed on a
//! foreign stream gets an event recorded there at once, which the legacy stream waits on.
//! Its arena lives on after the stream is destroyed (its empty superblocks are reclaimed
//! when the global arena runs short); a tracked stream created later with the same handle
//! value orphans it.
//! Only a tracked stream destroyed behind the library's back remains a hazard: if the
//! runtime then refuses a record or wait on the dead handle, the device (or the event) is
//! synchronized on the host instead (counted by [`super::dead_stream_fallbacks`]).
//!
//! # Performance
//!
//! One thread on one stream makes no runtime call after construction, whatever the sizes
//! (the test `one_thread_on_one_stream_makes_no_runtime_call_for_any_size`), and no host
//! heap allocation in steady state. Small allocations cost a thread-local lookup, the
//! arena's (uncontended) lock and O(1) index updates; large ones the global lock and O(1)
//! index updates; no cost grows with the number of blocks or superblocks. Under the
//! threads workload (tracked streams) the CPU time per pair stays about the same from one
//! thread to 16: each thread or stream works in its own arena, and about one operation in
//! 400 takes the global lock.
//!
//! # Files
//!
//! This file is the resource and its operations; [`heap`] holds the bookkeeping structures,
//! [`global`] the global arena, [`local`] the local arenas, [`lookup`] which local arena
//! serves an operation, and [`report`] the free bytes and the failure dump.

use std::any::Any;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use super::stream_lifetime;
use super::{
    current_device_or_unknown, DeviceMemoryResource, SharedResource, ALLOCATION_ALIGNMENT,
};
use crate::error::{Error, Result};
use crate::runtime::{runtime, DeviceId, Runtime, RuntimeErrorKind, Stream};

mod global;
mod heap;
mod local;
mod lookup;
mod report;

use global::{Global, OrderKey};
use local::{ArenaCell, ArenaState};
use lookup::thread_number;
use report::wrong_size;

#[cfg(test)]
mod tests;

const NAME: &str = "arena_memory_resource";

/// Size of a standard superblock: the unit in which local arenas take memory from the
/// global arena for small allocations (RMM uses 1 MiB too). Larger requests are served by
/// the global arena directly.
pub const ARENA_SUPERBLOCK_SIZE: usize = 1 << 20;

/// Superblocks for requests larger than half a standard superblock are sized in whole
/// multiples of this (a quarter of a standard superblock).
pub const ARENA_LARGE_GRANULE: usize = ARENA_SUPERBLOCK_SIZE / 4;

/// Bytes of entirely free superblocks a local arena keeps before returning them to the
/// global arena (four standard superblocks): enough to avoid ping-pong with the global
/// lock, small enough that idle arenas do not hoard memory.
pub const ARENA_CACHE_BYTES: usize = 4 * ARENA_SUPERBLOCK_SIZE;

/// Requests above this many bytes (rounded) are served by the global arena directly.
const LARGE_THRESHOLD: usize = ARENA_SUPERBLOCK_SIZE;

// Superblocks (at most a standard superblock) fit the directory's pages.
const _: () = assert!(ARENA_SUPERBLOCK_SIZE <= heap::DIRECTORY_PAGE);

fn round_up(bytes: usize) -> Option<usize> {
    bytes
        .checked_add(ALLOCATION_ALIGNMENT - 1)
        .map(|b| b & !(ALLOCATION_ALIGNMENT - 1))
}

static NEXT_RESOURCE_ID: AtomicU64 = AtomicU64::new(1);

/// The shared state of one resource; thread-local entries refer to it weakly so that a
/// dropped resource leaves nothing dangling.
struct Inner {
    id: u64,
    rt: &'static dyn Runtime,
    upstream: SharedResource,
    base: usize,
    size: usize,
    device: DeviceId,
    dump_log_on_failure: bool,
    global: Mutex<Global>,
    thread_arenas: Mutex<Vec<Arc<ArenaCell>>>,
    stream_arenas: RwLock<HashMap<usize, Arc<ArenaCell>>>,
    next_arena_id: AtomicU64,
}

impl Inner {
    /// The ordering key of memory used on `stream` by the calling thread, outside local
    /// arenas (large allocations), and whether the stream is foreign.
    fn large_key(self: &Arc<Self>, stream: Stream) -> (OrderKey, bool) {
        if stream.is_default() || stream.is_per_thread_default() {
            return (OrderKey::legacy(thread_number()), false);
        }
        let foreign = self.arena_for(stream).get().is_foreign();
        (OrderKey::stream(stream, foreign), foreign)
    }

    /// A thread exited: give its empty superblocks back and forget the arena once empty.
    fn retire(&self, arena: &ArenaCell) {
        let mut st = arena.state.lock();
        st.retired = true;
        st.cache_budget = 0;
        st.flush_cache();
        let _ = self.release_empties(arena, &mut st);
        let gone = st.sb_count == 0;
        drop(st);
        if gone {
            self.forget_thread_arena(arena);
        }
    }

    fn forget_thread_arena(&self, arena: &ArenaCell) {
        self.thread_arenas
            .lock()
            .retain(|a| !std::ptr::eq(Arc::as_ptr(a), arena));
    }

    /// Moves every empty superblock of `arena` to the global arena, going on after a
    /// failure; returns the last failure.
    fn release_empties(&self, arena: &ArenaCell, st: &mut ArenaState) -> Result<()> {
        let mut result = Ok(());
        for sb in st.empties() {
            if let Err(e) = self.release(arena, st, sb) {
                result = Err(e);
            }
        }
        result
    }

    /// Moves an empty superblock from `arena` to the global arena (no runtime call unless
    /// the arena's stream is foreign). The span is always given back.
    fn release(&self, arena: &ArenaCell, st: &mut ArenaState, sb: u32) -> Result<()> {
        let (start, size, span) = st.remove_superblock(sb);
        let mut result = Ok(());
        let key = if arena.is_foreign() {
            // Never touch a foreign stream here: the legacy stream waits for its last
            // recorded free and the span is released by the legacy family.
            if let Err(e) = arena.order_legacy_after_free_event(st) {
                log::warn!("{NAME}: ordering a foreign stream's superblock: {e}");
                if let Err(e) = self.rt.device_synchronize() {
                    result = Err(self.rt_err(e));
                }
            }
            OrderKey::legacy(0)
        } else {
            arena.order_key()
        };
        let mut g = self.global.lock();
        // Forget the owner before the span is visible in the global arena.
        g.unregister(start, start + size);
        g.give(span, key);
        g.gives += 1;
        result
    }

    /// Gets a superblock for a request of `size` bytes and carves the request from it. The
    /// block cache stays: it is a small part of the arena, and merging it back at every
    /// growth made the many-live workload (large, uniform sizes) slower; running out of
    /// memory flushes it.
    fn grow(&self, arena: &ArenaCell, st: &mut ArenaState, size: usize) -> Result<Option<usize>> {
        let receiver = arena.order_key();
        // Small requests share a standard superblock. Larger ones (up to a standard
        // superblock) get one rounded up to a whole granule: a freed one then fits many
        // later requests, and the rest of it serves small requests.
        let sb_size = if size <= ARENA_SUPERBLOCK_SIZE / 2 {
            ARENA_SUPERBLOCK_SIZE
        } else {
            size.div_ceil(ARENA_LARGE_GRANULE) * ARENA_LARGE_GRANULE
        };
        let got = {
            let mut g = self.global.lock();
            let mut got = g
                .take(sb_size, receiver, self.rt, self.device)?
                .map(|(s, i)| (s, i, sb_size));
            if got.is_none() && sb_size > size {
                // No such span left (fragmentation, or a small arena): exactly `size`.
                got = g
                    .take(size, receiver, self.rt, self.device)?
                    .map(|(s, i)| (s, i, size));
            }
            if let Some((start, _, sb_size)) = got {
                g.takes += 1;
                g.register(start, start + sb_size, arena);
            }
            got
        };
        let Some((start, span, sb_size)) = got else {
            return Ok(None);
        };
        st.add_superblock(start, sb_size, span);
        if arena.is_foreign() {
            // The waits on the span's releases were queued on the stream: cover them.
            arena.record_free_event(st);
        }
        Ok(st.alloc(size))
    }

    fn all_arenas(&self) -> Vec<Arc<ArenaCell>> {
        let mut v = self.thread_arenas.lock().clone();
        v.extend(self.stream_arenas.read().values().cloned());
        v
    }

    /// Out-of-memory slow path: every arena flushes its block cache and gives its empty
    /// superblocks back.
    fn reclaim(&self) {
        for a in self.all_arenas() {
            let mut st = a.state.lock();
            st.flush_cache();
            let _ = self.release_empties(&a, &mut st);
        }
    }

    fn allocate(self: &Arc<Self>, bytes: usize, stream: Stream) -> Result<*mut c_void> {
        if bytes == 0 {
            return Ok(std::ptr::null_mut());
        }
        let Some(size) = round_up(bytes).filter(|&s| s <= self.size) else {
            return Err(self.oom(bytes));
        };
        if size > LARGE_THRESHOLD {
            return self.allocate_large(size, bytes, stream);
        }
        let arena = self.arena_for(stream);
        let arena = arena.get();
        for attempt in 0..2 {
            {
                let mut st = arena.state.lock();
                if let Some(p) = st.alloc(size) {
                    return Ok(p as *mut c_void);
                }
                if let Some(p) = self.grow(arena, &mut st, size)? {
                    return Ok(p as *mut c_void);
                }
            }
            if attempt == 0 {
                self.reclaim();
            }
        }
        Err(self.oom(bytes))
    }

    /// A large request: a span of the global arena of exactly `size` bytes.
    fn allocate_large(
        self: &Arc<Self>,
        size: usize,
        bytes: usize,
        stream: Stream,
    ) -> Result<*mut c_void> {
        let (receiver, _) = self.large_key(stream);
        for attempt in 0..2 {
            {
                let mut g = self.global.lock();
                if let Some((p, i)) = g.take(size, receiver, self.rt, self.device)? {
                    g.large.insert(p, i);
                    g.large_takes += 1;
                    return Ok(p as *mut c_void);
                }
            }
            if attempt == 0 {
                self.reclaim();
            }
        }
        Err(self.oom(bytes))
    }

    /// Frees `p` if it is a live large allocation (`Ok(false)` if it is not).
    fn free_large(
        self: &Arc<Self>,
        p: usize,
        size: usize,
        bytes: usize,
        stream: Stream,
    ) -> Result<bool> {
        let (key, foreign) = self.large_key(stream);
        let mut g = self.global.lock();
        let Some(i) = g.large.remove(p) else {
            return Ok(false);
        };
        let actual = g.heap.block(i).size;
        if actual != size {
            g.large.insert(p, i);
            return Err(wrong_size(p, bytes, actual, size));
        }
        g.large_gives += 1;
        if foreign {
            g.give_foreign(i, stream, self.rt, self.device)?;
        } else {
            g.give(i, key);
        }
        Ok(true)
    }

    fn deallocate(self: &Arc<Self>, ptr: *mut c_void, bytes: usize, stream: Stream) -> Result<()> {
        if ptr.is_null() {
            return Ok(());
        }
        let p = ptr as usize;
        let size = round_up(bytes.max(1)).unwrap_or(usize::MAX);
        if p < self.base || p >= self.base + self.size || p % ALLOCATION_ALIGNMENT != 0 {
            return Err(Error::invalid(format!(
                "{NAME}: cannot free {ptr:p} ({bytes} bytes): it is not in this arena \
                 [{:#x}, {:#x})",
                self.base,
                self.base + self.size
            )));
        }
        if size > LARGE_THRESHOLD && self.free_large(p, size, bytes, stream)? {
            return Ok(());
        }
        let local = self.arena_for(stream);
        let local = local.get();
        {
            let mut st = local.state.lock();
            match st.take_live(p, size) {
                Some(Ok(i)) => {
                    let empty = st.free(i);
                    if local.is_foreign() {
                        // The stream may be destroyed right after this free: record its
                        // event now (one runtime call; none for a tracked stream).
                        local.record_free_event(&mut st);
                    }
                    if let Some(sb) = empty {
                        self.after_empty(local, &mut st, sb);
                    }
                    return Ok(());
                }
                Some(Err(actual)) => return Err(wrong_size(p, bytes, actual, size)),
                None => {}
            }
        }
        self.free_elsewhere(p, size, bytes, stream)
    }

    /// Slow path of a free: another arena owns the block (or it is a large allocation
    /// freed with a small size, or not live at all).
    #[inline(never)]
    fn free_elsewhere(&self, p: usize, size: usize, bytes: usize, stream: Stream) -> Result<()> {
        // The owner cannot change while the block is live (a superblock with a live block
        // never moves), so a miss after locking the owner means the pointer was not live;
        // retry once in case of a racing bad free.
        let mut why = None;
        for _ in 0..2 {
            let owner = self.global.lock().owner_of(p);
            let Some(owner) = owner else { break };
            let mut st = owner.state.lock();
            let i = match st.take_live(p, size) {
                Some(Ok(i)) => i,
                Some(Err(actual)) => return Err(wrong_size(p, bytes, actual, size)),
                None => {
                    why = Some(st.why_not_live(p));
                    continue;
                }
            };
            if let Err(e) = self.order_cross_free(&owner, &mut st, stream) {
                // Put it back: the free did not happen.
                st.live_reinsert(p, i);
                return Err(e);
            }
            if let Some(sb) = st.free(i) {
                self.after_empty(&owner, &mut st, sb);
            }
            return Ok(());
        }
        let large = {
            let g = self.global.lock();
            g.large.get(p).map(|i| g.heap.block(i).size)
        };
        if let Some(actual) = large {
            return Err(wrong_size(p, bytes, actual, size));
        }
        let why = why.unwrap_or_else(|| {
            "it is not a live allocation (never allocated, or already freed)".into()
        });
        Err(Error::invalid(format!(
            "{NAME}: cannot free {p:#x} ({bytes} bytes): {why}"
        )))
    }

    /// A block of `owner` is freed on `stream`: orders the owner's later reuse after it.
    fn order_cross_free(
        &self,
        owner: &ArenaCell,
        st: &mut ArenaState,
        stream: Stream,
    ) -> Result<()> {
        if owner.ordered_with(stream) || crate::runtime::process_is_exiting() {
            return Ok(());
        }
        // Later work on the owner's stream must follow the free on `stream`.
        let ev = owner.scratch_event(st, self.device)?;
        self.rt
            .event_record(ev, stream)
            .map_err(|e| self.rt_err(e))?;
        if owner.is_foreign() {
            // The owner's foreign stream may be gone: never touch it; wait on the host for
            // the free's stream instead (RMM's cross-arena free).
            return self.rt.event_synchronize(ev).map_err(|e| self.rt_err(e));
        }
        match self.rt.stream_wait_event(owner.order_stream(), ev) {
            Ok(()) => Ok(()),
            // The owner's stream was destroyed behind our back: wait on the host for the
            // free's stream instead.
            Err(e) if e.kind == RuntimeErrorKind::InvalidHandle => {
                stream_lifetime::count_fallback();
                self.rt.event_synchronize(ev).map_err(|e| self.rt_err(e))
            }
            Err(e) => Err(self.rt_err(e)),
        }
    }

    fn rt_err(&self, e: crate::runtime::RuntimeError) -> Error {
        Error::runtime(self.device, e)
    }

    /// A superblock became empty: keep it cached unless the cache is full or the arena's
    /// thread is gone. The free itself has succeeded by now, so a runtime failure while
    /// returning the superblock (which is put back regardless) is only logged.
    #[inline]
    fn after_empty(&self, arena: &ArenaCell, st: &mut ArenaState, sb: u32) {
        if st.retired || st.empty_bytes > ARENA_CACHE_BYTES {
            if let Err(e) = self.release(arena, st, sb) {
                log::warn!("{NAME}: returning a superblock to the global arena: {e}");
            }
            if st.retired && st.sb_count == 0 {
                self.forget_thread_arena(arena);
            }
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        if crate::runtime::process_is_exiting() {
            return;
        }
        self.global.get_mut().destroy_events(self.rt);
        // Thread-local caches may keep arenas until their threads' next miss: keep only
        // their shells.
        for a in self.all_arenas() {
            a.state.lock().clear();
        }
        let _ = self
            .upstream
            .deallocate(self.base as *mut c_void, self.size, Stream::DEFAULT);
    }
}

/// A global arena plus per-thread and per-stream arenas (hipMM's
/// `arena_memory_resource`); see the module documentation for the structure, the locking
/// and the stream-safety rules.
pub struct ArenaMemoryResource {
    inner: Arc<Inner>,
}

impl ArenaMemoryResource {
    /// Takes `arena_size` bytes from `upstream` in one allocation.
    ///
    /// `arena_size` defaults to half of the current device's free memory (aligned down to
    /// 256 bytes); it must be a positive multiple of 256. With `dump_log_on_failure`, an
    /// out-of-memory failure also logs the state of every arena at warn level (via `log`)
    /// and adds a summary to the error.
    pub fn new(
        upstream: SharedResource,
        arena_size: Option<usize>,
        dump_log_on_failure: bool,
    ) -> Result<Self> {
        let rt = runtime()?;
        let size = match arena_size {
            Some(s) => s,
            None => crate::device::percent_of_free_device_memory(50)?,
        };
        if size == 0 || size % ALLOCATION_ALIGNMENT != 0 {
            return Err(Error::invalid(format!(
                "{NAME}: arena_size must be a positive multiple of {ALLOCATION_ALIGNMENT} \
                 bytes, got {size}{}",
                if arena_size.is_none() {
                    " (half of the free device memory)"
                } else {
                    ""
                }
            )));
        }
        let device = current_device_or_unknown(rt);
        let base = upstream.allocate(size, Stream::DEFAULT)?;
        if base.is_null() || (base as usize) % ALLOCATION_ALIGNMENT != 0 {
            let _ = upstream.deallocate(base, size, Stream::DEFAULT);
            return Err(Error::BadAlloc {
                requested: size,
                resource: NAME,
                detail: format!(
                    "upstream {} returned {base:p}, not a {ALLOCATION_ALIGNMENT}-byte aligned \
                     pointer",
                    upstream.name()
                ),
            });
        }
        let r = ArenaMemoryResource {
            inner: Arc::new(Inner {
                id: NEXT_RESOURCE_ID.fetch_add(1, Ordering::Relaxed),
                rt,
                upstream,
                base: base as usize,
                size,
                device,
                dump_log_on_failure,
                global: Mutex::new(Global::new(base as usize, size)),
                thread_arenas: Mutex::new(Vec::new()),
                stream_arenas: RwLock::new(HashMap::new()),
                next_arena_id: AtomicU64::new(0),
            }),
        };
        stream_lifetime::register(Arc::downgrade(&r.inner) as _);
        Ok(r)
    }

    /// Size of the global arena (the one upstream allocation), in bytes.
    pub fn arena_size(&self) -> usize {
        self.inner.size
    }

    /// Bytes free in the global arena and in every local arena's superblocks. With all
    /// live allocations' sizes rounded up to 256, `bytes_free() + live == arena_size()`.
    pub fn bytes_free(&self) -> usize {
        self.inner.bytes_free()
    }

    /// The resource the arena was taken from.
    pub fn upstream(&self) -> &SharedResource {
        &self.inner.upstream
    }
}

impl std::fmt::Debug for ArenaMemoryResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{NAME}(arena_size: {}, upstream: {:?})",
            self.inner.size, self.inner.upstream
        )
    }
}

impl DeviceMemoryResource for ArenaMemoryResource {
    fn allocate(&self, bytes: usize, stream: Stream) -> Result<*mut c_void> {
        self.inner.allocate(bytes, stream)
    }

    fn deallocate(&self, ptr: *mut c_void, bytes: usize, stream: Stream) -> Result<()> {
        self.inner.deallocate(ptr, bytes, stream)
    }

    fn name(&self) -> &'static str {
        NAME
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn upstream(&self) -> Option<SharedResource> {
        Some(self.inner.upstream.clone())
    }
}
