//! Resource handles (`ResourceHandle`, one reference to a librmm.so resource) and memory
//! allocated from them (`allocate`, `deallocate`, `Allocation`).

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::errors::{call, check, check_allocation, cstr, out, quick, Failure, Out};
use crate::sys::{self, rmm_resource_t, rmm_status_t, rmm_stream_t};

/// One reference to a librmm.so resource (`rmm_resource_t`). Dropping the handle (or
/// `release()`) gives the reference back; a released handle refuses every use.
#[pyclass(module = "rmm._ffi", frozen)]
pub(crate) struct ResourceHandle {
    ptr: AtomicUsize,
}

impl ResourceHandle {
    pub(crate) fn from_raw(p: rmm_resource_t) -> Self {
        Self {
            ptr: AtomicUsize::new(p as usize),
        }
    }

    /// The resource's address; a ValueError once released.
    pub(crate) fn raw(&self) -> PyResult<usize> {
        match self.ptr.load(Ordering::Acquire) {
            0 => Err(PyValueError::new_err(
                "the memory resource handle has been released",
            )),
            p => Ok(p),
        }
    }

    /// The one output of a quick C call about this resource (made with the GIL held).
    pub(crate) fn query<T: Out>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(rmm_resource_t, &mut T) -> rmm_status_t,
    ) -> PyResult<T> {
        let r = self.raw()? as rmm_resource_t;
        quick(py, || out(|o| f(r, o)))
    }

    /// The one output of a C call about this resource, made with the GIL released.
    pub(crate) fn call<T: Out + Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(rmm_resource_t, &mut T) -> rmm_status_t + Send,
    ) -> PyResult<T> {
        let r = self.raw()?;
        call(py, move || out(|o| f(r as rmm_resource_t, o)))
    }

    /// A new handle that a C call makes from this resource (an adaptor or sub-allocator over
    /// it, or its upstream), made with the GIL released.
    pub(crate) fn derive(
        &self,
        py: Python<'_>,
        f: impl FnOnce(rmm_resource_t, &mut rmm_resource_t) -> rmm_status_t + Send,
    ) -> PyResult<ResourceHandle> {
        let r = self.raw()?;
        new_handle(py, move |o| f(r as rmm_resource_t, o))
    }
}

impl Drop for ResourceHandle {
    fn drop(&mut self) {
        self.release();
    }
}

/// The address of `h`'s resource, or 0 (NULL) for None.
pub(crate) fn opt_raw(h: Option<&ResourceHandle>) -> PyResult<usize> {
    match h {
        Some(h) => h.raw(),
        None => Ok(0),
    }
}

/// A handle to the resource that `f` writes to its out-parameter (the C call is made with
/// the GIL released).
pub(crate) fn new_handle(
    py: Python<'_>,
    f: impl FnOnce(&mut rmm_resource_t) -> rmm_status_t + Send,
) -> PyResult<ResourceHandle> {
    let p = call(py, move || out(f).map(|p| p as usize))?;
    Ok(ResourceHandle::from_raw(p as rmm_resource_t))
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
        self.query(py, |r, n| unsafe { sys::rmm_resource_name(r, n) })
            .map(cstr)
    }

    /// Whether memory of one resource may be freed by the other.
    fn is_equal(&self, py: Python<'_>, other: &ResourceHandle) -> PyResult<bool> {
        let b = other.raw()? as rmm_resource_t;
        self.query(py, |a, eq| unsafe { sys::rmm_resource_is_equal(a, b, eq) })
    }

    /// A new handle (a new reference) to the same resource.
    fn retain(&self, py: Python<'_>) -> PyResult<ResourceHandle> {
        let p = self.raw()? as rmm_resource_t;
        quick(py, || check(unsafe { sys::rmm_resource_retain(p) }))?;
        Ok(ResourceHandle::from_raw(p))
    }

    /// A new handle to the upstream of an adaptor or sub-allocator.
    fn upstream(&self, py: Python<'_>) -> PyResult<ResourceHandle> {
        self.derive(py, |r, o| unsafe { sys::rmm_resource_get_upstream(r, o) })
    }

    /// Gives this handle's reference back now (idempotent).
    fn release(&self) {
        let p = self.ptr.swap(0, Ordering::AcqRel);
        if p != 0 {
            unsafe { sys::rmm_resource_release(p as rmm_resource_t) };
        }
    }

    fn __repr__(&self) -> String {
        match self.ptr.load(Ordering::Acquire) {
            0 => "<rmm._ffi.ResourceHandle released>".to_string(),
            p => {
                let name = out(|n| unsafe { sys::rmm_resource_name(p as rmm_resource_t, n) })
                    .map_or_else(|_| "?".into(), cstr);
                format!("<rmm._ffi.ResourceHandle {name} at {p:#x}>")
            }
        }
    }
}

