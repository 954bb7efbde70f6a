//! Streams, events and stream-ordered copies, so C programs can work without GPU headers
//! (on the host runtime in particular). On a GPU, callers may pass their own streams.

use std::collections::BTreeSet;
use std::ffi::c_void;

use parking_lot::Mutex;

use super::status::{guard, non_null};
use super::{
    rmm_event_t, rmm_status_t, rmm_stream_t, stream_of, write_out, RMM_STREAM_NON_BLOCKING,
};
use crate::error::{Error, Result};
use crate::runtime::{runtime, Event, RtResult, Runtime, StreamFlags};

/// Runs one runtime call, tagging a failure with the current device.
fn call<T>(f: impl FnOnce(&dyn Runtime) -> RtResult<T>) -> Result<T> {
    let rt = runtime()?;
    f(rt).map_err(|e| Error::runtime(rt.get_device().unwrap_or(-1), e))
}

/// Stream and event handles destroyed through this ABI, so that using one afterwards is a
/// clear `RMM_STATUS_INVALID_ARGUMENT` on every runtime (CUDA and HIP leave it undefined:
/// their handles are pointers to freed objects). A handle leaves its set when a create
/// returns it again (the runtime reused the address).
static DESTROYED_STREAMS: Mutex<BTreeSet<usize>> = Mutex::new(BTreeSet::new());
static DESTROYED_EVENTS: Mutex<BTreeSet<usize>> = Mutex::new(BTreeSet::new());

/// The stream behind `stream`, refused when it was destroyed by `rmm_stream_destroy`.
fn live_stream(stream: rmm_stream_t) -> Result<crate::runtime::Stream> {
    if DESTROYED_STREAMS.lock().contains(&(stream as usize)) {
        return Err(Error::invalid(format!(
            "stream {stream:p} was destroyed by rmm_stream_destroy"
        )));
    }
    Ok(stream_of(stream))
}

/// Creates a stream on the current device; `flags` may be `RMM_STREAM_NON_BLOCKING`.
/// Destroy it with `rmm_stream_destroy`: the library then knows when it dies, so the pool,
/// fixed-size, binning and arena resources make no runtime call when memory is freed on it
/// (a stream created with the runtime directly costs one event record per free instead).
#[no_mangle]
pub unsafe extern "C" fn rmm_stream_create(flags: u32, stream: *mut rmm_stream_t) -> rmm_status_t {
    guard("rmm_stream_create", || {
        non_null(stream, "stream")?;
        if flags & !RMM_STREAM_NON_BLOCKING != 0 {
            return Err(Error::invalid(format!(
                "unknown stream flags {flags:#x}; the only flag is RMM_STREAM_NON_BLOCKING (1)"
            )));
        }
        let non_blocking = flags & RMM_STREAM_NON_BLOCKING != 0;
        let s = call(|rt| rt.stream_create(StreamFlags { non_blocking }))?;
        DESTROYED_STREAMS.lock().remove(&s.0);
        // Tracked: its destruction comes through `rmm_stream_destroy`, so resources may
        // record its events lazily (no runtime call per free).
        if let Err(e) = crate::mr::stream_created(s) {
            log::warn!(
                "rmm_stream_create: resources could not forget a stale stream {:#x}: {e}",
                s.0
            );
        }
        // SAFETY: checked non-null above.
        unsafe { write_out(stream, s.0 as rmm_stream_t) };
        Ok(())
    })
}

/// Destroys a stream made by `rmm_stream_create` (its pending work still completes).
/// Every live pool, fixed-size, binning and arena resource forgets the stream first (an
/// event recorded on it orders their later reuse of its memory; the host does not wait),
/// so none of them touches the dead handle later.
#[no_mangle]
pub extern "C" fn rmm_stream_destroy(stream: rmm_stream_t) -> rmm_status_t {
    guard("rmm_stream_destroy", || {
        if stream.is_null() {
            return Err(Error::invalid("cannot destroy the default stream (NULL)"));
        }
        let s = live_stream(stream)?;
        if let Err(e) = crate::mr::stream_destroyed(s) {
            // The stream is destroyed anyway; a resource that still remembers it
            // synchronizes the device when it finds the handle dead (module docs of
            // `mr::stream_ordered`).
            log::warn!("rmm_stream_destroy: resources could not forget stream {stream:p}: {e}");
        }
        call(|rt| rt.stream_destroy(s))?;
        DESTROYED_STREAMS.lock().insert(s.0);
        Ok(())
    })
}

/// Waits until all work enqueued on `stream` has completed.
#[no_mangle]
pub extern "C" fn rmm_stream_synchronize(stream: rmm_stream_t) -> rmm_status_t {
    guard("rmm_stream_synchronize", || {
        let s = live_stream(stream)?;
        call(|rt| rt.stream_synchronize(s))
    })
}

