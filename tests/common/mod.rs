//! Helpers shared by the integration tests (each includes this with `mod common;`): the
//! process's runtime (the host emulation unless `RMM_RUNTIME` says otherwise), C ABI
//! status checks, a device resource to build on and a small deterministic generator.
//!
//! Not every test file uses every helper.
#![allow(dead_code)]

use std::ffi::CStr;
use std::ptr::null_mut;
use std::sync::Arc;

use rmm::ffi::rmm_status_t::*;
use rmm::ffi::*;
use rmm::mr::{CudaMemoryResource, SharedResource};
use rmm::runtime::{runtime, Runtime};

/// The process's runtime: the host runtime unless `RMM_RUNTIME` names another.
pub fn rt() -> &'static dyn Runtime {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("RMM_RUNTIME").is_none() {
            std::env::set_var("RMM_RUNTIME", "host");
        }
    });
    runtime().expect("a runtime for tests (RMM_RUNTIME)")
}

/// This thread's last C ABI error message.
pub fn last_error() -> String {
    // SAFETY: rmm_last_error_message never returns NULL and the string lives until the
    // next failure on this thread.
    unsafe { CStr::from_ptr(rmm_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

/// Asserts that a C ABI call succeeded, naming it and the error otherwise.
pub fn ok(status: rmm_status_t, what: &str) {
    assert_eq!(status, RMM_STATUS_SUCCESS, "{what}: {}", last_error());
}

/// A `rmm_cuda_create` resource handle (on the test runtime).
pub fn c_cuda() -> rmm_resource_t {
    rt();
    let mut r = null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { rmm_cuda_create(&mut r) }, "rmm_cuda_create");
    r
}

/// A `CudaMemoryResource` (on the test runtime).
pub fn cuda() -> SharedResource {
    rt();
    Arc::new(CudaMemoryResource::new().unwrap())
}

/// A small deterministic generator (xorshift64*).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}
