//! Emulated device memory: one anonymous mapping per allocation, a table of live
//! allocations (so bad frees are errors, never UB) and per-device capacity accounting.
//!
//! Virtual memory management is emulated too, with CUDA's rules: an address reservation is
//! an inaccessible (`PROT_NONE`) mapping; a physical handle is capacity charged to its
//! device, with no memory yet; mapping a handle into a reservation makes a range of it
//! a table entry, still inaccessible until access is set (then readable and writable);
//! unmapping gives the pages back to the kernel at once and makes the range inaccessible
//! again; a handle's capacity returns when it is released and no longer mapped. A handle
//! is mapped at most once at a time here (CUDA allows several mappings of one handle,
//! sharing memory; nothing in this library does that).

use std::collections::{BTreeMap, HashMap};
use std::ffi::c_void;

use parking_lot::Mutex;

use super::rt_err;
use crate::runtime::{DeviceId, MemoryType, PointerAttributes, RtResult, RuntimeErrorKind};

/// What an allocation is, so each free call accepts only its own kind.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum AllocKind {
    Device,
    Managed,
    Pinned,
    /// A block reserved by the mempool with this handle.
    Pool {
        pool: usize,
        managed: bool,
    },
    /// A physical handle mapped into a reservation; readable and writable once `access`.
    /// Its handle carries the capacity charge.
    Mapped {
        handle: u64,
        access: bool,
    },
}

impl AllocKind {
    fn counts_against_device(self) -> bool {
        !matches!(self, AllocKind::Pinned | AllocKind::Mapped { .. })
    }
}

/// The granularity of emulated virtual-memory mappings (CUDA's on current GPUs).
pub(crate) const VMM_GRANULARITY: usize = 2 << 20;

/// Physical memory made by `vmm_create`.
#[derive(Clone, Copy, Debug)]
struct Handle {
    size: usize,
    device: DeviceId,
    mapped: bool,
    released: bool,
}

/// One live mapping.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Alloc {
    pub size: usize,
    pub device: DeviceId,
    pub kind: AllocKind,
}

struct Table {
    allocs: BTreeMap<usize, Alloc>,
    used: Vec<usize>,
    /// Address reservations: start -> size.
    reservations: BTreeMap<usize, usize>,
    handles: HashMap<u64, Handle>,
    next_handle: u64,
}

impl Table {
    /// Drops `id`'s charge and entry once it is released and unmapped.
    fn settle_handle(&mut self, id: u64) {
        if let Some(h) = self.handles.get(&id).copied() {
            if h.released && !h.mapped {
                self.handles.remove(&id);
                self.used[h.device as usize] -= h.size;
            }
        }
    }

    /// Whether `[addr, addr + size)` lies inside one reservation.
    fn reserved(&self, addr: usize, size: usize) -> bool {
        match self.reservations.range(..=addr).next_back() {
            Some((&start, &len)) => addr + size <= start + len,
            None => false,
        }
    }

    /// The mappings that tile `[addr, addr + size)` exactly (starts, in order), or `None`
    /// when the range has a gap or cuts a mapping.
    fn tiling(&self, addr: usize, size: usize) -> Option<Vec<usize>> {
        let end = addr.checked_add(size)?;
        let mut at = addr;
        let mut starts = Vec::new();
        for (&start, a) in self.allocs.range(addr..end) {
            if start != at || !matches!(a.kind, AllocKind::Mapped { .. }) {
                return None;
            }
            at = start + a.size;
            starts.push(start);
        }
        (at == end && size > 0).then_some(starts)
    }
}

/// Sets the protection of `[addr, addr + size)`, inside a reservation.
fn protect(addr: usize, size: usize, prot: i32) -> bool {
    // SAFETY: the range lies inside a reservation this table owns (checked by callers), so
    // changing its protection touches no memory anything else in the process uses.
    unsafe { libc::mprotect(addr as *mut c_void, size, prot) == 0 }
}

