//! The measured loops: random (RMM's random_allocations), churn (one thread, or each thread
//! of threads behind a common start line, or over several streams), and the median of
//! repeated runs.

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use rmm::counters::{self, Counters};
use rmm::mr::DeviceMemoryResource;
use rmm::runtime::runtime;
use rmm::{Result, Stream};

use crate::MIB;

/// A small, fast, seedable generator (xorshift64*), so runs are repeatable.
pub struct Rng(pub u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo + 1) as u64) as usize
    }
    /// Log-uniform in `[lo, hi]`.
    pub fn log_uniform(&mut self, lo: usize, hi: usize) -> usize {
        let u = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        let (a, b) = ((lo as f64).ln(), (hi as f64).ln());
        ((a + u * (b - a)).exp() as usize).clamp(lo, hi)
    }
}

/// One measurement: time, operations, peak upstream memory, peak live bytes, and the
/// counters over `counted_ops` operations.
#[derive(Clone, Copy, Default)]
pub struct Sample {
    pub seconds: f64,
    pub ops: usize,
    pub peak_upstream: usize,
    pub peak_live: usize,
    pub failures: usize,
    pub counters: Counters,
    pub counted_ops: usize,
}

/// Random (W1): RMM's random_allocations loop.
pub fn w1(mr: &dyn DeviceMemoryResource, n: usize, max_mib: usize) -> Result<Sample> {
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

/// Churn (W2): `steps` free-one/allocate-one pairs over a working set of 1000 blocks.
/// `rotate_free` frees each block on the stream after the one it was allocated on.
pub fn churn(
    mr: &dyn DeviceMemoryResource,
    steps: usize,
    seed: u64,
    streams: &[Stream],
    rotate_free: bool,
) -> Result<Sample> {
    churn_gated(mr, steps, seed, streams, rotate_free, None).map(|(s, _)| s)
}

/// The threads workload's start line: each thread counts itself ready and waits for the go;
/// the main thread reads the clock when all are ready, then gives the go (as bench-vs-rmm's
/// perf_anchor). Each thread reads the clock itself when its steps are done, so a main
/// thread that is descheduled cannot shorten a run (a barrier's release is not when its
/// waiters resume).
pub struct Gate {
    ready: AtomicUsize,
    go: AtomicBool,
}

impl Gate {
    pub fn new() -> Self {
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
    pub fn start(&self, threads: usize) -> Instant {
        while self.ready.load(Ordering::Acquire) < threads {
            std::thread::yield_now();
        }
        let t0 = Instant::now();
        self.go.store(true, Ordering::Release);
        t0
    }
}

/// [`churn`] for one thread of the threads workload: its working set and plan are made
/// before `gate`'s go, so that the threads workload times the threads' steps and not their
/// set-up (1000 allocations and the plan's draws). Also returns when its steps ended.
/// Arrives at the gate whatever happens, so the main thread never waits forever.
pub fn churn_gated(
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
    // not the generator (a log-uniform draw is not cheap next to a pool operation).
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
/// by time. Three runs of a short case (random, N = 10 000) gave medians far apart from
/// one call to the next on a shared machine.
pub fn median(mut f: impl FnMut() -> Result<Sample>) -> Result<Sample> {
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
