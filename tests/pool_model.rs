//! Model-based and stress tests of the stream-ordered sub-allocators (pool, fixed_size,
//! binning) on the process's runtime: the host emulation by default, a GPU with
//! `RMM_RUNTIME=cuda` (memory is only touched through the runtime's memset/memcpy).
//!
//! Every step checks alignment, that live blocks never overlap, the resource's own
//! counters, and a byte pattern written into every live block; at the end everything
//! must be back with the (counting) upstream.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::rt;
use parking_lot::Mutex;
use proptest::prelude::*;
use rmm::mr::{
    BinningMemoryResource, CudaMemoryResource, DeviceMemoryResource, FixedSizeMemoryResource,
    PoolMemoryResource, SharedResource, ALLOCATION_ALIGNMENT,
};
use rmm::{Error, Stream};

/// Forwards to the device resource and counts what is outstanding, checking that every
/// free matches an allocation (pointer and size).
#[derive(Debug)]
struct Counting {
    inner: SharedResource,
    live: Mutex<HashMap<usize, usize>>,
    bytes: AtomicUsize,
    calls: AtomicUsize,
}

impl Counting {
    fn new() -> Arc<Self> {
        rt();
        Arc::new(Counting {
            inner: Arc::new(CudaMemoryResource::new().unwrap()),
            live: Mutex::new(HashMap::new()),
            bytes: AtomicUsize::new(0),
            calls: AtomicUsize::new(0),
        })
    }
    fn outstanding(&self) -> usize {
        self.bytes.load(Ordering::SeqCst)
    }
}

impl DeviceMemoryResource for Counting {
    fn allocate(&self, bytes: usize, stream: Stream) -> rmm::Result<*mut c_void> {
        let p = self.inner.allocate(bytes, stream)?;
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.live.lock().insert(p as usize, bytes);
        self.bytes.fetch_add(bytes, Ordering::SeqCst);
        Ok(p)
    }
    fn deallocate(&self, ptr: *mut c_void, bytes: usize, stream: Stream) -> rmm::Result<()> {
        let size = self.live.lock().remove(&(ptr as usize));
        assert_eq!(
            size,
            Some(bytes),
            "upstream free of {ptr:p} with {bytes} bytes"
        );
        self.bytes.fetch_sub(bytes, Ordering::SeqCst);
        self.inner.deallocate(ptr, bytes, stream)
    }
    fn name(&self) -> &'static str {
        "counting"
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// An upstream returning misaligned memory (ptr + 16).
#[derive(Debug)]
struct Misaligned(SharedResource);

impl DeviceMemoryResource for Misaligned {
    fn allocate(&self, bytes: usize, stream: Stream) -> rmm::Result<*mut c_void> {
        let p = self.0.allocate(bytes + 256, stream)?;
        Ok(p.cast::<u8>().wrapping_add(16).cast())
    }
    fn deallocate(&self, ptr: *mut c_void, bytes: usize, stream: Stream) -> rmm::Result<()> {
        self.0.deallocate(
            ptr.cast::<u8>().wrapping_sub(16).cast(),
            bytes + 256,
            stream,
        )
    }
    fn name(&self) -> &'static str {
        "misaligned"
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The heavy runs take turns: on a small CI machine, running them side by side only adds
/// contention in the host runtime's stream workers.
static SERIAL: Mutex<()> = Mutex::new(());

/// The pattern byte of allocation number `id`.
fn tag(id: usize) -> u8 {
    (id as u8).wrapping_mul(151).wrapping_add(7) | 1
}

/// Fills a block with its tag on `stream` (stream-ordered, no sync).
fn fill(ptr: *mut c_void, bytes: usize, id: usize, stream: Stream) {
    // SAFETY: `ptr` is a live allocation of `bytes`, valid until freed after the fill.
    unsafe { rt().memset_async(ptr, tag(id), bytes, stream).unwrap() };
}

/// Reads back the start, middle and end of a block and checks its tag.
fn check(ptr: *mut c_void, bytes: usize, id: usize, stream: Stream) {
    let n = bytes.min(64);
    let mut back = [0u8; 192];
    let offsets = [0, bytes / 2 - n / 2, bytes - n];
    for (k, off) in offsets.into_iter().enumerate() {
        // SAFETY: `off + n <= bytes`, the block is live, and `back` outlives the sync.
        unsafe {
            rt().memcpy_async(
                back[k * 64..].as_mut_ptr().cast(),
                ptr.cast::<u8>().add(off).cast(),
                n,
                stream,
            )
            .unwrap();
        }
    }
    rt().stream_synchronize(stream).unwrap();
    for k in 0..3 {
        assert!(
            back[k * 64..k * 64 + n].iter().all(|&b| b == tag(id)),
            "pattern of block {id} at {ptr:p} ({bytes} bytes) overwritten"
        );
    }
}

/// One random step of a model run.
#[derive(Clone, Debug)]
enum Op {
    Alloc { size: usize, stream: usize },
    Free { pick: usize, stream: usize },
}

fn size_strategy(large: usize) -> impl Strategy<Value = usize> {
    let mid = (1usize << 20).min(large / 2);
    prop_oneof![
        1 => Just(0usize),
        6 => 1usize..4096,
        3 => 4096usize..mid,
        1 => mid..large,
    ]
}

fn op_strategy(large: usize) -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (size_strategy(large), 0usize..4).prop_map(|(size, stream)| Op::Alloc { size, stream }),
        2 => (any::<usize>(), 0usize..4).prop_map(|(pick, stream)| Op::Free { pick, stream }),
    ]
}

