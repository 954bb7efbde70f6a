//! The CUDA and HIP runtime entry points: `cudaMalloc`/`hipMalloc` and their free,
//! stream-ordered, managed and memory-info relatives, and the stream functions that tell
//! the engine which streams exist. A runtime linked as a shared library (`libcudart.so`,
//! always `libamdhip64.so`) is reached here.

use std::ffi::c_void;
use std::panic::catch_unwind;
use std::sync::atomic::Ordering;

use super::{
    alloc_entry, forward, free_entry, mem_get_info_entry, reals, stream_created_entry, AllocRequest,
};
use crate::engine::{self, Family};
use crate::entry_points::EntryPoint;
use crate::scope::Scope;
use rmm::Stream;

type MallocFn = unsafe extern "C" fn(*mut *mut c_void, usize) -> i32;
type MallocFlagsFn = unsafe extern "C" fn(*mut *mut c_void, usize, u32) -> i32;
type MallocAsyncFn = unsafe extern "C" fn(*mut *mut c_void, usize, *mut c_void) -> i32;
type FreeFn = unsafe extern "C" fn(*mut c_void) -> i32;
type FreeAsyncFn = unsafe extern "C" fn(*mut c_void, *mut c_void) -> i32;
type StreamCreateFn = unsafe extern "C" fn(*mut *mut c_void) -> i32;
type StreamCreateFlagsFn = unsafe extern "C" fn(*mut *mut c_void, u32) -> i32;
type StreamCreatePriorityFn = unsafe extern "C" fn(*mut *mut c_void, u32, i32) -> i32;
type StreamDestroyFn = unsafe extern "C" fn(*mut c_void) -> i32;

reals! { Runtime;
    CUDA_MALLOC = c"cudaMalloc";
    CUDA_FREE = c"cudaFree";
    CUDA_MALLOC_ASYNC = c"cudaMallocAsync";
    CUDA_FREE_ASYNC = c"cudaFreeAsync";
    CUDA_MALLOC_ASYNC_PTSZ = c"cudaMallocAsync_ptsz";
    CUDA_FREE_ASYNC_PTSZ = c"cudaFreeAsync_ptsz";
    CUDA_MALLOC_MANAGED = c"cudaMallocManaged";
    CUDA_MEM_GET_INFO = c"cudaMemGetInfo";
    HIP_MALLOC = c"hipMalloc";
    HIP_FREE = c"hipFree";
    HIP_MALLOC_ASYNC = c"hipMallocAsync";
    HIP_FREE_ASYNC = c"hipFreeAsync";
    HIP_EXT_MALLOC_WITH_FLAGS = c"hipExtMallocWithFlags";
    HIP_MALLOC_MANAGED = c"hipMallocManaged";
    HIP_MEM_GET_INFO = c"hipMemGetInfo";
    CUDA_STREAM_CREATE = c"cudaStreamCreate";
    CUDA_STREAM_CREATE_WITH_FLAGS = c"cudaStreamCreateWithFlags";
    CUDA_STREAM_CREATE_WITH_PRIORITY = c"cudaStreamCreateWithPriority";
    CUDA_STREAM_DESTROY = c"cudaStreamDestroy";
    HIP_STREAM_CREATE = c"hipStreamCreate";
    HIP_STREAM_CREATE_WITH_FLAGS = c"hipStreamCreateWithFlags";
    HIP_STREAM_CREATE_WITH_PRIORITY = c"hipStreamCreateWithPriority";
    HIP_STREAM_DESTROY = c"hipStreamDestroy";
}

/// `cudaMemAttachGlobal` / `hipMemAttachGlobal`.
const ATTACH_GLOBAL: u32 = 1;

/// A plain allocation of the runtime's current device.
fn request(entry: EntryPoint, family: Family, size: usize, stream: Stream) -> AllocRequest {
    AllocRequest {
        entry,
        family,
        size,
        stream,
        managed: false,
        device: None,
    }
}

/// Interposed `cudaMalloc`.
///
/// # Safety
/// The CUDA runtime's contract: `ptr` is null or valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn cudaMalloc(ptr: *mut *mut c_void, size: usize) -> i32 {
    let req = request(EntryPoint::CudaMalloc, Family::Cuda, size, Stream::DEFAULT);
    // SAFETY: forwards the caller's contract.
    unsafe {
        alloc_entry(&CUDA_MALLOC, ptr, req, || {
            forward!(CUDA_MALLOC, MallocFn, ptr, size)
        })
    }
}

