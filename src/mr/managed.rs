//! `managed_memory_resource`: managed (unified) memory (`hipMallocManaged`/`cudaMallocManaged`).

super::direct_resource!(
    /// Allocates managed memory, attached globally, and frees it with the runtime's `free`.
    ManagedMemoryResource,
    "managed_memory_resource",
    malloc_managed,
    free,
    |c| Some(super::DirectPath::Managed {
        malloc: c.malloc_managed?,
        free: c.free?,
    })
);
