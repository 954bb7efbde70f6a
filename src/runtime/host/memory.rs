//! Emulated device memory: one anonymous mapping per allocation, a table of live
//! allocations (so bad frees are errors, never UB) and per-device capacity accounting.

use std::collections::BTreeMap;
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
}

impl AllocKind {
    fn counts_against_device(self) -> bool {
        self != AllocKind::Pinned
    }
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
                    AllocKind::Device | AllocKind::Pool { managed: false, .. } => {
                        MemoryType::Device
                    }
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

impl Drop for Memory {
    fn drop(&mut self) {
        // Runtime is gone and its streams drained: nothing can reach these mappings.
        for (ptr, a) in std::mem::take(&mut self.table.get_mut().allocs) {
            unmap(ptr, a.size);
        }
    }
}
