//! The two process-level services the core needs besides the GPU runtime: the OS thread id
//! (as RMM's event logs print it) and exit hooks. Kept here with the runtime's other
//! system calls so that `unsafe` stays in this layer and the C ABI.

/// The calling thread's OS thread id (`gettid`).
pub fn thread_id() -> u64 {
    // SAFETY: gettid takes no arguments, cannot fail and touches no memory of ours.
    let tid = unsafe { libc::gettid() };
    tid as u64
}

/// Registers `hook` to run when the process exits normally; false if it could not be.
///
/// The hook must not unwind (wrap its body in `catch_unwind`).
pub fn at_exit(hook: extern "C" fn()) -> bool {
    // SAFETY: `hook` is a plain `extern "C" fn()`; the caller promises it never unwinds.
    unsafe { libc::atexit(hook) == 0 }
}
