//! `arena_memory_resource`: a global arena plus per-thread and per-stream arenas, built
//! for many threads allocating at once (hipMM's `arena_memory_resource`).
//!
//! # Structure
//!
//! * The **global arena** is one upstream allocation of `arena_size` bytes, taken at
//!   construction and returned on drop. Its free space is a set of address-ordered spans
//!   that coalesce on return, indexed by size as well, so taking a span is a best-fit
//!   lookup in O(log n).
//! * **Local arenas** own *superblocks*: spans taken from the global arena. Allocations on
//!   the default stream ([`Stream::DEFAULT`], [`Stream::LEGACY`]) and on the per-thread
//!   default stream ([`Stream::PER_THREAD`]) are served by the calling thread's arena;
//!   allocations on any other stream by that stream's arena. A request is carved, best
//!   fit, from the arena's superblocks; when none has room, the arena takes a new one:
//!   [`ARENA_SUPERBLOCK_SIZE`] (1 MiB) bytes for requests of up to half that, else the
//!   request rounded up to a whole [`ARENA_LARGE_GRANULE`] (256 KiB); the rest of a large
//!   request's superblock serves other requests. Only when the global arena has no such
//!   span left is a span of exactly the request taken.
//!   Every size is rounded up to [`ALLOCATION_ALIGNMENT`] (256) bytes; that rounding is
//!   the only difference between `bytes_free() + live bytes` and `arena_size()`.
//! * Each superblock keeps its free blocks address-ordered (coalescing) and indexed by
//!   size, and its live blocks by address (so a wrong size or a double free is detected in
//!   O(log n)). Each arena indexes its superblocks that have free space by their largest
//!   free block, so no operation scans all superblocks (RMM's arena does, and slows down
//!   with many allocations).
//! * A superblock that becomes entirely free stays cached in its arena while the arena
//!   caches at most [`ARENA_CACHE_BYTES`] of entirely free superblocks; beyond that it
//!   goes back to the global arena. The cache stops a thread that frees and allocates
//!   around a superblock boundary from taking the global lock every time.
//!
//! # Locks
//!
//! Each local arena has its own mutex, which on the fast path is only ever taken by its
//! own thread (or stream user), so it is uncontended. The global arena's mutex is taken
//! only to get or return superblocks; a directory (superblock start → owner) behind a
//! read-write lock is consulted only when a block is freed through an arena that does not
//! own it. Lock order: local arena → global arena, local arena → directory; no two local arenas are
//! ever held at once.
//!
//! # Stream safety
//!
//! Memory freed on stream S is reused only in S's order:
//! * A block freed through its owner arena's own stream goes straight back to its free list.
//! * A block freed on another stream (cross-stream or cross-thread free) gets an event
//!   recorded on the freeing stream, and the owner arena's stream waits on it before the
//!   block is put back, so later work on the owner's stream is ordered after the free.
//! * A superblock returned to the global arena gets an event recorded on its arena's
//!   stream. A span taken from the global arena makes the receiving stream wait on every
//!   still-pending release event with a sequence number up to the span's (spans that
//!   coalesce keep the highest), skipping events of the receiver's own stream. This is
//!   conservative (it may wait on more than needed) but never misses an event.
//! * Thread arenas use the legacy default stream as their ordering stream: it orders with
//!   every blocking stream, including each thread's per-thread default stream, so one
//!   event recorded there covers frees on either default stream. Blocks freed on
//!   [`Stream::PER_THREAD`] by another thread than the owner's get an explicit event.
//! * Release events are recycled once the device has passed them; at most
//!   `MAX_PENDING_EVENTS` stay pending (beyond that the oldest is waited for on the host).
//!
//! # Lifetimes
//!
//! A thread's arena is retired when the thread exits: its empty superblocks go back to the
//! global arena at once, the rest as their last blocks are freed, and the arena is then
//! forgotten. Thread-local caches hold only weak references, so a dropped resource leaves
//! nothing dangling (dead entries are pruned on the thread's next miss).
//!
//! A stream's arena lives until the stream is destroyed through the library
//! (`rmm_stream_destroy`, the interposer's `cudaStreamDestroy`, or
//! [`stream_destroyed`](super::stream_destroyed) first: see [`super::stream_lifetime`]).
//! Then, while the stream is still alive, its empty superblocks go back to the global arena
//! (release event recorded on it) and the arena is *orphaned*: the legacy default stream
//! waits on an event recorded on the dying stream and becomes the arena's ordering stream,
//! the arena serves no more allocations (a new stream that reuses the handle gets a new
//! arena) and, like a retired thread arena, gives each superblock back once its last block
//! is freed. Release events still pending from the dying stream are no longer matched to
//! its handle, so a new stream reusing the handle waits on them too.
//!
//! That needs the stream to be *tracked* (see [`super::stream_ordered`], "Tracked and
//! foreign streams": a default stream, or one created through the library or seen created
//! by the interposer). A stream arena of a **foreign** stream (created with the runtime
//! directly, and possibly destroyed the same way at any time) never touches its stream
//! outside an operation on that stream: its `free_event` is re-recorded on the stream at
//! every free on it and after every superblock it takes from the global arena (one event
//! record per free, as RMM), a superblock it returns to the global arena is ordered by the
//! legacy default stream waiting on that event (the release event is recorded there), and
//! a block freed into it on another stream is synchronized on the host (the freeing
//! stream's event), as RMM does for every cross-arena free. Its arena lives on after the
//! stream is destroyed (its empty superblocks are reclaimed when the global arena runs
//! short); a tracked stream created later with the same handle value orphans it.
//! Only a tracked stream destroyed behind the library's back remains a hazard: if the
//! runtime then refuses a record or wait on the dead handle, the device (or the event) is
//! synchronized on the host instead (counted by [`super::dead_stream_fallbacks`]).
//!
//! # Performance
//!
//! Every operation is a few ordered-map lookups in the calling thread's arena: on an H100
//! machine one thread churns about a million allocate/free pairs per second with 1 000
//! live blocks, the cost grows only logarithmically with the number of live blocks, and
//! the BENCH.md W3 churn reached 5x (CUDA) to 7.5x (host backend) one thread's throughput
//! at 8 threads. About one operation in 400 takes the global lock there.

