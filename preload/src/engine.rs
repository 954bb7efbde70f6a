//! The interposer's state: the runtime it routes to, one resource per device, the
//! pointer map, and the statistics. No `unsafe` here; the FFI layer is `lib.rs`.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use parking_lot::Mutex;
use rmm::history::EventKind;
use rmm::mr::{
    ArenaMemoryResource, BinningMemoryResource, CudaAsyncMemoryResource, CudaMemoryResource,
    DeviceMemoryResource, LoggingResourceAdaptor, ManagedMemoryResource, PoolMemoryResource,
    SharedResource, VmmPoolMemoryResource, VmmPoolOptions,
};
use rmm::runtime::{MemHandleType, MemPoolAttr, Runtime, RuntimeChoice, RuntimeKind};
use rmm::{Error, Stream};

use crate::config::{Config, Kind, Size, SyncMode};
use crate::deferred::{self, Block, Deferred};

/// Which runtime API family a call came from.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Family {
    Cuda,
    Hip,
}

impl Family {
    fn prefix(self) -> &'static str {
        match self {
            Family::Cuda => "cuda",
            Family::Hip => "hip",
        }
    }
}

/// Error codes with the same number in CUDA and HIP.
pub(crate) const SUCCESS: i32 = 0;
const INVALID_VALUE: i32 = 1;
const OUT_OF_MEMORY: i32 = 2;
/// `cudaErrorInitializationError` / `hipErrorNotInitialized`.
pub(crate) const NOT_INITIALIZED: i32 = 3;
const UNKNOWN: i32 = 999;

const MAX_DEVICES: usize = 64;
/// How often an allocation that failed waits for deferred blocks and tries again.
const MAX_OOM_ROUNDS: usize = 8;
const SHARDS: usize = 64;
/// A block at least this large coming back may leave the pool holding more free memory
/// than its release threshold (see `Engine::trim`).
const LARGE_BLOCK: usize = 64 << 20;

/// What one live block of ours is.
#[derive(Clone, Copy, Debug)]
struct Entry {
    size: usize,
    device: i32,
    managed: bool,
    /// What `CU_POINTER_ATTRIBUTE_BUFFER_ID` reports: unique per allocation, as the
    /// driver's are (caches such as UCX's key on it to notice a reallocation).
    id: u64,
}

/// A live block of ours, as the pointer queries report it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LiveBlock {
    pub base: usize,
    pub size: usize,
    pub id: u64,
    /// The block starts its upstream allocation (a legacy IPC handle, which names a whole
    /// upstream allocation, opens to this block's start).
    pub starts_chunk: bool,
}

/// Buffer ids of ours: the top bit set keeps them apart from the driver's, which count up
/// from 1.
static NEXT_BUFFER_ID: AtomicU64 = AtomicU64::new(1 << 63);

/// A function reporting the bytes free inside a resource (what it can hand out without
/// asking the runtime).
type FreeBytes = Box<dyn Fn() -> usize + Send + Sync>;

/// A function giving a resource's entirely free upstream memory back to the runtime
/// (returns the bytes), for a request its free pieces cannot hold together.
type Release = Box<dyn Fn() -> usize + Send + Sync>;

fn no_release() -> Release {
    Box::new(|| 0)
}

#[derive(Default)]
struct Stats {
    allocations: AtomicU64,
    frees: AtomicU64,
    bytes_current: AtomicI64,
    bytes_peak: AtomicI64,
    bytes_total: AtomicU64,
    alloc_ns: AtomicU64,
    free_ns: AtomicU64,
    sync_ns: AtomicU64,
    failed: AtomicU64,
    /// Times an out-of-memory made us give free chunks back to the runtime.
    released: AtomicU64,
    /// Times a large free made us give free chunks beyond the threshold back.
    trims: AtomicU64,
}

struct DeviceState {
    main: SharedResource,
    free_bytes: FreeBytes,
    release: Release,
    /// The free memory kept when a large block comes back (`RMM_PRELOAD_RELEASE_THRESHOLD`).
    keep: usize,
    log: Option<Arc<LoggingResourceAdaptor>>,
    managed: OnceLock<Result<SharedResource, String>>,
    stats: Stats,
    /// Blocks freed by `*Free` that wait for the work that may use them (SyncMode::Defer).
    deferred: Mutex<Deferred>,
}

