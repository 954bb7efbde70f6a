//! Event counters for finding where the time goes: runtime calls by kind, events recorded
//! and waited by the stream-ordered resources, cross-stream steals, upstream calls of
//! sub-allocators and contended resource locks.
//!
//! Counting is off until a program asks for counts ([`enable`], [`snapshot`] or [`reset`],
//! or `RMM_COUNTERS=1` in the environment when the runtime is chosen): until then each count
//! is one load of a flag. In a shared library every thread-local access is a call
//! (`__tls_get_addr`): counting took about 20 of the 190 instructions that the C ABI adds to
//! a thin resource's runtime call (callgrind, host runtime). Once on, counting is cheap
//! enough for hot paths: each
//! thread increments its own block of counters (a plain load, add and store on memory no
//! other thread writes, no atomic read-modify-write, no cache line shared with another
//! thread). [`snapshot`] sums
//! the blocks of all threads; a thread's block is registered in a global list the first
//! time the thread counts and outlives the thread (a finished thread's block is handed to
//! the next new thread, which keeps adding to it), so the counts of finished threads are
//! kept. [`reset`] moves a baseline instead of clearing the blocks, so it never races with
//! a thread that is counting.
//!
//! # What is counted where
//!
//! * **Runtime calls** — in one place: the process's runtime ([`crate::runtime::runtime`])
//!   is wrapped in a counting layer (`runtime/counted.rs`), so every call any part of the
//!   library makes through the [`crate::runtime::Runtime`] trait is counted, on every
//!   backend (CUDA, HIP, host emulation), by kind.
//! * **Events recorded / waited, device-synchronize fallbacks, steals** — in
//!   `mr/stream_ordered.rs`: `StreamRegistry::order_after` (one *steal* per call between
//!   two different streams: the caller then moves a block or a whole list; the event it
//!   records, the `stream_wait_event` it makes, or the device synchronization it falls
//!   back to) and `StreamRegistry::refresh` (the event recorded after an operation on a
//!   foreign stream).
//! * **Upstream calls and lock waits** — by the sub-allocators, through the helpers below.
//! * **Front hits** — in `mr/pool.rs`: an allocation a thread's front cache served, or a
//!   free it kept (neither takes the pool's lock).
//!
//! # Helpers for sub-allocators (pool, fixed-size, arena, ...)
//!
//! * [`lock`]`(&mutex)` instead of `mutex.lock()` for a resource's own lock: tries the lock
//!   first and counts a *lock wait* when it was held by another thread, then blocks as
//!   usual. No cost beyond `lock()` when the lock is free. (Per-thread state behind
//!   `spin_lock::SpinLock` — pool fronts, fixed-size shards, local arenas — is counted
//!   by the lock itself.)
//! * [`upstream_alloc`]`()` after each successful `upstream.allocate` (growth, a new
//!   superblock, ...), [`upstream_free`]`()` after each `upstream.deallocate` (release,
//!   shrink, drop).
//! * [`steal`]`()` when memory moves between streams (or between per-thread/per-stream
//!   arenas) *without* going through `StreamRegistry::order_after`, which already counts.
//!
//! ```ignore
//! let mut inner = crate::counters::lock(&self.inner);
//! let p = self.upstream.allocate(size, stream)?;
//! crate::counters::upstream_alloc();
//! ```
//!
//! Programs read the counts with [`snapshot`] (a [`Counters`] record, all fields summed
//! over all threads since the last [`reset`]) and take differences with
//! [`Counters::since`]; `rmm-bench` reports them per operation.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

use parking_lot::{Mutex, MutexGuard};

use crate::watchers::{Watcher, WATCHERS};