use std::any::Any;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::ffi::c_void;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::{Mutex, RwLock};

use super::stream_lifetime::{self, StreamState};
use super::{
    current_device_or_unknown, DeviceMemoryResource, SharedResource, ALLOCATION_ALIGNMENT,
};
use crate::error::{Error, Result};
use crate::runtime::{runtime, DeviceId, Event, Runtime, RuntimeErrorKind, Stream};

#[cfg(test)]
mod tests;

const NAME: &str = "arena_memory_resource";

/// Size of a standard superblock: the unit in which local arenas take memory from the
/// global arena for small allocations (RMM uses 1 MiB too).
pub const ARENA_SUPERBLOCK_SIZE: usize = 1 << 20;

/// Superblocks for requests larger than half a standard superblock are sized in whole
/// multiples of this (a quarter of a standard superblock).
pub const ARENA_LARGE_GRANULE: usize = ARENA_SUPERBLOCK_SIZE / 4;

/// Bytes of entirely free superblocks a local arena keeps before returning them to the
/// global arena (four standard superblocks): enough to avoid ping-pong with the global
/// lock, small enough that idle arenas do not hoard memory.
pub const ARENA_CACHE_BYTES: usize = 4 * ARENA_SUPERBLOCK_SIZE;

/// Release events kept pending in the global arena before the oldest is waited for on
/// the host, so the list (walked when a span is handed out) stays short even when the
/// device is far behind.
const MAX_PENDING_EVENTS: usize = 256;

fn round_up(bytes: usize) -> Option<usize> {
    bytes
        .checked_add(ALLOCATION_ALIGNMENT - 1)
        .map(|b| b & !(ALLOCATION_ALIGNMENT - 1))
}

/// The stream of a pending release event whose stream was destroyed: matches no receiver
/// (no stream handle is `usize::MAX`), so everyone waits on the event.
const GONE_STREAM: Stream = Stream(usize::MAX);

/// Both handles name the device-wide legacy default stream.
fn both_default(a: Stream, b: Stream) -> bool {
    a.is_default() && b.is_default()
}

/// Free blocks of one address range, address-ordered for coalescing and size-indexed for
/// best fit. Used both by the global arena (spans) and by superblocks (blocks).
#[derive(Default)]
struct FreeList {
    by_addr: BTreeMap<usize, usize>,
    by_size: BTreeSet<(usize, usize)>,
    bytes: usize,
}

impl FreeList {
    fn largest(&self) -> usize {
        self.by_size.last().map_or(0, |&(s, _)| s)
    }

    fn remove(&mut self, start: usize, size: usize) {
        self.by_addr.remove(&start);
        self.by_size.remove(&(size, start));
        self.bytes -= size;
    }

    fn insert_raw(&mut self, start: usize, size: usize) {
        self.by_addr.insert(start, size);
        self.by_size.insert((size, start));
        self.bytes += size;
    }

    /// Best fit: the smallest free block of at least `size`, split; returns its start and
    /// the size of the block it came from.
    fn take(&mut self, size: usize) -> Option<(usize, usize)> {
        let &(len, start) = self.by_size.range((size, 0)..).next()?;
        self.remove(start, len);
        if len > size {
            self.insert_raw(start + size, len - size);
        }
        Some((start, len))
    }

