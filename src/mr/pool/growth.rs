//! How a pool grows: by how much ([`size_to_grow`]), taking chunks from upstream, and in
//! contiguous mode mapping right after an extent so that its free tail and the new memory
//! make one block.

use std::ffi::c_void;
use std::sync::Arc;

use super::block::{Inner, State};
use super::shard::SHARD_MAX;
use super::{round_up, PoolMemoryResource, ALIGN, NAME};
use crate::error::{Error, Result};
use crate::history::recorder;
use crate::mr::stream_ordered::PerStreamLists;
use crate::mr::SharedResource;
use crate::runtime::Stream;

/// The first size to try growing a pool of `pool_size` bytes by, for a request of `bytes`
/// (aligned), or `None` when the request does not fit under `maximum` (RMM's
/// `size_to_grow`): half the aligned room left, at least the request, with a maximum.
/// Without one, at least the request and, beyond that: the pool size (doubling it) up to
/// [`GROW_STEP`], then `GROW_STEP` or a 32nd of the pool, whichever is larger. RMM doubles
/// at every size, which leaves up to half of what a growing pool took from upstream unused
/// (2.58 times the peak live bytes under the streams workload); growing by a 32nd bounds
/// that overshoot to 3% at a cost of more upstream calls while the pool grows (about 270
/// from 4 MiB to 40 GiB, each of them a small part of the time the driver takes to map that
/// much memory). Under the streams workload through binning (whose bins take batches from
/// the pool), a pool took 3.16 times its peak live bytes with a 32nd, 3.73 times with a
/// sixteenth and 8 MiB steps.
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

/// Why a pool could not grow (see [`PoolMemoryResource::grow`]).
enum Shortfall {
    /// The growth would take the pool past its maximum.
    Maximum,
    /// The upstream is out of memory for the request (its message).
    Upstream(String),
}

/// The reason errors give when a request does not fit under the maximum.
const MAXIMUM_EXCEEDED: &str = "maximum pool size exceeded";

/// Contiguous mode's upstream (see [`Inner::granule`]): it can map memory at a chosen
/// place, so that a pool grows right after one of its extents.
pub(crate) trait Placement: Send + Sync {
    /// Maps `bytes` (whole granules) at `addr` if that range is free; `Ok(false)` when it
    /// is not, `Err` when mapping failed (then nothing is mapped).
    fn map_at(&self, addr: usize, bytes: usize) -> Result<bool>;
}

impl PoolMemoryResource {
    /// A pool in contiguous mode (see [`Inner::granule`]) over `upstream`, which hands out
    /// granule multiples of one address range, and `space`, the same upstream mapping at a
    /// chosen place: grows in multiples of `granule` and merges memory across growths.
    /// Errors name the resource `name`, the pool's owner.
    pub(crate) fn contiguous(
        upstream: SharedResource,
        space: Arc<dyn Placement>,
        name: &'static str,
        granule: usize,
        initial_pool_size: usize,
        maximum_pool_size: Option<usize>,
    ) -> Result<Self> {
        let mut pool = PoolMemoryResource::new(upstream, 0, maximum_pool_size)?;
        pool.space = Some(space);
        pool.name = name;
        let mut inner = pool.core.inner.lock();
        inner.granule = granule;
        if initial_pool_size > 0 {
            let s = inner.slot(Stream::DEFAULT);
            pool.add_chunk(&mut inner, initial_pool_size, Stream::DEFAULT, s)?;
        }
        drop(inner);
        Ok(pool)
    }

    /// Takes a chunk of `size` from upstream on `stream` and files it as free on slot `s`.
    pub(super) fn add_chunk(
        &self,
        inner: &mut Inner,
        size: usize,
        stream: Stream,
        s: u32,
    ) -> Result<()> {
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
        self.note(recorder::EventKind::Grow, inner, addr, size, stream);
        Ok(())
    }

    /// The pool's name in memory-history events: its address, as snapshots name resources
    /// (a resource built on a pool holds it as its first field, so that the two addresses
    /// are one).
    pub(super) fn history_id(&self) -> usize {
        self as *const Self as usize
    }

