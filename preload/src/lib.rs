//! `librmm_preload.so`: an LD_PRELOAD interposer that routes the device allocations of
//! unmodified CUDA and HIP programs to rmm-rs resources (a pool by default), whether they
//! call the runtime through a shared library (`cudaMalloc`, `hipMalloc`), link it
//! statically (nvcc's default, RAPIDS's wheels: the driver's `cuMemAlloc_v2`, reached
//! through `cuGetProcAddress`) or call the driver themselves. See docs/preload.md.
//!
//! - `ffi/`: every exported symbol and all `unsafe` (runtime, driver and lookup hooks).
//! - `scope`: the re-entry rule (a call made inside an intercepted call is forwarded).
//! - `engine`: the resources, the pointer map, deferred reuse (`deferred`), statistics.
//! - `entry_points`: per-entry-point counts for `RMM_PRELOAD_STATS=1`.
//! - `config`: `RMM_PRELOAD_*`, validated in the constructor below.
//!
//! The library has its own SONAME and exports only the symbols it interposes (the version
//! script `preload.map`), so it loads beside RAPIDS's `librmm.so`, ours, or both.

#![allow(non_snake_case)]

mod config;
mod deferred;
mod engine;
mod entry_points;
mod ffi;
mod scope;

use std::panic::catch_unwind;

extern "C" fn on_exit() {
    let _ = catch_unwind(engine::at_exit);
}

extern "C" fn in_child() {
    engine::mark_forked();
}

/// The library constructor: validates every `RMM_PRELOAD_*` variable (a bad value stops
/// the program here, exit status 1) and registers the exit and fork hooks.
extern "C" fn init() {
    match config::Config::from_env() {
        Ok(cfg) => engine::set_config(cfg),
        Err(msg) => engine::fatal(&msg),
    }
    // SAFETY: both are plain `extern "C" fn()` that touch only atomics (in_child) or make
    // no runtime call (on_exit); registration has no other preconditions.
    unsafe {
        libc::atexit(on_exit);
        libc::pthread_atfork(None, None, Some(in_child));
    }
}

#[used]
#[link_section = ".init_array"]
static INIT: extern "C" fn() = init;
