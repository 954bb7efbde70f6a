//! `rmm._ffi`: a thin binding of librmm.so's C ABI (include/rmm/rmm.h).
//!
//! Every function here calls the C functions of the librmm.so loaded in the process (the one
//! that C and C++ code use too), so there is one resource registry per process. Resources
//! are `ResourceHandle`s owning one reference (released on drop or by `release()`); C
//! failures become the exceptions of `rmm._exceptions`; the GIL is released around
//! allocation, deallocation, copies and synchronizations.

use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering};

use pyo3::exceptions::{
    PyKeyboardInterrupt, PyMemoryError, PyRuntimeError, PySystemExit, PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::PyDict;

// ---- the C ABI ---------------------------------------------------------------------------
// Generated from include/rmm/rmm.h by bindgen at build time (python/build.rs, src/sys.rs).

mod sys;

use sys::*;

type Status = rmm_status_t;
type Res = rmm_resource_t;
type StreamT = rmm_stream_t;

const SUCCESS: Status = RMM_STATUS_SUCCESS;
const INVALID_ARGUMENT: Status = RMM_STATUS_INVALID_ARGUMENT;
const OUT_OF_MEMORY: Status = RMM_STATUS_OUT_OF_MEMORY;
const BAD_ALLOC: Status = RMM_STATUS_BAD_ALLOC;
const RUNTIME_ERROR: Status = RMM_STATUS_RUNTIME_ERROR;
const NO_RUNTIME: Status = RMM_STATUS_NO_RUNTIME;
const UNSUPPORTED: Status = RMM_STATUS_UNSUPPORTED;
const CALLBACK_FAILED: Status = RMM_STATUS_CALLBACK_FAILED;

type CallbackVtable = rmm_callback_vtable;
type PoolStats = rmm_pool_stats;
type Counters = rmm_statistics_counters;
type VmmPoolStats = rmm_vmm_pool_stats;

// ---- errors ------------------------------------------------------------------------------

/// A failure read right after the C call, on the thread that made it.
struct Failure {
    status: Status,
    message: String,
    /// The GPU runtime's error code behind the failure (0: not a runtime failure).
    runtime_code: i32,
}

thread_local! {
    /// The Python exception raised by a Python callback that the C call in progress made.
    static PENDING: RefCell<Option<PyErr>> = const { RefCell::new(None) };
}

fn cstr(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

fn check(status: Status) -> Result<(), Failure> {
    if status == SUCCESS {
        Ok(())
    } else {
        let detail = cstr(unsafe { rmm_last_error_message() });
        let text = cstr(unsafe { rmm_status_string(status) });
        let message = if detail.is_empty() { text } else { detail };
        let runtime_code = unsafe { rmm_last_error_runtime_code() };
        Err(Failure {
            status,
            message,
            runtime_code,
        })
    }
}

/// The exception a Python callback's `err` becomes for the caller, as in RMM's Cython
/// wrappers: a MemoryError or a RuntimeError as it is, anything else a RuntimeError (here
/// `CallbackError`, chained to it) with its message. KeyboardInterrupt and SystemExit pass
/// through, so that Ctrl-C still stops the program.
fn from_callback(py: Python<'_>, err: PyErr) -> PyErr {
    let value = err.value(py);
    if value.is_instance_of::<PyMemoryError>()
        || value.is_instance_of::<PyRuntimeError>()
        || value.is_instance_of::<PyKeyboardInterrupt>()
        || value.is_instance_of::<PySystemExit>()
    {
        return err;
    }
    let message = value
        .str()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    match py
        .import("rmm._exceptions")
        .and_then(|m| m.getattr("CallbackError"))
        .and_then(|cls| cls.call1((CALLBACK_FAILED, message)))
    {
        Ok(exc) => {
            let wrapped = PyErr::from_value(exc);
            wrapped.set_cause(py, Some(err));
            wrapped
        }
        Err(e) => e,
    }
}

fn to_pyerr(py: Python<'_>, f: Failure) -> PyErr {
    if let Some(err) = PENDING.with(|p| p.borrow_mut().take()) {
        return from_callback(py, err);
    }
    let class = match f.status {
        INVALID_ARGUMENT => "InvalidArgumentError",
        OUT_OF_MEMORY => "OutOfMemoryError",
        BAD_ALLOC => "BadAllocError",
        RUNTIME_ERROR => "CUDAError",
        NO_RUNTIME => "NoRuntimeError",
        UNSUPPORTED => "UnsupportedError",
        CALLBACK_FAILED => "CallbackError",
        _ => "RMMError",
    };
    match py
        .import("rmm._exceptions")
        .and_then(|m| m.getattr(class))
        .and_then(|cls| cls.call1((f.status, f.message.clone())))
        .and_then(|exc| {
            // The runtime's own code (cudaError_t), for rmm._cuda.gpu's CUDARuntimeError.
            exc.setattr("runtime_code", f.runtime_code)?;
            Ok(exc)
        }) {
        Ok(exc) => PyErr::from_value(exc),
        Err(e) => e,
    }
}

/// `check` for an allocation: a runtime call that failed while allocating is RMM's
/// `bad_alloc` (RMM_CUDA_TRY_ALLOC), which Python code catches as MemoryError, not a
/// cuda_error; the message keeps the runtime's error.
fn check_allocation(status: Status) -> Result<(), Failure> {
    check(status).map_err(|mut f| {
        if f.status == RUNTIME_ERROR {
            f.status = BAD_ALLOC;
        }
        f
    })
}

/// Runs a C call with the GIL released; failures become Python exceptions.
fn call<T: Send>(py: Python<'_>, f: impl FnOnce() -> Result<T, Failure> + Send) -> PyResult<T> {
    PENDING.with(|p| p.borrow_mut().take());
    py.allow_threads(f).map_err(|e| to_pyerr(py, e))
}

/// Runs a quick C call with the GIL held.
fn quick<T>(py: Python<'_>, f: impl FnOnce() -> Result<T, Failure>) -> PyResult<T> {
    f().map_err(|e| to_pyerr(py, e))
}

// ---- resource handles --------------------------------------------------------------------

/// One reference to a librmm.so resource (`rmm_resource_t`). Dropping the handle (or
/// `release()`) gives the reference back; a released handle refuses every use.
#[pyclass(module = "rmm._ffi", frozen)]
struct ResourceHandle {
    ptr: AtomicUsize,
}

impl ResourceHandle {
    fn from_raw(p: Res) -> Self {
        Self {
            ptr: AtomicUsize::new(p as usize),
        }
    }

    fn raw(&self) -> PyResult<usize> {
        match self.ptr.load(Ordering::Acquire) {
            0 => Err(PyValueError::new_err(
                "the memory resource handle has been released",
            )),
            p => Ok(p),
        }
    }
}

impl Drop for ResourceHandle {
    fn drop(&mut self) {
        let p = self.ptr.swap(0, Ordering::AcqRel);
        if p != 0 {
            unsafe { rmm_resource_release(p as Res) };
        }
    }
}

fn opt_raw(h: Option<&ResourceHandle>) -> PyResult<usize> {
    match h {
        Some(h) => h.raw(),
        None => Ok(0),
    }
}

#[pymethods]
impl ResourceHandle {
    /// The handle's address (identifies the resource across C, C++ and Python).
    #[getter]
    fn address(&self) -> PyResult<usize> {
        self.raw()
    }

    /// Whether `release()` was called.
    #[getter]
    fn released(&self) -> bool {
        self.ptr.load(Ordering::Acquire) == 0
    }

    /// RMM's C++ class name of the resource, e.g. "pool_memory_resource".
    fn name(&self, py: Python<'_>) -> PyResult<String> {
        let p = self.raw()?;
        quick(py, || {
            let mut n: *const c_char = std::ptr::null();
            check(unsafe { rmm_resource_name(p as Res, &mut n) })?;
            Ok(cstr(n))
        })
    }

    /// Whether memory of one resource may be freed by the other.
    fn is_equal(&self, py: Python<'_>, other: &ResourceHandle) -> PyResult<bool> {
        let (a, b) = (self.raw()?, other.raw()?);
        quick(py, || {
            let mut eq = false;
            check(unsafe { rmm_resource_is_equal(a as Res, b as Res, &mut eq) })?;
            Ok(eq)
        })
    }

    /// A new handle (a new reference) to the same resource.
    fn retain(&self, py: Python<'_>) -> PyResult<ResourceHandle> {
        let p = self.raw()?;
        quick(py, || check(unsafe { rmm_resource_retain(p as Res) }))?;
        Ok(ResourceHandle::from_raw(p as Res))
    }

    /// A new handle to the upstream of an adaptor or sub-allocator.
    fn upstream(&self, py: Python<'_>) -> PyResult<ResourceHandle> {
        let p = self.raw()?;
        new_handle(py, |out| unsafe {
            rmm_resource_get_upstream(p as Res, out)
        })
    }

    /// Gives this handle's reference back now (idempotent).
    fn release(&self) {
        let p = self.ptr.swap(0, Ordering::AcqRel);
        if p != 0 {
            unsafe { rmm_resource_release(p as Res) };
        }
    }

    fn __repr__(&self) -> String {
        match self.ptr.load(Ordering::Acquire) {
            0 => "<rmm._ffi.ResourceHandle released>".to_string(),
            p => {
                let mut n: *const c_char = std::ptr::null();
                let name = if unsafe { rmm_resource_name(p as Res, &mut n) } == SUCCESS {
                    cstr(n)
                } else {
                    "?".into()
                };
                format!("<rmm._ffi.ResourceHandle {name} at {p:#x}>")
            }
        }
    }
}

fn new_handle(
    py: Python<'_>,
    f: impl FnOnce(&mut Res) -> Status + Send,
) -> PyResult<ResourceHandle> {
    let p = call(py, move || {
        let mut out: Res = std::ptr::null_mut();
        check(f(&mut out))?;
        Ok(out as usize)
    })?;
    Ok(ResourceHandle::from_raw(p as Res))
}

// ---- allocation --------------------------------------------------------------------------

/// Allocates `size` bytes from `mr` on `stream`; returns the pointer (0 for 0 bytes).
#[pyfunction]
#[pyo3(signature = (mr, size, stream=0))]
fn allocate(py: Python<'_>, mr: &ResourceHandle, size: usize, stream: usize) -> PyResult<usize> {
    let r = mr.raw()?;
    call(py, move || {
        let mut p: *mut c_void = std::ptr::null_mut();
        check_allocation(unsafe { rmm_allocate_async(r as Res, size, stream as StreamT, &mut p) })?;
        Ok(p as usize)
    })
}

/// Frees `ptr` (of `size` bytes) to `mr` on `stream`.
#[pyfunction]
#[pyo3(signature = (mr, ptr, size, stream=0))]
fn deallocate(
    py: Python<'_>,
    mr: &ResourceHandle,
    ptr: usize,
    size: usize,
    stream: usize,
) -> PyResult<()> {
    let r = mr.raw()?;
    call(py, move || {
        check(unsafe {
            rmm_deallocate_async(r as Res, ptr as *mut c_void, size, stream as StreamT)
        })
    })
}

/// Memory owned by Python: allocated from a resource (whose reference it keeps) and given
/// back to it when this object goes.
#[pyclass(module = "rmm._ffi", frozen)]
struct Allocation {
    mr: usize,
    ptr: AtomicUsize,
    size: usize,
    stream: usize,
}

#[pymethods]
impl Allocation {
    #[new]
    #[pyo3(signature = (mr, size, stream=0))]
    fn new(py: Python<'_>, mr: &ResourceHandle, size: usize, stream: usize) -> PyResult<Self> {
        let r = mr.raw()?;
        // Zero bytes: no call to the resource (as rmm::device_buffer); the C ABI's
        // deallocate of NULL is a no-op, so a counted zero-byte allocation would never
        // be uncounted by a statistics adaptor.
        let p = call(py, move || {
            let mut p: *mut c_void = std::ptr::null_mut();
            if size == 0 {
                return Ok(0);
            }
            check_allocation(unsafe {
                rmm_allocate_async(r as Res, size, stream as StreamT, &mut p)
            })?;
            Ok(p as usize)
        })?;
        unsafe { rmm_resource_retain(r as Res) };
        Ok(Self {
            mr: r,
            ptr: AtomicUsize::new(p),
            size,
            stream,
        })
    }

    #[getter]
    fn ptr(&self) -> usize {
        self.ptr.load(Ordering::Acquire)
    }

    #[getter]
    fn size(&self) -> usize {
        self.size
    }

    #[getter]
    fn stream(&self) -> usize {
        self.stream
    }

    /// Frees the memory now (idempotent).
    fn free(&self, py: Python<'_>) -> PyResult<()> {
        let p = self.ptr.swap(0, Ordering::AcqRel);
        if p == 0 {
            return Ok(());
        }
        let (r, size, stream) = (self.mr, self.size, self.stream);
        call(py, move || {
            check(unsafe {
                rmm_deallocate_async(r as Res, p as *mut c_void, size, stream as StreamT)
            })
        })
    }
}

impl Drop for Allocation {
    /// Frees without the GIL, as `free()` does: a resource's lock may be held by a thread
    /// that is waiting for the GIL inside a Python callback.
    fn drop(&mut self) {
        let p = self.ptr.swap(0, Ordering::AcqRel);
        let (r, size, stream) = (self.mr, self.size, self.stream);
        let release = move || {
            // SAFETY: `p` (when nonzero) was allocated from `r` with `size` on `stream` and is
            // freed once (the swap above); `r` is this object's own reference.
            unsafe {
                if p != 0 {
                    rmm_deallocate_async(r as Res, p as *mut c_void, size, stream as StreamT);
                }
                rmm_resource_release(r as Res);
            }
        };
        // SAFETY: Python objects of this class are dropped by their tp_dealloc, which runs
        // with the GIL held.
        let py = unsafe { Python::assume_gil_acquired() };
        py.allow_threads(release);
    }
}

// ---- resources ---------------------------------------------------------------------------

#[pyfunction]
fn cuda_create(py: Python<'_>) -> PyResult<ResourceHandle> {
    new_handle(py, |o| unsafe { rmm_cuda_create(o) })
}

#[pyfunction]
fn managed_create(py: Python<'_>) -> PyResult<ResourceHandle> {
    new_handle(py, |o| unsafe { rmm_managed_create(o) })
}

#[pyfunction]
fn system_create(py: Python<'_>) -> PyResult<ResourceHandle> {
    new_handle(py, |o| unsafe { rmm_system_create(o) })
}

#[pyfunction]
fn sam_headroom_create(py: Python<'_>, headroom: usize) -> PyResult<ResourceHandle> {
    new_handle(py, move |o| unsafe { rmm_sam_headroom_create(headroom, o) })
}

#[pyfunction]
#[pyo3(signature = (initial_pool_size=None, release_threshold=None, handle_type=0))]
fn async_create(
    py: Python<'_>,
    initial_pool_size: Option<usize>,
    release_threshold: Option<usize>,
    handle_type: i32,
) -> PyResult<ResourceHandle> {
    new_handle(py, move |o| {
        let i = initial_pool_size
            .as_ref()
            .map_or(std::ptr::null(), |v| v as *const usize);
        let r = release_threshold
            .as_ref()
            .map_or(std::ptr::null(), |v| v as *const usize);
        unsafe { rmm_async_create(i, r, handle_type, o) }
    })
}

/// A `cuda_async_view_memory_resource` over the stream-ordered pool `pool_handle` (an
/// address), which the caller keeps alive.
#[pyfunction]
fn async_view_create(py: Python<'_>, pool_handle: usize) -> PyResult<ResourceHandle> {
    new_handle(py, move |o| unsafe {
        rmm_async_view_create(pool_handle as *mut c_void, o)
    })
}

#[pyfunction]
fn async_managed_create(py: Python<'_>) -> PyResult<ResourceHandle> {
    new_handle(py, |o| unsafe { rmm_async_managed_create(o) })
}

#[pyfunction]
fn pinned_host_create(py: Python<'_>) -> PyResult<ResourceHandle> {
    new_handle(py, |o| unsafe { rmm_pinned_host_create(o) })
}

/// The address of `device`'s default stream-ordered pool (`cudaDeviceGetDefaultMemPool`).
#[pyfunction]
fn device_default_mem_pool(py: Python<'_>, device: i32) -> PyResult<usize> {
    call(py, move || {
        let mut h: *mut c_void = std::ptr::null_mut();
        check(unsafe { rmm_device_default_mem_pool(device, &mut h) })?;
        Ok(h as usize)
    })
}

/// The address of the stream-ordered pool an async resource allocates from.
#[pyfunction]
fn async_pool_handle(py: Python<'_>, mr: &ResourceHandle) -> PyResult<usize> {
    let r = mr.raw()?;
    call(py, move || {
        let mut h: *mut c_void = std::ptr::null_mut();
        check(unsafe { rmm_async_pool_handle(r as Res, &mut h) })?;
        Ok(h as usize)
    })
}

#[pyfunction]
fn pool_create(
    py: Python<'_>,
    upstream: &ResourceHandle,
    initial_pool_size: usize,
    maximum_pool_size: usize,
) -> PyResult<ResourceHandle> {
    let u = upstream.raw()?;
    new_handle(py, move |o| unsafe {
        rmm_pool_create(u as Res, initial_pool_size, maximum_pool_size, o)
    })
}

/// The pool's statistics as a dict.
#[pyfunction]
fn pool_stats<'py>(py: Python<'py>, pool: &ResourceHandle) -> PyResult<Bound<'py, PyDict>> {
    let p = pool.raw()?;
    let s = quick(py, || {
        let mut s = PoolStats::default();
        check(unsafe { rmm_pool_get_stats(p as Res, &mut s) })?;
        Ok(s)
    })?;
    let d = PyDict::new(py);
    d.set_item("pool_size", s.pool_size)?;
    d.set_item("maximum_pool_size", s.maximum_pool_size)?;
    d.set_item("bytes_free", s.bytes_free)?;
    d.set_item("free_block_count", s.free_block_count)?;
    d.set_item("largest_free_block", s.largest_free_block)?;
    d.set_item("fragmentation", s.fragmentation)?;
    Ok(d)
}

