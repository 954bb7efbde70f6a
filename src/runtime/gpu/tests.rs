//! Tests of the GPU runtime layer that need no GPU: layouts, error classes, missing
//! symbols.

use super::errors::*;
use super::vmm::*;
use super::*;

#[test]
fn struct_prefixes_match_headers() {
    use std::mem::{offset_of, size_of};
    // cudaMemPoolProps / hipMemPoolProps are 88 bytes; our buffer must cover them.
    assert_eq!(offset_of!(RawPoolProps, location), 8);
    assert_eq!(offset_of!(RawPoolProps, win32_security_attributes), 16);
    assert_eq!(offset_of!(RawPoolProps, max_size), 24);
    assert!(size_of::<RawPoolProps>() >= 88 * 2);
    // hipPointerAttribute_t: isManaged at 24, 32 bytes; cudaPointerAttributes: 88 bytes
    // in CUDA 13.0 (measured with its headers).
    assert_eq!(offset_of!(RawPointerAttributes, device), 4);
    assert_eq!(offset_of!(RawPointerAttributes, device_pointer), 8);
    assert_eq!(offset_of!(RawPointerAttributes, is_managed), 24);
    assert!(size_of::<RawPointerAttributes>() >= 88 + 64);
    assert_eq!(size_of::<MemLocation>(), 8);
}

#[test]
fn error_classes() {
    assert_eq!(kind_of(2), RuntimeErrorKind::OutOfMemory);
    assert_eq!(kind_of(600), RuntimeErrorKind::NotReady);
    assert_eq!(kind_of(100), RuntimeErrorKind::NoDevice);
    assert_eq!(kind_of(35), RuntimeErrorKind::NoDevice);
    assert_eq!(kind_of(101), RuntimeErrorKind::InvalidDevice);
    assert_eq!(kind_of(1), RuntimeErrorKind::InvalidValue);
    assert_eq!(kind_of(400), RuntimeErrorKind::InvalidHandle);
    assert_eq!(kind_of(801), RuntimeErrorKind::NotSupported);
    assert_eq!(kind_of(719), RuntimeErrorKind::Other);
}

#[test]
fn vmm_struct_layouts_match_headers() {
    use std::mem::{offset_of, size_of};
    // CUmemAllocationProp (cuda.h 10.2-13.x) and hipMemAllocationProp of ROCm 5.3+:
    // type 0, requestedHandleType(s) 4, location 8 (type 8, id 12), win32HandleMetaData
    // 16, allocFlags 24 (compressionType 24, gpuDirectRDMACapable 25, usage 26,
    // reserved 28..32), 32 bytes; zeros follow.
    assert_eq!(offset_of!(RawAllocProp, ty), 0);
    assert_eq!(offset_of!(RawAllocProp, requested_handle_types), 4);
    assert_eq!(offset_of!(RawAllocProp, location), 8);
    assert_eq!(offset_of!(RawAllocProp, win32_handle_meta_data), 16);
    assert_eq!(offset_of!(RawAllocProp, alloc_flags), 24);
    assert_eq!(offset_of!(AllocFlags, gpu_direct_rdma_capable), 1);
    assert_eq!(offset_of!(AllocFlags, usage), 2);
    assert_eq!(size_of::<AllocFlags>(), 8);
    assert_eq!(offset_of!(RawAllocProp, spare), 32);
    // hipMemAllocationProp of ROCm 5.2 (Debian's headers; tests-hip checks them with a C
    // compiler): compressionType 0, location 4, requestedHandleType 12, type 16, usage
    // 20, win32HandleMetaData 24, 32 bytes.
    assert_eq!(offset_of!(RawAllocPropHip52, location), 4);
    assert_eq!(offset_of!(RawAllocPropHip52, requested_handle_type), 12);
    assert_eq!(offset_of!(RawAllocPropHip52, ty), 16);
    assert_eq!(offset_of!(RawAllocPropHip52, usage), 20);
    assert_eq!(offset_of!(RawAllocPropHip52, win32_handle_meta_data), 24);
    assert_eq!(offset_of!(RawAllocPropHip52, spare), 32);
    // CUmemAccessDesc / hipMemAccessDesc: location 0, flags 8, 12 bytes (array stride).
    assert_eq!(offset_of!(RawAccessDesc, flags), 8);
    assert_eq!(size_of::<RawAccessDesc>(), 12);
    assert_eq!(size_of::<Handle>(), size_of::<*mut c_void>());
    assert_eq!(size_of::<Addr>(), 8);
}

