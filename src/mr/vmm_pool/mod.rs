//! `vmm_pool_memory_resource`: the pool on virtual memory. One address range is reserved
//! per resource; physical memory is mapped into it in granules, at the first unmapped run
//! that fits (so new memory lands right after what the pool already has, and the last free
//! block and the new memory merge into one), and free granules anywhere are unmapped again
//! by [`VmmPoolMemoryResource::release`] or a release threshold, while blocks around them
//! stay live.
//!
//! Why: a pool that grows by taking separate chunks from its upstream can never merge free
//! space across chunks, so it fails large requests while holding enough free bytes (it can
//! give back only chunks that are entirely free, as RMM 26.10 does to make room under its
//! maximum) and gives a chunk back only when all of it is free. Here every chunk the pool
//! ever had is one address range, so any free bytes that touch merge.
//!
//! The sub-allocator is the pool's own ([`PoolMemoryResource`]: fronts, per-thread shards,
//! TLSF, stream ordering) in its contiguous mode, over a [`VirtualSpace`] upstream that
//! hands out granule-aligned runs of the reservation and unmaps what comes back.

use std::any::Any;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::pool::{Placement, PoolMemoryResource};
use super::{DeviceMemoryResource, SharedResource};
use crate::error::{Error, Result};
use crate::runtime::{runtime, DeviceId, RuntimeErrorKind, Stream};

pub(crate) const NAME: &str = "vmm_pool_memory_resource";

/// How a [`VmmPoolMemoryResource`] is made; `Default` gives the defaults of each field.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VmmPoolOptions {
    /// Bytes mapped at once (rounded up to the granularity); 0: grow on demand.
    pub initial_pool_size: usize,
    /// The most bytes ever mapped at once; `None`: the reservation.
    pub maximum_pool_size: Option<usize>,
    /// Bytes of address space reserved (rounded up to the granularity); `None`: twice the
    /// device's memory, or the maximum pool size if larger.
    pub reserved_size: Option<usize>,
    /// Bytes per mapping, the unit of growth and of release: a multiple of the device's
    /// minimum granularity; `None`: the device's recommended granularity (2 MiB on
    /// current NVIDIA GPUs).
    pub granularity: Option<usize>,
    /// Free bytes the pool may keep mapped: above it, a free unmaps free granules whose
    /// streams are idle; `None`: keep everything until [`VmmPoolMemoryResource::release`].
    pub release_threshold: Option<usize>,
    /// Other devices that get read and write access to the memory.
    pub peer_devices: Vec<DeviceId>,
}

/// The pool on virtual memory (see the module docs): RMM's `pool_memory_resource` that
/// grows in place and shrinks while blocks are live.
// `repr(C)` with the pool first: the two share an address, by which memory-history events
// and snapshot segments name the resource.
#[repr(C)]
pub struct VmmPoolMemoryResource {
    pool: PoolMemoryResource,
    space: Arc<VirtualSpace>,
    release_threshold: Option<usize>,
    /// Free bytes above which a free tries the threshold again (see `trim`).
    trim_above: AtomicUsize,
}

impl std::fmt::Debug for VmmPoolMemoryResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{NAME}({:?})", self.space)
    }
}

fn round_up_to(bytes: usize, unit: usize) -> Option<usize> {
    bytes.checked_add(unit - 1).map(|b| b / unit * unit)
}

impl VmmPoolMemoryResource {
    /// A pool on the current device's virtual memory. Fails with a clear error where the
    /// device has no virtual memory management, the granularity is not a multiple of the
    /// device's, or the sizes do not fit the reservation.
    pub fn new(options: VmmPoolOptions) -> Result<Self> {
        let rt = runtime()?;
        let device = rt.get_device().map_err(|e| Error::runtime(-1, e))?;
        let (minimum, recommended) = rt.vmm_granularity(device).map_err(|e| {
            if e.kind == RuntimeErrorKind::NotSupported {
                Error::Unsupported(format!(
                    "{NAME}: device {device} of the {} runtime has no virtual memory \
                     management ({e}); use pool_memory_resource instead",
                    rt.kind().name()
                ))
            } else {
                Error::runtime(device, e)
            }
        })?;
        let granule = match options.granularity {
            None => recommended.max(minimum),
            Some(g) if g > 0 && minimum > 0 && g % minimum == 0 => g,
            Some(g) => {
                return Err(Error::invalid(format!(
                    "{NAME}: granularity = {g} is not a multiple of device {device}'s \
                     minimum mapping granularity ({minimum} bytes)"
                )))
            }
        };
        for &p in &options.peer_devices {
            let count = rt.device_count().map_err(|e| Error::runtime(device, e))?;
            if p < 0 || p >= count {
                return Err(Error::invalid(format!(
                    "{NAME}: peer device {p} does not exist ({count} devices)"
                )));
            }
        }
        let too_big = |what: &str, v: usize| {
            Error::invalid(format!(
                "{NAME}: {what} = {v} overflows when rounded to {granule}"
            ))
        };
        let initial = round_up_to(options.initial_pool_size, granule)
            .ok_or_else(|| too_big("initial_pool_size", options.initial_pool_size))?;
        // Never map more than asked: whole granules under the maximum.
        let maximum = options.maximum_pool_size.map(|m| m / granule * granule);
        let reserved = match options.reserved_size {
            Some(r) => round_up_to(r, granule).ok_or_else(|| too_big("reserved_size", r))?,
            None => {
                let total = rt
                    .mem_get_info()
                    .map_err(|e| Error::runtime(device, e))?
                    .total;
                let twice = round_up_to(total.saturating_mul(2), granule).unwrap_or(total);
                twice.max(maximum.unwrap_or(0))
            }
        };
        if reserved == 0 {
            return Err(Error::invalid(format!("{NAME}: reserved_size = 0")));
        }
        if let Some(m) = options.maximum_pool_size {
            if m < granule && m > 0 {
                return Err(Error::invalid(format!(
                    "{NAME}: maximum_pool_size = {m} is below one granule ({granule} bytes)"
                )));
            }
            if initial > m {
                return Err(Error::invalid(format!(
                    "{NAME}: initial_pool_size exceeds the maximum pool size: \
                     initial_pool_size = {} > maximum_pool_size = {m}",
                    options.initial_pool_size
                )));
            }
        }
        if initial > reserved || maximum.is_some_and(|m| m > reserved) {
            return Err(Error::invalid(format!(
                "{NAME}: the pool sizes (initial {initial}, maximum {:?}) exceed the reserved \
                 size ({reserved} bytes); pass a larger reserved_size",
                options.maximum_pool_size
            )));
        }
        let space = Arc::new(VirtualSpace::new(
            rt,
            device,
            reserved,
            granule,
            &options.peer_devices,
        )?);
        let pool = PoolMemoryResource::contiguous(
            space.clone() as SharedResource,
            space.clone() as Arc<dyn Placement>,
            NAME,
            granule,
            initial,
            // Without a maximum the pool grows by its own rule, and the reservation bounds
            // it (the space refuses runs that do not fit); with the reservation as maximum,
            // the first request would map half of it.
            maximum,
        )?;
        Ok(VmmPoolMemoryResource {
            pool,
            space,
            release_threshold: options.release_threshold,
            trim_above: AtomicUsize::new(0),
        })
    }

