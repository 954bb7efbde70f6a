//! The one implementation of [`Runtime`] for both GPU vendors.
//!
//! HIP's runtime API is a one-to-one rename of CUDA's (`hipMalloc` ↔ `cudaMalloc`, same
//! argument order, same error numbers for the codes we classify), so a single function
//! table, filled by name from a [`Flavor`], serves both. What really differs per vendor
//! (device-attribute numbers, pointer-attribute encodings, struct generations, the legacy
//! stream handle) lives in the flavor, defined in `cuda.rs` and `hip.rs`.
//!
//! Layouts come from the vendors' headers: CUDA `driver_types.h` / `cuda_runtime_api.h`
//! 12.6 and 13.0 (offsets and enum values measured by compiling against 13.0), HIP
//! `hip_runtime_api.h` 5.2.3 (Debian `libamdhip64-dev`, measured the same way) and ROCm 6.x.
//! The virtual memory management structs: cuda.h (CUDA 10.2 to 13.x) and
//! `hip_runtime_api.h` of ROCm 5.2.3, 5.3 to 6.2 (ROCm/HIP's tags) and 7.x
//! (ROCm/rocm-systems); `tests-hip/vmm_layout.c` checks the installed HIP headers.

use std::cell::Cell;
use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::dl::Library;
use super::{
    DeviceAttribute, DeviceId, DirectCalls, Event, HostFn, MemAdvice, MemHandleType, MemInfo,
    MemPool, MemPoolAttr, MemPoolLocation, MemPoolProps, MemoryType, PhysicalHandle,
    PointerAttributes, RtResult, Runtime, RuntimeError, RuntimeErrorKind, RuntimeKind, Stream,
    StreamFlags,
};

/// A raw runtime handle (stream, event, pool) or device pointer.
type P = *mut c_void;
/// `cudaHostFn_t` / `hipHostFn_t`.
type HostTrampoline = unsafe extern "C" fn(*mut c_void);

/// What differs between CUDA and HIP beyond the `cuda`/`hip` prefix.
pub(super) struct Flavor {
    /// Which backend this is.
    pub kind: RuntimeKind,
    /// Column of the symbol table: 0 for CUDA names, 1 for HIP names.
    pub column: usize,
    /// Library names to try, newest first.
    pub libraries: &'static [&'static str],
    /// The vendor's number for a device attribute at runtime `version`, if it has one.
    pub device_attribute: fn(DeviceAttribute, i32) -> Option<i32>,
    /// The vendor's number for the attribute CUDA numbers `cudaDeviceAttr` at runtime
    /// `version`, if the vendor has that attribute.
    pub cuda_attribute: fn(i32, i32) -> Option<i32>,
    /// Decodes `(type, isManaged)` of the pointer-attribute struct at runtime `version`.
    pub memory_type: fn(i32, i32, i32) -> MemoryType,
    /// The raw stream handle to pass for `stream`.
    pub stream: fn(Stream) -> usize,
    /// First runtime version whose mempool props have `maxSize` (None: never).
    pub pool_max_size_since: Option<i32>,
    /// First runtime version with managed mempools (`allocType` 2) (None: never).
    pub managed_pools_since: Option<i32>,
    /// First runtime and driver version whose device mempools can serve the hardware
    /// decompression engine (`usage` = `cudaMemPoolCreateUsageHwDecompress`, CUDA 12.8):
    /// RMM 25.10 and later create their async pools so whenever the driver has it.
    pub hw_decompress_since: Option<i32>,
    /// First runtime version whose unsuffixed `MemPrefetchAsync`/`MemAdvise` take a
    /// `MemLocation` instead of an `int` device (CUDA 13); None: never.
    pub location_api_since: Option<i32>,
    /// The runtime reports memory it does not know with "invalid value" (HIP) instead of
    /// a success with type "unregistered" (CUDA 11+).
    pub unknown_pointer_is_invalid_value: bool,
    /// The runtime can export pools as fabric handles.
    pub fabric_handles: bool,
    /// The driver library under the runtime and the first runtime version from which the
    /// thin calls' direct path uses it (see [`DriverCalls`]); None: the runtime's own.
    pub driver: Option<(&'static DriverCalls, i32)>,
    /// Where the virtual memory management calls come from, and their names.
    pub vmm: &'static VmmNames,
}

/// The driver's names of the thin calls, resolved from `library` for the C ABI's direct
/// path ([`DirectCalls`]). Only from a runtime version on which the runtime's current
/// device and the driver's current context cannot differ: CUDA 12's `cudaSetDevice` makes
/// the device's primary context current at once (CUDA 11 deferred that to the next call).
pub(super) struct DriverCalls {
    /// The driver library (`libcuda.so.1`); not loaded when absent.
    pub library: &'static str,
    /// Device memory (`cuMemAlloc_v2`), as `cudaMalloc`.
    pub malloc: &'static str,
    /// Free (`cuMemFree_v2`), as `cudaFree`.
    pub free: &'static str,
    /// Managed memory (`cuMemAllocManaged`), as `cudaMallocManaged`.
    pub malloc_managed: &'static str,
    /// Pool allocation (`cuMemAllocFromPoolAsync`), as `cudaMallocFromPoolAsync`.
    pub malloc_from_pool_async: &'static str,
    /// Stream-ordered free (`cuMemFreeAsync`), as `cudaFreeAsync`.
    pub free_async: &'static str,
}

/// `cudaMemLocation` / `hipMemLocation`: `{ enum type; int id; }` (8 bytes, by value).
#[repr(C)]
#[derive(Clone, Copy)]
struct MemLocation {
    ty: i32,
    id: i32,
}

const LOCATION_DEVICE: i32 = 1; // cudaMemLocationTypeDevice / hipMemLocationTypeDevice
const LOCATION_HOST: i32 = 2; // cudaMemLocationTypeHost / hipMemLocationTypeHost

impl MemLocation {
    /// A device, or the host for `-1` (`cudaCpuDeviceId`).
    fn of(device: DeviceId) -> MemLocation {
        if device < 0 {
            MemLocation {
                ty: LOCATION_HOST,
                id: 0,
            }
        } else {
            MemLocation {
                ty: LOCATION_DEVICE,
                id: device,
            }
        }
    }
}

/// `cudaMemPoolCreateUsageHwDecompress`: the pool's memory may feed the hardware
/// decompression engine.
const POOL_USAGE_HW_DECOMPRESS: u16 = 0x2;

/// The common prefix of `cudaMemPoolProps` (CUDA 11.2–13.x) and `hipMemPoolProps`
/// (ROCm 5.x–7.x): allocType, handleTypes, location at 0..16, win32SecurityAttributes at 16,
/// maxSize at 24 (CUDA ≥ 12.2, newer ROCm; reserved zero bytes before), then `usage` (CUDA
/// 12.x+) and reserved bytes up to 88 bytes. We pass a larger zeroed buffer so that a newer
/// runtime reading a longer struct still sees zeros.
#[repr(C)]
struct RawPoolProps {
    alloc_type: i32,
    handle_types: i32,
    location: MemLocation,
    win32_security_attributes: *mut c_void,
    max_size: usize,
    rest: [u8; 224],
}

/// `cudaPointerAttributes` (CUDA 11+: `{ int type; int device; void* devicePointer;
/// void* hostPointer; }`, padded with reserved fields to 88 bytes in CUDA 13.0) and
/// `hipPointerAttribute_t` (ROCm 5/6: the same then
/// `int isManaged; unsigned allocationFlags;`), over-allocated for future fields.
#[repr(C)]
struct RawPointerAttributes {
    ty: i32,
    device: i32,
    device_pointer: *mut c_void,
    host_pointer: *mut c_void,
    is_managed: i32,
    allocation_flags: u32,
    spare: [u64; 16],
}

/// The virtual memory management calls of a flavor ([`Runtime`]'s `vmm_*`): CUDA's are the
/// driver's (`libcuda.so.1`; the runtime API has none), HIP's the runtime library's own.
/// Both vendors give them the same C signatures (`CUdeviceptr` and `void*` addresses, 64-bit
/// handles), so one table serves both.
pub(super) struct VmmNames {
    /// The library to load them from (`libcuda.so.1`); None: the runtime library itself.
    /// Calls into another library are the driver's: they report `CUresult` codes, named by
    /// `get_error_name`/`get_error_string`, and act on the calling thread's current context.
    pub library: Option<&'static str>,
    /// `cuMemGetAllocationGranularity(size_t*, const prop*, option)`.
    pub granularity: &'static str,
    /// `cuMemAddressReserve(ptr*, size, alignment, addr, flags)`.
    pub address_reserve: &'static str,
    /// `cuMemAddressFree(ptr, size)`.
    pub address_free: &'static str,
    /// `cuMemCreate(handle*, size, const prop*, flags)`.
    pub create: &'static str,
    /// `cuMemRelease(handle)`.
    pub release: &'static str,
    /// `cuMemMap(ptr, size, offset, handle, flags)`.
    pub map: &'static str,
    /// `cuMemUnmap(ptr, size)`.
    pub unmap: &'static str,
    /// `cuMemSetAccess(ptr, size, const desc*, count)`.
    pub set_access: &'static str,
    /// The driver's `(code, const char** out) -> code` error name and string functions
    /// (`cuGetErrorName`, `cuGetErrorString`); `""` where the runtime's own serve.
    pub get_error_name: &'static str,
    /// See `get_error_name`.
    pub get_error_string: &'static str,
    /// The driver's `cuDeviceGetAttribute(int*, attribute, CUdevice)`; `""`: the runtime's.
    pub device_get_attribute: &'static str,
    /// The driver's `cuDeviceGet(CUdevice*, ordinal)`, for its attribute query.
    pub device_get: &'static str,
    /// The driver's `cuCtxGetCurrent(CUcontext*)`; `""` where no context is needed.
    pub ctx_get_current: &'static str,
    /// The number of the "virtual memory management supported" device attribute at runtime
    /// `version` (for `device_get_attribute`); None where there is none to ask.
    pub supported_attribute: fn(i32) -> Option<i32>,
    /// The allocation-properties layout at runtime `version`; None when it is not known
    /// (then `vmm_granularity` and `vmm_create` report `NotSupported`).
    pub prop_layout: fn(i32) -> Option<PropLayout>,
}

