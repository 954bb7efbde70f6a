//! The CUDA driver entry points. A statically linked runtime (nvcc's default, RAPIDS's
//! wheels) never calls the runtime symbols we export: it fills a table of driver functions
//! through `cuGetProcAddress` (see `lookup.rs`) and allocates with `cuMemAlloc_v2` and
//! `cuMemAllocAsync`. Driver-API programs call them directly (`-lcuda`).
//!
//! Served from rmm-rs: `cuMemAlloc_v2`, `cuMemAllocAsync`, `cuMemAllocPitch_v2` and their
//! frees, in the device's primary context (the one every runtime uses); `cuMemAllocManaged`
//! with `RMM_PRELOAD_MANAGED=1`. Passed through and counted: explicit pools
//! (`cuMemAllocFromPoolAsync`), virtual memory (`cuMemCreate`), host memory. The queries
//! about a pointer answer for the block, not for the pool chunk it was cut from.

use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use super::runtime::{create_stream, destroy_stream, managed_entry};
use super::{
    alloc_entry, forward, free_entry, mem_get_info_entry, passed_entry, reals, AllocRequest,
};
use crate::engine::{self, Family, LiveBlock, Lookup, SUCCESS};
use crate::entry_points::EntryPoint;
use crate::scope::Scope;
use rmm::Stream;

/// `CUdeviceptr`.
type DevPtr = u64;

type AllocFn = unsafe extern "C" fn(*mut DevPtr, usize) -> i32;
type AllocAsyncFn = unsafe extern "C" fn(*mut DevPtr, usize, *mut c_void) -> i32;
type AllocPitchFn = unsafe extern "C" fn(*mut DevPtr, *mut usize, usize, usize, u32) -> i32;
type AllocFlagsFn = unsafe extern "C" fn(*mut DevPtr, usize, u32) -> i32;
type AllocFromPoolFn = unsafe extern "C" fn(*mut DevPtr, usize, *mut c_void, *mut c_void) -> i32;
type CreateFn = unsafe extern "C" fn(*mut u64, usize, *const c_void, u64) -> i32;
type HostAllocFn = unsafe extern "C" fn(*mut *mut c_void, usize) -> i32;
type HostAllocFlagsFn = unsafe extern "C" fn(*mut *mut c_void, usize, u32) -> i32;
type FreeFn = unsafe extern "C" fn(DevPtr) -> i32;
type FreeAsyncFn = unsafe extern "C" fn(DevPtr, *mut c_void) -> i32;
type RangeFn = unsafe extern "C" fn(*mut DevPtr, *mut usize, DevPtr) -> i32;
type AttributeFn = unsafe extern "C" fn(*mut c_void, i32, DevPtr) -> i32;
type AttributesFn = unsafe extern "C" fn(u32, *const i32, *mut *mut c_void, DevPtr) -> i32;
type IpcHandleFn = unsafe extern "C" fn(*mut c_void, DevPtr) -> i32;
type StreamCreateFn = unsafe extern "C" fn(*mut *mut c_void, u32) -> i32;
type StreamCreatePriorityFn = unsafe extern "C" fn(*mut *mut c_void, u32, i32) -> i32;
type StreamDestroyFn = unsafe extern "C" fn(*mut c_void) -> i32;
type CtxGetCurrentFn = unsafe extern "C" fn(*mut usize) -> i32;
type CtxGetDeviceFn = unsafe extern "C" fn(*mut i32) -> i32;
type PrimaryStateFn = unsafe extern "C" fn(i32, *mut u32, *mut i32) -> i32;
type PrimaryRetainFn = unsafe extern "C" fn(*mut usize, i32) -> i32;

