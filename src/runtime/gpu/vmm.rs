//! Virtual memory management ([`crate::runtime::Runtime`]'s `vmm_*`): CUDA's
//! calls are the driver's, HIP's the runtime library's own; one table of entry points
//! ([`Vmm`]) and the allocation-properties layouts of each vendor and version.

use std::cell::Cell;
use std::ffi::{c_char, c_void};

use super::layouts::{MemLocation, LOCATION_DEVICE};
use super::table::OptSym;
use super::{GpuRuntime, P};
use crate::runtime::dl::Library;
use crate::runtime::{DeviceId, PhysicalHandle, RtResult, Runtime, RuntimeError, RuntimeErrorKind};

/// The virtual memory management calls of a flavor ([`Runtime`]'s `vmm_*`): CUDA's are the
/// driver's (`libcuda.so.1`; the runtime API has none), HIP's the runtime library's own.
/// Both vendors give them the same C signatures (`CUdeviceptr` and `void*` addresses, 64-bit
/// handles), so one table serves both.
pub(in crate::runtime) struct VmmNames {
    /// The library to load them from (`libcuda.so.1`); None: the runtime library itself.
    /// Calls into another library are the driver's: they report `CUresult` codes, named by
    /// `get_error_name`/`get_error_string`, and act on the calling thread's current context.
    pub library: Option<&'static str>,
    /// `cuMemGetAllocationGranularity(size_t*, const prop*, option)`.
    pub granularity: &'static str,
    /// `cuMemAddressReserve(ptr*, size, alignment, addr, flags)`.
    pub address_reserve: &'static str,
    /// `cuMemAddressFree(ptr, size)`.
    pub address_free: &'static str,
    /// `cuMemCreate(handle*, size, const prop*, flags)`.
    pub create: &'static str,
    /// `cuMemRelease(handle)`.
    pub release: &'static str,
    /// `cuMemMap(ptr, size, offset, handle, flags)`.
    pub map: &'static str,
    /// `cuMemUnmap(ptr, size)`.
    pub unmap: &'static str,
    /// `cuMemSetAccess(ptr, size, const desc*, count)`.
    pub set_access: &'static str,
    /// The driver's `(code, const char** out) -> code` error name and string functions
    /// (`cuGetErrorName`, `cuGetErrorString`); `""` where the runtime's own serve.
    pub get_error_name: &'static str,
    /// See `get_error_name`.
    pub get_error_string: &'static str,
    /// The driver's `cuDeviceGetAttribute(int*, attribute, CUdevice)`; `""`: the runtime's.
    pub device_get_attribute: &'static str,
    /// The driver's `cuDeviceGet(CUdevice*, ordinal)`, for its attribute query.
    pub device_get: &'static str,
    /// The driver's `cuCtxGetCurrent(CUcontext*)`; `""` where no context is needed.
    pub ctx_get_current: &'static str,
    /// The number of the "virtual memory management supported" device attribute at runtime
    /// `version` (for `device_get_attribute`); None where there is none to ask.
    pub supported_attribute: fn(i32) -> Option<i32>,
    /// The allocation-properties layout at runtime `version`; None when it is not known
    /// (then `vmm_granularity` and `vmm_create` report `NotSupported`).
    pub prop_layout: fn(i32) -> Option<PropLayout>,
}

/// The layouts of `CUmemAllocationProp` / `hipMemAllocationProp`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(in crate::runtime) enum PropLayout {
    /// CUDA 10.2+ `CUmemAllocationProp`, and `hipMemAllocationProp` from ROCm 5.3 on:
    /// `{ type; requestedHandleType(s); location; win32HandleMetaData; allocFlags }`.
    Cuda,
    /// `hipMemAllocationProp` of ROCm 5.2 and older: `{ unsigned char compressionType;
    /// location; requestedHandleType; type; unsigned short usage; win32HandleMetaData }`.
    Hip52,
}

const ALLOCATION_TYPE_PINNED: i32 = 1; // CU_MEM_ALLOCATION_TYPE_PINNED / hipMemAllocationTypePinned
const ACCESS_READ_WRITE: i32 = 3; // CU_MEM_ACCESS_FLAGS_PROT_READWRITE / hipMemAccessFlagsProtReadWrite
const GRANULARITY_MINIMUM: i32 = 0; // CU_MEM_ALLOC_GRANULARITY_MINIMUM / hipMemAllocationGranularityMinimum
const GRANULARITY_RECOMMENDED: i32 = 1; // ..._RECOMMENDED

