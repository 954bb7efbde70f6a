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
mod direct;
mod memory;
mod mempool;
mod stream;

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::{Mutex, RwLock};

pub(crate) use config::MAX_DEVICES;
pub use config::{parse_size, HostConfig};

use self::memory::{AllocKind, Memory, VMM_GRANULARITY};
use self::mempool::HostPool;
use self::stream::{HostEvent, HostStream, StreamKind, Task};
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

/// What an emulated device answers for CUDA's device attribute `number` (`cudaDeviceAttr`),
/// None for a number that is no attribute. The emulated device is a discrete-GPU-shaped
/// device of compute capability 9.0 whose memory is host memory: architectural limits are
/// those of CUDA's compute capability 9.0 (warp 32, 1024 threads per block, 48 KiB of
/// shared memory per block, ...), what the host defines comes from the host (one
/// multiprocessor per CPU thread, `multiprocessors`), memory features are what the
/// emulation provides (managed and pageable memory are coherent with the host, unified
/// addressing, stream-ordered pools without IPC handles), and features it lacks (kernels'
/// textures and surfaces, cooperative and cluster launch, host registration, IPC, NUMA,
/// MPS) read 0 (-1 for the NUMA ids: none). The seven attributes the resources query
/// (`DeviceAttribute`) read the same here as from `device_attribute`, which answers them.
fn emulated_attribute(number: i32, device: DeviceId, multiprocessors: i32) -> Option<i32> {
    use crate::runtime::cuda::attr::*;
    if !is_attribute(number) {
        return None;
    }
    Some(match number {
        MAX_THREADS_PER_BLOCK => 1024,
        MAX_BLOCK_DIM_X | MAX_BLOCK_DIM_Y => 1024,
        MAX_BLOCK_DIM_Z => 64,
        MAX_GRID_DIM_X => i32::MAX,
        MAX_GRID_DIM_Y | MAX_GRID_DIM_Z => 65535,
        MAX_SHARED_MEMORY_PER_BLOCK => 48 << 10,
        TOTAL_CONSTANT_MEMORY => 64 << 10,
        WARP_SIZE => 32,
        MAX_PITCH => i32::MAX,
        MAX_REGISTERS_PER_BLOCK | MAX_REGISTERS_PER_MULTIPROCESSOR => 64 << 10,
        // kHz: a nominal 1 GHz (no kernel runs on the emulated device).
        CLOCK_RATE | MEMORY_CLOCK_RATE => 1_000_000,
        TEXTURE_ALIGNMENT | SURFACE_ALIGNMENT => 512,
        TEXTURE_PITCH_ALIGNMENT => 32,
        MULTI_PROCESSOR_COUNT => multiprocessors,
        // Device memory is host memory.
        INTEGRATED | CAN_MAP_HOST_MEMORY | UNIFIED_ADDRESSING => 1,
        // Copies and memsets run on each stream's worker thread, beside other streams.
        GPU_OVERLAP | CONCURRENT_KERNELS => 1,
        ASYNC_ENGINE_COUNT => 2,
        PCI_BUS_ID => device,
        MULTI_GPU_BOARD_GROUP_ID => device,
        GLOBAL_MEMORY_BUS_WIDTH => 64,
        L2_CACHE_SIZE => 4 << 20,
        MAX_THREADS_PER_MULTI_PROCESSOR => 2048,
        COMPUTE_CAPABILITY_MAJOR => 9,
        COMPUTE_CAPABILITY_MINOR => 0,
        GLOBAL_L1_CACHE_SUPPORTED | LOCAL_L1_CACHE_SUPPORTED => 1,
        MAX_SHARED_MEMORY_PER_MULTIPROCESSOR => 228 << 10,
        MAX_SHARED_MEMORY_PER_BLOCK_OPTIN => 227 << 10,
        RESERVED_SHARED_MEMORY_PER_BLOCK => 1 << 10,
        MAX_BLOCKS_PER_MULTIPROCESSOR => 32,
        SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO => 2,
        // Managed and pageable memory are host memory: coherent, accessed in place.
        MANAGED_MEMORY
        | PAGEABLE_MEMORY_ACCESS
        | CONCURRENT_MANAGED_ACCESS
        | PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES
        | DIRECT_MANAGED_MEM_ACCESS_FROM_HOST
        | CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM
        | HOST_NATIVE_ATOMIC_SUPPORTED
        | COMPUTE_PREEMPTION_SUPPORTED => 1,
        MEMORY_POOLS_SUPPORTED => 1,
        MEM_SYNC_DOMAIN_COUNT => 1,
        NUMA_ID | HOST_NUMA_ID => -1,
        // Everything else (textures and surfaces beyond the alignments, ECC, TCC, compute
        // mode default, kernel timeouts, multi-GPU boards, stream priorities, cooperative
        // and cluster launch, host registration, persisting L2, IPC handles and events,
        // GPUDirect RDMA, NUMA configuration, MPS, graphics interop, host pools): 0.
        _ => 0,
    })
}

fn launch_failure(call: &'static str, why: String) -> RuntimeError {
    RuntimeError {
        call,
        code: 719,
        kind: RuntimeErrorKind::Other,
        name: "hostErrorLaunchFailure".into(),
        message: format!("unspecified launch failure: host function panicked: {why}"),
    }
}

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

thread_local! {
    static CURRENT_DEVICE: RefCell<Vec<(u64, DeviceId)>> = const { RefCell::new(Vec::new()) };
    static PER_THREAD: RefCell<Vec<PerThreadStream>> = const { RefCell::new(Vec::new()) };
}

/// A per-thread default stream, destroyed when its thread exits so its worker ends too.
struct PerThreadStream {
    runtime: u64,
    device: DeviceId,
    stream: Arc<HostStream>,
    inner: Weak<Inner>,
}

impl Drop for PerThreadStream {
    fn drop(&mut self) {
        if let Some(inner) = self.inner.upgrade() {
            inner.devices[self.device as usize]
                .streams
                .lock()
                .retain(|s| !Arc::ptr_eq(s, &self.stream));
        }
        self.stream.close();
    }
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

    fn current(&self) -> DeviceId {
        let id = self.inner.id;
        // `try_with`: a call from another thread-local's destructor sees device 0.
        CURRENT_DEVICE
            .try_with(|c| {
                c.borrow()
                    .iter()
                    .find(|(rt, _)| *rt == id)
                    .map_or(0, |&(_, d)| d)
            })
            .unwrap_or(0)
    }

    fn vmm_supported(&self, call: &'static str) -> RtResult<()> {
        if self.inner.config.vmm {
            Ok(())
        } else {
            Err(rt_err(call, RuntimeErrorKind::NotSupported))
        }
    }

    fn check_device(&self, call: &'static str, device: DeviceId) -> RtResult<()> {
        if device >= 0 && (device as usize) < self.inner.devices.len() {
            Ok(())
        } else {
            Err(rt_err(call, RuntimeErrorKind::InvalidDevice))
        }
    }

    fn default_stream(&self, call: &'static str, device: DeviceId) -> RtResult<Arc<HostStream>> {
        let mut slot = self.inner.devices[device as usize].default_stream.lock();
        if let Some(s) = slot.as_ref() {
            return Ok(Arc::clone(s));
        }
        let s = HostStream::spawn(call, 0, device, StreamKind::Legacy)?;
        *slot = Some(Arc::clone(&s));
        Ok(s)
    }