reals! { Driver;
    CU_MEM_ALLOC = c"cuMemAlloc_v2";
    CU_MEM_FREE = c"cuMemFree_v2";
    CU_MEM_ALLOC_ASYNC = c"cuMemAllocAsync";
    CU_MEM_ALLOC_ASYNC_PTSZ = c"cuMemAllocAsync_ptsz";
    CU_MEM_FREE_ASYNC = c"cuMemFreeAsync";
    CU_MEM_FREE_ASYNC_PTSZ = c"cuMemFreeAsync_ptsz";
    CU_MEM_ALLOC_PITCH = c"cuMemAllocPitch_v2";
    CU_MEM_ALLOC_MANAGED = c"cuMemAllocManaged";
    CU_MEM_ALLOC_FROM_POOL_ASYNC = c"cuMemAllocFromPoolAsync";
    CU_MEM_ALLOC_FROM_POOL_ASYNC_PTSZ = c"cuMemAllocFromPoolAsync_ptsz";
    CU_MEM_CREATE = c"cuMemCreate";
    CU_MEM_ALLOC_HOST = c"cuMemAllocHost_v2";
    CU_MEM_HOST_ALLOC = c"cuMemHostAlloc";
    CU_MEM_GET_INFO = c"cuMemGetInfo_v2";
    CU_MEM_GET_ADDRESS_RANGE = c"cuMemGetAddressRange_v2";
    CU_POINTER_GET_ATTRIBUTE = c"cuPointerGetAttribute";
    CU_POINTER_GET_ATTRIBUTES = c"cuPointerGetAttributes";
    CU_IPC_GET_MEM_HANDLE = c"cuIpcGetMemHandle";
    CU_STREAM_CREATE = c"cuStreamCreate";
    CU_STREAM_CREATE_WITH_PRIORITY = c"cuStreamCreateWithPriority";
    CU_STREAM_DESTROY = c"cuStreamDestroy";
    CU_STREAM_DESTROY_V2 = c"cuStreamDestroy_v2";
    CU_CTX_GET_CURRENT = c"cuCtxGetCurrent";
    CU_CTX_GET_DEVICE = c"cuCtxGetDevice";
    CU_PRIMARY_CTX_GET_STATE = c"cuDevicePrimaryCtxGetState";
    CU_PRIMARY_CTX_RETAIN = c"cuDevicePrimaryCtxRetain";
}

/// `CUDA_ERROR_INVALID_VALUE`.
const INVALID_VALUE: i32 = 1;
/// `CUDA_ERROR_NOT_FOUND`: what the driver answers for an address nothing is allocated at.
const NOT_FOUND: i32 = 500;
/// `CU_POINTER_ATTRIBUTE_BUFFER_ID` (unsigned long long).
const ATTRIBUTE_BUFFER_ID: i32 = 7;
/// `CU_POINTER_ATTRIBUTE_RANGE_START_ADDR` (CUdeviceptr).
const ATTRIBUTE_RANGE_START: i32 = 11;
/// `CU_POINTER_ATTRIBUTE_RANGE_SIZE` (size_t).
const ATTRIBUTE_RANGE_SIZE: i32 = 12;
/// What `cuMemAllocPitch` rounds a row up to (the driver's pitch on current GPUs).
const PITCH_ALIGNMENT: usize = 512;

/// Legacy IPC handles refused (blocks that do not start their chunk).
pub(crate) static REFUSED_IPC: AtomicU64 = AtomicU64::new(0);

const MAX_DEVICES: usize = 64;
/// Each device's primary context, once it was seen active (we keep one reference to it).
static PRIMARY: [AtomicUsize; MAX_DEVICES] = [const { AtomicUsize::new(0) }; MAX_DEVICES];
/// One more than the highest device whose primary context is in `PRIMARY`.
static LEARNED: AtomicUsize = AtomicUsize::new(0);

