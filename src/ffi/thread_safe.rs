//! `rmm_thread_safe_adaptor_create`.

use std::sync::Arc;

use super::{create, resource_of, rmm_resource_t, rmm_status_t};
use crate::mr::ThreadSafeResourceAdaptor;

/// Creates a `thread_safe_resource_adaptor` over `upstream`: calls to the upstream are
/// serialized by one mutex.
#[no_mangle]
pub unsafe extern "C" fn rmm_thread_safe_adaptor_create(
    upstream: rmm_resource_t,
    out: *mut rmm_resource_t,
) -> rmm_status_t {
    let make = || Ok(Arc::new(ThreadSafeResourceAdaptor::new(resource_of(upstream)?)) as _);
    // SAFETY: same contract as this function.
    unsafe { create("rmm_thread_safe_adaptor_create", out, make) }
}
