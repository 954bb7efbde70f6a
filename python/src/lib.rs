//! `rmm._ffi`: a thin binding of librmm.so's C ABI (include/rmm/rmm.h).
//!
//! Every function here calls the C functions of the librmm.so loaded in the process (the one
//! that C and C++ code use too), so there is one resource registry per process. Resources
//! are `ResourceHandle`s owning one reference (released on drop or by `release()`); C
//! failures become the exceptions of `rmm._exceptions`; the GIL is released around
//! allocation, deallocation, copies and synchronizations.
//!
//! The C declarations (`sys`) are generated from rmm.h by bindgen at build time; the rest is
//! by concern: `errors` (C failures as exceptions, the call helpers), `handles` (resource
//! handles, allocations), `resources` (creating resources, their state, the per-device
//! registry), `statistics`, `callbacks` (resources that call Python), `devices`, `streams`,
//! `history` (memory history, snapshots, the debug log) and `torch` (PyTorch's allocator).

/// Adds the `#[pyfunction]`s named to the module `$m`.
macro_rules! add_functions {
    ($m:expr, $($f:ident),+ $(,)?) => {
        $($m.add_function(pyo3::wrap_pyfunction!($f, $m)?)?;)+
    };
}

/// `#[pyfunction]`s `name(mr) -> T` returning the one output of a quick C query about the
/// resource `mr`, `query(mr, &out)`.
macro_rules! queries {
    ($($(#[$attr:meta])* fn $name:ident($mr:ident) -> $t:ty = $query:ident;)+) => {$(
        #[pyfunction]
        $(#[$attr])*
        fn $name(py: Python<'_>, $mr: &ResourceHandle) -> PyResult<$t> {
            $mr.query(py, |r, o| unsafe { sys::$query(r, o) })
        }
    )+};
}

mod callbacks;
mod devices;
mod errors;
mod handles;
mod history;
mod resources;
mod statistics;
mod streams;
mod sys;
mod torch;

use pyo3::prelude::*;

pub use torch::{rmm_torch_allocate, rmm_torch_deallocate};

#[pymodule]
fn _ffi(m: &Bound<'_, PyModule>) -> PyResult<()> {
    handles::register(m)?;
    resources::register(m)?;
    statistics::register(m)?;
    callbacks::register(m)?;
    devices::register(m)?;
    streams::register(m)?;
    history::register(m)?;
    torch::register(m)?;
    m.add("STREAM_DEFAULT", 0usize)?;
    m.add("STREAM_LEGACY", 1usize)?;
    m.add("STREAM_PER_THREAD", 2usize)?;
    Ok(())
}
