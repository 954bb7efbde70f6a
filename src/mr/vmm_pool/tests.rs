//! Tests of the pool on virtual memory, on the process's runtime (the host emulation unless
//! `RMM_RUNTIME` says otherwise, so they run on a GPU too).

use std::ffi::c_void;

use super::*;
use crate::mr::tests::init;
use crate::mr::CudaMemoryResource;

/// A pool with a small reservation; `None` where the device has no virtual memory.
fn pool(initial: usize, maximum: Option<usize>, reserved: usize) -> Option<VmmPoolMemoryResource> {
    init();
    match VmmPoolMemoryResource::new(VmmPoolOptions {
        initial_pool_size: initial,
        maximum_pool_size: maximum,
        reserved_size: Some(reserved),
        ..VmmPoolOptions::default()
    }) {
        Ok(p) => Some(p),
        Err(Error::Unsupported(why)) => {
            eprintln!("skipped: {why}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

/// A pool with a release threshold of `threshold(granule)` and its granule; `None` where
/// the device has no virtual memory.
fn pool_with_threshold(
    reserved: usize,
    threshold: impl FnOnce(usize) -> usize,
) -> Option<(VmmPoolMemoryResource, usize)> {
    let g = pool(0, None, 64 << 20)?.granularity();
    let p = VmmPoolMemoryResource::new(VmmPoolOptions {
        reserved_size: Some(reserved),
        release_threshold: Some(threshold(g)),
        ..VmmPoolOptions::default()
    })
    .unwrap();
    Some((p, g))
}

/// Fills `bytes` at `p` with `value` and checks a few bytes of it through the runtime.
fn fill_and_check(p: *mut c_void, bytes: usize, value: u8) {
    let rt = init();
    // SAFETY: `p` is a live allocation of at least `bytes`.
    unsafe { rt.memset_async(p, value, bytes, Stream::DEFAULT).unwrap() };
    for at in [0, bytes / 2, bytes - 1] {
        let mut b = 0u8;
        // SAFETY: one byte inside the allocation into a local; synchronized below.
        unsafe {
            rt.memcpy_async(
                (&mut b as *mut u8).cast(),
                (p as *const u8).add(at).cast(),
                1,
                Stream::DEFAULT,
            )
            .unwrap()
        };
        rt.stream_synchronize(Stream::DEFAULT).unwrap();
        assert_eq!(b, value, "byte {at} of {p:p}");
    }
}

#[test]
fn grows_in_place_so_free_memory_across_growths_merges() {
    // rapidsai/rmm#1957: initial 256 and maximum 1024 must serve allocate(1024).
    let Some(p) = pool(0, None, 64 << 20) else {
        return;
    };
    let g = p.granularity();
    let small = p.allocate(g, Stream::DEFAULT).unwrap();
    let one = p.pool_size();
    let big = p.allocate(4 * g, Stream::DEFAULT).unwrap();
    assert_eq!(
        big as usize,
        small as usize + g,
        "new memory lands right after the old"
    );
    p.deallocate(small, g, Stream::DEFAULT).unwrap();
    p.deallocate(big, 4 * g, Stream::DEFAULT).unwrap();
    assert!(one <= p.pool_size());
    // Everything free is one block, across both growths.
    assert_eq!(p.largest_free_block(), p.bytes_free());
    assert_eq!(p.fragmentation(), 0.0);

    let Some(q) = pool(g, Some(4 * g), 64 << 20) else {
        return;
    };
    let all = q.allocate(4 * g, Stream::DEFAULT).unwrap();
    assert_eq!(q.pool_size(), 4 * g);
    fill_and_check(all, 4 * g, 0x5a);
    q.deallocate(all, 4 * g, Stream::DEFAULT).unwrap();
}

#[test]
fn two_streams_free_memory_merges_where_the_chunked_pool_fails() {
    // rapidsai/rmm#2039: two streams, alternating frees; the last request fits only if the
    // free memory of both streams (and of every growth) merges. The first block stays
    // live, so the chunked pool cannot make room by giving entirely free chunks back.
    let rt = init();
    let Some(v) = pool(0, Some(8 << 20), 64 << 20) else {
        return;
    };
    let g = v.granularity();
    let max = 4 * g;
    let v = pool(0, Some(max), 64 << 20).unwrap();
    let chunked = PoolMemoryResource::new(
        std::sync::Arc::new(CudaMemoryResource::new().unwrap()),
        0,
        Some(max),
    )
    .unwrap();
    let s1 = rt.stream_create(Default::default()).unwrap();
    let s2 = rt.stream_create(Default::default()).unwrap();
    let run = |r: &dyn DeviceMemoryResource| -> Result<()> {
        let streams = [s1, s2, s1, s2];
        let blocks: Vec<_> = streams.iter().map(|&s| r.allocate(g, s).unwrap()).collect();
        for (b, &s) in blocks.iter().zip(&streams).skip(1) {
            r.deallocate(*b, g, s)?;
        }
        let rest = r.allocate(max - g, s1);
        r.deallocate(blocks[0], g, s1)?;
        r.deallocate(rest?, max - g, s1)
    };
    assert!(
        matches!(run(&chunked), Err(Error::OutOfMemory { .. })),
        "the chunked pool cannot merge its chunks"
    );
    run(&v).unwrap();
    drop(chunked);
    rt.stream_synchronize(s1).unwrap();
    rt.stream_synchronize(s2).unwrap();
    rt.stream_destroy(s1).unwrap();
    rt.stream_destroy(s2).unwrap();
}

#[test]
fn release_unmaps_free_granules_while_blocks_around_them_live() {
    init();
    let Some(p) = pool(0, None, 256 << 20) else {
        return;
    };
    let g = p.granularity();
    // 40 blocks of 1.5 granules: most granules hold parts of two blocks.
    let size = g + g / 2;
    let blocks: Vec<_> = (0..40)
        .map(|_| p.allocate(size, Stream::DEFAULT).unwrap())
        .collect();
    let grown = p.pool_size();
    assert!(grown >= 40 * size);
    // Keep every tenth block, free the rest.
    let mut kept = Vec::new();
    for (k, b) in blocks.into_iter().enumerate() {
        if k % 10 == 0 {
            fill_and_check(b, size, k as u8);
            kept.push((k, b));
        } else {
            p.deallocate(b, size, Stream::DEFAULT).unwrap();
        }
    }
    // (That the device gets the memory back is tests/vmm_release_device_memory.rs: the
    // device's free memory is process-wide, and other unit tests allocate in parallel.)
    let released = p.release().unwrap();
    // What stays mapped: the granules the survivors touch (at most 3 each).
    assert!(
        p.pool_size() <= kept.len() * 3 * g,
        "{} mapped",
        p.pool_size()
    );
    assert_eq!(grown - p.pool_size(), released);
    // The survivors are intact; the freed space is usable again, in place.
    for &(k, b) in &kept {
        fill_and_check(b, size, (k as u8) ^ 0xff);
    }
    let again = p.allocate(8 * g, Stream::DEFAULT).unwrap();
    fill_and_check(again, 8 * g, 3);
    p.deallocate(again, 8 * g, Stream::DEFAULT).unwrap();
    for (_, b) in kept {
        p.deallocate(b, size, Stream::DEFAULT).unwrap();
    }
    p.release().unwrap();
    assert_eq!(p.pool_size(), 0);
}

#[test]
fn release_threshold_shrinks_the_pool_after_frees() {
    let Some((p, g)) = pool_with_threshold(256 << 20, |g| 2 * g) else {
        return;
    };
    // A stream of its own: other tests' work on the default stream must not keep it busy
    // (only idle streams' memory is unmapped by the threshold).
    let rt = init();
    let s = rt.stream_create(Default::default()).unwrap();
    // Tracked, as rmm's own streams are: a free on a foreign stream records an event there,
    // which keeps it busy for a moment.
    crate::mr::stream_created(s).unwrap();
    let blocks: Vec<_> = (0..16).map(|_| p.allocate(2 * g, s).unwrap()).collect();
    rt.stream_synchronize(s).unwrap();
    for b in blocks {
        p.deallocate(b, 2 * g, s).unwrap();
    }
    assert!(
        p.pool_size() <= 3 * g + 2 * g,
        "{} still mapped",
        p.pool_size()
    );
    crate::mr::stream_destroyed(s).unwrap();
    rt.stream_destroy(s).unwrap();
}

#[test]
fn bad_input_gets_clear_errors_and_changes_nothing() {
    let Some(probe) = pool(0, None, 64 << 20) else {
        return;
    };
    let g = probe.granularity();
    let err = |o: VmmPoolOptions| VmmPoolMemoryResource::new(o).unwrap_err().to_string();
    let e = err(VmmPoolOptions {
        granularity: Some(g + 256),
        ..VmmPoolOptions::default()
    });
    assert!(e.contains("granularity") && e.contains("multiple"), "{e}");
    let e = err(VmmPoolOptions {
        maximum_pool_size: Some(64 * g),
        reserved_size: Some(8 * g),
        ..VmmPoolOptions::default()
    });
    assert!(e.contains("reserved_size"), "{e}");
    let e = err(VmmPoolOptions {
        initial_pool_size: 4 * g,
        maximum_pool_size: Some(2 * g),
        reserved_size: Some(8 * g),
        ..VmmPoolOptions::default()
    });
    assert!(e.contains("initial_pool_size"), "{e}");
    let e = err(VmmPoolOptions {
        peer_devices: vec![999],
        ..VmmPoolOptions::default()
    });
    assert!(e.contains("peer device 999"), "{e}");

    // Beyond the maximum: out of memory naming the size, and nothing changed.
    let p = pool(0, Some(2 * g), 16 * g).unwrap();
    let a = p.allocate(g, Stream::DEFAULT).unwrap();
    let size = p.pool_size();
    match p.allocate(3 * g, Stream::DEFAULT).unwrap_err() {
        Error::OutOfMemory { requested, .. } => assert_eq!(requested, 3 * g),
        e => panic!("{e}"),
    }
    assert_eq!(p.pool_size(), size);
    // Foreign, double and wrong-size frees.
    let mut local = 0u64;
    assert!(p
        .deallocate((&mut local as *mut u64).cast(), 8, Stream::DEFAULT)
        .is_err());
    assert!(p.deallocate(a, 2 * g, Stream::DEFAULT).is_err());
    p.deallocate(a, g, Stream::DEFAULT).unwrap();
    assert!(p.deallocate(a, g, Stream::DEFAULT).is_err());
    // The space refuses ranges that are not whole mapped granules of its reservation.
    let space = VirtualSpace::new(init(), 0, 4 * g, g, &[]).unwrap();
    assert!(space.allocate(g / 2, Stream::DEFAULT).is_err());
    assert!(space
        .deallocate(space.base as *mut c_void, g, Stream::DEFAULT)
        .is_err());
    assert!(space.allocate(5 * g, Stream::DEFAULT).is_err());
    let m = space.allocate(4 * g, Stream::DEFAULT).unwrap();
    assert_eq!(space.mapped(), 4 * g);
    assert!(space
        .deallocate((m as usize + 256) as *mut c_void, g, Stream::DEFAULT)
        .is_err());
    space.deallocate(m, 4 * g, Stream::DEFAULT).unwrap();
    assert_eq!(space.mapped(), 0);
}

#[test]
fn many_threads_and_streams_keep_memory_intact() {
    let rt = init();
    let Some(p) = pool(0, None, 512 << 20) else {
        return;
    };
    let p = std::sync::Arc::new(p);
    let threads: Vec<_> = (0..4u8)
        .map(|t| {
            let p = p.clone();
            std::thread::spawn(move || {
                let s = rt.stream_create(Default::default()).unwrap();
                let mut live = Vec::new();
                for k in 0..400usize {
                    let bytes = 256 << ((k * 7 + t as usize) % 13);
                    live.push((p.allocate(bytes, s).unwrap(), bytes));
                    if k % 3 == 0 {
                        let (q, b) = live.swap_remove((k * 31) % live.len());
                        p.deallocate(q, b, s).unwrap();
                    }
                    if k % 97 == 0 {
                        p.release().unwrap();
                    }
                }
                for (q, b) in &live {
                    fill_and_check(*q, *b, t);
                }
                for (q, b) in live {
                    p.deallocate(q, b, s).unwrap();
                }
                rt.stream_synchronize(s).unwrap();
                p.forget_stream(s).unwrap();
                rt.stream_destroy(s).unwrap();
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    p.release().unwrap();
    assert_eq!(p.pool_size(), 0);
}

#[test]
fn grows_on_demand_without_a_maximum() {
    // A small request maps what the pool's growth rule asks, not the reservation.
    let Some(p) = pool(0, None, 1 << 30) else {
        return;
    };
    let a = p.allocate(3 << 20, Stream::DEFAULT).unwrap();
    assert!(
        p.pool_size() <= 8 << 20,
        "{} mapped for 3 MiB",
        p.pool_size()
    );
    p.deallocate(a, 3 << 20, Stream::DEFAULT).unwrap();
    // Filling the reservation ends in out of memory, not in a crash.
    let mut live = Vec::new();
    let err = loop {
        match p.allocate(64 << 20, Stream::DEFAULT) {
            Ok(q) => live.push(q),
            Err(e) => break e,
        }
    };
    assert!(matches!(err, Error::OutOfMemory { .. }), "{err}");
    assert!(p.pool_size() <= p.reserved_size());
    for q in live {
        p.deallocate(q, 64 << 20, Stream::DEFAULT).unwrap();
    }
}

#[test]
fn absurd_sizes_with_a_free_tail_are_out_of_memory_and_change_nothing() {
    // Found by the C-ABI fuzzer: the in-place growth's maximum check overflowed.
    let Some(p) = pool(0, Some(128 << 20), 1 << 30) else {
        return;
    };
    let a = p.allocate(1 << 20, Stream::DEFAULT).unwrap();
    let b = p.allocate(1 << 20, Stream::DEFAULT).unwrap();
    p.deallocate(b, 1 << 20, Stream::DEFAULT).unwrap();
    let size = p.pool_size();
    for bytes in [usize::MAX - 1000, usize::MAX / 2, 1 << 40] {
        let e = p.allocate(bytes, Stream::DEFAULT).unwrap_err();
        assert!(matches!(e, Error::OutOfMemory { .. }), "{bytes}: {e}");
        assert_eq!(p.pool_size(), size);
    }
    p.deallocate(a, 1 << 20, Stream::DEFAULT).unwrap();
}

#[test]
fn growth_falls_back_to_what_the_free_tail_lacks() {
    // The pool's rule asks for more than the device has left: the in-place growth must
    // then map only what the request lacks beyond the free tail.
    let rt = init();
    if rt.kind() != crate::runtime::RuntimeKind::Host {
        return;
    }
    let Some(p) = pool(0, None, 1 << 30) else {
        return;
    };
    let g = p.granularity();
    let free = rt.mem_get_info().unwrap().free;
    // Leave the device about three granules free beyond this pool's first growth.
    let filler = crate::mr::CudaMemoryResource::new().unwrap();
    let a = p.allocate(g / 2, Stream::DEFAULT).unwrap();
    let left = rt.mem_get_info().unwrap().free;
    let hog_bytes = left - 3 * g;
    let hog = filler.allocate(hog_bytes, Stream::DEFAULT).unwrap();
    let b = p.allocate(3 * g, Stream::DEFAULT);
    filler.deallocate(hog, hog_bytes, Stream::DEFAULT).unwrap();
    let b = b.expect("the free tail plus the device's last granules hold it");
    p.deallocate(b, 3 * g, Stream::DEFAULT).unwrap();
    p.deallocate(a, g / 2, Stream::DEFAULT).unwrap();
    assert!(free >= p.pool_size());
}

#[test]
fn release_after_a_small_block_gives_everything_back() {
    let Some(p) = pool(0, Some(8 << 30), 16 << 30) else {
        return;
    };
    let a = p.allocate(1000, Stream::DEFAULT).unwrap();
    p.deallocate(a, 1000, Stream::DEFAULT).unwrap();
    let mapped = p.pool_size();
    assert!(mapped > 0);
    assert_eq!(p.release().unwrap(), mapped);
    assert_eq!(p.pool_size(), 0);
}

#[test]
fn release_threshold_keeps_that_much_mapped_and_small_requests_map_little() {
    init();
    let Some(probe) = pool(0, None, 64 << 20) else {
        return;
    };
    let g = probe.granularity();
    drop(probe);
    let p = VmmPoolMemoryResource::new(VmmPoolOptions {
        maximum_pool_size: Some(1 << 30),
        reserved_size: Some(2 << 30),
        release_threshold: Some(64 << 20),
        ..VmmPoolOptions::default()
    })
    .unwrap();
    // A small first request maps a few granules, not half of the maximum.
    let a = p.allocate(1000, Stream::DEFAULT).unwrap();
    assert!(
        p.pool_size() <= 4 * g.max(1 << 20),
        "{} mapped",
        p.pool_size()
    );
    p.deallocate(a, 1000, Stream::DEFAULT).unwrap();
    let rt = init();
    let s = rt.stream_create(Default::default()).unwrap();
    crate::mr::stream_created(s).unwrap();
    let big = p.allocate(512 << 20, s).unwrap();
    rt.stream_synchronize(s).unwrap();
    p.deallocate(big, 512 << 20, s).unwrap();
    // Freed down to the threshold, not below it.
    let free = p.bytes_free();
    assert!(
        free >= 64 << 20 && free <= (64 << 20) + 2 * g,
        "{free} free"
    );
    crate::mr::stream_destroyed(s).unwrap();
    rt.stream_destroy(s).unwrap();
}

#[test]
fn the_threshold_leaves_another_threads_busy_per_thread_stream_alone() {
    // The per-thread default stream is a different stream on each thread: asking whether
    // it is idle from the thread that trims asks about the trimmer's own. A copy still
    // queued on the freeing thread's stream read unmapped memory (the C ABI fuzzer, ASan).
    use std::sync::{mpsc, Arc, Barrier};
    let Some((p, g)) = pool_with_threshold(64 << 20, |_| 0) else {
        return;
    };
    let p = Arc::new(p);
    // Taken before the other thread frees: taking its memory would wait for its stream.
    let a = p.allocate(g, Stream::PER_THREAD).unwrap();
    let (gate_tx, gate_rx) = mpsc::channel::<()>();
    let freed = Arc::new(Barrier::new(2));
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let other = {
        let (p, freed) = (Arc::clone(&p), Arc::clone(&freed));
        std::thread::spawn(move || {
            let rt = init();
            let b = p.allocate(4 * g, Stream::PER_THREAD).unwrap();
            // Work that is still queued when the other thread trims.
            rt.launch_host_func(
                Stream::PER_THREAD,
                Box::new(move || {
                    let _ = gate_rx.recv();
                }),
            )
            .unwrap();
            p.deallocate(b, 4 * g, Stream::PER_THREAD).unwrap();
            freed.wait();
            let _ = done_rx.recv();
            rt.stream_synchronize(Stream::PER_THREAD).unwrap();
        })
    };
    freed.wait();
    let mapped = p.pool_size();
    assert!(mapped >= 4 * g, "{mapped} mapped");
    // A free on an idle stream of this thread crosses the threshold: only idle streams'
    // memory may go.
    p.deallocate(a, g, Stream::PER_THREAD).unwrap();
    let kept = p.pool_size();
    gate_tx.send(()).unwrap();
    done_tx.send(()).unwrap();
    other.join().unwrap();
    assert!(
        kept >= 4 * g,
        "the trim unmapped memory whose stream was busy: {kept} of {mapped} bytes mapped"
    );
    p.release().unwrap();
    assert_eq!(p.pool_size(), 0);
}

#[test]
fn the_threshold_unmaps_a_foreign_streams_memory_once_its_frees_completed() {
    // A foreign stream may be destroyed at any time after its last free: whether its frees
    // are done is read from the event recorded at them, never from the stream.
    use std::sync::mpsc;
    let Some((p, g)) = pool_with_threshold(64 << 20, |_| 0) else {
        return;
    };
    let rt = init();
    let (s, quiet) = (
        rt.stream_create(Default::default()).unwrap(),
        rt.stream_create(Default::default()).unwrap(),
    );
    crate::mr::stream_created(quiet).unwrap();
    let a = p.allocate(g, quiet).unwrap();
    let b = p.allocate(4 * g, s).unwrap();
    let (gate_tx, gate_rx) = mpsc::channel::<()>();
    rt.launch_host_func(
        s,
        Box::new(move || {
            let _ = gate_rx.recv();
        }),
    )
    .unwrap();
    p.deallocate(b, 4 * g, s).unwrap();
    let busy = p.pool_size();
    gate_tx.send(()).unwrap();
    rt.stream_synchronize(s).unwrap();
    rt.stream_destroy(s).unwrap();
    // The foreign stream is gone; a free on another stream trims what it freed.
    p.deallocate(a, g, quiet).unwrap();
    let after = p.pool_size();
    crate::mr::stream_destroyed(quiet).unwrap();
    rt.stream_destroy(quiet).unwrap();
    assert!(
        busy >= 4 * g,
        "unmapped while its stream was busy: {busy} mapped"
    );
    assert!(after < g, "still mapped after the frees completed: {after}");
}

#[test]
fn the_peak_pool_size_remembers_what_release_gave_back() {
    let Some(p) = pool(0, None, 64 << 20) else {
        return;
    };
    let g = p.granularity();
    assert_eq!(p.peak_pool_size(), 0);
    let a = p.allocate(3 * g, Stream::DEFAULT).unwrap();
    let mapped = p.pool_size();
    assert!(mapped >= 3 * g);
    p.deallocate(a, 3 * g, Stream::DEFAULT).unwrap();
    p.release().unwrap();
    assert_eq!(p.pool_size(), 0);
    assert_eq!(p.peak_pool_size(), mapped);
    let b = p.allocate(g, Stream::DEFAULT).unwrap();
    assert_eq!(
        p.peak_pool_size(),
        mapped,
        "a smaller mapping leaves the peak"
    );
    p.deallocate(b, g, Stream::DEFAULT).unwrap();
}