struct Engine {
    rt: &'static dyn Runtime,
    family: Family,
    devices: [OnceLock<DeviceState>; MAX_DEVICES],
    create: Mutex<()>,
    map: Vec<Mutex<HashMap<usize, Entry>>>,
}

/// Base → size of every block our resources took from the runtime (pool chunks, arenas, the
/// address range a `vmm_pool` reserved).
/// A free of a pointer that is not a live block of ours but lies inside one of these is a
/// double free or an interior pointer of our memory: forwarding it would let the runtime
/// free a whole pool chunk, so it is reported and refused instead.
static CHUNKS: parking_lot::RwLock<BTreeMap<usize, usize>> =
    parking_lot::RwLock::new(BTreeMap::new());

/// The runtime allocations and frees our resources made (pool growth, arenas).
static UPSTREAM_ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static UPSTREAM_FREES: AtomicU64 = AtomicU64::new(0);

fn in_our_chunk(ptr: usize) -> bool {
    CHUNKS
        .read()
        .range(..=ptr)
        .next_back()
        .is_some_and(|(&base, &size)| ptr < base + size.max(1))
}

/// The upstream of our sub-allocators: the runtime's allocator, recording its blocks.
#[derive(Debug)]
struct ChunkTracker(SharedResource);

impl DeviceMemoryResource for ChunkTracker {
    fn allocate(&self, bytes: usize, stream: Stream) -> rmm::Result<*mut std::ffi::c_void> {
        let p = self.0.allocate(bytes, stream)?;
        UPSTREAM_ALLOCATIONS.fetch_add(1, Relaxed);
        CHUNKS.write().insert(p as usize, bytes);
        Ok(p)
    }

    fn deallocate(
        &self,
        ptr: *mut std::ffi::c_void,
        bytes: usize,
        stream: Stream,
    ) -> rmm::Result<()> {
        CHUNKS.write().remove(&(ptr as usize));
        UPSTREAM_FREES.fetch_add(1, Relaxed);
        self.0.deallocate(ptr, bytes, stream)
    }

    fn name(&self) -> &'static str {
        "rmm_preload_chunk_tracker"
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn upstream(&self) -> Option<SharedResource> {
        Some(self.0.clone())
    }
}

static CONFIG: OnceLock<Config> = OnceLock::new();
static FAMILY: OnceLock<Family> = OnceLock::new();
static ENGINE: OnceLock<Option<Engine>> = OnceLock::new();
static FORKED: AtomicBool = AtomicBool::new(false);

/// Calls forwarded to the runtime untouched, by reason.
pub(crate) static FORWARDED_FOREIGN_FREE: AtomicU64 = AtomicU64::new(0);
pub(crate) static FORWARDED_NULL_OR_ZERO: AtomicU64 = AtomicU64::new(0);
pub(crate) static FORWARDED_OTHER: AtomicU64 = AtomicU64::new(0);
static REFUSED_FREES: AtomicU64 = AtomicU64::new(0);
static LEAKED_AT_EXIT: AtomicU64 = AtomicU64::new(0);

/// Stores the configuration (the constructor validated it).
pub(crate) fn set_config(cfg: Config) {
    let _ = CONFIG.set(cfg);
}

/// The configuration; read (and validated, fatally) here if the constructor did not run.
pub(crate) fn config() -> &'static Config {
    CONFIG.get_or_init(|| match Config::from_env() {
        Ok(c) => c,
        Err(msg) => fatal(&msg),
    })
}

/// Prints `msg` and exits with status 1: configuration errors are never ignored.
pub(crate) fn fatal(msg: &str) -> ! {
    eprintln!("{msg}");
    std::process::exit(1)
}

/// Marks a forked child: it forwards everything (its parent's locks and runtime state are
/// not its own; CUDA and HIP do not work in a child after the parent initialized them).
pub(crate) fn mark_forked() {
    FORKED.store(true, Relaxed);
}

fn error_code(e: &Error) -> i32 {
    match e {
        Error::OutOfMemory { .. } | Error::BadAlloc { .. } => OUT_OF_MEMORY,
        Error::Runtime { source, .. } => source.code,
        Error::InvalidArgument(_) => INVALID_VALUE,
        _ => UNKNOWN,
    }
}

/// Outcome of an intercepted call: handled here, or to be forwarded to the real function.
pub(crate) enum Route<T> {
    Forward,
    Done(Result<T, i32>),
}

