//! The direct path of `rmm_allocate_async` / `rmm_deallocate_async` for thin resources
//! (cuda, managed, and the cuda_async family): the runtime call itself, made from the
//! handle's entry, without the resource, counting layer and backend in between.
//!
//! Why: those layers are a chain of dependent loads (handle slot, entry, resource,
//! runtime wrapper, backend, function table), and the driver's own work between two calls
//! evicts them from the caches, so the C ABI made a thin resource measurably slower than
//! calling the runtime directly (`bench/thin_paths.sh`). On CUDA 12+ the entry points
//! are the driver's, which the runtime library calls after its own bookkeeping.
//!
//! The direct path only ever takes the success path. Anything else goes down the checked
//! path, which repeats the call through the resource and reports exactly what failed: a
//! zero size, a null pointer, counting on (so counts stay exact), process exit, or a
//! runtime call that returned an error (out of memory, a foreign pointer, ...). A failed
//! call changed nothing, so repeating it is safe.
//!
//! Two kinds of call never try the direct path, so that a program run under
//! compute-sanitizer (which reports every failed runtime or driver call) sees no failed
//! call of ours that the runtime library would not have made:
//! - a thread's first call: a thread the runtime library has not yet set up has no
//!   current context, and the driver's entry points would fail where the runtime's set
//!   the context up and succeed; the checked call does that set-up;
//! - requests over [`DIRECT_MAX_BYTES`], which cannot succeed (deliberate out-of-memory
//!   tests ask for 2^60 bytes): only the checked call reports them.

use std::cell::Cell;
use std::ffi::c_void;

use crate::mr::{DirectPath, ALLOCATION_ALIGNMENT, MEM_ATTACH_GLOBAL};
use crate::runtime::process_is_exiting;
use crate::watchers::{Watcher, WATCHERS};

/// Larger requests take the checked path: 128 TiB, more than any device has and the
/// whole user address space of x86-64 (4-level paging) and of CUDA's and HIP's devices.
pub(super) const DIRECT_MAX_BYTES: usize = 1 << 47;

thread_local! {
    /// Whether this thread made a call through the C ABI before (see the module docs).
    static SET_UP: Cell<bool> = const { Cell::new(false) };
}

/// Whether this thread may take the direct path; false (once) for its first call, which
/// the checked path then makes through the runtime library.
#[inline(always)]
fn thread_set_up() -> bool {
    SET_UP.with(|c| c.replace(true))
}

/// The raw stream handle for the direct calls of a pool path.
#[inline(always)]
fn raw_stream(stream: usize, legacy_stream: usize) -> *mut c_void {
    (if stream == 1 { legacy_stream } else { stream }) as *mut c_void
}

/// Frees `ptr` through `path` (see [`try_deallocate`]); the runtime's code.
///
/// # Safety
/// `ptr` must be an allocation of the resource `path` belongs to, not used after.
#[inline(always)]
unsafe fn free_with(path: DirectPath, ptr: *mut c_void, stream: usize) -> i32 {
    // SAFETY: the functions are the runtime's own entry points with these C signatures
    // (`runtime::DirectCalls`); the runtime validates pointer and stream.
    unsafe {
        match path {
            DirectPath::Malloc { free, .. } | DirectPath::Managed { free, .. } => free(ptr),
            DirectPath::Pool {
                free,
                legacy_stream,
                ..
            } => free(ptr, raw_stream(stream, legacy_stream)),
        }
    }
}

/// Allocates `bytes` on `stream` through `path` (the direct path of the handle's resource)
/// and writes the pointer to `out`. Returns false, having changed nothing, when the call must
/// take the checked path (module docs).
#[inline]
pub(super) fn try_allocate(
    path: DirectPath,
    bytes: usize,
    stream: usize,
    out: *mut *mut c_void,
) -> bool {
    if bytes == 0 || bytes > DIRECT_MAX_BYTES || out.is_null() || WATCHERS.on(Watcher::Counters) {
        return false;
    }
    if !thread_set_up() {
        return false;
    }
    let mut p: *mut c_void = std::ptr::null_mut();
    // SAFETY: as in `free_with`; `p` is a valid out-pointer.
    let code = unsafe {
        match path {
            DirectPath::Malloc { malloc, .. } => malloc(&mut p, bytes),
            DirectPath::Managed { malloc, .. } => malloc(&mut p, bytes, MEM_ATTACH_GLOBAL),
            DirectPath::Pool {
                malloc,
                pool,
                legacy_stream,
                ..
            } => malloc(
                &mut p,
                bytes,
                pool.0 as *mut c_void,
                raw_stream(stream, legacy_stream),
            ),
        }
    };
    if code != 0 {
        return false;
    }
    if p.is_null() || (p as usize) % ALLOCATION_ALIGNMENT != 0 {
        // Never seen from a runtime: give it back and let the checked path report it.
        if !p.is_null() {
            // SAFETY: `p` was just allocated through `path` and is not used after.
            unsafe { free_with(path, p, stream) };
        }
        return false;
    }
    // SAFETY: `out` is non-null (checked above) and valid for a write (the C contract).
    unsafe { out.write(p) };
    true
}