/// The counters, one slot each in a thread's block.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(usize)]
pub(crate) enum Counter {
    /// Runtime `malloc`, `free`, `malloc_managed`, `malloc_host`, `free_host`.
    RtMalloc,
    /// Runtime `malloc_async`, `malloc_from_pool_async`, `free_async`.
    RtAsync,
    /// Runtime `event_record`.
    RtEventRecord,
    /// Runtime `event_query`, `event_synchronize`.
    RtEventWait,
    /// Runtime `stream_wait_event`.
    RtStreamWaitEvent,
    /// Runtime `stream_synchronize`, `device_synchronize`.
    RtSynchronize,
    /// Every other runtime call (devices, streams, events created/destroyed, pools, copies,
    /// queries, pointer attributes, ...).
    RtOther,
    /// Events recorded by the stream-ordered resources (slow path and foreign streams).
    EventsRecorded,
    /// Of those, recorded after an operation on a foreign stream (`refresh`).
    ForeignRecords,
    /// `stream_wait_event` calls made by the stream-ordered resources.
    EventsWaited,
    /// Device synchronizations a stream-ordered resource made instead of an event wait.
    SyncFallbacks,
    /// Cross-stream steals: memory freed on one stream taken by another.
    Steals,
    /// Allocations a sub-allocator made from its upstream.
    UpstreamAllocs,
    /// Deallocations a sub-allocator made to its upstream.
    UpstreamFrees,
    /// Resource locks found held by another thread.
    LockWaits,
    /// Pool operations served by a thread's front cache without the pool's lock: an
    /// allocation taken from it or a free kept in it.
    FrontHits,
    /// Touched only by this module's tests (the others running in parallel leave it alone).
    #[cfg(test)]
    TestOnly,
}

#[cfg(not(test))]
const N: usize = Counter::FrontHits as usize + 1;
#[cfg(test)]
const N: usize = Counter::TestOnly as usize + 1;

/// One thread's counters, on cache lines of their own.
#[repr(align(128))]
struct Block([AtomicU64; N]);

impl Block {
    const fn new() -> Self {
        Block([const { AtomicU64::new(0) }; N])
    }
}

/// Counts made where a thread has no block (while its thread-locals are being destroyed):
/// shared, so incremented atomically; rare.
static FALLBACK: Block = Block::new();

/// Every block ever handed out (never freed), the blocks of finished threads waiting for a
/// new thread, and the sums at the last [`reset`].
struct Registry {
    all: Vec<&'static Block>,
    spare: Vec<&'static Block>,
    baseline: [u64; N],
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    all: Vec::new(),
    spare: Vec::new(),
    baseline: [0; N],
});

/// What `MINE` holds once the thread's thread-locals are being destroyed: the shared
/// block, which the fast path never writes to.
fn retired() -> *const Block {
    &FALLBACK
}

thread_local! {
    /// The calling thread's block; null until the thread first counts, [`retired`] once its
    /// thread-locals are being destroyed.
    static MINE: Cell<*const Block> = const { Cell::new(std::ptr::null()) };
    static GUARD: Guard = const { Guard };
}

/// Gives the thread's block to the spare list when the thread ends.
struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        let p = MINE.with(|m| m.replace(retired()));
        if !p.is_null() && p != retired() {
            // SAFETY: non-null, non-retired values of MINE are leaked `&'static Block`s.
            let block: &'static Block = unsafe { &*p };
            REGISTRY.lock().spare.push(block);
        }
    }
}

/// Whether counting is on (see the module docs). The C ABI's hit paths read its copy in
/// [`crate::watchers`] instead.
static ENABLED: AtomicBool = AtomicBool::new(false);

/// Turns counting on for the rest of the process (counts made before are not known).
pub fn enable() {
    ENABLED.store(true, Relaxed);
    WATCHERS.set(Watcher::Counters, true);
}

/// Whether counting is on.
pub fn enabled() -> bool {
    ENABLED.load(Relaxed)
}

/// Adds `n` to counter `c` of the calling thread, when counting is on.
#[inline(always)]
pub(crate) fn add(c: Counter, n: u64) {
    if !ENABLED.load(Relaxed) {
        return;
    }
    let p = MINE.with(Cell::get);
    if p.is_null() || p == retired() {
        return add_slow(c, n);
    }
    // SAFETY: non-null, non-retired values of MINE are leaked `&'static Block`s.
    let slot = unsafe { &(*p).0[c as usize] };
    // This thread is the block's only writer: a plain load and store, no atomic RMW.
    slot.store(slot.load(Relaxed).wrapping_add(n), Relaxed);
}

/// Adds one to counter `c` of the calling thread.
#[inline(always)]
pub(crate) fn bump(c: Counter) {
    add(c, 1)
}

