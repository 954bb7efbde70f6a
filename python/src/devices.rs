//! The GPU runtime and its devices: names, versions, counts, attributes, memory.

use std::ffi::{c_char, c_void};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::errors::{call, check, cstr, out};
use crate::sys;

/// `#[pyfunction]`s `name() -> T` returning the one output of a C call (made with the GIL
/// released), converted by `$convert`.
macro_rules! getters {
    ($($(#[$attr:meta])* fn $name:ident() -> $t:ty = $c:ident $(| $convert:path)?;)+) => {$(
        #[pyfunction]
        $(#[$attr])*
        fn $name(py: Python<'_>) -> PyResult<$t> {
            call(py, || out(|o| unsafe { sys::$c(o) })$(.map($convert))?)
        }
    )+};
}

getters! {
    fn runtime_name() -> String = rmm_runtime_name | cstr;
    fn runtime_description() -> String = rmm_runtime_description | cstr;
    fn get_device_count() -> i32 = rmm_get_device_count;
    fn get_current_device() -> i32 = rmm_get_current_device;
    /// The runtime's version (CUDA: 1000 * major + 10 * minor; the host emulation: 13000).
    fn runtime_get_version() -> i32 = rmm_runtime_get_version;
    /// The newest runtime version the driver supports (0 without a driver).
    fn driver_get_version() -> i32 = rmm_driver_get_version;
}

#[pyfunction]
fn set_current_device(py: Python<'_>, device: i32) -> PyResult<()> {
    call(py, move || {
        check(unsafe { sys::rmm_set_current_device(device) })
    })
}

#[pyfunction]
fn device_synchronize(py: Python<'_>) -> PyResult<()> {
    call(py, || check(unsafe { sys::rmm_device_synchronize() }))
}

/// (free, total) bytes of the current device.
#[pyfunction]
fn available_device_memory(py: Python<'_>) -> PyResult<(usize, usize)> {
    call(py, || {
        let mut total = 0usize;
        let free = out(|f| unsafe { sys::rmm_available_device_memory(f, &mut total) })?;
        Ok((free, total))
    })
}

#[pyfunction]
fn percent_of_free_device_memory(py: Python<'_>, percent: i32) -> PyResult<usize> {
    call(py, move || {
        out(|b| unsafe { sys::rmm_percent_of_free_device_memory(percent, b) })
    })
}

/// The attribute of `device` that CUDA numbers `attr` (cudaDeviceAttr), on any runtime.
#[pyfunction]
fn device_get_attribute(py: Python<'_>, attr: i32, device: i32) -> PyResult<i32> {
    call(py, move || {
        out(|v| unsafe { sys::rmm_device_get_attribute(v, attr, device) })
    })
}

/// The name of `device` (cudaDeviceProp::name), on any runtime.
#[pyfunction]
fn device_get_name(py: Python<'_>, device: i32) -> PyResult<String> {
    call(py, move || {
        let mut buf = [0 as c_char; 256];
        // SAFETY: `buf` is writable for its length; the name is NUL-terminated within it.
        check(unsafe { sys::rmm_device_get_name(buf.as_mut_ptr(), buf.len(), device) })?;
        Ok(cstr(buf.as_ptr()))
    })
}

/// The path of the librmm.so that this extension calls (the one loaded in the process).
#[pyfunction]
fn library_path() -> PyResult<String> {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let addr = sys::rmm_resource_retain as *const c_void;
    if unsafe { libc::dladdr(addr, &mut info) } == 0 || info.dli_fname.is_null() {
        return Err(PyValueError::new_err("cannot locate librmm.so"));
    }
    Ok(cstr(info.dli_fname))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(
        m,
        runtime_name,
        runtime_description,
        get_device_count,
        get_current_device,
        set_current_device,
        device_synchronize,
        available_device_memory,
        percent_of_free_device_memory,
        runtime_get_version,
        driver_get_version,
        device_get_attribute,
        device_get_name,
        library_path,
    );
    Ok(())
}
