//! Deferred reuse: how the default mode (`RMM_PRELOAD_SYNC=1`) keeps `cudaFree`/`hipFree`
//! safe without synchronizing the device in every free.
//!
//! `cudaFree` waits for all work on the device before it frees, so a program may free a
//! block while kernels that use it are still queued. We must not hand such a block out again
//! until that work is done. Instead of waiting in free, a freed block goes into an *open*
//! list. The open list is later *sealed*: one event is recorded on the legacy default stream
//! (which orders after all work in blocking streams and per-thread default streams) and on
//! every live non-blocking stream of the device (which the legacy stream does not order
//! with; we learn about them by interposing `*StreamCreateWithFlags`/`WithPriority`). The
//! sealed batch goes back to the pool once all its events have completed — at that point all
//! work submitted before the frees has finished, which is the guarantee `cudaFree` gives.
//! Sealing happens in a later allocation, which is after the frees in program order, so
//! the events also come after the frees: later than needed, never earlier.
//!
//! When an allocation fails, every pending batch is waited for and released, and the
//! allocation is retried, so deferral never causes an out-of-memory the program would not
//! have seen. With more than [`MAX_TRACKED_STREAMS`] live non-blocking streams on a device,
//! sealing synchronizes the device instead (correct, but slower).

use std::collections::VecDeque;

use parking_lot::Mutex;
use rmm::runtime::{DeviceId, Event, Runtime};
use rmm::Stream;

/// Above this many live non-blocking streams on a device, sealing synchronizes the device
/// instead of recording one event per stream.
pub(crate) const MAX_TRACKED_STREAMS: usize = 8;
/// Seal the open list once it holds this many blocks …
const SEAL_COUNT: usize = 8;
/// … or this many bytes.
const SEAL_BYTES: usize = 32 << 20;

/// One freed block waiting for the work that may use it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Block {
    pub ptr: usize,
    pub size: usize,
    pub managed: bool,
}

/// Blocks freed before a set of events was recorded.
struct Batch {
    blocks: Vec<Block>,
    events: Vec<Event>,
}

/// The deferred blocks of one device.
#[derive(Default)]
pub(crate) struct Deferred {
    open: Vec<Block>,
    open_bytes: usize,
    sealed: VecDeque<Batch>,
    /// Bytes in `open` and `sealed` (what MemGetInfo counts as obtainable).
    pending_bytes: usize,
    spare_events: Vec<Event>,
    spare_blocks: Vec<Vec<Block>>,
    spare_event_lists: Vec<Vec<Event>>,
    /// What the machinery did (for `RMM_PRELOAD_STATS`).
    pub counts: Counts,
}

/// Counters of the deferral machinery (for `RMM_PRELOAD_STATS`).
#[derive(Default, Debug, Clone, Copy)]
pub(crate) struct Counts {
    pub seals: u64,
    pub device_syncs: u64,
    pub waits: u64,
}

/// Live non-blocking streams: (stream, device).
static NONBLOCKING: Mutex<Vec<(usize, DeviceId)>> = Mutex::new(Vec::new());

/// Records a stream created with the non-blocking flag on `device`.
pub(crate) fn stream_created(stream: usize, device: DeviceId) {
    NONBLOCKING.lock().push((stream, device));
}

/// Forgets a stream the program is destroying (before the real destroy runs, so that no
/// event is recorded on a destroyed stream).
pub(crate) fn stream_destroyed(stream: usize) {
    NONBLOCKING.lock().retain(|&(s, _)| s != stream);
}

/// Number of live non-blocking streams the program created (all devices).
pub(crate) fn nonblocking_streams() -> usize {
    NONBLOCKING.lock().len()
}

impl Deferred {
    /// Takes a block freed by the program.
    pub(crate) fn push(&mut self, block: Block) {
        self.open_bytes += block.size;
        self.pending_bytes += block.size;
        self.open.push(block);
    }

    /// Bytes freed by the program that are not yet back in the pool.
    pub(crate) fn pending_bytes(&self) -> usize {
        self.pending_bytes
    }

