//! The runtime's errors: classes of the vendors' codes (the runtime API's and the
//! driver's), and the errors of a failed, unsupported or missing call with the runtime's
//! own names and messages.

use std::ffi::{c_char, CStr};

use super::table::OptSym;
use super::GpuRuntime;
use crate::runtime::{RtResult, RuntimeError, RuntimeErrorKind};

/// Error codes with the same number in CUDA and HIP (checked against both headers).
pub(super) mod code {
    pub(crate) const INVALID_VALUE: i32 = 1;
    pub(crate) const OUT_OF_MEMORY: i32 = 2;
    pub(crate) const NOT_INITIALIZED: i32 = 3;
    pub(crate) const STUB_LIBRARY: i32 = 34; // CUDA only: the driver is a stub (no real driver)
    pub(crate) const INSUFFICIENT_DRIVER: i32 = 35;
    pub(crate) const NO_DEVICE: i32 = 100;
    pub(crate) const INVALID_DEVICE: i32 = 101;
    pub(crate) const INVALID_HANDLE: i32 = 400;
    pub(crate) const NOT_READY: i32 = 600;
    pub(crate) const NOT_SUPPORTED: i32 = 801;
    pub(crate) const UNKNOWN: i32 = 999;
}

/// The class of a vendor error code.
pub(super) fn kind_of(code: i32) -> RuntimeErrorKind {
    use RuntimeErrorKind as K;
    match code {
        code::OUT_OF_MEMORY => K::OutOfMemory,
        code::NOT_READY => K::NotReady,
        code::NO_DEVICE
        | code::INSUFFICIENT_DRIVER
        | code::NOT_INITIALIZED
        | code::STUB_LIBRARY => K::NoDevice,
        code::INVALID_DEVICE => K::InvalidDevice,
        code::INVALID_VALUE => K::InvalidValue,
        code::INVALID_HANDLE => K::InvalidHandle,
        code::NOT_SUPPORTED => K::NotSupported,
        _ => K::Other,
    }
}

/// `CUresult` codes of the driver (cuda.h) beyond those it shares with the runtime API.
mod driver_code {
    pub(crate) const DEINITIALIZED: i32 = 4; // the driver is shutting down (process exit)
    pub(crate) const DEVICE_UNAVAILABLE: i32 = 46; // exclusive-process device in use elsewhere
    pub(crate) const INVALID_CONTEXT: i32 = 201;
    pub(crate) const NOT_PERMITTED: i32 = 800;
    pub(crate) const SYSTEM_DRIVER_MISMATCH: i32 = 803;
    pub(crate) const COMPAT_NOT_SUPPORTED_ON_DEVICE: i32 = 804;
}

/// The class of a driver (`CUresult`) code. The driver numbers the classes [`kind_of`]
/// knows as the runtime does (1 invalid value, 2 out of memory, 3 not initialized, 34 stub
/// library, 100 no device, 101 invalid device, 400 invalid handle, 600 not ready, 801 not
/// supported); these are the driver's own.
pub(super) fn driver_kind_of(code: i32) -> RuntimeErrorKind {
    use RuntimeErrorKind as K;
    match code {
        driver_code::DEINITIALIZED
        | driver_code::DEVICE_UNAVAILABLE
        | driver_code::SYSTEM_DRIVER_MISMATCH
        | driver_code::COMPAT_NOT_SUPPORTED_ON_DEVICE => K::NoDevice,
        driver_code::INVALID_CONTEXT => K::InvalidHandle,
        driver_code::NOT_PERMITTED => K::NotSupported,
        _ => kind_of(code),
    }
}

impl GpuRuntime {
    pub(super) fn err_text(
        &self,
        f: unsafe extern "C" fn(i32) -> *const c_char,
        code: i32,
    ) -> String {
        // SAFETY: the error-name/string functions accept any code and return null or a
        // static NUL-terminated string.
        let p = unsafe { f(code) };
        if p.is_null() {
            format!("error {code}")
        } else {
            // SAFETY: non-null static NUL-terminated string (see above).
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }
    }

    /// The error for a failed call, with the runtime's own name and description (out of the
    /// hot path).
    #[cold]
    #[inline(never)]
    pub(super) fn error(&self, call: &'static str, code: i32) -> RuntimeError {
        if code != code::NOT_READY {
            // Clear the thread's non-sticky last error (e.g. an out-of-memory from cudaMalloc),
            // as RMM does, so it does not surface in an unrelated later check of the user's.
            // SAFETY: no arguments; only resets thread-local runtime state.
            unsafe { (self.api.get_last_error.f)() };
        }
        RuntimeError {
            call,
            code,
            kind: kind_of(code),
            name: self.err_text(self.api.get_error_name.f, code),
            message: self.err_text(self.api.get_error_string.f, code),
        }
    }

    #[inline(always)]
    pub(super) fn check(&self, call: &'static str, code: i32) -> RtResult<()> {
        if code == 0 {
            Ok(())
        } else {
            Err(self.error(call, code))
        }
    }

    /// An error for a call this runtime cannot make.
    pub(super) fn unsupported(&self, call: &'static str, why: String) -> RuntimeError {
        RuntimeError {
            call,
            code: -1,
            kind: RuntimeErrorKind::NotSupported,
            name: "notSupported".into(),
            message: why,
        }
    }

    /// The function of an optional entry point, or a "symbolNotFound" error naming it.
    #[inline(always)]
    pub(super) fn opt<F: Copy>(&self, sym: &OptSym<F>) -> RtResult<F> {
        match sym.f {
            Some(f) => Ok(f),
            None => Err(self.missing(sym.name)),
        }
    }

    /// The error for an entry point this runtime does not export (out of the hot path).
    #[cold]
    #[inline(never)]
    pub(super) fn missing(&self, name: &'static str) -> RuntimeError {
        RuntimeError {
            call: name,
            code: -1,
            kind: RuntimeErrorKind::NotSupported,
            name: "symbolNotFound".into(),
            message: format!(
                "{} is not exported by {} (runtime {}); this feature needs a newer runtime",
                if name.is_empty() {
                    "the function"
                } else {
                    name
                },
                self.soname,
                self.runtime_version
            ),
        }
    }

    /// The text of a driver error code, from `f` (`cuGetErrorName` / `cuGetErrorString`).
    pub(super) fn driver_text(
        f: Option<unsafe extern "C" fn(i32, *mut *const c_char) -> i32>,
        code: i32,
    ) -> String {
        let mut p: *const c_char = std::ptr::null();
        // SAFETY: the function writes a static NUL-terminated string (or nothing, with an
        // error code, for an unknown code) through the valid out-pointer.
        let ok = f.is_some_and(|f| unsafe { f(code, &mut p) } == 0);
        if !ok || p.is_null() {
            format!("CUresult {code}")
        } else {
            // SAFETY: non-null static NUL-terminated string (see above).
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }
    }

    /// The error for a failed virtual memory management call: the driver's name, message and
    /// classification where the calls are the driver's, else the runtime's.
    #[cold]
    #[inline(never)]
    pub(super) fn vmm_error(&self, call: &'static str, code: i32) -> RuntimeError {
        if !self.vmm.driver {
            return self.error(call, code);
        }
        RuntimeError {
            call,
            code,
            kind: driver_kind_of(code),
            name: Self::driver_text(self.vmm.error_name, code),
            message: Self::driver_text(self.vmm.error_string, code),
        }
    }

    pub(super) fn vmm_check(&self, call: &'static str, code: i32) -> RtResult<()> {
        if code == 0 {
            Ok(())
        } else {
            Err(self.vmm_error(call, code))
        }
    }
}
