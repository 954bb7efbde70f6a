//! `aligned_resource_adaptor`: serves allocations of at least a threshold size at a larger
//! alignment by over-allocating from the upstream and remembering where each block began.

use std::any::Any;
use std::collections::HashMap;
use std::ffi::c_void;

use parking_lot::Mutex;

use super::{DeviceMemoryResource, SharedResource, ALLOCATION_ALIGNMENT};
use crate::error::{Error, Result};
use crate::runtime::Stream;

const NAME: &str = "aligned_resource_adaptor";

/// Default threshold: every allocation gets the larger alignment (hipMM's default, 0).
pub const DEFAULT_ALIGNMENT_THRESHOLD: usize = 0;

/// Aligns allocations of `alignment_threshold` bytes or more to `alignment`.
///
/// Such a request takes `round_up(bytes, 256) + alignment - 256` bytes from the upstream;
/// when the upstream's pointer is not already aligned, the aligned pointer is remembered
/// with the raw pointer and size so the deallocation returns exactly what was taken.
pub struct AlignedResourceAdaptor {
    upstream: SharedResource,
    alignment: usize,
    threshold: usize,
    /// aligned pointer → (raw pointer, raw size), only for blocks that were shifted.
    shifted: Mutex<HashMap<usize, (usize, usize)>>,
}

impl AlignedResourceAdaptor {
    /// An adaptor over `upstream`. `alignment` must be a power of two of at least 256.
    pub fn new(
        upstream: SharedResource,
        alignment: usize,
        alignment_threshold: usize,
    ) -> Result<Self> {
        if !alignment.is_power_of_two() || alignment < ALLOCATION_ALIGNMENT {
            return Err(Error::invalid(format!(
                "{NAME}: alignment {alignment} must be a power of two of at least \
                 {ALLOCATION_ALIGNMENT}"
            )));
        }
        Ok(AlignedResourceAdaptor {
            upstream,
            alignment,
            threshold: alignment_threshold,
            shifted: Mutex::new(HashMap::new()),
        })
    }

    /// The upstream resource.
    pub fn upstream(&self) -> SharedResource {
        self.upstream.clone()
    }

    /// The alignment of allocations at or above the threshold.
    pub fn alignment(&self) -> usize {
        self.alignment
    }

    /// The size from which allocations get the larger alignment.
    pub fn alignment_threshold(&self) -> usize {
        self.threshold
    }

    /// Number of outstanding allocations whose pointer was shifted to align it.
    pub fn shifted_count(&self) -> usize {
        self.shifted.lock().len()
    }

    fn passes_through(&self, bytes: usize) -> bool {
        self.alignment == ALLOCATION_ALIGNMENT || bytes < self.threshold
    }

    fn upstream_size(&self, bytes: usize) -> Result<usize> {
        bytes
            .checked_add(ALLOCATION_ALIGNMENT - 1)
            .map(|b| b & !(ALLOCATION_ALIGNMENT - 1))
            .and_then(|b| b.checked_add(self.alignment - ALLOCATION_ALIGNMENT))
            .ok_or_else(|| Error::OutOfMemory {
                requested: bytes,
                resource: NAME,
                device: -1,
                detail: format!("{bytes} bytes aligned to {} overflows", self.alignment),
            })
    }
}

impl std::fmt::Debug for AlignedResourceAdaptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{NAME}(upstream: {:?}, alignment: {}, alignment_threshold: {})",
            self.upstream, self.alignment, self.threshold
        )
    }
}

impl DeviceMemoryResource for AlignedResourceAdaptor {
    fn allocate(&self, bytes: usize, stream: Stream) -> Result<*mut c_void> {
        if bytes == 0 {
            return Ok(std::ptr::null_mut());
        }
        if self.passes_through(bytes) {
            return self.upstream.allocate(bytes, stream);
        }
        let size = self.upstream_size(bytes)?;
        let raw = self.upstream.allocate(size, stream)?;
        let addr = raw as usize;
        let aligned = (addr + self.alignment - 1) & !(self.alignment - 1);
        if aligned != addr {
            let mut map = self.shifted.lock();
            if let Err(e) = map.try_reserve(1) {
                drop(map);
                let _ = self.upstream.deallocate(raw, size, stream);
                return Err(Error::BadAlloc {
                    requested: bytes,
                    resource: NAME,
                    detail: format!("cannot record the aligned block: {e}"),
                });
            }
            map.insert(aligned, (addr, size));
        }
        Ok(aligned as *mut c_void)
    }

    fn deallocate(&self, ptr: *mut c_void, bytes: usize, stream: Stream) -> Result<()> {
        if ptr.is_null() {
            return Ok(());
        }
        if self.passes_through(bytes) {
            return self.upstream.deallocate(ptr, bytes, stream);
        }
        let size = self.upstream_size(bytes)?;
        let raw = {
            let mut map = self.shifted.lock();
            match map.get(&(ptr as usize)) {
                Some(&(raw, raw_size)) => {
                    if raw_size != size {
                        return Err(Error::invalid(format!(
                            "{NAME}: {ptr:p} was allocated with a different size than the \
                             {bytes} bytes being freed"
                        )));
                    }
                    map.remove(&(ptr as usize));
                    raw
                }
                None => ptr as usize,
            }
        };
        let result = self.upstream.deallocate(raw as *mut c_void, size, stream);
        if result.is_err() && raw != ptr as usize {
            self.shifted.lock().insert(ptr as usize, (raw, size));
        }
        result
    }

    /// Equal to itself, and to another aligned adaptor over an equal upstream with the same alignment and alignment threshold (as RMM).
    fn is_equal(&self, other: &dyn DeviceMemoryResource) -> bool {
        super::adaptor_is_equal(
            self,
            other,
            |a| a.upstream.as_ref(),
            |a, b| a.alignment == b.alignment && a.threshold == b.threshold,
        )
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