/// `allocFlags` of [`RawAllocProp`] (CUDA: `{ unsigned char compressionType;
/// unsigned char gpuDirectRDMACapable; unsigned short usage; unsigned char reserved[4]; }`;
/// ROCm 5.3+ has the first three).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub(super) struct AllocFlags {
    pub(super) compression_type: u8,
    pub(super) gpu_direct_rdma_capable: u8,
    pub(super) usage: u16,
    pub(super) reserved: [u8; 4],
}

/// `CUmemAllocationProp` (cuda.h, CUDA 10.2 to 13.x: 32 bytes) and `hipMemAllocationProp`
/// of ROCm 5.3 and later (the same 32 bytes), followed by zeros so that a runtime reading a
/// longer struct still sees zeros.
#[repr(C)]
pub(super) struct RawAllocProp {
    pub(super) ty: i32,
    pub(super) requested_handle_types: i32,
    pub(super) location: MemLocation,
    pub(super) win32_handle_meta_data: *mut c_void,
    pub(super) alloc_flags: AllocFlags,
    pub(super) spare: [u64; 8],
}

/// `hipMemAllocationProp` of ROCm 5.2 and older (Debian's `libamdhip64-dev` 5.2.3: 32
/// bytes), followed by zeros like [`RawAllocProp`].
#[repr(C)]
pub(super) struct RawAllocPropHip52 {
    pub(super) compression_type: u8,
    /// C's padding, as a field so that it is zeroed like the rest: the struct is passed
    /// whole to the runtime (and read whole by the layout test).
    pub(super) pad0: [u8; 3],
    pub(super) location: MemLocation,
    pub(super) requested_handle_type: i32,
    pub(super) ty: i32,
    pub(super) usage: u16,
    /// C's padding, zeroed (see `pad0`).
    pub(super) pad1: [u8; 2],
    pub(super) win32_handle_meta_data: *mut c_void,
    pub(super) spare: [u64; 8],
}

/// Allocation properties of pinned device memory on one device, in a runtime's layout.
pub(super) enum AllocProp {
    Cuda(RawAllocProp),
    Hip52(RawAllocPropHip52),
}

impl AllocProp {
    /// Pinned memory of `device`, no export handle, no compression, in `layout`.
    pub(super) fn pinned_device(layout: PropLayout, device: DeviceId) -> AllocProp {
        let location = MemLocation {
            ty: LOCATION_DEVICE,
            id: device,
        };
        match layout {
            PropLayout::Cuda => AllocProp::Cuda(RawAllocProp {
                ty: ALLOCATION_TYPE_PINNED,
                requested_handle_types: 0,
                location,
                win32_handle_meta_data: std::ptr::null_mut(),
                alloc_flags: AllocFlags::default(),
                spare: [0; 8],
            }),
            PropLayout::Hip52 => AllocProp::Hip52(RawAllocPropHip52 {
                compression_type: 0,
                pad0: [0; 3],
                location,
                requested_handle_type: 0,
                ty: ALLOCATION_TYPE_PINNED,
                usage: 0,
                pad1: [0; 2],
                win32_handle_meta_data: std::ptr::null_mut(),
                spare: [0; 8],
            }),
        }
    }

    /// The struct, for the runtime's `const prop*` argument.
    pub(super) fn as_ptr(&self) -> *const c_void {
        match self {
            AllocProp::Cuda(p) => (p as *const RawAllocProp).cast(),
            AllocProp::Hip52(p) => (p as *const RawAllocPropHip52).cast(),
        }
    }
}

/// `CUmemAccessDesc` / `hipMemAccessDesc`: `{ location; flags; }` (12 bytes, arrays of it
/// packed at that stride).
#[repr(C)]
#[derive(Clone, Copy)]
pub(super) struct RawAccessDesc {
    pub(super) location: MemLocation,
    pub(super) flags: i32,
}

/// A device address: `CUdeviceptr` (`unsigned long long`) or HIP's `void*`; on the 64-bit
/// targets these runtimes exist for, both are one 64-bit integer argument.
pub(super) type Addr = usize;
/// `CUmemGenericAllocationHandle` (`unsigned long long`) / `hipMemGenericAllocationHandle_t`
/// (a pointer: 64 bits on those targets).
pub(super) type Handle = u64;

