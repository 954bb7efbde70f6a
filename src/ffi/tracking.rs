//! `rmm_tracking_adaptor_create` and its reports.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use super::status::{guard, non_null};
use super::{create, downcast, resource_of, rmm_resource_t, rmm_status_t, write_out};
use crate::error::{Error, Result};
use crate::mr::TrackingResourceAdaptor;

/// Creates a `tracking_resource_adaptor` over `upstream`; with `capture_stacks`, each
/// allocation records the stack that made it (slow: for debugging).
#[no_mangle]
pub unsafe extern "C" fn rmm_tracking_adaptor_create(
    upstream: rmm_resource_t,
    capture_stacks: bool,
    out: *mut rmm_resource_t,
) -> rmm_status_t {
    let make = || {
        Ok(Arc::new(TrackingResourceAdaptor::new(
            resource_of(upstream)?,
            capture_stacks,
        )) as _)
    };
    // SAFETY: same contract as this function.
    unsafe { create("rmm_tracking_adaptor_create", out, make) }
}

fn tracking_of<R>(
    adaptor: rmm_resource_t,
    f: impl FnOnce(&TrackingResourceAdaptor) -> Result<R>,
) -> Result<R> {
    let r = resource_of(adaptor)?;
    f(downcast::<TrackingResourceAdaptor>(&r, adaptor)?)
}

/// Bytes outstanding through a tracking adaptor.
#[no_mangle]
pub unsafe extern "C" fn rmm_tracking_adaptor_get_allocated_bytes(
    adaptor: rmm_resource_t,
    bytes: *mut usize,
) -> rmm_status_t {
    guard("rmm_tracking_adaptor_get_allocated_bytes", || {
        non_null(bytes, "bytes")?;
        let v = tracking_of(adaptor, |t| Ok(t.allocated_bytes()))?;
        // SAFETY: checked non-null above.
        unsafe { write_out(bytes, v) };
        Ok(())
    })
}

/// Number of allocations outstanding through a tracking adaptor.
#[no_mangle]
pub unsafe extern "C" fn rmm_tracking_adaptor_get_outstanding_count(
    adaptor: rmm_resource_t,
    count: *mut usize,
) -> rmm_status_t {
    guard("rmm_tracking_adaptor_get_outstanding_count", || {
        non_null(count, "count")?;
        let v = tracking_of(adaptor, |t| Ok(t.outstanding_count()))?;
        // SAFETY: checked non-null above.
        unsafe { write_out(count, v) };
        Ok(())
    })
}

/// Lists the outstanding allocations, sorted by address: writes up to `capacity` pointers
/// to `ptrs` and their sizes to `sizes` (both may be NULL when `capacity` is 0), and the
/// total number outstanding to `count` (call with `capacity` 0 to size the arrays).
#[no_mangle]
pub unsafe extern "C" fn rmm_tracking_adaptor_get_outstanding(
    adaptor: rmm_resource_t,
    ptrs: *mut *mut c_void,
    sizes: *mut usize,
    capacity: usize,
    count: *mut usize,
) -> rmm_status_t {
    guard("rmm_tracking_adaptor_get_outstanding", || {
        non_null(count, "count")?;
        if capacity > 0 {
            non_null(ptrs, "ptrs")?;
            non_null(sizes, "sizes")?;
        }
        let mut all: Vec<(usize, usize)> = tracking_of(adaptor, |t| {
            Ok(t.outstanding_allocations()
                .into_iter()
                .map(|(p, i)| (p as usize, i.size))
                .collect())
        })?;
        all.sort_unstable();
        for (i, (p, s)) in all.iter().take(capacity).enumerate() {
            // SAFETY: `ptrs` and `sizes` are non-null (checked) and hold `capacity` elements
            // by the caller's contract; `i < capacity`.
            unsafe {
                ptrs.add(i).write(*p as *mut c_void);
                sizes.add(i).write(*s);
            }
        }
        // SAFETY: checked non-null above.
        unsafe { write_out(count, all.len()) };
        Ok(())
    })
}

/// Copies `text` into `buf` (NUL-terminated, truncated to `len - 1` bytes if needed) and
/// writes the full size including the NUL to `needed`.
///
/// # Safety
/// `buf` must be NULL or valid for `len` bytes; `needed` NULL or writable.
unsafe fn copy_string(text: &str, buf: *mut c_char, len: usize, needed: *mut usize) -> Result<()> {
    if buf.is_null() && len > 0 {
        return Err(Error::invalid(format!("`buf` is NULL but `len` is {len}")));
    }
    if !buf.is_null() && len > 0 {
        let n = text.len().min(len - 1);
        // SAFETY: `buf` is valid for `len` bytes (contract) and `n + 1 <= len`; the source
        // is a Rust string that does not overlap caller memory.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), buf.cast::<u8>(), n);
            buf.add(n).write(0);
        }
    }
    if !needed.is_null() {
        // SAFETY: checked non-null; writable by contract.
        unsafe { write_out(needed, text.len() + 1) };
    }
    Ok(())
}

/// The report of outstanding allocations (one line per allocation, with its stack when
/// captured), copied into `buf` of `len` bytes, NUL-terminated and truncated if it does not
/// fit; `needed` (nullable) gets the full size including the NUL. `buf` may be NULL when
/// `len` is 0, to ask for the size.
#[no_mangle]
pub unsafe extern "C" fn rmm_tracking_adaptor_outstanding_allocations_string(
    adaptor: rmm_resource_t,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> rmm_status_t {
    guard(
        "rmm_tracking_adaptor_outstanding_allocations_string",
        || {
            let text = tracking_of(adaptor, |t| Ok(t.outstanding_allocations_str()))?;
            // SAFETY: forwarded from this function's contract.
            unsafe { copy_string(&text, buf, len, needed) }
        },
    )
}

/// The stack trace recorded for the outstanding allocation `ptr` ("" when stacks are not
/// captured), copied as by `rmm_tracking_adaptor_outstanding_allocations_string`. A pointer
/// that is not outstanding gives `RMM_STATUS_INVALID_ARGUMENT`.
#[no_mangle]
pub unsafe extern "C" fn rmm_tracking_adaptor_allocation_stack(
    adaptor: rmm_resource_t,
    ptr: *mut c_void,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> rmm_status_t {
    guard("rmm_tracking_adaptor_allocation_stack", || {
        let stack = tracking_of(adaptor, |t| {
            t.outstanding_allocations()
                .remove(&ptr)
                .map(|i| i.stack.unwrap_or_default())
                .ok_or_else(|| Error::invalid(format!("{ptr:p} is not an outstanding allocation")))
        })?;
        // SAFETY: forwarded from this function's contract.
        unsafe { copy_string(&stack, buf, len, needed) }
    })
}

/// Logs the report of outstanding allocations at debug level (the `log` crate's logger).
#[no_mangle]
pub unsafe extern "C" fn rmm_tracking_adaptor_log_outstanding_allocations(
    adaptor: rmm_resource_t,
) -> rmm_status_t {
    guard("rmm_tracking_adaptor_log_outstanding_allocations", || {
        tracking_of(adaptor, |t| {
            t.log_outstanding_allocations();
            Ok(())
        })
    })
}
