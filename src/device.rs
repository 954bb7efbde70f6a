//! Devices: the current device, device count, and free-memory utilities
//! (hipMM's `rmm/cuda_device.hpp`).

use std::ffi::c_void;

use crate::error::{Error, Result};
use crate::mr::ALLOCATION_ALIGNMENT;
use crate::runtime::{runtime, DeviceAttribute, DeviceId, MemInfo, RuntimeErrorKind, Stream};

/// The calling thread's current device.
pub fn get_current_device() -> Result<DeviceId> {
    runtime()?.get_device().map_err(|e| Error::runtime(-1, e))
}

/// Number of devices of the process's runtime.
pub fn get_device_count() -> Result<i32> {
    runtime()?.device_count().map_err(|e| Error::runtime(-1, e))
}

/// Makes `device` current for the calling thread; an out-of-range id is an invalid argument.
pub fn set_current_device(device: DeviceId) -> Result<()> {
    let count = get_device_count()?;
    if device < 0 || device >= count {
        return Err(Error::invalid(format!(
            "device id {device} is out of range: this process has {count} device(s)"
        )));
    }
    runtime()?
        .set_device(device)
        .map_err(|e| Error::runtime(device, e))
}

/// Free and total memory of the current device, in bytes.
pub fn available_device_memory() -> Result<MemInfo> {
    let rt = runtime()?;
    rt.mem_get_info()
        .map_err(|e| Error::runtime(rt.get_device().unwrap_or(-1), e))
}

/// `percent`% of the current device's free memory, aligned down to 256 bytes.
pub fn percent_of_free_device_memory(percent: i32) -> Result<usize> {
    if !(0..=100).contains(&percent) {
        return Err(Error::invalid(format!(
            "percent_of_free_device_memory: percent must be in 0..=100, got {percent}"
        )));
    }
    let free = available_device_memory()?.free as u128;
    let bytes = (free * percent as u128 / 100) as usize;
    Ok(bytes & !(ALLOCATION_ALIGNMENT - 1))
}

/// Reads `attr` of `device`; an attribute the runtime does not know (an older runtime) reads
/// as 0, any other failure is an error.
fn attribute_or_zero(device: DeviceId, attr: DeviceAttribute) -> Result<i32> {
    let count = get_device_count()?;
    if device < 0 || device >= count {
        return Err(Error::invalid(format!(
            "device id {device} is out of range: this process has {count} device(s)"
        )));
    }
    match runtime()?.device_attribute(attr, device) {
        Ok(v) => Ok(v),
        Err(e) if e.kind == RuntimeErrorKind::NotSupported => Ok(0),
        Err(e) => Err(Error::runtime(device, e)),
    }
}

/// Whether `device` supports stream-ordered memory pools (`cudaMallocAsync` /
/// `hipMallocAsync`), i.e. whether `cuda_async_memory_resource` can be used on it.
pub fn supports_async_pools(device: DeviceId) -> Result<bool> {
    Ok(attribute_or_zero(device, DeviceAttribute::MemoryPoolsSupported)? == 1)
}

/// The IPC export handle types (`cudaMemAllocationHandleType` bits) that memory pools of
/// `device` support; 0 when none (or the runtime cannot tell).
pub fn async_pool_handle_types(device: DeviceId) -> Result<i32> {
    attribute_or_zero(device, DeviceAttribute::MemoryPoolSupportedHandleTypes)
}

/// Whether `device` can access pageable host memory (system-allocated memory: HMM or ATS),
/// i.e. whether `system_memory_resource` can be used on it.
pub fn supports_pageable_memory_access(device: DeviceId) -> Result<bool> {
    Ok(attribute_or_zero(device, DeviceAttribute::PageableMemoryAccess)? == 1)
}

/// The version of the runtime in use (`cudaRuntimeGetVersion` / `hipRuntimeGetVersion`;
/// the host emulation reports CUDA 13.0's `13000`).
pub fn runtime_version() -> Result<i32> {
    runtime()?
        .runtime_version()
        .map_err(|e| Error::runtime(-1, e))
}

