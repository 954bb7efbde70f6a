//! Unit tests of growth that gives entirely free chunks back to upstream first (RMM 26.10,
//! rapidsai/rmm#2470): under the maximum, and when the upstream is out of memory.

use std::sync::Arc;

use super::*;
use crate::mr::{
    CudaMemoryResource, LimitingResourceAdaptor, VmmPoolMemoryResource, VmmPoolOptions,
};

const KIB: usize = 1 << 10;
const MIB: usize = 1 << 20;

/// A limiting adaptor of `limit` bytes over the device: it counts what the pool holds, and
/// the chunks it hands out are separate allocations (the pool never merges them).
fn limiter(limit: usize) -> Arc<LimitingResourceAdaptor> {
    crate::mr::tests::init();
    let cuda: SharedResource = Arc::new(CudaMemoryResource::new().unwrap());
    Arc::new(LimitingResourceAdaptor::new(cuda, limit, 256).unwrap())
}

fn free_all(pool: &PoolMemoryResource, blocks: &[(*mut c_void, usize)]) {
    for &(p, n) in blocks {
        pool.deallocate(p, n, Stream::DEFAULT).unwrap();
    }
}

/// rapidsai/rmm#1957: an initial size and a maximum, and a request of the maximum.
#[test]
fn an_entirely_free_initial_chunk_goes_back_so_the_maximum_can_be_allocated() {
    let up = limiter(1 << 30);
    let pool = PoolMemoryResource::new(up.clone(), 256 * KIB, Some(MIB)).unwrap();
    let all = pool.allocate(MIB, Stream::DEFAULT).unwrap();
    assert_eq!(pool.pool_size(), MIB);
    assert_eq!(
        up.allocated_bytes(),
        MIB,
        "the initial chunk went back upstream"
    );
    pool.deallocate(all, MIB, Stream::DEFAULT).unwrap();
}

/// A pool grown in several chunks, some of them entirely free: no free block fits the
/// request and growing by it would pass the maximum, until the free chunks go back.
#[test]
fn a_capped_pool_gives_entirely_free_chunks_back_to_reach_its_maximum() {
    let s = Stream::DEFAULT;
    let up = limiter(1 << 30);
    let pool = PoolMemoryResource::new(up.clone(), 0, Some(MIB)).unwrap();
    // Half the room each time: chunks of 512, 256 and 128 KiB.
    let a = pool.allocate(256 * KIB, s).unwrap();
    let b = pool.allocate(256 * KIB, s).unwrap();
    assert_eq!(pool.pool_size(), 512 * KIB);
    let c = pool.allocate(256 * KIB, s).unwrap();
    assert_eq!(pool.pool_size(), 768 * KIB);
    let d = pool.allocate(128 * KIB, s).unwrap();
    assert_eq!(pool.pool_size(), 896 * KIB);
    // The first and the last chunk entirely free (a and b may sit in this thread's front:
    // growth empties the fronts first); c keeps the second.
    free_all(&pool, &[(a, 256 * KIB), (b, 256 * KIB), (d, 128 * KIB)]);
    let want = 640 * KIB;
    assert!(pool.largest_free_block() < want);
    let big = pool.allocate(want, s).unwrap();
    // Only as much went back as the request needed room for, as RMM: both free chunks
    // here (the 128 KiB one alone leaves too little room).
    assert_eq!(pool.pool_size(), 256 * KIB + want);
    assert_eq!(up.allocated_bytes(), pool.pool_size());
    // Both live blocks are whole and distinct; everything goes back at the end.
    assert!(big as usize + want <= c as usize || c as usize + 256 * KIB <= big as usize);
    free_all(&pool, &[(big, want), (c, 256 * KIB)]);
    assert_eq!(pool.bytes_free(), pool.pool_size());
    pool.release().unwrap();
    assert_eq!(up.allocated_bytes(), 0);
}

