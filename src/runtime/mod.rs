//! The GPU runtime layer: one trait, [`Runtime`], with three backends.
//!
//! * `hip`  — AMD's HIP runtime, loaded with `dlopen` (`libamdhip64.so.7/.6/.5/.so`);
//! * `cuda` — NVIDIA's CUDA runtime, loaded with `dlopen` (`libcudart.so.13/.12/.11/.so`);
//! * `host` — an emulated device in host memory for machines without a GPU.
//!
//! Only this module touches a GPU runtime. Everything above it speaks the trait, so the
//! resources, the C ABI and the C++ wrapper are the same on AMD, NVIDIA and CPU-only hosts.
//! One process uses one backend, chosen once by `RMM_RUNTIME` (see [`runtime`]).

mod counted;
pub mod cuda;
mod dl;
mod gpu;
pub mod hip;
pub mod host;
pub mod os;
mod select;

use std::ffi::c_void;
use std::fmt;

pub use select::{
    preselect, process_is_exiting, register_front_end_exit_hook, runtime, RuntimeChoice,
};

/// A device ordinal, as the runtimes number them (0-based).
pub type DeviceId = i32;

/// A stream handle: the runtime's `hipStream_t` / `cudaStream_t` as a pointer-sized value.
///
/// Callers on a real GPU pass their own runtime streams; `0` is the default stream.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
#[repr(transparent)]
pub struct Stream(pub usize);

impl Stream {
    /// The default stream (`0`): legacy semantics unless the program was built for per-thread.
    pub const DEFAULT: Stream = Stream(0);
    /// The legacy default stream (`cudaStreamLegacy`, `0x1`).
    pub const LEGACY: Stream = Stream(1);
    /// The per-thread default stream (`cudaStreamPerThread` / `hipStreamPerThread`, `0x2`).
    pub const PER_THREAD: Stream = Stream(2);

    /// True for the default or legacy stream (both mean "the device's default stream").
    pub fn is_default(self) -> bool {
        self.0 == 0 || self.0 == 1
    }

    /// True for the per-thread default stream.
    pub fn is_per_thread_default(self) -> bool {
        self.0 == 2
    }
}

impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            0 => f.write_str("Stream(default)"),
            1 => f.write_str("Stream(legacy)"),
            2 => f.write_str("Stream(per-thread)"),
            v => write!(f, "Stream({v:#x})"),
        }
    }
}

/// An event handle (`hipEvent_t` / `cudaEvent_t`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[repr(transparent)]
pub struct Event(pub usize);

/// A stream-ordered memory pool handle (`hipMemPool_t` / `cudaMemPool_t`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[repr(transparent)]
pub struct MemPool(pub usize);

/// Which backend a [`Runtime`] is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RuntimeKind {
    /// AMD HIP.
    Hip,
    /// NVIDIA CUDA.
    Cuda,
    /// Host emulation.
    Host,
}

impl RuntimeKind {
    /// The short name used by `RMM_RUNTIME` and `rmm_runtime_name`: `hip`, `cuda` or `host`.
    pub fn name(self) -> &'static str {
        match self {
            RuntimeKind::Hip => "hip",
            RuntimeKind::Cuda => "cuda",
            RuntimeKind::Host => "host",
        }
    }
}

/// Broad classes of runtime failures, so callers never compare vendor error numbers.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RuntimeErrorKind {
    /// The device (or the pinned-host heap) has no memory left for the request.
    OutOfMemory,
    /// Work is still pending (stream/event query); not a failure for queries.
    NotReady,
    /// No device is present or the driver is missing/unusable.
    NoDevice,
    /// A device ordinal out of range.
    InvalidDevice,
    /// A bad pointer, size or argument.
    InvalidValue,
    /// A stream/event/pool handle that is not (or no longer) valid.
    InvalidHandle,
    /// The runtime or device lacks the feature (or the symbol is missing from this runtime).
    NotSupported,
    /// Anything else.
    Other,
}

