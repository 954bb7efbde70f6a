//! Runtime and device queries.

use std::ffi::{c_char, CString};
use std::sync::OnceLock;

use super::resource::static_cstr;
use super::status::{guard, non_null};
use super::{rmm_status_t, write_out};
use crate::device;
use crate::error::Error;
use crate::runtime::runtime;

/// The backend in use: `"hip"`, `"cuda"` or `"host"` (static string). Selecting it happens
/// on first use, from `RMM_RUNTIME`.
#[no_mangle]
pub unsafe extern "C" fn rmm_runtime_name(name: *mut *const c_char) -> rmm_status_t {
    guard("rmm_runtime_name", || {
        non_null(name, "name")?;
        let n = static_cstr(runtime()?.kind().name());
        // SAFETY: checked non-null above.
        unsafe { write_out(name, n) };
        Ok(())
    })
}

/// What was loaded: library, runtime and driver versions (static string).
#[no_mangle]
pub unsafe extern "C" fn rmm_runtime_description(description: *mut *const c_char) -> rmm_status_t {
    guard("rmm_runtime_description", || {
        non_null(description, "description")?;
        static DESCRIPTION: OnceLock<CString> = OnceLock::new();
        let rt = runtime()?;
        let d = DESCRIPTION
            .get_or_init(|| CString::new(rt.description().replace('\0', " ")).unwrap_or_default());
        // SAFETY: checked non-null above.
        unsafe { write_out(description, d.as_ptr()) };
        Ok(())
    })
}

/// The version of the runtime in use, in the runtime's numbering: CUDA's
/// `1000 * major + 10 * minor` (`cudaRuntimeGetVersion`), HIP's
/// `10000000 * major + 100000 * minor + patch` (`hipRuntimeGetVersion`); the host emulation
/// reports `13000` (CUDA 13.0, whose behaviour it emulates).
#[no_mangle]
pub unsafe extern "C" fn rmm_runtime_get_version(version: *mut i32) -> rmm_status_t {
    guard("rmm_runtime_get_version", || {
        non_null(version, "version")?;
        let v = device::runtime_version()?;
        // SAFETY: checked non-null above.
        unsafe { write_out(version, v) };
        Ok(())
    })
}

/// The newest runtime version the installed driver supports, in the runtime's numbering
/// (`cudaDriverGetVersion` / `hipDriverGetVersion`; 0 when no driver is installed). The
/// host emulation reports `13000`.
#[no_mangle]
pub unsafe extern "C" fn rmm_driver_get_version(version: *mut i32) -> rmm_status_t {
    guard("rmm_driver_get_version", || {
        non_null(version, "version")?;
        let v = device::driver_version()?;
        // SAFETY: checked non-null above.
        unsafe { write_out(version, v) };
        Ok(())
    })
}

/// The integer attribute `attr` of `device`, where `attr` is CUDA's number for it
/// (`cudaDeviceAttr`, e.g. 16 = `cudaDevAttrMultiProcessorCount`, 75/76 = compute
/// capability major/minor), whatever the runtime: CUDA takes the number as it is, HIP
/// maps it to its own attribute (`hipDeviceGetAttribute`), the host emulation answers for
/// its emulated device (see the host runtime's documentation).
///
/// `RMM_STATUS_UNSUPPORTED` when the runtime has no equivalent of the attribute (HIP lacks
/// some of CUDA's); `RMM_STATUS_RUNTIME_ERROR` for a bad device
/// (`cudaErrorInvalidDevice`) or a number that is no attribute (`cudaErrorInvalidValue`),
/// with the runtime's code in `rmm_last_error_runtime_code()`.
#[no_mangle]
pub unsafe extern "C" fn rmm_device_get_attribute(
    value: *mut i32,
    attr: i32,
    device: i32,
) -> rmm_status_t {
    guard("rmm_device_get_attribute", || {
        non_null(value, "value")?;
        let v = device::device_attribute_by_cuda_number(attr, device)?;
        // SAFETY: checked non-null above.
        unsafe { write_out(value, v) };
        Ok(())
    })
}

/// Writes the name of `device` (`cudaDeviceProp::name`, as `cuDeviceGetName` gives it) into
/// `name`, `len` bytes at most including the terminating NUL (a longer name is cut short).
/// `RMM_STATUS_INVALID_ARGUMENT` for a NULL `name` or a `len` of 0;
/// `RMM_STATUS_RUNTIME_ERROR` for a bad device (`cudaErrorInvalidDevice`).
#[no_mangle]
pub unsafe extern "C" fn rmm_device_get_name(
    name: *mut c_char,
    len: usize,
    device: i32,
) -> rmm_status_t {
    guard("rmm_device_get_name", || {
        non_null(name, "name")?;
        if len == 0 {
            return Err(Error::invalid(
                "len is 0: no room for the name's terminating NUL",
            ));
        }
        let s = device::device_name(device)?;
        let n = s.len().min(len - 1);
        // SAFETY: `name` is non-null and, by this function's contract, writable for `len`
        // bytes; `n + 1 <= len`.
        unsafe {
            std::ptr::copy_nonoverlapping(s.as_ptr(), name.cast::<u8>(), n);
            name.add(n).write(0);
        }
        Ok(())
    })
}

