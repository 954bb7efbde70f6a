//! Allocator benchmark: the workloads of BENCH.md (W1 random, W2 churn, W3 threads,
//! W4 streams, W6 fragmentation) over any set of resources, with the runtime's plain malloc,
//! its managed malloc and its async pool as baselines. Prints a table and, with
//! `--json FILE`, writes the same as JSON.
//!
//! Resources: `cuda` (the runtime's malloc), `managed` (the runtime's managed malloc, a
//! baseline like `cuda`), `async` (the runtime's stream-ordered pool),
//! `pool` (the chunked pool), `vmm_pool` (the pool on virtual memory: one reservation,
//! granules mapped in place), `binning` (bins over a pool), `arena`. For the vmm pool the
//! "peak upstream" column is its peak mapped memory (its pool size: it has no release
//! threshold here and nothing releases it before the peak is read, so its size only grows
//! and the size at the end is the peak).
//!
//! Each cell also reports what happened per operation, from [`rmm::counters`] taken around
//! the measured loop (W3: around all threads, setup and teardown included, while its clock
//! runs from all threads ready to the last one done with its steps): runtime calls,
//! events recorded and waited by the stream-ordered resources, cross-stream steals,
//! upstream calls of sub-allocators, contended resource locks. The JSON has the raw counts
//! too (`counters`, over `counted_operations`).
//!
//! W6 "fragmentation" (`w6`): each resource on a device of [`W6_DEVICE`] bytes (see [`w6`]):
//! rounds of allocations that each make the pool grow, all but every fourth block of each
//! round freed, then one request larger than any chunk the chunked pool took but smaller
//! than the free bytes; reported: whether that request succeeds, the peak upstream (mapped)
//! bytes over the peak live bytes, and what the pools still hold after `release()` against
//! the survivors' bytes.
//!
//! `rmm-bench [--resources cuda,async,...] [--workloads w1,w2,w3,w4,w6] [--json FILE] [--quick]
//! [--w1-cases N:MAX_MIB,...] [--w3-steps N] [--w4-streams N] [--history-entries N]
//! [--vmm-release-threshold BYTES]`
//! (`--w1-cases` runs only those W1 cases, e.g. `1000:4096`; `--w3-steps` sets the
//! sub-allocators' steps per W3 thread, 200 000 by default, e.g. 50 000 as in bench-vs-rmm;
//! `--w4-streams` runs W4 on that many streams, 4 by default, 1 to see placement without
//! stream order; `--history-entries` sets the ring of the `hist` rows, 100 000 by default;
//! `--vmm-release-threshold` gives `vmm_pool` that release threshold, none by default: its
//! peak is then the most it mapped at once)
//!
//! W4's note also gives the trace's best-fit floor ([`best_fit_floor`]): what exact best
//! fit, with every free at once usable by every stream, takes in 2 MiB granules over the
//! peak live bytes: no allocator that never moves a block placed it much better.

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use rmm::counters::{self, Counters};
use rmm::mr::{
    ArenaMemoryResource, BinningMemoryResource, CudaMemoryResource, DeviceMemoryResource,
    LimitingResourceAdaptor, ManagedMemoryResource, PoolMemoryResource, SharedResource,
    StatisticsResourceAdaptor, VmmPoolMemoryResource, VmmPoolOptions,
};
use rmm::runtime::{
    runtime, MemHandleType, MemPool, MemPoolAttr, MemPoolLocation, MemPoolProps, Runtime,
    RuntimeErrorKind, StreamFlags,
};
use rmm::{Error, Result, Stream};

const MIB: usize = 1 << 20;

/// The runtime's own stream-ordered pool (cudaMallocAsync on the device's default mempool,
/// release threshold at its maximum; W6: a mempool of its own with a maximum size): a
/// baseline, not a resource of the library.
struct RuntimeAsync {
    rt: &'static dyn Runtime,
    /// `None`: the device's default mempool.
    pool: Option<MemPool>,
}

impl std::fmt::Debug for RuntimeAsync {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("runtime async pool")
    }
}

