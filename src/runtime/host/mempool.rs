//! Emulated stream-ordered memory pools (`cudaMallocAsync` / `cudaMemPool_t`).

use std::collections::{BTreeMap, HashMap};
use std::ffi::c_void;
use std::sync::Arc;

use parking_lot::Mutex;

use super::memory::{AllocKind, Memory};
use super::rt_err;
use crate::runtime::{DeviceId, MemPoolAttr, RtResult, RuntimeErrorKind};

const CALL_ALLOC: &str = "hostMallocFromPoolAsync";

struct PoolState {
    /// Cached free blocks by size.
    cached: BTreeMap<usize, Vec<usize>>,
    /// Blocks handed out, by address, with their size.
    in_use: HashMap<usize, usize>,
    /// Blocks whose stream-ordered free is queued but not yet reached.
    freeing: HashMap<usize, usize>,
    reserved: usize,
    used: usize,
    reserved_high: usize,
    used_high: usize,
    release_threshold: u64,
    /// Follow-event, opportunistic, internal-dependencies reuse flags.
    reuse: [bool; 3],
    destroyed: bool,
}

/// One pool of one device.
pub(crate) struct HostPool {
    pub handle: usize,
    pub device: DeviceId,
    pub is_default: bool,
    managed: bool,
    max_size: usize,
    memory: Arc<Memory>,
    state: Mutex<PoolState>,
}

impl HostPool {
    pub fn new(
        handle: usize,
        device: DeviceId,
        is_default: bool,
        managed: bool,
        max_size: usize,
        memory: Arc<Memory>,
    ) -> Self {
        HostPool {
            handle,
            device,
            is_default,
            managed,
            max_size,
            memory,
            state: Mutex::new(PoolState {
                cached: BTreeMap::new(),
                in_use: HashMap::new(),
                freeing: HashMap::new(),
                reserved: 0,
                used: 0,
                reserved_high: 0,
                used_high: 0,
                release_threshold: 0,
                reuse: [true; 3],
                destroyed: false,
            }),
        }
    }

    /// Hands out a cached block of at least `bytes` (at most twice as large, so a huge
    /// cached block is not wasted on a tiny request) or reserves a fresh one.
    pub fn allocate(&self, bytes: usize) -> RtResult<*mut c_void> {
        if bytes == 0 {
            return Err(rt_err(CALL_ALLOC, RuntimeErrorKind::InvalidValue));
        }
        let mut st = self.state.lock();
        if st.destroyed {
            return Err(rt_err(CALL_ALLOC, RuntimeErrorKind::InvalidHandle));
        }
        let hit = st
            .cached
            .range(bytes..=bytes.saturating_mul(2))
            .next()
            .map(|(&size, _)| size);
        let (ptr, size) = match hit {
            Some(size) => {
                let blocks = st.cached.get_mut(&size).expect("found above");
                let ptr = blocks.pop().expect("no empty lists are kept");
                if blocks.is_empty() {
                    st.cached.remove(&size);
                }
                (ptr, size)
            }
            None => (self.reserve(&mut st, bytes)?, bytes),
        };
        st.in_use.insert(ptr, size);
        st.used += size;
        st.used_high = st.used_high.max(st.used);
        Ok(ptr as *mut c_void)
    }

    /// Maps a fresh block, first releasing cached blocks if the pool limit or the device
    /// capacity is in the way (as CUDA does before reporting out of memory).
    fn reserve(&self, st: &mut PoolState, bytes: usize) -> RtResult<usize> {
        let oom = || rt_err(CALL_ALLOC, RuntimeErrorKind::OutOfMemory);
        if self.max_size > 0 {
            if bytes > self.max_size - st.used {
                return Err(oom());
            }
            while st.reserved + bytes > self.max_size && self.release_one(st) {}
        }
        let kind = AllocKind::Pool {
            pool: self.handle,
            managed: self.managed,
        };
        let ptr = match self.memory.allocate(CALL_ALLOC, bytes, self.device, kind) {
            Ok(p) => p,
            Err(e) if e.kind == RuntimeErrorKind::OutOfMemory && !st.cached.is_empty() => {
                while self.release_one(st) {}
                self.memory.allocate(CALL_ALLOC, bytes, self.device, kind)?
            }
            Err(e) => return Err(e),
        } as usize;
        st.reserved += bytes;
        st.reserved_high = st.reserved_high.max(st.reserved);
        Ok(ptr)
    }