#[pyfunction]
fn pool_release(py: Python<'_>, pool: &ResourceHandle) -> PyResult<usize> {
    let p = pool.raw()?;
    call(py, move || {
        let mut n = 0usize;
        check(unsafe { rmm_pool_release(p as Res, &mut n) })?;
        Ok(n)
    })
}

/// A `vmm_pool_memory_resource` on the current device: a pool in one reserved range of
/// virtual memory. Zero sizes (and `release_threshold=None`) take librmm.so's defaults: grow
/// on demand, no maximum but the reservation, twice the device's memory reserved, the
/// device's recommended granularity, no release threshold.
#[pyfunction]
#[pyo3(signature = (
    initial_pool_size=0,
    maximum_pool_size=0,
    reserved_size=0,
    granularity=0,
    release_threshold=None,
    peer_devices=None
))]
fn vmm_pool_create(
    py: Python<'_>,
    initial_pool_size: usize,
    maximum_pool_size: usize,
    reserved_size: usize,
    granularity: usize,
    release_threshold: Option<usize>,
    peer_devices: Option<Vec<i32>>,
) -> PyResult<ResourceHandle> {
    let peer_devices = peer_devices.unwrap_or_default();
    new_handle(py, move |o| {
        let mut options = rmm_vmm_pool_options::default();
        // SAFETY: `options` is a valid, writable rmm_vmm_pool_options.
        let status = unsafe { rmm_vmm_pool_options_init(&mut options) };
        if status != SUCCESS {
            return status;
        }
        options.initial_pool_size = initial_pool_size;
        options.maximum_pool_size = maximum_pool_size;
        options.reserved_size = reserved_size;
        options.granularity = granularity;
        if let Some(t) = release_threshold {
            options.release_threshold = t;
        }
        if !peer_devices.is_empty() {
            options.peer_devices = peer_devices.as_ptr();
            options.peer_device_count = peer_devices.len();
        }
        // SAFETY: `options` (and `peer_devices`, which it points into) live across the call.
        unsafe { rmm_vmm_pool_create(&options, o) }
    })
}

