//! `pool_memory_resource`: a coalescing, stream-ordered sub-allocator over an upstream.
//!
//! # Data structures (why they look like this)
//! - Block descriptors live in a slab with an intrusive free-slot list, and each stream has
//!   a TLSF index of its free blocks ([`super::free_index`], which the arena shares):
//!   splitting and merging reuse slots instead of touching the host heap, and finding a
//!   fitting block is a couple of bit scans, O(1) however many blocks are free. RMM's pool
//!   scans its free list linearly, so its cost grows with the number of live allocations.
//! - Live allocations are found by pointer in an open-addressing table (`PtrMap`: linear
//!   probing, load at most 1/8 or, once large, 1/4, doubled only when full), so steady-state
//!   insert/remove never allocates and a free costs one probe sequence. It also makes
//!   foreign, double and wrong-size frees detectable in O(1).
//!   Once it is out of the caches (many live blocks), a free its front does not hold
//!   prefetches its slot before the locks ([`SlotHint`]), and a take prefetches the slot of
//!   its insert before splitting (prefetching before the front's lookup as well cost the
//!   churn workload more than it saved).
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
//!
//! # Files
//! This file is the resource and its hot path (the fronts, then the structures). The rest:
//! [`block`] (one structure: blocks, chunks, find, take, free), [`epochs`] (stream ordering
//! within a structure), [`shard`] (per-thread shards), `free` (the slow free path),
//! [`growth`], [`release`], [`summary`] (free memory and segments), [`front`] (per-thread
//! front caches).

use std::any::Any;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use super::ptr_map::SlotHint;
use super::stream_lifetime::{self, StreamState};
use super::stream_ordered::PerStreamLists;
use super::thread_slot::{thread_slot, ThreadExit};
use super::ALLOCATION_ALIGNMENT as ALIGN;
use super::{current_device_or_unknown, DeviceMemoryResource, SharedResource};
use crate::error::{Error, Result};
use crate::runtime::{runtime, Stream};
// The size classes, for the fronts (`front.rs`).
use super::free_index::UNIT_SHIFT;

mod block;
mod epochs;
mod free;
mod front;
#[cfg(test)]
mod front_tests;
mod growth;
#[cfg(test)]
mod reclaim_tests;
mod release;
mod shard;
mod summary;
#[cfg(test)]
mod tests;

use block::{Inner, Owned};
use shard::{Shards, CONTENTION_TO_SHARD, SHARD_MAX};

pub(in crate::mr) use block::Inner as Structure;
pub(in crate::mr) use block::{Chunk, State};
pub(crate) use front::{FrontAnswer, Fronts};
pub(crate) use growth::Placement;
pub use summary::FreeSummary;

const NAME: &str = "pool_memory_resource";

