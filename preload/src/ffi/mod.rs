//! The interposer's FFI layer: every exported symbol, the lookup of the vendor's real
//! functions, and the shared bodies of the allocation, free and memory-info entry points.
//! All `unsafe` of the crate lives under this module; the logic is in `engine` (safe).
//!
//! - `runtime.rs`: the CUDA and HIP runtime entry points (`cudaMalloc`, `hipMalloc`, …).
//! - `driver.rs`: the CUDA driver entry points (`cuMemAlloc_v2`, …), which statically linked
//!   runtimes (nvcc's default, RAPIDS's wheels) and driver-API programs call.
//! - `locate.rs`: a CUDA runtime for the engine when the program has no shared one.
//! - `lookup.rs`: `dlsym`, `cuGetProcAddress*`, `cudaGetDriverEntryPoint*` and
//!   `hipGetProcAddress`, which hand out our hooks in place of the vendor's functions.

pub(crate) mod driver;
mod locate;
pub(crate) mod lookup;
pub(crate) mod runtime;

use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::engine::{self, Family, Route, NOT_INITIALIZED, SUCCESS};
use crate::entry_points::{self, EntryPoint};
use crate::scope::Scope;
use rmm::Stream;

/// Which vendor library defines a function.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Vendor {
    /// The CUDA or HIP runtime.
    Runtime,
    /// The CUDA driver.
    Driver,
}

/// The libraries that define the CUDA and HIP runtime entry points, newest first.
const RUNTIME_LIBRARIES: &[&CStr] = &[
    c"libcudart.so.13",
    c"libcudart.so.12",
    c"libcudart.so.11.0",
    c"libcudart.so",
    c"libamdhip64.so.7",
    c"libamdhip64.so.6",
    c"libamdhip64.so.5",
];

/// The library that defines the CUDA driver entry points.
const DRIVER_LIBRARIES: &[&CStr] = &[c"libcuda.so.1", c"libcuda.so"];

/// A vendor function, looked up once: the next definition after ours
/// (`dlsym(RTLD_NEXT, name)`), else the one in an already-loaded vendor library (a runtime
/// dlopened `RTLD_LOCAL`, as statically linked runtimes open `libcuda.so.1`).
pub(crate) struct Real {
    pub(crate) name: &'static CStr,
    vendor: Vendor,
    addr: AtomicUsize,
}

impl Real {
    pub(crate) const fn new(name: &'static CStr, vendor: Vendor) -> Real {
        Real {
            name,
            vendor,
            addr: AtomicUsize::new(0),
        }
    }

