//! The global arena: the free spans of the one upstream allocation, the live large
//! allocations served from it directly, and the bookkeeping that orders a span's next user
//! after the streams that released it (see the module docs of [`super`], "Stream safety").

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::runtime::{DeviceId, Event, Runtime, RuntimeErrorKind, Stream};

use super::heap::{Directory, Heap, PtrMap};
use super::local::ArenaCell;
use super::stream_lifetime;

/// Release records of destroyed streams kept before the oldest is waited for on the host,
/// so that the list (walked when a span is handed out) stays short.
const MAX_GONE_RELEASERS: usize = 256;

/// The stream of a release record whose stream was destroyed: matches no receiver (no
/// stream handle is `usize::MAX`).
pub(super) const GONE_STREAM: Stream = Stream(usize::MAX);

/// Who orders the use of memory: the stream work is enqueued on, plus, for the legacy
/// default stream, the thread whose arena (or large allocation) it is, since a thread
/// arena also serves that thread's per-thread default stream, which the legacy stream
/// orders with only through an operation enqueued on it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct OrderKey {
    /// [`Stream::LEGACY`] for both default streams and the per-thread default stream.
    pub stream: Stream,
    /// The thread (see `thread_number`) for the legacy
    /// family, 0 when no thread owns the memory; 0 for other streams.
    pub thread: usize,
    /// A receiver on a foreign stream (see [`super::super::stream_ordered`]): its handle
    /// may be reused by another stream at any time, so it is never remembered as having
    /// waited.
    pub foreign: bool,
}

impl OrderKey {
    /// The legacy family (both default streams, per-thread default streams) of `thread`.
    pub fn legacy(thread: usize) -> Self {
        OrderKey {
            stream: Stream::LEGACY,
            thread,
            foreign: false,
        }
    }

    /// A non-default stream.
    pub fn stream(stream: Stream, foreign: bool) -> Self {
        debug_assert!(!stream.is_default() && !stream.is_per_thread_default());
        OrderKey {
            stream,
            thread: 0,
            foreign,
        }
    }

    fn is_legacy(&self) -> bool {
        self.stream == Stream::LEGACY
    }
}

/// Releases of spans by one [`OrderKey`], not yet known to be complete on the device. The
/// event is recorded lazily: only when another receiver takes a span that this key
/// released (then one record covers every release so far), or when the stream is about to
/// be destroyed. A release itself makes no runtime call.
struct Releaser {
    key: OrderKey,
    /// The stream was destroyed (`key.stream` is [`GONE_STREAM`]): the event was recorded
    /// before, and is only waited on now.
    gone: bool,
    event: Option<Event>,
    /// The smallest release sequence number not known to be complete (0: none).
    out_min: u64,
    /// Spans were released since the event was last recorded.
    dirty: bool,
    /// Receivers already ordered after the current record (the legacy family as one).
    waited: Vec<OrderKey>,
}

/// A local arena named by the directory, without owning it: an arena is alive while it
/// holds a superblock (the resource's lists hold it until its last superblock is gone),
/// and its directory entries are removed, under the global lock, before its superblocks
/// go. So a pointer read from the directory under the global lock names a live arena.
#[derive(Clone, Copy)]
pub(super) struct OwnerPtr(*const ArenaCell);

impl Default for OwnerPtr {
    fn default() -> Self {
        OwnerPtr(std::ptr::null())
    }
}

// SAFETY: only dereferenced under the global lock, while the arena is alive (see above);
// `ArenaCell` itself is `Sync`.
unsafe impl Send for OwnerPtr {}

