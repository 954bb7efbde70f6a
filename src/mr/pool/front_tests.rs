//! Tests of the pool's per-thread front caches: reuse and exact bad-free detection without
//! the pool, emptying (release, growth, stream destruction, thread exit), cross-thread
//! frees, and a gated model of the stream rules (a block freed on one stream reaches
//! another stream's allocation only after that stream waits for the free).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use proptest::prelude::*;

use super::*;
use crate::mr::test_gate::Gate;
use crate::mr::CudaMemoryResource;
use crate::runtime::{Runtime, StreamFlags};

/// A pause armed for one pool: the next batch of blocks taken out of one of its fronts
/// waits at the first barrier (taken out, not yet given back) and then at the second.
type Pause = (usize, Arc<(std::sync::Barrier, std::sync::Barrier)>);
static RETURN_PAUSE: parking_lot::Mutex<Option<Pause>> = parking_lot::Mutex::new(None);

/// Called by the pool between taking blocks out of a front and giving them back.
pub(super) fn pause_if_armed(core: &Core) {
    let hit = {
        let mut armed = RETURN_PAUSE.lock();
        match armed.as_ref() {
            Some((c, _)) if *c == core as *const Core as usize => armed.take(),
            _ => None,
        }
    };
    if let Some((_, gates)) = hit {
        gates.0.wait();
        gates.1.wait();
    }
}

fn rt() -> &'static dyn Runtime {
    crate::mr::tests::init()
}

fn cuda() -> SharedResource {
    rt();
    Arc::new(CudaMemoryResource::new().unwrap())
}

/// A stream the library is told about (fronts cache only for those).
fn tracked_stream() -> Stream {
    let s = rt()
        .stream_create(StreamFlags { non_blocking: true })
        .unwrap();
    crate::mr::stream_created(s).unwrap();
    s
}

fn destroy(s: Stream) {
    crate::mr::stream_destroyed(s).unwrap();
    rt().stream_destroy(s).unwrap();
}

/// Good frees on `stream` by this thread: its front is then claimed for `stream` (a front
/// changes only after good frees, so the first one is not kept).
fn warm(pool: &PoolMemoryResource, stream: Stream) {
    let p = pool.allocate(256, stream).unwrap();
    pool.deallocate(p, 256, stream).unwrap();
    let q = pool.allocate(256, stream).unwrap();
    pool.deallocate(q, 256, stream).unwrap();
    assert_eq!(
        pool.front_cached(),
        256,
        "the front keeps frees on {stream:?}"
    );
    let r = pool.allocate(256, stream).unwrap();
    assert_eq!(r, q);
    pool.deallocate(r, 256, stream).unwrap();
    // Out of the way of what a test measures.
    pool.bytes_free();
}

#[test]
fn a_freed_block_is_reused_from_the_front_and_bad_frees_are_still_refused() {
    let pool = PoolMemoryResource::new(cuda(), 1 << 20, None).unwrap();
    warm(&pool, Stream::DEFAULT);
    let a = pool.allocate(1000, Stream::DEFAULT).unwrap();
    pool.deallocate(a, 1000, Stream::DEFAULT).unwrap();
    assert_eq!(pool.front_cached(), 1024, "kept by the thread's front");
    let b = pool.allocate(1000, Stream::DEFAULT).unwrap();
    assert_eq!(a, b);
    assert_eq!(pool.front_cached(), 0);
    // Wrong size, then a double free, of a block the front handed out: refused, nothing
    // changes.
    let err = pool.deallocate(b, 5000, Stream::DEFAULT).unwrap_err();
    assert!(err.to_string().contains("allocated with 1024"), "{err}");
    pool.deallocate(b, 1000, Stream::DEFAULT).unwrap();
    let err = pool.deallocate(b, 1000, Stream::DEFAULT).unwrap_err();
    assert!(err.to_string().contains("already freed"), "{err}");
    assert_eq!(pool.front_cached(), 1024);
    let err = pool
        .deallocate(0x1000 as *mut c_void, 1000, Stream::DEFAULT)
        .unwrap_err();
    assert!(
        err.to_string().contains("not allocated by this pool"),
        "{err}"
    );
    // Introspection counts the cached block as free (after emptying the front into the
    // pool, where it merges back).
    assert_eq!(pool.bytes_free(), pool.pool_size());
    assert_eq!(pool.free_block_count(), 1);
    assert_eq!(pool.front_cached(), 0);
    // A larger block of the same class serves a smaller request; its free must match the
    // request, not the block.
    let c = pool.allocate(4 << 10, Stream::DEFAULT).unwrap();
    pool.deallocate(c, 4 << 10, Stream::DEFAULT).unwrap();
    let d = pool.allocate((4 << 10) - 300, Stream::DEFAULT).unwrap();
    let err = pool.deallocate(d, 4 << 10, Stream::DEFAULT).unwrap_err();
    assert!(err.to_string().contains("allocated with"), "{err}");
    pool.deallocate(d, (4 << 10) - 300, Stream::DEFAULT)
        .unwrap();
    assert_eq!(pool.release().unwrap(), 1 << 20);
}

