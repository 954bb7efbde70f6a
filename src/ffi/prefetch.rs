//! `rmm_prefetch_adaptor_create` and `rmm_prefetch`.

use std::ffi::c_void;
use std::sync::Arc;

use super::status::guard;
use super::{create, resource_of, rmm_resource_t, rmm_status_t, rmm_stream_t, stream_of};
use crate::mr::PrefetchResourceAdaptor;

/// Prefetches `bytes` at `ptr` to `device` (-1, CUDA's `cudaCpuDeviceId`: the host),
/// ordered on `stream`: RMM's `rmm::prefetch` (`cudaMemPrefetchAsync` /
/// `hipMemPrefetchAsync`). A hint, as in RMM: memory that is not managed (the runtime
/// answers "invalid value") is left where it is and the call succeeds, as it does for a
/// NULL pointer or zero bytes. `RMM_STATUS_INVALID_ARGUMENT` for a device below -1,
/// `RMM_STATUS_UNSUPPORTED` when the runtime cannot prefetch at all,
/// `RMM_STATUS_RUNTIME_ERROR` for other runtime failures (a device out of range, a
/// destroyed stream). The memory is not accessed by this call.
#[no_mangle]
pub extern "C" fn rmm_prefetch(
    ptr: *const c_void,
    bytes: usize,
    device: i32,
    stream: rmm_stream_t,
) -> rmm_status_t {
    guard("rmm_prefetch", || {
        crate::device::prefetch(ptr, bytes, device, stream_of(stream))
    })
}

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
