//! Device memory resources: the [`DeviceMemoryResource`] trait, the resources that sit
//! directly on the runtime, and the per-device registry.
//!
//! Resources are shared through [`SharedResource`] (`Arc<dyn DeviceMemoryResource>`): a
//! resource built on another holds an `Arc` to it, so an upstream can never be freed while
//! something built on it is alive.

#[cfg(test)]
mod adaptor_tests;
mod aligned;
mod arena;
mod biased_lock;
mod binning;
mod callback;
pub mod config;
mod cuda;
mod cuda_async;
mod failure_callback;
mod fixed_size;
mod free_index;
pub mod host;
mod limiting;
mod logging;
mod managed;
mod per_device;
mod pinned_host;
mod pool;
mod prefetch;
mod ptr_map;
mod sam_headroom;
mod size_classes;
mod statistics;
mod stream_lifetime;
mod stream_ordered;
mod system;
#[cfg(test)]
mod test_gate;
#[cfg(test)]
pub(crate) mod tests;
mod thread_safe;
mod thread_slot;
mod tracking;
mod vmm_pool;

use std::any::Any;
use std::ffi::c_void;
use std::fmt::Debug;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::runtime::{
    DeviceId, DirectFreeAsyncFn, DirectFreeFn, DirectMallocFn, DirectMallocManagedFn,
    DirectPoolMallocFn, MemPool, Runtime, RuntimeError, RuntimeErrorKind, Stream,
};

pub use arena::{
    ArenaMemoryResource, ARENA_CACHE_BYTES, ARENA_LARGE_GRANULE, ARENA_SUPERBLOCK_SIZE,
};
pub use binning::BinningMemoryResource;
pub use callback::{AllocateFn, CallbackMemoryResource, DeallocateFn};
pub use cuda::CudaMemoryResource;
pub use cuda_async::{
    handle_type_bits, handle_type_from_bits, CudaAsyncManagedMemoryResource,
    CudaAsyncMemoryResource, CudaAsyncViewMemoryResource,
};
pub use fixed_size::{FixedSizeMemoryResource, DEFAULT_BLOCKS_TO_PREALLOCATE, DEFAULT_BLOCK_SIZE};
pub use host::{HostMemoryResource, NewDeleteResource, PinnedMemoryResource};
pub use logging::{LoggingResourceAdaptor, LOG_FILE_ENV, LOG_HEADER};
pub use managed::ManagedMemoryResource;
pub use per_device::{
    current_entry_tag, get_current_device_resource, get_per_device_resource,
    get_per_device_resource_tagged, initial_resource_tag, is_initial_resource,
    reset_current_device_resource, reset_per_device_resource, set_current_device_resource,
    set_per_device_resource, set_per_device_resource_tagged, TagRelease, TAG_KEYS,
};
pub use pinned_host::PinnedHostMemoryResource;
pub use pool::{FreeSummary, PoolMemoryResource};
pub(crate) use pool::{FrontAnswer, Fronts as PoolFronts};
pub use sam_headroom::SamHeadroomMemoryResource;
pub use system::SystemMemoryResource;
pub use vmm_pool::{VirtualSpace, VmmPoolMemoryResource, VmmPoolOptions};

pub use aligned::{AlignedResourceAdaptor, DEFAULT_ALIGNMENT_THRESHOLD};
pub use failure_callback::{FailureCallback, FailureCallbackResourceAdaptor, RetryOn};
pub use limiting::LimitingResourceAdaptor;
pub use prefetch::PrefetchResourceAdaptor;
pub use statistics::{Counter, StatisticsResourceAdaptor};
pub use stream_lifetime::{dead_stream_fallbacks, stream_created, stream_destroyed};
pub use thread_safe::ThreadSafeResourceAdaptor;
pub use tracking::{AllocationInfo, TrackingResourceAdaptor};

