//! The reservation a vmm pool maps its memory into ([`VirtualSpace`]): the pool's upstream,
//! which maps runs of granules and unmaps what comes back, and maps at a chosen place for
//! the pool's growth in place ([`Placement`]).

use std::any::Any;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;

use super::NAME;
use crate::error::{Error, Result};
use crate::mr::pool::Placement;
use crate::mr::DeviceMemoryResource;
use crate::runtime::{DeviceId, PhysicalHandle, Runtime, RuntimeErrorKind, Stream};

const SPACE_NAME: &str = "virtual_memory_space";

/// The reservation a [`VmmPoolMemoryResource`](super::VmmPoolMemoryResource) maps its
/// memory into, as the pool's upstream: `allocate` maps a run of granules (the lowest
/// unmapped run that fits) and `deallocate` unmaps granules, after the stream's work is
/// done.
pub struct VirtualSpace {
    pub(super) rt: &'static dyn Runtime,
    pub(super) device: DeviceId,
    pub(super) base: usize,
    pub(super) reserved: usize,
    pub(super) granule: usize,
    /// The device and its peers: who gets access to every mapping.
    pub(super) access: Vec<DeviceId>,
    /// The handle mapped at each granule of the reservation.
    pub(super) granules: Mutex<Vec<Option<PhysicalHandle>>>,
    /// Bytes mapped now and at most so far (changed under the `granules` lock).
    pub(super) mapped: AtomicUsize,
    pub(super) peak: AtomicUsize,
}

impl std::fmt::Debug for VirtualSpace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{SPACE_NAME}({:#x}, {} bytes reserved, granule {}, device {})",
            self.base, self.reserved, self.granule, self.device
        )
    }
}

impl VirtualSpace {
    pub(super) fn new(
        rt: &'static dyn Runtime,
        device: DeviceId,
        reserved: usize,
        granule: usize,
        peers: &[DeviceId],
    ) -> Result<Self> {
        let base = rt.vmm_address_reserve(reserved, granule).map_err(|e| {
            if e.kind == RuntimeErrorKind::OutOfMemory {
                Error::invalid(format!(
                    "{NAME}: could not reserve {reserved} bytes of address space on device \
                     {device} ({e}); pass a smaller reserved_size"
                ))
            } else {
                Error::runtime(device, e)
            }
        })?;
        let mut access = vec![device];
        access.extend(peers.iter().copied().filter(|&p| p != device));
        Ok(VirtualSpace {
            rt,
            device,
            base,
            reserved,
            granule,
            access,
            granules: Mutex::new(vec![None; reserved / granule]),
            mapped: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
        })
    }

    /// Bytes mapped now.
    pub fn mapped(&self) -> usize {
        self.mapped.load(Ordering::Relaxed)
    }

    /// The most bytes mapped at once so far.
    pub fn peak_mapped(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }

