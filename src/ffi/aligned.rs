//! `rmm_aligned_adaptor_create`, and the generic `rmm_resource_get_upstream`.

use std::sync::Arc;

use super::status::{guard, non_null};
use super::{create, publish, resource_of, rmm_resource_t, rmm_status_t};
use crate::error::Error;
use crate::mr::AlignedResourceAdaptor;

/// Creates an `aligned_resource_adaptor` over `upstream`: allocations of at least
/// `alignment_threshold` bytes are aligned to `alignment` (a power of two, at least 256;
/// else `RMM_STATUS_INVALID_ARGUMENT` naming it). hipMM's defaults are 256 and 0.
#[no_mangle]
pub unsafe extern "C" fn rmm_aligned_adaptor_create(
    upstream: rmm_resource_t,
    alignment: usize,
    alignment_threshold: usize,
    out: *mut rmm_resource_t,
) -> rmm_status_t {
    let make = || {
        let up = resource_of(upstream)?;
        Ok(Arc::new(AlignedResourceAdaptor::new(
            up,
            alignment,
            alignment_threshold,
        )?) as _)
    };
    // SAFETY: same contract as this function.
    unsafe { create("rmm_aligned_adaptor_create", out, make) }
}

/// Writes to `out` a new reference to the upstream of `resource` (an adaptor or a
/// sub-allocator: pool, fixed_size, binning, arena). A resource with no upstream (cuda,
/// managed, ...) gives `RMM_STATUS_INVALID_ARGUMENT` and leaves `out` unchanged. Release
/// the returned handle with `rmm_resource_release`.
#[no_mangle]
pub unsafe extern "C" fn rmm_resource_get_upstream(
    resource: rmm_resource_t,
    out: *mut rmm_resource_t,
) -> rmm_status_t {
    guard("rmm_resource_get_upstream", || {
        non_null(out, "out")?;
        let r = resource_of(resource)?;
        let up = r.upstream().ok_or_else(|| {
            Error::invalid(format!(
                "resource handle {resource:p} is a {}, which has no upstream",
                r.name()
            ))
        })?;
        // SAFETY: `out` checked non-null above; writable by the module's contract.
        unsafe { publish(up, out) }
    })
}
