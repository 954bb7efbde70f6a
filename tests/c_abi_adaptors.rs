//! The C ABI of the resource adaptors, called as C calls it.

use std::ffi::{c_char, c_void, CStr};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicUsize, Ordering};

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
    // SAFETY: never NULL; valid until the next failure on this thread.
    unsafe { CStr::from_ptr(rmm_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

fn ok(s: rmm_status_t) {
    assert_eq!(s, RMM_STATUS_SUCCESS, "{}", last_error());
}

fn cuda() -> rmm_resource_t {
    init();
    let mut r = null_mut();
    // SAFETY: valid out-pointer.
    ok(unsafe { rmm_cuda_create(&mut r) });
    r
}

fn release(r: rmm_resource_t) {
    ok(rmm_resource_release(r));
}

/// Allocates and frees through `r`, checking the pointer is aligned to `align`.
fn round_trip(r: rmm_resource_t, bytes: usize, align: usize) {
    let mut p = null_mut();
    // SAFETY: valid handle and out-pointer.
    unsafe {
        ok(rmm_allocate(r, bytes, &mut p));
        assert!(!p.is_null() && p as usize % align == 0);
        ok(rmm_deallocate(r, p, bytes));
    }
}

#[test]
fn every_adaptor_creates_allocates_and_reports_its_upstream() {
    let up = cuda();
    extern "C" fn never(_: usize, _: *mut c_void) -> bool {
        false
    }
    let mut handles = Vec::new();
    // SAFETY: valid handles and out-pointers throughout.
    unsafe {
        let mut h = null_mut();
        ok(rmm_aligned_adaptor_create(up, 4096, 0, &mut h));
        handles.push(h);
        ok(rmm_limiting_adaptor_create(up, 1 << 30, 256, &mut h));
        handles.push(h);
        ok(rmm_statistics_adaptor_create(up, &mut h));
        handles.push(h);
        ok(rmm_tracking_adaptor_create(up, false, &mut h));
        handles.push(h);
        ok(rmm_failure_callback_adaptor_create(
            up,
            Some(never),
            null_mut(),
            &mut h,
        ));
        handles.push(h);
        ok(rmm_thread_safe_adaptor_create(up, &mut h));
        handles.push(h);
        ok(rmm_prefetch_adaptor_create(up, &mut h));
        handles.push(h);
        ok(rmm_pool_create(up, 0, 0, &mut h));
        handles.push(h);
        for &a in &handles {
            round_trip(a, 10_000, 256);
            let mut u = null_mut();
            ok(rmm_resource_get_upstream(a, &mut u));
            let mut equal = false;
            ok(rmm_resource_is_equal(u, up, &mut equal));
            assert!(equal);
            release(u);
        }
        // A resource with no upstream: reported, `out` unchanged.
        let mut u = 0x1234 as rmm_resource_t;
        assert_eq!(
            rmm_resource_get_upstream(up, &mut u),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(u, 0x1234 as rmm_resource_t);
        assert!(last_error().contains("no upstream"), "{}", last_error());
        assert_eq!(
            rmm_resource_get_upstream(up, null_mut()),
            RMM_STATUS_INVALID_ARGUMENT
        );
    }
    // The adaptors keep the upstream alive after the caller's reference is gone.
    release(up);
    for &a in &handles {
        round_trip(a, 512, 256);
        release(a);
    }
}

#[test]
fn aligned_alignment_and_bad_alignment() {
    let up = cuda();
    // SAFETY: valid handles and out-pointers.
    unsafe {
        let mut a = null_mut();
        ok(rmm_aligned_adaptor_create(up, 65536, 4096, &mut a));
        round_trip(a, 4096, 65536);
        round_trip(a, 100_000, 65536);
        round_trip(a, 1000, 256);
        release(a);
        let mut bad = 0x99 as rmm_resource_t;
        assert_eq!(
            rmm_aligned_adaptor_create(up, 3000, 0, &mut bad),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert!(last_error().contains("3000"), "{}", last_error());
        assert_eq!(bad, 0x99 as rmm_resource_t, "out unchanged on failure");
        assert_eq!(
            rmm_aligned_adaptor_create(null_mut(), 4096, 0, &mut bad),
            RMM_STATUS_INVALID_ARGUMENT
        );
    }
    release(up);
}

#[test]
fn limiting_limit_boundary_and_accessors() {
    let up = cuda();
    // SAFETY: valid handles and out-pointers.
    unsafe {
        let mut l = null_mut();
        ok(rmm_limiting_adaptor_create(up, 1 << 20, 256, &mut l));
        let mut limit = 0;
        ok(rmm_limiting_adaptor_get_allocation_limit(l, &mut limit));
        assert_eq!(limit, 1 << 20);
        let mut p = null_mut();
        ok(rmm_allocate(l, 1 << 20, &mut p));
        let mut used = 0;
        ok(rmm_limiting_adaptor_get_allocated_bytes(l, &mut used));
        assert_eq!(used, 1 << 20);
        let mut q = null_mut();
        assert_eq!(rmm_allocate(l, 1, &mut q), RMM_STATUS_OUT_OF_MEMORY);
        assert!(q.is_null());
        let msg = last_error();
        assert!(msg.contains("1048576") && msg.contains("limit"), "{msg}");
        ok(rmm_deallocate(l, p, 1 << 20));
        ok(rmm_limiting_adaptor_get_allocated_bytes(l, &mut used));
        assert_eq!(used, 0);
        // Wrong kind of handle for the accessor.
        assert_eq!(
            rmm_limiting_adaptor_get_allocated_bytes(up, &mut used),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert!(
            last_error().contains("cuda_memory_resource"),
            "{}",
            last_error()
        );
        assert_eq!(
            rmm_limiting_adaptor_get_allocated_bytes(l, null_mut()),
            RMM_STATUS_INVALID_ARGUMENT
        );
        release(l);
        // Limit 0: nothing but empty allocations.
        ok(rmm_limiting_adaptor_create(up, 0, 256, &mut l));
        assert_eq!(rmm_allocate(l, 1, &mut q), RMM_STATUS_OUT_OF_MEMORY);
        ok(rmm_allocate(l, 0, &mut q));
        assert!(q.is_null());
        release(l);
        assert_eq!(
            rmm_limiting_adaptor_create(up, 1024, 3, &mut l),
            RMM_STATUS_INVALID_ARGUMENT
        );
    }
    release(up);
}

/// rapidsai/rmm#1957 through the C ABI: a pool with an initial size and a maximum serves a
/// request of the maximum by giving its entirely free initial chunk back to its upstream
/// (RMM 26.10); a request beyond the maximum still fails clearly and changes nothing.
#[test]
fn a_capped_pool_gives_its_free_initial_chunk_back_to_reach_its_maximum() {
    let up = cuda();
    const MIB: usize = 1 << 20;
    // SAFETY: valid handles and out-pointers throughout.
    unsafe {
        let (mut l, mut pool) = (null_mut(), null_mut());
        ok(rmm_limiting_adaptor_create(up, 64 * MIB, 256, &mut l));
        ok(rmm_pool_create(l, MIB, 4 * MIB, &mut pool));
        let used = || {
            let mut n = 0;
            ok(rmm_limiting_adaptor_get_allocated_bytes(l, &mut n));
            n
        };
        let pool_size = || {
            let mut st = rmm_pool_stats::default();
            ok(rmm_pool_get_stats(pool, &mut st));
            st.pool_size
        };
        assert_eq!(used(), MIB);
        let mut p = null_mut();
        ok(rmm_allocate(pool, 4 * MIB, &mut p));
        assert_eq!((pool_size(), used()), (4 * MIB, 4 * MIB));
        ok(rmm_deallocate(pool, p, 4 * MIB));
        let mut q = null_mut();
        assert_eq!(
            rmm_allocate(pool, 8 * MIB, &mut q),
            RMM_STATUS_OUT_OF_MEMORY
        );
        let msg = last_error();
        assert!(
            msg.contains("8388608") && msg.contains("maximum pool size exceeded"),
            "{msg}"
        );
        assert_eq!((pool_size(), used()), (4 * MIB, 4 * MIB));
        ok(rmm_allocate(pool, MIB, &mut q));
        ok(rmm_deallocate(pool, q, MIB));
        release(pool);
        assert_eq!(used(), 0);
        release(l);
    }
    release(up);
}

#[test]
fn statistics_counters_push_pop() {
    let up = cuda();
    // SAFETY: valid handles and out-pointers.
    unsafe {
        let mut s = null_mut();
        ok(rmm_statistics_adaptor_create(up, &mut s));
        let mut c = rmm_statistics_counters::default();
        assert_eq!(
            rmm_statistics_adaptor_pop_counters(s, &mut c),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert!(last_error().contains("push_counters"), "{}", last_error());
        let mut a = null_mut();
        ok(rmm_allocate(s, 1000, &mut a));
        ok(rmm_statistics_adaptor_push_counters(s, &mut c));
        assert_eq!(
            c.bytes,
            rmm_counter {
                value: 1000,
                peak: 1000,
                total: 1000
            }
        );
        let mut b = null_mut();
        ok(rmm_allocate(s, 3000, &mut b));
        ok(rmm_deallocate(s, b, 3000));
        ok(rmm_statistics_adaptor_get_counters(s, &mut c));
        assert_eq!(
            c.bytes,
            rmm_counter {
                value: 0,
                peak: 3000,
                total: 3000
            }
        );
        assert_eq!(
            c.allocations,
            rmm_counter {
                value: 0,
                peak: 1,
                total: 1
            }
        );
        ok(rmm_statistics_adaptor_pop_counters(s, null_mut()));
        ok(rmm_statistics_adaptor_get_counters(s, &mut c));
        assert_eq!(
            c.bytes,
            rmm_counter {
                value: 1000,
                peak: 4000,
                total: 4000
            }
        );
        assert_eq!(
            c.allocations,
            rmm_counter {
                value: 1,
                peak: 2,
                total: 2
            }
        );
        ok(rmm_deallocate(s, a, 1000));
        assert_eq!(
            rmm_statistics_adaptor_get_counters(s, null_mut()),
            RMM_STATUS_INVALID_ARGUMENT
        );
        release(s);
    }
    release(up);
}

#[test]
fn tracking_outstanding_set_and_string() {
    let up = cuda();
    // SAFETY: valid handles, out-pointers and buffers.
    unsafe {
        let mut t = null_mut();
        ok(rmm_tracking_adaptor_create(up, true, &mut t));
        let mut ptrs = Vec::new();
        for i in 1..=4usize {
            let mut p = null_mut();
            ok(rmm_allocate(t, i * 512, &mut p));
            ptrs.push((p, i * 512));
        }
        let (p0, b0) = ptrs.remove(0);
        ok(rmm_deallocate(t, p0, b0));
        let mut n = 0;
        ok(rmm_tracking_adaptor_get_outstanding_count(t, &mut n));
        assert_eq!(n, 3);
        let mut bytes = 0;
        ok(rmm_tracking_adaptor_get_allocated_bytes(t, &mut bytes));
        assert_eq!(bytes, 512 * (2 + 3 + 4));
        let mut got_p = [null_mut(); 8];
        let mut got_s = [0usize; 8];
        ok(rmm_tracking_adaptor_get_outstanding(
            t,
            got_p.as_mut_ptr(),
            got_s.as_mut_ptr(),
            8,
            &mut n,
        ));
        assert_eq!(n, 3);
        let mut want = ptrs.clone();
        want.sort_by_key(|w| w.0 as usize);
        for (i, (p, s)) in want.iter().enumerate() {
            assert_eq!((got_p[i], got_s[i]), (*p, *s));
        }
        // Sizing call, then the string.
        let mut needed = 0;
        ok(rmm_tracking_adaptor_outstanding_allocations_string(
            t,
            null_mut(),
            0,
            &mut needed,
        ));
        let mut buf = vec![0 as c_char; needed];
        ok(rmm_tracking_adaptor_outstanding_allocations_string(
            t,
            buf.as_mut_ptr(),
            buf.len(),
            null_mut(),
        ));
        let text = CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned();
        assert_eq!(text.len() + 1, needed);
        // RMM's format: one "<address>: <size> B" entry per allocation.
        for (p, s) in &want {
            assert!(
                text.contains(&format!("{:#x}: {} B", *p as usize, s)),
                "{text}"
            );
        }
        // Truncation keeps the NUL.
        let mut small = [1 as c_char; 8];
        ok(rmm_tracking_adaptor_outstanding_allocations_string(
            t,
            small.as_mut_ptr(),
            8,
            null_mut(),
        ));
        assert_eq!(small[7], 0);
        // A stack for each outstanding allocation.
        ok(rmm_tracking_adaptor_allocation_stack(
            t,
            ptrs[0].0,
            null_mut(),
            0,
            &mut needed,
        ));
        assert!(needed > 1);
        assert_eq!(
            rmm_tracking_adaptor_allocation_stack(t, p0, null_mut(), 0, &mut needed),
            RMM_STATUS_INVALID_ARGUMENT
        );
        ok(rmm_tracking_adaptor_log_outstanding_allocations(t));
        // Foreign pointer: reported, nothing changes.
        assert_eq!(
            rmm_deallocate(t, 0x1000 as *mut c_void, 256),
            RMM_STATUS_INVALID_ARGUMENT
        );
        for (p, s) in ptrs {
            ok(rmm_deallocate(t, p, s));
        }
        ok(rmm_tracking_adaptor_get_outstanding_count(t, &mut n));
        assert_eq!(n, 0);
        release(t);
    }
    release(up);
}

static CALLS: AtomicUsize = AtomicUsize::new(0);

extern "C" fn retry_twice(bytes: usize, arg: *mut c_void) -> bool {
    assert_eq!(bytes, 4096);
    assert_eq!(arg as usize, 0xabc);
    CALLS.fetch_add(1, Ordering::SeqCst) < 2
}

#[test]
fn failure_callback_retries_while_true() {
    let up = cuda();
    // SAFETY: valid handles and out-pointers; the callback is a plain function.
    unsafe {
        let mut l = null_mut();
        ok(rmm_limiting_adaptor_create(up, 1024, 256, &mut l));
        let mut f = null_mut();
        ok(rmm_failure_callback_adaptor_create(
            l,
            Some(retry_twice),
            0xabc as *mut c_void,
            &mut f,
        ));
        let mut p = null_mut();
        assert_eq!(rmm_allocate(f, 4096, &mut p), RMM_STATUS_OUT_OF_MEMORY);
        assert_eq!(CALLS.load(Ordering::SeqCst), 3);
        round_trip(f, 1024, 256);
        assert_eq!(CALLS.load(Ordering::SeqCst), 3);
        let mut bad = null_mut();
        assert_eq!(
            rmm_failure_callback_adaptor_create(l, None, null_mut(), &mut bad),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert!(last_error().contains("callback"), "{}", last_error());
        assert!(bad.is_null());
        // `_ex` with flag 0 is the same adaptor; an unknown flag is refused.
        CALLS.store(0, Ordering::SeqCst);
        let mut g = null_mut();
        ok(rmm_failure_callback_adaptor_create_ex(
            l,
            Some(retry_twice),
            0xabc as *mut c_void,
            0,
            &mut g,
        ));
        assert_eq!(rmm_allocate(g, 4096, &mut p), RMM_STATUS_OUT_OF_MEMORY);
        assert_eq!(CALLS.load(Ordering::SeqCst), 3);
        CALLS.store(0, Ordering::SeqCst);
        let mut h = null_mut();
        ok(rmm_failure_callback_adaptor_create_ex(
            l,
            Some(retry_twice),
            0xabc as *mut c_void,
            RMM_FAILURE_CALLBACK_RETRY_BAD_ALLOC,
            &mut h,
        ));
        assert_eq!(rmm_allocate(h, 4096, &mut p), RMM_STATUS_OUT_OF_MEMORY);
        assert_eq!(CALLS.load(Ordering::SeqCst), 3);
        assert_eq!(
            rmm_failure_callback_adaptor_create_ex(l, Some(retry_twice), null_mut(), 6, &mut bad),
            RMM_STATUS_INVALID_ARGUMENT
        );
        assert!(last_error().contains("flags"), "{}", last_error());
        assert!(bad.is_null());
        release(h);
        release(g);
        release(f);
        release(l);
    }
    release(up);
}

#[test]
fn thread_safe_and_prefetch_from_threads() {
    let up = cuda();
    let mut ts = null_mut();
    let mut pf = null_mut();
    // SAFETY: valid handles and out-pointers.
    unsafe {
        ok(rmm_thread_safe_adaptor_create(up, &mut ts));
        ok(rmm_prefetch_adaptor_create(ts, &mut pf));
    }
    let h = pf as usize;
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(move || {
                for i in 1..20 {
                    round_trip(h as rmm_resource_t, i * 300, 256);
                }
            });
        }
    });
    release(pf);
    release(ts);
    release(up);
}
