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
//! A resource records events on a stream T only while T's free list holds blocks. So the
//! rule (RMM's as well): synchronize a stream before destroying it and free nothing on it
//! afterwards, **and** before destroying it hand its free blocks back with the resource's
//! `forget_stream` (which synchronizes it and moves its free blocks to the default stream)
//! or `release`. Streams that never freed memory to a resource need no care.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::{Error, Result};
use crate::runtime::{DeviceId, Event, Runtime, Stream};

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
        }
    }

    /// The device for error messages.
    pub fn device(&self) -> DeviceId {
        self.device
    }

    /// The slot index of `stream`, and whether it was just created (then the caller must
    /// grow its per-stream lists to match). Allocates only the first time a stream is seen.
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
        let i = self.slots.len() as u32;
        let stream = if stream.is_default() {
            Stream::DEFAULT
        } else {
            stream
        };
        self.slots.push(StreamSlot {
            stream,
            key,
            event: None,
        });
        self.index.insert(key, i);
        if !stream.is_per_thread_default() {
            self.last_raw = stream.0;
            self.last_slot = i;
        }
        (i, true)
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
    pub fn order_after(&mut self, waiter: u32, source: u32) -> Result<()> {
        if waiter == source {
            return Ok(());
        }
        let src = &self.slots[source as usize];
        // Another thread's per-thread stream cannot be named from here: wait for the device.
        if src.key.raw == 2 && src.key.thread != thread_number() {
            return self
                .rt
                .device_synchronize()
                .map_err(|e| Error::runtime(self.device, e));
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
        self.rt
            .event_record(event, src_stream)
            .map_err(|e| Error::runtime(self.device, e))?;
        self.rt
            .stream_wait_event(wait_stream, event)
            .map_err(|e| Error::runtime(self.device, e))
    }

    /// Synchronizes slot `i`'s stream and destroys its event: after this the stream may be
    /// destroyed by its owner; the caller moves the slot's free blocks elsewhere.
    pub fn forget(&mut self, i: u32) -> Result<()> {
        let slot = &mut self.slots[i as usize];
        if slot.key.raw == 2 && slot.key.thread != thread_number() {
            self.rt
                .device_synchronize()
                .map_err(|e| Error::runtime(self.device, e))?;
        } else {
            self.rt
                .stream_synchronize(slot.stream)
                .map_err(|e| Error::runtime(self.device, e))?;
        }
        if let Some(e) = slot.event.take() {
            self.rt
                .event_destroy(e)
                .map_err(|e| Error::runtime(self.device, e))?;
        }
        Ok(())
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
