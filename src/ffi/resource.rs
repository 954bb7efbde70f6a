//! Operations common to every resource handle.

use std::ffi::{c_char, c_void};

use super::status::{guard, non_null};
use super::{
    handle, resource_of, rmm_resource_t, rmm_status_t, rmm_stream_t, stream_of, write_out,
};
use crate::mr::FrontAnswer;
use crate::runtime::Stream;
use crate::watchers::WATCHERS;

/// The fixed, human-readable description of a status code (never NULL).
#[no_mangle]
pub extern "C" fn rmm_status_string(status: u32) -> *const c_char {
    rmm_status_t::description(status).as_ptr().cast()
}

/// This thread's last failure message ("" if none). Valid until the next failing call on
/// this thread; copy it to keep it.
#[no_mangle]
pub extern "C" fn rmm_last_error_message() -> *const c_char {
    super::status::last_error_ptr()
}

/// The GPU runtime's own error code (`cudaError_t` / `hipError_t`; the host emulation uses
/// CUDA's numbers) behind this thread's last failure, or 0 when that failure did not come
/// from a runtime call. Like the message, it stays until the next failing call on this
/// thread.
#[no_mangle]
pub extern "C" fn rmm_last_error_runtime_code() -> i32 {
    super::status::last_runtime_code()
}

/// A stable identity of the resource object behind `resource`: equal for every handle of
/// the same resource (however it was obtained: a create, a getter, a retain, from C, C++ or
/// Python), different for distinct live resources, even two resources of the same kind
/// over the same upstream that `rmm_resource_is_equal` calls equal. It is the resource's
/// address in librmm.so: an id may be reused once its resource has been destroyed.
#[no_mangle]
pub unsafe extern "C" fn rmm_resource_id(resource: rmm_resource_t, id: *mut u64) -> rmm_status_t {
    guard("rmm_resource_id", || {
        non_null(id, "id")?;
        let r = resource_of(resource)?;
        let address = std::sync::Arc::as_ptr(&r).cast::<()>() as usize as u64;
        // SAFETY: `id` checked non-null above.
        unsafe { write_out(id, address) };
        Ok(())
    })
}

/// Adds a reference to `resource`.
#[no_mangle]
pub extern "C" fn rmm_resource_retain(resource: rmm_resource_t) -> rmm_status_t {
    guard("rmm_resource_retain", || {
        handle::RESOURCES.retain(resource as usize)
    })
}

/// Drops a reference to `resource`; the last one destroys the resource (returning its
/// memory upstream). Releasing NULL is a no-op; a released or foreign handle is reported.
/// Releasing the last reference while another thread is still using the handle is
/// undefined, as destroying a resource in use is in RMM.
#[no_mangle]
pub extern "C" fn rmm_resource_release(resource: rmm_resource_t) -> rmm_status_t {
    guard("rmm_resource_release", || {
        if resource.is_null() {
            return Ok(());
        }
        handle::RESOURCES.release(resource as usize)
    })
}

/// hipMM's class name of the resource (a static string), e.g. `"cuda_memory_resource"`.
#[no_mangle]
pub unsafe extern "C" fn rmm_resource_name(
    resource: rmm_resource_t,
    name: *mut *const c_char,
) -> rmm_status_t {
    guard("rmm_resource_name", || {
        non_null(name, "name")?;
        let r = resource_of(resource)?;
        let s = crate::ffi::resource::static_cstr(r.name());
        // SAFETY: `name` checked non-null above.
        unsafe { write_out(name, s) };
        Ok(())
    })
}

/// Whether memory from `a` may be freed by `b` and vice versa.
#[no_mangle]
pub unsafe extern "C" fn rmm_resource_is_equal(
    a: rmm_resource_t,
    b: rmm_resource_t,
    equal: *mut bool,
) -> rmm_status_t {
    guard("rmm_resource_is_equal", || {
        non_null(equal, "equal")?;
        let (ra, rb) = (resource_of(a)?, resource_of(b)?);
        // SAFETY: `equal` checked non-null above.
        unsafe { write_out(equal, ra.is_equal(rb.as_ref())) };
        Ok(())
    })
}