#[cold]
#[inline(never)]
fn add_slow(c: Counter, n: u64) {
    if MINE.with(Cell::get).is_null() && GUARD.try_with(|_| ()).is_ok() {
        // First count on this thread, whose destructor is now registered: take a block.
        let block = {
            let mut reg = REGISTRY.lock();
            match reg.spare.pop() {
                Some(b) => b,
                None => {
                    let b: &'static Block = Box::leak(Box::new(Block::new()));
                    reg.all.push(b);
                    b
                }
            }
        };
        MINE.with(|m| m.set(block));
        return add(c, n);
    }
    FALLBACK.0[c as usize].fetch_add(n, Relaxed);
}

/// The sums over all threads (not relative to the baseline).
fn totals(reg: &Registry) -> [u64; N] {
    let mut sum: [u64; N] = std::array::from_fn(|i| FALLBACK.0[i].load(Relaxed));
    for b in &reg.all {
        for (s, v) in sum.iter_mut().zip(&b.0) {
            *s = s.wrapping_add(v.load(Relaxed));
        }
    }
    sum
}

fn raw_snapshot() -> [u64; N] {
    let reg = REGISTRY.lock();
    let t = totals(&reg);
    std::array::from_fn(|i| t[i].wrapping_sub(reg.baseline[i]))
}

/// The counts summed over all threads since the last [`reset`] (or since counting was
/// turned on; this turns it on). Counts that other threads make while the sum is taken may
/// or may not be in it.
pub fn snapshot() -> Counters {
    enable();
    let c = raw_snapshot();
    let g = |k: Counter| c[k as usize];
    Counters {
        runtime_malloc: g(Counter::RtMalloc),
        runtime_async: g(Counter::RtAsync),
        runtime_event_record: g(Counter::RtEventRecord),
        runtime_event_wait: g(Counter::RtEventWait),
        runtime_stream_wait_event: g(Counter::RtStreamWaitEvent),
        runtime_synchronize: g(Counter::RtSynchronize),
        runtime_other: g(Counter::RtOther),
        events_recorded: g(Counter::EventsRecorded),
        foreign_records: g(Counter::ForeignRecords),
        events_waited: g(Counter::EventsWaited),
        sync_fallbacks: g(Counter::SyncFallbacks),
        steals: g(Counter::Steals),
        upstream_allocs: g(Counter::UpstreamAllocs),
        upstream_frees: g(Counter::UpstreamFrees),
        lock_waits: g(Counter::LockWaits),
        front_hits: g(Counter::FrontHits),
    }
}

/// Sets every count to zero (for later [`snapshot`]s), in all threads, and turns counting
/// on.
pub fn reset() {
    enable();
    let mut reg = REGISTRY.lock();
    reg.baseline = totals(&reg);
}

/// Counts since the last [`reset`], summed over all threads (see the [module
/// docs](self) for where each is counted).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Counters {
    /// Runtime `malloc`, `free`, `malloc_managed`, `malloc_host`, `free_host` calls.
    pub runtime_malloc: u64,
    /// Runtime `malloc_async`, `malloc_from_pool_async`, `free_async` calls.
    pub runtime_async: u64,
    /// Runtime `event_record` calls.
    pub runtime_event_record: u64,
    /// Runtime `event_query` and `event_synchronize` calls.
    pub runtime_event_wait: u64,
    /// Runtime `stream_wait_event` calls.
    pub runtime_stream_wait_event: u64,
    /// Runtime `stream_synchronize` and `device_synchronize` calls.
    pub runtime_synchronize: u64,
    /// All other runtime calls.
    pub runtime_other: u64,
    /// Events the stream-ordered resources recorded (cross-stream takes, foreign streams).
    pub events_recorded: u64,
    /// Of `events_recorded`, those recorded after an operation on a foreign stream.
    pub foreign_records: u64,
    /// Event waits (`stream_wait_event`) the stream-ordered resources made.
    pub events_waited: u64,
    /// Device synchronizations the stream-ordered resources made instead of an event wait.
    pub sync_fallbacks: u64,
    /// Cross-stream steals: blocks or whole free lists taken from another stream.
    pub steals: u64,
    /// Allocations sub-allocators made from their upstream.
    pub upstream_allocs: u64,
    /// Deallocations sub-allocators made to their upstream.
    pub upstream_frees: u64,
    /// Resource locks that were held by another thread when taken.
    pub lock_waits: u64,
    /// Pool allocations served from a thread's front cache and frees kept in one.
    pub front_hits: u64,
}