    /// True when `[start, start+size)` overlaps a free block (a double free).
    fn overlaps(&self, start: usize, size: usize) -> bool {
        if let Some((&s, &l)) = self.by_addr.range(..start + size).next_back() {
            return s + l > start;
        }
        false
    }

    /// Returns a block, coalescing with its neighbours; returns the merged span.
    fn insert(&mut self, mut start: usize, mut size: usize) -> (usize, usize) {
        if let Some((&ps, &pl)) = self.by_addr.range(..start).next_back() {
            if ps + pl == start {
                self.remove(ps, pl);
                start = ps;
                size += pl;
            }
        }
        if let Some(&nl) = self.by_addr.get(&(start + size)) {
            self.remove(start + size, nl);
            size += nl;
        }
        self.insert_raw(start, size);
        (start, size)
    }
}

/// A release event still pending in the global arena.
struct Pending {
    seq: u64,
    event: Event,
    stream: Stream,
}

/// The global arena: free spans of the one upstream allocation.
struct Global {
    free: FreeList,
    /// Release sequence number of each free span (0: never released by a stream).
    seq: HashMap<usize, u64>,
    pending: VecDeque<Pending>,
    next_seq: u64,
    spare_events: Vec<Event>,
    /// Spans taken and given back (for tests and the failure dump).
    takes: u64,
    gives: u64,
}

impl Global {
    fn event(&mut self, rt: &dyn Runtime, device: DeviceId) -> Result<Event> {
        match self.spare_events.pop() {
            Some(e) => Ok(e),
            None => rt.event_create().map_err(|e| Error::runtime(device, e)),
        }
    }

    /// Recycles events whose work has completed (they order nothing any more).
    fn prune(&mut self, rt: &dyn Runtime) {
        while let Some(p) = self.pending.front() {
            if !matches!(rt.event_query(p.event), Ok(true)) {
                break;
            }
            let p = self.pending.pop_front().expect("front exists");
            self.spare_events.push(p.event);
        }
    }

    /// Takes `size` bytes for a local arena whose ordering stream is `receiver`, making
    /// the receiver wait for every pending release the span may contain.
    fn take(
        &mut self,
        size: usize,
        receiver: Stream,
        rt: &dyn Runtime,
        device: DeviceId,
    ) -> Result<Option<usize>> {
        let Some((start, len)) = self.free.take(size) else {
            return Ok(None);
        };
        self.takes += 1;
        let seq = self.seq.remove(&start).unwrap_or(0);
        if len > size {
            self.seq.insert(start + size, seq);
        }
        if seq > 0 {
            self.prune(rt);
            let mut failed = None;
            for p in self.pending.iter().filter(|p| p.seq <= seq) {
                if p.stream != receiver && !both_default(p.stream, receiver) {
                    // If the device-side wait cannot be queued, wait on the host instead.
                    if let Err(e) = rt.stream_wait_event(receiver, p.event) {
                        if rt.event_synchronize(p.event).is_err() {
                            failed = Some(e);
                            break;
                        }
                    }
                }
            }
            if let Some(e) = failed {
                // Put the span back rather than lose it.
                self.insert(start, size, seq);
                return Err(Error::runtime(device, e));
            }
        }
        Ok(Some(start))
    }

    /// Returns a span released by an arena whose ordering stream is `stream`. The span is
    /// always put back (never lost); if no event can be recorded the stream is
    /// synchronized instead, and only if that fails too is the error reported.
    fn give(
        &mut self,
        start: usize,
        size: usize,
        stream: Stream,
        rt: &dyn Runtime,
        device: DeviceId,
    ) -> Result<()> {
        let mut seq = 0;
        let mut result = Ok(());
        self.gives += 1;
        if !crate::runtime::process_is_exiting() {
            self.prune(rt);
            if self.pending.len() >= MAX_PENDING_EVENTS {
                let p = self.pending.pop_front().expect("non-empty");
                let _ = rt.event_synchronize(p.event);
                self.spare_events.push(p.event);
            }
            match self.event(rt, device) {
                Ok(event) => match rt.event_record(event, stream) {
                    Ok(()) => {
                        self.next_seq += 1;
                        seq = self.next_seq;
                        self.pending.push_back(Pending { seq, event, stream });
                    }
                    Err(e) => {
                        self.spare_events.push(event);
                        result = Err(Error::runtime(device, e));
                    }
                },
                Err(e) => result = Err(e),
            }
            // A stream destroyed behind our back cannot be synchronized either: then wait
            // for the whole device.
            if result.is_err() {
                stream_lifetime::count_fallback();
                if rt.stream_synchronize(stream).is_ok() || rt.device_synchronize().is_ok() {
                    result = Ok(());
                }
            }
        }
        self.insert(start, size, seq);
        result
    }