/// The global arena (behind the resource's global lock).
pub(super) struct Global {
    /// One region, the whole arena. A free span's tag is the sequence number of the latest
    /// release merged into it (0: never released).
    pub heap: Heap,
    /// Live large allocations: address → span descriptor.
    pub large: PtrMap,
    /// Superblocks: start → (end, owner), consulted only when a block is freed through an
    /// arena that does not own it.
    directory: Directory<OwnerPtr>,
    releasers: Vec<Releaser>,
    spare_events: Vec<Event>,
    /// Recorded on a foreign stream when a large allocation is freed on it.
    foreign_event: Option<Event>,
    next_seq: u64,
    /// Superblocks taken by and given back from local arenas.
    pub takes: u64,
    pub gives: u64,
    /// Large allocations served and freed.
    pub large_takes: u64,
    pub large_gives: u64,
    /// Runtime calls made to order spans: events recorded, waits queued, events queried,
    /// host synchronizations (for tests and the failure dump).
    pub calls: RuntimeCalls,
}

/// Runtime calls made by the global arena, by kind.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(super) struct RuntimeCalls {
    pub records: u64,
    pub waits: u64,
    pub queries: u64,
    pub syncs: u64,
}

impl Global {
    pub fn new(base: usize, size: usize) -> Self {
        let mut heap = Heap::new();
        heap.add_region(base, size, 0);
        Global {
            heap,
            large: PtrMap::default(),
            directory: Directory::default(),
            releasers: Vec::new(),
            spare_events: Vec::new(),
            foreign_event: None,
            next_seq: 0,
            takes: 0,
            gives: 0,
            large_takes: 0,
            large_gives: 0,
            calls: RuntimeCalls::default(),
        }
    }

    /// Records that `[start, end)` is a superblock of `owner`.
    pub fn register(&mut self, start: usize, end: usize, owner: &ArenaCell) {
        self.directory.insert(start, end, OwnerPtr(owner));
    }

    /// Forgets superblock `start` (before its span goes back: once free, another arena
    /// may take it and register the same start).
    pub fn unregister(&mut self, start: usize, end: usize) {
        let found = self.directory.remove(start, end);
        debug_assert!(found, "superblock {start:#x} was registered");
    }

    /// The arena owning the superblock that contains `p`.
    pub fn owner_of(&self, p: usize) -> Option<Arc<ArenaCell>> {
        let (_, _, owner) = self.directory.find(p)?;
        // SAFETY: see `OwnerPtr`: the entry is present and the global lock is held, so the
        // arena is alive.
        unsafe { &*owner.0 }.me.upgrade()
    }

    /// Release records whose work is not known to be complete (for the failure dump).
    pub fn outstanding(&self) -> usize {
        self.releasers.iter().filter(|r| r.out_min != 0).count()
    }

    fn new_event(&mut self, rt: &dyn Runtime, device: DeviceId) -> Result<Event> {
        match self.spare_events.pop() {
            Some(e) => Ok(e),
            None => rt.event_create().map_err(|e| Error::runtime(device, e)),
        }
    }

    /// Takes a span of `size` bytes (a multiple of 256) for `receiver`, making it wait for
    /// every release the span may contain. `None` when no free span is that large; on a
    /// runtime failure the span is put back.
    pub fn take(
        &mut self,
        size: usize,
        receiver: OrderKey,
        rt: &dyn Runtime,
        device: DeviceId,
    ) -> Result<Option<(usize, u32)>> {
        let Some(i) = self.heap.find_exhaustive(size, usize::MAX) else {
            return Ok(None);
        };
        let seq = self.heap.block(i).aux;
        let addr = self.heap.block(i).addr;
        self.heap.take(i, size);
        if seq > 0 {
            if let Err(e) = self.order(seq, receiver, rt, device) {
                self.heap.release(i, seq);
                return Err(e);
            }
        }
        Ok(Some((addr, i)))
    }