/// Room is made newest chunk first and no further than needed: an older free chunk that
/// the request does not need stays in the pool.
#[test]
fn giving_back_stops_once_the_request_has_room() {
    let s = Stream::DEFAULT;
    let up = limiter(1 << 30);
    let pool = PoolMemoryResource::new(up.clone(), 256 * KIB, Some(MIB)).unwrap();
    let a = pool.allocate(256 * KIB, s).unwrap(); // the initial chunk
    let b = pool.allocate(256 * KIB, s).unwrap(); // a chunk of half the room: 384 KiB
    assert_eq!(pool.pool_size(), 640 * KIB);
    let c = pool.allocate(128 * KIB, s).unwrap(); // the rest of that chunk
    let d = pool.allocate(128 * KIB, s).unwrap(); // a chunk of 192 KiB
    assert_eq!(pool.pool_size(), 832 * KIB);
    free_all(&pool, &[(a, 256 * KIB), (d, 128 * KIB)]);
    // 384 KiB need the 192 KiB chunk back (832 + 384 > 1024, 640 + 384 = 1024), not the
    // initial one.
    let e = pool.allocate(384 * KIB, s).unwrap();
    assert_eq!(pool.pool_size(), MIB);
    assert_eq!(up.allocated_bytes(), MIB);
    let again = pool.allocate(256 * KIB, s).unwrap();
    assert_eq!(again, a, "the initial chunk stayed in the pool");
    free_all(&pool, &[(again, 256 * KIB), (b, 256 * KIB), (c, 128 * KIB)]);
    free_all(&pool, &[(e, 384 * KIB)]);
}

/// Without a maximum, an upstream out of memory for the growth: the entirely free chunks
/// go back and the growth is tried again.
#[test]
fn an_upstream_out_of_memory_gets_the_entirely_free_chunks_back() {
    let s = Stream::DEFAULT;
    let up = limiter(1536 * KIB);
    let pool = PoolMemoryResource::new(up.clone(), 0, None).unwrap();
    let a = pool.allocate(512 * KIB, s).unwrap();
    let b = pool.allocate(256 * KIB, s).unwrap(); // a second chunk of 512 KiB
    assert_eq!(pool.pool_size(), MIB);
    pool.deallocate(a, 512 * KIB, s).unwrap();
    // 768 KiB fit no free block; 1 MiB and 768 KiB more do not fit the limiter, but do
    // once the first chunk is back.
    let big = pool.allocate(768 * KIB, s).unwrap();
    assert_eq!(up.allocated_bytes(), pool.pool_size());
    assert!(pool.pool_size() <= 1536 * KIB);
    free_all(&pool, &[(big, 768 * KIB), (b, 256 * KIB)]);
}

/// A sharded pool: the shards' entirely free slabs hold chunks of the global pool; a large
/// request (served by the global pool) gets them back before the chunks go back.
#[test]
fn a_sharded_pool_returns_free_slabs_before_giving_chunks_back() {
    let s = Stream::DEFAULT;
    let up = limiter(1 << 30);
    let pool = PoolMemoryResource::new(up.clone(), 0, Some(64 * MIB)).unwrap();
    pool.set_sharded(true);
    let small = pool.allocate(1000, s).unwrap();
    // The global pool grew by half its room; the shard holds a slab of it.
    assert_eq!(pool.pool_size(), 32 * MIB);
    pool.deallocate(small, 1000, s).unwrap();
    let big = pool.allocate(48 * MIB, s).unwrap();
    assert_eq!(pool.pool_size(), 48 * MIB);
    assert_eq!(up.allocated_bytes(), 48 * MIB);
    pool.deallocate(big, 48 * MIB, s).unwrap();
}

