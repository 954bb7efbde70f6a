//! `rmm_sam_headroom_create`.

use std::sync::Arc;

use super::{create, rmm_resource_t, rmm_status_t};
use crate::mr::SamHeadroomMemoryResource;

/// Creates a `sam_headroom_memory_resource`: system memory preferred on the current device
/// while it keeps `headroom` bytes free, on the host beyond that. Fails with
/// `RMM_STATUS_UNSUPPORTED` when the device cannot access pageable memory.
#[no_mangle]
pub unsafe extern "C" fn rmm_sam_headroom_create(
    headroom: usize,
    out: *mut rmm_resource_t,
) -> rmm_status_t {
    // SAFETY: same contract as this function.
    unsafe {
        create("rmm_sam_headroom_create", out, || {
            Ok(Arc::new(SamHeadroomMemoryResource::new(headroom)?))
        })
    }
}