/// The resource under test plus its own invariant check (given the live rounded bytes
/// and the live count).
struct Subject {
    mr: SharedResource,
    invariant: Box<dyn Fn(usize, usize)>,
}

/// Runs `ops` against a subject, checking every step; returns the number of operations.
fn run_model(make: &dyn Fn(SharedResource, &[Stream]) -> Subject, ops: &[Op], pattern: bool) {
    let _serial = SERIAL.lock();
    let rt = rt();
    let up = Counting::new();
    let streams: Vec<Stream> = std::iter::once(Stream::DEFAULT)
        .chain((0..3).map(|_| rt.stream_create(Default::default()).unwrap()))
        .collect();
    {
        let subject = make(up.clone(), &streams);
        let mr = &subject.mr;
        // Live blocks: addr -> (bytes, id, alloc stream); `order` for picking uniformly.
        let mut live: BTreeMap<usize, (usize, usize, Stream)> = BTreeMap::new();
        let mut order: Vec<usize> = Vec::new();
        let mut live_bytes = 0usize;
        for (id, op) in ops.iter().enumerate() {
            match *op {
                Op::Alloc { size, stream } => {
                    let s = streams[stream];
                    let p = match mr.allocate(size, s) {
                        Ok(p) => p,
                        Err(Error::OutOfMemory { .. }) | Err(Error::BadAlloc { .. }) => continue,
                        Err(e) => panic!("allocate {size}: {e}"),
                    };
                    if size == 0 {
                        assert!(p.is_null());
                        continue;
                    }
                    let a = p as usize;
                    assert_eq!(a % ALLOCATION_ALIGNMENT, 0, "{size} bytes at {p:p}");
                    if let Some((&b, &(bs, _, _))) = live.range(..=a).next_back() {
                        assert!(b + bs <= a, "{p:p} overlaps {b:#x}+{bs}");
                    }
                    if let Some((&b, _)) = live.range(a..).next() {
                        assert!(a + size <= b, "{p:p}+{size} overlaps {b:#x}");
                    }
                    if pattern {
                        fill(p, size, id, s);
                    }
                    live.insert(a, (size, id, s));
                    order.push(a);
                    live_bytes += size.next_multiple_of(ALLOCATION_ALIGNMENT);
                }
                Op::Free { pick, stream } => {
                    if order.is_empty() {
                        continue;
                    }
                    let a = order.swap_remove(pick % order.len());
                    let (size, aid, astream) = live.remove(&a).unwrap();
                    if pattern {
                        check(a as *mut c_void, size, aid, astream);
                    }
                    // Free on a random stream: make it ordered after the writer (the
                    // pattern check already synchronized it).
                    let s = streams[stream];
                    if s != astream && !pattern {
                        rt.stream_synchronize(astream).unwrap();
                    }
                    mr.deallocate(a as *mut c_void, size, s).unwrap();
                    live_bytes -= size.next_multiple_of(ALLOCATION_ALIGNMENT);
                }
            }
            (subject.invariant)(live_bytes, live.len());
        }
        for (a, (size, aid, s)) in std::mem::take(&mut live) {
            if pattern {
                check(a as *mut c_void, size, aid, s);
            }
            mr.deallocate(a as *mut c_void, size, Stream::DEFAULT)
                .unwrap();
        }
        (subject.invariant)(0, 0);
    }
    assert_eq!(up.outstanding(), 0, "memory not returned to upstream");
    for s in &streams[1..] {
        rt.stream_destroy(*s).unwrap();
    }
}

