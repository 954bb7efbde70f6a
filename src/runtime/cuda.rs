//! The NVIDIA CUDA backend: the shared GPU implementation with CUDA's names and numbers.
//!
//! Numbers come from CUDA 12.6 / 13.0 `driver_types.h` (`cudaDeviceAttr`,
//! `cudaMemoryType`, `cudaMemAllocationType`) and `cuda_runtime_api.h`; each value below was
//! checked by compiling against the CUDA 13.0 headers.

use super::gpu::{self, DriverCalls, Flavor, PropLayout, VmmNames};
use super::{DeviceAttribute, MemoryType, Runtime, RuntimeKind, Stream};

/// `cudaDeviceAttr` numbers (stable since CUDA 11.2).
fn device_attribute(attr: DeviceAttribute, _version: i32) -> Option<i32> {
    Some(match attr {
        DeviceAttribute::MultiprocessorCount => 16, // cudaDevAttrMultiProcessorCount
        DeviceAttribute::PciBusId => 33,            // cudaDevAttrPciBusId
        DeviceAttribute::ManagedMemory => 83,       // cudaDevAttrManagedMemory
        DeviceAttribute::PageableMemoryAccess => 88, // cudaDevAttrPageableMemoryAccess
        DeviceAttribute::ConcurrentManagedAccess => 89, // cudaDevAttrConcurrentManagedAccess
        DeviceAttribute::MemoryPoolsSupported => 115, // cudaDevAttrMemoryPoolsSupported
        // cudaDevAttrMemoryPoolSupportedHandleTypes
        DeviceAttribute::MemoryPoolSupportedHandleTypes => 119,
    })
}

/// `cudaDeviceAttr` numbers by name, for the backends that answer queries in CUDA's
/// numbering (the HIP mapping, the host emulation). From `driver_types.h` of CUDA 12.9 and
/// 13.0; only the attributes those backends name are listed.
pub(crate) mod attr {
    pub const MAX_THREADS_PER_BLOCK: i32 = 1;
    pub const MAX_BLOCK_DIM_X: i32 = 2;
    pub const MAX_BLOCK_DIM_Y: i32 = 3;
    pub const MAX_BLOCK_DIM_Z: i32 = 4;
    pub const MAX_GRID_DIM_X: i32 = 5;
    pub const MAX_GRID_DIM_Y: i32 = 6;
    pub const MAX_GRID_DIM_Z: i32 = 7;
    pub const MAX_SHARED_MEMORY_PER_BLOCK: i32 = 8;
    pub const TOTAL_CONSTANT_MEMORY: i32 = 9;
    pub const WARP_SIZE: i32 = 10;
    pub const MAX_PITCH: i32 = 11;
    pub const MAX_REGISTERS_PER_BLOCK: i32 = 12;
    pub const CLOCK_RATE: i32 = 13;
    pub const TEXTURE_ALIGNMENT: i32 = 14;
    pub const GPU_OVERLAP: i32 = 15;
    pub const MULTI_PROCESSOR_COUNT: i32 = 16;
    pub const KERNEL_EXEC_TIMEOUT: i32 = 17;
    pub const INTEGRATED: i32 = 18;
    pub const CAN_MAP_HOST_MEMORY: i32 = 19;
    pub const COMPUTE_MODE: i32 = 20;
    pub const MAX_TEXTURE_1D_WIDTH: i32 = 21;
    pub const MAX_TEXTURE_2D_WIDTH: i32 = 22;
    pub const MAX_TEXTURE_2D_HEIGHT: i32 = 23;
    pub const MAX_TEXTURE_3D_WIDTH: i32 = 24;
    pub const MAX_TEXTURE_3D_HEIGHT: i32 = 25;
    pub const MAX_TEXTURE_3D_DEPTH: i32 = 26;
    pub const SURFACE_ALIGNMENT: i32 = 30;
    pub const CONCURRENT_KERNELS: i32 = 31;
    pub const ECC_ENABLED: i32 = 32;
    pub const PCI_BUS_ID: i32 = 33;
    pub const PCI_DEVICE_ID: i32 = 34;
    pub const TCC_DRIVER: i32 = 35;
    pub const MEMORY_CLOCK_RATE: i32 = 36;
    pub const GLOBAL_MEMORY_BUS_WIDTH: i32 = 37;
    pub const L2_CACHE_SIZE: i32 = 38;
    pub const MAX_THREADS_PER_MULTI_PROCESSOR: i32 = 39;
    pub const ASYNC_ENGINE_COUNT: i32 = 40;
    pub const UNIFIED_ADDRESSING: i32 = 41;
    pub const PCI_DOMAIN_ID: i32 = 50;
    pub const TEXTURE_PITCH_ALIGNMENT: i32 = 51;
    pub const COMPUTE_CAPABILITY_MAJOR: i32 = 75;
    pub const COMPUTE_CAPABILITY_MINOR: i32 = 76;
    pub const STREAM_PRIORITIES_SUPPORTED: i32 = 78;
    pub const GLOBAL_L1_CACHE_SUPPORTED: i32 = 79;
    pub const LOCAL_L1_CACHE_SUPPORTED: i32 = 80;
    pub const MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: i32 = 81;
    pub const MAX_REGISTERS_PER_MULTIPROCESSOR: i32 = 82;
    pub const MANAGED_MEMORY: i32 = 83;
    pub const IS_MULTI_GPU_BOARD: i32 = 84;
    pub const MULTI_GPU_BOARD_GROUP_ID: i32 = 85;
    pub const HOST_NATIVE_ATOMIC_SUPPORTED: i32 = 86;
    pub const SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO: i32 = 87;
    pub const PAGEABLE_MEMORY_ACCESS: i32 = 88;
    pub const CONCURRENT_MANAGED_ACCESS: i32 = 89;
    pub const COMPUTE_PREEMPTION_SUPPORTED: i32 = 90;
    pub const CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM: i32 = 91;
    pub const COOPERATIVE_LAUNCH: i32 = 95;
    pub const MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: i32 = 97;
    pub const HOST_REGISTER_SUPPORTED: i32 = 99;
    pub const PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES: i32 = 100;
    pub const DIRECT_MANAGED_MEM_ACCESS_FROM_HOST: i32 = 101;
    pub const MAX_BLOCKS_PER_MULTIPROCESSOR: i32 = 106;
    pub const MAX_PERSISTING_L2_CACHE_SIZE: i32 = 108;
    pub const MAX_ACCESS_POLICY_WINDOW_SIZE: i32 = 109;
    pub const RESERVED_SHARED_MEMORY_PER_BLOCK: i32 = 111;
    pub const MEMORY_POOLS_SUPPORTED: i32 = 115;
    pub const MEMORY_POOL_SUPPORTED_HANDLE_TYPES: i32 = 119;
    pub const MEM_SYNC_DOMAIN_COUNT: i32 = 126;
    pub const NUMA_ID: i32 = 131;
    pub const HOST_NUMA_ID: i32 = 134;

