//! `librmm_preload.so`: an LD_PRELOAD interposer that routes the device allocations of
//! unmodified CUDA and HIP programs (`cudaMalloc`/`cudaFree`, `hipMalloc`/`hipFree`, …) to
//! rmm-rs resources (a pool by default). See the README section "LD_PRELOAD interposer".
//!
//! This file is the FFI layer: the exported symbols, the lookup of the real functions
//! (`dlsym(RTLD_NEXT, …)`), the constructor that validates `RMM_PRELOAD_*`, and the fork
//! and exit hooks. The logic lives in `engine` (no `unsafe`).

#![allow(non_snake_case)]

mod config;
mod deferred;
mod engine;

use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

use engine::{Family, Route, NOT_INITIALIZED, SUCCESS};
use rmm::Stream;

/// A real runtime function, looked up once (`dlsym(RTLD_NEXT, name)`).
struct Real {
    name: &'static CStr,
    addr: AtomicUsize,
}

/// Runtime libraries to look in when `RTLD_NEXT` finds nothing (a program that dlopened
/// the runtime with `RTLD_GLOBAL` after we were loaded).
const LOADED_RUNTIMES: [&CStr; 7] = [
    c"libcudart.so.13",
    c"libcudart.so.12",
    c"libcudart.so.11.0",
    c"libcudart.so",
    c"libamdhip64.so.7",
    c"libamdhip64.so.6",
    c"libamdhip64.so.5",
];

impl Real {
    const fn new(name: &'static CStr) -> Real {
        Real {
            name,
            addr: AtomicUsize::new(0),
        }
    }

