//! Memory history and snapshots: what was allocated, where, by whom, and how the
//! sub-allocators' memory is cut up.
//!
//! While recording is on, every allocation, free and failure made through the C ABI (so
//! from C, C++ and Python), the interposer and the sub-allocators' growth and release is
//! appended to a bounded ring of events, optionally with the host stack (captured as return
//! addresses; symbols are resolved only when a snapshot is written). A snapshot is one JSON
//! document: the events still in the ring, the allocations live now that were made while
//! recording, and each resource's segments (pool chunks, mapped extents, ...) with their
//! blocks. `rmm-viz` turns it into an HTML report.
//!
//! Off (the default), the cost on the allocation path is one relaxed atomic load.

use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;
use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::mr::spin_lock::SpinLock;
use crate::mr::{FastMap, SharedResource};

/// The snapshot format's version (`schema_version` in the JSON); bumped on any change a
/// reader could notice.
pub const SCHEMA_VERSION: u32 = 1;

/// Events kept by default.
pub const DEFAULT_MAX_ENTRIES: usize = 100_000;

static ON: AtomicBool = AtomicBool::new(false);
/// Whether events keep their stacks (read before taking the lock: a stack walk is slow).
static STACKS: AtomicBool = AtomicBool::new(false);

/// The recorder. A swap-and-store lock: one atomic instruction per event where a parking
/// mutex takes two (its unlock must learn whether a waiter sleeps); on the GPU machine an
/// event cost as much as the pool's whole operation.
static STATE: SpinLock<Option<State>> = SpinLock::new(None);
static NEXT_THREAD: AtomicU32 = AtomicU32::new(1);

thread_local! {
    static THREAD: u32 = NEXT_THREAD.fetch_add(1, Ordering::Relaxed);
}

/// What happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// An allocation succeeded.
    Allocate,
    /// A free succeeded.
    Free,
    /// An allocation failed (out of memory or another error).
    AllocateFailed,
    /// A free was refused (foreign pointer, double free, wrong size).
    FreeFailed,
    /// A sub-allocator took memory from its upstream (or mapped it).
    Grow,
    /// A sub-allocator gave memory back (or unmapped it).
    Release,
}

impl EventKind {
    fn name(self) -> &'static str {
        match self {
            EventKind::Allocate => "allocate",
            EventKind::Free => "free",
            EventKind::AllocateFailed => "allocate_failed",
            EventKind::FreeFailed => "free_failed",
            EventKind::Grow => "grow",
            EventKind::Release => "release",
        }
    }
}

/// One recorded event, packed into one cache line (64 bytes): the ring of a busy program
/// writes one line per event, and the live map copies it per allocation.
#[derive(Clone, Debug)]
struct Event {
    seq: u64,
    /// [`crate::runtime::os::ticks`] when it happened (converted to time at snapshots).
    ticks: u64,
    ptr: usize,
    size: usize,
    stream: usize,
    resource_id: usize,
    stack: Option<Arc<Mutex<backtrace::Backtrace>>>,
    thread: u32,
    device: i16,
    /// Index of the resource's name in [`State::names`].
    name: u8,
    kind: EventKind,
}

// One cache line, as its doc says.
const _: () = assert!(std::mem::size_of::<Event>() == 64);

struct State {
    /// The newest events, oldest at `head` once full (a fixed ring: no allocation per event).
    ring: Vec<Event>,
    head: usize,
    max_entries: usize,
    next_seq: u64,
    dropped: u64,
    start: Instant,
    start_ticks: u64,
    /// Resource names seen (static strings, compared by address first), indexed by
    /// [`Event::name`].
    names: Vec<&'static str>,
    /// Live allocations made while recording: pointer -> their allocation event.
    live: FastMap<usize, Event>,
}

impl State {
    /// The index of `name` in [`State::names`]; past 255 names the last one stands for all
    /// others (resources name their class, so a program has a few dozen at most).
    fn name_index(&mut self, name: &'static str) -> u8 {
        if let Some(i) = self
            .names
            .iter()
            .position(|n| std::ptr::eq(n.as_ptr(), name.as_ptr()) || *n == name)
        {
            return i as u8;
        }
        if self.names.len() < usize::from(u8::MAX) {
            self.names.push(name);
            (self.names.len() - 1) as u8
        } else {
            u8::MAX - 1
        }
    }