#[test]
fn a_block_cached_for_one_stream_never_serves_another() {
    let s = tracked_stream();
    let pool = PoolMemoryResource::new(cuda(), 1 << 20, None).unwrap();
    warm(&pool, s);
    let a = pool.allocate(4096, s).unwrap();
    pool.deallocate(a, 4096, s).unwrap();
    assert_eq!(pool.front_cached(), 4096);
    let b = pool.allocate(4096, Stream::DEFAULT).unwrap();
    assert_ne!(
        a, b,
        "the default stream must not get memory freed on s from the front"
    );
    let c = pool.allocate(4096, s).unwrap();
    assert_eq!(a, c);
    pool.deallocate(b, 4096, Stream::DEFAULT).unwrap();
    pool.deallocate(c, 4096, s).unwrap();
    // Destroying the stream empties its fronts: the block is back in the pool, moved to
    // the default stream, where the default stream reuses it.
    destroy(s);
    assert_eq!(pool.front_cached(), 0);
    let d = pool.allocate(4096, Stream::DEFAULT).unwrap();
    pool.deallocate(d, 4096, Stream::DEFAULT).unwrap();
    assert_eq!(pool.bytes_free(), pool.pool_size());
}

#[test]
fn foreign_streams_are_not_cached_for() {
    let s = rt()
        .stream_create(StreamFlags { non_blocking: true })
        .unwrap();
    let pool = PoolMemoryResource::new(cuda(), 1 << 20, None).unwrap();
    let a = pool.allocate(4096, s).unwrap();
    pool.deallocate(a, 4096, s).unwrap();
    assert_eq!(pool.front_cached(), 0);
    rt().stream_synchronize(s).unwrap();
    rt().stream_destroy(s).unwrap();
}

#[test]
fn a_front_is_emptied_when_its_thread_ends() {
    let pool = Arc::new(PoolMemoryResource::new(cuda(), 1 << 20, None).unwrap());
    let p2 = pool.clone();
    std::thread::spawn(move || {
        warm(&p2, Stream::DEFAULT);
        let a = p2.allocate(8192, Stream::DEFAULT).unwrap();
        p2.deallocate(a, 8192, Stream::DEFAULT).unwrap();
        assert_eq!(p2.front_cached(), 8192);
    })
    .join()
    .unwrap();
    assert_eq!(pool.front_cached(), 0);
    assert_eq!(pool.release().unwrap(), 1 << 20);
}