/// The engine for `family`, creating it on the first intercepted allocation. `library` is
/// the runtime library the real function lives in (the one the program loaded).
fn engine(
    family: Family,
    library: impl FnOnce() -> Option<String>,
    create: bool,
) -> Option<&'static Engine> {
    if FORKED.load(Relaxed) || rmm::runtime::process_is_exiting() {
        return None;
    }
    if *FAMILY.get_or_init(|| family) != family {
        return None;
    }
    if !create {
        return ENGINE.get().and_then(|e| e.as_ref());
    }
    ENGINE
        .get_or_init(|| {
            let choice = match family {
                Family::Cuda => RuntimeChoice::Cuda,
                Family::Hip => RuntimeChoice::Hip,
            };
            let lib: Option<&'static str> = library().map(|s| &*Box::leak(s.into_boxed_str()));
            rmm::runtime::preselect(choice, lib);
            let want = match family {
                Family::Cuda => RuntimeKind::Cuda,
                Family::Hip => RuntimeKind::Hip,
            };
            match rmm::runtime::runtime() {
                Ok(rt) if rt.kind() == want => Some(Engine {
                    rt,
                    family,
                    devices: std::array::from_fn(|_| OnceLock::new()),
                    create: Mutex::new(()),
                    map: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
                }),
                Ok(rt) => {
                    eprintln!(
                        "rmm_preload: warning: the rmm runtime is {} but the program calls {}*; \
                         forwarding every call",
                        rt.description(),
                        family.prefix()
                    );
                    None
                }
                Err(e) => {
                    eprintln!(
                        "rmm_preload: warning: cannot load the {} runtime ({e}); forwarding every call",
                        family.prefix()
                    );
                    None
                }
            }
        })
        .as_ref()
}

fn shard(ptr: usize) -> usize {
    ((ptr >> 8).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) % SHARDS
}

fn resolve(rt: &dyn Runtime, size: Option<Size>, var: &str) -> Option<usize> {
    size.map(|s| match s {
        Size::Bytes(b) => b,
        Size::Percent(p) => match rt.mem_get_info() {
            Ok(info) => ((info.free as u128 * p as u128 / 100) as usize) & !255,
            Err(e) => fatal(&format!(
                "rmm_preload: {var}={p}%: cannot read free memory: {e}"
            )),
        },
    })
}

