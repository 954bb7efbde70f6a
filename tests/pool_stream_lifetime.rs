//! Streams destroyed between allocations: the stream-ordered sub-allocators (pool,
//! fixed_size, binning, arena) must never record an event on a dead stream handle.
//!
//! * Through the C ABI (`rmm_stream_destroy`), every live resource forgets the stream
//!   first: the reproduction of the C++ bug report (`rmm::cuda_stream` round trips on a
//!   pool) for each resource.
//! * Tracked streams destroyed behind the library's back (the runtime's own destroy): the
//!   next allocation that finds the dead handle synchronizes the device instead of failing.
//!   (Foreign streams, never announced, are never touched after their frees:
//!   `tests/foreign_streams.rs`.)
//! * A randomized loop mixing many streams, tracked and foreign, created and destroyed
//!   (both ways) between allocations, checking that live blocks never overlap and that
//!   everything comes back.
//!
//! Runs on the host runtime unless `RMM_RUNTIME` says otherwise.

mod common;

use std::collections::BTreeMap;
use std::ffi::c_void;
use std::ptr::null_mut;

use common::{c_cuda, cuda, ok, rt, Rng};
use rmm::ffi::*;
use rmm::mr::{
    ArenaMemoryResource, BinningMemoryResource, DeviceMemoryResource, FixedSizeMemoryResource,
    PoolMemoryResource,
};
use rmm::runtime::RuntimeKind;
use rmm::Stream;

/// The bug report's loop: `{ s = create; p = allocate_async(1000, s); deallocate_async(p,
/// 1000, s); synchronize(s); destroy(s); }`, `rounds` times. Returns the pointers.
fn c_round_trips(r: rmm_resource_t, bytes: usize, rounds: usize) -> Vec<usize> {
    let mut ptrs = Vec::new();
    for round in 0..rounds {
        let mut s = null_mut();
        let mut p = null_mut();
        // SAFETY: valid handles and out-pointers; the stream is destroyed last.
        unsafe {
            ok(rmm_stream_create(0, &mut s), "rmm_stream_create");
            ok(
                rmm_allocate_async(r, bytes, s, &mut p),
                &format!("rmm_allocate_async in round {round}"),
            );
            assert!(!p.is_null());
            ok(rmm_memset_async(p, 0x5a, bytes, s), "rmm_memset_async");
        }
        ok(rmm_deallocate_async(r, p, bytes, s), "rmm_deallocate_async");
        ok(rmm_stream_synchronize(s), "rmm_stream_synchronize");
        ok(rmm_stream_destroy(s), "rmm_stream_destroy");
        ptrs.push(p as usize);
    }
    ptrs
}

#[test]
fn c_abi_pool_round_trips_on_fresh_streams() {
    let cuda = c_cuda();
    for initial in [0, 1 << 20] {
        let mut pool = null_mut();
        // SAFETY: valid handle and out-pointer.
        ok(
            unsafe { rmm_pool_create(cuda, initial, 0, &mut pool) },
            "rmm_pool_create",
        );
        let ptrs = c_round_trips(pool, 1000, 4);
        // Each destroyed stream's block went back to the default stream, so every round
        // reuses the same memory and the pool never grows past its first chunk.
        assert!(ptrs.iter().all(|&p| p == ptrs[0]), "{ptrs:x?}");
        let mut stats = rmm_pool_stats::default();
        // SAFETY: valid handle and out-pointer.
        ok(
            unsafe { rmm_pool_get_stats(pool, &mut stats) },
            "rmm_pool_get_stats",
        );
        assert_eq!(stats.bytes_free, stats.pool_size);
        assert_eq!(stats.pool_size, if initial == 0 { 1024 } else { initial });
        ok(rmm_resource_release(pool), "release pool");
    }
    ok(rmm_resource_release(cuda), "release cuda");
}

#[test]
fn c_abi_statistics_over_pool_round_trips_on_fresh_streams() {
    let cuda = c_cuda();
    let (mut pool, mut stats) = (null_mut(), null_mut());
    // SAFETY: valid handles and out-pointers.
    unsafe {
        ok(rmm_pool_create(cuda, 0, 0, &mut pool), "rmm_pool_create");
        ok(
            rmm_statistics_adaptor_create(pool, &mut stats),
            "rmm_statistics_adaptor_create",
        );
    }
    c_round_trips(stats, 1000, 3);
    for r in [stats, pool, cuda] {
        ok(rmm_resource_release(r), "release");
    }
}

