//! `rmm_failure_callback_adaptor_create` and `rmm_failure_callback_adaptor_create_ex`.

use std::ffi::c_void;
use std::sync::Arc;

use super::{create, resource_of, rmm_resource_t, rmm_status_t};
use crate::error::{Error, Result};
use crate::mr::{FailureCallback, FailureCallbackResourceAdaptor, RetryOn, SharedResource};

/// Called after an out-of-memory failure with the requested size and the `arg` given at
/// creation; returns true to retry the allocation, false to let the failure through.
/// It must not unwind (a C++ callback must catch its exceptions).
#[allow(non_camel_case_types)]
pub type rmm_failure_callback_t =
    Option<unsafe extern "C" fn(bytes: usize, arg: *mut c_void) -> bool>;

/// Flag of `rmm_failure_callback_adaptor_create_ex`: the callback is also called (and the
/// allocation retried) when the upstream fails with `RMM_STATUS_BAD_ALLOC`, not only with
/// `RMM_STATUS_OUT_OF_MEMORY` (RMM's `ExceptionType` = `rmm::bad_alloc`).
pub const RMM_FAILURE_CALLBACK_RETRY_BAD_ALLOC: u32 = 1;

/// Creates a `failure_callback_resource_adaptor` over `upstream`: each allocation that fails
/// with out-of-memory calls `callback(bytes, arg)` and is retried while it returns true.
/// `callback` must not be NULL; `arg` is passed through untouched and must stay valid (and
/// be usable from any thread) for the adaptor's lifetime.
#[no_mangle]
pub unsafe extern "C" fn rmm_failure_callback_adaptor_create(
    upstream: rmm_resource_t,
    callback: rmm_failure_callback_t,
    arg: *mut c_void,
    out: *mut rmm_resource_t,
) -> rmm_status_t {
    // SAFETY: same contract as this function.
    unsafe {
        let make = adaptor(upstream, callback, arg, 0);
        create("rmm_failure_callback_adaptor_create", out, make)
    }
}

/// As `rmm_failure_callback_adaptor_create`, with `flags`: 0, or
/// `RMM_FAILURE_CALLBACK_RETRY_BAD_ALLOC` to also retry allocations failing with
/// `RMM_STATUS_BAD_ALLOC`. Unknown flags are an invalid argument. The last failure is
/// returned with its own status once the callback returns false.
#[no_mangle]
pub unsafe extern "C" fn rmm_failure_callback_adaptor_create_ex(
    upstream: rmm_resource_t,
    callback: rmm_failure_callback_t,
    arg: *mut c_void,
    flags: u32,
    out: *mut rmm_resource_t,
) -> rmm_status_t {
    // SAFETY: same contract as this function.
    unsafe {
        let make = adaptor(upstream, callback, arg, flags);
        create("rmm_failure_callback_adaptor_create_ex", out, make)
    }
}

/// What both constructors build (run inside their status guard by [`create`]).
///
/// # Safety
/// As `rmm_failure_callback_adaptor_create`, for `callback` and `arg`.
unsafe fn adaptor(
    upstream: rmm_resource_t,
    callback: rmm_failure_callback_t,
    arg: *mut c_void,
    flags: u32,
) -> impl FnOnce() -> Result<SharedResource> {
    move || {
        let Some(f) = callback else {
            return Err(Error::invalid("`callback` is NULL"));
        };
        let retry_on = match flags {
            0 => RetryOn::OutOfMemory,
            RMM_FAILURE_CALLBACK_RETRY_BAD_ALLOC => RetryOn::BadAlloc,
            _ => return Err(Error::invalid(format!("unknown `flags` {flags:#x}"))),
        };
        let up = resource_of(upstream)?;
        let arg = arg as usize;
        let cb: FailureCallback = Arc::new(move |bytes| {
            // SAFETY: the C caller promised `callback` is callable with `arg` from any thread
            // for the adaptor's lifetime (this function's contract).
            unsafe { f(bytes, arg as *mut c_void) }
        });
        Ok(Arc::new(FailureCallbackResourceAdaptor::with_retry_on(
            up, cb, retry_on,
        )) as _)
    }
}