    /// The events in the ring, oldest first.
    fn events(&self) -> impl Iterator<Item = &Event> {
        self.ring[self.head..].iter().chain(&self.ring[..self.head])
    }
}

/// Whether recording is on (the hot path's only cost while it is off).
#[inline(always)]
pub fn enabled() -> bool {
    ON.load(Ordering::Relaxed)
}

/// Starts recording (or restarts it, forgetting what was recorded): at most `max_entries`
/// events are kept (the oldest go first); with `stacks`, each event keeps its host stack.
pub fn enable(max_entries: usize, stacks: bool) -> Result<()> {
    if max_entries == 0 {
        return Err(Error::invalid(
            "memory history: max_entries = 0 (keep at least one event)",
        ));
    }
    *STATE.lock() = Some(State {
        ring: Vec::with_capacity(max_entries.min(1 << 20)),
        head: 0,
        max_entries,
        next_seq: 0,
        dropped: 0,
        start: Instant::now(),
        start_ticks: crate::runtime::os::ticks(),
        names: Vec::new(),
        live: FastMap::default(),
    });
    STACKS.store(stacks, Ordering::SeqCst);
    ON.store(true, Ordering::SeqCst);
    Ok(())
}

/// Stops recording and forgets what was recorded.
pub fn disable() {
    ON.store(false, Ordering::SeqCst);
    *STATE.lock() = None;
}

/// Records one event if recording is on. `resource_id` tells resources of one class apart
/// (a handle or an address).
#[allow(clippy::too_many_arguments)]
#[cold]
pub fn record(
    kind: EventKind,
    ptr: usize,
    size: usize,
    stream: usize,
    device: i32,
    resource: &'static str,
    resource_id: usize,
) {
    // Captured outside the lock: a stack walk takes microseconds.
    let stack = STACKS
        .load(Ordering::Relaxed)
        .then(|| Arc::new(Mutex::new(backtrace::Backtrace::new_unresolved())));
    let thread = THREAD.with(|t| *t);
    let ticks = crate::runtime::os::ticks();
    let mut guard = STATE.lock();
    let Some(st) = guard.as_mut() else { return };
    let e = Event {
        seq: st.next_seq,
        ticks,
        ptr,
        size,
        stream,
        resource_id,
        stack,
        thread,
        device: device.clamp(i32::from(i16::MIN), i32::from(i16::MAX)) as i16,
        name: st.name_index(resource),
        kind,
    };
    st.next_seq += 1;
    match kind {
        EventKind::Allocate => {
            st.live.insert(ptr, e.clone());
        }
        EventKind::Free => {
            st.live.remove(&ptr);
        }
        _ => {}
    }
    if st.ring.len() < st.max_entries {
        st.ring.push(e);
    } else {
        st.ring[st.head] = e;
        st.head = (st.head + 1) % st.max_entries;
        st.dropped += 1;
    }
}

/// The runtime entry points the interposer (`librmm_preload.so`) exports: the frame of one
/// right above the interposer's own is the interposer, not the program.
const INTERPOSED: &[&str] = &[
    "cudaMalloc",
    "cudaFree",
    "cudaMallocAsync",
    "cudaFreeAsync",
    "cudaMallocManaged",
    "hipMalloc",
    "hipExtMallocWithFlags",
    "hipFree",
    "hipMallocAsync",
    "hipFreeAsync",
    "hipMallocManaged",
];

/// Whether a frame named `name` belongs to the program (kept in a snapshot), read in stack
/// order from the capture outwards. The recorder's, the library's and the interposer's own
/// frames say nothing about the program: the first frame kept is the C ABI call the program
/// made or, for an interposed program, the caller of the runtime entry point it called.
/// `none_kept`: no frame kept yet (core's closures around the capture come first in
/// unoptimized builds); `after_interposer` carries state from frame to frame.
fn program_frame(name: &str, none_kept: bool, after_interposer: &mut bool) -> bool {
    let interposer = name.starts_with("rmm_preload::");
    if interposer || name.starts_with("backtrace::") || name.starts_with("rmm::") {
        *after_interposer = interposer;
        return false;
    }
    if none_kept && name.starts_with("core::") {
        return false;
    }
    !(std::mem::take(after_interposer) && INTERPOSED.contains(&name))
}

