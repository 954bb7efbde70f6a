//! `rmm_prefetch_adaptor_create`.

use std::sync::Arc;

use super::{create, resource_of, rmm_resource_t, rmm_status_t};
use crate::mr::PrefetchResourceAdaptor;

/// Creates a `prefetch_resource_adaptor` over `upstream`: each new allocation is prefetched
/// to the current device on its stream. The prefetch is a hint: where the runtime cannot
/// prefetch (memory that is not managed, no prefetch support) the allocation still succeeds.
#[no_mangle]
pub unsafe extern "C" fn rmm_prefetch_adaptor_create(
    upstream: rmm_resource_t,
    out: *mut rmm_resource_t,
) -> rmm_status_t {
    let make = || Ok(Arc::new(PrefetchResourceAdaptor::new(resource_of(upstream)?)?) as _);
    // SAFETY: same contract as this function.
    unsafe { create("rmm_prefetch_adaptor_create", out, make) }
}
