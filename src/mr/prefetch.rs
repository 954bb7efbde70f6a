//! `prefetch_resource_adaptor`: prefetches each new allocation to the current device.

use std::any::Any;
use std::ffi::c_void;

use super::{DeviceMemoryResource, SharedResource};
use crate::error::Result;
use crate::runtime::{runtime, Runtime, Stream};

const NAME: &str = "prefetch_resource_adaptor";

/// After each allocation, enqueues a prefetch of it to the calling thread's current device
/// on the allocation's stream (the runtime's `mem_prefetch_async`).
///
/// The prefetch is a hint: where the runtime cannot prefetch (memory that is not managed,
/// a runtime or device without prefetch support) the error is logged at debug level and
/// the allocation is still returned, as hipMM does for non-managed memory.
pub struct PrefetchResourceAdaptor {
    upstream: SharedResource,
    rt: &'static dyn Runtime,
}

impl PrefetchResourceAdaptor {
    /// An adaptor over `upstream`.
    pub fn new(upstream: SharedResource) -> Result<Self> {
        Ok(PrefetchResourceAdaptor {
            upstream,
            rt: runtime()?,
        })
    }

    /// The upstream resource.
    pub fn upstream(&self) -> SharedResource {
        self.upstream.clone()
    }
}

impl std::fmt::Debug for PrefetchResourceAdaptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{NAME}(upstream: {:?})", self.upstream)
    }
}

impl DeviceMemoryResource for PrefetchResourceAdaptor {
    fn allocate(&self, bytes: usize, stream: Stream) -> Result<*mut c_void> {
        let p = self.upstream.allocate(bytes, stream)?;
        if !p.is_null() {
            let prefetched = self
                .rt
                .get_device()
                .and_then(|d| self.rt.mem_prefetch_async(p, bytes, d, stream));
            if let Err(e) = prefetched {
                log::debug!("{NAME}: prefetch of {p:p} ({bytes} bytes) skipped: {e}");
            }
        }
        Ok(p)
    }

    fn deallocate(&self, ptr: *mut c_void, bytes: usize, stream: Stream) -> Result<()> {
        self.upstream.deallocate(ptr, bytes, stream)
    }

    /// Equal to itself, and to another prefetch adaptor over an equal upstream (as RMM).
    fn is_equal(&self, other: &dyn DeviceMemoryResource) -> bool {
        super::adaptor_is_equal(self, other, |a| a.upstream.as_ref(), |_, _| true)
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
