//! `pinned_host_memory_resource`: page-locked host memory (`hipHostMalloc`/`cudaMallocHost`).

super::direct_resource!(
    /// Allocates pinned host memory, accessible from host and device; usable as a pool upstream.
    PinnedHostMemoryResource,
    "pinned_host_memory_resource",
    malloc_host,
    free_host,
    // No direct path: the driver's pinned allocation takes other flags than the runtime's
    // `cudaMallocHost`, which a program could see (`cudaHostGetFlags`).
    |_| None
);