/// Allocates `bytes` on the default stream. Zero bytes give `*ptr = NULL` and succeed.
#[no_mangle]
pub unsafe extern "C" fn rmm_allocate(
    resource: rmm_resource_t,
    bytes: usize,
    ptr: *mut *mut c_void,
) -> rmm_status_t {
    // SAFETY: same contract as this function.
    unsafe { rmm_allocate_async(resource, bytes, std::ptr::null_mut(), ptr) }
}

/// Allocates `bytes`, usable in stream order on `stream`. Zero bytes give `*ptr = NULL`.
#[no_mangle]
pub unsafe extern "C" fn rmm_allocate_async(
    resource: rmm_resource_t,
    bytes: usize,
    stream: rmm_stream_t,
    ptr: *mut *mut c_void,
) -> rmm_status_t {
    if WATCHERS.any() {
        if crate::history::enabled() {
            let entry = handle::RESOURCES.entry(resource as usize);
            // Not a tail call: a recorded event's stack starts at this C call, which a tail
            // call would take off the stack.
            // SAFETY: same contract as this function.
            return std::hint::black_box(unsafe {
                recorded_allocate(entry, resource, bytes, stream, ptr)
            });
        }
        // Counted: the resource's own path counts.
        // SAFETY: same contract as this function.
        return unsafe { allocate_slow(resource, bytes, stream, ptr, false) };
    }
    // A pool front's hit makes no call here, so this function saves few registers; anything
    // else is one call in tail position.
    let mut front_missed = false;
    if !ptr.is_null() {
        if let Some(fronts) = handle::RESOURCES.fronts(resource as usize) {
            match fronts.allocate_hit(bytes, stream_of(stream)) {
                FrontAnswer::Served(p) => {
                    // SAFETY: `ptr` checked non-null above.
                    unsafe { write_out(ptr, p) };
                    return rmm_status_t::RMM_STATUS_SUCCESS;
                }
                FrontAnswer::Missed => front_missed = true,
                FrontAnswer::NotAsked => {}
            }
        }
    }
    // SAFETY: same contract as this function.
    unsafe { allocate_slow(resource, bytes, stream, ptr, front_missed) }
}

/// `rmm_allocate_async` past a front's lock-free hit: a front taken under its lock, a pool's
/// uncached path, other resources' direct paths, bad input. `front_missed`: a pool's front
/// was just asked and had nothing, so the pool's uncached path answers without asking it
/// again.
///
/// # Safety
/// As `rmm_allocate_async`.
#[inline(never)]
unsafe extern "C" fn allocate_slow(
    resource: rmm_resource_t,
    bytes: usize,
    stream: rmm_stream_t,
    ptr: *mut *mut c_void,
    mut front_missed: bool,
) -> rmm_status_t {
    // One lookup of the handle serves every path (a thin resource's call is a few dozen
    // instructions: a second lookup was a sizable share of it).
    let entry = handle::RESOURCES.entry(resource as usize);
    if let Some(e) = entry {
        if let Some(pool) = e.pool() {
            if !ptr.is_null() && !front_missed {
                if let Some(p) = pool.allocate_cached(bytes, stream_of(stream)) {
                    // SAFETY: `ptr` checked non-null above.
                    unsafe { write_out(ptr, p) };
                    return rmm_status_t::RMM_STATUS_SUCCESS;
                }
                front_missed = true;
            }
        } else if let Some(path) = e.direct {
            if super::direct::try_allocate(path, bytes, stream as usize, ptr) {
                return rmm_status_t::RMM_STATUS_SUCCESS;
            }
        }
    }
    checked_allocate(entry, resource, bytes, stream, ptr, front_missed)
}

