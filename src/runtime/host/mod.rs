//! Host emulation backend: emulated devices whose memory is lazily committed host memory,
//! streams backed by worker threads, events, and stream-ordered mempools.
//!
//! Configured by `RMM_HOST_DEVICES` (default 1) and `RMM_HOST_DEVICE_MEMORY` (default
//! 16 GiB per device; see [`parse_size`] for the syntax).
//!
//! It emulates the CUDA 13.0 runtime API (managed memory pools, pool size limits, CUDA's
//! error numbers), so it reports runtime and driver version [`EMULATED_CUDA_VERSION`]
//! (13000), and answers device attributes in CUDA's numbering (see
//! [`emulated_attribute`]).

mod config;
mod copies;
mod devices;
mod direct;
mod memory;
mod mempool;
mod scheduling;
mod stream;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

pub(crate) use config::MAX_DEVICES;
pub use config::{parse_size, HostConfig};

use self::copies::Side;
use self::devices::{emulated_attribute, human_size, CURRENT_DEVICE};
use self::memory::{AllocKind, Memory, VMM_GRANULARITY};
use self::mempool::HostPool;
use self::stream::{HostEvent, HostStream, StreamKind};
use super::{
    DeviceAttribute, DeviceId, Event, HostFn, MemAdvice, MemHandleType, MemInfo, MemPool,
    MemPoolAttr, MemPoolLocation, MemPoolProps, PhysicalHandle, PointerAttributes, RtResult,
    Runtime, RuntimeError, RuntimeErrorKind, RuntimeKind, Stream, StreamFlags,
};
use crate::error::Result;

/// Builds the runtime error a real runtime would report, with `host`-prefixed names and
/// CUDA's numeric codes.
pub(crate) fn rt_err(call: &'static str, kind: RuntimeErrorKind) -> RuntimeError {
    let (code, name, message) = match kind {
        RuntimeErrorKind::InvalidValue => (1, "hostErrorInvalidValue", "invalid argument"),
        RuntimeErrorKind::OutOfMemory => (2, "hostErrorMemoryAllocation", "out of memory"),
        RuntimeErrorKind::NoDevice => (100, "hostErrorNoDevice", "no device is detected"),
        RuntimeErrorKind::InvalidDevice => {
            (101, "hostErrorInvalidDevice", "invalid device ordinal")
        }
        RuntimeErrorKind::InvalidHandle => (
            400,
            "hostErrorInvalidResourceHandle",
            "invalid resource handle",
        ),
        RuntimeErrorKind::NotReady => (600, "hostErrorNotReady", "device not ready"),
        RuntimeErrorKind::NotSupported => (801, "hostErrorNotSupported", "operation not supported"),
        RuntimeErrorKind::Other => (999, "hostErrorUnknown", "unknown error"),
    };
    RuntimeError {
        call,
        code,
        kind,
        name: name.into(),
        message: message.into(),
    }
}

/// The runtime and driver version the host emulation reports: CUDA 13.0's `13000`
/// (`1000 * major + 10 * minor`), the API level whose behaviour it emulates.
pub const EMULATED_CUDA_VERSION: i32 = 13000;

/// Distinguishes runtimes in the thread-locals (tests build many).
static NEXT_RUNTIME_ID: AtomicU64 = AtomicU64::new(1);

static EVENT_RECORDS: AtomicU64 = AtomicU64::new(0);
static DEAD_STREAM_CALLS: AtomicU64 = AtomicU64::new(0);

/// Event records requested from host runtimes so far, in this process (for tests that
/// count the runtime calls a resource makes).
pub fn event_records() -> u64 {
    EVENT_RECORDS.load(Ordering::Relaxed)
}

/// Calls to host runtimes so far, in this process, that named a stream handle that is not
/// (or no longer) a live stream. On CUDA and HIP such a call is undefined behaviour, so
/// tests check that the library never makes one.
pub fn dead_stream_calls() -> u64 {
    DEAD_STREAM_CALLS.load(Ordering::Relaxed)
}

