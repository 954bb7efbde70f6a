//! What librmm.so records: the memory history written as snapshots, and its debug log.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::errors::{c_string, call, check, out, quick};
use crate::sys;

/// Starts recording allocation events (restarting forgets the earlier ones): at most
/// `max_entries` kept, the oldest dropped first; with `stacks`, each event keeps its native
/// host stack.
#[pyfunction]
#[pyo3(signature = (max_entries=100_000, stacks=false))]
fn memory_history_enable(py: Python<'_>, max_entries: usize, stacks: bool) -> PyResult<()> {
    if max_entries == 0 {
        return Err(PyValueError::new_err(
            "max_entries must be at least 1 (the number of events kept)",
        ));
    }
    quick(py, || {
        check(unsafe { sys::rmm_memory_history_enable(max_entries, i32::from(stacks)) })
    })
}

/// Stops recording and forgets the recorded events.
#[pyfunction]
fn memory_history_disable(py: Python<'_>) -> PyResult<()> {
    quick(py, || check(unsafe { sys::rmm_memory_history_disable() }))
}

/// Whether allocation events are being recorded.
#[pyfunction]
fn memory_history_is_enabled(py: Python<'_>) -> PyResult<bool> {
    quick(py, || {
        out(|on| unsafe { sys::rmm_memory_history_is_enabled(on) })
    })
    .map(|on: i32| on != 0)
}

/// Writes a memory snapshot (JSON) to the file `path`, replacing it.
#[pyfunction]
fn snapshot_write(py: Python<'_>, path: &str) -> PyResult<()> {
    let p = c_string(path, "path contains NUL")?;
    // Stack symbols are resolved here: the GIL is released while the file is written.
    call(py, move || {
        check(unsafe { sys::rmm_snapshot_write(p.as_ptr()) })
    })
}

// ---- the debug log -------------------------------------------------------------------------

#[pyfunction]
fn set_debug_log_level(py: Python<'_>, level: i32) -> PyResult<()> {
    quick(py, || check(unsafe { sys::rmm_set_debug_log_level(level) }))
}

#[pyfunction]
fn get_debug_log_level(py: Python<'_>) -> PyResult<i32> {
    quick(py, || out(|l| unsafe { sys::rmm_get_debug_log_level(l) }))
}

#[pyfunction]
fn debug_log(py: Python<'_>, level: i32, message: &str) -> PyResult<()> {
    let m = c_string(message, "message contains NUL")?;
    quick(py, || {
        check(unsafe { sys::rmm_debug_log(level, m.as_ptr()) })
    })
}

#[pyfunction]
fn debug_log_flush(py: Python<'_>) -> PyResult<()> {
    quick(py, || check(unsafe { sys::rmm_debug_log_flush() }))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(
        m,
        memory_history_enable,
        memory_history_disable,
        memory_history_is_enabled,
        snapshot_write,
        set_debug_log_level,
        get_debug_log_level,
        debug_log,
        debug_log_flush,
    );
    Ok(())
}