/// A failure reported by a runtime call, with the runtime's own error name and string.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct RuntimeError {
    /// The runtime function that failed, e.g. `cudaMalloc`.
    pub call: &'static str,
    /// The runtime's numeric error code (0 never appears here).
    pub code: i32,
    /// The class of the failure.
    pub kind: RuntimeErrorKind,
    /// The runtime's error name, e.g. `cudaErrorMemoryAllocation`.
    pub name: String,
    /// The runtime's error string, e.g. `out of memory`.
    pub message: String,
}

impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} failed: {} ({})", self.call, self.name, self.message)
    }
}

impl std::error::Error for RuntimeError {}

impl RuntimeError {
    /// `call` is not available from this runtime (or on this device).
    pub fn not_supported(call: &'static str) -> RuntimeError {
        RuntimeError {
            call,
            code: 801,
            kind: RuntimeErrorKind::NotSupported,
            name: "errorNotSupported".into(),
            message: "operation not supported by this runtime or device".into(),
        }
    }
}

/// Result of a runtime call.
pub type RtResult<T> = Result<T, RuntimeError>;

/// Free and total memory of the current device, in bytes.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct MemInfo {
    /// Bytes the runtime reports free.
    pub free: usize,
    /// Bytes of device memory in total.
    pub total: usize,
}

/// Device attributes the resources need (each backend maps them to its own numbering).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum DeviceAttribute {
    /// The device can access pageable host memory (system-allocated memory).
    PageableMemoryAccess,
    /// The device supports concurrent managed memory access.
    ConcurrentManagedAccess,
    /// The device supports managed memory at all.
    ManagedMemory,
    /// The device supports stream-ordered memory pools (`*MallocAsync`).
    MemoryPoolsSupported,
    /// Bit mask of IPC handle types supported by memory pools.
    MemoryPoolSupportedHandleTypes,
    /// Number of multiprocessors (compute units).
    MultiprocessorCount,
    /// PCI bus id of the device.
    PciBusId,
}

/// Memory pool attributes (`cudaMemPoolAttr` / `hipMemPoolAttr`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum MemPoolAttr {
    /// Bytes of reserved memory the pool keeps at a synchronization before releasing.
    ReleaseThreshold,
    /// Allow reuse of memory freed on another stream when the free's event completed.
    ReuseFollowEventDependencies,
    /// Allow opportunistic reuse of memory whose free is known complete.
    ReuseAllowOpportunistic,
    /// Allow reuse by inserting dependencies between streams.
    ReuseAllowInternalDependencies,
    /// Bytes currently reserved from the device (read-only).
    ReservedMemCurrent,
    /// High-water mark of reserved bytes (resettable by writing 0).
    ReservedMemHigh,
    /// Bytes currently handed out to allocations (read-only).
    UsedMemCurrent,
    /// High-water mark of used bytes (resettable by writing 0).
    UsedMemHigh,
}

/// IPC export handle types of a memory pool (`cudaMemAllocationHandleType`).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum MemHandleType {
    /// No export.
    #[default]
    None,
    /// A POSIX file descriptor.
    PosixFileDescriptor,
    /// A Win32 NT handle.
    Win32,
    /// A Win32 KMT handle.
    Win32Kmt,
    /// A fabric handle (multi-node NVLink).
    Fabric,
}

/// Where the memory of a pool lives.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum MemPoolLocation {
    /// Device memory of the pool's device.
    #[default]
    Device,
    /// Managed (unified) memory, where the runtime supports managed pools.
    Managed,
}

/// Properties of a memory pool to create.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct MemPoolProps {
    /// The device whose memory the pool serves.
    pub device: DeviceId,
    /// Where the memory lives.
    pub location: MemPoolLocation,
    /// IPC export handle type.
    pub handle_type: MemHandleType,
    /// Maximum pool size in bytes, 0 for no limit (where the runtime supports it).
    pub max_size: usize,
}

/// Memory advice (`cudaMemoryAdvise` / `hipMemoryAdvise`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum MemAdvice {
    /// Prefer the given device (or the host with `device = -1`) as the location.
    SetPreferredLocation,
    /// Clear the preferred location.
    UnsetPreferredLocation,
    /// The device will access the range (keep a mapping).
    SetAccessedBy,
    /// Clear the accessed-by hint.
    UnsetAccessedBy,
    /// The range is mostly read.
    SetReadMostly,
    /// Clear the read-mostly hint.
    UnsetReadMostly,
}