/// Interposed `cudaFree`: by default the block goes back to its pool once the work queued
/// before the free has completed (deferred reuse, `RMM_PRELOAD_SYNC=1`); see `deferred.rs`
/// for the other modes. Pointers we did not allocate go to the real `cudaFree`.
///
/// # Safety
/// The CUDA runtime's contract.
#[no_mangle]
pub unsafe extern "C" fn cudaFree(ptr: *mut c_void) -> i32 {
    free_entry(Family::Cuda, ptr, None, || forward!(CUDA_FREE, FreeFn, ptr))
}

/// Interposed `cudaMallocAsync` (stream-ordered on `stream`).
///
/// # Safety
/// The CUDA runtime's contract.
#[no_mangle]
pub unsafe extern "C" fn cudaMallocAsync(
    ptr: *mut *mut c_void,
    size: usize,
    stream: *mut c_void,
) -> i32 {
    let req = request(
        EntryPoint::CudaMallocAsync,
        Family::Cuda,
        size,
        Stream(stream as usize),
    );
    // SAFETY: forwards the caller's contract.
    unsafe {
        alloc_entry(&CUDA_MALLOC_ASYNC, ptr, req, || {
            forward!(CUDA_MALLOC_ASYNC, MallocAsyncFn, ptr, size, stream)
        })
    }
}

/// Interposed `cudaFreeAsync` (stream-ordered on `stream`).
///
/// # Safety
/// The CUDA runtime's contract.
#[no_mangle]
pub unsafe extern "C" fn cudaFreeAsync(ptr: *mut c_void, stream: *mut c_void) -> i32 {
    free_entry(Family::Cuda, ptr, Some(Stream(stream as usize)), || {
        forward!(CUDA_FREE_ASYNC, FreeAsyncFn, ptr, stream)
    })
}

/// Interposed `cudaMallocAsync_ptsz` (programs built with `--default-stream per-thread`:
/// stream 0 is the per-thread default stream).
///
/// # Safety
/// The CUDA runtime's contract.
#[no_mangle]
pub unsafe extern "C" fn cudaMallocAsync_ptsz(
    ptr: *mut *mut c_void,
    size: usize,
    stream: *mut c_void,
) -> i32 {
    let s = super::driver::per_thread(stream);
    let req = request(EntryPoint::CudaMallocAsync, Family::Cuda, size, s);
    // SAFETY: forwards the caller's contract.
    unsafe {
        alloc_entry(&CUDA_MALLOC_ASYNC_PTSZ, ptr, req, || {
            forward!(CUDA_MALLOC_ASYNC_PTSZ, MallocAsyncFn, ptr, size, stream)
        })
    }
}

/// Interposed `cudaFreeAsync_ptsz` (see `cudaMallocAsync_ptsz`).
///
/// # Safety
/// The CUDA runtime's contract.
#[no_mangle]
pub unsafe extern "C" fn cudaFreeAsync_ptsz(ptr: *mut c_void, stream: *mut c_void) -> i32 {
    free_entry(
        Family::Cuda,
        ptr,
        Some(super::driver::per_thread(stream)),
        || forward!(CUDA_FREE_ASYNC_PTSZ, FreeAsyncFn, ptr, stream),
    )
}

/// The shared body of `cudaMallocManaged`/`hipMallocManaged`: pooled with
/// `RMM_PRELOAD_MANAGED=1` (global attach only), else passed through.
///
/// # Safety
/// The runtime's contract; `fwd` calls the vendor's function with the caller's arguments.
pub(crate) unsafe fn managed_entry(
    entry: EntryPoint,
    family: Family,
    real: &'static super::Real,
    ptr: *mut *mut c_void,
    size: usize,
    flags: u32,
    fwd: impl FnOnce() -> i32,
) -> i32 {
    if flags != ATTACH_GLOBAL || !engine::config().managed {
        engine::FORWARDED_OTHER.fetch_add(1, Ordering::Relaxed);
        return super::passed_entry(entry, size, fwd);
    }
    let req = AllocRequest {
        managed: true,
        ..request(entry, family, size, Stream::DEFAULT)
    };
    // SAFETY: forwards the caller's contract.
    unsafe { alloc_entry(real, ptr, req, fwd) }
}

/// Interposed `cudaMallocManaged`: pooled with `RMM_PRELOAD_MANAGED=1` (global attach
/// only), else forwarded.
///
/// # Safety
/// The CUDA runtime's contract.
#[no_mangle]
pub unsafe extern "C" fn cudaMallocManaged(ptr: *mut *mut c_void, size: usize, flags: u32) -> i32 {
    // SAFETY: forwards the caller's contract.
    unsafe {
        managed_entry(
            EntryPoint::CudaMallocManaged,
            Family::Cuda,
            &CUDA_MALLOC_MANAGED,
            ptr,
            size,
            flags,
            || forward!(CUDA_MALLOC_MANAGED, MallocFlagsFn, ptr, size, flags),
        )
    }
}