struct Device {
    default_stream: Mutex<Option<Arc<HostStream>>>,
    /// Created and per-thread streams (not the default stream).
    streams: Mutex<Vec<Arc<HostStream>>>,
    /// Serializes enqueues that take part in legacy synchronization, so the waits they
    /// capture follow one submission order and can never form a cycle.
    order: Mutex<()>,
    default_pool: Mutex<Option<Arc<HostPool>>>,
}

struct Inner {
    id: u64,
    config: HostConfig,
    memory: Arc<Memory>,
    devices: Vec<Device>,
    streams: RwLock<HashMap<usize, Arc<HostStream>>>,
    events: RwLock<HashMap<usize, Arc<HostEvent>>>,
    pools: RwLock<HashMap<usize, Arc<HostPool>>>,
    /// One counter for all handle kinds: stream, event and pool handles never collide,
    /// and start well above the special stream values 0, 1 and 2.
    next_handle: AtomicUsize,
}

/// The host emulation of a GPU runtime.
pub struct HostRuntime {
    inner: Arc<Inner>,
}

impl HostRuntime {
    /// Builds the emulation from `RMM_HOST_DEVICES` and `RMM_HOST_DEVICE_MEMORY`.
    pub fn from_env() -> Result<HostRuntime> {
        Ok(Self::new(HostConfig::from_env()?))
    }

    /// Builds the emulation from an explicit configuration (clamped to 1..=64 devices).
    pub fn new(config: HostConfig) -> HostRuntime {
        let config = HostConfig {
            devices: config.devices.clamp(1, MAX_DEVICES),
            ..config
        };
        let devices = (0..config.devices)
            .map(|_| Device {
                default_stream: Mutex::new(None),
                streams: Mutex::new(Vec::new()),
                order: Mutex::new(()),
                default_pool: Mutex::new(None),
            })
            .collect();
        HostRuntime {
            inner: Arc::new(Inner {
                id: NEXT_RUNTIME_ID.fetch_add(1, Ordering::Relaxed),
                config,
                memory: Arc::new(Memory::new(config.devices, config.memory_per_device)),
                devices,
                streams: RwLock::new(HashMap::new()),
                events: RwLock::new(HashMap::new()),
                pools: RwLock::new(HashMap::new()),
                next_handle: AtomicUsize::new(0x1000),
            }),
        }
    }

    /// The configuration in use.
    pub fn config(&self) -> HostConfig {
        self.inner.config
    }

    fn new_handle(&self) -> usize {
        self.inner.next_handle.fetch_add(0x10, Ordering::Relaxed)
    }

    fn vmm_supported(&self, call: &'static str) -> RtResult<()> {
        if self.inner.config.vmm {
            Ok(())
        } else {
            Err(rt_err(call, RuntimeErrorKind::NotSupported))
        }
    }
}

impl Drop for HostRuntime {
    fn drop(&mut self) {
        // Drain every queue before the memory table unmaps what queued copies may touch.
        // (Dropping the runtime from one of its own host functions would wait forever; the
        // process-wide runtime is a static and never dropped.)
        for device in 0..self.inner.devices.len() {
            for s in self.device_streams(device as DeviceId) {
                s.close();
                s.synchronize();
            }
        }
        for pool in self.inner.pools.write().drain().map(|(_, p)| p) {
            pool.destroy();
        }
    }
}

impl Runtime for HostRuntime {
    fn kind(&self) -> RuntimeKind {
        RuntimeKind::Host
    }

    /// The process runtime's calls behind C signatures (see `direct.rs`).
    fn direct_calls(&self) -> super::DirectCalls {
        direct::calls()
    }

    fn description(&self) -> String {
        let c = self.inner.config;
        format!(
            "host emulation: {} device(s) of {}",
            c.devices,
            human_size(c.memory_per_device)
        )
    }

    fn device_count(&self) -> RtResult<i32> {
        Ok(self.inner.devices.len() as i32)
    }

    fn get_device(&self) -> RtResult<DeviceId> {
        Ok(self.current())
    }

