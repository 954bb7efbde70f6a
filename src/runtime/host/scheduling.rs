//! Streams and the work queued on them: resolving stream, event and pool handles, the
//! default and per-thread streams, submitting work with the legacy default stream's
//! implicit ordering, and waiting for it.

use std::cell::RefCell;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use super::mempool::HostPool;
use super::stream::{HostEvent, HostStream, StreamKind, Task};
use super::{rt_err, HostRuntime, Inner, DEAD_STREAM_CALLS};
use crate::runtime::{DeviceId, Event, MemPool, RtResult, RuntimeError, RuntimeErrorKind, Stream};

thread_local! {
    static PER_THREAD: RefCell<Vec<PerThreadStream>> = const { RefCell::new(Vec::new()) };
}

fn launch_failure(call: &'static str, why: String) -> RuntimeError {
    RuntimeError {
        call,
        code: 719,
        kind: RuntimeErrorKind::Other,
        name: "hostErrorLaunchFailure".into(),
        message: format!("unspecified launch failure: host function panicked: {why}"),
    }
}

/// A per-thread default stream, destroyed when its thread exits so its worker ends too.
struct PerThreadStream {
    runtime: u64,
    device: DeviceId,
    stream: Arc<HostStream>,
    inner: Weak<Inner>,
}

impl Drop for PerThreadStream {
    fn drop(&mut self) {
        if let Some(inner) = self.inner.upgrade() {
            inner.devices[self.device as usize]
                .streams
                .lock()
                .retain(|s| !Arc::ptr_eq(s, &self.stream));
        }
        self.stream.close();
    }
}

impl HostRuntime {
    pub(super) fn default_stream(
        &self,
        call: &'static str,
        device: DeviceId,
    ) -> RtResult<Arc<HostStream>> {
        let mut slot = self.inner.devices[device as usize].default_stream.lock();
        if let Some(s) = slot.as_ref() {
            return Ok(Arc::clone(s));
        }
        let s = HostStream::spawn(call, 0, device, StreamKind::Legacy)?;
        *slot = Some(Arc::clone(&s));
        Ok(s)
    }

    pub(super) fn per_thread_stream(
        &self,
        call: &'static str,
        device: DeviceId,
    ) -> RtResult<Arc<HostStream>> {
        let id = self.inner.id;
        // A thread whose thread-locals are being torn down has no per-thread stream left.
        let gone = || rt_err(call, RuntimeErrorKind::InvalidHandle);
        let found = PER_THREAD
            .try_with(|p| {
                p.borrow()
                    .iter()
                    .find(|e| e.runtime == id && e.device == device)
                    .map(|e| Arc::clone(&e.stream))
            })
            .map_err(|_| gone())?;
        if let Some(s) = found {
            return Ok(s);
        }
        let s = HostStream::spawn(call, self.new_handle(), device, StreamKind::Blocking)?;
        self.inner.devices[device as usize]
            .streams
            .lock()
            .push(Arc::clone(&s));
        let entry = PerThreadStream {
            runtime: id,
            device,
            stream: Arc::clone(&s),
            inner: Arc::downgrade(&self.inner),
        };
        // On failure the entry is dropped here, which unregisters and closes the stream.
        PER_THREAD
            .try_with(move |p| p.borrow_mut().push(entry))
            .map_err(|_| gone())?;
        Ok(s)
    }

    /// Resolves a stream handle: 0/1 the current device's default stream, 2 the
    /// per-thread stream, anything else must be a live created stream (a call naming a
    /// destroyed one is counted: [`dead_stream_calls`](super::dead_stream_calls)).
    pub(super) fn stream(&self, call: &'static str, stream: Stream) -> RtResult<Arc<HostStream>> {
        match stream.0 {
            0 | 1 => self.default_stream(call, self.current()),
            2 => self.per_thread_stream(call, self.current()),
            h => self.inner.streams.read().get(&h).cloned().ok_or_else(|| {
                DEAD_STREAM_CALLS.fetch_add(1, Ordering::Relaxed);
                rt_err(call, RuntimeErrorKind::InvalidHandle)
            }),
        }
    }

    pub(super) fn event(&self, call: &'static str, event: Event) -> RtResult<Arc<HostEvent>> {
        self.inner
            .events
            .read()
            .get(&event.0)
            .cloned()
            .ok_or_else(|| rt_err(call, RuntimeErrorKind::InvalidHandle))
    }