    /// Gives span `i` back, released by `key` (no runtime call).
    pub fn give(&mut self, i: u32, key: OrderKey) {
        debug_assert!(!key.foreign && key.stream != GONE_STREAM);
        self.next_seq += 1;
        let seq = self.next_seq;
        let r = match self.releasers.iter().position(|r| !r.gone && r.key == key) {
            Some(k) => &mut self.releasers[k],
            None => {
                self.releasers.push(Releaser {
                    key,
                    gone: false,
                    event: None,
                    out_min: 0,
                    dirty: false,
                    waited: Vec::new(),
                });
                self.releasers.last_mut().expect("just pushed")
            }
        };
        if r.out_min == 0 {
            r.out_min = seq;
        }
        r.dirty = true;
        self.heap.release(i, seq);
    }

    /// Orders `receiver` after every release with a sequence number up to `seq` that is
    /// not known to be complete (spans that merge keep the highest number, so this is
    /// conservative but never misses a release). A release by the receiver's own key is
    /// already in its order; releases by the legacy family only need a record on the
    /// legacy stream (made by the record itself) when the receiver is of that family too.
    fn order(
        &mut self,
        seq: u64,
        receiver: OrderKey,
        rt: &dyn Runtime,
        device: DeviceId,
    ) -> Result<()> {
        // A wait queued on the legacy stream orders every later operation of the legacy
        // family, whichever thread it serves: remembered as the family's.
        let waiter = if receiver.is_legacy() {
            OrderKey::legacy(0)
        } else {
            receiver
        };
        let mut k = 0;
        while k < self.releasers.len() {
            let r = &self.releasers[k];
            if r.out_min == 0 || r.out_min > seq || (!r.gone && r.key == receiver) {
                k += 1;
                continue;
            }
            let both_legacy = receiver.is_legacy() && r.key.is_legacy();
            if r.dirty {
                let event = match r.event {
                    Some(e) => e,
                    None => {
                        let e = self.new_event(rt, device)?;
                        self.releasers[k].event = Some(e);
                        e
                    }
                };
                let r = &mut self.releasers[k];
                self.calls.records += 1;
                match rt.event_record(event, r.key.stream) {
                    Ok(()) => {
                        r.dirty = false;
                        r.waited.clear();
                    }
                    // A tracked stream destroyed behind the library's back: wait for the
                    // whole device instead.
                    Err(e) if e.kind == RuntimeErrorKind::InvalidHandle => {
                        stream_lifetime::count_fallback();
                        self.calls.syncs += 1;
                        rt.device_synchronize()
                            .map_err(|e| Error::runtime(device, e))?;
                        r.dirty = false;
                        r.out_min = 0;
                        r.waited.clear();
                        k += 1;
                        continue;
                    }
                    Err(e) => return Err(Error::runtime(device, e)),
                }
                if both_legacy {
                    // The record on the legacy stream orders every later operation of the
                    // legacy family after the releases.
                    k += 1;
                    continue;
                }
            } else {
                if both_legacy || (!receiver.foreign && r.waited.contains(&waiter)) {
                    k += 1;
                    continue;
                }
                let event = r
                    .event
                    .expect("a clean releaser with releases was recorded");
                self.calls.queries += 1;
                if matches!(rt.event_query(event), Ok(true)) {
                    // Everything it released is done: nobody needs to wait for it again.
                    if r.gone {
                        let r = self.releasers.swap_remove(k);
                        self.spare_events.extend(r.event);
                    } else {
                        self.releasers[k].out_min = 0;
                        k += 1;
                    }
                    continue;
                }
            }
            self.calls.waits += 1;
            let r = &mut self.releasers[k];
            let event = r.event.expect("recorded above");
            match rt.stream_wait_event(receiver.stream, event) {
                Ok(()) => {
                    if !receiver.foreign {
                        r.waited.push(waiter);
                    }
                }
                // If the device-side wait cannot be queued, wait on the host instead.
                Err(e) => {
                    self.calls.syncs += 1;
                    if rt.event_synchronize(event).is_err() {
                        return Err(Error::runtime(device, e));
                    }
                }
            }
            k += 1;
        }
        Ok(())
    }

