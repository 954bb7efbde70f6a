//! The stream-ordered bookkeeping shared by the pool and fixed-size resources.
//!
//! Each resource keeps one free list per stream. Memory freed on stream S goes back to S's
//! list with **no runtime call**: later work on S is ordered after the free by the stream
//! itself, so S may reuse it at once (RMM records an event on every free; we do not).
//!
//! Only when S's list has nothing that fits does a resource take memory freed on another
//! stream T. At that moment it records T's event on T and makes S wait on it
//! ([`StreamRegistry::order_after`]), so everything already enqueued on T (including the
//! work that used the freed memory) completes before anything S does next; then T's free
//! blocks move to S's list. One event per stream, created the first time the slow path
//! needs it.
//!
//! # Stream keys
//! - [`Stream::DEFAULT`] and [`Stream::LEGACY`] are the same key (the device's default
//!   stream).
//! - [`Stream::PER_THREAD`] names a different stream on each thread, so its key is
//!   `(2, calling thread)`. An event can only be recorded on a per-thread stream from its
//!   own thread, so taking memory freed on *another* thread's per-thread stream
//!   synchronizes the device instead (slow path only, documented cost).
//!
//! # Tracked and foreign streams
//! Recording T's event lazily is only safe while T is alive, and a program may destroy T
//! at any time after its last free. So each stream slot is classified once, when the
//! resource first sees the stream (a lookup in [`super::stream_lifetime`]'s registry, not
//! per operation):
//!
//! * **Tracked** streams are those whose destruction the library is told about: the
//!   legacy and per-thread default streams (never destroyed), streams created by
//!   `rmm_stream_create` (which `rmm::cuda_stream` and `rmm::cuda_stream_pool` use) and
//!   streams the LD_PRELOAD interposer saw created (`cudaStreamCreate*`,
//!   `hipStreamCreate*`). Their events are recorded lazily as above: a free makes no
//!   runtime call. Destroying one through the library (`rmm_stream_destroy`, the
//!   interposer's `cudaStreamDestroy`/`hipStreamDestroy`, or [`super::stream_destroyed`]
//!   from Rust) first makes every resource *forget* it, while it is still alive: T's event
//!   is recorded, the default stream waits on it (no host synchronization), T's free blocks
//!   move to the default stream's list and T's slot is recycled. Rust code that creates
//!   streams with the runtime directly may announce them with [`super::stream_created`].
//! * **Foreign** streams are all others (created by the user, CuPy, PyTorch, ... with the
//!   runtime directly), whose destruction the library never hears about. For them a
//!   resource records the slot's event at every free on the stream (one event per slot,
//!   re-recorded each time, as RMM does), and again after every operation on the stream
//!   that adds memory to its list (taking another stream's memory, growing), so the event
//!   always covers everything on the list. A later take by another stream waits on that
//!   event and never touches the foreign stream again, so a foreign stream may be destroyed
//!   with the runtime's own call at any time after its last use (RMM's `DeletedStream`
//!   test). The cost is one event record per free on a foreign stream.
//!
//! A slot is re-classified whenever it is (re)assigned to a stream: a tracked stream
//! destroyed through the library has its slot recycled, so a later foreign stream that
//! gets the same handle value is classified afresh; and [`super::stream_created`] makes
//! resources forget a foreign stream whose handle a new tracked stream reuses (forgetting a
//! foreign stream only waits on its last recorded event).
//!
//! Only a tracked stream destroyed behind the library's back remains a hazard: if the
//! runtime then refuses to record an event on it with an invalid-handle error, the
//! resource synchronizes the device instead (counted by
//! [`super::dead_stream_fallbacks`]); on CUDA and HIP using a destroyed handle is undefined
//! behaviour, so such programs must destroy library-created streams through the library.
//!
//! # Counters
//! [`StreamRegistry::order_after`] counts one steal per call between two streams, and the
//! event it records, the wait it makes or the device synchronization it falls back to;
//! [`StreamRegistry::refresh`] counts the events recorded on foreign streams (see
//! [`crate::counters`]).

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::counters::{bump, Counter};
use crate::error::{Error, Result};
use crate::fast_map::FastMap;
use crate::runtime::{DeviceId, Event, Runtime, RuntimeErrorKind, Stream};

