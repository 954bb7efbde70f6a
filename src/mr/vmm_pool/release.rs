//! Giving mapped memory back while blocks around it live: the whole granules inside free
//! blocks of the pool's global structure are unmapped, wherever they are, by
//! [`VmmPoolMemoryResource::release`] and by a release threshold. What this does to the
//! structure (cutting free blocks and extents around the granules given back) is the vmm
//! pool's, done through the pool's structure ([`crate::mr::pool`]), which knows nothing of
//! virtual memory.

use super::VmmPoolMemoryResource;
use crate::error::Result;
use crate::mr::free_index::{Linked, NIL};
use crate::mr::pool::{Chunk, State, Structure};
use crate::mr::stream_ordered::PerStreamLists;
use crate::runtime::Stream;

impl VmmPoolMemoryResource {
    /// Unmaps every whole free granule, wherever it is (blocks around it stay live), after
    /// the streams that freed them finished their work. Returns the bytes unmapped.
    pub fn release(&self) -> Result<usize> {
        self.pool.release_with(|inner, up| {
            release_free_granules(inner, 0, false, |a, n, s| up.give_back(a, n, s)).map(|(n, _)| n)
        })
    }

    /// Unmaps free granules of streams with no work left until at most `keep` bytes are
    /// free in the pool's global structure. Returns the bytes released, the bytes the
    /// global structure still holds free, and whether some were left for their stream's
    /// work.
    pub(super) fn release_idle(&self, keep: usize) -> Result<(usize, usize, bool)> {
        self.pool.with_global(|inner, up| {
            let (released, busy) =
                release_free_granules(inner, keep, true, |a, n, s| up.give_back(a, n, s))?;
            Ok((released, inner.bytes_free, busy))
        })
    }
}

/// Unmaps the whole granules inside the free blocks of `inner` (a pool's global structure
/// in contiguous mode), each given back through `give_back(addr, size, stream)` on the
/// stream its block was freed on (a foreign stream's blocks on the default stream, ordered
/// after it). With `only_idle`, only blocks of streams whose frees have completed, and only
/// until at most `keep` bytes are free. The blocks around a given-back range stay; an
/// extent it cuts in two becomes two. Returns the bytes given back, and whether a block was
/// left for its stream's work.
pub(super) fn release_free_granules(
    inner: &mut Structure,
    keep: usize,
    only_idle: bool,
    mut give_back: impl FnMut(usize, usize, Stream) -> Result<()>,
) -> Result<(usize, bool)> {
    let g = inner.granule;
    if !only_idle && inner.bytes_free > keep {
        // Free blocks of different streams never merge, so granules they share would
        // stay mapped: bring every stream's free memory to the default stream first
        // (ordered after each), where touching blocks merge.
        let d = inner.slot(Stream::DEFAULT);
        for t in 0..inner.lists.len() as u32 {
            if t != d && inner.lists[t as usize].fl_bitmap != 0 {
                inner.streams.order_after(d, t)?;
                inner.merge_stream(t, d);
            }
        }
    }
    let mut candidates = Vec::new();
    for c in &inner.chunks {
        let mut i = c.first;
        while i != NIL {
            let b = inner.blk(i);
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
    let mut idle_slots: Vec<Option<bool>> = vec![None; inner.lists.len()];
    for i in candidates {
        if inner.bytes_free <= keep {
            break;
        }
        let b = *inner.blk(i);
        let mut s0 = b.stream;
        if only_idle {
            let streams = &inner.streams;
            let slot = &mut idle_slots[s0 as usize];
            if !*slot.get_or_insert_with(|| streams.frees_done(s0)) {
                busy = true;
                continue;
            }
            if !streams.nameable(s0) {
                // Its frees are done (and a foreign stream may be gone).
                s0 = inner.slot(Stream::DEFAULT);
            }
        } else if !inner.streams.nameable(s0) {
            // Give back on the default stream, ordered after the stream's frees.
            let d = inner.slot(Stream::DEFAULT);
            if let Err(e) = inner.streams.order_after(d, s0) {
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
            let excess = (inner.bytes_free - keep) / g * g;
            if excess == 0 {
                break;
            }
            lo = lo.max(hi - excess.min(hi - lo));
        }
        let c = inner
            .chunks
            .iter()
            .position(|c| c.addr <= b.addr && b.addr < c.addr + c.size)
            .expect("a free block lies in an extent");
        inner.list_remove(i);
        // The part below the granules stays as `i`; the part above becomes a new block.
        let upper = if b.addr + b.size > hi {
            let j = inner.new_block(b.rest(hi - b.addr, NIL));
            inner.blk_mut(b.next_phys).prev_phys = j;
            inner.list_insert(j);
            inner.blk_mut(j).tag = b.tag;
            j
        } else {
            inner.blk_mut(b.next_phys).prev_phys = NIL;
            b.next_phys
        };
        let lower_kept = lo > b.addr;
        if lower_kept {
            let bm = inner.blk_mut(i);
            bm.size = lo - b.addr;
            bm.next_phys = NIL;
            inner.list_insert(i);
            inner.blk_mut(i).tag = b.tag;
        } else {
            inner.blk_mut(b.prev_phys).next_phys = NIL;
            inner.vacate(i);
        }
        // Split the extent around [lo, hi).
        let (c_addr, c_end, c_first) = {
            let c = &inner.chunks[c];
            (c.addr, c.addr + c.size, c.first)
        };
        let lower_first = if c_addr < lo { Some(c_first) } else { None };
        let upper_part = (hi < c_end).then_some(upper);
        inner.chunks.swap_remove(c);
        if let Some(first) = lower_first {
            inner.chunks.push(Chunk {
                addr: c_addr,
                size: lo - c_addr,
                first,
            });
        }
        if let Some(first) = upper_part {
            inner.chunks.push(Chunk {
                addr: hi,
                size: c_end - hi,
                first,
            });
        }
        inner.pool_size -= hi - lo;
        released += hi - lo;
        let stream = inner.streams.get(s0).stream;
        if let Err(e) = give_back(lo, hi - lo, stream) {
            first_err.get_or_insert(e);
        }
    }
    match first_err {
        Some(e) => Err(e),
        None => Ok((released, busy)),
    }
}
