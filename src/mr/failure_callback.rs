//! `failure_callback_resource_adaptor`: on out-of-memory, asks a callback whether to retry.

use std::any::Any;
use std::ffi::c_void;
use std::sync::Arc;

use super::{DeviceMemoryResource, SharedResource};
use crate::error::{Error, Result};
use crate::runtime::Stream;

const NAME: &str = "failure_callback_resource_adaptor";

/// Called with the requested size after an out-of-memory failure; `true` retries the
/// allocation, `false` lets the failure through.
pub type FailureCallback = Arc<dyn Fn(usize) -> bool + Send + Sync>;

/// Retries allocations that fail with [`Error::OutOfMemory`] for as long as the callback
/// returns `true` (it may free memory, wait, or count attempts). Other errors pass through
/// without calling it.
pub struct FailureCallbackResourceAdaptor {
    upstream: SharedResource,
    callback: FailureCallback,
}

impl FailureCallbackResourceAdaptor {
    /// An adaptor over `upstream` calling `callback` on each out-of-memory failure.
    pub fn new(upstream: SharedResource, callback: FailureCallback) -> Self {
        FailureCallbackResourceAdaptor { upstream, callback }
    }

    /// The upstream resource.
    pub fn upstream(&self) -> SharedResource {
        self.upstream.clone()
    }
}

impl std::fmt::Debug for FailureCallbackResourceAdaptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{NAME}(upstream: {:?})", self.upstream)
    }
}

impl DeviceMemoryResource for FailureCallbackResourceAdaptor {
    fn allocate(&self, bytes: usize, stream: Stream) -> Result<*mut c_void> {
        loop {
            match self.upstream.allocate(bytes, stream) {
                Err(e @ Error::OutOfMemory { .. }) => {
                    if !(self.callback)(bytes) {
                        return Err(e);
                    }
                }
                other => return other,
            }
        }
    }

    fn deallocate(&self, ptr: *mut c_void, bytes: usize, stream: Stream) -> Result<()> {
        self.upstream.deallocate(ptr, bytes, stream)
    }

    /// Equal to itself, and to another failure callback adaptor over an equal upstream (as RMM).
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
