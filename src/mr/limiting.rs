//! `limiting_resource_adaptor`: caps the bytes outstanding from an upstream.

use std::any::Any;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::{DeviceMemoryResource, SharedResource};
use crate::error::{Error, Result};
use crate::runtime::Stream;

const NAME: &str = "limiting_resource_adaptor";

/// Fails with [`Error::OutOfMemory`] when an allocation would take the bytes outstanding
/// (each request rounded up to `alignment`) past `allocation_limit`.
///
/// A limit of 0 is allowed, as in hipMM: every non-empty allocation then fails (zero-byte
/// allocations still return null). The accounting is exact under concurrency: the limit is
/// reserved with a compare-and-swap before the upstream is asked, and given back if the
/// upstream fails.
pub struct LimitingResourceAdaptor {
    upstream: SharedResource,
    limit: usize,
    alignment: usize,
    allocated: AtomicUsize,
}

impl LimitingResourceAdaptor {
    /// An adaptor over `upstream` allowing `allocation_limit` bytes outstanding, counting
    /// each request rounded up to `alignment` (a power of two).
    pub fn new(
        upstream: SharedResource,
        allocation_limit: usize,
        alignment: usize,
    ) -> Result<Self> {
        if !alignment.is_power_of_two() {
            return Err(Error::invalid(format!(
                "{NAME}: alignment {alignment} is not a power of two"
            )));
        }
        Ok(LimitingResourceAdaptor {
            upstream,
            limit: allocation_limit,
            alignment,
            allocated: AtomicUsize::new(0),
        })
    }

    /// The upstream resource.
    pub fn upstream(&self) -> SharedResource {
        self.upstream.clone()
    }

    /// Bytes currently allocated (rounded up to the alignment).
    pub fn allocated_bytes(&self) -> usize {
        self.allocated.load(Ordering::Acquire)
    }

    /// The limit given at construction.
    pub fn allocation_limit(&self) -> usize {
        self.limit
    }

    /// The alignment requests are rounded up to.
    pub fn alignment(&self) -> usize {
        self.alignment
    }

    fn counted(&self, bytes: usize) -> Option<usize> {
        bytes
            .checked_add(self.alignment - 1)
            .map(|b| b & !(self.alignment - 1))
    }
}

impl std::fmt::Debug for LimitingResourceAdaptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{NAME}(upstream: {:?}, limit: {}, allocated: {})",
            self.upstream,
            self.limit,
            self.allocated_bytes()
        )
    }
}

impl DeviceMemoryResource for LimitingResourceAdaptor {
    fn allocate(&self, bytes: usize, stream: Stream) -> Result<*mut c_void> {
        if bytes == 0 {
            return Ok(std::ptr::null_mut());
        }
        let counted = self.counted(bytes);
        let reserved = self
            .allocated
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |cur| {
                counted
                    .and_then(|c| cur.checked_add(c))
                    .filter(|&n| n <= self.limit)
            });
        let counted = match (reserved, counted) {
            (Ok(_), Some(c)) => c,
            (Err(cur), _) | (Ok(cur), None) => {
                return Err(Error::OutOfMemory {
                    requested: bytes,
                    resource: NAME,
                    device: -1,
                    detail: format!(
                        "allocating {bytes} bytes (counted as {} with alignment {}) would exceed \
                         the allocation limit of {} bytes ({cur} bytes allocated)",
                        counted.map_or_else(|| "overflow".to_string(), |c| c.to_string()),
                        self.alignment,
                        self.limit
                    ),
                });
            }
        };
        self.upstream.allocate(bytes, stream).inspect_err(|_| {
            self.allocated.fetch_sub(counted, Ordering::AcqRel);
        })
    }

    fn deallocate(&self, ptr: *mut c_void, bytes: usize, stream: Stream) -> Result<()> {
        if ptr.is_null() {
            return Ok(());
        }
        let counted = self.counted(bytes).unwrap_or(usize::MAX);
        if counted > self.allocated_bytes() {
            return Err(Error::invalid(format!(
                "{NAME}: freeing {ptr:p} of {bytes} bytes, more than the {} bytes allocated",
                self.allocated_bytes()
            )));
        }
        self.upstream.deallocate(ptr, bytes, stream)?;
        self.allocated.fetch_sub(counted, Ordering::AcqRel);
        Ok(())
    }

    /// Equal to itself, and to another limiting adaptor over an equal upstream (as RMM).
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