fn pool_subject(up: SharedResource, _streams: &[Stream]) -> Subject {
    let pool = Arc::new(PoolMemoryResource::new(up, 1 << 20, Some(64 << 20)).unwrap());
    let p = pool.clone();
    Subject {
        mr: pool,
        invariant: Box::new(move |live_bytes, _| {
            assert_eq!(p.bytes_free() + live_bytes, p.pool_size());
            assert!(p.largest_free_block() <= p.bytes_free());
            let f = p.fragmentation();
            assert!((0.0..=1.0).contains(&f));
        }),
    }
}

/// The pool with per-thread shards on from the start: small requests come from the
/// thread's shard (slabs of the global pool), large ones from the global pool.
fn sharded_pool_subject(up: SharedResource, streams: &[Stream]) -> Subject {
    let subject = pool_subject(up, streams);
    let pool = subject
        .mr
        .as_any()
        .downcast_ref::<PoolMemoryResource>()
        .unwrap();
    pool.set_sharded(true);
    assert!(pool.is_sharded());
    subject
}

const LARGE: usize = 12 << 20;

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn pool_model(ops in prop::collection::vec(op_strategy(LARGE), 1..2000)) {
        run_model(&pool_subject, &ops, true);
    }

    #[test]
    fn sharded_pool_model(ops in prop::collection::vec(op_strategy(LARGE), 1..2000)) {
        run_model(&sharded_pool_subject, &ops, true);
    }
}

/// A deterministic generator for long runs (no proptest shrinking needed there).
struct XorShift(u64);
impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn ops(&mut self, n: usize, large: usize) -> Vec<Op> {
        (0..n)
            .map(|_| {
                let r = self.next();
                let stream = (r >> 60) as usize % 4;
                if r % 5 < 3 {
                    let size = match (r >> 8) % 11 {
                        0 => 0,
                        1..=6 => (r >> 20) as usize % 4096,
                        7..=9 => (r >> 20) as usize % (1 << 20).min(large),
                        _ => (r >> 20) as usize % large,
                    };
                    Op::Alloc { size, stream }
                } else {
                    Op::Free {
                        pick: (r >> 16) as usize,
                        stream,
                    }
                }
            })
            .collect()
    }
}

/// Operations per long deterministic run in the default suite.
const LONG_RUN: usize = 250_000;

#[test]
fn pool_long_run() {
    let ops = XorShift(0x9e37_79b9_7f4a_7c15).ops(LONG_RUN, LARGE);
    run_model(&pool_subject, &ops, true);
}

#[test]
fn sharded_pool_long_run() {
    let ops = XorShift(0x7f4a_7c15_9e37_79b9).ops(LONG_RUN, LARGE);
    run_model(&sharded_pool_subject, &ops, true);
}

#[test]
#[ignore = "long: tens of millions of operations"]
fn pool_very_long_run() {
    let ops = XorShift(0x1234_5678_9abc_def1).ops(20_000_000, LARGE);
    run_model(&pool_subject, &ops, true);
}

/// Hands a stream's free blocks back before the stream is destroyed.
fn forget(mr: &dyn DeviceMemoryResource, s: Stream) {
    if let Some(pool) = mr.as_any().downcast_ref::<PoolMemoryResource>() {
        pool.forget_stream(s).unwrap();
    }
    if let Some(fs) = mr.as_any().downcast_ref::<FixedSizeMemoryResource>() {
        fs.forget_stream(s).unwrap();
    }
    if let Some(b) = mr.as_any().downcast_ref::<BinningMemoryResource>() {
        b.forget_stream(s).unwrap();
    }
}

/// 16 threads, each with its own stream plus the shared default stream, random sizes,
/// pattern checked before every free.
fn stress(mr: SharedResource, steps: usize) {
    stress_with(mr, steps, false)
}

