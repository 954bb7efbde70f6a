//! `rmm_vmm_pool_create` and the accessors of the pool on virtual memory.

use std::sync::Arc;

use super::status::{guard, non_null};
use super::{create, downcast, resource_of, rmm_resource_t, rmm_status_t, write_out};
use crate::error::Error;
use crate::mr::{VmmPoolMemoryResource, VmmPoolOptions};

/// How `rmm_vmm_pool_create` makes the pool; `rmm_vmm_pool_options_init` fills in the
/// defaults. Sizes are bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
#[allow(non_camel_case_types)]
pub struct rmm_vmm_pool_options {
    /// Mapped at once (rounded up to the granularity); 0: grow on demand.
    pub initial_pool_size: usize,
    /// The most mapped at once; 0: the reservation.
    pub maximum_pool_size: usize,
    /// Address space reserved; 0: twice the device's memory (or the maximum if larger).
    pub reserved_size: usize,
    /// Bytes per mapping, a multiple of the device's minimum granularity; 0: the
    /// device's recommended granularity.
    pub granularity: usize,
    /// Free bytes kept mapped: above it a free unmaps what idle streams freed;
    /// `SIZE_MAX`: keep everything until `rmm_vmm_pool_release`.
    pub release_threshold: usize,
    /// Devices given access besides the pool's own (nullable when the count is 0).
    pub peer_devices: *const i32,
    /// Number of entries in `peer_devices`.
    pub peer_device_count: usize,
}

/// What the pool holds.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
#[allow(non_camel_case_types)]
pub struct rmm_vmm_pool_stats {
    /// Bytes mapped now.
    pub pool_size: usize,
    /// The most bytes mapped at once: the maximum given (whole granules), else the
    /// reservation.
    pub maximum_pool_size: usize,
    /// Bytes of address space reserved.
    pub reserved_size: usize,
    /// Bytes per mapping.
    pub granularity: usize,
    /// Bytes mapped and not allocated (all streams).
    pub bytes_free: usize,
    /// Number of free blocks.
    pub free_block_count: usize,
    /// Size of the largest free block.
    pub largest_free_block: usize,
    /// 1 − largest free block / bytes free (0 when nothing is free).
    pub fragmentation: f64,
}

/// Fills `options` with the defaults (grow on demand, no maximum, default reservation and
/// granularity, no release threshold, no peers).
#[no_mangle]
pub unsafe extern "C" fn rmm_vmm_pool_options_init(
    options: *mut rmm_vmm_pool_options,
) -> rmm_status_t {
    guard("rmm_vmm_pool_options_init", || {
        non_null(options, "options")?;
        let o = rmm_vmm_pool_options {
            initial_pool_size: 0,
            maximum_pool_size: 0,
            reserved_size: 0,
            granularity: 0,
            release_threshold: usize::MAX,
            peer_devices: std::ptr::null(),
            peer_device_count: 0,
        };
        // SAFETY: checked non-null; writable by contract.
        unsafe { write_out(options, o) };
        Ok(())
    })
}

/// Creates a `vmm_pool_memory_resource` on the current device: a pool in one reserved range
/// of virtual memory that grows in place and unmaps free granules while blocks live.
/// `options` may be NULL for the defaults. `RMM_STATUS_UNSUPPORTED` where the device or
/// runtime has no virtual memory management.
#[no_mangle]
pub unsafe extern "C" fn rmm_vmm_pool_create(
    options: *const rmm_vmm_pool_options,
    out: *mut rmm_resource_t,
) -> rmm_status_t {
    let make = || {
        let mut o = VmmPoolOptions::default();
        if !options.is_null() {
            // SAFETY: non-null and readable by contract.
            let c = unsafe { options.read() };
            if c.peer_device_count > 0 && c.peer_devices.is_null() {
                return Err(Error::invalid(format!(
                    "rmm_vmm_pool_create: peer_devices is NULL with peer_device_count = {}",
                    c.peer_device_count
                )));
            }
            if c.peer_device_count > 4096 {
                return Err(Error::invalid(format!(
                    "rmm_vmm_pool_create: peer_device_count = {} is not a device count",
                    c.peer_device_count
                )));
            }
            o.initial_pool_size = c.initial_pool_size;
            o.maximum_pool_size = (c.maximum_pool_size != 0).then_some(c.maximum_pool_size);
            o.reserved_size = (c.reserved_size != 0).then_some(c.reserved_size);
            o.granularity = (c.granularity != 0).then_some(c.granularity);
            o.release_threshold =
                (c.release_threshold != usize::MAX).then_some(c.release_threshold);
            if c.peer_device_count > 0 {
                // SAFETY: non-null with that many readable entries, by contract.
                let peers =
                    unsafe { std::slice::from_raw_parts(c.peer_devices, c.peer_device_count) };
                o.peer_devices = peers.to_vec();
            }
        }
        Ok(Arc::new(VmmPoolMemoryResource::new(o)?) as _)
    };
    // SAFETY: same contract as this function.
    unsafe { create("rmm_vmm_pool_create", out, make) }
}

/// The pool's mapped, reserved and free memory.
#[no_mangle]
pub unsafe extern "C" fn rmm_vmm_pool_get_stats(
    pool: rmm_resource_t,
    stats: *mut rmm_vmm_pool_stats,
) -> rmm_status_t {
    guard("rmm_vmm_pool_get_stats", || {
        non_null(stats, "stats")?;
        let r = resource_of(pool)?;
        let p = downcast::<VmmPoolMemoryResource>(&r, pool)?;
        // One pass: the fields agree with each other while other threads use the pool.
        let free = p.free_summary();
        let s = rmm_vmm_pool_stats {
            pool_size: p.pool_size(),
            maximum_pool_size: p.maximum_pool_size().unwrap_or(p.reserved_size()),
            reserved_size: p.reserved_size(),
            granularity: p.granularity(),
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

/// Unmaps every whole free granule, wherever it lies (blocks around it stay live), after
/// the streams that freed them finished; `released` (nullable) gets the bytes.
#[no_mangle]
pub unsafe extern "C" fn rmm_vmm_pool_release(
    pool: rmm_resource_t,
    released: *mut usize,
) -> rmm_status_t {
    guard("rmm_vmm_pool_release", || {
        let r = resource_of(pool)?;
        let bytes = downcast::<VmmPoolMemoryResource>(&r, pool)?.release()?;
        if !released.is_null() {
            // SAFETY: checked non-null; writable by contract.
            unsafe { write_out(released, bytes) };
        }
        Ok(())
    })
}
