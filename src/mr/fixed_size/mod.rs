//! `fixed_size_memory_resource`: constant-time allocation of blocks of one size, scaling
//! with threads.
//!
//! # Structure
//! The free blocks live in **shards**, one per group of threads (the thread's
//! [slot](super::thread_slot), the smallest number no live thread holds, modulo the shard
//! count: the CPU count rounded up to a power of two, clamped to 2..=64; so live threads
//! share a shard only when there are more of them than shards, and a thread pool's threads
//! keep theirs). Each shard has its own [`SpinLock`] (uncontended while there are no more
//! busy threads than shards: one atomic swap and a store), its
//! own [`StreamRegistry`] and one stack of free blocks per stream. Allocate pops from the
//! calling thread's shard's stack for the stream, deallocate pushes there: O(1), no
//! runtime call (a free on a foreign stream records its event: see
//! [`super::stream_ordered`]), and no lock or atomic read-modify-write on a cache line that
//! threads of other shards write. Fixed-size blocks never coalesce, so a block may be
//! freed into any shard, whichever thread allocated it.
//!
//! # When a shard's stack for stream S is empty
//! In this order:
//! 1. free blocks of **S** in other shards: half of one shard's stack moves over (the
//!    same stream, so no event is needed);
//! 2. free blocks of **another stream T** in the shard itself: T's event is recorded and S
//!    waits on it ([`StreamRegistry::order_after`]), then T's whole stack moves to S;
//! 3. free blocks of another stream T in **another shard**, where T holds at least a batch
//!    of them (at most 64; see [`MIN_STEAL_CAP`]): the same ordering, made in that shard's
//!    registry (S gets a slot there), then half of T's stack moves over;
//! 4. a new batch of `blocks_to_preallocate` blocks from upstream, in one allocation; when
//!    that fails for lack of memory, step 3 again, taking any number of blocks.
//!
//! Steps 1 and 3 take one other shard's lock at a time, never while holding their own
//! (so two threads taking from each other cannot deadlock), and skip shards whose free
//! count (published by a plain store) is zero. Moved blocks are put on S's stack in the
//! shard and the shard's slot for S is refreshed, so a foreign S's event covers them.
//!
//! # Foreign and double frees
//! Each batch keeps one atomic byte per block saying whether it is live, and each shard a
//! view of the address → batch index ([`directory`]): deallocation finds the batch and
//! block in O(1) and swaps its byte to zero, which finds it zero exactly when the block is
//! not live. Addresses that no
//! batch holds, or that point inside a block, are refused likewise, with messages that say
//! which.
//!
//! # Statistics, release, streams
//! Free blocks are counted per shard and summed by
//! [`free_block_count`](FixedSizeMemoryResource::free_block_count);
//! [`release`](FixedSizeMemoryResource::release) locks every shard and returns all batches
//! to upstream when no block is live; dropping the resource returns every batch.
//! Forgetting a stream (see [`super::stream_lifetime`]) forgets it in every shard.

mod directory;
#[cfg(test)]
mod tests;

use std::any::Any;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use self::directory::{Batch, Geometry, Lookup, View};
use super::stream_lifetime::{self, StreamState};
use super::stream_ordered::{PerStreamLists, StreamRegistry};
use super::thread_slot::thread_slot;
use super::ALLOCATION_ALIGNMENT as ALIGN;
use super::{current_device_or_unknown, DeviceMemoryResource, SharedResource};
use crate::counters;
use crate::error::{Error, Result};
use crate::fast_map::FastSet;
use crate::runtime::{runtime, Stream};
use crate::spin_lock::{SpinGuard, SpinLock};

const NAME: &str = "fixed_size_memory_resource";

/// Default block size (RMM's): 1 MiB.
pub const DEFAULT_BLOCK_SIZE: usize = 1 << 20;
/// Default number of blocks taken from upstream at a time (RMM's): 128.
pub const DEFAULT_BLOCKS_TO_PREALLOCATE: usize = 128;
/// A thread that runs dry takes another thread's blocks of *another stream* (which costs
/// an event recorded and waited) only from a shard holding at least a batch of them, or
/// this many: otherwise it grows. Threads on their own streams whose live counts wander
/// would else pass a few blocks back and forth, with an event each time (binning under the
/// threads workload: one event per 2 000 operations at 8 threads, against one per 500 000
/// for the pool). A shard thus keeps at most about a batch that another shard's thread could use.
const MIN_STEAL_CAP: usize = 64;
/// The most bytes a binning resource's own bin takes from upstream at a time (see
/// [`FixedSizeMemoryResource::for_bin`]).
pub(crate) const BIN_BATCH_BYTES: usize = 16 << 20;

