//! rmm-replay: replays a CSV event log written by a `logging_resource_adaptor` (ours or
//! RMM's) against resource configurations, one replay thread per recorded thread
//! (BENCH.md W5).
//!
//! ```text
//! rmm-replay LOG [--mr SPEC]... [--json FILE] [--svg FILE] [--skip-bad-lines]
//! ```
//! SPEC is a resource spec of `rmm::mr::config` (cuda, pool[:INITIAL[:MAX]],
//! binning[:MIN:MAX], arena[:SIZE], fixed_size[:BLOCK[:PREALLOC]]), or one of the two this
//! tool adds: `vmm_pool[:INITIAL[:MAX]]` (the pool on virtual memory, as `pool`: growing
//! from INITIAL, default 0, mapping at most MAX) and `async[:MAX]` (the runtime's
//! stream-ordered pool: the device's default mempool, or with MAX a mempool of that maximum
//! size); default `pool`.
//!
//! Each thread keeps its recorded order. A free of a pointer allocated on another thread
//! waits until that allocation was replayed (recorded pointers are mapped to replayed ones).
//! Reported per configuration: wall time, peak live bytes, peak upstream bytes, failures.
//! "Upstream" is what the resource holds from the device: bytes taken from its upstream
//! (the runtime's malloc) for the library's sub-allocators, the bytes mapped for
//! `vmm_pool` (its pool size, read after every event), the bytes reserved by the mempool
//! for `async` (its reserved-memory attributes).
//!
//! The exit status is 3 when any allocation failed (the table and the files are written
//! first), 1 on a bad log or spec, 2 on bad arguments.

use std::collections::{BTreeMap, HashMap};
use std::ffi::c_void;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Instant;

use rmm::mr::{
    config, CudaMemoryResource, DeviceMemoryResource, SharedResource, VmmPoolMemoryResource,
    VmmPoolOptions, LOG_HEADER,
};
use rmm::runtime::{
    runtime, MemHandleType, MemPool, MemPoolAttr, MemPoolLocation, MemPoolProps, Runtime,
    RuntimeErrorKind,
};
use rmm::{Error, Result, Stream};

const PENDING: usize = 0;
const FAILED: usize = usize::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    Allocate,
    AllocateFailure,
    Free,
}

#[derive(Clone, Copy, Debug)]
struct Event {
    line: usize,
    thread: u64,
    action: Action,
    pointer: usize,
    size: usize,
    stream: usize,
}

fn parse_hex(s: &str) -> Option<usize> {
    if s == "(nil)" {
        return Some(0);
    }
    let h = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    usize::from_str_radix(h, 16).ok()
}

fn parse_line(line: &str) -> std::result::Result<(u64, Action, usize, usize, usize), String> {
    let f: Vec<&str> = line.split(',').collect();
    if f.len() != 6 {
        return Err(format!(
            "expected 6 comma-separated fields, found {}",
            f.len()
        ));
    }
    let thread = f[0]
        .trim()
        .parse::<u64>()
        .map_err(|_| format!("Thread '{}' is not a decimal number", f[0]))?;
    let action = match f[2].trim() {
        "allocate" => Action::Allocate,
        "allocate failure" => Action::AllocateFailure,
        "free" => Action::Free,
        a => {
            return Err(format!(
                "Action '{a}' is not allocate, allocate failure or free"
            ))
        }
    };
    let pointer =
        parse_hex(f[3].trim()).ok_or_else(|| format!("Pointer '{}' is not a hex address", f[3]))?;
    let size = f[4]
        .trim()
        .parse::<usize>()
        .map_err(|_| format!("Size '{}' is not a decimal number", f[4]))?;
    let stream =
        parse_hex(f[5].trim()).ok_or_else(|| format!("Stream '{}' is not a hex handle", f[5]))?;
    Ok((thread, action, pointer, size, stream))
}

/// Reads and validates a log; errors name the line.
fn parse_log(text: &str, skip_bad: bool) -> std::result::Result<(Vec<Event>, usize), String> {
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, h)) if h.trim_end_matches('\r').trim() == LOG_HEADER => {}
        Some((_, h)) => {
            return Err(format!(
                "line 1: expected the header '{LOG_HEADER}', found '{h}'"
            ))
        }
        None => return Err("line 1: the log is empty (no header)".into()),
    }
    let mut events = Vec::new();
    let mut skipped = 0;
    for (i, raw) in lines {
        let line = raw.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        match parse_line(line) {
            Ok((thread, action, pointer, size, stream)) => events.push(Event {
                line: i + 1,
                thread,
                action,
                pointer,
                size,
                stream,
            }),
            Err(e) if skip_bad => {
                eprintln!("rmm-replay: warning: line {}: {e} (skipped)", i + 1);
                skipped += 1;
            }
            Err(e) => {
                return Err(format!(
                    "line {}: {e}: '{line}' (use --skip-bad-lines to skip such lines)",
                    i + 1
                ))
            }
        }
    }
    Ok((events, skipped))
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Alloc {
        id: usize,
        size: usize,
        stream: usize,
    },
    Free {
        id: usize,
        size: usize,
        stream: usize,
    },
}