/// The virtual memory management entry points of one loaded runtime (see [`VmmNames`]).
pub(super) struct Vmm {
    pub(super) granularity: OptSym<unsafe extern "C" fn(*mut usize, *const c_void, i32) -> i32>,
    pub(super) address_reserve:
        OptSym<unsafe extern "C" fn(*mut Addr, usize, usize, Addr, u64) -> i32>,
    pub(super) address_free: OptSym<unsafe extern "C" fn(Addr, usize) -> i32>,
    pub(super) create: OptSym<unsafe extern "C" fn(*mut Handle, usize, *const c_void, u64) -> i32>,
    pub(super) release: OptSym<unsafe extern "C" fn(Handle) -> i32>,
    pub(super) map: OptSym<unsafe extern "C" fn(Addr, usize, usize, Handle, u64) -> i32>,
    pub(super) unmap: OptSym<unsafe extern "C" fn(Addr, usize) -> i32>,
    pub(super) set_access:
        OptSym<unsafe extern "C" fn(Addr, usize, *const RawAccessDesc, usize) -> i32>,
    /// The calls are the driver's (see [`VmmNames::library`]).
    pub(super) driver: bool,
    pub(super) error_name: Option<unsafe extern "C" fn(i32, *mut *const c_char) -> i32>,
    pub(super) error_string: Option<unsafe extern "C" fn(i32, *mut *const c_char) -> i32>,
    /// The driver's attribute query; None: the runtime's (`Api::device_get_attribute`).
    pub(super) device_get_attribute: Option<unsafe extern "C" fn(*mut i32, i32, i32) -> i32>,
    pub(super) device_get: Option<unsafe extern "C" fn(*mut i32, i32) -> i32>,
    pub(super) ctx_get_current: Option<unsafe extern "C" fn(*mut P) -> i32>,
    // Kept so the handle is visibly owned; never closed (see `dl`).
    pub(super) _library: Option<Library>,
}

impl Vmm {
    /// Resolves `names` from their library (`runtime` when they are the runtime's own). A
    /// library that does not load, or lacks a function, leaves it out: its calls report
    /// `NotSupported`.
    pub(super) fn load(names: &VmmNames, runtime: &Library) -> Vmm {
        let library = names
            .library
            .and_then(|name| Library::open_first(&[name]).ok().map(|(lib, _)| lib));
        let from: Option<&Library> = match names.library {
            None => Some(runtime),
            Some(_) => library.as_ref(),
        };
        // The 64-bit handles and addresses above (`Addr`, `Handle`) need a 64-bit target.
        let from = from.filter(|_| usize::BITS == 64);
        fn get<F: Copy>(lib: Option<&Library>, name: &'static str) -> OptSym<F> {
            let lib = lib.filter(|_| !name.is_empty());
            // SAFETY: each `F` below is the C signature of `name` in cuda.h (CUDA 10.2 to
            // 13.x) or hip_runtime_api.h (ROCm 5.x to 7.x), per `VmmNames`.
            let f = lib.and_then(|lib| unsafe { lib.symbol(name) });
            OptSym { name, f }
        }
        Vmm {
            granularity: get(from, names.granularity),
            address_reserve: get(from, names.address_reserve),
            address_free: get(from, names.address_free),
            create: get(from, names.create),
            release: get(from, names.release),
            map: get(from, names.map),
            unmap: get(from, names.unmap),
            set_access: get(from, names.set_access),
            driver: names.library.is_some(),
            error_name: get(from, names.get_error_name).f,
            error_string: get(from, names.get_error_string).f,
            device_get_attribute: get(from, names.device_get_attribute).f,
            device_get: get(from, names.device_get).f,
            ctx_get_current: get(from, names.ctx_get_current).f,
            _library: library,
        }
    }
}

thread_local! {
    /// Whether the calling thread went through the runtime's set-up before a driver call
    /// of the virtual memory management (see `GpuRuntime::driver_context`).
    static DRIVER_THREAD_SET_UP: Cell<bool> = const { Cell::new(false) };
}