    fn set_device(&self, device: DeviceId) -> RtResult<()> {
        self.check_device("hostSetDevice", device)?;
        let id = self.inner.id;
        CURRENT_DEVICE.with(|c| {
            let mut c = c.borrow_mut();
            match c.iter_mut().find(|(rt, _)| *rt == id) {
                Some(entry) => entry.1 = device,
                None => c.push((id, device)),
            }
        });
        Ok(())
    }

    fn device_synchronize(&self) -> RtResult<()> {
        let mut first_error = Ok(());
        for s in self.device_streams(self.current()) {
            let r = Self::sync_stream("hostDeviceSynchronize", &s);
            if first_error.is_ok() {
                first_error = r;
            }
        }
        first_error
    }

    fn mem_get_info(&self) -> RtResult<MemInfo> {
        let m = &self.inner.memory;
        let total = m.capacity();
        Ok(MemInfo {
            free: total - m.used(self.current()),
            total,
        })
    }

    fn device_attribute(&self, attr: DeviceAttribute, device: DeviceId) -> RtResult<i32> {
        self.check_device("hostDeviceGetAttribute", device)?;
        Ok(match attr {
            DeviceAttribute::PageableMemoryAccess
            | DeviceAttribute::ConcurrentManagedAccess
            | DeviceAttribute::ManagedMemory
            | DeviceAttribute::MemoryPoolsSupported => 1,
            DeviceAttribute::MemoryPoolSupportedHandleTypes => 0,
            DeviceAttribute::MultiprocessorCount => std::thread::available_parallelism()
                .map_or(1, |n| n.get().min(i32::MAX as usize) as i32),
            DeviceAttribute::PciBusId => device,
        })
    }

    fn device_attribute_by_cuda_number(&self, attr: i32, device: DeviceId) -> RtResult<i32> {
        const CALL: &str = "hostDeviceGetAttribute";
        self.check_device(CALL, device)?;
        if let Some(typed) = crate::runtime::cuda::typed_attribute(attr) {
            return self.device_attribute(typed, device);
        }
        let multiprocessors =
            self.device_attribute(DeviceAttribute::MultiprocessorCount, device)?;
        emulated_attribute(attr, device, multiprocessors)
            .ok_or_else(|| rt_err(CALL, RuntimeErrorKind::InvalidValue))
    }

    fn device_name(&self, device: DeviceId) -> RtResult<String> {
        self.check_device("hostGetDeviceProperties", device)?;
        Ok(format!("rmm-rs host emulation device {device}"))
    }

    fn runtime_version(&self) -> RtResult<i32> {
        Ok(EMULATED_CUDA_VERSION)
    }

    fn driver_version(&self) -> RtResult<i32> {
        Ok(EMULATED_CUDA_VERSION)
    }

    fn malloc(&self, bytes: usize) -> RtResult<*mut c_void> {
        if bytes == 0 {
            return Ok(std::ptr::null_mut());
        }
        self.inner
            .memory
            .allocate("hostMalloc", bytes, self.current(), AllocKind::Device)
    }

    fn free(&self, ptr: *mut c_void) -> RtResult<()> {
        if ptr.is_null() {
            return Ok(());
        }
        self.wait_for_all_work();
        self.inner
            .memory
            .free("hostFree", ptr as usize, |k| {
                matches!(k, AllocKind::Device | AllocKind::Managed)
            })
            .map(drop)
    }

    fn malloc_managed(&self, bytes: usize) -> RtResult<*mut c_void> {
        self.inner.memory.allocate(
            "hostMallocManaged",
            bytes,
            self.current(),
            AllocKind::Managed,
        )
    }

    fn malloc_host(&self, bytes: usize) -> RtResult<*mut c_void> {
        if bytes == 0 {
            return Ok(std::ptr::null_mut());
        }
        self.inner
            .memory
            .allocate("hostMallocHost", bytes, self.current(), AllocKind::Pinned)
    }