#[test]
fn introspection_waits_for_the_blocks_of_a_front_whose_thread_is_ending() {
    let pool = Arc::new(PoolMemoryResource::new(cuda(), 1 << 20, None).unwrap());
    let gates = Arc::new((std::sync::Barrier::new(2), std::sync::Barrier::new(2)));
    let (p2, g2) = (pool.clone(), gates.clone());
    let ending = std::thread::spawn(move || {
        warm(&p2, Stream::DEFAULT);
        let a = p2.allocate(8192, Stream::DEFAULT).unwrap();
        p2.deallocate(a, 8192, Stream::DEFAULT).unwrap();
        assert_eq!(p2.front_cached(), 8192);
        // The thread-exit hook will take the block out of the front, then pause.
        *RETURN_PAUSE.lock() = Some((Arc::as_ptr(&p2.core) as usize, g2));
    });
    gates.0.wait();
    // Freed by the caller, out of its front, not yet back in the pool: statistics must not
    // miss it.
    let done = Arc::new(AtomicBool::new(false));
    let (p3, d3) = (pool.clone(), done.clone());
    let checker = std::thread::spawn(move || {
        let free = p3.bytes_free();
        d3.store(true, Ordering::SeqCst);
        (free, p3.pool_size())
    });
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert!(
        !done.load(Ordering::SeqCst),
        "bytes_free returned while a block was on its way back"
    );
    gates.1.wait();
    let (free, size) = checker.join().unwrap();
    assert_eq!(free, size, "every block was freed");
    ending.join().unwrap();
    assert_eq!(pool.release().unwrap(), 1 << 20);
}

#[test]
fn blocks_handed_out_by_a_front_may_be_freed_by_another_thread() {
    let pool = Arc::new(PoolMemoryResource::new(cuda(), 1 << 20, None).unwrap());
    warm(&pool, Stream::DEFAULT);
    let a = pool.allocate(2048, Stream::DEFAULT).unwrap();
    pool.deallocate(a, 2048, Stream::DEFAULT).unwrap();
    let b = pool.allocate(2048, Stream::DEFAULT).unwrap() as usize;
    assert_eq!(a as usize, b, "from the front");
    let p2 = pool.clone();
    std::thread::spawn(move || {
        let err = p2
            .deallocate(b as *mut c_void, 100, Stream::DEFAULT)
            .unwrap_err();
        assert!(err.to_string().contains("allocated with 2048"), "{err}");
        p2.deallocate(b as *mut c_void, 2048, Stream::DEFAULT)
            .unwrap();
    })
    .join()
    .unwrap();
    let err = pool
        .deallocate(b as *mut c_void, 2048, Stream::DEFAULT)
        .unwrap_err();
    assert!(err.to_string().contains("already freed"), "{err}");
    assert_eq!(pool.bytes_free(), pool.pool_size());
}

#[test]
fn a_busy_owner_enters_its_front_without_the_lock_until_another_thread_takes_it() {
    let pool = Arc::new(PoolMemoryResource::new(cuda(), 16 << 20, None).unwrap());
    warm(&pool, Stream::DEFAULT);
    let me = thread_slot();
    let biased = || pool.core.fronts.of(me).enter(me).is_some();
    for _ in 0..crate::mr::biased_lock::REBIAS_AFTER {
        let p = pool.allocate(4096, Stream::DEFAULT).unwrap();
        pool.deallocate(p, 4096, Stream::DEFAULT).unwrap();
    }
    if !crate::runtime::os::heavy_fence_available() {
        assert!(!biased(), "never biased without membarrier");
        return;
    }
    assert!(biased(), "biased after a run of the owner's own operations");
    // A block the owner handed out, freed by another thread: the bias is revoked and the
    // free still finds its block in the owner's front.
    let b = pool.allocate(4096, Stream::DEFAULT).unwrap() as usize;
    let p2 = pool.clone();
    std::thread::spawn(move || {
        p2.deallocate(b as *mut c_void, 4096, Stream::DEFAULT)
            .unwrap()
    })
    .join()
    .unwrap();
    assert!(!biased());
    let err = pool
        .deallocate(b as *mut c_void, 4096, Stream::DEFAULT)
        .unwrap_err();
    assert!(err.to_string().contains("already freed"), "{err}");
    // Introspection empties the fronts: from another thread it takes every bias too, from
    // the owner's own thread it needs no fence and the bias stays.
    for _ in 0..=crate::mr::biased_lock::REBIAS_AFTER {
        let p = pool.allocate(4096, Stream::DEFAULT).unwrap();
        pool.deallocate(p, 4096, Stream::DEFAULT).unwrap();
    }
    assert!(biased());
    assert_eq!(pool.bytes_free(), pool.pool_size());
    assert!(biased());
    let p = pool.allocate(4096, Stream::DEFAULT).unwrap();
    pool.deallocate(p, 4096, Stream::DEFAULT).unwrap();
    assert!(pool.front_cached() > 0);
    let p2 = pool.clone();
    std::thread::spawn(move || assert_eq!(p2.bytes_free(), p2.pool_size()))
        .join()
        .unwrap();
    assert!(!biased());
    assert_eq!(pool.front_cached(), 0);
}

