//! `rmm_arena_create` and the arena's accessors.

use std::sync::Arc;

use super::status::{guard, non_null};
use super::{create, downcast, resource_of, rmm_resource_t, rmm_status_t, write_out};
use crate::mr::ArenaMemoryResource;

/// Creates an `arena_memory_resource` over `upstream`: a global arena of `arena_size` bytes
/// (0: half of the current device's free memory; else a multiple of 256) taken in one
/// upstream allocation, with per-thread and per-stream arenas for many threads. With
/// `dump_log_on_failure`, an allocation failure also logs the arena's state.
#[no_mangle]
pub unsafe extern "C" fn rmm_arena_create(
    upstream: rmm_resource_t,
    arena_size: usize,
    dump_log_on_failure: bool,
    out: *mut rmm_resource_t,
) -> rmm_status_t {
    let make = || {
        let up = resource_of(upstream)?;
        let size = (arena_size != 0).then_some(arena_size);
        Ok(Arc::new(ArenaMemoryResource::new(up, size, dump_log_on_failure)?) as _)
    };
    // SAFETY: same contract as this function.
    unsafe { create("rmm_arena_create", out, make) }
}

/// The size of the arena's global arena, and the bytes free in all of its arenas.
#[no_mangle]
pub unsafe extern "C" fn rmm_arena_get_sizes(
    arena: rmm_resource_t,
    arena_size: *mut usize,
    bytes_free: *mut usize,
) -> rmm_status_t {
    guard("rmm_arena_get_sizes", || {
        non_null(arena_size, "arena_size")?;
        non_null(bytes_free, "bytes_free")?;
        let r = resource_of(arena)?;
        let a = downcast::<ArenaMemoryResource>(&r, arena)?;
        // SAFETY: both checked non-null above.
        unsafe {
            write_out(arena_size, a.arena_size());
            write_out(bytes_free, a.bytes_free());
        }
        Ok(())
    })
}
