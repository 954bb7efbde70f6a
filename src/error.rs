//! The crate's error type. Every failure keeps what was asked (the size, the device, the
//! value) and what the runtime said, so a message alone tells the user what to change.

use crate::runtime::{DeviceId, RuntimeError};

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in rmm-rs.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// An allocation could not be satisfied: the device, pool or limit has no room.
    #[error("out of memory: {resource} could not allocate {requested} bytes on device {device}: {detail}")]
    OutOfMemory {
        /// Bytes requested.
        requested: usize,
        /// The resource that failed (e.g. `cuda_memory_resource`).
        resource: &'static str,
        /// The device it allocates on (`-1` for host memory).
        device: DeviceId,
        /// What the runtime or the resource said (runtime error name, pool state, ...).
        detail: String,
    },
    /// An allocation failed for a reason other than lack of memory (hipMM's `bad_alloc`).
    #[error("allocation failed: {resource} could not allocate {requested} bytes: {detail}")]
    BadAlloc {
        /// Bytes requested.
        requested: usize,
        /// The resource that failed.
        resource: &'static str,
        /// Why.
        detail: String,
    },
    /// A runtime call failed (hipMM's `cuda_error`).
    #[error("{source} (device {device})")]
    Runtime {
        /// The device that was current (`-1` if unknown).
        device: DeviceId,
        /// The runtime's report.
        source: RuntimeError,
    },
    /// No usable GPU runtime (or no device): says what was tried and how to pick `host`.
    #[error("no usable GPU runtime: {0}")]
    NoRuntime(String),
    /// A bad argument: the message names the argument and its value.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The runtime or device lacks a feature this resource needs.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// A user-supplied callback failed (e.g. a C++ `do_allocate` threw).
    #[error("callback failed: {0}")]
    Callback(String),
}

impl Error {
    /// Wraps a runtime failure, tagging it with the device it happened on.
    pub fn runtime(device: DeviceId, source: RuntimeError) -> Self {
        Error::Runtime { device, source }
    }

    /// Shorthand for [`Error::InvalidArgument`].
    pub fn invalid(msg: impl Into<String>) -> Self {
        Error::InvalidArgument(msg.into())
    }
}