    /// Unmaps the largest cached block; false when none is cached.
    fn release_one(&self, st: &mut PoolState) -> bool {
        let Some(mut entry) = st.cached.last_entry() else {
            return false;
        };
        let size = *entry.key();
        let ptr = entry.get_mut().pop().expect("no empty lists are kept");
        if entry.get().is_empty() {
            entry.remove();
        }
        self.unmap(ptr);
        st.reserved -= size;
        true
    }

    fn unmap(&self, ptr: usize) {
        let handle = self.handle;
        let freed = self.memory.free(
            "hostMemPoolTrimTo",
            ptr,
            |k| matches!(k, AllocKind::Pool { pool, .. } if pool == handle),
        );
        debug_assert!(freed.is_ok(), "pool block {ptr:#x} missing from the table");
    }

    /// Takes `ptr` out of use at `free_async` time so a second free is an error.
    pub fn begin_free(&self, ptr: usize) -> RtResult<()> {
        let mut st = self.state.lock();
        match st.in_use.remove(&ptr) {
            Some(size) => {
                st.freeing.insert(ptr, size);
                Ok(())
            }
            None => Err(rt_err("hostFreeAsync", RuntimeErrorKind::InvalidValue)),
        }
    }

    /// Undoes [`HostPool::begin_free`] when the free could not be queued.
    pub fn cancel_free(&self, ptr: usize) {
        let mut st = self.state.lock();
        if let Some(size) = st.freeing.remove(&ptr) {
            st.in_use.insert(ptr, size);
        }
    }

    /// Runs in stream order: the block is free for reuse; release above the threshold.
    pub fn finish_free(&self, ptr: usize) {
        let mut st = self.state.lock();
        let Some(size) = st.freeing.remove(&ptr) else {
            return; // the pool was destroyed meanwhile and unmapped the block
        };
        st.used -= size;
        st.cached.entry(size).or_default().push(ptr);
        let threshold = usize::try_from(st.release_threshold).unwrap_or(usize::MAX);
        while st.reserved > threshold && self.release_one(&mut st) {}
    }

    /// Releases cached blocks until at most `keep` bytes stay reserved (never below used).
    pub fn trim_to(&self, keep: usize) {
        let mut st = self.state.lock();
        while st.reserved > keep && self.release_one(&mut st) {}
    }

    /// Unmaps everything, including blocks still handed out (CUDA frees them too).
    pub fn destroy(&self) {
        let mut guard = self.state.lock();
        let st = &mut *guard;
        st.destroyed = true;
        let blocks: Vec<usize> = st
            .in_use
            .drain()
            .chain(st.freeing.drain())
            .map(|(p, _)| p)
            .chain(std::mem::take(&mut st.cached).into_values().flatten())
            .collect();
        for ptr in blocks {
            self.unmap(ptr);
        }
        st.reserved = 0;
        st.used = 0;
    }

    pub fn get_attribute(&self, attr: MemPoolAttr) -> u64 {
        let st = self.state.lock();
        match attr {
            MemPoolAttr::ReleaseThreshold => st.release_threshold,
            MemPoolAttr::ReuseFollowEventDependencies => st.reuse[0] as u64,
            MemPoolAttr::ReuseAllowOpportunistic => st.reuse[1] as u64,
            MemPoolAttr::ReuseAllowInternalDependencies => st.reuse[2] as u64,
            MemPoolAttr::ReservedMemCurrent => st.reserved as u64,
            MemPoolAttr::ReservedMemHigh => st.reserved_high as u64,
            MemPoolAttr::UsedMemCurrent => st.used as u64,
            MemPoolAttr::UsedMemHigh => st.used_high as u64,
        }
    }

    pub fn set_attribute(&self, attr: MemPoolAttr, value: u64) -> RtResult<()> {
        let invalid = || rt_err("hostMemPoolSetAttribute", RuntimeErrorKind::InvalidValue);
        let mut st = self.state.lock();
        match attr {
            MemPoolAttr::ReleaseThreshold => st.release_threshold = value,
            MemPoolAttr::ReuseFollowEventDependencies => st.reuse[0] = value != 0,
            MemPoolAttr::ReuseAllowOpportunistic => st.reuse[1] = value != 0,
            MemPoolAttr::ReuseAllowInternalDependencies => st.reuse[2] = value != 0,
            MemPoolAttr::ReservedMemCurrent | MemPoolAttr::UsedMemCurrent => return Err(invalid()),
            MemPoolAttr::ReservedMemHigh | MemPoolAttr::UsedMemHigh if value != 0 => {
                return Err(invalid())
            }
            MemPoolAttr::ReservedMemHigh => st.reserved_high = st.reserved,
            MemPoolAttr::UsedMemHigh => st.used_high = st.used,
        }
        Ok(())
    }
}
