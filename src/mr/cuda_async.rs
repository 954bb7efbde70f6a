//! Stream-ordered allocation from the runtime's memory pools (`cudaMallocFromPoolAsync` /
//! `hipMallocFromPoolAsync`):
//!
//! * [`CudaAsyncMemoryResource`] (`cuda_async_memory_resource`) owns a pool of its own on
//!   the current device, optionally exportable to other processes (IPC);
//! * [`CudaAsyncViewMemoryResource`] (`cuda_async_view_memory_resource`) allocates from an
//!   existing pool it does not own, e.g. the device's default pool;
//! * [`CudaAsyncManagedMemoryResource`] (`cuda_async_managed_memory_resource`) owns a pool
//!   of managed memory where the runtime has managed pools.
//!
//! Zero-byte requests and null frees never reach the runtime: some ROCm versions fail on
//! `hipMallocAsync(0)` and `hipFreeAsync(nullptr)`.

use std::any::Any;
use std::ffi::c_void;

use super::{allocation_error, checked_pointer, current_device_or_unknown, DeviceMemoryResource};
use crate::error::{Error, Result};
use crate::runtime::{
    process_is_exiting, runtime, DeviceAttribute, DeviceId, MemHandleType, MemPool, MemPoolAttr,
    MemPoolLocation, MemPoolProps, Runtime, RuntimeError, RuntimeErrorKind, Stream,
};

/// hipMM's `allocation_handle_type`: how a pool's memory may be shared with other processes.
/// The numbers are the runtime's (`cudaMemAllocationHandleType`), also used by the C ABI.
pub const HANDLE_TYPE_NONE: i32 = 0;
/// A POSIX file descriptor.
pub const HANDLE_TYPE_POSIX_FILE_DESCRIPTOR: i32 = 1;
/// A Win32 NT handle.
pub const HANDLE_TYPE_WIN32: i32 = 2;
/// A Win32 KMT handle.
pub const HANDLE_TYPE_WIN32_KMT: i32 = 4;
/// A fabric handle.
pub const HANDLE_TYPE_FABRIC: i32 = 8;

/// The runtime's bit of a handle type (0 for none).
pub fn handle_type_bits(ty: MemHandleType) -> i32 {
    match ty {
        MemHandleType::None => HANDLE_TYPE_NONE,
        MemHandleType::PosixFileDescriptor => HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
        MemHandleType::Win32 => HANDLE_TYPE_WIN32,
        MemHandleType::Win32Kmt => HANDLE_TYPE_WIN32_KMT,
        MemHandleType::Fabric => HANDLE_TYPE_FABRIC,
    }
}

/// The handle type with the runtime's number `bits`, or an error naming the value.
pub fn handle_type_from_bits(bits: i32) -> Result<MemHandleType> {
    Ok(match bits {
        HANDLE_TYPE_NONE => MemHandleType::None,
        HANDLE_TYPE_POSIX_FILE_DESCRIPTOR => MemHandleType::PosixFileDescriptor,
        HANDLE_TYPE_WIN32 => MemHandleType::Win32,
        HANDLE_TYPE_WIN32_KMT => MemHandleType::Win32Kmt,
        HANDLE_TYPE_FABRIC => MemHandleType::Fabric,
        other => {
            return Err(Error::invalid(format!(
                "handle_type = {other} is not an allocation handle type (0 none, 1 POSIX file \
                 descriptor, 2 Win32, 4 Win32 KMT, 8 fabric)"
            )))
        }
    })
}

/// hipMM's name of a handle type.
fn handle_type_name(ty: MemHandleType) -> &'static str {
    match ty {
        MemHandleType::None => "none",
        MemHandleType::PosixFileDescriptor => "posix_file_descriptor",
        MemHandleType::Win32 => "win32",
        MemHandleType::Win32Kmt => "win32_kmt",
        MemHandleType::Fabric => "fabric",
    }
}

