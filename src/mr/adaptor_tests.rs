//! Tests of the resource adaptors on the process's runtime (the host emulation unless
//! `RMM_RUNTIME` says otherwise).

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::*;
use crate::runtime::{runtime, Stream};

const S: Stream = Stream::DEFAULT;

fn cuda() -> SharedResource {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("RMM_RUNTIME").is_none() {
            std::env::set_var("RMM_RUNTIME", "host");
        }
    });
    runtime().expect("a runtime for tests");
    Arc::new(CudaMemoryResource::new().unwrap())
}

fn same(a: &SharedResource, b: &SharedResource) -> bool {
    std::ptr::addr_eq(Arc::as_ptr(a), Arc::as_ptr(b))
}

#[test]
fn every_adaptor_exposes_its_upstream() {
    let up = cuda();
    let cb: FailureCallback = Arc::new(|_| false);
    let adaptors: Vec<SharedResource> = vec![
        Arc::new(AlignedResourceAdaptor::new(up.clone(), 4096, 0).unwrap()),
        Arc::new(LimitingResourceAdaptor::new(up.clone(), 1 << 20, 256).unwrap()),
        Arc::new(StatisticsResourceAdaptor::new(up.clone())),
        Arc::new(TrackingResourceAdaptor::new(up.clone(), false)),
        Arc::new(FailureCallbackResourceAdaptor::new(up.clone(), cb)),
        Arc::new(ThreadSafeResourceAdaptor::new(up.clone())),
        Arc::new(PrefetchResourceAdaptor::new(up.clone()).unwrap()),
        Arc::new(PoolMemoryResource::new(up.clone(), 0, None).unwrap()),
    ];
    for a in &adaptors {
        assert!(same(&a.upstream().unwrap(), &up), "{}", a.name());
        let p = a.allocate(1000, S).unwrap();
        assert_eq!(p as usize % ALLOCATION_ALIGNMENT, 0, "{}", a.name());
        a.deallocate(p, 1000, S).unwrap();
        assert!(a.allocate(0, S).unwrap().is_null(), "{}", a.name());
        a.deallocate(std::ptr::null_mut(), 0, S).unwrap();
    }
    assert!(up.upstream().is_none());
}

#[test]
fn aligned_several_alignments_and_thresholds() {
    let up = Arc::new(StatisticsResourceAdaptor::new(cuda()));
    for &alignment in &[256usize, 512, 4096, 65536, 1 << 21] {
        for &threshold in &[0usize, 1024, 1 << 20] {
            let a = AlignedResourceAdaptor::new(up.clone(), alignment, threshold).unwrap();
            let mut live = Vec::new();
            for &bytes in &[1usize, 300, 1024, 5000, 1 << 20, 3 << 20] {
                for _ in 0..3 {
                    let p = a.allocate(bytes, S).unwrap();
                    let want = if bytes >= threshold { alignment } else { 256 };
                    assert_eq!(p as usize % want, 0, "{alignment}/{threshold}/{bytes}");
                    live.push((p, bytes));
                }
            }
            let set: HashSet<usize> = live.iter().map(|l| l.0 as usize).collect();
            assert_eq!(set.len(), live.len());
            for (p, b) in live {
                a.deallocate(p, b, S).unwrap();
            }
            assert_eq!(a.shifted_count(), 0);
            assert_eq!(up.bytes_counter().value, 0, "all back upstream");
        }
    }
}

#[test]
fn aligned_rejects_bad_alignment_naming_it() {
    for bad in [0usize, 3, 128, 1000, 4097] {
        let e = AlignedResourceAdaptor::new(cuda(), bad, 0).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)));
        assert!(e.to_string().contains(&bad.to_string()), "{e}");
    }
}

