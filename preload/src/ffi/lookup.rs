//! Handing out our hooks wherever a program looks the vendor's functions up, so that it
//! calls them whichever way it was built:
//!
//! - `dlsym` on a library handle (`dlopen("libcuda.so.1")`, then `dlsym(h, "cuMemAlloc_v2")`
//!   or `"cuGetProcAddress_v2"`, as every CUDA runtime ≥ 11.3 and the Python bindings do);
//! - `cuGetProcAddress` / `cuGetProcAddress_v2`, which a runtime asks for its whole driver
//!   table (versioned names and `_ptsz` variants resolved by the driver);
//! - `cudaGetDriverEntryPoint` / `cudaGetDriverEntryPointByVersion`;
//! - `hipGetProcAddress` (ROCm ≥ 6.2).
//!
//! Each answer the vendor gives is compared with the addresses of the vendor functions we
//! interpose; a match is replaced by our hook. Lookups made by this library itself get the
//! vendor's function (our hooks forward to it).

use std::ffi::{c_char, c_void, CStr};
use std::sync::atomic::{AtomicUsize, Ordering};

use super::{driver, forward, reals, runtime, Real};
use crate::engine::SUCCESS;

/// Which vendor library a hooked function belongs to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Group {
    Driver,
    CudaRuntime,
    Hip,
}

/// One interposed function: the vendor's (`real`) and ours.
struct Hook {
    group: Group,
    real: &'static Real,
    ours: *const (),
}

// SAFETY: `ours` is the address of a function of this library, immutable for the life of
// the process; nothing is written through it.
unsafe impl Sync for Hook {}

macro_rules! hooks {
    ($($group:ident: $module:ident :: $real:ident => $ours:ident,)*) => {
        static HOOKS: &[Hook] = &[
            $(Hook {
                group: Group::$group,
                real: &$module::$real,
                ours: $module::$ours as *const (),
            },)*
        ];
    };
}