    /// True when something is waiting.
    pub(crate) fn is_empty(&self) -> bool {
        self.open.is_empty() && self.sealed.is_empty()
    }

    /// Called in an allocation on `device` (current): seals the open list when it is large
    /// enough (or `force`), then hands every completed batch to `release`. With `wait`,
    /// waits for every batch instead of polling.
    pub(crate) fn reclaim(
        &mut self,
        rt: &dyn Runtime,
        device: DeviceId,
        force: bool,
        wait: bool,
        release: &mut dyn FnMut(Block),
    ) {
        if !self.open.is_empty()
            && (force || self.open.len() >= SEAL_COUNT || self.open_bytes >= SEAL_BYTES)
        {
            self.seal(rt, device, release);
        }
        while let Some(front) = self.sealed.front() {
            let done = if wait {
                self.counts.waits += 1;
                front
                    .events
                    .iter()
                    .all(|&e| rt.event_synchronize(e).is_ok())
            } else {
                front
                    .events
                    .iter()
                    .all(|&e| rt.event_query(e).unwrap_or(false))
            };
            if !done {
                if !wait {
                    break;
                }
                // An event that cannot be waited for (a runtime error): fall back to the
                // device, which covers everything.
                self.counts.device_syncs += 1;
                let _ = rt.device_synchronize();
            }
            let batch = self.sealed.pop_front().expect("front exists");
            self.finish(batch, release);
        }
    }

    /// Records the events that cover the open list and moves it to `sealed`.
    fn seal(&mut self, rt: &dyn Runtime, device: DeviceId, release: &mut dyn FnMut(Block)) {
        self.counts.seals += 1;
        let mut events = self.spare_event_lists.pop().unwrap_or_default();
        let streams = NONBLOCKING.lock();
        let on_device = streams.iter().filter(|&&(_, d)| d == device).count();
        let mut ok = on_device <= MAX_TRACKED_STREAMS;
        if ok {
            let targets = std::iter::once(Stream::DEFAULT).chain(
                streams
                    .iter()
                    .filter(|&&(_, d)| d == device)
                    .map(|&(s, _)| Stream(s)),
            );
            for stream in targets {
                let event = match self.spare_events.pop() {
                    Some(e) => e,
                    None => match rt.event_create() {
                        Ok(e) => e,
                        Err(_) => {
                            ok = false;
                            break;
                        }
                    },
                };
                events.push(event);
                if rt.event_record(event, stream).is_err() {
                    ok = false;
                    break;
                }
            }
        }
        drop(streams);
        let blocks = std::mem::replace(&mut self.open, self.spare_blocks.pop().unwrap_or_default());
        self.open_bytes = 0;
        let batch = Batch { blocks, events };
        if ok {
            self.sealed.push_back(batch);
        } else {
            // Too many streams to track, or the runtime refused an event: wait for the
            // whole device, after which the blocks are free to reuse.
            self.counts.device_syncs += 1;
            let _ = rt.device_synchronize();
            // Earlier batches are complete too.
            while let Some(b) = self.sealed.pop_front() {
                self.finish(b, release);
            }
            self.finish(batch, release);
        }
    }