/// A piece of memory a sub-allocator took and cuts into blocks (see
/// [`DeviceMemoryResource::segments`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// What it is: `pool_chunk`, `vmm_extent`, `shard_slab`, `arena_superblock`, ...
    pub kind: &'static str,
    /// Its first byte.
    pub addr: usize,
    /// Its size in bytes.
    pub size: usize,
    /// Its blocks in address order, covering it.
    pub blocks: Vec<SegmentBlock>,
}

/// One block of a [`Segment`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentBlock {
    /// Its first byte.
    pub addr: usize,
    /// Its size in bytes.
    pub size: usize,
    /// `free`, `used`, or what else the resource calls it (`slab`: given to a shard).
    pub state: &'static str,
}

/// Alignment of every device allocation, in bytes (RMM's `CUDA_ALLOCATION_ALIGNMENT`).
pub const ALLOCATION_ALIGNMENT: usize = 256;

/// A stream-ordered device memory resource (hipMM's `device_memory_resource`).
///
/// Every implementation is safe for concurrent use. Allocations are aligned to at least
/// [`ALLOCATION_ALIGNMENT`]; a zero-byte allocation returns null and succeeds; freeing null
/// is a no-op.
pub trait DeviceMemoryResource: Send + Sync + Debug + 'static {
    /// Allocates `bytes`, usable in stream order on `stream`.
    fn allocate(&self, bytes: usize, stream: Stream) -> Result<*mut c_void>;

    /// Returns `ptr` (of `bytes`, as allocated) to the resource, in stream order on `stream`.
    fn deallocate(&self, ptr: *mut c_void, bytes: usize, stream: Stream) -> Result<()>;

    /// True when memory allocated by `self` may be freed by `other` and vice versa.
    fn is_equal(&self, other: &dyn DeviceMemoryResource) -> bool {
        same_object(self.as_any(), other.as_any())
    }

    /// hipMM's class name of this resource, e.g. `cuda_memory_resource`.
    fn name(&self) -> &'static str;

    /// For downcasting to the concrete type (introspection through the C ABI).
    fn as_any(&self) -> &dyn Any;

    /// The memory this resource took for sub-allocation (pool chunks, mapped extents, arena
    /// superblocks, ...), each with its blocks, for memory snapshots; none by default.
    fn segments(&self) -> Vec<Segment> {
        Vec::new()
    }

    /// The resource this one allocates from, for adaptors and sub-allocators; `None` for
    /// resources that sit directly on the runtime.
    fn upstream(&self) -> Option<SharedResource> {
        None
    }

    /// For a thin resource (one runtime call per allocation and free, nothing else), those
    /// calls as raw entry points, which the C ABI calls without the layers between (see
    /// `ffi::direct`); `None` for every other resource.
    fn direct_path(&self) -> Option<DirectPath> {
        None
    }
}

/// A thin resource's allocation and free as the raw runtime calls they end in
/// ([`crate::runtime::DirectCalls`]). A call that returns anything but 0 is repeated
/// through the resource's `allocate` / `deallocate`, which report the error.
#[derive(Clone, Copy, Debug)]
pub enum DirectPath {
    /// `malloc(bytes)` and `free(ptr)`; streams are not used.
    Malloc {
        /// Allocates.
        malloc: DirectMallocFn,
        /// Frees.
        free: DirectFreeFn,
    },
    /// `malloc_managed(bytes, attach global)` and `free(ptr)`; streams are not used.
    Managed {
        /// Allocates.
        malloc: DirectMallocManagedFn,
        /// Frees.
        free: DirectFreeFn,
    },
    /// `malloc_from_pool_async(bytes, pool, stream)` and `free_async(ptr, stream)`.
    Pool {
        /// Allocates.
        malloc: DirectPoolMallocFn,
        /// Frees.
        free: DirectFreeAsyncFn,
        /// The pool allocated from.
        pool: MemPool,
        /// The raw handle of [`Stream::LEGACY`] for these calls.
        legacy_stream: usize,
    },
}