/// The layouts of `CUmemAllocationProp` / `hipMemAllocationProp`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum PropLayout {
    /// CUDA 10.2+ `CUmemAllocationProp`, and `hipMemAllocationProp` from ROCm 5.3 on:
    /// `{ type; requestedHandleType(s); location; win32HandleMetaData; allocFlags }`.
    Cuda,
    /// `hipMemAllocationProp` of ROCm 5.2 and older: `{ unsigned char compressionType;
    /// location; requestedHandleType; type; unsigned short usage; win32HandleMetaData }`.
    Hip52,
}

const ALLOCATION_TYPE_PINNED: i32 = 1; // CU_MEM_ALLOCATION_TYPE_PINNED / hipMemAllocationTypePinned
const ACCESS_READ_WRITE: i32 = 3; // CU_MEM_ACCESS_FLAGS_PROT_READWRITE / hipMemAccessFlagsProtReadWrite
const GRANULARITY_MINIMUM: i32 = 0; // CU_MEM_ALLOC_GRANULARITY_MINIMUM / hipMemAllocationGranularityMinimum
const GRANULARITY_RECOMMENDED: i32 = 1; // ..._RECOMMENDED

/// `allocFlags` of [`RawAllocProp`] (CUDA: `{ unsigned char compressionType;
/// unsigned char gpuDirectRDMACapable; unsigned short usage; unsigned char reserved[4]; }`;
/// ROCm 5.3+ has the first three).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct AllocFlags {
    compression_type: u8,
    gpu_direct_rdma_capable: u8,
    usage: u16,
    reserved: [u8; 4],
}

/// `CUmemAllocationProp` (cuda.h, CUDA 10.2 to 13.x: 32 bytes) and `hipMemAllocationProp`
/// of ROCm 5.3 and later (the same 32 bytes), followed by zeros so that a runtime reading a
/// longer struct still sees zeros.
#[repr(C)]
struct RawAllocProp {
    ty: i32,
    requested_handle_types: i32,
    location: MemLocation,
    win32_handle_meta_data: *mut c_void,
    alloc_flags: AllocFlags,
    spare: [u64; 8],
}

/// `hipMemAllocationProp` of ROCm 5.2 and older (Debian's `libamdhip64-dev` 5.2.3: 32
/// bytes), followed by zeros like [`RawAllocProp`].
#[repr(C)]
struct RawAllocPropHip52 {
    compression_type: u8,
    /// C's padding, as a field so that it is zeroed like the rest: the struct is passed
    /// whole to the runtime (and read whole by the layout test).
    pad0: [u8; 3],
    location: MemLocation,
    requested_handle_type: i32,
    ty: i32,
    usage: u16,
    /// C's padding, zeroed (see `pad0`).
    pad1: [u8; 2],
    win32_handle_meta_data: *mut c_void,
    spare: [u64; 8],
}

/// Allocation properties of pinned device memory on one device, in a runtime's layout.
enum AllocProp {
    Cuda(RawAllocProp),
    Hip52(RawAllocPropHip52),
}

impl AllocProp {
    /// Pinned memory of `device`, no export handle, no compression, in `layout`.
    fn pinned_device(layout: PropLayout, device: DeviceId) -> AllocProp {
        let location = MemLocation {
            ty: LOCATION_DEVICE,
            id: device,
        };
        match layout {
            PropLayout::Cuda => AllocProp::Cuda(RawAllocProp {
                ty: ALLOCATION_TYPE_PINNED,
                requested_handle_types: 0,
                location,
                win32_handle_meta_data: std::ptr::null_mut(),
                alloc_flags: AllocFlags::default(),
                spare: [0; 8],
            }),
            PropLayout::Hip52 => AllocProp::Hip52(RawAllocPropHip52 {
                compression_type: 0,
                pad0: [0; 3],
                location,
                requested_handle_type: 0,
                ty: ALLOCATION_TYPE_PINNED,
                usage: 0,
                pad1: [0; 2],
                win32_handle_meta_data: std::ptr::null_mut(),
                spare: [0; 8],
            }),
        }
    }

    /// The struct, for the runtime's `const prop*` argument.
    fn as_ptr(&self) -> *const c_void {
        match self {
            AllocProp::Cuda(p) => (p as *const RawAllocProp).cast(),
            AllocProp::Hip52(p) => (p as *const RawAllocPropHip52).cast(),
        }
    }
}

/// `CUmemAccessDesc` / `hipMemAccessDesc`: `{ location; flags; }` (12 bytes, arrays of it
/// packed at that stride).
#[repr(C)]
#[derive(Clone, Copy)]
struct RawAccessDesc {
    location: MemLocation,
    flags: i32,
}

/// A device address: `CUdeviceptr` (`unsigned long long`) or HIP's `void*`; on the 64-bit
/// targets these runtimes exist for, both are one 64-bit integer argument.
type Addr = usize;
/// `CUmemGenericAllocationHandle` (`unsigned long long`) / `hipMemGenericAllocationHandle_t`
/// (a pointer: 64 bits on those targets).
type Handle = u64;

/// The virtual memory management entry points of one loaded runtime (see [`VmmNames`]).
struct Vmm {
    granularity: OptSym<unsafe extern "C" fn(*mut usize, *const c_void, i32) -> i32>,
    address_reserve: OptSym<unsafe extern "C" fn(*mut Addr, usize, usize, Addr, u64) -> i32>,
    address_free: OptSym<unsafe extern "C" fn(Addr, usize) -> i32>,
    create: OptSym<unsafe extern "C" fn(*mut Handle, usize, *const c_void, u64) -> i32>,
    release: OptSym<unsafe extern "C" fn(Handle) -> i32>,
    map: OptSym<unsafe extern "C" fn(Addr, usize, usize, Handle, u64) -> i32>,
    unmap: OptSym<unsafe extern "C" fn(Addr, usize) -> i32>,
    set_access: OptSym<unsafe extern "C" fn(Addr, usize, *const RawAccessDesc, usize) -> i32>,
    /// The calls are the driver's (see [`VmmNames::library`]).
    driver: bool,
    error_name: Option<unsafe extern "C" fn(i32, *mut *const c_char) -> i32>,
    error_string: Option<unsafe extern "C" fn(i32, *mut *const c_char) -> i32>,
    /// The driver's attribute query; None: the runtime's (`Api::device_get_attribute`).
    device_get_attribute: Option<unsafe extern "C" fn(*mut i32, i32, i32) -> i32>,
    device_get: Option<unsafe extern "C" fn(*mut i32, i32) -> i32>,
    ctx_get_current: Option<unsafe extern "C" fn(*mut P) -> i32>,
    // Kept so the handle is visibly owned; never closed (see `dl`).
    _library: Option<Library>,
}

impl Vmm {
    /// Resolves `names` from their library (`runtime` when they are the runtime's own). A
    /// library that does not load, or lacks a function, leaves it out: its calls report
    /// `NotSupported`.
    fn load(names: &VmmNames, runtime: &Library) -> Vmm {
        let library = names
            .library
            .and_then(|name| Library::open_first(&[name]).ok().map(|(lib, _)| lib));
        let from: Option<&Library> = match names.library {
            None => Some(runtime),
            Some(_) => library.as_ref(),
        };
        // The 64-bit handles and addresses above (`Addr`, `Handle`) need a 64-bit target.
        let from = from.filter(|_| usize::BITS == 64);
        fn get<F: Copy>(lib: Option<&Library>, name: &'static str) -> OptSym<F> {
            let lib = lib.filter(|_| !name.is_empty());
            // SAFETY: each `F` below is the C signature of `name` in cuda.h (CUDA 10.2 to
            // 13.x) or hip_runtime_api.h (ROCm 5.x to 7.x), per `VmmNames`.
            let f = lib.and_then(|lib| unsafe { lib.symbol(name) });
            OptSym { name, f }
        }
        Vmm {
            granularity: get(from, names.granularity),
            address_reserve: get(from, names.address_reserve),
            address_free: get(from, names.address_free),
            create: get(from, names.create),
            release: get(from, names.release),
            map: get(from, names.map),
            unmap: get(from, names.unmap),
            set_access: get(from, names.set_access),
            driver: names.library.is_some(),
            error_name: get(from, names.get_error_name).f,
            error_string: get(from, names.get_error_string).f,
            device_get_attribute: get(from, names.device_get_attribute).f,
            device_get: get(from, names.device_get).f,
            ctx_get_current: get(from, names.ctx_get_current).f,
            _library: library,
        }
    }
}

thread_local! {
    /// Whether the calling thread went through the runtime's set-up before a driver call
    /// of the virtual memory management (see `GpuRuntime::driver_context`).
    static DRIVER_THREAD_SET_UP: Cell<bool> = const { Cell::new(false) };
}

/// A required entry point: load fails without it.
struct Sym<F> {
    name: &'static str,
    f: F,
}

/// An optional entry point: calls report "unsupported" without it.
struct OptSym<F> {
    name: &'static str,
    f: Option<F>,
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
        struct Api {
            $($rf: Sym<unsafe extern "C" fn($($ra),*) -> api_table!(@ret $($rr)?)>,)*
            $($of: OptSym<unsafe extern "C" fn($($oa),*) -> i32>,)*
        }

