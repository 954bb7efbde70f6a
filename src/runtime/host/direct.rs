//! The host emulation's entry points for the C ABI's direct path ([`DirectCalls`]): the
//! process runtime's own calls behind the C signatures of the GPU runtimes, so that the
//! direct path runs, and is tested, where there is no GPU. Every failure returns 1 (any
//! code but 0 sends the C ABI down its checked path, which repeats the call through the
//! runtime for its error). They reach the process's runtime (`runtime::runtime`), the one
//! every resource uses.

use std::ffi::c_void;

use crate::runtime::{runtime, DirectCalls, MemPool, RtResult, Stream};

/// The entry points (the legacy stream handle passes unchanged).
pub(super) fn calls() -> DirectCalls {
    DirectCalls {
        malloc: Some(malloc),
        free: Some(free),
        malloc_managed: Some(malloc_managed),
        malloc_from_pool_async: Some(malloc_from_pool_async),
        free_async: Some(free_async),
        legacy_stream: Stream::LEGACY.0,
    }
}

/// 0 and the allocation written to `out`, or 1.
///
/// # Safety
/// `out` must be valid for a write (the C ABI checks it before the direct path).
unsafe fn allocated(out: *mut *mut c_void, r: Option<RtResult<*mut c_void>>) -> i32 {
    match r {
        Some(Ok(p)) => {
            // SAFETY: forwarded from this function's contract.
            unsafe { out.write(p) };
            0
        }
        _ => 1,
    }
}

fn done(r: Option<RtResult<()>>) -> i32 {
    i32::from(!matches!(r, Some(Ok(()))))
}

unsafe extern "C" fn malloc(out: *mut *mut c_void, bytes: usize) -> i32 {
    // SAFETY: the C ABI passes a valid out-pointer.
    unsafe { allocated(out, runtime().ok().map(|rt| rt.malloc(bytes))) }
}

unsafe extern "C" fn malloc_managed(out: *mut *mut c_void, bytes: usize, _flags: u32) -> i32 {
    // SAFETY: as in `malloc`.
    unsafe { allocated(out, runtime().ok().map(|rt| rt.malloc_managed(bytes))) }
}

unsafe extern "C" fn free(ptr: *mut c_void) -> i32 {
    done(runtime().ok().map(|rt| rt.free(ptr)))
}

unsafe extern "C" fn malloc_from_pool_async(
    out: *mut *mut c_void,
    bytes: usize,
    pool: *mut c_void,
    stream: *mut c_void,
) -> i32 {
    let r = runtime().ok().map(|rt| {
        rt.malloc_from_pool_async(bytes, MemPool(pool as usize), Stream(stream as usize))
    });
    // SAFETY: as in `malloc`.
    unsafe { allocated(out, r) }
}

unsafe extern "C" fn free_async(ptr: *mut c_void, stream: *mut c_void) -> i32 {
    done(
        runtime()
            .ok()
            .map(|rt| rt.free_async(ptr, Stream(stream as usize))),
    )
}