/// Interposed `cudaMemGetInfo`: free = the runtime's free + bytes free inside our pools.
///
/// # Safety
/// The CUDA runtime's contract.
#[no_mangle]
pub unsafe extern "C" fn cudaMemGetInfo(free: *mut usize, total: *mut usize) -> i32 {
    // SAFETY: forwards the caller's contract.
    unsafe { mem_get_info_entry(Family::Cuda, &CUDA_MEM_GET_INFO, free, total) }
}

/// Interposed `hipMalloc`.
///
/// # Safety
/// The HIP runtime's contract.
#[no_mangle]
pub unsafe extern "C" fn hipMalloc(ptr: *mut *mut c_void, size: usize) -> i32 {
    let req = request(EntryPoint::HipMalloc, Family::Hip, size, Stream::DEFAULT);
    // SAFETY: forwards the caller's contract.
    unsafe {
        alloc_entry(&HIP_MALLOC, ptr, req, || {
            forward!(HIP_MALLOC, MallocFn, ptr, size)
        })
    }
}

/// Interposed `hipFree` (see `cudaFree`).
///
/// # Safety
/// The HIP runtime's contract.
#[no_mangle]
pub unsafe extern "C" fn hipFree(ptr: *mut c_void) -> i32 {
    free_entry(Family::Hip, ptr, None, || forward!(HIP_FREE, FreeFn, ptr))
}

/// Interposed `hipMallocAsync`.
///
/// # Safety
/// The HIP runtime's contract.
#[no_mangle]
pub unsafe extern "C" fn hipMallocAsync(
    ptr: *mut *mut c_void,
    size: usize,
    stream: *mut c_void,
) -> i32 {
    let req = request(
        EntryPoint::HipMallocAsync,
        Family::Hip,
        size,
        Stream(stream as usize),
    );
    // SAFETY: forwards the caller's contract.
    unsafe {
        alloc_entry(&HIP_MALLOC_ASYNC, ptr, req, || {
            forward!(HIP_MALLOC_ASYNC, MallocAsyncFn, ptr, size, stream)
        })
    }
}

/// Interposed `hipFreeAsync`.
///
/// # Safety
/// The HIP runtime's contract.
#[no_mangle]
pub unsafe extern "C" fn hipFreeAsync(ptr: *mut c_void, stream: *mut c_void) -> i32 {
    free_entry(Family::Hip, ptr, Some(Stream(stream as usize)), || {
        forward!(HIP_FREE_ASYNC, FreeAsyncFn, ptr, stream)
    })
}

/// Interposed `hipExtMallocWithFlags`: flags 0 (`hipDeviceMallocDefault`) is pooled, any
/// other flag (fine-grained, uncached, …) is passed through.
///
/// # Safety
/// The HIP runtime's contract.
#[no_mangle]
pub unsafe extern "C" fn hipExtMallocWithFlags(
    ptr: *mut *mut c_void,
    size: usize,
    flags: u32,
) -> i32 {
    let fwd = || forward!(HIP_EXT_MALLOC_WITH_FLAGS, MallocFlagsFn, ptr, size, flags);
    if flags != 0 {
        engine::FORWARDED_OTHER.fetch_add(1, Ordering::Relaxed);
        return super::passed_entry(EntryPoint::HipExtMallocWithFlags, size, fwd);
    }
    let req = request(
        EntryPoint::HipExtMallocWithFlags,
        Family::Hip,
        size,
        Stream::DEFAULT,
    );
    // SAFETY: forwards the caller's contract.
    unsafe { alloc_entry(&HIP_EXT_MALLOC_WITH_FLAGS, ptr, req, fwd) }
}

/// Interposed `hipMallocManaged` (opt-in, see `cudaMallocManaged`).
///
/// # Safety
/// The HIP runtime's contract.
#[no_mangle]
pub unsafe extern "C" fn hipMallocManaged(ptr: *mut *mut c_void, size: usize, flags: u32) -> i32 {
    // SAFETY: forwards the caller's contract.
    unsafe {
        managed_entry(
            EntryPoint::HipMallocManaged,
            Family::Hip,
            &HIP_MALLOC_MANAGED,
            ptr,
            size,
            flags,
            || forward!(HIP_MALLOC_MANAGED, MallocFlagsFn, ptr, size, flags),
        )
    }
}

