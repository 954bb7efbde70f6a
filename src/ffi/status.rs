//! Status codes, the thread-local last error message, and the panic guard of every
//! exported function.

use std::cell::RefCell;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::error::Error;

/// Result of every fallible C function. Numbers are stable and never reused.
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum rmm_status_t {
    /// The call succeeded; outputs were written.
    RMM_STATUS_SUCCESS = 0,
    /// A bad argument (NULL, released handle, out-of-range value); nothing changed.
    RMM_STATUS_INVALID_ARGUMENT = 1,
    /// Not enough memory for the request (hipMM's `out_of_memory`).
    RMM_STATUS_OUT_OF_MEMORY = 2,
    /// An allocation failed for another reason (hipMM's `bad_alloc`).
    RMM_STATUS_BAD_ALLOC = 3,
    /// A GPU runtime call failed (hipMM's `cuda_error`).
    RMM_STATUS_RUNTIME_ERROR = 4,
    /// No usable GPU runtime or device; `RMM_RUNTIME=host` selects the host emulation.
    RMM_STATUS_NO_RUNTIME = 5,
    /// The runtime or device lacks a feature the call needs.
    RMM_STATUS_UNSUPPORTED = 6,
    /// A user callback reported a failure.
    RMM_STATUS_CALLBACK_FAILED = 7,
    /// An internal error (a Rust panic) was caught at the boundary.
    RMM_STATUS_PANIC = 8,
}

use rmm_status_t::*;

impl rmm_status_t {
    /// The status that reports `e` to C.
    pub fn of(e: &Error) -> Self {
        match e {
            Error::OutOfMemory { .. } => RMM_STATUS_OUT_OF_MEMORY,
            Error::BadAlloc { .. } => RMM_STATUS_BAD_ALLOC,
            Error::Runtime { .. } => RMM_STATUS_RUNTIME_ERROR,
            Error::NoRuntime(_) => RMM_STATUS_NO_RUNTIME,
            Error::InvalidArgument(_) => RMM_STATUS_INVALID_ARGUMENT,
            Error::Unsupported(_) => RMM_STATUS_UNSUPPORTED,
            Error::Callback(_) => RMM_STATUS_CALLBACK_FAILED,
        }
    }

    /// The fixed description of a status.
    pub fn description(status: u32) -> &'static str {
        match status {
            0 => "success\0",
            1 => "invalid argument\0",
            2 => "out of memory\0",
            3 => "allocation failed\0",
            4 => "GPU runtime error\0",
            5 => "no usable GPU runtime (set RMM_RUNTIME=host for the host emulation)\0",
            6 => "unsupported by this runtime or device\0",
            7 => "a user callback failed\0",
            8 => "internal error (panic caught at the C boundary)\0",
            _ => "unknown status code\0",
        }
    }
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
    /// The runtime's error code behind the last failure (0: not a runtime failure).
    static LAST_RUNTIME_CODE: std::cell::Cell<i32> = const { std::cell::Cell::new(0) };
}

/// The runtime's error code behind this thread's last failure (0 when it was not a runtime
/// failure, or the runtime gave no code of its own).
pub(crate) fn last_runtime_code() -> i32 {
    LAST_RUNTIME_CODE.with(|c| c.get())
}

/// Stores `msg` as this thread's last error message.
pub(crate) fn set_last_error(msg: String) {
    let c = CString::new(msg).unwrap_or_else(|e| {
        let mut bytes = e.into_vec();
        bytes.retain(|b| *b != 0);
        CString::new(bytes).expect("NUL bytes removed")
    });
    LAST_ERROR.with(|l| *l.borrow_mut() = c);
}

/// Pointer to this thread's last error message (valid until the next failure on the thread).
pub(crate) fn last_error_ptr() -> *const c_char {
    LAST_ERROR.with(|l| l.borrow().as_ptr())
}

/// Runs the body of exported function `name`: errors become a status and a message naming
/// the function; a panic never crosses into C.
#[inline(always)]
pub(crate) fn guard(name: &'static str, body: impl FnOnce() -> Result<(), Error>) -> rmm_status_t {
    // The success path is a call and a compare; reporting is out of line, so that the hot
    // calls (allocate, deallocate) carry none of its code or stack.
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => RMM_STATUS_SUCCESS,
        Ok(Err(e)) => failed(name, e),
        Err(panic) => panicked(name, panic),
    }
}

/// The status of error `e` from exported function `name`, stored as the thread's last error.
#[cold]
#[inline(never)]
fn failed(name: &'static str, e: Error) -> rmm_status_t {
    let status = rmm_status_t::of(&e);
    let code = match &e {
        // Negative codes are rmm-rs's own (a missing entry point), not the runtime's.
        Error::Runtime { source, .. } => source.code.max(0),
        _ => 0,
    };
    LAST_RUNTIME_CODE.with(|c| c.set(code));
    set_last_error(format!("{name}: {e}"));
    status
}

/// The status of a panic in exported function `name`, stored as the thread's last error.
#[cold]
#[inline(never)]
fn panicked(name: &'static str, panic: Box<dyn std::any::Any + Send>) -> rmm_status_t {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    LAST_RUNTIME_CODE.with(|c| c.set(0));
    set_last_error(format!(
        "{name}: internal error: {what} (please report this as a bug)"
    ));
    RMM_STATUS_PANIC
}

/// Fails with a message naming `arg` when a required pointer argument is NULL.
pub(crate) fn non_null<T>(ptr: *const T, arg: &str) -> Result<(), Error> {
    if ptr.is_null() {
        Err(Error::invalid(format!("`{arg}` is NULL")))
    } else {
        Ok(())
    }
}
