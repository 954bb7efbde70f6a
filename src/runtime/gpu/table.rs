//! The function table of the runtime API: each entry point with its CUDA and HIP names and
//! its C signature, resolved by name from the loaded library.

use std::ffi::{c_char, c_void};

use super::layouts::{MemLocation, RawPointerAttributes, RawPoolProps};
use super::{HostTrampoline, P};
use crate::runtime::dl::Library;

/// A required entry point: load fails without it.
pub(super) struct Sym<F> {
    pub(super) name: &'static str,
    pub(super) f: F,
}

/// An optional entry point: calls report "unsupported" without it.
pub(super) struct OptSym<F> {
    pub(super) name: &'static str,
    pub(super) f: Option<F>,
}

/// Declares the function table: each entry has its CUDA and HIP names (`""`: the vendor has
/// no such function) and its C signature; every function returns the error code unless
/// another return type is given.
macro_rules! api_table {
    (
        required { $($rf:ident: [$rc:literal, $rh:literal] ($($ra:ty),*) $(-> $rr:ty)?;)* }
        optional { $($of:ident: [$oc:literal, $oh:literal] ($($oa:ty),*);)* }
    ) => {
        /// Entry points of one loaded runtime.
        pub(super) struct Api {
            $(pub(super) $rf: Sym<unsafe extern "C" fn($($ra),*) -> api_table!(@ret $($rr)?)>,)*
            $(pub(super) $of: OptSym<unsafe extern "C" fn($($oa),*) -> i32>,)*
        }

        impl Api {
            pub(super) fn load(lib: &Library, soname: &str, column: usize) -> Result<Api, String> {
                Ok(Api {
                    $($rf: {
                        let name = [$rc, $rh][column];
                        // SAFETY: the type is the C signature from the vendor header.
                        let f = unsafe { lib.symbol(name) }.ok_or_else(|| {
                            format!("{soname} lacks the required symbol {name}")
                        })?;
                        Sym { name, f }
                    },)*
                    $($of: {
                        let name = [$oc, $oh][column];
                        // SAFETY: the type is the C signature from the vendor header.
                        let f = if name.is_empty() { None } else { unsafe { lib.symbol(name) } };
                        OptSym { name, f }
                    },)*
                })
            }
        }
    };
    (@ret) => { i32 };
    (@ret $t:ty) => { $t };
}