/// What kind of memory a pointer refers to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum MemoryType {
    /// Not known to the runtime (pageable host memory or garbage).
    Unregistered,
    /// Pinned host memory.
    Host,
    /// Device memory.
    Device,
    /// Managed memory.
    Managed,
}

/// Pointer attributes as reported by the runtime.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct PointerAttributes {
    /// The memory type.
    pub memory_type: MemoryType,
    /// The device the memory belongs to (`-1` when none).
    pub device: DeviceId,
}

/// Flags of a new stream.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct StreamFlags {
    /// Do not synchronize with the legacy default stream (`cudaStreamNonBlocking`).
    pub non_blocking: bool,
}

/// A host function enqueued on a stream.
pub type HostFn = Box<dyn FnOnce() + Send + 'static>;

/// The operations every backend provides. All methods are thread-safe.
///
/// Calls act on the calling thread's current device unless they take a `device`.
/// Optional features (stream-ordered pools, managed memory, prefetch) return an error of
/// kind [`RuntimeErrorKind::NotSupported`] where the runtime lacks them; nothing panics.
pub trait Runtime: Send + Sync + 'static {
    /// Which backend this is.
    fn kind(&self) -> RuntimeKind;
    /// A human-readable description: library loaded, runtime and driver versions.
    fn description(&self) -> String;

    /// Number of devices.
    fn device_count(&self) -> RtResult<i32>;
    /// The calling thread's current device.
    fn get_device(&self) -> RtResult<DeviceId>;
    /// Makes `device` current for the calling thread.
    fn set_device(&self, device: DeviceId) -> RtResult<()>;
    /// Waits for all work on the current device.
    fn device_synchronize(&self) -> RtResult<()>;
    /// Free and total memory of the current device.
    fn mem_get_info(&self) -> RtResult<MemInfo>;
    /// An integer attribute of `device`.
    fn device_attribute(&self, attr: DeviceAttribute, device: DeviceId) -> RtResult<i32>;
    /// An integer attribute of `device` named by its CUDA number (`cudaDeviceAttr`, e.g. 16
    /// for `cudaDevAttrMultiProcessorCount`), for callers that speak CUDA's numbering
    /// (Python's `rmm._cuda.gpu.getDeviceAttribute`). A backend with its own numbering maps
    /// the number; one without an equivalent attribute reports
    /// [`RuntimeErrorKind::NotSupported`]; a number that is no attribute at all is
    /// [`RuntimeErrorKind::InvalidValue`], as `cudaDeviceGetAttribute` reports it.
    fn device_attribute_by_cuda_number(&self, attr: i32, device: DeviceId) -> RtResult<i32>;
    /// The name of `device` (`cudaDeviceProp::name`, e.g. "NVIDIA H100 80GB HBM3"); a bad
    /// device is [`RuntimeErrorKind::InvalidDevice`].
    fn device_name(&self, device: DeviceId) -> RtResult<String>;
    /// The runtime's version (`cudaRuntimeGetVersion` / `hipRuntimeGetVersion`): CUDA
    /// numbers it `1000 * major + 10 * minor`, HIP `10_000_000 * major + 100_000 * minor +
    /// patch`.
    fn runtime_version(&self) -> RtResult<i32>;
    /// The newest runtime version the installed driver supports (`cudaDriverGetVersion` /
    /// `hipDriverGetVersion`), in the runtime's numbering; 0 when no driver is installed.
    fn driver_version(&self) -> RtResult<i32>;

    /// Device memory on the current device (`cudaMalloc`). Never called with 0 bytes.
    fn malloc(&self, bytes: usize) -> RtResult<*mut c_void>;
    /// Frees memory from [`Runtime::malloc`] or [`Runtime::malloc_managed`] (`cudaFree`).
    fn free(&self, ptr: *mut c_void) -> RtResult<()>;
    /// Managed memory (`cudaMallocManaged`, attach global).
    fn malloc_managed(&self, bytes: usize) -> RtResult<*mut c_void>;
    /// Pinned host memory (`cudaMallocHost` / `hipHostMalloc`).
    fn malloc_host(&self, bytes: usize) -> RtResult<*mut c_void>;
    /// Frees pinned host memory (`cudaFreeHost` / `hipHostFree`).
    fn free_host(&self, ptr: *mut c_void) -> RtResult<()>;

    /// Stream-ordered allocation from the current device's current pool.
    fn malloc_async(&self, bytes: usize, stream: Stream) -> RtResult<*mut c_void>;
    /// Stream-ordered allocation from `pool`.
    fn malloc_from_pool_async(
        &self,
        bytes: usize,
        pool: MemPool,
        stream: Stream,
    ) -> RtResult<*mut c_void>;
    /// Stream-ordered free.
    fn free_async(&self, ptr: *mut c_void, stream: Stream) -> RtResult<()>;
    /// Creates a memory pool.
    fn mem_pool_create(&self, props: &MemPoolProps) -> RtResult<MemPool>;
    /// Destroys a memory pool.
    fn mem_pool_destroy(&self, pool: MemPool) -> RtResult<()>;
    /// The default pool of `device`.
    fn device_get_default_mem_pool(&self, device: DeviceId) -> RtResult<MemPool>;
    /// Sets a pool attribute (boolean attributes take 0/1).
    fn mem_pool_set_attribute(&self, pool: MemPool, attr: MemPoolAttr, value: u64) -> RtResult<()>;
    /// Reads a pool attribute.
    fn mem_pool_get_attribute(&self, pool: MemPool, attr: MemPoolAttr) -> RtResult<u64>;
    /// Releases reserved memory until at most `min_bytes_to_keep` stay reserved.
    fn mem_pool_trim_to(&self, pool: MemPool, min_bytes_to_keep: usize) -> RtResult<()>;

    /// Creates a stream on the current device.
    fn stream_create(&self, flags: StreamFlags) -> RtResult<Stream>;
    /// Destroys a stream; its pending work still completes.
    fn stream_destroy(&self, stream: Stream) -> RtResult<()>;
    /// Waits until all work enqueued on `stream` so far has completed.
    fn stream_synchronize(&self, stream: Stream) -> RtResult<()>;
    /// True when all work on `stream` has completed.
    fn stream_query(&self, stream: Stream) -> RtResult<bool>;
    /// Creates an event (timing disabled).
    fn event_create(&self) -> RtResult<Event>;
    /// Destroys an event.
    fn event_destroy(&self, event: Event) -> RtResult<()>;
    /// Records `event` at the current tail of `stream`.
    fn event_record(&self, event: Event, stream: Stream) -> RtResult<()>;
    /// Waits until the last record of `event` has completed.
    fn event_synchronize(&self, event: Event) -> RtResult<()>;
    /// True when the last record of `event` has completed (or it was never recorded).
    fn event_query(&self, event: Event) -> RtResult<bool>;
    /// Makes later work on `stream` wait for the last record of `event`.
    fn stream_wait_event(&self, stream: Stream, event: Event) -> RtResult<()>;
    /// Enqueues a host function on `stream`.
    fn launch_host_func(&self, stream: Stream, f: HostFn) -> RtResult<()>;

    /// Enqueues a copy of `bytes` from `src` to `dst` (any memory kinds) on `stream`.
    ///
    /// # Safety
    /// Both ranges must be valid for `bytes` until the copy completes on `stream`.
    unsafe fn memcpy_async(
        &self,
        dst: *mut c_void,
        src: *const c_void,
        bytes: usize,
        stream: Stream,
    ) -> RtResult<()>;
    /// Enqueues filling `bytes` at `dst` with `value` on `stream`.
    ///
    /// # Safety
    /// The range must be valid for writes of `bytes` until the fill completes on `stream`.
    unsafe fn memset_async(
        &self,
        dst: *mut c_void,
        value: u8,
        bytes: usize,
        stream: Stream,
    ) -> RtResult<()>;
    /// Prefetches managed or system memory to `device` (`-1`: the host) on `stream`.
    fn mem_prefetch_async(
        &self,
        ptr: *const c_void,
        bytes: usize,
        device: DeviceId,
        stream: Stream,
    ) -> RtResult<()>;
    /// Gives the runtime a hint about a managed or system memory range.
    fn mem_advise(
        &self,
        ptr: *const c_void,
        bytes: usize,
        advice: MemAdvice,
        device: DeviceId,
    ) -> RtResult<()>;
    /// What kind of memory `ptr` refers to.
    fn pointer_attributes(&self, ptr: *const c_void) -> RtResult<PointerAttributes>;

    /// Exports `pool` as an OS handle of `handle_type` (`cudaMemPoolExportToShareableHandle`):
    /// a file descriptor for [`MemHandleType::PosixFileDescriptor`], a `HANDLE` value for the
    /// Win32 types. The pool must have been created with that handle type. The caller owns
    /// the returned descriptor. Fabric handles (64-byte blobs) are not returned here.
    fn mem_pool_export_to_shareable_handle(
        &self,
        pool: MemPool,
        handle_type: MemHandleType,
    ) -> RtResult<i64>;
    /// Imports a pool exported by another process (`cudaMemPoolImportFromShareableHandle`).
    fn mem_pool_import_from_shareable_handle(
        &self,
        handle: i64,
        handle_type: MemHandleType,
    ) -> RtResult<MemPool>;
    /// The export data of an allocation from an exportable pool (`cudaMemPoolExportPointer`).
    fn mem_pool_export_pointer(&self, ptr: *mut c_void) -> RtResult<[u8; 64]>;
    /// Maps an allocation exported by another process into this one, from a pool imported
    /// with [`Runtime::mem_pool_import_from_shareable_handle`] (`cudaMemPoolImportPointer`).
    /// Free the result with [`Runtime::free_async`] or [`Runtime::free`].
    fn mem_pool_import_pointer(&self, pool: MemPool, data: &[u8; 64]) -> RtResult<*mut c_void>;

    /// The raw entry points of the thin allocation calls, for the C ABI's direct path
    /// (`ffi::direct`); none by default, so that every call takes the checked path
    /// through this trait.
    fn direct_calls(&self) -> DirectCalls {
        DirectCalls::default()
    }

    // ---- virtual memory management (CUDA's driver `cuMem*`, HIP's `hipMem*`) ----------
    // Optional: a runtime or device without it answers `NotSupported` (the defaults).

    /// The mapping granularity of pinned device memory on `device`: (minimum,
    /// recommended) (`cuMemGetAllocationGranularity`). `NotSupported` where the device or
    /// runtime has no virtual memory management.
    fn vmm_granularity(&self, device: DeviceId) -> RtResult<(usize, usize)> {
        let _ = device;
        Err(RuntimeError::not_supported("cuMemGetAllocationGranularity"))
    }
    /// Reserves `size` bytes of device address space aligned to `alignment` (0: the
    /// granularity) (`cuMemAddressReserve`); nothing is mapped.
    fn vmm_address_reserve(&self, size: usize, alignment: usize) -> RtResult<usize> {
        let _ = (size, alignment);
        Err(RuntimeError::not_supported("cuMemAddressReserve"))
    }
    /// Frees a reservation made by [`Runtime::vmm_address_reserve`] (`cuMemAddressFree`);
    /// nothing may be mapped in it.
    fn vmm_address_free(&self, addr: usize, size: usize) -> RtResult<()> {
        let _ = (addr, size);
        Err(RuntimeError::not_supported("cuMemAddressFree"))
    }
    /// Creates `size` bytes (a multiple of the granularity) of physical memory on `device`
    /// (`cuMemCreate`, pinned device memory).
    fn vmm_create(&self, size: usize, device: DeviceId) -> RtResult<PhysicalHandle> {
        let _ = (size, device);
        Err(RuntimeError::not_supported("cuMemCreate"))
    }
    /// Releases a handle made by [`Runtime::vmm_create`] (`cuMemRelease`); its memory goes
    /// back once no mapping uses it.
    fn vmm_release(&self, handle: PhysicalHandle) -> RtResult<()> {
        let _ = handle;
        Err(RuntimeError::not_supported("cuMemRelease"))
    }
    /// Maps all `size` bytes of `handle` at `addr`, inside a reservation (`cuMemMap`,
    /// offset 0). The mapping is not accessible until [`Runtime::vmm_set_access`].
    fn vmm_map(&self, addr: usize, size: usize, handle: PhysicalHandle) -> RtResult<()> {
        let _ = (addr, size, handle);
        Err(RuntimeError::not_supported("cuMemMap"))
    }
    /// Unmaps `[addr, addr + size)`, which must be whole mappings (`cuMemUnmap`). The host
    /// does not wait for device work: the caller makes sure none uses the range.
    fn vmm_unmap(&self, addr: usize, size: usize) -> RtResult<()> {
        let _ = (addr, size);
        Err(RuntimeError::not_supported("cuMemUnmap"))
    }
    /// Makes the mapped range `[addr, addr + size)` readable and writable from each of
    /// `devices` (`cuMemSetAccess`).
    fn vmm_set_access(&self, addr: usize, size: usize, devices: &[DeviceId]) -> RtResult<()> {
        let _ = (addr, size, devices);
        Err(RuntimeError::not_supported("cuMemSetAccess"))
    }
}

