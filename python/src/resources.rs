//! Creating resources (every kind and adaptor of librmm.so), reading the state of the
//! sub-allocators, and the per-device registry.

use std::ffi::{c_int, c_void};

use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{c_string, call, check, out};
use crate::handles::{new_handle, opt_raw, ResourceHandle};
use crate::sys::{self, rmm_resource_t};

/// `#[pyfunction]`s `name()` that create a resource with one C call.
macro_rules! plain_resources {
    ($($name:ident => $create:ident),+ $(,)?) => {$(
        #[pyfunction]
        fn $name(py: Python<'_>) -> PyResult<ResourceHandle> {
            new_handle(py, |o| unsafe { sys::$create(o) })
        }
    )+};
}

plain_resources! {
    cuda_create => rmm_cuda_create,
    managed_create => rmm_managed_create,
    system_create => rmm_system_create,
    async_managed_create => rmm_async_managed_create,
    pinned_host_create => rmm_pinned_host_create,
    get_current_device_resource => rmm_get_current_device_resource,
}

/// `#[pyfunction]`s `name(upstream, args...)` that create a resource over `upstream` with one
/// C call, `create(upstream, args..., &out)`.
macro_rules! over_upstream {
    ($($(#[$attr:meta])* fn $name:ident($($arg:ident: $ty:ty),*) => $create:ident;)+) => {$(
        #[pyfunction]
        $(#[$attr])*
        fn $name(
            py: Python<'_>,
            upstream: &ResourceHandle,
            $($arg: $ty),*
        ) -> PyResult<ResourceHandle> {
            upstream.derive(py, move |u, o| unsafe { sys::$create(u, $($arg,)* o) })
        }
    )+};
}

over_upstream! {
    fn pool_create(initial_pool_size: usize, maximum_pool_size: usize) => rmm_pool_create;
    fn arena_create(arena_size: usize, dump_log_on_failure: bool) => rmm_arena_create;
    fn fixed_size_create(block_size: usize, blocks_to_preallocate: usize) => rmm_fixed_size_create;
    fn binning_create(min_size_exponent: i32, max_size_exponent: i32) => rmm_binning_create;
    #[pyo3(signature = (upstream, allocation_limit, alignment=256))]
    fn limiting_create(allocation_limit: usize, alignment: usize) => rmm_limiting_adaptor_create;
    fn statistics_create() => rmm_statistics_adaptor_create;
    #[pyo3(signature = (upstream, capture_stacks=false))]
    fn tracking_create(capture_stacks: bool) => rmm_tracking_adaptor_create;
    fn prefetch_create() => rmm_prefetch_adaptor_create;
}

queries! {
    fn fixed_size_block_size(mr) -> usize = rmm_fixed_size_get_block_size;
    fn limiting_allocated_bytes(mr) -> usize = rmm_limiting_adaptor_get_allocated_bytes;
    fn limiting_allocation_limit(mr) -> usize = rmm_limiting_adaptor_get_allocation_limit;
}

/// A dict of the named fields of the struct `$s`, keyed by their names.
macro_rules! fields_dict {
    ($py:expr, $s:expr; $($field:ident),+ $(,)?) => {{
        let d = PyDict::new($py);
        $(d.set_item(stringify!($field), $s.$field)?;)+
        Ok(d)
    }};
}

#[pyfunction]
fn sam_headroom_create(py: Python<'_>, headroom: usize) -> PyResult<ResourceHandle> {
    new_handle(py, move |o| unsafe {
        sys::rmm_sam_headroom_create(headroom, o)
    })
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
        unsafe { sys::rmm_async_create(i, r, handle_type, o) }
    })
}

/// A `cuda_async_view_memory_resource` over the stream-ordered pool `pool_handle` (an
/// address), which the caller keeps alive.
#[pyfunction]
fn async_view_create(py: Python<'_>, pool_handle: usize) -> PyResult<ResourceHandle> {
    new_handle(py, move |o| unsafe {
        sys::rmm_async_view_create(pool_handle as *mut c_void, o)
    })
}

/// The address of `device`'s default stream-ordered pool (`cudaDeviceGetDefaultMemPool`).
#[pyfunction]
fn device_default_mem_pool(py: Python<'_>, device: i32) -> PyResult<usize> {
    call(py, move || {
        out(|h| unsafe { sys::rmm_device_default_mem_pool(device, h) }).map(|h| h as usize)
    })
}

/// The address of the stream-ordered pool an async resource allocates from.
#[pyfunction]
fn async_pool_handle(py: Python<'_>, mr: &ResourceHandle) -> PyResult<usize> {
    let r = mr.raw()?;
    call(py, move || {
        out(|h| unsafe { sys::rmm_async_pool_handle(r as rmm_resource_t, h) }).map(|h| h as usize)
    })
}