/// A free block: its address and where its live byte is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Block {
    addr: usize,
    batch: u32,
    index: u32,
}

/// One shard's state, behind the shard's lock.
#[derive(Debug)]
struct ShardInner {
    streams: StreamRegistry,
    /// Free blocks per stream slot of `streams`.
    stacks: Vec<Vec<Block>>,
    /// Free blocks over all stacks.
    free: usize,
    /// Allocations minus frees made through this shard (the sum over shards is the number
    /// of live blocks; one shard's may be negative).
    live: isize,
    /// This shard's copy of the address → batch index.
    view: View,
    /// A buffer for blocks taken from other shards, kept for its capacity.
    spare: Vec<Block>,
}

impl PerStreamLists for ShardInner {
    #[inline(always)]
    fn registry(&mut self) -> &mut StreamRegistry {
        &mut self.streams
    }

    fn push_lists(&mut self) {
        self.stacks.push(Vec::new());
    }

    fn has_free(&self, slot: u32) -> bool {
        !self.stacks[slot as usize].is_empty()
    }

    /// Moves slot `t`'s free blocks onto slot `s` (keeping `t`'s capacity for later).
    fn move_free(&mut self, t: u32, s: u32) {
        let mut moved = std::mem::take(&mut self.stacks[t as usize]);
        self.stacks[s as usize].append(&mut moved);
        self.stacks[t as usize] = moved;
    }
}

impl ShardInner {
    /// A stream slot other than `s` with at least `min` (at least 1) free blocks.
    fn other_donor(&self, s: Option<u32>, min: usize) -> Option<u32> {
        let min = min.max(1);
        (0..self.stacks.len() as u32)
            .find(|&t| Some(t) != s && self.stacks[t as usize].len() >= min)
    }
}

/// A shard: its lock and a copy of its free count that other shards read without taking
/// the lock (written with a plain store under the lock). Aligned so that no two shards
/// share a cache line.
#[repr(align(128))]
struct Shard {
    inner: SpinLock<ShardInner>,
    free_hint: AtomicUsize,
}

impl Shard {
    #[inline(always)]
    fn publish(&self, sh: &ShardInner) {
        self.free_hint.store(sh.free, Ordering::Relaxed);
    }
}

/// The batches taken from upstream.
#[derive(Debug, Default)]
struct Batches {
    /// By id: a batch's id is its position.
    list: Vec<Batch>,
}

/// A value alone on its cache line.
#[repr(align(128))]
struct Padded<T>(T);

/// Everything but the upstream: shared (weakly) with [`stream_lifetime`].
struct State {
    geo: Geometry,
    shards: Box<[Shard]>,
    batches: Mutex<Batches>,
    /// `batches.list.len()`, read without the lock by every operation to see whether the
    /// shard's view is current.
    batch_count: Padded<AtomicUsize>,
}

impl State {
    /// Brings `sh`'s view up to date with the batches taken so far.
    #[inline(always)]
    fn sync(&self, sh: &mut ShardInner) {
        if self.batch_count.0.load(Ordering::Acquire) != sh.view.len() {
            self.catch_up(sh);
        }
    }

    #[inline(never)]
    fn catch_up(&self, sh: &mut ShardInner) {
        let b = self.batches.lock();
        sh.view.catch_up(&b.list, &self.geo);
    }

    /// Runs `f` on every shard, each locked in turn; the first error is returned after all
    /// have run.
    fn each_shard(&self, mut f: impl FnMut(&mut ShardInner) -> Result<()>) -> Result<()> {
        let mut first = None;
        for shard in self.shards.iter() {
            let mut sh = shard.inner.lock();
            if let Err(e) = f(&mut sh) {
                first.get_or_insert(e);
            }
            shard.publish(&sh);
        }
        first.map_or(Ok(()), Err)
    }
}

impl StreamState for State {
    fn forget_stream(&self, stream: Stream) -> Result<()> {
        self.each_shard(|sh| sh.forget(stream))
    }
}

