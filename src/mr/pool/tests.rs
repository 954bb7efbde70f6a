//! Unit tests of the pool: TLSF indexing edge cases, coalescing, bad input.

use std::sync::Arc;

use super::growth::size_to_grow;
use super::*;
use crate::mr::free_index::{mapping_insert, mapping_search, Classes, FL_COUNT, SL_COUNT};
use crate::mr::ptr_map::PtrMap;
use crate::mr::stream_ordered::READY;
use crate::mr::{CudaMemoryResource, LimitingResourceAdaptor};

fn init() {
    crate::mr::tests::init();
}

/// A new stream announced to the library (as `rmm::cuda_stream` makes them).
fn tracked_stream() -> Stream {
    let s = runtime()
        .unwrap()
        .stream_create(Default::default())
        .unwrap();
    crate::mr::stream_created(s).unwrap();
    s
}

/// Destroys streams made by [`tracked_stream`].
fn destroy_tracked(streams: &[Stream]) {
    for &s in streams {
        crate::mr::stream_destroyed(s).unwrap();
        runtime().unwrap().stream_destroy(s).unwrap();
    }
}

fn cuda() -> SharedResource {
    init();
    Arc::new(CudaMemoryResource::new().unwrap())
}

#[test]
fn small_sizes_have_exact_classes() {
    for u in 1..16 {
        assert_eq!(mapping_insert(u), (0, u));
        assert_eq!(mapping_search(u), (0, u));
    }
    assert_eq!(mapping_insert(16), (1, 0));
    assert_eq!(mapping_insert(31), (1, 15));
    assert_eq!(mapping_insert(32), (2, 0));
    assert_eq!(mapping_insert(33), (2, 0));
    assert_eq!(mapping_insert(34), (2, 1));
}

#[test]
fn search_rounds_up_to_a_class_whose_blocks_all_fit() {
    for units in 1..5000usize {
        let (fl, sl) = mapping_search(units);
        // The smallest size filed under (fl, sl) must be >= units.
        let smallest = (1..=units * 2 + 16)
            .find(|&u| mapping_insert(u) == (fl, sl))
            .unwrap();
        assert!(smallest >= units, "units {units}: class ({fl},{sl})");
        // And insert classes never decrease with size.
        assert!(mapping_insert(units) <= mapping_insert(units + 1));
    }
}

#[test]
fn extreme_sizes_map_inside_the_tables() {
    let max_units = usize::MAX >> UNIT_SHIFT;
    let (fl, sl) = mapping_insert(max_units);
    assert!(fl < FL_COUNT && sl < SL_COUNT);
    assert_eq!(
        mapping_search(usize::MAX),
        (FL_COUNT, 0),
        "overflow: no class"
    );
    let (fl, _) = mapping_search(max_units);
    assert!(fl < FL_COUNT);
    let t = Classes::new();
    assert_eq!(t.find_class(FL_COUNT, 0), None);
    assert_eq!(t.find_class(FL_COUNT - 1, 15), None);
    assert_eq!(t.top_class(), None);
}

#[test]
fn frees_coalesce_with_same_stream_neighbours_only() {
    let pool = PoolMemoryResource::new(cuda(), 4096, Some(4096)).unwrap();
    let s = Stream::DEFAULT;
    let ps: Vec<_> = (0..4).map(|_| pool.allocate(1024, s).unwrap()).collect();
    assert_eq!(pool.bytes_free(), 0);
    assert_eq!(pool.free_block_count(), 0);
    pool.deallocate(ps[0], 1024, s).unwrap();
    pool.deallocate(ps[2], 1024, s).unwrap();
    assert_eq!(pool.free_block_count(), 2);
    assert!((pool.fragmentation() - 0.5).abs() < 1e-9);
    pool.deallocate(ps[1], 1024, s).unwrap();
    assert_eq!(pool.free_block_count(), 1);
    assert_eq!(pool.largest_free_block(), 3072);
    // A neighbour freed on another stream stays separate until moved.
    let other = runtime()
        .unwrap()
        .stream_create(Default::default())
        .unwrap();
    pool.deallocate(ps[3], 1024, other).unwrap();
    assert_eq!(pool.free_block_count(), 2);
    assert_eq!(pool.bytes_free(), 4096);
    // At the maximum, asking for the whole pool gathers the other stream's block.
    let all = pool.allocate(4096, s).unwrap();
    assert_eq!(all, ps[0]);
    assert_eq!(pool.pool_size(), 4096);
    pool.deallocate(all, 4096, s).unwrap();
    assert_eq!(pool.free_block_count(), 1);
    assert_eq!(pool.fragmentation(), 0.0);
    pool.forget_stream(other).unwrap();
    runtime().unwrap().stream_destroy(other).unwrap();
}

