//! Streams, and copies, fills and prefetches ordered on them. Streams and addresses travel as
//! integers (`cudaStream_t` / `hipStream_t` handles, host or device pointers).

use std::ffi::c_void;

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors::{call, check, out, Failure};
use crate::sys::{self, rmm_status_t, rmm_stream_t};

#[pyfunction]
#[pyo3(signature = (flags=0))]
fn stream_create(py: Python<'_>, flags: u32) -> PyResult<usize> {
    call(py, move || {
        out(|s| unsafe { sys::rmm_stream_create(flags, s) }).map(|s| s as usize)
    })
}

#[pyfunction]
fn stream_destroy(py: Python<'_>, stream: usize) -> PyResult<()> {
    call(py, move || {
        check(unsafe { sys::rmm_stream_destroy(stream as rmm_stream_t) })
    })
}

/// Waits for the work on `stream`.
fn synchronize_stream(stream: usize) -> Result<(), Failure> {
    check(unsafe { sys::rmm_stream_synchronize(stream as rmm_stream_t) })
}

#[pyfunction]
fn stream_synchronize(py: Python<'_>, stream: usize) -> PyResult<()> {
    call(py, move || synchronize_stream(stream))
}

#[pyfunction]
fn stream_query(py: Python<'_>, stream: usize) -> PyResult<bool> {
    call(py, move || {
        out(|done| unsafe { sys::rmm_stream_query(stream as rmm_stream_t, done) })
    })
}

/// Enqueues a copy of `size` bytes from `src` to `dst` on `stream`.
fn memcpy_async(dst: usize, src: usize, size: usize, stream: usize) -> rmm_status_t {
    unsafe {
        sys::rmm_memcpy_async(
            dst as *mut c_void,
            src as *const c_void,
            size,
            stream as rmm_stream_t,
        )
    }
}

/// Enqueues setting `size` bytes at `dst` to `value` on `stream`.
fn memset_async(dst: usize, value: i32, size: usize, stream: usize) -> rmm_status_t {
    unsafe { sys::rmm_memset_async(dst as *mut c_void, value, size, stream as rmm_stream_t) }
}

/// Checks the status of work just enqueued on `stream`, then waits for the stream when
/// `synchronize`.
fn enqueued(status: rmm_status_t, stream: usize, synchronize: bool) -> Result<(), Failure> {
    check(status)?;
    if synchronize {
        synchronize_stream(stream)?;
    }
    Ok(())
}

/// `#[pyfunction]`s `name(dst, arg, size, stream=0, synchronize=true)` that enqueue
/// `op(dst, arg, size, stream)` on `stream` (nothing for 0 bytes), then wait for the stream
/// when `synchronize`; the GIL is released.
macro_rules! stream_ordered {
    ($($(#[$attr:meta])* fn $name:ident($arg:ident: $t:ty) = $op:ident;)+) => {$(
        #[pyfunction]
        #[pyo3(signature = (dst, $arg, size, stream=0, synchronize=true))]
        $(#[$attr])*
        fn $name(
            py: Python<'_>,
            dst: usize,
            $arg: $t,
            size: usize,
            stream: usize,
            synchronize: bool,
        ) -> PyResult<()> {
            if size == 0 {
                return Ok(());
            }
            call(py, move || enqueued($op(dst, $arg, size, stream), stream, synchronize))
        }
    )+};
}

stream_ordered! {
    /// Copies `size` bytes from `src` to `dst` (host or device addresses) on `stream`, then
    /// waits for the stream when `synchronize`.
    fn memcpy(src: usize) = memcpy_async;
    fn memset(value: i32) = memset_async;
}

/// Copies `size` bytes at host address `src` into a new `bytes` (after waiting for `stream`).
#[pyfunction]
#[pyo3(signature = (src, size, stream=0))]
fn read_bytes(py: Python<'_>, src: usize, size: usize, stream: usize) -> PyResult<PyObject> {
    let mut buf = vec![0u8; size];
    let dst = buf.as_mut_ptr() as usize;
    if size > 0 {
        call(py, move || {
            enqueued(memcpy_async(dst, src, size, stream), stream, true)
        })?;
    }
    Ok(PyBytes::new(py, &buf).into_any().unbind())
}

/// Prefetches `size` bytes at `ptr` to `device` (-1: the host) on `stream`; a no-op for
/// memory that is not managed.
#[pyfunction]
#[pyo3(signature = (ptr, size, device, stream=0))]
fn prefetch(py: Python<'_>, ptr: usize, size: usize, device: i32, stream: usize) -> PyResult<()> {
    call(py, move || {
        check(unsafe {
            sys::rmm_prefetch(ptr as *const c_void, size, device, stream as rmm_stream_t)
        })
    })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(
        m,
        stream_create,
        stream_destroy,
        stream_synchronize,
        stream_query,
        memcpy,
        memset,
        read_bytes,
        prefetch,
    );
    Ok(())
}
