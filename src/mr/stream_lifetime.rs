//! Streams destroyed through the library: every live resource with per-stream state lets
//! go of the stream first.
//!
//! The stream-ordered sub-allocators (pool, fixed-size, hence binning's default bins, and
//! arena's per-stream arenas) remember the streams memory was freed on and record events on
//! them lazily, in a later allocation (see [`super::stream_ordered`]). A stream destroyed in
//! between would be a dead handle by then. So each such resource registers a weak
//! reference to its per-stream state here when it is created, and [`stream_destroyed`]
//! (called by `rmm_stream_destroy` and by the interposer's `cudaStreamDestroy` /
//! `hipStreamDestroy`, before the runtime destroys the stream) makes every live one forget
//! the stream. Nothing here is on an allocate/deallocate path: registration happens once
//! per resource, the walk once per destroyed stream.
//!
//! It also keeps the process-wide set of **tracked** streams: the streams whose destruction
//! the library is told about (created by `rmm_stream_create` or seen created by the
//! interposer, see [`stream_created`]; the default streams are always tracked). Lazy event
//! recording is only safe on those; every other (**foreign**) stream gets its event recorded
//! at each free instead ([`super::stream_ordered`], "Tracked and foreign streams").
//! Resources look a stream up here once, when they first see it, never per operation.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

use crate::error::Result;
use crate::runtime::Stream;

/// Per-stream state of a resource that must let go of a stream before it is destroyed.
pub(crate) trait StreamState: Send + Sync {
    /// `stream` (not a default stream) is about to be destroyed, and is still alive: stop
    /// referring to it, ordering whatever it protected after its work (an event recorded
    /// on it now), without blocking the host.
    fn forget_stream(&self, stream: Stream) -> Result<()>;
}

/// The registered states; dead entries are pruned on each registration and walk.
static LIVE: Mutex<Vec<Weak<dyn StreamState>>> = Mutex::new(Vec::new());

/// Raw handles of the live tracked streams (the default streams are implied).
static TRACKED: Mutex<BTreeSet<usize>> = Mutex::new(BTreeSet::new());

/// Times a resource found a stream destroyed behind its back and synchronized the device
/// (or an event) instead: see [`dead_stream_fallbacks`].
static FALLBACKS: AtomicU64 = AtomicU64::new(0);

/// Whether `stream` is tracked: a default stream, or created through the library (or seen
/// created by the interposer) and not destroyed since. One lock and a set lookup: called
/// when a resource first sees a stream, not per operation.
pub(crate) fn is_tracked(stream: Stream) -> bool {
    stream.is_default() || stream.is_per_thread_default() || TRACKED.lock().contains(&stream.0)
}

/// Counts one dead-stream fallback (see [`dead_stream_fallbacks`]).
pub(crate) fn count_fallback() {
    FALLBACKS.fetch_add(1, Ordering::Relaxed);
}

/// How many times, in this process, a stream-ordered resource found that a stream it was
/// about to record an event on (or wait on) had been destroyed, and synchronized on the
/// host instead. Streams destroyed through the library are forgotten first and foreign
/// streams are never touched after their frees, so this stays 0 unless a tracked stream
/// is destroyed behind the library's back. For tests and diagnostics.
pub fn dead_stream_fallbacks() -> u64 {
    FALLBACKS.load(Ordering::Relaxed)
}

/// Tells the library that `stream` was just created and that its destruction will be
/// announced with [`stream_destroyed`] (before the runtime destroys it): resources may
/// then record events on it lazily, with no runtime call per free. `rmm_stream_create` and
/// the interposer's stream creation functions call this. Resources that still remember a
/// foreign stream with the same handle value (one destroyed behind the library's back, whose
/// handle the runtime reused) forget it; that touches no stream but the default stream.
pub fn stream_created(stream: Stream) -> Result<()> {
    if stream.is_default() || stream.is_per_thread_default() {
        return Ok(());
    }
    TRACKED.lock().insert(stream.0);
    forget_everywhere(stream)
}

/// Registers a resource's per-stream state (once, when the resource is created).
pub(crate) fn register(state: Weak<dyn StreamState>) {
    let mut live = LIVE.lock();
    live.retain(|w| w.strong_count() > 0);
    live.push(state);
}

/// Call before destroying `stream` (a stream this process created, still alive): every live
/// pool, fixed-size, binning or arena resource forgets it, so none records an event on the
/// dead handle later (or, on CUDA and HIP, on a new stream that reuses it).
/// `rmm_stream_destroy` and the LD_PRELOAD interposer's `cudaStreamDestroy` do this
/// already. Makes no runtime call unless a resource holds memory freed on `stream`; never
/// blocks the host. Every resource is tried; the first failure is returned.
pub fn stream_destroyed(stream: Stream) -> Result<()> {
    if stream.is_default() || stream.is_per_thread_default() {
        return Ok(());
    }
    let result = forget_everywhere(stream);
    // After the walk: a resource that sees the handle again from now on (a new stream
    // reusing it) classifies it afresh.
    TRACKED.lock().remove(&stream.0);
    result
}

/// Makes every live resource forget `stream`; the first failure is returned.
fn forget_everywhere(stream: Stream) -> Result<()> {
    let live: Vec<Arc<dyn StreamState>> = {
        let mut live = LIVE.lock();
        live.retain(|w| w.strong_count() > 0);
        live.iter().filter_map(Weak::upgrade).collect()
    };
    let mut first_err = None;
    for state in live {
        if let Err(e) = state.forget_stream(stream) {
            first_err.get_or_insert(e);
        }
    }
    match first_err {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