/// The device whose primary context is current on this thread, or `None` (no context, or
/// one the program created itself: its memory is not ours to serve).
fn primary_device() -> Option<i32> {
    let mut ctx = 0usize;
    let mut device = -1i32;
    if forward!(CU_CTX_GET_CURRENT, CtxGetCurrentFn, &mut ctx) != SUCCESS || ctx == 0 {
        return None;
    }
    // A primary context seen before names its device: no second driver call per allocation.
    let learned = &PRIMARY[..LEARNED.load(Ordering::Acquire)];
    if let Some(d) = learned
        .iter()
        .position(|p| p.load(Ordering::Acquire) == ctx)
    {
        return i32::try_from(d).ok();
    }
    if forward!(CU_CTX_GET_DEVICE, CtxGetDeviceFn, &mut device) != SUCCESS {
        return None;
    }
    let slot = PRIMARY.get(usize::try_from(device).ok()?)?;
    let known = slot.load(Ordering::Acquire);
    if known != 0 {
        return (known == ctx).then_some(device);
    }
    // Retaining an inactive primary context would create one; an active one is what
    // every runtime on this device uses, so learning its handle costs nothing.
    let (mut flags, mut active) = (0u32, 0i32);
    if forward!(
        CU_PRIMARY_CTX_GET_STATE,
        PrimaryStateFn,
        device,
        &mut flags,
        &mut active
    ) != SUCCESS
        || active == 0
    {
        return None;
    }
    let mut primary = 0usize;
    if forward!(CU_PRIMARY_CTX_RETAIN, PrimaryRetainFn, &mut primary, device) != SUCCESS {
        return None;
    }
    slot.store(primary, Ordering::Release);
    LEARNED.fetch_max(device as usize + 1, Ordering::AcqRel);
    (primary == ctx).then_some(device)
}

/// The stream a `_ptsz` entry point means (driver or runtime): its default stream is the
/// per-thread one.
pub(crate) fn per_thread(stream: *mut c_void) -> Stream {
    match stream as usize {
        0 => Stream::PER_THREAD,
        s => Stream(s),
    }
}

/// The shared body of the served driver allocations.
///
/// # Safety
/// `out` is null or valid for one write; `fwd` calls the driver with the caller's arguments.
unsafe fn driver_alloc(
    entry: EntryPoint,
    real: &'static super::Real,
    out: *mut DevPtr,
    size: usize,
    stream: Stream,
    fwd: impl FnOnce() -> i32,
) -> i32 {
    let Some(device) = primary_device() else {
        return passed_entry(entry, size, fwd);
    };
    let req = AllocRequest {
        entry,
        family: Family::Cuda,
        size,
        stream,
        managed: false,
        device: Some(device),
    };
    // SAFETY: a CUdeviceptr is pointer-sized on every 64-bit platform CUDA supports, so the
    // out-pointer is valid for one pointer write.
    unsafe { alloc_entry(real, out.cast(), req, fwd) }
}

/// Interposed `cuMemAlloc_v2`.
///
/// # Safety
/// The CUDA driver's contract.
#[no_mangle]
pub unsafe extern "C" fn cuMemAlloc_v2(dptr: *mut DevPtr, size: usize) -> i32 {
    // SAFETY: forwards the caller's contract.
    unsafe {
        driver_alloc(
            EntryPoint::CuMemAlloc,
            &CU_MEM_ALLOC,
            dptr,
            size,
            Stream::DEFAULT,
            || forward!(CU_MEM_ALLOC, AllocFn, dptr, size),
        )
    }
}

/// Interposed `cuMemFree_v2`: as `cudaFree` (deferred reuse by default).
///
/// # Safety
/// The CUDA driver's contract.
#[no_mangle]
pub unsafe extern "C" fn cuMemFree_v2(dptr: DevPtr) -> i32 {
    free_entry(Family::Cuda, dptr as *mut c_void, None, || {
        forward!(CU_MEM_FREE, FreeFn, dptr)
    })
}

/// Interposed `cuMemAllocAsync` (stream-ordered on `stream`).
///
/// # Safety
/// The CUDA driver's contract.
#[no_mangle]
pub unsafe extern "C" fn cuMemAllocAsync(
    dptr: *mut DevPtr,
    size: usize,
    stream: *mut c_void,
) -> i32 {
    let s = Stream(stream as usize);
    // SAFETY: forwards the caller's contract.
    unsafe {
        driver_alloc(
            EntryPoint::CuMemAllocAsync,
            &CU_MEM_ALLOC_ASYNC,
            dptr,
            size,
            s,
            || forward!(CU_MEM_ALLOC_ASYNC, AllocAsyncFn, dptr, size, stream),
        )
    }
}