/// Interposed `hipMemGetInfo` (see `cudaMemGetInfo`).
///
/// # Safety
/// The HIP runtime's contract.
#[no_mangle]
pub unsafe extern "C" fn hipMemGetInfo(free: *mut usize, total: *mut usize) -> i32 {
    // SAFETY: forwards the caller's contract.
    unsafe { mem_get_info_entry(Family::Hip, &HIP_MEM_GET_INFO, free, total) }
}

/// Forwards a stream creation inside a scope (the driver's stream hooks underneath stay
/// out of it), then tells the engine about the stream.
///
/// # Safety
/// `stream` is the caller's out-pointer; `create` calls the vendor's function with the
/// caller's arguments.
pub(crate) unsafe fn create_stream(
    family: Family,
    real: &'static super::Real,
    stream: *mut *mut c_void,
    flags: u32,
    create: impl FnOnce() -> i32,
) -> i32 {
    let Some(_scope) = Scope::enter() else {
        return create();
    };
    let code = create();
    // SAFETY: the vendor's function wrote `stream` if it succeeded.
    unsafe { stream_created_entry(family, real, stream, flags, code) };
    code
}

/// Forgets a stream the program destroys, then forwards.
pub(crate) fn destroy_stream(stream: *mut c_void, destroy: impl FnOnce() -> i32) -> i32 {
    let Some(_scope) = Scope::enter() else {
        return destroy();
    };
    let _ = catch_unwind(|| engine::stream_destroyed(stream as usize));
    destroy()
}

/// Defines the interposed stream functions of one API family: creation is forwarded and
/// the stream tracked (non-blocking ones remembered: deferred reuse must wait for them);
/// destruction forgets the stream, then forwards.
macro_rules! stream_entry_points {
    ($family:expr, $contract:literal,
     $create:ident = $real_create:ident,
     $create_flags:ident = $real_flags:ident,
     $create_priority:ident = $real_priority:ident,
     $destroy:ident = $real_destroy:ident) => {
        #[doc = concat!("Interposed `", stringify!($create), "`: forwarded; the stream is tracked.")]
        ///
        /// # Safety
        #[doc = $contract]
        #[no_mangle]
        pub unsafe extern "C" fn $create(stream: *mut *mut c_void) -> i32 {
            // SAFETY: forwards the caller's contract.
            unsafe {
                create_stream($family, &$real_create, stream, 0, || {
                    forward!($real_create, StreamCreateFn, stream)
                })
            }
        }

        #[doc = concat!("Interposed `", stringify!($create_flags), "`: forwarded; the stream is tracked.")]
        ///
        /// # Safety
        #[doc = $contract]
        #[no_mangle]
        pub unsafe extern "C" fn $create_flags(stream: *mut *mut c_void, flags: u32) -> i32 {
            // SAFETY: forwards the caller's contract.
            unsafe {
                create_stream($family, &$real_flags, stream, flags, || {
                    forward!($real_flags, StreamCreateFlagsFn, stream, flags)
                })
            }
        }

        #[doc = concat!("Interposed `", stringify!($create_priority), "`: forwarded; the stream is tracked.")]
        ///
        /// # Safety
        #[doc = $contract]
        #[no_mangle]
        pub unsafe extern "C" fn $create_priority(
            stream: *mut *mut c_void,
            flags: u32,
            priority: i32,
        ) -> i32 {
            // SAFETY: forwards the caller's contract.
            unsafe {
                create_stream($family, &$real_priority, stream, flags, || {
                    forward!($real_priority, StreamCreatePriorityFn, stream, flags, priority)
                })
            }
        }

        #[doc = concat!("Interposed `", stringify!($destroy), "`: forgets the stream, then forwards.")]
        ///
        /// # Safety
        #[doc = $contract]
        #[no_mangle]
        pub unsafe extern "C" fn $destroy(stream: *mut c_void) -> i32 {
            destroy_stream(stream, || forward!($real_destroy, StreamDestroyFn, stream))
        }
    };
}

stream_entry_points!(
    Family::Cuda,
    "The CUDA runtime's contract.",
    cudaStreamCreate = CUDA_STREAM_CREATE,
    cudaStreamCreateWithFlags = CUDA_STREAM_CREATE_WITH_FLAGS,
    cudaStreamCreateWithPriority = CUDA_STREAM_CREATE_WITH_PRIORITY,
    cudaStreamDestroy = CUDA_STREAM_DESTROY
);
stream_entry_points!(
    Family::Hip,
    "The HIP runtime's contract.",
    hipStreamCreate = HIP_STREAM_CREATE,
    hipStreamCreateWithFlags = HIP_STREAM_CREATE_WITH_FLAGS,
    hipStreamCreateWithPriority = HIP_STREAM_CREATE_WITH_PRIORITY,
    hipStreamDestroy = HIP_STREAM_DESTROY
);