fn build(rt: &'static dyn Runtime, cfg: &Config, device: i32) -> Result<DeviceState, String> {
    let initial = resolve(rt, cfg.initial, "RMM_PRELOAD_INITIAL_POOL_SIZE");
    let keep =
        resolve(rt, cfg.release_threshold, "RMM_PRELOAD_RELEASE_THRESHOLD").unwrap_or_else(|| {
            let eighth = rt.mem_get_info().map_or(usize::MAX, |i| i.total / 8);
            eighth.max(initial.unwrap_or(0))
        });
    let maximum = resolve(rt, cfg.maximum, "RMM_PRELOAD_MAXIMUM_POOL_SIZE");
    if let Ok(info) = rt.mem_get_info() {
        for (var, v) in [
            ("RMM_PRELOAD_INITIAL_POOL_SIZE", initial),
            ("RMM_PRELOAD_MAXIMUM_POOL_SIZE", maximum),
        ] {
            if let Some(v) = v.filter(|&v| v > info.total) {
                return Err(format!(
                    "{var}={v} exceeds the {} bytes of device {device}",
                    info.total
                ));
            }
        }
    }
    if let (Some(i), Some(m)) = (initial, maximum) {
        if m < i {
            return Err(format!(
                "RMM_PRELOAD_MAXIMUM_POOL_SIZE ({m} bytes) is below RMM_PRELOAD_INITIAL_POOL_SIZE \
                 ({i} bytes) on device {device}"
            ));
        }
    }
    let e = |e: Error| e.to_string();
    let cuda: SharedResource = Arc::new(CudaMemoryResource::new().map_err(e)?);
    let upstream: SharedResource = Arc::new(ChunkTracker(cuda.clone()));
    let (main, free_bytes, release): (SharedResource, FreeBytes, Release) = match cfg.kind {
        Kind::Pool => {
            let p = Arc::new(
                PoolMemoryResource::new(upstream, initial.unwrap_or(0), maximum).map_err(e)?,
            );
            let r = p.clone();
            (
                p.clone(),
                Box::new(move || p.bytes_free()),
                Box::new(move || r.release().unwrap_or(0)),
            )
        }
        Kind::VmmPool => {
            let p = Arc::new(
                VmmPoolMemoryResource::new(VmmPoolOptions {
                    initial_pool_size: initial.unwrap_or(0),
                    maximum_pool_size: maximum,
                    ..VmmPoolOptions::default()
                })
                .map_err(e)?,
            );
            // All its memory lies in its reservation, which lives as long as the process.
            CHUNKS.write().insert(p.reserved_base(), p.reserved_size());
            let r = p.clone();
            (
                p.clone(),
                Box::new(move || p.bytes_free()),
                Box::new(move || r.release().unwrap_or(0)),
            )
        }
        Kind::Binning => {
            let p = Arc::new(
                PoolMemoryResource::new(upstream, initial.unwrap_or(0), maximum).map_err(e)?,
            );
            let b = Arc::new(BinningMemoryResource::new(p.clone()).map_err(e)?);
            let r = p.clone();
            (
                b,
                Box::new(move || p.bytes_free()),
                Box::new(move || r.release().unwrap_or(0)),
            )
        }
        Kind::Arena => {
            let a = Arc::new(ArenaMemoryResource::new(upstream, initial, false).map_err(e)?);
            (a.clone(), Box::new(move || a.bytes_free()), no_release())
        }
        Kind::Async => {
            let a = Arc::new(
                CudaAsyncMemoryResource::new(initial, None, MemHandleType::None).map_err(e)?,
            );
            let free = {
                let a = a.clone();
                move || {
                    let reserved = a
                        .pool_attribute(MemPoolAttr::ReservedMemCurrent)
                        .unwrap_or(0);
                    let used = a.pool_attribute(MemPoolAttr::UsedMemCurrent).unwrap_or(0);
                    reserved.saturating_sub(used) as usize
                }
            };
            (a, Box::new(free), no_release())
        }
        Kind::Cuda => (cuda, Box::new(|| 0), no_release()),
        Kind::Managed => (
            Arc::new(ManagedMemoryResource::new().map_err(e)?),
            Box::new(|| 0),
            no_release(),
        ),
    };
    let (main, log) = match &cfg.log_file {
        None => (main, None),
        Some(path) => {
            let path = if device == 0 {
                PathBuf::from(path)
            } else {
                PathBuf::from(format!("{path}.dev{device}"))
            };
            let l = Arc::new(
                LoggingResourceAdaptor::new(main, Some(&path), false)
                    .map_err(|e| format!("RMM_PRELOAD_LOG_FILE={}: {e}", path.display()))?,
            );
            (l.clone() as SharedResource, Some(l))
        }
    };
    // Memory snapshots (RMM_MEMORY_HISTORY) describe the interposer's resource too.
    rmm::history::describe(&main);
    Ok(DeviceState {
        main,
        free_bytes,
        release,
        keep,
        log,
        managed: OnceLock::new(),
        stats: Stats::default(),
        deferred: Mutex::new(Deferred::default()),
    })
}

impl Engine {
    fn device(&self, device: i32) -> Result<&DeviceState, i32> {
        let slot = usize::try_from(device)
            .ok()
            .and_then(|d| self.devices.get(d))
            .ok_or(INVALID_VALUE)?;
        if let Some(s) = slot.get() {
            return Ok(s);
        }
        let _g = self.create.lock();
        if let Some(s) = slot.get() {
            return Ok(s);
        }
        let cfg = config();
        match build(self.rt, cfg, device) {
            Ok(s) => Ok(slot.get_or_init(|| s)),
            Err(msg) => fatal(&format!(
                "rmm_preload: cannot create the {:?} resource on device {device}: {msg}",
                cfg.kind
            )),
        }
    }

    fn managed(&self, st: &DeviceState) -> Result<SharedResource, i32> {
        st.managed
            .get_or_init(|| {
                let m: SharedResource =
                    Arc::new(ManagedMemoryResource::new().map_err(|e| e.to_string())?);
                Ok(Arc::new(
                    PoolMemoryResource::new(m, 0, None).map_err(|e| e.to_string())?,
                ))
            })
            .clone()
            .map_err(|msg| {
                eprintln!("rmm_preload: managed pool: {msg}");
                NOT_INITIALIZED
            })
    }
}

