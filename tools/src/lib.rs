//! What rmm-rs's command-line tools share (the binaries are `src/bench`, `src/replay` and
//! `src/viz`):
//! - [`runtime_async`]: the runtime's own stream-ordered pool as a resource, the baseline
//!   rmm-bench and rmm-replay measure the library's resources against;
//! - [`trace`]: an event log of the logging adaptor (RMM's CSV) read, planned and replayed
//!   against a resource: rmm-replay, and rmm-bench's `replay` workload.

pub mod runtime_async;
pub mod trace;

/// The name of the running tool (`rmm-replay`, `rmm-bench`): the prefix of its messages.
pub fn program() -> String {
    std::env::args_os()
        .next()
        .as_deref()
        .and_then(|a| std::path::Path::new(a).file_name())
        .map_or_else(
            || "rmm-tools".to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
}
