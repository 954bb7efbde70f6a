//! The AMD HIP backend: the shared GPU implementation with HIP's names and numbers.
//!
//! Numbers come from `hip/hip_runtime_api.h` of ROCm 5.2.3 (Debian `libamdhip64-dev`,
//! checked by compiling against it) and ROCm 6.x. HIP versions are
//! `major * 10_000_000 + minor * 100_000 + patch` (5.2.3 reports 50221153).

use super::gpu::{self, Flavor, PropLayout, VmmNames};
use super::{DeviceAttribute, MemoryType, Runtime, RuntimeKind, Stream};

/// The major ROCm version of a HIP runtime version number.
fn major(version: i32) -> i32 {
    version / 10_000_000
}

/// `hipDeviceAttribute_t` numbers. The CUDA-compatible block is numbered by position, and
/// these positions are the same in ROCm 5.2 and 6.x (6.x renamed `Name` to `Unused1` in place;
/// after `MemoryPoolsSupported` ROCm 5.3 appended `VirtualMemoryManagementSupported`, 6.0
/// `HostRegisterSupported` and 6.1 `MemoryPoolSupportedHandleTypes`).
fn device_attribute(attr: DeviceAttribute, version: i32) -> Option<i32> {
    Some(match attr {
        DeviceAttribute::ConcurrentManagedAccess => 9,
        DeviceAttribute::ManagedMemory => 24,
        DeviceAttribute::MultiprocessorCount => 63,
        DeviceAttribute::PageableMemoryAccess => 65,
        DeviceAttribute::PciBusId => 67,
        DeviceAttribute::MemoryPoolsSupported => 88,
        // Absent from ROCm 5.2's enum; 91 from ROCm 6.
        DeviceAttribute::MemoryPoolSupportedHandleTypes if major(version) >= 6 => 91,
        DeviceAttribute::MemoryPoolSupportedHandleTypes => return None,
    })
}

