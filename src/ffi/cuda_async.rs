//! `rmm_async_create`, `rmm_async_view_create`, `rmm_async_managed_create`, the pool
//! accessors and the IPC export/import of stream-ordered memory pools.

use std::ffi::c_void;
use std::sync::Arc;

use super::status::{guard, non_null};
use super::{create, resource_of, rmm_resource_t, rmm_status_t, write_out};
use crate::error::Error;
use crate::mr::{
    handle_type_from_bits, CudaAsyncManagedMemoryResource, CudaAsyncMemoryResource,
    CudaAsyncViewMemoryResource,
};
use crate::runtime::{runtime, MemPool};

/// `allocation_handle_type::none`: the pool cannot be exported.
pub const RMM_ALLOCATION_HANDLE_NONE: i32 = 0;
/// `allocation_handle_type::posix_file_descriptor`.
pub const RMM_ALLOCATION_HANDLE_POSIX_FILE_DESCRIPTOR: i32 = 1;
/// `allocation_handle_type::win32`.
pub const RMM_ALLOCATION_HANDLE_WIN32: i32 = 2;
/// `allocation_handle_type::win32_kmt`.
pub const RMM_ALLOCATION_HANDLE_WIN32_KMT: i32 = 4;
/// `allocation_handle_type::fabric`.
pub const RMM_ALLOCATION_HANDLE_FABRIC: i32 = 8;

/// The export data of one allocation of an exportable pool (`cudaMemPoolPtrExportData`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
#[allow(non_camel_case_types)]
pub struct rmm_ipc_pointer_data {
    /// Opaque bytes written by the runtime.
    pub reserved: [u8; 64],
}

/// Reads an optional size argument.
///
/// # Safety
/// `p` must be NULL or valid for a read.
unsafe fn optional(p: *const usize) -> Option<usize> {
    // SAFETY: forwarded from this function's contract.
    unsafe { p.as_ref() }.copied()
}

/// Creates a `cuda_async_memory_resource` with its own stream-ordered pool on the current
/// device. `initial_pool_size` (nullable; NULL: half of the free device memory) bytes are
/// reserved now; `release_threshold` (nullable; NULL: the device's total memory) is what the
/// pool keeps reserved at synchronizations;
/// `handle_type` is 0 (none: not exportable), 1 (POSIX file descriptor), 2 (Win32),
/// 4 (Win32 KMT) or 8 (fabric), as `cudaMemAllocationHandleType`. Fails with
/// `RMM_STATUS_UNSUPPORTED` when the runtime or device lacks stream-ordered pools or the
/// handle type.
#[no_mangle]
pub unsafe extern "C" fn rmm_async_create(
    initial_pool_size: *const usize,
    release_threshold: *const usize,
    handle_type: i32,
    out: *mut rmm_resource_t,
) -> rmm_status_t {
    let make = || {
        // SAFETY: both are NULL or readable, by this function's contract.
        let (initial, threshold) =
            unsafe { (optional(initial_pool_size), optional(release_threshold)) };
        let ty = handle_type_from_bits(handle_type)?;
        let threshold = threshold.map(|t| t as u64);
        Ok(Arc::new(CudaAsyncMemoryResource::new(initial, threshold, ty)?) as _)
    };
    // SAFETY: same contract as this function.
    unsafe { create("rmm_async_create", out, make) }
}

/// Creates a `cuda_async_view_memory_resource` over `pool_handle` (a `cudaMemPool_t` /
/// `hipMemPool_t`, e.g. from `rmm_device_default_mem_pool`), which it does not own: the pool
/// must outlive the resource.
#[no_mangle]
pub unsafe extern "C" fn rmm_async_view_create(
    pool_handle: *mut c_void,
    out: *mut rmm_resource_t,
) -> rmm_status_t {
    // SAFETY: same contract as this function.
    unsafe {
        create("rmm_async_view_create", out, || {
            non_null(pool_handle, "pool_handle")?;
            Ok(Arc::new(CudaAsyncViewMemoryResource::new(MemPool(
                pool_handle as usize,
            ))?))
        })
    }
}

/// Creates a `cuda_async_managed_memory_resource` (stream-ordered managed memory from a
/// managed pool); `RMM_STATUS_UNSUPPORTED` where the runtime has no managed pools.
#[no_mangle]
pub unsafe extern "C" fn rmm_async_managed_create(out: *mut rmm_resource_t) -> rmm_status_t {
    // SAFETY: same contract as this function.
    unsafe {
        create("rmm_async_managed_create", out, || {
            Ok(Arc::new(CudaAsyncManagedMemoryResource::new()?))
        })
    }
}

/// The stream-ordered pool of `device` that `cudaMallocAsync` uses by
/// default (`cudaDeviceGetDefaultMemPool`), written to `pool_handle`.
#[no_mangle]
pub unsafe extern "C" fn rmm_device_default_mem_pool(
    device: i32,
    pool_handle: *mut *mut c_void,
) -> rmm_status_t {
    guard("rmm_device_default_mem_pool", || {
        non_null(pool_handle, "pool_handle")?;
        let rt = runtime()?;
        let pool = rt.device_get_default_mem_pool(device).map_err(|e| {
            if e.kind == crate::runtime::RuntimeErrorKind::NotSupported {
                Error::Unsupported(format!(
                    "{} has no stream-ordered memory pools: {e}",
                    rt.description()
                ))
            } else {
                Error::runtime(device, e)
            }
        })?;
        // SAFETY: checked non-null above.
        unsafe { write_out(pool_handle, pool.0 as *mut c_void) };
        Ok(())
    })
}