/// Rounds `bytes` up to the allocation alignment; `None` on overflow.
#[inline]
fn round_up(bytes: usize) -> Option<usize> {
    bytes.checked_add(ALIGN - 1).map(|b| b & !(ALIGN - 1))
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
    space: Option<Arc<dyn Placement>>,
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
            self.fronts.limits(),
        )
    }

    /// Frees blocks that left fronts into their structures, with one lock for each run of
    /// blocks of the same structure (a drained front's blocks are mostly of its thread's
    /// shard, and a thread ending while others run takes their locks once, not per block).
    fn give_back(&self, blocks: &[front::Returned]) {
        for run in blocks.chunk_by(|a, b| a.owner == b.owner) {
            let mut structure = self.structure(run[0].owner).lock();
            for r in run {
                structure.free_cached(r);
            }
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
        let me = thread_slot();
        self.fronts.revoke_all(me);
        for cell in self.fronts.all() {
            let mut f = cell.lock_as(me);
            if f.cached_bytes > 0 && (only.is_none() || f.stream == only) {
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
            let mut f = self.fronts.of(slot).lock_as(slot);
            if f.owner == slot {
                batches = self.drain(&mut f, &mut out);
                f.owner = front::UNCLAIMED;
                f.stream = None;
            }
        }
        self.give_back_drained(&out, batches);
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

    /// Whether the global pool holds more than `bytes` free (false when its lock is busy:
    /// the caller's check is a heuristic).
    #[inline]
    pub(crate) fn global_bytes_free_above(&self, bytes: usize) -> bool {
        self.core
            .inner
            .try_lock()
            .is_some_and(|inner| inner.bytes_free > bytes)
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

    /// Whether any shard was made (memory may then live in shards even if sharding was
    /// turned off since).
    fn any_shard(&self) -> bool {
        self.core.shards.made().next().is_some()
    }

    /// Bytes held free in the fronts (without emptying them).
    #[cfg(test)]
    fn front_cached(&self) -> usize {
        let me = thread_slot();
        self.core.fronts.revoke_all(me);
        self.core
            .fronts
            .all()
            .map(|c| c.lock_as(me).cached_bytes)
            .sum()
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

impl PoolMemoryResource {
    /// The hit path of an allocation: a block the calling thread's front holds for `bytes`
    /// on `stream`, or `None`, having changed nothing, when the full path must answer (a
    /// size of 0 or over the fronts' limit, another stream, an empty bin). Inlined into
    /// both allocation entry points (this trait's and the C ABI's), with everything else
    /// out of line: the hit path then needs few registers and a small stack frame.
    #[inline(always)]
    pub(crate) fn allocate_cached(&self, bytes: usize, stream: Stream) -> Option<*mut c_void> {
        if bytes.wrapping_sub(1) >= front::FRONT_MAX {
            return None;
        }
        // At most FRONT_MAX: no overflow.
        let rounded = (bytes + ALIGN - 1) & !(ALIGN - 1);
        let me = thread_slot();
        let p = match self.core.fronts.of(me).enter(me) {
            // Biased to this thread, which therefore owns the front.
            Some(mut f) => f.take_for(rounded, stream),
            None => self.take_locked(me, rounded, stream),
        }?;
        crate::counters::bump(crate::counters::Counter::FrontHits);
        Some(p as *mut c_void)
    }

    /// [`Self::allocate_cached`] when the front is not biased to the thread: under its lock.
    #[inline(never)]
    fn take_locked(&self, me: usize, rounded: usize, stream: Stream) -> Option<usize> {
        let mut f = self.core.fronts.of(me).lock_as(me);
        if f.owner != me {
            return None;
        }
        f.take_for(rounded, stream)
    }

    /// The hit path of a free: true when the calling thread's front handed `ptr` out and
    /// keeps it; false, having changed nothing, when the full path must answer (see
    /// [`Self::allocate_cached`]).
    #[inline(always)]
    pub(crate) fn deallocate_cached(&self, ptr: *mut c_void, bytes: usize, stream: Stream) -> bool {
        let me = thread_slot();
        let limits = self.core.fronts.limits();
        let kept = match self.core.fronts.of(me).enter(me) {
            Some(mut f) => f.keep(ptr as usize, bytes, front::norm(stream), limits),
            None => self.keep_locked(me, ptr, bytes, stream),
        };
        if kept {
            crate::counters::bump(crate::counters::Counter::FrontHits);
        }
        kept
    }

    /// [`Self::deallocate_cached`] when the front is not biased to the thread: under its
    /// lock.
    #[inline(never)]
    fn keep_locked(&self, me: usize, ptr: *mut c_void, bytes: usize, stream: Stream) -> bool {
        let mut f = self.core.fronts.of(me).lock_as(me);
        f.owner == me
            && f.keep(
                ptr as usize,
                bytes,
                front::norm(stream),
                self.core.fronts.limits(),
            )
    }

    /// The pool's fronts, whose call-free hit paths the C ABI takes directly
    /// ([`Fronts::allocate_hit`]). They live as long as the pool.
    pub(crate) fn fronts(&self) -> &Fronts {
        &self.core.fronts
    }

    /// An allocation the front did not serve ([`Self::allocate_cached`] returned `None`).
    #[inline(never)]
    pub(crate) fn allocate_uncached(&self, bytes: usize, stream: Stream) -> Result<*mut c_void> {
        if bytes == 0 {
            return Ok(std::ptr::null_mut());
        }
        let Some(rounded) = round_up(bytes) else {
            let inner = self.core.inner.lock();
            return Err(self.oom(&inner, bytes, "request too large"));
        };
        if let Some(p) = self.allocate_structures(rounded, stream, false)? {
            return Ok(p);
        }
        // The pool would have to grow: first give it what the fronts hold.
        self.allocate_growing(rounded, stream)
    }

    /// A free the front did not keep ([`Self::deallocate_cached`] returned false): one it
    /// holds but lets go, one it does not hold, or a bad one (reported, nothing changed).
    #[inline(never)]
    pub(crate) fn deallocate_uncached(
        &self,
        ptr: *mut c_void,
        bytes: usize,
        stream: Stream,
    ) -> Result<()> {
        if ptr.is_null() {
            return Ok(());
        }
        let me = thread_slot();
        let freed = {
            let mut f = self.core.fronts.of(me).lock_as(me);
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
}

impl DeviceMemoryResource for PoolMemoryResource {
    #[inline]
    fn allocate(&self, bytes: usize, stream: Stream) -> Result<*mut c_void> {
        match self.allocate_cached(bytes, stream) {
            Some(p) => Ok(p),
            None => self.allocate_uncached(bytes, stream),
        }
    }

    #[inline]
    fn deallocate(&self, ptr: *mut c_void, bytes: usize, stream: Stream) -> Result<()> {
        if self.deallocate_cached(ptr, bytes, stream) {
            return Ok(());
        }
        self.deallocate_uncached(ptr, bytes, stream)
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