#[test]
fn biased_owners_lose_nothing_to_cross_thread_frees_and_emptying() {
    // Rare enough for the owners to win their bias back in between, and so often that
    // they stay on the lock.
    owners_and_a_freer(5_000, 2);
    owners_and_a_freer(8, 64);
}

/// Two owners churn and hand every `every`-th block to a third thread, which frees it (a
/// free into the owner's front) and empties every front after each `flush_every` of them.
/// Every allocation is checked against all live blocks, every free must succeed, and at
/// the end the pool is whole.
fn owners_and_a_freer(every: u32, flush_every: usize) {
    let pool = Arc::new(PoolMemoryResource::new(cuda(), 64 << 20, None).unwrap());
    let live: Arc<parking_lot::Mutex<BTreeMap<usize, usize>>> = Arc::default();
    let (tx, rx) = std::sync::mpsc::channel::<(usize, usize)>();
    let owners: Vec<_> = (0..2u64)
        .map(|t| {
            let (pool, live, tx) = (pool.clone(), live.clone(), tx.clone());
            std::thread::spawn(move || {
                let mut rng = 0x9e37_79b9_7f4a_7c15u64 ^ t;
                let mut mine: Vec<(usize, usize)> = Vec::new();
                for step in 0..40_000u32 {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    if mine.len() < 64 {
                        let size = 256 << (rng % 8);
                        let p = pool.allocate(size, Stream::DEFAULT).unwrap() as usize;
                        let mut l = live.lock();
                        if let Some((&b, &n)) = l.range(..=p).next_back() {
                            assert!(b + n <= p, "{p:#x} handed out inside live {b:#x}+{n}");
                        }
                        if let Some((&b, _)) = l.range(p..).next() {
                            assert!(p + size <= b, "{p:#x}+{size} overlaps live {b:#x}");
                        }
                        l.insert(p, size);
                        drop(l);
                        mine.push((p, size));
                    } else {
                        let (p, size) = mine.swap_remove((rng >> 8) as usize % mine.len());
                        if step % every == 0 {
                            tx.send((p, size)).unwrap();
                        } else {
                            live.lock().remove(&p);
                            pool.deallocate(p as *mut c_void, size, Stream::DEFAULT)
                                .unwrap();
                        }
                    }
                }
                for (p, size) in mine {
                    live.lock().remove(&p);
                    pool.deallocate(p as *mut c_void, size, Stream::DEFAULT)
                        .unwrap();
                }
            })
        })
        .collect();
    drop(tx);
    let freer = {
        let (pool, live) = (pool.clone(), live.clone());
        std::thread::spawn(move || {
            for (k, (p, size)) in rx.into_iter().enumerate() {
                live.lock().remove(&p);
                pool.deallocate(p as *mut c_void, size, Stream::DEFAULT)
                    .unwrap();
                if k % flush_every == 0 {
                    pool.front_cached();
                }
            }
        })
    };
    for o in owners {
        o.join().unwrap();
    }
    freer.join().unwrap();
    assert!(live.lock().is_empty());
    assert_eq!(pool.bytes_free(), pool.pool_size());
}

