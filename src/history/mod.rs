//! Memory history and snapshots: what was allocated, where, by whom, and how the
//! sub-allocators' memory is cut up.
//!
//! While recording is on, every allocation, free and failure made through the C ABI (so
//! from C, C++ and Python), the interposer and the sub-allocators' growth and release is
//! appended to a bounded ring of events, optionally with the host stack. A snapshot is one
//! JSON document: the events still in the ring, the allocations live now that were made
//! while recording, and each resource's segments (pool chunks, mapped extents, ...) with
//! their blocks. `rmm-viz` turns it into an HTML report.
//!
//! Two parts on two layers:
//! * `recorder` keeps the events: a leaf that the layers below call (sub-allocators record
//!   their growth and release, the runtime starts recording from `RMM_MEMORY_HISTORY` at
//!   its first use), depending on nothing above them;
//! * `snapshot` writes snapshots: the top layer, beside the C ABI, since it enumerates the
//!   live C handles. Only `ffi` and users outside the crate call it.
//!
//! Off (the default), the cost on the allocation path is one relaxed atomic load.

pub(crate) mod recorder;
mod snapshot;
#[cfg(test)]
mod tests;

pub use recorder::{disable, enable, enabled, record, EventKind, DEFAULT_MAX_ENTRIES};
pub(crate) use snapshot::install_exit_writer;
pub use snapshot::{describe, out_of_memory, snapshot, write_snapshot, SCHEMA_VERSION};