    /// Whether `number` names an attribute of `cudaDeviceAttr` in CUDA 12.9 or 13.0 (the
    /// `Reserved*` placeholders and the gaps of the enum do not).
    pub fn is_attribute(number: i32) -> bool {
        matches!(number,
            1..=43 | 45..=91 | 95..=101 | 106 | 108 | 109 | 111..=121 | 125 | 126 | 130 | 131
            | 133..=135 | 138..=140 | 142..=144 | 147)
    }
}

/// The typed attribute whose CUDA number is `number`, if any (the inverse of
/// [`device_attribute`]).
pub(crate) fn typed_attribute(number: i32) -> Option<DeviceAttribute> {
    Some(match number {
        attr::MULTI_PROCESSOR_COUNT => DeviceAttribute::MultiprocessorCount,
        attr::PCI_BUS_ID => DeviceAttribute::PciBusId,
        attr::MANAGED_MEMORY => DeviceAttribute::ManagedMemory,
        attr::PAGEABLE_MEMORY_ACCESS => DeviceAttribute::PageableMemoryAccess,
        attr::CONCURRENT_MANAGED_ACCESS => DeviceAttribute::ConcurrentManagedAccess,
        attr::MEMORY_POOLS_SUPPORTED => DeviceAttribute::MemoryPoolsSupported,
        attr::MEMORY_POOL_SUPPORTED_HANDLE_TYPES => DeviceAttribute::MemoryPoolSupportedHandleTypes,
        _ => return None,
    })
}

/// CUDA's numbers are CUDA's own: passed through, `cudaDeviceGetAttribute` validates them.
fn cuda_attribute(number: i32, _version: i32) -> Option<i32> {
    Some(number)
}

/// `cudaMemoryType` (CUDA 11+): Unregistered 0, Host 1, Device 2, Managed 3.
fn memory_type(ty: i32, _is_managed: i32, _version: i32) -> MemoryType {
    match ty {
        1 => MemoryType::Host,
        2 => MemoryType::Device,
        3 => MemoryType::Managed,
        _ => MemoryType::Unregistered,
    }
}