#[test]
fn limiting_exact_limit_and_boundary() {
    let l = LimitingResourceAdaptor::new(cuda(), 4096, 256).unwrap();
    assert_eq!(l.allocation_limit(), 4096);
    let a = l.allocate(4000, S).unwrap(); // counted as 4096
    assert_eq!(l.allocated_bytes(), 4096);
    let e = l.allocate(1, S).unwrap_err();
    assert!(matches!(e, Error::OutOfMemory { .. }));
    let msg = e.to_string();
    assert!(msg.contains("4096") && msg.contains("1 bytes"), "{msg}");
    assert_eq!(l.allocated_bytes(), 4096, "a failure changes nothing");
    l.deallocate(a, 4000, S).unwrap();
    assert_eq!(l.allocated_bytes(), 0);
    // Exactly at the limit succeeds, one granule more fails.
    let b = l.allocate(2048, S).unwrap();
    let c = l.allocate(2048, S).unwrap();
    assert!(l.allocate(256, S).is_err());
    l.deallocate(b, 2048, S).unwrap();
    l.deallocate(c, 2048, S).unwrap();
    assert!(l.allocate(4097, S).is_err());
    assert_eq!(l.allocated_bytes(), 0);
    // A deallocation larger than what is allocated is refused.
    assert!(matches!(
        l.deallocate(0x1000 as *mut _, 256, S),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn limiting_zero_limit_allows_only_empty_and_alignment_checked() {
    let l = LimitingResourceAdaptor::new(cuda(), 0, 256).unwrap();
    assert!(l.allocate(0, S).unwrap().is_null());
    assert!(matches!(l.allocate(1, S), Err(Error::OutOfMemory { .. })));
    let e = LimitingResourceAdaptor::new(cuda(), 1 << 20, 100).unwrap_err();
    assert!(e.to_string().contains("100"), "{e}");
}

#[test]
fn limiting_concurrent_never_exceeds() {
    let l = Arc::new(LimitingResourceAdaptor::new(cuda(), 64 * 256, 256).unwrap());
    let ok = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                let mut mine = Vec::new();
                for _ in 0..16 {
                    if let Ok(p) = l.allocate(256, S) {
                        mine.push(p);
                        ok.fetch_add(1, Ordering::Relaxed);
                    }
                }
                assert!(l.allocated_bytes() <= 64 * 256);
                std::thread::sleep(std::time::Duration::from_millis(20));
                for p in mine {
                    l.deallocate(p, 256, S).unwrap();
                }
            });
        }
    });
    assert!(ok.load(Ordering::Relaxed) >= 64);
    assert_eq!(l.allocated_bytes(), 0);
}

#[test]
fn statistics_exact_under_8_threads() {
    let st = Arc::new(StatisticsResourceAdaptor::new(cuda()));
    let barrier = std::sync::Barrier::new(8);
    std::thread::scope(|s| {
        for t in 0..8usize {
            let st = &st;
            let barrier = &barrier;
            s.spawn(move || {
                let mut ptrs = Vec::new();
                for i in 0..100usize {
                    let b = 256 * (1 + (t + i) % 4);
                    ptrs.push((st.allocate(b, S).unwrap(), b));
                }
                barrier.wait();
                // Everything is allocated at this point: value == peak.
                barrier.wait();
                for (p, b) in ptrs {
                    st.deallocate(p, b, S).unwrap();
                }
            });
        }
    });
    let expected_total: i64 = (0..8usize)
        .flat_map(|t| (0..100usize).map(move |i| 256 * (1 + (t + i) % 4) as i64))
        .sum();
    let (bytes, allocs) = st.counters();
    assert_eq!(
        bytes,
        Counter {
            value: 0,
            peak: expected_total,
            total: expected_total
        }
    );
    assert_eq!(
        allocs,
        Counter {
            value: 0,
            peak: 800,
            total: 800
        }
    );
}

#[test]
fn statistics_push_pop_and_pop_without_push() {
    let st = StatisticsResourceAdaptor::new(cuda());
    let e = st.pop_counters().unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    let a = st.allocate(1000, S).unwrap();
    let outer = st.push_counters();
    assert_eq!(
        outer.0,
        Counter {
            value: 1000,
            peak: 1000,
            total: 1000
        }
    );
    assert_eq!(st.bytes_counter(), Counter::default());
    assert_eq!(st.depth(), 1);
    let b = st.allocate(500, S).unwrap();
    let c = st.allocate(300, S).unwrap();
    st.deallocate(c, 300, S).unwrap();
    let inner = st.pop_counters().unwrap();
    assert_eq!(
        inner.0,
        Counter {
            value: 500,
            peak: 800,
            total: 800
        }
    );
    assert_eq!(
        inner.1,
        Counter {
            value: 1,
            peak: 2,
            total: 2
        }
    );
    assert_eq!(
        st.bytes_counter(),
        Counter {
            value: 1500,
            peak: 1800,
            total: 1800
        }
    );
    assert_eq!(
        st.allocations_counter(),
        Counter {
            value: 2,
            peak: 3,
            total: 3
        }
    );
    st.deallocate(a, 1000, S).unwrap();
    st.deallocate(b, 500, S).unwrap();
    assert_eq!(st.bytes_counter().value, 0);
    assert!(st.pop_counters().is_err());
}

