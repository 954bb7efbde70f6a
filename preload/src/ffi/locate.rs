//! A CUDA runtime library for the engine when the program has none of its own: a program
//! on the static runtime (nvcc's default, RAPIDS's wheels) only loads `libcuda.so.1`, and
//! the engine's events, streams and pool upstream go through a shared `libcudart.so`.
//! The loader's search finds one where a CUDA toolkit is installed; in a pip environment
//! it sits in `site-packages/nvidia/cu13/lib` beside the other NVIDIA libraries the
//! process loaded (nvJitLink, nvrtc, cuBLAS), where the loader does not look.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::{Path, PathBuf};

/// The runtime libraries the engine can use, newest first.
const NAMES: [&str; 2] = ["libcudart.so.13", "libcudart.so.12"];

/// `None` when the loader finds a CUDA runtime by name (the engine's own search will), else
/// the path of one beside a library the process loaded.
pub(crate) fn cuda_runtime_beside_loaded_libraries() -> Option<String> {
    for name in NAMES {
        let c = CString::new(name).expect("no NUL in a library name");
        // SAFETY: a NUL-terminated name; RTLD_LAZY | RTLD_LOCAL loads the library (or
        // finds it loaded) without adding its symbols to the global scope.
        let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_LAZY | libc::RTLD_LOCAL) };
        if !h.is_null() {
            return None;
        }
    }
    let mut dirs: Vec<PathBuf> = Vec::new();
    // SAFETY: the callback only reads the entries dl_iterate_phdr passes it and pushes to
    // the Vec behind `data`, which outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(collect_dir), (&mut dirs as *mut Vec<PathBuf>).cast()) };
    dirs.iter()
        .flat_map(|d| NAMES.iter().map(move |n| d.join(n)))
        .find(|p| p.is_file())
        .map(|p| p.to_string_lossy().into_owned())
}

/// `dl_iterate_phdr`'s callback: the directory of each loaded object, once.
unsafe extern "C" fn collect_dir(
    info: *mut libc::dl_phdr_info,
    _size: usize,
    data: *mut c_void,
) -> c_int {
    // SAFETY: `data` is the Vec passed above; `info` is valid for this call.
    let (dirs, info) = unsafe { (&mut *data.cast::<Vec<PathBuf>>(), &*info) };
    if info.dlpi_name.is_null() {
        return 0;
    }
    // SAFETY: the loader's NUL-terminated name of a loaded object, read during the call.
    let name = unsafe { CStr::from_ptr(info.dlpi_name as *const c_char) };
    if let Some(dir) = Path::new(&*name.to_string_lossy()).parent() {
        if !dir.as_os_str().is_empty() && !dirs.iter().any(|d| d == dir) {
            dirs.push(dir.to_path_buf());
        }
    }
    0
}