    fn per_thread_stream(&self, call: &'static str, device: DeviceId) -> RtResult<Arc<HostStream>> {
        let id = self.inner.id;
        // A thread whose thread-locals are being torn down has no per-thread stream left.
        let gone = || rt_err(call, RuntimeErrorKind::InvalidHandle);
        let found = PER_THREAD
            .try_with(|p| {
                p.borrow()
                    .iter()
                    .find(|e| e.runtime == id && e.device == device)
                    .map(|e| Arc::clone(&e.stream))
            })
            .map_err(|_| gone())?;
        if let Some(s) = found {
            return Ok(s);
        }
        let s = HostStream::spawn(call, self.new_handle(), device, StreamKind::Blocking)?;
        self.inner.devices[device as usize]
            .streams
            .lock()
            .push(Arc::clone(&s));
        let entry = PerThreadStream {
            runtime: id,
            device,
            stream: Arc::clone(&s),
            inner: Arc::downgrade(&self.inner),
        };
        // On failure the entry is dropped here, which unregisters and closes the stream.
        PER_THREAD
            .try_with(move |p| p.borrow_mut().push(entry))
            .map_err(|_| gone())?;
        Ok(s)
    }

    /// Resolves a stream handle: 0/1 the current device's default stream, 2 the
    /// per-thread stream, anything else must be a live created stream (a call naming a
    /// destroyed one is counted: [`dead_stream_calls`]).
    fn stream(&self, call: &'static str, stream: Stream) -> RtResult<Arc<HostStream>> {
        match stream.0 {
            0 | 1 => self.default_stream(call, self.current()),
            2 => self.per_thread_stream(call, self.current()),
            h => self.inner.streams.read().get(&h).cloned().ok_or_else(|| {
                DEAD_STREAM_CALLS.fetch_add(1, Ordering::Relaxed);
                rt_err(call, RuntimeErrorKind::InvalidHandle)
            }),
        }
    }

    fn event(&self, call: &'static str, event: Event) -> RtResult<Arc<HostEvent>> {
        self.inner
            .events
            .read()
            .get(&event.0)
            .cloned()
            .ok_or_else(|| rt_err(call, RuntimeErrorKind::InvalidHandle))
    }

    fn pool(&self, call: &'static str, pool: MemPool) -> RtResult<Arc<HostPool>> {
        self.inner
            .pools
            .read()
            .get(&pool.0)
            .cloned()
            .ok_or_else(|| rt_err(call, RuntimeErrorKind::InvalidHandle))
    }

    fn default_pool(&self, device: DeviceId) -> Arc<HostPool> {
        let mut slot = self.inner.devices[device as usize].default_pool.lock();
        if let Some(p) = slot.as_ref() {
            return Arc::clone(p);
        }
        let handle = self.new_handle();
        let pool = Arc::new(HostPool::new(
            handle,
            device,
            true,
            false,
            0,
            Arc::clone(&self.inner.memory),
        ));
        self.inner.pools.write().insert(handle, Arc::clone(&pool));
        *slot = Some(Arc::clone(&pool));
        pool
    }

    /// Queues `task` on `s`, first queuing the waits legacy default-stream semantics need:
    /// the legacy stream waits for blocking streams' earlier work and vice versa.
    fn submit(&self, call: &'static str, s: &HostStream, task: Task) -> RtResult<()> {
        self.submit_seq(call, s, task).map(drop)
    }

    /// As [`Self::submit`], returning the sequence number of `task` on `s`.
    fn submit_seq(&self, call: &'static str, s: &HostStream, task: Task) -> RtResult<u64> {
        let closed = |_| rt_err(call, RuntimeErrorKind::InvalidHandle);
        let device = &self.inner.devices[s.device as usize];
        let _order = (s.kind != StreamKind::NonBlocking).then(|| device.order.lock());
        self.each_predecessor(s, |other, seq| {
            let other = Arc::clone(other);
            s.push(Box::new(move || other.wait_for(seq)))
                .map(drop)
                .map_err(closed)
        })?;
        s.push(task).map_err(closed)
    }