    fn free_host(&self, ptr: *mut c_void) -> RtResult<()> {
        if ptr.is_null() {
            return Ok(());
        }
        self.wait_for_all_work();
        self.inner
            .memory
            .free("hostFreeHost", ptr as usize, |k| k == AllocKind::Pinned)
            .map(drop)
    }

    fn malloc_async(&self, bytes: usize, stream: Stream) -> RtResult<*mut c_void> {
        self.stream("hostMallocAsync", stream)?;
        self.default_pool(self.current()).allocate(bytes)
    }

    fn malloc_from_pool_async(
        &self,
        bytes: usize,
        pool: MemPool,
        stream: Stream,
    ) -> RtResult<*mut c_void> {
        let pool = self.pool("hostMallocFromPoolAsync", pool)?;
        self.stream("hostMallocFromPoolAsync", stream)?;
        pool.allocate(bytes)
    }

    fn free_async(&self, ptr: *mut c_void, stream: Stream) -> RtResult<()> {
        const CALL: &str = "hostFreeAsync";
        let s = self.stream(CALL, stream)?;
        if ptr.is_null() {
            return Ok(());
        }
        let ptr = ptr as usize;
        let invalid = || rt_err(CALL, RuntimeErrorKind::InvalidValue);
        let Some(AllocKind::Pool { pool, .. }) = self.inner.memory.get(ptr).map(|a| a.kind) else {
            return Err(invalid());
        };
        let pool = self
            .inner
            .pools
            .read()
            .get(&pool)
            .cloned()
            .ok_or_else(invalid)?;
        pool.begin_free(ptr)?;
        let queued = Arc::clone(&pool);
        let r = self.submit(CALL, &s, Box::new(move || queued.finish_free(ptr)));
        if r.is_err() {
            pool.cancel_free(ptr);
        }
        r
    }

    fn mem_pool_create(&self, props: &MemPoolProps) -> RtResult<MemPool> {
        const CALL: &str = "hostMemPoolCreate";
        self.check_device(CALL, props.device)?;
        if props.handle_type != MemHandleType::None {
            return Err(rt_err(CALL, RuntimeErrorKind::NotSupported));
        }
        let handle = self.new_handle();
        let pool = HostPool::new(
            handle,
            props.device,
            false,
            props.location == MemPoolLocation::Managed,
            props.max_size,
            Arc::clone(&self.inner.memory),
        );
        self.inner.pools.write().insert(handle, Arc::new(pool));
        Ok(MemPool(handle))
    }

    fn mem_pool_destroy(&self, pool: MemPool) -> RtResult<()> {
        const CALL: &str = "hostMemPoolDestroy";
        let mut pools = self.inner.pools.write();
        match pools.get(&pool.0) {
            None => Err(rt_err(CALL, RuntimeErrorKind::InvalidHandle)),
            Some(p) if p.is_default => Err(rt_err(CALL, RuntimeErrorKind::InvalidValue)),
            Some(_) => {
                let p = pools.remove(&pool.0).expect("checked above");
                drop(pools);
                p.destroy();
                Ok(())
            }
        }
    }

    fn device_get_default_mem_pool(&self, device: DeviceId) -> RtResult<MemPool> {
        self.check_device("hostDeviceGetDefaultMemPool", device)?;
        Ok(MemPool(self.default_pool(device).handle))
    }

    fn mem_pool_set_attribute(&self, pool: MemPool, attr: MemPoolAttr, value: u64) -> RtResult<()> {
        self.pool("hostMemPoolSetAttribute", pool)?
            .set_attribute(attr, value)
    }

    fn mem_pool_get_attribute(&self, pool: MemPool, attr: MemPoolAttr) -> RtResult<u64> {
        Ok(self
            .pool("hostMemPoolGetAttribute", pool)?
            .get_attribute(attr))
    }

    fn mem_pool_trim_to(&self, pool: MemPool, min_bytes_to_keep: usize) -> RtResult<()> {
        self.pool("hostMemPoolTrimTo", pool)?
            .trim_to(min_bytes_to_keep);
        Ok(())
    }