impl GpuRuntime {
    /// Makes sure the calling thread has a current context before a driver call.
    ///
    /// The driver's calls act on the thread's current context, which the runtime makes
    /// current at a thread's first runtime call (`cudaSetDevice`, or lazily at the first
    /// call that needs the device). A thread that made no runtime call yet has none, and
    /// the driver may not even be initialized (`cuInit`) when nothing in the process called
    /// the runtime. So a thread's first call here goes through the runtime's set-up,
    /// `cudaFree(NULL)`, which initializes the driver and makes the primary context of the
    /// thread's current device current (a no-op on a thread already set up); later calls
    /// check `cuCtxGetCurrent` and repeat the set-up when a program popped the context.
    /// HIP has no such state: its calls set the thread up themselves.
    pub(super) fn driver_context(&self) -> RtResult<()> {
        if !self.vmm.driver {
            return Ok(());
        }
        let first = !DRIVER_THREAD_SET_UP.with(|c| c.replace(true));
        if !first {
            let current = match self.vmm.ctx_get_current {
                Some(f) => {
                    let mut ctx: P = std::ptr::null_mut();
                    // SAFETY: writes one handle through a valid pointer; the driver was
                    // initialized by this thread's first call (below).
                    unsafe { f(&mut ctx) == 0 && !ctx.is_null() }
                }
                None => true,
            };
            if current {
                return Ok(());
            }
        }
        // SAFETY: freeing NULL is a no-op that sets the thread up (see above).
        let code = unsafe { (self.api.free.f)(std::ptr::null_mut()) };
        if code != 0 {
            DRIVER_THREAD_SET_UP.with(|c| c.set(false));
        }
        self.check(self.api.free.name, code)
    }

    /// Pinned device memory of `device` in this runtime's allocation-properties layout.
    pub(super) fn alloc_prop(&self, call: &'static str, device: DeviceId) -> RtResult<AllocProp> {
        match (self.flavor.vmm.prop_layout)(self.runtime_version) {
            Some(layout) => Ok(AllocProp::pinned_device(layout, device)),
            None => Err(self.unsupported(
                call,
                format!(
                    "{}: the layout of its allocation properties is not known",
                    self.description()
                ),
            )),
        }
    }

    /// Whether `device` supports virtual memory management, by its device attribute where
    /// the runtime has one: Err(NotSupported) when it says no, the query's error for a bad
    /// device; Ok when it says yes or cannot say (an older driver without the attribute).
    pub(super) fn vmm_device_supported(
        &self,
        call: &'static str,
        device: DeviceId,
    ) -> RtResult<()> {
        let Some(number) = (self.flavor.vmm.supported_attribute)(self.runtime_version) else {
            return Ok(());
        };
        let mut v = 0;
        let (query, code) = match self.vmm.device_get_attribute {
            // The driver's number means nothing to the runtime's query.
            None if self.vmm.driver => return Ok(()),
            Some(f) => {
                // The driver's CUdevice of the ordinal (the ordinal itself in every driver
                // so far, which is what it stays without `cuDeviceGet`).
                let mut dev = device;
                if let Some(get) = self.vmm.device_get {
                    // SAFETY: writes one int through a valid pointer; the driver validates
                    // the ordinal.
                    let code = unsafe { get(&mut dev, device) };
                    if code != 0 {
                        return Err(self.vmm_error("cuDeviceGet", code));
                    }
                }
                // SAFETY: writes one int through a valid pointer; the driver validates the
                // attribute and device.
                ("cuDeviceGetAttribute", unsafe { f(&mut v, number, dev) })
            }
            // SAFETY: writes one int through a valid pointer; the runtime validates the
            // attribute and device.
            None => (self.api.device_get_attribute.name, unsafe {
                (self.api.device_get_attribute.f)(&mut v, number, device)
            }),
        };
        if code != 0 {
            let e = if self.vmm.device_get_attribute.is_some() {
                self.vmm_error(query, code)
            } else {
                self.error(query, code)
            };
            return match e.kind {
                RuntimeErrorKind::InvalidDevice | RuntimeErrorKind::NoDevice => Err(e),
                _ => Ok(()),
            };
        }
        if v == 0 {
            return Err(self.unsupported(
                call,
                format!(
                    "device {device} has no virtual memory management (device attribute {number} \
                     is 0; {})",
                    self.description()
                ),
            ));
        }
        Ok(())
    }

    pub(super) fn mem_granularity(&self, device: DeviceId) -> RtResult<(usize, usize)> {
        let sym = &self.vmm.granularity;
        let f = self.opt(sym)?;
        let prop = self.alloc_prop(sym.name, device)?;
        self.driver_context()?;
        self.vmm_device_supported(sym.name, device)?;
        let query = |option: i32| -> RtResult<usize> {
            let mut g = 0usize;
            // SAFETY: `prop` is a zero-padded allocation-properties struct in the runtime's
            // layout; the runtime writes one size_t through `g`.
            let code = unsafe { f(&mut g, prop.as_ptr(), option) };
            self.vmm_check(sym.name, code).map(|()| g)
        };
        // A device without virtual memory management fails the query (where no attribute
        // said so first): that is "not supported", unless the device itself is bad.
        let not_supported = |mut e: RuntimeError| {
            if !matches!(
                e.kind,
                RuntimeErrorKind::InvalidDevice | RuntimeErrorKind::NoDevice
            ) {
                e.kind = RuntimeErrorKind::NotSupported;
            }
            e
        };
        let minimum = query(GRANULARITY_MINIMUM).map_err(not_supported)?;
        if minimum == 0 {
            return Err(self.unsupported(
                sym.name,
                format!("device {device} reports a granularity of 0"),
            ));
        }
        let recommended = query(GRANULARITY_RECOMMENDED).map_err(not_supported)?;
        Ok((minimum, recommended.max(minimum)))
    }