/// Identifies a stream for the free lists: the raw handle, plus the thread for the
/// per-thread default stream (0 otherwise).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) struct StreamKey {
    raw: usize,
    thread: usize,
}

impl StreamKey {
    /// The raw value every thread's per-thread default stream is keyed under.
    const PER_THREAD_RAW: usize = 2;

    /// Thread `thread`'s per-thread default stream.
    fn per_thread(thread: usize) -> StreamKey {
        StreamKey {
            raw: Self::PER_THREAD_RAW,
            thread,
        }
    }

    /// Another thread's per-thread default stream.
    fn of_another_thread(&self) -> bool {
        self.raw == Self::PER_THREAD_RAW && self.thread != thread_number()
    }
}

/// A small process-unique number for the calling thread (std's `ThreadId::as_u64` is
/// unstable). Starts at 1 so that 0 means "not a per-thread key".
pub(crate) fn thread_number() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(1);
    thread_local! {
        static ME: Cell<usize> = const { Cell::new(0) };
    }
    ME.with(|me| {
        if me.get() == 0 {
            me.set(NEXT.fetch_add(1, Ordering::Relaxed));
        }
        me.get()
    })
}

/// The free-list key of `stream` as seen from the calling thread.
pub(crate) fn stream_key(stream: Stream) -> StreamKey {
    if stream.is_default() {
        StreamKey { raw: 0, thread: 0 }
    } else if stream.is_per_thread_default() {
        StreamKey::per_thread(thread_number())
    } else {
        StreamKey {
            raw: stream.0,
            thread: 0,
        }
    }
}

/// A raw handle no stream has: the unset value of [`StreamRegistry`]'s one-entry cache. (Not
/// the per-thread default stream's handle: a first lookup of that stream would then hit the
/// empty cache and get slot 0 before any slot exists.)
const NO_STREAM: usize = usize::MAX;

/// One stream a resource has seen.
#[derive(Debug)]
pub(crate) struct StreamSlot {
    /// The handle to record events on (DEFAULT for both default keys).
    pub stream: Stream,
    /// The key this slot was created for.
    pub key: StreamKey,
    /// Created on the first cross-stream take from this stream (tracked), or on the first
    /// free on it (foreign).
    event: Option<Event>,
    /// Not tracked (see the module docs): the event is recorded at each free on the stream
    /// and the stream is never touched by another stream's operation.
    foreign: bool,
    /// The events of the slot's free epochs ([`StreamRegistry::record_epoch`]), epoch `k`
    /// on event `k % EPOCH_EVENTS`; apart from `event`, which
    /// [`StreamRegistry::order_after`] re-records at any time.
    epochs: [Option<Event>; EPOCH_EVENTS],
}

/// Epoch events a slot may have outstanding (see [`StreamRegistry::record_epoch`]): the
/// stream keeps recording epochs while the device is still behind on the last few.
pub(crate) const EPOCH_EVENTS: usize = 4;

/// The slot of a registry made by [`StreamRegistry::with_ready_slot`] that stands for no
/// stream: memory every stream may use without an event ("ready" memory).
pub(crate) const READY: u32 = 0;

/// The streams a resource has seen, each with a dense index (`u32`) that the resource uses
/// to index its own per-stream free lists. Slots are never removed (their index stays
/// valid); a forgotten stream's slot is simply empty and loses its event.
pub(crate) struct StreamRegistry {
    rt: &'static dyn Runtime,
    device: DeviceId,
    index: FastMap<StreamKey, u32>,
    slots: Vec<StreamSlot>,
    /// The raw handle last looked up and its slot: consecutive operations mostly use one
    /// stream, which then costs a compare instead of a hash lookup. Never the per-thread
    /// stream (its slot depends on the calling thread); [`NO_STREAM`] when unset.
    last_raw: usize,
    last_slot: u32,
    /// Slots of forgotten streams, empty and reused for the next new stream (so a program
    /// that creates and destroys streams in a loop does not grow the resource's lists).
    recycled: Vec<u32>,
}