    fn stream_create(&self, flags: StreamFlags) -> RtResult<Stream> {
        let device = self.current();
        let handle = self.new_handle();
        let kind = if flags.non_blocking {
            StreamKind::NonBlocking
        } else {
            StreamKind::Blocking
        };
        let s = HostStream::spawn("hostStreamCreate", handle, device, kind)?;
        self.inner.devices[device as usize]
            .streams
            .lock()
            .push(Arc::clone(&s));
        self.inner.streams.write().insert(handle, s);
        Ok(Stream(handle))
    }

    fn stream_destroy(&self, stream: Stream) -> RtResult<()> {
        let s = self
            .inner
            .streams
            .write()
            .remove(&stream.0)
            .ok_or_else(|| rt_err("hostStreamDestroy", RuntimeErrorKind::InvalidHandle))?;
        // It stays in its device's list until its queued work is done, which still takes
        // part in device synchronization, frees and the legacy stream's implicit waits.
        s.close();
        self.inner.devices[s.device as usize]
            .streams
            .lock()
            .retain(|o| !o.is_retired());
        Ok(())
    }

    fn stream_synchronize(&self, stream: Stream) -> RtResult<()> {
        const CALL: &str = "hostStreamSynchronize";
        let s = self.stream(CALL, stream)?;
        Self::sync_stream(CALL, &s)
    }

    fn stream_query(&self, stream: Stream) -> RtResult<bool> {
        Ok(self.stream("hostStreamQuery", stream)?.is_idle())
    }

    fn event_create(&self) -> RtResult<Event> {
        let handle = self.new_handle();
        self.inner
            .events
            .write()
            .insert(handle, Arc::new(HostEvent::new()));
        Ok(Event(handle))
    }

    fn event_destroy(&self, event: Event) -> RtResult<()> {
        self.inner
            .events
            .write()
            .remove(&event.0)
            .map(drop)
            .ok_or_else(|| rt_err("hostEventDestroy", RuntimeErrorKind::InvalidHandle))
    }

    fn event_record(&self, event: Event, stream: Stream) -> RtResult<()> {
        const CALL: &str = "hostEventRecord";
        EVENT_RECORDS.fetch_add(1, Ordering::Relaxed);
        let ev = self.event(CALL, event)?;
        let s = self.stream(CALL, stream)?;
        let g = ev.begin_record();
        // A GPU completes a record on a stream with nothing to wait for within microseconds;
        // a worker thread woken for it takes tens of them on a loaded machine, so that pools
        // polling their streams' events saw them late and held more memory than on a GPU
        // (the vmm pool under the streams workload, most of all).
        if self.nothing_before(&s) {
            ev.complete(g);
            return Ok(());
        }
        let queued = Arc::clone(&ev);
        let r = self.submit(CALL, &s, Box::new(move || queued.complete(g)));
        if r.is_err() {
            // Never leave a record that no worker will complete.
            ev.complete(g);
        }
        r
    }

    fn event_synchronize(&self, event: Event) -> RtResult<()> {
        self.event("hostEventSynchronize", event)?.synchronize();
        Ok(())
    }

    fn event_query(&self, event: Event) -> RtResult<bool> {
        Ok(self.event("hostEventQuery", event)?.is_complete())
    }

    fn stream_wait_event(&self, stream: Stream, event: Event) -> RtResult<()> {
        const CALL: &str = "hostStreamWaitEvent";
        let ev = self.event(CALL, event)?;
        let s = self.stream(CALL, stream)?;
        let g = ev.recorded();
        // Waiting for a record that has completed (or was never made) orders nothing.
        if g == 0 || ev.is_done(g) {
            return Ok(());
        }
        self.submit(CALL, &s, Box::new(move || ev.wait_for(g)))
    }

    fn launch_host_func(&self, stream: Stream, f: HostFn) -> RtResult<()> {
        const CALL: &str = "hostLaunchHostFunc";
        let s = self.stream(CALL, stream)?;
        self.submit(CALL, &s, f)
    }