    /// The address of the real function, or 0 when no loaded library defines it.
    fn get(&self) -> usize {
        let a = self.addr.load(Ordering::Acquire);
        if a != 0 {
            return a;
        }
        // SAFETY: RTLD_NEXT with a NUL-terminated name: the next definition after this
        // library in the lookup order, i.e. the runtime's own (never ours).
        let mut p = unsafe { libc::dlsym(libc::RTLD_NEXT, self.name.as_ptr()) } as usize;
        if p == 0 {
            for lib in LOADED_RUNTIMES {
                // SAFETY: RTLD_NOLOAD only returns a handle to an already-loaded library
                // (and loads nothing); the name is NUL-terminated.
                let h = unsafe { libc::dlopen(lib.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
                if !h.is_null() {
                    // SAFETY: a valid handle and a NUL-terminated name; a library's own
                    // definition is returned, not ours.
                    p = unsafe { libc::dlsym(h, self.name.as_ptr()) } as usize;
                    if p != 0 {
                        break;
                    }
                }
            }
        }
        self.addr.store(p, Ordering::Release);
        p
    }

    /// The path of the library that defines the real function (for the core's runtime).
    fn library(&self) -> Option<String> {
        let a = self.get();
        if a == 0 {
            return None;
        }
        // SAFETY: `Dl_info` is plain data that dladdr fills in; zeroed is a valid value.
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        // SAFETY: `a` is the address of a loaded function; dladdr only writes `info`.
        if unsafe { libc::dladdr(a as *const c_void, &mut info) } == 0 || info.dli_fname.is_null() {
            return None;
        }
        // SAFETY: dli_fname is a NUL-terminated string owned by the loader, valid while the
        // library stays loaded (runtimes are never unloaded); we copy it now.
        let name = unsafe { CStr::from_ptr(info.dli_fname as *const c_char) };
        Some(name.to_string_lossy().into_owned())
    }
}

type MallocFn = unsafe extern "C" fn(*mut *mut c_void, usize) -> i32;
type MallocFlagsFn = unsafe extern "C" fn(*mut *mut c_void, usize, u32) -> i32;
type MallocAsyncFn = unsafe extern "C" fn(*mut *mut c_void, usize, *mut c_void) -> i32;
type FreeFn = unsafe extern "C" fn(*mut c_void) -> i32;
type FreeAsyncFn = unsafe extern "C" fn(*mut c_void, *mut c_void) -> i32;
type MemInfoFn = unsafe extern "C" fn(*mut usize, *mut usize) -> i32;
type StreamCreateFn = unsafe extern "C" fn(*mut *mut c_void) -> i32;
type StreamCreateFlagsFn = unsafe extern "C" fn(*mut *mut c_void, u32) -> i32;
type StreamCreatePriorityFn = unsafe extern "C" fn(*mut *mut c_void, u32, i32) -> i32;
type StreamDestroyFn = unsafe extern "C" fn(*mut c_void) -> i32;

/// `cudaStreamNonBlocking` / `hipStreamNonBlocking`.
const NON_BLOCKING: u32 = 1;

/// Reinterprets a real function's address as its C signature.
///
/// # Safety
/// `F` must be the C signature of the symbol `real` names.
unsafe fn func<F: Copy>(real: &Real) -> Option<F> {
    let a = real.get();
    if a == 0 {
        return None;
    }
    // SAFETY: `F` is a function pointer type (pointer-sized) matching the symbol, by the
    // caller's promise, and `a` is the symbol's address.
    Some(unsafe { std::mem::transmute_copy::<usize, F>(&a) })
}

/// Runs `f`, turning a panic into "unknown error" instead of unwinding into C.
fn guarded<T>(f: impl FnOnce() -> Route<T>) -> Route<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(Route::Done(Err(999)))
}

macro_rules! reals {
    ($($id:ident = $name:literal;)*) => { $(static $id: Real = Real::new($name);)* };
}

reals! {
    CUDA_MALLOC = c"cudaMalloc";
    CUDA_FREE = c"cudaFree";
    CUDA_MALLOC_ASYNC = c"cudaMallocAsync";
    CUDA_FREE_ASYNC = c"cudaFreeAsync";
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

/// The shared body of every allocation entry point.
///
/// # Safety
/// `out` must be null or valid for one pointer write; `forward` calls the real function
/// with the caller's own arguments.
unsafe fn alloc_entry(
    family: Family,
    real: &'static Real,
    out: *mut *mut c_void,
    size: usize,
    stream: Stream,
    managed: bool,
    forward: impl FnOnce() -> i32,
) -> i32 {
    if out.is_null() || size == 0 {
        engine::FORWARDED_NULL_OR_ZERO.fetch_add(1, Ordering::Relaxed);
        return forward();
    }
    match guarded(|| engine::allocate(family, || real.library(), size, stream, managed)) {
        Route::Forward => forward(),
        Route::Done(Ok(p)) => {
            // SAFETY: `out` is non-null and, by the C contract, valid for one write.
            unsafe { *out = p };
            SUCCESS
        }
        Route::Done(Err(code)) => code,
    }
}

/// The shared body of every free entry point.
fn free_entry(
    family: Family,
    ptr: *mut c_void,
    stream: Option<Stream>,
    forward: impl FnOnce() -> i32,
) -> i32 {
    if ptr.is_null() {
        engine::FORWARDED_NULL_OR_ZERO.fetch_add(1, Ordering::Relaxed);
        return forward();
    }
    match guarded(|| engine::free(family, ptr, stream)) {
        Route::Forward => forward(),
        Route::Done(Ok(())) => SUCCESS,
        Route::Done(Err(code)) => code,
    }
}

/// The shared body of `*MemGetInfo`: real free plus what our pools hold free.
///
/// # Safety
/// `free`/`total` must be valid for writes (the runtime's contract); they go to the real
/// function first.
unsafe fn mem_get_info_entry(
    family: Family,
    real: &Real,
    free: *mut usize,
    total: *mut usize,
) -> i32 {
    // SAFETY: the signature of cudaMemGetInfo/hipMemGetInfo.
    let Some(f) = (unsafe { func::<MemInfoFn>(real) }) else {
        return NOT_INITIALIZED;
    };
    // SAFETY: the caller's arguments, passed on unchanged.
    let code = unsafe { f(free, total) };
    if code == SUCCESS && !free.is_null() {
        let extra = catch_unwind(|| engine::pooled_free_bytes(family)).unwrap_or(0);
        // SAFETY: the real function just wrote through `free`, so it is valid.
        unsafe { *free = (*free).saturating_add(extra) };
    }
    code
}

macro_rules! forward {
    ($real:expr, $ty:ty, $($arg:expr),*) => {{
        // SAFETY: `$ty` is the C signature of the symbol; the arguments are the caller's.
        #[allow(unused_unsafe)]
        let code = match unsafe { func::<$ty>(&$real) } {
            Some(f) => unsafe { f($($arg),*) },
            None => NOT_INITIALIZED,
        };
        code
    }};
}

/// Interposed `cudaMalloc`.
///
/// # Safety
/// The CUDA runtime's contract: `ptr` is null or valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn cudaMalloc(ptr: *mut *mut c_void, size: usize) -> i32 {
    // SAFETY: forwards the caller's contract.
    unsafe {
        alloc_entry(
            Family::Cuda,
            &CUDA_MALLOC,
            ptr,
            size,
            Stream::DEFAULT,
            false,
            || forward!(CUDA_MALLOC, MallocFn, ptr, size),
        )
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
    // SAFETY: forwards the caller's contract.
    unsafe {
        alloc_entry(
            Family::Cuda,
            &CUDA_MALLOC_ASYNC,
            ptr,
            size,
            Stream(stream as usize),
            false,
            || forward!(CUDA_MALLOC_ASYNC, MallocAsyncFn, ptr, size, stream),
        )
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

/// Interposed `cudaMallocManaged`: pooled with `RMM_PRELOAD_MANAGED=1` (global attach
/// only), else forwarded.
///
/// # Safety
/// The CUDA runtime's contract.
#[no_mangle]
pub unsafe extern "C" fn cudaMallocManaged(ptr: *mut *mut c_void, size: usize, flags: u32) -> i32 {
    let fwd = || forward!(CUDA_MALLOC_MANAGED, MallocFlagsFn, ptr, size, flags);
    if flags != ATTACH_GLOBAL || !engine::config().managed {
        engine::FORWARDED_OTHER.fetch_add(1, Ordering::Relaxed);
        return fwd();
    }
    // SAFETY: forwards the caller's contract.
    unsafe {
        alloc_entry(
            Family::Cuda,
            &CUDA_MALLOC_MANAGED,
            ptr,
            size,
            Stream::DEFAULT,
            true,
            fwd,
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
    // SAFETY: forwards the caller's contract.
    unsafe {
        alloc_entry(
            Family::Hip,
            &HIP_MALLOC,
            ptr,
            size,
            Stream::DEFAULT,
            false,
            || forward!(HIP_MALLOC, MallocFn, ptr, size),
        )
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
    // SAFETY: forwards the caller's contract.
    unsafe {
        alloc_entry(
            Family::Hip,
            &HIP_MALLOC_ASYNC,
            ptr,
            size,
            Stream(stream as usize),
            false,
            || forward!(HIP_MALLOC_ASYNC, MallocAsyncFn, ptr, size, stream),
        )
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
/// other flag (fine-grained, uncached, …) is forwarded.
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
        return fwd();
    }
    // SAFETY: forwards the caller's contract.
    unsafe {
        alloc_entry(
            Family::Hip,
            &HIP_EXT_MALLOC_WITH_FLAGS,
            ptr,
            size,
            Stream::DEFAULT,
            false,
            fwd,
        )
    }
}

/// Interposed `hipMallocManaged` (opt-in, see `cudaMallocManaged`).
///
/// # Safety
/// The HIP runtime's contract.
#[no_mangle]
pub unsafe extern "C" fn hipMallocManaged(ptr: *mut *mut c_void, size: usize, flags: u32) -> i32 {
    let fwd = || forward!(HIP_MALLOC_MANAGED, MallocFlagsFn, ptr, size, flags);
    if flags != ATTACH_GLOBAL || !engine::config().managed {
        engine::FORWARDED_OTHER.fetch_add(1, Ordering::Relaxed);
        return fwd();
    }
    // SAFETY: forwards the caller's contract.
    unsafe {
        alloc_entry(
            Family::Hip,
            &HIP_MALLOC_MANAGED,
            ptr,
            size,
            Stream::DEFAULT,
            true,
            fwd,
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

/// After a successful stream creation: every stream is tracked by rmm (its destruction
/// comes through our `*StreamDestroy`, so rmm's resources record its events lazily, with
/// no runtime call per free), and non-blocking streams, which the legacy default stream
/// does not wait for, are remembered so that deferred frees also wait for them.
///
/// # Safety
/// `stream` is the caller's out-pointer, which the real function just wrote on success.
unsafe fn stream_entry(
    family: Family,
    real: &'static Real,
    stream: *mut *mut c_void,
    flags: u32,
    code: i32,
) -> i32 {
    if code == SUCCESS && !stream.is_null() {
        // SAFETY: the real function succeeded, so it wrote a stream through `stream`.
        let s = unsafe { *stream } as usize;
        let _ = catch_unwind(|| engine::stream_tracked(s));
        if flags & NON_BLOCKING != 0 {
            let _ = catch_unwind(|| engine::stream_created(family, || real.library(), s));
        }
    }
    code
}

/// Defines the interposed stream functions of one API family: creation is forwarded and a
/// non-blocking stream remembered (deferred reuse must wait for it); destruction forgets the
/// stream, then forwards.
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
            let code = forward!($real_create, StreamCreateFn, stream);
            // SAFETY: forwards the caller's contract.
            unsafe { stream_entry($family, &$real_create, stream, 0, code) }
        }

        #[doc = concat!("Interposed `", stringify!($create_flags), "`: forwarded; non-blocking streams are remembered.")]
        ///
        /// # Safety
        #[doc = $contract]
        #[no_mangle]
        pub unsafe extern "C" fn $create_flags(stream: *mut *mut c_void, flags: u32) -> i32 {
            let code = forward!($real_flags, StreamCreateFlagsFn, stream, flags);
            // SAFETY: forwards the caller's contract.
            unsafe { stream_entry($family, &$real_flags, stream, flags, code) }
        }

        #[doc = concat!("Interposed `", stringify!($create_priority), "`: forwarded; non-blocking streams are remembered.")]
        ///
        /// # Safety
        #[doc = $contract]
        #[no_mangle]
        pub unsafe extern "C" fn $create_priority(
            stream: *mut *mut c_void,
            flags: u32,
            priority: i32,
        ) -> i32 {
            let code = forward!($real_priority, StreamCreatePriorityFn, stream, flags, priority);
            // SAFETY: forwards the caller's contract.
            unsafe { stream_entry($family, &$real_priority, stream, flags, code) }
        }

        #[doc = concat!("Interposed `", stringify!($destroy), "`: forgets the stream, then forwards.")]
        ///
        /// # Safety
        #[doc = $contract]
        #[no_mangle]
        pub unsafe extern "C" fn $destroy(stream: *mut c_void) -> i32 {
            let _ = catch_unwind(|| engine::stream_destroyed(stream as usize));
            forward!($real_destroy, StreamDestroyFn, stream)
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

extern "C" fn on_exit() {
    let _ = catch_unwind(engine::at_exit);
}

extern "C" fn in_child() {
    engine::mark_forked();
}

/// The library constructor: validates every `RMM_PRELOAD_*` variable (a bad value stops
/// the program here, exit status 1) and registers the exit and fork hooks.
extern "C" fn init() {
    match config::Config::from_env() {
        Ok(cfg) => engine::set_config(cfg),
        Err(msg) => engine::fatal(&msg),
    }
    // SAFETY: both are plain `extern "C" fn()` that touch only atomics (in_child) or make
    // no runtime call (on_exit); registration has no other preconditions.
    unsafe {
        libc::atexit(on_exit);
        libc::pthread_atfork(None, None, Some(in_child));
    }
}

#[used]
#[link_section = ".init_array"]
static INIT: extern "C" fn() = init;
