//! The AMD HIP backend: the shared GPU implementation with HIP's names and numbers.
//!
//! Numbers come from `hip/hip_runtime_api.h` of ROCm 5.2.3 (Debian `libamdhip64-dev`,
//! checked by compiling against it) and ROCm 6.x. HIP versions are
//! `major * 10_000_000 + minor * 100_000 + patch` (5.2.3 reports 50221153).

use super::gpu::{self, Flavor};
use super::{DeviceAttribute, MemoryType, Runtime, RuntimeKind, Stream};

/// The major ROCm version of a HIP runtime version number.
fn major(version: i32) -> i32 {
    version / 10_000_000
}

/// `hipDeviceAttribute_t` numbers. The CUDA-compatible block is numbered by position, and
/// these positions are the same in ROCm 5.2 and 6.x (6.x renamed `Name` to `Unused1` in place
/// and appended `VirtualMemoryManagementSupported`, `HostRegisterSupported` and
/// `MemoryPoolSupportedHandleTypes` after `MemoryPoolsSupported`).
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
    memory_type,
    stream,
    // hipMemPoolProps has `maxSize` in ROCm 6 headers (reserved bytes in 5.x).
    pool_max_size_since: Some(60_000_000),
    // No managed mempools through this API.
    managed_pools_since: None,
    location_api_since: None,
    unknown_pointer_is_invalid_value: true,
    fabric_handles: false,
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
        assert_eq!(memory_type(1, 0, 50221153), MemoryType::Device);
        assert_eq!(memory_type(0, 1, 50221153), MemoryType::Managed);
        assert_eq!(memory_type(1, 0, 60200000), MemoryType::Host);
        assert_eq!(memory_type(0, 0, 60200000), MemoryType::Unregistered);
        assert_eq!(stream(Stream::LEGACY), 0);
        assert_eq!(stream(Stream::PER_THREAD), 2);
    }
}
