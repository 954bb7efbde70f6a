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

/// How many front ends may tag an entry, each under its own key: the C++ layer's API
/// generations (25.02, 25.10, 26.06, 26.08, 26.10) each keep their own object for the same
/// resource.
pub const TAG_KEYS: usize = 5;

/// Called with a tag's value when the registry drops the entry that carries it for a key
/// other than the one replacing the entry (that caller gets its own tag back instead).
pub type TagRelease = Box<dyn FnOnce(usize) + Send>;

#[derive(Default)]
struct Tag {
    value: usize,
    release: Option<TagRelease>,
}

/// One entry of the registry: the resource and, per key, the front end's object for it.
struct Entry {
    resource: SharedResource,
    tags: [Tag; TAG_KEYS],
}

impl Entry {
    fn new(resource: SharedResource) -> Self {
        Self {
            resource,
            tags: Default::default(),
        }
    }
}

/// The releases owed by an entry that left the registry: run once the slot is unlocked,
/// since they call back into front ends.
#[derive(Default)]
struct Orphans(Vec<(usize, TagRelease)>);

impl Orphans {
    fn run(self) {
        for (value, release) in self.0 {
            release(value);
        }
    }
}

fn check_key(key: usize) -> Result<()> {
    if key < TAG_KEYS {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "tag key {key} is out of range: the registry keeps {TAG_KEYS} keys (0..{TAG_KEYS})"
        )))
    }
}

#[derive(Default)]
struct Slot {
    initial: Option<Entry>,
    current: Option<Entry>,
}

impl Slot {
    fn initial(&mut self) -> Result<&mut Entry> {
        if self.initial.is_none() {
            let r: SharedResource = Arc::new(CudaMemoryResource::new()?);
            self.initial = Some(Entry::new(r));
        }
        Ok(self
            .initial
            .as_mut()
            .expect("initial resource was just created"))
    }

    fn get(&mut self, key: usize) -> Result<(SharedResource, usize)> {
        let entry = match &mut self.current {
            Some(e) => e,
            None => self.initial()?,
        };
        Ok((entry.resource.clone(), entry.tags[key].value))
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

/// The resource of `device`, with the tag stored with it under `key` (0 when none).
pub fn get_per_device_resource_tagged(
    device: DeviceId,
    key: usize,
) -> Result<(SharedResource, usize)> {
    check_key(key)?;
    slot(device)?.lock().get(key)
}

/// The resource of `device`.
pub fn get_per_device_resource(device: DeviceId) -> Result<SharedResource> {
    Ok(get_per_device_resource_tagged(device, 0)?.0)
}

/// Sets the resource of `device` with a front end's tag under `key` (and the function that
/// releases it should another key replace the entry); `None` resets to the initial resource.
/// Returns the previous resource and its tag under `key`; the previous entry's tags under
/// other keys are released.
pub fn set_per_device_resource_tagged(
    device: DeviceId,
    resource: Option<SharedResource>,
    key: usize,
    tag: usize,
    release: Option<TagRelease>,
) -> Result<(SharedResource, usize)> {
    check_key(key)?;
    let mut orphans = Orphans::default();
    let previous = {
        let mut s = slot(device)?.lock();
        let previous = s.get(key)?;
        let entry = resource.map(|r| {
            let mut e = Entry::new(r);
            e.tags[key] = Tag {
                value: tag,
                release,
            };
            e
        });
        if let Some(old) = std::mem::replace(&mut s.current, entry) {
            for (k, t) in old.tags.into_iter().enumerate() {
                if let (true, Some(release)) = (k != key, t.release) {
                    orphans.0.push((t.value, release));
                }
            }
        }
        previous
    };
    orphans.run();
    Ok(previous)
}

/// Sets the resource of `device`; `None` resets to the initial resource. Returns the previous.
pub fn set_per_device_resource(
    device: DeviceId,
    resource: Option<SharedResource>,
) -> Result<SharedResource> {
    Ok(set_per_device_resource_tagged(device, resource, 0, 0, None)?.0)
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

/// Compare-and-set of the tag under `key` of `device`'s initial resource: stores `proposed`
/// if no tag is set yet and returns the tag now stored. Lets a front end create one wrapper
/// object for the initial resource, race-free, with the state kept here rather than in a
/// header. The initial resource is never replaced, so its tags are never released.
pub fn initial_resource_tag(device: DeviceId, key: usize, proposed: usize) -> Result<usize> {
    check_key(key)?;
    let mut guard = slot(device)?.lock();
    let s = &mut *guard;
    let entry = s.initial()?;
    if entry.tags[key].value == 0 {
        entry.tags[key].value = proposed;
    }
    let tag = entry.tags[key].value;
    let initial = entry.resource.clone();
    // The current entry may be the initial resource set back explicitly without a tag: it
    // shares the initial object (never released through the current entry).
    if let Some(e) = &mut s.current {
        if e.tags[key].value == 0 && Arc::ptr_eq(&e.resource, &initial) {
            e.tags[key] = Tag {
                value: tag,
                release: None,
            };
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
        .is_some_and(|e| Arc::ptr_eq(&e.resource, resource)))
}

/// Compare-and-set of the tag under `key` of `device`'s *current* entry, for resources other
/// than the initial one: if the current entry is `resource` (the same object) and has no tag
/// under `key`, stores `proposed` (with `release`, called should another key replace the
/// entry). Returns the tag now stored under `key` when the current entry still is
/// `resource` (`proposed`, or one stored earlier), and 0 when the current entry is another
/// resource (it was replaced, or `resource` is a previous entry): nothing is stored then,
/// and `release` is dropped uncalled.
///
/// The initial resource keeps its dedicated tags: passing it is an error (use
/// [`initial_resource_tag`]).
pub fn current_entry_tag(
    device: DeviceId,
    resource: &SharedResource,
    key: usize,
    proposed: usize,
    release: Option<TagRelease>,
) -> Result<usize> {
    check_key(key)?;
    let mut guard = slot(device)?.lock();
    let s = &mut *guard;
    if s.initial
        .as_ref()
        .is_some_and(|e| Arc::ptr_eq(&e.resource, resource))
    {
        return Err(Error::invalid(format!(
            "the resource is device {device}'s initial resource: its tag is set through \
             rmm_initial_resource_tag"
        )));
    }
    match &mut s.current {
        Some(e) if Arc::ptr_eq(&e.resource, resource) => {
            let t = &mut e.tags[key];
            if t.value == 0 {
                *t = Tag {
                    value: proposed,
                    release,
                };
            }
            Ok(t.value)
        }
        _ => Ok(0),
    }
}
