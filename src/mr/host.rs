//! Host memory resources (hipMM's `rmm/mr/host/`): [`HostMemoryResource`] with
//! [`NewDeleteResource`] (the global allocator) and [`PinnedMemoryResource`] (the runtime's
//! pinned host allocator, `hipHostMalloc` / `cudaMallocHost`).
//!
//! Unlike device resources these are not stream ordered; they take an alignment, like
//! `std::pmr::memory_resource`.

use std::alloc::Layout;
use std::any::Any;
use std::collections::HashMap;
use std::ffi::c_void;
use std::fmt::Debug;

use parking_lot::Mutex;

use super::{allocation_error, current_device_or_unknown};
use crate::error::{Error, Result};
use crate::runtime::{process_is_exiting, runtime, Runtime, RuntimeErrorKind};

/// Default alignment of host allocations: `alignof(std::max_align_t)`.
pub const DEFAULT_HOST_ALIGNMENT: usize = 16;

/// Alignment the runtime's pinned allocator guarantees; larger ones are obtained by
/// over-allocating.
pub const PINNED_NATIVE_ALIGNMENT: usize = 256;

/// A host memory resource (hipMM's `host_memory_resource`).
pub trait HostMemoryResource: Send + Sync + Debug + 'static {
    /// Allocates `bytes` aligned to `alignment` (a power of two).
    fn allocate(&self, bytes: usize, alignment: usize) -> Result<*mut c_void>;
    /// Frees `ptr`, allocated by this resource with the same `bytes` and `alignment`.
    fn deallocate(&self, ptr: *mut c_void, bytes: usize, alignment: usize) -> Result<()>;
    /// True when memory from `self` may be freed by `other` and vice versa.
    fn is_equal(&self, other: &dyn HostMemoryResource) -> bool;
    /// hipMM's class name.
    fn name(&self) -> &'static str;
    /// For downcasting.
    fn as_any(&self) -> &dyn Any;
}

/// Checks that `alignment` is a non-zero power of two.
pub fn check_alignment(alignment: usize, resource: &str) -> Result<()> {
    if alignment.is_power_of_two() {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "{resource}: alignment = {alignment} is not a power of two"
        )))
    }
}

/// `new_delete_resource`: the global allocator (`operator new`/`delete` in C++, `std::alloc`
/// here). A zero-byte request gets a distinct one-byte allocation, as `operator new(0)` does.
#[derive(Debug, Default, Clone, Copy)]
pub struct NewDeleteResource;

impl NewDeleteResource {
    /// The resource (stateless).
    pub fn new() -> Self {
        NewDeleteResource
    }

    fn layout(bytes: usize, alignment: usize) -> Result<Layout> {
        check_alignment(alignment, "new_delete_resource")?;
        Layout::from_size_align(bytes.max(1), alignment).map_err(|e| {
            Error::invalid(format!(
                "new_delete_resource: {bytes} bytes aligned to {alignment}: {e}"
            ))
        })
    }
}

impl HostMemoryResource for NewDeleteResource {
    fn allocate(&self, bytes: usize, alignment: usize) -> Result<*mut c_void> {
        let layout = Self::layout(bytes, alignment)?;
        // SAFETY: `layout` has a non-zero size (`bytes.max(1)`) and a valid alignment.
        let ptr = unsafe { std::alloc::alloc(layout) };
        if ptr.is_null() {
            return Err(Error::OutOfMemory {
                requested: bytes,
                resource: "new_delete_resource",
                device: -1,
                detail: format!("the global allocator failed ({alignment}-byte alignment)"),
            });
        }
        Ok(ptr.cast())
    }

    /// The caller passes what it allocated with, as `operator delete(p, size, align)` requires.
    #[allow(clippy::not_unsafe_ptr_arg_deref)]
    fn deallocate(&self, ptr: *mut c_void, bytes: usize, alignment: usize) -> Result<()> {
        if ptr.is_null() {
            return Ok(());
        }
        let layout = Self::layout(bytes, alignment)?;
        // SAFETY: the contract of this resource (as of `operator delete`): `ptr` came from
        // `allocate` with the same size and alignment, hence the same layout.
        unsafe { std::alloc::dealloc(ptr.cast(), layout) };
        Ok(())
    }

    fn is_equal(&self, other: &dyn HostMemoryResource) -> bool {
        other.as_any().is::<NewDeleteResource>()
    }

