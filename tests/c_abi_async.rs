//! The C ABI of the async, sam_headroom and pinned host functions, called as C calls them.

use std::ffi::{c_void, CStr};
use std::ptr::{null, null_mut};

use rmm::ffi::rmm_status_t::*;
use rmm::ffi::*;

fn init() -> bool {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("RMM_RUNTIME").is_none() {
            std::env::set_var("RMM_RUNTIME", "host");
        }
    });
    std::env::var("RMM_RUNTIME").as_deref() == Ok("host")
}

fn last_error() -> String {
    // SAFETY: never NULL; lives until the next failure on this thread.
    unsafe { CStr::from_ptr(rmm_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

fn round_trip(r: rmm_resource_t) {
    let mut p = null_mut();
    // SAFETY: valid handle and out-pointer.
    unsafe {
        assert_eq!(
            rmm_allocate_async(r, 0, null_mut(), &mut p),
            RMM_STATUS_SUCCESS
        );
        assert!(p.is_null());
        assert_eq!(
            rmm_deallocate_async(r, null_mut(), 0, null_mut()),
            RMM_STATUS_SUCCESS
        );
        assert_eq!(
            rmm_allocate_async(r, 1 << 20, null_mut(), &mut p),
            RMM_STATUS_SUCCESS,
            "{}",
            last_error()
        );
        assert!(!p.is_null());
        assert_eq!(p as usize % 256, 0);
        assert_eq!(
            rmm_deallocate_async(r, p, 1 << 20, null_mut()),
            RMM_STATUS_SUCCESS
        );
    }
}

#[test]
fn async_create_defaults_and_options() {
    init();
    let mut r = null_mut();
    // SAFETY: valid out-pointers; NULL optional sizes.
    unsafe {
        assert_eq!(
            rmm_async_create(null(), null(), 0, &mut r),
            RMM_STATUS_SUCCESS,
            "{}",
            last_error()
        );
        round_trip(r);
        let mut pool = null_mut();
        assert_eq!(rmm_async_pool_handle(r, &mut pool), RMM_STATUS_SUCCESS);
        assert!(!pool.is_null());
        assert_eq!(rmm_resource_release(r), RMM_STATUS_SUCCESS);

        let (initial, threshold) = (4usize << 20, 0usize);
        assert_eq!(
            rmm_async_create(&initial, &threshold, 0, &mut r),
            RMM_STATUS_SUCCESS,
            "{}",
            last_error()
        );
        round_trip(r);
        // Not exportable: no handle type.
        let mut h = 0i64;
        assert_eq!(
            rmm_async_export_handle(r, &mut h),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert!(
            last_error().contains("export handle type"),
            "{}",
            last_error()
        );
        assert_eq!(rmm_resource_release(r), RMM_STATUS_SUCCESS);
    }
}

#[test]
fn async_bad_arguments() {
    let host = init();
    let mut r = null_mut();
    // SAFETY: valid or NULL pointers, as each case states.
    unsafe {
        assert_eq!(
            rmm_async_create(null(), null(), 0, null_mut()),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(
            rmm_async_create(null(), null(), 3, &mut r),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert!(last_error().contains("handle_type = 3"), "{}", last_error());
        if host {
            assert_eq!(
                rmm_async_create(null(), null(), 1, &mut r),
                RMM_STATUS_UNSUPPORTED
            );
            assert!(
                last_error().contains("posix_file_descriptor"),
                "{}",
                last_error()
            );
            assert!(r.is_null());
        }
        assert_eq!(
            rmm_async_view_create(null_mut(), &mut r),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert!(last_error().contains("pool_handle"), "{}", last_error());
        let mut pool = null_mut();
        let cuda = {
            let mut c = null_mut();
            assert_eq!(rmm_cuda_create(&mut c), RMM_STATUS_SUCCESS);
            c
        };
        assert_eq!(
            rmm_async_pool_handle(cuda, &mut pool),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert!(
            last_error().contains("not a cuda_async"),
            "{}",
            last_error()
        );
        let mut h = 0i64;
        assert_eq!(
            rmm_async_export_handle(cuda, &mut h),
            RMM_STATUS_INVALID_ARGUMENT
        );
        rmm_resource_release(cuda);
        let mut data = rmm_ipc_pointer_data { reserved: [0; 64] };
        let mut p = null_mut();
        assert_eq!(
            rmm_async_import_pointer(null_mut(), &data, &mut p),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(
            rmm_async_export_pointer(null_mut(), null_mut(), &mut data),
            RMM_STATUS_INVALID_ARGUMENT
        );
        if host {
            assert_eq!(
                rmm_async_import_pool(3, 1, &mut pool),
                RMM_STATUS_UNSUPPORTED
            );
        }
    }
}

#[test]
fn view_over_the_default_pool_and_managed() {
    init();
    let mut pool: *mut c_void = null_mut();
    let mut r = null_mut();
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!(
            rmm_device_default_mem_pool(0, &mut pool),
            RMM_STATUS_SUCCESS,
            "{}",
            last_error()
        );
        assert_eq!(
            rmm_async_view_create(pool, &mut r),
            RMM_STATUS_SUCCESS,
            "{}",
            last_error()
        );
        round_trip(r);
        let mut same = null_mut();
        assert_eq!(rmm_async_pool_handle(r, &mut same), RMM_STATUS_SUCCESS);
        assert_eq!(same, pool);
        rmm_resource_release(r);

        match rmm_async_managed_create(&mut r) {
            RMM_STATUS_SUCCESS => {
                round_trip(r);
                rmm_resource_release(r);
            }
            RMM_STATUS_UNSUPPORTED => assert!(last_error().contains("managed"), "{}", last_error()),
            s => panic!("unexpected status {s:?}: {}", last_error()),
        }
    }
}

#[test]
fn sam_headroom_create() {
    init();
    let mut r = null_mut();
    // SAFETY: valid out-pointer.
    match unsafe { rmm_sam_headroom_create(1 << 20, &mut r) } {
        RMM_STATUS_SUCCESS => {
            round_trip(r);
            // SAFETY: a live handle.
            rmm_resource_release(r);
        }
        RMM_STATUS_UNSUPPORTED => {
            assert!(
                last_error().contains("PageableMemoryAccess"),
                "{}",
                last_error()
            )
        }
        s => panic!("unexpected status {s:?}: {}", last_error()),
    }
}

#[test]
fn pinned_host_alignment() {
    init();
    // SAFETY: valid out-pointers; frees match their allocations.
    unsafe {
        for alignment in [1usize, 64, 256, 4096, 1 << 16] {
            let mut p = null_mut();
            assert_eq!(
                rmm_pinned_host_allocate(1000, alignment, &mut p),
                RMM_STATUS_SUCCESS,
                "{}",
                last_error()
            );
            assert!(!p.is_null());
            assert_eq!(p as usize % alignment, 0);
            assert_eq!(
                rmm_pinned_host_deallocate(p, 1000, alignment),
                RMM_STATUS_SUCCESS
            );
        }
        let mut p = null_mut();
        assert_eq!(rmm_pinned_host_allocate(0, 16, &mut p), RMM_STATUS_SUCCESS);
        assert!(p.is_null());
        assert_eq!(
            rmm_pinned_host_allocate(64, 48, &mut p),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert!(last_error().contains("power of two"), "{}", last_error());
        assert_eq!(
            rmm_pinned_host_allocate(64, 16, null_mut()),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(
            rmm_pinned_host_deallocate(null_mut(), 0, 16),
            RMM_STATUS_SUCCESS
        );
    }
}
