//! The memory history and snapshots (`crate::history`) through the C ABI.

use std::ffi::{c_char, CStr};

use super::status::{guard, non_null};
use super::{rmm_status_t, write_out};
use crate::error::Error;

/// Starts recording allocation events (restarting forgets earlier ones): at most
/// `max_entries` are kept (0: the default, 100 000), the oldest dropped first; with
/// `stacks` non-zero each event keeps its host stack (symbols resolved when a snapshot is
/// written).
#[no_mangle]
pub extern "C" fn rmm_memory_history_enable(max_entries: usize, stacks: i32) -> rmm_status_t {
    guard("rmm_memory_history_enable", || {
        let max = if max_entries == 0 {
            crate::history::DEFAULT_MAX_ENTRIES
        } else {
            max_entries
        };
        crate::history::enable(max, stacks != 0)
    })
}

/// Stops recording and forgets the events.
#[no_mangle]
pub extern "C" fn rmm_memory_history_disable() -> rmm_status_t {
    guard("rmm_memory_history_disable", || {
        crate::history::disable();
        Ok(())
    })
}

/// Writes `*enabled` = 1 while recording, else 0.
#[no_mangle]
pub unsafe extern "C" fn rmm_memory_history_is_enabled(enabled: *mut i32) -> rmm_status_t {
    guard("rmm_memory_history_is_enabled", || {
        non_null(enabled, "enabled")?;
        // SAFETY: checked non-null; writable by contract.
        unsafe { write_out(enabled, i32::from(crate::history::enabled())) };
        Ok(())
    })
}

/// Writes a memory snapshot (JSON: the recorded events, the live allocations made while
/// recording, and every resource's segments with their blocks; `docs/memory-history.md`)
/// to the file `path` (UTF-8), replacing it. Works without recording too (segments only).
#[no_mangle]
pub unsafe extern "C" fn rmm_snapshot_write(path: *const c_char) -> rmm_status_t {
    guard("rmm_snapshot_write", || {
        non_null(path, "path")?;
        // SAFETY: non-null, NUL-terminated by contract.
        let p = unsafe { CStr::from_ptr(path) }
            .to_str()
            .map_err(|_| Error::invalid("rmm_snapshot_write: path is not UTF-8"))?;
        crate::history::write_snapshot(p)
    })
}