    /// Frees large allocation `i`, freed on a foreign `stream`: records an event there
    /// now (the stream may be destroyed right after) and makes the legacy stream wait on
    /// it; the span is then released by the legacy family.
    pub fn give_foreign(
        &mut self,
        i: u32,
        stream: Stream,
        rt: &dyn Runtime,
        device: DeviceId,
    ) -> Result<()> {
        let event = match self.foreign_event {
            Some(e) => Some(e),
            None => match self.new_event(rt, device) {
                Ok(e) => {
                    self.foreign_event = Some(e);
                    Some(e)
                }
                Err(_) => None,
            },
        };
        self.calls.records += 1;
        self.calls.waits += 1;
        let ordered = match event {
            Some(e) => rt
                .event_record(e, stream)
                .and_then(|()| rt.stream_wait_event(Stream::LEGACY, e))
                .is_ok(),
            None => false,
        };
        let mut result = Ok(());
        if !ordered {
            // The span is put back regardless, after the device is done with it.
            self.calls.syncs += 1;
            if let Err(e) = rt.device_synchronize() {
                result = Err(Error::runtime(device, e));
            }
        }
        self.give(i, OrderKey::legacy(0));
        result
    }

    /// `stream` (tracked, still alive) is about to be destroyed: records its pending
    /// releases on it now and keeps them as a destroyed stream's, which every receiver
    /// waits for (a new stream may reuse the handle). Receivers' memory of having waited is
    /// dropped for the same reason.
    pub fn forget(&mut self, stream: Stream, rt: &dyn Runtime, device: DeviceId) -> Result<()> {
        let mut result = Ok(());
        let mut k = 0;
        while k < self.releasers.len() {
            let r = &mut self.releasers[k];
            r.waited.retain(|w| w.stream != stream);
            if r.gone || r.key.stream != stream {
                k += 1;
                continue;
            }
            if r.dirty {
                let event = match r.event {
                    Some(e) => Ok(e),
                    None => match self.spare_events.pop() {
                        Some(e) => Ok(e),
                        None => rt.event_create(),
                    },
                };
                self.calls.records += 1;
                let r = &mut self.releasers[k];
                let recorded = event.and_then(|e| {
                    r.event = Some(e);
                    rt.event_record(e, stream)
                });
                r.dirty = false;
                if let Err(e) = recorded {
                    if e.kind == RuntimeErrorKind::InvalidHandle {
                        stream_lifetime::count_fallback();
                    }
                    self.calls.syncs += 1;
                    if let Err(e) = rt.device_synchronize() {
                        result = Err(Error::runtime(device, e));
                    }
                    r.out_min = 0;
                }
            }
            let r = &mut self.releasers[k];
            if r.out_min == 0 {
                let r = self.releasers.swap_remove(k);
                self.spare_events.extend(r.event);
                continue;
            }
            r.gone = true;
            r.key.stream = GONE_STREAM;
            k += 1;
        }
        // Keep the list short: wait for the oldest destroyed streams' releases.
        while self.releasers.iter().filter(|r| r.gone).count() > MAX_GONE_RELEASERS {
            let k = self
                .releasers
                .iter()
                .enumerate()
                .filter(|(_, r)| r.gone)
                .min_by_key(|(_, r)| r.out_min)
                .map(|(k, _)| k)
                .expect("a gone releaser");
            let r = self.releasers.swap_remove(k);
            if let Some(e) = r.event {
                self.calls.syncs += 1;
                let _ = rt.event_synchronize(e);
                self.spare_events.push(e);
            }
        }
        result
    }

    /// Destroys every event (the resource is being dropped).
    pub fn destroy_events(&mut self, rt: &dyn Runtime) {
        let events = self
            .releasers
            .drain(..)
            .filter_map(|r| r.event)
            .chain(self.spare_events.drain(..))
            .chain(self.foreign_event.take());
        for e in events {
            let _ = rt.event_destroy(e);
        }
    }
}
