//! `rmm_logging_create*` (the event log adaptor) and the debug log's level and messages.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use super::status::{guard, non_null};
use super::{create, downcast, resource_of, rmm_resource_t, rmm_status_t, write_out};
use crate::error::Error;
use crate::logger::Level;
use crate::mr::LoggingResourceAdaptor;

fn path_arg(filename: *const c_char) -> Result<Option<PathBuf>, Error> {
    if filename.is_null() {
        return Ok(None);
    }
    // SAFETY: non-null; the caller passes a NUL-terminated string (module contract).
    let s = unsafe { CStr::from_ptr(filename) };
    let s = s.to_str().map_err(|_| {
        Error::invalid(format!(
            "`filename` is not valid UTF-8: {}",
            s.to_string_lossy()
        ))
    })?;
    Ok(Some(PathBuf::from(s)))
}

/// Creates a `logging_resource_adaptor` over `upstream` writing RMM's CSV event log to
/// `filename` (created or truncated); with `filename` NULL, to the file named by
/// `RMM_LOG_FILE` (an error when unset). `auto_flush` non-zero flushes every row.
#[no_mangle]
pub unsafe extern "C" fn rmm_logging_create(
    upstream: rmm_resource_t,
    filename: *const c_char,
    auto_flush: c_int,
    out: *mut rmm_resource_t,
) -> rmm_status_t {
    let make = || {
        let up = resource_of(upstream)?;
        let path = path_arg(filename)?;
        Ok(Arc::new(LoggingResourceAdaptor::new(
            up,
            path.as_deref(),
            auto_flush != 0,
        )?) as _)
    };
    // SAFETY: same contract as this function.
    unsafe { create("rmm_logging_create", out, make) }
}

/// Receives the event log's bytes: `len` bytes at `data`; `data` NULL (with `len` 0) asks
/// the receiver to flush. Called with one whole line (the header, then each row) as soon as
/// it is logged, one caller at a time; the receiver does its own buffering.
#[allow(non_camel_case_types)]
pub type rmm_log_write_fn =
    Option<unsafe extern "C" fn(data: *const c_char, len: usize, arg: *mut c_void)>;

struct CallbackWriter {
    write: unsafe extern "C" fn(*const c_char, usize, *mut c_void),
    arg: *mut c_void,
}

// SAFETY: the creator of the adaptor promises (documented on
// `rmm_logging_create_with_callback`) that `write` may be called with `arg` from any
// thread; calls are serialized by the adaptor's lock.
unsafe impl Send for CallbackWriter {}

impl Write for CallbackWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // SAFETY: `buf` is valid for `len` bytes during the call; the callback's contract.
        unsafe { (self.write)(buf.as_ptr().cast(), buf.len(), self.arg) };
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        // SAFETY: a NULL `data` with `len` 0 is the documented flush request.
        unsafe { (self.write)(std::ptr::null(), 0, self.arg) };
        Ok(())
    }
}

/// Creates a `logging_resource_adaptor` whose CSV goes to `write(data, len, arg)`, line by
/// line as rows are logged (RMM's `std::ostream&` and sink-list constructors, bridged by the
/// C++ wrapper). `auto_flush` non-zero also asks for a flush after every row. `write` must
/// accept calls from any thread (one at a time) until the adaptor's last handle is released.
#[no_mangle]
pub unsafe extern "C" fn rmm_logging_create_with_callback(
    upstream: rmm_resource_t,
    write: rmm_log_write_fn,
    arg: *mut c_void,
    auto_flush: c_int,
    out: *mut rmm_resource_t,
) -> rmm_status_t {
    let make = || {
        let up = resource_of(upstream)?;
        let write = write.ok_or_else(|| Error::invalid("`write` is NULL"))?;
        let w = Box::new(CallbackWriter { write, arg });
        Ok(Arc::new(LoggingResourceAdaptor::with_passthrough_writer(
            up,
            w,
            auto_flush != 0,
        )?) as _)
    };
    // SAFETY: same contract as this function.
    unsafe { create("rmm_logging_create_with_callback", out, make) }
}

/// Writes the adaptor's buffered rows out.
#[no_mangle]
pub unsafe extern "C" fn rmm_logging_flush(mr: rmm_resource_t) -> rmm_status_t {
    guard("rmm_logging_flush", || {
        let r = resource_of(mr)?;
        downcast::<LoggingResourceAdaptor>(&r, mr)?.flush()
    })
}

fn level_arg(level: c_int) -> Result<Level, Error> {
    Level::from_i32(level).ok_or_else(|| {
        Error::invalid(format!(
            "debug log level {level} is not one of 0 (trace) .. 6 (off)"
        ))
    })
}

/// Sets the debug log's level: 0 trace, 1 debug, 2 info, 3 warn, 4 error, 5 critical,
/// 6 off (RMM's `level_enum`). The log goes to `RMM_DEBUG_LOG_FILE`, else stderr.
#[no_mangle]
pub extern "C" fn rmm_set_debug_log_level(level: c_int) -> rmm_status_t {
    guard("rmm_set_debug_log_level", || {
        crate::logger::set_level(level_arg(level)?);
        Ok(())
    })
}

/// The debug log's level (see `rmm_set_debug_log_level`).
#[no_mangle]
pub unsafe extern "C" fn rmm_get_debug_log_level(level: *mut c_int) -> rmm_status_t {
    guard("rmm_get_debug_log_level", || {
        non_null(level, "level")?;
        crate::logger::init();
        // SAFETY: checked non-null; writable by contract.
        unsafe { write_out(level, crate::logger::level() as c_int) };
        Ok(())
    })
}

/// Writes `message` to the debug log at `level` (when the level is enabled).
#[no_mangle]
pub unsafe extern "C" fn rmm_debug_log(level: c_int, message: *const c_char) -> rmm_status_t {
    guard("rmm_debug_log", || {
        non_null(message, "message")?;
        let level = level_arg(level)?;
        // SAFETY: non-null and NUL-terminated by contract.
        let msg = unsafe { CStr::from_ptr(message) }.to_string_lossy();
        crate::logger::log_message(level, &msg);
        Ok(())
    })
}

/// Flushes the debug log.
#[no_mangle]
pub extern "C" fn rmm_debug_log_flush() -> rmm_status_t {
    guard("rmm_debug_log_flush", || {
        crate::logger::flush();
        Ok(())
    })
}