#[test]
fn same_stream_reuse_returns_the_same_block() {
    let pool = PoolMemoryResource::new(cuda(), 1 << 20, None).unwrap();
    let a = pool.allocate(1000, Stream::DEFAULT).unwrap();
    pool.deallocate(a, 1000, Stream::LEGACY).unwrap();
    let b = pool.allocate(1000, Stream::DEFAULT).unwrap();
    assert_eq!(a, b);
    pool.deallocate(b, 1000, Stream::DEFAULT).unwrap();
}

#[test]
fn the_smallest_fitting_block_of_a_class_is_taken_not_its_head() {
    // Two free blocks of one class (above the fronts' sizes, so the TLSF lists serve
    // them): 1 MiB + 16 KiB and, freed last (the list's head), 1 MiB + 32 KiB.
    const MIB: usize = 1 << 20;
    let (small, large) = (MIB + (16 << 10), MIB + (32 << 10));
    assert_eq!(
        mapping_insert(small >> UNIT_SHIFT),
        mapping_insert(large >> UNIT_SHIFT)
    );
    let pool = PoolMemoryResource::new(cuda(), 16 * MIB, None).unwrap();
    let a = pool.allocate(small, Stream::DEFAULT).unwrap();
    let sep1 = pool.allocate(256, Stream::DEFAULT).unwrap();
    let b = pool.allocate(large, Stream::DEFAULT).unwrap();
    let sep2 = pool.allocate(256, Stream::DEFAULT).unwrap();
    pool.deallocate(a, small, Stream::DEFAULT).unwrap();
    pool.deallocate(b, large, Stream::DEFAULT).unwrap();
    let c = pool.allocate(small, Stream::DEFAULT).unwrap();
    assert_eq!(
        c, a,
        "best fit takes the exact block, not the head of the list"
    );
    // The larger block is still whole for a request of its size.
    let d = pool.allocate(large, Stream::DEFAULT).unwrap();
    assert_eq!(d, b);
    for (p, n) in [(c, small), (sep1, 256), (d, large), (sep2, 256)] {
        pool.deallocate(p, n, Stream::DEFAULT).unwrap();
    }
    assert_eq!(pool.free_block_count(), 1);
}