    fn insert(&mut self, start: usize, size: usize, seq: u64) {
        let mut merged_seq = seq;
        // Neighbours that coalesce lose their own entry; the merged span keeps the highest.
        if let Some((&ps, &pl)) = self.free.by_addr.range(..start).next_back() {
            if ps + pl == start {
                merged_seq = merged_seq.max(self.seq.remove(&ps).unwrap_or(0));
            }
        }
        if self.free.by_addr.contains_key(&(start + size)) {
            merged_seq = merged_seq.max(self.seq.remove(&(start + size)).unwrap_or(0));
        }
        let (ms, _) = self.free.insert(start, size);
        if merged_seq > 0 {
            self.seq.insert(ms, merged_seq);
        }
    }
}

/// A span owned by a local arena, split into blocks.
struct Superblock {
    size: usize,
    free: FreeList,
    /// Live blocks: start → rounded size.
    live: BTreeMap<usize, usize>,
}

impl Superblock {
    fn is_empty(&self) -> bool {
        self.free.bytes == self.size
    }
}

/// Whom a local arena serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ArenaKind {
    /// One thread's default and per-thread-default streams.
    Thread,
    /// One non-default stream.
    Stream(Stream),
}

#[derive(Default)]
struct ArenaState {
    superblocks: BTreeMap<usize, Superblock>,
    /// Superblocks with free space, by largest free block.
    avail: BTreeSet<(usize, usize)>,
    /// Bytes of superblocks that are entirely free.
    empty_bytes: usize,
    /// The owning thread exited: empty superblocks go back to the global arena at once.
    retired: bool,
    /// Event for cross-stream frees into this arena; re-recorded each time (a wait
    /// captures the record at the time of the call, so one event can be reused).
    scratch_event: Option<Event>,
    /// Foreign stream arenas only: recorded on the stream at every free on it and after
    /// every superblock taken, so it covers all of the arena's free memory (see the module
    /// docs). `None` until then, or after a failed record (then the device is
    /// synchronized instead of trusting it).
    free_event: Option<Event>,
}

/// A local arena and its lock.
struct ArenaCell {
    id: u64,
    kind: ArenaKind,
    rt: &'static dyn Runtime,
    state: Mutex<ArenaState>,
    /// A stream arena whose stream was destroyed (see the module docs): ordered by the
    /// legacy stream, serving no allocations. Set under the state lock.
    orphaned: AtomicBool,
    /// A stream arena of a foreign stream (see the module docs), classified when created.
    foreign: bool,
}

impl ArenaCell {
    fn is_orphaned(&self) -> bool {
        self.orphaned.load(Ordering::Acquire)
    }

    /// The stream that orders this arena's reuse (see the module docs).
    fn order_stream(&self) -> Stream {
        match self.kind {
            _ if self.is_orphaned() => Stream::LEGACY,
            ArenaKind::Thread => Stream::LEGACY,
            ArenaKind::Stream(s) => s,
        }
    }

    /// Whether this arena's stream is foreign and it is not orphaned: its stream is then
    /// only touched by operations on that stream.
    fn is_foreign(&self) -> bool {
        self.foreign && !self.is_orphaned()
    }

