//! A replay plan run against a resource: the resource made from a spec, the bytes it holds
//! from the device sampled after every replayed event.

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Instant;

use rmm::mr::{
    config, CudaMemoryResource, DeviceMemoryResource, SharedResource, VmmPoolMemoryResource,
    VmmPoolOptions,
};
use rmm::{Error, Result, Stream};

use super::log::{Op, Plan};
use crate::program;
use crate::runtime_async::RuntimeAsync;

/// A slot whose allocation has not been replayed yet.
const PENDING: usize = 0;
/// A slot whose allocation failed or was freed.
const FAILED: usize = usize::MAX;

/// Counts bytes taken from the upstream. Lock-free, unlike the statistics adaptor, because
/// every replayed event samples it and the replay threads must not serialize on a counter.
#[derive(Debug)]
struct Upstream {
    inner: SharedResource,
    current: AtomicUsize,
    peak: AtomicUsize,
}

impl DeviceMemoryResource for Upstream {
    fn allocate(&self, bytes: usize, stream: Stream) -> Result<*mut c_void> {
        let p = self.inner.allocate(bytes, stream)?;
        let now = self.current.fetch_add(bytes, Ordering::Relaxed) + bytes;
        self.peak.fetch_max(now, Ordering::Relaxed);
        Ok(p)
    }
    fn deallocate(&self, ptr: *mut c_void, bytes: usize, stream: Stream) -> Result<()> {
        self.inner.deallocate(ptr, bytes, stream)?;
        self.current.fetch_sub(bytes, Ordering::Relaxed);
        Ok(())
    }
    fn name(&self) -> &'static str {
        "cuda_memory_resource"
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// How a replayed resource's hold on the device is read.
enum Held {
    /// Bytes taken from the counting upstream.
    Upstream(Arc<Upstream>),
    /// The vmm pool's size (bytes mapped), read after every event; its peak is the most
    /// read (the pool has no release threshold here, so its size only grows).
    Mapped(Arc<VmmPoolMemoryResource>, AtomicUsize),
    /// The mempool's reserved bytes.
    Reserved(Arc<RuntimeAsync>),
}

impl Held {
    /// Bytes held now (sampled after each replayed event).
    fn current(&self) -> usize {
        match self {
            Held::Upstream(u) => u.current.load(Ordering::Relaxed),
            Held::Mapped(v, peak) => {
                let now = v.pool_size();
                peak.fetch_max(now, Ordering::Relaxed);
                now
            }
            Held::Reserved(a) => a.reserved(),
        }
    }

