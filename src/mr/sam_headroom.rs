//! `sam_headroom_memory_resource`: system-allocated memory (SAM) placed on the GPU as long
//! as the device keeps `headroom` bytes free, on the host beyond that.

use std::any::Any;
use std::ffi::c_void;

use super::{current_device_or_unknown, DeviceMemoryResource, SystemMemoryResource};
use crate::error::{Error, Result};
use crate::runtime::{runtime, DeviceAttribute, DeviceId, MemAdvice, Runtime, Stream};

/// Granularity of the device-preferred part: advice applies to whole pages.
const ADVICE_GRANULARITY: usize = 4096;

/// Splits an allocation of `bytes` into the part preferred on the device and the part
/// preferred on the host, given the device's `free` memory and the `headroom` to keep.
pub(crate) fn split(bytes: usize, free: usize, headroom: usize) -> (usize, usize) {
    let allocatable = free.saturating_sub(headroom);
    let gpu = bytes.min(allocatable) / ADVICE_GRANULARITY * ADVICE_GRANULARITY;
    (gpu, bytes - gpu)
}

/// Allocates host memory (`posix_memalign`) that the device accesses directly, advising the
/// runtime to keep the part that fits in (free − headroom) in device memory and the rest in
/// host memory, with the device marked as accessing the whole range.
///
/// Needs a device with pageable memory access (HMM or ATS).
pub struct SamHeadroomMemoryResource {
    rt: &'static dyn Runtime,
    system: SystemMemoryResource,
    headroom: usize,
    device: DeviceId,
}

impl SamHeadroomMemoryResource {
    const NAME: &'static str = "sam_headroom_memory_resource";

    /// A resource for the current device that leaves `headroom` bytes of device memory free.
    pub fn new(headroom: usize) -> Result<Self> {
        let rt = runtime()?;
        let device = rt.get_device().map_err(|e| Error::runtime(-1, e))?;
        let access = rt
            .device_attribute(DeviceAttribute::PageableMemoryAccess, device)
            .map_err(|e| Error::runtime(device, e))?;
        if access == 0 {
            return Err(Error::Unsupported(format!(
                "sam_headroom_memory_resource needs a device that can access pageable host \
                 memory (HMM or ATS), but device {device} reports PageableMemoryAccess = 0 \
                 ({}); use managed_memory_resource instead",
                rt.description()
            )));
        }
        Ok(SamHeadroomMemoryResource {
            rt,
            system: SystemMemoryResource::new()?,
            headroom,
            device,
        })
    }

    /// The device memory this resource leaves free, in bytes.
    pub fn headroom(&self) -> usize {
        self.headroom
    }

    fn advise(&self, ptr: *mut c_void, bytes: usize) -> Result<()> {
        let free = self
            .rt
            .mem_get_info()
            .map_err(|e| Error::runtime(self.device, e))?
            .free;
        let (gpu, cpu) = split(bytes, free, self.headroom);
        let err = |e| Error::runtime(self.device, e);
        if gpu > 0 {
            self.rt
                .mem_advise(ptr, gpu, MemAdvice::SetPreferredLocation, self.device)
                .map_err(err)?;
        }
        if cpu > 0 {
            let rest = ptr.cast::<u8>().wrapping_add(gpu).cast::<c_void>();
            self.rt
                .mem_advise(rest, cpu, MemAdvice::SetPreferredLocation, -1)
                .map_err(err)?;
        }
        self.rt
            .mem_advise(ptr, bytes, MemAdvice::SetAccessedBy, self.device)
            .map_err(err)
    }
}

impl std::fmt::Debug for SamHeadroomMemoryResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "sam_headroom_memory_resource(headroom {}, device {}, {})",
            self.headroom,
            self.device,
            self.rt.kind().name()
        )
    }
}

impl DeviceMemoryResource for SamHeadroomMemoryResource {
    fn allocate(&self, bytes: usize, stream: Stream) -> Result<*mut c_void> {
        let ptr = self.system.allocate(bytes, stream)?;
        if ptr.is_null() {
            return Ok(ptr);
        }
        if let Err(e) = self.advise(ptr, bytes) {
            // Nothing was enqueued on the memory yet; give it back before reporting.
            let _ = self.system.deallocate(ptr, bytes, stream);
            return Err(match e {
                Error::Runtime { source, .. } => Error::BadAlloc {
                    requested: bytes,
                    resource: Self::NAME,
                    detail: format!(
                        "advising the runtime about the memory on device {} failed: {source}",
                        current_device_or_unknown(self.rt)
                    ),
                },
                other => other,
            });
        }
        Ok(ptr)
    }

    fn deallocate(&self, ptr: *mut c_void, bytes: usize, stream: Stream) -> Result<()> {
        self.system
            .deallocate(ptr, bytes, stream)
            .map_err(|e| match e {
                Error::InvalidArgument(m) => Error::InvalidArgument(
                    m.replace("system_memory_resource", "sam_headroom_memory_resource"),
                ),
                other => other,
            })
    }

    /// Only equal to itself: each resource tracks its own live allocations.
    fn is_equal(&self, other: &dyn DeviceMemoryResource) -> bool {
        super::same_object(self.as_any(), other.as_any())
    }

    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn init() -> &'static dyn Runtime {
        crate::mr::tests::init()
    }

    #[test]
    fn split_keeps_the_headroom() {
        const MIB: usize = 1 << 20;
        assert_eq!(split(10 * MIB, 100 * MIB, 10 * MIB), (10 * MIB, 0));
        assert_eq!(split(10 * MIB, 14 * MIB, 10 * MIB), (4 * MIB, 6 * MIB));
        assert_eq!(split(10 * MIB, 5 * MIB, 10 * MIB), (0, 10 * MIB));
        // Device part rounded down to whole pages.
        assert_eq!(
            split(10_000, 10 * MIB + 5000, 10 * MIB),
            (4096, 10_000 - 4096)
        );
        assert_eq!(split(100, 100 * MIB, 0), (0, 100));
    }

    #[test]
    fn allocates_usable_host_memory() {
        init();
        let mr = match SamHeadroomMemoryResource::new(1 << 20) {
            Ok(mr) => mr,
            Err(e) => {
                assert!(matches!(e, Error::Unsupported(_)), "{e}");
                assert!(e.to_string().contains("PageableMemoryAccess"), "{e}");
                return;
            }
        };
        assert_eq!(mr.headroom(), 1 << 20);
        assert_eq!(
            mr.allocate(0, Stream::DEFAULT).unwrap(),
            std::ptr::null_mut()
        );
        for size in [1usize, 4096, 3 << 20] {
            let p = mr.allocate(size, Stream::DEFAULT).unwrap();
            assert_eq!(p as usize % 256, 0);
            assert!(!p.is_null());
            mr.deallocate(p, size, Stream::DEFAULT).unwrap();
        }
        let e = mr
            .deallocate(0x1000 as *mut c_void, 8, Stream::DEFAULT)
            .unwrap_err();
        assert!(
            e.to_string().contains("sam_headroom_memory_resource"),
            "{e}"
        );
        assert!(mr.is_equal(&mr));
        let other = SamHeadroomMemoryResource::new(1 << 20).unwrap();
        assert!(!mr.is_equal(&other));
    }
}
