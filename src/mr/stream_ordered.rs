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
//! # Destroyed streams
//! A resource records events on a stream T only while T's free list holds blocks, and it
//! does so lazily (in a later allocation on another stream), so T must not be a dead
//! handle by then. Every resource with per-stream state registers itself with
//! [`super::stream_lifetime`]; destroying a stream through the library
//! (`rmm_stream_destroy`, which `rmm::cuda_stream` and `rmm::cuda_stream_pool` use, or
//! the interposer's `cudaStreamDestroy`/`hipStreamDestroy`) first makes each of them
//! *forget* it: T's event is recorded while T is still alive, the default stream waits on
//! it (no host synchronization), T's free blocks move to the default stream's list and
//! T's slot is recycled for the next new stream. Rust code that destroys streams itself
//! calls [`super::stream_destroyed`] (or a resource's `forget_stream`) first.
//!
//! A stream destroyed behind the library's back (user code calling `cudaStreamDestroy`
//! directly) is detected only if the runtime then refuses to record an event on it with an
//! invalid-handle error: the resource then synchronizes the device instead (the blocks'
//! work is complete after that) and moves *all* of that stream's free blocks, so the
//! allocation still succeeds. On CUDA and HIP a destroyed handle is undefined behaviour to
//! use and may even name a new stream (the event would then capture the wrong stream's
//! work), so such programs should still destroy streams through rmm or call
//! [`super::stream_destroyed`] first.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::{Error, Result};
use crate::runtime::{DeviceId, Event, Runtime, RuntimeErrorKind, Stream};

/// A fast hasher for the small integer keys of the hot path (addresses, stream keys):
/// std's SipHash is DoS-resistant but costs more than the rest of a pool operation, and
/// these keys are not attacker-controlled. FxHash-style mixing plus a final fold, so that
/// both the low bits (bucket index) and the high bits (control byte) vary.
#[derive(Default, Clone, Copy)]
pub(crate) struct FastHasher(u64);

impl std::hash::Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(5) ^ x).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 29)
    }
}

/// A `HashMap` with [`FastHasher`].
pub(crate) type FastMap<K, V> = HashMap<K, V, std::hash::BuildHasherDefault<FastHasher>>;

/// A `HashSet` with [`FastHasher`].
pub(crate) type FastSet<K> =
    std::collections::HashSet<K, std::hash::BuildHasherDefault<FastHasher>>;

/// Identifies a stream for the free lists: the raw handle, plus the thread for the
/// per-thread default stream (0 otherwise).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) struct StreamKey {
    raw: usize,
    thread: usize,
}

/// A small process-unique number for the calling thread (std's `ThreadId::as_u64` is
/// unstable). Starts at 1 so that 0 means "not a per-thread key".
fn thread_number() -> usize {
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
        StreamKey {
            raw: 2,
            thread: thread_number(),
        }
    } else {
        StreamKey {
            raw: stream.0,
            thread: 0,
        }
    }
}

/// One stream a resource has seen.
#[derive(Debug)]
pub(crate) struct StreamSlot {
    /// The handle to record events on (DEFAULT for both default keys).
    pub stream: Stream,
    /// The key this slot was created for.
    pub key: StreamKey,
    /// Created on the first cross-stream take from this stream.
    event: Option<Event>,
}

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
    /// stream (its slot depends on the calling thread); starts as that value, so unset.
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
            last_raw: Stream::PER_THREAD.0,
            last_slot: 0,
            recycled: Vec::new(),
        }
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

    #[inline(never)]
    fn slot_lookup(&mut self, stream: Stream) -> (u32, bool) {
        let key = stream_key(stream);
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
        let (i, new) = match self.recycled.pop() {
            Some(i) => {
                // Keep the event (events are not tied to a stream).
                let slot = &mut self.slots[i as usize];
                slot.stream = stream;
                slot.key = key;
                (i, false)
            }
            None => {
                self.slots.push(StreamSlot {
                    stream,
                    key,
                    event: None,
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

    /// Orders all work enqueued from now on on slot `waiter` after everything already
    /// enqueued on slot `source`: records `source`'s event and makes `waiter` wait on it.
    /// Memory freed on `source` is then safe to use on `waiter`.
    ///
    /// Returns `true` when the device was synchronized instead (another thread's
    /// per-thread stream, or a `source` stream destroyed behind the library's back: see
    /// the module docs): then *all* of `source`'s free memory is safe to use anywhere, and
    /// the caller should move all of it (so a dead stream is not synchronized for again).
    pub fn order_after(&mut self, waiter: u32, source: u32) -> Result<bool> {
        if waiter == source {
            return Ok(false);
        }
        let src = &self.slots[source as usize];
        // Another thread's per-thread stream cannot be named from here: wait for the device.
        if src.key.raw == 2 && src.key.thread != thread_number() {
            return self.synchronize_device();
        }
        let src_stream = src.stream;
        let event = match self.slots[source as usize].event {
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
        let wait_stream = self.slots[waiter as usize].stream;
        match self.rt.event_record(event, src_stream) {
            Ok(()) => {}
            // The stream was destroyed without telling us: its work is done once the
            // device is idle.
            Err(e) if e.kind == RuntimeErrorKind::InvalidHandle => {
                log::debug!(
                    "stream {:#x} is gone (event record failed: {e}); synchronizing device {}",
                    src_stream.0,
                    self.device
                );
                return self.synchronize_device();
            }
            Err(e) => return Err(Error::runtime(self.device, e)),
        }
        self.rt
            .stream_wait_event(wait_stream, event)
            .map_err(|e| Error::runtime(self.device, e))?;
        Ok(false)
    }

    fn synchronize_device(&self) -> Result<bool> {
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
            self.last_raw = Stream::PER_THREAD.0;
        }
        self.slots[i as usize].stream = Stream::PER_THREAD;
        self.slots[i as usize].key = StreamKey {
            raw: usize::MAX,
            thread: 0,
        };
        self.recycled.push(i);
    }
}

impl Drop for StreamRegistry {
    fn drop(&mut self) {
        if crate::runtime::process_is_exiting() {
            return;
        }
        for slot in &mut self.slots {
            if let Some(e) = slot.event.take() {
                // Nothing useful to do with a failure while dropping.
                let _ = self.rt.event_destroy(e);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