#[test]
fn fronts_are_emptied_before_the_pool_grows_or_fails() {
    // A bounded pool whose free memory sits in the front: a request that needs all of it
    // must get it back rather than fail.
    let pool = PoolMemoryResource::new(cuda(), 1 << 20, Some(1 << 20)).unwrap();
    warm(&pool, Stream::DEFAULT);
    let a = pool.allocate(512 << 10, Stream::DEFAULT).unwrap();
    pool.deallocate(a, 512 << 10, Stream::DEFAULT).unwrap();
    assert_eq!(pool.front_cached(), 512 << 10);
    let b = pool.allocate(1 << 20, Stream::DEFAULT).unwrap();
    assert_eq!(pool.pool_size(), 1 << 20);
    pool.deallocate(b, 1 << 20, Stream::DEFAULT).unwrap();
}

// ---------------------------------------------------------------------------------------
// Gated model.

const SIZES: [usize; 6] = [256, 1000, 4096, 5000, 65536, 300_000];

#[derive(Clone, Debug)]
enum Op {
    Alloc {
        size: usize,
        stream: usize,
    },
    Free {
        pick: usize,
        stream: usize,
    },
    DoubleFree {
        pick: usize,
    },
    /// Statistics (which empty the fronts into the pool).
    Stats,
    Forget {
        stream: usize,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        10 => (0..SIZES.len(), 0..6usize).prop_map(|(k, stream)| Op::Alloc { size: SIZES[k], stream }),
        8 => (any::<usize>(), 0..6usize).prop_map(|(pick, stream)| Op::Free { pick, stream }),
        1 => any::<usize>().prop_map(|pick| Op::DoubleFree { pick }),
        1 => Just(Op::Stats),
        1 => (1..4usize).prop_map(|stream| Op::Forget { stream }),
    ]
}