    fn name(&self) -> &'static str {
        "new_delete_resource"
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Over-aligned pinned allocations: aligned address → what the runtime returned.
static OVERALIGNED: Mutex<Option<HashMap<usize, usize>>> = Mutex::new(None);

/// Pinned host memory of `bytes` aligned to `alignment` (a power of two); null for 0 bytes.
///
/// Alignments up to 256 come straight from the runtime; larger ones over-allocate by the
/// alignment and remember the original pointer for [`pinned_host_deallocate`].
pub fn pinned_host_allocate(bytes: usize, alignment: usize) -> Result<*mut c_void> {
    const NAME: &str = "pinned_memory_resource";
    check_alignment(alignment, NAME)?;
    if bytes == 0 {
        return Ok(std::ptr::null_mut());
    }
    let rt = runtime()?;
    let alloc = |n: usize| {
        rt.malloc_host(n)
            .map_err(|e| allocation_error(e, bytes, NAME, current_device_or_unknown(rt)))
    };
    if alignment <= PINNED_NATIVE_ALIGNMENT {
        let p = alloc(bytes)?;
        if p as usize % alignment == 0 {
            return Ok(p);
        }
        // Not what the runtime promises; fall back to over-allocation.
        free_pinned(rt, p)?;
    }
    let total = bytes.checked_add(alignment).ok_or_else(|| {
        Error::invalid(format!(
            "{NAME}: {bytes} bytes aligned to {alignment} overflows the address space"
        ))
    })?;
    let base = alloc(total)? as usize;
    let aligned = base.next_multiple_of(alignment);
    OVERALIGNED
        .lock()
        .get_or_insert_with(HashMap::new)
        .insert(aligned, base);
    Ok(aligned as *mut c_void)
}

fn free_pinned(rt: &dyn Runtime, ptr: *mut c_void) -> Result<()> {
    rt.free_host(ptr).map_err(|e| {
        if e.kind == RuntimeErrorKind::InvalidValue {
            Error::invalid(format!(
                "pinned_memory_resource: cannot free {ptr:p}: it is not pinned host memory or \
                 was already freed ({} returned {})",
                e.call, e.name
            ))
        } else {
            Error::runtime(current_device_or_unknown(rt), e)
        }
    })
}

/// Frees memory from [`pinned_host_allocate`] (same `bytes` and `alignment`); null is a no-op.
pub fn pinned_host_deallocate(ptr: *mut c_void, _bytes: usize, alignment: usize) -> Result<()> {
    check_alignment(alignment, "pinned_memory_resource")?;
    if ptr.is_null() || process_is_exiting() {
        return Ok(());
    }
    let rt = runtime()?;
    let base = OVERALIGNED
        .lock()
        .as_mut()
        .and_then(|m| m.remove(&(ptr as usize)));
    match base {
        Some(base) => free_pinned(rt, base as *mut c_void),
        None => free_pinned(rt, ptr),
    }
}

/// `pinned_memory_resource`: page-locked host memory from the runtime, accessible from the
/// device; any power-of-two alignment.
pub struct PinnedMemoryResource {
    rt: &'static dyn Runtime,
}

impl Debug for PinnedMemoryResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "pinned_memory_resource({})", self.rt.kind().name())
    }
}

impl PinnedMemoryResource {
    /// A resource over the process's runtime.
    pub fn new() -> Result<Self> {
        Ok(PinnedMemoryResource { rt: runtime()? })
    }
}

impl HostMemoryResource for PinnedMemoryResource {
    fn allocate(&self, bytes: usize, alignment: usize) -> Result<*mut c_void> {
        pinned_host_allocate(bytes, alignment)
    }

    fn deallocate(&self, ptr: *mut c_void, bytes: usize, alignment: usize) -> Result<()> {
        pinned_host_deallocate(ptr, bytes, alignment)
    }

    fn is_equal(&self, other: &dyn HostMemoryResource) -> bool {
        other.as_any().is::<PinnedMemoryResource>()
    }

    fn name(&self) -> &'static str {
        "pinned_memory_resource"
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::MemoryType;

    fn init() -> &'static dyn Runtime {
        crate::mr::tests::init()
    }

    fn exercise(mr: &dyn HostMemoryResource) {
        for alignment in [1usize, 8, 16, 64, 256, 4096, 1 << 16] {
            for bytes in [1usize, 100, 4096, 1 << 20] {
                let p = mr.allocate(bytes, alignment).unwrap();
                assert!(!p.is_null());
                assert_eq!(p as usize % alignment, 0, "{bytes} bytes at {alignment}");
                mr.deallocate(p, bytes, alignment).unwrap();
            }
        }
        for bad in [0usize, 3, 48, 4097] {
            let e = mr.allocate(64, bad).unwrap_err();
            assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
            assert!(e.to_string().contains("power of two"), "{e}");
        }
        mr.deallocate(std::ptr::null_mut(), 0, 16).unwrap();
    }

    #[test]
    fn new_delete_alignments() {
        let mr = NewDeleteResource::new();
        exercise(&mr);
        let p = mr.allocate(0, DEFAULT_HOST_ALIGNMENT).unwrap();
        assert!(!p.is_null());
        mr.deallocate(p, 0, DEFAULT_HOST_ALIGNMENT).unwrap();
        assert!(mr.is_equal(&NewDeleteResource));
        assert_eq!(mr.name(), "new_delete_resource");
    }

    #[test]
    fn pinned_alignments_and_memory_type() {
        let rt = init();
        let mr = PinnedMemoryResource::new().unwrap();
        exercise(&mr);
        assert_eq!(mr.allocate(0, 16).unwrap(), std::ptr::null_mut());
        let p = mr.allocate(1000, 4096).unwrap();
        assert_eq!(
            rt.pointer_attributes(p).unwrap().memory_type,
            MemoryType::Host
        );
        mr.deallocate(p, 1000, 4096).unwrap();
        assert!(mr.is_equal(&PinnedMemoryResource::new().unwrap()));
        assert!(!mr.is_equal(&NewDeleteResource));
        let e = mr.deallocate(0x1000 as *mut c_void, 8, 16).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    }
}