impl DeviceMemoryResource for RuntimeAsync {
    fn allocate(&self, bytes: usize, stream: Stream) -> Result<*mut c_void> {
        let r = match self.pool {
            None => self.rt.malloc_async(bytes, stream),
            Some(pool) => self.rt.malloc_from_pool_async(bytes, pool, stream),
        };
        r.map_err(|e| match e.kind {
            RuntimeErrorKind::OutOfMemory => Error::OutOfMemory {
                requested: bytes,
                resource: "runtime async pool",
                device: 0,
                detail: e.to_string(),
            },
            _ => Error::runtime(0, e),
        })
    }
    fn deallocate(&self, ptr: *mut c_void, _bytes: usize, stream: Stream) -> Result<()> {
        self.rt
            .free_async(ptr, stream)
            .map_err(|e| Error::runtime(0, e))
    }
    fn name(&self) -> &'static str {
        "runtime async pool"
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// How a workload wants its pools sized.
#[derive(Clone, Copy, PartialEq)]
enum Sizing {
    /// Pools start at half of free memory (W1–W3, like RMM's benchmark).
    HalfFree,
    /// Pools start at the smallest size they accept and grow (W4).
    Grow,
    /// An arena of this many bytes (an arena cannot grow: W4 looks for the smallest that
    /// runs it, see [`arena_w4`]).
    Arena(usize),
    /// W6: a device of this many bytes. The runtime's malloc, the pool and the arena take
    /// their memory through a limiting adaptor of this size (the pool has no maximum, so it
    /// grows as on a device that fills up); the vmm pool maps at most this much (its
    /// maximum pool size, so it grows by half the room left, RMM's rule with a maximum);
    /// the async pool is a mempool of this maximum size; the arena takes all of it.
    Device(usize),
}

/// A resource under test and how to read its peak upstream memory.
struct Subject {
    mr: SharedResource,
    peak: Box<dyn Fn() -> usize>,
    /// Gives back what the resource can while blocks are live and returns the bytes it
    /// still holds from the device (W6); `None` where it cannot give anything back.
    release: Option<Box<dyn Fn() -> Result<usize>>>,
    /// Runs when the subject is done (the async baseline gives its cached memory back, so
    /// the next resource sees the device's free memory).
    cleanup: Option<Box<dyn FnOnce()>>,
}

impl Drop for Subject {
    fn drop(&mut self) {
        if let Some(f) = self.cleanup.take() {
            f();
        }
    }
}

fn make(name: &str, sizing: Sizing) -> Result<Subject> {
    let rt = runtime()?;
    // The managed baseline takes managed memory; everything else sits on the plain malloc.
    let base = || -> Result<SharedResource> {
        Ok(if name == "managed" {
            Arc::new(ManagedMemoryResource::new()?)
        } else {
            Arc::new(CudaMemoryResource::new()?)
        })
    };
    let device: SharedResource = match sizing {
        Sizing::Device(bytes) => Arc::new(LimitingResourceAdaptor::new(base()?, bytes, 256)?),
        _ => base()?,
    };
    // The statistics adaptor counts bytes taken from the upstream; its peak is the
    // resource's peak upstream memory.
    let upstream = Arc::new(StatisticsResourceAdaptor::new(device));
    let counted = {
        let u = upstream.clone();
        move || u.bytes_counter().peak.max(0) as usize
    };
    let up: SharedResource = upstream.clone();
    let half = || rmm::device::percent_of_free_device_memory(50);
    let initial = || -> Result<usize> {
        Ok(match sizing {
            Sizing::HalfFree => half()?,
            Sizing::Grow | Sizing::Arena(_) | Sizing::Device(_) => 0,
        })
    };
    let mut release: Option<Box<dyn Fn() -> Result<usize>>> = None;
    let mr: SharedResource = match name {
        "cuda" | "managed" => upstream.clone(),
        "pool" => {
            let pool = Arc::new(PoolMemoryResource::new(up, initial()?, None)?);
            let p = pool.clone();
            release = Some(Box::new(move || {
                p.release()?;
                Ok(p.pool_size())
            }));
            pool
        }
        "vmm_pool" => {
            // Sized as the pool: half of free memory at once (W1–W3), or from nothing (W4,
            // W6); on W6's device it maps at most the device's bytes.
            let vmm = Arc::new(VmmPoolMemoryResource::new(VmmPoolOptions {
                initial_pool_size: initial()?,
                maximum_pool_size: match sizing {
                    Sizing::Device(bytes) => Some(bytes),
                    _ => None,
                },
                release_threshold: Some(VMM_RELEASE_THRESHOLD.load(Ordering::Relaxed))
                    .filter(|&t| t != usize::MAX),
                ..VmmPoolOptions::default()
            })?);
            // Its peak mapped memory (the pool's size falls with a release threshold, and at
            // release(), which W6 calls after reading the peak).
            let (v, r) = (vmm.clone(), vmm.clone());
            return Ok(Subject {
                mr: vmm,
                peak: Box::new(move || v.peak_pool_size()),
                release: Some(Box::new(move || {
                    r.release()?;
                    Ok(r.pool_size())
                })),
                cleanup: None,
            });
        }
        "binning" => {
            let pool: SharedResource = Arc::new(PoolMemoryResource::new(up, initial()?, None)?);
            Arc::new(BinningMemoryResource::with_range(pool, 18, 22)?)
        }
        "arena" => {
            let size = match sizing {
                Sizing::HalfFree => {
                    let free = rmm::device::available_device_memory()?.free;
                    (free.saturating_sub(64 * MIB)) & !255
                }
                Sizing::Grow => 256 * MIB,
                Sizing::Arena(size) | Sizing::Device(size) => size,
            };
            Arc::new(ArenaMemoryResource::new(up, Some(size), false)?)
        }
        "async" => {
            let dev = rt.get_device().map_err(|e| Error::runtime(-1, e))?;
            let own = match sizing {
                Sizing::Device(bytes) => Some(
                    rt.mem_pool_create(&MemPoolProps {
                        device: dev,
                        location: MemPoolLocation::Device,
                        handle_type: MemHandleType::None,
                        max_size: bytes,
                    })
                    .map_err(|e| Error::runtime(dev, e))?,
                ),
                _ => None,
            };
            let pool = match own {
                Some(p) => p,
                None => rt
                    .device_get_default_mem_pool(dev)
                    .map_err(|e| Error::runtime(dev, e))?,
            };
            rt.mem_pool_set_attribute(pool, MemPoolAttr::ReleaseThreshold, u64::MAX)
                .map_err(|e| Error::runtime(dev, e))?;
            rt.mem_pool_trim_to(pool, 0)
                .map_err(|e| Error::runtime(dev, e))?;
            rt.mem_pool_set_attribute(pool, MemPoolAttr::ReservedMemHigh, 0)
                .map_err(|e| Error::runtime(dev, e))?;
            let peak = move || {
                rt.mem_pool_get_attribute(pool, MemPoolAttr::ReservedMemHigh)
                    .unwrap_or(0) as usize
            };
            // What the mempool reserves once its cached memory is trimmed.
            let release = move || -> Result<usize> {
                rt.device_synchronize()
                    .map_err(|e| Error::runtime(dev, e))?;
                rt.mem_pool_trim_to(pool, 0)
                    .map_err(|e| Error::runtime(dev, e))?;
                rt.mem_pool_get_attribute(pool, MemPoolAttr::ReservedMemCurrent)
                    .map(|v| v as usize)
                    .map_err(|e| Error::runtime(dev, e))
            };
            let cleanup = move || {
                let _ = rt.device_synchronize();
                let _ = rt.mem_pool_trim_to(pool, 0);
                if let Some(p) = own {
                    let _ = rt.mem_pool_destroy(p);
                }
            };
            return Ok(Subject {
                mr: Arc::new(RuntimeAsync { rt, pool: own }),
                peak: Box::new(peak),
                release: Some(Box::new(release)),
                cleanup: Some(Box::new(cleanup)),
            });
        }
        other => {
            return Err(Error::invalid(format!(
                "unknown resource {other:?}; known: {}",
                RESOURCES.join(", ")
            )))
        }
    };
    Ok(Subject {
        mr,
        peak: Box::new(counted),
        release,
        cleanup: None,
    })
}

const RESOURCES: &[&str] = &[
    "cuda", "managed", "async", "pool", "vmm_pool", "binning", "arena",
];

/// Streams made for a workload, destroyed when dropped (after the resources using them).
/// They are announced to the library, as `rmm::cuda_stream` / `rmm_stream_create` streams
/// are (tracked streams, see `rmm::mr::stream_created`), so the workloads measure what C++
/// and C programs using the library's streams get; `--foreign-streams` leaves them
/// unannounced (an event recorded at every free, as for streams made by other libraries).
struct Streams(Vec<Stream>, &'static dyn Runtime, bool);

impl Streams {
    fn new(rt: &'static dyn Runtime, n: usize) -> Result<Self> {
        let v: Vec<Stream> = (0..n)
            .map(|_| rt.stream_create(StreamFlags { non_blocking: true }))
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| Error::runtime(0, e))?;
        let tracked = !FOREIGN_STREAMS.load(std::sync::atomic::Ordering::Relaxed);
        if tracked {
            for s in &v {
                rmm::mr::stream_created(*s)?;
            }
        }
        Ok(Streams(v, rt, tracked))
    }
}

/// Set by `--foreign-streams`.
static FOREIGN_STREAMS: AtomicBool = AtomicBool::new(false);
/// Set by `--history-entries`: the ring of the `hist` rows.
static HISTORY_ENTRIES: AtomicUsize = AtomicUsize::new(rmm::history::DEFAULT_MAX_ENTRIES);
/// Set by `--w4-streams`: W4's streams (4 by default).
static W4_STREAMS: AtomicUsize = AtomicUsize::new(4);
/// Set by `--w3-steps` (0: the default).
static W3_STEPS: AtomicUsize = AtomicUsize::new(0);
/// Set by `--vmm-release-threshold` (`usize::MAX`: none).
static VMM_RELEASE_THRESHOLD: AtomicUsize = AtomicUsize::new(usize::MAX);

impl Drop for Streams {
    fn drop(&mut self) {
        let _ = self.1.device_synchronize();
        for s in &self.0 {
            if self.2 {
                let _ = rmm::mr::stream_destroyed(*s);
            }
            let _ = self.1.stream_destroy(*s);
        }
    }
}

/// A small, fast, seedable generator (xorshift64*), so runs are repeatable.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo + 1) as u64) as usize
    }
    /// Log-uniform in `[lo, hi]`.
    fn log_uniform(&mut self, lo: usize, hi: usize) -> usize {
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        let (a, b) = ((lo as f64).ln(), (hi as f64).ln());
        ((a + u * (b - a)).exp() as usize).clamp(lo, hi)
    }
}

