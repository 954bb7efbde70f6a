//! Tracked and foreign streams (module docs of `rmm::mr::stream_ordered`).
//!
//! * RMM 25.02's `PoolTest.DeletedStream`, through the C ABI, for pool, fixed_size,
//!   binning and arena: a stream created with the runtime's own call (not through rmm),
//!   used for one allocation and its free, then destroyed with the runtime's own call;
//!   the next allocation on the default stream must take that memory without ever naming
//!   the dead stream (no device-synchronize fallback, no runtime call on a dead handle).
//! * Tracked streams (default streams, `rmm_stream_create`) make no runtime call per
//!   deallocation; foreign ones make exactly one (an event record).
//! * Handle reuse: a slot is re-classified whenever its stream is (re)assigned.
//!
//! The counters are process-wide, so the tests of this file run one at a time. Runs on the
//! host runtime unless `RMM_RUNTIME` says otherwise; the counters exist on the host runtime
//! only, so the assertions on them are skipped elsewhere.

mod common;

use std::ffi::c_void;
use std::ptr::null_mut;

use common::{c_cuda, cuda, ok, rt};
use parking_lot::Mutex;
use rmm::ffi::*;
use rmm::mr::{
    dead_stream_fallbacks, ArenaMemoryResource, BinningMemoryResource, DeviceMemoryResource,
    FixedSizeMemoryResource, PoolMemoryResource,
};
use rmm::runtime::{host, RuntimeKind};
use rmm::Stream;

/// The counters are process-wide: one test at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn host_counters() -> bool {
    rt().kind() == RuntimeKind::Host
}

fn c_alloc(r: rmm_resource_t, bytes: usize, s: rmm_stream_t) -> *mut c_void {
    let mut p = null_mut();
    // SAFETY: valid handle and out-pointer.
    ok(
        unsafe { rmm_allocate_async(r, bytes, s, &mut p) },
        "rmm_allocate_async",
    );
    assert!(!p.is_null());
    p
}

/// Neither a dead-stream fallback nor a runtime call naming a dead stream so far.
fn assert_no_dead_stream_use(what: &str) {
    assert_eq!(dead_stream_fallbacks(), 0, "{what}: a fallback was taken");
    if host_counters() {
        assert_eq!(
            host::dead_stream_calls(),
            0,
            "{what}: a runtime call named a destroyed stream"
        );
    }
}

/// RMM's `PoolTest.DeletedStream`: `{ device_buffer buff(10000, stream, &mr); }` on a
/// stream created and destroyed with the runtime directly, then `mr.allocate(10000)` on
/// the default stream. Returns (pointer freed on the stream, pointer then allocated).
fn deleted_stream(r: rmm_resource_t) -> (usize, usize) {
    let rt = rt();
    let s = rt.stream_create(Default::default()).unwrap();
    let stream = s.0 as rmm_stream_t;
    let p = c_alloc(r, 10_000, stream);
    // SAFETY: a live allocation of 10 000 bytes, filled on its stream.
    ok(
        unsafe { rmm_memset_async(p, 0x5a, 10_000, stream) },
        "rmm_memset_async",
    );
    ok(
        rmm_deallocate_async(r, p, 10_000, stream),
        "rmm_deallocate_async",
    );
    // Destroyed behind rmm's back, with its work possibly still queued.
    rt.stream_destroy(s).unwrap();
    let mut q = null_mut();
    // SAFETY: valid handle and out-pointer.
    ok(
        unsafe { rmm_allocate(r, 10_000, &mut q) },
        "rmm_allocate after the stream was destroyed",
    );
    ok(rmm_deallocate(r, q, 10_000), "rmm_deallocate");
    ok(rmm_stream_synchronize(null_mut()), "synchronize");
    (p as usize, q as usize)
}