#[test]
fn tracking_lists_exactly_the_outstanding_set() {
    let t = TrackingResourceAdaptor::new(cuda(), false);
    let mut live = Vec::new();
    for i in 1..=10usize {
        live.push((t.allocate(i * 1000, S).unwrap(), i * 1000));
    }
    for (p, b) in live.drain(..5) {
        t.deallocate(p, b, S).unwrap();
    }
    let out = t.outstanding_allocations();
    assert_eq!(out.len(), 5);
    for (p, b) in &live {
        assert_eq!(out[p].size, *b);
        assert!(out[p].stack.is_none());
    }
    assert_eq!(
        t.allocated_bytes(),
        (6..=10).map(|i| i * 1000).sum::<usize>()
    );
    let report = t.outstanding_allocations_str();
    assert_eq!(report.lines().count(), 5, "{report}");
    assert!(
        report.contains(&format!("{:#x}: 6000 B\n", live[0].0 as usize)),
        "{report}"
    );
    t.log_outstanding_allocations();
    // A wrong size is logged and forwarded; the count uses the recorded size (as RMM).
    let (p0, _) = live.remove(0);
    t.deallocate(p0, 1, S).unwrap();
    assert_eq!(t.outstanding_count(), 4);
    assert_eq!(
        t.allocated_bytes(),
        (7..=10).map(|i| i * 1000).sum::<usize>()
    );
    // A pointer the upstream does not know either: the upstream's error, nothing changes.
    assert!(matches!(
        t.deallocate(0x100 as *mut _, 1, S),
        Err(Error::InvalidArgument(_))
    ));
    assert_eq!(t.outstanding_count(), 4);
    for (p, b) in live {
        t.deallocate(p, b, S).unwrap();
    }
    assert_eq!(t.outstanding_count(), 0);
    assert_eq!(t.allocated_bytes(), 0);
    // RMM's report is empty when nothing is outstanding.
    assert_eq!(t.outstanding_allocations_str(), "");
}

#[test]
fn tracking_captures_stacks_when_asked() {
    let t = TrackingResourceAdaptor::new(cuda(), true);
    let p = t.allocate(256, S).unwrap();
    let out = t.outstanding_allocations();
    let stack = out[&p].stack.clone().expect("a stack");
    assert!(!stack.is_empty());
    let report = t.outstanding_allocations_str();
    assert!(
        report.starts_with(&format!("{:#x}: 256 B : callstack:\n", p as usize)),
        "{report}"
    );
    assert!(report.len() > 40, "{report}");
    t.deallocate(p, 256, S).unwrap();
    assert_eq!(t.outstanding_allocations_str(), "");
}

#[test]
fn failure_callback_retries_while_true() {
    let limited: SharedResource =
        Arc::new(LimitingResourceAdaptor::new(cuda(), 1024, 256).unwrap());
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    let cb: FailureCallback = Arc::new(move |bytes| {
        assert_eq!(bytes, 2048);
        c.fetch_add(1, Ordering::SeqCst) < 3
    });
    let f = FailureCallbackResourceAdaptor::new(limited.clone(), cb);
    let e = f.allocate(2048, S).unwrap_err();
    assert!(matches!(e, Error::OutOfMemory { .. }));
    assert_eq!(
        calls.load(Ordering::SeqCst),
        4,
        "three retries, then the fourth call says no"
    );
    // Success makes no call.
    let p = f.allocate(512, S).unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 4);
    f.deallocate(p, 512, S).unwrap();
}