/// The pool handle of a `cuda_async_memory_resource`, `cuda_async_view_memory_resource` or
/// `cuda_async_managed_memory_resource`.
#[no_mangle]
pub unsafe extern "C" fn rmm_async_pool_handle(
    resource: rmm_resource_t,
    pool_handle: *mut *mut c_void,
) -> rmm_status_t {
    guard("rmm_async_pool_handle", || {
        non_null(pool_handle, "pool_handle")?;
        let r = resource_of(resource)?;
        let any = r.as_any();
        let pool = if let Some(a) = any.downcast_ref::<CudaAsyncMemoryResource>() {
            a.pool_handle()
        } else if let Some(v) = any.downcast_ref::<CudaAsyncViewMemoryResource>() {
            v.pool_handle()
        } else if let Some(m) = any.downcast_ref::<CudaAsyncManagedMemoryResource>() {
            m.pool_handle()
        } else {
            return Err(Error::invalid(format!(
                "resource handle {resource:p} is a {}, not a cuda_async resource",
                r.name()
            )));
        };
        // SAFETY: checked non-null above.
        unsafe { write_out(pool_handle, pool.0 as *mut c_void) };
        Ok(())
    })
}

fn owning_async(
    resource: rmm_resource_t,
) -> Result<Arc<dyn crate::mr::DeviceMemoryResource>, Error> {
    let r = resource_of(resource)?;
    if r.as_any().is::<CudaAsyncMemoryResource>() {
        Ok(r)
    } else {
        Err(Error::invalid(format!(
            "resource handle {resource:p} is a {}, not a cuda_async_memory_resource",
            r.name()
        )))
    }
}

/// Exports the pool of a `cuda_async_memory_resource` created with an export handle type:
/// writes the POSIX file descriptor (owned by the caller) or Win32 handle to `handle`.
#[no_mangle]
pub unsafe extern "C" fn rmm_async_export_handle(
    resource: rmm_resource_t,
    handle: *mut i64,
) -> rmm_status_t {
    guard("rmm_async_export_handle", || {
        non_null(handle, "handle")?;
        let r = owning_async(resource)?;
        let a = r
            .as_any()
            .downcast_ref::<CudaAsyncMemoryResource>()
            .expect("checked");
        let h = a.export_handle()?;
        // SAFETY: checked non-null above.
        unsafe { write_out(handle, h) };
        Ok(())
    })
}

/// Writes the export data of `ptr` (an allocation of the exportable `resource`) to `data`,
/// for another process that imported the pool.
#[no_mangle]
pub unsafe extern "C" fn rmm_async_export_pointer(
    resource: rmm_resource_t,
    ptr: *mut c_void,
    data: *mut rmm_ipc_pointer_data,
) -> rmm_status_t {
    guard("rmm_async_export_pointer", || {
        non_null(data, "data")?;
        non_null(ptr, "ptr")?;
        let r = owning_async(resource)?;
        let a = r
            .as_any()
            .downcast_ref::<CudaAsyncMemoryResource>()
            .expect("checked");
        let reserved = a.export_pointer(ptr)?;
        // SAFETY: checked non-null above.
        unsafe { write_out(data, rmm_ipc_pointer_data { reserved }) };
        Ok(())
    })
}

/// Imports a pool exported by another process (`handle` of `handle_type`, e.g. a POSIX file
/// descriptor received over a Unix socket) and writes its handle to `pool_handle`.
#[no_mangle]
pub unsafe extern "C" fn rmm_async_import_pool(
    handle: i64,
    handle_type: i32,
    pool_handle: *mut *mut c_void,
) -> rmm_status_t {
    guard("rmm_async_import_pool", || {
        non_null(pool_handle, "pool_handle")?;
        let ty = handle_type_from_bits(handle_type)?;
        let rt = runtime()?;
        let pool = rt
            .mem_pool_import_from_shareable_handle(handle, ty)
            .map_err(|e| import_error(rt, e))?;
        // SAFETY: checked non-null above.
        unsafe { write_out(pool_handle, pool.0 as *mut c_void) };
        Ok(())
    })
}

fn import_error(rt: &dyn crate::runtime::Runtime, e: crate::runtime::RuntimeError) -> Error {
    if e.kind == crate::runtime::RuntimeErrorKind::NotSupported {
        Error::Unsupported(format!(
            "{} cannot import memory pools from other processes: {e}",
            rt.description()
        ))
    } else {
        Error::runtime(rt.get_device().unwrap_or(-1), e)
    }
}

/// Maps an allocation exported by another process (`data`) from the imported pool
/// `pool_handle` into this process; free it with `rmm_async_free_imported`.
#[no_mangle]
pub unsafe extern "C" fn rmm_async_import_pointer(
    pool_handle: *mut c_void,
    data: *const rmm_ipc_pointer_data,
    ptr: *mut *mut c_void,
) -> rmm_status_t {
    guard("rmm_async_import_pointer", || {
        non_null(data, "data")?;
        non_null(ptr, "ptr")?;
        non_null(pool_handle, "pool_handle")?;
        let rt = runtime()?;
        // SAFETY: checked non-null; readable by this function's contract.
        let bytes = unsafe { (*data).reserved };
        let p = rt
            .mem_pool_import_pointer(MemPool(pool_handle as usize), &bytes)
            .map_err(|e| import_error(rt, e))?;
        // SAFETY: checked non-null above.
        unsafe { write_out(ptr, p) };
        Ok(())
    })
}