/// `cudaMemAttachGlobal` / `hipMemAttachGlobal`: how the direct path allocates managed
/// memory (as [`crate::runtime::Runtime::malloc_managed`] does).
pub const MEM_ATTACH_GLOBAL: u32 = 1;

/// A shared, reference-counted resource.
pub type SharedResource = Arc<dyn DeviceMemoryResource>;

/// True when both references point at the same object.
pub(crate) fn same_object(a: &dyn Any, b: &dyn Any) -> bool {
    std::ptr::addr_eq(a as *const dyn Any, b as *const dyn Any)
}

/// RMM's equality of resource adaptors: `this` equals `other` when both are the same
/// object, or when `other` is an adaptor of the same type whose upstream is equal to this
/// one's and whose parameters `same_params` accepts (e.g. the aligned adaptor's alignment).
/// Memory from one may then be freed by the other.
pub(crate) fn adaptor_is_equal<T: DeviceMemoryResource>(
    this: &T,
    other: &dyn DeviceMemoryResource,
    upstream: impl Fn(&T) -> &dyn DeviceMemoryResource,
    same_params: impl FnOnce(&T, &T) -> bool,
) -> bool {
    match other.as_any().downcast_ref::<T>() {
        Some(o) => {
            std::ptr::eq(this, o) || (upstream(this).is_equal(upstream(o)) && same_params(this, o))
        }
        None => false,
    }
}

/// Turns a failed runtime allocation into an out-of-memory error that keeps the size, the
/// device and the runtime's own error name, or a runtime error for other failures.
pub(crate) fn allocation_error(
    err: RuntimeError,
    requested: usize,
    resource: &'static str,
    device: DeviceId,
) -> Error {
    if err.kind == RuntimeErrorKind::OutOfMemory {
        Error::OutOfMemory {
            requested,
            resource,
            device,
            detail: format!("{} returned {} ({})", err.call, err.name, err.message),
        }
    } else {
        Error::runtime(device, err)
    }
}

/// The calling thread's current device, or `-1` if the runtime cannot say.
pub(crate) fn current_device_or_unknown(rt: &dyn Runtime) -> DeviceId {
    rt.get_device().unwrap_or(-1)
}

/// Checks what a runtime allocator returned: a null or misaligned pointer is a bug below us,
/// reported rather than handed to the user.
#[inline(always)]
pub(crate) fn checked_pointer(
    ptr: *mut c_void,
    requested: usize,
    resource: &'static str,
) -> Result<*mut c_void> {
    if ptr.is_null() || (ptr as usize) % ALLOCATION_ALIGNMENT != 0 {
        return Err(bad_pointer(ptr, requested, resource));
    }
    Ok(ptr)
}

/// The error for a null or misaligned pointer from the runtime (out of the hot path).
#[cold]
#[inline(never)]
fn bad_pointer(ptr: *mut c_void, requested: usize, resource: &'static str) -> Error {
    let detail = if ptr.is_null() {
        "the runtime returned a null pointer".to_string()
    } else {
        format!(
            "the runtime returned {ptr:p}, which is not aligned to {ALLOCATION_ALIGNMENT} bytes"
        )
    };
    Error::BadAlloc {
        requested,
        resource,
        detail,
    }
}

/// The shared body of resources that call one runtime allocator per request.
pub(crate) fn direct_allocate(
    rt: &dyn Runtime,
    bytes: usize,
    resource: &'static str,
    alloc: impl FnOnce(usize) -> crate::runtime::RtResult<*mut c_void>,
) -> Result<*mut c_void> {
    if bytes == 0 {
        return Ok(std::ptr::null_mut());
    }
    match alloc(bytes) {
        Ok(p) => checked_pointer(p, bytes, resource),
        Err(e) => Err(direct_allocate_error(rt, e, bytes, resource)),
    }
}