/// The replay plan: per-thread operations; frees refer to allocation ids.
struct Plan {
    threads: Vec<(u64, Vec<Op>)>,
    allocations: usize,
    total_bytes: usize,
    recorded_peak_live: usize,
    recorded_failures: usize,
    unmatched_frees: usize,
}

fn plan(events: &[Event]) -> Plan {
    let mut live: HashMap<usize, (usize, usize)> = HashMap::new();
    let mut per_thread: BTreeMap<u64, Vec<Op>> = BTreeMap::new();
    let mut next_id = 1; // 0 is never an id (PENDING marker convenience)
    let (mut allocations, mut total, mut cur, mut peak, mut fails, mut unmatched) =
        (0, 0, 0usize, 0usize, 0, 0);
    for e in events {
        match e.action {
            Action::Allocate => {
                if e.pointer == 0 {
                    continue; // a zero-byte allocation: nothing to replay
                }
                if live.contains_key(&e.pointer) {
                    eprintln!(
                        "rmm-replay: warning: line {}: {:#x} allocated again while live; \
                         the earlier allocation is treated as leaked",
                        e.line, e.pointer
                    );
                }
                let id = next_id;
                next_id += 1;
                live.insert(e.pointer, (id, e.size));
                allocations += 1;
                total += e.size;
                cur += e.size;
                peak = peak.max(cur);
                per_thread.entry(e.thread).or_default().push(Op::Alloc {
                    id,
                    size: e.size,
                    stream: e.stream,
                });
            }
            Action::AllocateFailure => fails += 1,
            Action::Free => {
                if e.pointer == 0 {
                    continue;
                }
                match live.remove(&e.pointer) {
                    Some((id, size)) => {
                        cur -= size;
                        per_thread.entry(e.thread).or_default().push(Op::Free {
                            id,
                            size: e.size,
                            stream: e.stream,
                        });
                    }
                    None => {
                        eprintln!(
                            "rmm-replay: warning: line {}: free of {:#x}, which the log never \
                             allocated (skipped)",
                            e.line, e.pointer
                        );
                        unmatched += 1;
                    }
                }
            }
        }
    }
    Plan {
        threads: per_thread.into_iter().collect(),
        allocations,
        total_bytes: total,
        recorded_peak_live: peak,
        recorded_failures: fails,
        unmatched_frees: unmatched,
    }
}

/// Counts the bytes the replayed resource holds from the device.
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

/// The runtime's stream-ordered pool as a resource (`async[:MAX]`).
struct RuntimeAsync {
    rt: &'static dyn Runtime,
    pool: MemPool,
    /// Whether the pool was made here (destroyed when done) or is the device's default.
    own: bool,
}

impl std::fmt::Debug for RuntimeAsync {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("runtime async pool")
    }
}

impl RuntimeAsync {
    fn new(max: Option<usize>) -> Result<Self> {
        let rt = runtime()?;
        let dev = rt.get_device().map_err(|e| Error::runtime(-1, e))?;
        let rt_err = |e| Error::runtime(dev, e);
        let (pool, own) = match max {
            Some(max_size) => (
                rt.mem_pool_create(&MemPoolProps {
                    device: dev,
                    location: MemPoolLocation::Device,
                    handle_type: MemHandleType::None,
                    max_size,
                })
                .map_err(rt_err)?,
                true,
            ),
            None => (rt.device_get_default_mem_pool(dev).map_err(rt_err)?, false),
        };
        // Keep what it reserves (as RMM's cuda_async_memory_resource does), starting empty.
        rt.mem_pool_set_attribute(pool, MemPoolAttr::ReleaseThreshold, u64::MAX)
            .map_err(rt_err)?;
        rt.device_synchronize().map_err(rt_err)?;
        rt.mem_pool_trim_to(pool, 0).map_err(rt_err)?;
        rt.mem_pool_set_attribute(pool, MemPoolAttr::ReservedMemHigh, 0)
            .map_err(rt_err)?;
        Ok(RuntimeAsync { rt, pool, own })
    }

    fn attribute(&self, attr: MemPoolAttr) -> usize {
        self.rt.mem_pool_get_attribute(self.pool, attr).unwrap_or(0) as usize
    }
}

