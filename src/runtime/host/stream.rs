//! Emulated streams (one worker thread each, running tasks in order) and events.

use std::collections::{BTreeSet, VecDeque};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

use super::rt_err;
use crate::runtime::{DeviceId, RtResult, RuntimeErrorKind};

/// Work queued on a stream.
pub(crate) type Task = Box<dyn FnOnce() + Send + 'static>;

/// How a stream takes part in legacy default-stream synchronization.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum StreamKind {
    /// A device's legacy default stream.
    Legacy,
    /// Waits for, and is waited on by, the legacy default stream.
    Blocking,
    /// Ignores the legacy default stream.
    NonBlocking,
}

struct State {
    queue: VecDeque<(u64, Task)>,
    submitted: u64,
    completed: u64,
    /// Sticky error from a panicking task, returned by the next synchronize.
    error: Option<String>,
    closed: bool,
}

/// One stream and the queue its worker drains.
pub(crate) struct HostStream {
    pub device: DeviceId,
    pub kind: StreamKind,
    state: Mutex<State>,
    work: Condvar,
    done: Condvar,
}

impl HostStream {
    /// Creates the stream and starts its (detached) worker thread.
    pub fn spawn(
        call: &'static str,
        handle: usize,
        device: DeviceId,
        kind: StreamKind,
    ) -> RtResult<Arc<Self>> {
        let stream = Arc::new(HostStream {
            device,
            kind,
            state: Mutex::new(State {
                queue: VecDeque::new(),
                submitted: 0,
                completed: 0,
                error: None,
                closed: false,
            }),
            work: Condvar::new(),
            done: Condvar::new(),
        });
        let worker = Arc::clone(&stream);
        std::thread::Builder::new()
            .name(format!("rmm-host-stream-{handle:#x}"))
            .spawn(move || worker.run())
            .map_err(|_| rt_err(call, RuntimeErrorKind::Other))?;
        Ok(stream)
    }

    fn run(&self) {
        loop {
            let (seq, task) = {
                let mut st = self.state.lock();
                loop {
                    if let Some(item) = st.queue.pop_front() {
                        break item;
                    }
                    if st.closed {
                        return;
                    }
                    self.work.wait(&mut st);
                }
            };
            let outcome = catch_unwind(AssertUnwindSafe(task));
            let mut st = self.state.lock();
            if let Err(payload) = outcome {
                let why = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".into());
                st.error.get_or_insert(why);
            }
            st.completed = seq;
            self.done.notify_all();
        }
    }

    /// Queues `task`; fails once the stream is destroyed (its worker may be gone).
    pub fn push(&self, task: Task) -> Result<u64, Task> {
        let mut st = self.state.lock();
        if st.closed {
            return Err(task);
        }
        st.submitted += 1;
        let seq = st.submitted;
        st.queue.push_back((seq, task));
        self.work.notify_one();
        Ok(seq)
    }

    /// The last submitted sequence number, if it has not completed yet.
    pub fn pending(&self) -> Option<u64> {
        let st = self.state.lock();
        (st.completed < st.submitted).then_some(st.submitted)
    }

    /// Blocks until task `seq` has completed.
    pub fn wait_for(&self, seq: u64) {
        let mut st = self.state.lock();
        while st.completed < seq {
            self.done.wait(&mut st);
        }
    }

    /// Waits for everything submitted so far; returns (and clears) a sticky error.
    pub fn synchronize(&self) -> Option<String> {
        let mut st = self.state.lock();
        let target = st.submitted;
        while st.completed < target {
            self.done.wait(&mut st);
        }
        st.error.take()
    }

    /// Waits for everything submitted so far, leaving a sticky error for the stream's owner.
    pub fn drain(&self) {
        let target = self.state.lock().submitted;
        self.wait_for(target);
    }

    /// True when all submitted work has completed.
    pub fn is_idle(&self) -> bool {
        let st = self.state.lock();
        st.completed >= st.submitted
    }

    /// Destroyed (refuses new work) and done with what it had queued: nothing can wait on it.
    pub fn is_retired(&self) -> bool {
        let st = self.state.lock();
        st.closed && st.completed >= st.submitted
    }

    /// Refuses new work; the worker drains the queue and exits.
    pub fn close(&self) {
        self.state.lock().closed = true;
        self.work.notify_all();
    }
}

struct EventState {
    recorded: u64,
    /// Records queued but not yet reached by their stream. Records on different streams
    /// complete in any order: each generation is tracked on its own, so a later record that
    /// completes first never marks an earlier one complete (as `cudaStreamWaitEvent` waits
    /// for the record made before it was called, not for a later one).
    pending: BTreeSet<u64>,
}

/// An event: generations of records, the last of which is what queries see.
pub(crate) struct HostEvent {
    state: Mutex<EventState>,
    cv: Condvar,
}

impl HostEvent {
    pub fn new() -> Self {
        HostEvent {
            state: Mutex::new(EventState {
                recorded: 0,
                pending: BTreeSet::new(),
            }),
            cv: Condvar::new(),
        }
    }

    /// Starts a new record and returns its generation.
    pub fn begin_record(&self) -> u64 {
        let mut st = self.state.lock();
        st.recorded += 1;
        let g = st.recorded;
        st.pending.insert(g);
        g
    }

    /// Marks generation `g` complete.
    pub fn complete(&self, g: u64) {
        let mut st = self.state.lock();
        st.pending.remove(&g);
        self.cv.notify_all();
    }

    /// The generation of the last record (0: never recorded).
    pub fn recorded(&self) -> u64 {
        self.state.lock().recorded
    }

    /// Whether generation `g` has completed.
    pub fn is_done(&self, g: u64) -> bool {
        !self.state.lock().pending.contains(&g)
    }

    pub fn is_complete(&self) -> bool {
        let st = self.state.lock();
        !st.pending.contains(&st.recorded)
    }

    pub fn wait_for(&self, g: u64) {
        let mut st = self.state.lock();
        while st.pending.contains(&g) {
            self.cv.wait(&mut st);
        }
    }

    pub fn synchronize(&self) {
        let g = self.recorded();
        self.wait_for(g);
    }
}
