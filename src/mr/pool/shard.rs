//! Per-thread shards of a pool (see [`PoolMemoryResource`]'s docs, "Threads"): each a
//! structure of its own, whose chunks are slabs allocated from the global pool.

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

use super::block::{Inner, Owned};
use super::{round_up, PoolMemoryResource, NAME};
use crate::error::{Error, Result};
use crate::mr::stream_ordered::thread_number;
use crate::runtime::Stream;

/// Requests up to this size go to the calling thread's shard once the pool is sharded;
/// larger ones always use the global pool (they are rare and large enough that a lock is
/// not what they cost).
pub(super) const SHARD_MAX: usize = 1 << 20;
/// The smallest slab a shard takes from the global pool; a shard's slabs double with its
/// size up to [`SLAB_MAX`], so a thread's memory grows in few global operations.
pub(super) const SLAB_MIN: usize = 4 << 20;
/// The largest slab a shard takes at once.
pub(super) const SLAB_MAX: usize = 64 << 20;
/// Contended acquisitions of the global lock before the pool turns sharding on.
pub(super) const CONTENTION_TO_SHARD: u32 = 64;

/// The per-thread shards of a pool (see [`PoolMemoryResource`]'s docs).
pub(super) struct Shards {
    /// Turned on (once, for good) when the global lock was found contended
    /// [`CONTENTION_TO_SHARD`] times, or by [`PoolMemoryResource::set_sharded`].
    pub(super) active: AtomicBool,
    pub(super) contended: AtomicU32,
    pub(super) list: Box<[OnceLock<Arc<Mutex<Inner>>>]>,
}

impl Shards {
    pub(super) fn new() -> Self {
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
    pub(super) fn active(&self) -> bool {
        self.active.load(Ordering::Relaxed)
    }

    /// The calling thread's shard index (the count is a power of two: a mask, not a
    /// division, on the hot path).
    #[inline(always)]
    pub(super) fn mine(&self) -> usize {
        thread_number() & (self.list.len() - 1)
    }

    /// The shards made so far.
    #[inline]
    pub(super) fn made(&self) -> impl Iterator<Item = (usize, &Arc<Mutex<Inner>>)> {
        self.list
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.get().map(|s| (i, s)))
    }
}

impl PoolMemoryResource {
    /// The calling thread's shard, made on first use.
    #[inline]
    pub(super) fn my_shard(&self) -> &Arc<Mutex<Inner>> {
        self.core.shards.list[self.core.shards.mine()].get_or_init(|| {
            let (rt, device) = {
                let g = self.core.inner.lock();
                (g.streams.runtime(), g.streams.device())
            };
            // The pool's `Core` makes shards forget destroyed streams.
            Arc::new(Mutex::new(Inner::new(rt, device, None)))
        })
    }

    /// A shard's allocation path when stream slot `s` has no fitting block: another
    /// stream's free memory in the shard, then a new slab from the global pool (halving
    /// the slab down to the request when the global pool cannot give it).
    #[cold]
    #[inline(never)]
    pub(super) fn shard_slow(
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

    /// Gives every shard's entirely free slabs back to the global pool.
    pub(super) fn reclaim_slabs(&self) -> Result<()> {
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
}