#[test]
fn c_abi_fixed_size_round_trips_on_fresh_streams() {
    let cuda = c_cuda();
    let mut fs = null_mut();
    // SAFETY: valid handle and out-pointer.
    ok(
        unsafe { rmm_fixed_size_create(cuda, 4096, 4, &mut fs) },
        "rmm_fixed_size_create",
    );
    let ptrs = c_round_trips(fs, 1000, 4);
    // The block freed on a destroyed stream is on top of the default stream's stack.
    assert!(ptrs.iter().all(|&p| p == ptrs[0]), "{ptrs:x?}");
    ok(rmm_resource_release(fs), "release");
    ok(rmm_resource_release(cuda), "release");
}

#[test]
fn c_abi_binning_round_trips_on_fresh_streams() {
    let cuda = c_cuda();
    let mut bin = null_mut();
    // SAFETY: valid handle and out-pointer.
    ok(
        unsafe { rmm_binning_create(cuda, 10, 16, &mut bin) },
        "rmm_binning_create",
    );
    for bytes in [1000, 5000, 60_000, 1 << 20] {
        c_round_trips(bin, bytes, 3);
    }
    ok(rmm_resource_release(bin), "release");
    ok(rmm_resource_release(cuda), "release");
}

#[test]
fn c_abi_arena_round_trips_on_fresh_streams() {
    let cuda = c_cuda();
    let mut arena = null_mut();
    // SAFETY: valid handle and out-pointer. One superblock's worth: every stream's arena
    // needs the superblock the previous (destroyed) stream's arena held.
    ok(
        unsafe { rmm_arena_create(cuda, 1 << 20, false, &mut arena) },
        "rmm_arena_create",
    );
    c_round_trips(arena, 1000, 4);
    ok(rmm_resource_release(arena), "release");
    ok(rmm_resource_release(cuda), "release");
}

/// Using a destroyed handle is only defined on the host runtime (an invalid-handle error);
/// on CUDA and HIP it is undefined behaviour, so those tests run on the host runtime only.
fn dead_handles_are_detected() -> bool {
    rt().kind() == RuntimeKind::Host
}

/// Allocates and frees on a stream announced as tracked (as if made by
/// `rmm_stream_create`), then destroys it with the runtime's own call (not through rmm),
/// then allocates on a fresh stream: the dead handle must not fail it. (A stream never
/// announced is foreign and never touched after its frees: `tests/foreign_streams.rs`.)
fn direct_destroy_round_trips(mr: &dyn DeviceMemoryResource, bytes: usize, rounds: usize) {
    let rt = rt();
    for round in 0..rounds {
        let s = rt.stream_create(Default::default()).unwrap();
        rmm::mr::stream_created(s).unwrap();
        let p = mr
            .allocate(bytes, s)
            .unwrap_or_else(|e| panic!("{} round {round}: {e}", mr.name()));
        mr.deallocate(p, bytes, s).unwrap();
        rt.stream_synchronize(s).unwrap();
        rt.stream_destroy(s).unwrap();
    }
    let p = mr.allocate(bytes, Stream::DEFAULT).unwrap();
    mr.deallocate(p, bytes, Stream::DEFAULT).unwrap();
    rt.stream_synchronize(Stream::DEFAULT).unwrap();
}

#[test]
fn tracked_streams_destroyed_behind_our_back_fall_back_to_device_synchronization() {
    if !dead_handles_are_detected() {
        return;
    }
    let fallbacks = rmm::mr::dead_stream_fallbacks();
    let pool = PoolMemoryResource::new(cuda(), 0, None).unwrap();
    direct_destroy_round_trips(&pool, 1000, 4);
    assert_eq!(pool.pool_size(), 1024, "the dead stream's block was reused");
    assert_eq!(pool.bytes_free(), 1024);

    let fs = FixedSizeMemoryResource::new(cuda(), 4096, 4).unwrap();
    direct_destroy_round_trips(&fs, 1000, 4);
    assert_eq!(fs.pool_size(), 4 * 4096);

    let bin = BinningMemoryResource::with_range(cuda(), 10, 14).unwrap();
    direct_destroy_round_trips(&bin, 3000, 4);

    // One superblock: the next stream's arena needs the dead stream's cached superblock,
    // whose release event cannot be recorded on the dead handle.
    let arena = ArenaMemoryResource::new(cuda(), Some(1 << 20), false).unwrap();
    direct_destroy_round_trips(&arena, 1000, 4);
    assert_eq!(arena.bytes_free(), 1 << 20);
    assert!(rmm::mr::dead_stream_fallbacks() > fallbacks);
}

