//! The runtime's own stream-ordered pool (cudaMallocAsync / hipMallocAsync) as a resource:
//! a baseline, not a resource of the library.

use std::ffi::c_void;

use rmm::mr::DeviceMemoryResource;
use rmm::runtime::{
    runtime, MemHandleType, MemPool, MemPoolAttr, MemPoolLocation, MemPoolProps, Runtime,
    RuntimeErrorKind,
};
use rmm::{Error, Result, Stream};

/// The device's default mempool, or a mempool of its own with a maximum size, keeping what
/// it reserves (release threshold at its maximum, as RMM's `cuda_async_memory_resource`)
/// and starting empty. An own mempool is destroyed when this is dropped; the default one is
/// trimmed, so what runs next sees the device's free memory.
pub struct RuntimeAsync {
    rt: &'static dyn Runtime,
    device: i32,
    pool: MemPool,
    /// Whether the pool was made here (destroyed when done) or is the device's default.
    own: bool,
}

impl std::fmt::Debug for RuntimeAsync {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("runtime async pool")
    }
}

impl RuntimeAsync {
    /// The current device's default mempool (`max`: `None`) or a new mempool of at most
    /// `max` bytes.
    pub fn new(max: Option<usize>) -> Result<Self> {
        let rt = runtime()?;
        let device = rt.get_device().map_err(|e| Error::runtime(-1, e))?;
        let rt_err = |e| Error::runtime(device, e);
        let (pool, own) = match max {
            Some(max_size) => (
                rt.mem_pool_create(&MemPoolProps {
                    device,
                    location: MemPoolLocation::Device,
                    handle_type: MemHandleType::None,
                    max_size,
                })
                .map_err(rt_err)?,
                true,
            ),
            None => (
                rt.device_get_default_mem_pool(device).map_err(rt_err)?,
                false,
            ),
        };
        rt.mem_pool_set_attribute(pool, MemPoolAttr::ReleaseThreshold, u64::MAX)
            .map_err(rt_err)?;
        rt.device_synchronize().map_err(rt_err)?;
        rt.mem_pool_trim_to(pool, 0).map_err(rt_err)?;
        rt.mem_pool_set_attribute(pool, MemPoolAttr::ReservedMemHigh, 0)
            .map_err(rt_err)?;
        Ok(RuntimeAsync {
            rt,
            device,
            pool,
            own,
        })
    }

    fn attribute(&self, attr: MemPoolAttr) -> usize {
        self.rt.mem_pool_get_attribute(self.pool, attr).unwrap_or(0) as usize
    }

    /// Bytes the mempool reserves from the device now.
    pub fn reserved(&self) -> usize {
        self.attribute(MemPoolAttr::ReservedMemCurrent)
    }

    /// The most bytes the mempool reserved at once since it was made.
    pub fn peak_reserved(&self) -> usize {
        self.attribute(MemPoolAttr::ReservedMemHigh)
    }

    /// Gives back the cached memory (after the device's work is done) and returns the bytes
    /// the mempool still reserves.
    pub fn trim(&self) -> Result<usize> {
        let rt_err = |e| Error::runtime(self.device, e);
        self.rt.device_synchronize().map_err(rt_err)?;
        self.rt.mem_pool_trim_to(self.pool, 0).map_err(rt_err)?;
        self.rt
            .mem_pool_get_attribute(self.pool, MemPoolAttr::ReservedMemCurrent)
            .map(|v| v as usize)
            .map_err(rt_err)
    }
}

impl Drop for RuntimeAsync {
    fn drop(&mut self) {
        let _ = self.rt.device_synchronize();
        let _ = self.rt.mem_pool_trim_to(self.pool, 0);
        if self.own {
            let _ = self.rt.mem_pool_destroy(self.pool);
        }
    }
}

impl DeviceMemoryResource for RuntimeAsync {
    fn allocate(&self, bytes: usize, stream: Stream) -> Result<*mut c_void> {
        // The default mempool through cudaMallocAsync, as programs use it.
        let r = if self.own {
            self.rt.malloc_from_pool_async(bytes, self.pool, stream)
        } else {
            self.rt.malloc_async(bytes, stream)
        };
        r.map_err(|e| match e.kind {
            RuntimeErrorKind::OutOfMemory => Error::OutOfMemory {
                requested: bytes,
                resource: "runtime async pool",
                device: self.device,
                detail: e.to_string(),
            },
            _ => Error::runtime(self.device, e),
        })
    }
    fn deallocate(&self, ptr: *mut c_void, _bytes: usize, stream: Stream) -> Result<()> {
        self.rt
            .free_async(ptr, stream)
            .map_err(|e| Error::runtime(self.device, e))
    }
    fn name(&self) -> &'static str {
        "runtime async pool"
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