/// Whether synchronous frees are deferred: in the default mode, for the resources that keep
/// freed memory (the `cuda` and `managed` resources free through the runtime, which
/// synchronizes by itself).
fn defers(cfg: &Config) -> bool {
    cfg.sync == SyncMode::Defer && !matches!(cfg.kind, Kind::Cuda | Kind::Managed)
}

fn is_out_of_memory(e: &Error) -> bool {
    matches!(e, Error::OutOfMemory { .. } | Error::BadAlloc { .. })
}

/// Allocates `size` (> 0) bytes from the resource of `device`, or of the runtime's current
/// device when `None`.
pub(crate) fn allocate(
    family: Family,
    library: impl FnOnce() -> Option<String>,
    size: usize,
    stream: Stream,
    managed: bool,
    device: Option<i32>,
) -> Route<*mut std::ffi::c_void> {
    let Some(eng) = engine(family, library, true) else {
        FORWARDED_OTHER.fetch_add(1, Relaxed);
        return Route::Forward;
    };
    Route::Done(eng.allocate(size, stream, managed, device))
}

impl Engine {
    fn allocate(
        &self,
        size: usize,
        stream: Stream,
        managed: bool,
        device: Option<i32>,
    ) -> Result<*mut std::ffi::c_void, i32> {
        let device = match device {
            Some(d) => d,
            None => self.rt.get_device().map_err(|e| e.code)?,
        };
        let st = self.device(device)?;
        let cfg = config();
        let start = cfg.stats.then(Instant::now);
        let res = if managed {
            self.managed(st)?
        } else {
            st.main.clone()
        };
        let defer = defers(cfg);
        if defer {
            self.reclaim(st, device, false);
        }
        let mut r = res.allocate(size, stream);
        // Memory freed by the program may still be waiting for its work: wait for it, then
        // try again, so that deferral does not cause an out-of-memory. Other threads keep
        // freeing (into the deferred lists) meanwhile, hence a few rounds.
        for _ in 0..MAX_OOM_ROUNDS {
            match &r {
                Err(e) if defer && is_out_of_memory(e) && self.reclaim(st, device, true) => {
                    r = res.allocate(size, stream);
                }
                _ => break,
            }
        }
        // What `*MemGetInfo` reports free includes our free memory, which may lie in pieces
        // no one of which holds the request: give entirely free chunks back to the runtime
        // and try once more, so that a request sized from that report can succeed.
        if matches!(&r, Err(e) if is_out_of_memory(e)) && !managed && (st.release)() > 0 {
            st.stats.released.fetch_add(1, Relaxed);
            r = res.allocate(size, stream);
        }
        if let Some(t) = start {
            st.stats
                .alloc_ns
                .fetch_add(t.elapsed().as_nanos() as u64, Relaxed);
        }
        let p = match r {
            Ok(p) => p,
            Err(e) => {
                st.stats.failed.fetch_add(1, Relaxed);
                if rmm::history::enabled() {
                    note(EventKind::AllocateFailed, &res, 0, size, stream, device);
                    if is_out_of_memory(&e) {
                        rmm::history::out_of_memory();
                    }
                }
                return Err(error_code(&e));
            }
        };
        if rmm::history::enabled() {
            note(EventKind::Allocate, &res, p as usize, size, stream, device);
        }
        self.map[shard(p as usize)].lock().insert(
            p as usize,
            Entry {
                size,
                device,
                managed,
                id: NEXT_BUFFER_ID.fetch_add(1, Relaxed),
            },
        );
        st.stats.allocations.fetch_add(1, Relaxed);
        st.stats.bytes_total.fetch_add(size as u64, Relaxed);
        let now = st.stats.bytes_current.fetch_add(size as i64, Relaxed) + size as i64;
        st.stats.bytes_peak.fetch_max(now, Relaxed);
        Ok(p)
    }

    /// After a block of `size` bytes came back: when it is large and more than the release
    /// threshold is free, entirely free chunks go back to the runtime, so that memory the
    /// program gave up serves the runtime's own allocations (streams, modules, explicit
    /// pools) and other processes again, as it would without the pool.
    fn trim(&self, st: &DeviceState, size: usize) {
        if size >= LARGE_BLOCK && (st.free_bytes)() > st.keep && (st.release)() > 0 {
            st.stats.trims.fetch_add(1, Relaxed);
        }
    }