/// Interposed `cuMemAllocAsync_ptsz` (stream 0 is the per-thread default stream).
///
/// # Safety
/// The CUDA driver's contract.
#[no_mangle]
pub unsafe extern "C" fn cuMemAllocAsync_ptsz(
    dptr: *mut DevPtr,
    size: usize,
    stream: *mut c_void,
) -> i32 {
    let s = per_thread(stream);
    // SAFETY: forwards the caller's contract.
    unsafe {
        driver_alloc(
            EntryPoint::CuMemAllocAsync,
            &CU_MEM_ALLOC_ASYNC_PTSZ,
            dptr,
            size,
            s,
            || forward!(CU_MEM_ALLOC_ASYNC_PTSZ, AllocAsyncFn, dptr, size, stream),
        )
    }
}

/// Interposed `cuMemFreeAsync` (stream-ordered on `stream`).
///
/// # Safety
/// The CUDA driver's contract.
#[no_mangle]
pub unsafe extern "C" fn cuMemFreeAsync(dptr: DevPtr, stream: *mut c_void) -> i32 {
    free_entry(
        Family::Cuda,
        dptr as *mut c_void,
        Some(Stream(stream as usize)),
        || forward!(CU_MEM_FREE_ASYNC, FreeAsyncFn, dptr, stream),
    )
}

/// Interposed `cuMemFreeAsync_ptsz`.
///
/// # Safety
/// The CUDA driver's contract.
#[no_mangle]
pub unsafe extern "C" fn cuMemFreeAsync_ptsz(dptr: DevPtr, stream: *mut c_void) -> i32 {
    free_entry(
        Family::Cuda,
        dptr as *mut c_void,
        Some(per_thread(stream)),
        || forward!(CU_MEM_FREE_ASYNC_PTSZ, FreeAsyncFn, dptr, stream),
    )
}

/// Interposed `cuMemAllocPitch_v2`: rows of `width` bytes rounded up to 512, served from
/// the pool; element sizes the driver refuses (other than 4, 8, 16) are passed through for
/// its error.
///
/// # Safety
/// The CUDA driver's contract.
#[no_mangle]
pub unsafe extern "C" fn cuMemAllocPitch_v2(
    dptr: *mut DevPtr,
    pitch: *mut usize,
    width: usize,
    height: usize,
    element_size: u32,
) -> i32 {
    let fwd = move || {
        forward!(
            CU_MEM_ALLOC_PITCH,
            AllocPitchFn,
            dptr,
            pitch,
            width,
            height,
            element_size
        )
    };
    let row = width.checked_next_multiple_of(PITCH_ALIGNMENT);
    let bytes = row.and_then(|r| r.checked_mul(height));
    let (Some(row), Some(bytes)) = (row, bytes) else {
        return fwd();
    };
    if pitch.is_null() || bytes == 0 || !matches!(element_size, 4 | 8 | 16) {
        return fwd();
    }
    // SAFETY: `pitch` is non-null and, by the driver's contract, valid for a write; a
    // passed-through call overwrites it.
    unsafe { *pitch = row };
    // SAFETY: forwards the caller's contract.
    unsafe {
        driver_alloc(
            EntryPoint::CuMemAllocPitch,
            &CU_MEM_ALLOC_PITCH,
            dptr,
            bytes,
            Stream::DEFAULT,
            fwd,
        )
    }
}