/// `rmm_allocate_async` through the resource (no direct path), reporting every failure.
/// `front_missed`: a pool's front was just asked and had nothing, so the pool's uncached
/// path answers without asking it again.
#[inline(never)]
fn checked_allocate(
    entry: Option<&handle::Entry>,
    resource: rmm_resource_t,
    bytes: usize,
    stream: rmm_stream_t,
    ptr: *mut *mut c_void,
    front_missed: bool,
) -> rmm_status_t {
    guard("rmm_allocate_async", || {
        non_null(ptr, "ptr")?;
        let s = stream_of(stream);
        let p = match entry {
            Some(e) => match e.pool().filter(|_| front_missed) {
                Some(pool) => pool.allocate_uncached(bytes, s)?,
                None => e.resource.allocate(bytes, s)?,
            },
            // Not a live handle: the locked path reports exactly what is wrong.
            None => handle::RESOURCES.with(resource as usize, |r| r.allocate(bytes, s))?,
        };
        // SAFETY: `ptr` checked non-null above.
        unsafe { write_out(ptr, p) };
        Ok(())
    })
}

/// Frees `ptr` (of `bytes`, as allocated) on the default stream. NULL is a no-op.
#[no_mangle]
pub extern "C" fn rmm_deallocate(
    resource: rmm_resource_t,
    ptr: *mut c_void,
    bytes: usize,
) -> rmm_status_t {
    rmm_deallocate_async(resource, ptr, bytes, std::ptr::null_mut())
}

/// Frees `ptr` (of `bytes`, as allocated) in stream order on `stream`. NULL is a no-op.
#[no_mangle]
pub extern "C" fn rmm_deallocate_async(
    resource: rmm_resource_t,
    ptr: *mut c_void,
    bytes: usize,
    stream: rmm_stream_t,
) -> rmm_status_t {
    if WATCHERS.any() {
        if crate::history::enabled() {
            // Not a tail call (see `rmm_allocate_async`).
            return std::hint::black_box(deallocate_recorded(resource, ptr, bytes, stream));
        }
        return deallocate_slow(resource, ptr, bytes, stream, false);
    }
    // As in `rmm_allocate_async`: a pool front's hit makes no call, the rest is one.
    let mut front_missed = false;
    if let Some(fronts) = handle::RESOURCES.fronts(resource as usize) {
        match fronts.deallocate_hit(ptr, bytes, stream_of(stream)) {
            FrontAnswer::Served(()) => return rmm_status_t::RMM_STATUS_SUCCESS,
            FrontAnswer::Missed => front_missed = true,
            FrontAnswer::NotAsked => {}
        }
    }
    deallocate_slow(resource, ptr, bytes, stream, front_missed)
}

/// `rmm_deallocate_async` past a front's lock-free hit (see [`allocate_slow`]).
#[inline(never)]
extern "C" fn deallocate_slow(
    resource: rmm_resource_t,
    ptr: *mut c_void,
    bytes: usize,
    stream: rmm_stream_t,
    mut front_missed: bool,
) -> rmm_status_t {
    let entry = handle::RESOURCES.entry(resource as usize);
    if let Some(e) = entry {
        if let Some(pool) = e.pool() {
            if !front_missed {
                if pool.deallocate_cached(ptr, bytes, stream_of(stream)) {
                    return rmm_status_t::RMM_STATUS_SUCCESS;
                }
                front_missed = true;
            }
        } else if let Some(path) = e.direct {
            if super::direct::try_deallocate(path, ptr, stream as usize) {
                return rmm_status_t::RMM_STATUS_SUCCESS;
            }
        }
    }
    checked_deallocate(entry, resource, ptr, bytes, stream, front_missed)
}

/// `rmm_deallocate_async` while the memory history records: the checked path, then the
/// event.
#[cold]
#[inline(never)]
fn deallocate_recorded(
    resource: rmm_resource_t,
    ptr: *mut c_void,
    bytes: usize,
    stream: rmm_stream_t,
) -> rmm_status_t {
    let entry = handle::RESOURCES.entry(resource as usize);
    let status = checked_deallocate(entry, resource, ptr, bytes, stream, false);
    if !ptr.is_null() {
        let kind = if status == rmm_status_t::RMM_STATUS_SUCCESS {
            crate::history::EventKind::Free
        } else {
            crate::history::EventKind::FreeFailed
        };
        record(kind, entry, resource, ptr as usize, bytes, stream);
    }
    status
}