impl std::fmt::Debug for StreamRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamRegistry")
            .field("device", &self.device)
            .field("slots", &self.slots)
            .finish()
    }
}

impl StreamRegistry {
    /// An empty registry over `rt`, for error messages about `device`.
    pub fn new(rt: &'static dyn Runtime, device: DeviceId) -> Self {
        StreamRegistry {
            rt,
            device,
            index: FastMap::default(),
            slots: Vec::new(),
            last_raw: NO_STREAM,
            last_slot: 0,
            recycled: Vec::new(),
        }
    }

    /// A registry whose slot [`READY`] (the first) stands for no stream: the caller keeps
    /// lists for it from the start. Taking its memory needs no ordering
    /// ([`order_after`](Self::order_after) does nothing for it) and giving it back in stream
    /// order uses the default stream.
    pub fn with_ready_slot(rt: &'static dyn Runtime, device: DeviceId) -> Self {
        let mut r = Self::new(rt, device);
        // A key no stream has (per-thread keys have raw 2; the others thread 0), and not in
        // the index: no lookup ever finds this slot.
        r.slots.push(StreamSlot {
            stream: Stream::DEFAULT,
            key: StreamKey {
                raw: 0,
                thread: usize::MAX,
            },
            event: None,
            foreign: false,
            epochs: [None; EPOCH_EVENTS],
        });
        r
    }

    /// Records the event of slot `s`'s `epoch` on its stream: once it has completed, memory
    /// freed on the stream before this call is safe on every stream. At most
    /// [`EPOCH_EVENTS`] epochs of a slot may be outstanding (each has its own event). Call only during an
    /// operation on that stream (which is then alive, even if foreign). `false` when no
    /// event could be recorded (logged; the memory then simply stays with its stream).
    pub fn record_epoch(&mut self, s: u32, epoch: u16) -> bool {
        // Its handle would name the caller's own per-thread stream here.
        if self.slots[s as usize].of_another_thread() {
            return false;
        }
        let Some(event) = self.epoch_event(s, epoch) else {
            return false;
        };
        let stream = self.slots[s as usize].stream;
        match self.rt.event_record(event, stream) {
            Ok(()) => {
                bump(Counter::EventsRecorded);
                true
            }
            Err(e) => {
                log::debug!(
                    "cannot record an epoch event on stream {:#x}: {e}",
                    stream.0
                );
                false
            }
        }
    }

    /// The event of slot `s`'s `epoch` (made the first time; `None`, logged, when the
    /// runtime cannot make one).
    fn epoch_event(&mut self, s: u32, epoch: u16) -> Option<Event> {
        let k = epoch as usize % EPOCH_EVENTS;
        if let Some(e) = self.slots[s as usize].epochs[k] {
            return Some(e);
        }
        match self.rt.event_create() {
            Ok(e) => {
                self.slots[s as usize].epochs[k] = Some(e);
                Some(e)
            }
            Err(e) => {
                log::debug!("cannot create an epoch event: {e}");
                None
            }
        }
    }

    /// Whether the work before every free on slot `s` has completed, asked without
    /// waiting: always for [`READY`]; for a foreign stream through its last recorded event
    /// (the stream itself may be gone); never for another thread's per-thread default
    /// stream (its handle names the asking thread's stream here); for any other stream by
    /// a query. An error counts as not done.
    pub fn frees_done(&self, s: u32) -> bool {
        let slot = &self.slots[s as usize];
        if self.is_ready_slot(s) {
            return true;
        }
        if slot.foreign {
            return slot
                .event
                .is_some_and(|e| self.rt.event_query(e).unwrap_or(false));
        }
        !slot.of_another_thread() && self.rt.stream_query(slot.stream).unwrap_or(false)
    }

    /// Whether slot `s`'s stream may be named from the calling thread: not a foreign
    /// stream (it may be gone) and not another thread's per-thread default stream (its
    /// handle names the caller's own here). Work for the others goes on the default stream,
    /// ordered after them ([`order_after`](Self::order_after)).
    pub fn nameable(&self, s: u32) -> bool {
        let slot = &self.slots[s as usize];
        !slot.foreign && !slot.of_another_thread()
    }

