//! `failure_callback_resource_adaptor`: on an allocation failure, asks a callback whether
//! to retry.

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

/// The failures of the upstream that call the callback: RMM's `ExceptionType` template
/// parameter, which names the exceptions the adaptor catches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RetryOn {
    /// [`Error::OutOfMemory`] only (`rmm::out_of_memory`, RMM's default).
    #[default]
    OutOfMemory,
    /// [`Error::OutOfMemory`] and [`Error::BadAlloc`] (`rmm::bad_alloc` or `std::bad_alloc`,
    /// which `rmm::out_of_memory` derives from).
    BadAlloc,
}

impl RetryOn {
    fn catches(self, e: &Error) -> bool {
        match e {
            Error::OutOfMemory { .. } => true,
            Error::BadAlloc { .. } => self == RetryOn::BadAlloc,
            _ => false,
        }
    }
}

/// Retries allocations that fail with an error of [`RetryOn`] for as long as the callback
/// returns `true` (it may free memory, wait, or count attempts), then returns the last
/// error unchanged. Other errors pass through without calling it.
pub struct FailureCallbackResourceAdaptor {
    upstream: SharedResource,
    callback: FailureCallback,
    retry_on: RetryOn,
}

impl FailureCallbackResourceAdaptor {
    /// An adaptor over `upstream` calling `callback` on each out-of-memory failure.
    pub fn new(upstream: SharedResource, callback: FailureCallback) -> Self {
        Self::with_retry_on(upstream, callback, RetryOn::OutOfMemory)
    }

    /// An adaptor over `upstream` calling `callback` on each failure of `retry_on`.
    pub fn with_retry_on(
        upstream: SharedResource,
        callback: FailureCallback,
        retry_on: RetryOn,
    ) -> Self {
        FailureCallbackResourceAdaptor {
            upstream,
            callback,
            retry_on,
        }
    }

    /// The failures that call the callback.
    pub fn retry_on(&self) -> RetryOn {
        self.retry_on
    }

    /// The upstream resource.
    pub fn upstream(&self) -> SharedResource {
        self.upstream.clone()
    }
}

impl std::fmt::Debug for FailureCallbackResourceAdaptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{NAME}(upstream: {:?}, retry_on: {:?})",
            self.upstream, self.retry_on
        )
    }
}

impl DeviceMemoryResource for FailureCallbackResourceAdaptor {
    fn allocate(&self, bytes: usize, stream: Stream) -> Result<*mut c_void> {
        loop {
            match self.upstream.allocate(bytes, stream) {
                Err(e) if self.retry_on.catches(&e) => {
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