/// Gives the pages of `[addr, addr + size)` (inside a reservation) back to the kernel and
/// makes the range inaccessible, keeping it reserved.
fn decommit(addr: usize, size: usize) -> bool {
    // SAFETY: as in `protect`; MAP_FIXED replaces only pages of our own reservation.
    let p = unsafe {
        libc::mmap(
            addr as *mut c_void,
            size,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED,
            -1,
            0,
        )
    };
    p as usize == addr
}

/// All memory of one [`super::HostRuntime`].
pub(crate) struct Memory {
    capacity: usize,
    table: Mutex<Table>,
}

fn map(bytes: usize) -> Option<usize> {
    // SAFETY: an anonymous private mapping with a null hint touches no existing memory;
    // the kernel picks an unused range or fails. MAP_NORESERVE keeps it lazily committed.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            bytes,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    (p != libc::MAP_FAILED && !p.is_null()).then_some(p as usize)
}

fn unmap(ptr: usize, bytes: usize) {
    // SAFETY: `ptr`/`bytes` describe a mapping made by `map` that was just removed from the
    // table, so nothing else in this runtime will hand it out or unmap it again.
    unsafe {
        libc::munmap(ptr as *mut c_void, bytes);
    }
}

impl Memory {
    pub fn new(devices: usize, capacity: usize) -> Self {
        Memory {
            capacity,
            table: Mutex::new(Table {
                allocs: BTreeMap::new(),
                used: vec![0; devices],
                reservations: BTreeMap::new(),
                handles: HashMap::new(),
                next_handle: 1,
            }),
        }
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Bytes of `device` in use (allocations plus mempool reservations).
    pub fn used(&self, device: DeviceId) -> usize {
        self.table.lock().used[device as usize]
    }

    /// Maps `bytes` (> 0) of `kind` memory for `device`, charging its capacity.
    pub fn allocate(
        &self,
        call: &'static str,
        bytes: usize,
        device: DeviceId,
        kind: AllocKind,
    ) -> RtResult<*mut c_void> {
        if bytes == 0 {
            return Err(rt_err(call, RuntimeErrorKind::InvalidValue));
        }
        let charged = kind.counts_against_device();
        if charged {
            let mut t = self.table.lock();
            let used = &mut t.used[device as usize];
            if bytes > self.capacity - *used {
                return Err(rt_err(call, RuntimeErrorKind::OutOfMemory));
            }
            *used += bytes;
        }
        let Some(ptr) = map(bytes) else {
            if charged {
                self.table.lock().used[device as usize] -= bytes;
            }
            return Err(rt_err(call, RuntimeErrorKind::OutOfMemory));
        };
        self.table.lock().allocs.insert(
            ptr,
            Alloc {
                size: bytes,
                device,
                kind,
            },
        );
        Ok(ptr as *mut c_void)
    }

    /// Unmaps the allocation starting exactly at `ptr` if `accept` takes its kind;
    /// anything else is `InvalidValue` and changes nothing.
    pub fn free(
        &self,
        call: &'static str,
        ptr: usize,
        accept: impl Fn(AllocKind) -> bool,
    ) -> RtResult<Alloc> {
        let alloc = {
            let mut t = self.table.lock();
            match t.allocs.get(&ptr) {
                Some(a) if accept(a.kind) => {}
                _ => return Err(rt_err(call, RuntimeErrorKind::InvalidValue)),
            }
            let a = t.allocs.remove(&ptr).expect("checked above");
            if a.kind.counts_against_device() {
                t.used[a.device as usize] -= a.size;
            }
            a
        };
        unmap(ptr, alloc.size);
        Ok(alloc)
    }

    /// The allocation starting exactly at `ptr`.
    pub fn get(&self, ptr: usize) -> Option<Alloc> {
        self.table.lock().allocs.get(&ptr).copied()
    }

    /// The allocation containing `ptr` (interior pointers included), with its start.
    pub fn find(&self, ptr: usize) -> Option<(usize, Alloc)> {
        let t = self.table.lock();
        let (&start, &a) = t.allocs.range(..=ptr).next_back()?;
        (ptr - start < a.size).then_some((start, a))
    }

    pub fn attributes(&self, ptr: usize) -> PointerAttributes {
        match self.find(ptr) {
            None => PointerAttributes {
                memory_type: MemoryType::Unregistered,
                device: -1,
            },
            Some((_, a)) => PointerAttributes {
                memory_type: match a.kind {
                    AllocKind::Device
                    | AllocKind::Pool { managed: false, .. }
                    | AllocKind::Mapped { .. } => MemoryType::Device,
                    AllocKind::Managed | AllocKind::Pool { managed: true, .. } => {
                        MemoryType::Managed
                    }
                    AllocKind::Pinned => MemoryType::Host,
                },
                device: a.device,
            },
        }
    }
}

impl Memory {
    /// Reserves `size` bytes (a multiple of the granularity) of inaccessible address space
    /// aligned to `alignment` (0: the granularity; else a power of two).
    pub fn vmm_reserve(
        &self,
        call: &'static str,
        size: usize,
        alignment: usize,
    ) -> RtResult<usize> {
        let invalid = || rt_err(call, RuntimeErrorKind::InvalidValue);
        let align = if alignment == 0 {
            VMM_GRANULARITY
        } else {
            alignment
        };
        if size == 0 || size % VMM_GRANULARITY != 0 || !align.is_power_of_two() {
            return Err(invalid());
        }
        let span = size.checked_add(align).ok_or_else(invalid)?;
        // SAFETY: a fresh inaccessible anonymous mapping at a kernel-chosen address.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                span,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(rt_err(call, RuntimeErrorKind::OutOfMemory));
        }
        let raw = p as usize;
        let start = (raw + align - 1) & !(align - 1);
        // Trim the slack on both sides so the reservation is exactly `size` bytes.
        if start > raw {
            unmap(raw, start - raw);
        }
        if raw + span > start + size {
            unmap(start + size, raw + span - (start + size));
        }
        self.table.lock().reservations.insert(start, size);
        Ok(start)
    }