/// Interposed `cuMemAllocManaged`: pooled with `RMM_PRELOAD_MANAGED=1` (global attach),
/// else passed through.
///
/// # Safety
/// The CUDA driver's contract.
#[no_mangle]
pub unsafe extern "C" fn cuMemAllocManaged(dptr: *mut DevPtr, size: usize, flags: u32) -> i32 {
    // SAFETY: forwards the caller's contract; a CUdeviceptr is pointer-sized.
    unsafe {
        managed_entry(
            EntryPoint::CuMemAllocManaged,
            Family::Cuda,
            &CU_MEM_ALLOC_MANAGED,
            dptr.cast(),
            size,
            flags,
            || forward!(CU_MEM_ALLOC_MANAGED, AllocFlagsFn, dptr, size, flags),
        )
    }
}

/// Interposed `cuMemAllocFromPoolAsync`: the program's own pool, passed through.
///
/// # Safety
/// The CUDA driver's contract.
#[no_mangle]
pub unsafe extern "C" fn cuMemAllocFromPoolAsync(
    dptr: *mut DevPtr,
    size: usize,
    pool: *mut c_void,
    stream: *mut c_void,
) -> i32 {
    // SAFETY: forwards the caller's contract.
    unsafe { from_pool(&CU_MEM_ALLOC_FROM_POOL_ASYNC, dptr, size, pool, stream) }
}

/// Interposed `cuMemAllocFromPoolAsync_ptsz`: passed through.
///
/// # Safety
/// The CUDA driver's contract.
#[no_mangle]
pub unsafe extern "C" fn cuMemAllocFromPoolAsync_ptsz(
    dptr: *mut DevPtr,
    size: usize,
    pool: *mut c_void,
    stream: *mut c_void,
) -> i32 {
    // SAFETY: forwards the caller's contract.
    unsafe { from_pool(&CU_MEM_ALLOC_FROM_POOL_ASYNC_PTSZ, dptr, size, pool, stream) }
}

/// Counts an allocation from the program's own pool and forwards it to `real`.
///
/// # Safety
/// The CUDA driver's contract for `cuMemAllocFromPoolAsync`.
unsafe fn from_pool(
    real: &'static super::Real,
    dptr: *mut DevPtr,
    size: usize,
    pool: *mut c_void,
    stream: *mut c_void,
) -> i32 {
    passed_entry(EntryPoint::CuMemAllocFromPoolAsync, size, || {
        forward!(*real, AllocFromPoolFn, dptr, size, pool, stream)
    })
}

/// Interposed `cuMemCreate`: physical memory for the program's own mappings, passed
/// through.
///
/// # Safety
/// The CUDA driver's contract.
#[no_mangle]
pub unsafe extern "C" fn cuMemCreate(
    handle: *mut u64,
    size: usize,
    prop: *const c_void,
    flags: u64,
) -> i32 {
    passed_entry(EntryPoint::CuMemCreate, size, || {
        forward!(CU_MEM_CREATE, CreateFn, handle, size, prop, flags)
    })
}

/// Interposed `cuMemAllocHost_v2`: pinned host memory, passed through.
///
/// # Safety
/// The CUDA driver's contract.
#[no_mangle]
pub unsafe extern "C" fn cuMemAllocHost_v2(pp: *mut *mut c_void, size: usize) -> i32 {
    passed_entry(EntryPoint::CuMemAllocHost, size, || {
        forward!(CU_MEM_ALLOC_HOST, HostAllocFn, pp, size)
    })
}

/// Interposed `cuMemHostAlloc`: pinned host memory, passed through.
///
/// # Safety
/// The CUDA driver's contract.
#[no_mangle]
pub unsafe extern "C" fn cuMemHostAlloc(pp: *mut *mut c_void, size: usize, flags: u32) -> i32 {
    passed_entry(EntryPoint::CuMemHostAlloc, size, || {
        forward!(CU_MEM_HOST_ALLOC, HostAllocFlagsFn, pp, size, flags)
    })
}

/// Interposed `cuMemGetInfo_v2`: free = the driver's free + bytes free inside our pools
/// (what the program can still allocate).
///
/// # Safety
/// The CUDA driver's contract.
#[no_mangle]
pub unsafe extern "C" fn cuMemGetInfo_v2(free: *mut usize, total: *mut usize) -> i32 {
    // SAFETY: forwards the caller's contract.
    unsafe { mem_get_info_entry(Family::Cuda, &CU_MEM_GET_INFO, free, total) }
}

