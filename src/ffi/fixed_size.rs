//! `rmm_fixed_size_create` and its accessor.

use std::sync::Arc;

use super::status::{guard, non_null};
use super::{create, downcast, resource_of, rmm_resource_t, rmm_status_t, write_out};
use crate::mr::{FixedSizeMemoryResource, DEFAULT_BLOCKS_TO_PREALLOCATE, DEFAULT_BLOCK_SIZE};

/// Creates a `fixed_size_memory_resource` over `upstream`: blocks of `block_size` bytes
/// (0: 1 MiB; rounded up to 256), taken `blocks_to_preallocate` at a time (0: 128).
/// Requests larger than a block fail.
#[no_mangle]
pub unsafe extern "C" fn rmm_fixed_size_create(
    upstream: rmm_resource_t,
    block_size: usize,
    blocks_to_preallocate: usize,
    out: *mut rmm_resource_t,
) -> rmm_status_t {
    let make = || {
        let up = resource_of(upstream)?;
        let bs = if block_size == 0 {
            DEFAULT_BLOCK_SIZE
        } else {
            block_size
        };
        let n = if blocks_to_preallocate == 0 {
            DEFAULT_BLOCKS_TO_PREALLOCATE
        } else {
            blocks_to_preallocate
        };
        Ok(Arc::new(FixedSizeMemoryResource::new(up, bs, n)?) as _)
    };
    // SAFETY: same contract as this function.
    unsafe { create("rmm_fixed_size_create", out, make) }
}

/// The block size of a fixed-size resource.
#[no_mangle]
pub unsafe extern "C" fn rmm_fixed_size_get_block_size(
    resource: rmm_resource_t,
    block_size: *mut usize,
) -> rmm_status_t {
    guard("rmm_fixed_size_get_block_size", || {
        non_null(block_size, "block_size")?;
        let r = resource_of(resource)?;
        let f = downcast::<FixedSizeMemoryResource>(&r, resource)?;
        // SAFETY: checked non-null above.
        unsafe { write_out(block_size, f.get_block_size()) };
        Ok(())
    })
}