/// Frees `ptr` on `stream` through `path` (the direct path of the handle's resource).
/// Returns false, having changed nothing, when the call must take the checked path (module
/// docs).
#[inline]
pub(super) fn try_deallocate(path: DirectPath, ptr: *mut c_void, stream: usize) -> bool {
    if ptr.is_null() || WATCHERS.on(Watcher::Counters) || process_is_exiting() {
        return false;
    }
    if !thread_set_up() {
        return false;
    }
    // SAFETY: the caller hands `ptr` back to the resource it came from (C contract); a
    // pointer the runtime does not know fails the call, which changes nothing.
    unsafe { free_with(path, ptr, stream) == 0 }
}

#[cfg(test)]
mod tests {
    use std::alloc::{alloc, dealloc, Layout};
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;

    use parking_lot::Mutex;

    use super::*;
    use crate::error::Result;
    use crate::ffi::handle::RESOURCES;
    use crate::ffi::{rmm_allocate_async, rmm_deallocate_async, rmm_resource_release};
    use crate::ffi::{rmm_resource_t, rmm_status_t};
    use crate::mr::{DeviceMemoryResource, SharedResource};
    use crate::runtime::Stream;

    /// What the probe saw: direct and checked allocations and frees.
    static DIRECT_ALLOCS: AtomicUsize = AtomicUsize::new(0);
    static DIRECT_FREES: AtomicUsize = AtomicUsize::new(0);
    static CHECKED_ALLOCS: AtomicUsize = AtomicUsize::new(0);
    static CHECKED_FREES: AtomicUsize = AtomicUsize::new(0);
    /// Makes the probe's direct calls fail (as a runtime's out of memory would).
    static FAIL_DIRECT: AtomicBool = AtomicBool::new(false);
    /// Host memory handed out by the probe, by address.
    static LIVE: Mutex<Option<HashMap<usize, Layout>>> = Mutex::new(None);

    fn host_alloc(bytes: usize) -> *mut c_void {
        let layout = Layout::from_size_align(bytes, ALLOCATION_ALIGNMENT).unwrap();
        // SAFETY: `layout` has a non-zero size (callers never pass 0).
        let p = unsafe { alloc(layout) };
        LIVE.lock()
            .get_or_insert_with(HashMap::new)
            .insert(p as usize, layout);
        p.cast()
    }

    fn host_free(p: *mut c_void) -> bool {
        match LIVE
            .lock()
            .get_or_insert_with(HashMap::new)
            .remove(&(p as usize))
        {
            Some(layout) => {
                // SAFETY: allocated by `host_alloc` with this layout, removed once.
                unsafe { dealloc(p.cast(), layout) };
                true
            }
            None => false,
        }
    }

    unsafe extern "C" fn probe_malloc(out: *mut *mut c_void, bytes: usize) -> i32 {
        DIRECT_ALLOCS.fetch_add(1, Ordering::SeqCst);
        if FAIL_DIRECT.load(Ordering::SeqCst) {
            return 2;
        }
        // SAFETY: the direct path passes a valid out-pointer.
        unsafe { out.write(host_alloc(bytes)) };
        0
    }

    unsafe extern "C" fn probe_free(p: *mut c_void) -> i32 {
        DIRECT_FREES.fetch_add(1, Ordering::SeqCst);
        if host_free(p) {
            0
        } else {
            1
        }
    }

    /// A thin resource whose direct path is the probe's functions.
    #[derive(Debug)]
    struct Probe;

    impl DeviceMemoryResource for Probe {
        fn allocate(&self, bytes: usize, _: Stream) -> Result<*mut c_void> {
            CHECKED_ALLOCS.fetch_add(1, Ordering::SeqCst);
            if bytes > DIRECT_MAX_BYTES {
                return Err(crate::error::Error::OutOfMemory {
                    requested: bytes,
                    resource: "probe",
                    device: -1,
                    detail: "too large".into(),
                });
            }
            Ok(if bytes == 0 {
                std::ptr::null_mut()
            } else {
                host_alloc(bytes)
            })
        }