/// Our answer about `ptr`, or `None` when the driver answers (a nested call, or not our
/// memory).
fn ours(ptr: DevPtr) -> Option<Lookup> {
    match engine::lookup(ptr as usize) {
        Lookup::Foreign => None,
        l => Some(l),
    }
}

/// Interposed `cuMemGetAddressRange_v2`: a block of ours is its own range (the driver
/// would report the pool chunk it was cut from).
///
/// # Safety
/// The CUDA driver's contract.
#[no_mangle]
pub unsafe extern "C" fn cuMemGetAddressRange_v2(
    base: *mut DevPtr,
    size: *mut usize,
    dptr: DevPtr,
) -> i32 {
    let fwd = || forward!(CU_MEM_GET_ADDRESS_RANGE, RangeFn, base, size, dptr);
    let Some(_scope) = Scope::enter() else {
        return fwd();
    };
    match ours(dptr) {
        None => fwd(),
        Some(Lookup::Ours(b)) => {
            // SAFETY: each out-pointer is null or, by the driver's contract, valid.
            unsafe {
                if !base.is_null() {
                    *base = b.base as DevPtr;
                }
                if !size.is_null() {
                    *size = b.size;
                }
            }
            SUCCESS
        }
        Some(_) => NOT_FOUND,
    }
}

/// Writes our value of `attribute` for block `b` to `data`, if it is one we answer.
///
/// # Safety
/// `data` is non-null and valid for the attribute's type (the driver's contract).
unsafe fn override_attribute(attribute: i32, data: *mut c_void, b: &LiveBlock) {
    // SAFETY: the three attributes are 8-byte values (CUdeviceptr, size_t, unsigned long
    // long) by the driver's contract, which the caller's `data` follows.
    unsafe {
        match attribute {
            ATTRIBUTE_BUFFER_ID => *data.cast::<u64>() = b.id,
            ATTRIBUTE_RANGE_START => *data.cast::<u64>() = b.base as u64,
            ATTRIBUTE_RANGE_SIZE => *data.cast::<u64>() = b.size as u64,
            _ => {}
        }
    }
}

/// Interposed `cuPointerGetAttribute`: the driver answers; for a block of ours the range
/// start, range size and buffer id are the block's.
///
/// # Safety
/// The CUDA driver's contract.
#[no_mangle]
pub unsafe extern "C" fn cuPointerGetAttribute(
    data: *mut c_void,
    attribute: i32,
    ptr: DevPtr,
) -> i32 {
    let code = forward!(CU_POINTER_GET_ATTRIBUTE, AttributeFn, data, attribute, ptr);
    let Some(_scope) = Scope::enter() else {
        return code;
    };
    if code == SUCCESS && !data.is_null() {
        if let Some(Lookup::Ours(b)) = ours(ptr) {
            // SAFETY: the driver just wrote the attribute through `data`.
            unsafe { override_attribute(attribute, data, &b) };
        }
    }
    code
}

/// Interposed `cuPointerGetAttributes` (see `cuPointerGetAttribute`).
///
/// # Safety
/// The CUDA driver's contract.
#[no_mangle]
pub unsafe extern "C" fn cuPointerGetAttributes(
    count: u32,
    attributes: *const i32,
    data: *mut *mut c_void,
    ptr: DevPtr,
) -> i32 {
    let code = forward!(
        CU_POINTER_GET_ATTRIBUTES,
        AttributesFn,
        count,
        attributes,
        data,
        ptr
    );
    let Some(_scope) = Scope::enter() else {
        return code;
    };
    if code != SUCCESS || attributes.is_null() || data.is_null() {
        return code;
    }
    if let Some(Lookup::Ours(b)) = ours(ptr) {
        for i in 0..count as usize {
            // SAFETY: both arrays hold `count` entries (the driver's contract, which it
            // just relied on); a null entry is one the caller did not ask for.
            unsafe {
                let slot = *data.add(i);
                if !slot.is_null() {
                    override_attribute(*attributes.add(i), slot, &b);
                }
            }
        }
    }
    code
}

