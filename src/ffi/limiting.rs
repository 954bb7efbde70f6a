//! `rmm_limiting_adaptor_create` and its accessors.

use std::sync::Arc;

use super::status::{guard, non_null};
use super::{create, downcast, resource_of, rmm_resource_t, rmm_status_t, write_out};
use crate::mr::LimitingResourceAdaptor;

/// Creates a `limiting_resource_adaptor` over `upstream` allowing `allocation_limit` bytes
/// outstanding, each request counted rounded up to `alignment` (a power of two; hipMM's
/// default is 256). A limit of 0 is allowed: every non-empty allocation then fails with
/// `RMM_STATUS_OUT_OF_MEMORY`.
#[no_mangle]
pub unsafe extern "C" fn rmm_limiting_adaptor_create(
    upstream: rmm_resource_t,
    allocation_limit: usize,
    alignment: usize,
    out: *mut rmm_resource_t,
) -> rmm_status_t {
    let make = || {
        let up = resource_of(upstream)?;
        Ok(Arc::new(LimitingResourceAdaptor::new(
            up,
            allocation_limit,
            alignment,
        )?) as _)
    };
    // SAFETY: same contract as this function.
    unsafe { create("rmm_limiting_adaptor_create", out, make) }
}

/// Bytes currently allocated through a limiting adaptor (rounded up to its alignment).
#[no_mangle]
pub unsafe extern "C" fn rmm_limiting_adaptor_get_allocated_bytes(
    adaptor: rmm_resource_t,
    bytes: *mut usize,
) -> rmm_status_t {
    guard("rmm_limiting_adaptor_get_allocated_bytes", || {
        non_null(bytes, "bytes")?;
        let r = resource_of(adaptor)?;
        let v = downcast::<LimitingResourceAdaptor>(&r, adaptor)?.allocated_bytes();
        // SAFETY: checked non-null above.
        unsafe { write_out(bytes, v) };
        Ok(())
    })
}

/// The allocation limit of a limiting adaptor.
#[no_mangle]
pub unsafe extern "C" fn rmm_limiting_adaptor_get_allocation_limit(
    adaptor: rmm_resource_t,
    limit: *mut usize,
) -> rmm_status_t {
    guard("rmm_limiting_adaptor_get_allocation_limit", || {
        non_null(limit, "limit")?;
        let r = resource_of(adaptor)?;
        let v = downcast::<LimitingResourceAdaptor>(&r, adaptor)?.allocation_limit();
        // SAFETY: checked non-null above.
        unsafe { write_out(limit, v) };
        Ok(())
    })
}