/// Runs `ops` on one pool over the default stream and three tracked streams, all held
/// back by gates until the end. Stream choices 4 and 5 mean "this phase's stream" (the
/// phase moves every 80 steps), so the thread's front settles on a stream and switches.
/// Every free enqueues, just before it, a marker on its stream; every allocation
/// overlapping memory last freed on another stream enqueues a check on its stream that
/// the marker has run. The gates then open one stream at a time in `open_order`: a
/// missing ordering shows as a check that runs before its marker. Also checks that live
/// blocks never overlap and that double frees are refused.
fn gated_model(ops: &[Op], open_order: &[usize]) {
    if !crate::mr::test_gate::gates_work() {
        return;
    }
    static SERIAL: parking_lot::Mutex<()> = parking_lot::Mutex::new(());
    let _serial = SERIAL.lock();
    let rt = rt();
    let streams: Vec<Stream> = std::iter::once(Stream::DEFAULT)
        .chain((0..3).map(|_| tracked_stream()))
        .collect();
    // Grown up front: growing later would allocate from upstream, which is fine, but
    // keeping the model to one chunk makes reuse (what is tested) frequent.
    let pool = PoolMemoryResource::new(cuda(), 64 << 20, None).unwrap();
    let gates: Vec<Gate> = streams.iter().map(|&s| Gate::close(s)).collect();
    let (done, watch) = std::sync::mpsc::channel::<()>();
    let held: Vec<_> = gates.iter().map(|g| Gate(g.0.clone())).collect();
    let watchdog = std::thread::spawn(move || {
        let timed_out = watch
            .recv_timeout(std::time::Duration::from_secs(10))
            .is_err();
        drop(held);
        timed_out
    });
    let markers: Arc<Vec<AtomicBool>> = Arc::new((0..ops.len()).map(|_| false.into()).collect());
    let violations: Arc<parking_lot::Mutex<Vec<String>>> = Arc::default();
    // addr -> (size, stream index)
    let mut live: BTreeMap<usize, (usize, usize)> = BTreeMap::new();
    // freed regions: addr -> (rounded size, stream index, marker)
    let mut freed: BTreeMap<usize, (usize, usize, usize)> = BTreeMap::new();
    let mut gone: Vec<(usize, usize)> = Vec::new();
    let mut order: Vec<usize> = Vec::new();
    let pick_stream = |k: usize, id: usize| if k < 4 { k } else { (id / 80) % 4 };
    for (id, op) in ops.iter().enumerate() {
        match *op {
            Op::Alloc { size, stream } => {
                let si = pick_stream(stream, id);
                let p = pool.allocate(size, streams[si]).unwrap() as usize;
                let rounded = size.next_multiple_of(ALIGN);
                if let Some((&b, &(bs, _))) = live.range(..=p).next_back() {
                    assert!(b + bs <= p, "{p:#x} overlaps live {b:#x}+{bs}");
                }
                if let Some((&b, _)) = live.range(p..).next() {
                    assert!(p + rounded <= b, "{p:#x}+{rounded} overlaps live {b:#x}");
                }
                // Every freed region this block overlaps.
                let lo = freed
                    .range(..p)
                    .next_back()
                    .filter(|(&b, &(bs, _, _))| b + bs > p)
                    .map(|(&b, _)| b)
                    .unwrap_or(p);
                let hits: Vec<usize> = freed.range(lo..p + rounded).map(|(&b, _)| b).collect();
                for b in hits {
                    let (_, t, m) = freed.remove(&b).unwrap();
                    if t != si {
                        let (markers, violations) = (markers.clone(), violations.clone());
                        rt.launch_host_func(
                            streams[si],
                            Box::new(move || {
                                if !markers[m].load(Ordering::SeqCst) {
                                    violations.lock().push(format!(
                                        "{p:#x} overlaps memory freed on stream {t} (step {m}) \
                                         and was used on stream {si} first"
                                    ));
                                }
                            }),
                        )
                        .unwrap();
                    }
                }
                live.insert(p, (rounded, si));
                order.push(p);
            }
            Op::Free { pick, stream } => {
                if order.is_empty() {
                    continue;
                }
                let si = pick_stream(stream, id);
                let p = order.swap_remove(pick % order.len());
                let (rounded, _) = live.remove(&p).unwrap();
                let m2 = markers.clone();
                rt.launch_host_func(
                    streams[si],
                    Box::new(move || m2[id].store(true, Ordering::SeqCst)),
                )
                .unwrap();
                pool.deallocate(p as *mut c_void, rounded, streams[si])
                    .unwrap();
                freed.insert(p, (rounded, si, id));
                gone.push((p, rounded));
            }
            Op::DoubleFree { pick } => {
                if gone.is_empty() {
                    continue;
                }
                let (p, n) = gone[pick % gone.len()];
                if live.contains_key(&p) {
                    continue;
                }
                let before = pool.front_cached();
                let r = pool.deallocate(p as *mut c_void, n, Stream::DEFAULT);
                assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
                assert_eq!(pool.front_cached(), before);
            }
            Op::Stats => {
                let used: usize = live.values().map(|&(n, _)| n).sum();
                assert_eq!(pool.bytes_free() + used, pool.pool_size());
                assert_eq!(pool.front_cached(), 0);
            }
            Op::Forget { stream } => {
                pool.forget_stream(streams[stream]).unwrap();
            }
        }
    }
    let _ = done.send(());
    assert!(
        !watchdog.join().unwrap(),
        "the pool waited on the host for held-back streams"
    );
    for &k in open_order {
        gates[k].open();
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    for g in &gates {
        g.open();
    }
    for &s in &streams {
        rt.stream_synchronize(s).unwrap();
    }
    let v = violations.lock();
    assert!(v.is_empty(), "{v:#?}");
    for (p, (n, s)) in live {
        pool.deallocate(p as *mut c_void, n, streams[s]).unwrap();
    }
    assert_eq!(pool.bytes_free(), pool.pool_size());
    drop(pool);
    for &s in &streams[1..] {
        destroy(s);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn fronts_keep_the_stream_rules(
        ops in prop::collection::vec(op(), 1..600),
        open_order in Just(vec![0usize, 1, 2, 3]).prop_shuffle(),
    ) {
        gated_model(&ops, &open_order);
    }
}
