//! PyTorch's pluggable allocator: `rmm_torch_allocate` / `rmm_torch_deallocate`, C functions
//! this extension exports for `torch.cuda.memory.CUDAPluggableAllocator`, and the
//! `memory_stats()` counters they keep per device.

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::out;
use crate::sys::{self, rmm_resource_t};

/// Devices whose `rmm_torch_*` traffic is counted (higher device numbers are not counted).
const TORCH_DEVICES: usize = 64;

/// What `rmm_torch_allocate` / `rmm_torch_deallocate` did on one device: PyTorch's
/// `memory_stats()` counters (`allocated_bytes.all.*`, `allocation.all.*`, `num_ooms`).
struct TorchCounters {
    bytes_current: AtomicI64,
    bytes_peak: AtomicI64,
    bytes_allocated: AtomicU64,
    bytes_freed: AtomicU64,
    count_current: AtomicI64,
    count_peak: AtomicI64,
    count_allocated: AtomicU64,
    count_freed: AtomicU64,
    ooms: AtomicU64,
}

#[allow(clippy::declare_interior_mutable_const)]
const TORCH_ZERO: TorchCounters = TorchCounters {
    bytes_current: AtomicI64::new(0),
    bytes_peak: AtomicI64::new(0),
    bytes_allocated: AtomicU64::new(0),
    bytes_freed: AtomicU64::new(0),
    count_current: AtomicI64::new(0),
    count_peak: AtomicI64::new(0),
    count_allocated: AtomicU64::new(0),
    count_freed: AtomicU64::new(0),
    ooms: AtomicU64::new(0),
};

static TORCH_STATS: [TorchCounters; TORCH_DEVICES] = [TORCH_ZERO; TORCH_DEVICES];

/// The multiple `rmm_torch_allocate` rounds sizes up to before asking the resource (and
/// `rmm_torch_deallocate` before returning them): 1, or 256 for the RMM API generations
/// whose allocator went through a resource reference aligning to `CUDA_ALLOCATION_ALIGNMENT`
/// (RMM 25.02 and 25.10; `rmm._generation`).
static TORCH_ALIGNMENT: AtomicUsize = AtomicUsize::new(1);

/// Whether `rmm_torch_allocate` has allocated: the alignment may no longer change.
static TORCH_USED: AtomicBool = AtomicBool::new(false);

/// `size` rounded up to a multiple of the current alignment (None on overflow).
fn torch_bytes(size: usize) -> Option<usize> {
    let a = TORCH_ALIGNMENT.load(Ordering::Relaxed);
    size.checked_next_multiple_of(a)
}

/// Sets the multiple `rmm_torch_allocate` rounds sizes up to (a power of two; 1 for the
/// exact size). `RuntimeError` once the allocator has allocated and `alignment` differs:
/// memory must go back in the size it came in.
#[pyfunction]
fn torch_set_alignment(alignment: usize) -> PyResult<()> {
    if !alignment.is_power_of_two() {
        return Err(PyValueError::new_err(format!(
            "alignment must be a power of two, not {alignment}"
        )));
    }
    let current = TORCH_ALIGNMENT.load(Ordering::Relaxed);
    if alignment != current && TORCH_USED.load(Ordering::Relaxed) {
        return Err(PyRuntimeError::new_err(format!(
            "the PyTorch allocator (rmm_torch_allocator) has allocated already, rounding \
             sizes to multiples of {current}: it keeps doing so"
        )));
    }
    TORCH_ALIGNMENT.store(alignment, Ordering::Relaxed);
    Ok(())
}

/// The multiple `rmm_torch_allocate` rounds sizes up to.
#[pyfunction]
fn torch_alignment() -> usize {
    TORCH_ALIGNMENT.load(Ordering::Relaxed)
}

fn torch_counters(device: c_int) -> Option<&'static TorchCounters> {
    usize::try_from(device)
        .ok()
        .and_then(|d| TORCH_STATS.get(d))
}

impl TorchCounters {
    fn allocated(&self, size: usize) {
        let b = self.bytes_current.fetch_add(size as i64, Ordering::Relaxed) + size as i64;
        self.bytes_peak.fetch_max(b, Ordering::Relaxed);
        self.bytes_allocated
            .fetch_add(size as u64, Ordering::Relaxed);
        let n = self.count_current.fetch_add(1, Ordering::Relaxed) + 1;
        self.count_peak.fetch_max(n, Ordering::Relaxed);
        self.count_allocated.fetch_add(1, Ordering::Relaxed);
    }

    fn freed(&self, size: usize) {
        self.bytes_current.fetch_sub(size as i64, Ordering::Relaxed);
        self.bytes_freed.fetch_add(size as u64, Ordering::Relaxed);
        self.count_current.fetch_sub(1, Ordering::Relaxed);
        self.count_freed.fetch_add(1, Ordering::Relaxed);
    }
}

fn torch_device(device: i32) -> PyResult<&'static TorchCounters> {
    torch_counters(device).ok_or_else(|| {
        PyValueError::new_err(format!(
            "device {device}: the torch allocator counts devices 0 to {}",
            TORCH_DEVICES - 1
        ))
    })
}