#[test]
fn grows_by_doubling_and_respects_the_maximum() {
    // Without a maximum: by max(request, pool size), i.e. doubling.
    let pool = PoolMemoryResource::new(cuda(), 0, None).unwrap();
    let a = pool.allocate(256 << 10, Stream::DEFAULT).unwrap();
    assert_eq!(pool.pool_size(), 256 << 10);
    let b = pool.allocate(1, Stream::DEFAULT).unwrap();
    assert_eq!(pool.pool_size(), 512 << 10, "doubled");
    let c = pool.allocate(1 << 20, Stream::DEFAULT).unwrap();
    assert_eq!(pool.pool_size(), (512 << 10) + (1 << 20), "by the request");
    pool.deallocate(c, 1 << 20, Stream::DEFAULT).unwrap();
    pool.deallocate(b, 1, Stream::DEFAULT).unwrap();
    pool.deallocate(a, 256 << 10, Stream::DEFAULT).unwrap();

    // With a maximum: by max(request, half the room left).
    let pool = PoolMemoryResource::new(cuda(), 0, Some(1 << 20)).unwrap();
    assert_eq!(pool.pool_size(), 0);
    let a = pool.allocate(256 << 10, Stream::DEFAULT).unwrap();
    assert_eq!(pool.pool_size(), 512 << 10, "half the room");
    let b = pool.allocate(1, Stream::DEFAULT).unwrap();
    assert_eq!(pool.pool_size(), 512 << 10, "fits in what is free");
    let err = pool.allocate(1 << 20, Stream::DEFAULT).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, Error::OutOfMemory { requested, .. } if requested == 1 << 20));
    for part in [
        "1048576",
        "pool size 524288",
        "maximum 1048576",
        "largest free block",
    ] {
        assert!(msg.contains(part), "{part} missing: {msg}");
    }
    pool.deallocate(a, 256 << 10, Stream::DEFAULT).unwrap();
    pool.deallocate(b, 1, Stream::DEFAULT).unwrap();
    assert_eq!(pool.release().unwrap(), 512 << 10);
    assert_eq!(pool.pool_size(), 0);
    assert_eq!(pool.bytes_free(), 0);
}

#[test]
fn bad_sizes_name_the_parameter_and_value() {
    let e = PoolMemoryResource::new(cuda(), 1000, None).unwrap_err();
    assert!(matches!(&e, Error::InvalidArgument(m) if m.contains("initial_pool_size = 1000")));
    let e = PoolMemoryResource::new(cuda(), 0, Some(1000)).unwrap_err();
    assert!(matches!(&e, Error::InvalidArgument(m) if m.contains("maximum_pool_size = 1000")));
    let e = PoolMemoryResource::new(cuda(), 4096, Some(2048)).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("4096") && m.contains("2048")),
        "{e}"
    );
}

#[test]
fn foreign_double_and_wrong_size_frees_change_nothing() {
    let pool = PoolMemoryResource::new(cuda(), 1 << 16, None).unwrap();
    let p = pool.allocate(512, Stream::DEFAULT).unwrap();
    let before = (pool.bytes_free(), pool.free_block_count());
    let e = pool.deallocate(p, 1024, Stream::DEFAULT).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("512")),
        "{e}"
    );
    let mut local = 0u64;
    let foreign = (&mut local as *mut u64).cast();
    assert!(matches!(
        pool.deallocate(foreign, 8, Stream::DEFAULT),
        Err(Error::InvalidArgument(_))
    ));
    assert_eq!((pool.bytes_free(), pool.free_block_count()), before);
    pool.deallocate(p, 512, Stream::DEFAULT).unwrap();
    assert!(matches!(
        pool.deallocate(p, 512, Stream::DEFAULT),
        Err(Error::InvalidArgument(_))
    ));
    assert_eq!(pool.bytes_free(), 1 << 16);
}

#[test]
fn zero_bytes_is_null_and_names_are_right() {
    let pool = PoolMemoryResource::new(cuda(), 0, None).unwrap();
    assert!(pool.allocate(0, Stream::DEFAULT).unwrap().is_null());
    pool.deallocate(std::ptr::null_mut(), 0, Stream::DEFAULT)
        .unwrap();
    assert_eq!(pool.name(), "pool_memory_resource");
    assert_eq!(pool.upstream().name(), "cuda_memory_resource");
    fn send_sync<T: Send + Sync>() {}
    send_sync::<PoolMemoryResource>();
}

#[test]
fn forget_stream_moves_free_blocks_to_the_default_stream() {
    init();
    let rt = runtime().unwrap();
    let pool = PoolMemoryResource::new(cuda(), 1 << 16, None).unwrap();
    let s = rt.stream_create(Default::default()).unwrap();
    let p = pool.allocate(4096, s).unwrap();
    pool.deallocate(p, 4096, s).unwrap();
    // `s` found nothing of its own: it took its block out of the default stream's chunk
    // (after an event), whose rest stayed there.
    assert_eq!(pool.free_block_count(), 2);
    pool.forget_stream(s).unwrap();
    rt.stream_destroy(s).unwrap();
    // Now on the default stream: same-stream reuse gives the same block back.
    let q = pool.allocate(4096, Stream::DEFAULT).unwrap();
    assert_eq!(p, q);
    pool.deallocate(q, 4096, Stream::DEFAULT).unwrap();
    assert_eq!(pool.release().unwrap(), 1 << 16);
}

