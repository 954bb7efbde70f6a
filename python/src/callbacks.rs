//! Resources that call Python: `callback_create` (allocate and deallocate are Python
//! callables) and `failure_callback_create` (a Python callable decides whether a failed
//! allocation is retried). An exception raised by a callable reaches the caller of the C call
//! that made it (`errors::set_pending`).

use std::ffi::{c_void, CString};

use pyo3::exceptions::{PyMemoryError, PyTypeError};
use pyo3::prelude::*;

use crate::errors::{out, quick, set_pending};
use crate::handles::ResourceHandle;
use crate::sys::{self, rmm_resource_t, rmm_status_t, rmm_stream_t};

struct Callbacks {
    allocate: PyObject,
    deallocate: PyObject,
}

fn interpreter_alive() -> bool {
    unsafe { pyo3::ffi::Py_IsInitialized() != 0 }
}

/// Sets librmm.so's error message for a failing callback on this thread.
fn set_error_message(message: &str) {
    let msg =
        CString::new(message).unwrap_or_else(|_| CString::new("Python callback raised").unwrap());
    unsafe { sys::rmm_callback_set_error_message(msg.as_ptr()) };
}

fn fail_with(py: Python<'_>, err: PyErr) -> rmm_status_t {
    set_error_message(&format!("Python callback raised {}", err.value(py)));
    set_pending(err);
    sys::RMM_STATUS_CALLBACK_FAILED
}

extern "C" fn cb_allocate(
    ctx: *mut c_void,
    bytes: usize,
    s: rmm_stream_t,
    out: *mut *mut c_void,
) -> rmm_status_t {
    if !interpreter_alive() {
        return sys::RMM_STATUS_CALLBACK_FAILED;
    }
    let cbs = unsafe { &*(ctx as *const Callbacks) };
    Python::with_gil(|py| {
        let r = cbs.allocate.call1(py, (bytes, s as usize)).and_then(|v| {
            v.extract::<usize>(py).map_err(|_| {
                PyTypeError::new_err("the allocate callback must return the pointer as an int")
            })
        });
        match r {
            Ok(p) => {
                if p == 0 && bytes != 0 {
                    set_error_message("the allocate callback returned a null pointer");
                    return sys::RMM_STATUS_BAD_ALLOC;
                }
                unsafe { *out = p as *mut c_void };
                sys::RMM_STATUS_SUCCESS
            }
            // A MemoryError is the resource running out: reported as such, a
            // failure-callback adaptor above retries it (RMM 26.06's own tests rely on it).
            Err(e) if e.is_instance_of::<PyMemoryError>(py) => {
                fail_with(py, e);
                sys::RMM_STATUS_OUT_OF_MEMORY
            }
            Err(e) => fail_with(py, e),
        }
    })
}

extern "C" fn cb_deallocate(
    ctx: *mut c_void,
    ptr: *mut c_void,
    bytes: usize,
    s: rmm_stream_t,
) -> rmm_status_t {
    if !interpreter_alive() {
        return sys::RMM_STATUS_SUCCESS;
    }
    let cbs = unsafe { &*(ctx as *const Callbacks) };
    Python::with_gil(|py| {
        if let Err(e) = cbs.deallocate.call1(py, (ptr as usize, bytes, s as usize)) {
            e.write_unraisable(py, None);
        }
        sys::RMM_STATUS_SUCCESS
    })
}

extern "C" fn cb_destroy(ctx: *mut c_void) {
    let cbs = unsafe { Box::from_raw(ctx as *mut Callbacks) };
    if interpreter_alive() {
        Python::with_gil(|_py| drop(cbs));
    } else {
        std::mem::forget(cbs);
    }
}

/// A resource whose allocate(size, stream) and deallocate(ptr, size, stream) are Python
/// callables (stream as an int handle); an exception raised by allocate reaches the caller.
#[pyfunction]
fn callback_create(
    py: Python<'_>,
    allocate: PyObject,
    deallocate: PyObject,
) -> PyResult<ResourceHandle> {
    if !allocate.bind(py).is_callable() || !deallocate.bind(py).is_callable() {
        return Err(PyTypeError::new_err(
            "allocate_func and deallocate_func must be callable",
        ));
    }
    let ctx = Box::into_raw(Box::new(Callbacks {
        allocate,
        deallocate,
    })) as *mut c_void;
    let vtable = sys::rmm_callback_vtable {
        allocate: Some(cb_allocate),
        deallocate: Some(cb_deallocate),
        destroy: Some(cb_destroy),
    };
    quick(py, || {
        out(|o| unsafe { sys::rmm_callback_create_with_vtable(&vtable, ctx, o) })
    })
    .map(ResourceHandle::from_raw)
}

extern "C" fn cb_failure(bytes: usize, arg: *mut c_void) -> bool {
    if !interpreter_alive() {
        return false;
    }
    let f = unsafe { &*(arg as *const PyObject) };
    Python::with_gil(
        |py| match f.call1(py, (bytes,)).and_then(|v| v.is_truthy(py)) {
            Ok(b) => b,
            Err(e) => {
                // No retry; the allocation's caller gets the exception (as in RMM).
                set_pending(e);
                false
            }
        },
    )
}

/// A failure-callback adaptor calling `callback(nbytes) -> bool`. The callable is kept by
/// the returned capsule-like `FailureCallbackKeeper`, which must outlive the adaptor.
#[pyclass(module = "rmm._ffi", frozen)]
struct FailureCallbackKeeper {
    callback: Box<PyObject>,
}

#[pyfunction]
fn failure_callback_create(
    py: Python<'_>,
    upstream: &ResourceHandle,
    callback: PyObject,
) -> PyResult<(ResourceHandle, FailureCallbackKeeper)> {
    if !callback.bind(py).is_callable() {
        return Err(PyTypeError::new_err("callback must be callable"));
    }
    let keeper = FailureCallbackKeeper {
        callback: Box::new(callback),
    };
    let arg = &*keeper.callback as *const PyObject as *mut c_void;
    let h = upstream.query(py, |u, o: &mut rmm_resource_t| unsafe {
        sys::rmm_failure_callback_adaptor_create(u, Some(cb_failure), arg, o)
    })?;
    Ok((ResourceHandle::from_raw(h), keeper))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<FailureCallbackKeeper>()?;
    add_functions!(m, callback_create, failure_callback_create);
    Ok(())
}