/// Interposed `cuIpcGetMemHandle`. A legacy IPC handle names a whole upstream allocation
/// and opens to its start, so the base + offset protocol (CuPy, UCX, PyTorch) works for a
/// block that starts its pool chunk; for any other block of ours the importer would read
/// the chunk's start, and the call is refused with a message instead.
///
/// # Safety
/// The CUDA driver's contract.
#[no_mangle]
pub unsafe extern "C" fn cuIpcGetMemHandle(handle: *mut c_void, dptr: DevPtr) -> i32 {
    let fwd = || forward!(CU_IPC_GET_MEM_HANDLE, IpcHandleFn, handle, dptr);
    let Some(_scope) = Scope::enter() else {
        return fwd();
    };
    match ours(dptr) {
        None => fwd(),
        Some(Lookup::Ours(b)) if b.starts_chunk => fwd(),
        Some(found) => {
            REFUSED_IPC.fetch_add(1, Ordering::Relaxed);
            let what = match found {
                Lookup::Ours(b) => format!(
                    "the block ({} bytes at {:#x}) is cut from the middle of a pool chunk, and \
                     a legacy IPC handle opens to the chunk's start, so the importing process \
                     would read the wrong memory",
                    b.size, b.base
                ),
                _ => "it is free memory inside rmm_preload's pool".to_string(),
            };
            eprintln!(
                "rmm_preload: cuIpcGetMemHandle({dptr:#x}) refused (CUDA_ERROR_INVALID_VALUE): \
                 {what}. For legacy IPC run with RMM_PRELOAD_RESOURCE=cuda, or share through a \
                 memory pool (cudaMemPoolExportPointer), which passes through"
            );
            INVALID_VALUE
        }
    }
}

/// Interposed `cuStreamCreate`: forwarded; the stream is tracked.
///
/// # Safety
/// The CUDA driver's contract.
#[no_mangle]
pub unsafe extern "C" fn cuStreamCreate(stream: *mut *mut c_void, flags: u32) -> i32 {
    // SAFETY: forwards the caller's contract.
    unsafe {
        create_stream(Family::Cuda, &CU_STREAM_CREATE, stream, flags, || {
            forward!(CU_STREAM_CREATE, StreamCreateFn, stream, flags)
        })
    }
}

/// Interposed `cuStreamCreateWithPriority`: forwarded; the stream is tracked.
///
/// # Safety
/// The CUDA driver's contract.
#[no_mangle]
pub unsafe extern "C" fn cuStreamCreateWithPriority(
    stream: *mut *mut c_void,
    flags: u32,
    priority: i32,
) -> i32 {
    // SAFETY: forwards the caller's contract.
    unsafe {
        create_stream(
            Family::Cuda,
            &CU_STREAM_CREATE_WITH_PRIORITY,
            stream,
            flags,
            || {
                forward!(
                    CU_STREAM_CREATE_WITH_PRIORITY,
                    StreamCreatePriorityFn,
                    stream,
                    flags,
                    priority
                )
            },
        )
    }
}

/// Interposed `cuStreamDestroy_v2`: forgets the stream, then forwards.
///
/// # Safety
/// The CUDA driver's contract.
#[no_mangle]
pub unsafe extern "C" fn cuStreamDestroy_v2(stream: *mut c_void) -> i32 {
    destroy_stream(stream, || {
        forward!(CU_STREAM_DESTROY_V2, StreamDestroyFn, stream)
    })
}

/// Interposed `cuStreamDestroy` (the unversioned name of older programs).
///
/// # Safety
/// The CUDA driver's contract.
#[no_mangle]
pub unsafe extern "C" fn cuStreamDestroy(stream: *mut c_void) -> i32 {
    destroy_stream(stream, || {
        forward!(CU_STREAM_DESTROY, StreamDestroyFn, stream)
    })
}
