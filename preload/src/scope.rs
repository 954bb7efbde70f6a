//! The interposer's re-entry rule: one intercepted call at a time per thread.
//!
//! An entry point enters a [`Scope`] for its whole body, the call it forwards included.
//! Anything reached from inside (the CUDA runtime's `cudaMalloc` calling the driver's
//! `cuMemAlloc_v2`, our pools' own upstream calls, a runtime callback) finds the scope taken
//! and is forwarded untouched, so no allocation is served or counted twice and the pools
//! never allocate from themselves.

use std::cell::Cell;

thread_local! {
    static BUSY: Cell<bool> = const { Cell::new(false) };
}

/// Held while this thread is inside an intercepted call.
pub(crate) struct Scope(());

impl Scope {
    /// Enters the scope, or `None` when this thread is already inside one (the caller must
    /// then forward the call untouched).
    pub(crate) fn enter() -> Option<Scope> {
        BUSY.with(|b| {
            if b.get() {
                None
            } else {
                b.set(true);
                Some(Scope(()))
            }
        })
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        BUSY.with(|b| b.set(false));
    }
}
