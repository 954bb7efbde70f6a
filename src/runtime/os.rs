//! The process-level services the core needs besides the GPU runtime: the OS thread id
//! (as RMM's event logs print it), exit hooks and a cheap clock. Kept here with the runtime's other
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

/// A cheap monotonic tick count for timestamps on hot paths: the CPU's time-stamp counter on
/// x86-64 (constant-rate on the CPUs GPUs are paired with; a few nanoseconds where a
/// virtual machine's `clock_gettime` can take hundreds), else nanoseconds since first use.
/// Convert with two `Instant`/tick pairs taken apart (see `crate::history`).
#[inline]
pub fn ticks() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: every x86-64 CPU has `rdtsc`; it reads a counter and touches no memory.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        START
            .get_or_init(std::time::Instant::now)
            .elapsed()
            .as_nanos() as u64
    }
}