/// Shards of a new resource: the CPU count rounded up to a power of two (so that picking
/// a thread's shard is a mask), clamped to 2..=64.
fn default_shards() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(8)
        .clamp(2, 64)
        .next_power_of_two()
}

/// Allocates blocks of one fixed size (hipMM's `fixed_size_memory_resource`); requests
/// larger than the block size fail. See the module docs for the per-thread shards and
/// [`super::stream_ordered`] for the stream rules.
pub struct FixedSizeMemoryResource {
    upstream: SharedResource,
    block_size: usize,
    blocks_to_preallocate: usize,
    state: Arc<State>,
}

impl FixedSizeMemoryResource {
    /// Blocks of `block_size` bytes (rounded up to 256), taken from `upstream`
    /// `blocks_to_preallocate` at a time; the first batch is taken now.
    pub fn new(
        upstream: SharedResource,
        block_size: usize,
        blocks_to_preallocate: usize,
    ) -> Result<Self> {
        Self::with_shards(
            upstream,
            block_size,
            blocks_to_preallocate,
            default_shards(),
        )
    }

    /// A bin of a [`super::BinningMemoryResource`] (its `add_bin` without a resource):
    /// batches of at most [`BIN_BATCH_BYTES`] (and at most RMM's 128 blocks). RMM takes 128
    /// blocks per bin, so `with_range(pool, 18, 22)` holds 992 MiB before anything is
    /// allocated and a bin of 4 MiB blocks grows by 512 MiB; here the same bins hold 80 MiB.
    /// The first batch is still taken now, so that a bin upstream cannot serve fails in
    /// `add_bin`, as in RMM.
    pub(crate) fn for_bin(upstream: SharedResource, block_size: usize) -> Result<Self> {
        let blocks = (BIN_BATCH_BYTES / block_size.max(1)).clamp(1, DEFAULT_BLOCKS_TO_PREALLOCATE);
        Self::with_shards(upstream, block_size, blocks, default_shards())
    }

    /// [`new`](Self::new) with `shards` shards (at least 1).
    pub(crate) fn with_shards(
        upstream: SharedResource,
        block_size: usize,
        blocks_to_preallocate: usize,
        shards: usize,
    ) -> Result<Self> {
        if block_size == 0 {
            return Err(Error::invalid(format!(
                "{NAME}: block_size = 0 must be positive"
            )));
        }
        if blocks_to_preallocate == 0 {
            return Err(Error::invalid(format!(
                "{NAME}: blocks_to_preallocate = 0 must be positive"
            )));
        }
        if blocks_to_preallocate > u32::MAX as usize {
            return Err(Error::invalid(format!(
                "{NAME}: blocks_to_preallocate = {blocks_to_preallocate} is too large (at \
                 most {})",
                u32::MAX
            )));
        }
        let Some(block_size) = block_size.checked_next_multiple_of(ALIGN) else {
            return Err(Error::invalid(format!(
                "{NAME}: block_size = {block_size} is too large"
            )));
        };
        if block_size.checked_mul(blocks_to_preallocate).is_none() {
            return Err(Error::invalid(format!(
                "{NAME}: block_size = {block_size} times blocks_to_preallocate = \
                 {blocks_to_preallocate} overflows"
            )));
        }
        let rt = runtime()?;
        let device = current_device_or_unknown(rt);
        let shards = (0..shards.max(1))
            .map(|_| Shard {
                inner: SpinLock::new(ShardInner {
                    streams: StreamRegistry::new(rt, device),
                    stacks: Vec::new(),
                    free: 0,
                    live: 0,
                    view: View::default(),
                    spare: Vec::new(),
                }),
                free_hint: AtomicUsize::new(0),
            })
            .collect();
        let r = FixedSizeMemoryResource {
            upstream,
            block_size,
            blocks_to_preallocate,
            state: Arc::new(State {
                geo: Geometry::new(block_size, blocks_to_preallocate),
                shards,
                batches: Mutex::new(Batches::default()),
                batch_count: Padded(AtomicUsize::new(0)),
            }),
        };
        {
            let shard = &r.state.shards[r.my_shard()];
            let mut sh = shard.inner.lock();
            let s = sh.slot(Stream::DEFAULT);
            r.grow(&mut sh, block_size, Stream::DEFAULT, s)?;
            shard.publish(&sh);
        }
        stream_lifetime::register(Arc::downgrade(&r.state) as _);
        Ok(r)
    }

