//! A minimal safe wrapper over `dlopen`/`dlsym`/`dlerror`, for loading GPU runtimes.
//!
//! Libraries are opened `RTLD_NOW | RTLD_LOCAL` (fail early on unresolved symbols, keep the
//! runtime's symbols out of the global namespace so an interposer's `cudaMalloc` cannot be
//! confused with the real one) and are never closed: GPU runtimes register exit handlers
//! and threads that crash if their code is unmapped, so the handle lives for the process.

use std::ffi::{c_void, CStr, CString};

/// An opened shared library, kept for the life of the process.
pub(crate) struct Library {
    handle: *mut c_void,
}

// SAFETY: a dlopen handle is a process-wide token; dlsym may be called with it from any
// thread (glibc serializes the loader internally), and it is never closed.
unsafe impl Send for Library {}
// SAFETY: see `Send`: every use of the handle is a read-only dlsym call.
unsafe impl Sync for Library {}

/// The calling thread's last `dlerror` message, or `fallback` when there is none.
fn last_error(fallback: &str) -> String {
    // SAFETY: dlerror takes no arguments; it returns null or a NUL-terminated string owned by
    // the loader that stays valid until the next dl* call on this thread, and we copy it now.
    let msg = unsafe { libc::dlerror() };
    if msg.is_null() {
        fallback.to_string()
    } else {
        // SAFETY: non-null, NUL-terminated (see above).
        unsafe { CStr::from_ptr(msg) }
            .to_string_lossy()
            .into_owned()
    }
}

impl Library {
    /// Opens the first of `names` that loads, returning it with the name that worked.
    ///
    /// On failure the error lists every name tried with the loader's reason, so a user sees
    /// at once whether the library is missing or present but unloadable.
    pub(crate) fn open_first(names: &[&'static str]) -> Result<(Library, &'static str), String> {
        let mut tried = Vec::with_capacity(names.len());
        for &name in names {
            let cname = CString::new(name).map_err(|_| format!("bad library name {name:?}"))?;
            // SAFETY: `cname` is a valid NUL-terminated string; dlopen has no other
            // preconditions. Running the library's initializers is the point of loading it.
            let handle = unsafe { libc::dlopen(cname.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
            if !handle.is_null() {
                return Ok((Library { handle }, name));
            }
            tried.push(format!("{name} ({})", last_error("unknown dlopen failure")));
        }
        Err(format!("could not load any of: {}", tried.join("; ")))
    }

    /// Looks up `name` and returns it as the function pointer type `T`.
    ///
    /// Returns `None` when the library does not export the symbol.
    ///
    /// # Safety
    /// `T` must be a function pointer type whose signature matches the C declaration of the
    /// symbol in this library version.
    pub(crate) unsafe fn symbol<T: Copy>(&self, name: &str) -> Option<T> {
        // Only pointer-sized types can be function pointers; refuse anything else loudly in
        // debug builds and safely (None) in release.
        if std::mem::size_of::<T>() != std::mem::size_of::<*mut c_void>() {
            debug_assert!(false, "Library::symbol used with a non-pointer type");
            return None;
        }
        let cname = CString::new(name).ok()?;
        // SAFETY: the handle came from a successful dlopen and is never closed; `cname` is
        // NUL-terminated.
        let ptr = unsafe { libc::dlsym(self.handle, cname.as_ptr()) };
        if ptr.is_null() {
            // Clear the pending dlerror so a later message is not stale.
            let _ = last_error("");
            return None;
        }
        // SAFETY: `T` is pointer-sized (checked above) and, by the caller's promise, a
        // function pointer type matching the symbol, so reinterpreting the address is sound.
        Some(unsafe { std::mem::transmute_copy::<*mut c_void, T>(&ptr) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_library_lists_names_and_reasons() {
        let err = Library::open_first(&["libdoes-not-exist-rmm.so.1", "libnope-rmm.so"])
            .err()
            .unwrap();
        assert!(err.contains("libdoes-not-exist-rmm.so.1 ("), "{err}");
        assert!(err.contains("libnope-rmm.so ("), "{err}");
    }

    #[test]
    fn finds_libc_symbol() {
        let (lib, name) = Library::open_first(&["libc.so.6"]).unwrap();
        assert_eq!(name, "libc.so.6");
        // SAFETY: getpid's C signature is `pid_t getpid(void)`.
        let getpid: Option<unsafe extern "C" fn() -> libc::pid_t> = unsafe { lib.symbol("getpid") };
        // SAFETY: getpid has no preconditions.
        assert_eq!(
            unsafe { getpid.unwrap()() },
            std::process::id() as libc::pid_t
        );
        // SAFETY: the type is irrelevant for a symbol that does not exist.
        let none: Option<unsafe extern "C" fn()> = unsafe { lib.symbol("no_such_symbol_rmm") };
        assert!(none.is_none());
    }
}