#[test]
fn failure_callback_can_free_memory_and_succeed() {
    let limited = Arc::new(LimitingResourceAdaptor::new(cuda(), 1024, 256).unwrap());
    let hog = limited.allocate(1024, S).unwrap() as usize;
    let l2 = limited.clone();
    let freed = Arc::new(parking_lot::Mutex::new(Some(hog)));
    let fr = freed.clone();
    let cb: FailureCallback = Arc::new(move |_| match fr.lock().take() {
        Some(p) => {
            l2.deallocate(p as *mut _, 1024, S).unwrap();
            true
        }
        None => false,
    });
    let f = FailureCallbackResourceAdaptor::new(limited.clone(), cb);
    let p = f.allocate(512, S).unwrap();
    assert!(freed.lock().is_none());
    f.deallocate(p, 512, S).unwrap();
}

#[test]
fn thread_safe_and_prefetch_under_threads() {
    let ts: SharedResource = Arc::new(ThreadSafeResourceAdaptor::new(cuda()));
    let pf: SharedResource = Arc::new(PrefetchResourceAdaptor::new(ts.clone()).unwrap());
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                for i in 1..50usize {
                    let p = pf.allocate(i * 256, S).unwrap();
                    pf.deallocate(p, i * 256, S).unwrap();
                }
            });
        }
    });
    // Prefetch of managed memory is a real prefetch.
    let managed: SharedResource = Arc::new(ManagedMemoryResource::new().unwrap());
    let pm = PrefetchResourceAdaptor::new(managed).unwrap();
    let p = pm.allocate(1 << 16, S).unwrap();
    pm.deallocate(p, 1 << 16, S).unwrap();
}

#[test]
fn adaptors_over_equal_upstreams_are_equal() {
    // Each entry builds an adaptor of one type over the given upstream (as RMM's
    // adaptor_tests `Equality`).
    type Make = fn(SharedResource) -> SharedResource;
    let makers: Vec<Make> = vec![
        |u| Arc::new(AlignedResourceAdaptor::new(u, 4096, 0).unwrap()),
        |u| Arc::new(LimitingResourceAdaptor::new(u, 1 << 20, 256).unwrap()),
        |u| Arc::new(StatisticsResourceAdaptor::new(u)),
        |u| Arc::new(TrackingResourceAdaptor::new(u, false)),
        |u| Arc::new(FailureCallbackResourceAdaptor::new(u, Arc::new(|_| false))),
        |u| Arc::new(ThreadSafeResourceAdaptor::new(u)),
        |u| Arc::new(PrefetchResourceAdaptor::new(u).unwrap()),
        |u| {
            Arc::new(
                LoggingResourceAdaptor::with_writer(u, Box::new(std::io::sink()), false).unwrap(),
            )
        },
    ];
    let up = cuda();
    let other_up = cuda(); // another cuda resource: equal to `up`
    let unequal_up: SharedResource = Arc::new(StatisticsResourceAdaptor::new(cuda()));
    for (i, make) in makers.iter().enumerate() {
        let a = make(up.clone());
        assert!(a.is_equal(a.as_ref()), "{}", a.name());
        assert!(a.is_equal(make(up.clone()).as_ref()), "{}", a.name());
        assert!(a.is_equal(make(other_up.clone()).as_ref()), "{}", a.name());
        assert!(
            !a.is_equal(make(unequal_up.clone()).as_ref()),
            "{}",
            a.name()
        );
        assert!(!a.is_equal(up.as_ref()), "{}", a.name());
        for (j, other) in makers.iter().enumerate() {
            if i != j {
                let b = other(up.clone());
                assert!(!a.is_equal(b.as_ref()), "{} vs {}", a.name(), b.name());
            }
        }
    }
    // The aligned adaptor also compares its alignment and threshold.
    let a = AlignedResourceAdaptor::new(up.clone(), 4096, 0).unwrap();
    assert!(a.is_equal(&AlignedResourceAdaptor::new(other_up.clone(), 4096, 0).unwrap()));
    assert!(!a.is_equal(&AlignedResourceAdaptor::new(up.clone(), 512, 0).unwrap()));
    assert!(!a.is_equal(&AlignedResourceAdaptor::new(up.clone(), 4096, 1024).unwrap()));
    // Equality follows the whole chain.
    let s1: SharedResource = Arc::new(StatisticsResourceAdaptor::new(up.clone()));
    let s2: SharedResource = Arc::new(StatisticsResourceAdaptor::new(other_up.clone()));
    assert!(ThreadSafeResourceAdaptor::new(s1).is_equal(&ThreadSafeResourceAdaptor::new(s2)));
}