/// One measurement: time, operations, peak upstream memory, peak live bytes, and the
/// counters over `counted_ops` operations.
#[derive(Clone, Copy, Default)]
struct Sample {
    seconds: f64,
    ops: usize,
    peak_upstream: usize,
    peak_live: usize,
    failures: usize,
    counters: Counters,
    counted_ops: usize,
}

/// W1: RMM's random_allocations loop.
fn w1(mr: &dyn DeviceMemoryResource, n: usize, max_mib: usize) -> Result<Sample> {
    let max_usage = 16000 * MIB;
    let mut rng = Rng(0x5eed_0001);
    let mut live: Vec<(*mut c_void, usize)> = Vec::with_capacity(n);
    let (mut made, mut live_bytes, mut ops, mut failures, mut peak) = (0, 0usize, 0, 0, 0);
    let before = counters::snapshot();
    let start = Instant::now();
    for _ in 0..2 * n {
        let size = rng.range(1, max_mib * MIB);
        let op = rng.range(0, 99);
        let allocate = live.is_empty() || op < 73;
        if allocate && made < n && live_bytes + size < max_usage {
            match mr.allocate(size, Stream::DEFAULT) {
                Ok(p) => {
                    live.push((p, size));
                    live_bytes += size;
                    peak = peak.max(live_bytes);
                }
                Err(_) => failures += 1,
            }
            made += 1;
            ops += 1;
        } else if !live.is_empty() {
            let i = rng.range(0, live.len() - 1);
            let (p, s) = live.swap_remove(i);
            mr.deallocate(p, s, Stream::DEFAULT)?;
            live_bytes -= s;
            ops += 1;
        }
    }
    for (p, s) in live.drain(..) {
        mr.deallocate(p, s, Stream::DEFAULT)?;
        ops += 1;
    }
    runtime()?.stream_synchronize(Stream::DEFAULT).ok();
    let seconds = start.elapsed().as_secs_f64();
    Ok(Sample {
        seconds,
        ops,
        peak_live: peak,
        failures,
        counters: counters::snapshot().since(&before),
        counted_ops: ops,
        ..Sample::default()
    })
}

/// W2 body: `steps` free-one/allocate-one pairs over a working set of 1000 blocks.
/// `rotate_free` frees each block on the stream after the one it was allocated on.
fn churn(
    mr: &dyn DeviceMemoryResource,
    steps: usize,
    seed: u64,
    streams: &[Stream],
    rotate_free: bool,
) -> Result<Sample> {
    churn_gated(mr, steps, seed, streams, rotate_free, None).map(|(s, _)| s)
}

/// W3's start line: each thread counts itself ready and waits for the go; the main thread
/// reads the clock when all are ready, then gives the go (as bench-vs-rmm's perf_anchor).
/// Each thread reads the clock itself when its steps are done, so a main thread that is
/// descheduled cannot shorten a run (a barrier's release is not when its waiters resume).
struct Gate {
    ready: AtomicUsize,
    go: AtomicBool,
}

impl Gate {
    fn new() -> Self {
        Gate {
            ready: AtomicUsize::new(0),
            go: AtomicBool::new(false),
        }
    }

    /// A worker: ready, then wait for the go.
    fn arrive(&self) {
        self.ready.fetch_add(1, Ordering::AcqRel);
        while !self.go.load(Ordering::Acquire) {
            std::thread::yield_now();
        }
    }

    /// The main thread: the start time, once `threads` workers are ready, and the go.
    fn start(&self, threads: usize) -> Instant {
        while self.ready.load(Ordering::Acquire) < threads {
            std::thread::yield_now();
        }
        let t0 = Instant::now();
        self.go.store(true, Ordering::Release);
        t0
    }
}

/// [`churn`] for one W3 thread: its working set and plan are made before `gate`'s go, so
/// that W3 times the threads' steps and not their set-up (1000 allocations and the plan's
/// draws, about as long as the steps of one thread). Also returns when its steps ended.
/// Arrives at the gate whatever happens, so the main thread never waits forever.
fn churn_gated(
    mr: &dyn DeviceMemoryResource,
    steps: usize,
    seed: u64,
    streams: &[Stream],
    rotate_free: bool,
    gate: Option<&Gate>,
) -> Result<(Sample, Instant)> {
    let arrive = || {
        if let Some(g) = gate {
            g.arrive();
        }
    };
    let mut rng = Rng(seed);
    let mut live: Vec<(*mut c_void, usize, usize)> = Vec::with_capacity(1000);
    let (mut live_bytes, mut peak, mut k) = (0usize, 0usize, 0usize);
    for _ in 0..1000 {
        let s = rng.log_uniform(256, MIB);
        let si = k % streams.len();
        k += 1;
        match mr.allocate(s, streams[si]) {
            Ok(p) => live.push((p, s, si)),
            Err(e) => {
                for (p, s, si) in live {
                    mr.deallocate(p, s, streams[si]).ok();
                }
                arrive();
                return Err(e);
            }
        }
        live_bytes += s;
    }
    peak = peak.max(live_bytes);
    // The random choices are drawn before the clock starts: the loop times the allocator,
    // not the generator (a log-uniform draw costs about as much as a pool operation).
    let plan: Vec<(u32, u32)> = (0..steps)
        .map(|_| {
            let i = rng.range(0, live.len() - 1) as u32;
            (i, rng.log_uniform(256, MIB) as u32)
        })
        .collect();
    arrive();
    let steps_done = churn_steps(mr, &plan, &mut live, streams, rotate_free, &mut k);
    let end = Instant::now();
    let freed = live
        .iter()
        .try_for_each(|&(p, s, si)| mr.deallocate(p, s, streams[si]));
    let (seconds, counted, peak_steps) = steps_done?;
    freed?;
    peak = peak.max(peak_steps);
    let sample = Sample {
        seconds,
        ops: 2 * steps,
        peak_live: peak,
        counters: counted,
        counted_ops: 2 * steps,
        ..Sample::default()
    };
    Ok((sample, end))
}

