//! The memory history's cost: churn through the C ABI (`rmm_allocate_async`, the path the
//! history records: C, C++ and Python all take it) with recording off, on, and on with
//! stacks.

use std::ffi::c_void;
use std::sync::atomic::Ordering;

use rmm::mr::DeviceMemoryResource;
use rmm::{Error, Result, Stream};

use crate::cli::{Workload, HISTORY_ENTRIES};
use crate::report::Row;
use crate::workloads::{churn, median, Sample};

/// A C ABI handle as a resource: churn through `rmm_allocate_async`, the path the memory
/// history records (C, C++ and Python all take it).
#[derive(Debug)]
struct CHandle(rmm::ffi::rmm_resource_t);

// SAFETY: a handle is an index into the library's thread-safe table, usable from any thread.
unsafe impl Send for CHandle {}
// SAFETY: as above.
unsafe impl Sync for CHandle {}

impl CHandle {
    fn check(status: rmm::ffi::rmm_status_t, what: &str) -> Result<()> {
        if status == rmm::ffi::rmm_status_t::RMM_STATUS_SUCCESS {
            Ok(())
        } else {
            // SAFETY: the library's thread-local message, a valid C string.
            let msg = unsafe { std::ffi::CStr::from_ptr(rmm::ffi::rmm_last_error_message()) };
            Err(Error::invalid(format!("{what}: {}", msg.to_string_lossy())))
        }
    }
}

impl Drop for CHandle {
    fn drop(&mut self) {
        rmm::ffi::rmm_resource_release(self.0);
    }
}

impl DeviceMemoryResource for CHandle {
    fn allocate(&self, bytes: usize, stream: Stream) -> Result<*mut c_void> {
        let mut p = std::ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer.
        let st = unsafe { rmm::ffi::rmm_allocate_async(self.0, bytes, stream.0 as _, &mut p) };
        Self::check(st, "rmm_allocate_async").map(|()| p)
    }

    fn deallocate(&self, ptr: *mut c_void, bytes: usize, stream: Stream) -> Result<()> {
        let st = rmm::ffi::rmm_deallocate_async(self.0, ptr, bytes, stream.0 as _);
        Self::check(st, "rmm_deallocate_async")
    }

    fn name(&self) -> &'static str {
        "c_handle"
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Churn through the C ABI on `name` (pool or vmm_pool) with the memory history off, on, and
/// on with stacks: what recording costs the hot path.
pub fn rows(name: &str, quick: bool, rows: &mut Vec<Row>) -> Result<()> {
    let mut handle = std::ptr::null_mut();
    match name {
        "pool" => {
            let mut up = std::ptr::null_mut();
            // SAFETY: valid out-pointers.
            unsafe {
                CHandle::check(rmm::ffi::rmm_cuda_create(&mut up), "rmm_cuda_create")?;
                let r = rmm::ffi::rmm_pool_create(up, 256 << 20, 0, &mut handle);
                rmm::ffi::rmm_resource_release(up);
                CHandle::check(r, "rmm_pool_create")?;
            }
        }
        "vmm_pool" => {
            // SAFETY: valid pointers; NULL options are the defaults.
            let r = unsafe { rmm::ffi::rmm_vmm_pool_create(std::ptr::null(), &mut handle) };
            if r == rmm::ffi::rmm_status_t::RMM_STATUS_UNSUPPORTED {
                return Err(Error::Unsupported("no virtual memory management".into()));
            }
            CHandle::check(r, "rmm_vmm_pool_create")?;
        }
        _ => return Ok(()),
    }
    let mr = CHandle(handle);
    let steps = if quick { 100_000 } else { 1_000_000 };
    // Off and on alternate, round after round, and each row is the median of its rounds:
    // run one after the other, which ran second moved the comparison on a shared machine.
    let rounds = if quick { 3 } else { 7 };
    let sample = |on: bool, stacks: bool, n: usize| -> Result<Sample> {
        if on {
            rmm::history::enable(HISTORY_ENTRIES.load(Ordering::Relaxed), stacks)?;
        }
        let s = churn(&mr, n, 7, &[Stream::DEFAULT], false);
        rmm::history::disable();
        s
    };
    sample(false, false, steps)?;
    let (mut off, mut on) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        off.push(sample(false, false, steps)?);
        on.push(sample(true, false, steps)?);
    }
    // Stacks cost a stack walk per event: fewer steps keep the run bounded.
    let stacks = median(|| sample(true, true, steps / 20))?;
    let mid = |mut v: Vec<Sample>| {
        v.sort_by(|a, b| a.seconds.total_cmp(&b.seconds));
        v[v.len() / 2]
    };
    for (label, s) in [("off", mid(off)), ("on", mid(on)), ("on, stacks", stacks)] {
        rows.push(Row::new(
            name,
            Workload::History,
            format!("C ABI churn, {label}"),
            s,
        ));
    }
    Ok(())
}