/// The statistics of a `vmm_pool_memory_resource` as a dict.
#[pyfunction]
fn vmm_pool_stats<'py>(py: Python<'py>, pool: &ResourceHandle) -> PyResult<Bound<'py, PyDict>> {
    let p = pool.raw()?;
    let s = quick(py, || {
        let mut s = VmmPoolStats::default();
        // SAFETY: `s` is a valid, writable rmm_vmm_pool_stats.
        check(unsafe { rmm_vmm_pool_get_stats(p as Res, &mut s) })?;
        Ok(s)
    })?;
    let d = PyDict::new(py);
    d.set_item("pool_size", s.pool_size)?;
    d.set_item("maximum_pool_size", s.maximum_pool_size)?;
    d.set_item("reserved_size", s.reserved_size)?;
    d.set_item("granularity", s.granularity)?;
    d.set_item("bytes_free", s.bytes_free)?;
    d.set_item("free_block_count", s.free_block_count)?;
    d.set_item("largest_free_block", s.largest_free_block)?;
    d.set_item("fragmentation", s.fragmentation)?;
    Ok(d)
}

/// Unmaps every whole free granule of a `vmm_pool_memory_resource`; returns the bytes.
#[pyfunction]
fn vmm_pool_release(py: Python<'_>, pool: &ResourceHandle) -> PyResult<usize> {
    let p = pool.raw()?;
    call(py, move || {
        let mut n = 0usize;
        // SAFETY: `n` is a valid, writable size_t.
        check(unsafe { rmm_vmm_pool_release(p as Res, &mut n) })?;
        Ok(n)
    })
}