/// Number of devices.
#[no_mangle]
pub unsafe extern "C" fn rmm_get_device_count(count: *mut i32) -> rmm_status_t {
    guard("rmm_get_device_count", || {
        non_null(count, "count")?;
        let n = device::get_device_count()?;
        // SAFETY: checked non-null above.
        unsafe { write_out(count, n) };
        Ok(())
    })
}

/// The calling thread's current device.
#[no_mangle]
pub unsafe extern "C" fn rmm_get_current_device(device: *mut i32) -> rmm_status_t {
    guard("rmm_get_current_device", || {
        non_null(device, "device")?;
        let d = device::get_current_device()?;
        // SAFETY: checked non-null above.
        unsafe { write_out(device, d) };
        Ok(())
    })
}

/// Makes `device` current for the calling thread.
#[no_mangle]
pub extern "C" fn rmm_set_current_device(device: i32) -> rmm_status_t {
    guard("rmm_set_current_device", || {
        device::set_current_device(device)
    })
}

/// Whether `device` supports stream-ordered memory pools (`cudaMallocAsync` /
/// `hipMallocAsync`): what `cuda_async_memory_resource` needs.
#[no_mangle]
pub unsafe extern "C" fn rmm_device_supports_async_pools(
    device: i32,
    supported: *mut bool,
) -> rmm_status_t {
    guard("rmm_device_supports_async_pools", || {
        non_null(supported, "supported")?;
        let s = device::supports_async_pools(device)?;
        // SAFETY: checked non-null above.
        unsafe { write_out(supported, s) };
        Ok(())
    })
}

/// The IPC export handle types that memory pools of `device` support, as a bit mask of
/// `RMM_ALLOCATION_HANDLE_*` values (0: none, or the runtime cannot tell).
#[no_mangle]
pub unsafe extern "C" fn rmm_device_async_pool_handle_types(
    device: i32,
    mask: *mut i32,
) -> rmm_status_t {
    guard("rmm_device_async_pool_handle_types", || {
        non_null(mask, "mask")?;
        let m = device::async_pool_handle_types(device)?;
        // SAFETY: checked non-null above.
        unsafe { write_out(mask, m) };
        Ok(())
    })
}

/// Whether `device` can access pageable host memory (HMM or ATS): what
/// `system_memory_resource` needs.
#[no_mangle]
pub unsafe extern "C" fn rmm_device_supports_pageable_memory(
    device: i32,
    supported: *mut bool,
) -> rmm_status_t {
    guard("rmm_device_supports_pageable_memory", || {
        non_null(supported, "supported")?;
        let s = device::supports_pageable_memory_access(device)?;
        // SAFETY: checked non-null above.
        unsafe { write_out(supported, s) };
        Ok(())
    })
}

/// Waits for all work on the current device.
#[no_mangle]
pub extern "C" fn rmm_device_synchronize() -> rmm_status_t {
    guard("rmm_device_synchronize", || {
        let rt = runtime()?;
        rt.device_synchronize()
            .map_err(|e| Error::runtime(rt.get_device().unwrap_or(-1), e))
    })
}

/// Free and total memory of the current device, in bytes.
#[no_mangle]
pub unsafe extern "C" fn rmm_available_device_memory(
    free_bytes: *mut usize,
    total_bytes: *mut usize,
) -> rmm_status_t {
    guard("rmm_available_device_memory", || {
        non_null(free_bytes, "free_bytes")?;
        non_null(total_bytes, "total_bytes")?;
        let info = device::available_device_memory()?;
        // SAFETY: both checked non-null above.
        unsafe {
            write_out(free_bytes, info.free);
            write_out(total_bytes, info.total);
        }
        Ok(())
    })
}

/// `percent`% (0..=100) of the current device's free memory, aligned down to 256 bytes.
#[no_mangle]
pub unsafe extern "C" fn rmm_percent_of_free_device_memory(
    percent: i32,
    bytes: *mut usize,
) -> rmm_status_t {
    guard("rmm_percent_of_free_device_memory", || {
        non_null(bytes, "bytes")?;
        let b = device::percent_of_free_device_memory(percent)?;
        // SAFETY: checked non-null above.
        unsafe { write_out(bytes, b) };
        Ok(())
    })
}

/// Whether the process has begun exiting (`exit()` or return from `main`). After that,
/// resources no longer call the GPU runtime; C++ destructors use it to skip runtime calls.
#[no_mangle]
pub extern "C" fn rmm_process_is_exiting() -> bool {
    crate::runtime::process_is_exiting()
}

/// Registers, once per process, an exit hook that sets the flag `rmm_process_is_exiting`
/// reports. Statics constructed before this call are destroyed after the hook ran, so their
/// destructors see the process exiting (RMM 26.06's `register_process_exit_hook`). Later calls
/// do nothing. Returns false when the hook could not be registered.
#[no_mangle]
pub extern "C" fn rmm_register_process_exit_hook() -> bool {
    crate::runtime::register_front_end_exit_hook()
}