    /// Whether the event of slot `s`'s recorded `epoch` has completed (a query, no wait;
    /// an error counts as not complete).
    pub fn epoch_done(&self, s: u32, epoch: u16) -> bool {
        match self.slots[s as usize].epochs[epoch as usize % EPOCH_EVENTS] {
            Some(e) => self.rt.event_query(e).unwrap_or(false),
            None => false,
        }
    }

    /// The runtime the registry records events with.
    pub fn runtime(&self) -> &'static dyn Runtime {
        self.rt
    }

    /// The device for error messages.
    pub fn device(&self) -> DeviceId {
        self.device
    }

    /// The slot index of `stream`, and whether it was just created (then the caller must
    /// grow its per-stream lists to match; a recycled slot is not new: its lists exist and
    /// are empty). Allocates only the first time a stream is seen.
    #[inline(always)]
    pub fn slot(&mut self, stream: Stream) -> (u32, bool) {
        if stream.0 == self.last_raw {
            return (self.last_slot, false);
        }
        self.slot_lookup(stream)
    }

    /// As [`slot`](Self::slot), with the per-thread default stream taken as thread
    /// `thread`'s ([`thread_number`]), not the caller's.
    pub fn slot_of_thread(&mut self, stream: Stream, thread: usize) -> (u32, bool) {
        if stream.is_per_thread_default() {
            self.slot_keyed(stream, StreamKey::per_thread(thread))
        } else {
            self.slot(stream)
        }
    }

    #[inline(never)]
    fn slot_lookup(&mut self, stream: Stream) -> (u32, bool) {
        self.slot_keyed(stream, stream_key(stream))
    }

    fn slot_keyed(&mut self, stream: Stream, key: StreamKey) -> (u32, bool) {
        if let Some(&i) = self.index.get(&key) {
            if !stream.is_per_thread_default() {
                self.last_raw = stream.0;
                self.last_slot = i;
            }
            return (i, false);
        }
        let stream = if stream.is_default() {
            Stream::DEFAULT
        } else {
            stream
        };
        // Classified once per slot assignment, never per operation.
        let foreign = !super::stream_lifetime::is_tracked(stream);
        let (i, new) = match self.recycled.pop() {
            Some(i) => {
                // Keep the event (events are not tied to a stream).
                let slot = &mut self.slots[i as usize];
                slot.stream = stream;
                slot.key = key;
                slot.foreign = foreign;
                (i, false)
            }
            None => {
                self.slots.push(StreamSlot {
                    stream,
                    key,
                    event: None,
                    foreign,
                    epochs: [None; EPOCH_EVENTS],
                });
                (self.slots.len() as u32 - 1, true)
            }
        };
        self.index.insert(key, i);
        if !stream.is_per_thread_default() {
            self.last_raw = stream.0;
            self.last_slot = i;
        }
        (i, new)
    }

    /// The slot index of `stream` if it was seen before.
    pub fn find(&self, stream: Stream) -> Option<u32> {
        self.index.get(&stream_key(stream)).copied()
    }

    /// The slot at `i`.
    pub fn get(&self, i: u32) -> &StreamSlot {
        &self.slots[i as usize]
    }

    /// Whether slot `i` is the [`READY`] slot of a registry made with
    /// [`with_ready_slot`](Self::with_ready_slot).
    #[inline]
    pub fn is_ready_slot(&self, i: u32) -> bool {
        self.slots[i as usize].key.thread == usize::MAX
    }

    /// Call after memory was put on slot `s`'s free list by an operation on its stream (a
    /// free, a growth): for a foreign stream, records the slot's event now, while the
    /// stream is certainly alive, so that it covers everything on the list. Nothing for a
    /// tracked stream (no runtime call, no lock, no allocation).
    #[inline(always)]
    pub fn refresh(&mut self, s: u32) {
        if self.slots[s as usize].foreign {
            self.record_foreign(s);
        }
    }

    /// Records foreign slot `s`'s event on its stream. A failure is logged and leaves the
    /// slot without an event, so a later take from it synchronizes the device instead of
    /// trusting a stale record (the free itself has succeeded).
    #[inline(never)]
    fn record_foreign(&mut self, s: u32) {
        let rt = self.rt;
        let slot = &mut self.slots[s as usize];
        let event = match slot.event {
            Some(e) => e,
            None => match rt.event_create() {
                Ok(e) => {
                    slot.event = Some(e);
                    e
                }
                Err(e) => {
                    log::warn!(
                        "cannot create an event for stream {:#x}: {e}",
                        slot.stream.0
                    );
                    return;
                }
            },
        };
        match rt.event_record(event, slot.stream) {
            Ok(()) => {
                bump(Counter::EventsRecorded);
                bump(Counter::ForeignRecords);
            }
            Err(e) => {
                log::warn!(
                    "cannot record an event on stream {:#x} after a free: {e}; a later take \
                     of its memory by another stream synchronizes the device",
                    slot.stream.0
                );
                slot.event = None;
                let _ = rt.event_destroy(event);
            }
        }
    }

    /// Orders all work enqueued from now on on slot `waiter` after everything already
    /// enqueued on slot `source`: records `source`'s event and makes `waiter` wait on it.
    /// Memory freed on `source` is then safe to use on `waiter`.
    ///
    /// A foreign `source` is not touched: its event was recorded at its last free (see
    /// [`refresh`](Self::refresh)). A foreign `waiter` (the stream of the calling
    /// operation, so alive) gets its own event re-recorded after the wait, so that it
    /// covers the memory it is about to receive.
    ///
    /// Returns `true` when the device was synchronized instead (another thread's
    /// per-thread stream, a foreign stream whose last record failed, or a tracked `source`
    /// stream destroyed behind the library's back: see the module docs): then *all* of
    /// `source`'s free memory is safe to use anywhere, and the caller should move all of it
    /// (so a dead stream is not synchronized for again).
    pub fn order_after(&mut self, waiter: u32, source: u32) -> Result<bool> {
        if waiter == source || (source == READY && self.is_ready_slot(source)) {
            return Ok(false);
        }
        // Counted here for the pool and the fixed-size resource, whose callers then move a
        // block or a whole list (crate::counters).
        bump(Counter::Steals);
        let src = &self.slots[source as usize];
        // Another thread's per-thread stream cannot be named from here: wait for the device.
        if src.of_another_thread() {
            return self.synchronize_device();
        }
        let src_stream = src.stream;
        let event = if src.foreign {
            // Recorded at the stream's last free: never touch a foreign stream here.
            match src.event {
                Some(e) => e,
                None => return self.synchronize_device(),
            }
        } else {
            let e = match src.event {
                Some(e) => e,
                None => {
                    let e = self
                        .rt
                        .event_create()
                        .map_err(|e| Error::runtime(self.device, e))?;
                    self.slots[source as usize].event = Some(e);
                    e
                }
            };
            if !self.record_tracked(e, src_stream)? {
                return self.synchronize_device();
            }
            e
        };
        self.wait_for(waiter, event)?;
        Ok(false)
    }

    /// Like [`order_after`](Self::order_after), but with `source`'s epoch `epoch` event
    /// (recorded now on `source`), so that the one event both orders `waiter` and, once it
    /// completes, makes `source`'s free memory ready for every stream: a stream that has
    /// stopped freeing records no epoch of its own, and without this every block taken
    /// from it cost a record and a wait. `Ok(false)` when `source` cannot take an epoch
    /// from here (a foreign stream, another thread's per-thread stream, no event, or a
    /// stream gone): the caller then uses [`order_after`](Self::order_after).
    pub fn order_after_epoch(&mut self, waiter: u32, source: u32, epoch: u16) -> Result<bool> {
        if waiter == source || self.is_ready_slot(source) || !self.nameable(source) {
            return Ok(false);
        }
        let src_stream = self.slots[source as usize].stream;
        let Some(event) = self.epoch_event(source, epoch) else {
            return Ok(false);
        };
        if !self.record_tracked(event, src_stream)? {
            return Ok(false);
        }
        bump(Counter::Steals);
        self.wait_for(waiter, event)?;
        Ok(true)
    }

    /// Makes slot `waiter`'s stream wait for `event` (just recorded on the source), and
    /// re-records a foreign waiter's own event so that it covers what it receives.
    fn wait_for(&mut self, waiter: u32, event: Event) -> Result<()> {
        if self.slots[waiter as usize].of_another_thread() {
            // Its handle would name the caller's own per-thread stream: wait on the host.
            self.rt
                .event_synchronize(event)
                .map_err(|e| Error::runtime(self.device, e))?;
            bump(Counter::EventsWaited);
            return Ok(());
        }
        let wait_stream = self.slots[waiter as usize].stream;
        self.rt
            .stream_wait_event(wait_stream, event)
            .map_err(|e| Error::runtime(self.device, e))?;
        bump(Counter::EventsWaited);
        self.refresh(waiter);
        Ok(())
    }

    /// Records `event` on the tracked stream `stream`; `false` when the runtime says the
    /// handle is gone (destroyed behind the library's back: the caller synchronizes the
    /// device instead).
    fn record_tracked(&self, event: Event, stream: Stream) -> Result<bool> {
        match self.rt.event_record(event, stream) {
            Ok(()) => {
                bump(Counter::EventsRecorded);
                Ok(true)
            }
            Err(e) if e.kind == RuntimeErrorKind::InvalidHandle => {
                log::debug!(
                    "stream {:#x} is gone (event record failed: {e}); synchronizing device {}",
                    stream.0,
                    self.device
                );
                super::stream_lifetime::count_fallback();
                Ok(false)
            }
            Err(e) => Err(Error::runtime(self.device, e)),
        }
    }

    fn synchronize_device(&self) -> Result<bool> {
        bump(Counter::SyncFallbacks);
        self.rt
            .device_synchronize()
            .map_err(|e| Error::runtime(self.device, e))?;
        Ok(true)
    }

    /// Forgets slot `i` (not the default stream's), whose free memory the caller has just
    /// moved elsewhere after [`order_after`](Self::order_after): its stream is never
    /// touched again, and the slot (with its event and empty lists) serves the next new
    /// stream.
    pub fn recycle(&mut self, i: u32) {
        let key = self.slots[i as usize].key;
        debug_assert!(key != stream_key(Stream::DEFAULT));
        self.index.remove(&key);
        if self.last_slot == i {
            self.last_raw = NO_STREAM;
        }
        self.slots[i as usize].stream = Stream::PER_THREAD;
        self.slots[i as usize].key = StreamKey {
            raw: usize::MAX,
            thread: 0,
        };
        self.recycled.push(i);
    }
}