impl Counters {
    /// All runtime calls.
    pub fn runtime_calls(&self) -> u64 {
        self.runtime_malloc
            + self.runtime_async
            + self.runtime_event_record
            + self.runtime_event_wait
            + self.runtime_stream_wait_event
            + self.runtime_synchronize
            + self.runtime_other
    }

    /// All upstream calls (allocations and deallocations).
    pub fn upstream_calls(&self) -> u64 {
        self.upstream_allocs + self.upstream_frees
    }

    /// The counts made between `earlier` and `self` (two snapshots, no reset between).
    pub fn since(&self, earlier: &Counters) -> Counters {
        let d = |a: u64, b: u64| a.wrapping_sub(b);
        Counters {
            runtime_malloc: d(self.runtime_malloc, earlier.runtime_malloc),
            runtime_async: d(self.runtime_async, earlier.runtime_async),
            runtime_event_record: d(self.runtime_event_record, earlier.runtime_event_record),
            runtime_event_wait: d(self.runtime_event_wait, earlier.runtime_event_wait),
            runtime_stream_wait_event: d(
                self.runtime_stream_wait_event,
                earlier.runtime_stream_wait_event,
            ),
            runtime_synchronize: d(self.runtime_synchronize, earlier.runtime_synchronize),
            runtime_other: d(self.runtime_other, earlier.runtime_other),
            events_recorded: d(self.events_recorded, earlier.events_recorded),
            foreign_records: d(self.foreign_records, earlier.foreign_records),
            events_waited: d(self.events_waited, earlier.events_waited),
            sync_fallbacks: d(self.sync_fallbacks, earlier.sync_fallbacks),
            steals: d(self.steals, earlier.steals),
            upstream_allocs: d(self.upstream_allocs, earlier.upstream_allocs),
            upstream_frees: d(self.upstream_frees, earlier.upstream_frees),
            lock_waits: d(self.lock_waits, earlier.lock_waits),
            front_hits: d(self.front_hits, earlier.front_hits),
        }
    }

    /// The fields by name, in declaration order (for reports).
    pub fn fields(&self) -> [(&'static str, u64); 16] {
        [
            ("runtime_malloc", self.runtime_malloc),
            ("runtime_async", self.runtime_async),
            ("runtime_event_record", self.runtime_event_record),
            ("runtime_event_wait", self.runtime_event_wait),
            ("runtime_stream_wait_event", self.runtime_stream_wait_event),
            ("runtime_synchronize", self.runtime_synchronize),
            ("runtime_other", self.runtime_other),
            ("events_recorded", self.events_recorded),
            ("foreign_records", self.foreign_records),
            ("events_waited", self.events_waited),
            ("sync_fallbacks", self.sync_fallbacks),
            ("steals", self.steals),
            ("upstream_allocs", self.upstream_allocs),
            ("upstream_frees", self.upstream_frees),
            ("lock_waits", self.lock_waits),
            ("front_hits", self.front_hits),
        ]
    }
}

/// Locks a resource's mutex, counting a lock wait when another thread held it. Use it
/// instead of `m.lock()` for the locks whose contention matters (a resource's own lock).
// Called by the sub-allocators (pool, fixed-size, arena) as they adopt it.
#[allow(dead_code)]
#[inline(always)]
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.try_lock() {
        Some(g) => g,
        None => lock_contended(m),
    }
}

#[cold]
#[inline(never)]
fn lock_contended<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    bump(Counter::LockWaits);
    m.lock()
}

/// A sub-allocator allocated from its upstream (call after a successful allocation).
// Called by the sub-allocators (pool, fixed-size, arena) as they adopt it.
#[allow(dead_code)]
#[inline(always)]
pub(crate) fn upstream_alloc() {
    bump(Counter::UpstreamAllocs)
}

/// A sub-allocator deallocated to its upstream.
// Called by the sub-allocators (pool, fixed-size, arena) as they adopt it.
#[allow(dead_code)]
#[inline(always)]
pub(crate) fn upstream_free() {
    bump(Counter::UpstreamFrees)
}

/// Memory moved from one stream (or per-thread arena) to another outside
/// `StreamRegistry::order_after`, which counts its own.
// Called by the sub-allocators (pool, fixed-size, arena) as they adopt it.
#[allow(dead_code)]
#[inline(always)]
pub(crate) fn steal() {
    bump(Counter::Steals)
}