/// A live block handed from one thread to another, to be freed there.
struct Parcel(*mut c_void, usize, usize, Stream);
// SAFETY (test): the pointer is device memory, owned by whichever thread holds the parcel.
unsafe impl Send for Parcel {}

/// [`stress`]; with `cross`, threads also hand some live blocks to each other through a
/// shared mailbox, so blocks are freed by other threads than the one that allocated them.
fn stress_with(mr: SharedResource, steps: usize, cross: bool) {
    let _serial = SERIAL.lock();
    let rt = rt();
    let mailbox: Mutex<Vec<Parcel>> = Mutex::new(Vec::new());
    let mailbox = &mailbox;
    std::thread::scope(|scope| {
        for t in 0..16u64 {
            let mr = mr.clone();
            scope.spawn(move || {
                let own = rt.stream_create(Default::default()).unwrap();
                let mut rng = XorShift(0xdead_beef ^ ((t + 1) * 0x9e37_79b9));
                let mut live: Vec<(*mut c_void, usize, usize, Stream)> = Vec::new();
                for id in 0..steps {
                    let r = rng.next();
                    let s = if r & 1 == 0 { own } else { Stream::DEFAULT };
                    if live.is_empty() || (r >> 1) % 10 < 6 && live.len() < 64 {
                        let size = 1 + (r >> 8) as usize % if r & 6 == 0 { 4 << 20 } else { 8192 };
                        match mr.allocate(size, s) {
                            Ok(p) => {
                                assert_eq!(p as usize % ALLOCATION_ALIGNMENT, 0);
                                let uid = id * 16 + t as usize;
                                fill(p, size, uid, s);
                                live.push((p, size, uid, s));
                            }
                            Err(Error::OutOfMemory { .. }) => {}
                            Err(e) => panic!("{e}"),
                        }
                    } else {
                        let k = (r >> 20) as usize % live.len();
                        let (p, size, uid, ws) = live.swap_remove(k);
                        check(p, size, uid, ws);
                        if cross && (r >> 40) % 4 == 0 {
                            // `check` synchronized the writer: another thread may free it.
                            mailbox.lock().push(Parcel(p, size, uid, ws));
                        } else {
                            mr.deallocate(p, size, s).unwrap();
                        }
                        let parcel = if cross { mailbox.lock().pop() } else { None };
                        if let Some(Parcel(p, size, uid, ws)) = parcel {
                            check(p, size, uid, ws);
                            mr.deallocate(p, size, s).unwrap();
                        }
                    }
                }
                for (p, size, uid, ws) in live {
                    check(p, size, uid, ws);
                    mr.deallocate(p, size, ws).unwrap();
                }
                rt.stream_synchronize(own).unwrap();
                // The stream freed memory to `mr`: hand it back before destroying it.
                forget(&*mr, own);
                rt.stream_destroy(own).unwrap();
            });
        }
    });
    for Parcel(p, size, uid, ws) in mailbox.lock().drain(..) {
        check(p, size, uid, ws);
        mr.deallocate(p, size, Stream::DEFAULT).unwrap();
    }
}

#[test]
fn pool_sixteen_threads() {
    let up = Counting::new();
    {
        let pool: SharedResource =
            Arc::new(PoolMemoryResource::new(up.clone(), 0, Some(512 << 20)).unwrap());
        stress(pool, 5_000);
    }
    assert_eq!(up.outstanding(), 0);
}

#[test]
fn sharded_pool_sixteen_threads_with_cross_thread_frees() {
    let up = Counting::new();
    {
        let pool = Arc::new(PoolMemoryResource::new(up.clone(), 0, Some(512 << 20)).unwrap());
        pool.set_sharded(true);
        stress_with(pool.clone(), 5_000, true);
        // Everything is free: the shards' slabs go back to the global pool, and all of it
        // to upstream.
        assert_eq!(pool.bytes_free(), pool.pool_size());
        pool.release().unwrap();
        assert_eq!(pool.pool_size(), 0);
        assert_eq!(up.outstanding(), 0);
    }
    assert_eq!(up.outstanding(), 0);
}