    /// Bytes mapped now (the pool's size).
    pub fn pool_size(&self) -> usize {
        self.pool.pool_size()
    }

    /// The most bytes mapped at once so far (with a release threshold, the pool's size
    /// falls as well as grows).
    pub fn peak_pool_size(&self) -> usize {
        self.space.peak_mapped()
    }

    /// The most bytes the pool maps at once.
    pub fn maximum_pool_size(&self) -> Option<usize> {
        self.pool.maximum_pool_size()
    }

    /// Bytes of address space reserved.
    pub fn reserved_size(&self) -> usize {
        self.space.reserved
    }

    /// Bytes per mapping: the unit of growth and release.
    pub fn granularity(&self) -> usize {
        self.space.granule
    }

    /// The start of the reserved range.
    pub fn reserved_base(&self) -> usize {
        self.space.base
    }

    /// The release threshold, if any.
    pub fn release_threshold(&self) -> Option<usize> {
        self.release_threshold
    }

    /// The devices with access to the memory (the pool's device first).
    pub fn access_devices(&self) -> &[DeviceId] {
        &self.space.access
    }

    /// Bytes mapped and not allocated.
    pub fn bytes_free(&self) -> usize {
        self.pool.bytes_free()
    }

    /// The largest free block.
    pub fn largest_free_block(&self) -> usize {
        self.pool.largest_free_block()
    }

    /// Number of free blocks.
    pub fn free_block_count(&self) -> usize {
        self.pool.free_block_count()
    }

    /// `1 - largest_free_block / bytes_free` (0 when nothing is free).
    pub fn fragmentation(&self) -> f64 {
        self.pool.fragmentation()
    }

    /// Free bytes, free blocks and the largest free block, read together (see
    /// [`PoolMemoryResource::free_summary`]).
    pub fn free_summary(&self) -> crate::mr::FreeSummary {
        self.pool.free_summary()
    }

    /// Forgets `stream` (see [`PoolMemoryResource::forget_stream`]).
    pub fn forget_stream(&self, stream: Stream) -> Result<()> {
        self.pool.forget_stream(stream)
    }

    /// Turns per-thread shards on (see [`PoolMemoryResource::set_sharded`]).
    pub fn set_sharded(&self, on: bool) {
        self.pool.set_sharded(on)
    }

    /// After a free: above the release threshold, unmap what idle streams freed.
    #[cold]
    fn trim(&self, threshold: usize) {
        // Failures change nothing for the caller's free, which succeeded.
        if let Ok((_, free, busy)) = self.release_idle(threshold) {
            // Unless some was left for its stream's work (the next free tries again), what
            // stays free lies in pieces smaller than a granule: the next attempt waits until
            // a granule more is free, or every free would walk the pool's blocks for nothing
            // (with a threshold of 0, the streams workload's every operation did).
            let level = if busy {
                0
            } else {
                free.saturating_add(self.space.granule)
            };
            self.trim_above.store(level, Ordering::Relaxed);
        }
    }
}

impl DeviceMemoryResource for VmmPoolMemoryResource {
    #[inline]
    fn allocate(&self, bytes: usize, stream: Stream) -> Result<*mut c_void> {
        self.pool.allocate(bytes, stream)
    }

    #[inline]
    fn deallocate(&self, ptr: *mut c_void, bytes: usize, stream: Stream) -> Result<()> {
        self.pool.deallocate(ptr, bytes, stream)?;
        if let Some(t) = self.release_threshold {
            let level = t
                .saturating_add(self.space.granule)
                .max(self.trim_above.load(Ordering::Relaxed));
            if self.pool.global_bytes_free_above(level) {
                self.trim(t);
            }
        }
        Ok(())
    }

    fn name(&self) -> &'static str {
        NAME
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn segments(&self) -> Vec<super::Segment> {
        self.pool.segments_of("vmm_extent")
    }

    fn upstream(&self) -> Option<SharedResource> {
        None
    }
}

mod release;
mod space;
#[cfg(test)]
mod tests;

pub use space::VirtualSpace;