#[test]
fn free_memory_scattered_over_streams_is_gathered_before_growing() {
    // No maximum: without gathering, the request would grow the pool.
    let pool = PoolMemoryResource::new(cuda(), 4096, None).unwrap();
    let rt = runtime().unwrap();
    let (a, b) = (
        rt.stream_create(Default::default()).unwrap(),
        rt.stream_create(Default::default()).unwrap(),
    );
    let s = Stream::DEFAULT;
    let ps: Vec<_> = (0..4).map(|_| pool.allocate(1024, s).unwrap()).collect();
    // Four neighbours free on three streams: no single stream has a 2048-byte block.
    pool.deallocate(ps[0], 1024, a).unwrap();
    pool.deallocate(ps[1], 1024, b).unwrap();
    pool.deallocate(ps[2], 1024, a).unwrap();
    pool.deallocate(ps[3], 1024, b).unwrap();
    assert_eq!(pool.free_block_count(), 4);
    let p = pool.allocate(4096, s).unwrap();
    assert_eq!(p, ps[0]);
    assert_eq!(pool.pool_size(), 4096, "gathered, did not grow");
    pool.deallocate(p, 4096, s).unwrap();
    for st in [a, b] {
        pool.forget_stream(st).unwrap();
        rt.stream_destroy(st).unwrap();
    }
}

#[test]
fn ptr_map_matches_a_hash_map_through_growth_and_deletions() {
    let mut m = PtrMap::with_capacity(4);
    let mut reference = std::collections::HashMap::new();
    let mut x: u64 = 0x1234_5678;
    for step in 0..200_000u32 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        // Few distinct keys (so removes often hit), 256-aligned like pool addresses.
        let key = ((x % 3000) as usize + 1) << 8;
        if x & 1 == 0 && !reference.contains_key(&key) {
            m.insert(key, step);
            reference.insert(key, step);
        } else {
            assert_eq!(m.remove(key), reference.remove(&key), "step {step}");
        }
        assert_eq!(m.len(), reference.len());
    }
    assert_eq!(m.remove(0), None);
    for (k, v) in reference {
        assert_eq!(m.remove(k), Some(v));
    }
    assert!(m.is_empty());
}

#[test]
fn size_to_grow_doubles_small_pools_then_grows_by_a_32nd() {
    const K: usize = 1024;
    const M: usize = K * K;
    // Without a maximum, up to GROW_STEP: max(request, pool size), as RMM.
    assert_eq!(size_to_grow(K, 0, None), Some(K));
    assert_eq!(size_to_grow(K, 4 * K, None), Some(4 * K));
    assert_eq!(size_to_grow(8 * K, 4 * K, None), Some(8 * K));
    assert_eq!(size_to_grow(K, 2 * M, None), Some(2 * M));
    assert_eq!(size_to_grow(K, 4 * M, None), Some(4 * M));
    // Beyond: max(request, GROW_STEP, a 32nd of the pool), aligned.
    assert_eq!(size_to_grow(K, 64 * M, None), Some(4 * M));
    assert_eq!(size_to_grow(K, 1024 * M, None), Some(32 * M));
    assert_eq!(size_to_grow(300 * M, 1024 * M, None), Some(300 * M));
    assert_eq!(size_to_grow(K, 1024 * M + 8192, None), Some(32 * M + 256));
    assert_eq!(
        size_to_grow(K, usize::MAX & !255, None),
        Some(round_up(usize::MAX / 32).unwrap())
    );
    // With one: max(request, room / 2), and nothing when the request exceeds the room.
    assert_eq!(size_to_grow(K, 0, Some(8 * K)), Some(4 * K));
    assert_eq!(size_to_grow(4 * K, 4 * K, Some(8 * K)), Some(4 * K));
    assert_eq!(size_to_grow(256, 4 * K, Some(8 * K)), Some(2 * K));
    assert_eq!(size_to_grow(5 * K, 4 * K, Some(8 * K)), None);
    assert_eq!(size_to_grow(256, 8 * K, Some(8 * K)), None);
    // Half the room is kept aligned: 768 bytes of room try 512, not 384.
    assert_eq!(size_to_grow(256, 0, Some(768)), Some(512));
}

