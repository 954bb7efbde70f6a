//! C failures as Python exceptions, and the helpers every binding makes its C calls with:
//! `check` reads a status, `out` an out-parameter, `call` runs C code with the GIL released
//! and `quick` with it held.

use std::cell::RefCell;
use std::ffi::{c_char, CStr, CString};

use pyo3::exceptions::{
    PyKeyboardInterrupt, PyMemoryError, PyRuntimeError, PySystemExit, PyValueError,
};
use pyo3::prelude::*;

use crate::sys::{self, rmm_status_t};

/// A failure read right after the C call, on the thread that made it.
pub(crate) struct Failure {
    status: rmm_status_t,
    message: String,
    /// The GPU runtime's error code behind the failure (0: not a runtime failure).
    runtime_code: i32,
}

thread_local! {
    /// The Python exception raised by a Python callback that the C call in progress made.
    static PENDING: RefCell<Option<PyErr>> = const { RefCell::new(None) };
}

/// Keeps `err`, raised by a Python callback, for the caller of the C call in progress.
pub(crate) fn set_pending(err: PyErr) {
    PENDING.with(|p| *p.borrow_mut() = Some(err));
}

/// The text of a C string ("" for NULL).
pub(crate) fn cstr(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// `s` as a C string; `ValueError(message)` when it holds a NUL character.
pub(crate) fn c_string(s: &str, message: &'static str) -> PyResult<CString> {
    CString::new(s).map_err(|_| PyValueError::new_err(message))
}

pub(crate) fn check(status: rmm_status_t) -> Result<(), Failure> {
    if status == sys::RMM_STATUS_SUCCESS {
        Ok(())
    } else {
        let detail = cstr(unsafe { sys::rmm_last_error_message() });
        let text = cstr(unsafe { sys::rmm_status_string(status) });
        let message = if detail.is_empty() { text } else { detail };
        let runtime_code = unsafe { sys::rmm_last_error_runtime_code() };
        Err(Failure {
            status,
            message,
            runtime_code,
        })
    }
}

/// `check` for an allocation: a runtime call that failed while allocating is RMM's
/// `bad_alloc` (RMM_CUDA_TRY_ALLOC), which Python code catches as MemoryError, not a
/// cuda_error; the message keeps the runtime's error.
pub(crate) fn check_allocation(status: rmm_status_t) -> Result<(), Failure> {
    check(status).map_err(|mut f| {
        if f.status == sys::RMM_STATUS_RUNTIME_ERROR {
            f.status = sys::RMM_STATUS_BAD_ALLOC;
        }
        f
    })
}

/// What a C function writes through an out-parameter, and the value it starts from.
pub(crate) trait Out {
    fn empty() -> Self;
}

macro_rules! out_by_default {
    ($($t:ty),+) => {$(
        impl Out for $t {
            fn empty() -> Self {
                Default::default()
            }
        }
    )+};
}

out_by_default!(
    bool,
    i32,
    u64,
    usize,
    sys::rmm_pool_stats,
    sys::rmm_vmm_pool_stats,
    sys::rmm_statistics_counters
);

impl<T> Out for *mut T {
    fn empty() -> Self {
        std::ptr::null_mut()
    }
}

impl<T> Out for *const T {
    fn empty() -> Self {
        std::ptr::null()
    }
}

/// Calls `f` with an out-parameter; what it wrote there, when it succeeded.
pub(crate) fn out<T: Out>(f: impl FnOnce(&mut T) -> rmm_status_t) -> Result<T, Failure> {
    let mut value = T::empty();
    check(f(&mut value))?;
    Ok(value)
}

/// The exception a Python callback's `err` becomes for the caller, as in RMM's Cython
/// wrappers: a MemoryError or a RuntimeError as it is, anything else a RuntimeError (here
/// `CallbackError`, chained to it) with its message. KeyboardInterrupt and SystemExit pass
/// through, so that Ctrl-C still stops the program.
fn from_callback(py: Python<'_>, err: PyErr) -> PyErr {
    let value = err.value(py);
    if value.is_instance_of::<PyMemoryError>()
        || value.is_instance_of::<PyRuntimeError>()
        || value.is_instance_of::<PyKeyboardInterrupt>()
        || value.is_instance_of::<PySystemExit>()
    {
        return err;
    }
    let message = value
        .str()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    match py
        .import("rmm._exceptions")
        .and_then(|m| m.getattr("CallbackError"))
        .and_then(|cls| cls.call1((sys::RMM_STATUS_CALLBACK_FAILED, message)))
    {
        Ok(exc) => {
            let wrapped = PyErr::from_value(exc);
            wrapped.set_cause(py, Some(err));
            wrapped
        }
        Err(e) => e,
    }
}

fn to_pyerr(py: Python<'_>, f: Failure) -> PyErr {
    if let Some(err) = PENDING.with(|p| p.borrow_mut().take()) {
        return from_callback(py, err);
    }
    let class = match f.status {
        sys::RMM_STATUS_INVALID_ARGUMENT => "InvalidArgumentError",
        sys::RMM_STATUS_OUT_OF_MEMORY => "OutOfMemoryError",
        sys::RMM_STATUS_BAD_ALLOC => "BadAllocError",
        sys::RMM_STATUS_RUNTIME_ERROR => "CUDAError",
        sys::RMM_STATUS_NO_RUNTIME => "NoRuntimeError",
        sys::RMM_STATUS_UNSUPPORTED => "UnsupportedError",
        sys::RMM_STATUS_CALLBACK_FAILED => "CallbackError",
        _ => "RMMError",
    };
    match py
        .import("rmm._exceptions")
        .and_then(|m| m.getattr(class))
        .and_then(|cls| cls.call1((f.status, f.message.clone())))
        .and_then(|exc| {
            // The runtime's own code (cudaError_t), for rmm._cuda.gpu's CUDARuntimeError.
            exc.setattr("runtime_code", f.runtime_code)?;
            Ok(exc)
        }) {
        Ok(exc) => PyErr::from_value(exc),
        Err(e) => e,
    }
}

/// Runs a C call with the GIL released; failures become Python exceptions.
pub(crate) fn call<T: Send>(
    py: Python<'_>,
    f: impl FnOnce() -> Result<T, Failure> + Send,
) -> PyResult<T> {
    PENDING.with(|p| p.borrow_mut().take());
    py.allow_threads(f).map_err(|e| to_pyerr(py, e))
}

/// Runs a quick C call with the GIL held.
pub(crate) fn quick<T>(py: Python<'_>, f: impl FnOnce() -> Result<T, Failure>) -> PyResult<T> {
    f().map_err(|e| to_pyerr(py, e))
}
