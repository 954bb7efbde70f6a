//! Giving memory back to upstream: entirely free chunks (and, through
//! [`PoolMemoryResource::release_with`], whatever a pool's owner frees some other way).

use std::ffi::c_void;

use super::block::{Inner, State};
use super::PoolMemoryResource;
use crate::error::{Error, Result};
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
    /// Whether every block of chunk `c` is free (none used, held by a front or a slab).
    fn chunk_is_free(&self, c: usize) -> bool {
        let mut i = self.chunks[c].first;
        while i != NIL {
            if self.blk(i).state != State::Free {
                return false;
            }
            i = self.blk(i).next_phys;
        }
        true
    }

    /// Bytes of the chunks whose every block is free.
    pub(super) fn free_chunk_bytes(&self) -> usize {
        (0..self.chunks.len())
            .filter(|&c| self.chunk_is_free(c))
            .map(|c| self.chunks[c].size)
            .sum()
    }

    /// Takes every entirely free chunk out, each to be given back in stream order on the
    /// stream its first block was freed on (after waiting for the streams that freed its
    /// other blocks) through `give_back(addr, size, stream)`. Returns the bytes released.
    pub(super) fn release_free_chunks(
        &mut self,
        give_back: impl FnMut(usize, usize, Stream) -> Result<()>,
    ) -> Result<usize> {
        match self.release_free_chunks_until(|_| false, give_back) {
            (released, None) => Ok(released),
            (_, Some(e)) => Err(e),
        }
    }

    /// [`Inner::release_free_chunks`], stopping as soon as `enough` holds (newest chunks
    /// first). Returns the bytes released, and the first error of the ordering or of
    /// `give_back` (the chunks are out of the structure either way).
    pub(super) fn release_free_chunks_until(
        &mut self,
        enough: impl Fn(&Inner) -> bool,
        mut give_back: impl FnMut(usize, usize, Stream) -> Result<()>,
    ) -> (usize, Option<Error>) {
        let mut released = 0;
        let mut first_err = None;
        let mut c = self.chunks.len();
        while c > 0 && !enough(self) {
            c -= 1;
            if !self.chunk_is_free(c) {
                continue;
            }
            let first = self.chunks[c].first;
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
        (released, first_err)
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

    /// Gives the global pool's entirely free chunks back to upstream (in stream order, as
    /// [`Self::release`]) so that a growth for `bytes` (aligned) on slot `s` that failed
    /// can be tried again, as RMM 26.10 does for a pool with a maximum (rapidsai/rmm#2470):
    /// chunks taken separately never merge, so free chunks can hold the bytes of a request
    /// and no block that fits it. When the growth failed for the maximum (`over_maximum`),
    /// chunks go back only if that makes room under it for the least growth that serves
    /// `bytes`, and only until it does (a request that cannot fit changes nothing); when
    /// the upstream was out of memory, all of them go back. The caller has emptied the
    /// fronts (a block a front holds keeps its chunk) and holds the global pool's lock
    /// (the shards' slabs are theirs to return first: [`Self::reclaim_slabs`]). Returns
    /// the bytes given back.
    #[cold]
    pub(super) fn reclaim_for_growth(
        &self,
        inner: &mut Inner,
        bytes: usize,
        s: u32,
        over_maximum: bool,
    ) -> usize {
        let keep = if over_maximum {
            // The pool size at which the least growth fits under the maximum.
            let need = self.least_growth(inner, bytes, s);
            let Some(keep) = self.maximum.zip(need).and_then(|(m, n)| m.checked_sub(n)) else {
                return 0;
            };
            if inner.pool_size - inner.free_chunk_bytes() > keep {
                return 0;
            }
            keep
        } else {
            0
        };
        let up = Upstream {
            pool: self,
            device: inner.streams.device(),
        };
        let (released, err) = inner
            .release_free_chunks_until(|i| i.pool_size <= keep, |a, n, s| up.give_back(a, n, s));
        if released > 0 {
            self.core.fronts.set_pool_size(inner.pool_size);
            log::debug!(
                "{}: gave {released} bytes of free chunks back to grow for {bytes}",
                self.name
            );
        }
        if let Some(e) = err {
            // The chunks are out of the pool: growing may still succeed.
            log::warn!("{}: giving free chunks back to grow: {e}", self.name);
        }
        released
    }

    /// The least growth that serves `bytes` on slot `s` once the entirely free chunks are
    /// gone: `bytes` in whole granules, or in contiguous mode what the largest free tail on
    /// `s` of an extent that stays lacks (see [`Self::grow_in_place`]); `None` on overflow.
    fn least_growth(&self, inner: &Inner, bytes: usize, s: u32) -> Option<usize> {
        let mut tail = 0;
        if inner.granule != 0 && self.space.is_some() {
            for c in 0..inner.chunks.len() {
                let last = inner.blk(inner.last_block(inner.chunks[c].first));
                if last.state == State::Free && last.stream == s && !inner.chunk_is_free(c) {
                    tail = tail.max(last.size);
                }
            }
        }
        bytes
            .saturating_sub(tail)
            .checked_next_multiple_of(inner.granule.max(1))
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