/// RMM's `PoolTest.ForceGrowth`: a pool over a limiting adaptor of 6000 bytes.
#[test]
fn force_growth_over_a_limiting_adaptor() {
    let s = Stream::DEFAULT;
    // Without a maximum: the upstream's out-of-memory halves the try down to the request.
    let limiter: SharedResource =
        Arc::new(LimitingResourceAdaptor::new(cuda(), 6000, 256).unwrap());
    let pool = PoolMemoryResource::new(limiter.clone(), 0, None).unwrap();
    let mut live = Vec::new();
    for bytes in [1000, 4000, 500] {
        live.push((pool.allocate(bytes, s).unwrap(), bytes));
    }
    let e = pool.allocate(2000, s).unwrap_err();
    assert!(
        matches!(
            e,
            Error::OutOfMemory {
                requested: 2048,
                ..
            }
        ),
        "{e}"
    );
    for (p, bytes) in live {
        pool.deallocate(p, bytes, s).unwrap();
    }

    // With a maximum of 8192: grows by 4096 first, so the 4000-byte request would take the
    // pool past the limiter and fails; later ones fit in what is free.
    let limiter: SharedResource =
        Arc::new(LimitingResourceAdaptor::new(cuda(), 6000, 256).unwrap());
    let pool = PoolMemoryResource::new(limiter.clone(), 0, Some(8192)).unwrap();
    let a = pool.allocate(1000, s).unwrap();
    assert_eq!(pool.pool_size(), 4096);
    let e = pool.allocate(4000, s).unwrap_err();
    assert!(matches!(e, Error::OutOfMemory { .. }), "{e}");
    let b = pool.allocate(500, s).unwrap();
    let c = pool.allocate(2000, s).unwrap();
    assert_eq!(pool.pool_size(), 4096);
    for (p, bytes) in [(a, 1000), (b, 500), (c, 2000)] {
        pool.deallocate(p, bytes, s).unwrap();
    }
}

/// Dropping a pool with live allocations (RMM's tests leak some on purpose) gives every
/// chunk back to the upstream and leaves the upstream usable.
#[test]
fn drop_with_live_allocations_frees_every_chunk() {
    let s = Stream::DEFAULT;
    let up = cuda();
    let limiter = Arc::new(LimitingResourceAdaptor::new(up.clone(), 1 << 20, 256).unwrap());
    let shared: SharedResource = limiter.clone();
    {
        let pool = PoolMemoryResource::new(shared.clone(), 0, None).unwrap();
        for bytes in [1000, 4000, 500, 70_000, 3] {
            let _leaked = pool.allocate(bytes, s).unwrap();
        }
        // One freed on another stream too, so chunks are split over streams.
        let p = pool.allocate(100, s).unwrap();
        pool.deallocate(p, 100, Stream::PER_THREAD).unwrap();
        assert!(limiter.allocated_bytes() > 0);
    }
    assert_eq!(
        limiter.allocated_bytes(),
        0,
        "every chunk went back upstream"
    );
    let p = limiter.allocate(1 << 20, s).unwrap();
    limiter.deallocate(p, 1 << 20, s).unwrap();
}

