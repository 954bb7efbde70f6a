//! What the statistics and tracking adaptors counted.

use std::ffi::c_char;

use pyo3::prelude::*;

use crate::errors::{check, cstr, quick};
use crate::handles::ResourceHandle;
use crate::sys::{self, rmm_resource_t, rmm_statistics_counters, rmm_status_t};

type CounterTuple = (i64, i64, i64, i64, i64, i64);

/// The counters that `f` (one of `rmm_statistics_adaptor_{get,push,pop}_counters`) writes for
/// `mr`, as (current_bytes, current_count, peak_bytes, peak_count, total_bytes, total_count).
fn counters(
    py: Python<'_>,
    mr: &ResourceHandle,
    f: unsafe extern "C" fn(rmm_resource_t, *mut rmm_statistics_counters) -> rmm_status_t,
) -> PyResult<CounterTuple> {
    let c = mr.query(py, |r, c| unsafe { f(r, c) })?;
    Ok((
        c.bytes.value,
        c.allocations.value,
        c.bytes.peak,
        c.allocations.peak,
        c.bytes.total,
        c.allocations.total,
    ))
}

#[pyfunction]
fn statistics_counters(py: Python<'_>, mr: &ResourceHandle) -> PyResult<CounterTuple> {
    counters(py, mr, sys::rmm_statistics_adaptor_get_counters)
}

#[pyfunction]
fn statistics_push(py: Python<'_>, mr: &ResourceHandle) -> PyResult<CounterTuple> {
    counters(py, mr, sys::rmm_statistics_adaptor_push_counters)
}

#[pyfunction]
fn statistics_pop(py: Python<'_>, mr: &ResourceHandle) -> PyResult<CounterTuple> {
    counters(py, mr, sys::rmm_statistics_adaptor_pop_counters)
}

queries! {
    fn tracking_allocated_bytes(mr) -> usize = rmm_tracking_adaptor_get_allocated_bytes;
    fn tracking_outstanding_count(mr) -> usize = rmm_tracking_adaptor_get_outstanding_count;
}

#[pyfunction]
fn tracking_outstanding_string(py: Python<'_>, mr: &ResourceHandle) -> PyResult<String> {
    let p = mr.raw()? as rmm_resource_t;
    quick(py, || loop {
        let mut needed = 0usize;
        check(unsafe {
            sys::rmm_tracking_adaptor_outstanding_allocations_string(
                p,
                std::ptr::null_mut(),
                0,
                &mut needed,
            )
        })?;
        let mut buf = vec![0u8; needed.max(1)];
        let mut again = 0usize;
        check(unsafe {
            sys::rmm_tracking_adaptor_outstanding_allocations_string(
                p,
                buf.as_mut_ptr() as *mut c_char,
                buf.len(),
                &mut again,
            )
        })?;
        if again <= buf.len() {
            return Ok(cstr(buf.as_ptr() as *const c_char));
        }
    })
}

#[pyfunction]
fn tracking_log_outstanding(py: Python<'_>, mr: &ResourceHandle) -> PyResult<()> {
    let p = mr.raw()? as rmm_resource_t;
    quick(py, || {
        check(unsafe { sys::rmm_tracking_adaptor_log_outstanding_allocations(p) })
    })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(
        m,
        statistics_counters,
        statistics_push,
        statistics_pop,
        tracking_allocated_bytes,
        tracking_outstanding_count,
        tracking_outstanding_string,
        tracking_log_outstanding,
    );
    Ok(())
}