    /// The address of the vendor's function, or 0 while no loaded library defines it.
    pub(crate) fn get(&self) -> usize {
        let a = self.addr.load(Ordering::Acquire);
        if a != 0 {
            return a;
        }
        // SAFETY: RTLD_NEXT with a NUL-terminated name; our `dlsym` passes RTLD_NEXT on to
        // the C library's with our return address, so this is the next definition after
        // this library (never ours).
        let mut p = unsafe { libc::dlsym(libc::RTLD_NEXT, self.name.as_ptr()) } as usize;
        if p == 0 {
            let libraries = match self.vendor {
                Vendor::Runtime => RUNTIME_LIBRARIES,
                Vendor::Driver => DRIVER_LIBRARIES,
            };
            for lib in libraries {
                // SAFETY: RTLD_NOLOAD only returns a handle to an already-loaded library
                // (and loads nothing); the name is NUL-terminated.
                let h = unsafe { libc::dlopen(lib.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
                if !h.is_null() {
                    // SAFETY: a valid handle and a NUL-terminated name; the C library's own
                    // dlsym, so the library's definition is returned, not a hook of ours.
                    p = unsafe { lookup::real_dlsym(h, self.name.as_ptr()) } as usize;
                    if p != 0 {
                        break;
                    }
                }
            }
        }
        if p != 0 {
            self.addr.store(p, Ordering::Release);
        }
        p
    }

    /// The runtime library for the core: for a runtime function, the library that defines
    /// it (the one the program loaded); for a driver function, `None` where the core's own
    /// search finds a runtime, else one beside the libraries the process loaded.
    pub(crate) fn runtime_library(&self) -> Option<String> {
        if self.vendor == Vendor::Driver {
            return locate::cuda_runtime_beside_loaded_libraries();
        }
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

/// Reinterprets a vendor function's address as its C signature.
///
/// # Safety
/// `F` must be the C signature of the symbol `real` names.
pub(crate) unsafe fn func<F: Copy>(real: &Real) -> Option<F> {
    let a = real.get();
    if a == 0 {
        return None;
    }
    // SAFETY: `F` is a function pointer type (pointer-sized) matching the symbol, by the
    // caller's promise, and `a` is the symbol's address.
    Some(unsafe { std::mem::transmute_copy::<usize, F>(&a) })
}

/// Runs `f`, turning a panic into "unknown error" instead of unwinding into C.
pub(crate) fn guarded<T>(f: impl FnOnce() -> Route<T>) -> Route<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(Route::Done(Err(999)))
}

/// Calls the vendor's function `$real` of C signature `$ty` with the caller's arguments
/// (`NOT_INITIALIZED` when no loaded library defines it).
macro_rules! forward {
    ($real:expr, $ty:ty, $($arg:expr),*) => {{
        // SAFETY: `$ty` is the C signature of the symbol; the arguments are the caller's.
        #[allow(unused_unsafe)]
        let code = match unsafe { $crate::ffi::func::<$ty>(&$real) } {
            Some(f) => unsafe { f($($arg),*) },
            None => $crate::engine::NOT_INITIALIZED,
        };
        code
    }};
}
pub(crate) use forward;

/// Declares the vendor functions (`static NAME: Real`) of one library group.
macro_rules! reals {
    ($vendor:ident; $($id:ident = $name:literal;)*) => {
        $(pub(crate) static $id: $crate::ffi::Real =
            $crate::ffi::Real::new($name, $crate::ffi::Vendor::$vendor);)*
    };
}
pub(crate) use reals;

/// What an allocation entry point asks of the engine.
pub(crate) struct AllocRequest {
    pub entry: EntryPoint,
    pub family: Family,
    pub size: usize,
    pub stream: Stream,
    pub managed: bool,
    /// The device whose resource serves it; `None`: the runtime's current device.
    pub device: Option<i32>,
}

/// The shared body of every allocation entry point: served from rmm-rs, or forwarded.
///
/// # Safety
/// `out` must be null or valid for one pointer write; `forward` calls the vendor's function
/// with the caller's own arguments.
pub(crate) unsafe fn alloc_entry(
    real: &'static Real,
    out: *mut *mut c_void,
    req: AllocRequest,
    forward: impl FnOnce() -> i32,
) -> i32 {
    let Some(_scope) = Scope::enter() else {
        return forward();
    };
    if out.is_null() || req.size == 0 {
        engine::FORWARDED_NULL_OR_ZERO.fetch_add(1, Ordering::Relaxed);
        return forward();
    }
    let route = guarded(|| {
        engine::allocate(
            req.family,
            || real.runtime_library(),
            req.size,
            req.stream,
            req.managed,
            req.device,
        )
    });
    match route {
        Route::Forward => {
            entry_points::passed(req.entry, req.size);
            forward()
        }
        Route::Done(Ok(p)) => {
            entry_points::served(req.entry, req.size);
            // SAFETY: `out` is non-null and, by the C contract, valid for one write.
            unsafe { *out = p };
            SUCCESS
        }
        Route::Done(Err(code)) => code,
    }
}

/// An allocation entry point whose memory always passes through: counted, then forwarded.
pub(crate) fn passed_entry(entry: EntryPoint, size: usize, forward: impl FnOnce() -> i32) -> i32 {
    let Some(_scope) = Scope::enter() else {
        return forward();
    };
    let code = forward();
    if code == SUCCESS {
        entry_points::passed(entry, size);
    }
    code
}

/// The shared body of every free entry point; `stream` is `None` for the synchronous free.
pub(crate) fn free_entry(
    family: Family,
    ptr: *mut c_void,
    stream: Option<Stream>,
    forward: impl FnOnce() -> i32,
) -> i32 {
    let Some(_scope) = Scope::enter() else {
        return forward();
    };
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

/// `(size_t* free, size_t* total)`, the signature of `cudaMemGetInfo`, `hipMemGetInfo` and
/// `cuMemGetInfo_v2`.
pub(crate) type MemInfoFn = unsafe extern "C" fn(*mut usize, *mut usize) -> i32;

/// The shared body of the memory-info entry points: the vendor's free bytes plus what our
/// resource of the current device holds free.
///
/// # Safety
/// `free`/`total` must be valid for writes (the vendor's contract); they go to the vendor's
/// function first.
pub(crate) unsafe fn mem_get_info_entry(
    family: Family,
    real: &Real,
    free: *mut usize,
    total: *mut usize,
) -> i32 {
    // SAFETY: the signature of cudaMemGetInfo / hipMemGetInfo / cuMemGetInfo_v2.
    let Some(f) = (unsafe { func::<MemInfoFn>(real) }) else {
        return NOT_INITIALIZED;
    };
    let scope = Scope::enter();
    // SAFETY: the caller's arguments, passed on unchanged.
    let code = unsafe { f(free, total) };
    if scope.is_some() && code == SUCCESS && !free.is_null() {
        let extra = catch_unwind(|| engine::pooled_free_bytes(family)).unwrap_or(0);
        // SAFETY: the vendor's function just wrote through `free`, so it is valid.
        unsafe { *free = (*free).saturating_add(extra) };
    }
    code
}

/// After a successful stream creation: every stream is tracked by rmm (its destruction
/// comes through our stream-destroy hooks, so rmm's resources record its events lazily,
/// with no runtime call per free), and non-blocking streams, which the legacy default
/// stream does not wait for, are remembered so that deferred frees also wait for them.
///
/// # Safety
/// `stream` is the caller's out-pointer, which the vendor's function just wrote on success.
pub(crate) unsafe fn stream_created_entry(
    family: Family,
    real: &'static Real,
    stream: *mut *mut c_void,
    flags: u32,
    code: i32,
) {
    /// `cudaStreamNonBlocking` / `hipStreamNonBlocking` / `CU_STREAM_NON_BLOCKING`.
    const NON_BLOCKING: u32 = 1;
    if code != SUCCESS || stream.is_null() {
        return;
    }
    // SAFETY: the vendor's function succeeded, so it wrote a stream through `stream`.
    let s = unsafe { *stream } as usize;
    let _ = catch_unwind(|| engine::stream_tracked(s));
    if flags & NON_BLOCKING != 0 {
        let _ = catch_unwind(AssertUnwindSafe(|| {
            engine::stream_created(family, || real.runtime_library(), s)
        }));
    }
}
