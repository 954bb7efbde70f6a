//! `rmm_binning_create` and `rmm_binning_add_bin`.

use std::sync::Arc;

use super::status::guard;
use super::{create, downcast, resource_of, rmm_resource_t, rmm_status_t};
use crate::error::Error;
use crate::mr::BinningMemoryResource;

/// Creates a `binning_memory_resource` over `upstream` with fixed-size bins of
/// 2^`min_size_exponent` ..= 2^`max_size_exponent` bytes; pass -1 for both to start with
/// no bins. Larger requests go to `upstream`.
#[no_mangle]
pub unsafe extern "C" fn rmm_binning_create(
    upstream: rmm_resource_t,
    min_size_exponent: i32,
    max_size_exponent: i32,
    out: *mut rmm_resource_t,
) -> rmm_status_t {
    let make = || {
        let up = resource_of(upstream)?;
        let r = match (min_size_exponent, max_size_exponent) {
            (-1, -1) => BinningMemoryResource::new(up)?,
            (lo, hi) if lo >= 0 && hi >= 0 => {
                BinningMemoryResource::with_range(up, lo as u32, hi as u32)?
            }
            (lo, hi) => {
                return Err(Error::invalid(format!(
                    "rmm_binning_create: size exponents {lo} and {hi} must both be >= 0 \
                     (or both -1 for no bins)"
                )))
            }
        };
        Ok(Arc::new(r) as _)
    };
    // SAFETY: same contract as this function.
    unsafe { create("rmm_binning_create", out, make) }
}

/// Adds a bin for requests up to `allocation_size` bytes, served by `bin_resource` or, when
/// it is NULL, by a new fixed-size resource of that block size over the upstream.
#[no_mangle]
pub extern "C" fn rmm_binning_add_bin(
    binning: rmm_resource_t,
    allocation_size: usize,
    bin_resource: rmm_resource_t,
) -> rmm_status_t {
    guard("rmm_binning_add_bin", || {
        let r = resource_of(binning)?;
        let b = downcast::<BinningMemoryResource>(&r, binning)?;
        let bin = if bin_resource.is_null() {
            None
        } else {
            Some(resource_of(bin_resource)?)
        };
        b.add_bin(allocation_size, bin)
    })
}