/// Where giving chunks back cannot make room, the request fails as before with the clear
/// error and the pool keeps its chunks; it serves what fits afterwards.
#[test]
fn a_request_that_cannot_fit_fails_clearly_and_changes_nothing() {
    let s = Stream::DEFAULT;
    let up = limiter(1 << 30);
    let pool = PoolMemoryResource::new(up.clone(), 512 * KIB, Some(MIB)).unwrap();
    let x = pool.allocate(1000, s).unwrap(); // keeps the initial chunk
    let z = pool.allocate(512 * KIB, s).unwrap(); // a chunk of 512 KiB
    assert_eq!(pool.pool_size(), MIB);
    pool.deallocate(z, 512 * KIB, s).unwrap();
    let check = |bytes: usize| {
        let e = pool.allocate(bytes, s).unwrap_err();
        let msg = e.to_string();
        assert!(
            matches!(e, Error::OutOfMemory { requested, .. } if requested == bytes),
            "{msg}"
        );
        for part in [
            "maximum pool size exceeded",
            "maximum 1048576",
            "pool size 1048576",
        ] {
            assert!(msg.contains(part), "{part} missing: {msg}");
        }
        assert_eq!(pool.pool_size(), MIB, "a chunk went back for nothing");
        assert_eq!(up.allocated_bytes(), MIB);
    };
    // Beyond the maximum outright, and within it but past what giving back could free.
    check(2 * MIB);
    check(768 * KIB);
    // Still usable: the free chunk serves without growing.
    let z = pool.allocate(512 * KIB, s).unwrap();
    let y = pool.allocate(100 * KIB, s).unwrap();
    assert_eq!(pool.pool_size(), MIB);
    free_all(&pool, &[(z, 512 * KIB), (y, 100 * KIB), (x, 1000)]);
}

/// The upstream stays out of memory after the free chunks went back: the upstream's error,
/// and a pool that still serves (and grows for) what fits.
#[test]
fn an_upstream_that_stays_out_of_memory_fails_clearly_and_leaves_the_pool_usable() {
    let s = Stream::DEFAULT;
    let up = limiter(MIB);
    let pool = PoolMemoryResource::new(up.clone(), 0, None).unwrap();
    let a = pool.allocate(512 * KIB, s).unwrap();
    let b = pool.allocate(256 * KIB, s).unwrap(); // a second chunk of 512 KiB
    pool.deallocate(b, 256 * KIB, s).unwrap();
    let e = pool.allocate(768 * KIB, s).unwrap_err();
    let msg = e.to_string();
    assert!(
        matches!(e, Error::OutOfMemory { requested, .. } if requested == 768 * KIB),
        "{msg}"
    );
    assert!(msg.contains("could not grow the pool"), "{msg}");
    assert!(msg.contains("limiting_resource_adaptor"), "{msg}");
    // The free chunk went back (the upstream may need it); the live block is untouched.
    assert_eq!(pool.pool_size(), 512 * KIB);
    assert_eq!(up.allocated_bytes(), 512 * KIB);
    let c = pool.allocate(256 * KIB, s).unwrap();
    free_all(&pool, &[(c, 256 * KIB), (a, 512 * KIB)]);
    pool.release().unwrap();
    assert_eq!(up.allocated_bytes(), 0);
}

/// Contiguous mode (the vmm pool): an extent cut off by `release()` and then entirely free
/// is given back when the request could not be served in place under the maximum.
#[test]
fn contiguous_mode_gives_entirely_free_extents_back_under_the_maximum() {
    crate::mr::tests::init();
    let make = |initial, maximum| {
        VmmPoolMemoryResource::new(VmmPoolOptions {
            initial_pool_size: initial,
            maximum_pool_size: maximum,
            reserved_size: Some(64 * MIB),
            ..VmmPoolOptions::default()
        })
    };
    let g = match make(0, None) {
        Ok(p) => p.granularity(),
        Err(Error::Unsupported(why)) => {
            eprintln!("skipped: {why}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let s = Stream::DEFAULT;
    let p = make(2 * g, Some(5 * g)).unwrap();
    let a = p.allocate(g, s).unwrap();
    let b = p.allocate(g, s).unwrap();
    let c = p.allocate(2 * g, s).unwrap();
    assert_eq!(p.pool_size(), 4 * g);
    // Unmapping b's granule leaves two extents: [a] and [c].
    p.deallocate(b, g, s).unwrap();
    assert_eq!(p.release().unwrap(), g);
    p.deallocate(a, g, s).unwrap();
    assert_eq!(p.pool_size(), 3 * g);
    // 3 granules: a's free granule cannot grow in place (c is mapped after b's place), and
    // 3 + 3 granules pass the maximum; with [a] given back, 2 + 3 do not.
    let big = p.allocate(3 * g, s).unwrap();
    assert_eq!(p.pool_size(), 5 * g);
    p.deallocate(big, 3 * g, s).unwrap();
    p.deallocate(c, 2 * g, s).unwrap();
}
