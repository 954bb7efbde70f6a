//! The table behind `rmm_resource_t` handles.
//!
//! A handle is not a pointer to the resource: it encodes a slot index and the slot's
//! generation. Every use is checked against the table, so NULL, foreign pointers, double
//! release and use after release are reported as errors instead of being undefined
//! behaviour. Slots are recycled with a new generation; stale handles stay detectable.

use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};

use parking_lot::{Mutex, RwLock};

use crate::error::{Error, Result};
use crate::mr::SharedResource;

const CHUNK: usize = 1024;
const MAX_CHUNKS: usize = 4096;

#[derive(Default)]
struct SlotState {
    generation: u32,
    refs: u32,
    value: Option<SharedResource>,
}

type Chunk = [RwLock<SlotState>; CHUNK];

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

    fn slot(&self, index: u32) -> Option<&RwLock<SlotState>> {
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
                let chunk: Box<Chunk> = Box::new(std::array::from_fn(|_| RwLock::default()));
                self.chunks[c].store(Box::into_raw(chunk), Ordering::Release);
            }
        }
        Ok(index)
    }

    /// Stores `value` in a new handle holding one reference.
    pub(crate) fn insert(&self, value: SharedResource) -> Result<usize> {
        let index = self.new_index()?;
        let slot = self.slot(index).expect("slot of a fresh index exists");
        let mut s = slot.write();
        s.refs = 1;
        s.value = Some(value);
        Ok(Self::encode(index, s.generation))
    }

    fn invalid(handle: usize, what: &str) -> Error {
        Error::invalid(format!(
            "resource handle {handle:#x} {what}; handles come from rmm_*_create or a getter and \
             stay valid until their last rmm_resource_release"
        ))
    }

    fn live(&self, handle: usize) -> Result<&RwLock<SlotState>> {
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
    pub(crate) fn get(&self, handle: usize) -> Result<SharedResource> {
        let s = self.live(handle)?.read();
        Self::check(handle, &s)?;
        Ok(s.value.clone().expect("live slot has a value"))
    }

    /// Adds a reference to `handle`.
    pub(crate) fn retain(&self, handle: usize) -> Result<()> {
        let mut s = self.live(handle)?.write();
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
            let mut s = self.live(handle)?.write();
            Self::check(handle, &s)?;
            s.refs -= 1;
            if s.refs > 0 {
                return Ok(());
            }
            s.generation = s.generation.wrapping_add(1);
            s.value.take()
        };
        self.free.lock().push(index);
        // Dropped outside the slot lock: the resource's drop may call back into rmm.
        drop(value);
        Ok(())
    }
}