/// Resolved frames by return address: the same call sites recur in every stack, and
/// symbolizing one is costly.
type Symbols = HashMap<usize, Vec<Value>>;

fn stack_json(stack: &Option<Arc<Mutex<backtrace::Backtrace>>>, symbols: &mut Symbols) -> Value {
    let Some(bt) = stack else { return Value::Null };
    let bt = bt.lock();
    let mut frames = Vec::new();
    let mut after_interposer = false;
    for f in bt.frames() {
        let resolved = symbols.entry(f.ip() as usize).or_insert_with(|| {
            let mut out = Vec::new();
            backtrace::resolve(f.ip(), |sym| {
                let name = sym.name().map(|n| format!("{n:#}")).unwrap_or_default();
                out.push(json!({
                    "function": name,
                    "file": sym.filename().map(|p| p.display().to_string()),
                    "line": sym.lineno(),
                }));
            });
            out
        });
        for v in resolved.iter() {
            let name = v["function"].as_str().unwrap_or("");
            if !program_frame(name, frames.is_empty(), &mut after_interposer) {
                continue;
            }
            frames.push(v.clone());
        }
        if frames.len() >= 32 {
            break;
        }
    }
    Value::Array(frames)
}

/// Ticks to nanoseconds since recording started: the rate measured over the whole
/// recording (from its start to the snapshot).
#[derive(Clone, Copy)]
struct Clock {
    start_ticks: u64,
    ns_per_tick: f64,
}

impl Clock {
    fn of(st: &State) -> Clock {
        let ns = st.start.elapsed().as_nanos() as f64;
        let ticks = crate::runtime::os::ticks()
            .saturating_sub(st.start_ticks)
            .max(1) as f64;
        Clock {
            start_ticks: st.start_ticks,
            ns_per_tick: ns / ticks,
        }
    }

    fn ns(self, ticks: u64) -> u64 {
        (ticks.saturating_sub(self.start_ticks) as f64 * self.ns_per_tick) as u64
    }
}

fn event_json(e: &Event, clock: Clock, symbols: &mut Symbols, names: &[&str]) -> Value {
    json!({
        "seq": e.seq,
        "time_ns": clock.ns(e.ticks),
        "action": e.kind.name(),
        "address": e.ptr,
        "size": e.size,
        "stream": e.stream,
        "device": e.device,
        "resource": names.get(usize::from(e.name)).copied().unwrap_or("unknown"),
        "resource_id": e.resource_id,
        "thread": e.thread,
        "frames": stack_json(&e.stack, symbols),
    })
}

/// Resources made outside the C ABI that snapshots should describe (the interposer's).
static EXTRA: Mutex<Vec<std::sync::Weak<dyn crate::mr::DeviceMemoryResource>>> =
    Mutex::new(Vec::new());

/// Makes snapshots describe `resource` (and what lies under it) while it lives, for
/// resources that no C handle or per-device entry holds.
pub fn describe(resource: &SharedResource) {
    let mut extra = EXTRA.lock();
    extra.retain(|w| w.strong_count() > 0);
    extra.push(Arc::downgrade(resource));
}

/// The resources a snapshot describes: every live C handle, each device's current
/// resource and those given to [`describe`], with the resources under them, each once.
fn resources() -> Vec<SharedResource> {
    let mut out: Vec<SharedResource> = crate::ffi::live_resources();
    out.extend(EXTRA.lock().iter().filter_map(std::sync::Weak::upgrade));
    if let Ok(rt) = crate::runtime::runtime() {
        for d in 0..rt.device_count().unwrap_or(0) {
            if let Ok(r) = crate::mr::get_per_device_resource(d) {
                out.push(r);
            }
        }
    }
    let mut seen = Vec::new();
    let mut all = Vec::new();
    while let Some(r) = out.pop() {
        let key = Arc::as_ptr(&r) as *const () as usize;
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        if let Some(up) = r.upstream() {
            out.push(up);
        }
        all.push(r);
    }
    all
}