    /// Returns completed deferred blocks of `device` (current) to their resource; with
    /// `wait`, waits for all of them. True when anything was pending.
    fn reclaim(&self, st: &DeviceState, device: i32, wait: bool) -> bool {
        let mut d = st.deferred.lock();
        if d.is_empty() {
            return false;
        }
        let mut largest = 0;
        let mut release = |b: Block| {
            largest = largest.max(b.size);
            let res = if b.managed {
                match st.managed.get() {
                    Some(Ok(m)) => m,
                    _ => return,
                }
            } else {
                &st.main
            };
            if res
                .deallocate(b.ptr as *mut std::ffi::c_void, b.size, Stream::DEFAULT)
                .is_err()
            {
                st.stats.failed.fetch_add(1, Relaxed);
            }
        };
        let t = (wait && config().stats).then(Instant::now);
        d.reclaim(self.rt, device, wait, wait, &mut release);
        drop(d);
        if let Some(t) = t {
            st.stats
                .sync_ns
                .fetch_add(t.elapsed().as_nanos() as u64, Relaxed);
        }
        self.trim(st, largest);
        true
    }

    fn free(&self, ptr: *mut std::ffi::c_void, stream: Option<Stream>) -> Route<()> {
        let Some(entry) = self.map[shard(ptr as usize)].lock().remove(&(ptr as usize)) else {
            if in_our_chunk(ptr as usize) {
                REFUSED_FREES.fetch_add(1, Relaxed);
                eprintln!(
                    "rmm_preload: free of {ptr:p}, which is inside rmm_preload's pool but not \
                     a live allocation (double free or interior pointer): ignored"
                );
                return Route::Done(Err(INVALID_VALUE));
            }
            FORWARDED_FOREIGN_FREE.fetch_add(1, Relaxed);
            return Route::Forward;
        };
        if rmm::runtime::process_is_exiting() {
            // The runtime may be torn down already: leak (the process is ending anyway).
            LEAKED_AT_EXIT.fetch_add(1, Relaxed);
            return Route::Done(Ok(()));
        }
        let Some(st) = self.devices[entry.device as usize].get() else {
            return Route::Done(Err(UNKNOWN));
        };
        if rmm::history::enabled() {
            let res = st.main.clone();
            let s = stream.unwrap_or(Stream::DEFAULT);
            note(
                EventKind::Free,
                &res,
                ptr as usize,
                entry.size,
                s,
                entry.device,
            );
        }
        let cfg = config();
        if stream.is_none() && defers(cfg) {
            // No runtime call: the block waits in its device's open list (deferred.rs).
            st.deferred.lock().push(Block {
                ptr: ptr as usize,
                size: entry.size,
                managed: entry.managed,
            });
            st.stats.frees.fetch_add(1, Relaxed);
            st.stats.bytes_current.fetch_sub(entry.size as i64, Relaxed);
            return Route::Done(Ok(()));
        }
        let previous = match self.rt.get_device() {
            Ok(d) => d,
            Err(e) => return Route::Done(Err(e.code)),
        };
        if previous != entry.device {
            if let Err(e) = self.rt.set_device(entry.device) {
                return Route::Done(Err(e.code));
            }
        }
        let mut status = Ok(());
        let stream = match stream {
            Some(s) => s,
            None => {
                // cudaFree/hipFree synchronize the device; so do we (RMM_PRELOAD_SYNC=device),
                // which also makes the block safe to hand to any stream afterwards.
                if cfg.sync == SyncMode::Device {
                    let t = cfg.stats.then(Instant::now);
                    if let Err(e) = self.rt.device_synchronize() {
                        status = Err(e.code);
                    }
                    if let Some(t) = t {
                        st.stats
                            .sync_ns
                            .fetch_add(t.elapsed().as_nanos() as u64, Relaxed);
                    }
                }
                Stream::DEFAULT
            }
        };
        let start = cfg.stats.then(Instant::now);
        let res = if entry.managed {
            match st.managed.get() {
                Some(Ok(m)) => m.clone(),
                _ => return Route::Done(Err(UNKNOWN)),
            }
        } else {
            st.main.clone()
        };
        if let Err(e) = res.deallocate(ptr, entry.size, stream) {
            status = status.and(Err(error_code(&e)));
        } else if !entry.managed {
            self.trim(st, entry.size);
        }
        if let Some(t) = start {
            st.stats
                .free_ns
                .fetch_add(t.elapsed().as_nanos() as u64, Relaxed);
        }
        st.stats.frees.fetch_add(1, Relaxed);
        st.stats.bytes_current.fetch_sub(entry.size as i64, Relaxed);
        if previous != entry.device {
            let _ = self.rt.set_device(previous);
        }
        Route::Done(status)
    }
}