    /// The most bytes held at once.
    fn peak(&self) -> usize {
        match self {
            Held::Upstream(u) => u.peak.load(Ordering::Relaxed),
            Held::Mapped(v, peak) => peak.load(Ordering::Relaxed).max(v.pool_size()),
            Held::Reserved(a) => a.peak_reserved(),
        }
    }
}

/// `INITIAL[:MAX]`-style size arguments of a spec: at most `n` of them.
fn sizes(spec: &str, args: &[&str], n: usize) -> Result<Vec<usize>> {
    if args.len() > n {
        return Err(Error::invalid(format!(
            "resource spec '{spec}' takes at most {n} size(s)"
        )));
    }
    args.iter().map(|a| config::parse_size(a)).collect()
}

/// The resource `spec` describes and how to read what it holds.
fn build(spec: &str) -> Result<(SharedResource, Held)> {
    let parts: Vec<&str> = spec.split(':').collect();
    match parts[0] {
        "vmm_pool" => {
            let sz = sizes(spec, &parts[1..], 2)?;
            let v = Arc::new(VmmPoolMemoryResource::new(VmmPoolOptions {
                initial_pool_size: sz.first().copied().unwrap_or(0),
                maximum_pool_size: sz.get(1).copied(),
                ..VmmPoolOptions::default()
            })?);
            let start = v.pool_size();
            Ok((v.clone(), Held::Mapped(v, AtomicUsize::new(start))))
        }
        "async" => {
            let sz = sizes(spec, &parts[1..], 1)?;
            let a = Arc::new(RuntimeAsync::new(sz.first().copied())?);
            Ok((a.clone(), Held::Reserved(a)))
        }
        _ => {
            let up = Arc::new(Upstream {
                inner: Arc::new(CudaMemoryResource::new()?),
                current: AtomicUsize::new(0),
                peak: AtomicUsize::new(0),
            });
            let mr = config::build(spec, up.clone())?;
            Ok((mr, Held::Upstream(up)))
        }
    }
}

/// What one replay of a plan did.
pub struct Outcome {
    pub spec: String,
    pub seconds: f64,
    pub allocations: usize,
    pub frees: usize,
    pub failures: usize,
    pub total_bytes: usize,
    pub peak_live: usize,
    pub peak_upstream: usize,
    /// (event index, live bytes, upstream bytes)
    pub samples: Vec<(usize, usize, usize)>,
}

/// Replays `plan` against the resource `spec` describes (an `rmm::mr::config` spec, or
/// `vmm_pool[:INITIAL[:MAX]]`, `async[:MAX]`), one thread per
/// recorded thread, from a common start; what the log never freed is freed at the end.
pub fn replay(spec: &str, plan: &Plan) -> Result<Outcome> {
    let (mr, held) = build(spec)?;
    let ids = plan.allocations + 1;
    let slots: Vec<AtomicUsize> = (0..ids).map(|_| AtomicUsize::new(PENDING)).collect();
    let live = AtomicUsize::new(0);
    let peak_live = AtomicUsize::new(0);
    let seq = AtomicUsize::new(0);
    let barrier = Barrier::new(plan.threads.len() + 1);
    let (mut allocs, mut frees, mut failures, mut total, mut samples) = (0, 0, 0, 0, Vec::new());
    let mut seconds = 0.0;
    std::thread::scope(|s| {
        let handles: Vec<_> = plan
            .threads
            .iter()
            .map(|(_, ops)| {
                let (mr, held, slots, live, peak_live, seq, barrier) =
                    (&mr, &held, &slots, &live, &peak_live, &seq, &barrier);
                s.spawn(move || {
                    let (mut a, mut f, mut fail, mut tot) = (0usize, 0usize, 0usize, 0usize);
                    let mut samples = Vec::with_capacity(ops.len());
                    barrier.wait();
                    for op in ops {
                        match *op {
                            Op::Alloc { id, size, stream } => {
                                match mr.allocate(size, Stream(stream)) {
                                    Ok(p) => {
                                        slots[id].store(p as usize, Ordering::Release);
                                        let now = live.fetch_add(size, Ordering::Relaxed) + size;
                                        peak_live.fetch_max(now, Ordering::Relaxed);
                                        a += 1;
                                        tot += size;
                                    }
                                    Err(e) => {
                                        eprintln!("{}: {spec}: allocation failed: {e}", program());
                                        slots[id].store(FAILED, Ordering::Release);
                                        fail += 1;
                                    }
                                }
                            }
                            Op::Free { id, size, stream } => {
                                let p = loop {
                                    let p = slots[id].load(Ordering::Acquire);
                                    if p != PENDING {
                                        break p;
                                    }
                                    std::thread::yield_now();
                                };
                                if p != FAILED {
                                    if let Err(e) =
                                        mr.deallocate(p as *mut c_void, size, Stream(stream))
                                    {
                                        eprintln!("{}: {spec}: free failed: {e}", program());
                                        fail += 1;
                                    }
                                    slots[id].store(FAILED, Ordering::Release);
                                    live.fetch_sub(size, Ordering::Relaxed);
                                    f += 1;
                                }
                            }
                        }
                        let i = seq.fetch_add(1, Ordering::Relaxed);
                        samples.push((i, live.load(Ordering::Relaxed), held.current()));
                    }
                    (a, f, fail, tot, samples)
                })
            })
            .collect();
        barrier.wait();
        let start = Instant::now();
        for h in handles {
            let (a, f, fail, tot, smp) = h.join().expect("replay thread panicked");
            allocs += a;
            frees += f;
            failures += fail;
            total += tot;
            samples.extend(smp);
        }
        seconds = start.elapsed().as_secs_f64();
    });
    // Free what the log never freed (slots of freed allocations were reset), so the resource is torn down cleanly.
    for (_, ops) in &plan.threads {
        for op in ops {
            if let Op::Alloc { id, size, stream } = *op {
                let p = slots[id].swap(FAILED, Ordering::AcqRel);
                if p != PENDING && p != FAILED {
                    let _ = mr.deallocate(p as *mut c_void, size, Stream(stream));
                }
            }
        }
    }
    samples.sort_unstable();
    Ok(Outcome {
        spec: spec.to_string(),
        seconds,
        allocations: allocs,
        frees,
        failures,
        total_bytes: total,
        peak_live: peak_live.load(Ordering::Relaxed),
        peak_upstream: held.peak(),
        samples,
    })
}
