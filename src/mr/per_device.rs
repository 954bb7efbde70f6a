//! The per-device resource registry (hipMM's `per_device_resource.hpp`).
//!
//! One map for the whole process, shared by Rust, the C ABI, the C++ wrapper and the
//! interposer. Each device starts with a `cuda_memory_resource`; setting `None` goes back
//! to it (hipMM dereferences the null pointer there; we don't).
//!
//! Each entry also carries an opaque `tag` for front ends: the C++ wrapper stores the C++
//! object that was set, so `get_current_device_resource()` returns that same object. An
//! entry set without a tag (from C, Python or Rust) gets one later, race-free, through
//! [`initial_resource_tag`] when it is the initial resource and [`current_entry_tag`]
//! otherwise; [`is_initial_resource`] tells the two apart.

use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

use super::{CudaMemoryResource, SharedResource};
use crate::error::{Error, Result};
use crate::runtime::{runtime, DeviceId};

#[derive(Default)]
struct Slot {
    initial: Option<(SharedResource, usize)>,
    current: Option<(SharedResource, usize)>,
}

impl Slot {
    fn initial(&mut self) -> Result<(SharedResource, usize)> {
        if let Some((r, t)) = &self.initial {
            return Ok((r.clone(), *t));
        }
        let r: SharedResource = Arc::new(CudaMemoryResource::new()?);
        self.initial = Some((r.clone(), 0));
        Ok((r, 0))
    }

    fn get(&mut self) -> Result<(SharedResource, usize)> {
        match &self.current {
            Some((r, t)) => Ok((r.clone(), *t)),
            None => self.initial(),
        }
    }
}

fn slots() -> Result<&'static [Mutex<Slot>]> {
    static SLOTS: OnceLock<Vec<Mutex<Slot>>> = OnceLock::new();
    if let Some(s) = SLOTS.get() {
        return Ok(s);
    }
    let rt = runtime()?;
    let n = rt.device_count().map_err(|e| Error::runtime(-1, e))?;
    Ok(SLOTS.get_or_init(|| (0..n.max(0)).map(|_| Mutex::default()).collect()))
}

fn slot(device: DeviceId) -> Result<&'static Mutex<Slot>> {
    let all = slots()?;
    usize::try_from(device)
        .ok()
        .and_then(|d| all.get(d))
        .ok_or_else(|| {
            Error::invalid(format!(
                "device id {device} is out of range: this process has {} device(s) (0..{})",
                all.len(),
                all.len()
            ))
        })
}

fn current_device() -> Result<DeviceId> {
    runtime()?.get_device().map_err(|e| Error::runtime(-1, e))
}

/// The resource of `device`, with the tag stored with it (0 when none).
pub fn get_per_device_resource_tagged(device: DeviceId) -> Result<(SharedResource, usize)> {
    slot(device)?.lock().get()
}

/// The resource of `device`.
pub fn get_per_device_resource(device: DeviceId) -> Result<SharedResource> {
    Ok(get_per_device_resource_tagged(device)?.0)
}

/// Sets the resource of `device` (with a front-end tag); `None` resets to the initial
/// resource. Returns the previous resource and its tag.
pub fn set_per_device_resource_tagged(
    device: DeviceId,
    resource: Option<SharedResource>,
    tag: usize,
) -> Result<(SharedResource, usize)> {
    let mut s = slot(device)?.lock();
    let previous = s.get()?;
    s.current = resource.map(|r| (r, tag));
    Ok(previous)
}

/// Sets the resource of `device`; `None` resets to the initial resource. Returns the previous.
pub fn set_per_device_resource(
    device: DeviceId,
    resource: Option<SharedResource>,
) -> Result<SharedResource> {
    Ok(set_per_device_resource_tagged(device, resource, 0)?.0)
}

/// Resets `device` to its initial resource; returns the previous resource.
pub fn reset_per_device_resource(device: DeviceId) -> Result<SharedResource> {
    set_per_device_resource(device, None)
}

/// The resource of the calling thread's current device.
pub fn get_current_device_resource() -> Result<SharedResource> {
    get_per_device_resource(current_device()?)
}

/// Sets the resource of the current device; `None` resets. Returns the previous.
pub fn set_current_device_resource(resource: Option<SharedResource>) -> Result<SharedResource> {
    set_per_device_resource(current_device()?, resource)
}

/// Resets the current device to its initial resource; returns the previous resource.
pub fn reset_current_device_resource() -> Result<SharedResource> {
    reset_per_device_resource(current_device()?)
}

/// Compare-and-set of the tag of `device`'s initial resource: stores `proposed` if no tag
/// is set yet and returns the tag now stored. Lets a front end create one wrapper object
/// for the initial resource, race-free, with the state kept here rather than in a header.
pub fn initial_resource_tag(device: DeviceId, proposed: usize) -> Result<usize> {
    let mut guard = slot(device)?.lock();
    let s = &mut *guard;
    s.initial()?;
    let entry = s
        .initial
        .as_mut()
        .expect("initial resource was just created");
    if entry.1 == 0 {
        entry.1 = proposed;
    }
    let tag = entry.1;
    // The current entry may be the initial resource set back explicitly without a tag.
    if let Some((r, t)) = &mut s.current {
        if *t == 0 && Arc::ptr_eq(r, &entry.0) {
            *t = tag;
        }
    }
    Ok(tag)
}

/// Whether `resource` is `device`'s initial resource (the one [`initial_resource_tag`]
/// tags). False while the initial resource has not been created: then it cannot be
/// `resource`. The initial resource never changes, so the answer stays valid.
pub fn is_initial_resource(device: DeviceId, resource: &SharedResource) -> Result<bool> {
    let s = slot(device)?.lock();
    Ok(s.initial
        .as_ref()
        .is_some_and(|(initial, _)| Arc::ptr_eq(initial, resource)))
}

/// Compare-and-set of the tag of `device`'s *current* entry, for resources other than the
/// initial one: if the current entry is `resource` (the same object) and untagged, stores
/// `proposed`. Returns the tag now stored with the current entry when it still is
/// `resource` (`proposed`, or one stored earlier), and 0 when the current entry is another
/// resource (it was replaced, or `resource` is a previous entry): nothing is stored then.
///
/// The initial resource keeps its dedicated tag: passing it is an error (use
/// [`initial_resource_tag`]).
pub fn current_entry_tag(
    device: DeviceId,
    resource: &SharedResource,
    proposed: usize,
) -> Result<usize> {
    let mut guard = slot(device)?.lock();
    let s = &mut *guard;
    if s.initial
        .as_ref()
        .is_some_and(|(initial, _)| Arc::ptr_eq(initial, resource))
    {
        return Err(Error::invalid(format!(
            "the resource is device {device}'s initial resource: its tag is set through \
             rmm_initial_resource_tag"
        )));
    }
    match &mut s.current {
        Some((r, t)) if Arc::ptr_eq(r, resource) => {
            if *t == 0 {
                *t = proposed;
            }
            Ok(*t)
        }
        _ => Ok(0),
    }
}
