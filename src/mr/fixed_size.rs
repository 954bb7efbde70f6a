//! `fixed_size_memory_resource`: constant-time allocation of blocks of one size.
//!
//! Each stream has a stack of free block addresses; allocate pops, deallocate pushes, both
//! O(1) with no runtime call (a free on a foreign stream records its event: see
//! [`super::stream_ordered`]). When a stream's stack is empty the resource takes another
//! stream's free blocks (event recorded there, waited on here: see
//! [`super::stream_ordered`]) or grows by `blocks_to_preallocate` blocks in one upstream
//! allocation. Live blocks are kept in a hash set whose capacity always covers every
//! block, so steady-state operations never allocate and foreign or double frees are
//! detected in O(1). The per-stream state sits behind its own `Arc` so that
//! [`super::stream_lifetime`] can make the resource forget a stream that is being destroyed.

use std::any::Any;
use std::ffi::c_void;
use std::sync::Arc;

use parking_lot::Mutex;

use super::stream_lifetime::{self, StreamState};
use super::stream_ordered::{FastSet, PerStreamLists, StreamRegistry};
use super::ALLOCATION_ALIGNMENT as ALIGN;
use super::{current_device_or_unknown, DeviceMemoryResource, SharedResource};
use crate::error::{Error, Result};
use crate::runtime::{runtime, Stream};

const NAME: &str = "fixed_size_memory_resource";

/// Default block size (RMM's): 1 MiB.
pub const DEFAULT_BLOCK_SIZE: usize = 1 << 20;
/// Default number of blocks taken from upstream at a time (RMM's): 128.
pub const DEFAULT_BLOCKS_TO_PREALLOCATE: usize = 128;

#[derive(Debug)]
struct Inner {
    streams: StreamRegistry,
    /// Free block addresses per stream slot.
    stacks: Vec<Vec<usize>>,
    live: FastSet<usize>,
    /// Upstream chunks: (address, bytes).
    chunks: Vec<(usize, usize)>,
    total_blocks: usize,
    free_blocks: usize,
}

impl PerStreamLists for Inner {
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

impl StreamState for Mutex<Inner> {
    fn forget_stream(&self, stream: Stream) -> Result<()> {
        self.lock().forget(stream)
    }
}

/// Allocates blocks of one fixed size (hipMM's `fixed_size_memory_resource`); requests
/// larger than the block size fail. See [`super::stream_ordered`] for the stream rules.
pub struct FixedSizeMemoryResource {
    upstream: SharedResource,
    block_size: usize,
    blocks_to_preallocate: usize,
    /// Shared (weakly) with [`stream_lifetime`].
    inner: Arc<Mutex<Inner>>,
}

impl FixedSizeMemoryResource {
    /// Blocks of `block_size` bytes (rounded up to 256), taken from `upstream`
    /// `blocks_to_preallocate` at a time; the first batch is taken now.
    pub fn new(
        upstream: SharedResource,
        block_size: usize,
        blocks_to_preallocate: usize,
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
        let r = FixedSizeMemoryResource {
            upstream,
            block_size,
            blocks_to_preallocate,
            inner: Arc::new(Mutex::new(Inner {
                streams: StreamRegistry::new(rt, device),
                stacks: Vec::new(),
                live: FastSet::default(),
                chunks: Vec::new(),
                total_blocks: 0,
                free_blocks: 0,
            })),
        };
        {
            let mut inner = r.inner.lock();
            let s = inner.slot(Stream::DEFAULT);
            r.grow(&mut inner, block_size, Stream::DEFAULT, s)?;
        }
        stream_lifetime::register(Arc::downgrade(&r.inner) as _);
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
        self.inner.lock().total_blocks * self.block_size
    }

    /// Free blocks, over all streams.
    pub fn free_block_count(&self) -> usize {
        self.inner.lock().free_blocks
    }

    /// Returns every upstream chunk to upstream when no block is in use (blocks are not
    /// tracked per chunk, so partially used chunks cannot be told apart); returns the
    /// bytes released. The default stream is first ordered after every stream holding
    /// free blocks, and the chunks are freed on it.
    pub fn release(&self) -> Result<usize> {
        let mut inner = self.inner.lock();
        if !inner.live.is_empty() {
            return Ok(0);
        }
        let d = inner.slot(Stream::DEFAULT);
        for t in 0..inner.stacks.len() as u32 {
            if t != d && !inner.stacks[t as usize].is_empty() {
                inner.streams.order_after(d, t)?;
            }
            inner.stacks[t as usize].clear();
        }
        let mut released = 0;
        let mut first_err = None;
        for (addr, size) in std::mem::take(&mut inner.chunks) {
            released += size;
            if let Err(e) = self
                .upstream
                .deallocate(addr as *mut c_void, size, Stream::DEFAULT)
            {
                first_err.get_or_insert(e);
            }
        }
        inner.total_blocks = 0;
        inner.free_blocks = 0;
        match first_err {
            Some(e) => Err(e),
            None => Ok(released),
        }
    }