#[pyfunction]
fn arena_create(
    py: Python<'_>,
    upstream: &ResourceHandle,
    arena_size: usize,
    dump_log_on_failure: bool,
) -> PyResult<ResourceHandle> {
    let u = upstream.raw()?;
    new_handle(py, move |o| unsafe {
        rmm_arena_create(u as Res, arena_size, dump_log_on_failure, o)
    })
}

/// (arena_size, bytes_free) of an arena resource.
#[pyfunction]
fn arena_sizes(py: Python<'_>, arena: &ResourceHandle) -> PyResult<(usize, usize)> {
    let p = arena.raw()?;
    quick(py, || {
        let (mut a, mut f) = (0usize, 0usize);
        check(unsafe { rmm_arena_get_sizes(p as Res, &mut a, &mut f) })?;
        Ok((a, f))
    })
}

#[pyfunction]
fn fixed_size_create(
    py: Python<'_>,
    upstream: &ResourceHandle,
    block_size: usize,
    blocks_to_preallocate: usize,
) -> PyResult<ResourceHandle> {
    let u = upstream.raw()?;
    new_handle(py, move |o| unsafe {
        rmm_fixed_size_create(u as Res, block_size, blocks_to_preallocate, o)
    })
}

#[pyfunction]
fn fixed_size_block_size(py: Python<'_>, mr: &ResourceHandle) -> PyResult<usize> {
    let p = mr.raw()?;
    quick(py, || {
        let mut b = 0usize;
        check(unsafe { rmm_fixed_size_get_block_size(p as Res, &mut b) })?;
        Ok(b)
    })
}

#[pyfunction]
fn binning_create(
    py: Python<'_>,
    upstream: &ResourceHandle,
    min_size_exponent: i32,
    max_size_exponent: i32,
) -> PyResult<ResourceHandle> {
    let u = upstream.raw()?;
    new_handle(py, move |o| unsafe {
        rmm_binning_create(u as Res, min_size_exponent, max_size_exponent, o)
    })
}

#[pyfunction]
#[pyo3(signature = (binning, allocation_size, bin_resource=None))]
fn binning_add_bin(
    py: Python<'_>,
    binning: &ResourceHandle,
    allocation_size: usize,
    bin_resource: Option<&ResourceHandle>,
) -> PyResult<()> {
    let b = binning.raw()?;
    let r = opt_raw(bin_resource)?;
    call(py, move || {
        check(unsafe { rmm_binning_add_bin(b as Res, allocation_size, r as Res) })
    })
}

#[pyfunction]
#[pyo3(signature = (upstream, allocation_limit, alignment=256))]
fn limiting_create(
    py: Python<'_>,
    upstream: &ResourceHandle,
    allocation_limit: usize,
    alignment: usize,
) -> PyResult<ResourceHandle> {
    let u = upstream.raw()?;
    new_handle(py, move |o| unsafe {
        rmm_limiting_adaptor_create(u as Res, allocation_limit, alignment, o)
    })
}

#[pyfunction]
fn limiting_allocated_bytes(py: Python<'_>, mr: &ResourceHandle) -> PyResult<usize> {
    let p = mr.raw()?;
    quick(py, || {
        let mut b = 0usize;
        check(unsafe { rmm_limiting_adaptor_get_allocated_bytes(p as Res, &mut b) })?;
        Ok(b)
    })
}

#[pyfunction]
fn limiting_allocation_limit(py: Python<'_>, mr: &ResourceHandle) -> PyResult<usize> {
    let p = mr.raw()?;
    quick(py, || {
        let mut b = 0usize;
        check(unsafe { rmm_limiting_adaptor_get_allocation_limit(p as Res, &mut b) })?;
        Ok(b)
    })
}

#[pyfunction]
fn statistics_create(py: Python<'_>, upstream: &ResourceHandle) -> PyResult<ResourceHandle> {
    let u = upstream.raw()?;
    new_handle(py, move |o| unsafe {
        rmm_statistics_adaptor_create(u as Res, o)
    })
}

type CounterTuple = (i64, i64, i64, i64, i64, i64);

/// (current_bytes, current_count, peak_bytes, peak_count, total_bytes, total_count)
fn counter_tuple(c: Counters) -> CounterTuple {
    (
        c.bytes.value,
        c.allocations.value,
        c.bytes.peak,
        c.allocations.peak,
        c.bytes.total,
        c.allocations.total,
    )
}

#[pyfunction]
fn statistics_counters(py: Python<'_>, mr: &ResourceHandle) -> PyResult<CounterTuple> {
    let p = mr.raw()?;
    quick(py, || {
        let mut c = Counters::default();
        check(unsafe { rmm_statistics_adaptor_get_counters(p as Res, &mut c) })?;
        Ok(counter_tuple(c))
    })
}

#[pyfunction]
fn statistics_push(py: Python<'_>, mr: &ResourceHandle) -> PyResult<CounterTuple> {
    let p = mr.raw()?;
    quick(py, || {
        let mut c = Counters::default();
        check(unsafe { rmm_statistics_adaptor_push_counters(p as Res, &mut c) })?;
        Ok(counter_tuple(c))
    })
}

#[pyfunction]
fn statistics_pop(py: Python<'_>, mr: &ResourceHandle) -> PyResult<CounterTuple> {
    let p = mr.raw()?;
    quick(py, || {
        let mut c = Counters::default();
        check(unsafe { rmm_statistics_adaptor_pop_counters(p as Res, &mut c) })?;
        Ok(counter_tuple(c))
    })
}

#[pyfunction]
#[pyo3(signature = (upstream, capture_stacks=false))]
fn tracking_create(
    py: Python<'_>,
    upstream: &ResourceHandle,
    capture_stacks: bool,
) -> PyResult<ResourceHandle> {
    let u = upstream.raw()?;
    new_handle(py, move |o| unsafe {
        rmm_tracking_adaptor_create(u as Res, capture_stacks, o)
    })
}

#[pyfunction]
fn tracking_allocated_bytes(py: Python<'_>, mr: &ResourceHandle) -> PyResult<usize> {
    let p = mr.raw()?;
    quick(py, || {
        let mut b = 0usize;
        check(unsafe { rmm_tracking_adaptor_get_allocated_bytes(p as Res, &mut b) })?;
        Ok(b)
    })
}