#[test]
fn deleted_stream_pool_fixed_size_binning_arena_take_no_fallback() {
    let _serial = SERIAL.lock();
    let cuda = c_cuda();
    assert_no_dead_stream_use("before");

    // Pool (RMM's test: initial size 0): the default stream takes the dead stream's block.
    let mut pool = null_mut();
    // SAFETY: valid handle and out-pointer.
    ok(
        unsafe { rmm_pool_create(cuda, 0, 0, &mut pool) },
        "rmm_pool_create",
    );
    let (p, q) = deleted_stream(pool);
    assert_eq!(p, q, "the default stream reused the foreign stream's block");
    let mut stats = rmm_pool_stats::default();
    // SAFETY: valid handle and out-pointer.
    ok(
        unsafe { rmm_pool_get_stats(pool, &mut stats) },
        "rmm_pool_get_stats",
    );
    assert_eq!(stats.pool_size, 10_240, "the pool did not grow again");
    assert_no_dead_stream_use("pool");
    ok(rmm_resource_release(pool), "release pool");

    // Fixed size: the stream took the default stream's blocks; they come back.
    let mut fs = null_mut();
    // SAFETY: valid handle and out-pointer.
    ok(
        unsafe { rmm_fixed_size_create(cuda, 16_384, 4, &mut fs) },
        "rmm_fixed_size_create",
    );
    let (p, q) = deleted_stream(fs);
    assert_eq!(p, q, "the default stream reused the foreign stream's block");
    assert_no_dead_stream_use("fixed_size");
    ok(rmm_resource_release(fs), "release fixed_size");

    // Binning (fixed-size bins up to 64 KiB).
    let mut bin = null_mut();
    // SAFETY: valid handle and out-pointer.
    ok(
        unsafe { rmm_binning_create(cuda, 10, 16, &mut bin) },
        "rmm_binning_create",
    );
    let (p, q) = deleted_stream(bin);
    assert_eq!(p, q, "the default stream reused the foreign stream's block");
    assert_no_dead_stream_use("binning");
    ok(rmm_resource_release(bin), "release binning");

    // Arena of one superblock: the default stream's arena needs the dead stream's cached
    // superblock back from the global arena.
    let mut arena = null_mut();
    // SAFETY: valid handle and out-pointer.
    ok(
        unsafe { rmm_arena_create(cuda, 1 << 20, false, &mut arena) },
        "rmm_arena_create",
    );
    deleted_stream(arena);
    let (mut size, mut free) = (0, 0);
    // SAFETY: valid handle and out-pointers.
    ok(
        unsafe { rmm_arena_get_sizes(arena, &mut size, &mut free) },
        "rmm_arena_get_sizes",
    );
    assert_eq!(free, size);
    assert_no_dead_stream_use("arena");
    ok(rmm_resource_release(arena), "release arena");
    ok(rmm_resource_release(cuda), "release cuda");
}

/// Event records made by `n` allocate/free pairs of `bytes` on `stream` (after one warm-up
/// pair, which may take memory from another stream or grow).
fn records_per_pairs(mr: &dyn DeviceMemoryResource, stream: Stream, bytes: usize, n: u64) -> u64 {
    let p = mr.allocate(bytes, stream).unwrap();
    mr.deallocate(p, bytes, stream).unwrap();
    let before = host::event_records();
    for _ in 0..n {
        let p = mr.allocate(bytes, stream).unwrap();
        mr.deallocate(p, bytes, stream).unwrap();
    }
    host::event_records() - before
}

fn resources() -> Vec<Box<dyn DeviceMemoryResource>> {
    vec![
        Box::new(PoolMemoryResource::new(cuda(), 1 << 20, None).unwrap()),
        Box::new(FixedSizeMemoryResource::new(cuda(), 4096, 16).unwrap()),
        Box::new(BinningMemoryResource::with_range(cuda(), 10, 16).unwrap()),
        Box::new(ArenaMemoryResource::new(cuda(), Some(8 << 20), false).unwrap()),
    ]
}