impl Drop for RuntimeAsync {
    fn drop(&mut self) {
        let _ = self.rt.device_synchronize();
        let _ = self.rt.mem_pool_trim_to(self.pool, 0);
        if self.own {
            let _ = self.rt.mem_pool_destroy(self.pool);
        }
    }
}

impl DeviceMemoryResource for RuntimeAsync {
    fn allocate(&self, bytes: usize, stream: Stream) -> Result<*mut c_void> {
        self.rt
            .malloc_from_pool_async(bytes, self.pool, stream)
            .map_err(|e| match e.kind {
                RuntimeErrorKind::OutOfMemory => Error::OutOfMemory {
                    requested: bytes,
                    resource: "runtime async pool",
                    device: self.rt.get_device().unwrap_or(-1),
                    detail: e.to_string(),
                },
                _ => Error::runtime(-1, e),
            })
    }
    fn deallocate(&self, ptr: *mut c_void, _bytes: usize, stream: Stream) -> Result<()> {
        self.rt
            .free_async(ptr, stream)
            .map_err(|e| Error::runtime(-1, e))
    }
    fn name(&self) -> &'static str {
        "runtime async pool"
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
            Held::Reserved(a) => a.attribute(MemPoolAttr::ReservedMemCurrent),
        }
    }

    /// The most bytes held at once.
    fn peak(&self) -> usize {
        match self {
            Held::Upstream(u) => u.peak.load(Ordering::Relaxed),
            Held::Mapped(v, peak) => peak.load(Ordering::Relaxed).max(v.pool_size()),
            Held::Reserved(a) => a.attribute(MemPoolAttr::ReservedMemHigh),
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

struct Outcome {
    spec: String,
    seconds: f64,
    allocations: usize,
    frees: usize,
    failures: usize,
    total_bytes: usize,
    peak_live: usize,
    peak_upstream: usize,
    /// (event index, live bytes, upstream bytes)
    samples: Vec<(usize, usize, usize)>,
}

fn replay(spec: &str, plan: &Plan) -> Result<Outcome> {
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
                                        eprintln!("rmm-replay: {spec}: allocation failed: {e}");
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
                                        eprintln!("rmm-replay: {spec}: free failed: {e}");
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

fn json(log: &str, plan: &Plan, skipped: usize, outcomes: &[Outcome]) -> String {
    let mut s = String::new();
    let esc = |t: &str| t.replace('\\', "\\\\").replace('"', "\\\"");
    let _ = write!(
        s,
        "{{\n  \"log\": \"{}\",\n  \"threads\": {},\n  \"recorded\": {{\"allocations\": {}, \
         \"total_bytes\": {}, \"peak_live\": {}, \"allocation_failures\": {}, \
         \"unmatched_frees\": {}, \"skipped_lines\": {}}},\n  \"results\": [",
        esc(log),
        plan.threads.len(),
        plan.allocations,
        plan.total_bytes,
        plan.recorded_peak_live,
        plan.recorded_failures,
        plan.unmatched_frees,
        skipped
    );
    for (i, o) in outcomes.iter().enumerate() {
        let _ = write!(
            s,
            "{}\n    {{\"resource\": \"{}\", \"seconds\": {:.6}, \"allocations\": {}, \
             \"frees\": {}, \"failures\": {}, \"total_bytes\": {}, \"peak_live\": {}, \
             \"peak_upstream\": {}}}",
            if i == 0 { "" } else { "," },
            esc(&o.spec),
            o.seconds,
            o.allocations,
            o.frees,
            o.failures,
            o.total_bytes,
            o.peak_live,
            o.peak_upstream
        );
    }
    s.push_str("\n  ]\n}\n");
    s
}

/// One chart per configuration, stacked: live bytes (blue) and upstream bytes (red) over
/// the event index. The gap between the lines is memory held but not in use.
fn svg(outcomes: &[Outcome]) -> String {
    let (w, h, pad) = (800.0f64, 240.0f64, 50.0f64);
    let total_h = h * outcomes.len().max(1) as f64;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{total_h}\" \
         font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" \
         fill=\"white\"/>\n"
    );
    for (k, o) in outcomes.iter().enumerate() {
        let y0 = k as f64 * h;
        let n = o.samples.len().max(1) as f64;
        let ymax = o
            .samples
            .iter()
            .map(|x| x.1.max(x.2))
            .max()
            .unwrap_or(0)
            .max(1) as f64;
        let pt = |i: usize, v: usize| {
            let x = pad + (w - 2.0 * pad) * i as f64 / n;
            let y = y0 + h - pad + -(h - 2.0 * pad) * v as f64 / ymax;
            format!("{x:.1},{y:.1}")
        };
        let line = |sel: fn(&(usize, usize, usize)) -> usize| {
            // At most ~2000 points per line: enough to see fragmentation, small files.
            o.samples
                .iter()
                .enumerate()
                .step_by(o.samples.len() / 2000 + 1)
                .map(|(i, x)| pt(i, sel(x)))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let _ = write!(
            s,
            "<text x=\"{pad}\" y=\"{:.1}\">{}: live (blue) and upstream (red) bytes vs event; \
             peak live {} B, peak upstream {} B</text>\n\
             <line x1=\"{pad}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"black\"/>\n\
             <line x1=\"{pad}\" y1=\"{:.1}\" x2=\"{pad}\" y2=\"{:.1}\" stroke=\"black\"/>\n\
             <text x=\"2\" y=\"{:.1}\">{:.1} MiB</text>\n\
             <polyline fill=\"none\" stroke=\"red\" points=\"{}\"/>\n\
             <polyline fill=\"none\" stroke=\"blue\" points=\"{}\"/>\n",
            y0 + 20.0,
            o.spec,
            o.peak_live,
            o.peak_upstream,
            y0 + h - pad,
            w - pad,
            y0 + h - pad,
            y0 + h - pad,
            y0 + pad,
            y0 + pad,
            ymax / (1u64 << 20) as f64,
            line(|x| x.2),
            line(|x| x.1),
        );
    }
    s.push_str("</svg>\n");
    s
}

fn usage() -> ! {
    eprintln!(
        "usage: rmm-replay LOG [--mr SPEC]... [--json FILE] [--svg FILE] [--skip-bad-lines]\n\
         SPEC: cuda | pool[:INITIAL[:MAX]] | vmm_pool[:INITIAL[:MAX]] | async[:MAX] | \
         binning[:MIN_EXP:MAX_EXP] | arena[:SIZE] | fixed_size[:BLOCK[:PREALLOC]] \
         (default: pool)\n\
         peak upstream: bytes held from the device (vmm_pool: mapped; async: reserved)"
    );
    std::process::exit(2)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut log, mut specs, mut json_out, mut svg_out, mut skip_bad) =
        (None, Vec::new(), None, None, false);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--mr" => specs.push(args.next().unwrap_or_else(|| usage())),
            "--json" => json_out = Some(args.next().unwrap_or_else(|| usage())),
            "--svg" => svg_out = Some(args.next().unwrap_or_else(|| usage())),
            "--skip-bad-lines" => skip_bad = true,
            "-h" | "--help" => usage(),
            _ if a.starts_with('-') => usage(),
            _ if log.is_none() => log = Some(a),
            _ => usage(),
        }
    }
    let log = log.unwrap_or_else(|| usage());
    if specs.is_empty() {
        specs.push("pool".to_string());
    }
    let fail = |msg: String| -> ! {
        eprintln!("rmm-replay: {msg}");
        std::process::exit(1)
    };
    let text =
        std::fs::read_to_string(&log).unwrap_or_else(|e| fail(format!("cannot read '{log}': {e}")));
    let (events, skipped) =
        parse_log(&text, skip_bad).unwrap_or_else(|e| fail(format!("{log}: {e}")));
    let plan = plan(&events);
    println!(
        "{log}: {} events, {} threads, {} allocations ({} bytes), recorded peak live {} bytes, \
         {} recorded allocation failures",
        events.len(),
        plan.threads.len(),
        plan.allocations,
        plan.total_bytes,
        plan.recorded_peak_live,
        plan.recorded_failures
    );
    println!(
        "{:<28} {:>10} {:>8} {:>8} {:>8} {:>14} {:>14} {:>7}",
        "resource", "time ms", "allocs", "frees", "fails", "peak live", "peak upstream", "ratio"
    );
    let mut outcomes = Vec::new();
    for spec in &specs {
        let o = replay(spec, &plan).unwrap_or_else(|e| fail(format!("{spec}: {e}")));
        println!(
            "{:<28} {:>10.3} {:>8} {:>8} {:>8} {:>14} {:>14} {:>7.3}",
            o.spec,
            o.seconds * 1e3,
            o.allocations,
            o.frees,
            o.failures,
            o.peak_live,
            o.peak_upstream,
            o.peak_upstream as f64 / o.peak_live.max(1) as f64
        );
        outcomes.push(o);
    }
    if let Some(p) = json_out {
        std::fs::write(&p, json(&log, &plan, skipped, &outcomes))
            .unwrap_or_else(|e| fail(format!("cannot write '{p}': {e}")));
    }
    if let Some(p) = svg_out {
        std::fs::write(&p, svg(&outcomes))
            .unwrap_or_else(|e| fail(format!("cannot write '{p}': {e}")));
    }
    if outcomes.iter().any(|o| o.failures > 0) {
        std::process::exit(3);
    }
}
