//! The table behind `rmm_resource_t` handles.
//!
//! A handle is not a pointer to the resource: it encodes a slot index and the slot's
//! generation. Every use is checked against the table, so NULL, foreign pointers, double
//! release and use after release are reported as errors instead of being undefined
//! behaviour. Slots are recycled with a new generation; stale handles stay detectable.
//!
//! Allocation and deallocation read a slot without writing to it ([`HandleTable::with`]):
//! every thread of a multi-threaded program allocates through the same handle, and a lock
//! or reference count in the slot would bounce its cache line between cores on every call.
//! The slot publishes its generation and the resource's address in two atomics (a
//! seqlock-style read), so use after release is still reported; releasing the *last*
//! reference while another thread is inside a call on the same handle is a caller error,
//! as destroying an RMM resource in use is.
//!
//! Beside the resource, a slot's entry keeps the resource's direct path (see
//! `ffi::direct`), so that a thin resource's allocation reads one slot and one entry
//! before its runtime call; a pool's slot publishes its fronts itself, so that a front's
//! hit reads the slot and then the fronts (the resource's `Arc`, vtable and core were
//! four more dependent loads).

use std::sync::atomic::{fence, AtomicPtr, AtomicU32, AtomicU64, Ordering};

use parking_lot::{Mutex, RwLock};

use crate::error::{Error, Result};
use crate::mr::{DirectPath, PoolFronts, PoolMemoryResource, SharedResource};

const CHUNK: usize = 1024;
const MAX_CHUNKS: usize = 4096;

/// What a live slot holds: the resource and, for the thin ones, its direct path.
pub(crate) struct Entry {
    /// The resource.
    pub(crate) resource: SharedResource,
    /// The raw runtime calls a thin resource's allocation ends in (see [`super::direct`]).
    pub(crate) direct: Option<DirectPath>,
    /// The resource's device: the current device when the handle was made (resources serve
    /// the device current at their creation), so that the memory history names it without
    /// a runtime call per event; -1 when no runtime was loaded.
    pub(crate) device: i32,
    /// Whether the resource is a [`PoolMemoryResource`], whose front the C ABI calls
    /// directly (see [`Entry::pool`]).
    is_pool: bool,
}

impl Entry {
    /// The resource as the pool it is, when it is one: the C ABI's allocation calls its
    /// front's hit path with a static call that inlines, where the resource's trait call
    /// is a dynamic one through two more stack frames (a third of a front hit's cost).
    #[inline(always)]
    pub(crate) fn pool(&self) -> Option<&PoolMemoryResource> {
        if !self.is_pool {
            return None;
        }
        let p = std::sync::Arc::as_ptr(&self.resource) as *const PoolMemoryResource;
        // SAFETY: `is_pool` was set when the resource's concrete type was found to be
        // `PoolMemoryResource` (`Any::is`), so the data pointer of the `dyn` points to one;
        // `self.resource` keeps it alive as long as `self`.
        Some(unsafe { &*p })
    }
}

#[derive(Default)]
struct SlotState {
    generation: u32,
    refs: u32,
    /// Boxed so that its address (published in [`Slot::resource`]) is stable.
    value: Option<Box<Entry>>,
}

/// One handle slot: the state behind a lock for writers, and its read-only summary for
/// the hot path. A cache line each, so that the summary is one line.
#[derive(Default)]
#[repr(align(64))]
struct Slot {
    /// `generation << 1 | 1` while the slot holds a resource, `generation << 1` otherwise.
    stamp: AtomicU64,
    /// The boxed entry while the slot holds one, else null.
    resource: AtomicPtr<Entry>,
    /// The fronts of the pool the slot holds, else null.
    fronts: AtomicPtr<PoolFronts>,
    state: RwLock<SlotState>,
}

const _: () = assert!(size_of::<Slot>() == 64);

impl Slot {
    fn live_stamp(generation: u32) -> u64 {
        (u64::from(generation) << 1) | 1
    }
}

type Chunk = [Slot; CHUNK];

/// A growable table of reference-counted resource slots.
pub(crate) struct HandleTable {
    chunks: [AtomicPtr<Chunk>; MAX_CHUNKS],
    next: AtomicU32,
    free: Mutex<Vec<u32>>,
    grow: Mutex<()>,
}

/// The process's resource handles.
pub(crate) static RESOURCES: HandleTable = HandleTable::new();

