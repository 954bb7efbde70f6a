//! The C ABI called exactly as C calls it: statuses, messages, handles, bad input.

use std::ffi::{c_void, CStr};
use std::ptr::{null, null_mut};

use rmm::ffi::rmm_status_t::*;
use rmm::ffi::*;

fn init() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("RMM_RUNTIME").is_none() {
            std::env::set_var("RMM_RUNTIME", "host");
        }
    });
}

fn last_error() -> String {
    // SAFETY: rmm_last_error_message never returns NULL and the string lives until the
    // next failure on this thread.
    unsafe { CStr::from_ptr(rmm_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

fn cuda() -> rmm_resource_t {
    let mut r = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(
        unsafe { rmm_cuda_create(&mut r) },
        RMM_STATUS_SUCCESS,
        "{}",
        last_error()
    );
    r
}

#[test]
fn status_strings_are_never_null() {
    for s in 0..20u32 {
        let p = rmm_status_string(s);
        assert!(!p.is_null());
        // SAFETY: checked non-null; static NUL-terminated string.
        assert!(!unsafe { CStr::from_ptr(p) }.to_bytes().is_empty());
    }
}

#[test]
fn allocate_round_trip_and_zero_size() {
    init();
    let r = cuda();
    let mut p = null_mut();
    // SAFETY: valid handle and out-pointers throughout; buffers outlive the sync.
    unsafe {
        assert_eq!(rmm_allocate(r, 1 << 16, &mut p), RMM_STATUS_SUCCESS);
        assert!(!p.is_null() && p as usize % 256 == 0);
        let mut host = vec![0u8; 1 << 16];
        assert_eq!(
            rmm_memset_async(p, 0x5a, 1 << 16, null_mut()),
            RMM_STATUS_SUCCESS
        );
        assert_eq!(
            rmm_memcpy_async(host.as_mut_ptr().cast(), p, 1 << 16, null_mut()),
            RMM_STATUS_SUCCESS
        );
        assert_eq!(rmm_stream_synchronize(null_mut()), RMM_STATUS_SUCCESS);
        assert!(host.iter().all(|b| *b == 0x5a));
        assert_eq!(rmm_deallocate(r, p, 1 << 16), RMM_STATUS_SUCCESS);
        let mut z = 1 as *mut c_void;
        assert_eq!(rmm_allocate(r, 0, &mut z), RMM_STATUS_SUCCESS);
        assert!(z.is_null());
        assert_eq!(rmm_deallocate(r, null_mut(), 0), RMM_STATUS_SUCCESS);
    }
    assert_eq!(rmm_resource_release(r), RMM_STATUS_SUCCESS);
}

#[test]
fn null_handles_and_out_pointers_are_invalid_arguments() {
    init();
    let r = cuda();
    let mut p = null_mut();
    // SAFETY: deliberately NULL arguments; the functions must check them.
    unsafe {
        assert_eq!(
            rmm_allocate(null_mut(), 64, &mut p),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert!(last_error().contains("NULL"), "{}", last_error());
        assert_eq!(rmm_allocate(r, 64, null_mut()), RMM_STATUS_INVALID_ARGUMENT);
        assert!(last_error().contains("`ptr`"), "{}", last_error());
        assert_eq!(rmm_cuda_create(null_mut()), RMM_STATUS_INVALID_ARGUMENT);
        assert_eq!(
            rmm_get_current_device_resource(null_mut()),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(
            rmm_resource_name(r, null_mut()),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(
            rmm_get_device_count(null_mut()),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(
            rmm_stream_create(0, null_mut()),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(
            rmm_event_record(null_mut(), null_mut()),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(
            rmm_memcpy_async(null_mut(), null(), 8, null_mut()),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(
            rmm_callback_create_with_vtable(null(), null_mut(), &mut null_mut()),
            RMM_STATUS_INVALID_ARGUMENT
        );
    }
    assert_eq!(
        rmm_deallocate(null_mut(), null_mut(), 0),
        RMM_STATUS_INVALID_ARGUMENT
    );
    assert_eq!(rmm_resource_release(r), RMM_STATUS_SUCCESS);
}

#[test]
fn release_null_is_a_no_op_and_double_release_is_reported() {
    init();
    assert_eq!(rmm_resource_release(null_mut()), RMM_STATUS_SUCCESS);
    let r = cuda();
    assert_eq!(rmm_resource_retain(r), RMM_STATUS_SUCCESS);
    assert_eq!(rmm_resource_release(r), RMM_STATUS_SUCCESS);
    assert_eq!(rmm_resource_release(r), RMM_STATUS_SUCCESS);
    assert_eq!(rmm_resource_release(r), RMM_STATUS_INVALID_ARGUMENT);
    assert!(
        last_error().contains("already released"),
        "{}",
        last_error()
    );
    let mut p = null_mut();
    // SAFETY: valid out-pointer; the handle is stale on purpose.
    assert_eq!(
        unsafe { rmm_allocate(r, 64, &mut p) },
        RMM_STATUS_INVALID_ARGUMENT
    );
    assert!(p.is_null(), "outputs are written only on success");
    assert_eq!(rmm_resource_retain(r), RMM_STATUS_INVALID_ARGUMENT);
    // A recycled slot gets a new generation: the stale handle stays dead.
    let r2 = cuda();
    assert_ne!(r, r2);
    assert_eq!(rmm_resource_release(r), RMM_STATUS_INVALID_ARGUMENT);
    assert_eq!(rmm_resource_release(r2), RMM_STATUS_SUCCESS);
    let foreign = 0x7ffd_1234_5678usize as rmm_resource_t;
    assert_eq!(rmm_resource_release(foreign), RMM_STATUS_INVALID_ARGUMENT);
}

#[test]
fn absurd_size_is_out_of_memory_naming_the_size() {
    init();
    let r = cuda();
    let mut p = null_mut();
    // SAFETY: valid handle and out-pointer.
    let s = unsafe { rmm_allocate(r, 1usize << 60, &mut p) };
    assert_eq!(s, RMM_STATUS_OUT_OF_MEMORY);
    let msg = last_error();
    assert!(
        msg.contains("1152921504606846976") && msg.contains("rmm_allocate_async"),
        "{msg}"
    );
    assert!(p.is_null());
    assert_eq!(rmm_resource_release(r), RMM_STATUS_SUCCESS);
}

#[test]
fn per_device_entry_tag_leaves_other_resources_and_bad_arguments_alone() {
    init();
    let mine = cuda();
    let mut initial = true;
    let mut actual: *mut c_void = 0x1 as *mut c_void;
    // SAFETY: valid out-pointers, except where NULL is the point.
    unsafe {
        // A resource that is no device's current entry: neither initial nor tagged.
        assert_eq!(
            rmm_per_device_resource_is_initial(0, mine, &mut initial),
            RMM_STATUS_SUCCESS
        );
        assert!(!initial);
        assert_eq!(
            rmm_per_device_entry_tag(0, 0, mine, 0x1234 as *mut c_void, None, &mut actual),
            RMM_STATUS_SUCCESS
        );
        assert!(actual.is_null());
        assert_eq!(
            rmm_per_device_entry_tag(0, 0, mine, null_mut(), None, null_mut()),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(
            rmm_per_device_resource_is_initial(0, mine, null_mut()),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(
            rmm_per_device_resource_is_initial(0, null_mut(), &mut initial),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(
            rmm_per_device_entry_tag(-1, 0, mine, null_mut(), None, &mut actual),
            RMM_STATUS_INVALID_ARGUMENT
        );
        // Keys are bounded: the registry keeps one tag per front end (API generation, 0 to 4).
        assert_eq!(
            rmm_per_device_entry_tag(0, 5, mine, null_mut(), None, &mut actual),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(rmm_resource_release(mine), RMM_STATUS_SUCCESS);
    }
}

#[test]
fn per_device_set_get_reset_and_bad_device() {
    init();
    let mine = cuda();
    let (mut prev, mut got) = (null_mut(), null_mut());
    let mut n = 0;
    // SAFETY: valid out-pointers throughout.
    unsafe {
        assert_eq!(rmm_get_device_count(&mut n), RMM_STATUS_SUCCESS);
        assert_eq!(
            rmm_set_per_device_resource(n, mine, &mut prev),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert!(
            last_error().contains(&format!("device id {n}")),
            "{}",
            last_error()
        );
        assert!(prev.is_null());
        assert_eq!(rmm_set_current_device(n + 3), RMM_STATUS_INVALID_ARGUMENT);
        assert_eq!(
            rmm_set_current_device_resource(mine, &mut prev),
            RMM_STATUS_SUCCESS
        );
        assert_eq!(
            rmm_get_current_device_resource(&mut got),
            RMM_STATUS_SUCCESS
        );
        let mut eq = false;
        assert_eq!(
            rmm_resource_is_equal(got, mine, &mut eq),
            RMM_STATUS_SUCCESS
        );
        assert!(eq);
        // NULL resets to the initial resource (hipMM would crash here).
        let mut prev2 = null_mut();
        assert_eq!(
            rmm_set_current_device_resource(null_mut(), &mut prev2),
            RMM_STATUS_SUCCESS
        );
        assert_eq!(
            rmm_set_current_device_resource(null_mut(), null_mut()),
            RMM_STATUS_SUCCESS
        );
        let mut name = null();
        assert_eq!(rmm_resource_name(prev2, &mut name), RMM_STATUS_SUCCESS);
        assert_eq!(
            CStr::from_ptr(name).to_str().unwrap(),
            "cuda_memory_resource"
        );
        for h in [prev, got, prev2, mine] {
            assert_eq!(rmm_resource_release(h), RMM_STATUS_SUCCESS);
        }
    }
}

#[test]
fn runtime_and_device_queries() {
    init();
    let (mut name, mut desc) = (null(), null());
    let (mut free, mut total, mut dev, mut pct) = (0usize, 0usize, -1, 0usize);
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!(rmm_runtime_name(&mut name), RMM_STATUS_SUCCESS);
        let name = CStr::from_ptr(name).to_str().unwrap();
        assert!(["hip", "cuda", "host"].contains(&name));
        assert_eq!(rmm_runtime_description(&mut desc), RMM_STATUS_SUCCESS);
        assert!(!CStr::from_ptr(desc).to_bytes().is_empty());
        assert_eq!(
            rmm_available_device_memory(&mut free, &mut total),
            RMM_STATUS_SUCCESS
        );
        assert!(free <= total && total > 0);
        assert_eq!(rmm_get_current_device(&mut dev), RMM_STATUS_SUCCESS);
        assert_eq!(dev, 0);
        assert_eq!(
            rmm_percent_of_free_device_memory(50, &mut pct),
            RMM_STATUS_SUCCESS
        );
        assert_eq!(pct % 256, 0);
        assert_eq!(
            rmm_percent_of_free_device_memory(150, &mut pct),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert!(last_error().contains("150"));
    }
}

#[test]
fn streams_and_events_order_work() {
    init();
    let (mut a, mut b, mut ev) = (null_mut(), null_mut(), null_mut());
    let r = cuda();
    let mut p = null_mut();
    let mut host = vec![0u8; 4096];
    let mut done = false;
    // SAFETY: valid handles and out-pointers; host buffer outlives the synchronization.
    unsafe {
        assert_eq!(rmm_stream_create(0, &mut a), RMM_STATUS_SUCCESS);
        assert_eq!(
            rmm_stream_create(RMM_STREAM_NON_BLOCKING, &mut b),
            RMM_STATUS_SUCCESS
        );
        assert_eq!(rmm_stream_create(0x80, &mut b), RMM_STATUS_INVALID_ARGUMENT);
        assert_eq!(rmm_event_create(&mut ev), RMM_STATUS_SUCCESS);
        assert_eq!(rmm_allocate_async(r, 4096, a, &mut p), RMM_STATUS_SUCCESS);
        assert_eq!(rmm_memset_async(p, 7, 4096, a), RMM_STATUS_SUCCESS);
        assert_eq!(rmm_event_record(ev, a), RMM_STATUS_SUCCESS);
        assert_eq!(rmm_stream_wait_event(b, ev), RMM_STATUS_SUCCESS);
        assert_eq!(
            rmm_memcpy_async(host.as_mut_ptr().cast(), p, 4096, b),
            RMM_STATUS_SUCCESS
        );
        assert_eq!(rmm_stream_synchronize(b), RMM_STATUS_SUCCESS);
        assert!(host.iter().all(|x| *x == 7));
        assert_eq!(rmm_event_synchronize(ev), RMM_STATUS_SUCCESS);
        assert_eq!(rmm_event_query(ev, &mut done), RMM_STATUS_SUCCESS);
        assert!(done);
        assert_eq!(rmm_stream_query(a, &mut done), RMM_STATUS_SUCCESS);
        assert!(done);
        assert_eq!(rmm_deallocate_async(r, p, 4096, a), RMM_STATUS_SUCCESS);
        assert_eq!(rmm_event_destroy(ev), RMM_STATUS_SUCCESS);
        assert_eq!(rmm_stream_destroy(a), RMM_STATUS_SUCCESS);
        assert_eq!(rmm_stream_destroy(b), RMM_STATUS_SUCCESS);
        assert_eq!(rmm_stream_destroy(null_mut()), RMM_STATUS_INVALID_ARGUMENT);
    }
    assert_eq!(rmm_resource_release(r), RMM_STATUS_SUCCESS);
}

unsafe extern "C" fn failing_alloc(
    ctx: *mut c_void,
    bytes: usize,
    _stream: rmm_stream_t,
    _out: *mut *mut c_void,
) -> u32 {
    let msg = format!("user resource refused {bytes} bytes\0");
    // SAFETY: NUL-terminated string.
    unsafe { rmm_callback_set_error_message(msg.as_ptr().cast()) };
    ctx as usize as u32
}

unsafe extern "C" fn never_dealloc(
    _: *mut c_void,
    _: *mut c_void,
    _: usize,
    _: rmm_stream_t,
) -> u32 {
    0
}

static DESTROYED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

unsafe extern "C" fn count_destroy(_: *mut c_void) {
    DESTROYED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
}

#[test]
fn vtable_callback_statuses_and_messages_cross_the_boundary() {
    init();
    let vt = rmm_callback_vtable {
        allocate: Some(failing_alloc),
        deallocate: Some(never_dealloc),
        destroy: Some(count_destroy),
    };
    for (status, expect) in [
        (2u32, RMM_STATUS_OUT_OF_MEMORY),
        (3, RMM_STATUS_BAD_ALLOC),
        (7, RMM_STATUS_CALLBACK_FAILED),
    ] {
        let before = DESTROYED.load(std::sync::atomic::Ordering::SeqCst);
        let mut r = null_mut();
        let mut p = null_mut();
        let mut ctx = null_mut();
        // SAFETY: valid vtable and out-pointers.
        unsafe {
            assert_eq!(
                rmm_callback_create_with_vtable(&vt, status as usize as *mut c_void, &mut r),
                RMM_STATUS_SUCCESS
            );
            assert_eq!(rmm_callback_get_context(r, &mut ctx), RMM_STATUS_SUCCESS);
            assert_eq!(ctx as usize, status as usize);
            assert_eq!(rmm_allocate(r, 12345, &mut p), expect);
        }
        let msg = last_error();
        assert!(msg.contains("user resource refused 12345 bytes"), "{msg}");
        assert_eq!(rmm_resource_release(r), RMM_STATUS_SUCCESS);
        assert_eq!(
            DESTROYED.load(std::sync::atomic::Ordering::SeqCst),
            before + 1
        );
    }
    let c = cuda();
    let mut ctx = null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(
        unsafe { rmm_callback_get_context(c, &mut ctx) },
        RMM_STATUS_INVALID_ARGUMENT
    );
    assert_eq!(rmm_resource_release(c), RMM_STATUS_SUCCESS);
}

unsafe extern "C" fn null_alloc(_: usize, _: rmm_stream_t, _: *mut c_void) -> *mut c_void {
    null_mut()
}
unsafe extern "C" fn no_dealloc(_: *mut c_void, _: usize, _: rmm_stream_t, _: *mut c_void) {}

#[test]
fn rmm_style_callback_returning_null_is_bad_alloc() {
    init();
    let mut r = null_mut();
    let mut p = null_mut();
    // SAFETY: valid callbacks and out-pointers.
    unsafe {
        assert_eq!(
            rmm_callback_create(None, Some(no_dealloc), null_mut(), null_mut(), &mut r),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(
            rmm_callback_create(
                Some(null_alloc),
                Some(no_dealloc),
                null_mut(),
                null_mut(),
                &mut r
            ),
            RMM_STATUS_SUCCESS
        );
        assert_eq!(rmm_allocate(r, 512, &mut p), RMM_STATUS_BAD_ALLOC);
        assert!(last_error().contains("512"), "{}", last_error());
    }
    assert_eq!(rmm_resource_release(r), RMM_STATUS_SUCCESS);
}

#[test]
fn header_constants_match_rust() {
    let header = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/include/rmm/rmm.h"))
        .expect("include/rmm/rmm.h");
    for (name, value) in [
        ("RMM_STREAM_NON_BLOCKING", RMM_STREAM_NON_BLOCKING as usize),
        ("RMM_ALLOCATION_ALIGNMENT", rmm::mr::ALLOCATION_ALIGNMENT),
        ("RMM_STREAM_LEGACY ((rmm_stream_t)", rmm::Stream::LEGACY.0),
        (
            "RMM_STREAM_PER_THREAD ((rmm_stream_t)",
            rmm::Stream::PER_THREAD.0,
        ),
        (
            "RMM_ALLOCATION_HANDLE_NONE",
            RMM_ALLOCATION_HANDLE_NONE as usize,
        ),
        (
            "RMM_ALLOCATION_HANDLE_POSIX_FILE_DESCRIPTOR",
            RMM_ALLOCATION_HANDLE_POSIX_FILE_DESCRIPTOR as usize,
        ),
        (
            "RMM_ALLOCATION_HANDLE_WIN32",
            RMM_ALLOCATION_HANDLE_WIN32 as usize,
        ),
        (
            "RMM_ALLOCATION_HANDLE_WIN32_KMT",
            RMM_ALLOCATION_HANDLE_WIN32_KMT as usize,
        ),
        (
            "RMM_ALLOCATION_HANDLE_FABRIC",
            RMM_ALLOCATION_HANDLE_FABRIC as usize,
        ),
    ] {
        let sep = if name.ends_with(')') { "" } else { " " };
        let line = format!("#define {name}{sep}{value}");
        assert!(header.contains(&line), "rmm.h lacks `{line}`");
    }
}

#[test]
fn sub_allocators_through_the_c_abi() {
    init();
    let up = cuda();
    let (mut pool, mut fixed, mut bins, mut arena) =
        (null_mut(), null_mut(), null_mut(), null_mut());
    let mut p = null_mut();
    // SAFETY: valid handles and out-pointers throughout.
    unsafe {
        // Bad sizes are refused with the value named, and nothing is created.
        assert_eq!(
            rmm_pool_create(up, 1000, 0, &mut pool),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert!(last_error().contains("1000"), "{}", last_error());
        assert_eq!(
            rmm_pool_create(up, 1 << 21, 1 << 20, &mut pool),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert!(pool.is_null());
        assert_eq!(
            rmm_pool_create(null_mut(), 0, 0, &mut pool),
            RMM_STATUS_INVALID_ARGUMENT
        );

        assert_eq!(
            rmm_pool_create(up, 1 << 20, 4 << 20, &mut pool),
            RMM_STATUS_SUCCESS
        );
        assert_eq!(rmm_allocate(pool, 3000, &mut p), RMM_STATUS_SUCCESS);
        let mut st = rmm_pool_stats::default();
        assert_eq!(rmm_pool_get_stats(pool, &mut st), RMM_STATUS_SUCCESS);
        assert_eq!((st.pool_size, st.maximum_pool_size), (1 << 20, 4 << 20));
        assert_eq!(st.bytes_free, (1 << 20) - 3072);
        let mut q = null_mut();
        assert_eq!(
            rmm_allocate(pool, 8 << 20, &mut q),
            RMM_STATUS_OUT_OF_MEMORY
        );
        assert!(last_error().contains("8388608"), "{}", last_error());
        assert_eq!(rmm_deallocate(pool, p, 3000), RMM_STATUS_SUCCESS);
        assert_eq!(rmm_deallocate(pool, p, 3000), RMM_STATUS_INVALID_ARGUMENT);
        let mut released = 0;
        assert_eq!(rmm_pool_release(pool, &mut released), RMM_STATUS_SUCCESS);
        assert_eq!(released, 1 << 20);
        // Asking a pool for what only an arena has is reported, not misread.
        let (mut a, mut b) = (0, 0);
        assert_eq!(
            rmm_arena_get_sizes(pool, &mut a, &mut b),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert!(
            last_error().contains("pool_memory_resource"),
            "{}",
            last_error()
        );

        assert_eq!(
            rmm_fixed_size_create(up, 1000, 4, &mut fixed),
            RMM_STATUS_SUCCESS
        );
        let mut bs = 0;
        assert_eq!(
            rmm_fixed_size_get_block_size(fixed, &mut bs),
            RMM_STATUS_SUCCESS
        );
        assert_eq!(bs, 1024);
        assert_ne!(rmm_allocate(fixed, 2048, &mut p), RMM_STATUS_SUCCESS);
        assert_eq!(rmm_allocate(fixed, 1024, &mut p), RMM_STATUS_SUCCESS);
        assert_eq!(rmm_deallocate(fixed, p, 1024), RMM_STATUS_SUCCESS);

        assert_eq!(
            rmm_binning_create(up, 12, 10, &mut bins),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(
            rmm_binning_create(up, 10, 12, &mut bins),
            RMM_STATUS_SUCCESS
        );
        assert_eq!(
            rmm_binning_add_bin(bins, 1 << 16, null_mut()),
            RMM_STATUS_SUCCESS
        );
        let mut big = null_mut();
        assert_eq!(
            rmm_fixed_size_create(up, 1 << 17, 2, &mut big),
            RMM_STATUS_SUCCESS
        );
        assert_eq!(rmm_binning_add_bin(bins, 1 << 17, big), RMM_STATUS_SUCCESS);
        assert_eq!(rmm_resource_release(big), RMM_STATUS_SUCCESS);
        for size in [100usize, 1500, 4096, 60000, 100_000, 1 << 20] {
            assert_eq!(
                rmm_allocate(bins, size, &mut p),
                RMM_STATUS_SUCCESS,
                "{size}"
            );
            assert_eq!(rmm_deallocate(bins, p, size), RMM_STATUS_SUCCESS, "{size}");
        }

        assert_eq!(
            rmm_arena_create(up, 1000, false, &mut arena),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(
            rmm_arena_create(up, 64 << 20, false, &mut arena),
            RMM_STATUS_SUCCESS
        );
        assert_eq!(rmm_allocate(arena, 5000, &mut p), RMM_STATUS_SUCCESS);
        assert_eq!(
            rmm_arena_get_sizes(arena, &mut a, &mut b),
            RMM_STATUS_SUCCESS
        );
        assert_eq!(a, 64 << 20);
        assert_eq!(b, (64 << 20) - 5120);
        assert_eq!(rmm_deallocate(arena, p, 5000), RMM_STATUS_SUCCESS);
    }
    // Upstreams stay alive through the resources built on them, whatever the release order.
    for h in [up, fixed, pool, arena, bins] {
        assert_eq!(rmm_resource_release(h), RMM_STATUS_SUCCESS);
    }
}

#[test]
fn binning_bin_larger_than_upstream_can_give_is_refused_clearly() {
    init();
    let up = cuda();
    let mut bins = null_mut();
    // SAFETY: valid handles and out-pointers.
    unsafe {
        assert_eq!(
            rmm_binning_create(up, -1, -1, &mut bins),
            RMM_STATUS_SUCCESS
        );
        let huge = 1usize << 40;
        let s = rmm_binning_add_bin(bins, huge, null_mut());
        assert_eq!(s, RMM_STATUS_OUT_OF_MEMORY, "{}", last_error());
        let msg = last_error();
        assert!(msg.contains(&huge.to_string()), "{msg}");
        // Nothing changed: small requests still go to the upstream and work.
        let mut p = null_mut();
        assert_eq!(rmm_allocate(bins, 4096, &mut p), RMM_STATUS_SUCCESS);
        assert_eq!(rmm_deallocate(bins, p, 4096), RMM_STATUS_SUCCESS);
        assert_eq!(
            rmm_binning_create(up, 0, 70, &mut bins),
            RMM_STATUS_INVALID_ARGUMENT
        );
    }
    for h in [bins, up] {
        assert_eq!(rmm_resource_release(h), RMM_STATUS_SUCCESS);
    }
}

fn resource_id(r: rmm_resource_t) -> u64 {
    let mut id = 0u64;
    // SAFETY: valid out-pointer.
    let s = unsafe { rmm_resource_id(r, &mut id) };
    assert_eq!(s, RMM_STATUS_SUCCESS, "{}", last_error());
    id
}

fn runtime_is_host() -> bool {
    let mut name = null();
    // SAFETY: valid out-pointer; the name is a static string.
    unsafe {
        rmm_runtime_name(&mut name) == RMM_STATUS_SUCCESS
            && CStr::from_ptr(name).to_bytes() == b"host"
    }
}

#[test]
fn resource_id_names_the_object_not_the_handle() {
    init();
    let up = cuda();
    let id = resource_id(up);
    assert_ne!(id, 0);
    let (mut a, mut b, mut upstream) = (null_mut(), null_mut(), null_mut());
    // SAFETY: valid handles and out-pointers throughout.
    unsafe {
        assert_eq!(rmm_resource_retain(up), RMM_STATUS_SUCCESS);
        assert_eq!(resource_id(up), id);
        assert_eq!(rmm_resource_release(up), RMM_STATUS_SUCCESS);
        // Two adaptors of one kind over one upstream: equal, yet two objects.
        assert_eq!(
            rmm_statistics_adaptor_create(up, &mut a),
            RMM_STATUS_SUCCESS
        );
        assert_eq!(
            rmm_statistics_adaptor_create(up, &mut b),
            RMM_STATUS_SUCCESS
        );
        let mut equal = false;
        assert_eq!(rmm_resource_is_equal(a, b, &mut equal), RMM_STATUS_SUCCESS);
        assert!(equal);
        assert_ne!(resource_id(a), resource_id(b));
        assert_ne!(resource_id(a), id);
        // A getter makes a new handle to the same object.
        assert_eq!(
            rmm_resource_get_upstream(a, &mut upstream),
            RMM_STATUS_SUCCESS
        );
        assert_ne!(upstream, up);
        assert_eq!(resource_id(upstream), id);
        let mut previous = null_mut();
        assert_eq!(
            rmm_set_per_device_resource(0, a, &mut previous),
            RMM_STATUS_SUCCESS
        );
        let mut current = null_mut();
        assert_eq!(
            rmm_get_per_device_resource(0, &mut current),
            RMM_STATUS_SUCCESS
        );
        assert_eq!(resource_id(current), resource_id(a));
        assert_eq!(
            rmm_set_per_device_resource(0, previous, null_mut()),
            RMM_STATUS_SUCCESS
        );
        for h in [current, previous] {
            assert_eq!(rmm_resource_release(h), RMM_STATUS_SUCCESS);
        }
    }
    for h in [upstream, a, b, up] {
        assert_eq!(rmm_resource_release(h), RMM_STATUS_SUCCESS);
    }
}

#[test]
fn resource_id_bad_arguments() {
    init();
    let r = cuda();
    let mut id = 7u64;
    // SAFETY: NULL and released handles are reported, never dereferenced.
    unsafe {
        assert_eq!(
            rmm_resource_id(null_mut(), &mut id),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert!(last_error().contains("NULL"), "{}", last_error());
        assert_eq!(rmm_resource_id(r, null_mut()), RMM_STATUS_INVALID_ARGUMENT);
        assert!(last_error().contains("`id` is NULL"), "{}", last_error());
        assert_eq!(rmm_resource_release(r), RMM_STATUS_SUCCESS);
        assert_eq!(rmm_resource_id(r, &mut id), RMM_STATUS_INVALID_ARGUMENT);
        assert!(
            last_error().contains("already released"),
            "{}",
            last_error()
        );
    }
    assert_eq!(id, 7);
    assert_eq!(rmm_last_error_runtime_code(), 0);
}

#[test]
fn prefetch_is_a_hint_for_memory_that_is_not_managed() {
    init();
    let mut managed = null_mut();
    let (mut p, mut d, mut s, mut device) = (null_mut(), null_mut(), null_mut(), -1);
    let r = cuda();
    // SAFETY: valid handles, out-pointers and ranges; the memory outlives the stream work.
    unsafe {
        assert_eq!(rmm_get_current_device(&mut device), RMM_STATUS_SUCCESS);
        assert_eq!(rmm_managed_create(&mut managed), RMM_STATUS_SUCCESS);
        assert_eq!(rmm_stream_create(0, &mut s), RMM_STATUS_SUCCESS);
        assert_eq!(
            rmm_allocate_async(managed, 1 << 16, s, &mut p),
            RMM_STATUS_SUCCESS
        );
        assert_eq!(rmm_prefetch(p, 1 << 16, device, s), RMM_STATUS_SUCCESS);
        assert_eq!(rmm_prefetch(p, 1 << 16, -1, s), RMM_STATUS_SUCCESS);
        assert_eq!(
            rmm_prefetch(p, 1 << 16, device, null_mut()),
            RMM_STATUS_SUCCESS
        );
        // Device memory, pageable host memory, NULL and zero bytes: no-ops.
        assert_eq!(rmm_allocate(r, 4096, &mut d), RMM_STATUS_SUCCESS);
        assert_eq!(rmm_prefetch(d, 4096, device, s), RMM_STATUS_SUCCESS);
        let host = [0u8; 64];
        assert_eq!(
            rmm_prefetch(host.as_ptr().cast(), 64, device, s),
            RMM_STATUS_SUCCESS
        );
        assert_eq!(rmm_prefetch(null(), 4096, device, s), RMM_STATUS_SUCCESS);
        assert_eq!(rmm_prefetch(p, 0, device, s), RMM_STATUS_SUCCESS);
        // A device below -1 is no device.
        assert_eq!(rmm_prefetch(p, 4096, -2, s), RMM_STATUS_INVALID_ARGUMENT);
        assert!(last_error().contains("rmm_prefetch"), "{}", last_error());
        if runtime_is_host() {
            let mut count = 0;
            assert_eq!(rmm_get_device_count(&mut count), RMM_STATUS_SUCCESS);
            assert_eq!(rmm_prefetch(p, 4096, count, s), RMM_STATUS_RUNTIME_ERROR);
            assert_eq!(rmm_last_error_runtime_code(), 101);
        }
        assert_eq!(rmm_stream_synchronize(s), RMM_STATUS_SUCCESS);
        assert_eq!(rmm_deallocate(r, d, 4096), RMM_STATUS_SUCCESS);
        assert_eq!(
            rmm_deallocate_async(managed, p, 1 << 16, s),
            RMM_STATUS_SUCCESS
        );
        assert_eq!(rmm_stream_destroy(s), RMM_STATUS_SUCCESS);
        if runtime_is_host() {
            // A destroyed stream is the runtime's invalid handle.
            let mut q = null_mut();
            assert_eq!(rmm_allocate(managed, 4096, &mut q), RMM_STATUS_SUCCESS);
            assert_eq!(rmm_prefetch(q, 4096, 0, s), RMM_STATUS_RUNTIME_ERROR);
            assert_eq!(rmm_last_error_runtime_code(), 400);
            assert_eq!(rmm_deallocate(managed, q, 4096), RMM_STATUS_SUCCESS);
        }
    }
    for h in [managed, r] {
        assert_eq!(rmm_resource_release(h), RMM_STATUS_SUCCESS);
    }
}

#[test]
fn versions_and_device_attributes_by_cuda_number() {
    init();
    let (mut rt, mut drv, mut count) = (0, 0, 0);
    // SAFETY: valid out-pointers, and NULL ones that are reported.
    unsafe {
        assert_eq!(rmm_runtime_get_version(&mut rt), RMM_STATUS_SUCCESS);
        assert_eq!(rmm_driver_get_version(&mut drv), RMM_STATUS_SUCCESS);
        assert!(rt > 0 && drv >= 0, "{rt} {drv}");
        assert_eq!(
            rmm_runtime_get_version(null_mut()),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(
            rmm_driver_get_version(null_mut()),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(rmm_get_device_count(&mut count), RMM_STATUS_SUCCESS);

        let attr = |number: i32, device: i32| {
            let mut v = -7;
            let s = rmm_device_get_attribute(&mut v, number, device);
            (s, v)
        };
        let (s, warp) = attr(10, 0);
        assert_eq!(s, RMM_STATUS_SUCCESS, "{}", last_error());
        assert!(warp == 32 || warp == 64, "{warp}");
        let (s, sms) = attr(16, 0);
        assert_eq!(s, RMM_STATUS_SUCCESS);
        assert!(sms >= 1);
        let (s, pools) = attr(115, 0);
        assert_eq!(s, RMM_STATUS_SUCCESS);
        let mut supported = false;
        assert_eq!(
            rmm_device_supports_async_pools(0, &mut supported),
            RMM_STATUS_SUCCESS
        );
        assert_eq!(pools == 1, supported);
        if runtime_is_host() {
            assert_eq!((rt, drv), (13000, 13000));
            assert_eq!(warp, 32);
            assert_eq!((attr(75, 0).1, attr(76, 0).1), (9, 0));
        }

        assert_eq!(
            rmm_device_get_attribute(null_mut(), 10, 0),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(rmm_last_error_runtime_code(), 0);
        assert_eq!(attr(10, count), (RMM_STATUS_RUNTIME_ERROR, -7));
        assert_eq!(rmm_last_error_runtime_code(), 101, "{}", last_error());
        assert!(last_error().contains("rmm_device_get_attribute"));
        assert_eq!(attr(0, 0), (RMM_STATUS_RUNTIME_ERROR, -7));
        assert_eq!(rmm_last_error_runtime_code(), 1, "{}", last_error());
    }
}

#[test]
fn device_names() {
    init();
    let mut count = 0;
    let mut buf = [0x55 as std::ffi::c_char; 256];
    // SAFETY: valid out-pointers and buffer lengths, and NULL / empty ones that are reported.
    unsafe {
        assert_eq!(rmm_get_device_count(&mut count), RMM_STATUS_SUCCESS);
        assert_eq!(
            rmm_device_get_name(buf.as_mut_ptr(), buf.len(), 0),
            RMM_STATUS_SUCCESS,
            "{}",
            last_error()
        );
        let name = std::ffi::CStr::from_ptr(buf.as_ptr())
            .to_str()
            .unwrap()
            .to_owned();
        assert!(!name.is_empty());
        if runtime_is_host() {
            assert_eq!(name, "rmm-rs host emulation device 0");
        }
        // Cut short to the room given, always NUL-terminated.
        let mut small = [0x55 as std::ffi::c_char; 5];
        assert_eq!(
            rmm_device_get_name(small.as_mut_ptr(), small.len(), 0),
            RMM_STATUS_SUCCESS
        );
        let cut = std::ffi::CStr::from_ptr(small.as_ptr()).to_str().unwrap();
        assert_eq!(cut, &name[..4]);
        // Bad input changes nothing.
        let mut untouched = [0x55 as std::ffi::c_char; 8];
        assert_eq!(
            rmm_device_get_name(untouched.as_mut_ptr(), 0, 0),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(
            rmm_device_get_name(null_mut(), 16, 0),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(
            rmm_device_get_name(untouched.as_mut_ptr(), untouched.len(), count),
            RMM_STATUS_RUNTIME_ERROR
        );
        assert_eq!(rmm_last_error_runtime_code(), 101, "{}", last_error());
        assert!(last_error().contains("rmm_device_get_name"));
        assert!(untouched.iter().all(|&c| c == 0x55));
    }
}

/// Regression (the C ABI fuzzer, on a GPU): the pools' statistics were read field by field
/// while other threads allocated and freed, so a snapshot could hold a largest free block
/// above its free bytes, a fragmentation below 0. Each snapshot must agree with itself.
#[test]
fn pool_stats_agree_with_themselves_while_threads_allocate() {
    use std::sync::atomic::{AtomicBool, Ordering};
    init();
    let up = cuda();
    let (mut pool, mut vmm) = (null_mut(), null_mut());
    // SAFETY: valid handles and out-pointers throughout; every allocation is freed with
    // its size before the handles are released.
    unsafe {
        assert_eq!(rmm_pool_create(up, 0, 0, &mut pool), RMM_STATUS_SUCCESS);
        let mut o = std::mem::zeroed::<rmm_vmm_pool_options>();
        assert_eq!(rmm_vmm_pool_options_init(&mut o), RMM_STATUS_SUCCESS);
        o.reserved_size = 1 << 30;
        let have_vmm = rmm_vmm_pool_create(&o, &mut vmm) == RMM_STATUS_SUCCESS;
        let handles: Vec<usize> = [pool, vmm]
            .into_iter()
            .filter(|h| !h.is_null())
            .map(|h| h as usize)
            .collect();
        let stop = AtomicBool::new(false);
        let disagreement = std::thread::scope(|s| {
            for t in 0..4usize {
                let (handles, stop) = (&handles, &stop);
                s.spawn(move || {
                    // Large blocks taken and given back at once: the free bytes swing
                    // between little and a lot, and freed neighbours merge, so a read of
                    // the free bytes and a later read of the largest block disagree.
                    let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ t as u64;
                    while !stop.load(Ordering::Relaxed) {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        let h = handles[(x as usize >> 8) % handles.len()] as rmm_resource_t;
                        let size = (1 << 20) << ((x >> 20) % 3);
                        let mut p = null_mut();
                        if rmm_allocate(h, size, &mut p) == RMM_STATUS_SUCCESS {
                            assert_eq!(rmm_deallocate(h, p, size), RMM_STATUS_SUCCESS);
                        }
                    }
                });
            }
            // The first disagreement, if any; the workers are stopped before it is reported
            // (a panic here would leave them running and the scope waiting).
            let deadline = std::time::Instant::now() + std::time::Duration::from_millis(1500);
            let (mut reads, mut bad) = (0u64, None);
            while bad.is_none() && std::time::Instant::now() < deadline {
                let mut s = std::mem::zeroed::<rmm_pool_stats>();
                assert_eq!(rmm_pool_get_stats(pool, &mut s), RMM_STATUS_SUCCESS);
                if !(s.largest_free_block <= s.bytes_free
                    && (0.0..=1.0).contains(&s.fragmentation)
                    && (s.bytes_free == 0) == (s.free_block_count == 0))
                {
                    bad = Some(format!("pool stats disagree after {reads} reads: {s:?}"));
                }
                if have_vmm {
                    let mut v = std::mem::zeroed::<rmm_vmm_pool_stats>();
                    assert_eq!(rmm_vmm_pool_get_stats(vmm, &mut v), RMM_STATUS_SUCCESS);
                    if !(v.largest_free_block <= v.bytes_free
                        && (0.0..=1.0).contains(&v.fragmentation)
                        && (v.bytes_free == 0) == (v.free_block_count == 0))
                    {
                        bad = Some(format!(
                            "vmm pool stats disagree after {reads} reads: {v:?}"
                        ));
                    }
                }
                reads += 1;
            }
            stop.store(true, Ordering::Relaxed);
            bad
        });
        if let Some(why) = disagreement {
            panic!("{why}");
        }
        for h in [pool, vmm, up] {
            assert_eq!(rmm_resource_release(h), RMM_STATUS_SUCCESS);
        }
    }
}

#[test]
fn a_released_pool_handle_is_refused_on_the_hit_path_even_once_its_slot_is_reused() {
    init();
    let up = cuda();
    let mut pool = null_mut();
    let (mut p, mut q) = (null_mut(), null_mut());
    // SAFETY: valid out-pointers; the pool handle is stale on purpose after its release.
    unsafe {
        assert_eq!(
            rmm_pool_create(up, 4 << 20, 8 << 20, &mut pool),
            RMM_STATUS_SUCCESS
        );
        // Warm the thread's front: the second round is served by its call-free hit path.
        for _ in 0..2 {
            assert_eq!(rmm_allocate(pool, 3000, &mut p), RMM_STATUS_SUCCESS);
            assert_eq!(rmm_deallocate(pool, p, 3000), RMM_STATUS_SUCCESS);
        }
        assert_eq!(rmm_resource_release(pool), RMM_STATUS_SUCCESS);
        // Its slot may now hold another pool, whose fronts the stale handle must not reach.
        let mut other = null_mut();
        assert_eq!(
            rmm_pool_create(up, 4 << 20, 8 << 20, &mut other),
            RMM_STATUS_SUCCESS
        );
        assert_eq!(rmm_allocate(other, 3000, &mut q), RMM_STATUS_SUCCESS);
        assert_eq!(rmm_deallocate(other, q, 3000), RMM_STATUS_SUCCESS);
        assert_eq!(
            rmm_allocate(pool, 3000, &mut p),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert!(
            last_error().contains("already released"),
            "{}",
            last_error()
        );
        assert_eq!(rmm_deallocate(pool, q, 3000), RMM_STATUS_INVALID_ARGUMENT);
        assert!(
            last_error().contains("already released"),
            "{}",
            last_error()
        );
        // The other pool still holds its block, free, and hands it out again.
        assert_eq!(rmm_allocate(other, 3000, &mut p), RMM_STATUS_SUCCESS);
        assert_eq!(p, q);
        assert_eq!(rmm_deallocate(other, p, 3000), RMM_STATUS_SUCCESS);
        assert_eq!(rmm_resource_release(other), RMM_STATUS_SUCCESS);
    }
    assert_eq!(rmm_resource_release(up), RMM_STATUS_SUCCESS);
}
