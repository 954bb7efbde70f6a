//! The per-device resource registry. Getters return a new reference; `previous` outputs
//! are optional (NULL to ignore) and receive a new reference.

use std::ffi::c_void;

use super::status::{guard, non_null};
use super::{publish, resource_of, rmm_resource_t, rmm_status_t, write_out};
use crate::error::Result;
use crate::mr::{self, SharedResource};

fn optional(resource: rmm_resource_t) -> Result<Option<SharedResource>> {
    if resource.is_null() {
        Ok(None)
    } else {
        resource_of(resource).map(Some)
    }
}

/// Publishes `previous` into `out` when the caller asked for it.
///
/// # Safety
/// `out` must be NULL or valid for a write.
unsafe fn give_previous(previous: SharedResource, out: *mut rmm_resource_t) -> Result<()> {
    if out.is_null() {
        return Ok(());
    }
    // SAFETY: checked non-null; valid by this function's contract.
    unsafe { publish(previous, out) }
}

/// The resource of the calling thread's current device (a new reference).
#[no_mangle]
pub unsafe extern "C" fn rmm_get_current_device_resource(out: *mut rmm_resource_t) -> rmm_status_t {
    guard("rmm_get_current_device_resource", || {
        non_null(out, "out")?;
        // SAFETY: `out` checked non-null above.
        unsafe { publish(mr::get_current_device_resource()?, out) }
    })
}

/// Sets the resource of the current device; NULL resets it to the initial
/// `cuda_memory_resource`. `previous` (nullable) receives the resource it replaced.
#[no_mangle]
pub unsafe extern "C" fn rmm_set_current_device_resource(
    resource: rmm_resource_t,
    previous: *mut rmm_resource_t,
) -> rmm_status_t {
    guard("rmm_set_current_device_resource", || {
        let r = optional(resource)?;
        let prev = mr::set_current_device_resource(r)?;
        // SAFETY: `previous` is NULL or writable (contract).
        unsafe { give_previous(prev, previous) }
    })
}

/// Resets the current device to its initial resource; `previous` as above.
#[no_mangle]
pub unsafe extern "C" fn rmm_reset_current_device_resource(
    previous: *mut rmm_resource_t,
) -> rmm_status_t {
    guard("rmm_reset_current_device_resource", || {
        let prev = mr::reset_current_device_resource()?;
        // SAFETY: `previous` is NULL or writable (contract).
        unsafe { give_previous(prev, previous) }
    })
}

/// The resource of `device` (a new reference).
#[no_mangle]
pub unsafe extern "C" fn rmm_get_per_device_resource(
    device: i32,
    out: *mut rmm_resource_t,
) -> rmm_status_t {
    guard("rmm_get_per_device_resource", || {
        non_null(out, "out")?;
        // SAFETY: `out` checked non-null above.
        unsafe { publish(mr::get_per_device_resource(device)?, out) }
    })
}

/// Sets the resource of `device`; NULL resets. `previous` as above.
#[no_mangle]
pub unsafe extern "C" fn rmm_set_per_device_resource(
    device: i32,
    resource: rmm_resource_t,
    previous: *mut rmm_resource_t,
) -> rmm_status_t {
    guard("rmm_set_per_device_resource", || {
        let r = optional(resource)?;
        let prev = mr::set_per_device_resource(device, r)?;
        // SAFETY: `previous` is NULL or writable (contract).
        unsafe { give_previous(prev, previous) }
    })
}

/// Resets `device` to its initial resource; `previous` as above.
#[no_mangle]
pub unsafe extern "C" fn rmm_reset_per_device_resource(
    device: i32,
    previous: *mut rmm_resource_t,
) -> rmm_status_t {
    guard("rmm_reset_per_device_resource", || {
        let prev = mr::reset_per_device_resource(device)?;
        // SAFETY: `previous` is NULL or writable (contract).
        unsafe { give_previous(prev, previous) }
    })
}

/// A front end's function that frees its object for a registry entry (a tag), called when
/// a front end with another key replaces that entry.
#[allow(non_camel_case_types)]
pub type rmm_tag_release_fn = Option<unsafe extern "C" fn(tag: *mut c_void)>;

/// The registry's closure for a C release function.
fn tag_release(release: rmm_tag_release_fn) -> Option<mr::TagRelease> {
    release.map(|f| -> mr::TagRelease {
        Box::new(move |value| {
            // SAFETY: the front end that stored the tag gave `f` to free exactly this value,
            // and the registry calls it once, after the entry left the registry.
            unsafe { f(value as *mut c_void) }
        })
    })
}