    pub(super) fn pool(&self, call: &'static str, pool: MemPool) -> RtResult<Arc<HostPool>> {
        self.inner
            .pools
            .read()
            .get(&pool.0)
            .cloned()
            .ok_or_else(|| rt_err(call, RuntimeErrorKind::InvalidHandle))
    }

    pub(super) fn default_pool(&self, device: DeviceId) -> Arc<HostPool> {
        let mut slot = self.inner.devices[device as usize].default_pool.lock();
        if let Some(p) = slot.as_ref() {
            return Arc::clone(p);
        }
        let handle = self.new_handle();
        let pool = Arc::new(HostPool::new(
            handle,
            device,
            true,
            false,
            0,
            Arc::clone(&self.inner.memory),
        ));
        self.inner.pools.write().insert(handle, Arc::clone(&pool));
        *slot = Some(Arc::clone(&pool));
        pool
    }

    /// Queues `task` on `s`, first queuing the waits legacy default-stream semantics need:
    /// the legacy stream waits for blocking streams' earlier work and vice versa.
    pub(super) fn submit(&self, call: &'static str, s: &HostStream, task: Task) -> RtResult<()> {
        self.submit_seq(call, s, task).map(drop)
    }

    /// As [`Self::submit`], returning the sequence number of `task` on `s`.
    pub(super) fn submit_seq(
        &self,
        call: &'static str,
        s: &HostStream,
        task: Task,
    ) -> RtResult<u64> {
        let closed = |_| rt_err(call, RuntimeErrorKind::InvalidHandle);
        let device = &self.inner.devices[s.device as usize];
        let _order = (s.kind != StreamKind::NonBlocking).then(|| device.order.lock());
        self.each_predecessor(s, |other, seq| {
            let other = Arc::clone(other);
            s.push(Box::new(move || other.wait_for(seq)))
                .map(drop)
                .map_err(closed)
        })?;
        s.push(task).map_err(closed)
    }

    /// Calls `f` with each stream whose pending work what is submitted to `s` now must wait
    /// for, and the sequence number of that stream's last submission: the blocking streams
    /// for the legacy default stream, the legacy stream for a blocking one, none for a
    /// non-blocking one. The caller holds the device's `order` lock (but for a non-blocking
    /// stream), so that the answer holds until it submits.
    pub(super) fn each_predecessor<E>(
        &self,
        s: &HostStream,
        mut f: impl FnMut(&Arc<HostStream>, u64) -> Result<(), E>,
    ) -> Result<(), E> {
        let device = &self.inner.devices[s.device as usize];
        match s.kind {
            StreamKind::NonBlocking => {}
            StreamKind::Legacy => {
                for other in device.streams.lock().iter() {
                    if other.kind == StreamKind::Blocking {
                        if let Some(seq) = other.pending() {
                            f(other, seq)?;
                        }
                    }
                }
            }
            StreamKind::Blocking => {
                let legacy = device.default_stream.lock().clone();
                if let Some(legacy) = legacy {
                    if let Some(seq) = legacy.pending() {
                        f(&legacy, seq)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether work submitted to `s` now would start at once: neither `s` nor any stream it
    /// orders after ([`Self::each_predecessor`]) has work pending. Racing submissions from
    /// other threads are unordered with the caller's, as on a GPU.
    pub(super) fn nothing_before(&self, s: &HostStream) -> bool {
        if !s.is_idle() {
            return false;
        }
        let device = &self.inner.devices[s.device as usize];
        let _order = (s.kind != StreamKind::NonBlocking).then(|| device.order.lock());
        self.each_predecessor(s, |_, _| Err(())).is_ok()
    }

    pub(super) fn sync_stream(call: &'static str, s: &HostStream) -> RtResult<()> {
        match s.synchronize() {
            None => Ok(()),
            Some(why) => Err(launch_failure(call, why)),
        }
    }

    /// Waits for the work queued on every stream of every device, as `cudaFree` and
    /// `cudaFreeHost` do: queued copies may still touch the memory about to be unmapped.
    /// Errors of earlier work stay with their streams (they are not the free's to report).
    pub(super) fn wait_for_all_work(&self) {
        for d in 0..self.inner.devices.len() {
            for s in self.device_streams(d as DeviceId) {
                s.drain();
            }
        }
    }

    pub(super) fn device_streams(&self, device: DeviceId) -> Vec<Arc<HostStream>> {
        let d = &self.inner.devices[device as usize];
        let mut all: Vec<_> = d.default_stream.lock().iter().cloned().collect();
        let mut streams = d.streams.lock();
        streams.retain(|s| !s.is_retired());
        all.extend(streams.iter().cloned());
        all
    }
}