/// The CUDA flavor of the shared GPU backend.
static CUDA: Flavor = Flavor {
    kind: RuntimeKind::Cuda,
    column: 0,
    libraries: &[
        "libcudart.so.13",
        "libcudart.so.12",
        "libcudart.so.11.0",
        "libcudart.so.11",
        "libcudart.so",
    ],
    device_attribute,
    cuda_attribute,
    memory_type,
    // CUDA's stream handles pass straight through: 0 default, 1 legacy, 2 per-thread.
    stream: |s: Stream| s.0,
    // `maxSize` took over reserved bytes in CUDA 12.2.
    pool_max_size_since: Some(12020),
    // cudaMemAllocationTypeManaged = 2 arrived with CUDA 13.0.
    managed_pools_since: Some(13000),
    hw_decompress_since: Some(12080),
    // CUDA 13 gave cudaMemPrefetchAsync/cudaMemAdvise the cudaMemLocation signatures.
    location_api_since: Some(13000),
    unknown_pointer_is_invalid_value: false,
    fabric_handles: true,
    driver: Some((&DRIVER, 12000)),
    vmm: &VMM,
};

/// `CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED` (cuda.h, CUDA 10.2+; named
/// `..._VIRTUAL_ADDRESS_MANAGEMENT_SUPPORTED` before 11.2, same number). The runtime API's
/// `cudaDeviceAttr` has no such attribute: the driver's query answers it.
const ATTRIBUTE_VMM_SUPPORTED: i32 = 102;

/// The driver's virtual memory management (cuda.h, CUDA 10.2 to 13.x): the runtime API has
/// none. `CUmemAllocationProp` has had one layout since CUDA 10.2.
static VMM: VmmNames = VmmNames {
    library: Some("libcuda.so.1"),
    granularity: "cuMemGetAllocationGranularity",
    address_reserve: "cuMemAddressReserve",
    address_free: "cuMemAddressFree",
    create: "cuMemCreate",
    release: "cuMemRelease",
    map: "cuMemMap",
    unmap: "cuMemUnmap",
    set_access: "cuMemSetAccess",
    get_error_name: "cuGetErrorName",
    get_error_string: "cuGetErrorString",
    device_get_attribute: "cuDeviceGetAttribute",
    device_get: "cuDeviceGet",
    ctx_get_current: "cuCtxGetCurrent",
    supported_attribute: |_version| Some(ATTRIBUTE_VMM_SUPPORTED),
    prop_layout: |_version| Some(PropLayout::Cuda),
};

/// The driver's thin calls (cuda.h), for the C ABI's direct path from CUDA 12 on.
static DRIVER: DriverCalls = DriverCalls {
    library: "libcuda.so.1",
    malloc: "cuMemAlloc_v2",
    free: "cuMemFree_v2",
    malloc_managed: "cuMemAllocManaged",
    malloc_from_pool_async: "cuMemAllocFromPoolAsync",
    free_async: "cuMemFreeAsync",
};

/// Loads the CUDA runtime (`libcudart.so.13`, `.12`, `.11.0`, `.11`, `.so`, in that order).
///
/// Only version queries are made; the error lists every library name tried and why it
/// failed to load.
pub fn load() -> Result<Box<dyn Runtime>, String> {
    gpu::load(&CUDA)
}