/// The 32 bytes the runtime reads, as little-endian 32-bit words.
fn prop_words(prop: &AllocProp) -> [u32; 8] {
    let mut words = [0u32; 8];
    for (i, w) in words.iter_mut().enumerate() {
        // SAFETY: both layouts are at least 32 + 64 bytes, 4-byte aligned.
        *w = unsafe { prop.as_ptr().cast::<u32>().add(i).read() };
    }
    words
}

#[test]
fn vmm_props_are_pinned_device_memory() {
    // type = pinned (1), location = { device (1), 3 }, everything else 0.
    let cuda = prop_words(&AllocProp::pinned_device(PropLayout::Cuda, 3));
    assert_eq!(cuda, [1, 0, 1, 3, 0, 0, 0, 0]);
    // ROCm 5.2: compressionType 0 (with padding), location at 4, handle type 12, type 16.
    let hip52 = prop_words(&AllocProp::pinned_device(PropLayout::Hip52, 3));
    assert_eq!(hip52, [0, 1, 3, 0, 1, 0, 0, 0]);
}

#[test]
fn driver_error_classes() {
    // Shared with the runtime's numbering.
    assert_eq!(driver_kind_of(1), RuntimeErrorKind::InvalidValue);
    assert_eq!(driver_kind_of(2), RuntimeErrorKind::OutOfMemory);
    assert_eq!(driver_kind_of(3), RuntimeErrorKind::NoDevice);
    assert_eq!(driver_kind_of(34), RuntimeErrorKind::NoDevice);
    assert_eq!(driver_kind_of(100), RuntimeErrorKind::NoDevice);
    assert_eq!(driver_kind_of(101), RuntimeErrorKind::InvalidDevice);
    assert_eq!(driver_kind_of(400), RuntimeErrorKind::InvalidHandle);
    assert_eq!(driver_kind_of(801), RuntimeErrorKind::NotSupported);
    // The driver's own.
    assert_eq!(driver_kind_of(4), RuntimeErrorKind::NoDevice);
    assert_eq!(driver_kind_of(46), RuntimeErrorKind::NoDevice);
    assert_eq!(driver_kind_of(201), RuntimeErrorKind::InvalidHandle);
    assert_eq!(driver_kind_of(800), RuntimeErrorKind::NotSupported);
    assert_eq!(driver_kind_of(803), RuntimeErrorKind::NoDevice);
    assert_eq!(driver_kind_of(700), RuntimeErrorKind::Other);
    // Without the driver's text functions the code is named.
    assert_eq!(GpuRuntime::driver_text(None, 2), "CUresult 2");
}

/// A flavor on HIP's runtime library (the one installed here without a device) whose
/// virtual memory management names what `names` names.
fn flavor_with(vmm: &'static VmmNames) -> Flavor {
    Flavor {
        kind: RuntimeKind::Hip,
        column: 1,
        libraries: &["libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"],
        device_attribute: |_, _| None,
        cuda_attribute: |_, _| None,
        memory_type: |_, _, _| MemoryType::Unregistered,
        stream: |s| s.0,
        pool_max_size_since: None,
        managed_pools_since: None,
        hw_decompress_since: None,
        location_api_since: None,
        unknown_pointer_is_invalid_value: true,
        fabric_handles: false,
        driver: None,
        vmm,
    }
}

/// Every `vmm_*` call of `rt` must be a clean `NotSupported` error naming `what`.
fn assert_vmm_not_supported(rt: &dyn Runtime, what: &str) {
    let results = [
        rt.vmm_granularity(0).map(drop),
        rt.vmm_address_reserve(2 << 20, 0).map(drop),
        rt.vmm_address_free(1 << 40, 2 << 20),
        rt.vmm_create(2 << 20, 0).map(drop),
        rt.vmm_release(PhysicalHandle(1)),
        rt.vmm_map(1 << 40, 2 << 20, PhysicalHandle(1)),
        rt.vmm_unmap(1 << 40, 2 << 20),
        rt.vmm_set_access(1 << 40, 2 << 20, &[0]),
    ];
    for r in results {
        let e = r.unwrap_err();
        assert_eq!(e.kind, RuntimeErrorKind::NotSupported, "{what}: {e:?}");
        assert!(
            e.call.starts_with("noSuch") || e.call.starts_with("hipMem"),
            "{e:?}"
        );
    }
}