/// Like `rmm_set_per_device_resource`, storing an opaque `tag` with the entry under `key`
/// (each C++ API generation keeps its own object for a resource under its own key, 0 to 4).
/// `release` (nullable) frees `tag` should a front end with another key replace the entry.
/// `previous_tag` (nullable) receives the replaced entry's tag under `key` (NULL if none);
/// its tags under other keys are released.
#[no_mangle]
pub unsafe extern "C" fn rmm_set_per_device_resource_tagged(
    device: i32,
    key: u32,
    resource: rmm_resource_t,
    tag: *mut c_void,
    release: rmm_tag_release_fn,
    previous: *mut rmm_resource_t,
    previous_tag: *mut *mut c_void,
) -> rmm_status_t {
    guard("rmm_set_per_device_resource_tagged", || {
        let r = optional(resource)?;
        let (prev, prev_tag) = mr::set_per_device_resource_tagged(
            device,
            r,
            key as usize,
            tag as usize,
            tag_release(release),
        )?;
        if !previous_tag.is_null() {
            // SAFETY: checked non-null; writable by contract.
            unsafe { write_out(previous_tag, prev_tag as *mut c_void) };
        }
        // SAFETY: `previous` is NULL or writable (contract).
        unsafe { give_previous(prev, previous) }
    })
}

/// The resource of `device` (a new reference) and the tag stored with it under `key` (NULL
/// if none).
#[no_mangle]
pub unsafe extern "C" fn rmm_get_per_device_resource_tagged(
    device: i32,
    key: u32,
    out: *mut rmm_resource_t,
    tag: *mut *mut c_void,
) -> rmm_status_t {
    guard("rmm_get_per_device_resource_tagged", || {
        non_null(out, "out")?;
        non_null(tag, "tag")?;
        let (r, t) = mr::get_per_device_resource_tagged(device, key as usize)?;
        // SAFETY: both checked non-null above.
        unsafe {
            publish(r, out)?;
            write_out(tag, t as *mut c_void);
        }
        Ok(())
    })
}

/// Compare-and-set of the tag under `key` of `device`'s initial resource: stores `proposed`
/// if none is set yet; `actual` receives the stored tag (yours, or one stored earlier).
#[no_mangle]
pub unsafe extern "C" fn rmm_initial_resource_tag(
    device: i32,
    key: u32,
    proposed: *mut c_void,
    actual: *mut *mut c_void,
) -> rmm_status_t {
    guard("rmm_initial_resource_tag", || {
        non_null(actual, "actual")?;
        let t = mr::initial_resource_tag(device, key as usize, proposed as usize)?;
        // SAFETY: checked non-null above.
        unsafe { write_out(actual, t as *mut c_void) };
        Ok(())
    })
}

/// Whether `handle` is `device`'s initial resource (the entry tagged through
/// `rmm_initial_resource_tag`); false before that resource exists. Lets a front end tell an
/// untagged initial entry from an untagged entry set from C, Python or Rust.
#[no_mangle]
pub unsafe extern "C" fn rmm_per_device_resource_is_initial(
    device: i32,
    handle: rmm_resource_t,
    out: *mut bool,
) -> rmm_status_t {
    guard("rmm_per_device_resource_is_initial", || {
        non_null(out, "out")?;
        let r = resource_of(handle)?;
        let initial = mr::is_initial_resource(device, &r)?;
        // SAFETY: checked non-null above.
        unsafe { write_out(out, initial) };
        Ok(())
    })
}

/// Compare-and-set of the tag under `key` of `device`'s current entry, for resources other
/// than the initial one: stores `proposed` (and `release`, nullable, called should a front end
/// with another key replace the entry) if the current entry is still `handle`'s resource and
/// has no tag under `key`. `actual` receives the tag now stored under `key` when the current
/// entry still is that resource (yours, or one stored earlier), or NULL when the current
/// entry is another resource (nothing is stored, `release` is not called). `handle` being
/// the initial resource is RMM_STATUS_INVALID_ARGUMENT: its tag is set through
/// `rmm_initial_resource_tag`.
#[no_mangle]
pub unsafe extern "C" fn rmm_per_device_entry_tag(
    device: i32,
    key: u32,
    handle: rmm_resource_t,
    proposed: *mut c_void,
    release: rmm_tag_release_fn,
    actual: *mut *mut c_void,
) -> rmm_status_t {
    guard("rmm_per_device_entry_tag", || {
        non_null(actual, "actual")?;
        let r = resource_of(handle)?;
        let t = mr::current_entry_tag(
            device,
            &r,
            key as usize,
            proposed as usize,
            tag_release(release),
        )?;
        // SAFETY: checked non-null above.
        unsafe { write_out(actual, t as *mut c_void) };
        Ok(())
    })
}