/// A stable identity of the resource behind `mr`: equal for every handle of one resource
/// (from C, C++ or Python), different for distinct live resources.
#[pyfunction]
fn resource_id(py: Python<'_>, mr: &ResourceHandle) -> PyResult<u64> {
    mr.query(py, |r, id| unsafe { sys::rmm_resource_id(r, id) })
}

// ---- allocation --------------------------------------------------------------------------
// Addresses travel as integers, so that the C calls can run without the GIL.

/// `size` bytes from resource `r` on `stream`.
fn allocate_from(r: usize, size: usize, stream: usize) -> Result<usize, Failure> {
    let mut p: *mut c_void = std::ptr::null_mut();
    check_allocation(unsafe {
        sys::rmm_allocate_async(r as rmm_resource_t, size, stream as rmm_stream_t, &mut p)
    })?;
    Ok(p as usize)
}

/// Gives `ptr` (of `size` bytes) back to resource `r` on `stream`.
fn deallocate_to(r: usize, ptr: usize, size: usize, stream: usize) -> rmm_status_t {
    unsafe {
        sys::rmm_deallocate_async(
            r as rmm_resource_t,
            ptr as *mut c_void,
            size,
            stream as rmm_stream_t,
        )
    }
}

/// Allocates `size` bytes from `mr` on `stream`; returns the pointer (0 for 0 bytes).
#[pyfunction]
#[pyo3(signature = (mr, size, stream=0))]
fn allocate(py: Python<'_>, mr: &ResourceHandle, size: usize, stream: usize) -> PyResult<usize> {
    let r = mr.raw()?;
    call(py, move || allocate_from(r, size, stream))
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
    call(py, move || check(deallocate_to(r, ptr, size, stream)))
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
        let p = call(py, move || match size {
            0 => Ok(0),
            _ => allocate_from(r, size, stream),
        })?;
        unsafe { sys::rmm_resource_retain(r as rmm_resource_t) };
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
        call(py, move || check(deallocate_to(r, p, size, stream)))
    }
}

impl Drop for Allocation {
    /// Frees without the GIL, as `free()` does: a resource's lock may be held by a thread
    /// that is waiting for the GIL inside a Python callback.
    fn drop(&mut self) {
        let p = self.ptr.swap(0, Ordering::AcqRel);
        let (r, size, stream) = (self.mr, self.size, self.stream);
        let release = move || {
            // `p` (when nonzero) was allocated from `r` with `size` on `stream` and is freed
            // once (the swap above); `r` is this object's own reference.
            if p != 0 {
                deallocate_to(r, p, size, stream);
            }
            // SAFETY: `r` is the reference this object took in `new`.
            unsafe { sys::rmm_resource_release(r as rmm_resource_t) };
        };
        // SAFETY: Python objects of this class are dropped by their tp_dealloc, which runs
        // with the GIL held.
        let py = unsafe { Python::assume_gil_acquired() };
        py.allow_threads(release);
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ResourceHandle>()?;
    m.add_class::<Allocation>()?;
    add_functions!(m, allocate, deallocate, resource_id);
    Ok(())
}