    /// Unmaps and releases granules `from..to` (all mapped), in order.
    fn unmap_granules(
        &self,
        g: &mut [Option<PhysicalHandle>],
        from: usize,
        to: usize,
    ) -> Result<()> {
        let mut first_err = None;
        for (k, slot) in g.iter_mut().enumerate().take(to).skip(from) {
            let Some(h) = slot.take() else { continue };
            self.mapped.fetch_sub(self.granule, Ordering::Relaxed);
            let addr = self.base + k * self.granule;
            let r = self
                .rt
                .vmm_unmap(addr, self.granule)
                .and_then(|()| self.rt.vmm_release(h));
            if let Err(e) = r {
                first_err.get_or_insert(Error::runtime(self.device, e));
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    /// Maps granules `from..to` (all unmapped); on failure unmaps what it mapped.
    fn map_granules(&self, g: &mut [Option<PhysicalHandle>], from: usize, to: usize) -> Result<()> {
        let size = self.granule;
        // A request the device cannot hold fails before any mapping: finding out by
        // mapping granule after granule costs a create and a map each, then their undoing.
        if self.rt.get_device().is_ok_and(|d| d == self.device) {
            if let Ok(info) = self.rt.mem_get_info() {
                if info.free < (to - from) * size {
                    return Err(Error::OutOfMemory {
                        requested: (to - from) * size,
                        resource: SPACE_NAME,
                        device: self.device,
                        detail: format!("the device has {} bytes free", info.free),
                    });
                }
            }
        }
        for k in from..to {
            let addr = self.base + k * size;
            let mapped = self.rt.vmm_create(size, self.device).and_then(|h| {
                self.rt.vmm_map(addr, size, h).map(|()| h).inspect_err(|_| {
                    let _ = self.rt.vmm_release(h);
                })
            });
            match mapped {
                Ok(h) => {
                    g[k] = Some(h);
                    let now = self.mapped.fetch_add(size, Ordering::Relaxed) + size;
                    self.peak.fetch_max(now, Ordering::Relaxed);
                }
                Err(e) => {
                    let _ = self.unmap_granules(g, from, k);
                    return Err(self.map_error((to - from) * size, e));
                }
            }
        }
        let len = (to - from) * size;
        if let Err(e) = self
            .rt
            .vmm_set_access(self.base + from * size, len, &self.access)
        {
            let _ = self.unmap_granules(g, from, to);
            return Err(self.map_error(len, e));
        }
        Ok(())
    }

    fn map_error(&self, bytes: usize, e: crate::runtime::RuntimeError) -> Error {
        if e.kind == RuntimeErrorKind::OutOfMemory {
            Error::OutOfMemory {
                requested: bytes,
                resource: SPACE_NAME,
                device: self.device,
                detail: e.to_string(),
            }
        } else {
            Error::runtime(self.device, e)
        }
    }
}

impl Placement for VirtualSpace {
    /// Maps `bytes` (granules) at `addr` if that range is inside the reservation and
    /// unmapped; `Ok(false)` when it is not, `Err` when mapping failed (nothing mapped).
    fn map_at(&self, addr: usize, bytes: usize) -> Result<bool> {
        let end = addr.checked_add(bytes);
        if addr < self.base || end.map_or(true, |e| e > self.base + self.reserved) {
            return Ok(false);
        }
        let (from, to) = (
            (addr - self.base) / self.granule,
            (addr - self.base + bytes) / self.granule,
        );
        let mut g = self.granules.lock();
        if g[from..to].iter().any(Option::is_some) {
            return Ok(false);
        }
        self.map_granules(&mut g, from, to)?;
        Ok(true)
    }
}

impl DeviceMemoryResource for VirtualSpace {
    /// Maps `bytes` (a multiple of the granule) at the lowest unmapped run that fits.
    fn allocate(&self, bytes: usize, _stream: Stream) -> Result<*mut c_void> {
        if bytes == 0 || bytes % self.granule != 0 {
            return Err(Error::invalid(format!(
                "{SPACE_NAME}: {bytes} bytes is not a multiple of the granule ({} bytes)",
                self.granule
            )));
        }
        let n = bytes / self.granule;
        let mut g = self.granules.lock();
        let mut run = 0;
        let mut start = None;
        for (k, slot) in g.iter().enumerate() {
            if slot.is_some() {
                run = 0;
                continue;
            }
            run += 1;
            if run == n {
                start = Some(k + 1 - n);
                break;
            }
        }
        let Some(from) = start else {
            return Err(Error::OutOfMemory {
                requested: bytes,
                resource: SPACE_NAME,
                device: self.device,
                detail: format!(
                    "no unmapped run of {bytes} bytes is left in the {} bytes reserved; \
                     pass a larger reserved_size",
                    self.reserved
                ),
            });
        };
        self.map_granules(&mut g, from, from + n)?;
        Ok((self.base + from * self.granule) as *mut c_void)
    }

    /// Unmaps `[ptr, ptr + bytes)` (whole mapped granules) once `stream`'s work is done.
    fn deallocate(&self, ptr: *mut c_void, bytes: usize, stream: Stream) -> Result<()> {
        let addr = ptr as usize;
        let inside = addr >= self.base
            && bytes <= self.reserved
            && addr - self.base <= self.reserved - bytes;
        if !inside || bytes == 0 || addr % self.granule != 0 || bytes % self.granule != 0 {
            return Err(Error::invalid(format!(
                "{SPACE_NAME}: cannot unmap {ptr:p} ({bytes} bytes): not whole granules of \
                 {} bytes inside the reservation {:#x}..{:#x}",
                self.granule,
                self.base,
                self.base + self.reserved
            )));
        }
        let (from, to) = (
            (addr - self.base) / self.granule,
            (addr - self.base + bytes) / self.granule,
        );
        let mut g = self.granules.lock();
        if g[from..to].iter().any(Option::is_none) {
            return Err(Error::invalid(format!(
                "{SPACE_NAME}: cannot unmap {ptr:p} ({bytes} bytes): part of it is not mapped"
            )));
        }
        // Unmapping is immediate: work still queued on the stream must not see it go.
        self.rt
            .stream_synchronize(stream)
            .map_err(|e| Error::runtime(self.device, e))?;
        self.unmap_granules(&mut g, from, to)
    }

    fn name(&self) -> &'static str {
        SPACE_NAME
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Drop for VirtualSpace {
    fn drop(&mut self) {
        if crate::runtime::process_is_exiting() {
            return;
        }
        // The pool is gone, so nothing uses the memory; failures have no one to report to.
        let mut g = std::mem::take(self.granules.get_mut());
        let n = g.len();
        let _ = self.unmap_granules(&mut g, 0, n);
        let _ = self.rt.vmm_address_free(self.base, self.reserved);
    }
}