/// The error for a failed runtime allocation (out of the hot path).
#[cold]
#[inline(never)]
fn direct_allocate_error(
    rt: &dyn Runtime,
    e: crate::runtime::RuntimeError,
    bytes: usize,
    resource: &'static str,
) -> Error {
    allocation_error(e, bytes, resource, current_device_or_unknown(rt))
}

/// The shared body of deallocation through one runtime call. A pointer the runtime does
/// not know is reported as an invalid argument naming it (not allocated `origin`, e.g. "by
/// this kind of resource"); after process exit begins the memory is leaked instead of
/// calling a runtime that may be gone.
pub(crate) fn direct_deallocate(
    rt: &dyn Runtime,
    ptr: *mut c_void,
    bytes: usize,
    resource: &'static str,
    origin: &'static str,
    free: impl FnOnce(*mut c_void) -> crate::runtime::RtResult<()>,
) -> Result<()> {
    if ptr.is_null() || crate::runtime::process_is_exiting() {
        return Ok(());
    }
    match free(ptr) {
        Ok(()) => Ok(()),
        Err(e) => Err(direct_deallocate_error(rt, e, ptr, bytes, resource, origin)),
    }
}

/// The error for a failed runtime free (out of the hot path).
#[cold]
#[inline(never)]
fn direct_deallocate_error(
    rt: &dyn Runtime,
    e: crate::runtime::RuntimeError,
    ptr: *mut c_void,
    bytes: usize,
    resource: &'static str,
    origin: &'static str,
) -> Error {
    if e.kind == RuntimeErrorKind::InvalidValue {
        Error::invalid(format!(
            "{resource}: cannot free {ptr:p} ({bytes} bytes): it was not allocated {origin} \
             or was already freed ({} returned {})",
            e.call, e.name
        ))
    } else {
        Error::runtime(current_device_or_unknown(rt), e)
    }
}

/// Declares a resource that calls one runtime allocator and one runtime free per request.
/// The three such resources differ only in those two calls and their names.
macro_rules! direct_resource {
    ($(#[$doc:meta])* $ty:ident, $name:literal, $alloc:ident, $free:ident, $direct:expr) => {
        $(#[$doc])*
        pub struct $ty {
            rt: &'static dyn $crate::runtime::Runtime,
        }

        impl $ty {
            /// A resource over the process's runtime.
            pub fn new() -> $crate::error::Result<Self> {
                Ok($ty { rt: $crate::runtime::runtime()? })
            }
        }

        impl std::fmt::Debug for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}({})", $name, self.rt.kind().name())
            }
        }

        impl $crate::mr::DeviceMemoryResource for $ty {
            fn allocate(
                &self,
                bytes: usize,
                _stream: $crate::runtime::Stream,
            ) -> $crate::error::Result<*mut std::ffi::c_void> {
                $crate::mr::direct_allocate(self.rt, bytes, $name, |b| self.rt.$alloc(b))
            }

            fn deallocate(
                &self,
                ptr: *mut std::ffi::c_void,
                bytes: usize,
                _stream: $crate::runtime::Stream,
            ) -> $crate::error::Result<()> {
                $crate::mr::direct_deallocate(
                    self.rt,
                    ptr,
                    bytes,
                    $name,
                    "by this kind of resource",
                    |p| self.rt.$free(p),
                )
            }

            /// All resources of this class are interchangeable (as in hipMM).
            fn is_equal(&self, other: &dyn $crate::mr::DeviceMemoryResource) -> bool {
                other.as_any().is::<$ty>()
            }

            fn name(&self) -> &'static str {
                $name
            }

            fn as_any(&self) -> &dyn std::any::Any {
                self
            }

            fn direct_path(&self) -> Option<$crate::mr::DirectPath> {
                let direct: fn($crate::runtime::DirectCalls) -> Option<$crate::mr::DirectPath> =
                    $direct;
                direct(self.rt.direct_calls())
            }
        }
    };
}
pub(crate) use direct_resource;