impl StreamSlot {
    /// Another thread's per-thread default stream.
    fn of_another_thread(&self) -> bool {
        self.key.of_another_thread()
    }
}

/// A resource's per-stream free lists, indexed by the slots of its [`StreamRegistry`]
/// (the pool's and the fixed-size resource's): slot assignment and forgetting a stream
/// are the same for both.
pub(crate) trait PerStreamLists {
    /// The registry whose slots index the lists.
    fn registry(&mut self) -> &mut StreamRegistry;

    /// Adds the (empty) lists of a slot just created.
    fn push_lists(&mut self);

    /// Whether slot `slot`'s lists hold free memory.
    fn has_free(&self, slot: u32) -> bool;

    /// Moves every free block of slot `from` to slot `to`. The caller has ordered `to`
    /// after `from` (or synchronized `from`).
    fn move_free(&mut self, from: u32, to: u32);

    /// The slot of `stream`, creating its lists the first time.
    #[inline(always)]
    fn slot(&mut self, stream: Stream) -> u32 {
        let (s, new) = self.registry().slot(stream);
        if new {
            self.push_lists();
        }
        s
    }

    /// The slot of `stream` as thread `thread` names it (see
    /// [`StreamRegistry::slot_of_thread`]), creating its lists the first time.
    // Inlinable where its caller is (a pool's fronts' blocks going back to their
    // structure), not only beside the structure's type.
    #[inline]
    fn slot_of_thread(&mut self, stream: Stream, thread: usize) -> u32 {
        let (s, new) = self.registry().slot_of_thread(stream, thread);
        if new {
            self.push_lists();
        }
        s
    }