/// The pool's statistics as a dict.
#[pyfunction]
fn pool_stats<'py>(py: Python<'py>, pool: &ResourceHandle) -> PyResult<Bound<'py, PyDict>> {
    let s: sys::rmm_pool_stats = pool.query(py, |p, s| unsafe { sys::rmm_pool_get_stats(p, s) })?;
    fields_dict!(py, s; pool_size, maximum_pool_size, bytes_free, free_block_count,
        largest_free_block, fragmentation)
}

#[pyfunction]
fn pool_release(py: Python<'_>, pool: &ResourceHandle) -> PyResult<usize> {
    pool.call(py, |p, n| unsafe { sys::rmm_pool_release(p, n) })
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
        let mut options = sys::rmm_vmm_pool_options::default();
        // SAFETY: `options` is a valid, writable rmm_vmm_pool_options.
        let status = unsafe { sys::rmm_vmm_pool_options_init(&mut options) };
        if status != sys::RMM_STATUS_SUCCESS {
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
        unsafe { sys::rmm_vmm_pool_create(&options, o) }
    })
}

/// The statistics of a `vmm_pool_memory_resource` as a dict.
#[pyfunction]
fn vmm_pool_stats<'py>(py: Python<'py>, pool: &ResourceHandle) -> PyResult<Bound<'py, PyDict>> {
    // SAFETY: the out-parameter is a valid, writable rmm_vmm_pool_stats.
    let s: sys::rmm_vmm_pool_stats =
        pool.query(py, |p, s| unsafe { sys::rmm_vmm_pool_get_stats(p, s) })?;
    fields_dict!(py, s; pool_size, maximum_pool_size, reserved_size, granularity, bytes_free,
        free_block_count, largest_free_block, fragmentation)
}

/// Unmaps every whole free granule of a `vmm_pool_memory_resource`; returns the bytes.
#[pyfunction]
fn vmm_pool_release(py: Python<'_>, pool: &ResourceHandle) -> PyResult<usize> {
    pool.call(py, |p, n| unsafe { sys::rmm_vmm_pool_release(p, n) })
}

/// (arena_size, bytes_free) of an arena resource.
#[pyfunction]
fn arena_sizes(py: Python<'_>, arena: &ResourceHandle) -> PyResult<(usize, usize)> {
    let mut free = 0usize;
    let size = arena.query(py, |a, size| unsafe {
        sys::rmm_arena_get_sizes(a, size, &mut free)
    })?;
    Ok((size, free))
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
        check(unsafe {
            sys::rmm_binning_add_bin(b as rmm_resource_t, allocation_size, r as rmm_resource_t)
        })
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
    let name = c_string(filename, "log file name contains a NUL character")?;
    upstream.derive(py, move |u, o| unsafe {
        sys::rmm_logging_create(u, name.as_ptr(), auto_flush as c_int, o)
    })
}

#[pyfunction]
fn logging_flush(py: Python<'_>, mr: &ResourceHandle) -> PyResult<()> {
    let p = mr.raw()?;
    call(py, move || {
        check(unsafe { sys::rmm_logging_flush(p as rmm_resource_t) })
    })
}

// ---- the per-device registry ---------------------------------------------------------------

/// Sets the current device's resource (None: the initial one); returns the previous one.
#[pyfunction]
#[pyo3(signature = (mr=None))]
fn set_current_device_resource(
    py: Python<'_>,
    mr: Option<&ResourceHandle>,
) -> PyResult<ResourceHandle> {
    let r = opt_raw(mr)?;
    new_handle(py, move |o| unsafe {
        sys::rmm_set_current_device_resource(r as rmm_resource_t, o)
    })
}

#[pyfunction]
fn get_per_device_resource(py: Python<'_>, device: i32) -> PyResult<ResourceHandle> {
    new_handle(py, move |o| unsafe {
        sys::rmm_get_per_device_resource(device, o)
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
        sys::rmm_set_per_device_resource(device, r as rmm_resource_t, o)
    })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_functions!(
        m,
        cuda_create,
        managed_create,
        system_create,
        sam_headroom_create,
        async_create,
        async_view_create,
        async_managed_create,
        pinned_host_create,
        device_default_mem_pool,
        async_pool_handle,
        pool_create,
        pool_stats,
        pool_release,
        vmm_pool_create,
        vmm_pool_stats,
        vmm_pool_release,
        arena_create,
        arena_sizes,
        fixed_size_create,
        fixed_size_block_size,
        binning_create,
        binning_add_bin,
        limiting_create,
        limiting_allocated_bytes,
        limiting_allocation_limit,
        statistics_create,
        tracking_create,
        logging_create,
        logging_flush,
        prefetch_create,
        get_current_device_resource,
        set_current_device_resource,
        get_per_device_resource,
        set_per_device_resource,
    );
    Ok(())
}
