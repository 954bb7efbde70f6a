//! `rmm_failure_callback_adaptor_create`.

use std::ffi::c_void;
use std::sync::Arc;

use super::{create, resource_of, rmm_resource_t, rmm_status_t};
use crate::error::Error;
use crate::mr::{FailureCallback, FailureCallbackResourceAdaptor};

/// Called after an out-of-memory failure with the requested size and the `arg` given at
/// creation; returns true to retry the allocation, false to let the failure through.
/// It must not unwind (a C++ callback must catch its exceptions).
#[allow(non_camel_case_types)]
pub type rmm_failure_callback_t =
    Option<unsafe extern "C" fn(bytes: usize, arg: *mut c_void) -> bool>;

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
    let make = || {
        let Some(f) = callback else {
            return Err(Error::invalid("`callback` is NULL"));
        };
        let up = resource_of(upstream)?;
        let arg = arg as usize;
        let cb: FailureCallback = Arc::new(move |bytes| {
            // SAFETY: the C caller promised `callback` is callable with `arg` from any thread
            // for the adaptor's lifetime (this function's contract).
            unsafe { f(bytes, arg as *mut c_void) }
        });
        Ok(Arc::new(FailureCallbackResourceAdaptor::new(up, cb)) as _)
    };
    // SAFETY: same contract as this function.
    unsafe { create("rmm_failure_callback_adaptor_create", out, make) }
}