    pub(super) fn mem_address_reserve(&self, size: usize, alignment: usize) -> RtResult<usize> {
        let sym = &self.vmm.address_reserve;
        let f = self.opt(sym)?;
        self.driver_context()?;
        let mut addr: Addr = 0;
        // SAFETY: the runtime writes the address through `addr`; no fixed address is asked
        // for (0) and flags must be 0.
        let code = unsafe { f(&mut addr, size, alignment, 0, 0) };
        self.vmm_check(sym.name, code).map(|()| addr)
    }

    pub(super) fn mem_address_free(&self, addr: usize, size: usize) -> RtResult<()> {
        let sym = &self.vmm.address_free;
        let f = self.opt(sym)?;
        self.driver_context()?;
        // SAFETY: the runtime validates the range against its reservations.
        let code = unsafe { f(addr, size) };
        self.vmm_check(sym.name, code)
    }

    pub(super) fn mem_create(&self, size: usize, device: DeviceId) -> RtResult<PhysicalHandle> {
        let sym = &self.vmm.create;
        let f = self.opt(sym)?;
        let prop = self.alloc_prop(sym.name, device)?;
        self.driver_context()?;
        let mut handle: Handle = 0;
        // SAFETY: `prop` is a zero-padded allocation-properties struct in the runtime's
        // layout; the runtime writes the handle through `handle`; flags must be 0.
        let code = unsafe { f(&mut handle, size, prop.as_ptr(), 0) };
        self.vmm_check(sym.name, code)
            .map(|()| PhysicalHandle(handle))
    }

    pub(super) fn mem_release(&self, handle: PhysicalHandle) -> RtResult<()> {
        let sym = &self.vmm.release;
        let f = self.opt(sym)?;
        self.driver_context()?;
        // SAFETY: the runtime validates the handle.
        let code = unsafe { f(handle.0) };
        self.vmm_check(sym.name, code)
    }

    pub(super) fn mem_map(&self, addr: usize, size: usize, handle: PhysicalHandle) -> RtResult<()> {
        let sym = &self.vmm.map;
        let f = self.opt(sym)?;
        self.driver_context()?;
        // SAFETY: the runtime validates the range (inside a reservation, not mapped) and
        // the handle; offset and flags are 0.
        let code = unsafe { f(addr, size, 0, handle.0, 0) };
        self.vmm_check(sym.name, code)
    }

    pub(super) fn mem_unmap(&self, addr: usize, size: usize) -> RtResult<()> {
        let sym = &self.vmm.unmap;
        let f = self.opt(sym)?;
        self.driver_context()?;
        // SAFETY: the runtime validates the range; the caller guarantees no device work
        // still uses it (trait contract).
        let code = unsafe { f(addr, size) };
        self.vmm_check(sym.name, code)
    }

    pub(super) fn mem_set_access(
        &self,
        addr: usize,
        size: usize,
        devices: &[DeviceId],
    ) -> RtResult<()> {
        let sym = &self.vmm.set_access;
        let f = self.opt(sym)?;
        if devices.is_empty() {
            return Err(RuntimeError {
                call: sym.name,
                code: -1,
                kind: RuntimeErrorKind::InvalidValue,
                name: "invalidValue".into(),
                message: "no device to give access to".into(),
            });
        }
        self.driver_context()?;
        let descs: Vec<RawAccessDesc> = devices
            .iter()
            .map(|&id| RawAccessDesc {
                location: MemLocation {
                    ty: LOCATION_DEVICE,
                    id,
                },
                flags: ACCESS_READ_WRITE,
            })
            .collect();
        // SAFETY: `descs` holds `descs.len()` access descriptors in the runtime's layout and
        // lives across the call; the runtime validates the range and devices.
        let code = unsafe { f(addr, size, descs.as_ptr(), descs.len()) };
        self.vmm_check(sym.name, code)
    }
}