#[pyfunction]
fn tracking_outstanding_count(py: Python<'_>, mr: &ResourceHandle) -> PyResult<usize> {
    let p = mr.raw()?;
    quick(py, || {
        let mut b = 0usize;
        check(unsafe { rmm_tracking_adaptor_get_outstanding_count(p as Res, &mut b) })?;
        Ok(b)
    })
}

#[pyfunction]
fn tracking_outstanding_string(py: Python<'_>, mr: &ResourceHandle) -> PyResult<String> {
    let p = mr.raw()?;
    quick(py, || loop {
        let mut needed = 0usize;
        check(unsafe {
            rmm_tracking_adaptor_outstanding_allocations_string(
                p as Res,
                std::ptr::null_mut(),
                0,
                &mut needed,
            )
        })?;
        let mut buf = vec![0u8; needed.max(1)];
        let mut again = 0usize;
        check(unsafe {
            rmm_tracking_adaptor_outstanding_allocations_string(
                p as Res,
                buf.as_mut_ptr() as *mut c_char,
                buf.len(),
                &mut again,
            )
        })?;
        if again <= buf.len() {
            return Ok(cstr(buf.as_ptr() as *const c_char));
        }
    })
}

#[pyfunction]
fn tracking_log_outstanding(py: Python<'_>, mr: &ResourceHandle) -> PyResult<()> {
    let p = mr.raw()?;
    quick(py, || {
        check(unsafe { rmm_tracking_adaptor_log_outstanding_allocations(p as Res) })
    })
}

#[pyfunction]
#[pyo3(signature = (upstream, filename, auto_flush=false))]
fn logging_create(
    py: Python<'_>,
    upstream: &ResourceHandle,
    filename: &str,
    auto_flush: bool,
) -> PyResult<ResourceHandle> {
    let u = upstream.raw()?;
    let name = CString::new(filename)
        .map_err(|_| PyValueError::new_err("log file name contains a NUL character"))?;
    new_handle(py, move |o| unsafe {
        rmm_logging_create(u as Res, name.as_ptr(), auto_flush as c_int, o)
    })
}

#[pyfunction]
fn logging_flush(py: Python<'_>, mr: &ResourceHandle) -> PyResult<()> {
    let p = mr.raw()?;
    call(py, move || check(unsafe { rmm_logging_flush(p as Res) }))
}

#[pyfunction]
fn prefetch_create(py: Python<'_>, upstream: &ResourceHandle) -> PyResult<ResourceHandle> {
    let u = upstream.raw()?;
    new_handle(py, move |o| unsafe {
        rmm_prefetch_adaptor_create(u as Res, o)
    })
}

// ---- Python callbacks --------------------------------------------------------------------

struct Callbacks {
    allocate: PyObject,
    deallocate: PyObject,
}

fn interpreter_alive() -> bool {
    unsafe { pyo3::ffi::Py_IsInitialized() != 0 }
}

fn fail_with(py: Python<'_>, err: PyErr) -> u32 {
    let msg = CString::new(format!("Python callback raised {}", err.value(py)))
        .unwrap_or_else(|_| CString::new("Python callback raised").unwrap());
    unsafe { rmm_callback_set_error_message(msg.as_ptr()) };
    PENDING.with(|p| *p.borrow_mut() = Some(err));
    CALLBACK_FAILED
}

extern "C" fn cb_allocate(
    ctx: *mut c_void,
    bytes: usize,
    s: StreamT,
    out: *mut *mut c_void,
) -> u32 {
    if !interpreter_alive() {
        return CALLBACK_FAILED;
    }
    let cbs = unsafe { &*(ctx as *const Callbacks) };
    Python::with_gil(|py| {
        let r = cbs.allocate.call1(py, (bytes, s as usize)).and_then(|v| {
            v.extract::<usize>(py).map_err(|_| {
                PyTypeError::new_err("the allocate callback must return the pointer as an int")
            })
        });
        match r {
            Ok(p) => {
                if p == 0 && bytes != 0 {
                    let msg =
                        CString::new("the allocate callback returned a null pointer").unwrap();
                    unsafe { rmm_callback_set_error_message(msg.as_ptr()) };
                    return BAD_ALLOC;
                }
                unsafe { *out = p as *mut c_void };
                SUCCESS
            }
            // A MemoryError is the resource running out: reported as such, a
            // failure-callback adaptor above retries it (RMM 26.06's own tests rely on it).
            Err(e) if e.is_instance_of::<PyMemoryError>(py) => {
                fail_with(py, e);
                OUT_OF_MEMORY
            }
            Err(e) => fail_with(py, e),
        }
    })
}

extern "C" fn cb_deallocate(ctx: *mut c_void, ptr: *mut c_void, bytes: usize, s: StreamT) -> u32 {
    if !interpreter_alive() {
        return SUCCESS;
    }
    let cbs = unsafe { &*(ctx as *const Callbacks) };
    Python::with_gil(|py| {
        if let Err(e) = cbs.deallocate.call1(py, (ptr as usize, bytes, s as usize)) {
            e.write_unraisable(py, None);
        }
        SUCCESS
    })
}

extern "C" fn cb_destroy(ctx: *mut c_void) {
    let cbs = unsafe { Box::from_raw(ctx as *mut Callbacks) };
    if interpreter_alive() {
        Python::with_gil(|_py| drop(cbs));
    } else {
        std::mem::forget(cbs);
    }
}

/// A resource whose allocate(size, stream) and deallocate(ptr, size, stream) are Python
/// callables (stream as an int handle); an exception raised by allocate reaches the caller.
#[pyfunction]
fn callback_create(
    py: Python<'_>,
    allocate: PyObject,
    deallocate: PyObject,
) -> PyResult<ResourceHandle> {
    if !allocate.bind(py).is_callable() || !deallocate.bind(py).is_callable() {
        return Err(PyTypeError::new_err(
            "allocate_func and deallocate_func must be callable",
        ));
    }
    let ctx = Box::into_raw(Box::new(Callbacks {
        allocate,
        deallocate,
    })) as usize;
    let vtable = CallbackVtable {
        allocate: Some(cb_allocate),
        deallocate: Some(cb_deallocate),
        destroy: Some(cb_destroy),
    };
    quick(py, || {
        let mut out: Res = std::ptr::null_mut();
        check(unsafe { rmm_callback_create_with_vtable(&vtable, ctx as *mut c_void, &mut out) })?;
        Ok(ResourceHandle::from_raw(out))
    })
}

extern "C" fn cb_failure(bytes: usize, arg: *mut c_void) -> bool {
    if !interpreter_alive() {
        return false;
    }
    let f = unsafe { &*(arg as *const PyObject) };
    Python::with_gil(
        |py| match f.call1(py, (bytes,)).and_then(|v| v.is_truthy(py)) {
            Ok(b) => b,
            Err(e) => {
                // No retry; the allocation's caller gets the exception (as in RMM).
                PENDING.with(|p| *p.borrow_mut() = Some(e));
                false
            }
        },
    )
}

/// A failure-callback adaptor calling `callback(nbytes) -> bool`. The callable is kept by
/// the returned capsule-like `FailureCallbackKeeper`, which must outlive the adaptor.
#[pyclass(module = "rmm._ffi", frozen)]
struct FailureCallbackKeeper {
    callback: Box<PyObject>,
}

