//! `rmm_pinned_host_create`.

use std::sync::Arc;

use super::{create, rmm_resource_t, rmm_status_t};
use crate::mr::PinnedHostMemoryResource;

/// Creates a `pinned_host_memory_resource`: pinned host memory, device-accessible.
#[no_mangle]
pub unsafe extern "C" fn rmm_pinned_host_create(out: *mut rmm_resource_t) -> rmm_status_t {
    // SAFETY: same contract as this function.
    unsafe {
        create("rmm_pinned_host_create", out, || {
            Ok(Arc::new(PinnedHostMemoryResource::new()?))
        })
    }
}