    /// Forgets `stream` (which must still be alive): the default stream is ordered after
    /// its work (an event recorded on it; the host does not wait) and its free blocks move
    /// to the default stream. Destroying a stream through the library
    /// (`rmm_stream_destroy`, [`stream_destroyed`](super::stream_destroyed)) does this for
    /// every live resource.
    pub fn forget_stream(&self, stream: Stream) -> Result<()> {
        self.inner.lock().forget(stream)
    }

    /// Takes `blocks_to_preallocate` blocks from upstream in one allocation onto slot `s`.
    fn grow(&self, inner: &mut Inner, requested: usize, stream: Stream, s: u32) -> Result<()> {
        let n = self.blocks_to_preallocate;
        let bytes = self.block_size * n;
        let p = self.upstream.allocate(bytes, stream).map_err(|e| match e {
            Error::OutOfMemory { detail, .. } => Error::OutOfMemory {
                requested,
                resource: NAME,
                device: inner.streams.device(),
                detail: format!(
                    "growing by {n} blocks of {} bytes ({bytes} bytes) from upstream {} \
                     failed: {detail}",
                    self.block_size,
                    self.upstream.name()
                ),
            },
            e => e,
        })?;
        let addr = p as usize;
        if p.is_null() || addr % ALIGN != 0 {
            if !p.is_null() {
                // Give it back; a failure to do so changes nothing for the caller.
                let _ = self.upstream.deallocate(p, bytes, stream);
            }
            return Err(Error::BadAlloc {
                requested,
                resource: NAME,
                detail: format!(
                    "upstream {} returned {p:p}, which is not aligned to {ALIGN} bytes",
                    self.upstream.name()
                ),
            });
        }
        inner.chunks.push((addr, bytes));
        inner.total_blocks += n;
        inner.free_blocks += n;
        // Keep the live set able to hold every block: inserts never reallocate.
        let need = inner.total_blocks.saturating_sub(inner.live.len());
        inner.live.reserve(need);
        let stack = &mut inner.stacks[s as usize];
        stack.reserve(n);
        // Push in reverse so blocks come out in address order.
        stack.extend((0..n).rev().map(|k| addr + k * self.block_size));
        Ok(())
    }
}

impl std::fmt::Debug for FixedSizeMemoryResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{NAME}(upstream: {}, block_size: {}, blocks_to_preallocate: {})",
            self.upstream.name(),
            self.block_size,
            self.blocks_to_preallocate
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
        let mut inner = self.inner.lock();
        let s = inner.slot(stream);
        if inner.stacks[s as usize].is_empty() {
            let donor = (0..inner.stacks.len() as u32)
                .find(|&t| t != s && !inner.stacks[t as usize].is_empty());
            match donor {
                Some(t) => {
                    inner.streams.order_after(s, t)?;
                    inner.move_free(t, s);
                }
                None => {
                    self.grow(&mut inner, bytes, stream, s)?;
                    // The new blocks may be ordered on `stream` by the upstream.
                    inner.streams.refresh(s);
                }
            }
        }
        let addr = inner.stacks[s as usize]
            .pop()
            .expect("the stack was just refilled");
        inner.free_blocks -= 1;
        inner.live.insert(addr);
        Ok(addr as *mut c_void)
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
        let mut inner = self.inner.lock();
        if !inner.live.remove(&(ptr as usize)) {
            return Err(Error::invalid(format!(
                "{NAME}: cannot free {ptr:p} ({bytes} bytes): it was not allocated by this \
                 resource or was already freed"
            )));
        }
        let s = inner.slot(stream);
        inner.stacks[s as usize].push(ptr as usize);
        inner.free_blocks += 1;
        // A foreign stream's event is recorded now; nothing for a tracked stream.
        inner.streams.refresh(s);
        Ok(())
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
        let mut inner = self.inner.lock();
        if !inner.live.is_empty() {
            log::warn!(
                "{NAME} dropped with {} live blocks; their memory goes back to upstream",
                inner.live.len()
            );
        }
        for (addr, size) in inner.chunks.drain(..) {
            // Nothing useful to do with a failure while dropping.
            let _ = self
                .upstream
                .deallocate(addr as *mut c_void, size, Stream::DEFAULT);
        }
    }
}
