//! Pinned host allocation with an alignment, for the C++ `pinned_memory_resource`.

use std::ffi::c_void;

use super::status::{guard, non_null};
use super::{rmm_status_t, write_out};
use crate::mr::host::{pinned_host_allocate, pinned_host_deallocate};

/// Allocates `bytes` of pinned host memory aligned to `alignment` (a power of two, else
/// `RMM_STATUS_INVALID_ARGUMENT`) and writes it to `out` (NULL for 0 bytes). Alignments
/// above 256 are served by over-allocating.
#[no_mangle]
pub unsafe extern "C" fn rmm_pinned_host_allocate(
    bytes: usize,
    alignment: usize,
    out: *mut *mut c_void,
) -> rmm_status_t {
    guard("rmm_pinned_host_allocate", || {
        non_null(out, "out")?;
        let p = pinned_host_allocate(bytes, alignment)?;
        // SAFETY: checked non-null above.
        unsafe { write_out(out, p) };
        Ok(())
    })
}

/// Frees memory from `rmm_pinned_host_allocate` with the same `bytes` and `alignment`;
/// NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn rmm_pinned_host_deallocate(
    ptr: *mut c_void,
    bytes: usize,
    alignment: usize,
) -> rmm_status_t {
    guard("rmm_pinned_host_deallocate", || {
        pinned_host_deallocate(ptr, bytes, alignment)
    })
}
