//! The NVIDIA CUDA backend: the shared GPU implementation with CUDA's names and numbers.
//!
//! Numbers come from CUDA 12.6 / 13.0 `driver_types.h` (`cudaDeviceAttr`,
//! `cudaMemoryType`, `cudaMemAllocationType`) and `cuda_runtime_api.h`; each value below was
//! checked by compiling against the CUDA 13.0 headers.

use super::gpu::{self, Flavor};
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
    memory_type,
    // CUDA's stream handles pass straight through: 0 default, 1 legacy, 2 per-thread.
    stream: |s: Stream| s.0,
    // `maxSize` took over reserved bytes in CUDA 12.2.
    pool_max_size_since: Some(12020),
    // cudaMemAllocationTypeManaged = 2 arrived with CUDA 13.0.
    managed_pools_since: Some(13000),
    // CUDA 13 gave cudaMemPrefetchAsync/cudaMemAdvise the cudaMemLocation signatures.
    location_api_since: Some(13000),
    unknown_pointer_is_invalid_value: false,
    fabric_handles: true,
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
    fn memory_types() {
        assert_eq!(memory_type(0, 0, 12000), MemoryType::Unregistered);
        assert_eq!(memory_type(2, 0, 12000), MemoryType::Device);
        assert_eq!(memory_type(3, 0, 13000), MemoryType::Managed);
    }
}