/// Loads this runtime from one named library (a path or a soname) instead of the list:
/// the LD_PRELOAD interposer passes the library the program itself loaded, so there is one
/// runtime (and one device context) in the process.
pub fn load_library(name: &'static str) -> Result<Box<dyn Runtime>, String> {
    gpu::load_from(&CUDA, &[name])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_reports_names_tried_or_loads() {
        match load() {
            Ok(rt) => {
                // A machine with CUDA installed: the description names the library.
                assert!(
                    rt.description().starts_with("cuda (libcudart.so"),
                    "{}",
                    rt.description()
                );
            }
            Err(e) => {
                for name in CUDA.libraries {
                    assert!(e.contains(&format!("{name} (")), "{e}");
                }
            }
        }
    }

    #[test]
    fn attribute_numbers() {
        // The typed attributes and their CUDA numbers are inverse maps.
        for number in -1..200 {
            if let Some(a) = typed_attribute(number) {
                assert_eq!(device_attribute(a, 13000), Some(number));
                assert!(attr::is_attribute(number), "{number}");
            }
        }
        let valid = (0..200).filter(|n| attr::is_attribute(*n)).count();
        // CUDA 13.0 names 124 attributes besides its 13 `Reserved<n>` placeholders, plus
        // 96: a placeholder in 13.0, CUDA 12's cooperativeMultiDeviceLaunch.
        assert_eq!(valid, 125);
        for n in [
            0, 44, 92, 93, 94, 102, 107, 110, 122, 127, 132, 141, 145, 146, 148,
        ] {
            assert!(!attr::is_attribute(n), "{n}");
        }
        assert!(attr::is_attribute(96));
        assert_eq!(cuda_attribute(88, 12080), Some(88));
    }

    #[test]
    fn vmm_from_the_driver() {
        assert_eq!(VMM.library, Some("libcuda.so.1"));
        assert_eq!((VMM.supported_attribute)(12000), Some(102));
        // Not a runtime attribute: the runtime API's numbering has a gap there.
        assert!(!attr::is_attribute(ATTRIBUTE_VMM_SUPPORTED));
        for version in [0, 11080, 12000, 13000] {
            assert_eq!((VMM.prop_layout)(version), Some(PropLayout::Cuda));
        }
    }

    /// On a machine with an NVIDIA GPU: a full round trip (reserve, create, map, set access,
    /// write and read back through the runtime, unmap, release, free), first on a thread
    /// that never called the runtime (no current context), then on this one.
    #[test]
    fn vmm_round_trip_on_a_gpu() {
        let Ok(rt) = load() else {
            eprintln!("skipping: no CUDA runtime");
            return;
        };
        let rt: std::sync::Arc<dyn Runtime> = rt.into();
        if rt.device_count().map_or(true, |n| n == 0) {
            eprintln!("skipping: no CUDA device");
            return;
        }
        let round_trip = |rt: &dyn Runtime| {
            let (min, rec) = rt.vmm_granularity(0).unwrap();
            assert!(
                min.is_power_of_two() && rec >= min && rec % min == 0,
                "{min} {rec}"
            );
            let size = 2 * min;
            let va = rt.vmm_address_reserve(2 * size, 0).unwrap();
            assert_ne!(va, 0);
            assert_eq!(va % min, 0);
            let handle = rt.vmm_create(size, 0).unwrap();
            rt.vmm_map(va + size, size, handle).unwrap();
            rt.vmm_set_access(va + size, size, &[0]).unwrap();
            let p = (va + size) as *mut std::ffi::c_void;
            let mut host = vec![0u8; size];
            // SAFETY: `p` is `size` mapped, accessible bytes; `host` lives until the
            // synchronization below.
            unsafe {
                rt.memset_async(p, 0x5a, size, Stream::DEFAULT).unwrap();
                rt.memcpy_async(host.as_mut_ptr().cast(), p, size, Stream::DEFAULT)
                    .unwrap();
            }
            rt.stream_synchronize(Stream::DEFAULT).unwrap();
            assert!(host.iter().all(|&b| b == 0x5a));
            // Mapping over a mapped range, or beyond a reservation, fails cleanly.
            let again = rt.vmm_map(va + size, size, handle).unwrap_err();
            assert_ne!(again.code, 0);
            rt.vmm_unmap(va + size, size).unwrap();
            rt.vmm_release(handle).unwrap();
            rt.vmm_address_free(va, 2 * size).unwrap();
            // Errors carry the driver's names.
            let bad = rt.vmm_create(size, 9999).unwrap_err();
            assert!(bad.name.starts_with("CUDA_ERROR_"), "{bad:?}");
            let e = rt.vmm_granularity(9999).unwrap_err();
            assert_eq!(
                e.kind,
                crate::runtime::RuntimeErrorKind::InvalidDevice,
                "{e:?}"
            );
            let huge = rt.vmm_create(1 << 50, 0).unwrap_err();
            assert!(
                matches!(
                    huge.kind,
                    crate::runtime::RuntimeErrorKind::OutOfMemory
                        | crate::runtime::RuntimeErrorKind::InvalidValue
                ),
                "{huge:?}"
            );
            (min, rec)
        };
        let fresh = {
            let rt = rt.clone();
            std::thread::spawn(move || round_trip(&*rt)).join().unwrap()
        };
        assert_eq!(round_trip(&*rt), fresh);
        eprintln!("{}: granularity {fresh:?}", rt.description());
    }

    #[test]
    fn memory_types() {
        assert_eq!(memory_type(0, 0, 12000), MemoryType::Unregistered);
        assert_eq!(memory_type(2, 0, 12000), MemoryType::Device);
        assert_eq!(memory_type(3, 0, 13000), MemoryType::Managed);
    }
}