    /// Stops referring to `stream`: the default stream is ordered after it, its free
    /// blocks move to the default stream and its slot is recycled.
    fn forget(&mut self, stream: Stream) -> Result<()> {
        let Some(t) = self.registry().find(stream) else {
            return Ok(());
        };
        let d = self.slot(Stream::DEFAULT);
        if d == t {
            return Ok(());
        }
        if self.has_free(t) {
            self.registry().order_after(d, t)?;
            self.move_free(t, d);
        }
        self.registry().recycle(t);
        Ok(())
    }
}

impl Drop for StreamRegistry {
    fn drop(&mut self) {
        if crate::runtime::process_is_exiting() {
            return;
        }
        for slot in &mut self.slots {
            let epochs = std::mem::take(&mut slot.epochs);
            for e in std::iter::once(slot.event.take()).chain(epochs).flatten() {
                // Nothing useful to do with a failure while dropping.
                let _ = self.rt.event_destroy(e);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::StreamFlags;

    fn rt() -> &'static dyn Runtime {
        crate::mr::tests::init()
    }

    #[test]
    fn a_per_thread_stream_first_gets_a_new_slot() {
        // Regression: the one-entry cache once started out holding the per-thread stream's
        // handle, so a registry whose first stream was the per-thread one answered slot 0,
        // not yet created (found by the C ABI fuzzer through a fresh fixed-size shard).
        let mut r = StreamRegistry::new(rt(), 0);
        assert_eq!(r.slot(Stream::PER_THREAD), (0, true));
        assert_eq!(r.slot(Stream::PER_THREAD), (0, false));
        assert_eq!(r.slot(Stream::DEFAULT), (1, true));
        assert_eq!(r.slot(Stream::PER_THREAD), (0, false));
    }

    #[test]
    fn order_after_and_refresh_are_counted() {
        let rt = rt();
        let _serial = crate::counters::TEST_SERIAL.lock();
        let foreign = rt
            .stream_create(StreamFlags { non_blocking: true })
            .unwrap();
        let before = crate::counters::snapshot();
        {
            let mut reg = StreamRegistry::new(rt, 0);
            let (d, _) = reg.slot(Stream::DEFAULT);
            let (t, _) = reg.slot(Stream::PER_THREAD);
            let (f, _) = reg.slot(foreign);
            assert!(!reg.nameable(f) && reg.nameable(t) && reg.nameable(d));
            // Tracked source: a steal, an event recorded on it, a wait on the default stream.
            assert!(!reg.order_after(d, t).unwrap());
            // Same stream: nothing.
            assert!(!reg.order_after(d, d).unwrap());
            // A free on a foreign stream records its event.
            reg.refresh(f);
            // Foreign source: a steal and a wait, no record on the foreign stream.
            assert!(!reg.order_after(d, f).unwrap());
        }
        let c = crate::counters::snapshot().since(&before);
        // Other tests count in parallel: lower bounds.
        assert!(c.steals >= 2, "{c:?}");
        assert!(c.events_recorded >= 2, "{c:?}");
        assert!(c.foreign_records >= 1, "{c:?}");
        assert!(c.events_waited >= 2, "{c:?}");
        assert!(c.runtime_event_record >= 2, "{c:?}");
        assert!(c.runtime_stream_wait_event >= 2, "{c:?}");
        rt.stream_destroy(foreign).unwrap();
    }

    #[test]
    fn default_and_legacy_share_a_key_per_thread_differs_by_thread() {
        assert_eq!(stream_key(Stream::DEFAULT), stream_key(Stream::LEGACY));
        assert_ne!(stream_key(Stream::DEFAULT), stream_key(Stream::PER_THREAD));
        let here = stream_key(Stream::PER_THREAD);
        assert_eq!(here, stream_key(Stream::PER_THREAD));
        let there = std::thread::spawn(|| stream_key(Stream::PER_THREAD))
            .join()
            .unwrap();
        assert_ne!(here, there);
        assert_eq!(stream_key(Stream(0x1234)), stream_key(Stream(0x1234)));
    }
}
