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