/// The `hipDeviceAttribute_t` number of the attribute CUDA numbers `number`
/// (`cudaDeviceAttr`), for the attributes both enums have with the same meaning and one
/// integer value (HIP's name where it differs is given). HIP numbers its enum by position,
/// unlike CUDA, so the numbers differ throughout. Positions are those of ROCm 5.2.3 and
/// ROCm 6.x, where they are equal (`git show rocm-5.2.3:include/hip/hip_runtime_api.h` and
/// `rocm-6.2.2`); the last three arrived with ROCm 6. Unlisted attributes (textures beyond
/// the simple sizes, surfaces, attributes HIP has only in composite form, CUDA-only
/// features, and `cudaDevAttrMaxSharedMemoryPerMultiprocessor`, which HIP splits into two
/// attributes of different meaning) have no HIP number: None.
fn cuda_attribute(number: i32, version: i32) -> Option<i32> {
    use super::cuda::attr;
    let rocm6 = major(version) >= 6;
    Some(match number {
        attr::ECC_ENABLED => 0,
        attr::MAX_ACCESS_POLICY_WINDOW_SIZE => 1, // AccessPolicyMaxWindowSize
        attr::ASYNC_ENGINE_COUNT => 2,
        attr::CAN_MAP_HOST_MEMORY => 3,
        attr::CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM => 4,
        attr::CLOCK_RATE => 5,
        attr::COMPUTE_MODE => 6,
        attr::COMPUTE_PREEMPTION_SUPPORTED => 7,
        attr::CONCURRENT_KERNELS => 8,
        attr::CONCURRENT_MANAGED_ACCESS => 9,
        attr::COOPERATIVE_LAUNCH => 10,
        attr::GPU_OVERLAP => 12, // DeviceOverlap
        attr::DIRECT_MANAGED_MEM_ACCESS_FROM_HOST => 13,
        attr::GLOBAL_L1_CACHE_SUPPORTED => 14,
        attr::HOST_NATIVE_ATOMIC_SUPPORTED => 15,
        attr::INTEGRATED => 16,
        attr::IS_MULTI_GPU_BOARD => 17,
        attr::KERNEL_EXEC_TIMEOUT => 18,
        attr::L2_CACHE_SIZE => 19,
        attr::LOCAL_L1_CACHE_SUPPORTED => 20,
        attr::COMPUTE_CAPABILITY_MAJOR => 23,
        attr::MANAGED_MEMORY => 24,
        attr::MAX_BLOCKS_PER_MULTIPROCESSOR => 25, // MaxBlocksPerMultiProcessor
        attr::MAX_BLOCK_DIM_X => 26,
        attr::MAX_BLOCK_DIM_Y => 27,
        attr::MAX_BLOCK_DIM_Z => 28,
        attr::MAX_GRID_DIM_X => 29,
        attr::MAX_GRID_DIM_Y => 30,
        attr::MAX_GRID_DIM_Z => 31,
        attr::MAX_TEXTURE_1D_WIDTH => 39,
        attr::MAX_TEXTURE_2D_WIDTH => 43,
        attr::MAX_TEXTURE_2D_HEIGHT => 44,
        attr::MAX_TEXTURE_3D_WIDTH => 49,
        attr::MAX_TEXTURE_3D_HEIGHT => 50,
        attr::MAX_TEXTURE_3D_DEPTH => 51,
        attr::MAX_THREADS_PER_BLOCK => 56,
        attr::MAX_THREADS_PER_MULTI_PROCESSOR => 57,
        attr::MAX_PITCH => 58,
        attr::GLOBAL_MEMORY_BUS_WIDTH => 59, // MemoryBusWidth
        attr::MEMORY_CLOCK_RATE => 60,
        attr::COMPUTE_CAPABILITY_MINOR => 61,
        attr::MULTI_GPU_BOARD_GROUP_ID => 62,
        attr::MULTI_PROCESSOR_COUNT => 63,
        attr::PAGEABLE_MEMORY_ACCESS => 65,
        attr::PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES => 66,
        attr::PCI_BUS_ID => 67,
        attr::PCI_DEVICE_ID => 68,
        attr::PCI_DOMAIN_ID => 69,
        attr::MAX_PERSISTING_L2_CACHE_SIZE => 70, // PersistingL2CacheMaxSize
        attr::MAX_REGISTERS_PER_BLOCK => 71,
        attr::MAX_REGISTERS_PER_MULTIPROCESSOR => 72,
        attr::RESERVED_SHARED_MEMORY_PER_BLOCK => 73, // ReservedSharedMemPerBlock
        attr::MAX_SHARED_MEMORY_PER_BLOCK => 74,
        attr::MAX_SHARED_MEMORY_PER_BLOCK_OPTIN => 75, // SharedMemPerBlockOptin
        attr::SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO => 77,
        attr::STREAM_PRIORITIES_SUPPORTED => 78,
        attr::SURFACE_ALIGNMENT => 79,
        attr::TCC_DRIVER => 80,
        attr::TEXTURE_ALIGNMENT => 81,
        attr::TEXTURE_PITCH_ALIGNMENT => 82,
        attr::TOTAL_CONSTANT_MEMORY => 83,
        attr::UNIFIED_ADDRESSING => 85,
        attr::WARP_SIZE => 87,
        attr::MEMORY_POOLS_SUPPORTED => 88,
        attr::HOST_REGISTER_SUPPORTED if rocm6 => 90,
        attr::MEMORY_POOL_SUPPORTED_HANDLE_TYPES if rocm6 => 91,
        _ => return None,
    })
}

/// `hipMemoryType` changed numbering in ROCm 6.
///
/// ROCm 5: Host 0, Device 1, Array 2, Unified 3, with managed memory flagged by `isManaged`.
/// ROCm 6: Unregistered 0, Host 1, Device 2, Managed 3, Array 10, Unified 11 (CUDA's).
fn memory_type(ty: i32, is_managed: i32, version: i32) -> MemoryType {
    if is_managed != 0 {
        return MemoryType::Managed;
    }
    if major(version) >= 6 {
        match ty {
            1 => MemoryType::Host,
            2 | 10 => MemoryType::Device,
            3 | 11 => MemoryType::Managed,
            _ => MemoryType::Unregistered,
        }
    } else {
        match ty {
            0 => MemoryType::Host,
            1 | 2 => MemoryType::Device,
            3 => MemoryType::Managed,
            _ => MemoryType::Unregistered,
        }
    }
}

/// HIP has no legacy-stream handle (`0x1`): the null stream is HIP's legacy default stream.
fn stream(s: Stream) -> usize {
    if s == Stream::LEGACY {
        0
    } else {
        s.0
    }
}

/// The HIP flavor of the shared GPU backend.
static HIP: Flavor = Flavor {
    kind: RuntimeKind::Hip,
    column: 1,
    libraries: &[
        "libamdhip64.so.7",
        "libamdhip64.so.6",
        "libamdhip64.so.5",
        "libamdhip64.so",
    ],
    device_attribute,
    cuda_attribute,
    memory_type,
    stream,
    // hipMemPoolProps has `maxSize` in ROCm 6 headers (reserved bytes in 5.x).
    pool_max_size_since: Some(60_000_000),
    // No managed mempools through this API.
    managed_pools_since: None,
    hw_decompress_since: None,
    location_api_since: None,
    unknown_pointer_is_invalid_value: true,
    fabric_handles: false,
    // The direct path calls the HIP runtime's own functions.
    driver: None,
    vmm: &VMM,
};

