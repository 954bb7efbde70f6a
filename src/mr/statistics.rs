//! `statistics_resource_adaptor`: counts bytes and allocations (current, peak, total), with
//! a stack of nested counter frames (`push_counters` / `pop_counters`).

use std::any::Any;
use std::ffi::c_void;

use parking_lot::Mutex;

use super::{DeviceMemoryResource, SharedResource};
use crate::error::{Error, Result};
use crate::runtime::Stream;

const NAME: &str = "statistics_resource_adaptor";

/// One statistic: its current value, its peak and the running total of increments.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counter {
    /// Current value.
    pub value: i64,
    /// Highest value seen.
    pub peak: i64,
    /// Sum of all increments.
    pub total: i64,
}

impl Counter {
    fn add(&mut self, v: i64) {
        self.value += v;
        self.total += v;
        self.peak = self.peak.max(self.value);
    }

    fn sub(&mut self, v: i64) {
        self.value -= v;
    }

    /// Folds the counter of a nested frame (started at this counter's current value) into
    /// this one.
    fn merge_nested(&mut self, nested: &Counter) {
        self.peak = self.peak.max(self.value + nested.peak);
        self.value += nested.value;
        self.total += nested.total;
    }
}

/// (bytes, allocations) of one frame.
type Frame = (Counter, Counter);

/// Counts what passes through it to the upstream. Exact under concurrency: one lock
/// covers the counters, taken after the upstream call succeeded.
pub struct StatisticsResourceAdaptor {
    upstream: SharedResource,
    /// Never empty: the bottom frame is the adaptor's lifetime.
    frames: Mutex<Vec<Frame>>,
}

impl StatisticsResourceAdaptor {
    /// An adaptor over `upstream` with zeroed counters.
    pub fn new(upstream: SharedResource) -> Self {
        StatisticsResourceAdaptor {
            upstream,
            frames: Mutex::new(vec![Frame::default()]),
        }
    }

    /// The upstream resource.
    pub fn upstream(&self) -> SharedResource {
        self.upstream.clone()
    }

    /// Byte counter of the current frame.
    pub fn bytes_counter(&self) -> Counter {
        self.frames.lock().last().map(|f| f.0).unwrap_or_default()
    }

    /// Allocation-count counter of the current frame.
    pub fn allocations_counter(&self) -> Counter {
        self.frames.lock().last().map(|f| f.1).unwrap_or_default()
    }

    /// Both counters of the current frame, read together.
    pub fn counters(&self) -> (Counter, Counter) {
        self.frames.lock().last().copied().unwrap_or_default()
    }

    /// Starts a new frame with zeroed counters; returns the counters of the frame it covers.
    pub fn push_counters(&self) -> (Counter, Counter) {
        let mut frames = self.frames.lock();
        let top = frames.last().copied().unwrap_or_default();
        frames.push(Frame::default());
        top
    }

    /// Ends the current frame, folding it into the one below, and returns its counters.
    /// Fails (nothing changes) when there was no matching `push_counters`.
    pub fn pop_counters(&self) -> Result<(Counter, Counter)> {
        let mut frames = self.frames.lock();
        if frames.len() < 2 {
            return Err(Error::invalid(format!(
                "{NAME}: pop_counters() without a matching push_counters()"
            )));
        }
        let popped = frames.pop().unwrap_or_default();
        if let Some(below) = frames.last_mut() {
            below.0.merge_nested(&popped.0);
            below.1.merge_nested(&popped.1);
        }
        Ok(popped)
    }

    /// Number of frames pushed and not popped.
    pub fn depth(&self) -> usize {
        self.frames.lock().len() - 1
    }
}

impl std::fmt::Debug for StatisticsResourceAdaptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (b, a) = self.counters();
        write!(
            f,
            "{NAME}(upstream: {:?}, bytes: {b:?}, allocations: {a:?})",
            self.upstream
        )
    }
}

fn as_i64(bytes: usize) -> i64 {
    i64::try_from(bytes).unwrap_or(i64::MAX)
}

impl DeviceMemoryResource for StatisticsResourceAdaptor {
    fn allocate(&self, bytes: usize, stream: Stream) -> Result<*mut c_void> {
        let p = self.upstream.allocate(bytes, stream)?;
        let mut frames = self.frames.lock();
        if let Some(top) = frames.last_mut() {
            top.0.add(as_i64(bytes));
            top.1.add(1);
        }
        Ok(p)
    }

    fn deallocate(&self, ptr: *mut c_void, bytes: usize, stream: Stream) -> Result<()> {
        self.upstream.deallocate(ptr, bytes, stream)?;
        let mut frames = self.frames.lock();
        if let Some(top) = frames.last_mut() {
            top.0.sub(as_i64(bytes));
            top.1.sub(1);
        }
        Ok(())
    }

    /// Equal to itself, and to another statistics adaptor over an equal upstream (as RMM).
    fn is_equal(&self, other: &dyn DeviceMemoryResource) -> bool {
        super::adaptor_is_equal(self, other, |a| a.upstream.as_ref(), |_, _| true)
    }

    fn name(&self) -> &'static str {
        NAME
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn upstream(&self) -> Option<SharedResource> {
        Some(self.upstream.clone())
    }
}