    /// Records the arena's `free_event` on its (foreign) stream, from an operation on that
    /// stream. A failure is logged and drops the event (the device is synchronized instead
    /// when the arena's memory is ordered later).
    fn record_free_event(&self, st: &mut ArenaState) {
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
    fn order_legacy_after_free_event(
        &self,
        st: &ArenaState,
    ) -> std::result::Result<(), crate::runtime::RuntimeError> {
        match st.free_event {
            Some(e) => self.rt.stream_wait_event(Stream::LEGACY, e),
            None => self.rt.device_synchronize(),
        }
    }

    /// Whether a free on `stream` is already ordered before this arena's reuse.
    fn ordered_with(&self, stream: Stream) -> bool {
        match self.kind {
            _ if self.is_orphaned() => stream.is_default(),
            ArenaKind::Thread => stream.is_default(),
            ArenaKind::Stream(s) => s == stream,
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

impl ArenaState {
    /// Carves `size` bytes from the best-fitting superblock, if any has room.
    fn alloc(&mut self, size: usize) -> Option<usize> {
        let &(largest, start) = self.avail.range((size, 0)..).next()?;
        self.avail.remove(&(largest, start));
        let sb = self
            .superblocks
            .get_mut(&start)
            .expect("indexed superblock");
        if sb.is_empty() {
            self.empty_bytes -= sb.size;
        }
        let (p, _) = sb.free.take(size).expect("largest block fits");
        sb.live.insert(p, size);
        let l = sb.free.largest();
        if l > 0 {
            self.avail.insert((l, start));
        }
        Some(p)
    }

    fn add_superblock(&mut self, start: usize, size: usize) {
        let mut free = FreeList::default();
        free.insert_raw(start, size);
        self.superblocks.insert(
            start,
            Superblock {
                size,
                free,
                live: BTreeMap::new(),
            },
        );
        self.avail.insert((size, start));
        self.empty_bytes += size;
    }

    /// The superblock containing `ptr`, if this arena owns it.
    fn find(&self, ptr: usize) -> Option<usize> {
        let (&s, sb) = self.superblocks.range(..=ptr).next_back()?;
        (ptr < s + sb.size).then_some(s)
    }

    /// Checks that `[ptr, ptr+size)` is a live block of superblock `sb_start`.
    fn check(&self, sb_start: usize, ptr: usize, size: usize, bytes: usize) -> Result<()> {
        let sb = &self.superblocks[&sb_start];
        match sb.live.get(&ptr) {
            Some(&s) if s == size => Ok(()),
            Some(&s) => Err(Error::invalid(format!(
                "{NAME}: cannot free {ptr:#x} with {bytes} bytes: it was allocated with a \
                 size that rounds to {s} bytes, not {size}"
            ))),
            None => {
                let what = if sb.free.overlaps(ptr, size) {
                    "it is already free (double free)"
                } else {
                    "it is not the start of a live allocation"
                };
                Err(Error::invalid(format!(
                    "{NAME}: cannot free {ptr:#x} ({bytes} bytes): {what}"
                )))
            }
        }
    }

    /// Returns a checked block to its superblock; true when the superblock became empty.
    fn free(&mut self, sb_start: usize, ptr: usize, size: usize) -> bool {
        let sb = self
            .superblocks
            .get_mut(&sb_start)
            .expect("found superblock");
        sb.live.remove(&ptr);
        let old = sb.free.largest();
        if old > 0 {
            self.avail.remove(&(old, sb_start));
        }
        sb.free.insert(ptr, size);
        self.avail.insert((sb.free.largest(), sb_start));
        if sb.is_empty() {
            self.empty_bytes += sb.size;
            true
        } else {
            false
        }
    }

    /// Removes an empty superblock from this arena; returns its size.
    fn remove_empty(&mut self, sb_start: usize) -> usize {
        let sb = self.superblocks.remove(&sb_start).expect("superblock");
        debug_assert!(sb.is_empty());
        self.avail.remove(&(sb.size, sb_start));
        self.empty_bytes -= sb.size;
        sb.size
    }

    fn free_bytes(&self) -> usize {
        self.superblocks.values().map(|s| s.free.bytes).sum()
    }

    fn largest_free(&self) -> usize {
        self.avail.last().map_or(0, |&(l, _)| l)
    }
}

/// Key of a thread's own arena in the thread-local cache (no stream handle is `usize::MAX`).
const THREAD_KEY: usize = usize::MAX;

/// One thread's cached reference to a local arena of one resource.
struct TlsEntry {
    resource: u64,
    key: usize,
    arena: Weak<ArenaCell>,
    /// Set for the thread's own arena: retire it when the thread exits.
    inner: Option<Weak<Inner>>,
}

impl Drop for TlsEntry {
    fn drop(&mut self) {
        if let Some(inner) = self.inner.as_ref().and_then(Weak::upgrade) {
            if let Some(arena) = self.arena.upgrade() {
                inner.retire(&arena);
            }
        }
    }
}

thread_local! {
    static TLS: RefCell<Vec<TlsEntry>> = const { RefCell::new(Vec::new()) };
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
    directory: RwLock<BTreeMap<usize, (usize, Arc<ArenaCell>)>>,
    thread_arenas: Mutex<Vec<Arc<ArenaCell>>>,
    stream_arenas: RwLock<HashMap<usize, Arc<ArenaCell>>>,
    next_arena_id: AtomicU64,
}

impl Inner {
    fn new_cell(&self, kind: ArenaKind) -> Arc<ArenaCell> {
        let foreign = match kind {
            ArenaKind::Thread => false,
            ArenaKind::Stream(s) => !stream_lifetime::is_tracked(s),
        };
        Arc::new(ArenaCell {
            id: self.next_arena_id.fetch_add(1, Ordering::Relaxed),
            kind,
            rt: self.rt,
            state: Mutex::new(ArenaState::default()),
            orphaned: AtomicBool::new(false),
            foreign,
        })
    }

    fn stream_arena(&self, stream: Stream) -> Arc<ArenaCell> {
        if let Some(a) = self.stream_arenas.read().get(&stream.0) {
            return a.clone();
        }
        self.stream_arenas
            .write()
            .entry(stream.0)
            .or_insert_with(|| self.new_cell(ArenaKind::Stream(stream)))
            .clone()
    }

    /// The arena that serves `stream` for the calling thread.
    fn arena_for(self: &Arc<Self>, stream: Stream) -> Arc<ArenaCell> {
        let thread = stream.is_default() || stream.is_per_thread_default();
        let key = if thread { THREAD_KEY } else { stream.0 };
        let hit = TLS.try_with(|t| {
            t.borrow()
                .iter()
                .find(|e| e.resource == self.id && e.key == key)
                .and_then(|e| e.arena.upgrade())
                .filter(|a| !a.is_orphaned())
        });
        match hit {
            Ok(Some(a)) => a,
            Ok(None) => {
                let (arena, inner) = if thread {
                    let a = self.new_cell(ArenaKind::Thread);
                    self.thread_arenas.lock().push(a.clone());
                    (a, Some(Arc::downgrade(self)))
                } else {
                    (self.stream_arena(stream), None)
                };
                let entry = TlsEntry {
                    resource: self.id,
                    key,
                    arena: Arc::downgrade(&arena),
                    inner,
                };
                // Dead entries (of dropped resources) are pruned here; they are dropped
                // outside the borrow since dropping may retire an arena.
                let dead = TLS.try_with(|t| {
                    let mut t = t.borrow_mut();
                    let mut dead = Vec::new();
                    let mut i = 0;
                    while i < t.len() {
                        let gone = t[i].arena.upgrade().map_or(true, |a| a.is_orphaned());
                        if gone {
                            dead.push(t.swap_remove(i));
                        } else {
                            i += 1;
                        }
                    }
                    t.push(entry);
                    dead
                });
                drop(dead);
                arena
            }
            // The thread is being torn down: a shared arena on the legacy stream serves it.
            Err(_) => self.stream_arena(if thread { Stream::LEGACY } else { stream }),
        }
    }

    /// A thread exited: give its empty superblocks back and forget the arena once empty.
    fn retire(&self, arena: &Arc<ArenaCell>) {
        let mut st = arena.state.lock();
        st.retired = true;
        let _ = self.release_empties(arena, &mut st);
        let gone = st.superblocks.is_empty();
        drop(st);
        if gone {
            self.thread_arenas.lock().retain(|a| !Arc::ptr_eq(a, arena));
        }
    }

    /// Moves every empty superblock of `arena` to the global arena, going on after a
    /// failure; returns the last failure.
    fn release_empties(&self, arena: &ArenaCell, st: &mut ArenaState) -> Result<()> {
        let empties: Vec<usize> = st
            .superblocks
            .iter()
            .filter(|(_, sb)| sb.is_empty())
            .map(|(&s, _)| s)
            .collect();
        let mut result = Ok(());
        for s in empties {
            if let Err(e) = self.release(arena, st, s) {
                result = Err(e);
            }
        }
        result
    }

    /// Moves an empty superblock from `arena` to the global arena.
    fn release(&self, arena: &ArenaCell, st: &mut ArenaState, sb_start: usize) -> Result<()> {
        let size = st.remove_empty(sb_start);
        // Forget the owner before the span is visible in the global arena: once it is
        // there another arena may take it and register the same start address.
        self.directory.write().remove(&sb_start);
        if arena.is_foreign() {
            // Never touch a foreign stream here: the legacy stream waits for its last
            // recorded free and the release event is recorded there.
            if let Err(e) = arena.order_legacy_after_free_event(st) {
                log::warn!("{NAME}: ordering a foreign stream's superblock: {e}");
                // The span is put back regardless (as in `give`).
                let _ = self.rt.device_synchronize();
            }
            return self
                .global
                .lock()
                .give(sb_start, size, Stream::LEGACY, self.rt, self.device);
        }
        self.global
            .lock()
            .give(sb_start, size, arena.order_stream(), self.rt, self.device)
    }

    /// Gets a superblock for a request of `size` bytes and carves the request from it.
    fn grow(
        &self,
        arena: &Arc<ArenaCell>,
        st: &mut ArenaState,
        size: usize,
    ) -> Result<Option<usize>> {
        let receiver = arena.order_stream();
        let got = {
            let mut g = self.global.lock();
            // Small requests share a standard superblock. Larger ones get a superblock of
            // their own, rounded up to a whole granule: a freed one then fits many later
            // requests (exact sizes rarely fit again, which sends every large request to
            // the global lock and kills thread scaling), and the rest of it serves small
            // requests.
            let sb_size = if size <= ARENA_SUPERBLOCK_SIZE / 2 {
                ARENA_SUPERBLOCK_SIZE
            } else {
                size.div_ceil(ARENA_LARGE_GRANULE) * ARENA_LARGE_GRANULE
            };
            let mut got = g
                .take(sb_size, receiver, self.rt, self.device)?
                .map(|s| (s, sb_size));
            if got.is_none() && sb_size > size {
                // No such span left (fragmentation, or a small arena): exactly `size`.
                got = g
                    .take(size, receiver, self.rt, self.device)?
                    .map(|s| (s, size));
            }
            got
        };
        let Some((start, sb_size)) = got else {
            return Ok(None);
        };
        self.directory
            .write()
            .insert(start, (start + sb_size, arena.clone()));
        st.add_superblock(start, sb_size);
        if arena.is_foreign() {
            // The waits on the span's release events were queued on the stream: cover them.
            arena.record_free_event(st);
        }
        Ok(st.alloc(size))
    }

    fn all_arenas(&self) -> Vec<Arc<ArenaCell>> {
        let mut v = self.thread_arenas.lock().clone();
        v.extend(self.stream_arenas.read().values().cloned());
        v
    }

    /// Out-of-memory slow path: every arena gives its empty superblocks back.
    fn reclaim(&self) {
        for a in self.all_arenas() {
            let mut st = a.state.lock();
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
        let arena = self.arena_for(stream);
        for attempt in 0..2 {
            {
                let mut st = arena.state.lock();
                if let Some(p) = st.alloc(size) {
                    return Ok(p as *mut c_void);
                }
                if let Some(p) = self.grow(&arena, &mut st, size)? {
                    return Ok(p as *mut c_void);
                }
            }
            if attempt == 0 {
                self.reclaim();
            }
        }
        Err(self.oom(bytes))
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
        let local = self.arena_for(stream);
        {
            let mut st = local.state.lock();
            if let Some(sb) = st.find(p) {
                st.check(sb, p, size, bytes)?;
                let empty = st.free(sb, p, size);
                if local.is_foreign() {
                    // The stream may be destroyed right after this free: record its event
                    // now (one runtime call; none for a tracked stream).
                    local.record_free_event(&mut st);
                }
                if empty {
                    self.after_empty(&local, &mut st, sb);
                }
                return Ok(());
            }
        }
        // Slow path: another arena owns the block. The owner cannot change while the block
        // is live (a superblock with a live block never moves), so a miss after locking the
        // owner means the pointer was not live; retry once in case of a racing bad free.
        for _ in 0..2 {
            let owner = {
                let dir = self.directory.read();
                dir.range(..=p)
                    .next_back()
                    .filter(|(_, (end, _))| p < *end)
                    .map(|(_, (_, a))| a.clone())
            };
            let Some(owner) = owner else { break };
            let mut st = owner.state.lock();
            let Some(sb) = st.find(p) else { continue };
            st.check(sb, p, size, bytes)?;
            let ordered = owner.ordered_with(stream);
            if !ordered && !crate::runtime::process_is_exiting() {
                // Later work on the owner's stream must follow the free on `stream`.
                let ev = match st.scratch_event {
                    Some(e) => e,
                    None => {
                        let e = self.rt.event_create().map_err(|e| self.rt_err(e))?;
                        st.scratch_event = Some(e);
                        e
                    }
                };
                self.rt
                    .event_record(ev, stream)
                    .map_err(|e| self.rt_err(e))?;
                if owner.is_foreign() {
                    // The owner's foreign stream may be gone: never touch it; wait on the
                    // host for the free's stream instead (RMM's cross-arena free).
                    self.rt.event_synchronize(ev).map_err(|e| self.rt_err(e))?;
                } else {
                    match self.rt.stream_wait_event(owner.order_stream(), ev) {
                        Ok(()) => {}
                        // The owner's stream was destroyed behind our back: wait on the
                        // host for the free's stream instead.
                        Err(e) if e.kind == RuntimeErrorKind::InvalidHandle => {
                            stream_lifetime::count_fallback();
                            self.rt.event_synchronize(ev).map_err(|e| self.rt_err(e))?;
                        }
                        Err(e) => return Err(self.rt_err(e)),
                    }
                }
            }
            if st.free(sb, p, size) {
                self.after_empty(&owner, &mut st, sb);
            }
            return Ok(());
        }
        Err(Error::invalid(format!(
            "{NAME}: cannot free {ptr:p} ({bytes} bytes): it is not a live allocation \
             (never allocated, or already freed)"
        )))
    }

    fn rt_err(&self, e: crate::runtime::RuntimeError) -> Error {
        Error::runtime(self.device, e)
    }

    /// A superblock became empty: keep it cached unless the cache is full or the arena's
    /// thread is gone. The free itself has succeeded by now, so a runtime failure while
    /// returning the superblock (which is put back regardless) is only logged.
    fn after_empty(&self, arena: &Arc<ArenaCell>, st: &mut ArenaState, sb: usize) {
        if st.retired || st.empty_bytes > ARENA_CACHE_BYTES {
            if let Err(e) = self.release(arena, st, sb) {
                log::warn!("{NAME}: returning a superblock to the global arena: {e}");
            }
            if st.retired && st.superblocks.is_empty() {
                self.thread_arenas.lock().retain(|a| !Arc::ptr_eq(a, arena));
            }
        }
    }

    fn bytes_free(&self) -> usize {
        let global = self.global.lock().free.bytes;
        global
            + self
                .all_arenas()
                .iter()
                .map(|a| a.state.lock().free_bytes())
                .sum::<usize>()
    }

    /// The state of every arena, one line each (for the failure dump).
    fn dump(&self) -> (String, String) {
        let mut out = String::new();
        let mut total_sb = 0;
        let mut local_free = 0;
        let arenas = self.all_arenas();
        for a in &arenas {
            let st = a.state.lock();
            let free = st.free_bytes();
            let owned: usize = st.superblocks.values().map(|s| s.size).sum();
            let largest = st.largest_free();
            let frag = if free == 0 {
                0.0
            } else {
                100.0 * (1.0 - largest as f64 / free as f64)
            };
            total_sb += st.superblocks.len();
            local_free += free;
            let _ = writeln!(
                out,
                "  arena {} ({:?}{}): {} superblocks, {owned} bytes owned, {free} bytes free, \
                 largest free block {largest}, fragmentation {frag:.1}%",
                a.id,
                a.kind,
                if st.retired { ", retired" } else { "" },
                st.superblocks.len()
            );
        }
        let (takes, gives) = {
            let g = self.global.lock();
            (g.takes, g.gives)
        };
        let summary = format!(
            "{} local arenas hold {total_sb} superblocks with {local_free} bytes free; \
             {takes} spans taken from and {gives} returned to the global arena so far",
            arenas.len()
        );
        (summary, out)
    }

    fn oom(&self, requested: usize) -> Error {
        let (gfree, glargest, pending) = {
            let g = self.global.lock();
            (g.free.bytes, g.free.largest(), g.pending.len())
        };
        let mut detail = format!(
            "arena size {} bytes, {gfree} bytes free in the global arena, largest free span \
             {glargest} bytes",
            self.size
        );
        if self.dump_log_on_failure {
            let (summary, lines) = self.dump();
            log::warn!(
                "{NAME}: out of memory allocating {requested} bytes: {detail}; \
                 {pending} release events pending\n{lines}"
            );
            let _ = write!(detail, "; dump: {summary}");
        }
        Error::OutOfMemory {
            requested,
            resource: NAME,
            device: self.device,
            detail,
        }
    }
}

impl StreamState for Inner {
    fn forget_stream(&self, stream: Stream) -> Result<()> {
        let Some(arena) = self.stream_arenas.write().remove(&stream.0) else {
            return Ok(());
        };
        let mut st = arena.state.lock();
        // Records the release events on `stream`, still alive.
        let result = self.release_empties(&arena, &mut st);
        // Release events are matched to the stream no more: a new stream reusing the handle
        // must wait on them.
        for p in self.global.lock().pending.iter_mut() {
            if p.stream == stream {
                p.stream = GONE_STREAM;
            }
        }
        if st.superblocks.is_empty() {
            return result;
        }
        // The rest is ordered by the legacy stream from now on: make it wait for `stream`.
        let ev = match st.scratch_event {
            Some(e) => e,
            None => {
                let e = self.rt.event_create().map_err(|e| self.rt_err(e))?;
                st.scratch_event = Some(e);
                e
            }
        };
        let ordered = if arena.is_foreign() {
            // Forgetting a foreign stream (a tracked one now reuses its handle) must not
            // touch it: wait for its last recorded free.
            arena.order_legacy_after_free_event(&st)
        } else {
            self.rt
                .event_record(ev, stream)
                .and_then(|()| self.rt.stream_wait_event(Stream::LEGACY, ev))
        };
        if let Err(e) = ordered {
            if e.kind != RuntimeErrorKind::InvalidHandle {
                return Err(self.rt_err(e));
            }
            stream_lifetime::count_fallback();
            self.rt.device_synchronize().map_err(|e| self.rt_err(e))?;
        }
        arena.orphaned.store(true, Ordering::Release);
        st.retired = true;
        self.thread_arenas.lock().push(arena.clone());
        result
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        if crate::runtime::process_is_exiting() {
            return;
        }
        let g = self.global.get_mut();
        for p in g.pending.drain(..) {
            let _ = self.rt.event_destroy(p.event);
        }
        for e in g.spare_events.drain(..) {
            let _ = self.rt.event_destroy(e);
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
        let mut free = FreeList::default();
        free.insert_raw(base as usize, size);
        let r = ArenaMemoryResource {
            inner: Arc::new(Inner {
                id: NEXT_RESOURCE_ID.fetch_add(1, Ordering::Relaxed),
                rt,
                upstream,
                base: base as usize,
                size,
                device,
                dump_log_on_failure,
                global: Mutex::new(Global {
                    free,
                    seq: HashMap::new(),
                    pending: VecDeque::new(),
                    next_seq: 0,
                    spare_events: Vec::new(),
                    takes: 0,
                    gives: 0,
                }),
                directory: RwLock::new(BTreeMap::new()),
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