/// Physical memory made by [`Runtime::vmm_create`] (`CUmemGenericAllocationHandle` /
/// `hipMemGenericAllocationHandle_t`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct PhysicalHandle(pub u64);

/// `(ptr out, bytes) -> code`: `cuMemAlloc_v2` / `cudaMalloc` / `hipMalloc`.
pub type DirectMallocFn = unsafe extern "C" fn(*mut *mut c_void, usize) -> i32;
/// `(ptr out, bytes, flags) -> code`: `cuMemAllocManaged` / `cudaMallocManaged`.
pub type DirectMallocManagedFn = unsafe extern "C" fn(*mut *mut c_void, usize, u32) -> i32;
/// `(ptr) -> code`: `cuMemFree_v2` / `cudaFree` / `hipFree`.
pub type DirectFreeFn = unsafe extern "C" fn(*mut c_void) -> i32;
/// `(ptr out, bytes, pool, stream) -> code`: `cuMemAllocFromPoolAsync` /
/// `cudaMallocFromPoolAsync` / `hipMallocFromPoolAsync`.
pub type DirectPoolMallocFn =
    unsafe extern "C" fn(*mut *mut c_void, usize, *mut c_void, *mut c_void) -> i32;
/// `(ptr, stream) -> code`: `cuMemFreeAsync` / `cudaFreeAsync` / `hipFreeAsync`.
pub type DirectFreeAsyncFn = unsafe extern "C" fn(*mut c_void, *mut c_void) -> i32;

/// The functions a thin resource's allocation ends in, without the layers between (C ABI
/// handle, resource, counting layer, backend): on CUDA 12 and later the driver's own
/// (`libcuda.so.1`), which the runtime library calls after its own bookkeeping, else the
/// runtime library's. Every one returns 0 on success; on any other code the caller takes
/// the checked path, which repeats the call through [`Runtime`] for the runtime's exact
/// error (and, on a thread with no current context, makes the device's context current).
#[derive(Clone, Copy, Debug, Default)]
pub struct DirectCalls {
    /// Device memory.
    pub malloc: Option<DirectMallocFn>,
    /// Frees device and managed memory.
    pub free: Option<DirectFreeFn>,
    /// Managed memory (called with the attach-global flag).
    pub malloc_managed: Option<DirectMallocManagedFn>,
    /// Stream-ordered allocation from a pool.
    pub malloc_from_pool_async: Option<DirectPoolMallocFn>,
    /// Stream-ordered free.
    pub free_async: Option<DirectFreeAsyncFn>,
    /// The handle these functions take for [`Stream::LEGACY`] (HIP has none: its null
    /// stream is the legacy one); other streams pass unchanged.
    pub legacy_stream: usize,
}