#[test]
fn pool_turns_sharded_under_contention_only() {
    let up = Counting::new();
    let pool = Arc::new(PoolMemoryResource::new(up.clone(), 0, None).unwrap());
    for _ in 0..10_000 {
        let p = pool.allocate(4096, Stream::DEFAULT).unwrap();
        pool.deallocate(p, 4096, Stream::DEFAULT).unwrap();
    }
    assert!(!pool.is_sharded(), "one thread never contends");
    stress(pool.clone(), 5_000);
    // 16 threads on 2 or more cores contend for the global lock; on one core they may not.
    if std::thread::available_parallelism().map_or(1, |n| n.get()) > 1 {
        assert!(
            pool.is_sharded(),
            "16 threads should have turned sharding on"
        );
    }
    drop(pool);
    assert_eq!(up.outstanding(), 0);
}

#[test]
fn pool_rejects_misaligned_upstream_naming_the_address() {
    let up: SharedResource = Arc::new(Misaligned(Counting::new()));
    let err = PoolMemoryResource::new(up.clone(), 4096, None).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, Error::BadAlloc { .. }), "{msg}");
    assert!(msg.contains("0x") && msg.contains("not aligned"), "{msg}");
    let pool = PoolMemoryResource::new(up, 0, None).unwrap();
    assert!(matches!(
        pool.allocate(100, Stream::DEFAULT),
        Err(Error::BadAlloc { .. })
    ));
    assert_eq!(pool.pool_size(), 0);
}

#[test]
fn pool_same_stream_reuse_makes_no_upstream_call() {
    let up = Counting::new();
    let pool = PoolMemoryResource::new(up.clone(), 1 << 20, None).unwrap();
    let calls = up.calls.load(Ordering::SeqCst);
    for i in 0..10_000 {
        let p = pool.allocate(256 + i % 5000, Stream::DEFAULT).unwrap();
        pool.deallocate(p, 256 + i % 5000, Stream::DEFAULT).unwrap();
    }
    assert_eq!(up.calls.load(Ordering::SeqCst), calls);
    assert_eq!(pool.free_block_count(), 1);
}

/// Block size of the fixed_size model runs (small blocks keep the memsets cheap).
const FIXED_BLOCK: usize = 64 << 10;

fn fixed_subject(up: SharedResource, _streams: &[Stream]) -> Subject {
    let fs = Arc::new(FixedSizeMemoryResource::new(up, FIXED_BLOCK, 16).unwrap());
    let f = fs.clone();
    Subject {
        mr: fs,
        invariant: Box::new(move |_, live_count| {
            assert_eq!(
                (f.free_block_count() + live_count) * f.get_block_size(),
                f.pool_size()
            );
        }),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn fixed_size_model(ops in prop::collection::vec(op_strategy(2 * FIXED_BLOCK), 1..2000)) {
        run_model(&fixed_subject, &ops, true);
    }
}

#[test]
fn fixed_size_long_run() {
    let ops = XorShift(0x2545_f491_4f6c_dd1d).ops(LONG_RUN, 2 * FIXED_BLOCK);
    run_model(&fixed_subject, &ops, true);
}

#[test]
#[ignore = "long: tens of millions of operations"]
fn fixed_size_very_long_run() {
    let ops = XorShift(0x0bad_cafe_dead_f00d).ops(20_000_000, 2 * FIXED_BLOCK);
    run_model(&fixed_subject, &ops, true);
}

#[test]
fn fixed_size_sixteen_threads() {
    let up = Counting::new();
    {
        let fs: SharedResource =
            Arc::new(FixedSizeMemoryResource::new(up.clone(), 4 << 20, 16).unwrap());
        stress(fs, 5_000);
    }
    assert_eq!(up.outstanding(), 0);
}

#[test]
fn fixed_size_bad_input() {
    let up = Counting::new();
    let fs = FixedSizeMemoryResource::new(up.clone(), 1000, 4).unwrap();
    assert_eq!(fs.get_block_size(), 1024, "rounded up to 256");
    assert_eq!(fs.pool_size(), 4096, "preallocated");
    let err = fs.allocate(1025, Stream::DEFAULT).unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(
            err,
            Error::BadAlloc {
                requested: 1025,
                ..
            }
        ),
        "{msg}"
    );
    assert!(msg.contains("1025") && msg.contains("1024"), "{msg}");
    let p = fs.allocate(1024, Stream::DEFAULT).unwrap();
    fs.deallocate(p, 1024, Stream::DEFAULT).unwrap();
    assert!(matches!(
        fs.deallocate(p, 1024, Stream::DEFAULT),
        Err(Error::InvalidArgument(_))
    ));
    let mut local = 0u64;
    assert!(matches!(
        fs.deallocate((&mut local as *mut u64).cast(), 8, Stream::DEFAULT),
        Err(Error::InvalidArgument(_))
    ));
    assert_eq!(fs.free_block_count(), 4);
    assert!(FixedSizeMemoryResource::new(up.clone(), 0, 4).is_err());
    assert!(FixedSizeMemoryResource::new(up.clone(), 256, 0).is_err());
    let err = FixedSizeMemoryResource::new(Arc::new(Misaligned(up.clone())), 256, 4).unwrap_err();
    assert!(matches!(err, Error::BadAlloc { .. }), "{err}");
    assert_eq!(fs.name(), "fixed_size_memory_resource");
    let d = FixedSizeMemoryResource::with_defaults(up.clone()).unwrap();
    assert_eq!(
        (d.get_block_size(), d.blocks_to_preallocate()),
        (1 << 20, 128)
    );
    drop(d);
    assert_eq!(fs.release().unwrap(), 4096);
    drop(fs);
    assert_eq!(up.outstanding(), 0);
}