#[pyfunction]
fn failure_callback_create(
    py: Python<'_>,
    upstream: &ResourceHandle,
    callback: PyObject,
) -> PyResult<(ResourceHandle, FailureCallbackKeeper)> {
    if !callback.bind(py).is_callable() {
        return Err(PyTypeError::new_err("callback must be callable"));
    }
    let u = upstream.raw()?;
    let keeper = FailureCallbackKeeper {
        callback: Box::new(callback),
    };
    let arg = &*keeper.callback as *const PyObject as usize;
    let h = quick(py, || {
        let mut out: Res = std::ptr::null_mut();
        check(unsafe {
            rmm_failure_callback_adaptor_create(
                u as Res,
                Some(cb_failure),
                arg as *mut c_void,
                &mut out,
            )
        })?;
        Ok(ResourceHandle::from_raw(out))
    })?;
    Ok((h, keeper))
}

// ---- the per-device registry ---------------------------------------------------------------

#[pyfunction]
fn get_current_device_resource(py: Python<'_>) -> PyResult<ResourceHandle> {
    new_handle(py, |o| unsafe { rmm_get_current_device_resource(o) })
}

/// Sets the current device's resource (None: the initial one); returns the previous one.
#[pyfunction]
#[pyo3(signature = (mr=None))]
fn set_current_device_resource(
    py: Python<'_>,
    mr: Option<&ResourceHandle>,
) -> PyResult<ResourceHandle> {
    let r = opt_raw(mr)?;
    new_handle(py, move |o| unsafe {
        rmm_set_current_device_resource(r as Res, o)
    })
}

#[pyfunction]
fn get_per_device_resource(py: Python<'_>, device: i32) -> PyResult<ResourceHandle> {
    new_handle(py, move |o| unsafe {
        rmm_get_per_device_resource(device, o)
    })
}

#[pyfunction]
#[pyo3(signature = (device, mr=None))]
fn set_per_device_resource(
    py: Python<'_>,
    device: i32,
    mr: Option<&ResourceHandle>,
) -> PyResult<ResourceHandle> {
    let r = opt_raw(mr)?;
    new_handle(py, move |o| unsafe {
        rmm_set_per_device_resource(device, r as Res, o)
    })
}

// ---- devices, streams, copies --------------------------------------------------------------

#[pyfunction]
fn runtime_name(py: Python<'_>) -> PyResult<String> {
    call(py, || {
        let mut n: *const c_char = std::ptr::null();
        check(unsafe { rmm_runtime_name(&mut n) })?;
        Ok(cstr(n))
    })
}

#[pyfunction]
fn runtime_description(py: Python<'_>) -> PyResult<String> {
    call(py, || {
        let mut n: *const c_char = std::ptr::null();
        check(unsafe { rmm_runtime_description(&mut n) })?;
        Ok(cstr(n))
    })
}

#[pyfunction]
fn get_device_count(py: Python<'_>) -> PyResult<i32> {
    call(py, || {
        let mut n = 0;
        check(unsafe { rmm_get_device_count(&mut n) })?;
        Ok(n)
    })
}

#[pyfunction]
fn get_current_device(py: Python<'_>) -> PyResult<i32> {
    call(py, || {
        let mut n = 0;
        check(unsafe { rmm_get_current_device(&mut n) })?;
        Ok(n)
    })
}

#[pyfunction]
fn set_current_device(py: Python<'_>, device: i32) -> PyResult<()> {
    call(py, move || check(unsafe { rmm_set_current_device(device) }))
}

#[pyfunction]
fn device_synchronize(py: Python<'_>) -> PyResult<()> {
    call(py, || check(unsafe { rmm_device_synchronize() }))
}

/// (free, total) bytes of the current device.
#[pyfunction]
fn available_device_memory(py: Python<'_>) -> PyResult<(usize, usize)> {
    call(py, || {
        let (mut f, mut t) = (0usize, 0usize);
        check(unsafe { rmm_available_device_memory(&mut f, &mut t) })?;
        Ok((f, t))
    })
}

#[pyfunction]
fn percent_of_free_device_memory(py: Python<'_>, percent: i32) -> PyResult<usize> {
    call(py, move || {
        let mut b = 0usize;
        check(unsafe { rmm_percent_of_free_device_memory(percent, &mut b) })?;
        Ok(b)
    })
}

#[pyfunction]
#[pyo3(signature = (flags=0))]
fn stream_create(py: Python<'_>, flags: u32) -> PyResult<usize> {
    call(py, move || {
        let mut s: StreamT = std::ptr::null_mut();
        check(unsafe { rmm_stream_create(flags, &mut s) })?;
        Ok(s as usize)
    })
}

#[pyfunction]
fn stream_destroy(py: Python<'_>, stream: usize) -> PyResult<()> {
    call(py, move || {
        check(unsafe { rmm_stream_destroy(stream as StreamT) })
    })
}

#[pyfunction]
fn stream_synchronize(py: Python<'_>, stream: usize) -> PyResult<()> {
    call(py, move || {
        check(unsafe { rmm_stream_synchronize(stream as StreamT) })
    })
}

#[pyfunction]
fn stream_query(py: Python<'_>, stream: usize) -> PyResult<bool> {
    call(py, move || {
        let mut done = false;
        check(unsafe { rmm_stream_query(stream as StreamT, &mut done) })?;
        Ok(done)
    })
}

/// Copies `size` bytes from `src` to `dst` (host or device addresses) on `stream`, then
/// waits for the stream when `synchronize`.
#[pyfunction]
#[pyo3(signature = (dst, src, size, stream=0, synchronize=true))]
fn memcpy(
    py: Python<'_>,
    dst: usize,
    src: usize,
    size: usize,
    stream: usize,
    synchronize: bool,
) -> PyResult<()> {
    if size == 0 {
        return Ok(());
    }
    call(py, move || {
        check(unsafe {
            rmm_memcpy_async(
                dst as *mut c_void,
                src as *const c_void,
                size,
                stream as StreamT,
            )
        })?;
        if synchronize {
            check(unsafe { rmm_stream_synchronize(stream as StreamT) })?;
        }
        Ok(())
    })
}

#[pyfunction]
#[pyo3(signature = (dst, value, size, stream=0, synchronize=true))]
fn memset(
    py: Python<'_>,
    dst: usize,
    value: i32,
    size: usize,
    stream: usize,
    synchronize: bool,
) -> PyResult<()> {
    if size == 0 {
        return Ok(());
    }
    call(py, move || {
        check(unsafe { rmm_memset_async(dst as *mut c_void, value, size, stream as StreamT) })?;
        if synchronize {
            check(unsafe { rmm_stream_synchronize(stream as StreamT) })?;
        }
        Ok(())
    })
}