/// The first HIP version of ROCm 5.3, which gave `hipMemAllocationProp` CUDA's layout and
/// added `hipDeviceAttributeVirtualMemoryManagementSupported`.
const ROCM_5_3: i32 = 50_300_000;

/// `hipDeviceAttributeVirtualMemoryManagementSupported`: 89, right after
/// `MemoryPoolsSupported` (88), from ROCm 5.3 (`hip_runtime_api.h` of rocm-5.3.0 to
/// rocm-6.2.2 in ROCm/HIP and of ROCm 7 in ROCm/rocm-systems); ROCm 5.2 has none (the
/// granularity query decides there).
fn vmm_supported_attribute(version: i32) -> Option<i32> {
    (version >= ROCM_5_3).then_some(89)
}

/// `hipMemAllocationProp`: CUDA's layout from ROCm 5.3 (`{ type; requestedHandleType;
/// location; win32HandleMetaData; allocFlags }`, unchanged to ROCm 7, where
/// `requestedHandleType` became a union with `requestedHandleTypes`), ROCm 5.2's own
/// before (`{ unsigned char compressionType; location; requestedHandleType; type;
/// unsigned short usage; win32HandleMetaData }`, Debian's 5.2.3 headers). An unknown
/// version (0) has no known layout.
fn vmm_prop_layout(version: i32) -> Option<PropLayout> {
    match version {
        v if v >= ROCM_5_3 => Some(PropLayout::Cuda),
        v if v > 0 => Some(PropLayout::Hip52),
        _ => None,
    }
}

/// HIP's virtual memory management: the runtime library's own `hipMem*` (ROCm 5.1+, the
/// signatures of CUDA's driver calls).
static VMM: VmmNames = VmmNames {
    library: None,
    granularity: "hipMemGetAllocationGranularity",
    address_reserve: "hipMemAddressReserve",
    address_free: "hipMemAddressFree",
    create: "hipMemCreate",
    release: "hipMemRelease",
    map: "hipMemMap",
    unmap: "hipMemUnmap",
    set_access: "hipMemSetAccess",
    get_error_name: "",
    get_error_string: "",
    device_get_attribute: "",
    device_get: "",
    ctx_get_current: "",
    supported_attribute: vmm_supported_attribute,
    prop_layout: vmm_prop_layout,
};

/// Loads the HIP runtime (`libamdhip64.so.7`, `.6`, `.5`, `.so`, in that order).
///
/// Only version queries are made; the error lists every library name tried and why it
/// failed to load.
pub fn load() -> Result<Box<dyn Runtime>, String> {
    gpu::load(&HIP)
}

