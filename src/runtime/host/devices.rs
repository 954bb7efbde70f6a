//! The emulated devices: the current device of each thread, and what a device answers
//! for CUDA's device attributes.

use std::cell::RefCell;

use super::{rt_err, HostRuntime};
use crate::runtime::{DeviceId, RtResult, RuntimeErrorKind};

thread_local! {
    /// The current device of each runtime (by id) on this thread.
    pub(super) static CURRENT_DEVICE: RefCell<Vec<(u64, DeviceId)>> =
        const { RefCell::new(Vec::new()) };
}

/// What an emulated device answers for CUDA's device attribute `number` (`cudaDeviceAttr`),
/// None for a number that is no attribute. The emulated device is a discrete-GPU-shaped
/// device of compute capability 9.0 whose memory is host memory: architectural limits are
/// those of CUDA's compute capability 9.0 (warp 32, 1024 threads per block, 48 KiB of
/// shared memory per block, ...), what the host defines comes from the host (one
/// multiprocessor per CPU thread, `multiprocessors`), memory features are what the
/// emulation provides (managed and pageable memory are coherent with the host, unified
/// addressing, stream-ordered pools without IPC handles), and features it lacks (kernels'
/// textures and surfaces, cooperative and cluster launch, host registration, IPC, NUMA,
/// MPS) read 0 (-1 for the NUMA ids: none). The seven attributes the resources query
/// (`DeviceAttribute`) read the same here as from `device_attribute`, which answers them.
pub(super) fn emulated_attribute(
    number: i32,
    device: DeviceId,
    multiprocessors: i32,
) -> Option<i32> {
    use crate::runtime::cuda::attr::*;
    if !is_attribute(number) {
        return None;
    }
    Some(match number {
        MAX_THREADS_PER_BLOCK => 1024,
        MAX_BLOCK_DIM_X | MAX_BLOCK_DIM_Y => 1024,
        MAX_BLOCK_DIM_Z => 64,
        MAX_GRID_DIM_X => i32::MAX,
        MAX_GRID_DIM_Y | MAX_GRID_DIM_Z => 65535,
        MAX_SHARED_MEMORY_PER_BLOCK => 48 << 10,
        TOTAL_CONSTANT_MEMORY => 64 << 10,
        WARP_SIZE => 32,
        MAX_PITCH => i32::MAX,
        MAX_REGISTERS_PER_BLOCK | MAX_REGISTERS_PER_MULTIPROCESSOR => 64 << 10,
        // kHz: a nominal 1 GHz (no kernel runs on the emulated device).
        CLOCK_RATE | MEMORY_CLOCK_RATE => 1_000_000,
        TEXTURE_ALIGNMENT | SURFACE_ALIGNMENT => 512,
        TEXTURE_PITCH_ALIGNMENT => 32,
        MULTI_PROCESSOR_COUNT => multiprocessors,
        // Device memory is host memory.
        INTEGRATED | CAN_MAP_HOST_MEMORY | UNIFIED_ADDRESSING => 1,
        // Copies and memsets run on each stream's worker thread, beside other streams.
        GPU_OVERLAP | CONCURRENT_KERNELS => 1,
        ASYNC_ENGINE_COUNT => 2,
        PCI_BUS_ID => device,
        MULTI_GPU_BOARD_GROUP_ID => device,
        GLOBAL_MEMORY_BUS_WIDTH => 64,
        L2_CACHE_SIZE => 4 << 20,
        MAX_THREADS_PER_MULTI_PROCESSOR => 2048,
        COMPUTE_CAPABILITY_MAJOR => 9,
        COMPUTE_CAPABILITY_MINOR => 0,
        GLOBAL_L1_CACHE_SUPPORTED | LOCAL_L1_CACHE_SUPPORTED => 1,
        MAX_SHARED_MEMORY_PER_MULTIPROCESSOR => 228 << 10,
        MAX_SHARED_MEMORY_PER_BLOCK_OPTIN => 227 << 10,
        RESERVED_SHARED_MEMORY_PER_BLOCK => 1 << 10,
        MAX_BLOCKS_PER_MULTIPROCESSOR => 32,
        SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO => 2,
        // Managed and pageable memory are host memory: coherent, accessed in place.
        MANAGED_MEMORY
        | PAGEABLE_MEMORY_ACCESS
        | CONCURRENT_MANAGED_ACCESS
        | PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES
        | DIRECT_MANAGED_MEM_ACCESS_FROM_HOST
        | CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM
        | HOST_NATIVE_ATOMIC_SUPPORTED
        | COMPUTE_PREEMPTION_SUPPORTED => 1,
        MEMORY_POOLS_SUPPORTED => 1,
        MEM_SYNC_DOMAIN_COUNT => 1,
        NUMA_ID | HOST_NUMA_ID => -1,
        // Everything else (textures and surfaces beyond the alignments, ECC, TCC, compute
        // mode default, kernel timeouts, multi-GPU boards, stream priorities, cooperative
        // and cluster launch, host registration, persisting L2, IPC handles and events,
        // GPUDirect RDMA, NUMA configuration, MPS, graphics interop, host pools): 0.
        _ => 0,
    })
}

impl HostRuntime {
    pub(super) fn current(&self) -> DeviceId {
        let id = self.inner.id;
        // `try_with`: a call from another thread-local's destructor sees device 0.
        CURRENT_DEVICE
            .try_with(|c| {
                c.borrow()
                    .iter()
                    .find(|(rt, _)| *rt == id)
                    .map_or(0, |&(_, d)| d)
            })
            .unwrap_or(0)
    }

    pub(super) fn check_device(&self, call: &'static str, device: DeviceId) -> RtResult<()> {
        if device >= 0 && (device as usize) < self.inner.devices.len() {
            Ok(())
        } else {
            Err(rt_err(call, RuntimeErrorKind::InvalidDevice))
        }
    }
}

pub(super) fn human_size(bytes: usize) -> String {
    const UNITS: [(&str, u32); 4] = [("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)];
    for (unit, shift) in UNITS {
        if bytes >= 1 << shift && bytes % (1 << shift) == 0 {
            return format!("{} {unit}", bytes >> shift);
        }
    }
    for (unit, shift) in UNITS {
        if bytes >= 1 << shift {
            return format!("{:.2} {unit}", bytes as f64 / (1u64 << shift) as f64);
        }
    }
    format!("{bytes} B")
}
