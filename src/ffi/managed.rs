//! `rmm_managed_create`.

use std::sync::Arc;

use super::{create, rmm_resource_t, rmm_status_t};
use crate::mr::ManagedMemoryResource;

/// Creates a `managed_memory_resource`: managed memory (`hipMallocManaged`/`cudaMallocManaged`).
#[no_mangle]
pub unsafe extern "C" fn rmm_managed_create(out: *mut rmm_resource_t) -> rmm_status_t {
    // SAFETY: same contract as this function.
    unsafe {
        create("rmm_managed_create", out, || {
            Ok(Arc::new(ManagedMemoryResource::new()?))
        })
    }
}