/// Loads this runtime from one named library (a path or a soname) instead of the list:
/// the LD_PRELOAD interposer passes the library the program itself loaded, so there is one
/// runtime (and one device context) in the process.
pub fn load_library(name: &'static str) -> Result<Box<dyn Runtime>, String> {
    gpu::load_from(&HIP, &[name])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::RuntimeErrorKind;

    #[test]
    fn load_and_count_devices_without_crashing() {
        let rt = match load() {
            Ok(rt) => rt,
            Err(e) => {
                eprintln!("skipping: no HIP runtime installed ({e})");
                return;
            }
        };
        assert_eq!(rt.kind(), RuntimeKind::Hip);
        assert!(
            rt.description().starts_with("hip (libamdhip64.so"),
            "{}",
            rt.description()
        );
        match rt.device_count() {
            Ok(n) => eprintln!("{}: {n} device(s)", rt.description()),
            Err(e) => {
                // Debian's libamdhip64 5.2 on a machine without an AMD GPU: hipErrorNoDevice.
                assert_eq!(e.kind, RuntimeErrorKind::NoDevice, "{e:?}");
                assert_eq!(e.call, "hipGetDeviceCount");
                assert!(e.name.starts_with("hipError"), "{e:?}");
                assert!(!e.message.is_empty(), "{e:?}");
                // A failing query must stay a clean error on repeat, not a crash.
                assert_eq!(rt.device_count().unwrap_err().code, e.code);
                // Every other entry point must fail cleanly too, never crash or hang.
                assert!(rt.malloc(1 << 20).is_err());
                assert!(rt.malloc_async(1 << 20, Stream::DEFAULT).is_err());
                assert!(rt.stream_create(Default::default()).is_err());
                assert!(rt.event_create().is_err());
                assert!(rt.mem_get_info().is_err());
                // Virtual memory management too (ROCm 5.1+ exports it).
                let g = rt.vmm_granularity(0).unwrap_err();
                assert_ne!(g.kind, RuntimeErrorKind::OutOfMemory, "{g:?}");
                assert!(rt.vmm_address_reserve(2 << 20, 0).is_err());
                assert!(rt.vmm_create(2 << 20, 0).is_err());
                eprintln!("hip without device: vmm_granularity: {g:?}");
                let x = 0u64;
                let _ = rt.pointer_attributes((&x as *const u64).cast());
                eprintln!(
                    "hip without device: {e:?}; get_device: {:?}",
                    rt.get_device()
                );
            }
        }
    }

    #[test]
    fn attribute_and_memory_type_numbering() {
        assert_eq!(
            device_attribute(DeviceAttribute::PageableMemoryAccess, 50221153),
            Some(65)
        );
        assert_eq!(
            device_attribute(DeviceAttribute::MemoryPoolSupportedHandleTypes, 50221153),
            None
        );
        assert_eq!(
            device_attribute(DeviceAttribute::MemoryPoolSupportedHandleTypes, 60200000),
            Some(91)
        );
        // CUDA's numbering mapped to HIP's: the typed attributes agree with the table.
        for version in [50221153, 60200000] {
            for number in 0..200 {
                if let Some(typed) = crate::runtime::cuda::typed_attribute(number) {
                    assert_eq!(
                        cuda_attribute(number, version),
                        device_attribute(typed, version),
                        "{typed:?} at {version}"
                    );
                }
            }
        }
        assert_eq!(cuda_attribute(10, 50221153), Some(87)); // warp size
        assert_eq!(cuda_attribute(75, 60200000), Some(23)); // compute capability major
        assert_eq!(cuda_attribute(99, 50221153), None); // host register: ROCm 6 only
        assert_eq!(cuda_attribute(99, 60200000), Some(90));
        assert_eq!(cuda_attribute(81, 60200000), None); // ambiguous in HIP
        assert_eq!(cuda_attribute(120, 60200000), None); // cluster launch: CUDA only
        assert_eq!(cuda_attribute(0, 60200000), None);
        // One-to-one: no two CUDA attributes share a HIP number.
        let mut seen = std::collections::HashSet::new();
        for number in 0..200 {
            if let Some(h) = cuda_attribute(number, 60200000) {
                assert!(seen.insert(h), "HIP attribute {h} mapped twice");
                assert!(crate::runtime::cuda::attr::is_attribute(number), "{number}");
            }
        }
        assert_eq!(memory_type(1, 0, 50221153), MemoryType::Device);
        assert_eq!(memory_type(0, 1, 50221153), MemoryType::Managed);
        assert_eq!(memory_type(1, 0, 60200000), MemoryType::Host);
        assert_eq!(memory_type(0, 0, 60200000), MemoryType::Unregistered);
        assert_eq!(stream(Stream::LEGACY), 0);
        assert_eq!(stream(Stream::PER_THREAD), 2);
    }

    #[test]
    fn vmm_layout_and_attribute_by_version() {
        // Debian's 5.2.3 (50221153) and anything before 5.3: ROCm 5.2's own layout, and no
        // attribute to ask.
        assert_eq!(vmm_prop_layout(50221153), Some(PropLayout::Hip52));
        assert_eq!(vmm_prop_layout(50103000), Some(PropLayout::Hip52));
        assert_eq!(vmm_supported_attribute(50221153), None);
        // ROCm 5.3 onwards: CUDA's layout, attribute 89 (one after MemoryPoolsSupported).
        for version in [
            50300000, 50322062, 50700000, 60032830, 60200000, 70000000, 70100000,
        ] {
            assert_eq!(
                vmm_prop_layout(version),
                Some(PropLayout::Cuda),
                "{version}"
            );
            assert_eq!(vmm_supported_attribute(version), Some(89), "{version}");
            assert_eq!(
                device_attribute(DeviceAttribute::MemoryPoolsSupported, version),
                Some(88)
            );
        }
        // The version query failed: no layout is assumed.
        assert_eq!(vmm_prop_layout(0), None);
        assert_eq!(VMM.library, None);
        assert!(VMM.granularity.starts_with("hipMem"));
    }
}
