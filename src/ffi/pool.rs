//! `rmm_pool_create` and the pool's accessors.

use std::sync::Arc;

use super::status::{guard, non_null};
use super::{create, downcast, resource_of, rmm_resource_t, rmm_status_t, write_out};
use crate::mr::PoolMemoryResource;

/// What a pool holds (beyond hipMM: free-block count, largest block, fragmentation).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
#[allow(non_camel_case_types)]
pub struct rmm_pool_stats {
    /// Bytes taken from the upstream.
    pub pool_size: usize,
    /// The maximum pool size, 0 when unbounded.
    pub maximum_pool_size: usize,
    /// Bytes free in the pool (all streams).
    pub bytes_free: usize,
    /// Number of free blocks.
    pub free_block_count: usize,
    /// Size of the largest free block.
    pub largest_free_block: usize,
    /// 1 − largest free block / bytes free (0 when nothing is free).
    pub fragmentation: f64,
}

/// Creates a `pool_memory_resource` over `upstream`: `initial_pool_size` bytes now, growing
/// on demand up to `maximum_pool_size` (0: no maximum). Both must be multiples of 256.
#[no_mangle]
pub unsafe extern "C" fn rmm_pool_create(
    upstream: rmm_resource_t,
    initial_pool_size: usize,
    maximum_pool_size: usize,
    out: *mut rmm_resource_t,
) -> rmm_status_t {
    let make = || {
        let up = resource_of(upstream)?;
        let max = (maximum_pool_size != 0).then_some(maximum_pool_size);
        Ok(Arc::new(PoolMemoryResource::new(up, initial_pool_size, max)?) as _)
    };
    // SAFETY: same contract as this function.
    unsafe { create("rmm_pool_create", out, make) }
}

/// The pool's size and free-memory statistics.
#[no_mangle]
pub unsafe extern "C" fn rmm_pool_get_stats(
    pool: rmm_resource_t,
    stats: *mut rmm_pool_stats,
) -> rmm_status_t {
    guard("rmm_pool_get_stats", || {
        non_null(stats, "stats")?;
        let r = resource_of(pool)?;
        let p = downcast::<PoolMemoryResource>(&r, pool)?;
        // One pass: the fields agree with each other while other threads use the pool.
        let free = p.free_summary();
        let s = rmm_pool_stats {
            pool_size: p.pool_size(),
            maximum_pool_size: p.maximum_pool_size().unwrap_or(0),
            bytes_free: free.bytes_free,
            free_block_count: free.free_block_count,
            largest_free_block: free.largest_free_block,
            fragmentation: free.fragmentation(),
        };
        // SAFETY: checked non-null above.
        unsafe { write_out(stats, s) };
        Ok(())
    })
}

/// Returns upstream blocks that are entirely free; `released` (nullable) gets the bytes.
#[no_mangle]
pub unsafe extern "C" fn rmm_pool_release(
    pool: rmm_resource_t,
    released: *mut usize,
) -> rmm_status_t {
    guard("rmm_pool_release", || {
        let r = resource_of(pool)?;
        let bytes = downcast::<PoolMemoryResource>(&r, pool)?.release()?;
        if !released.is_null() {
            // SAFETY: checked non-null; writable by contract.
            unsafe { write_out(released, bytes) };
        }
        Ok(())
    })
}
