//! Giving memory back to upstream: entirely free chunks (and, through
//! [`PoolMemoryResource::release_with`], whatever a pool's owner frees some other way).

use std::ffi::c_void;

use super::block::{Inner, State};
use super::PoolMemoryResource;
use crate::error::Result;
use crate::history::recorder;
use crate::mr::free_index::NIL;
use crate::mr::stream_ordered::PerStreamLists;
use crate::runtime::{DeviceId, Stream};

/// A pool's upstream, for giving memory back: each range given back is counted and, while
/// the memory history records, recorded as a release of the pool.
pub(in crate::mr) struct Upstream<'a> {
    pool: &'a PoolMemoryResource,
    /// The global pool's device.
    device: DeviceId,
}

impl Upstream<'_> {
    /// Deallocates `[addr, addr + size)` upstream in stream order on `stream`.
    pub(in crate::mr) fn give_back(&self, addr: usize, size: usize, stream: Stream) -> Result<()> {
        let pool = self.pool;
        crate::counters::upstream_free();
        if recorder::enabled() {
            let (kind, id) = (recorder::EventKind::Release, pool.history_id());
            recorder::record(kind, addr, size, stream.0, self.device, pool.name, id);
        }
        pool.upstream.deallocate(addr as *mut c_void, size, stream)
    }
}

impl Inner {
    /// Takes every entirely free chunk out, each to be given back in stream order on the
    /// stream its first block was freed on (after waiting for the streams that freed its
    /// other blocks) through `give_back(addr, size, stream)`. Returns the bytes released.
    pub(super) fn release_free_chunks(
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
    /// Returns every shard's entirely free slabs to the global pool (in stream order), then
    /// every entirely free chunk of the global pool to upstream, each deallocated in stream
    /// order on the stream its first block was freed on (after waiting for the streams that
    /// freed its other blocks). Returns the bytes released to upstream.
    pub fn release(&self) -> Result<usize> {
        self.release_with(|inner, up| inner.release_free_chunks(|a, n, s| up.give_back(a, n, s)))
    }

    /// [`Self::release`] with another way to give the global pool's free memory back:
    /// empties the fronts, returns the shards' entirely free slabs to the global pool, then
    /// lets `give_back` give back what it holds free (see [`Self::with_global`]).
    pub(in crate::mr) fn release_with(
        &self,
        give_back: impl FnOnce(&mut Inner, &Upstream<'_>) -> Result<usize>,
    ) -> Result<usize> {
        self.core.settle();
        let shards = self.reclaim_slabs();
        let released = self.with_global(give_back);
        match (shards, released) {
            (Err(e), _) | (Ok(()), Err(e)) => Err(e),
            (Ok(()), Ok(n)) => Ok(n),
        }
    }

    /// `f` on the global pool (locked), which may give memory back to upstream through
    /// [`Upstream::give_back`]; the fronts then learn the pool's new size.
    pub(in crate::mr) fn with_global<R>(
        &self,
        f: impl FnOnce(&mut Inner, &Upstream<'_>) -> R,
    ) -> R {
        let mut inner = self.core.inner.lock();
        let up = Upstream {
            pool: self,
            device: inner.streams.device(),
        };
        let r = f(&mut inner, &up);
        self.core.fronts.set_pool_size(inner.pool_size);
        r
    }
}