/// The counters of `rmm_torch_allocate` / `rmm_torch_deallocate` on `device`: a dict of
/// bytes_current, bytes_peak, bytes_allocated, bytes_freed, count_current, count_peak,
/// count_allocated, count_freed and ooms.
#[pyfunction]
fn torch_stats<'py>(py: Python<'py>, device: i32) -> PyResult<Bound<'py, PyDict>> {
    let c = torch_device(device)?;
    let d = PyDict::new(py);
    let r = Ordering::Relaxed;
    d.set_item("bytes_current", c.bytes_current.load(r))?;
    d.set_item("bytes_peak", c.bytes_peak.load(r))?;
    d.set_item("bytes_allocated", c.bytes_allocated.load(r))?;
    d.set_item("bytes_freed", c.bytes_freed.load(r))?;
    d.set_item("count_current", c.count_current.load(r))?;
    d.set_item("count_peak", c.count_peak.load(r))?;
    d.set_item("count_allocated", c.count_allocated.load(r))?;
    d.set_item("count_freed", c.count_freed.load(r))?;
    d.set_item("ooms", c.ooms.load(r))?;
    Ok(d)
}

/// Sets the peaks of `device`'s torch counters to their current values.
#[pyfunction]
fn torch_reset_peak(device: i32) -> PyResult<()> {
    let c = torch_device(device)?;
    c.bytes_peak
        .store(c.bytes_current.load(Ordering::Relaxed), Ordering::Relaxed);
    c.count_peak
        .store(c.count_current.load(Ordering::Relaxed), Ordering::Relaxed);
    Ok(())
}

/// Zeroes the accumulated torch counters of `device` (allocated, freed, ooms).
#[pyfunction]
fn torch_reset_accumulated(device: i32) -> PyResult<()> {
    let c = torch_device(device)?;
    for a in [
        &c.bytes_allocated,
        &c.bytes_freed,
        &c.count_allocated,
        &c.count_freed,
        &c.ooms,
    ] {
        a.store(0, Ordering::Relaxed);
    }
    Ok(())
}

/// The per-device resource of `device` (a new reference), or null.
fn torch_resource(device: c_int) -> rmm_resource_t {
    out(|r| unsafe { sys::rmm_get_per_device_resource(device, r) }).unwrap_or(std::ptr::null_mut())
}

/// PyTorch's pluggable-allocator `alloc` (`torch.cuda.memory.CUDAPluggableAllocator(path,
/// "rmm_torch_allocate", "rmm_torch_deallocate")`): `size` bytes from the per-device resource
/// of `device`, in stream order on `stream` (a `cudaStream_t`, passed through as the C ABI's
/// stream), rounded up to the API generation's alignment (`torch_set_alignment`). Returns
/// null on failure (negative size, no resource, out of memory); the reason is
/// `rmm_last_error_message()` on this thread. Zero bytes give null without reaching the
/// resource. Successes are counted per device, and failures for lack of memory as `num_ooms`
/// (`rmm.allocators.torch.memory_stats()`).
///
/// # Safety
/// `stream` must be a valid CUDA stream of `device` (or a special stream handle), as
/// PyTorch passes.
#[no_mangle]
pub unsafe extern "C" fn rmm_torch_allocate(
    size: isize,
    device: c_int,
    stream: *mut c_void,
) -> *mut c_void {
    if size <= 0 {
        return std::ptr::null_mut(); // zero bytes: no call, as rmm::device_buffer
    }
    TORCH_USED.store(true, Ordering::Relaxed);
    let Some(bytes) = torch_bytes(size as usize) else {
        return std::ptr::null_mut();
    };
    let r = torch_resource(device);
    if r.is_null() {
        return std::ptr::null_mut();
    }
    let mut ptr: *mut c_void = std::ptr::null_mut();
    let status = unsafe { sys::rmm_allocate_async(r, bytes, stream, &mut ptr) };
    unsafe { sys::rmm_resource_release(r) };
    if status != sys::RMM_STATUS_SUCCESS {
        if status == sys::RMM_STATUS_OUT_OF_MEMORY || status == sys::RMM_STATUS_BAD_ALLOC {
            if let Some(c) = torch_counters(device) {
                c.ooms.fetch_add(1, Ordering::Relaxed);
            }
        }
        return std::ptr::null_mut();
    }
    if let Some(c) = torch_counters(device) {
        c.allocated(size as usize);
    }
    ptr
}

/// PyTorch's pluggable-allocator `free`: returns `ptr` (of `size` bytes, from
/// `rmm_torch_allocate` with the same `device`) to the per-device resource of `device`, in
/// stream order on `stream`. Null is a no-op. A successful free is counted per device.
///
/// # Safety
/// `ptr` must come from `rmm_torch_allocate` with this `size` and `device` and not be freed
/// yet; `stream` as for `rmm_torch_allocate`.
#[no_mangle]
pub unsafe extern "C" fn rmm_torch_deallocate(
    ptr: *mut c_void,
    size: isize,
    device: c_int,
    stream: *mut c_void,
) {
    if ptr.is_null() || size < 0 {
        return;
    }
    let Some(bytes) = torch_bytes(size as usize) else {
        return;
    };
    let r = torch_resource(device);
    if r.is_null() {
        return;
    }
    let status = unsafe { sys::rmm_deallocate_async(r, ptr, bytes, stream) };
    unsafe { sys::rmm_resource_release(r) };
    if status == sys::RMM_STATUS_SUCCESS {
        if let Some(c) = torch_counters(device) {
            c.freed(size as usize);
        }
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(
        m,
        torch_stats,
        torch_reset_peak,
        torch_reset_accumulated,
        torch_set_alignment,
        torch_alignment
    );
    Ok(())
}