        fn deallocate(&self, ptr: *mut c_void, bytes: usize, _: Stream) -> Result<()> {
            CHECKED_FREES.fetch_add(1, Ordering::SeqCst);
            if ptr.is_null() || host_free(ptr) {
                Ok(())
            } else {
                Err(crate::error::Error::invalid(format!(
                    "probe: cannot free {ptr:p} ({bytes} bytes)"
                )))
            }
        }

        fn name(&self) -> &'static str {
            "probe"
        }

        fn as_any(&self) -> &dyn std::any::Any {
            self
        }

        fn direct_path(&self) -> Option<DirectPath> {
            Some(DirectPath::Malloc {
                malloc: probe_malloc,
                free: probe_free,
            })
        }
    }

    fn last_error() -> String {
        // SAFETY: the message pointer is a NUL-terminated string valid until the next
        // failure on this thread.
        unsafe { std::ffi::CStr::from_ptr(crate::ffi::rmm_last_error_message()) }
            .to_string_lossy()
            .into_owned()
    }

    fn counts() -> [usize; 4] {
        [
            &DIRECT_ALLOCS,
            &DIRECT_FREES,
            &CHECKED_ALLOCS,
            &CHECKED_FREES,
        ]
        .map(|c| c.load(Ordering::SeqCst))
    }

    fn alloc_status(h: rmm_resource_t, bytes: usize, out: *mut *mut c_void) -> rmm_status_t {
        // SAFETY: `out` is null (reported) or a valid out-pointer.
        unsafe { rmm_allocate_async(h, bytes, std::ptr::null_mut(), out) }
    }

    #[test]
    fn thin_calls_take_the_direct_path_and_everything_else_the_checked_one() {
        use rmm_status_t::*;
        if WATCHERS.on(Watcher::Counters) {
            // RMM_COUNTERS=1: every call is counted, so none takes the direct path.
            return;
        }
        let h = RESOURCES.insert(Arc::new(Probe) as SharedResource).unwrap() as rmm_resource_t;
        let mut p: *mut c_void = std::ptr::null_mut();

        // This thread's first call takes the checked path (it sets the thread up).
        SET_UP.with(|c| c.set(false));
        assert_eq!(alloc_status(h, 100, &mut p), RMM_STATUS_SUCCESS);
        assert_eq!(counts(), [0, 0, 1, 0]);
        assert_eq!(
            rmm_deallocate_async(h, p, 100, std::ptr::null_mut()),
            RMM_STATUS_SUCCESS
        );
        assert_eq!(counts(), [0, 1, 1, 0]);

        // The success path never reaches the resource.
        assert_eq!(alloc_status(h, 1000, &mut p), RMM_STATUS_SUCCESS);
        assert!(!p.is_null());
        assert_eq!(counts(), [1, 1, 1, 0]);
        assert_eq!(
            rmm_deallocate_async(h, p, 1000, std::ptr::null_mut()),
            RMM_STATUS_SUCCESS
        );
        assert_eq!(counts(), [1, 2, 1, 0]);

        // So is another thread's, after its first.
        let hh = h as usize;
        std::thread::spawn(move || {
            let h = hh as rmm_resource_t;
            let mut p: *mut c_void = std::ptr::null_mut();
            for _ in 0..2 {
                assert_eq!(alloc_status(h, 64, &mut p), RMM_STATUS_SUCCESS);
                assert_eq!(
                    rmm_deallocate_async(h, p, 64, std::ptr::null_mut()),
                    RMM_STATUS_SUCCESS
                );
            }
        })
        .join()
        .unwrap();
        assert_eq!(counts(), [2, 4, 2, 0]);

        // A request over DIRECT_MAX_BYTES never tries the direct call.
        let mut q: *mut c_void = std::ptr::null_mut();
        assert_eq!(
            alloc_status(h, DIRECT_MAX_BYTES + 1, &mut q),
            RMM_STATUS_OUT_OF_MEMORY
        );
        assert!(q.is_null());
        assert_eq!(counts(), [2, 4, 3, 0]);
        // The counts below are from here.
        let base = counts();
        let at = |d: [usize; 4]| [0, 1, 2, 3].map(|i| base[i] + d[i]);

        // Zero bytes, a null out-pointer and a null free take the checked path (or none).
        assert_eq!(alloc_status(h, 0, &mut p), RMM_STATUS_SUCCESS);
        assert!(p.is_null());
        assert_eq!(counts(), at([0, 0, 1, 0]));
        assert_eq!(
            alloc_status(h, 8, std::ptr::null_mut()),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(counts(), at([0, 0, 1, 0]));
        assert_eq!(
            rmm_deallocate_async(h, std::ptr::null_mut(), 8, std::ptr::null_mut()),
            RMM_STATUS_SUCCESS
        );
        assert_eq!(counts(), at([0, 0, 1, 1]));

        // A failed direct call is repeated through the resource.
        FAIL_DIRECT.store(true, Ordering::SeqCst);
        assert_eq!(alloc_status(h, 4096, &mut p), RMM_STATUS_SUCCESS);
        assert_eq!(counts(), at([1, 0, 2, 1]));
        FAIL_DIRECT.store(false, Ordering::SeqCst);
        // So is a free the direct call refuses (a pointer it does not know): the checked
        // path reports it, and the handle is still good.
        let mut bogus = 0u64;
        let status =
            rmm_deallocate_async(h, (&mut bogus as *mut u64).cast(), 8, std::ptr::null_mut());
        assert_eq!(status, RMM_STATUS_INVALID_ARGUMENT);
        assert!(last_error().contains("probe: cannot free"));
        assert_eq!(counts(), at([1, 1, 2, 2]));
        assert_eq!(
            rmm_deallocate_async(h, p, 4096, std::ptr::null_mut()),
            RMM_STATUS_SUCCESS
        );
        assert_eq!(counts(), at([1, 2, 2, 2]));

        // A released handle is reported and never reaches either path.
        assert_eq!(rmm_resource_release(h), RMM_STATUS_SUCCESS);
        assert_eq!(alloc_status(h, 64, &mut p), RMM_STATUS_INVALID_ARGUMENT);
        assert_eq!(
            rmm_deallocate_async(h, p, 64, std::ptr::null_mut()),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(counts(), at([1, 2, 2, 2]));
    }

    #[test]
    fn thin_resources_have_direct_paths_and_others_none() {
        use crate::mr::{
            CudaAsyncMemoryResource, CudaMemoryResource, ManagedMemoryResource,
            PinnedHostMemoryResource, StatisticsResourceAdaptor,
        };
        use crate::runtime::MemHandleType;
        crate::mr::tests::init();
        let cuda: SharedResource = Arc::new(CudaMemoryResource::new().unwrap());
        assert!(matches!(
            cuda.direct_path(),
            Some(DirectPath::Malloc { .. })
        ));
        let managed = ManagedMemoryResource::new().unwrap();
        assert!(matches!(
            managed.direct_path(),
            Some(DirectPath::Managed { .. })
        ));
        assert!(PinnedHostMemoryResource::new()
            .unwrap()
            .direct_path()
            .is_none());
        let stats = StatisticsResourceAdaptor::new(cuda.clone());
        assert!(stats.direct_path().is_none());
        let async_mr = CudaAsyncMemoryResource::new(Some(0), None, MemHandleType::None).unwrap();
        match async_mr.direct_path() {
            Some(DirectPath::Pool {
                pool,
                legacy_stream,
                ..
            }) => {
                assert_eq!(pool, async_mr.pool_handle());
                assert_eq!(raw_stream(1, legacy_stream) as usize, legacy_stream);
                assert_eq!(raw_stream(0x1234, legacy_stream) as usize, 0x1234);
            }
            other => panic!("cuda_async: {other:?}"),
        }
        // Through the C ABI, on every stream kind, both ways.
        let h = RESOURCES.insert(Arc::new(async_mr)).unwrap() as rmm_resource_t;
        for stream in [0usize, 1, 2] {
            let mut p: *mut c_void = std::ptr::null_mut();
            // SAFETY: `p` is a valid out-pointer.
            let s = unsafe { rmm_allocate_async(h, 1 << 20, stream as *mut c_void, &mut p) };
            assert_eq!(s, rmm_status_t::RMM_STATUS_SUCCESS, "stream {stream}");
            assert_eq!(p as usize % ALLOCATION_ALIGNMENT, 0);
            let s = rmm_deallocate_async(h, p, 1 << 20, stream as *mut c_void);
            assert_eq!(s, rmm_status_t::RMM_STATUS_SUCCESS, "stream {stream}");
        }
        // An absurd size fails on the direct path, then on the checked one, which names it.
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: as above.
        let s = unsafe { rmm_allocate_async(h, usize::MAX / 2, std::ptr::null_mut(), &mut p) };
        assert_eq!(s, rmm_status_t::RMM_STATUS_OUT_OF_MEMORY);
        assert!(p.is_null());
        assert!(
            last_error().contains(&(usize::MAX / 2).to_string()),
            "{}",
            last_error()
        );
        assert_eq!(rmm_resource_release(h), rmm_status_t::RMM_STATUS_SUCCESS);
    }
}