        impl Api {
            fn load(lib: &Library, soname: &str, column: usize) -> Result<Api, String> {
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

/// Error codes with the same number in CUDA and HIP (checked against both headers).
mod code {
    pub(crate) const INVALID_VALUE: i32 = 1;
    pub(crate) const OUT_OF_MEMORY: i32 = 2;
    pub(crate) const NOT_INITIALIZED: i32 = 3;
    pub(crate) const STUB_LIBRARY: i32 = 34; // CUDA only: the driver is a stub (no real driver)
    pub(crate) const INSUFFICIENT_DRIVER: i32 = 35;
    pub(crate) const NO_DEVICE: i32 = 100;
    pub(crate) const INVALID_DEVICE: i32 = 101;
    pub(crate) const INVALID_HANDLE: i32 = 400;
    pub(crate) const NOT_READY: i32 = 600;
    pub(crate) const NOT_SUPPORTED: i32 = 801;
    pub(crate) const UNKNOWN: i32 = 999;
}

/// The class of a vendor error code.
fn kind_of(code: i32) -> RuntimeErrorKind {
    use RuntimeErrorKind as K;
    match code {
        code::OUT_OF_MEMORY => K::OutOfMemory,
        code::NOT_READY => K::NotReady,
        code::NO_DEVICE
        | code::INSUFFICIENT_DRIVER
        | code::NOT_INITIALIZED
        | code::STUB_LIBRARY => K::NoDevice,
        code::INVALID_DEVICE => K::InvalidDevice,
        code::INVALID_VALUE => K::InvalidValue,
        code::INVALID_HANDLE => K::InvalidHandle,
        code::NOT_SUPPORTED => K::NotSupported,
        _ => K::Other,
    }
}

/// `CUresult` codes of the driver (cuda.h) beyond those it shares with the runtime API.
mod driver_code {
    pub(crate) const DEINITIALIZED: i32 = 4; // the driver is shutting down (process exit)
    pub(crate) const DEVICE_UNAVAILABLE: i32 = 46; // exclusive-process device in use elsewhere
    pub(crate) const INVALID_CONTEXT: i32 = 201;
    pub(crate) const NOT_PERMITTED: i32 = 800;
    pub(crate) const SYSTEM_DRIVER_MISMATCH: i32 = 803;
    pub(crate) const COMPAT_NOT_SUPPORTED_ON_DEVICE: i32 = 804;
}

/// The class of a driver (`CUresult`) code. The driver numbers the classes [`kind_of`]
/// knows as the runtime does (1 invalid value, 2 out of memory, 3 not initialized, 34 stub
/// library, 100 no device, 101 invalid device, 400 invalid handle, 600 not ready, 801 not
/// supported); these are the driver's own.
fn driver_kind_of(code: i32) -> RuntimeErrorKind {
    use RuntimeErrorKind as K;
    match code {
        driver_code::DEINITIALIZED
        | driver_code::DEVICE_UNAVAILABLE
        | driver_code::SYSTEM_DRIVER_MISMATCH
        | driver_code::COMPAT_NOT_SUPPORTED_ON_DEVICE => K::NoDevice,
        driver_code::INVALID_CONTEXT => K::InvalidHandle,
        driver_code::NOT_PERMITTED => K::NotSupported,
        _ => kind_of(code),
    }
}

const MEMCPY_DEFAULT: i32 = 4; // cudaMemcpyDefault / hipMemcpyDefault
const MEM_ATTACH_GLOBAL: u32 = 1; // cudaMemAttachGlobal / hipMemAttachGlobal
const EVENT_DISABLE_TIMING: u32 = 2; // cudaEventDisableTiming / hipEventDisableTiming
const STREAM_NON_BLOCKING: u32 = 1; // cudaStreamNonBlocking / hipStreamNonBlocking

/// `cudaMemPoolAttr` / `hipMemPool_attribute` (same numbers in both); the three reuse
/// attributes are `int`, the others `cuuint64_t` / `uint64_t`.
fn pool_attr(attr: MemPoolAttr) -> (i32, bool) {
    match attr {
        MemPoolAttr::ReuseFollowEventDependencies => (1, true),
        MemPoolAttr::ReuseAllowOpportunistic => (2, true),
        MemPoolAttr::ReuseAllowInternalDependencies => (3, true),
        MemPoolAttr::ReleaseThreshold => (4, false),
        MemPoolAttr::ReservedMemCurrent => (5, false),
        MemPoolAttr::ReservedMemHigh => (6, false),
        MemPoolAttr::UsedMemCurrent => (7, false),
        MemPoolAttr::UsedMemHigh => (8, false),
    }
}

/// `cudaMemoryAdvise` / `hipMemoryAdvise` (same numbers in both).
fn advice_number(advice: MemAdvice) -> i32 {
    match advice {
        MemAdvice::SetReadMostly => 1,
        MemAdvice::UnsetReadMostly => 2,
        MemAdvice::SetPreferredLocation => 3,
        MemAdvice::UnsetPreferredLocation => 4,
        MemAdvice::SetAccessedBy => 5,
        MemAdvice::UnsetAccessedBy => 6,
    }
}

/// A loaded CUDA or HIP runtime.
struct GpuRuntime {
    flavor: &'static Flavor,
    api: Api,
    soname: &'static str,
    runtime_version: i32,
    driver_version: i32,
    /// The thin calls' raw entry points (see [`Runtime::direct_calls`]).
    direct: DirectCalls,
    /// The virtual memory management calls.
    vmm: Vmm,
    // Kept so the handle is visibly owned; never closed (see `dl`).
    _lib: Library,
    _driver: Option<Library>,
}

/// The thin calls' raw entry points: the driver's where `flavor` names a driver for this
/// runtime version and it has the function, else the runtime's own.
fn direct_calls(
    flavor: &Flavor,
    api: &Api,
    runtime_version: i32,
) -> (DirectCalls, Option<Library>) {
    let mut calls = DirectCalls {
        malloc: Some(api.malloc.f),
        free: Some(api.free.f),
        malloc_managed: api.malloc_managed.f,
        malloc_from_pool_async: api.malloc_from_pool_async.f,
        free_async: api.free_async.f,
        legacy_stream: (flavor.stream)(Stream::LEGACY),
    };
    let Some((names, _)) = flavor.driver.filter(|&(_, since)| runtime_version >= since) else {
        return (calls, None);
    };
    let Ok((driver, _)) = Library::open_first(&[names.library]) else {
        return (calls, None);
    };
    // SAFETY: each driver function has the C signature of the runtime function it stands
    // for (`CUdeviceptr` is a pointer-sized integer, `CUmemoryPool`/`CUstream` are the
    // runtime's handles): cuda.h and cuda_runtime_api.h of CUDA 12 and 13.
    unsafe {
        calls.malloc = driver.symbol(names.malloc).or(calls.malloc);
        calls.free = driver.symbol(names.free).or(calls.free);
        if calls.malloc_managed.is_some() {
            calls.malloc_managed = driver.symbol(names.malloc_managed).or(calls.malloc_managed);
        }
        if calls.malloc_from_pool_async.is_some() && calls.free_async.is_some() {
            calls.malloc_from_pool_async = driver
                .symbol(names.malloc_from_pool_async)
                .or(calls.malloc_from_pool_async);
            calls.free_async = driver.symbol(names.free_async).or(calls.free_async);
        }
    }
    (calls, Some(driver))
}

/// Loads the runtime of `flavor`: opens the library, resolves the table, reads versions.
///
/// Only version queries run here; whether a device exists is the selector's question.
pub(super) fn load(flavor: &'static Flavor) -> Result<Box<dyn Runtime>, String> {
    load_from(flavor, flavor.libraries)
}

/// Like [`load`], but tries `names` instead of the flavor's own list (the LD_PRELOAD
/// interposer passes the exact library the program already loaded).
pub(super) fn load_from(
    flavor: &'static Flavor,
    names: &[&'static str],
) -> Result<Box<dyn Runtime>, String> {
    let (lib, soname) = Library::open_first(names)?;
    let mut api = Api::load(&lib, soname, flavor.column)?;
    let version = |f: unsafe extern "C" fn(*mut i32) -> i32| {
        let mut v = 0;
        // SAFETY: the version queries only write one int through a valid pointer.
        if unsafe { f(&mut v) } == 0 {
            v
        } else {
            0
        }
    };
    let runtime_version = version(api.runtime_get_version.f);
    let driver_version = version(api.driver_get_version.f);
    if flavor
        .location_api_since
        .is_some_and(|v| runtime_version >= v)
    {
        // CUDA 13 gave the unsuffixed names the location signatures and dropped `_v2`.
        let prefetch = api.mem_prefetch_async.name;
        let advise = api.mem_advise.name;
        // SAFETY: in these runtimes the unsuffixed symbols have the location signatures
        // (cuda_runtime_api.h 13.x).
        api.mem_prefetch_location = OptSym {
            name: prefetch,
            f: unsafe { lib.symbol(prefetch) },
        };
        // SAFETY: as above.
        api.mem_advise_location = OptSym {
            name: advise,
            f: unsafe { lib.symbol(advise) },
        };
        api.mem_prefetch_async.f = None;
        api.mem_advise.f = None;
    } else if flavor.location_api_since.is_some() && runtime_version == 0 {
        // Unknown version: the unsuffixed symbols may have either signature, so calling
        // them could pass the wrong arguments. Report those features unsupported instead.
        api.mem_prefetch_async.f = None;
        api.mem_advise.f = None;
    }
    let (direct, driver) = direct_calls(flavor, &api, runtime_version);
    let vmm = Vmm::load(flavor.vmm, &lib);
    Ok(Box::new(GpuRuntime {
        flavor,
        api,
        soname,
        runtime_version,
        driver_version,
        direct,
        vmm,
        _lib: lib,
        _driver: driver,
    }))
}

/// Runs a queued host function exactly once; a panic must not unwind into the runtime.
unsafe extern "C" fn host_trampoline(data: *mut c_void) {
    // SAFETY: `data` is the `Box<HostFn>` leaked by `launch_host_func`, which the runtime
    // hands back exactly once.
    let f = unsafe { Box::from_raw(data.cast::<HostFn>()) };
    if catch_unwind(AssertUnwindSafe(move || (*f)())).is_err() {
        log::error!("a host function enqueued on a stream panicked; the panic was contained");
    }
}

impl GpuRuntime {
    fn err_text(&self, f: unsafe extern "C" fn(i32) -> *const c_char, code: i32) -> String {
        // SAFETY: the error-name/string functions accept any code and return null or a
        // static NUL-terminated string.
        let p = unsafe { f(code) };
        if p.is_null() {
            format!("error {code}")
        } else {
            // SAFETY: non-null static NUL-terminated string (see above).
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }
    }

    /// The error for a failed call, with the runtime's own name and description (out of the
    /// hot path).
    #[cold]
    #[inline(never)]
    fn error(&self, call: &'static str, code: i32) -> RuntimeError {
        if code != code::NOT_READY {
            // Clear the thread's non-sticky last error (e.g. an out-of-memory from cudaMalloc),
            // as RMM does, so it does not surface in an unrelated later check of the user's.
            // SAFETY: no arguments; only resets thread-local runtime state.
            unsafe { (self.api.get_last_error.f)() };
        }
        RuntimeError {
            call,
            code,
            kind: kind_of(code),
            name: self.err_text(self.api.get_error_name.f, code),
            message: self.err_text(self.api.get_error_string.f, code),
        }
    }

    #[inline(always)]
    fn check(&self, call: &'static str, code: i32) -> RtResult<()> {
        if code == 0 {
            Ok(())
        } else {
            Err(self.error(call, code))
        }
    }

    /// An error for a call this runtime cannot make.
    fn unsupported(&self, call: &'static str, why: String) -> RuntimeError {
        RuntimeError {
            call,
            code: -1,
            kind: RuntimeErrorKind::NotSupported,
            name: "notSupported".into(),
            message: why,
        }
    }

    /// The function of an optional entry point, or a "symbolNotFound" error naming it.
    #[inline(always)]
    fn opt<F: Copy>(&self, sym: &OptSym<F>) -> RtResult<F> {
        match sym.f {
            Some(f) => Ok(f),
            None => Err(self.missing(sym.name)),
        }
    }

    /// The error for an entry point this runtime does not export (out of the hot path).
    #[cold]
    #[inline(never)]
    fn missing(&self, name: &'static str) -> RuntimeError {
        RuntimeError {
            call: name,
            code: -1,
            kind: RuntimeErrorKind::NotSupported,
            name: "symbolNotFound".into(),
            message: format!(
                "{} is not exported by {} (runtime {}); this feature needs a newer runtime",
                if name.is_empty() {
                    "the function"
                } else {
                    name
                },
                self.soname,
                self.runtime_version
            ),
        }
    }

    fn stream(&self, s: Stream) -> P {
        (self.flavor.stream)(s) as P
    }

    /// Allocates through `f`, which writes the pointer; names the call on failure.
    fn alloc_with(&self, call: &'static str, f: impl FnOnce(*mut P) -> i32) -> RtResult<P> {
        let mut p: P = std::ptr::null_mut();
        self.check(call, f(&mut p))?;
        Ok(p)
    }

    /// The vendor number of an IPC handle type that [`Runtime`]'s export/import can carry as
    /// an integer (POSIX fd, Win32 handles).
    fn integer_handle_type(&self, call: &'static str, ty: MemHandleType) -> RtResult<i32> {
        match ty {
            MemHandleType::PosixFileDescriptor => Ok(1),
            MemHandleType::Win32 => Ok(2),
            MemHandleType::Win32Kmt => Ok(4),
            MemHandleType::None | MemHandleType::Fabric => Err(self.unsupported(
                call,
                format!("{ty:?} handles cannot be passed as an integer shareable handle"),
            )),
        }
    }

    /// The text of a driver error code, from `f` (`cuGetErrorName` / `cuGetErrorString`).
    fn driver_text(
        f: Option<unsafe extern "C" fn(i32, *mut *const c_char) -> i32>,
        code: i32,
    ) -> String {
        let mut p: *const c_char = std::ptr::null();
        // SAFETY: the function writes a static NUL-terminated string (or nothing, with an
        // error code, for an unknown code) through the valid out-pointer.
        let ok = f.is_some_and(|f| unsafe { f(code, &mut p) } == 0);
        if !ok || p.is_null() {
            format!("CUresult {code}")
        } else {
            // SAFETY: non-null static NUL-terminated string (see above).
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }
    }

    /// The error for a failed virtual memory management call: the driver's name, message and
    /// classification where the calls are the driver's, else the runtime's.
    #[cold]
    #[inline(never)]
    fn vmm_error(&self, call: &'static str, code: i32) -> RuntimeError {
        if !self.vmm.driver {
            return self.error(call, code);
        }
        RuntimeError {
            call,
            code,
            kind: driver_kind_of(code),
            name: Self::driver_text(self.vmm.error_name, code),
            message: Self::driver_text(self.vmm.error_string, code),
        }
    }

    fn vmm_check(&self, call: &'static str, code: i32) -> RtResult<()> {
        if code == 0 {
            Ok(())
        } else {
            Err(self.vmm_error(call, code))
        }
    }

    /// Makes sure the calling thread has a current context before a driver call.
    ///
    /// The driver's calls act on the thread's current context, which the runtime makes
    /// current at a thread's first runtime call (`cudaSetDevice`, or lazily at the first
    /// call that needs the device). A thread that made no runtime call yet has none, and
    /// the driver may not even be initialized (`cuInit`) when nothing in the process called
    /// the runtime. So a thread's first call here goes through the runtime's set-up,
    /// `cudaFree(NULL)`, which initializes the driver and makes the primary context of the
    /// thread's current device current (a no-op on a thread already set up); later calls
    /// check `cuCtxGetCurrent` and repeat the set-up when a program popped the context.
    /// HIP has no such state: its calls set the thread up themselves.
    fn driver_context(&self) -> RtResult<()> {
        if !self.vmm.driver {
            return Ok(());
        }
        let first = !DRIVER_THREAD_SET_UP.with(|c| c.replace(true));
        if !first {
            let current = match self.vmm.ctx_get_current {
                Some(f) => {
                    let mut ctx: P = std::ptr::null_mut();
                    // SAFETY: writes one handle through a valid pointer; the driver was
                    // initialized by this thread's first call (below).
                    unsafe { f(&mut ctx) == 0 && !ctx.is_null() }
                }
                None => true,
            };
            if current {
                return Ok(());
            }
        }
        // SAFETY: freeing NULL is a no-op that sets the thread up (see above).
        let code = unsafe { (self.api.free.f)(std::ptr::null_mut()) };
        if code != 0 {
            DRIVER_THREAD_SET_UP.with(|c| c.set(false));
        }
        self.check(self.api.free.name, code)
    }

    /// Pinned device memory of `device` in this runtime's allocation-properties layout.
    fn alloc_prop(&self, call: &'static str, device: DeviceId) -> RtResult<AllocProp> {
        match (self.flavor.vmm.prop_layout)(self.runtime_version) {
            Some(layout) => Ok(AllocProp::pinned_device(layout, device)),
            None => Err(self.unsupported(
                call,
                format!(
                    "{}: the layout of its allocation properties is not known",
                    self.description()
                ),
            )),
        }
    }

    /// Whether `device` supports virtual memory management, by its device attribute where
    /// the runtime has one: Err(NotSupported) when it says no, the query's error for a bad
    /// device; Ok when it says yes or cannot say (an older driver without the attribute).
    fn vmm_device_supported(&self, call: &'static str, device: DeviceId) -> RtResult<()> {
        let Some(number) = (self.flavor.vmm.supported_attribute)(self.runtime_version) else {
            return Ok(());
        };
        let mut v = 0;
        let (query, code) = match self.vmm.device_get_attribute {
            // The driver's number means nothing to the runtime's query.
            None if self.vmm.driver => return Ok(()),
            Some(f) => {
                // The driver's CUdevice of the ordinal (the ordinal itself in every driver
                // so far, which is what it stays without `cuDeviceGet`).
                let mut dev = device;
                if let Some(get) = self.vmm.device_get {
                    // SAFETY: writes one int through a valid pointer; the driver validates
                    // the ordinal.
                    let code = unsafe { get(&mut dev, device) };
                    if code != 0 {
                        return Err(self.vmm_error("cuDeviceGet", code));
                    }
                }
                // SAFETY: writes one int through a valid pointer; the driver validates the
                // attribute and device.
                ("cuDeviceGetAttribute", unsafe { f(&mut v, number, dev) })
            }
            // SAFETY: writes one int through a valid pointer; the runtime validates the
            // attribute and device.
            None => (self.api.device_get_attribute.name, unsafe {
                (self.api.device_get_attribute.f)(&mut v, number, device)
            }),
        };
        if code != 0 {
            let e = if self.vmm.device_get_attribute.is_some() {
                self.vmm_error(query, code)
            } else {
                self.error(query, code)
            };
            return match e.kind {
                RuntimeErrorKind::InvalidDevice | RuntimeErrorKind::NoDevice => Err(e),
                _ => Ok(()),
            };
        }
        if v == 0 {
            return Err(self.unsupported(
                call,
                format!(
                    "device {device} has no virtual memory management (device attribute {number} \
                     is 0; {})",
                    self.description()
                ),
            ));
        }
        Ok(())
    }

    fn pool_props(&self, props: &MemPoolProps) -> RtResult<RawPoolProps> {
        const CALL: &str = "memPoolCreate";
        let since = |v: Option<i32>| v.is_some_and(|v| self.runtime_version >= v);
        let alloc_type = match props.location {
            MemPoolLocation::Device => 1, // cudaMemAllocationTypePinned
            MemPoolLocation::Managed if since(self.flavor.managed_pools_since) => 2,
            MemPoolLocation::Managed => {
                return Err(self.unsupported(
                    CALL,
                    format!("{} has no managed memory pools", self.description()),
                ))
            }
        };
        let handle_types = match props.handle_type {
            MemHandleType::None => 0,
            MemHandleType::PosixFileDescriptor => 1,
            MemHandleType::Win32 => 2,
            MemHandleType::Win32Kmt => 4,
            MemHandleType::Fabric if self.flavor.fabric_handles => 8,
            MemHandleType::Fabric => {
                return Err(self.unsupported(
                    CALL,
                    format!("{} cannot export fabric handles", self.description()),
                ))
            }
        };
        if props.max_size != 0 && !since(self.flavor.pool_max_size_since) {
            return Err(self.unsupported(
                CALL,
                format!(
                    "{} has no maximum pool size (requested {} bytes)",
                    self.description(),
                    props.max_size
                ),
            ));
        }
        let mut rest = [0u8; 224];
        let hw_decompress = self
            .flavor
            .hw_decompress_since
            .is_some_and(|v| self.runtime_version >= v && self.driver_version >= v);
        if hw_decompress && props.location == MemPoolLocation::Device {
            // `unsigned short usage` follows `maxSize`.
            rest[..2].copy_from_slice(&POOL_USAGE_HW_DECOMPRESS.to_ne_bytes());
        }
        Ok(RawPoolProps {
            alloc_type,
            handle_types,
            location: MemLocation {
                ty: LOCATION_DEVICE,
                id: props.device,
            },
            win32_security_attributes: std::ptr::null_mut(),
            max_size: props.max_size,
            rest,
        })
    }
}

impl Runtime for GpuRuntime {
    fn kind(&self) -> RuntimeKind {
        self.flavor.kind
    }

    fn direct_calls(&self) -> DirectCalls {
        self.direct
    }

    fn description(&self) -> String {
        format!(
            "{} ({}, runtime {}, driver {})",
            self.flavor.kind.name(),
            self.soname,
            self.runtime_version,
            self.driver_version
        )
    }

    fn device_count(&self) -> RtResult<i32> {
        let mut n = 0;
        // SAFETY: writes one int through a valid pointer.
        let code = unsafe { (self.api.get_device_count.f)(&mut n) };
        self.check(self.api.get_device_count.name, code)
            .map_err(|mut e| {
                // Without a driver some runtimes answer "unknown error": for counting devices
                // that means there is none to use.
                if code == code::UNKNOWN {
                    e.kind = RuntimeErrorKind::NoDevice;
                }
                e
            })?;
        Ok(n)
    }

    fn get_device(&self) -> RtResult<DeviceId> {
        let mut d = 0;
        // SAFETY: writes one int through a valid pointer.
        let code = unsafe { (self.api.get_device.f)(&mut d) };
        self.check(self.api.get_device.name, code).map(|()| d)
    }

    fn set_device(&self, device: DeviceId) -> RtResult<()> {
        // SAFETY: takes a plain int; the runtime validates it.
        let code = unsafe { (self.api.set_device.f)(device) };
        self.check(self.api.set_device.name, code)
    }

    fn device_synchronize(&self) -> RtResult<()> {
        // SAFETY: no arguments.
        let code = unsafe { (self.api.device_synchronize.f)() };
        self.check(self.api.device_synchronize.name, code)
    }

    fn mem_get_info(&self) -> RtResult<MemInfo> {
        let mut info = MemInfo::default();
        // SAFETY: writes two size_t through valid pointers.
        let code = unsafe { (self.api.mem_get_info.f)(&mut info.free, &mut info.total) };
        self.check(self.api.mem_get_info.name, code).map(|()| info)
    }

    fn device_attribute(&self, attr: DeviceAttribute, device: DeviceId) -> RtResult<i32> {
        let call = self.api.device_get_attribute.name;
        let number =
            (self.flavor.device_attribute)(attr, self.runtime_version).ok_or_else(|| {
                self.unsupported(
                    call,
                    format!("{} has no attribute {attr:?}", self.description()),
                )
            })?;
        let mut v = 0;
        // SAFETY: writes one int through a valid pointer; attribute and device are validated
        // by the runtime.
        let code = unsafe { (self.api.device_get_attribute.f)(&mut v, number, device) };
        self.check(call, code).map(|()| v)
    }

    fn device_attribute_by_cuda_number(&self, attr: i32, device: DeviceId) -> RtResult<i32> {
        let call = self.api.device_get_attribute.name;
        let number = (self.flavor.cuda_attribute)(attr, self.runtime_version).ok_or_else(|| {
            self.unsupported(
                call,
                format!(
                    "{} has no equivalent of CUDA's device attribute {attr} (cudaDeviceAttr)",
                    self.description()
                ),
            )
        })?;
        let mut v = 0;
        // SAFETY: writes one int through a valid pointer; attribute and device are validated
        // by the runtime.
        let code = unsafe { (self.api.device_get_attribute.f)(&mut v, number, device) };
        self.check(call, code).map(|()| v)
    }

    fn device_name(&self, device: DeviceId) -> RtResult<String> {
        /// Larger than any version's `cudaDeviceProp` (about 1 KiB) or `hipDeviceProp_t`.
        const PROPS_BYTES: usize = 8 << 10;
        let sym = if self.api.get_device_properties.f.is_some() {
            &self.api.get_device_properties
        } else {
            &self.api.get_device_properties_v1
        };
        let f = self.opt(sym)?;
        let mut props = vec![0u8; PROPS_BYTES];
        // SAFETY: `props` is writable for PROPS_BYTES, more than the runtime's struct; the
        // runtime validates the device.
        let code = unsafe { f(props.as_mut_ptr(), device) };
        self.check(sym.name, code)?;
        // `char name[256]` at offset 0, NUL-terminated.
        let name = &props[..256];
        let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
        Ok(String::from_utf8_lossy(&name[..end]).into_owned())
    }

    fn runtime_version(&self) -> RtResult<i32> {
        let mut v = 0;
        // SAFETY: writes one int through a valid pointer.
        let code = unsafe { (self.api.runtime_get_version.f)(&mut v) };
        self.check(self.api.runtime_get_version.name, code)
            .map(|()| v)
    }

    fn driver_version(&self) -> RtResult<i32> {
        let mut v = 0;
        // SAFETY: writes one int through a valid pointer.
        let code = unsafe { (self.api.driver_get_version.f)(&mut v) };
        self.check(self.api.driver_get_version.name, code)
            .map(|()| v)
    }

    fn malloc(&self, bytes: usize) -> RtResult<*mut c_void> {
        // SAFETY: the runtime writes the new pointer through `p`.
        self.alloc_with(self.api.malloc.name, |p| unsafe {
            (self.api.malloc.f)(p, bytes)
        })
    }

    fn free(&self, ptr: *mut c_void) -> RtResult<()> {
        // SAFETY: the runtime validates the pointer and reports bad ones as errors.
        let code = unsafe { (self.api.free.f)(ptr) };
        self.check(self.api.free.name, code)
    }

    fn malloc_managed(&self, bytes: usize) -> RtResult<*mut c_void> {
        let f = self.opt(&self.api.malloc_managed)?;
        let call = self.api.malloc_managed.name;
        // SAFETY: the runtime writes the new pointer through `p`.
        self.alloc_with(call, |p| unsafe { f(p, bytes, MEM_ATTACH_GLOBAL) })
    }

    fn malloc_host(&self, bytes: usize) -> RtResult<*mut c_void> {
        if !self.api.host_malloc.name.is_empty() {
            let f = self.opt(&self.api.host_malloc)?;
            // SAFETY: the runtime writes the new pointer through `p`; flags 0 = default.
            self.alloc_with(self.api.host_malloc.name, |p| unsafe { f(p, bytes, 0) })
        } else {
            let f = self.opt(&self.api.malloc_host)?;
            // SAFETY: the runtime writes the new pointer through `p`.
            self.alloc_with(self.api.malloc_host.name, |p| unsafe { f(p, bytes) })
        }
    }

    fn free_host(&self, ptr: *mut c_void) -> RtResult<()> {
        let f = self.opt(&self.api.free_host)?;
        // SAFETY: the runtime validates the pointer.
        let code = unsafe { f(ptr) };
        self.check(self.api.free_host.name, code)
    }

    fn malloc_async(&self, bytes: usize, stream: Stream) -> RtResult<*mut c_void> {
        let f = self.opt(&self.api.malloc_async)?;
        let s = self.stream(stream);
        // SAFETY: the runtime writes the new pointer through `p`; it validates the stream.
        self.alloc_with(self.api.malloc_async.name, |p| unsafe { f(p, bytes, s) })
    }

    fn malloc_from_pool_async(
        &self,
        bytes: usize,
        pool: MemPool,
        stream: Stream,
    ) -> RtResult<*mut c_void> {
        let f = self.opt(&self.api.malloc_from_pool_async)?;
        let (s, pool) = (self.stream(stream), pool.0 as P);
        let call = self.api.malloc_from_pool_async.name;
        // SAFETY: the runtime writes the new pointer through `p`; it validates the handles.
        self.alloc_with(call, |p| unsafe { f(p, bytes, pool, s) })
    }

    fn free_async(&self, ptr: *mut c_void, stream: Stream) -> RtResult<()> {
        let f = self.opt(&self.api.free_async)?;
        // SAFETY: the runtime validates pointer and stream.
        let code = unsafe { f(ptr, self.stream(stream)) };
        self.check(self.api.free_async.name, code)
    }

    fn mem_pool_create(&self, props: &MemPoolProps) -> RtResult<MemPool> {
        let f = self.opt(&self.api.mem_pool_create)?;
        let raw = self.pool_props(props)?;
        // SAFETY: `raw` is a zeroed, over-sized props struct with the header's prefix
        // layout; the runtime writes the new pool through `p`.
        let pool = self.alloc_with(self.api.mem_pool_create.name, |p| unsafe { f(p, &raw) })?;
        Ok(MemPool(pool as usize))
    }

    fn mem_pool_destroy(&self, pool: MemPool) -> RtResult<()> {
        let f = self.opt(&self.api.mem_pool_destroy)?;
        // SAFETY: the runtime validates the handle.
        let code = unsafe { f(pool.0 as P) };
        self.check(self.api.mem_pool_destroy.name, code)
    }

    fn device_get_default_mem_pool(&self, device: DeviceId) -> RtResult<MemPool> {
        let f = self.opt(&self.api.device_get_default_mem_pool)?;
        let call = self.api.device_get_default_mem_pool.name;
        // SAFETY: the runtime writes the pool handle through `p`.
        let pool = self.alloc_with(call, |p| unsafe { f(p, device) })?;
        Ok(MemPool(pool as usize))
    }

    fn mem_pool_set_attribute(&self, pool: MemPool, attr: MemPoolAttr, value: u64) -> RtResult<()> {
        let f = self.opt(&self.api.mem_pool_set_attribute)?;
        let (number, is_int) = pool_attr(attr);
        let mut wide = value;
        let mut narrow = i32::from(value != 0);
        let arg: *mut c_void = if is_int {
            (&mut narrow as *mut i32).cast()
        } else {
            (&mut wide as *mut u64).cast()
        };
        // SAFETY: `arg` points to a live value of the width the attribute takes.
        let code = unsafe { f(pool.0 as P, number, arg) };
        self.check(self.api.mem_pool_set_attribute.name, code)
    }

    fn mem_pool_get_attribute(&self, pool: MemPool, attr: MemPoolAttr) -> RtResult<u64> {
        let f = self.opt(&self.api.mem_pool_get_attribute)?;
        let (number, is_int) = pool_attr(attr);
        let mut wide = 0u64;
        let mut narrow = 0i32;
        let arg: *mut c_void = if is_int {
            (&mut narrow as *mut i32).cast()
        } else {
            (&mut wide as *mut u64).cast()
        };
        // SAFETY: `arg` points to a live value of the width the attribute writes.
        let code = unsafe { f(pool.0 as P, number, arg) };
        self.check(self.api.mem_pool_get_attribute.name, code)?;
        Ok(if is_int { u64::from(narrow != 0) } else { wide })
    }

    fn mem_pool_trim_to(&self, pool: MemPool, min_bytes_to_keep: usize) -> RtResult<()> {
        let f = self.opt(&self.api.mem_pool_trim_to)?;
        // SAFETY: the runtime validates the handle.
        let code = unsafe { f(pool.0 as P, min_bytes_to_keep) };
        self.check(self.api.mem_pool_trim_to.name, code)
    }

    fn mem_pool_export_to_shareable_handle(
        &self,
        pool: MemPool,
        handle_type: MemHandleType,
    ) -> RtResult<i64> {
        let sym = &self.api.mem_pool_export_to_shareable_handle;
        let f = self.opt(sym)?;
        let ty = self.integer_handle_type(sym.name, handle_type)?;
        // Large enough for any handle the runtime writes (an int fd, a HANDLE).
        let mut out = [0u8; 64];
        // SAFETY: `out` is writable for 64 bytes, more than an fd or a HANDLE; the runtime
        // validates the pool handle and the handle type.
        let code = unsafe { f(out.as_mut_ptr().cast(), pool.0 as P, ty, 0) };
        self.check(sym.name, code)?;
        Ok(if handle_type == MemHandleType::PosixFileDescriptor {
            i64::from(i32::from_ne_bytes([out[0], out[1], out[2], out[3]]))
        } else {
            i64::from_ne_bytes([
                out[0], out[1], out[2], out[3], out[4], out[5], out[6], out[7],
            ])
        })
    }

    fn mem_pool_import_from_shareable_handle(
        &self,
        handle: i64,
        handle_type: MemHandleType,
    ) -> RtResult<MemPool> {
        let sym = &self.api.mem_pool_import_from_shareable_handle;
        let f = self.opt(sym)?;
        let ty = self.integer_handle_type(sym.name, handle_type)?;
        // POSIX fds and Win32 handles are passed by value, cast to `void*`.
        let value = handle as isize as *mut c_void;
        // SAFETY: the runtime writes the pool through `p` and validates the handle.
        let pool = self.alloc_with(sym.name, |p| unsafe { f(p, value, ty, 0) })?;
        Ok(MemPool(pool as usize))
    }

    fn mem_pool_export_pointer(&self, ptr: *mut c_void) -> RtResult<[u8; 64]> {
        let sym = &self.api.mem_pool_export_pointer;
        let f = self.opt(sym)?;
        let mut data = [0u8; 64];
        // SAFETY: `data` is the 64-byte `cudaMemPoolPtrExportData`; the runtime validates
        // the pointer.
        let code = unsafe { f(data.as_mut_ptr(), ptr) };
        self.check(sym.name, code)?;
        Ok(data)
    }

    fn mem_pool_import_pointer(&self, pool: MemPool, data: &[u8; 64]) -> RtResult<*mut c_void> {
        let sym = &self.api.mem_pool_import_pointer;
        let f = self.opt(sym)?;
        // The runtime's signature takes a non-const pointer; it only reads the data.
        let mut copy = *data;
        // SAFETY: `copy` is a 64-byte export data block; the runtime writes the pointer
        // through `p` and validates the pool.
        self.alloc_with(sym.name, |p| unsafe {
            f(p, pool.0 as P, copy.as_mut_ptr())
        })
    }

    fn stream_create(&self, flags: StreamFlags) -> RtResult<Stream> {
        let bits = if flags.non_blocking {
            STREAM_NON_BLOCKING
        } else {
            0
        };
        let call = self.api.stream_create_with_flags.name;
        // SAFETY: the runtime writes the new stream through `p`.
        let s = self.alloc_with(call, |p| unsafe {
            (self.api.stream_create_with_flags.f)(p, bits)
        })?;
        Ok(Stream(s as usize))
    }

    fn stream_destroy(&self, stream: Stream) -> RtResult<()> {
        // SAFETY: the runtime validates the handle.
        let code = unsafe { (self.api.stream_destroy.f)(self.stream(stream)) };
        self.check(self.api.stream_destroy.name, code)
    }

    fn stream_synchronize(&self, stream: Stream) -> RtResult<()> {
        // SAFETY: the runtime validates the handle.
        let code = unsafe { (self.api.stream_synchronize.f)(self.stream(stream)) };
        self.check(self.api.stream_synchronize.name, code)
    }

    fn stream_query(&self, stream: Stream) -> RtResult<bool> {
        // SAFETY: the runtime validates the handle.
        let code = unsafe { (self.api.stream_query.f)(self.stream(stream)) };
        match code {
            0 => Ok(true),
            code::NOT_READY => Ok(false),
            _ => Err(self.error(self.api.stream_query.name, code)),
        }
    }

    fn event_create(&self) -> RtResult<Event> {
        let call = self.api.event_create_with_flags.name;
        let create = self.api.event_create_with_flags.f;
        // SAFETY: the runtime writes the new event through `p`.
        let e = self.alloc_with(call, |p| unsafe { create(p, EVENT_DISABLE_TIMING) })?;
        Ok(Event(e as usize))
    }

    fn event_destroy(&self, event: Event) -> RtResult<()> {
        // SAFETY: the runtime validates the handle.
        let code = unsafe { (self.api.event_destroy.f)(event.0 as P) };
        self.check(self.api.event_destroy.name, code)
    }

    fn event_record(&self, event: Event, stream: Stream) -> RtResult<()> {
        // SAFETY: the runtime validates the handles.
        let code = unsafe { (self.api.event_record.f)(event.0 as P, self.stream(stream)) };
        self.check(self.api.event_record.name, code)
    }

    fn event_synchronize(&self, event: Event) -> RtResult<()> {
        // SAFETY: the runtime validates the handle.
        let code = unsafe { (self.api.event_synchronize.f)(event.0 as P) };
        self.check(self.api.event_synchronize.name, code)
    }

    fn event_query(&self, event: Event) -> RtResult<bool> {
        // SAFETY: the runtime validates the handle.
        let code = unsafe { (self.api.event_query.f)(event.0 as P) };
        match code {
            0 => Ok(true),
            code::NOT_READY => Ok(false),
            _ => Err(self.error(self.api.event_query.name, code)),
        }
    }

    fn stream_wait_event(&self, stream: Stream, event: Event) -> RtResult<()> {
        let wait = self.api.stream_wait_event.f;
        // SAFETY: the runtime validates the handles; flags must be 0.
        let code = unsafe { wait(self.stream(stream), event.0 as P, 0) };
        self.check(self.api.stream_wait_event.name, code)
    }

    fn launch_host_func(&self, stream: Stream, f: HostFn) -> RtResult<()> {
        let launch = self.opt(&self.api.launch_host_func)?;
        // Box again: `HostFn` is a fat pointer, user data must be a thin one.
        let data = Box::into_raw(Box::new(f)).cast::<c_void>();
        // SAFETY: the trampoline matches `cudaHostFn_t`; `data` stays valid until the
        // trampoline reclaims it.
        let code = unsafe { launch(self.stream(stream), host_trampoline, data) };
        if code != 0 {
            // Not enqueued, so the trampoline will never run: reclaim the closure here.
            // SAFETY: `data` came from `Box::into_raw` above and was not handed over.
            drop(unsafe { Box::from_raw(data.cast::<HostFn>()) });
        }
        self.check(self.api.launch_host_func.name, code)
    }

    unsafe fn memcpy_async(
        &self,
        dst: *mut c_void,
        src: *const c_void,
        bytes: usize,
        stream: Stream,
    ) -> RtResult<()> {
        let copy = self.api.memcpy_async.f;
        // SAFETY: the caller guarantees both ranges stay valid until the copy completes.
        let code = unsafe { copy(dst, src, bytes, MEMCPY_DEFAULT, self.stream(stream)) };
        self.check(self.api.memcpy_async.name, code)
    }

    unsafe fn memset_async(
        &self,
        dst: *mut c_void,
        value: u8,
        bytes: usize,
        stream: Stream,
    ) -> RtResult<()> {
        let set = self.api.memset_async.f;
        // SAFETY: the caller guarantees the range stays valid until the fill completes.
        let code = unsafe { set(dst, i32::from(value), bytes, self.stream(stream)) };
        self.check(self.api.memset_async.name, code)
    }

    fn mem_prefetch_async(
        &self,
        ptr: *const c_void,
        bytes: usize,
        device: DeviceId,
        stream: Stream,
    ) -> RtResult<()> {
        let s = self.stream(stream);
        if let Some(f) = self.api.mem_prefetch_location.f {
            // SAFETY: the runtime validates the range, location and stream; flags must be 0.
            let code = unsafe { f(ptr, bytes, MemLocation::of(device), 0, s) };
            return self.check(self.api.mem_prefetch_location.name, code);
        }
        let f = self.opt(&self.api.mem_prefetch_async)?;
        // SAFETY: the runtime validates the range, device (-1: host) and stream.
        let code = unsafe { f(ptr, bytes, device, s) };
        self.check(self.api.mem_prefetch_async.name, code)
    }

    fn mem_advise(
        &self,
        ptr: *const c_void,
        bytes: usize,
        advice: MemAdvice,
        device: DeviceId,
    ) -> RtResult<()> {
        let number = advice_number(advice);
        if let Some(f) = self.api.mem_advise_location.f {
            // SAFETY: the runtime validates the range, advice and location.
            let code = unsafe { f(ptr, bytes, number, MemLocation::of(device)) };
            return self.check(self.api.mem_advise_location.name, code);
        }
        let f = self.opt(&self.api.mem_advise)?;
        // SAFETY: the runtime validates the range, advice and device (-1: host).
        let code = unsafe { f(ptr, bytes, number, device) };
        self.check(self.api.mem_advise.name, code)
    }

    fn vmm_granularity(&self, device: DeviceId) -> RtResult<(usize, usize)> {
        let sym = &self.vmm.granularity;
        let f = self.opt(sym)?;
        let prop = self.alloc_prop(sym.name, device)?;
        self.driver_context()?;
        self.vmm_device_supported(sym.name, device)?;
        let query = |option: i32| -> RtResult<usize> {
            let mut g = 0usize;
            // SAFETY: `prop` is a zero-padded allocation-properties struct in the runtime's
            // layout; the runtime writes one size_t through `g`.
            let code = unsafe { f(&mut g, prop.as_ptr(), option) };
            self.vmm_check(sym.name, code).map(|()| g)
        };
        // A device without virtual memory management fails the query (where no attribute
        // said so first): that is "not supported", unless the device itself is bad.
        let not_supported = |mut e: RuntimeError| {
            if !matches!(
                e.kind,
                RuntimeErrorKind::InvalidDevice | RuntimeErrorKind::NoDevice
            ) {
                e.kind = RuntimeErrorKind::NotSupported;
            }
            e
        };
        let minimum = query(GRANULARITY_MINIMUM).map_err(not_supported)?;
        if minimum == 0 {
            return Err(self.unsupported(
                sym.name,
                format!("device {device} reports a granularity of 0"),
            ));
        }
        let recommended = query(GRANULARITY_RECOMMENDED).map_err(not_supported)?;
        Ok((minimum, recommended.max(minimum)))
    }

    fn vmm_address_reserve(&self, size: usize, alignment: usize) -> RtResult<usize> {
        let sym = &self.vmm.address_reserve;
        let f = self.opt(sym)?;
        self.driver_context()?;
        let mut addr: Addr = 0;
        // SAFETY: the runtime writes the address through `addr`; no fixed address is asked
        // for (0) and flags must be 0.
        let code = unsafe { f(&mut addr, size, alignment, 0, 0) };
        self.vmm_check(sym.name, code).map(|()| addr)
    }

    fn vmm_address_free(&self, addr: usize, size: usize) -> RtResult<()> {
        let sym = &self.vmm.address_free;
        let f = self.opt(sym)?;
        self.driver_context()?;
        // SAFETY: the runtime validates the range against its reservations.
        let code = unsafe { f(addr, size) };
        self.vmm_check(sym.name, code)
    }

    fn vmm_create(&self, size: usize, device: DeviceId) -> RtResult<PhysicalHandle> {
        let sym = &self.vmm.create;
        let f = self.opt(sym)?;
        let prop = self.alloc_prop(sym.name, device)?;
        self.driver_context()?;
        let mut handle: Handle = 0;
        // SAFETY: `prop` is a zero-padded allocation-properties struct in the runtime's
        // layout; the runtime writes the handle through `handle`; flags must be 0.
        let code = unsafe { f(&mut handle, size, prop.as_ptr(), 0) };
        self.vmm_check(sym.name, code)
            .map(|()| PhysicalHandle(handle))
    }

    fn vmm_release(&self, handle: PhysicalHandle) -> RtResult<()> {
        let sym = &self.vmm.release;
        let f = self.opt(sym)?;
        self.driver_context()?;
        // SAFETY: the runtime validates the handle.
        let code = unsafe { f(handle.0) };
        self.vmm_check(sym.name, code)
    }

    fn vmm_map(&self, addr: usize, size: usize, handle: PhysicalHandle) -> RtResult<()> {
        let sym = &self.vmm.map;
        let f = self.opt(sym)?;
        self.driver_context()?;
        // SAFETY: the runtime validates the range (inside a reservation, not mapped) and
        // the handle; offset and flags are 0.
        let code = unsafe { f(addr, size, 0, handle.0, 0) };
        self.vmm_check(sym.name, code)
    }

    fn vmm_unmap(&self, addr: usize, size: usize) -> RtResult<()> {
        let sym = &self.vmm.unmap;
        let f = self.opt(sym)?;
        self.driver_context()?;
        // SAFETY: the runtime validates the range; the caller guarantees no device work
        // still uses it (trait contract).
        let code = unsafe { f(addr, size) };
        self.vmm_check(sym.name, code)
    }

    fn vmm_set_access(&self, addr: usize, size: usize, devices: &[DeviceId]) -> RtResult<()> {
        let sym = &self.vmm.set_access;
        let f = self.opt(sym)?;
        if devices.is_empty() {
            return Err(RuntimeError {
                call: sym.name,
                code: -1,
                kind: RuntimeErrorKind::InvalidValue,
                name: "invalidValue".into(),
                message: "no device to give access to".into(),
            });
        }
        self.driver_context()?;
        let descs: Vec<RawAccessDesc> = devices
            .iter()
            .map(|&id| RawAccessDesc {
                location: MemLocation {
                    ty: LOCATION_DEVICE,
                    id,
                },
                flags: ACCESS_READ_WRITE,
            })
            .collect();
        // SAFETY: `descs` holds `descs.len()` access descriptors in the runtime's layout and
        // lives across the call; the runtime validates the range and devices.
        let code = unsafe { f(addr, size, descs.as_ptr(), descs.len()) };
        self.vmm_check(sym.name, code)
    }

    fn pointer_attributes(&self, ptr: *const c_void) -> RtResult<PointerAttributes> {
        let mut raw = RawPointerAttributes {
            ty: 0,
            device: -1,
            device_pointer: std::ptr::null_mut(),
            host_pointer: std::ptr::null_mut(),
            is_managed: 0,
            allocation_flags: 0,
            spare: [0; 16],
        };
        // SAFETY: `raw` is larger than either vendor's struct; the pointer is only inspected.
        let code = unsafe { (self.api.pointer_get_attributes.f)(&mut raw, ptr) };
        if code == code::INVALID_VALUE && self.flavor.unknown_pointer_is_invalid_value {
            // HIP's way of saying "not memory I know": clear the error, report unregistered.
            // SAFETY: no arguments.
            unsafe { (self.api.get_last_error.f)() };
            return Ok(PointerAttributes {
                memory_type: MemoryType::Unregistered,
                device: -1,
            });
        }
        self.check(self.api.pointer_get_attributes.name, code)?;
        let memory_type = (self.flavor.memory_type)(raw.ty, raw.is_managed, self.runtime_version);
        let device = if memory_type == MemoryType::Unregistered {
            -1
        } else {
            raw.device
        };
        Ok(PointerAttributes {
            memory_type,
            device,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_prefixes_match_headers() {
        use std::mem::{offset_of, size_of};
        // cudaMemPoolProps / hipMemPoolProps are 88 bytes; our buffer must cover them.
        assert_eq!(offset_of!(RawPoolProps, location), 8);
        assert_eq!(offset_of!(RawPoolProps, win32_security_attributes), 16);
        assert_eq!(offset_of!(RawPoolProps, max_size), 24);
        assert!(size_of::<RawPoolProps>() >= 88 * 2);
        // hipPointerAttribute_t: isManaged at 24, 32 bytes; cudaPointerAttributes: 88 bytes
        // in CUDA 13.0 (measured with its headers).
        assert_eq!(offset_of!(RawPointerAttributes, device), 4);
        assert_eq!(offset_of!(RawPointerAttributes, device_pointer), 8);
        assert_eq!(offset_of!(RawPointerAttributes, is_managed), 24);
        assert!(size_of::<RawPointerAttributes>() >= 88 + 64);
        assert_eq!(size_of::<MemLocation>(), 8);
    }

    #[test]
    fn error_classes() {
        assert_eq!(kind_of(2), RuntimeErrorKind::OutOfMemory);
        assert_eq!(kind_of(600), RuntimeErrorKind::NotReady);
        assert_eq!(kind_of(100), RuntimeErrorKind::NoDevice);
        assert_eq!(kind_of(35), RuntimeErrorKind::NoDevice);
        assert_eq!(kind_of(101), RuntimeErrorKind::InvalidDevice);
        assert_eq!(kind_of(1), RuntimeErrorKind::InvalidValue);
        assert_eq!(kind_of(400), RuntimeErrorKind::InvalidHandle);
        assert_eq!(kind_of(801), RuntimeErrorKind::NotSupported);
        assert_eq!(kind_of(719), RuntimeErrorKind::Other);
    }

    #[test]
    fn vmm_struct_layouts_match_headers() {
        use std::mem::{offset_of, size_of};
        // CUmemAllocationProp (cuda.h 10.2-13.x) and hipMemAllocationProp of ROCm 5.3+:
        // type 0, requestedHandleType(s) 4, location 8 (type 8, id 12), win32HandleMetaData
        // 16, allocFlags 24 (compressionType 24, gpuDirectRDMACapable 25, usage 26,
        // reserved 28..32), 32 bytes; zeros follow.
        assert_eq!(offset_of!(RawAllocProp, ty), 0);
        assert_eq!(offset_of!(RawAllocProp, requested_handle_types), 4);
        assert_eq!(offset_of!(RawAllocProp, location), 8);
        assert_eq!(offset_of!(RawAllocProp, win32_handle_meta_data), 16);
        assert_eq!(offset_of!(RawAllocProp, alloc_flags), 24);
        assert_eq!(offset_of!(AllocFlags, gpu_direct_rdma_capable), 1);
        assert_eq!(offset_of!(AllocFlags, usage), 2);
        assert_eq!(size_of::<AllocFlags>(), 8);
        assert_eq!(offset_of!(RawAllocProp, spare), 32);
        // hipMemAllocationProp of ROCm 5.2 (Debian's headers; tests-hip checks them with a C
        // compiler): compressionType 0, location 4, requestedHandleType 12, type 16, usage
        // 20, win32HandleMetaData 24, 32 bytes.
        assert_eq!(offset_of!(RawAllocPropHip52, location), 4);
        assert_eq!(offset_of!(RawAllocPropHip52, requested_handle_type), 12);
        assert_eq!(offset_of!(RawAllocPropHip52, ty), 16);
        assert_eq!(offset_of!(RawAllocPropHip52, usage), 20);
        assert_eq!(offset_of!(RawAllocPropHip52, win32_handle_meta_data), 24);
        assert_eq!(offset_of!(RawAllocPropHip52, spare), 32);
        // CUmemAccessDesc / hipMemAccessDesc: location 0, flags 8, 12 bytes (array stride).
        assert_eq!(offset_of!(RawAccessDesc, flags), 8);
        assert_eq!(size_of::<RawAccessDesc>(), 12);
        assert_eq!(size_of::<Handle>(), size_of::<*mut c_void>());
        assert_eq!(size_of::<Addr>(), 8);
    }

    /// The 32 bytes the runtime reads, as little-endian 32-bit words.
    fn prop_words(prop: &AllocProp) -> [u32; 8] {
        let mut words = [0u32; 8];
        for (i, w) in words.iter_mut().enumerate() {
            // SAFETY: both layouts are at least 32 + 64 bytes, 4-byte aligned.
            *w = unsafe { prop.as_ptr().cast::<u32>().add(i).read() };
        }
        words
    }

    #[test]
    fn vmm_props_are_pinned_device_memory() {
        // type = pinned (1), location = { device (1), 3 }, everything else 0.
        let cuda = prop_words(&AllocProp::pinned_device(PropLayout::Cuda, 3));
        assert_eq!(cuda, [1, 0, 1, 3, 0, 0, 0, 0]);
        // ROCm 5.2: compressionType 0 (with padding), location at 4, handle type 12, type 16.
        let hip52 = prop_words(&AllocProp::pinned_device(PropLayout::Hip52, 3));
        assert_eq!(hip52, [0, 1, 3, 0, 1, 0, 0, 0]);
    }

    #[test]
    fn driver_error_classes() {
        // Shared with the runtime's numbering.
        assert_eq!(driver_kind_of(1), RuntimeErrorKind::InvalidValue);
        assert_eq!(driver_kind_of(2), RuntimeErrorKind::OutOfMemory);
        assert_eq!(driver_kind_of(3), RuntimeErrorKind::NoDevice);
        assert_eq!(driver_kind_of(34), RuntimeErrorKind::NoDevice);
        assert_eq!(driver_kind_of(100), RuntimeErrorKind::NoDevice);
        assert_eq!(driver_kind_of(101), RuntimeErrorKind::InvalidDevice);
        assert_eq!(driver_kind_of(400), RuntimeErrorKind::InvalidHandle);
        assert_eq!(driver_kind_of(801), RuntimeErrorKind::NotSupported);
        // The driver's own.
        assert_eq!(driver_kind_of(4), RuntimeErrorKind::NoDevice);
        assert_eq!(driver_kind_of(46), RuntimeErrorKind::NoDevice);
        assert_eq!(driver_kind_of(201), RuntimeErrorKind::InvalidHandle);
        assert_eq!(driver_kind_of(800), RuntimeErrorKind::NotSupported);
        assert_eq!(driver_kind_of(803), RuntimeErrorKind::NoDevice);
        assert_eq!(driver_kind_of(700), RuntimeErrorKind::Other);
        // Without the driver's text functions the code is named.
        assert_eq!(GpuRuntime::driver_text(None, 2), "CUresult 2");
    }

    /// A flavor on HIP's runtime library (the one installed here without a device) whose
    /// virtual memory management names what `names` names.
    fn flavor_with(vmm: &'static VmmNames) -> Flavor {
        Flavor {
            kind: RuntimeKind::Hip,
            column: 1,
            libraries: &["libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"],
            device_attribute: |_, _| None,
            cuda_attribute: |_, _| None,
            memory_type: |_, _, _| MemoryType::Unregistered,
            stream: |s| s.0,
            pool_max_size_since: None,
            managed_pools_since: None,
            hw_decompress_since: None,
            location_api_since: None,
            unknown_pointer_is_invalid_value: true,
            fabric_handles: false,
            driver: None,
            vmm,
        }
    }

    /// Every `vmm_*` call of `rt` must be a clean `NotSupported` error naming `what`.
    fn assert_vmm_not_supported(rt: &dyn Runtime, what: &str) {
        let results = [
            rt.vmm_granularity(0).map(drop),
            rt.vmm_address_reserve(2 << 20, 0).map(drop),
            rt.vmm_address_free(1 << 40, 2 << 20),
            rt.vmm_create(2 << 20, 0).map(drop),
            rt.vmm_release(PhysicalHandle(1)),
            rt.vmm_map(1 << 40, 2 << 20, PhysicalHandle(1)),
            rt.vmm_unmap(1 << 40, 2 << 20),
            rt.vmm_set_access(1 << 40, 2 << 20, &[0]),
        ];
        for r in results {
            let e = r.unwrap_err();
            assert_eq!(e.kind, RuntimeErrorKind::NotSupported, "{what}: {e:?}");
            assert!(
                e.call.starts_with("noSuch") || e.call.starts_with("hipMem"),
                "{e:?}"
            );
        }
    }

    #[test]
    fn vmm_absent_symbols_or_library_are_not_supported() {
        static ABSENT_SYMBOLS: VmmNames = VmmNames {
            library: None,
            granularity: "noSuchGranularity",
            address_reserve: "noSuchAddressReserve",
            address_free: "noSuchAddressFree",
            create: "noSuchCreate",
            release: "noSuchRelease",
            map: "noSuchMap",
            unmap: "noSuchUnmap",
            set_access: "noSuchSetAccess",
            get_error_name: "",
            get_error_string: "",
            device_get_attribute: "",
            device_get: "",
            ctx_get_current: "",
            supported_attribute: |_| None,
            prop_layout: |_| Some(PropLayout::Cuda),
        };
        // The driver library missing (a CUDA runtime without libcuda.so.1): the real names,
        // from a library that does not load.
        static ABSENT_LIBRARY: VmmNames = VmmNames {
            library: Some("libdoes-not-exist-rmm.so.1"),
            granularity: "hipMemGetAllocationGranularity",
            address_reserve: "hipMemAddressReserve",
            address_free: "hipMemAddressFree",
            create: "hipMemCreate",
            release: "hipMemRelease",
            map: "hipMemMap",
            unmap: "hipMemUnmap",
            set_access: "hipMemSetAccess",
            get_error_name: "cuGetErrorName",
            get_error_string: "cuGetErrorString",
            device_get_attribute: "cuDeviceGetAttribute",
            device_get: "cuDeviceGet",
            ctx_get_current: "cuCtxGetCurrent",
            supported_attribute: |_| Some(102),
            prop_layout: |_| Some(PropLayout::Cuda),
        };
        static F1: std::sync::OnceLock<Flavor> = std::sync::OnceLock::new();
        static F2: std::sync::OnceLock<Flavor> = std::sync::OnceLock::new();
        let flavors = [
            (
                "absent symbols",
                F1.get_or_init(|| flavor_with(&ABSENT_SYMBOLS)),
            ),
            (
                "absent library",
                F2.get_or_init(|| flavor_with(&ABSENT_LIBRARY)),
            ),
        ];
        for (what, flavor) in flavors {
            let rt = match load(flavor) {
                Ok(rt) => rt,
                Err(e) => {
                    eprintln!("skipping: no HIP runtime to load the test flavor on ({e})");
                    return;
                }
            };
            assert_vmm_not_supported(&*rt, what);
        }
        // Without a library at all, the table is empty.
        let (libc, _) = Library::open_first(&["libc.so.6"]).unwrap();
        let vmm = Vmm::load(&ABSENT_LIBRARY, &libc);
        assert!(vmm.granularity.f.is_none() && vmm.create.f.is_none());
        assert!(vmm.error_name.is_none() && vmm.ctx_get_current.is_none());
        assert!(vmm.driver);
        let vmm = Vmm::load(&ABSENT_SYMBOLS, &libc);
        assert!(vmm.map.f.is_none() && !vmm.driver);
    }

    #[test]
    fn host_trampoline_runs_once_and_contains_panics() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Arc;
        let hits = Arc::new(AtomicUsize::new(0));
        let h = hits.clone();
        let f: HostFn = Box::new(move || {
            h.fetch_add(1, Ordering::SeqCst);
        });
        // SAFETY: exactly what launch_host_func hands the runtime.
        unsafe { host_trampoline(Box::into_raw(Box::new(f)).cast()) };
        assert_eq!(hits.load(Ordering::SeqCst), 1);
        let p: HostFn = Box::new(|| panic!("contained"));
        // SAFETY: as above; the panic must not escape.
        unsafe { host_trampoline(Box::into_raw(Box::new(p)).cast()) };
    }
}