    /// RMM's defaults: 1 MiB blocks, 128 at a time.
    pub fn with_defaults(upstream: SharedResource) -> Result<Self> {
        Self::new(upstream, DEFAULT_BLOCK_SIZE, DEFAULT_BLOCKS_TO_PREALLOCATE)
    }

    /// The size of every block (the requested size rounded up to 256).
    pub fn get_block_size(&self) -> usize {
        self.block_size
    }

    /// Blocks taken from upstream per growth.
    pub fn blocks_to_preallocate(&self) -> usize {
        self.blocks_to_preallocate
    }

    /// The upstream resource.
    pub fn upstream(&self) -> SharedResource {
        self.upstream.clone()
    }

    /// Bytes currently taken from upstream.
    pub fn pool_size(&self) -> usize {
        self.state.batches.lock().list.len() * self.state.geo.bytes
    }

    /// Free blocks, over all streams and shards.
    pub fn free_block_count(&self) -> usize {
        self.state.shards.iter().map(|s| s.inner.lock().free).sum()
    }

    /// Number of per-thread shards.
    pub fn shard_count(&self) -> usize {
        self.state.shards.len()
    }

    /// Returns every batch to upstream when no block is in use (blocks are not tracked
    /// per batch in the free stacks, so partially used batches are not told apart);
    /// returns the bytes released. In each shard the default stream is first ordered after
    /// every stream holding free blocks, and the batches are freed on it.
    pub fn release(&self) -> Result<usize> {
        // Lock order: every shard by index, then the batch list (as growth: a shard, then
        // the list).
        let mut shards: Vec<SpinGuard<'_, ShardInner>> =
            self.state.shards.iter().map(|s| s.inner.lock()).collect();
        let mut batches = self.state.batches.lock();
        if shards.iter().map(|sh| sh.live).sum::<isize>() != 0 {
            return Ok(0);
        }
        debug_assert!(
            every_block_free_once(&shards, batches.list.len() * self.state.geo.blocks),
            "{NAME}: no block is live, yet the free stacks do not hold every block once"
        );
        for sh in shards.iter_mut() {
            if sh.free == 0 {
                continue;
            }
            let d = sh.slot(Stream::DEFAULT);
            for t in 0..sh.stacks.len() as u32 {
                if t != d && !sh.stacks[t as usize].is_empty() {
                    sh.streams.order_after(d, t)?;
                }
            }
        }
        let mut released = 0;
        let mut first_err = None;
        for b in batches.list.drain(..) {
            released += self.state.geo.bytes;
            if let Err(e) = self.upstream.deallocate(
                b.base as *mut c_void,
                self.state.geo.bytes,
                Stream::DEFAULT,
            ) {
                first_err.get_or_insert(e);
            }
            counters::upstream_free();
        }
        self.state.batch_count.0.store(0, Ordering::Release);
        for (sh, shard) in shards.iter_mut().zip(self.state.shards.iter()) {
            for st in sh.stacks.iter_mut() {
                st.clear();
            }
            sh.free = 0;
            sh.live = 0;
            sh.view.clear();
            shard.publish(sh);
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(released),
        }
    }

    /// Forgets `stream` (which must still be alive) in every shard: the default stream is
    /// ordered after its work (an event recorded on it; the host does not wait) and its
    /// free blocks move to the default stream. Destroying a stream through the library
    /// (`rmm_stream_destroy`, [`stream_destroyed`](super::stream_destroyed)) does this for
    /// every live resource.
    pub fn forget_stream(&self, stream: Stream) -> Result<()> {
        self.state.forget_stream(stream)
    }

    /// The calling thread's shard.
    #[inline(always)]
    fn my_shard(&self) -> usize {
        #[cfg(test)]
        if let Some(i) = tests::forced_shard() {
            return i % self.state.shards.len();
        }
        let n = self.state.shards.len();
        // A thread that is ending has no slot (`NO_SLOT`): any shard serves it.
        let t = thread_slot();
        // Not `is_power_of_two`: without the popcnt instruction (x86-64's baseline) it is a
        // dozen instructions on every allocation and free.
        if n & (n - 1) == 0 {
            t & (n - 1)
        } else {
            t % n
        }
    }