/// Copies `size` bytes at host address `src` into a new `bytes` (after waiting for `stream`).
#[pyfunction]
#[pyo3(signature = (src, size, stream=0))]
fn read_bytes(py: Python<'_>, src: usize, size: usize, stream: usize) -> PyResult<PyObject> {
    let mut buf = vec![0u8; size];
    let dst = buf.as_mut_ptr() as usize;
    if size > 0 {
        call(py, move || {
            check(unsafe {
                rmm_memcpy_async(
                    dst as *mut c_void,
                    src as *const c_void,
                    size,
                    stream as StreamT,
                )
            })?;
            check(unsafe { rmm_stream_synchronize(stream as StreamT) })
        })?;
    }
    Ok(pyo3::types::PyBytes::new(py, &buf).into_any().unbind())
}

// ---- debug log -----------------------------------------------------------------------------

#[pyfunction]
fn set_debug_log_level(py: Python<'_>, level: i32) -> PyResult<()> {
    quick(py, || check(unsafe { rmm_set_debug_log_level(level) }))
}

#[pyfunction]
fn get_debug_log_level(py: Python<'_>) -> PyResult<i32> {
    quick(py, || {
        let mut l = 0;
        check(unsafe { rmm_get_debug_log_level(&mut l) })?;
        Ok(l)
    })
}

#[pyfunction]
fn debug_log(py: Python<'_>, level: i32, message: &str) -> PyResult<()> {
    let m = CString::new(message).map_err(|_| PyValueError::new_err("message contains NUL"))?;
    quick(py, || check(unsafe { rmm_debug_log(level, m.as_ptr()) }))
}

#[pyfunction]
fn debug_log_flush(py: Python<'_>) -> PyResult<()> {
    quick(py, || check(unsafe { rmm_debug_log_flush() }))
}

// ---- identity, prefetch, versions, device attributes ---------------------------------------

/// A stable identity of the resource behind `mr`: equal for every handle of one resource
/// (from C, C++ or Python), different for distinct live resources.
#[pyfunction]
fn resource_id(py: Python<'_>, mr: &ResourceHandle) -> PyResult<u64> {
    let r = mr.raw()?;
    quick(py, || {
        let mut id = 0u64;
        check(unsafe { rmm_resource_id(r as Res, &mut id) })?;
        Ok(id)
    })
}

/// Prefetches `size` bytes at `ptr` to `device` (-1: the host) on `stream`; a no-op for
/// memory that is not managed.
#[pyfunction]
#[pyo3(signature = (ptr, size, device, stream=0))]
fn prefetch(py: Python<'_>, ptr: usize, size: usize, device: i32, stream: usize) -> PyResult<()> {
    call(py, move || {
        check(unsafe { rmm_prefetch(ptr as *const c_void, size, device, stream as StreamT) })
    })
}

/// The runtime's version (CUDA: 1000 * major + 10 * minor; the host emulation: 13000).
#[pyfunction]
fn runtime_get_version(py: Python<'_>) -> PyResult<i32> {
    call(py, || {
        let mut v = 0;
        check(unsafe { rmm_runtime_get_version(&mut v) })?;
        Ok(v)
    })
}

/// The newest runtime version the driver supports (0 without a driver).
#[pyfunction]
fn driver_get_version(py: Python<'_>) -> PyResult<i32> {
    call(py, || {
        let mut v = 0;
        check(unsafe { rmm_driver_get_version(&mut v) })?;
        Ok(v)
    })
}

/// The attribute of `device` that CUDA numbers `attr` (cudaDeviceAttr), on any runtime.
#[pyfunction]
fn device_get_attribute(py: Python<'_>, attr: i32, device: i32) -> PyResult<i32> {
    call(py, move || {
        let mut v = 0;
        check(unsafe { rmm_device_get_attribute(&mut v, attr, device) })?;
        Ok(v)
    })
}

/// The name of `device` (cudaDeviceProp::name), on any runtime.
#[pyfunction]
fn device_get_name(py: Python<'_>, device: i32) -> PyResult<String> {
    call(py, move || {
        let mut buf = [0 as c_char; 256];
        // SAFETY: `buf` is writable for its length; the name is NUL-terminated within it.
        check(unsafe { rmm_device_get_name(buf.as_mut_ptr(), buf.len(), device) })?;
        // SAFETY: NUL-terminated by rmm_device_get_name on success.
        let name = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) };
        Ok(name.to_string_lossy().into_owned())
    })
}

/// The path of the librmm.so that this extension calls (the one loaded in the process).
#[pyfunction]
fn library_path() -> PyResult<String> {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let addr = rmm_resource_retain as *const c_void;
    if unsafe { libc::dladdr(addr, &mut info) } == 0 || info.dli_fname.is_null() {
        return Err(PyValueError::new_err("cannot locate librmm.so"));
    }
    Ok(cstr(info.dli_fname))
}

// ---- memory history and snapshots ----------------------------------------------------------

/// Starts recording allocation events (restarting forgets the earlier ones): at most
/// `max_entries` kept, the oldest dropped first; with `stacks`, each event keeps its native
/// host stack.
#[pyfunction]
#[pyo3(signature = (max_entries=100_000, stacks=false))]
fn memory_history_enable(py: Python<'_>, max_entries: usize, stacks: bool) -> PyResult<()> {
    if max_entries == 0 {
        return Err(PyValueError::new_err(
            "max_entries must be at least 1 (the number of events kept)",
        ));
    }
    quick(py, || {
        check(unsafe { rmm_memory_history_enable(max_entries, i32::from(stacks)) })
    })
}

/// Stops recording and forgets the recorded events.
#[pyfunction]
fn memory_history_disable(py: Python<'_>) -> PyResult<()> {
    quick(py, || check(unsafe { rmm_memory_history_disable() }))
}

/// Whether allocation events are being recorded.
#[pyfunction]
fn memory_history_is_enabled(py: Python<'_>) -> PyResult<bool> {
    quick(py, || {
        let mut on = 0i32;
        check(unsafe { rmm_memory_history_is_enabled(&mut on) })?;
        Ok(on != 0)
    })
}

/// Writes a memory snapshot (JSON) to the file `path`, replacing it.
#[pyfunction]
fn snapshot_write(py: Python<'_>, path: &str) -> PyResult<()> {
    let p = CString::new(path).map_err(|_| PyValueError::new_err("path contains NUL"))?;
    // Stack symbols are resolved here: the GIL is released while the file is written.
    let addr = p.as_ptr() as usize;
    call(py, move || {
        check(unsafe { rmm_snapshot_write(addr as *const c_char) })
    })
}

// ---- PyTorch's pluggable allocator ---------------------------------------------------------

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
fn torch_resource(device: c_int) -> Res {
    let mut r: Res = std::ptr::null_mut();
    if unsafe { rmm_get_per_device_resource(device, &mut r) } != SUCCESS {
        return std::ptr::null_mut();
    }
    r
}