hooks! {
    Driver: driver::CU_MEM_ALLOC => cuMemAlloc_v2,
    Driver: driver::CU_MEM_FREE => cuMemFree_v2,
    Driver: driver::CU_MEM_ALLOC_ASYNC => cuMemAllocAsync,
    Driver: driver::CU_MEM_ALLOC_ASYNC_PTSZ => cuMemAllocAsync_ptsz,
    Driver: driver::CU_MEM_FREE_ASYNC => cuMemFreeAsync,
    Driver: driver::CU_MEM_FREE_ASYNC_PTSZ => cuMemFreeAsync_ptsz,
    Driver: driver::CU_MEM_ALLOC_PITCH => cuMemAllocPitch_v2,
    Driver: driver::CU_MEM_ALLOC_MANAGED => cuMemAllocManaged,
    Driver: driver::CU_MEM_ALLOC_FROM_POOL_ASYNC => cuMemAllocFromPoolAsync,
    Driver: driver::CU_MEM_ALLOC_FROM_POOL_ASYNC_PTSZ => cuMemAllocFromPoolAsync_ptsz,
    Driver: driver::CU_MEM_CREATE => cuMemCreate,
    Driver: driver::CU_MEM_ALLOC_HOST => cuMemAllocHost_v2,
    Driver: driver::CU_MEM_HOST_ALLOC => cuMemHostAlloc,
    Driver: driver::CU_MEM_GET_INFO => cuMemGetInfo_v2,
    Driver: driver::CU_MEM_GET_ADDRESS_RANGE => cuMemGetAddressRange_v2,
    Driver: driver::CU_POINTER_GET_ATTRIBUTE => cuPointerGetAttribute,
    Driver: driver::CU_POINTER_GET_ATTRIBUTES => cuPointerGetAttributes,
    Driver: driver::CU_IPC_GET_MEM_HANDLE => cuIpcGetMemHandle,
    Driver: driver::CU_STREAM_CREATE => cuStreamCreate,
    Driver: driver::CU_STREAM_CREATE_WITH_PRIORITY => cuStreamCreateWithPriority,
    Driver: driver::CU_STREAM_DESTROY => cuStreamDestroy,
    Driver: driver::CU_STREAM_DESTROY_V2 => cuStreamDestroy_v2,
    Driver: self::CU_GET_PROC_ADDRESS => cuGetProcAddress,
    Driver: self::CU_GET_PROC_ADDRESS_V2 => cuGetProcAddress_v2,
    CudaRuntime: runtime::CUDA_MALLOC => cudaMalloc,
    CudaRuntime: runtime::CUDA_FREE => cudaFree,
    CudaRuntime: runtime::CUDA_MALLOC_ASYNC => cudaMallocAsync,
    CudaRuntime: runtime::CUDA_FREE_ASYNC => cudaFreeAsync,
    CudaRuntime: runtime::CUDA_MALLOC_ASYNC_PTSZ => cudaMallocAsync_ptsz,
    CudaRuntime: runtime::CUDA_FREE_ASYNC_PTSZ => cudaFreeAsync_ptsz,
    CudaRuntime: runtime::CUDA_MALLOC_MANAGED => cudaMallocManaged,
    CudaRuntime: runtime::CUDA_MEM_GET_INFO => cudaMemGetInfo,
    CudaRuntime: runtime::CUDA_STREAM_CREATE => cudaStreamCreate,
    CudaRuntime: runtime::CUDA_STREAM_CREATE_WITH_FLAGS => cudaStreamCreateWithFlags,
    CudaRuntime: runtime::CUDA_STREAM_CREATE_WITH_PRIORITY => cudaStreamCreateWithPriority,
    CudaRuntime: runtime::CUDA_STREAM_DESTROY => cudaStreamDestroy,
    CudaRuntime: self::CUDA_GET_DRIVER_ENTRY_POINT => cudaGetDriverEntryPoint,
    CudaRuntime: self::CUDA_GET_DRIVER_ENTRY_POINT_BY_VERSION => cudaGetDriverEntryPointByVersion,
    Hip: runtime::HIP_MALLOC => hipMalloc,
    Hip: runtime::HIP_FREE => hipFree,
    Hip: runtime::HIP_MALLOC_ASYNC => hipMallocAsync,
    Hip: runtime::HIP_FREE_ASYNC => hipFreeAsync,
    Hip: runtime::HIP_EXT_MALLOC_WITH_FLAGS => hipExtMallocWithFlags,
    Hip: runtime::HIP_MALLOC_MANAGED => hipMallocManaged,
    Hip: runtime::HIP_MEM_GET_INFO => hipMemGetInfo,
    Hip: runtime::HIP_STREAM_CREATE => hipStreamCreate,
    Hip: runtime::HIP_STREAM_CREATE_WITH_FLAGS => hipStreamCreateWithFlags,
    Hip: runtime::HIP_STREAM_CREATE_WITH_PRIORITY => hipStreamCreateWithPriority,
    Hip: runtime::HIP_STREAM_DESTROY => hipStreamDestroy,
    Hip: self::HIP_GET_PROC_ADDRESS => hipGetProcAddress,
}

reals! { Driver;
    CU_GET_PROC_ADDRESS = c"cuGetProcAddress";
    CU_GET_PROC_ADDRESS_V2 = c"cuGetProcAddress_v2";
}
reals! { Runtime;
    CUDA_GET_DRIVER_ENTRY_POINT = c"cudaGetDriverEntryPoint";
    CUDA_GET_DRIVER_ENTRY_POINT_BY_VERSION = c"cudaGetDriverEntryPointByVersion";
    HIP_GET_PROC_ADDRESS = c"hipGetProcAddress";
}

/// Our hook for the vendor function at `addr` of `group`, or `addr` itself.
fn hook_for(group: Group, addr: usize) -> usize {
    if addr == 0 {
        return 0;
    }
    HOOKS
        .iter()
        .filter(|h| h.group == group)
        .find(|h| h.real.get() == addr)
        .map_or(addr, |h| h.ours as usize)
}