/// `rmm_deallocate_async` through the resource (no direct path), reporting every failure.
/// `front_missed`: as for [`checked_allocate`].
#[inline(never)]
fn checked_deallocate(
    entry: Option<&handle::Entry>,
    resource: rmm_resource_t,
    ptr: *mut c_void,
    bytes: usize,
    stream: rmm_stream_t,
    front_missed: bool,
) -> rmm_status_t {
    guard("rmm_deallocate_async", || {
        let s: Stream = stream_of(stream);
        match entry {
            Some(e) => match e.pool().filter(|_| front_missed) {
                Some(pool) => pool.deallocate_uncached(ptr, bytes, s),
                None => e.resource.deallocate(ptr, bytes, s),
            },
            None => handle::RESOURCES.with(resource as usize, |r| r.deallocate(ptr, bytes, s)),
        }
    })
}

/// `rmm_allocate_async` while the memory history records: the checked path, then the event
/// (and, with `RMM_MEMORY_HISTORY`, a snapshot after running out of memory).
///
/// # Safety
/// As `rmm_allocate_async`.
#[cold]
unsafe fn recorded_allocate(
    entry: Option<&handle::Entry>,
    resource: rmm_resource_t,
    bytes: usize,
    stream: rmm_stream_t,
    ptr: *mut *mut c_void,
) -> rmm_status_t {
    let status = checked_allocate(entry, resource, bytes, stream, ptr, false);
    if bytes == 0 || ptr.is_null() {
        return status;
    }
    if status == rmm_status_t::RMM_STATUS_SUCCESS {
        // SAFETY: non-null, and just written by the successful call.
        let p = unsafe { ptr.read() } as usize;
        record(
            crate::history::EventKind::Allocate,
            entry,
            resource,
            p,
            bytes,
            stream,
        );
    } else {
        record(
            crate::history::EventKind::AllocateFailed,
            entry,
            resource,
            0,
            bytes,
            stream,
        );
        if status == rmm_status_t::RMM_STATUS_OUT_OF_MEMORY {
            crate::history::out_of_memory();
        }
    }
    status
}

/// One memory-history event of a C ABI call on `resource`.
fn record(
    kind: crate::history::EventKind,
    entry: Option<&handle::Entry>,
    resource: rmm_resource_t,
    ptr: usize,
    bytes: usize,
    stream: rmm_stream_t,
) {
    let name = entry.map_or("unknown", |e| e.resource.name());
    // The resource's address, as snapshots name resources in their segments (a handle of a
    // released resource has no entry: its handle value stands in).
    let id = entry.map_or(resource as usize, |e| {
        std::sync::Arc::as_ptr(&e.resource) as *const () as usize
    });
    // The resource's device, known since its handle was made (no runtime call per event);
    // for a released handle, the current device.
    let device = entry.map_or_else(
        || {
            crate::runtime::runtime()
                .map(crate::mr::current_device_or_unknown)
                .unwrap_or(-1)
        },
        |e| e.device,
    );
    crate::history::record(kind, ptr, bytes, stream as usize, device, name, id);
}

/// A NUL-terminated copy of a static name, made once per distinct name.
pub(crate) fn static_cstr(name: &'static str) -> *const c_char {
    use std::collections::HashMap;
    use std::ffi::CString;
    static NAMES: parking_lot::Mutex<Option<HashMap<&'static str, &'static CString>>> =
        parking_lot::Mutex::new(None);
    let mut names = NAMES.lock();
    let map = names.get_or_insert_with(HashMap::new);
    map.entry(name)
        .or_insert_with(|| Box::leak(Box::new(CString::new(name).unwrap_or_default())))
        .as_ptr()
}