#[test]
fn arena_orphans_a_destroyed_streams_arena_until_its_blocks_come_back() {
    let rt = rt();
    let arena = ArenaMemoryResource::new(cuda(), Some(4 << 20), false).unwrap();
    let s = rt.stream_create(Default::default()).unwrap();
    let live = arena.allocate(1000, s).unwrap();
    let freed = arena.allocate(2000, s).unwrap();
    arena.deallocate(freed, 2000, s).unwrap();
    rmm::mr::stream_destroyed(s).unwrap();
    rt.stream_destroy(s).unwrap();
    // A new stream gets an arena of its own (the orphan serves no allocations).
    let t = rt.stream_create(Default::default()).unwrap();
    let q = arena.allocate(1000, t).unwrap();
    assert!(q as usize >> 20 != live as usize >> 20 || q != live);
    arena.deallocate(q, 1000, t).unwrap();
    // The orphan's last block freed on another stream: its superblock goes back.
    arena.deallocate(live, 1000, t).unwrap();
    rt.stream_synchronize(t).unwrap();
    assert_eq!(arena.bytes_free(), 4 << 20);
    rmm::mr::stream_destroyed(t).unwrap();
    rt.stream_destroy(t).unwrap();
    // Everything can be had again, in one piece.
    let all = arena.allocate(4 << 20, Stream::DEFAULT).unwrap();
    arena.deallocate(all, 4 << 20, Stream::DEFAULT).unwrap();
}

#[test]
fn forgetting_a_stream_never_seen_makes_no_difference() {
    let rt = rt();
    let pool = PoolMemoryResource::new(cuda(), 1 << 16, None).unwrap();
    let s = rt.stream_create(Default::default()).unwrap();
    rmm::mr::stream_destroyed(s).unwrap();
    rmm::mr::stream_destroyed(Stream::DEFAULT).unwrap();
    rmm::mr::stream_destroyed(Stream::PER_THREAD).unwrap();
    rt.stream_destroy(s).unwrap();
    let p = pool.allocate(1000, Stream::DEFAULT).unwrap();
    pool.deallocate(p, 1000, Stream::DEFAULT).unwrap();
    assert_eq!(pool.release().unwrap(), 1 << 16);
}