/// Replaces the function pointer at `pfn` with our hook, after a successful lookup.
///
/// # Safety
/// `pfn` is null or valid for reads and writes of one pointer.
unsafe fn replace(group: Group, code: i32, pfn: *mut *mut c_void) {
    if code == SUCCESS && !pfn.is_null() {
        // SAFETY: by the caller's promise.
        unsafe { *pfn = hook_for(group, *pfn as usize) as *mut c_void };
    }
}

type GetProcAddressFn = unsafe extern "C" fn(*const c_char, *mut *mut c_void, i32, u64) -> i32;
type GetProcAddressV2Fn =
    unsafe extern "C" fn(*const c_char, *mut *mut c_void, i32, u64, *mut c_void) -> i32;
type DriverEntryPointFn =
    unsafe extern "C" fn(*const c_char, *mut *mut c_void, u64, *mut c_void) -> i32;
type DriverEntryPointByVersionFn =
    unsafe extern "C" fn(*const c_char, *mut *mut c_void, u32, u64, *mut c_void) -> i32;
type HipGetProcAddressFn = GetProcAddressV2Fn;

/// Defines an interposed lookup entry point: the vendor answers, then a function we
/// interpose comes back as our hook.
macro_rules! lookup_entry {
    ($(#[$doc:meta])* $name:ident = $real:ident as $ty:ty, $group:ident, ($($arg:ident: $arg_ty:ty),*)) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// The vendor's contract: `pfn` receives one pointer.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            symbol: *const c_char,
            pfn: *mut *mut c_void,
            $($arg: $arg_ty),*
        ) -> i32 {
            let code = forward!($real, $ty, symbol, pfn, $($arg),*);
            // SAFETY: by this function's contract.
            unsafe { replace(Group::$group, code, pfn) };
            code
        }
    };
}

lookup_entry! {
    /// Interposed `cuGetProcAddress` (CUDA 11.3–12.x's): the driver resolves the name for
    /// the version asked (`cuMemAlloc` → `cuMemAlloc_v2`, `_ptsz` variants by flag).
    cuGetProcAddress = CU_GET_PROC_ADDRESS as GetProcAddressFn, Driver,
    (version: i32, flags: u64)
}
lookup_entry! {
    /// Interposed `cuGetProcAddress_v2` (CUDA 12+; see `cuGetProcAddress`).
    cuGetProcAddress_v2 = CU_GET_PROC_ADDRESS_V2 as GetProcAddressV2Fn, Driver,
    (version: i32, flags: u64, status: *mut c_void)
}
lookup_entry! {
    /// Interposed `cudaGetDriverEntryPoint` (see `cuGetProcAddress`).
    cudaGetDriverEntryPoint = CUDA_GET_DRIVER_ENTRY_POINT as DriverEntryPointFn, Driver,
    (flags: u64, status: *mut c_void)
}
lookup_entry! {
    /// Interposed `cudaGetDriverEntryPointByVersion` (see `cuGetProcAddress`).
    cudaGetDriverEntryPointByVersion = CUDA_GET_DRIVER_ENTRY_POINT_BY_VERSION
        as DriverEntryPointByVersionFn, Driver,
    (version: u32, flags: u64, status: *mut c_void)
}
lookup_entry! {
    /// Interposed `hipGetProcAddress` (ROCm ≥ 6.2): HIP's own entry points by name and
    /// version.
    hipGetProcAddress = HIP_GET_PROC_ADDRESS as HipGetProcAddressFn, Hip,
    (version: i32, flags: u64, status: *mut c_void)
}

// ---- dlsym ---------------------------------------------------------------------------

type DlsymFn = unsafe extern "C" fn(*mut c_void, *const c_char) -> *mut c_void;

/// The C library's `dlsym`, found with `dlvsym` (which we do not interpose).
static REAL_DLSYM: AtomicUsize = AtomicUsize::new(0);

