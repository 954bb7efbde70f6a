//! `tracking_resource_adaptor`: remembers every outstanding allocation (size, and the stack
//! that made it when asked), to find leaks.

use std::any::Any;
use std::collections::HashMap;
use std::ffi::c_void;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;

use super::{DeviceMemoryResource, SharedResource};
use crate::error::{Error, Result};
use crate::runtime::Stream;

const NAME: &str = "tracking_resource_adaptor";

/// What the adaptor knows about one outstanding allocation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllocationInfo {
    /// Bytes requested.
    pub size: usize,
    /// The stack that allocated it (resolved symbols), when stacks are captured.
    pub stack: Option<String>,
}

/// Tracks the allocations outstanding through it. Like RMM's, it only observes: freeing a
/// pointer it did not allocate, or with another size, is logged as an error and forwarded
/// to the upstream with the size given; its byte count uses the size it recorded.
pub struct TrackingResourceAdaptor {
    upstream: SharedResource,
    capture_stacks: bool,
    outstanding: Mutex<HashMap<usize, AllocationInfo>>,
    allocated: AtomicUsize,
}

impl TrackingResourceAdaptor {
    /// An adaptor over `upstream`; with `capture_stacks`, every allocation records its
    /// stack trace (slow: for debugging).
    pub fn new(upstream: SharedResource, capture_stacks: bool) -> Self {
        TrackingResourceAdaptor {
            upstream,
            capture_stacks,
            outstanding: Mutex::new(HashMap::new()),
            allocated: AtomicUsize::new(0),
        }
    }

    /// The upstream resource.
    pub fn upstream(&self) -> SharedResource {
        self.upstream.clone()
    }

    /// Whether stacks are captured.
    pub fn captures_stacks(&self) -> bool {
        self.capture_stacks
    }

    /// A snapshot of the outstanding allocations, by pointer.
    pub fn outstanding_allocations(&self) -> HashMap<*mut c_void, AllocationInfo> {
        self.outstanding
            .lock()
            .iter()
            .map(|(p, i)| (*p as *mut c_void, i.clone()))
            .collect()
    }

    /// Number of outstanding allocations.
    pub fn outstanding_count(&self) -> usize {
        self.outstanding.lock().len()
    }

    /// Bytes outstanding.
    pub fn allocated_bytes(&self) -> usize {
        self.allocated.load(Ordering::Acquire)
    }

    /// A report of the outstanding allocations, sorted by address, in RMM's format: one line
    /// per allocation (`0x...: N B`, then ` : callstack:` and the stack when captured); empty
    /// when there are none (RMM's Python tests check that).
    pub fn outstanding_allocations_str(&self) -> String {
        let mut entries: Vec<(usize, AllocationInfo)> = self
            .outstanding
            .lock()
            .iter()
            .map(|(p, i)| (*p, i.clone()))
            .collect();
        entries.sort_by_key(|e| e.0);
        let mut s = String::new();
        for (p, info) in entries {
            let _ = write!(s, "{:#x}: {} B", p, info.size);
            if let Some(stack) = info.stack {
                s.push_str(" : callstack:\n");
                s.push_str(stack.trim_end_matches('\n'));
            }
            s.push('\n');
        }
        s
    }

    /// Logs [`Self::outstanding_allocations_str`] at debug level (the `log` crate), after a
    /// count of them.
    pub fn log_outstanding_allocations(&self) {
        if log::log_enabled!(log::Level::Debug) {
            log::debug!(
                "Outstanding Allocations: {} ({} bytes)\n{}",
                self.outstanding_count(),
                self.allocated_bytes(),
                self.outstanding_allocations_str()
            );
        }
    }
}

impl std::fmt::Debug for TrackingResourceAdaptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{NAME}(upstream: {:?}, outstanding: {}, bytes: {})",
            self.upstream,
            self.outstanding_count(),
            self.allocated_bytes()
        )
    }
}

impl DeviceMemoryResource for TrackingResourceAdaptor {
    fn allocate(&self, bytes: usize, stream: Stream) -> Result<*mut c_void> {
        let p = self.upstream.allocate(bytes, stream)?;
        if p.is_null() {
            return Ok(p);
        }
        let stack = self
            .capture_stacks
            .then(|| format!("{:?}", backtrace::Backtrace::new()));
        let mut map = self.outstanding.lock();
        if let Err(e) = map.try_reserve(1) {
            drop(map);
            let _ = self.upstream.deallocate(p, bytes, stream);
            return Err(Error::BadAlloc {
                requested: bytes,
                resource: NAME,
                detail: format!("cannot record the allocation: {e}"),
            });
        }
        map.insert(p as usize, AllocationInfo { size: bytes, stack });
        self.allocated.fetch_add(bytes, Ordering::AcqRel);
        Ok(p)
    }

    /// As RMM, an observer: a pointer it does not know (allocated through the upstream
    /// directly, say) is logged as an error and still freed upstream; a wrong size is
    /// logged, passed upstream as given, and the byte count is corrected with the recorded
    /// size. Only an upstream failure is an error (and then nothing changes here).
    fn deallocate(&self, ptr: *mut c_void, bytes: usize, stream: Stream) -> Result<()> {
        if ptr.is_null() {
            return Ok(());
        }
        // Forget it before the upstream frees it, so that a concurrent allocation handed
        // the same address cannot be forgotten instead.
        let info = self.outstanding.lock().remove(&(ptr as usize));
        if let Err(e) = self.upstream.deallocate(ptr, bytes, stream) {
            if let Some(info) = info {
                self.outstanding.lock().insert(ptr as usize, info);
            }
            return Err(e);
        }
        match info {
            None => log::error!(
                "{NAME}: deallocating a pointer that was not tracked: {ptr:p} ({bytes} bytes),                  {} allocations outstanding; freed upstream anyway",
                self.outstanding_count()
            ),
            Some(info) => {
                if info.size != bytes {
                    log::error!(
                        "{NAME}: {ptr:p} was allocated with {} bytes but deallocated with                          {bytes}; freed upstream with {bytes}, counted as {}",
                        info.size,
                        info.size
                    );
                }
                self.allocated.fetch_sub(info.size, Ordering::AcqRel);
            }
        }
        Ok(())
    }

    /// Equal to itself, and to another tracking adaptor over an equal upstream (as RMM).
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
