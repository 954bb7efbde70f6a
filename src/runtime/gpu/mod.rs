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
//!
//! This file is the runtime itself (loading, and [`Runtime`]'s calls); [`table`] is the
//! function table, [`errors`] the error classes and messages, [`layouts`] the shared C
//! structs and numbers, [`vmm`] virtual memory management.

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::dl::Library;
use super::{
    DeviceAttribute, DeviceId, DirectCalls, Event, HostFn, MemAdvice, MemHandleType, MemInfo,
    MemPool, MemPoolAttr, MemPoolProps, MemoryType, PhysicalHandle, PointerAttributes, RtResult,
    Runtime, RuntimeErrorKind, RuntimeKind, Stream, StreamFlags,
};

mod errors;
mod layouts;
mod table;
#[cfg(test)]
mod tests;
mod vmm;

use errors::code;
use layouts::*;
use table::{Api, OptSym};
use vmm::Vmm;
pub(super) use vmm::{PropLayout, VmmNames};

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
        self.mem_granularity(device)
    }

    fn vmm_address_reserve(&self, size: usize, alignment: usize) -> RtResult<usize> {
        self.mem_address_reserve(size, alignment)
    }

    fn vmm_address_free(&self, addr: usize, size: usize) -> RtResult<()> {
        self.mem_address_free(addr, size)
    }

    fn vmm_create(&self, size: usize, device: DeviceId) -> RtResult<PhysicalHandle> {
        self.mem_create(size, device)
    }

    fn vmm_release(&self, handle: PhysicalHandle) -> RtResult<()> {
        self.mem_release(handle)
    }

    fn vmm_map(&self, addr: usize, size: usize, handle: PhysicalHandle) -> RtResult<()> {
        self.mem_map(addr, size, handle)
    }

    fn vmm_unmap(&self, addr: usize, size: usize) -> RtResult<()> {
        self.mem_unmap(addr, size)
    }

    fn vmm_set_access(&self, addr: usize, size: usize, devices: &[DeviceId]) -> RtResult<()> {
        self.mem_set_access(addr, size, devices)
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