/// PyTorch's pluggable-allocator `alloc` (`torch.cuda.memory.CUDAPluggableAllocator(path,
/// "rmm_torch_allocate", "rmm_torch_deallocate")`): `size` bytes from the per-device resource
/// of `device`, in stream order on `stream` (a `cudaStream_t`, passed through as the C ABI's
/// stream). Returns null on failure (negative size, no resource, out of memory); the reason
/// is `rmm_last_error_message()` on this thread. Zero bytes give null without reaching the
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
    let r = torch_resource(device);
    if r.is_null() {
        return std::ptr::null_mut();
    }
    let mut ptr: *mut c_void = std::ptr::null_mut();
    let status = unsafe { rmm_allocate_async(r, size as usize, stream, &mut ptr) };
    unsafe { rmm_resource_release(r) };
    if status != SUCCESS {
        if status == OUT_OF_MEMORY || status == BAD_ALLOC {
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
    let r = torch_resource(device);
    if r.is_null() {
        return;
    }
    let status = unsafe { rmm_deallocate_async(r, ptr, size as usize, stream) };
    unsafe { rmm_resource_release(r) };
    if status == SUCCESS {
        if let Some(c) = torch_counters(device) {
            c.freed(size as usize);
        }
    }
}

#[pymodule]
fn _ffi(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ResourceHandle>()?;
    m.add_class::<Allocation>()?;
    m.add_class::<FailureCallbackKeeper>()?;
    m.add_function(wrap_pyfunction!(allocate, m)?)?;
    m.add_function(wrap_pyfunction!(deallocate, m)?)?;
    m.add_function(wrap_pyfunction!(cuda_create, m)?)?;
    m.add_function(wrap_pyfunction!(managed_create, m)?)?;
    m.add_function(wrap_pyfunction!(system_create, m)?)?;
    m.add_function(wrap_pyfunction!(sam_headroom_create, m)?)?;
    m.add_function(wrap_pyfunction!(async_create, m)?)?;
    m.add_function(wrap_pyfunction!(pool_create, m)?)?;
    m.add_function(wrap_pyfunction!(async_view_create, m)?)?;
    m.add_function(wrap_pyfunction!(async_managed_create, m)?)?;
    m.add_function(wrap_pyfunction!(pinned_host_create, m)?)?;
    m.add_function(wrap_pyfunction!(device_default_mem_pool, m)?)?;
    m.add_function(wrap_pyfunction!(async_pool_handle, m)?)?;
    m.add_function(wrap_pyfunction!(pool_stats, m)?)?;
    m.add_function(wrap_pyfunction!(pool_release, m)?)?;
    m.add_function(wrap_pyfunction!(vmm_pool_create, m)?)?;
    m.add_function(wrap_pyfunction!(vmm_pool_stats, m)?)?;
    m.add_function(wrap_pyfunction!(vmm_pool_release, m)?)?;
    m.add_function(wrap_pyfunction!(arena_create, m)?)?;
    m.add_function(wrap_pyfunction!(arena_sizes, m)?)?;
    m.add_function(wrap_pyfunction!(fixed_size_create, m)?)?;
    m.add_function(wrap_pyfunction!(fixed_size_block_size, m)?)?;
    m.add_function(wrap_pyfunction!(binning_create, m)?)?;
    m.add_function(wrap_pyfunction!(binning_add_bin, m)?)?;
    m.add_function(wrap_pyfunction!(limiting_create, m)?)?;
    m.add_function(wrap_pyfunction!(limiting_allocated_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(limiting_allocation_limit, m)?)?;
    m.add_function(wrap_pyfunction!(statistics_create, m)?)?;
    m.add_function(wrap_pyfunction!(statistics_counters, m)?)?;
    m.add_function(wrap_pyfunction!(statistics_push, m)?)?;
    m.add_function(wrap_pyfunction!(statistics_pop, m)?)?;
    m.add_function(wrap_pyfunction!(tracking_create, m)?)?;
    m.add_function(wrap_pyfunction!(tracking_allocated_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(tracking_outstanding_count, m)?)?;
    m.add_function(wrap_pyfunction!(tracking_outstanding_string, m)?)?;
    m.add_function(wrap_pyfunction!(tracking_log_outstanding, m)?)?;
    m.add_function(wrap_pyfunction!(logging_create, m)?)?;
    m.add_function(wrap_pyfunction!(logging_flush, m)?)?;
    m.add_function(wrap_pyfunction!(prefetch_create, m)?)?;
    m.add_function(wrap_pyfunction!(callback_create, m)?)?;
    m.add_function(wrap_pyfunction!(failure_callback_create, m)?)?;
    m.add_function(wrap_pyfunction!(get_current_device_resource, m)?)?;
    m.add_function(wrap_pyfunction!(set_current_device_resource, m)?)?;
    m.add_function(wrap_pyfunction!(get_per_device_resource, m)?)?;
    m.add_function(wrap_pyfunction!(set_per_device_resource, m)?)?;
    m.add_function(wrap_pyfunction!(runtime_name, m)?)?;
    m.add_function(wrap_pyfunction!(runtime_description, m)?)?;
    m.add_function(wrap_pyfunction!(get_device_count, m)?)?;
    m.add_function(wrap_pyfunction!(get_current_device, m)?)?;
    m.add_function(wrap_pyfunction!(set_current_device, m)?)?;
    m.add_function(wrap_pyfunction!(device_synchronize, m)?)?;
    m.add_function(wrap_pyfunction!(available_device_memory, m)?)?;
    m.add_function(wrap_pyfunction!(percent_of_free_device_memory, m)?)?;
    m.add_function(wrap_pyfunction!(stream_create, m)?)?;
    m.add_function(wrap_pyfunction!(stream_destroy, m)?)?;
    m.add_function(wrap_pyfunction!(stream_synchronize, m)?)?;
    m.add_function(wrap_pyfunction!(stream_query, m)?)?;
    m.add_function(wrap_pyfunction!(memcpy, m)?)?;
    m.add_function(wrap_pyfunction!(memset, m)?)?;
    m.add_function(wrap_pyfunction!(read_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(set_debug_log_level, m)?)?;
    m.add_function(wrap_pyfunction!(get_debug_log_level, m)?)?;
    m.add_function(wrap_pyfunction!(debug_log, m)?)?;
    m.add_function(wrap_pyfunction!(debug_log_flush, m)?)?;
    m.add_function(wrap_pyfunction!(library_path, m)?)?;
    m.add_function(wrap_pyfunction!(resource_id, m)?)?;
    m.add_function(wrap_pyfunction!(prefetch, m)?)?;
    m.add_function(wrap_pyfunction!(runtime_get_version, m)?)?;
    m.add_function(wrap_pyfunction!(driver_get_version, m)?)?;
    m.add_function(wrap_pyfunction!(device_get_attribute, m)?)?;
    m.add_function(wrap_pyfunction!(device_get_name, m)?)?;
    m.add_function(wrap_pyfunction!(memory_history_enable, m)?)?;
    m.add_function(wrap_pyfunction!(memory_history_disable, m)?)?;
    m.add_function(wrap_pyfunction!(memory_history_is_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(snapshot_write, m)?)?;
    m.add_function(wrap_pyfunction!(torch_stats, m)?)?;
    m.add_function(wrap_pyfunction!(torch_reset_peak, m)?)?;
    m.add_function(wrap_pyfunction!(torch_reset_accumulated, m)?)?;
    m.add("STREAM_DEFAULT", 0usize)?;
    m.add("STREAM_LEGACY", 1usize)?;
    m.add("STREAM_PER_THREAD", 2usize)?;
    Ok(())
}
