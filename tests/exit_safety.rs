//! Process exit with live resources: a child process (this test binary, re-run with a
//! marker variable) creates a pool and an async resource, makes the pool the current device
//! resource, allocates without freeing, and exits — by returning from the test or through
//! `std::process::exit(0)`. An `atexit` handler, registered before the runtime's own, frees
//! and drops what is left while the process is exiting: that must not touch the runtime and
//! must not crash. The parent checks the exit status and that stderr has no panic.
//!
//! Runs on the host runtime by default; with `RMM_RUNTIME=cuda` (or `hip`) on a GPU.

use std::ffi::c_void;
use std::process::Command;
use std::sync::Arc;

use parking_lot::Mutex;
use rmm::mr::{
    set_current_device_resource, CudaAsyncMemoryResource, CudaMemoryResource, PoolMemoryResource,
    SharedResource,
};
use rmm::runtime::{process_is_exiting, MemHandleType};
use rmm::Stream;

const MARKER: &str = "RMM_EXIT_SAFETY_CHILD";

/// What the atexit handler cleans up: resources with their outstanding allocations.
type Leftovers = Vec<(SharedResource, Vec<(usize, usize)>)>;
static LEFTOVERS: Mutex<Leftovers> = Mutex::new(Vec::new());

extern "C" fn at_exit() {
    let leftovers = std::mem::take(&mut *LEFTOVERS.lock());
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        assert!(
            process_is_exiting(),
            "the runtime's exit flag must be set by now"
        );
        for (mr, ptrs) in leftovers {
            for (p, bytes) in ptrs {
                mr.deallocate(p as *mut c_void, bytes, Stream::DEFAULT)
                    .expect("deallocation at exit is a quiet no-op");
            }
            drop(mr);
        }
    }));
    if outcome.is_ok() {
        eprintln!("exit-safety: leftovers freed at exit");
    } else {
        // SAFETY: _exit ends the process immediately; nothing runs after it.
        unsafe { libc::_exit(3) };
    }
}

fn child(mode: &str) {
    // Registered before the first runtime call, so it runs after the runtime's exit hook.
    // SAFETY: `at_exit` is an `extern "C" fn()` that catches every panic.
    assert_eq!(unsafe { libc::atexit(at_exit) }, 0);
    let cuda: SharedResource = Arc::new(CudaMemoryResource::new().unwrap());
    let pool: SharedResource = Arc::new(PoolMemoryResource::new(cuda, 1 << 20, None).unwrap());
    set_current_device_resource(Some(Arc::clone(&pool))).unwrap();
    let asyncmr: SharedResource =
        Arc::new(CudaAsyncMemoryResource::new(Some(1 << 20), None, MemHandleType::None).unwrap());
    let mut leftovers = Vec::new();
    for mr in [pool, asyncmr] {
        let ptrs: Vec<(usize, usize)> = [256usize, 4096, 100_000]
            .into_iter()
            .map(|b| (mr.allocate(b, Stream::DEFAULT).unwrap() as usize, b))
            .collect();
        leftovers.push((mr, ptrs));
    }
    // One more of each kind simply leaked, never freed.
    let leaked: SharedResource =
        Arc::new(CudaAsyncMemoryResource::new(None, None, MemHandleType::None).unwrap());
    let _never_freed = leaked.allocate(1 << 16, Stream::DEFAULT).unwrap();
    std::mem::forget(leaked);
    *LEFTOVERS.lock() = leftovers;
    if mode == "exit" {
        std::process::exit(0);
    }
}

fn run_child(mode: &str, test: &str) {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = Command::new(exe);
    cmd.args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(MARKER, mode);
    if std::env::var_os("RMM_RUNTIME").is_none() {
        cmd.env("RMM_RUNTIME", "host");
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child ({mode}) failed: {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    assert!(
        !stderr.contains("panicked"),
        "child ({mode}) panicked:\n{stderr}"
    );
    assert!(
        stderr.contains("exit-safety: leftovers freed at exit"),
        "the atexit handler did not run:\n{stderr}"
    );
    if mode == "return" {
        assert!(
            stdout.contains("1 passed"),
            "child did not run the test:\n{stdout}"
        );
    }
}

#[test]
fn exit_by_returning_with_live_resources() {
    match std::env::var(MARKER).as_deref() {
        Ok(mode) => child(mode),
        Err(_) => run_child("return", "exit_by_returning_with_live_resources"),
    }
}

#[test]
fn exit_by_process_exit_with_live_resources() {
    match std::env::var(MARKER).as_deref() {
        Ok(mode) => child(mode),
        Err(_) => run_child("exit", "exit_by_process_exit_with_live_resources"),
    }
}