/// Random allocations and frees over a changing set of streams: streams are created and
/// destroyed (through `stream_destroyed` or, now and then, behind the library's back)
/// between operations, with blocks still live on them. Live blocks must never overlap;
/// each block is filled on its stream and checked before it is freed.
fn churn(mr: &dyn DeviceMemoryResource, seed: u64, max_bytes: usize, direct_destroys: bool) {
    let rt = rt();
    let mut rng = Rng(seed | 1);
    let mut streams: Vec<Stream> = Vec::new();
    // start -> (bytes, pattern)
    let mut live: BTreeMap<usize, (usize, u8)> = BTreeMap::new();
    let mut destroyed = 0;
    let pick = |rng: &mut Rng, streams: &[Stream]| -> Stream {
        match rng.below(streams.len() + 1) {
            0 => Stream::DEFAULT,
            i => streams[i - 1],
        }
    };
    for step in 0..600 {
        match rng.below(10) {
            0 if streams.len() < 6 => {
                let s = rt.stream_create(Default::default()).unwrap();
                if rng.below(2) == 0 {
                    // Tracked, as if made by `rmm_stream_create`; the others are foreign.
                    rmm::mr::stream_created(s).unwrap();
                }
                streams.push(s);
            }
            1 if !streams.is_empty() => {
                let s = streams.swap_remove(rng.below(streams.len()));
                if direct_destroys && rng.below(4) == 0 {
                    // Behind our back: the program synchronized, then destroyed it.
                    rt.stream_synchronize(s).unwrap();
                } else {
                    rmm::mr::stream_destroyed(s).unwrap();
                }
                rt.stream_destroy(s).unwrap();
                destroyed += 1;
            }
            2..=5 => {
                let bytes = 1 + rng.below(max_bytes);
                let s = pick(&mut rng, &streams);
                let p = mr
                    .allocate(bytes, s)
                    .unwrap_or_else(|e| panic!("{} step {step}: {e}", mr.name()))
                    as usize;
                assert_eq!(p % 256, 0);
                if let Some((&q, &(qb, _))) = live.range(..p + bytes).next_back() {
                    assert!(
                        q + qb <= p,
                        "{} step {step}: [{p:#x}, +{bytes}) overlaps live [{q:#x}, +{qb})",
                        mr.name()
                    );
                }
                let pattern = (step % 251) as u8 + 1;
                // SAFETY: a live device allocation of `bytes`, filled on its stream.
                unsafe { rt.memset_async(p as *mut c_void, pattern, bytes, s) }.unwrap();
                live.insert(p, (bytes, pattern));
            }
            _ if !live.is_empty() => {
                let i = rng.below(live.len());
                let (&p, &(bytes, pattern)) = live.iter().nth(i).unwrap();
                let s = pick(&mut rng, &streams);
                // The fill may be on another stream: wait for the device, then read it
                // back on the stream it is freed on.
                rt.device_synchronize().unwrap();
                let mut host = vec![0u8; bytes];
                // SAFETY: `host` holds `bytes`; the block is live and idle.
                unsafe { rt.memcpy_async(host.as_mut_ptr().cast(), p as *const c_void, bytes, s) }
                    .unwrap();
                rt.stream_synchronize(s).unwrap();
                assert!(
                    host.iter().all(|&b| b == pattern),
                    "{} step {step}: block {p:#x} was overwritten",
                    mr.name()
                );
                mr.deallocate(p as *mut c_void, bytes, s).unwrap();
                live.remove(&p);
            }
            _ => {}
        }
    }
    for (p, (bytes, _)) in std::mem::take(&mut live) {
        mr.deallocate(p as *mut c_void, bytes, Stream::DEFAULT)
            .unwrap();
    }
    for s in streams {
        rmm::mr::stream_destroyed(s).unwrap();
        rt.stream_destroy(s).unwrap();
    }
    rt.device_synchronize().unwrap();
    assert!(
        destroyed > 10,
        "the loop destroyed only {destroyed} streams"
    );
}

#[test]
fn churn_over_created_and_destroyed_streams_never_overlaps() {
    for seed in [1, 0xdead_beef, 42, 7_777_777] {
        for direct in [false, dead_handles_are_detected()] {
            let pool = PoolMemoryResource::new(cuda(), 0, None).unwrap();
            churn(&pool, seed, 100_000, direct);
            assert_eq!(pool.bytes_free(), pool.pool_size(), "pool seed {seed}");

            let fs = FixedSizeMemoryResource::new(cuda(), 4096, 8).unwrap();
            churn(&fs, seed, 4096, direct);
            assert_eq!(fs.free_block_count() * 4096, fs.pool_size());

            let bin = BinningMemoryResource::with_range(cuda(), 8, 14).unwrap();
            churn(&bin, seed, 40_000, direct);

            let arena = ArenaMemoryResource::new(cuda(), Some(64 << 20), false).unwrap();
            churn(&arena, seed, 300_000, direct);
            assert_eq!(arena.bytes_free(), 64 << 20, "arena seed {seed}");
        }
    }
}

#[test]
fn many_short_lived_streams_reuse_the_pools_slots() {
    // A program creating a stream per task: the pool keeps working (and reusing its
    // memory) however many streams come and go.
    let rt = rt();
    let pool = PoolMemoryResource::new(cuda(), 0, None).unwrap();
    let fs = FixedSizeMemoryResource::new(cuda(), 1024, 4).unwrap();
    for _ in 0..300 {
        let s = rt.stream_create(Default::default()).unwrap();
        let p = pool.allocate(3000, s).unwrap();
        let q = fs.allocate(1000, s).unwrap();
        pool.deallocate(p, 3000, s).unwrap();
        fs.deallocate(q, 1000, s).unwrap();
        rmm::mr::stream_destroyed(s).unwrap();
        rt.stream_destroy(s).unwrap();
    }
    assert_eq!(pool.pool_size(), 3072);
    assert_eq!(fs.pool_size(), 4 * 1024);
}
