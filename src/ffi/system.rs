//! `rmm_system_create`.

use std::sync::Arc;

use super::{create, rmm_resource_t, rmm_status_t};
use crate::mr::SystemMemoryResource;

/// Creates a `system_memory_resource` (host `malloc`); fails with `RMM_STATUS_UNSUPPORTED` when the current device cannot access pageable memory.
#[no_mangle]
pub unsafe extern "C" fn rmm_system_create(out: *mut rmm_resource_t) -> rmm_status_t {
    // SAFETY: same contract as this function.
    unsafe {
        create("rmm_system_create", out, || {
            Ok(Arc::new(SystemMemoryResource::new()?))
        })
    }
}
