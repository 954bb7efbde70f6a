//! `cuda_memory_resource`: device memory straight from the runtime (`hipMalloc`/`cudaMalloc`).

super::direct_resource!(
    /// Allocates with the runtime's `malloc` on the calling thread's current device and frees
    /// with its `free` (which synchronizes the device, as in hipMM).
    CudaMemoryResource,
    "cuda_memory_resource",
    malloc,
    free,
    |c| Some(super::DirectPath::Malloc {
        malloc: c.malloc?,
        free: c.free?,
    })
);
