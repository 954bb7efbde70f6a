//! The memory-history recorder: the bounded ring of events (allocations, frees, failures,
//! growth and release), optionally with each event's host stack (captured as return
//! addresses; symbols are resolved only when a snapshot is written), and the live
//! allocations made while recording.
//!
//! A leaf of the crate: the layers below the C ABI call it (the sub-allocators record
//! their growth and release; the runtime starts recording from `RMM_MEMORY_HISTORY` at its
//! first use) and it depends on nothing above them. The snapshot writer, which enumerates
//! the live resources, sits at the top (`super::snapshot`) and reads the events through
//! [`recorded`]; the exit hook of `RMM_MEMORY_HISTORY` reaches it through the writer the
//! top layer installs ([`set_exit_writer`]).
//!
//! Off (the default), the cost on the allocation path is one relaxed atomic load.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use parking_lot::Mutex;
use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::fast_map::FastMap;
use crate::spin_lock::SpinLock;
use crate::watchers::{Watcher, WATCHERS};

/// Events kept by default.
pub const DEFAULT_MAX_ENTRIES: usize = 100_000;

/// Whether recording is on. The C ABI's hit paths read its copy in [`crate::watchers`]
/// instead.
static ON: AtomicBool = AtomicBool::new(false);

/// Whether events keep their stacks (read before taking the lock: a stack walk is slow).
static STACKS: AtomicBool = AtomicBool::new(false);

/// The recorder. A swap-and-store lock: one atomic instruction per event where a parking
/// mutex takes two (its unlock must learn whether a waiter sleeps), and with two an event
/// cost as much as the pool's whole operation.
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

/// Whether recording is on.
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
    WATCHERS.set(Watcher::History, true);
    Ok(())
}

/// Stops recording and forgets what was recorded.
pub fn disable() {
    ON.store(false, Ordering::SeqCst);
    WATCHERS.set(Watcher::History, false);
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
pub(super) fn program_frame(name: &str, none_kept: bool, after_interposer: &mut bool) -> bool {
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

/// What the recorder holds, as a snapshot writes it.
pub(crate) struct Recorded {
    /// The events still in the ring, oldest first.
    pub events: Vec<Value>,
    /// The allocation events of the allocations live now, in `seq` order.
    pub live: Vec<Value>,
    /// Events pushed out of the full ring since recording started.
    pub dropped: u64,
    /// Whether recording is on.
    pub recording: bool,
}

/// The recorded events as JSON (their stacks resolved), for a snapshot.
pub(crate) fn recorded() -> Recorded {
    let guard = STATE.lock();
    let Some(st) = guard.as_ref() else {
        return Recorded {
            events: Vec::new(),
            live: Vec::new(),
            dropped: 0,
            recording: false,
        };
    };
    let clock = Clock::of(st);
    let mut symbols = Symbols::new();
    let mut live: Vec<&Event> = st.live.values().collect();
    live.sort_by_key(|e| e.seq);
    Recorded {
        events: st
            .events()
            .map(|e| event_json(e, clock, &mut symbols, &st.names))
            .collect(),
        live: live
            .into_iter()
            .map(|e| event_json(e, clock, &mut symbols, &st.names))
            .collect(),
        dropped: st.dropped,
        recording: true,
    }
}

/// `RMM_MEMORY_HISTORY=<path>`: where to write the snapshot at exit and on an
/// out-of-memory failure; read once.
pub(crate) fn env_path() -> Option<&'static str> {
    static PATH: OnceLock<Option<String>> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        std::env::var("RMM_MEMORY_HISTORY")
            .ok()
            .filter(|p| !p.trim().is_empty())
    })
    .as_deref()
}

/// The snapshot writer the exit hook calls: the top layer's (`super::snapshot`), which the
/// recorder cannot name (it enumerates the C ABI's live handles).
static EXIT_WRITER: OnceLock<fn(&str) -> Result<()>> = OnceLock::new();

/// Installs the writer of the snapshot that `RMM_MEMORY_HISTORY` writes at exit (the top
/// layer does, on its first use: a C handle made, a resource described, a snapshot taken).
pub(crate) fn set_exit_writer(write: fn(&str) -> Result<()>) {
    // Installed once; later calls find it there.
    let _ = EXIT_WRITER.set(write);
}

extern "C" fn write_at_exit() {
    if let (Some(path), Some(write)) = (env_path(), EXIT_WRITER.get()) {
        if let Err(e) = write(path) {
            eprintln!("rmm: {e}");
        }
    }
}

/// Starts recording from `RMM_MEMORY_HISTORY` (once per process, from the runtime's
/// first use): events are kept (stacks with `RMM_MEMORY_HISTORY_STACKS=1`) and the snapshot
/// is written to that path at exit (by the installed writer) and after an allocation runs
/// out of memory (`super::out_of_memory`). Its exit hook is registered here, after the
/// runtime's and the exit flag's (see `crate::runtime::runtime`), so that it runs before
/// them.
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