#[test]
fn tracked_streams_make_no_runtime_call_per_free_foreign_ones_one_record() {
    let _serial = SERIAL.lock();
    if !host_counters() {
        return;
    }
    const N: u64 = 1000;
    let rt = rt();
    for mr in resources() {
        let name = mr.name();
        for s in [Stream::DEFAULT, Stream::LEGACY, Stream::PER_THREAD] {
            assert_eq!(records_per_pairs(&*mr, s, 3000, N), 0, "{name} on {s:?}");
        }
        // Created through the library: tracked.
        let mut cs = null_mut();
        // SAFETY: valid out-pointer.
        ok(
            unsafe { rmm_stream_create(0, &mut cs) },
            "rmm_stream_create",
        );
        let tracked = Stream(cs as usize);
        assert_eq!(
            records_per_pairs(&*mr, tracked, 3000, N),
            0,
            "{name} on a stream made by rmm_stream_create"
        );
        ok(rmm_stream_destroy(cs), "rmm_stream_destroy");
        // Created with the runtime: foreign, one event record per free.
        let foreign = rt.stream_create(Default::default()).unwrap();
        // A pool that has taken memory across streams may add one free-epoch record when
        // its allocations move to a new stream, and no more while they stay there.
        let records = records_per_pairs(&*mr, foreign, 3000, N);
        assert!(
            (N..=N + 1).contains(&records),
            "{name} on a foreign stream: {records} records for {N} frees"
        );
        rt.stream_destroy(foreign).unwrap();
        // Its memory is still usable from the default stream.
        let p = mr.allocate(3000, Stream::DEFAULT).unwrap();
        mr.deallocate(p, 3000, Stream::DEFAULT).unwrap();
    }
    rt.device_synchronize().unwrap();
    assert_no_dead_stream_use("tracked and foreign streams");
}

#[test]
fn slots_are_reclassified_when_a_handle_changes_hands() {
    let _serial = SERIAL.lock();
    if !host_counters() {
        return;
    }
    const N: u64 = 100;
    let rt = rt();
    for mr in resources() {
        let name = mr.name();
        // The host runtime never reuses a handle value; announcing and forgetting one
        // stream plays the parts of successive streams with the same handle.
        let s = rt.stream_create(Default::default()).unwrap();
        rmm::mr::stream_created(s).unwrap();
        assert_eq!(records_per_pairs(&*mr, s, 3000, N), 0, "{name}: tracked");
        // Destroyed through the library: the slot (or arena) is recycled, and the same
        // handle seen again is a foreign stream.
        rmm::mr::stream_destroyed(s).unwrap();
        assert_eq!(
            records_per_pairs(&*mr, s, 3000, N),
            N,
            "{name}: now foreign"
        );
        // A tracked stream reusing a foreign handle: resources forget the foreign one
        // (without touching it) and classify the handle afresh.
        rmm::mr::stream_created(s).unwrap();
        assert_eq!(
            records_per_pairs(&*mr, s, 3000, N),
            0,
            "{name}: tracked again"
        );
        rmm::mr::stream_destroyed(s).unwrap();
        rt.stream_destroy(s).unwrap();
        let p = mr.allocate(3000, Stream::DEFAULT).unwrap();
        mr.deallocate(p, 3000, Stream::DEFAULT).unwrap();
    }
    rt.device_synchronize().unwrap();
    assert_no_dead_stream_use("reclassification");
}

/// Memory freed on foreign streams that are then destroyed directly, taken by other
/// streams (foreign or not) in a loop: contents stay intact, nothing names a dead stream.
#[test]
fn foreign_streams_destroyed_directly_in_a_loop() {
    let _serial = SERIAL.lock();
    let rt = rt();
    for mr in resources() {
        let name = mr.name();
        let mut prev = Stream::DEFAULT;
        for round in 0..50u8 {
            let s = rt.stream_create(Default::default()).unwrap();
            let bytes = 1000 + 700 * usize::from(round % 5);
            let p = mr.allocate(bytes, s).unwrap();
            // SAFETY: a live allocation of `bytes`, filled on its stream.
            unsafe { rt.memset_async(p, round, bytes, s) }.unwrap();
            let mut host = vec![0u8; bytes];
            // SAFETY: `host` holds `bytes`; ordered after the fill on `s`.
            unsafe { rt.memcpy_async(host.as_mut_ptr().cast(), p, bytes, s) }.unwrap();
            mr.deallocate(p, bytes, s).unwrap();
            rt.stream_synchronize(s).unwrap();
            assert!(host.iter().all(|&b| b == round), "{name} round {round}");
            if prev != Stream::DEFAULT {
                rt.stream_destroy(prev).unwrap();
            }
            prev = s;
        }
        rt.stream_destroy(prev).unwrap();
        let p = mr.allocate(4000, Stream::DEFAULT).unwrap();
        mr.deallocate(p, 4000, Stream::DEFAULT).unwrap();
        rt.device_synchronize().unwrap();
    }
    if host_counters() {
        assert_no_dead_stream_use("loop");
    }
}