#[test]
fn sharded_pool_serves_other_threads_frees_and_releases_everything() {
    let pool = Arc::new(PoolMemoryResource::new(cuda(), 0, None).unwrap());
    pool.set_sharded(true);
    // Small blocks come from each thread's shard; a large one from the global pool.
    let small: Vec<usize> = (0..4)
        .map(|t| {
            let pool = pool.clone();
            std::thread::spawn(move || {
                let _ = t;
                pool.allocate(1000, Stream::DEFAULT).unwrap() as usize
            })
            .join()
            .unwrap()
        })
        .collect();
    let large = pool.allocate(8 << 20, Stream::DEFAULT).unwrap();
    assert!(pool.pool_size() >= (8 << 20) + 1024);
    // Freed from this thread, whichever shard owns them.
    for p in &small {
        pool.deallocate(*p as *mut c_void, 1000, Stream::DEFAULT)
            .unwrap();
    }
    // Double free and wrong size are still caught, and change nothing.
    let err = pool
        .deallocate(small[0] as *mut c_void, 1000, Stream::DEFAULT)
        .unwrap_err();
    assert!(err.to_string().contains("already freed"), "{err}");
    let err = pool.deallocate(large, 1000, Stream::DEFAULT).unwrap_err();
    assert!(err.to_string().contains("allocated with"), "{err}");
    pool.deallocate(large, 8 << 20, Stream::DEFAULT).unwrap();
    assert_eq!(pool.bytes_free(), pool.pool_size());
    assert!(pool.free_block_count() >= 1);
    pool.release().unwrap();
    assert_eq!(pool.pool_size(), 0);
    assert_eq!(pool.bytes_free(), 0);
}

#[test]
fn sharded_bounded_pool_fits_what_an_unsharded_one_fits() {
    // With a maximum, slabs stay small (1/64 of it), so requests that fit an unsharded
    // pool fit a sharded one too.
    for sharded in [false, true] {
        let pool = PoolMemoryResource::new(cuda(), 0, Some(64 << 20)).unwrap();
        pool.set_sharded(sharded);
        let small = pool.allocate(1000, Stream::DEFAULT).unwrap();
        let a = pool.allocate(31 << 20, Stream::DEFAULT).unwrap();
        let b = pool.allocate(31 << 20, Stream::DEFAULT).unwrap();
        assert!(pool.pool_size() <= 64 << 20);
        for (p, n) in [(a, 31 << 20), (b, 31 << 20), (small, 1000)] {
            pool.deallocate(p, n, Stream::DEFAULT).unwrap();
        }
        assert_eq!(pool.bytes_free(), pool.pool_size(), "sharded: {sharded}");
    }
}

/// Free epochs (see [`Epochs`]): memory freed on a stream whose work is still pending is
/// not handed to another stream without an event; once that work is done, it is, from the
/// ready slot, with no event.
#[test]
fn memory_freed_on_a_busy_stream_is_ready_only_after_its_work() {
    use crate::mr::test_gate::{gates_work, Gate};
    init();
    if !gates_work() {
        return;
    }
    let rt = runtime().unwrap();
    const M: usize = 1 << 20;
    // Blocks above the fronts' sizes, each at least an epoch's bytes; two of them fill the
    // pool, so the third request finds nothing but the first block.
    let pool = PoolMemoryResource::new(cuda(), 4 * M, None).unwrap();
    let (a, b) = (tracked_stream(), tracked_stream());
    // `b` has nothing of its own: it carves its block out of the default stream's chunk
    // after an event (the default stream's epoch, so the rest of the chunk is ready once
    // it completes). The pool now takes memory across streams, so it keeps free epochs.
    let x = pool.allocate(2 * M, b).unwrap();
    assert!(pool.core.inner.lock().multi);
    let gate = Gate::close(b);
    // The free records `b`'s epoch event, behind the gate.
    pool.deallocate(x, 2 * M, b).unwrap();
    let y = pool.allocate(2 * M, a).unwrap();
    assert_ne!(
        y, x,
        "a block freed on a stream with pending work went to another stream"
    );
    gate.open();
    rt.stream_synchronize(b).unwrap();
    // `b`'s epoch has completed: its block is ready, and `a` gets it (nothing else is
    // free).
    let z = pool.allocate(2 * M, a).unwrap();
    assert_eq!(z, x, "the completed epoch's block was not ready");
    {
        let inner = pool.core.inner.lock();
        assert_eq!(inner.epochs[READY as usize].outstanding, 0);
    }
    pool.deallocate(y, 2 * M, a).unwrap();
    pool.deallocate(z, 2 * M, a).unwrap();
    assert_eq!(pool.bytes_free(), pool.pool_size());
    destroy_tracked(&[a, b]);
}