    /// Frees a whole reservation with nothing mapped in it.
    pub fn vmm_address_free(&self, call: &'static str, addr: usize, size: usize) -> RtResult<()> {
        let mut t = self.table.lock();
        let mapped_inside = t
            .allocs
            .range(addr..addr.saturating_add(size))
            .next()
            .is_some();
        if t.reservations.get(&addr) != Some(&size) || mapped_inside {
            return Err(rt_err(call, RuntimeErrorKind::InvalidValue));
        }
        t.reservations.remove(&addr);
        drop(t);
        unmap(addr, size);
        Ok(())
    }

    /// Charges `size` bytes (a multiple of the granularity) to `device` as a new handle.
    pub fn vmm_create(&self, call: &'static str, size: usize, device: DeviceId) -> RtResult<u64> {
        if size == 0 || size % VMM_GRANULARITY != 0 {
            return Err(rt_err(call, RuntimeErrorKind::InvalidValue));
        }
        let mut t = self.table.lock();
        if size > self.capacity - t.used[device as usize] {
            return Err(rt_err(call, RuntimeErrorKind::OutOfMemory));
        }
        t.used[device as usize] += size;
        let id = t.next_handle;
        t.next_handle += 1;
        t.handles.insert(
            id,
            Handle {
                size,
                device,
                mapped: false,
                released: false,
            },
        );
        Ok(id)
    }

    /// Releases a handle; its capacity returns once it is unmapped.
    pub fn vmm_release(&self, call: &'static str, id: u64) -> RtResult<()> {
        let mut t = self.table.lock();
        match t.handles.get_mut(&id) {
            Some(h) if !h.released => h.released = true,
            _ => return Err(rt_err(call, RuntimeErrorKind::InvalidValue)),
        }
        t.settle_handle(id);
        Ok(())
    }