/// A memory-history event of the program's call (`RMM_MEMORY_HISTORY` records from the
/// start under the interposer too).
#[cold]
fn note(
    kind: EventKind,
    res: &SharedResource,
    ptr: usize,
    size: usize,
    stream: Stream,
    device: i32,
) {
    let id = Arc::as_ptr(res) as *const () as usize;
    rmm::history::record(kind, ptr, size, stream.0, device, res.name(), id);
}

impl Engine {
    /// The live block holding `ptr`: a lookup of its start, else (an interior pointer of
    /// our memory) a scan of every shard.
    fn block(&self, ptr: usize) -> Option<LiveBlock> {
        let exact = self.map[shard(ptr)].lock().get(&ptr).copied();
        let found = match exact {
            Some(e) => Some((ptr, e)),
            None if in_our_chunk(ptr) => self.map.iter().find_map(|m| {
                m.lock()
                    .iter()
                    .find(|(&b, e)| b <= ptr && ptr < b + e.size)
                    .map(|(&b, e)| (b, *e))
            }),
            None => None,
        };
        found.map(|(base, e)| LiveBlock {
            base,
            size: e.size,
            id: e.id,
            starts_chunk: CHUNKS.read().contains_key(&base),
        })
    }
}

/// What a pointer query about `ptr` should report.
pub(crate) enum Lookup {
    /// A live block of ours.
    Ours(LiveBlock),
    /// Inside our pools' memory but not in a live block (freed, or never handed out).
    FreeInPool,
    /// Not our memory: the vendor answers.
    Foreign,
}

/// Looks `ptr` up among our blocks (for `cuMemGetAddressRange`, `cuPointerGetAttribute*`,
/// `cuIpcGetMemHandle`).
pub(crate) fn lookup(ptr: usize) -> Lookup {
    let Some(eng) = ENGINE.get().and_then(|e| e.as_ref()) else {
        return Lookup::Foreign;
    };
    match eng.block(ptr) {
        Some(b) => Lookup::Ours(b),
        None if in_our_chunk(ptr) => Lookup::FreeInPool,
        None => Lookup::Foreign,
    }
}

/// Frees `ptr` (non-null) if we made it; `stream` is `None` for the synchronous free.
pub(crate) fn free(
    family: Family,
    ptr: *mut std::ffi::c_void,
    stream: Option<Stream>,
) -> Route<()> {
    match engine(family, || None, false) {
        Some(eng) => eng.free(ptr, stream),
        None => {
            FORWARDED_FOREIGN_FREE.fetch_add(1, Relaxed);
            Route::Forward
        }
    }
}

/// Bytes free inside our resource of the current device (0 when we have none).
pub(crate) fn pooled_free_bytes(family: Family) -> usize {
    let Some(eng) = engine(family, || None, false) else {
        return 0;
    };
    let Ok(d) = eng.rt.get_device() else { return 0 };
    usize::try_from(d)
        .ok()
        .and_then(|d| eng.devices.get(d))
        .and_then(|s| s.get())
        .map_or(0, |s| (s.free_bytes)() + s.deferred.lock().pending_bytes())
}

/// Records a non-blocking stream the program created, on the current device.
pub(crate) fn stream_created(
    family: Family,
    library: impl FnOnce() -> Option<String>,
    stream: usize,
) {
    if let Some(eng) = engine(family, library, true) {
        if let Ok(device) = eng.rt.get_device() {
            deferred::stream_created(stream, device);
        }
    }
}

/// Tracks a stream the program created (any flags): its destruction comes through our
/// `cudaStreamDestroy`/`hipStreamDestroy`, so rmm's pools may record its events lazily
/// (no runtime call per free; see `rmm::mr::stream_created`).
pub(crate) fn stream_tracked(stream: usize) {
    // A forked child forwards everything and must not touch its parent's runtime state.
    if FORKED.load(Relaxed) || rmm::runtime::process_is_exiting() {
        return;
    }
    if let Err(e) = rmm::mr::stream_created(Stream(stream)) {
        eprintln!("rmm_preload: our resources could not forget a stale stream {stream:#x}: {e}");
    }
}