#[test]
fn fixed_size_grows_and_reuses_across_streams() {
    let rt = rt();
    let up = Counting::new();
    let fs = FixedSizeMemoryResource::new(up.clone(), 256, 2).unwrap();
    let s = rt.stream_create(Default::default()).unwrap();
    let a = fs.allocate(256, Stream::DEFAULT).unwrap();
    let b = fs.allocate(256, Stream::DEFAULT).unwrap();
    let c = fs.allocate(256, Stream::DEFAULT).unwrap();
    assert_eq!(fs.pool_size(), 1024, "grew by two blocks");
    fs.deallocate(a, 256, s).unwrap();
    fs.deallocate(b, 256, s).unwrap();
    fs.deallocate(c, 256, s).unwrap();
    // The default stream's stack holds one block; then it takes `s`'s.
    let x = fs.allocate(256, Stream::DEFAULT).unwrap();
    let y = fs.allocate(256, Stream::DEFAULT).unwrap();
    assert_eq!(
        fs.pool_size(),
        1024,
        "no growth: took the other stream's blocks"
    );
    fs.deallocate(x, 256, Stream::DEFAULT).unwrap();
    fs.deallocate(y, 256, Stream::DEFAULT).unwrap();
    fs.forget_stream(s).unwrap();
    rt.stream_destroy(s).unwrap();
    drop(fs);
    assert_eq!(up.outstanding(), 0);
}

