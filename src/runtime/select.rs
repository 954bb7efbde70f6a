//! Choosing the backend (`RMM_RUNTIME`) once per process, and the process-exit flag.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use super::{Runtime, RuntimeErrorKind};
use crate::error::{Error, Result};

/// The backend a user asked for with `RMM_RUNTIME`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RuntimeChoice {
    /// HIP if a HIP runtime with a device is present, else CUDA with a device.
    Auto,
    /// HIP only.
    Hip,
    /// CUDA only.
    Cuda,
    /// The host emulation.
    Host,
}

impl RuntimeChoice {
    /// Parses `RMM_RUNTIME` (unset or empty means `auto`).
    pub fn from_env() -> Result<Self> {
        match std::env::var("RMM_RUNTIME") {
            Err(std::env::VarError::NotPresent) => Ok(RuntimeChoice::Auto),
            Err(std::env::VarError::NotUnicode(v)) => Err(Error::invalid(format!(
                "RMM_RUNTIME={v:?} is not valid UTF-8; use auto, hip, cuda or host"
            ))),
            Ok(v) => Self::parse(&v),
        }
    }

    /// Parses one of `auto`, `hip`, `cuda`, `host` (case-insensitive).
    pub fn parse(value: &str) -> Result<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Ok(RuntimeChoice::Auto),
            "hip" => Ok(RuntimeChoice::Hip),
            "cuda" => Ok(RuntimeChoice::Cuda),
            "host" => Ok(RuntimeChoice::Host),
            _ => Err(Error::invalid(format!(
                "RMM_RUNTIME={value:?} is not a runtime; use auto, hip, cuda or host"
            ))),
        }
    }
}

static RUNTIME: OnceLock<Result<Box<dyn Runtime>>> = OnceLock::new();
static PRESELECTED: OnceLock<(RuntimeChoice, Option<&'static str>)> = OnceLock::new();

/// Fixes the backend (and optionally the exact library to open) before the first call to
/// [`runtime`], overriding `RMM_RUNTIME`. For the LD_PRELOAD interposer, which must use the
/// runtime the program called, from the library the program loaded; ordinary users never
/// call it. Returns false when the runtime was already chosen (or a choice was already
/// made), in which case nothing changes.
pub fn preselect(choice: RuntimeChoice, library: Option<&'static str>) -> bool {
    if RUNTIME.get().is_some() {
        return false;
    }
    PRESELECTED.set((choice, library)).is_ok()
}
static EXITING: AtomicBool = AtomicBool::new(false);

extern "C" fn mark_exiting() {
    EXITING.store(true, Ordering::SeqCst);
}

/// True once the process has started exiting (`exit()` or return from `main`).
///
/// After that, GPU runtimes may already be torn down, so resources leak their memory
/// instead of calling the runtime (the lesson of RMM's `process_is_exiting`).
pub fn process_is_exiting() -> bool {
    EXITING.load(Ordering::Relaxed)
}

/// Registers the `atexit` hook that sets [`process_is_exiting`] (once per process).
pub(crate) fn ensure_exit_flag() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        super::os::at_exit(mark_exiting);
    });
}

/// Registers the exit-flag hook once more for a C++ front end (RMM 26.06's
/// `rmm::detail::register_process_exit_hook`), at most once per process.
///
/// Exit hooks run in reverse order of registration, and after the destructors of statics
/// constructed before them: a front end calls this right after constructing its own statics,
/// so that their destructors see the flag set even when the runtime (and its hook) was
/// loaded earlier. Returns false when the hook could not be registered.
pub fn register_front_end_exit_hook() -> bool {
    static REGISTERED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *REGISTERED.get_or_init(|| super::os::at_exit(mark_exiting))
}

/// The process's runtime, chosen on first use from `RMM_RUNTIME`.
///
/// The choice (or the failure) is made once and kept: a process uses one backend.
pub fn runtime() -> Result<&'static dyn Runtime> {
    let chosen = RUNTIME.get_or_init(|| {
        let loaded = match PRESELECTED.get() {
            Some(&(choice, Some(library))) => load_library(choice, library),
            Some(&(choice, None)) => load(choice),
            None => RuntimeChoice::from_env().and_then(load),
        };
        // After the runtime's first calls, so that (exit hooks running last-registered
        // first) the flag is set before the runtime's own teardown hooks run.
        ensure_exit_flag();
        // RMM_MEMORY_HISTORY records from here on (and writes its snapshot at exit): the
        // recorder is a leaf below this layer. Here, after the runtime's first calls and the
        // exit flag's hook, so that the snapshot's exit hook runs before theirs.
        crate::history::recorder::init_from_env();
        // Every call through the trait is counted (crate::counters), whatever the backend,
        // once counting is on: from here with RMM_COUNTERS=1.
        if std::env::var_os("RMM_COUNTERS").is_some_and(|v| v == "1") {
            crate::counters::enable();
        }
        loaded.map(|rt| Box::new(super::counted::Counted(rt)) as Box<dyn Runtime>)
    });
    match chosen {
        Ok(rt) => Ok(rt.as_ref()),
        Err(e) => Err(e.clone()),
    }
}

fn load(choice: RuntimeChoice) -> Result<Box<dyn Runtime>> {
    const HOW: &str = "set RMM_RUNTIME=host to use the host emulation on a machine without a GPU";
    match choice {
        RuntimeChoice::Host => Ok(Box::new(super::host::HostRuntime::from_env()?)),
        RuntimeChoice::Hip => with_device(super::hip::load())
            .map_err(|e| Error::NoRuntime(format!("RMM_RUNTIME=hip: {e}; {HOW}"))),
        RuntimeChoice::Cuda => with_device(super::cuda::load())
            .map_err(|e| Error::NoRuntime(format!("RMM_RUNTIME=cuda: {e}; {HOW}"))),
        RuntimeChoice::Auto => {
            let hip = match with_device(super::hip::load()) {
                Ok(rt) => return Ok(rt),
                Err(e) => e,
            };
            let cuda = match with_device(super::cuda::load()) {
                Ok(rt) => return Ok(rt),
                Err(e) => e,
            };
            Err(Error::NoRuntime(format!(
                "RMM_RUNTIME=auto tried HIP ({hip}) and CUDA ({cuda}); {HOW}"
            )))
        }
    }
}

/// Loads `choice` from one named library (see [`preselect`]).
fn load_library(choice: RuntimeChoice, library: &'static str) -> Result<Box<dyn Runtime>> {
    let loaded = match choice {
        RuntimeChoice::Cuda => with_device(super::cuda::load_library(library)),
        RuntimeChoice::Hip => with_device(super::hip::load_library(library)),
        other => return load(other),
    };
    loaded.map_err(|e| Error::NoRuntime(format!("{library}: {e}")))
}

/// Keeps a loaded GPU runtime only if it reports at least one device.
fn with_device(
    loaded: std::result::Result<Box<dyn Runtime>, String>,
) -> std::result::Result<Box<dyn Runtime>, String> {
    let rt = loaded?;
    match rt.device_count() {
        Ok(n) if n > 0 => Ok(rt),
        Ok(_) => Err(format!("{} loaded but reports no device", rt.description())),
        Err(e) if e.kind == RuntimeErrorKind::NoDevice => Err(format!(
            "{} loaded but found no device ({}: {})",
            rt.description(),
            e.name,
            e.message
        )),
        Err(e) => Err(format!("{} loaded but failed: {e}", rt.description())),
    }
}