    /// Takes `blocks_to_preallocate` blocks from upstream in one allocation onto slot `s`
    /// of the (locked) shard `sh`.
    fn grow(&self, sh: &mut ShardInner, requested: usize, stream: Stream, s: u32) -> Result<()> {
        let geo = self.state.geo;
        let (n, bytes) = (geo.blocks, geo.bytes);
        let p = self.upstream.allocate(bytes, stream).map_err(|e| match e {
            Error::OutOfMemory { detail, .. } => Error::OutOfMemory {
                requested,
                resource: NAME,
                device: sh.streams.device(),
                detail: format!(
                    "growing by {n} blocks of {} bytes ({bytes} bytes) from upstream {} \
                     failed: {detail}",
                    self.block_size,
                    self.upstream.name()
                ),
            },
            e => e,
        })?;
        counters::upstream_alloc();
        let addr = p as usize;
        let misaligned = p.is_null() || addr % ALIGN != 0;
        if misaligned || addr.checked_add(bytes).is_none() {
            if !p.is_null() {
                // Give it back; a failure to do so changes nothing for the caller.
                let _ = self.upstream.deallocate(p, bytes, stream);
                counters::upstream_free();
            }
            return Err(Error::BadAlloc {
                requested,
                resource: NAME,
                detail: format!(
                    "upstream {} returned {p:p} for {bytes} bytes, which is not aligned to \
                     {ALIGN} bytes or wraps around the address space",
                    self.upstream.name()
                ),
            });
        }
        let id = {
            let mut b = self.state.batches.lock();
            let id = b.list.len();
            if id >= u32::MAX as usize {
                drop(b);
                let _ = self.upstream.deallocate(p, bytes, stream);
                counters::upstream_free();
                return Err(Error::BadAlloc {
                    requested,
                    resource: NAME,
                    detail: format!(
                        "{id} batches of {n} blocks of {} bytes are the most one resource \
                         keeps",
                        self.block_size
                    ),
                });
            }
            b.list.push(Batch::new(addr, n, geo.block_size));
            self.state.batch_count.0.store(id + 1, Ordering::Release);
            sh.view.catch_up(&b.list, &geo);
            id as u32
        };
        let stack = &mut sh.stacks[s as usize];
        stack.reserve(n);
        // Push in reverse so blocks come out in address order.
        stack.extend((0..n).rev().map(|k| Block {
            addr: addr + k * self.block_size,
            batch: id,
            index: k as u32,
        }));
        sh.free += n;
        Ok(())
    }

    /// Hands out `b`, just popped from a stack of the locked shard `sh`.
    #[inline(always)]
    fn hand_out(&self, shard: &Shard, sh: &mut ShardInner, b: Block) -> *mut c_void {
        sh.view.batch(b.batch).set_live(b.index);
        sh.free -= 1;
        sh.live += 1;
        shard.publish(sh);
        b.addr as *mut c_void
    }

    /// The allocation path when the calling thread's shard `me` (whose lock `sh` is) has
    /// no free block for `stream` (see the module docs for the order of the steps).
    #[inline(never)]
    fn allocate_slow(
        &self,
        me: usize,
        sh: SpinGuard<'_, ShardInner>,
        bytes: usize,
        stream: Stream,
    ) -> Result<*mut c_void> {
        let mut passed_over = false;
        let min_other = self.state.geo.blocks.min(MIN_STEAL_CAP);
        match self.refill(me, sh, bytes, stream, min_other, &mut passed_over) {
            // Growth failed while other shards hold a few blocks of other streams, passed
            // over to save an event: take those after all.
            Err(Error::OutOfMemory { .. }) if passed_over => {
                let sh = self.state.shards[me].inner.lock();
                self.refill(me, sh, bytes, stream, 1, &mut passed_over)
            }
            r => r,
        }
    }