/// Bins 2^8 ..= 2^16 over the counting upstream, plus one 2^20 bin served by a pool over
/// the same upstream; larger requests go to the upstream directly.
fn binning_subject(up: SharedResource, _streams: &[Stream]) -> Subject {
    let b = BinningMemoryResource::with_range(up.clone(), 8, 16).unwrap();
    let pool: SharedResource = Arc::new(PoolMemoryResource::new(up, 0, None).unwrap());
    b.add_bin(1 << 20, Some(pool)).unwrap();
    Subject {
        mr: Arc::new(b),
        invariant: Box::new(|_, _| {}),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn binning_model(ops in prop::collection::vec(op_strategy(4 << 20), 1..2000)) {
        run_model(&binning_subject, &ops, true);
    }
}

#[test]
fn binning_long_run() {
    // Sizes up to the largest bin: the upstream-direct path is the model test's.
    let ops = XorShift(0x5851_f42d_4c95_7f2d).ops(LONG_RUN, 1 << 20);
    run_model(&binning_subject, &ops, true);
}

#[test]
#[ignore = "long: tens of millions of operations"]
fn binning_very_long_run() {
    let ops = XorShift(0x1405_7b7e_f767_814f).ops(20_000_000, 4 << 20);
    run_model(&binning_subject, &ops, true);
}

#[test]
fn binning_sixteen_threads() {
    let up = Counting::new();
    {
        let pool: SharedResource =
            Arc::new(PoolMemoryResource::new(up.clone(), 0, Some(1 << 30)).unwrap());
        let b: SharedResource = Arc::new(BinningMemoryResource::with_range(pool, 10, 16).unwrap());
        stress(b, 5_000);
    }
    assert_eq!(up.outstanding(), 0);
}

/// A binning resource's own bins take at most 16 MiB from upstream at a time (RMM takes 128
/// blocks per bin: 992 MiB for bins of 256 KiB to 4 MiB).
#[test]
fn binning_bins_take_small_batches() {
    let up = Counting::new();
    let b = BinningMemoryResource::with_range(up.clone(), 18, 22).unwrap();
    assert_eq!(
        up.outstanding(),
        5 * (16 << 20),
        "a first batch of 16 MiB per bin"
    );
    let batches: Vec<usize> = b
        .bins()
        .iter()
        .map(|(_, r)| {
            r.as_any()
                .downcast_ref::<FixedSizeMemoryResource>()
                .unwrap()
                .blocks_to_preallocate()
        })
        .collect();
    assert_eq!(batches, [64, 32, 16, 8, 4]);
    // Five blocks of 4 MiB: a second batch of four.
    let ps: Vec<_> = (0..5)
        .map(|_| b.allocate(3 << 20, Stream::DEFAULT).unwrap())
        .collect();
    assert_eq!(up.outstanding(), 6 * (16 << 20));
    for p in ps {
        b.deallocate(p, 3 << 20, Stream::DEFAULT).unwrap();
    }
    drop(b);
    assert_eq!(up.outstanding(), 0);
}

#[test]
fn binning_routes_by_size_and_rejects_bad_ranges() {
    let up = Counting::new();
    let err = BinningMemoryResource::with_range(up.clone(), 20, 10).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidArgument(m) if m.contains("min_size_exponent = 20")
            && m.contains("max_size_exponent = 10")),
        "{err}"
    );
    assert!(BinningMemoryResource::with_range(up.clone(), 8, 60).is_err());
    let b = BinningMemoryResource::with_range(up.clone(), 10, 12).unwrap();
    assert_eq!(b.name(), "binning_memory_resource");
    let sizes: Vec<usize> = b.bins().iter().map(|x| x.0).collect();
    assert_eq!(sizes, [1024, 2048, 4096]);
    let bin_of = |bytes: usize| {
        let p = b.allocate(bytes, Stream::DEFAULT).unwrap();
        let owner = b
            .bins()
            .into_iter()
            .find(|(_, r)| {
                r.as_any()
                    .downcast_ref::<FixedSizeMemoryResource>()
                    .is_some_and(|f| {
                        f.pool_size() > 0
                            && f.free_block_count() == f.pool_size() / f.get_block_size() - 1
                    })
            })
            .map(|x| x.0);
        b.deallocate(p, bytes, Stream::DEFAULT).unwrap();
        owner
    };
    assert_eq!(bin_of(1), Some(1024));
    assert_eq!(bin_of(1024), Some(1024));
    assert_eq!(bin_of(1025), Some(2048));
    assert_eq!(bin_of(4096), Some(4096));
    let calls = up.calls.load(Ordering::SeqCst);
    assert_eq!(bin_of(4097), None, "served by upstream");
    assert_eq!(up.calls.load(Ordering::SeqCst), calls + 1);
    // A bin with its own resource; an existing size is kept.
    let custom: SharedResource =
        Arc::new(PoolMemoryResource::new(up.clone(), 1 << 16, None).unwrap());
    b.add_bin(1 << 14, Some(custom.clone())).unwrap();
    b.add_bin(1 << 14, None).unwrap();
    let p = b.allocate(10_000, Stream::DEFAULT).unwrap();
    let pool = custom
        .as_any()
        .downcast_ref::<PoolMemoryResource>()
        .unwrap();
    assert_eq!(pool.bytes_free(), (1 << 16) - 10_240);
    assert!(
        matches!(
            b.deallocate(p, 100, Stream::DEFAULT),
            Err(Error::InvalidArgument(_))
        ),
        "routed to the 1 KiB bin, which does not know it"
    );
    b.deallocate(p, 10_000, Stream::DEFAULT).unwrap();
    assert!(b.allocate(0, Stream::DEFAULT).unwrap().is_null());
    assert!(b.add_bin(0, None).is_err());
    drop(b);
    drop(custom);
    assert_eq!(up.outstanding(), 0);
}