/// Forgets a stream the program destroys (before the real destroy runs): the deferred
/// lists stop recording events on it, and our pools (which keep per-stream free lists for
/// `cudaMallocAsync`/`cudaFreeAsync` streams) order their reuse of its memory after an event
/// recorded on it now, so none of them touches the dead handle later.
pub(crate) fn stream_destroyed(stream: usize) {
    deferred::stream_destroyed(stream);
    // A forked child forwards everything and must not touch its parent's runtime state.
    if FORKED.load(Relaxed) || rmm::runtime::process_is_exiting() {
        return;
    }
    if let Err(e) = rmm::mr::stream_destroyed(Stream(stream)) {
        eprintln!("rmm_preload: our resources could not forget stream {stream:#x}: {e}");
    }
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// At exit: flushes logs and, with `RMM_PRELOAD_STATS`, prints the statistics. Makes no
/// runtime call.
pub(crate) fn at_exit() {
    if FORKED.load(Relaxed) {
        return;
    }
    let cfg = config();
    let eng = ENGINE.get().and_then(|e| e.as_ref());
    if let Some(eng) = eng {
        for st in eng.devices.iter().filter_map(|s| s.get()) {
            if let Some(l) = &st.log {
                let _ = l.flush();
            }
        }
    }
    if !cfg.stats {
        return;
    }
    let mut out = String::from("rmm_preload statistics\n");
    out += &format!(
        "  resource {:?}, sync {}, runtime {}\n",
        cfg.kind,
        match cfg.sync {
            SyncMode::Defer => "1 (deferred reuse)",
            SyncMode::Device => "device",
            SyncMode::Off => "0",
        },
        eng.map_or("none".to_string(), |e| format!(
            "{} ({})",
            e.family.prefix(),
            e.rt.description()
        ))
    );
    let mut any = false;
    if let Some(eng) = eng {
        for (d, st) in eng
            .devices
            .iter()
            .enumerate()
            .filter_map(|(d, s)| s.get().map(|s| (d, s)))
        {
            let s = &st.stats;
            let allocs = s.allocations.load(Relaxed);
            any |= allocs > 0;
            out += &format!(
                "  device {d}: allocations {allocs}, frees {}, failed {}, bytes total {}, \
                 peak {}, current {}\n  device {d}: time allocate {:.3} ms, free {:.3} ms, \
                 synchronize/wait {:.3} ms; free chunks given back: on out-of-memory {} times, \
                 beyond the release threshold {} times\n",
                s.frees.load(Relaxed),
                s.failed.load(Relaxed),
                s.bytes_total.load(Relaxed),
                s.bytes_peak.load(Relaxed),
                s.bytes_current.load(Relaxed),
                ms(s.alloc_ns.load(Relaxed)),
                ms(s.free_ns.load(Relaxed)),
                ms(s.sync_ns.load(Relaxed)),
                s.released.load(Relaxed),
                s.trims.load(Relaxed),
            );
            let df = st.deferred.lock();
            out += &format!(
                "  device {d}: deferred reuse: seals {}, device synchronizations {}, waits for \
                 batches {}, bytes still pending {}\n",
                df.counts.seals,
                df.counts.device_syncs,
                df.counts.waits,
                df.pending_bytes(),
            );
        }
    }
    out += &format!(
        "  non-blocking streams live at exit {}\n",
        deferred::nonblocking_streams()
    );
    out += &format!(
        "  upstream: {} allocations and {} frees by our resources (the vendor's allocator)\n",
        UPSTREAM_ALLOCATIONS.load(Relaxed),
        UPSTREAM_FREES.load(Relaxed),
    );
    out += &crate::entry_points::report();
    out += &format!(
        "  refused frees (double/interior) {}; forwarded: foreign frees {}, NULL/zero-size {}, \
         other {}; leaked at exit {}\n",
        REFUSED_FREES.load(Relaxed),
        FORWARDED_FOREIGN_FREE.load(Relaxed),
        FORWARDED_NULL_OR_ZERO.load(Relaxed),
        FORWARDED_OTHER.load(Relaxed),
        LEAKED_AT_EXIT.load(Relaxed),
    );
    if !any {
        out += "  warning: no allocation was intercepted: the program may not allocate device \
                memory, or reach the GPU in a way not interposed (see docs/preload.md)\n";
    }
    eprint!("{out}");
}