/// A pool used by one stream never records an epoch event.
#[test]
fn one_stream_keeps_no_epochs() {
    let pool = PoolMemoryResource::new(cuda(), 1 << 24, None).unwrap();
    for _ in 0..64 {
        let p = pool.allocate(3 << 20, Stream::DEFAULT).unwrap();
        pool.deallocate(p, 3 << 20, Stream::DEFAULT).unwrap();
    }
    let inner = pool.core.inner.lock();
    assert!(!inner.multi);
    assert!(inner
        .epochs
        .iter()
        .all(|e| e.outstanding == 0 && e.cur == 0));
}

/// A stream that has stopped freeing still hands its free memory to every stream: the
/// first block taken from it orders the taker after an epoch event of that stream, and
/// once that completes the rest is ready, taken with no event. (Without it, each block
/// another stream carved out of an idle stream's memory cost an event record and a wait:
/// the threads workload made 100 times more steals.)
#[test]
fn memory_taken_from_an_idle_stream_becomes_ready() {
    init();
    let rt = runtime().unwrap();
    const M: usize = 1 << 20;
    let pool = PoolMemoryResource::new(cuda(), 16 * M, None).unwrap();
    let (a, b) = (tracked_stream(), tracked_stream());
    let d = pool.core.inner.lock().slot(Stream::DEFAULT);
    let x = pool.allocate(2 * M, a).unwrap();
    {
        let inner = pool.core.inner.lock();
        assert_eq!(
            inner.epochs[d as usize].outstanding, 1,
            "taking the default stream's memory recorded no epoch of it"
        );
        assert_ne!(inner.lists[d as usize].fl_bitmap, 0, "the rest stays there");
    }
    rt.device_synchronize().unwrap();
    let y = pool.allocate(2 * M, b).unwrap();
    {
        let mut inner = pool.core.inner.lock();
        assert_eq!(inner.epochs[d as usize].outstanding, 0);
        assert_eq!(
            inner.lists[d as usize].fl_bitmap, 0,
            "the default stream's memory did not move to the ready list"
        );
        // `b` took it with no event of its own.
        let bs = inner.slot(b) as usize;
        assert!(inner.epochs[bs].outstanding == 0 && inner.epochs[bs].cur == 0);
    }
    assert_eq!(
        y as usize,
        x as usize + 2 * M,
        "taken from the ready rest of the chunk"
    );
    pool.deallocate(x, 2 * M, a).unwrap();
    pool.deallocate(y, 2 * M, b).unwrap();
    assert_eq!(pool.bytes_free(), pool.pool_size());
    destroy_tracked(&[a, b]);
}

#[test]
fn frees_prefetch_from_the_global_table_once_it_is_large() {
    let pool = PoolMemoryResource::new(cuda(), 16 << 20, None).unwrap();
    let s = Stream::DEFAULT;
    let published = || pool.core.live_hint.published();
    assert_eq!(published().1, 0, "a small table is not prefetched");
    let ps: Vec<_> = (0..3000).map(|_| pool.allocate(256, s).unwrap()).collect();
    let (base, geometry) = published();
    assert_ne!(geometry, 0, "3000 live blocks: a table of 2^15 slots");
    assert_eq!(base, pool.core.inner.lock().live.slots_addr());
    for p in ps {
        pool.deallocate(p, 256, s).unwrap();
    }
    assert_eq!(pool.bytes_free(), 16 << 20);
}

/// An upstream that remembers the stream of every deallocation.
#[derive(Debug)]
struct StreamsSeen {
    inner: SharedResource,
    freed_on: parking_lot::Mutex<Vec<Stream>>,
}