/// The snapshot as a JSON value (see the module docs; the format is in
/// `docs/memory-history.md`).
pub fn snapshot() -> Value {
    let (events, live, dropped, recording) = {
        let guard = STATE.lock();
        match guard.as_ref() {
            Some(st) => {
                let clock = Clock::of(st);
                let mut symbols = Symbols::new();
                let mut live: Vec<&Event> = st.live.values().collect();
                live.sort_by_key(|e| e.seq);
                (
                    st.events()
                        .map(|e| event_json(e, clock, &mut symbols, &st.names))
                        .collect::<Vec<_>>(),
                    live.into_iter()
                        .map(|e| event_json(e, clock, &mut symbols, &st.names))
                        .collect::<Vec<_>>(),
                    st.dropped,
                    true,
                )
            }
            None => (Vec::new(), Vec::new(), 0, false),
        }
    };
    let mut segments = Vec::new();
    for r in resources() {
        let id = Arc::as_ptr(&r) as *const () as usize;
        for s in r.segments() {
            let free: usize = s
                .blocks
                .iter()
                .filter(|b| b.state == "free")
                .map(|b| b.size)
                .sum();
            let largest = s
                .blocks
                .iter()
                .filter(|b| b.state == "free")
                .map(|b| b.size)
                .max()
                .unwrap_or(0);
            segments.push(json!({
                "resource": r.name(),
                "resource_id": id,
                "kind": s.kind,
                "address": s.addr,
                "size": s.size,
                "free_bytes": free,
                "largest_free_block": largest,
                "blocks": s.blocks.iter().map(|b| json!({
                    "address": b.addr, "size": b.size, "state": b.state,
                })).collect::<Vec<_>>(),
            }));
        }
    }
    let runtime = crate::runtime::runtime()
        .map(|rt| rt.description())
        .unwrap_or_else(|e| e.to_string());
    json!({
        "schema_version": SCHEMA_VERSION,
        "producer": format!("rmm-rs {}", env!("CARGO_PKG_VERSION")),
        "runtime": runtime,
        "recording": recording,
        "events_dropped": dropped,
        "events": events,
        "live": live,
        "segments": segments,
    })
}

/// Writes [`snapshot`] to `path` (replacing it).
pub fn write_snapshot(path: &str) -> Result<()> {
    let doc = snapshot();
    let io =
        |e: std::io::Error| Error::invalid(format!("memory snapshot: cannot write {path:?}: {e}"));
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).map_err(io)?);
    serde_json::to_writer(&mut f, &doc)
        .map_err(|e| Error::invalid(format!("memory snapshot: cannot write {path:?}: {e}")))?;
    f.flush().map_err(io)
}

/// `RMM_MEMORY_HISTORY=<path>`: where to write the snapshot at exit and on an
/// out-of-memory failure; read once.
fn env_path() -> Option<&'static str> {
    static PATH: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        std::env::var("RMM_MEMORY_HISTORY")
            .ok()
            .filter(|p| !p.trim().is_empty())
    })
    .as_deref()
}

extern "C" fn write_at_exit() {
    if let Some(path) = env_path() {
        if let Err(e) = write_snapshot(path) {
            eprintln!("rmm: {e}");
        }
    }
}

/// Starts recording from `RMM_MEMORY_HISTORY` (once per process, from the runtime's
/// first use): events are kept (stacks with `RMM_MEMORY_HISTORY_STACKS=1`) and the snapshot
/// is written to that path at exit and after an allocation runs out of memory.
pub(crate) fn init_from_env() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if env_path().is_none() {
            return;
        }
        let stacks = std::env::var("RMM_MEMORY_HISTORY_STACKS").is_ok_and(|v| v.trim() == "1");
        let max = std::env::var("RMM_MEMORY_HISTORY_MAX_ENTRIES")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(DEFAULT_MAX_ENTRIES);
        if enable(max.max(1), stacks).is_ok() {
            crate::runtime::os::at_exit(write_at_exit);
        }
    });
}

