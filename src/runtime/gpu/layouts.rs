//! The C structs and enum numbers of the runtime API that CUDA and HIP share, in the
//! layouts of the vendors' headers (see the module docs of [`super`]), and the mempool
//! properties built in them.

use std::ffi::c_void;

use super::GpuRuntime;
use crate::runtime::{
    DeviceId, MemAdvice, MemHandleType, MemPoolAttr, MemPoolLocation, MemPoolProps, RtResult,
    Runtime,
};

/// `cudaMemLocation` / `hipMemLocation`: `{ enum type; int id; }` (8 bytes, by value).
#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct MemLocation {
    pub(super) ty: i32,
    pub(super) id: i32,
}

pub(super) const LOCATION_DEVICE: i32 = 1; // cudaMemLocationTypeDevice / hipMemLocationTypeDevice
pub(super) const LOCATION_HOST: i32 = 2; // cudaMemLocationTypeHost / hipMemLocationTypeHost

impl MemLocation {
    /// A device, or the host for `-1` (`cudaCpuDeviceId`).
    pub(super) fn of(device: DeviceId) -> MemLocation {
        if device < 0 {
            MemLocation {
                ty: LOCATION_HOST,
                id: 0,
            }
        } else {
            MemLocation {
                ty: LOCATION_DEVICE,
                id: device,
            }
        }
    }
}

/// `cudaMemPoolCreateUsageHwDecompress`: the pool's memory may feed the hardware
/// decompression engine.
const POOL_USAGE_HW_DECOMPRESS: u16 = 0x2;

/// The common prefix of `cudaMemPoolProps` (CUDA 11.2–13.x) and `hipMemPoolProps`
/// (ROCm 5.x–7.x): allocType, handleTypes, location at 0..16, win32SecurityAttributes at 16,
/// maxSize at 24 (CUDA ≥ 12.2, newer ROCm; reserved zero bytes before), then `usage` (CUDA
/// 12.x+) and reserved bytes up to 88 bytes. We pass a larger zeroed buffer so that a newer
/// runtime reading a longer struct still sees zeros.
#[repr(C)]
pub(super) struct RawPoolProps {
    pub(super) alloc_type: i32,
    pub(super) handle_types: i32,
    pub(super) location: MemLocation,
    pub(super) win32_security_attributes: *mut c_void,
    pub(super) max_size: usize,
    pub(super) rest: [u8; 224],
}

/// `cudaPointerAttributes` (CUDA 11+: `{ int type; int device; void* devicePointer;
/// void* hostPointer; }`, padded with reserved fields to 88 bytes in CUDA 13.0) and
/// `hipPointerAttribute_t` (ROCm 5/6: the same then
/// `int isManaged; unsigned allocationFlags;`), over-allocated for future fields.
#[repr(C)]
pub(super) struct RawPointerAttributes {
    pub(super) ty: i32,
    pub(super) device: i32,
    pub(super) device_pointer: *mut c_void,
    pub(super) host_pointer: *mut c_void,
    pub(super) is_managed: i32,
    pub(super) allocation_flags: u32,
    pub(super) spare: [u64; 16],
}

pub(super) const MEMCPY_DEFAULT: i32 = 4; // cudaMemcpyDefault / hipMemcpyDefault
pub(super) const MEM_ATTACH_GLOBAL: u32 = 1; // cudaMemAttachGlobal / hipMemAttachGlobal
pub(super) const EVENT_DISABLE_TIMING: u32 = 2; // cudaEventDisableTiming / hipEventDisableTiming
pub(super) const STREAM_NON_BLOCKING: u32 = 1; // cudaStreamNonBlocking / hipStreamNonBlocking

/// `cudaMemPoolAttr` / `hipMemPool_attribute` (same numbers in both); the three reuse
/// attributes are `int`, the others `cuuint64_t` / `uint64_t`.
pub(super) fn pool_attr(attr: MemPoolAttr) -> (i32, bool) {
    match attr {
        MemPoolAttr::ReuseFollowEventDependencies => (1, true),
        MemPoolAttr::ReuseAllowOpportunistic => (2, true),
        MemPoolAttr::ReuseAllowInternalDependencies => (3, true),
        MemPoolAttr::ReleaseThreshold => (4, false),
        MemPoolAttr::ReservedMemCurrent => (5, false),
        MemPoolAttr::ReservedMemHigh => (6, false),
        MemPoolAttr::UsedMemCurrent => (7, false),
        MemPoolAttr::UsedMemHigh => (8, false),
    }
}

/// `cudaMemoryAdvise` / `hipMemoryAdvise` (same numbers in both).
pub(super) fn advice_number(advice: MemAdvice) -> i32 {
    match advice {
        MemAdvice::SetReadMostly => 1,
        MemAdvice::UnsetReadMostly => 2,
        MemAdvice::SetPreferredLocation => 3,
        MemAdvice::UnsetPreferredLocation => 4,
        MemAdvice::SetAccessedBy => 5,
        MemAdvice::UnsetAccessedBy => 6,
    }
}

impl GpuRuntime {
    pub(super) fn pool_props(&self, props: &MemPoolProps) -> RtResult<RawPoolProps> {
        const CALL: &str = "memPoolCreate";
        let since = |v: Option<i32>| v.is_some_and(|v| self.runtime_version >= v);
        let alloc_type = match props.location {
            MemPoolLocation::Device => 1, // cudaMemAllocationTypePinned
            MemPoolLocation::Managed if since(self.flavor.managed_pools_since) => 2,
            MemPoolLocation::Managed => {
                return Err(self.unsupported(
                    CALL,
                    format!("{} has no managed memory pools", self.description()),
                ))
            }
        };
        let handle_types = match props.handle_type {
            MemHandleType::None => 0,
            MemHandleType::PosixFileDescriptor => 1,
            MemHandleType::Win32 => 2,
            MemHandleType::Win32Kmt => 4,
            MemHandleType::Fabric if self.flavor.fabric_handles => 8,
            MemHandleType::Fabric => {
                return Err(self.unsupported(
                    CALL,
                    format!("{} cannot export fabric handles", self.description()),
                ))
            }
        };
        if props.max_size != 0 && !since(self.flavor.pool_max_size_since) {
            return Err(self.unsupported(
                CALL,
                format!(
                    "{} has no maximum pool size (requested {} bytes)",
                    self.description(),
                    props.max_size
                ),
            ));
        }
        let mut rest = [0u8; 224];
        let hw_decompress = self
            .flavor
            .hw_decompress_since
            .is_some_and(|v| self.runtime_version >= v && self.driver_version >= v);
        if hw_decompress && props.location == MemPoolLocation::Device {
            // `unsigned short usage` follows `maxSize`.
            rest[..2].copy_from_slice(&POOL_USAGE_HW_DECOMPRESS.to_ne_bytes());
        }
        Ok(RawPoolProps {
            alloc_type,
            handle_types,
            location: MemLocation {
                ty: LOCATION_DEVICE,
                id: props.device,
            },
            win32_security_attributes: std::ptr::null_mut(),
            max_size: props.max_size,
            rest,
        })
    }
}