    /// Maps all of handle `id` at `addr`, inside a reservation, over nothing mapped.
    pub fn vmm_map(&self, call: &'static str, addr: usize, size: usize, id: u64) -> RtResult<()> {
        let invalid = || rt_err(call, RuntimeErrorKind::InvalidValue);
        let mut t = self.table.lock();
        let h = *t.handles.get(&id).ok_or_else(invalid)?;
        let overlaps = t
            .allocs
            .range(..addr.saturating_add(size))
            .next_back()
            .is_some_and(|(&start, a)| start + a.size > addr);
        if h.released
            || h.mapped
            || size != h.size
            || addr % VMM_GRANULARITY != 0
            || !t.reserved(addr, size)
            || overlaps
        {
            return Err(invalid());
        }
        t.handles.get_mut(&id).expect("checked above").mapped = true;
        t.allocs.insert(
            addr,
            Alloc {
                size,
                device: h.device,
                kind: AllocKind::Mapped {
                    handle: id,
                    access: false,
                },
            },
        );
        Ok(())
    }

    /// Unmaps the whole mappings tiling `[addr, addr + size)`; their pages go back at once.
    pub fn vmm_unmap(&self, call: &'static str, addr: usize, size: usize) -> RtResult<()> {
        let mut t = self.table.lock();
        let starts = t
            .tiling(addr, size)
            .ok_or_else(|| rt_err(call, RuntimeErrorKind::InvalidValue))?;
        if !decommit(addr, size) {
            return Err(rt_err(call, RuntimeErrorKind::OutOfMemory));
        }
        for start in starts {
            let a = t.allocs.remove(&start).expect("tiling found it");
            if let AllocKind::Mapped { handle, .. } = a.kind {
                if let Some(h) = t.handles.get_mut(&handle) {
                    h.mapped = false;
                }
                t.settle_handle(handle);
            }
        }
        Ok(())
    }

    /// Whether `[addr, addr + size)` is covered by contiguous mappings with access.
    pub fn vmm_accessible(&self, addr: usize, size: usize) -> bool {
        let Some(end) = addr.checked_add(size) else {
            return false;
        };
        let usable = |a: &Alloc| matches!(a.kind, AllocKind::Mapped { access: true, .. });
        let t = self.table.lock();
        let Some((&start, a)) = t.allocs.range(..=addr).next_back() else {
            return false;
        };
        if start + a.size <= addr || !usable(a) {
            return false;
        }
        let mut reached = start + a.size;
        while reached < end {
            match t.allocs.get(&reached) {
                Some(next) if usable(next) => reached += next.size,
                _ => return false,
            }
        }
        true
    }

    /// Makes the mappings tiling `[addr, addr + size)` readable and writable.
    pub fn vmm_set_access(&self, call: &'static str, addr: usize, size: usize) -> RtResult<()> {
        let mut t = self.table.lock();
        let starts = t
            .tiling(addr, size)
            .ok_or_else(|| rt_err(call, RuntimeErrorKind::InvalidValue))?;
        if !protect(addr, size, libc::PROT_READ | libc::PROT_WRITE) {
            return Err(rt_err(call, RuntimeErrorKind::InvalidValue));
        }
        for start in starts {
            if let Some(Alloc {
                kind: AllocKind::Mapped { access, .. },
                ..
            }) = t.allocs.get_mut(&start)
            {
                *access = true;
            }
        }
        Ok(())
    }
}

impl Drop for Memory {
    fn drop(&mut self) {
        // Runtime is gone and its streams drained: nothing can reach these mappings.
        let t = self.table.get_mut();
        for (ptr, a) in std::mem::take(&mut t.allocs) {
            unmap(ptr, a.size);
        }
        for (ptr, size) in std::mem::take(&mut t.reservations) {
            unmap(ptr, size);
        }
    }
}