/// The newest runtime version the installed driver supports (`cudaDriverGetVersion` /
/// `hipDriverGetVersion`; 0 without a driver; `13000` on the host emulation).
pub fn driver_version() -> Result<i32> {
    runtime()?
        .driver_version()
        .map_err(|e| Error::runtime(-1, e))
}

/// The attribute of `device` that CUDA numbers `attr` (`cudaDeviceAttr`, e.g. 16 for the
/// multiprocessor count), on any backend: HIP maps the number to its own, the host
/// emulation answers for its emulated device. An attribute the backend has no equivalent
/// of is [`Error::Unsupported`]; a bad device or a number that is no attribute is the
/// runtime's error ([`Error::Runtime`], `cudaErrorInvalidDevice` / `cudaErrorInvalidValue`).
pub fn device_attribute_by_cuda_number(attr: i32, device: DeviceId) -> Result<i32> {
    match runtime()?.device_attribute_by_cuda_number(attr, device) {
        Ok(v) => Ok(v),
        Err(e) if e.kind == RuntimeErrorKind::NotSupported => Err(Error::Unsupported(format!(
            "device attribute {attr} (cudaDeviceAttr) of device {device}: {e}"
        ))),
        Err(e) => Err(Error::runtime(device, e)),
    }
}

/// The name of `device` (`cudaDeviceProp::name`; the host emulation's is "rmm-rs host
/// emulation device N"). A bad device is the runtime's error (`cudaErrorInvalidDevice`).
pub fn device_name(device: DeviceId) -> Result<String> {
    runtime()?
        .device_name(device)
        .map_err(|e| Error::runtime(device, e))
}

/// Prefetches `bytes` at `ptr` to `device` (`-1`, CUDA's `cudaCpuDeviceId`: the host),
/// ordered on `stream` (RMM's `rmm::prefetch`, `cudaMemPrefetchAsync`).
///
/// A hint, as in RMM: memory the runtime cannot prefetch because it is not managed (the
/// runtime answers "invalid value") stays where it is and the call succeeds; so does a null
/// pointer or zero bytes. A device below -1 is an invalid argument; a runtime without
/// prefetching is [`Error::Unsupported`]; any other runtime failure (a device out of range,
/// a destroyed stream) is [`Error::Runtime`].
pub fn prefetch(ptr: *const c_void, bytes: usize, device: DeviceId, stream: Stream) -> Result<()> {
    if device < -1 {
        return Err(Error::invalid(format!(
            "prefetch: device {device} is not a device; use a device id or -1 for the host"
        )));
    }
    if ptr.is_null() || bytes == 0 {
        return Ok(());
    }
    match runtime()?.mem_prefetch_async(ptr, bytes, device, stream) {
        Ok(()) => Ok(()),
        Err(e) if e.kind == RuntimeErrorKind::InvalidValue => {
            log::debug!("prefetch of {ptr:p} ({bytes} bytes) to device {device} skipped: {e}");
            Ok(())
        }
        Err(e) if e.kind == RuntimeErrorKind::NotSupported => Err(Error::Unsupported(format!(
            "prefetch of {ptr:p} ({bytes} bytes) to device {device}: {e}"
        ))),
        Err(e) => Err(Error::runtime(device, e)),
    }
}

/// Makes a device current for its lifetime and restores the previous one on drop
/// (hipMM's `cuda_set_device_raii`).
#[derive(Debug)]
pub struct DeviceGuard {
    previous: DeviceId,
}

impl DeviceGuard {
    /// Switches to `device` (no runtime call when it is already current).
    pub fn new(device: DeviceId) -> Result<Self> {
        let previous = get_current_device()?;
        if previous != device {
            set_current_device(device)?;
        }
        Ok(DeviceGuard { previous })
    }
}

impl Drop for DeviceGuard {
    fn drop(&mut self) {
        if let Ok(rt) = runtime() {
            if rt.get_device().ok() != Some(self.previous) {
                let _ = rt.set_device(self.previous);
            }
        }
    }
}