#[test]
fn failure_callback_catch_set_follows_retry_on() {
    // An upstream failing every allocation with the error `fail(bytes)` makes.
    fn failing(fail: fn(usize) -> Error) -> SharedResource {
        Arc::new(CallbackMemoryResource::new(
            Box::new(move |bytes, _| Err(fail(bytes))),
            Box::new(|_, _, _| Ok(())),
            0,
        ))
    }
    let bad_alloc = failing(|requested| Error::BadAlloc {
        requested,
        resource: "test",
        detail: "foo".into(),
    });
    let oom = failing(|requested| Error::OutOfMemory {
        requested,
        resource: "test",
        device: 0,
        detail: "foo".into(),
    });
    let invalid = failing(|_| Error::invalid("foo"));
    // (upstream, retry_on, callback calls expected: one retry then no, or none)
    let cases = [
        (&bad_alloc, RetryOn::BadAlloc, 2),
        (&oom, RetryOn::BadAlloc, 2),
        (&invalid, RetryOn::BadAlloc, 0),
        (&oom, RetryOn::OutOfMemory, 2),
        (&bad_alloc, RetryOn::OutOfMemory, 0),
        (&invalid, RetryOn::OutOfMemory, 0),
    ];
    for (up, retry_on, expected) in cases {
        let calls = Arc::new(AtomicUsize::new(0));
        let c = calls.clone();
        let cb: FailureCallback = Arc::new(move |_| c.fetch_add(1, Ordering::SeqCst) == 0);
        let f = FailureCallbackResourceAdaptor::with_retry_on(up.clone(), cb, retry_on);
        assert_eq!(f.retry_on(), retry_on);
        let want = up.allocate(1 << 20, S).unwrap_err();
        let got = f.allocate(1 << 20, S).unwrap_err();
        assert_eq!(
            std::mem::discriminant(&got),
            std::mem::discriminant(&want),
            "{retry_on:?}: the upstream's error comes back unchanged: {got}"
        );
        assert_eq!(
            calls.load(Ordering::SeqCst),
            expected,
            "{retry_on:?}: {want}"
        );
    }
    assert_eq!(
        FailureCallbackResourceAdaptor::new(oom, Arc::new(|_| false)).retry_on(),
        RetryOn::OutOfMemory
    );
}

/// RMM's `NegativeInnerTracking` and `DeallocWrongBytes`: the tracking adaptor only
/// observes. Pointers it never saw are freed upstream; wrong sizes go upstream as given.
#[test]
fn tracking_forwards_untracked_pointers_and_wrong_sizes() {
    let stats = Arc::new(StatisticsResourceAdaptor::new(cuda()));
    let outer = Arc::new(TrackingResourceAdaptor::new(stats.clone(), false));
    let inner = TrackingResourceAdaptor::new(outer.clone(), false);
    let mut ptrs: Vec<_> = (0..3)
        .map(|_| outer.allocate(10 << 20, S).unwrap())
        .collect();
    ptrs.extend((0..2).map(|_| inner.allocate(10 << 20, S).unwrap()));
    assert_eq!(outer.outstanding_count(), 5);
    assert_eq!(inner.outstanding_count(), 2);
    // All freed through the inner adaptor, which knows only two of them.
    for &p in &ptrs {
        inner.deallocate(p, 10 << 20, S).unwrap();
    }
    assert_eq!(inner.outstanding_count(), 0);
    assert_eq!(inner.allocated_bytes(), 0);
    assert_eq!(outer.outstanding_count(), 0);
    assert_eq!(outer.allocated_bytes(), 0);
    assert_eq!(
        stats.bytes_counter().value,
        0,
        "everything reached the upstream"
    );

    // Wrong sizes: forwarded as given, counted with the recorded size.
    let ptrs: Vec<_> = (0..3)
        .map(|_| outer.allocate(10 << 20, S).unwrap())
        .collect();
    for &p in &ptrs {
        outer.deallocate(p, 5 << 20, S).unwrap();
    }
    assert_eq!(outer.outstanding_count(), 0);
    assert_eq!(outer.allocated_bytes(), 0);
    assert_eq!(stats.allocations_counter().value, 0);
}