    unsafe fn memcpy_async(
        &self,
        dst: *mut c_void,
        src: *const c_void,
        bytes: usize,
        stream: Stream,
    ) -> RtResult<()> {
        const CALL: &str = "hostMemcpyAsync";
        let s = self.stream(CALL, stream)?;
        if bytes == 0 {
            return Ok(());
        }
        if dst.is_null() || src.is_null() {
            return Err(rt_err(CALL, RuntimeErrorKind::InvalidValue));
        }
        self.check_range(CALL, src, bytes)?;
        self.check_range(CALL, dst as *const c_void, bytes)?;
        let (dst_side, src_side) = (self.side(dst as usize), self.side(src as usize));
        let (dst, src) = (dst as usize, src as usize);
        if dst_side == Side::Pageable || (src_side == Side::Pageable && dst_side == Side::Pinned) {
            // CUDA: a copy into pageable memory (device-to-host or host-to-host) and a copy
            // between host buffers return only once the copy is done (after the stream's
            // earlier work): synchronous with respect to the host.
            let copy = move || {
                // SAFETY: the caller guarantees both ranges are valid for `bytes`; this call
                // does not return before the copy has run, so they cannot go away meanwhile.
                unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, bytes) }
            };
            let seq = self.submit_seq(CALL, &s, Box::new(copy))?;
            s.wait_for(seq);
            return Ok(());
        }
        if src_side == Side::Pageable {
            // CUDA stages a pageable source before `cudaMemcpyAsync` returns (only pinned
            // and device sources are read in stream order): the caller may reuse or free it
            // at once. Take the bytes now, write them in stream order.
            // SAFETY: the caller guarantees `src` is valid for reads of `bytes` now.
            let staged: Box<[u8]> =
                unsafe { std::slice::from_raw_parts(src as *const u8, bytes) }.into();
            let copy = move || {
                // SAFETY: the caller of `memcpy_async` guarantees `dst` stays valid for
                // `bytes` until this copy runs in stream order; `staged` is ours.
                unsafe { std::ptr::copy_nonoverlapping(staged.as_ptr(), dst as *mut u8, bytes) }
            };
            return self.submit(CALL, &s, Box::new(copy));
        }
        let copy = move || {
            // SAFETY: the caller of `memcpy_async` guarantees both ranges stay valid for
            // `bytes` until this copy runs in stream order; `copy` allows overlap.
            unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, bytes) }
        };
        self.submit(CALL, &s, Box::new(copy))
    }

    unsafe fn memset_async(
        &self,
        dst: *mut c_void,
        value: u8,
        bytes: usize,
        stream: Stream,
    ) -> RtResult<()> {
        const CALL: &str = "hostMemsetAsync";
        let s = self.stream(CALL, stream)?;
        if bytes == 0 {
            return Ok(());
        }
        self.check_range(CALL, dst, bytes)?;
        let dst = dst as usize;
        let fill = move || {
            // SAFETY: the caller of `memset_async` guarantees the range stays valid for
            // writes of `bytes` until this fill runs in stream order.
            unsafe { std::ptr::write_bytes(dst as *mut u8, value, bytes) }
        };
        self.submit(CALL, &s, Box::new(fill))
    }

    fn mem_prefetch_async(
        &self,
        ptr: *const c_void,
        bytes: usize,
        device: DeviceId,
        stream: Stream,
    ) -> RtResult<()> {
        const CALL: &str = "hostMemPrefetchAsync";
        if device != -1 {
            self.check_device(CALL, device)?;
        }
        self.stream(CALL, stream)?;
        self.check_range(CALL, ptr, bytes)
    }

    fn mem_advise(
        &self,
        ptr: *const c_void,
        bytes: usize,
        _advice: MemAdvice,
        device: DeviceId,
    ) -> RtResult<()> {
        const CALL: &str = "hostMemAdvise";
        if device != -1 {
            self.check_device(CALL, device)?;
        }
        self.check_range(CALL, ptr, bytes)
    }

    fn pointer_attributes(&self, ptr: *const c_void) -> RtResult<PointerAttributes> {
        Ok(self.inner.memory.attributes(ptr as usize))
    }

    // The emulated pools support no IPC handle type (`MemoryPoolSupportedHandleTypes` = 0),
    // so there is nothing to export or import.
    fn mem_pool_export_to_shareable_handle(
        &self,
        pool: MemPool,
        _handle_type: MemHandleType,
    ) -> RtResult<i64> {
        const CALL: &str = "hostMemPoolExportToShareableHandle";
        self.pool(CALL, pool)?;
        Err(rt_err(CALL, RuntimeErrorKind::NotSupported))
    }

    fn mem_pool_import_from_shareable_handle(
        &self,
        _handle: i64,
        _handle_type: MemHandleType,
    ) -> RtResult<MemPool> {
        Err(rt_err(
            "hostMemPoolImportFromShareableHandle",
            RuntimeErrorKind::NotSupported,
        ))
    }

    fn mem_pool_export_pointer(&self, _ptr: *mut c_void) -> RtResult<[u8; 64]> {
        Err(rt_err(
            "hostMemPoolExportPointer",
            RuntimeErrorKind::NotSupported,
        ))
    }

    fn mem_pool_import_pointer(&self, pool: MemPool, _data: &[u8; 64]) -> RtResult<*mut c_void> {
        const CALL: &str = "hostMemPoolImportPointer";
        self.pool(CALL, pool)?;
        Err(rt_err(CALL, RuntimeErrorKind::NotSupported))
    }

    fn vmm_granularity(&self, device: DeviceId) -> RtResult<(usize, usize)> {
        const CALL: &str = "hostMemGetAllocationGranularity";
        self.check_device(CALL, device)?;
        if !self.inner.config.vmm {
            return Err(rt_err(CALL, RuntimeErrorKind::NotSupported));
        }
        Ok((VMM_GRANULARITY, VMM_GRANULARITY))
    }

    fn vmm_address_reserve(&self, size: usize, alignment: usize) -> RtResult<usize> {
        const CALL: &str = "hostMemAddressReserve";
        self.vmm_supported(CALL)?;
        self.inner.memory.vmm_reserve(CALL, size, alignment)
    }

    fn vmm_address_free(&self, addr: usize, size: usize) -> RtResult<()> {
        const CALL: &str = "hostMemAddressFree";
        self.vmm_supported(CALL)?;
        self.inner.memory.vmm_address_free(CALL, addr, size)
    }

    fn vmm_create(&self, size: usize, device: DeviceId) -> RtResult<PhysicalHandle> {
        const CALL: &str = "hostMemCreate";
        self.check_device(CALL, device)?;
        self.vmm_supported(CALL)?;
        self.inner
            .memory
            .vmm_create(CALL, size, device)
            .map(PhysicalHandle)
    }

    fn vmm_release(&self, handle: PhysicalHandle) -> RtResult<()> {
        const CALL: &str = "hostMemRelease";
        self.vmm_supported(CALL)?;
        self.inner.memory.vmm_release(CALL, handle.0)
    }

    fn vmm_map(&self, addr: usize, size: usize, handle: PhysicalHandle) -> RtResult<()> {
        const CALL: &str = "hostMemMap";
        self.vmm_supported(CALL)?;
        self.inner.memory.vmm_map(CALL, addr, size, handle.0)
    }

    fn vmm_unmap(&self, addr: usize, size: usize) -> RtResult<()> {
        const CALL: &str = "hostMemUnmap";
        self.vmm_supported(CALL)?;
        self.inner.memory.vmm_unmap(CALL, addr, size)
    }

    fn vmm_set_access(&self, addr: usize, size: usize, devices: &[DeviceId]) -> RtResult<()> {
        const CALL: &str = "hostMemSetAccess";
        self.vmm_supported(CALL)?;
        if devices.is_empty() {
            return Err(rt_err(CALL, RuntimeErrorKind::InvalidValue));
        }
        for &d in devices {
            self.check_device(CALL, d)?;
        }
        self.inner.memory.vmm_set_access(CALL, addr, size)
    }
}