api_table! {
    required {
        get_error_name: ["cudaGetErrorName", "hipGetErrorName"] (i32) -> *const c_char;
        get_error_string: ["cudaGetErrorString", "hipGetErrorString"] (i32) -> *const c_char;
        get_last_error: ["cudaGetLastError", "hipGetLastError"] ();
        runtime_get_version: ["cudaRuntimeGetVersion", "hipRuntimeGetVersion"] (*mut i32);
        driver_get_version: ["cudaDriverGetVersion", "hipDriverGetVersion"] (*mut i32);
        get_device_count: ["cudaGetDeviceCount", "hipGetDeviceCount"] (*mut i32);
        get_device: ["cudaGetDevice", "hipGetDevice"] (*mut i32);
        set_device: ["cudaSetDevice", "hipSetDevice"] (i32);
        device_synchronize: ["cudaDeviceSynchronize", "hipDeviceSynchronize"] ();
        mem_get_info: ["cudaMemGetInfo", "hipMemGetInfo"] (*mut usize, *mut usize);
        device_get_attribute: ["cudaDeviceGetAttribute", "hipDeviceGetAttribute"]
            (*mut i32, i32, i32);
        malloc: ["cudaMalloc", "hipMalloc"] (*mut P, usize);
        free: ["cudaFree", "hipFree"] (P);
        stream_create_with_flags: ["cudaStreamCreateWithFlags", "hipStreamCreateWithFlags"]
            (*mut P, u32);
        stream_destroy: ["cudaStreamDestroy", "hipStreamDestroy"] (P);
        stream_synchronize: ["cudaStreamSynchronize", "hipStreamSynchronize"] (P);
        stream_query: ["cudaStreamQuery", "hipStreamQuery"] (P);
        event_create_with_flags: ["cudaEventCreateWithFlags", "hipEventCreateWithFlags"]
            (*mut P, u32);
        event_destroy: ["cudaEventDestroy", "hipEventDestroy"] (P);
        event_record: ["cudaEventRecord", "hipEventRecord"] (P, P);
        event_synchronize: ["cudaEventSynchronize", "hipEventSynchronize"] (P);
        event_query: ["cudaEventQuery", "hipEventQuery"] (P);
        stream_wait_event: ["cudaStreamWaitEvent", "hipStreamWaitEvent"] (P, P, u32);
        // (dst, src, count, kind, stream)
        memcpy_async: ["cudaMemcpyAsync", "hipMemcpyAsync"]
            (P, *const c_void, usize, i32, P);
        // (dst, int value, count, stream)
        memset_async: ["cudaMemsetAsync", "hipMemsetAsync"] (P, i32, usize, P);
        pointer_get_attributes: ["cudaPointerGetAttributes", "hipPointerGetAttributes"]
            (*mut RawPointerAttributes, *const c_void);
    }
    optional {
        // (cudaDeviceProp / hipDeviceProp_t*, device): only the name, the first field of
        // every version of the struct, is read. CUDA 12 exports the current layout as
        // `_v2`; CUDA 11 and 13 as the unsuffixed name.
        get_device_properties: ["cudaGetDeviceProperties_v2", "hipGetDeviceProperties"]
            (*mut u8, i32);
        get_device_properties_v1: ["cudaGetDeviceProperties", ""] (*mut u8, i32);
        // (ptr, size, flags = attach global)
        malloc_managed: ["cudaMallocManaged", "hipMallocManaged"] (*mut P, usize, u32);
        malloc_host: ["cudaMallocHost", ""] (*mut P, usize);
        // hipHostMalloc takes flags where cudaMallocHost takes none.
        host_malloc: ["", "hipHostMalloc"] (*mut P, usize, u32);
        free_host: ["cudaFreeHost", "hipHostFree"] (P);
        malloc_async: ["cudaMallocAsync", "hipMallocAsync"] (*mut P, usize, P);
        malloc_from_pool_async: ["cudaMallocFromPoolAsync", "hipMallocFromPoolAsync"]
            (*mut P, usize, P, P);
        free_async: ["cudaFreeAsync", "hipFreeAsync"] (P, P);
        mem_pool_create: ["cudaMemPoolCreate", "hipMemPoolCreate"]
            (*mut P, *const RawPoolProps);
        mem_pool_destroy: ["cudaMemPoolDestroy", "hipMemPoolDestroy"] (P);
        device_get_default_mem_pool: ["cudaDeviceGetDefaultMemPool", "hipDeviceGetDefaultMemPool"]
            (*mut P, i32);
        mem_pool_set_attribute: ["cudaMemPoolSetAttribute", "hipMemPoolSetAttribute"]
            (P, i32, *mut c_void);
        mem_pool_get_attribute: ["cudaMemPoolGetAttribute", "hipMemPoolGetAttribute"]
            (P, i32, *mut c_void);
        mem_pool_trim_to: ["cudaMemPoolTrimTo", "hipMemPoolTrimTo"] (P, usize);
        launch_host_func: ["cudaLaunchHostFunc", "hipLaunchHostFunc"]
            (P, HostTrampoline, *mut c_void);
        // The `int device` forms (CUDA ≤ 12, HIP).
        mem_prefetch_async: ["cudaMemPrefetchAsync", "hipMemPrefetchAsync"]
            (*const c_void, usize, i32, P);
        mem_advise: ["cudaMemAdvise", "hipMemAdvise"] (*const c_void, usize, i32, i32);
        // The location forms: `_v2` in CUDA 12.2–12.x, unsuffixed in CUDA 13 (fixed up below).
        mem_prefetch_location: ["cudaMemPrefetchAsync_v2", ""]
            (*const c_void, usize, MemLocation, u32, P);
        mem_advise_location: ["cudaMemAdvise_v2", ""] (*const c_void, usize, i32, MemLocation);
        // (void* shareableHandle out, pool, handleType, flags = 0)
        mem_pool_export_to_shareable_handle:
            ["cudaMemPoolExportToShareableHandle", "hipMemPoolExportToShareableHandle"]
            (*mut c_void, P, i32, u32);
        // (pool out, void* shareableHandle (the fd itself for POSIX fds), handleType, flags)
        mem_pool_import_from_shareable_handle:
            ["cudaMemPoolImportFromShareableHandle", "hipMemPoolImportFromShareableHandle"]
            (*mut P, *mut c_void, i32, u32);
        // (cudaMemPoolPtrExportData* out (64 bytes), ptr)
        mem_pool_export_pointer: ["cudaMemPoolExportPointer", "hipMemPoolExportPointer"]
            (*mut u8, P);
        // (ptr out, pool, cudaMemPoolPtrExportData*)
        mem_pool_import_pointer: ["cudaMemPoolImportPointer", "hipMemPoolImportPointer"]
            (*mut P, P, *mut u8);
    }
}
