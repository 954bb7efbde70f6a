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

/// Whether [`heavy_fence`] works in this process: Linux's expedited private `membarrier`
/// (4.14 and later), registered on first use. False where the kernel lacks it or a
/// sandbox's seccomp filter refuses it; callers then keep a symmetric fence on both sides.
pub fn heavy_fence_available() -> bool {
    static READY: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *READY.get_or_init(membarrier::register)
}

/// Makes every thread of this process that is running now pass a full memory barrier
/// before it returns (the kernel interrupts their CPUs; a thread not running passes one when
/// it is scheduled). The other side of an asymmetric fence, whose light side is only a
/// compiler fence (see `crate::mr::biased_lock`). Call it only after
/// [`heavy_fence_available`] said true.
pub fn heavy_fence() {
    membarrier::expedited();
}

#[cfg(target_os = "linux")]
mod membarrier {
    // Values of the kernel's `uapi/linux/membarrier.h` (part of its stable ABI).
    const QUERY: libc::c_long = 0;
    const GLOBAL: libc::c_long = 1;
    const PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
    const REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;

    fn call(cmd: libc::c_long) -> libc::c_long {
        // SAFETY: membarrier takes a command and two integer arguments and touches no memory
        // of ours; an unknown or refused command returns -1.
        unsafe {
            libc::syscall(
                libc::SYS_membarrier,
                cmd,
                0 as libc::c_long,
                0 as libc::c_long,
            )
        }
    }

    pub fn register() -> bool {
        let supported = call(QUERY);
        supported >= 0
            && supported & PRIVATE_EXPEDITED != 0
            && supported & REGISTER_PRIVATE_EXPEDITED != 0
            && call(REGISTER_PRIVATE_EXPEDITED) == 0
    }

    pub fn expedited() {
        // Registered (`register` returned true), so this cannot fail; should the kernel
        // still refuse it, the global command (a grace period, milliseconds, no
        // registration) gives the same guarantee. Going on without either would let two
        // threads into one critical section.
        if call(PRIVATE_EXPEDITED) != 0 && call(GLOBAL) != 0 {
            eprintln!(
                "rmm: membarrier failed after its registration: {}; aborting rather than \
                 risk two threads in one lock",
                std::io::Error::last_os_error()
            );
            std::process::abort();
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod membarrier {
    pub fn register() -> bool {
        false
    }

    pub fn expedited() {
        unreachable!("heavy_fence without heavy_fence_available");
    }
}

/// One word of thread-local storage that a shared library reads in a few instructions: zero
/// in every new thread. Rust's own thread-locals in a shared library take the general
/// dynamic model, a call to `__tls_get_addr` for each read (about a dozen instructions, a
/// sizable share of a pool's cached allocation through librmm.so). This word uses TLS
/// descriptors instead: the loader resolves it to a fixed offset from the thread pointer
/// whenever the library's block is in static TLS (always, unless a process loads libraries
/// after it ran out of that space), and to the same slow lookup otherwise, so loading never
/// fails where the plain initial-exec model could.
#[inline(always)]
pub fn thread_word() -> usize {
    thread_word::get()
}

/// Sets [`thread_word`] for the calling thread.
#[inline(always)]
pub fn set_thread_word(value: usize) {
    thread_word::set(value)
}

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
mod thread_word {
    std::arch::global_asm!(
        ".pushsection .tbss,\"awT\",@nobits",
        ".p2align 3",
        ".globl rmm_rs_thread_word",
        ".hidden rmm_rs_thread_word",
        ".type rmm_rs_thread_word, @object",
        ".size rmm_rs_thread_word, 8",
        "rmm_rs_thread_word:",
        ".zero 8",
        ".popsection",
    );

    /// The word's offset from the thread pointer (`%fs`).
    #[inline(always)]
    fn offset() -> isize {
        let off: isize;
        // SAFETY: the x86-64 TLS descriptor sequence (the linker relaxes it to a constant
        // in an executable): the call goes to the loader's resolver, which returns the
        // offset in %rax and by the descriptor ABI preserves every other register. Vector
        // registers are declared clobbered anyway: glibc before 2.40 let its slow resolver
        // (a library loaded after static TLS ran out) clobber them (BZ #31372).
        unsafe {
            std::arch::asm!(
                "leaq rmm_rs_thread_word@TLSDESC(%rip), %rax",
                "call *rmm_rs_thread_word@TLSCALL(%rax)",
                out("rax") off,
                out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
                out("xmm4") _, out("xmm5") _, out("xmm6") _, out("xmm7") _,
                out("xmm8") _, out("xmm9") _, out("xmm10") _, out("xmm11") _,
                out("xmm12") _, out("xmm13") _, out("xmm14") _, out("xmm15") _,
                options(att_syntax, pure, readonly),
            );
        }
        off
    }

    #[inline(always)]
    pub fn get() -> usize {
        let off = offset();
        let value: usize;
        // SAFETY: `off` is this thread's word's offset from %fs (see `offset`): an aligned,
        // initialized (zero-filled) `usize` that only this thread reaches.
        unsafe {
            std::arch::asm!(
                "movq %fs:({off}), {value}",
                off = in(reg) off,
                value = lateout(reg) value,
                options(att_syntax, nostack, readonly, preserves_flags),
            );
        }
        value
    }

    #[inline(always)]
    pub fn set(value: usize) {
        let off = offset();
        // SAFETY: as in `get`; the word is this thread's alone.
        unsafe {
            std::arch::asm!(
                "movq {value}, %fs:({off})",
                off = in(reg) off,
                value = in(reg) value,
                options(att_syntax, nostack, preserves_flags),
            );
        }
    }
}

#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
mod thread_word {
    use std::cell::Cell;

    thread_local! {
        static WORD: Cell<usize> = const { Cell::new(0) };
    }

    #[inline(always)]
    pub fn get() -> usize {
        WORD.with(Cell::get)
    }

    #[inline(always)]
    pub fn set(value: usize) {
        WORD.with(|w| w.set(value))
    }
}