    /// Steps 1 to 4 for [`allocate_slow`](Self::allocate_slow): step 3 takes from another
    /// shard's stream only where it holds at least `min_other` blocks, and sets
    /// `passed_over` when it skipped a smaller one.
    fn refill(
        &self,
        me: usize,
        mut sh: SpinGuard<'_, ShardInner>,
        bytes: usize,
        stream: Stream,
        min_other: usize,
        passed_over: &mut bool,
    ) -> Result<*mut c_void> {
        let shards = &self.state.shards;
        let own_other = sh.free > 0;
        let mut taken = std::mem::take(&mut sh.spare);
        drop(sh);
        // Steps 1 and 3: other shards, one lock at a time, never with our own held.
        let outcome = (|| -> Result<()> {
            for k in 1..shards.len() {
                let z = &shards[(me + k) % shards.len()];
                if z.free_hint.load(Ordering::Relaxed) == 0 {
                    continue;
                }
                let mut zg = z.inner.lock();
                let got = take_same_stream(&mut zg, stream, &mut taken)
                    || !own_other
                        && take_other_stream(&mut zg, stream, &mut taken, min_other, passed_over)?;
                z.publish(&zg);
                if got {
                    break;
                }
            }
            Ok(())
        })();
        let shard = &shards[me];
        let mut sh = shard.inner.lock();
        self.state.sync(&mut sh);
        let s = sh.slot(stream);
        if !taken.is_empty() {
            sh.free += taken.len();
            sh.stacks[s as usize].append(&mut taken);
            // The shard's event for a foreign `stream` must cover the blocks it now holds.
            sh.streams.refresh(s);
        }
        sh.spare = taken;
        outcome?;
        if sh.stacks[s as usize].is_empty() {
            // Step 2, then 4.
            match sh.other_donor(Some(s), 1) {
                Some(t) => {
                    sh.streams.order_after(s, t)?;
                    sh.move_free(t, s);
                }
                None => {
                    self.grow(&mut sh, bytes, stream, s)?;
                    // The new blocks may be ordered on `stream` by the upstream.
                    sh.streams.refresh(s);
                }
            }
        }
        let b = sh.stacks[s as usize]
            .pop()
            .expect("the stack was just refilled");
        Ok(self.hand_out(shard, &mut sh, b))
    }
}

/// Whether the free stacks of the (locked) shards hold `total` distinct blocks and
/// nothing else (an integrity check of [`FixedSizeMemoryResource::release`]).
fn every_block_free_once(shards: &[SpinGuard<'_, ShardInner>], total: usize) -> bool {
    let mut seen: FastSet<usize> = FastSet::default();
    let mut entries = 0;
    for b in shards.iter().flat_map(|sh| sh.stacks.iter().flatten()) {
        seen.insert(b.addr);
        entries += 1;
    }
    entries == total && seen.len() == total
}

/// Step 1: moves half (rounded up) of the locked shard `zg`'s free blocks of `stream` to
/// `taken`; whether there were any.
fn take_same_stream(zg: &mut ShardInner, stream: Stream, taken: &mut Vec<Block>) -> bool {
    let Some(t) = zg.streams.find(stream) else {
        return false;
    };
    let stack = &mut zg.stacks[t as usize];
    if stack.is_empty() {
        return false;
    }
    let k = stack.len().div_ceil(2);
    taken.extend(stack.drain(stack.len() - k..));
    zg.free -= k;
    true
}

/// Step 3: orders `stream` after another stream T holding at least `min_other` free
/// blocks in the locked shard `zg` (through `zg`'s registry, where `stream` gets a slot),
/// then moves half of T's free blocks (all of them when the device was synchronized) to
/// `taken`; whether there were any. Sets `passed_over` when a stream held some, but fewer.
fn take_other_stream(
    zg: &mut ShardInner,
    stream: Stream,
    taken: &mut Vec<Block>,
    min_other: usize,
    passed_over: &mut bool,
) -> Result<bool> {
    let Some(t) = zg.other_donor(None, min_other) else {
        *passed_over |= zg.free > 0;
        return Ok(false);
    };
    let sz = zg.slot(stream);
    // `stream`'s own stack in `zg` is empty (step 1 found nothing), so `t != sz`.
    debug_assert_ne!(t, sz);
    let synchronized = zg.streams.order_after(sz, t)?;
    let stack = &mut zg.stacks[t as usize];
    let k = if synchronized {
        stack.len()
    } else {
        stack.len().div_ceil(2)
    };
    taken.extend(stack.drain(stack.len() - k..));
    zg.free -= k;
    Ok(true)
}

impl std::fmt::Debug for FixedSizeMemoryResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{NAME}(upstream: {}, block_size: {}, blocks_to_preallocate: {}, shards: {})",
            self.upstream.name(),
            self.block_size,
            self.blocks_to_preallocate,
            self.state.shards.len()
        )
    }
}

