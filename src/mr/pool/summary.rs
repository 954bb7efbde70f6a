//! What a pool holds: its free memory in one pass ([`FreeSummary`]) and its segments with
//! their blocks, read after the fronts were emptied.

use super::block::{Inner, State};
use super::PoolMemoryResource;
use crate::mr::free_index::NIL;

/// A pool's free memory, read in one pass ([`PoolMemoryResource::free_summary`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FreeSummary {
    /// Bytes taken from upstream (or mapped) and not allocated.
    pub bytes_free: usize,
    /// Number of free blocks.
    pub free_block_count: usize,
    /// Size of the largest free block (never above `bytes_free`).
    pub largest_free_block: usize,
}

impl FreeSummary {
    /// `1 - largest_free_block / bytes_free`, or 0 when nothing is free; within [0, 1].
    pub fn fragmentation(&self) -> f64 {
        if self.bytes_free == 0 {
            0.0
        } else {
            1.0 - self.largest_free_block as f64 / self.bytes_free as f64
        }
    }
}

impl PoolMemoryResource {
    /// The global pool's chunks (extents in contiguous mode) and the shards' slabs, each
    /// with its blocks, after the fronts were emptied.
    pub fn segments_of(&self, chunk_kind: &'static str) -> Vec<crate::mr::Segment> {
        let mut out = Vec::new();
        let mut kind = chunk_kind;
        self.each_structure(|inner| {
            for c in &inner.chunks {
                let mut blocks = Vec::new();
                let mut i = c.first;
                while i != NIL {
                    let b = inner.blk(i);
                    blocks.push(crate::mr::SegmentBlock {
                        addr: b.addr,
                        size: b.size,
                        state: match b.state {
                            State::Free => "free",
                            State::Slab => "slab",
                            _ => "used",
                        },
                    });
                    i = b.next_phys;
                }
                out.push(crate::mr::Segment {
                    kind,
                    addr: c.addr,
                    size: c.size,
                    blocks,
                });
            }
            // Every structure after the global pool is a shard.
            kind = "shard_slab";
        });
        out
    }

    /// `f` over the global pool and every shard, each locked in turn, after the fronts
    /// were emptied into them (so cached blocks count as free blocks).
    fn each_structure(&self, mut f: impl FnMut(&Inner)) {
        self.core.settle();
        f(&self.core.inner.lock());
        for (_, shard) in self.core.shards.made() {
            f(&shard.lock());
        }
    }

    /// Number of free blocks, over all streams (and shards).
    pub fn free_block_count(&self) -> usize {
        self.free_summary().free_block_count
    }

    /// Size of the largest free block, over all streams (and shards).
    pub fn largest_free_block(&self) -> usize {
        self.free_summary().largest_free_block
    }

    /// Bytes free in the pool (taken from upstream and not allocated). Memory in a
    /// shard's slabs that is not allocated counts as free.
    pub fn bytes_free(&self) -> usize {
        self.free_summary().bytes_free
    }

    /// `1 - largest_free_block / bytes_free`, or 0 when nothing is free: 0 means all free
    /// memory is one block.
    pub fn fragmentation(&self) -> f64 {
        self.free_summary().fragmentation()
    }

    /// Free bytes, free blocks and the largest free block, read in one pass over the
    /// global pool and the shards, so that they agree with each other while other threads
    /// allocate and free (separate reads could see a largest block above the free bytes:
    /// a fragmentation below 0, found by the C ABI fuzzer on a GPU).
    pub fn free_summary(&self) -> FreeSummary {
        let mut s = FreeSummary::default();
        self.each_structure(|i| {
            s.bytes_free += i.bytes_free;
            s.free_block_count += i.free_count;
            s.largest_free_block = s.largest_free_block.max(i.largest_free());
        });
        s
    }
}
