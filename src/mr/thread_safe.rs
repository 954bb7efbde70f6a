//! `thread_safe_resource_adaptor`: serializes every call to its upstream with one mutex.

use std::any::Any;
use std::ffi::c_void;

use parking_lot::Mutex;

use super::{DeviceMemoryResource, SharedResource};
use crate::error::Result;
use crate::runtime::Stream;

const NAME: &str = "thread_safe_resource_adaptor";

/// Calls the upstream under a mutex, one call at a time. Every rmm-rs resource is already
/// thread-safe; this exists for hipMM compatibility and for upstreams written in C or C++
/// (through the callback resource or a C++ subclass) that are not.
pub struct ThreadSafeResourceAdaptor {
    upstream: SharedResource,
    lock: Mutex<()>,
}

impl ThreadSafeResourceAdaptor {
    /// An adaptor over `upstream`.
    pub fn new(upstream: SharedResource) -> Self {
        ThreadSafeResourceAdaptor {
            upstream,
            lock: Mutex::new(()),
        }
    }

    /// The upstream resource.
    pub fn upstream(&self) -> SharedResource {
        self.upstream.clone()
    }
}

impl std::fmt::Debug for ThreadSafeResourceAdaptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{NAME}(upstream: {:?})", self.upstream)
    }
}

impl DeviceMemoryResource for ThreadSafeResourceAdaptor {
    fn allocate(&self, bytes: usize, stream: Stream) -> Result<*mut c_void> {
        let _guard = self.lock.lock();
        self.upstream.allocate(bytes, stream)
    }

    fn deallocate(&self, ptr: *mut c_void, bytes: usize, stream: Stream) -> Result<()> {
        let _guard = self.lock.lock();
        self.upstream.deallocate(ptr, bytes, stream)
    }

    /// Equal to itself, and to another thread safe adaptor over an equal upstream (as RMM).
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