/// Finds the C library's `dlsym` (once) and returns its address.
extern "C" fn resolve_real_dlsym() -> usize {
    let a = REAL_DLSYM.load(Ordering::Acquire);
    if a != 0 {
        return a;
    }
    for version in [c"GLIBC_2.34", c"GLIBC_2.2.5", c"GLIBC_2.17"] {
        // SAFETY: dlvsym with RTLD_NEXT and NUL-terminated strings: the next definition
        // after this library, the C library's.
        let p = unsafe { libc::dlvsym(libc::RTLD_NEXT, c"dlsym".as_ptr(), version.as_ptr()) };
        if !p.is_null() {
            REAL_DLSYM.store(p as usize, Ordering::Release);
            return p as usize;
        }
    }
    // Nothing can work without the loader's lookup: say so rather than crash later.
    crate::engine::fatal("rmm_preload: the C library's dlsym was not found (glibc needed)")
}

/// The C library's `dlsym`, bypassing our hook (for this library's own lookups).
///
/// # Safety
/// `dlsym`'s contract.
pub(crate) unsafe fn real_dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void {
    let a = resolve_real_dlsym();
    // SAFETY: `a` is the C library's dlsym, of this signature.
    let f: DlsymFn = unsafe { std::mem::transmute::<usize, DlsymFn>(a) };
    // SAFETY: the caller's arguments.
    unsafe { f(handle, name) }
}

/// The load address of the object that contains `addr` (0 when none does).
fn object_base(addr: usize) -> usize {
    // SAFETY: `Dl_info` is plain data that dladdr fills in; zeroed is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the loader's tables and writes `info`.
    if unsafe { libc::dladdr(addr as *const c_void, &mut info) } == 0 {
        return 0;
    }
    info.dli_fbase as usize
}

/// True when `caller` (a return address) lies in this library.
fn called_from_here(caller: usize) -> bool {
    static OURS: AtomicUsize = AtomicUsize::new(0);
    let mut ours = OURS.load(Ordering::Relaxed);
    if ours == 0 {
        ours = object_base(called_from_here as *const () as usize);
        OURS.store(ours, Ordering::Relaxed);
    }
    object_base(caller) == ours
}

/// The body of our `dlsym` for every handle but `RTLD_NEXT` (which the entry stub passes
/// to the C library with the caller's own return address): the C library's answer, with a
/// vendor function we interpose replaced by our hook unless this library asked.
extern "C" fn dlsym_hook(handle: *mut c_void, name: *const c_char, caller: usize) -> *mut c_void {
    // SAFETY: the caller's arguments, under dlsym's contract.
    let found = unsafe { real_dlsym(handle, name) };
    if found.is_null() || name.is_null() {
        return found;
    }
    // SAFETY: dlsym's contract: `name` is a NUL-terminated string.
    let wanted = unsafe { CStr::from_ptr(name) };
    let bytes = wanted.to_bytes();
    if !(bytes.starts_with(b"cu") || bytes.starts_with(b"hip")) {
        return found;
    }
    match HOOKS.iter().find(|h| h.real.name == wanted) {
        Some(h) if h.real.get() == found as usize && !called_from_here(caller) => {
            h.ours as *mut c_void
        }
        _ => found,
    }
}

// Our `dlsym`. `RTLD_NEXT` ((void*)-1) means "after the caller's object", which the C
// library reads from its return address: that case jumps to it with the caller's return
// address in place. Every other handle goes to `dlsym_hook` with the return address as a
// third argument.
#[cfg(target_arch = "x86_64")]
std::arch::global_asm!(
    ".globl dlsym",
    ".type dlsym,@function",
    "dlsym:",
    "cmp rdi, -1",
    "je 2f",
    "mov rdx, [rsp]",
    "jmp {hook}",
    "2:",
    "mov rax, [rip + {real}]",
    "test rax, rax",
    "jz 3f",
    "jmp rax",
    "3:",
    "push rdi",
    "push rsi",
    "sub rsp, 8",
    "call {resolve}",
    "add rsp, 8",
    "pop rsi",
    "pop rdi",
    "jmp rax",
    ".size dlsym, . - dlsym",
    hook = sym dlsym_hook,
    real = sym REAL_DLSYM,
    resolve = sym resolve_real_dlsym,
);