/// The names of the handle types in a support mask, e.g. `posix_file_descriptor, fabric`.
fn mask_names(mask: i32) -> String {
    let names: Vec<&str> = [
        MemHandleType::PosixFileDescriptor,
        MemHandleType::Win32,
        MemHandleType::Win32Kmt,
        MemHandleType::Fabric,
    ]
    .into_iter()
    .filter(|&t| mask & handle_type_bits(t) != 0)
    .map(handle_type_name)
    .collect();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

/// Turns a runtime failure into [`Error::Unsupported`] when the runtime lacks the feature.
fn unsupported_or_runtime(
    rt: &dyn Runtime,
    device: DeviceId,
    resource: &'static str,
    e: RuntimeError,
) -> Error {
    if e.kind == RuntimeErrorKind::NotSupported {
        Error::Unsupported(format!(
            "{resource} needs stream-ordered memory pools, which {} does not provide: {e}",
            rt.description()
        ))
    } else {
        Error::runtime(device, e)
    }
}

/// The current device, after checking that it supports stream-ordered memory pools.
fn check_pools_supported(rt: &dyn Runtime, resource: &'static str) -> Result<DeviceId> {
    let device = rt.get_device().map_err(|e| Error::runtime(-1, e))?;
    let supported = rt
        .device_attribute(DeviceAttribute::MemoryPoolsSupported, device)
        .map_err(|e| unsupported_or_runtime(rt, device, resource, e))?;
    if supported == 0 {
        return Err(Error::Unsupported(format!(
            "{resource} needs stream-ordered memory pools (cudaMallocAsync / hipMallocAsync), \
             but device {device} reports MemoryPoolsSupported = 0 ({}); use \
             pool_memory_resource instead",
            rt.description()
        )));
    }
    Ok(device)
}

/// Checks that `device` can export pools as `ty`.
fn check_handle_type(rt: &dyn Runtime, device: DeviceId, ty: MemHandleType) -> Result<()> {
    if ty == MemHandleType::None {
        return Ok(());
    }
    let mask = match rt.device_attribute(DeviceAttribute::MemoryPoolSupportedHandleTypes, device) {
        Ok(mask) => mask,
        Err(e) if e.kind == RuntimeErrorKind::NotSupported => 0,
        Err(e) => return Err(Error::runtime(device, e)),
    };
    if mask & handle_type_bits(ty) == 0 {
        return Err(Error::Unsupported(format!(
            "cuda_async_memory_resource: device {device} cannot export memory pools as \
             {} handles; its pools support: {} ({})",
            handle_type_name(ty),
            mask_names(mask),
            rt.description()
        )));
    }
    Ok(())
}

/// One stream-ordered allocation from `pool`; zero bytes give null without a runtime call.
fn pool_allocate(
    rt: &dyn Runtime,
    pool: MemPool,
    bytes: usize,
    stream: Stream,
    resource: &'static str,
) -> Result<*mut c_void> {
    if bytes == 0 {
        return Ok(std::ptr::null_mut());
    }
    match rt.malloc_from_pool_async(bytes, pool, stream) {
        Ok(p) => checked_pointer(p, bytes, resource),
        Err(e) => Err(pool_allocate_error(rt, e, bytes, resource)),
    }
}

/// The error for a failed stream-ordered allocation (out of the hot path).
#[cold]
#[inline(never)]
fn pool_allocate_error(
    rt: &dyn Runtime,
    e: RuntimeError,
    bytes: usize,
    resource: &'static str,
) -> Error {
    let device = current_device_or_unknown(rt);
    if e.kind == RuntimeErrorKind::NotSupported {
        unsupported_or_runtime(rt, device, resource, e)
    } else {
        allocation_error(e, bytes, resource, device)
    }
}

/// One stream-ordered free; null is a no-op without a runtime call, and nothing is freed
/// once the process is exiting.
fn pool_deallocate(
    rt: &dyn Runtime,
    ptr: *mut c_void,
    bytes: usize,
    stream: Stream,
    resource: &'static str,
) -> Result<()> {
    super::direct_deallocate(rt, ptr, bytes, resource, "from a memory pool", |p| {
        rt.free_async(p, stream)
    })
}

/// The direct path of a resource allocating from `pool` (see `ffi::direct`).
fn pool_direct_path(rt: &dyn Runtime, pool: MemPool) -> Option<super::DirectPath> {
    let calls = rt.direct_calls();
    Some(super::DirectPath::Pool {
        malloc: calls.malloc_from_pool_async?,
        free: calls.free_async?,
        pool,
        legacy_stream: calls.legacy_stream,
    })
}

/// The pool a resource of this module allocates from, for `is_equal`.
fn pool_of(other: &dyn DeviceMemoryResource) -> Option<MemPool> {
    let any = other.as_any();
    if let Some(r) = any.downcast_ref::<CudaAsyncMemoryResource>() {
        Some(r.pool)
    } else if let Some(r) = any.downcast_ref::<CudaAsyncViewMemoryResource>() {
        Some(r.pool)
    } else {
        any.downcast_ref::<CudaAsyncManagedMemoryResource>()
            .map(|r| r.pool)
    }
}

/// How much memory a new pool reserves at construction.
#[derive(Clone, Copy, Debug)]
enum Prime {
    /// Exactly this many bytes (nothing when 0); not getting them is an error.
    Exactly(usize),
    /// This many bytes if the device has them, else the most of successive halves of it
    /// that it has (the default, half of the free memory, is an optimization: another
    /// process or resource may take memory between the query and the reservation).
    AtMost(usize),
}

/// Below this, a default reservation that did not fit is given up.
const PRIME_MIN: usize = 2 << 20;

/// Sets the release threshold to `release_threshold` and reserves memory as `prime` says,
/// by one allocation and free on the default stream.
fn configure_pool(
    rt: &dyn Runtime,
    device: DeviceId,
    pool: MemPool,
    prime: Prime,
    release_threshold: u64,
    resource: &'static str,
) -> Result<()> {
    rt.mem_pool_set_attribute(pool, MemPoolAttr::ReleaseThreshold, release_threshold)
        .map_err(|e| Error::runtime(device, e))?;
    let (mut bytes, exact) = match prime {
        Prime::Exactly(n) => (n, true),
        Prime::AtMost(n) => (n, false),
    };
    while bytes > 0 {
        match pool_allocate(rt, pool, bytes, Stream::DEFAULT, resource) {
            Ok(ptr) => {
                pool_deallocate(rt, ptr, bytes, Stream::DEFAULT, resource)?;
                rt.stream_synchronize(Stream::DEFAULT)
                    .map_err(|e| Error::runtime(device, e))?;
                break;
            }
            Err(Error::OutOfMemory { .. }) if !exact && bytes / 2 >= PRIME_MIN => {
                log::debug!("{resource}: {bytes} bytes to reserve did not fit; trying half");
                bytes /= 2;
            }
            Err(Error::OutOfMemory { .. }) if !exact => {
                log::debug!("{resource}: no memory to reserve; the pool starts empty");
                break;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// `cuda_async_memory_resource`: allocates in stream order from a memory pool it creates
/// (and destroys) on the current device.
///
/// Defaults are RMM 25.02's: the release threshold is the device's total memory, so the pool
/// keeps what it reserved at synchronizations, and half of the free device memory is
/// reserved at construction (by one allocation and free on the default stream), so that
/// allocations do not wait for the driver to map memory. Where RMM throws when that half is
/// no longer free by the time it is reserved (another process or resource took memory
/// meanwhile), this reserves the largest of its successive halves that fits instead.
pub struct CudaAsyncMemoryResource {
    rt: &'static dyn Runtime,
    pool: MemPool,
    device: DeviceId,
    handle_type: MemHandleType,
}

impl CudaAsyncMemoryResource {
    const NAME: &'static str = "cuda_async_memory_resource";

    /// A resource with its own pool on the current device.
    ///
    /// * `initial_pool_size`: bytes reserved now (none: half of the free device memory;
    ///   0: nothing);
    /// * `release_threshold`: bytes the pool keeps reserved at synchronizations (none: the
    ///   device's total memory);
    /// * `handle_type`: IPC export type of the pool, checked against what the device supports.
    pub fn new(
        initial_pool_size: Option<usize>,
        release_threshold: Option<u64>,
        handle_type: MemHandleType,
    ) -> Result<Self> {
        let rt = runtime()?;
        let device = check_pools_supported(rt, Self::NAME)?;
        check_handle_type(rt, device, handle_type)?;
        let props = MemPoolProps {
            device,
            location: MemPoolLocation::Device,
            handle_type,
            max_size: 0,
        };
        let pool = rt
            .mem_pool_create(&props)
            .map_err(|e| unsupported_or_runtime(rt, device, Self::NAME, e))?;
        let this = CudaAsyncMemoryResource {
            rt,
            pool,
            device,
            handle_type,
        };
        // On failure `this` is dropped, which destroys the pool.
        let (prime, threshold) = match (initial_pool_size, release_threshold) {
            (Some(initial), Some(threshold)) => (Prime::Exactly(initial), threshold),
            _ => {
                let info = rt.mem_get_info().map_err(|e| Error::runtime(device, e))?;
                (
                    initial_pool_size.map_or(Prime::AtMost(info.free / 2), Prime::Exactly),
                    release_threshold.unwrap_or(info.total as u64),
                )
            }
        };
        configure_pool(rt, device, pool, prime, threshold, Self::NAME)?;
        Ok(this)
    }

    /// The pool's handle (`cudaMemPool_t` / `hipMemPool_t`).
    pub fn pool_handle(&self) -> MemPool {
        self.pool
    }

    /// The device the pool serves.
    pub fn device(&self) -> DeviceId {
        self.device
    }

    /// The pool's IPC export type.
    pub fn handle_type(&self) -> MemHandleType {
        self.handle_type
    }

    /// Exports the pool for another process: a POSIX file descriptor (owned by the caller)
    /// or a Win32 handle, as created. Fails when the pool was created without a handle type.
    pub fn export_handle(&self) -> Result<i64> {
        if self.handle_type == MemHandleType::None {
            return Err(Error::invalid(
                "cuda_async_memory_resource: this pool was created without an export handle \
                 type (pass one, e.g. posix_file_descriptor, to export it)",
            ));
        }
        self.rt
            .mem_pool_export_to_shareable_handle(self.pool, self.handle_type)
            .map_err(|e| unsupported_or_runtime(self.rt, self.device, Self::NAME, e))
    }

    /// The export data of `ptr`, an allocation of this resource, for another process that
    /// imported the pool.
    pub fn export_pointer(&self, ptr: *mut c_void) -> Result<[u8; 64]> {
        if ptr.is_null() {
            return Err(Error::invalid("ptr is null"));
        }
        self.rt
            .mem_pool_export_pointer(ptr)
            .map_err(|e| unsupported_or_runtime(self.rt, self.device, Self::NAME, e))
    }

    /// Reads a pool attribute (release threshold, reserved and used bytes, ...).
    pub fn pool_attribute(&self, attr: MemPoolAttr) -> Result<u64> {
        self.rt
            .mem_pool_get_attribute(self.pool, attr)
            .map_err(|e| Error::runtime(self.device, e))
    }
}

impl Drop for CudaAsyncMemoryResource {
    fn drop(&mut self) {
        if !process_is_exiting() {
            // A failure here has no one to report to; the pool is leaked.
            let _ = self.rt.mem_pool_destroy(self.pool);
        }
    }
}

impl std::fmt::Debug for CudaAsyncMemoryResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cuda_async_memory_resource(pool {:#x}, device {}, {})",
            self.pool.0,
            self.device,
            self.rt.kind().name()
        )
    }
}

impl DeviceMemoryResource for CudaAsyncMemoryResource {
    fn allocate(&self, bytes: usize, stream: Stream) -> Result<*mut c_void> {
        pool_allocate(self.rt, self.pool, bytes, stream, Self::NAME)
    }

    fn deallocate(&self, ptr: *mut c_void, bytes: usize, stream: Stream) -> Result<()> {
        pool_deallocate(self.rt, ptr, bytes, stream, Self::NAME)
    }

    /// Equal to any async resource allocating from the same pool.
    fn is_equal(&self, other: &dyn DeviceMemoryResource) -> bool {
        pool_of(other) == Some(self.pool)
    }

    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn direct_path(&self) -> Option<super::DirectPath> {
        pool_direct_path(self.rt, self.pool)
    }
}

/// `cuda_async_view_memory_resource`: allocates in stream order from a pool it does not own
/// (the device's default pool, or one made elsewhere). The pool must outlive the resource.
pub struct CudaAsyncViewMemoryResource {
    rt: &'static dyn Runtime,
    pool: MemPool,
}

impl CudaAsyncViewMemoryResource {
    const NAME: &'static str = "cuda_async_view_memory_resource";

    /// A view of `pool`; a null handle is an invalid argument.
    pub fn new(pool: MemPool) -> Result<Self> {
        if pool.0 == 0 {
            return Err(Error::invalid(
                "cuda_async_view_memory_resource: pool_handle is null",
            ));
        }
        let rt = runtime()?;
        check_pools_supported(rt, Self::NAME)?;
        Ok(CudaAsyncViewMemoryResource { rt, pool })
    }

    /// A view of the current device's default pool.
    pub fn default_pool() -> Result<Self> {
        let rt = runtime()?;
        let device = check_pools_supported(rt, Self::NAME)?;
        let pool = rt
            .device_get_default_mem_pool(device)
            .map_err(|e| unsupported_or_runtime(rt, device, Self::NAME, e))?;
        Ok(CudaAsyncViewMemoryResource { rt, pool })
    }

    /// The pool's handle.
    pub fn pool_handle(&self) -> MemPool {
        self.pool
    }
}

impl std::fmt::Debug for CudaAsyncViewMemoryResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cuda_async_view_memory_resource(pool {:#x}, {})",
            self.pool.0,
            self.rt.kind().name()
        )
    }
}

impl DeviceMemoryResource for CudaAsyncViewMemoryResource {
    fn allocate(&self, bytes: usize, stream: Stream) -> Result<*mut c_void> {
        pool_allocate(self.rt, self.pool, bytes, stream, Self::NAME)
    }

    fn deallocate(&self, ptr: *mut c_void, bytes: usize, stream: Stream) -> Result<()> {
        pool_deallocate(self.rt, ptr, bytes, stream, Self::NAME)
    }

    /// Equal to any async resource allocating from the same pool.
    fn is_equal(&self, other: &dyn DeviceMemoryResource) -> bool {
        pool_of(other) == Some(self.pool)
    }

    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn direct_path(&self) -> Option<super::DirectPath> {
        pool_direct_path(self.rt, self.pool)
    }
}

/// `cuda_async_managed_memory_resource`: allocates managed (unified) memory in stream order
/// from the process's managed memory pool of the device, where the runtime has managed pools
/// (CUDA 13+, the host emulation); elsewhere construction fails with [`Error::Unsupported`].
/// Each construction sets that pool's release threshold to `u64::MAX`, as RMM 26.10 does on
/// the default managed pool: memory freed to it stays reserved across synchronizations.
pub struct CudaAsyncManagedMemoryResource {
    rt: &'static dyn Runtime,
    pool: MemPool,
    device: DeviceId,
}

/// The managed pool of each (runtime, device), shared by every async managed resource and
/// kept for the life of the process, like the runtime's default pools.
static MANAGED_POOLS: parking_lot::Mutex<Vec<((usize, DeviceId), MemPool)>> =
    parking_lot::Mutex::new(Vec::new());

impl CudaAsyncManagedMemoryResource {
    const NAME: &'static str = "cuda_async_managed_memory_resource";

    /// A resource over the process's managed pool of the current device (made on first use).
    pub fn new() -> Result<Self> {
        let rt = runtime()?;
        let device = check_pools_supported(rt, Self::NAME)?;
        let managed = rt
            .device_attribute(DeviceAttribute::ManagedMemory, device)
            .map_err(|e| unsupported_or_runtime(rt, device, Self::NAME, e))?;
        if managed == 0 {
            return Err(Error::Unsupported(format!(
                "{}: device {device} does not support managed memory ({})",
                Self::NAME,
                rt.description()
            )));
        }
        // One managed pool per device for the whole process, as CUDA's default managed pool
        // (RMM 25.12+ allocates from it): every instance allocates from the same pool, so
        // instances compare equal and memory freed through one can be reused by another.
        let key = (rt as *const dyn Runtime as *const () as usize, device);
        let mut pools = MANAGED_POOLS.lock();
        if let Some(&(_, pool)) = pools.iter().find(|(k, _)| *k == key) {
            // As RMM 26.10, every construction sets the pool's release threshold to the
            // maximum (whatever was set on the pool since): unused memory stays reserved
            // across synchronizations.
            rt.mem_pool_set_attribute(pool, MemPoolAttr::ReleaseThreshold, u64::MAX)
                .map_err(|e| Error::runtime(device, e))?;
            return Ok(CudaAsyncManagedMemoryResource { rt, pool, device });
        }
        let props = MemPoolProps {
            device,
            location: MemPoolLocation::Managed,
            handle_type: MemHandleType::None,
            max_size: 0,
        };
        let pool = rt.mem_pool_create(&props).map_err(|e| {
            if e.kind == RuntimeErrorKind::NotSupported {
                Error::Unsupported(format!(
                    "{}: {} has no managed memory pools ({e}); use managed_memory_resource",
                    Self::NAME,
                    rt.description()
                ))
            } else {
                Error::runtime(device, e)
            }
        })?;
        // The release threshold is the maximum, as RMM 26.10 sets it on the default managed
        // pool.
        if let Err(e) = configure_pool(rt, device, pool, Prime::Exactly(0), u64::MAX, Self::NAME) {
            let _ = rt.mem_pool_destroy(pool);
            return Err(e);
        }
        pools.push((key, pool));
        Ok(CudaAsyncManagedMemoryResource { rt, pool, device })
    }

    /// The pool's handle.
    pub fn pool_handle(&self) -> MemPool {
        self.pool
    }

    /// The device the pool serves.
    pub fn device(&self) -> DeviceId {
        self.device
    }
}

impl std::fmt::Debug for CudaAsyncManagedMemoryResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cuda_async_managed_memory_resource(pool {:#x}, device {}, {})",
            self.pool.0,
            self.device,
            self.rt.kind().name()
        )
    }
}

impl DeviceMemoryResource for CudaAsyncManagedMemoryResource {
    fn allocate(&self, bytes: usize, stream: Stream) -> Result<*mut c_void> {
        pool_allocate(self.rt, self.pool, bytes, stream, Self::NAME)
    }

    fn deallocate(&self, ptr: *mut c_void, bytes: usize, stream: Stream) -> Result<()> {
        pool_deallocate(self.rt, ptr, bytes, stream, Self::NAME)
    }

    /// Equal to any async resource allocating from the same pool.
    fn is_equal(&self, other: &dyn DeviceMemoryResource) -> bool {
        pool_of(other) == Some(self.pool)
    }

    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn direct_path(&self) -> Option<super::DirectPath> {
        pool_direct_path(self.rt, self.pool)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::MemoryType;

    fn init() -> &'static dyn Runtime {
        crate::mr::tests::init()
    }

    fn on_host() -> bool {
        init().kind() == crate::runtime::RuntimeKind::Host
    }

    #[test]
    fn allocate_free_zero_and_null() {
        init();
        let mr = CudaAsyncMemoryResource::new(None, None, MemHandleType::None).unwrap();
        assert_eq!(
            mr.allocate(0, Stream::DEFAULT).unwrap(),
            std::ptr::null_mut()
        );
        mr.deallocate(std::ptr::null_mut(), 0, Stream::DEFAULT)
            .unwrap();
        mr.deallocate(std::ptr::null_mut(), 100, Stream::DEFAULT)
            .unwrap();
        let mut ptrs = Vec::new();
        for size in [1usize, 255, 256, 4096, 1 << 20] {
            let p = mr.allocate(size, Stream::DEFAULT).unwrap();
            assert!(!p.is_null());
            assert_eq!(p as usize % 256, 0);
            ptrs.push((p, size));
        }
        for (p, size) in ptrs {
            mr.deallocate(p, size, Stream::DEFAULT).unwrap();
        }
        init().stream_synchronize(Stream::DEFAULT).unwrap();
        assert_eq!(mr.pool_attribute(MemPoolAttr::UsedMemCurrent).unwrap(), 0);
        assert_eq!(mr.name(), "cuda_async_memory_resource");
    }

    #[test]
    fn defaults_are_total_memory_threshold_and_half_of_free_memory_reserved() {
        let rt = init();
        let info = rt.mem_get_info().unwrap();
        let mr = CudaAsyncMemoryResource::new(None, None, MemHandleType::None).unwrap();
        // RMM 25.02: the threshold is the device's total memory ...
        assert_eq!(
            mr.pool_attribute(MemPoolAttr::ReleaseThreshold).unwrap(),
            info.total as u64
        );
        // ... and half of the free memory is reserved (other tests may be using some).
        let reserved = mr.pool_attribute(MemPoolAttr::ReservedMemCurrent).unwrap();
        assert!(reserved > 0, "nothing reserved by default");
        assert!(
            reserved <= (info.total as u64 / 2).next_multiple_of(2 << 20),
            "{reserved} bytes reserved of {} in total",
            info.total
        );
        // An explicit 0 reserves nothing.
        let bare = CudaAsyncMemoryResource::new(Some(0), None, MemHandleType::None).unwrap();
        assert_eq!(
            bare.pool_attribute(MemPoolAttr::ReservedMemCurrent)
                .unwrap(),
            0
        );
    }

    #[test]
    fn a_default_reservation_that_does_not_fit_is_halved_an_explicit_one_fails() {
        let rt = init();
        let total = rt.mem_get_info().unwrap().total;
        let mr = CudaAsyncMemoryResource::new(Some(0), None, MemHandleType::None).unwrap();
        let (pool, device) = (mr.pool_handle(), mr.device());
        // A GPU's context always holds some of its memory; the host emulation's holds none,
        // where the whole device would fit when no other test holds memory: hold a MiB.
        let held = rt.malloc(1 << 20).unwrap();
        // Four times the device: only a half of a half of it can fit.
        let too_much = 4 * total;
        let err = configure_pool(rt, device, pool, Prime::Exactly(too_much), u64::MAX, "test")
            .unwrap_err();
        assert!(
            matches!(err, Error::OutOfMemory { requested, .. } if requested == too_much),
            "{err}"
        );
        assert_eq!(
            mr.pool_attribute(MemPoolAttr::ReservedMemCurrent).unwrap(),
            0
        );
        configure_pool(rt, device, pool, Prime::AtMost(too_much), u64::MAX, "test").unwrap();
        let reserved = mr.pool_attribute(MemPoolAttr::ReservedMemCurrent).unwrap() as usize;
        assert!(reserved > 0 && reserved < total, "{reserved} of {total}");
        rt.free(held).unwrap();
    }

    #[test]
    fn explicit_release_threshold_is_kept() {
        init();
        let mr =
            CudaAsyncMemoryResource::new(Some(0), Some(u64::MAX), MemHandleType::None).unwrap();
        assert_eq!(
            mr.pool_attribute(MemPoolAttr::ReleaseThreshold).unwrap(),
            u64::MAX
        );
        let p = mr.allocate(4 << 20, Stream::DEFAULT).unwrap();
        mr.deallocate(p, 4 << 20, Stream::DEFAULT).unwrap();
        init().stream_synchronize(Stream::DEFAULT).unwrap();
        // The maximum threshold keeps what was reserved.
        assert!(mr.pool_attribute(MemPoolAttr::ReservedMemCurrent).unwrap() >= 4 << 20);

        let small = CudaAsyncMemoryResource::new(Some(0), Some(0), MemHandleType::None).unwrap();
        assert_eq!(
            small.pool_attribute(MemPoolAttr::ReleaseThreshold).unwrap(),
            0
        );
        let p = small.allocate(4 << 20, Stream::DEFAULT).unwrap();
        small.deallocate(p, 4 << 20, Stream::DEFAULT).unwrap();
        init().stream_synchronize(Stream::DEFAULT).unwrap();
        if on_host() {
            // A zero threshold gives everything back at the synchronization.
            assert_eq!(
                small
                    .pool_attribute(MemPoolAttr::ReservedMemCurrent)
                    .unwrap(),
                0
            );
        }
    }

    #[test]
    fn initial_pool_size_is_reserved() {
        init();
        let initial = 8usize << 20;
        let mr = CudaAsyncMemoryResource::new(Some(initial), None, MemHandleType::None).unwrap();
        assert!(mr.pool_attribute(MemPoolAttr::ReservedMemCurrent).unwrap() >= initial as u64);
        assert_eq!(mr.pool_attribute(MemPoolAttr::UsedMemCurrent).unwrap(), 0);
    }

    #[test]
    fn pool_is_destroyed_on_drop() {
        let rt = init();
        let mr = CudaAsyncMemoryResource::new(Some(1 << 20), None, MemHandleType::None).unwrap();
        let pool = mr.pool_handle();
        drop(mr);
        if !on_host() {
            // A destroyed handle is undefined behaviour on a real runtime; only the
            // emulation can be asked about it.
            return;
        }
        assert!(rt
            .mem_pool_get_attribute(pool, MemPoolAttr::ReservedMemCurrent)
            .is_err());
    }

    #[test]
    fn out_of_memory_keeps_size_device_and_runtime_name() {
        init();
        let mr = CudaAsyncMemoryResource::new(None, None, MemHandleType::None).unwrap();
        let huge = 1usize << 60;
        match mr.allocate(huge, Stream::DEFAULT).unwrap_err() {
            Error::OutOfMemory {
                requested,
                resource,
                detail,
                ..
            } => {
                assert_eq!(requested, huge);
                assert_eq!(resource, "cuda_async_memory_resource");
                assert!(detail.contains("MallocFromPoolAsync"), "{detail}");
            }
            other => panic!("expected out of memory, got {other}"),
        }
    }

    #[test]
    fn unsupported_handle_type_names_the_type_and_what_is_supported() {
        init();
        if !on_host() {
            return;
        }
        let e = CudaAsyncMemoryResource::new(None, None, MemHandleType::PosixFileDescriptor)
            .unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, Error::Unsupported(_)), "{msg}");
        assert!(msg.contains("posix_file_descriptor"), "{msg}");
        assert!(msg.contains("support: none"), "{msg}");
        let e = CudaAsyncMemoryResource::new(None, None, MemHandleType::Fabric).unwrap_err();
        assert!(e.to_string().contains("fabric"), "{e}");
    }

    #[test]
    fn export_needs_a_handle_type() {
        init();
        let mr = CudaAsyncMemoryResource::new(None, None, MemHandleType::None).unwrap();
        assert!(matches!(
            mr.export_handle().unwrap_err(),
            Error::InvalidArgument(_)
        ));
        if on_host() {
            let p = mr.allocate(256, Stream::DEFAULT).unwrap();
            assert!(matches!(
                mr.export_pointer(p).unwrap_err(),
                Error::Unsupported(_)
            ));
            mr.deallocate(p, 256, Stream::DEFAULT).unwrap();
        }
    }

    #[test]
    fn handle_type_numbers_round_trip() {
        for bits in [0, 1, 2, 4, 8] {
            assert_eq!(handle_type_bits(handle_type_from_bits(bits).unwrap()), bits);
        }
        assert!(handle_type_from_bits(3).is_err());
        assert_eq!(mask_names(9), "posix_file_descriptor, fabric");
    }

    #[test]
    fn view_of_the_default_pool() {
        let rt = init();
        let device = rt.get_device().unwrap();
        let pool = rt.device_get_default_mem_pool(device).unwrap();
        let view = CudaAsyncViewMemoryResource::new(pool).unwrap();
        let other = CudaAsyncViewMemoryResource::default_pool().unwrap();
        assert!(view.is_equal(&other));
        let p = view.allocate(1000, Stream::DEFAULT).unwrap();
        assert!(!p.is_null());
        // Freed through the other view of the same pool.
        other.deallocate(p, 1000, Stream::DEFAULT).unwrap();
        assert_eq!(
            view.allocate(0, Stream::DEFAULT).unwrap(),
            std::ptr::null_mut()
        );
        let owned = CudaAsyncMemoryResource::new(None, None, MemHandleType::None).unwrap();
        assert!(!owned.is_equal(&view));
        assert!(owned.is_equal(&CudaAsyncViewMemoryResource::new(owned.pool_handle()).unwrap()));
        assert!(matches!(
            CudaAsyncViewMemoryResource::new(MemPool(0)).unwrap_err(),
            Error::InvalidArgument(_)
        ));
        rt.stream_synchronize(Stream::DEFAULT).unwrap();
    }

    #[test]
    fn the_managed_pool_keeps_its_memory_whatever_its_threshold_was() {
        let rt = init();
        let first = match CudaAsyncManagedMemoryResource::new() {
            Ok(mr) => mr,
            Err(e) => {
                assert!(!on_host(), "the host runtime has managed pools: {e}");
                return;
            }
        };
        let pool = first.pool_handle();
        let threshold = || {
            rt.mem_pool_get_attribute(pool, MemPoolAttr::ReleaseThreshold)
                .unwrap()
        };
        assert_eq!(threshold(), u64::MAX);
        // Lowered by someone else (the pool is the process's): the next resource over it
        // raises it again, as RMM 26.10's constructor does.
        rt.mem_pool_set_attribute(pool, MemPoolAttr::ReleaseThreshold, 0)
            .unwrap();
        let second = CudaAsyncManagedMemoryResource::new().unwrap();
        assert_eq!(second.pool_handle(), pool);
        assert_eq!(threshold(), u64::MAX);
        // Unused memory then stays reserved across a synchronization.
        let p = second.allocate(4 << 20, Stream::DEFAULT).unwrap();
        second.deallocate(p, 4 << 20, Stream::DEFAULT).unwrap();
        rt.stream_synchronize(Stream::DEFAULT).unwrap();
        let reserved = rt
            .mem_pool_get_attribute(pool, MemPoolAttr::ReservedMemCurrent)
            .unwrap();
        assert!(reserved >= 4 << 20, "{reserved} bytes reserved");
    }

    #[test]
    fn managed_pool_gives_managed_memory_or_is_unsupported() {
        let rt = init();
        match CudaAsyncManagedMemoryResource::new() {
            Ok(mr) => {
                let p = mr.allocate(1 << 16, Stream::DEFAULT).unwrap();
                let a = rt.pointer_attributes(p).unwrap();
                assert_eq!(a.memory_type, MemoryType::Managed);
                mr.deallocate(p, 1 << 16, Stream::DEFAULT).unwrap();
                rt.stream_synchronize(Stream::DEFAULT).unwrap();
            }
            Err(e) => {
                assert!(!on_host(), "the host runtime has managed pools: {e}");
                assert!(matches!(e, Error::Unsupported(_)), "{e}");
            }
        }
    }
}