impl DeviceMemoryResource for FixedSizeMemoryResource {
    fn allocate(&self, bytes: usize, stream: Stream) -> Result<*mut c_void> {
        if bytes == 0 {
            return Ok(std::ptr::null_mut());
        }
        if bytes > self.block_size {
            return Err(Error::BadAlloc {
                requested: bytes,
                resource: NAME,
                detail: format!(
                    "the request of {bytes} bytes exceeds the block size of {} bytes",
                    self.block_size
                ),
            });
        }
        let me = self.my_shard();
        let shard = &self.state.shards[me];
        let mut sh = shard.inner.lock();
        self.state.sync(&mut sh);
        let s = sh.slot(stream);
        match sh.stacks[s as usize].pop() {
            Some(b) => Ok(self.hand_out(shard, &mut sh, b)),
            None => self.allocate_slow(me, sh, bytes, stream),
        }
    }

    fn deallocate(&self, ptr: *mut c_void, bytes: usize, stream: Stream) -> Result<()> {
        if ptr.is_null() {
            return Ok(());
        }
        if bytes > self.block_size {
            return Err(Error::invalid(format!(
                "{NAME}: cannot free {ptr:p} with bytes = {bytes}: larger than the block size \
                 of {} bytes",
                self.block_size
            )));
        }
        let shard = &self.state.shards[self.my_shard()];
        let mut sh = shard.inner.lock();
        self.state.sync(&mut sh);
        let addr = ptr as usize;
        let (batch, index) = match sh.view.find(addr, &self.state.geo) {
            Lookup::Block { batch, index } => (batch, index),
            Lookup::Interior => {
                return Err(Error::invalid(format!(
                    "{NAME}: cannot free {ptr:p} ({bytes} bytes): it points inside a block \
                     of {} bytes of this resource, not at its start",
                    self.block_size
                )))
            }
            Lookup::Foreign => {
                return Err(Error::invalid(format!(
                    "{NAME}: cannot free {ptr:p} ({bytes} bytes): it was not allocated by \
                     this resource"
                )))
            }
        };
        if !sh.view.batch(batch).clear_live(index) {
            return Err(Error::invalid(format!(
                "{NAME}: cannot free {ptr:p} ({bytes} bytes): the block is not allocated (it \
                 was already freed)"
            )));
        }
        let s = sh.slot(stream);
        sh.stacks[s as usize].push(Block { addr, batch, index });
        sh.free += 1;
        sh.live -= 1;
        // A foreign stream's event is recorded now; nothing for a tracked stream.
        sh.streams.refresh(s);
        shard.publish(&sh);
        Ok(())
    }

    /// Each batch with its blocks, live or free.
    fn segments(&self) -> Vec<super::Segment> {
        let geo = &self.state.geo;
        let batches = self.state.batches.lock();
        batches
            .list
            .iter()
            .map(|b| super::Segment {
                kind: "fixed_size_batch",
                addr: b.base,
                size: geo.bytes,
                blocks: (0..geo.blocks)
                    .map(|k| super::SegmentBlock {
                        addr: b.base + k * geo.block_size,
                        size: geo.block_size,
                        state: if b.is_live(k as u32) { "used" } else { "free" },
                    })
                    .collect(),
            })
            .collect()
    }

    fn name(&self) -> &'static str {
        NAME
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn upstream(&self) -> Option<SharedResource> {
        Some(self.upstream.clone())
    }
}

impl Drop for FixedSizeMemoryResource {
    fn drop(&mut self) {
        if crate::runtime::process_is_exiting() {
            return;
        }
        // `stream_lifetime` may hold the state for a moment: lock rather than `get_mut`.
        let live: isize = self.state.shards.iter().map(|s| s.inner.lock().live).sum();
        if live != 0 {
            log::warn!(
                "{NAME} dropped with {live} live blocks; their memory goes back to upstream"
            );
        }
        let mut batches = self.state.batches.lock();
        for b in batches.list.drain(..) {
            // Nothing useful to do with a failure while dropping.
            let _ = self.upstream.deallocate(
                b.base as *mut c_void,
                self.state.geo.bytes,
                Stream::DEFAULT,
            );
            counters::upstream_free();
        }
    }
}