/// The timed steps of [`churn_gated`]: seconds, counters and the peak live bytes. On an
/// error, `live` still holds every block that is live.
fn churn_steps(
    mr: &dyn DeviceMemoryResource,
    plan: &[(u32, u32)],
    live: &mut [(*mut c_void, usize, usize)],
    streams: &[Stream],
    rotate_free: bool,
    k: &mut usize,
) -> Result<(f64, Counters, usize)> {
    let mut live_bytes: usize = live.iter().map(|b| b.1).sum();
    let mut peak = live_bytes;
    let before = counters::snapshot();
    let start = Instant::now();
    for &(i, size) in plan {
        let (i, size) = (i as usize, size as usize);
        let (p, s, si) = live[i];
        let free_stream = if rotate_free {
            (si + 1) % streams.len()
        } else {
            si
        };
        mr.deallocate(p, s, streams[free_stream])?;
        live_bytes -= s;
        let ai = *k % streams.len();
        *k += 1;
        // Until the allocation succeeds, slot i holds a freed block: a null pointer there
        // keeps the caller's clean-up from freeing it again.
        live[i] = (std::ptr::null_mut(), 0, ai);
        live[i] = (mr.allocate(size, streams[ai])?, size, ai);
        live_bytes += size;
        peak = peak.max(live_bytes);
    }
    let seconds = start.elapsed().as_secs_f64();
    Ok((seconds, counters::snapshot().since(&before), peak))
}

/// Runs `f` once to warm up, then measured at least three times and, while less than
/// [`MEASURED_S`] has been measured, up to [`MAX_RUNS`] (an odd count); returns the median
/// by time. A W1 case of N = 10 000 takes about 2 ms: on a shared machine three such runs
/// moved its median by tens of percent from one call to the next.
fn median(mut f: impl FnMut() -> Result<Sample>) -> Result<Sample> {
    f()?;
    let mut runs = Vec::with_capacity(MAX_RUNS);
    let mut measured = 0.0;
    while runs.len() < 3 || runs.len() % 2 == 0 || (measured < MEASURED_S && runs.len() < MAX_RUNS)
    {
        let s = f()?;
        measured += s.seconds;
        runs.push(s);
    }
    runs.sort_by(|a, b| a.seconds.total_cmp(&b.seconds));
    Ok(runs[runs.len() / 2])
}

/// Seconds of measured runs that [`median`] aims for.
const MEASURED_S: f64 = 0.1;
/// The most measured runs [`median`] makes (odd).
const MAX_RUNS: usize = 15;

/// W4's [`best_fit_floor`] (seed 11) for `steps`, computed once per run: every resource's
/// W4 row prints it, and it takes a fifth of a second.
fn w4_floor(steps: usize) -> f64 {
    static DONE: std::sync::Mutex<Vec<(usize, f64)>> = std::sync::Mutex::new(Vec::new());
    let mut done = DONE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&(_, f)) = done.iter().find(|(s, _)| *s == steps) {
        return f;
    }
    let f = best_fit_floor(steps, 11);
    done.push((steps, f));
    f
}

/// W4's trace (the sizes and frees [`churn`] makes from `seed`) replayed through a model of
/// exact best fit: free blocks merge with every free neighbour, a request takes the
/// smallest free block that fits (the lowest address among equals), and the range grows at
/// its end in 2 MiB granules, joining a free block there. Stream order is ignored (every
/// free usable at once by every stream), which no real pool may do, so this is a floor for
/// placement, not a competitor. Returns peak extent ÷ peak live bytes.
fn best_fit_floor(steps: usize, seed: u64) -> f64 {
    use std::collections::BTreeSet;
    const GRANULE: usize = 2 * MIB;
    let align = |b: usize| b.div_ceil(256) * 256;
    let mut by_size: BTreeSet<(usize, usize)> = BTreeSet::new();
    let mut by_addr: BTreeMap<usize, usize> = BTreeMap::new();
    let mut top = 0usize;
    let mut alloc =
        |n: usize, by_size: &mut BTreeSet<(usize, usize)>, by_addr: &mut BTreeMap<usize, usize>| {
            let found = by_size.range((n, 0)..).next().copied();
            let (size, addr) = found.unwrap_or_else(|| {
                // Grow, joining the free block that ends at the top.
                let last = by_addr.range(..top).next_back().map(|(&a, &s)| (a, s));
                let (addr, have) = match last {
                    Some((a, s)) if a + s == top => (a, s),
                    _ => (top, 0),
                };
                let grow = (n - have).div_ceil(GRANULE) * GRANULE;
                top += grow;
                if have > 0 {
                    by_size.remove(&(have, addr));
                }
                (have + grow, addr)
            });
            by_size.remove(&(size, addr));
            by_addr.remove(&addr);
            if size > n {
                by_size.insert((size - n, addr + n));
                by_addr.insert(addr + n, size - n);
            }
            (addr, top)
        };
    let free = |addr: usize,
                n: usize,
                by_size: &mut BTreeSet<(usize, usize)>,
                by_addr: &mut BTreeMap<usize, usize>| {
        let (mut a, mut s) = (addr, n);
        if let Some(&next) = by_addr.get(&(addr + n)) {
            by_addr.remove(&(addr + n));
            by_size.remove(&(next, addr + n));
            s += next;
        }
        if let Some((&pa, &ps)) = by_addr.range(..addr).next_back() {
            if pa + ps == addr {
                by_addr.remove(&pa);
                by_size.remove(&(ps, pa));
                a = pa;
                s += ps;
            }
        }
        by_addr.insert(a, s);
        by_size.insert((s, a));
    };
    let mut rng = Rng(seed);
    let (mut live, mut live_bytes, mut extent) = (Vec::with_capacity(1000), 0usize, 0usize);
    for _ in 0..1000 {
        let n = rng.log_uniform(256, MIB);
        let (a, t) = alloc(align(n), &mut by_size, &mut by_addr);
        live.push((a, n));
        live_bytes += n;
        extent = extent.max(t);
    }
    let mut peak = live_bytes;
    let plan: Vec<(usize, usize)> = (0..steps)
        .map(|_| (rng.range(0, live.len() - 1), rng.log_uniform(256, MIB)))
        .collect();
    for (i, n) in plan {
        let (a, old) = live[i];
        free(a, align(old), &mut by_size, &mut by_addr);
        live_bytes -= old;
        let (a, t) = alloc(align(n), &mut by_size, &mut by_addr);
        live[i] = (a, n);
        live_bytes += n;
        peak = peak.max(live_bytes);
        extent = extent.max(t);
    }
    extent as f64 / peak as f64
}