    /// A memory-history event of this pool's growth or release, when recording.
    #[inline]
    pub(super) fn note(
        &self,
        kind: recorder::EventKind,
        inner: &Inner,
        addr: usize,
        size: usize,
        stream: Stream,
    ) {
        if recorder::enabled() {
            let id = self.history_id();
            recorder::record(
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

    pub(super) fn oom(&self, inner: &Inner, requested: usize, why: &str) -> Error {
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
    pub(super) fn allocate_slow(
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

    /// Contiguous mode: grows by mapping right after the extent whose last block is free on
    /// slot `s` and largest, so that block and the new memory make one block of `bytes`;
    /// false when no such extent can be extended.
    pub(super) fn grow_in_place(&self, inner: &mut Inner, bytes: usize, s: u32) -> Result<bool> {
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
                self.note(recorder::EventKind::Grow, inner, end, size, stream);
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Grows the pool by at least `bytes` (already aligned), RMM's rule: with a maximum,
    /// try max(`bytes`, half the room left), failing at once when `bytes` exceeds the room;
    /// without one, see [`size_to_grow`]. On upstream out-of-memory, halve the try down to
    /// `bytes`. When that fails, for the maximum or for the upstream, the pool gives its
    /// entirely free chunks back to upstream and tries again (RMM 26.10; see
    /// [`Self::reclaim_for_growth`]).
    pub(super) fn grow(
        &self,
        inner: &mut Inner,
        bytes: usize,
        stream: Stream,
        s: u32,
    ) -> Result<()> {
        // What errors name: the request in whole granules (contiguous mode).
        let shown = bytes
            .checked_next_multiple_of(inner.granule.max(1))
            .unwrap_or(bytes);
        let mut short = match self.grow_once(inner, bytes, stream, s)? {
            Ok(()) => return Ok(()),
            Err(short) => short,
        };
        // Each round gives at least one chunk back: at most two (to make room under the
        // maximum, then everything for an upstream out of memory).
        while self.reclaim_for_growth(inner, bytes, s, matches!(short, Shortfall::Maximum)) > 0 {
            short = match self.grow_once(inner, bytes, stream, s)? {
                Ok(()) => return Ok(()),
                Err(short) => short,
            };
        }
        Err(match short {
            Shortfall::Maximum => self.oom(inner, shown, MAXIMUM_EXCEEDED),
            Shortfall::Upstream(detail) => {
                let why = format!(
                    "upstream {} could not grow the pool ({detail})",
                    self.upstream.name()
                );
                self.oom(inner, shown, &why)
            }
        })
    }

    /// One try of [`Self::grow`]: `Ok(Err(_))` says why the pool could not grow.
    fn grow_once(
        &self,
        inner: &mut Inner,
        bytes: usize,
        stream: Stream,
        s: u32,
    ) -> Result<std::result::Result<(), Shortfall>> {
        if inner.granule != 0 {
            match self.grow_in_place(inner, bytes, s) {
                Ok(true) => return Ok(Ok(())),
                Ok(false) => {}
                Err(Error::OutOfMemory { detail, .. }) => {
                    return Ok(Err(Shortfall::Upstream(detail)))
                }
                Err(e) => return Err(e),
            }
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
            return Ok(Err(Shortfall::Maximum));
        };
        if self
            .maximum
            .is_some_and(|m| inner.pool_size.checked_add(bytes).map_or(true, |t| t > m))
        {
            return Ok(Err(Shortfall::Maximum));
        }
        if let Some(m) = self.maximum {
            try_size = try_size.min(m - inner.pool_size);
        }
        loop {
            match self.add_chunk(inner, try_size, stream, s) {
                Ok(()) => {
                    log::debug!("{NAME}: grew by {try_size} bytes to {}", inner.pool_size);
                    return Ok(Ok(()));
                }
                Err(Error::OutOfMemory { detail, .. }) => {
                    if try_size == bytes {
                        return Ok(Err(Shortfall::Upstream(detail)));
                    }
                    try_size = granules(round_up(try_size / 2).unwrap_or(bytes))
                        .unwrap_or(bytes)
                        .max(bytes);
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// The growth path of [`DeviceMemoryResource::allocate`](crate::mr::DeviceMemoryResource::allocate)
    /// (no structure has a fitting block): empties the fronts into the pool and allocates
    /// from the structures, growing. A request served by the global pool that still finds
    /// no memory is tried once more after the shards' entirely free slabs are back in the
    /// global pool, whose growth can then give their chunks back (a shard's request does
    /// that by itself: `allocate_sharded`).
    #[cold]
    #[inline(never)]
    pub(super) fn allocate_growing(&self, rounded: usize, stream: Stream) -> Result<*mut c_void> {
        self.core.settle();
        let sharded = rounded <= SHARD_MAX && self.core.shards.active();
        let p = match self.allocate_structures(rounded, stream, true) {
            Err(Error::OutOfMemory { .. }) if !sharded && self.any_shard() => {
                self.reclaim_slabs()?;
                self.allocate_global(rounded, stream, false, true)
            }
            r => r,
        }?;
        Ok(p.expect("growth allowed"))
    }
}
