//! `callback_memory_resource`: allocation and deallocation delegated to user functions.
//!
//! This is also the bridge that lets a C++ subclass of `device_memory_resource` serve as
//! the upstream of a Rust resource or as the current device resource.

use std::any::Any;
use std::ffi::c_void;

use super::DeviceMemoryResource;
use crate::error::Result;
use crate::runtime::Stream;

/// The allocate function of a [`CallbackMemoryResource`].
pub type AllocateFn = Box<dyn Fn(usize, Stream) -> Result<*mut c_void> + Send + Sync>;
/// The deallocate function of a [`CallbackMemoryResource`].
pub type DeallocateFn = Box<dyn Fn(*mut c_void, usize, Stream) -> Result<()> + Send + Sync>;

/// A resource whose allocate and deallocate are user functions.
pub struct CallbackMemoryResource {
    allocate: AllocateFn,
    deallocate: DeallocateFn,
    context: usize,
}

impl CallbackMemoryResource {
    /// A resource calling `allocate` and `deallocate`. `context` is an opaque value the
    /// creator can read back (the C ABI stores the C++ object there).
    pub fn new(allocate: AllocateFn, deallocate: DeallocateFn, context: usize) -> Self {
        CallbackMemoryResource {
            allocate,
            deallocate,
            context,
        }
    }

    /// The opaque value given at construction.
    pub fn context(&self) -> usize {
        self.context
    }
}

impl std::fmt::Debug for CallbackMemoryResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "callback_memory_resource(context {:#x})", self.context)
    }
}

impl DeviceMemoryResource for CallbackMemoryResource {
    // Every request reaches the callbacks, zero bytes and null frees included, as RMM's
    // callback resource passes them on (what a bridged C++ resource does with them is its own).
    fn allocate(&self, bytes: usize, stream: Stream) -> Result<*mut c_void> {
        (self.allocate)(bytes, stream)
    }

    fn deallocate(&self, ptr: *mut c_void, bytes: usize, stream: Stream) -> Result<()> {
        (self.deallocate)(ptr, bytes, stream)
    }

    /// Two callback resources are equal when they are the same object or share a non-zero
    /// context (two bridges of the same C++ object).
    fn is_equal(&self, other: &dyn DeviceMemoryResource) -> bool {
        match other.as_any().downcast_ref::<CallbackMemoryResource>() {
            Some(o) => std::ptr::eq(self, o) || (self.context != 0 && self.context == o.context),
            None => false,
        }
    }

    fn name(&self) -> &'static str {
        "callback_memory_resource"
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