impl HandleTable {
    const fn new() -> Self {
        HandleTable {
            chunks: [const { AtomicPtr::new(std::ptr::null_mut()) }; MAX_CHUNKS],
            next: AtomicU32::new(0),
            free: Mutex::new(Vec::new()),
            grow: Mutex::new(()),
        }
    }

    fn slot(&self, index: u32) -> Option<&Slot> {
        let (c, i) = (index as usize / CHUNK, index as usize % CHUNK);
        let chunk = self.chunks.get(c)?.load(Ordering::Acquire);
        // SAFETY: chunks are allocated once, published with Release, and never freed, so a
        // non-null pointer refers to a live `Chunk` for the rest of the process.
        unsafe { chunk.as_ref() }.map(|chunk| &chunk[i])
    }

    fn encode(index: u32, generation: u32) -> usize {
        ((generation as usize) << 32) | (index as usize + 1)
    }

    fn decode(handle: usize) -> Option<(u32, u32)> {
        let low = (handle & 0xffff_ffff) as u32;
        let index = low.checked_sub(1)?;
        Some((index, (handle >> 32) as u32))
    }

    fn new_index(&self) -> Result<u32> {
        if let Some(i) = self.free.lock().pop() {
            return Ok(i);
        }
        let index = self.next.fetch_add(1, Ordering::Relaxed);
        let c = index as usize / CHUNK;
        if c >= MAX_CHUNKS {
            return Err(Error::BadAlloc {
                requested: 0,
                resource: "rmm handle table",
                detail: format!("more than {} live resource handles", MAX_CHUNKS * CHUNK),
            });
        }
        if self.chunks[c].load(Ordering::Acquire).is_null() {
            let _g = self.grow.lock();
            if self.chunks[c].load(Ordering::Acquire).is_null() {
                let chunk: Box<Chunk> = Box::new(std::array::from_fn(|_| Slot::default()));
                self.chunks[c].store(Box::into_raw(chunk), Ordering::Release);
            }
        }
        Ok(index)
    }

    /// Stores `value` in a new handle holding one reference.
    pub(crate) fn insert(&self, value: SharedResource) -> Result<usize> {
        // The C ABI's first handle: from here on, `RMM_MEMORY_HISTORY`'s snapshot at exit
        // (whose hook the runtime's first use registered) lists the handles' resources.
        crate::history::install_exit_writer();
        let index = self.new_index()?;
        let slot = self.slot(index).expect("slot of a fresh index exists");
        let mut s = slot.state.write();
        s.refs = 1;
        let direct = value.direct_path();
        let device = crate::runtime::runtime()
            .map(crate::mr::current_device_or_unknown)
            .unwrap_or(-1);
        let is_pool = value.as_any().is::<PoolMemoryResource>();
        let boxed = s.value.insert(Box::new(Entry {
            resource: value,
            direct,
            device,
            is_pool,
        }));
        let fronts: *const PoolFronts = boxed.pool().map_or(std::ptr::null(), |p| p.fronts());
        slot.fronts.store(fronts.cast_mut(), Ordering::Release);
        slot.resource
            .store(&mut **boxed as *mut Entry, Ordering::Release);
        slot.stamp
            .store(Slot::live_stamp(s.generation), Ordering::Release);
        Ok(Self::encode(index, s.generation))
    }

    fn invalid(handle: usize, what: &str) -> Error {
        Error::invalid(format!(
            "resource handle {handle:#x} {what}; handles come from rmm_*_create or a getter and \
             stay valid until their last rmm_resource_release"
        ))
    }

    fn live(&self, handle: usize) -> Result<&Slot> {
        if handle == 0 {
            return Err(Error::invalid("resource handle is NULL"));
        }
        let (index, _) =
            Self::decode(handle).ok_or_else(|| Self::invalid(handle, "is not a handle"))?;
        self.slot(index)
            .ok_or_else(|| Self::invalid(handle, "is not a handle"))
    }

    fn check(handle: usize, s: &SlotState) -> Result<()> {
        let (_, generation) = Self::decode(handle).expect("decoded before");
        if s.generation != generation || s.refs == 0 {
            return Err(Self::invalid(
                handle,
                "was already released (use after release or double release)",
            ));
        }
        Ok(())
    }