/// W4 for the arena, which takes a fixed size and never grows: its peak upstream memory is
/// the smallest arena (to 2 MiB) that runs the trace, found by bisection between the
/// trace's peak live bytes and a size that runs it; the timed runs use that size.
fn arena_w4(steps: usize, streams: &[Stream]) -> Result<Sample> {
    // The peak live bytes when an arena of `size` runs the trace; `None` when it runs out.
    let run = |size: usize| -> Result<Option<usize>> {
        let subject = make("arena", Sizing::Arena(size))?;
        let r = churn(subject.mr.as_ref(), steps, 11, streams, true);
        runtime()?.device_synchronize().ok();
        match r {
            Ok(s) => Ok(Some(s.peak_live)),
            Err(Error::OutOfMemory { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    };
    let mut hi = 256 * MIB;
    let live = loop {
        if let Some(live) = run(hi)? {
            break live;
        }
        if hi >= 64 << 30 {
            return Err(Error::invalid(
                "W4 does not fit in a 64 GiB arena".to_string(),
            ));
        }
        hi *= 2;
    };
    // No arena smaller than the peak live bytes can run it.
    let mut lo = live & !(MIB - 1);
    while hi - lo > 2 * MIB {
        let mid = (lo + (hi - lo) / 2) & !(MIB - 1);
        if run(mid)?.is_some() {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    // A size that ran once may need a little more with other event timings.
    loop {
        let subject = make("arena", Sizing::Arena(hi))?;
        match median(|| churn(subject.mr.as_ref(), steps, 11, streams, true)) {
            Ok(mut s) => {
                runtime()?.device_synchronize().ok();
                s.peak_upstream = (subject.peak)();
                return Ok(s);
            }
            Err(Error::OutOfMemory { .. }) => hi += 2 * MIB,
            Err(e) => return Err(e),
        }
    }
}

/// W6's device: every resource gets this many bytes (see [`Sizing::Device`]). Below 128 MiB
/// the chunked pool grows by chunks of 4 MiB or the request when full (its rule without a
/// maximum), so the rounds below take it past twenty chunks.
const W6_DEVICE: usize = 128 * MIB;
/// W6's rounds: (block size, blocks). Each round asks for more than the chunked pool has
/// free, so it grows in each (to 22 chunks, the largest 8 MiB, by its growth rule today).
const W6_ROUNDS: &[(usize, usize)] = &[(2 * MIB, 12), (4 * MIB, 12), (8 * MIB, 6)];
/// W6 keeps every this-many-th block of each round (the first, the fifth, ...).
const W6_KEEP_EVERY: usize = 4;
/// W6's large request: larger than any chunk the chunked pool took (8 MiB), smaller than
/// the bytes it has free, and more than its device has left once the rounds are done.
const W6_LARGE: usize = 24 * MIB;

/// What W6 found on one resource.
struct Frag {
    sample: Sample,
    /// The large request's error, `None` when it succeeded.
    large_error: Option<String>,
    /// (bytes free, largest free block) of the pool before the large request, where the
    /// resource is a pool.
    free_before: Option<(usize, usize)>,
    survivor_bytes: usize,
    /// Bytes the resource holds from the device after giving back what it could.
    held_after_release: Option<usize>,
}

/// W6 "fragmentation" on `subject` (made with [`Sizing::Device`]): the rounds of
/// [`W6_ROUNDS`] (each freeing all but every [`W6_KEEP_EVERY`]th of its blocks before the
/// next starts), then [`W6_LARGE`] bytes at once, then (the large block freed) the
/// resource's release, then the survivors freed. One run: what counts is the outcome.
fn w6(subject: &Subject) -> Result<Frag> {
    let mr = subject.mr.as_ref();
    let st = Stream::DEFAULT;
    let (mut live_bytes, mut peak, mut ops, mut failures) = (0usize, 0usize, 0usize, 0usize);
    let mut survivors: Vec<(*mut c_void, usize)> = Vec::new();
    let before = counters::snapshot();
    let start = Instant::now();
    for &(size, count) in W6_ROUNDS {
        let mut round = Vec::with_capacity(count);
        for _ in 0..count {
            ops += 1;
            match mr.allocate(size, st) {
                Ok(p) => {
                    round.push(Some(p));
                    live_bytes += size;
                    peak = peak.max(live_bytes);
                }
                Err(Error::OutOfMemory { .. }) => {
                    failures += 1;
                    round.push(None);
                }
                Err(e) => return Err(e),
            }
        }
        for (j, p) in round.into_iter().enumerate() {
            let Some(p) = p else { continue };
            if j % W6_KEEP_EVERY == 0 {
                survivors.push((p, size));
            } else {
                mr.deallocate(p, size, st)?;
                live_bytes -= size;
                ops += 1;
            }
        }
    }
    let any = mr.as_any();
    let free_before = if let Some(p) = any.downcast_ref::<PoolMemoryResource>() {
        Some(p.free_summary())
    } else {
        any.downcast_ref::<VmmPoolMemoryResource>()
            .map(|v| v.free_summary())
    }
    .map(|f| (f.bytes_free, f.largest_free_block));
    // The frees' work done first: a stream-ordered pool may count memory whose free is
    // still queued as in use, and the outcome must not depend on how far the stream got.
    runtime()?.stream_synchronize(st).ok();
    ops += 1;
    let large_error = match mr.allocate(W6_LARGE, st) {
        Ok(p) => {
            peak = peak.max(live_bytes + W6_LARGE);
            mr.deallocate(p, W6_LARGE, st)?;
            ops += 1;
            None
        }
        Err(e @ Error::OutOfMemory { .. }) => Some(e.to_string()),
        Err(e) => return Err(e),
    };
    runtime()?.stream_synchronize(st).ok();
    let seconds = start.elapsed().as_secs_f64();
    let counted = counters::snapshot().since(&before);
    let peak_upstream = (subject.peak)();
    let survivor_bytes = live_bytes;
    let held_after_release = subject.release.as_ref().map(|f| f()).transpose()?;
    for (p, size) in survivors {
        mr.deallocate(p, size, st)?;
    }
    Ok(Frag {
        sample: Sample {
            seconds,
            ops,
            peak_upstream,
            peak_live: peak,
            failures,
            counters: counted,
            counted_ops: ops,
        },
        large_error,
        free_before,
        survivor_bytes,
        held_after_release,
    })
}

/// W6's row for resource `name`.
fn w6_row(name: &str) -> Result<Row> {
    let f = {
        let subject = make(name, Sizing::Device(W6_DEVICE))?;
        let f = w6(&subject)?;
        runtime()?.device_synchronize().ok();
        f
    };
    let mib = |b: usize| b as f64 / MIB as f64;
    let mut note = format!(
        "{} MiB request: {}",
        W6_LARGE / MIB,
        if f.large_error.is_none() {
            "served"
        } else {
            "not served"
        }
    );
    if let Some((free, largest)) = f.free_before {
        let _ = write!(
            note,
            " (pool free {:.0} MiB, largest free block {:.0} MiB)",
            mib(free),
            mib(largest)
        );
    }
    let _ = write!(
        note,
        "; peak {} / peak live = {:.2}",
        if name == "vmm_pool" {
            "mapped"
        } else {
            "upstream"
        },
        f.sample.peak_upstream as f64 / f.sample.peak_live.max(1) as f64
    );
    if let Some(held) = f.held_after_release {
        let _ = write!(
            note,
            "; after release {:.0} MiB held for {:.0} MiB of survivors ({:.2}x)",
            mib(held),
            mib(f.survivor_bytes),
            held as f64 / f.survivor_bytes.max(1) as f64
        );
    }
    let opt = |v: Option<usize>| v.map_or("null".to_string(), |b| b.to_string());
    let extra = vec![
        ("device_bytes", W6_DEVICE.to_string()),
        ("large_request_bytes", W6_LARGE.to_string()),
        ("large_request_ok", f.large_error.is_none().to_string()),
        (
            "large_request_error",
            f.large_error
                .as_ref()
                .map_or("null".to_string(), |e| format!("{e:?}")),
        ),
        (
            "pool_bytes_free_before_large",
            opt(f.free_before.map(|x| x.0)),
        ),
        (
            "largest_free_block_before_large",
            opt(f.free_before.map(|x| x.1)),
        ),
        ("survivor_bytes", f.survivor_bytes.to_string()),
        ("held_after_release_bytes", opt(f.held_after_release)),
    ];
    Ok(Row {
        resource: name.into(),
        workload: format!("W6 frag {} MiB device", W6_DEVICE / MIB),
        sample: f.sample,
        note,
        extra,
    })
}

struct Row {
    resource: String,
    workload: String,
    sample: Sample,
    note: String,
    /// More JSON fields (name, JSON value), as W6's outcome.
    extra: Vec<(&'static str, String)>,
}

/// The W1 cases of BENCH.md: (N, max size in MiB).
const W1_CASES: &[(usize, usize)] = &[(10_000, 1), (100_000, 1), (1_000, 64), (1_000, 4096)];

fn run_workload(
    name: &str,
    w: &str,
    quick: bool,
    w1_cases: &[(usize, usize)],
    rows: &mut Vec<Row>,
) -> Result<()> {
    let rt = runtime()?;
    // Plain malloc costs microseconds per call: shorter loops keep runs bounded; the
    // per-operation figures stay comparable.
    let slow = name == "cuda" || name == "managed";
    let scale = |n: usize| if quick { (n / 10).max(1000) } else { n };
    match w {
        "w1" => {
            for &(n, max) in w1_cases {
                let n = if slow { n.min(10_000) } else { n };
                let n = if quick { n.min(10_000) } else { n };
                let subject = make(name, Sizing::HalfFree)?;
                let mut s = median(|| w1(subject.mr.as_ref(), n, max))?;
                s.peak_upstream = (subject.peak)();
                rows.push(Row {
                    resource: name.into(),
                    workload: format!("W1 random N={n} max={max}MiB"),
                    sample: s,
                    note: String::new(),
                    extra: Vec::new(),
                });
            }
        }
        "w2" => {
            let steps = scale(if slow { 100_000 } else { 1_000_000 });
            let subject = make(name, Sizing::HalfFree)?;
            let mut s = median(|| churn(subject.mr.as_ref(), steps, 7, &[Stream::DEFAULT], false))?;
            s.peak_upstream = (subject.peak)();
            rows.push(Row {
                resource: name.into(),
                workload: format!("W2 churn {steps} steps"),
                sample: s,
                note: String::new(),
                extra: Vec::new(),
            });
        }
        "w3" => {
            // Baselines serialize inside the runtime: fewer steps keep 16 threads bounded.
            let steps = scale(match name {
                "cuda" | "managed" => 5_000,
                "async" => 20_000,
                _ => match W3_STEPS.load(Ordering::Relaxed) {
                    0 => 200_000,
                    n => n,
                },
            });
            // Streams outlive the resource: pools keep per-stream state, and a stream must not
            // be destroyed while a resource still knows it (the documented rule).
            let all_streams = Streams::new(rt, 16)?;
            let subject = make(name, Sizing::HalfFree)?;
            let mut base = 0.0;
            for t in [1usize, 2, 4, 8, 16] {
                let streams = &all_streams.0[..t];
                let mr = subject.mr.clone();
                let s = median(|| {
                    // Counted around all threads (each thread's 1000 setup allocations and
                    // teardown frees included): the counters are process-wide.
                    let before = counters::snapshot();
                    let gate = Gate::new();
                    let seconds = std::thread::scope(|sc| -> Result<f64> {
                        let hs: Vec<_> = streams
                            .iter()
                            .enumerate()
                            .map(|(i, st)| {
                                let mr = mr.clone();
                                let (st, gate) = (*st, &gate);
                                sc.spawn(move || {
                                    let seed = 100 + i as u64;
                                    churn_gated(mr.as_ref(), steps, seed, &[st], false, Some(gate))
                                })
                            })
                            .collect();
                        // From all threads ready to the last one done with its steps.
                        let t0 = gate.start(t);
                        let mut last = t0;
                        for h in hs {
                            last = last.max(h.join().expect("benchmark thread")?.1);
                        }
                        Ok(last.duration_since(t0).as_secs_f64())
                    })?;
                    Ok(Sample {
                        seconds,
                        ops: 2 * steps * t,
                        counters: counters::snapshot().since(&before),
                        counted_ops: (2 * steps + 2 * 1000) * t,
                        ..Sample::default()
                    })
                })?;
                let rate = (s.ops / 2) as f64 / s.seconds;
                if t == 1 {
                    base = rate;
                }
                rows.push(Row {
                    resource: name.into(),
                    workload: format!("W3 threads T={t}"),
                    sample: Sample {
                        peak_upstream: (subject.peak)(),
                        ..s
                    },
                    note: format!("{:.2} Mpairs/s, scaling {:.2}x", rate / 1e6, rate / base),
                    extra: Vec::new(),
                });
            }
        }
        "w4" => {
            let steps = scale(if slow { 20_000 } else { 200_000 });
            let n_streams = W4_STREAMS.load(Ordering::Relaxed);
            let streams = Streams::new(rt, n_streams)?;
            let (s, how) = if name == "arena" {
                (
                    arena_w4(steps, &streams.0)?,
                    ", smallest arena that runs it (to 2 MiB)",
                )
            } else {
                let subject = make(name, Sizing::Grow)?;
                let mut s = median(|| churn(subject.mr.as_ref(), steps, 11, &streams.0, true))?;
                rt.device_synchronize().ok();
                s.peak_upstream = (subject.peak)();
                (s, "")
            };
            rows.push(Row {
                resource: name.into(),
                workload: if n_streams == 4 {
                    format!("W4 streams {steps} steps")
                } else {
                    format!("W4 {n_streams} streams {steps} steps")
                },
                note: format!(
                    "peak {} / peak live = {:.2}{how}; best-fit floor {:.2}",
                    if name == "vmm_pool" {
                        "mapped"
                    } else {
                        "upstream"
                    },
                    s.peak_upstream as f64 / s.peak_live.max(1) as f64,
                    w4_floor(steps)
                ),
                sample: s,
                extra: Vec::new(),
            });
        }
        "w6" => rows.push(w6_row(name)?),
        "hist" => history_rows(name, quick, rows)?,
        other => {
            return Err(Error::invalid(format!(
                "unknown workload {other:?}; known: w1, w2, w3, w4, w6, hist"
            )))
        }
    }
    Ok(())
}

/// A C ABI handle as a resource: W2 through `rmm_allocate_async`, the path the memory
/// history records (C, C++ and Python all take it).
#[derive(Debug)]
struct CHandle(rmm::ffi::rmm_resource_t);

// SAFETY: a handle is an index into the library's thread-safe table, usable from any thread.
unsafe impl Send for CHandle {}
// SAFETY: as above.
unsafe impl Sync for CHandle {}

impl CHandle {
    fn check(status: rmm::ffi::rmm_status_t, what: &str) -> Result<()> {
        if status == rmm::ffi::rmm_status_t::RMM_STATUS_SUCCESS {
            Ok(())
        } else {
            // SAFETY: the library's thread-local message, a valid C string.
            let msg = unsafe { std::ffi::CStr::from_ptr(rmm::ffi::rmm_last_error_message()) };
            Err(Error::invalid(format!("{what}: {}", msg.to_string_lossy())))
        }
    }
}

impl Drop for CHandle {
    fn drop(&mut self) {
        rmm::ffi::rmm_resource_release(self.0);
    }
}

impl DeviceMemoryResource for CHandle {
    fn allocate(&self, bytes: usize, stream: Stream) -> Result<*mut c_void> {
        let mut p = std::ptr::null_mut();
        // SAFETY: a live handle and a valid out-pointer.
        let st = unsafe { rmm::ffi::rmm_allocate_async(self.0, bytes, stream.0 as _, &mut p) };
        Self::check(st, "rmm_allocate_async").map(|()| p)
    }

    fn deallocate(&self, ptr: *mut c_void, bytes: usize, stream: Stream) -> Result<()> {
        let st = rmm::ffi::rmm_deallocate_async(self.0, ptr, bytes, stream.0 as _);
        Self::check(st, "rmm_deallocate_async")
    }

    fn name(&self) -> &'static str {
        "c_handle"
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// W2 through the C ABI on `name` (pool or vmm_pool) with the memory history off, on, and
/// on with stacks: what recording costs the hot path.
fn history_rows(name: &str, quick: bool, rows: &mut Vec<Row>) -> Result<()> {
    let mut handle = std::ptr::null_mut();
    match name {
        "pool" => {
            let mut up = std::ptr::null_mut();
            // SAFETY: valid out-pointers.
            unsafe {
                CHandle::check(rmm::ffi::rmm_cuda_create(&mut up), "rmm_cuda_create")?;
                let r = rmm::ffi::rmm_pool_create(up, 256 << 20, 0, &mut handle);
                rmm::ffi::rmm_resource_release(up);
                CHandle::check(r, "rmm_pool_create")?;
            }
        }
        "vmm_pool" => {
            // SAFETY: valid pointers; NULL options are the defaults.
            let r = unsafe { rmm::ffi::rmm_vmm_pool_create(std::ptr::null(), &mut handle) };
            if r == rmm::ffi::rmm_status_t::RMM_STATUS_UNSUPPORTED {
                return Err(Error::Unsupported("no virtual memory management".into()));
            }
            CHandle::check(r, "rmm_vmm_pool_create")?;
        }
        _ => return Ok(()),
    }
    let mr = CHandle(handle);
    let steps = if quick { 100_000 } else { 1_000_000 };
    // Off and on alternate, round after round, and each row is the median of its rounds:
    // run one after the other, the second read up to 1.5x slower or faster than the first
    // on a shared machine whichever it was.
    let rounds = if quick { 3 } else { 7 };
    let sample = |on: bool, stacks: bool, n: usize| -> Result<Sample> {
        if on {
            rmm::history::enable(HISTORY_ENTRIES.load(Ordering::Relaxed), stacks)?;
        }
        let s = churn(&mr, n, 7, &[Stream::DEFAULT], false);
        rmm::history::disable();
        s
    };
    sample(false, false, steps)?;
    let (mut off, mut on) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        off.push(sample(false, false, steps)?);
        on.push(sample(true, false, steps)?);
    }
    // Stacks cost microseconds per event: fewer steps keep the run bounded.
    let stacks = median(|| sample(true, true, steps / 20))?;
    let mid = |mut v: Vec<Sample>| {
        v.sort_by(|a, b| a.seconds.total_cmp(&b.seconds));
        v[v.len() / 2]
    };
    for (label, s) in [("off", mid(off)), ("on", mid(on)), ("on, stacks", stacks)] {
        rows.push(Row {
            resource: name.into(),
            workload: format!("W2 C ABI, history {label}"),
            sample: s,
            note: String::new(),
            extra: Vec::new(),
        });
    }
    Ok(())
}

fn ns_per_op(s: &Sample) -> f64 {
    if s.ops > 0 {
        s.seconds * 1e9 / s.ops as f64
    } else {
        0.0
    }
}

/// The counts per operation that the table and the JSON show, by JSON name.
fn per_op(s: &Sample) -> [(&'static str, f64); 8] {
    let c = &s.counters;
    let n = s.counted_ops.max(1) as f64;
    [
        ("runtime_calls_per_op", c.runtime_calls() as f64 / n),
        ("events_recorded_per_op", c.events_recorded as f64 / n),
        ("events_waited_per_op", c.events_waited as f64 / n),
        ("steals_per_op", c.steals as f64 / n),
        ("upstream_calls_per_op", c.upstream_calls() as f64 / n),
        ("lock_waits_per_op", c.lock_waits as f64 / n),
        ("sync_fallbacks_per_op", c.sync_fallbacks as f64 / n),
        ("front_hits_per_op", c.front_hits as f64 / n),
    ]
}

/// A count per operation in at most 8 characters: exact zero as `0`, small rates in
/// scientific notation so they do not read as zero.
fn rate(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 0.01 {
        format!("{x:.3}")
    } else {
        format!("{x:.1e}")
    }
}

fn print_header() {
    println!(
        "\n{:<12} {:<30} {:>10} {:>10} {:>12} {:>12} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}  note",
        "resource",
        "workload",
        "total ms",
        "ns/op",
        "peak up MiB",
        "peak live MiB",
        "rt/op",
        "rec/op",
        "wait/op",
        "steal/op",
        "up/op",
        "lockw/op",
        "front/op"
    );
}

fn print_row(r: &Row) {
    let mut note = r.note.clone();
    if r.sample.failures > 0 {
        let _ = write!(note, " ({} allocation failures)", r.sample.failures);
    }
    let c = &r.sample.counters;
    if c.sync_fallbacks > 0 {
        let _ = write!(
            note,
            " ({} device synchronizations instead of event waits)",
            c.sync_fallbacks
        );
    }
    let p = per_op(&r.sample);
    println!(
        "{:<12} {:<30} {:>10.1} {:>10.1} {:>12.1} {:>12.1} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}  {}",
        r.resource,
        r.workload,
        r.sample.seconds * 1e3,
        ns_per_op(&r.sample),
        r.sample.peak_upstream as f64 / MIB as f64,
        r.sample.peak_live as f64 / MIB as f64,
        rate(p[0].1),
        rate(p[1].1),
        rate(p[2].1),
        rate(p[3].1),
        rate(p[4].1),
        rate(p[5].1),
        rate(p[7].1),
        note.trim_start()
    );
    use std::io::Write as _;
    let _ = std::io::stdout().flush();
}

/// The command line's synopsis.
fn usage() -> String {
    format!(
        "usage: rmm-bench [--resources {}] [--workloads w1,w2,w3,w4,w6,hist] [--json FILE] [--quick] \
         [--foreign-streams] [--w1-cases N:MAX_MIB,...] [--w3-steps N] [--w4-streams N] [--history-entries N] [--vmm-release-threshold BYTES]",
        RESOURCES.join(",")
    )
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut resources: Vec<String> = RESOURCES.iter().map(|s| s.to_string()).collect();
    let mut workloads: Vec<String> = ["w1", "w2", "w3", "w4", "w6"].map(String::from).to_vec();
    let (mut json, mut quick) = (None, false);
    let mut w1_cases = W1_CASES.to_vec();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--resources" => {
                resources = it
                    .next()
                    .map(|v| v.split(',').map(String::from).collect())
                    .unwrap_or_default()
            }
            "--workloads" => {
                workloads = it
                    .next()
                    .map(|v| v.split(',').map(String::from).collect())
                    .unwrap_or_default()
            }
            "--json" => json = it.next().cloned(),
            "--quick" => quick = true,
            "--foreign-streams" => FOREIGN_STREAMS.store(true, Ordering::Relaxed),
            "--w3-steps" => match it.next().and_then(|v| v.parse::<usize>().ok()) {
                Some(n) if n > 0 => W3_STEPS.store(n, Ordering::Relaxed),
                _ => {
                    eprintln!("rmm-bench: --w3-steps takes a positive number of steps");
                    std::process::exit(2);
                }
            },
            "--w4-streams" => match it.next().and_then(|v| v.parse::<usize>().ok()) {
                Some(n) if (1..=16).contains(&n) => W4_STREAMS.store(n, Ordering::Relaxed),
                _ => {
                    eprintln!("rmm-bench: --w4-streams takes 1 to 16 streams");
                    std::process::exit(2);
                }
            },
            "--vmm-release-threshold" => match it.next().and_then(|v| v.parse::<usize>().ok()) {
                Some(n) if n != usize::MAX => VMM_RELEASE_THRESHOLD.store(n, Ordering::Relaxed),
                _ => {
                    eprintln!("rmm-bench: --vmm-release-threshold takes a number of bytes");
                    std::process::exit(2);
                }
            },
            "--history-entries" => match it.next().and_then(|v| v.parse::<usize>().ok()) {
                Some(n) if n > 0 => HISTORY_ENTRIES.store(n, Ordering::Relaxed),
                _ => {
                    eprintln!("rmm-bench: --history-entries takes a positive number of events");
                    std::process::exit(2);
                }
            },
            "--w1-cases" => {
                let parsed: Option<Vec<(usize, usize)>> = it.next().and_then(|v| {
                    v.split(',')
                        .map(|c| {
                            let (n, m) = c.split_once(':')?;
                            Some((n.parse().ok()?, m.parse().ok()?))
                        })
                        .collect()
                });
                match parsed {
                    Some(c) if !c.is_empty() => w1_cases = c,
                    _ => {
                        eprintln!("rmm-bench: --w1-cases takes N:MAX_MIB[,N:MAX_MIB...]");
                        std::process::exit(2);
                    }
                }
            }
            "-h" | "--help" => {
                // A reader such as `| head` may close the pipe early; that is not an error.
                use std::io::Write;
                let _ = writeln!(
                    std::io::stdout().lock(),
                    "{}\n\nRuns the benchmark workloads (W1 random, W2 churn, W3 threads, W4 \
                     streams, W6 fragmentation) over each resource and the runtime's baselines, on the runtime \
                     RMM_RUNTIME selects; prints a table and, with --json, writes it to FILE.",
                    usage()
                );
                std::process::exit(0);
            }
            other => {
                eprintln!("rmm-bench: unknown argument {other:?}\n{}", usage());
                std::process::exit(2);
            }
        }
    }
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("rmm-bench: {e}");
            std::process::exit(2);
        }
    };
    println!("runtime: {}", rt.description());
    let mut rows = Vec::new();
    print_header();
    for w in &workloads {
        for r in &resources {
            let before = rows.len();
            let outcome = run_workload(r, w, quick, &w1_cases, &mut rows);
            for row in &rows[before..] {
                print_row(row);
            }
            if let Err(e) = outcome {
                // A resource the device cannot have (the vmm pool without virtual memory
                // management) is skipped, not a failed run.
                let note = match e {
                    Error::Unsupported(why) => format!("skipped: {why}"),
                    e => {
                        eprintln!("rmm-bench: {r} {w}: {e}");
                        format!("error: {e}")
                    }
                };
                rows.push(Row {
                    resource: r.clone(),
                    workload: w.clone(),
                    sample: Sample::default(),
                    note,
                    extra: Vec::new(),
                });
                print_row(rows.last().expect("row just pushed"));
            }
        }
    }
    let mut out = String::from("[\n");
    for (i, r) in rows.iter().enumerate() {
        let ns = ns_per_op(&r.sample);
        let mut m = BTreeMap::new();
        m.insert("resource", format!("{:?}", r.resource));
        m.insert("workload", format!("{:?}", r.workload));
        m.insert("seconds", format!("{}", r.sample.seconds));
        m.insert("operations", format!("{}", r.sample.ops));
        m.insert("ns_per_op", format!("{ns}"));
        m.insert("peak_upstream_bytes", format!("{}", r.sample.peak_upstream));
        m.insert("peak_live_bytes", format!("{}", r.sample.peak_live));
        m.insert("failures", format!("{}", r.sample.failures));
        m.insert("note", format!("{:?}", r.note));
        m.insert("counted_operations", format!("{}", r.sample.counted_ops));
        for (k, v) in per_op(&r.sample) {
            m.insert(k, format!("{v}"));
        }
        let counts: Vec<String> = r
            .sample
            .counters
            .fields()
            .iter()
            .map(|(k, v)| format!("\"{k}\": {v}"))
            .collect();
        m.insert("counters", format!("{{{}}}", counts.join(", ")));
        for (k, v) in &r.extra {
            m.insert(k, v.clone());
        }
        let fields: Vec<String> = m.iter().map(|(k, v)| format!("\"{k}\": {v}")).collect();
        let _ = writeln!(
            out,
            "  {{{}}}{}",
            fields.join(", "),
            if i + 1 < rows.len() { "," } else { "" }
        );
    }
    out.push_str("]\n");
    if let Some(path) = json {
        if let Err(e) = std::fs::write(&path, out) {
            eprintln!("rmm-bench: cannot write {path}: {e}");
            std::process::exit(1);
        }
    }
    // A workload that failed must fail the run (the test command's smoke run relies on it).
    if rows.iter().any(|r| r.note.starts_with("error:")) {
        std::process::exit(1);
    }
}