    /// Calls `f` with each stream whose pending work what is submitted to `s` now must wait
    /// for, and the sequence number of that stream's last submission: the blocking streams
    /// for the legacy default stream, the legacy stream for a blocking one, none for a
    /// non-blocking one. The caller holds the device's `order` lock (but for a non-blocking
    /// stream), so that the answer holds until it submits.
    fn each_predecessor<E>(
        &self,
        s: &HostStream,
        mut f: impl FnMut(&Arc<HostStream>, u64) -> Result<(), E>,
    ) -> Result<(), E> {
        let device = &self.inner.devices[s.device as usize];
        match s.kind {
            StreamKind::NonBlocking => {}
            StreamKind::Legacy => {
                for other in device.streams.lock().iter() {
                    if other.kind == StreamKind::Blocking {
                        if let Some(seq) = other.pending() {
                            f(other, seq)?;
                        }
                    }
                }
            }
            StreamKind::Blocking => {
                let legacy = device.default_stream.lock().clone();
                if let Some(legacy) = legacy {
                    if let Some(seq) = legacy.pending() {
                        f(&legacy, seq)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether work submitted to `s` now would start at once: neither `s` nor any stream it
    /// orders after ([`Self::each_predecessor`]) has work pending. Racing submissions from
    /// other threads are unordered with the caller's, as on a GPU.
    fn nothing_before(&self, s: &HostStream) -> bool {
        if !s.is_idle() {
            return false;
        }
        let device = &self.inner.devices[s.device as usize];
        let _order = (s.kind != StreamKind::NonBlocking).then(|| device.order.lock());
        self.each_predecessor(s, |_, _| Err(())).is_ok()
    }

    fn sync_stream(call: &'static str, s: &HostStream) -> RtResult<()> {
        match s.synchronize() {
            None => Ok(()),
            Some(why) => Err(launch_failure(call, why)),
        }
    }

    /// Waits for the work queued on every stream of every device, as `cudaFree` and
    /// `cudaFreeHost` do: queued copies may still touch the memory about to be unmapped.
    /// Errors of earlier work stay with their streams (they are not the free's to report).
    fn wait_for_all_work(&self) {
        for d in 0..self.inner.devices.len() {
            for s in self.device_streams(d as DeviceId) {
                s.drain();
            }
        }
    }

    fn device_streams(&self, device: DeviceId) -> Vec<Arc<HostStream>> {
        let d = &self.inner.devices[device as usize];
        let mut all: Vec<_> = d.default_stream.lock().iter().cloned().collect();
        let mut streams = d.streams.lock();
        streams.retain(|s| !s.is_retired());
        all.extend(streams.iter().cloned());
        all
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
        // (W4 through the vmm pool: 1.62x its peak live bytes here, 1.27x on the H100).
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

/// Where a copy's end lies, as CUDA's copy rules see it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Side {
    /// Device, managed or mempool memory of this runtime: read and written in stream order.
    Device,
    /// Host memory from `malloc_host`: read and written in stream order (DMA).
    Pinned,
    /// Any other host memory (stack, heap, mappings the runtime does not know).
    Pageable,
}

impl HostRuntime {
    fn side(&self, ptr: usize) -> Side {
        match self.inner.memory.find(ptr).map(|(_, a)| a.kind) {
            None => Side::Pageable,
            Some(AllocKind::Pinned) => Side::Pinned,
            Some(_) => Side::Device,
        }
    }

    /// Accepts any host range (system memory is accessible), but a range that starts in a
    /// known allocation must end inside it.
    fn check_range(&self, call: &'static str, ptr: *const c_void, bytes: usize) -> RtResult<()> {
        let invalid = || rt_err(call, RuntimeErrorKind::InvalidValue);
        if ptr.is_null() {
            return if bytes == 0 { Ok(()) } else { Err(invalid()) };
        }
        match self.inner.memory.find(ptr as usize) {
            // Virtual memory: contiguous mappings are one range, and a mapping without
            // access would fault (on a GPU, and here the host).
            Some((_, a)) if matches!(a.kind, AllocKind::Mapped { .. }) => {
                if self.inner.memory.vmm_accessible(ptr as usize, bytes) {
                    Ok(())
                } else {
                    Err(invalid())
                }
            }
            Some((start, a)) if bytes > a.size - (ptr as usize - start) => Err(invalid()),
            _ => Ok(()),
        }
    }
}

fn human_size(bytes: usize) -> String {
    const UNITS: [(&str, u32); 4] = [("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)];
    for (unit, shift) in UNITS {
        if bytes >= 1 << shift && bytes % (1 << shift) == 0 {
            return format!("{} {unit}", bytes >> shift);
        }
    }
    for (unit, shift) in UNITS {
        if bytes >= 1 << shift {
            return format!("{:.2} {unit}", bytes as f64 / (1u64 << shift) as f64);
        }
    }
    format!("{bytes} B")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::MemoryType;
    use std::sync::atomic::AtomicBool;
    use std::sync::mpsc;
    use std::time::Duration;

    const GIB: usize = 1 << 30;

    fn rt(devices: usize, memory_per_device: usize) -> HostRuntime {
        HostRuntime::new(HostConfig {
            devices,
            memory_per_device,
            ..HostConfig::default()
        })
    }

    fn kind<T: std::fmt::Debug>(r: RtResult<T>) -> RuntimeErrorKind {
        r.expect_err("expected an error").kind
    }

    #[test]
    fn free_waits_for_work_queued_on_any_stream() {
        let rt = rt(1, GIB);
        let s = rt.stream_create(StreamFlags::default()).unwrap();
        let p = rt.malloc(1 << 20).unwrap();
        let done = Arc::new(AtomicBool::new(false));
        let d = done.clone();
        rt.launch_host_func(
            s,
            Box::new(move || {
                std::thread::sleep(Duration::from_millis(50));
                d.store(true, Ordering::SeqCst);
            }),
        )
        .unwrap();
        // SAFETY: `p` is live; the fill is queued behind the sleeping host function.
        unsafe { rt.memset_async(p, 1, 1 << 20, s).unwrap() };
        rt.free(p).unwrap();
        assert!(
            done.load(Ordering::SeqCst),
            "free returned before queued work finished"
        );
        rt.stream_destroy(s).unwrap();
    }

    /// A host function that blocks its stream until the returned sender is used or dropped.
    fn gate(rt: &HostRuntime, s: Stream) -> mpsc::Sender<()> {
        let (tx, rx) = mpsc::channel::<()>();
        rt.launch_host_func(
            s,
            Box::new(move || {
                let _ = rx.recv();
            }),
        )
        .unwrap();
        tx
    }

    #[test]
    fn description_and_kind() {
        let r = rt(2, 16 * GIB);
        assert_eq!(r.kind(), RuntimeKind::Host);
        assert_eq!(r.description(), "host emulation: 2 device(s) of 16 GiB");
        assert_eq!(r.device_count().unwrap(), 2);
        assert_eq!(human_size(1536 << 20), "1536 MiB");
        assert_eq!(human_size((1536 << 20) + 1), "1.50 GiB");
        assert_eq!(human_size(100), "100 B");
    }

    #[test]
    fn malloc_is_aligned_usable_and_accounted() {
        let r = rt(1, GIB);
        let info = r.mem_get_info().unwrap();
        assert_eq!(
            info,
            MemInfo {
                free: GIB,
                total: GIB
            }
        );
        let p = r.malloc(1000).unwrap();
        assert_eq!(p as usize % 256, 0);
        // SAFETY: `p` is a fresh 1000-byte read/write mapping.
        unsafe { std::ptr::write_bytes(p as *mut u8, 7, 1000) };
        assert_eq!(r.mem_get_info().unwrap().free, GIB - 1000);
        let attrs = r.pointer_attributes(p).unwrap();
        assert_eq!(attrs.memory_type, MemoryType::Device);
        assert_eq!(attrs.device, 0);
        // SAFETY: only the address is computed; it is not dereferenced.
        let interior = unsafe { (p as *const u8).add(999) } as *const c_void;
        assert_eq!(
            r.pointer_attributes(interior).unwrap().memory_type,
            MemoryType::Device
        );
        r.free(p).unwrap();
        assert_eq!(r.mem_get_info().unwrap().free, GIB);
        assert_eq!(
            r.pointer_attributes(p).unwrap().memory_type,
            MemoryType::Unregistered
        );
        assert!(r.malloc(0).unwrap().is_null());
    }

    #[test]
    fn out_of_memory_changes_nothing() {
        let r = rt(1, GIB);
        let p = r.malloc(GIB / 2).unwrap();
        let e = r.malloc(1 << 60).unwrap_err();
        assert_eq!(e.kind, RuntimeErrorKind::OutOfMemory);
        assert_eq!(e.code, 2);
        assert_eq!(e.name, "hostErrorMemoryAllocation");
        assert_eq!(e.message, "out of memory");
        assert_eq!(e.call, "hostMalloc");
        assert_eq!(kind(r.malloc(GIB / 2 + 1)), RuntimeErrorKind::OutOfMemory);
        assert_eq!(
            kind(r.malloc_managed(1 << 60)),
            RuntimeErrorKind::OutOfMemory
        );
        assert_eq!(r.mem_get_info().unwrap().free, GIB / 2);
        let q = r.malloc(GIB / 2).unwrap();
        assert_eq!(r.mem_get_info().unwrap().free, 0);
        r.free(p).unwrap();
        r.free(q).unwrap();
        assert_eq!(r.mem_get_info().unwrap().free, GIB);
    }

    #[test]
    fn bad_frees_are_invalid_value_and_change_nothing() {
        let r = rt(1, GIB);
        let p = r.malloc(4096).unwrap();
        let mut local = 0u64;
        let foreign = &mut local as *mut u64 as *mut c_void;
        let e = r.free(foreign).unwrap_err();
        assert_eq!(e.kind, RuntimeErrorKind::InvalidValue);
        assert_eq!(e.name, "hostErrorInvalidValue");
        assert_eq!(e.message, "invalid argument");
        // SAFETY: address arithmetic only.
        let interior = unsafe { (p as *mut u8).add(256) } as *mut c_void;
        assert_eq!(kind(r.free(interior)), RuntimeErrorKind::InvalidValue);
        assert_eq!(kind(r.free_host(p)), RuntimeErrorKind::InvalidValue);
        assert_eq!(r.mem_get_info().unwrap().free, GIB - 4096);
        r.free(p).unwrap();
        assert_eq!(kind(r.free(p)), RuntimeErrorKind::InvalidValue);
        assert_eq!(r.mem_get_info().unwrap().free, GIB);
        r.free(std::ptr::null_mut()).unwrap();
        r.free_host(std::ptr::null_mut()).unwrap();
    }

    #[test]
    fn managed_and_pinned_memory() {
        let r = rt(2, GIB);
        r.set_device(1).unwrap();
        let m = r.malloc_managed(8192).unwrap();
        assert_eq!(r.mem_get_info().unwrap().free, GIB - 8192);
        let a = r.pointer_attributes(m).unwrap();
        assert_eq!((a.memory_type, a.device), (MemoryType::Managed, 1));
        let h = r.malloc_host(1 << 40).map(|_| ()).err();
        let _ = h; // 1 TiB of pinned memory may or may not map; either way nothing is charged.
        let h = r.malloc_host(4096).unwrap();
        assert_eq!(r.mem_get_info().unwrap().free, GIB - 8192);
        assert_eq!(
            r.pointer_attributes(h).unwrap().memory_type,
            MemoryType::Host
        );
        assert_eq!(kind(r.free(h)), RuntimeErrorKind::InvalidValue);
        assert_eq!(kind(r.free_host(m)), RuntimeErrorKind::InvalidValue);
        r.free_host(h).unwrap();
        r.free(m).unwrap();
        assert_eq!(r.mem_get_info().unwrap().free, GIB);
        assert_eq!(kind(r.malloc_managed(0)), RuntimeErrorKind::InvalidValue);
    }

    #[test]
    fn current_device_is_per_thread() {
        let r = Arc::new(rt(3, GIB));
        assert_eq!(r.get_device().unwrap(), 0);
        r.set_device(2).unwrap();
        assert_eq!(r.get_device().unwrap(), 2);
        let r2 = Arc::clone(&r);
        std::thread::spawn(move || {
            assert_eq!(r2.get_device().unwrap(), 0);
            r2.set_device(1).unwrap();
            assert_eq!(r2.get_device().unwrap(), 1);
        })
        .join()
        .unwrap();
        assert_eq!(r.get_device().unwrap(), 2);
        let e = r.set_device(3).unwrap_err();
        assert_eq!(e.kind, RuntimeErrorKind::InvalidDevice);
        assert_eq!(e.name, "hostErrorInvalidDevice");
        assert_eq!(kind(r.set_device(-1)), RuntimeErrorKind::InvalidDevice);
        assert_eq!(r.get_device().unwrap(), 2);
        // A second runtime has its own current device on this thread.
        assert_eq!(rt(3, GIB).get_device().unwrap(), 0);
        // Allocations land on the current device.
        let p = r.malloc(100).unwrap();
        assert_eq!(r.pointer_attributes(p).unwrap().device, 2);
        assert_eq!(r.mem_get_info().unwrap().free, GIB - 100);
        r.set_device(0).unwrap();
        assert_eq!(r.mem_get_info().unwrap().free, GIB);
        r.free(p).unwrap();
    }

    #[test]
    fn attributes_by_cuda_number_and_versions() {
        let r = rt(2, GIB);
        assert_eq!(r.runtime_version(), Ok(EMULATED_CUDA_VERSION));
        assert_eq!(r.driver_version(), Ok(13000));
        let mp = r
            .device_attribute(DeviceAttribute::MultiprocessorCount, 0)
            .unwrap();
        for number in -2..200 {
            let got = r.device_attribute_by_cuda_number(number, 1);
            if !crate::runtime::cuda::attr::is_attribute(number) {
                assert_eq!(kind(got), RuntimeErrorKind::InvalidValue, "{number}");
                continue;
            }
            let v = got.unwrap();
            assert_eq!(Some(v), emulated_attribute(number, 1, mp), "{number}");
            if let Some(typed) = crate::runtime::cuda::typed_attribute(number) {
                assert_eq!(r.device_attribute(typed, 1), Ok(v), "{typed:?}");
            }
        }
        let a = |n| r.device_attribute_by_cuda_number(n, 0).unwrap();
        assert_eq!(a(10), 32); // warp size
        assert_eq!(a(1), 1024); // threads per block
        assert_eq!((a(75), a(76)), (9, 0)); // compute capability
        assert_eq!(a(16), mp);
        assert_eq!(a(88), 1); // pageable memory access
        assert_eq!(a(115), 1); // memory pools
        assert_eq!(a(119), 0); // no IPC handle types
        assert_eq!(r.device_attribute_by_cuda_number(33, 1), Ok(1)); // PCI bus id
        assert_eq!(
            kind(r.device_attribute_by_cuda_number(10, 2)),
            RuntimeErrorKind::InvalidDevice
        );
        assert_eq!(
            kind(r.device_attribute_by_cuda_number(10, -1)),
            RuntimeErrorKind::InvalidDevice
        );
        let e = r.device_attribute_by_cuda_number(92, 0).unwrap_err();
        assert_eq!((e.code, e.call), (1, "hostDeviceGetAttribute"));
    }

    #[test]
    fn device_attributes() {
        let r = rt(2, GIB);
        assert_eq!(
            r.device_attribute(DeviceAttribute::PageableMemoryAccess, 0),
            Ok(1)
        );
        assert_eq!(
            r.device_attribute(DeviceAttribute::ConcurrentManagedAccess, 1),
            Ok(1)
        );
        assert_eq!(r.device_attribute(DeviceAttribute::ManagedMemory, 0), Ok(1));
        assert_eq!(
            r.device_attribute(DeviceAttribute::MemoryPoolsSupported, 0),
            Ok(1)
        );
        assert_eq!(
            r.device_attribute(DeviceAttribute::MemoryPoolSupportedHandleTypes, 0),
            Ok(0)
        );
        assert!(
            r.device_attribute(DeviceAttribute::MultiprocessorCount, 0)
                .unwrap()
                >= 1
        );
        assert_eq!(r.device_attribute(DeviceAttribute::PciBusId, 1), Ok(1));
        assert_eq!(
            kind(r.device_attribute(DeviceAttribute::PciBusId, 2)),
            RuntimeErrorKind::InvalidDevice
        );
    }

    #[test]
    fn memset_memcpy_host_fn_run_in_order() {
        let r = rt(1, GIB);
        let s = r.stream_create(StreamFlags::default()).unwrap();
        assert!(s.0 >= 0x1000 && s.0 % 0x10 == 0);
        let a = r.malloc(1 << 20).unwrap();
        let b = r.malloc(1 << 20).unwrap();
        let ok = Arc::new(AtomicBool::new(false));
        let (bu, ok2) = (b as usize, Arc::clone(&ok));
        // Block the stream first so every step is really queued behind the previous one.
        let tx = gate(&r, s);
        // SAFETY: `a` and `b` are live 1 MiB allocations until the end of the test.
        unsafe {
            r.memset_async(a, 0xab, 1 << 20, s).unwrap();
            r.memcpy_async(b, a, 1 << 20, s).unwrap();
        }
        r.launch_host_func(
            s,
            Box::new(move || {
                // SAFETY: `b` stays allocated until after the stream synchronizes.
                let data = unsafe { std::slice::from_raw_parts(bu as *const u8, 1 << 20) };
                ok2.store(data.iter().all(|&x| x == 0xab), Ordering::SeqCst);
            }),
        )
        .unwrap();
        assert!(!r.stream_query(s).unwrap());
        drop(tx);
        r.stream_synchronize(s).unwrap();
        assert!(r.stream_query(s).unwrap());
        assert!(ok.load(Ordering::SeqCst));
        r.free(a).unwrap();
        r.free(b).unwrap();
        r.stream_destroy(s).unwrap();
    }

    #[test]
    fn pageable_source_is_read_before_memcpy_async_returns() {
        let r = rt(1, GIB);
        let s = r.stream_create(StreamFlags::default()).unwrap();
        let dst = r.malloc(256).unwrap();
        let tx = gate(&r, s);
        let mut x = 0x1111_1111u32;
        // SAFETY: `dst` is live; `x` is a live local (pageable: read before the call returns).
        unsafe {
            r.memcpy_async(dst, &x as *const u32 as *const c_void, 4, s)
                .unwrap()
        };
        x = 0x2222_2222;
        std::hint::black_box(&mut x);
        drop(tx);
        r.stream_synchronize(s).unwrap();
        // SAFETY: `dst` holds 4 initialized bytes after the synchronize.
        assert_eq!(unsafe { *(dst as *const u32) }, 0x1111_1111);
        r.free(dst).unwrap();
        r.stream_destroy(s).unwrap();
    }

    #[test]
    fn pinned_source_is_read_in_stream_order() {
        let r = rt(1, GIB);
        let s = r.stream_create(StreamFlags::default()).unwrap();
        let dst = r.malloc(256).unwrap();
        let pinned = r.malloc_host(4).unwrap() as *mut u32;
        // SAFETY: `pinned` is a live 4-byte pinned allocation; `dst` is live.
        unsafe {
            *pinned = 1;
            let tx = gate(&r, s);
            r.memcpy_async(dst, pinned as *const c_void, 4, s).unwrap();
            *pinned = 2;
            drop(tx);
            r.stream_synchronize(s).unwrap();
            assert_eq!(*(dst as *const u32), 2);
        }
        r.free_host(pinned as *mut c_void).unwrap();
        r.free(dst).unwrap();
        r.stream_destroy(s).unwrap();
    }

    #[test]
    fn copies_into_pageable_memory_are_synchronous() {
        let r = rt(1, GIB);
        let s = r.stream_create(StreamFlags::default()).unwrap();
        let src = r.malloc(1 << 20).unwrap();
        let (tx, rx) = mpsc::channel::<()>();
        let mut out = vec![0u8; 1 << 20];
        // SAFETY: `src` is live for 1 MiB.
        unsafe { r.memset_async(src, 0x5a, 1 << 20, s).unwrap() };
        // Let the gate go from another thread a little later: the copy must wait for it.
        let opener = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            let _ = tx.send(());
        });
        r.launch_host_func(
            s,
            Box::new(move || {
                let _ = rx.recv();
            }),
        )
        .unwrap();
        // SAFETY: both ranges are valid for 1 MiB; the call returns after the copy.
        unsafe {
            r.memcpy_async(out.as_mut_ptr() as *mut c_void, src, 1 << 20, s)
                .unwrap()
        };
        assert!(
            r.stream_query(s).unwrap(),
            "returned before the stream drained"
        );
        assert!(out.iter().all(|&b| b == 0x5a));
        opener.join().unwrap();
        // Host to host (pageable both ends) is synchronous too.
        let from = vec![7u8; 64];
        let mut to = vec![0u8; 64];
        // SAFETY: both are live 64-byte host buffers.
        unsafe {
            r.memcpy_async(
                to.as_mut_ptr() as *mut c_void,
                from.as_ptr() as *const c_void,
                64,
                s,
            )
            .unwrap()
        };
        assert_eq!(to, from);
        r.free(src).unwrap();
        r.stream_destroy(s).unwrap();
    }

    #[test]
    fn copies_past_an_allocation_are_invalid() {
        let r = rt(1, GIB);
        let a = r.malloc(1024).unwrap();
        let b = r.malloc(4096).unwrap();
        // SAFETY: the calls are refused before any byte is touched.
        unsafe {
            assert_eq!(
                kind(r.memcpy_async(b, a, 2048, Stream::DEFAULT)),
                RuntimeErrorKind::InvalidValue
            );
            assert_eq!(
                kind(r.memset_async(a, 0, 1025, Stream::DEFAULT)),
                RuntimeErrorKind::InvalidValue
            );
            assert_eq!(
                kind(r.memset_async(a, 0, usize::MAX, Stream::DEFAULT)),
                RuntimeErrorKind::InvalidValue
            );
        }
        r.free(a).unwrap();
        r.free(b).unwrap();
    }

    #[test]
    fn work_is_asynchronous() {
        let r = rt(1, GIB);
        for s in [Stream::DEFAULT, Stream::LEGACY, Stream::PER_THREAD] {
            let tx = gate(&r, s);
            assert!(!r.stream_query(s).unwrap(), "{s:?}");
            tx.send(()).unwrap();
            r.stream_synchronize(s).unwrap();
            assert!(r.stream_query(s).unwrap(), "{s:?}");
        }
    }

    #[test]
    fn events_order_work_across_streams() {
        let r = rt(1, GIB);
        let a = r.stream_create(StreamFlags { non_blocking: true }).unwrap();
        let b = r.stream_create(StreamFlags { non_blocking: true }).unwrap();
        let ev = r.event_create().unwrap();
        assert!(ev.0 >= 0x1000 && ev.0 != a.0 && ev.0 != b.0);
        // Never recorded: complete.
        assert!(r.event_query(ev).unwrap());
        r.event_synchronize(ev).unwrap();
        r.stream_wait_event(b, ev).unwrap();
        r.stream_synchronize(b).unwrap();

        let flag = Arc::new(AtomicBool::new(false));
        let tx = gate(&r, a);
        let f = Arc::clone(&flag);
        r.launch_host_func(a, Box::new(move || f.store(true, Ordering::SeqCst)))
            .unwrap();
        r.event_record(ev, a).unwrap();
        assert!(!r.event_query(ev).unwrap());
        r.stream_wait_event(b, ev).unwrap();
        let seen = Arc::new(AtomicBool::new(false));
        let (f, s2) = (Arc::clone(&flag), Arc::clone(&seen));
        r.launch_host_func(
            b,
            Box::new(move || s2.store(f.load(Ordering::SeqCst), Ordering::SeqCst)),
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(20));
        assert!(!r.stream_query(b).unwrap(), "b must wait for the event");
        drop(tx);
        r.event_synchronize(ev).unwrap();
        assert!(r.event_query(ev).unwrap());
        r.stream_synchronize(b).unwrap();
        assert!(seen.load(Ordering::SeqCst));

        r.event_destroy(ev).unwrap();
        assert_eq!(kind(r.event_destroy(ev)), RuntimeErrorKind::InvalidHandle);
        assert_eq!(kind(r.event_query(ev)), RuntimeErrorKind::InvalidHandle);
        assert_eq!(kind(r.event_record(ev, a)), RuntimeErrorKind::InvalidHandle);
        assert_eq!(
            kind(r.event_destroy(Event(0x1234))),
            RuntimeErrorKind::InvalidHandle
        );
    }

    #[test]
    fn records_with_nothing_before_them_complete_at_once() {
        let r = rt(1, GIB);
        let nb = r.stream_create(StreamFlags { non_blocking: true }).unwrap();
        let blocking = r.stream_create(StreamFlags::default()).unwrap();
        let ev = r.event_create().unwrap();
        let records = event_records();
        // An idle stream: complete when the call returns, and still counted.
        r.event_record(ev, nb).unwrap();
        assert!(r.event_query(ev).unwrap());
        assert!(event_records() > records);
        // Waiting for it queues nothing.
        r.stream_wait_event(blocking, ev).unwrap();
        assert!(r.stream_query(blocking).unwrap());

        // Pending work on the stream: the record waits for it, and so does a wait on it.
        let tx = gate(&r, nb);
        r.event_record(ev, nb).unwrap();
        assert!(!r.event_query(ev).unwrap());
        r.stream_wait_event(blocking, ev).unwrap();
        assert!(!r.stream_query(blocking).unwrap());
        drop(tx);
        r.stream_synchronize(blocking).unwrap();
        assert!(r.event_query(ev).unwrap());

        // A blocking stream orders after the legacy default stream's pending work, and the
        // legacy stream after the blocking streams'.
        let tx = gate(&r, Stream::DEFAULT);
        r.event_record(ev, blocking).unwrap();
        assert!(!r.event_query(ev).unwrap());
        drop(tx);
        r.event_synchronize(ev).unwrap();
        let tx = gate(&r, blocking);
        r.event_record(ev, Stream::DEFAULT).unwrap();
        assert!(!r.event_query(ev).unwrap());
        drop(tx);
        r.event_synchronize(ev).unwrap();
        // A non-blocking stream ignores the legacy stream.
        let tx = gate(&r, Stream::DEFAULT);
        r.event_record(ev, nb).unwrap();
        assert!(r.event_query(ev).unwrap());
        drop(tx);
        r.device_synchronize().unwrap();
        r.event_destroy(ev).unwrap();
        r.stream_destroy(nb).unwrap();
        r.stream_destroy(blocking).unwrap();
    }

    #[test]
    fn legacy_default_stream_orders_with_blocking_streams() {
        let r = rt(1, GIB);
        let s = r.stream_create(StreamFlags::default()).unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));

        // Blocking stream work submitted first; default stream work must wait for it.
        let tx = gate(&r, s);
        let l = Arc::clone(&log);
        r.launch_host_func(s, Box::new(move || l.lock().push("blocking")))
            .unwrap();
        let l = Arc::clone(&log);
        r.launch_host_func(Stream::DEFAULT, Box::new(move || l.lock().push("default")))
            .unwrap();
        std::thread::sleep(Duration::from_millis(20));
        assert!(!r.stream_query(Stream::DEFAULT).unwrap());
        drop(tx);
        r.stream_synchronize(Stream::LEGACY).unwrap();
        assert_eq!(*log.lock(), ["blocking", "default"]);

        // Default stream work submitted first; later blocking stream work waits for it.
        log.lock().clear();
        let tx = gate(&r, Stream::DEFAULT);
        let l = Arc::clone(&log);
        r.launch_host_func(Stream::DEFAULT, Box::new(move || l.lock().push("default")))
            .unwrap();
        let l = Arc::clone(&log);
        r.launch_host_func(s, Box::new(move || l.lock().push("blocking")))
            .unwrap();
        // The per-thread stream is blocking too.
        let l = Arc::clone(&log);
        r.launch_host_func(
            Stream::PER_THREAD,
            Box::new(move || l.lock().push("per-thread")),
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(20));
        assert!(!r.stream_query(s).unwrap());
        assert!(!r.stream_query(Stream::PER_THREAD).unwrap());
        drop(tx);
        r.device_synchronize().unwrap();
        assert_eq!(log.lock()[0], "default");
        assert_eq!(log.lock().len(), 3);
        r.stream_destroy(s).unwrap();
    }

    #[test]
    fn non_blocking_stream_skips_legacy_sync() {
        let r = rt(1, GIB);
        let nb = r.stream_create(StreamFlags { non_blocking: true }).unwrap();
        let tx = gate(&r, Stream::DEFAULT);
        let done = Arc::new(AtomicBool::new(false));
        let d = Arc::clone(&done);
        r.launch_host_func(nb, Box::new(move || d.store(true, Ordering::SeqCst)))
            .unwrap();
        r.stream_synchronize(nb).unwrap();
        assert!(done.load(Ordering::SeqCst));
        assert!(!r.stream_query(Stream::DEFAULT).unwrap());
        // And the default stream does not wait for non-blocking work.
        let tx2 = gate(&r, nb);
        tx.send(()).unwrap();
        r.stream_synchronize(Stream::DEFAULT).unwrap();
        assert!(!r.stream_query(nb).unwrap());
        drop(tx2);
        r.stream_synchronize(nb).unwrap();
        r.stream_destroy(nb).unwrap();
    }

    #[test]
    fn destroyed_stream_is_invalid_handle_and_drains() {
        let r = rt(1, GIB);
        let s = r.stream_create(StreamFlags::default()).unwrap();
        let tx = gate(&r, s);
        let done = Arc::new(AtomicBool::new(false));
        let d = Arc::clone(&done);
        r.launch_host_func(s, Box::new(move || d.store(true, Ordering::SeqCst)))
            .unwrap();
        r.stream_destroy(s).unwrap();
        let e = r.stream_synchronize(s).unwrap_err();
        assert_eq!(e.kind, RuntimeErrorKind::InvalidHandle);
        assert_eq!(e.name, "hostErrorInvalidResourceHandle");
        assert_eq!(kind(r.stream_query(s)), RuntimeErrorKind::InvalidHandle);
        assert_eq!(kind(r.stream_destroy(s)), RuntimeErrorKind::InvalidHandle);
        assert_eq!(
            kind(r.launch_host_func(s, Box::new(|| ()))),
            RuntimeErrorKind::InvalidHandle
        );
        assert_eq!(
            kind(r.stream_query(Stream(0xdead0))),
            RuntimeErrorKind::InvalidHandle
        );
        assert_eq!(
            kind(r.stream_destroy(Stream::DEFAULT)),
            RuntimeErrorKind::InvalidHandle
        );
        drop(tx);
        // Queued work still completes after destroy.
        for _ in 0..500 {
            if done.load(Ordering::SeqCst) {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        assert!(done.load(Ordering::SeqCst));
    }

    #[test]
    fn panicking_host_fn_is_a_sticky_error_and_worker_survives() {
        let r = rt(1, GIB);
        let s = r.stream_create(StreamFlags::default()).unwrap();
        r.launch_host_func(s, Box::new(|| panic!("boom"))).unwrap();
        let e = r.stream_synchronize(s).unwrap_err();
        assert_eq!(e.kind, RuntimeErrorKind::Other);
        assert_eq!(e.name, "hostErrorLaunchFailure");
        assert!(e.message.contains("boom"), "{}", e.message);
        let done = Arc::new(AtomicBool::new(false));
        let d = Arc::clone(&done);
        r.launch_host_func(s, Box::new(move || d.store(true, Ordering::SeqCst)))
            .unwrap();
        r.stream_synchronize(s).unwrap();
        assert!(done.load(Ordering::SeqCst));
        r.stream_destroy(s).unwrap();
    }

    #[test]
    fn pool_reuses_freed_blocks_in_stream_order() {
        let r = rt(1, GIB);
        let pool = r.device_get_default_mem_pool(0).unwrap();
        assert_eq!(r.device_get_default_mem_pool(0).unwrap(), pool);
        r.mem_pool_set_attribute(pool, MemPoolAttr::ReleaseThreshold, u64::MAX)
            .unwrap();
        let s = r.stream_create(StreamFlags::default()).unwrap();
        let p = r.malloc_async(1 << 20, s).unwrap();
        assert_eq!(p as usize % 256, 0);
        assert_eq!(
            r.pointer_attributes(p).unwrap().memory_type,
            MemoryType::Device
        );
        assert_eq!(r.mem_get_info().unwrap().free, GIB - (1 << 20));
        // The free only takes effect when the stream reaches it.
        let tx = gate(&r, s);
        r.free_async(p, s).unwrap();
        assert_eq!(kind(r.free_async(p, s)), RuntimeErrorKind::InvalidValue);
        let q = r.malloc_from_pool_async(1 << 20, pool, s).unwrap();
        assert_ne!(p, q);
        drop(tx);
        r.stream_synchronize(s).unwrap();
        let again = r.malloc_from_pool_async(1 << 20, pool, s).unwrap();
        assert_eq!(again, p);
        assert_eq!(
            r.mem_pool_get_attribute(pool, MemPoolAttr::UsedMemCurrent),
            Ok(2 << 20)
        );
        r.free_async(q, s).unwrap();
        r.free_async(again, s).unwrap();
        r.stream_synchronize(s).unwrap();
        assert_eq!(
            r.mem_pool_get_attribute(pool, MemPoolAttr::UsedMemCurrent),
            Ok(0)
        );
        assert_eq!(
            r.mem_pool_get_attribute(pool, MemPoolAttr::ReservedMemCurrent),
            Ok(2 << 20)
        );
        // Not pool memory / zero bytes.
        let d = r.malloc(4096).unwrap();
        assert_eq!(kind(r.free_async(d, s)), RuntimeErrorKind::InvalidValue);
        assert_eq!(kind(r.free(q)), RuntimeErrorKind::InvalidValue);
        r.free(d).unwrap();
        assert_eq!(kind(r.malloc_async(0, s)), RuntimeErrorKind::InvalidValue);
        assert_eq!(
            kind(r.malloc_async(1 << 60, s)),
            RuntimeErrorKind::OutOfMemory
        );
        assert_eq!(
            kind(r.malloc_async(16, Stream(0x99990))),
            RuntimeErrorKind::InvalidHandle
        );
        r.free_async(std::ptr::null_mut(), s).unwrap();
        r.stream_destroy(s).unwrap();
    }

    #[test]
    fn release_threshold_and_trim() {
        let r = rt(1, GIB);
        let pool = r.device_get_default_mem_pool(0).unwrap();
        let reserved = |r: &HostRuntime| {
            r.mem_pool_get_attribute(pool, MemPoolAttr::ReservedMemCurrent)
                .unwrap()
        };
        assert_eq!(
            r.mem_pool_get_attribute(pool, MemPoolAttr::ReleaseThreshold),
            Ok(0)
        );
        // Threshold 0: freed memory goes back to the device once the free is reached.
        let p = r.malloc_async(1 << 20, Stream::DEFAULT).unwrap();
        assert_eq!(reserved(&r), 1 << 20);
        r.free_async(p, Stream::DEFAULT).unwrap();
        r.stream_synchronize(Stream::DEFAULT).unwrap();
        assert_eq!(reserved(&r), 0);
        assert_eq!(r.mem_get_info().unwrap().free, GIB);
        // Large threshold: kept.
        r.mem_pool_set_attribute(pool, MemPoolAttr::ReleaseThreshold, 64 << 20)
            .unwrap();
        let ps: Vec<_> = (0..4)
            .map(|_| r.malloc_async(1 << 20, Stream::DEFAULT).unwrap())
            .collect();
        for p in ps {
            r.free_async(p, Stream::DEFAULT).unwrap();
        }
        r.device_synchronize().unwrap();
        assert_eq!(reserved(&r), 4 << 20);
        assert_eq!(r.mem_get_info().unwrap().free, GIB - (4 << 20));
        // trim_to keeps at least the requested amount.
        r.mem_pool_trim_to(pool, 2 << 20).unwrap();
        assert_eq!(reserved(&r), 2 << 20);
        // ... and never drops below what is in use.
        let p = r.malloc_async(1 << 20, Stream::DEFAULT).unwrap();
        r.mem_pool_trim_to(pool, 0).unwrap();
        assert_eq!(reserved(&r), 1 << 20);
        r.free_async(p, Stream::DEFAULT).unwrap();
        r.stream_synchronize(Stream::DEFAULT).unwrap();
        r.mem_pool_trim_to(pool, 0).unwrap();
        assert_eq!(reserved(&r), 0);
    }

    #[test]
    fn pool_attributes_and_high_water_marks() {
        let r = rt(1, GIB);
        let pool = r.mem_pool_create(&MemPoolProps::default()).unwrap();
        for attr in [
            MemPoolAttr::ReuseFollowEventDependencies,
            MemPoolAttr::ReuseAllowOpportunistic,
            MemPoolAttr::ReuseAllowInternalDependencies,
        ] {
            assert_eq!(r.mem_pool_get_attribute(pool, attr), Ok(1));
            r.mem_pool_set_attribute(pool, attr, 0).unwrap();
            assert_eq!(r.mem_pool_get_attribute(pool, attr), Ok(0));
        }
        r.mem_pool_set_attribute(pool, MemPoolAttr::ReleaseThreshold, 1 << 30)
            .unwrap();
        assert_eq!(
            r.mem_pool_get_attribute(pool, MemPoolAttr::ReleaseThreshold),
            Ok(1 << 30)
        );
        for attr in [MemPoolAttr::ReservedMemCurrent, MemPoolAttr::UsedMemCurrent] {
            assert_eq!(
                kind(r.mem_pool_set_attribute(pool, attr, 0)),
                RuntimeErrorKind::InvalidValue
            );
        }
        let s = Stream::DEFAULT;
        let a = r.malloc_from_pool_async(3 << 20, pool, s).unwrap();
        let b = r.malloc_from_pool_async(1 << 20, pool, s).unwrap();
        r.free_async(a, s).unwrap();
        r.stream_synchronize(s).unwrap();
        let get = |attr| r.mem_pool_get_attribute(pool, attr).unwrap();
        assert_eq!(get(MemPoolAttr::UsedMemCurrent), 1 << 20);
        assert_eq!(get(MemPoolAttr::UsedMemHigh), 4 << 20);
        assert_eq!(get(MemPoolAttr::ReservedMemCurrent), 4 << 20);
        assert_eq!(get(MemPoolAttr::ReservedMemHigh), 4 << 20);
        assert_eq!(
            kind(r.mem_pool_set_attribute(pool, MemPoolAttr::UsedMemHigh, 5)),
            RuntimeErrorKind::InvalidValue
        );
        r.mem_pool_set_attribute(pool, MemPoolAttr::UsedMemHigh, 0)
            .unwrap();
        assert_eq!(get(MemPoolAttr::UsedMemHigh), 1 << 20);
        r.mem_pool_trim_to(pool, 0).unwrap();
        r.mem_pool_set_attribute(pool, MemPoolAttr::ReservedMemHigh, 0)
            .unwrap();
        assert_eq!(get(MemPoolAttr::ReservedMemHigh), 1 << 20);
        // Destroying with a block still allocated frees it too.
        r.mem_pool_destroy(pool).unwrap();
        assert_eq!(r.mem_get_info().unwrap().free, GIB);
        assert_eq!(kind(r.free_async(b, s)), RuntimeErrorKind::InvalidValue);
        assert_eq!(
            kind(r.mem_pool_destroy(pool)),
            RuntimeErrorKind::InvalidHandle
        );
        assert_eq!(
            kind(r.mem_pool_get_attribute(pool, MemPoolAttr::UsedMemCurrent)),
            RuntimeErrorKind::InvalidHandle
        );
        let default = r.device_get_default_mem_pool(0).unwrap();
        assert_eq!(
            kind(r.mem_pool_destroy(default)),
            RuntimeErrorKind::InvalidValue
        );
    }

    #[test]
    fn pool_creation_rules() {
        let r = rt(2, GIB);
        let ipc = MemPoolProps {
            handle_type: MemHandleType::PosixFileDescriptor,
            ..Default::default()
        };
        let e = r.mem_pool_create(&ipc).unwrap_err();
        assert_eq!(e.kind, RuntimeErrorKind::NotSupported);
        assert_eq!(e.name, "hostErrorNotSupported");
        let bad = MemPoolProps {
            device: 2,
            ..Default::default()
        };
        assert_eq!(
            kind(r.mem_pool_create(&bad)),
            RuntimeErrorKind::InvalidDevice
        );
        assert_eq!(
            kind(r.device_get_default_mem_pool(5)),
            RuntimeErrorKind::InvalidDevice
        );
        let managed = r
            .mem_pool_create(&MemPoolProps {
                device: 1,
                location: MemPoolLocation::Managed,
                max_size: 2 << 20,
                ..Default::default()
            })
            .unwrap();
        let p = r
            .malloc_from_pool_async(1 << 20, managed, Stream::DEFAULT)
            .unwrap();
        let a = r.pointer_attributes(p).unwrap();
        assert_eq!((a.memory_type, a.device), (MemoryType::Managed, 1));
        // max_size limits the pool.
        assert_eq!(
            kind(r.malloc_from_pool_async(2 << 20, managed, Stream::DEFAULT)),
            RuntimeErrorKind::OutOfMemory
        );
        r.set_device(1).unwrap();
        assert_eq!(r.mem_get_info().unwrap().free, GIB - (1 << 20));
        r.mem_pool_destroy(managed).unwrap();
        assert_eq!(r.mem_get_info().unwrap().free, GIB);
    }

    #[test]
    fn prefetch_and_advise_validate() {
        let r = rt(1, GIB);
        let m = r.malloc_managed(4096).unwrap();
        r.mem_prefetch_async(m, 4096, 0, Stream::DEFAULT).unwrap();
        r.mem_prefetch_async(m, 4096, -1, Stream::DEFAULT).unwrap();
        assert_eq!(
            kind(r.mem_prefetch_async(m, 4096, 1, Stream::DEFAULT)),
            RuntimeErrorKind::InvalidDevice
        );
        assert_eq!(
            kind(r.mem_prefetch_async(m, 8192, 0, Stream::DEFAULT)),
            RuntimeErrorKind::InvalidValue
        );
        let local = [0u8; 64];
        r.mem_prefetch_async(local.as_ptr() as *const c_void, 64, 0, Stream::DEFAULT)
            .unwrap();
        r.mem_advise(m, 4096, MemAdvice::SetReadMostly, 0).unwrap();
        assert_eq!(
            kind(r.mem_advise(m, 4096, MemAdvice::SetAccessedBy, 7)),
            RuntimeErrorKind::InvalidDevice
        );
        r.free(m).unwrap();
    }

    #[test]
    fn concurrent_allocations_are_consistent() {
        let r = Arc::new(rt(1, GIB));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let r = Arc::clone(&r);
                std::thread::spawn(move || {
                    for i in 0..200 {
                        let p = r.malloc(4096 + i).unwrap();
                        let q = r.malloc_async(1024 + i, Stream::PER_THREAD).unwrap();
                        r.free_async(q, Stream::PER_THREAD).unwrap();
                        r.free(p).unwrap();
                    }
                    r.stream_synchronize(Stream::PER_THREAD).unwrap();
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(r.mem_get_info().unwrap().free, GIB);
    }

    #[test]
    fn per_thread_stream_ends_with_its_thread() {
        let r = Arc::new(rt(1, GIB));
        let r2 = Arc::clone(&r);
        let done = Arc::new(AtomicBool::new(false));
        let d = Arc::clone(&done);
        std::thread::spawn(move || {
            let tx = gate(&r2, Stream::PER_THREAD);
            r2.launch_host_func(
                Stream::PER_THREAD,
                Box::new(move || d.store(true, Ordering::SeqCst)),
            )
            .unwrap();
            assert_eq!(r2.device_streams(0).len(), 1);
            tx.send(()).unwrap();
        })
        .join()
        .unwrap();
        // The thread's stream is unregistered at thread exit; its queued work still ran.
        assert!(r.device_streams(0).is_empty());
        for _ in 0..500 {
            if done.load(Ordering::SeqCst) {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        assert!(done.load(Ordering::SeqCst));
    }

    #[test]
    fn runtime_is_send_and_sync() {
        fn check<T: Send + Sync + 'static>() {}
        check::<HostRuntime>();
    }

    #[test]
    fn vmm_reserve_map_access_unmap_release() {
        const G: usize = VMM_GRANULARITY;
        let rt = rt(1, 16 * G);
        assert_eq!(rt.vmm_granularity(0).unwrap(), (G, G));
        let base = rt.vmm_address_reserve(64 * G, 0).unwrap();
        assert_eq!(base % G, 0);
        let h1 = rt.vmm_create(2 * G, 0).unwrap();
        let h2 = rt.vmm_create(G, 0).unwrap();
        assert_eq!(rt.mem_get_info().unwrap().free, 13 * G);
        rt.vmm_map(base, 2 * G, h1).unwrap();
        rt.vmm_map(base + 2 * G, G, h2).unwrap();
        let p = base as *mut c_void;
        // No access yet: a fill is refused rather than faulting the host.
        // SAFETY: the emulation checks the range before running the fill.
        let r = unsafe { rt.memset_async(p, 1, 3 * G, Stream::DEFAULT) };
        assert_eq!(kind(r), RuntimeErrorKind::InvalidValue);
        rt.vmm_set_access(base, 3 * G, &[0]).unwrap();
        // Both mappings are one range: a fill may cross their boundary.
        // SAFETY: the range is mapped and accessible.
        unsafe { rt.memset_async(p, 7, 3 * G, Stream::DEFAULT).unwrap() };
        rt.stream_synchronize(Stream::DEFAULT).unwrap();
        // SAFETY: mapped, accessible, and the fill completed.
        assert_eq!(unsafe { *(base as *const u8).add(3 * G - 1) }, 7);
        assert_eq!(
            rt.pointer_attributes(p).unwrap().memory_type,
            MemoryType::Device
        );
        // Unmapping must cover whole mappings.
        assert_eq!(kind(rt.vmm_unmap(base, G)), RuntimeErrorKind::InvalidValue);
        rt.vmm_release(h1).unwrap();
        // Released but still mapped: its capacity is still in use.
        assert_eq!(rt.mem_get_info().unwrap().free, 13 * G);
        rt.vmm_unmap(base, 2 * G).unwrap();
        assert_eq!(rt.mem_get_info().unwrap().free, 15 * G);
        assert_eq!(
            rt.pointer_attributes(p).unwrap().memory_type,
            MemoryType::Unregistered
        );
        // Remapped memory is fresh (its old pages went back to the kernel).
        let h3 = rt.vmm_create(2 * G, 0).unwrap();
        rt.vmm_map(base, 2 * G, h3).unwrap();
        rt.vmm_set_access(base, 2 * G, &[0]).unwrap();
        // SAFETY: mapped and accessible again.
        assert_eq!(unsafe { *(base as *const u8) }, 0);
        // The reservation cannot be freed while something is mapped in it.
        assert_eq!(
            kind(rt.vmm_address_free(base, 64 * G)),
            RuntimeErrorKind::InvalidValue
        );
        rt.vmm_unmap(base, 3 * G).unwrap();
        rt.vmm_release(h2).unwrap();
        rt.vmm_release(h3).unwrap();
        assert_eq!(rt.mem_get_info().unwrap().free, 16 * G);
        rt.vmm_address_free(base, 64 * G).unwrap();
    }

    #[test]
    fn vmm_bad_input_changes_nothing() {
        const G: usize = VMM_GRANULARITY;
        let rt = rt(2, 8 * G);
        let base = rt.vmm_address_reserve(8 * G, 0).unwrap();
        // Sizes off the granularity, beyond the capacity, or a device that does not exist.
        assert_eq!(
            kind(rt.vmm_create(G / 2, 0)),
            RuntimeErrorKind::InvalidValue
        );
        assert_eq!(kind(rt.vmm_create(9 * G, 0)), RuntimeErrorKind::OutOfMemory);
        assert_eq!(kind(rt.vmm_create(G, 5)), RuntimeErrorKind::InvalidDevice);
        assert_eq!(
            kind(rt.vmm_address_reserve(G + 1, 0)),
            RuntimeErrorKind::InvalidValue
        );
        let h = rt.vmm_create(G, 1).unwrap();
        // Outside the reservation, misaligned, the wrong size, or over a mapping.
        assert_eq!(
            kind(rt.vmm_map(base + 8 * G, G, h)),
            RuntimeErrorKind::InvalidValue
        );
        assert_eq!(
            kind(rt.vmm_map(base + 4096, G, h)),
            RuntimeErrorKind::InvalidValue
        );
        assert_eq!(
            kind(rt.vmm_map(base, 2 * G, h)),
            RuntimeErrorKind::InvalidValue
        );
        rt.vmm_map(base, G, h).unwrap();
        assert_eq!(kind(rt.vmm_map(base, G, h)), RuntimeErrorKind::InvalidValue);
        assert_eq!(
            kind(rt.vmm_set_access(base, G, &[7])),
            RuntimeErrorKind::InvalidDevice
        );
        assert_eq!(
            kind(rt.vmm_release(PhysicalHandle(12345))),
            RuntimeErrorKind::InvalidValue
        );
        // The device-1 handle charged device 1, not the current device 0.
        rt.set_device(1).unwrap();
        assert_eq!(rt.mem_get_info().unwrap().free, 7 * G);
        rt.set_device(0).unwrap();
        rt.vmm_unmap(base, G).unwrap();
        rt.vmm_release(h).unwrap();
        assert_eq!(kind(rt.vmm_release(h)), RuntimeErrorKind::InvalidValue);
        rt.vmm_address_free(base, 8 * G).unwrap();
        assert_eq!(
            kind(rt.vmm_address_free(base, 8 * G)),
            RuntimeErrorKind::InvalidValue
        );
    }

    #[test]
    fn vmm_can_be_switched_off() {
        let rt = HostRuntime::new(HostConfig {
            vmm: false,
            ..HostConfig::default()
        });
        assert_eq!(kind(rt.vmm_granularity(0)), RuntimeErrorKind::NotSupported);
        assert_eq!(
            kind(rt.vmm_address_reserve(VMM_GRANULARITY, 0)),
            RuntimeErrorKind::NotSupported
        );
    }
}