/// After an allocation failed for lack of memory: with `RMM_MEMORY_HISTORY`, writes the
/// snapshot now (the state that failed is what the user wants to see).
#[cold]
pub fn out_of_memory() {
    if let Some(path) = env_path() {
        if let Err(e) = write_snapshot(path) {
            eprintln!("rmm: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::c_void;

    use super::*;
    use crate::ffi::*;

    /// Tests that turn recording on and off run one at a time.
    static SERIAL: Mutex<()> = Mutex::new(());

    /// The frames a snapshot keeps of a stack, innermost first.
    fn kept<'a>(stack: &[&'a str]) -> Vec<&'a str> {
        let (mut out, mut after) = (Vec::new(), false);
        for &name in stack {
            if program_frame(name, out.is_empty(), &mut after) {
                out.push(name);
            }
        }
        out
    }

    #[test]
    fn snapshots_keep_the_program_frames_above_the_interposer() {
        // PyTorch under librmm_preload.so (as seen on a GPU): its allocator is the site.
        let torch = [
            "backtrace::capture::Backtrace::new_unresolved",
            "rmm::history::record",
            "rmm_preload::engine::Engine::allocate",
            "rmm_preload::engine::allocate",
            "cudaMalloc",
            "c10::cuda::CUDACachingAllocator::allocate",
            "at::empty",
        ];
        assert_eq!(
            kept(&torch),
            ["c10::cuda::CUDACachingAllocator::allocate", "at::empty"]
        );
        // A C program: its call of the C ABI is kept; a cudaMalloc that is not the
        // interposer's (no interposer frame under it) is the program's own.
        let c = [
            "core::ops::function::FnOnce::call_once",
            "rmm::ffi::x",
            "main",
        ];
        assert_eq!(kept(&c), ["main"]);
        assert_eq!(
            kept(&["rmm::a", "cudaMalloc", "main"]),
            ["cudaMalloc", "main"]
        );
    }

    fn pool() -> rmm_resource_t {
        crate::mr::tests::init();
        let mut up = std::ptr::null_mut();
        let mut pool = std::ptr::null_mut();
        // SAFETY: valid out-pointers.
        unsafe {
            assert_eq!(rmm_cuda_create(&mut up), rmm_status_t::RMM_STATUS_SUCCESS);
            assert_eq!(
                rmm_pool_create(up, 1 << 20, 4 << 20, &mut pool),
                rmm_status_t::RMM_STATUS_SUCCESS
            );
        }
        rmm_resource_release(up);
        pool
    }

    /// The resource's id in events and segments (`rmm_resource_id`: its address).
    fn id_of(r: rmm_resource_t) -> usize {
        let mut id = 0u64;
        // SAFETY: a live handle and a valid out-pointer.
        assert_eq!(
            unsafe { rmm_resource_id(r, &mut id) },
            rmm_status_t::RMM_STATUS_SUCCESS
        );
        id as usize
    }

    fn mine<'a>(doc: &'a Value, key: &str, id: usize) -> Vec<&'a Value> {
        doc[key]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["resource_id"] == json!(id))
            .collect()
    }

    #[test]
    fn records_allocations_frees_failures_and_growth_with_stacks() {
        let _serial = SERIAL.lock();
        let r = pool();
        enable(1000, true).unwrap();
        let (mut a, mut b) = (
            std::ptr::null_mut::<c_void>(),
            std::ptr::null_mut::<c_void>(),
        );
        // SAFETY: valid out-pointers; the pointers are freed with their sizes.
        unsafe {
            assert_eq!(
                rmm_allocate(r, 1000, &mut a),
                rmm_status_t::RMM_STATUS_SUCCESS
            );
            assert_eq!(
                rmm_allocate(r, 2 << 20, &mut b),
                rmm_status_t::RMM_STATUS_SUCCESS
            );
            let mut c = std::ptr::null_mut();
            assert_eq!(
                rmm_allocate(r, 64 << 20, &mut c),
                rmm_status_t::RMM_STATUS_OUT_OF_MEMORY
            );
            assert_eq!(rmm_deallocate(r, a, 1000), rmm_status_t::RMM_STATUS_SUCCESS);
            assert_ne!(rmm_deallocate(r, a, 1000), rmm_status_t::RMM_STATUS_SUCCESS);
        }
        let doc = snapshot();
        disable();
        assert_eq!(doc["schema_version"], json!(SCHEMA_VERSION));
        let events = mine(&doc, "events", id_of(r));
        let actions: Vec<_> = events
            .iter()
            .map(|e| e["action"].as_str().unwrap())
            .collect();
        assert_eq!(
            actions,
            [
                "allocate",
                "grow",
                "allocate",
                "allocate_failed",
                "free",
                "free_failed"
            ]
        );
        assert_eq!(events[0]["size"], json!(1000));
        assert_eq!(events[0]["address"], json!(a as usize));
        assert_eq!(events[3]["size"], json!(64 << 20));
        // The stack starts at the C call the program made, and goes on into its caller.
        let frames = events[0]["frames"].as_array().unwrap();
        assert_eq!(
            frames[0]["function"],
            json!("rmm_allocate_async"),
            "{frames:?}"
        );
        assert!(frames.len() > 2, "{frames:?}");
        // Live now: `b` only.
        let live = mine(&doc, "live", id_of(r));
        assert_eq!(live.len(), 1);
        assert_eq!(live[0]["address"], json!(b as usize));
        // The pool grew for `b` (its first chunk was 1 MiB): a growth event, and its chunks
        // are segments whose blocks cover them.
        assert!(doc["events"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["action"] == "grow" && e["resource"] == "pool_memory_resource"));
        let segs: Vec<_> = doc["segments"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["kind"] == "pool_chunk")
            .filter(|s| {
                s["blocks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|k| k["address"] == json!(b as usize))
            })
            .collect();
        assert_eq!(segs.len(), 1, "the chunk holding b");
        let covered: u64 = segs[0]["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["size"].as_u64().unwrap())
            .sum();
        assert_eq!(json!(covered), segs[0]["size"]);
        rmm_deallocate(r, b, 2 << 20);
        rmm_resource_release(r);
    }

    #[test]
    fn the_ring_keeps_the_newest_events_and_off_records_nothing() {
        let _serial = SERIAL.lock();
        let r = pool();
        enable(4, false).unwrap();
        for _ in 0..5 {
            let mut p = std::ptr::null_mut();
            // SAFETY: valid out-pointer; freed with its size.
            unsafe {
                rmm_allocate(r, 256, &mut p);
                rmm_deallocate(r, p, 256);
            }
        }
        let doc = snapshot();
        assert_eq!(doc["events"].as_array().unwrap().len(), 4);
        assert!(doc["events_dropped"].as_u64().unwrap() >= 6);
        assert!(doc["events"][0]["frames"].is_null());
        disable();
        let mut p = std::ptr::null_mut();
        // SAFETY: as above.
        unsafe {
            rmm_allocate(r, 256, &mut p);
            rmm_deallocate(r, p, 256);
        }
        let doc = snapshot();
        assert_eq!(doc["recording"], json!(false));
        assert!(doc["events"].as_array().unwrap().is_empty());
        assert!(enable(0, false).is_err());
        rmm_resource_release(r);
    }

    #[test]
    fn snapshot_file_is_json_and_bad_paths_are_errors() {
        let _serial = SERIAL.lock();
        let dir = std::env::temp_dir().join(format!("rmm-history-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("snap.json");
        write_snapshot(path.to_str().unwrap()).unwrap();
        let doc: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(doc["schema_version"], json!(SCHEMA_VERSION));
        let e = write_snapshot("/nonexistent-dir/x.json")
            .unwrap_err()
            .to_string();
        assert!(e.contains("/nonexistent-dir/x.json"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn fixed_size_and_binning_segments_show_live_and_free_blocks() {
        use crate::mr::{DeviceMemoryResource, FixedSizeMemoryResource};
        crate::mr::tests::init();
        let up: SharedResource = Arc::new(crate::mr::CudaMemoryResource::new().unwrap());
        let fixed = FixedSizeMemoryResource::new(up, 1 << 16, 8).unwrap();
        let s = crate::Stream::DEFAULT;
        let ptrs: Vec<_> = (0..3)
            .map(|_| fixed.allocate(1 << 16, s).unwrap())
            .collect();
        fixed.deallocate(ptrs[1], 1 << 16, s).unwrap();
        let segs = fixed.segments();
        assert_eq!(segs.len(), 1);
        assert_eq!(segs[0].kind, "fixed_size_batch");
        assert_eq!(segs[0].blocks.len(), 8);
        let used: Vec<_> = segs[0]
            .blocks
            .iter()
            .filter(|b| b.state == "used")
            .map(|b| b.addr)
            .collect();
        assert_eq!(used.len(), 2);
        assert!(used.contains(&(ptrs[0] as usize)) && used.contains(&(ptrs[2] as usize)));
        for p in [ptrs[0], ptrs[2]] {
            fixed.deallocate(p, 1 << 16, s).unwrap();
        }
    }
}