/// Tests that reset the counters, or compare snapshots exactly, hold this (one at a time).
#[cfg(test)]
pub(crate) static TEST_SERIAL: Mutex<()> = Mutex::new(());

#[cfg(test)]
mod tests {
    use super::TEST_SERIAL as SERIAL;
    use super::*;

    fn test_only() -> u64 {
        raw_snapshot()[Counter::TestOnly as usize]
    }

    #[test]
    fn counts_from_many_threads_add_up_and_survive_thread_exit() {
        let _g = SERIAL.lock();
        enable();
        let before = test_only();
        let handles: Vec<_> = (0..8u64)
            .map(|t| {
                std::thread::spawn(move || {
                    for _ in 0..1000 {
                        bump(Counter::TestOnly);
                    }
                    add(Counter::TestOnly, t);
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        // All threads are gone: their counts stay.
        assert_eq!(test_only() - before, 8 * 1000 + (0..8).sum::<u64>());
        // A new thread reuses a finished thread's block and keeps adding to it.
        let blocks = REGISTRY.lock().all.len();
        std::thread::spawn(|| bump(Counter::TestOnly))
            .join()
            .unwrap();
        assert_eq!(test_only() - before, 8 * 1000 + (0..8).sum::<u64>() + 1);
        assert!(REGISTRY.lock().all.len() <= blocks + 1);
    }

    #[test]
    fn counts_while_threads_run_are_seen() {
        let _g = SERIAL.lock();
        enable();
        let before = test_only();
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let (done, counted) = std::sync::mpsc::channel::<()>();
        let h = std::thread::spawn(move || {
            add(Counter::TestOnly, 5);
            done.send(()).unwrap();
            wait.recv().unwrap();
        });
        counted.recv().unwrap();
        assert_eq!(test_only() - before, 5);
        go.send(()).unwrap();
        h.join().unwrap();
        assert_eq!(test_only() - before, 5);
    }

    #[test]
    fn reset_sets_every_count_to_zero() {
        let _g = SERIAL.lock();
        enable();
        add(Counter::TestOnly, 3);
        std::thread::spawn(|| add(Counter::TestOnly, 4))
            .join()
            .unwrap();
        assert!(test_only() >= 7);
        reset();
        assert_eq!(test_only(), 0);
        bump(Counter::TestOnly);
        std::thread::spawn(|| bump(Counter::TestOnly))
            .join()
            .unwrap();
        assert_eq!(test_only(), 2);
    }

    #[test]
    fn contended_lock_counts_a_wait() {
        let _g = SERIAL.lock();
        enable();
        let m = Mutex::new(0);
        let before = raw_snapshot()[Counter::LockWaits as usize];
        *lock(&m) += 1; // free: no wait
        let held = m.lock();
        let (started, is_started) = std::sync::mpsc::channel::<()>();
        std::thread::scope(|s| {
            let h = s.spawn(|| {
                started.send(()).unwrap();
                *lock(&m) += 1;
            });
            is_started.recv().unwrap();
            // Let go only once the other thread found the lock held.
            while raw_snapshot()[Counter::LockWaits as usize] == before {
                std::thread::yield_now();
            }
            drop(held);
            h.join().unwrap();
        });
        assert_eq!(*m.lock(), 2);
        // Other tests' resources may count waits too: at least ours.
        assert!(raw_snapshot()[Counter::LockWaits as usize] > before);
    }

    #[test]
    fn helpers_count_their_counter() {
        let _g = SERIAL.lock();
        enable();
        let before = snapshot();
        upstream_alloc();
        upstream_alloc();
        upstream_free();
        steal();
        let d = snapshot().since(&before);
        // Other tests may count too: lower bounds.
        assert!(d.upstream_allocs >= 2 && d.upstream_frees >= 1, "{d:?}");
        assert!(d.upstream_calls() >= 3 && d.steals >= 1, "{d:?}");
    }

    #[test]
    fn snapshot_differences() {
        let a = Counters {
            steals: 2,
            runtime_malloc: 5,
            ..Counters::default()
        };
        let b = Counters {
            steals: 7,
            runtime_malloc: 6,
            runtime_other: 1,
            ..Counters::default()
        };
        let d = b.since(&a);
        assert_eq!((d.steals, d.runtime_malloc, d.runtime_calls()), (5, 1, 2));
        assert_eq!(d.fields().iter().map(|f| f.1).sum::<u64>(), 7);
    }
}