    /// Returns a completed batch's blocks and recycles its storage.
    fn finish(&mut self, mut batch: Batch, release: &mut dyn FnMut(Block)) {
        for b in batch.blocks.drain(..) {
            self.pending_bytes -= b.size;
            release(b);
        }
        self.spare_events.append(&mut batch.events);
        self.spare_blocks.push(batch.blocks);
        self.spare_event_lists.push(batch.events);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmm::runtime::host::{HostConfig, HostRuntime};
    use rmm::runtime::StreamFlags;
    use std::sync::mpsc;

    /// Enqueues work on `stream` that runs until the returned sender is dropped or used.
    fn gate(rt: &dyn Runtime, stream: Stream) -> mpsc::Sender<()> {
        let (tx, rx) = mpsc::channel::<()>();
        rt.launch_host_func(
            stream,
            Box::new(move || {
                let _ = rx.recv();
            }),
        )
        .unwrap();
        tx
    }

    fn block(i: usize) -> Block {
        Block {
            ptr: 0x10000 * (i + 1),
            size: 256,
            managed: false,
        }
    }

    fn reclaim(d: &mut Deferred, rt: &dyn Runtime, force: bool, wait: bool) -> Vec<usize> {
        let mut out = Vec::new();
        d.reclaim(rt, 0, force, wait, &mut |b: Block| out.push(b.ptr));
        out
    }

    /// Polls until something is released (the host runtime completes work asynchronously).
    fn reclaim_eventually(d: &mut Deferred, rt: &dyn Runtime) -> Vec<usize> {
        for _ in 0..2000 {
            let out = reclaim(d, rt, true, false);
            if !out.is_empty() {
                return out;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        Vec::new()
    }

    // One test: the non-blocking stream registry is process-wide.
    #[test]
    fn blocks_come_back_only_after_the_work_queued_before_their_free() {
        let rt = HostRuntime::new(HostConfig::default());
        let rt: &dyn Runtime = &rt;
        let mut d = Deferred::default();

        // Work on the legacy default stream holds the block back.
        let open = gate(rt, Stream::DEFAULT);
        d.push(block(0));
        assert_eq!(d.pending_bytes(), 256);
        assert!(reclaim(&mut d, rt, true, false).is_empty());
        assert_eq!(d.counts.seals, 1);
        drop(open);
        assert_eq!(reclaim_eventually(&mut d, rt), vec![block(0).ptr]);
        assert_eq!(d.pending_bytes(), 0);
        assert!(d.is_empty());

        // Below the thresholds nothing is sealed and nothing comes back.
        for i in 0..SEAL_COUNT - 1 {
            d.push(block(i));
        }
        assert!(reclaim(&mut d, rt, false, false).is_empty());
        assert_eq!(d.counts.seals, 1);
        // The eighth block seals the list.
        d.push(block(SEAL_COUNT - 1));
        let mut back = reclaim(&mut d, rt, false, false);
        assert_eq!(d.counts.seals, 2);
        if back.is_empty() {
            back = reclaim_eventually(&mut d, rt);
        }
        assert_eq!(back.len(), SEAL_COUNT);

        // A non-blocking stream is not ordered with the legacy stream: unless we know about
        // it, its work does not hold the block back (the hole the registry closes).
        let nb = rt
            .stream_create(StreamFlags { non_blocking: true })
            .unwrap();
        let open = gate(rt, nb);
        d.push(block(1));
        assert_eq!(reclaim_eventually(&mut d, rt), vec![block(1).ptr]);
        stream_created(nb.0, 0);
        d.push(block(2));
        assert!(reclaim(&mut d, rt, true, false).is_empty());
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(reclaim(&mut d, rt, false, false).is_empty());
        drop(open);
        assert_eq!(reclaim_eventually(&mut d, rt), vec![block(2).ptr]);

        // `wait` waits for the work instead of polling.
        let open = gate(rt, nb);
        d.push(block(3));
        let waiter = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(30));
            drop(open);
        });
        assert_eq!(reclaim(&mut d, rt, true, true), vec![block(3).ptr]);
        assert!(d.counts.waits >= 1);
        waiter.join().unwrap();

        // Too many non-blocking streams: sealing synchronizes the device instead.
        let extra: Vec<Stream> = (0..MAX_TRACKED_STREAMS)
            .map(|_| {
                let s = rt
                    .stream_create(StreamFlags { non_blocking: true })
                    .unwrap();
                stream_created(s.0, 0);
                s
            })
            .collect();
        let open = gate(rt, extra[3]);
        d.push(block(4));
        let opener = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(30));
            drop(open);
        });
        assert_eq!(reclaim(&mut d, rt, true, false), vec![block(4).ptr]);
        assert_eq!(d.counts.device_syncs, 1);
        opener.join().unwrap();

        for s in extra.into_iter().chain([nb]) {
            stream_destroyed(s.0);
            rt.stream_destroy(s).unwrap();
        }
        assert_eq!(nonblocking_streams(), 0);
        // Events are recycled, not leaked.
        assert!(!d.spare_events.is_empty());
    }
}