#[test]
fn vmm_absent_symbols_or_library_are_not_supported() {
    static ABSENT_SYMBOLS: VmmNames = VmmNames {
        library: None,
        granularity: "noSuchGranularity",
        address_reserve: "noSuchAddressReserve",
        address_free: "noSuchAddressFree",
        create: "noSuchCreate",
        release: "noSuchRelease",
        map: "noSuchMap",
        unmap: "noSuchUnmap",
        set_access: "noSuchSetAccess",
        get_error_name: "",
        get_error_string: "",
        device_get_attribute: "",
        device_get: "",
        ctx_get_current: "",
        supported_attribute: |_| None,
        prop_layout: |_| Some(PropLayout::Cuda),
    };
    // The driver library missing (a CUDA runtime without libcuda.so.1): the real names,
    // from a library that does not load.
    static ABSENT_LIBRARY: VmmNames = VmmNames {
        library: Some("libdoes-not-exist-rmm.so.1"),
        granularity: "hipMemGetAllocationGranularity",
        address_reserve: "hipMemAddressReserve",
        address_free: "hipMemAddressFree",
        create: "hipMemCreate",
        release: "hipMemRelease",
        map: "hipMemMap",
        unmap: "hipMemUnmap",
        set_access: "hipMemSetAccess",
        get_error_name: "cuGetErrorName",
        get_error_string: "cuGetErrorString",
        device_get_attribute: "cuDeviceGetAttribute",
        device_get: "cuDeviceGet",
        ctx_get_current: "cuCtxGetCurrent",
        supported_attribute: |_| Some(102),
        prop_layout: |_| Some(PropLayout::Cuda),
    };
    static F1: std::sync::OnceLock<Flavor> = std::sync::OnceLock::new();
    static F2: std::sync::OnceLock<Flavor> = std::sync::OnceLock::new();
    let flavors = [
        (
            "absent symbols",
            F1.get_or_init(|| flavor_with(&ABSENT_SYMBOLS)),
        ),
        (
            "absent library",
            F2.get_or_init(|| flavor_with(&ABSENT_LIBRARY)),
        ),
    ];
    for (what, flavor) in flavors {
        let rt = match load(flavor) {
            Ok(rt) => rt,
            Err(e) => {
                eprintln!("skipping: no HIP runtime to load the test flavor on ({e})");
                return;
            }
        };
        assert_vmm_not_supported(&*rt, what);
    }
    // Without a library at all, the table is empty.
    let (libc, _) = Library::open_first(&["libc.so.6"]).unwrap();
    let vmm = Vmm::load(&ABSENT_LIBRARY, &libc);
    assert!(vmm.granularity.f.is_none() && vmm.create.f.is_none());
    assert!(vmm.error_name.is_none() && vmm.ctx_get_current.is_none());
    assert!(vmm.driver);
    let vmm = Vmm::load(&ABSENT_SYMBOLS, &libc);
    assert!(vmm.map.f.is_none() && !vmm.driver);
}

#[test]
fn host_trampoline_runs_once_and_contains_panics() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let hits = Arc::new(AtomicUsize::new(0));
    let h = hits.clone();
    let f: HostFn = Box::new(move || {
        h.fetch_add(1, Ordering::SeqCst);
    });
    // SAFETY: exactly what launch_host_func hands the runtime.
    unsafe { host_trampoline(Box::into_raw(Box::new(f)).cast()) };
    assert_eq!(hits.load(Ordering::SeqCst), 1);
    let p: HostFn = Box::new(|| panic!("contained"));
    // SAFETY: as above; the panic must not escape.
    unsafe { host_trampoline(Box::into_raw(Box::new(p)).cast()) };
}