    /// The resource behind `handle` (a new `Arc`; the handle's count is unchanged).
    /// Every resource a live handle holds (for memory snapshots).
    pub(crate) fn live_resources(&self) -> Vec<SharedResource> {
        let mut out = Vec::new();
        for index in 0..self.next.load(Ordering::Acquire) {
            if let Some(slot) = self.slot(index) {
                if let Some(e) = slot.state.read().value.as_ref() {
                    out.push(e.resource.clone());
                }
            }
        }
        out
    }

    pub(crate) fn get(&self, handle: usize) -> Result<SharedResource> {
        let s = self.live(handle)?.state.read();
        Self::check(handle, &s)?;
        Ok(SharedResource::clone(
            &s.value.as_deref().expect("live slot has a value").resource,
        ))
    }

    /// Runs `f` on the resource behind `handle` without writing to the slot (see the module
    /// docs): the allocation hot path. Errors are those of [`HandleTable::get`].
    #[inline]
    pub(crate) fn with<R>(
        &self,
        handle: usize,
        f: impl FnOnce(&SharedResource) -> Result<R>,
    ) -> Result<R> {
        if let Some(entry) = self.entry(handle) {
            return f(&entry.resource);
        }
        // Not a live handle: the locked path reports exactly what is wrong.
        let r = self.get(handle)?;
        f(&r)
    }

    /// The entry of a live `handle`, read without writing to the slot; `None` when the
    /// handle is not live (the locked path then says why). The entry stays valid while the
    /// caller holds the handle (module docs).
    #[inline(always)]
    pub(crate) fn entry(&self, handle: usize) -> Option<&Entry> {
        self.published(handle, |slot| &slot.resource)
    }

    /// The fronts of the pool behind a live `handle`; `None` when the handle is not live or
    /// not a pool. Valid as long as [`Self::entry`]'s answer: the entry's resource owns them.
    #[inline(always)]
    pub(crate) fn fronts(&self, handle: usize) -> Option<&PoolFronts> {
        self.published(handle, |slot| &slot.fronts)
    }

    /// What `field` of a live `handle`'s slot points to, read without writing to the slot.
    #[inline(always)]
    fn published<T>(&self, handle: usize, field: impl Fn(&Slot) -> &AtomicPtr<T>) -> Option<&T> {
        let (index, generation) = Self::decode(handle)?;
        let slot = self.slot(index)?;
        let want = Slot::live_stamp(generation);
        if slot.stamp.load(Ordering::Acquire) != want {
            return None;
        }
        let p = field(slot).load(Ordering::Acquire);
        // Seqlock read: the stamp is unchanged after reading the pointer, so the pointer
        // belongs to this generation.
        fence(Ordering::Acquire);
        if p.is_null() || slot.stamp.load(Ordering::Relaxed) != want {
            return None;
        }
        // SAFETY: `p` was published for this live generation (`insert`) and points into
        // the slot's boxed entry or the resource it owns, which are freed only when the
        // handle's last reference is released; the caller may not do that while using the
        // handle (module docs).
        Some(unsafe { &*p })
    }

    /// Adds a reference to `handle`.
    pub(crate) fn retain(&self, handle: usize) -> Result<()> {
        let mut s = self.live(handle)?.state.write();
        Self::check(handle, &s)?;
        s.refs = s.refs.checked_add(1).ok_or_else(|| {
            Error::invalid(format!(
                "resource handle {handle:#x} has too many references"
            ))
        })?;
        Ok(())
    }

    /// Drops a reference to `handle`; the last one frees the slot and releases the resource.
    pub(crate) fn release(&self, handle: usize) -> Result<()> {
        let (index, _) =
            Self::decode(handle).ok_or_else(|| Self::invalid(handle, "is not a handle"))?;
        let value = {
            let slot = self.live(handle)?;
            let mut s = slot.state.write();
            Self::check(handle, &s)?;
            s.refs -= 1;
            if s.refs > 0 {
                return Ok(());
            }
            s.generation = s.generation.wrapping_add(1);
            slot.stamp
                .store(u64::from(s.generation) << 1, Ordering::Release);
            slot.resource.store(std::ptr::null_mut(), Ordering::Release);
            slot.fronts.store(std::ptr::null_mut(), Ordering::Release);
            s.value.take()
        };
        self.free.lock().push(index);
        // Dropped outside the slot lock: the resource's drop may call back into rmm.
        drop(value);
        Ok(())
    }
}