impl DeviceMemoryResource for StreamsSeen {
    fn allocate(&self, bytes: usize, stream: Stream) -> Result<*mut c_void> {
        self.inner.allocate(bytes, stream)
    }
    fn deallocate(&self, ptr: *mut c_void, bytes: usize, stream: Stream) -> Result<()> {
        self.freed_on.lock().push(stream);
        self.inner.deallocate(ptr, bytes, stream)
    }
    fn name(&self) -> &'static str {
        "streams_seen"
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[test]
fn release_frees_another_threads_per_thread_chunks_on_the_default_stream() {
    // From the releasing thread, the per-thread default stream's handle names its own
    // stream, not the one that freed the chunk: an asynchronous upstream would free it
    // unordered with the freeing thread's work.
    let up = Arc::new(StreamsSeen {
        inner: cuda(),
        freed_on: Default::default(),
    });
    let pool = Arc::new(PoolMemoryResource::new(up.clone(), 0, None).unwrap());
    let other = Arc::clone(&pool);
    std::thread::spawn(move || {
        let p = other.allocate(1 << 20, Stream::PER_THREAD).unwrap();
        other.deallocate(p, 1 << 20, Stream::PER_THREAD).unwrap();
    })
    .join()
    .unwrap();
    assert!(pool.release().unwrap() >= 1 << 20);
    assert_eq!(*up.freed_on.lock(), vec![Stream::DEFAULT]);
}

#[test]
fn a_front_emptied_by_another_thread_keeps_its_blocks_on_the_owners_stream() {
    // A block cached by thread B's front for B's per-thread default stream, emptied into
    // the pool by thread A (statistics, release, growth): from A, that stream's handle
    // names A's own. Filed under it, A took the block at once while B's work on it was
    // still queued (the C ABI fuzzer: a pattern overwritten in a live range).
    use std::sync::atomic::AtomicBool;
    use std::sync::{mpsc, Barrier};
    let pool = Arc::new(PoolMemoryResource::new(cuda(), 0, None).unwrap());
    let done = Arc::new(AtomicBool::new(false));
    let cached = Arc::new(Barrier::new(2));
    let (finish_tx, finish_rx) = mpsc::channel::<()>();
    let (gate_tx, gate_rx) = mpsc::channel::<()>();
    let other = {
        let (pool, done, cached) = (pool.clone(), done.clone(), cached.clone());
        std::thread::spawn(move || {
            let rt = runtime().unwrap();
            // The first free claims this thread's front for the stream.
            let y = pool.allocate(4096, Stream::PER_THREAD).unwrap();
            pool.deallocate(y, 4096, Stream::PER_THREAD).unwrap();
            let x = pool.allocate(4096, Stream::PER_THREAD).unwrap();
            // Work on `x` still queued when it is freed.
            rt.launch_host_func(
                Stream::PER_THREAD,
                Box::new(move || {
                    let _ = gate_rx.recv();
                    done.store(true, Ordering::SeqCst);
                }),
            )
            .unwrap();
            pool.deallocate(x, 4096, Stream::PER_THREAD).unwrap();
            cached.wait();
            let _ = finish_rx.recv();
            rt.stream_synchronize(Stream::PER_THREAD).unwrap();
            x as usize
        })
    };
    cached.wait();
    assert!(pool.front_cached() > 0, "the front did not keep the block");
    let _ = pool.free_summary();
    // Opens the gate a little later: a take that waits for the other thread's stream (as
    // it must) then finishes.
    let opener = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(100));
        let _ = gate_tx.send(());
    });
    let a = pool.allocate(4096, Stream::PER_THREAD).unwrap();
    let before_its_work = !done.load(Ordering::SeqCst);
    opener.join().unwrap();
    finish_tx.send(()).unwrap();
    let x = other.join().unwrap();
    assert!(
        a as usize != x || !before_its_work,
        "{a:p} was handed out while the work queued before its free had not run"
    );
    pool.deallocate(a, 4096, Stream::PER_THREAD).unwrap();
}
