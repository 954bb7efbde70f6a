//! Replays of an event log written by a `logging_resource_adaptor` (ours or RMM's): the
//! log read and validated ([`parse_log`]), planned per recorded thread ([`plan`]), replayed
//! against a resource ([`replay`]) and reported ([`json`], [`svg`]). BENCH.md's W5
//! "replay"; rmm-replay's engine.
//!
//! Each thread keeps its recorded order. A free of a pointer allocated on another thread
//! waits until that allocation was replayed (recorded pointers are mapped to replayed ones).
//! "Upstream" is what the resource holds from the device: bytes taken from its upstream
//! (the runtime's malloc) for the library's sub-allocators, the bytes mapped for
//! `vmm_pool` (its pool size, read after every event), the bytes reserved by the mempool
//! for `async` (its reserved-memory attributes).

mod log;
mod replay;
mod report;

pub use log::{parse_log, plan, Action, Event, Op, Plan};
pub use replay::{replay, Outcome};
pub use report::{json, svg};
