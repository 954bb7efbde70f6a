//! `system_memory_resource`: ordinary host memory for devices that can access pageable
//! memory (HMM or ATS), e.g. Grace Hopper or a recent Linux kernel with HMM.

use std::any::Any;
use std::ffi::c_void;

use super::{current_device_or_unknown, DeviceMemoryResource, ALLOCATION_ALIGNMENT};
use crate::error::{Error, Result};
use crate::runtime::{runtime, DeviceAttribute, Runtime, Stream};
use parking_lot::Mutex;
use std::collections::HashMap;

/// Allocates with the host allocator; deallocation first synchronizes the stream, since the
/// device may still be reading the memory and the host allocator knows nothing of streams.
///
/// Live allocations are recorded so that a foreign pointer or a double free is reported
/// instead of corrupting the host heap (host `free` has no way to tell).
pub struct SystemMemoryResource {
    rt: &'static dyn Runtime,
    live: Mutex<HashMap<usize, usize>>,
}

impl SystemMemoryResource {
    /// A resource for the current device; fails when that device lacks pageable memory access.
    pub fn new() -> Result<Self> {
        let rt = runtime()?;
        let device = rt.get_device().map_err(|e| Error::runtime(-1, e))?;
        let access = rt
            .device_attribute(DeviceAttribute::PageableMemoryAccess, device)
            .map_err(|e| Error::runtime(device, e))?;
        if access == 0 {
            return Err(Error::Unsupported(format!(
                "system_memory_resource needs a device that can access pageable host memory, \
                 but device {device} reports PageableMemoryAccess = 0 ({}); use \
                 managed_memory_resource or pinned_host_memory_resource instead",
                rt.description()
            )));
        }
        Ok(SystemMemoryResource {
            rt,
            live: Mutex::new(HashMap::new()),
        })
    }
}

impl std::fmt::Debug for SystemMemoryResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "system_memory_resource({})", self.rt.kind().name())
    }
}

impl DeviceMemoryResource for SystemMemoryResource {
    fn allocate(&self, bytes: usize, _stream: Stream) -> Result<*mut c_void> {
        if bytes == 0 {
            return Ok(std::ptr::null_mut());
        }
        if bytes > isize::MAX as usize {
            // No allocator can serve it; refused here rather than asked (a sanitizer's
            // allocator would warn about every such request).
            return Err(Error::OutOfMemory {
                requested: bytes,
                resource: self.name(),
                device: current_device_or_unknown(self.rt),
                detail: "the size exceeds the address space".into(),
            });
        }
        let mut ptr: *mut c_void = std::ptr::null_mut();
        // SAFETY: `ptr` is a valid out-pointer and the alignment is a power of two multiple
        // of `size_of::<*mut c_void>()`, as posix_memalign requires.
        let rc = unsafe { libc::posix_memalign(&mut ptr, ALLOCATION_ALIGNMENT, bytes) };
        if rc != 0 || ptr.is_null() {
            return Err(Error::OutOfMemory {
                requested: bytes,
                resource: self.name(),
                device: current_device_or_unknown(self.rt),
                detail: format!(
                    "posix_memalign failed: {}",
                    std::io::Error::from_raw_os_error(rc)
                ),
            });
        }
        self.live.lock().insert(ptr as usize, bytes);
        Ok(ptr)
    }

    // The pointer is checked against the live table before `free` sees it.
    #[allow(clippy::not_unsafe_ptr_arg_deref)]
    fn deallocate(&self, ptr: *mut c_void, bytes: usize, stream: Stream) -> Result<()> {
        if ptr.is_null() {
            return Ok(());
        }
        if self.live.lock().remove(&(ptr as usize)).is_none() {
            return Err(Error::invalid(format!(
                "system_memory_resource: cannot free {ptr:p} ({bytes} bytes): it was not \
                 allocated by this resource or was already freed"
            )));
        }
        if !crate::runtime::process_is_exiting() {
            self.rt
                .stream_synchronize(stream)
                .map_err(|e| Error::runtime(current_device_or_unknown(self.rt), e))?;
        }
        // SAFETY: `ptr` was in the live table, so posix_memalign returned it and it has not
        // been freed since; removing it from the table makes this the only free.
        unsafe { libc::free(ptr) };
        Ok(())
    }

    fn is_equal(&self, other: &dyn DeviceMemoryResource) -> bool {
        other.as_any().is::<SystemMemoryResource>()
    }

    fn name(&self) -> &'static str {
        "system_memory_resource"
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