/// `*complete` = whether all work on `stream` has completed.
#[no_mangle]
pub unsafe extern "C" fn rmm_stream_query(
    stream: rmm_stream_t,
    complete: *mut bool,
) -> rmm_status_t {
    guard("rmm_stream_query", || {
        non_null(complete, "complete")?;
        let s = live_stream(stream)?;
        let done = call(|rt| rt.stream_query(s))?;
        // SAFETY: checked non-null above.
        unsafe { write_out(complete, done) };
        Ok(())
    })
}

/// Creates an event (timing disabled).
#[no_mangle]
pub unsafe extern "C" fn rmm_event_create(event: *mut rmm_event_t) -> rmm_status_t {
    guard("rmm_event_create", || {
        non_null(event, "event")?;
        let e = call(|rt| rt.event_create())?;
        DESTROYED_EVENTS.lock().remove(&e.0);
        // SAFETY: checked non-null above.
        unsafe { write_out(event, e.0 as rmm_event_t) };
        Ok(())
    })
}

fn event_of(event: rmm_event_t) -> Result<Event> {
    if event.is_null() {
        return Err(Error::invalid("`event` is NULL"));
    }
    if DESTROYED_EVENTS.lock().contains(&(event as usize)) {
        return Err(Error::invalid(format!(
            "event {event:p} was destroyed by rmm_event_destroy"
        )));
    }
    Ok(Event(event as usize))
}

/// Destroys an event.
#[no_mangle]
pub extern "C" fn rmm_event_destroy(event: rmm_event_t) -> rmm_status_t {
    guard("rmm_event_destroy", || {
        let e = event_of(event)?;
        call(|rt| rt.event_destroy(e))?;
        DESTROYED_EVENTS.lock().insert(e.0);
        Ok(())
    })
}

/// Records `event` at the current tail of `stream`.
#[no_mangle]
pub extern "C" fn rmm_event_record(event: rmm_event_t, stream: rmm_stream_t) -> rmm_status_t {
    guard("rmm_event_record", || {
        let e = event_of(event)?;
        let s = live_stream(stream)?;
        call(|rt| rt.event_record(e, s))
    })
}

/// Waits until the last record of `event` has completed.
#[no_mangle]
pub extern "C" fn rmm_event_synchronize(event: rmm_event_t) -> rmm_status_t {
    guard("rmm_event_synchronize", || {
        let e = event_of(event)?;
        call(|rt| rt.event_synchronize(e))
    })
}

/// `*complete` = whether the last record of `event` has completed.
#[no_mangle]
pub unsafe extern "C" fn rmm_event_query(event: rmm_event_t, complete: *mut bool) -> rmm_status_t {
    guard("rmm_event_query", || {
        non_null(complete, "complete")?;
        let e = event_of(event)?;
        let done = call(|rt| rt.event_query(e))?;
        // SAFETY: checked non-null above.
        unsafe { write_out(complete, done) };
        Ok(())
    })
}

/// Makes later work on `stream` wait for the last record of `event`.
#[no_mangle]
pub extern "C" fn rmm_stream_wait_event(stream: rmm_stream_t, event: rmm_event_t) -> rmm_status_t {
    guard("rmm_stream_wait_event", || {
        let e = event_of(event)?;
        let s = live_stream(stream)?;
        call(|rt| rt.stream_wait_event(s, e))
    })
}

/// Enqueues a copy of `bytes` from `src` to `dst` (host or device memory) on `stream`.
#[no_mangle]
pub unsafe extern "C" fn rmm_memcpy_async(
    dst: *mut c_void,
    src: *const c_void,
    bytes: usize,
    stream: rmm_stream_t,
) -> rmm_status_t {
    guard("rmm_memcpy_async", || {
        if bytes == 0 {
            return Ok(());
        }
        non_null(dst, "dst")?;
        non_null(src, "src")?;
        let s = live_stream(stream)?;
        // SAFETY: the caller guarantees both ranges stay valid until the copy completes on
        // `stream` (documented contract, as for cudaMemcpyAsync).
        call(|rt| unsafe { rt.memcpy_async(dst, src, bytes, s) })
    })
}

/// Enqueues filling `bytes` at `dst` with the byte `value` on `stream`.
#[no_mangle]
pub unsafe extern "C" fn rmm_memset_async(
    dst: *mut c_void,
    value: i32,
    bytes: usize,
    stream: rmm_stream_t,
) -> rmm_status_t {
    guard("rmm_memset_async", || {
        if bytes == 0 {
            return Ok(());
        }
        non_null(dst, "dst")?;
        let s = live_stream(stream)?;
        // SAFETY: the caller guarantees the range stays valid until the fill completes.
        call(|rt| unsafe { rt.memset_async(dst, value as u8, bytes, s) })
    })
}
