//! Tests of the sharded fixed-size resource: the steal order between shards and streams,
//! a gated model of the stream rules (a block freed on one stream reaches another stream's
//! allocation only after that stream waits for the free), foreign and double frees, and a
//! multi-thread stress run with cross-thread frees.

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use proptest::prelude::*;

use super::*;
use crate::mr::test_gate::{gates_work, Gate};
use crate::mr::CudaMemoryResource;
use crate::runtime::{Runtime, StreamFlags};

thread_local! {
    static FORCED: Cell<Option<usize>> = const { Cell::new(None) };
}

/// The shard a test made the calling thread use, if any.
pub(super) fn forced_shard() -> Option<usize> {
    FORCED.with(|f| f.get())
}

/// Runs `f` as if the calling thread mapped to shard `i`.
fn on<R>(i: usize, f: impl FnOnce() -> R) -> R {
    let before = FORCED.with(|c| c.replace(Some(i)));
    let r = f();
    FORCED.with(|c| c.set(before));
    r
}

fn rt() -> &'static dyn Runtime {
    crate::mr::tests::init()
}

/// The tests that hold streams back or run many threads take turns.
static SERIAL: Mutex<()> = Mutex::new(());

/// Forwards to the runtime's device memory and counts what is outstanding.
#[derive(Debug)]
struct Counting {
    inner: CudaMemoryResource,
    live: Mutex<HashMap<usize, usize>>,
    calls: AtomicUsize,
    /// Outstanding bytes past which allocations fail for lack of memory.
    budget: AtomicUsize,
}

impl Counting {
    fn new() -> Arc<Self> {
        rt();
        Arc::new(Counting {
            inner: CudaMemoryResource::new().unwrap(),
            live: Mutex::new(HashMap::new()),
            calls: AtomicUsize::new(0),
            budget: AtomicUsize::new(usize::MAX),
        })
    }
    fn outstanding(&self) -> usize {
        self.live.lock().values().sum()
    }
}

impl DeviceMemoryResource for Counting {
    fn allocate(&self, bytes: usize, stream: Stream) -> Result<*mut c_void> {
        if self.outstanding() + bytes > self.budget.load(Ordering::SeqCst) {
            return Err(Error::OutOfMemory {
                requested: bytes,
                resource: "counting",
                device: 0,
                detail: "over the test's budget".into(),
            });
        }
        let p = self.inner.allocate(bytes, stream)?;
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.live.lock().insert(p as usize, bytes);
        Ok(p)
    }
    fn deallocate(&self, ptr: *mut c_void, bytes: usize, stream: Stream) -> Result<()> {
        assert_eq!(self.live.lock().remove(&(ptr as usize)), Some(bytes));
        self.inner.deallocate(ptr, bytes, stream)
    }
    fn name(&self) -> &'static str {
        "counting"
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl FixedSizeMemoryResource {
    /// Free blocks per shard.
    fn shard_free(&self) -> Vec<usize> {
        self.state
            .shards
            .iter()
            .map(|s| {
                let sh = s.inner.lock();
                assert_eq!(sh.free, sh.stacks.iter().map(Vec::len).sum::<usize>());
                assert_eq!(s.free_hint.load(Ordering::Relaxed), sh.free);
                sh.free
            })
            .collect()
    }

    /// Free blocks of `stream` in shard `i`, as the calling thread names it.
    fn stream_free(&self, i: usize, stream: Stream) -> usize {
        let sh = self.state.shards[i].inner.lock();
        sh.streams
            .find(stream)
            .map_or(0, |s| sh.stacks[s as usize].len())
    }

    /// Live blocks according to the batches' live bytes.
    fn live_blocks(&self) -> usize {
        self.state
            .batches
            .lock()
            .list
            .iter()
            .map(|b| b.live_count())
            .sum()
    }
}

fn new_stream() -> Stream {
    rt().stream_create(StreamFlags { non_blocking: true })
        .unwrap()
}

#[test]
fn a_dry_shard_takes_half_of_another_shards_blocks_of_its_stream_first() {
    let up = Counting::new();
    let fs = FixedSizeMemoryResource::with_shards(up.clone(), 256, 8, 3).unwrap();
    let first = fs.my_shard();
    assert_eq!(
        fs.shard_free()[first],
        8,
        "the first batch is the creator's"
    );
    assert_eq!(fs.pool_size(), 8 * 256);
    let other = (first + 1) % 3;
    let last = (first + 2) % 3;
    // The default stream's blocks of shard `first` are taken by shard `other` (same stream).
    let p = on(other, || fs.allocate(100, Stream::DEFAULT).unwrap());
    let free = fs.shard_free();
    assert_eq!((free[first], free[other], free[last]), (4, 3, 0));
    assert_eq!(fs.pool_size(), 8 * 256, "no growth");
    // Freed by a third shard: it lands there, on the stream it is freed on.
    on(last, || fs.deallocate(p, 100, Stream::DEFAULT).unwrap());
    assert_eq!(fs.shard_free()[last], 1);
    assert_eq!(fs.free_block_count(), 8);
    assert_eq!(fs.live_blocks(), 0);
    drop(fs);
    assert_eq!(up.outstanding(), 0);
}

#[test]
fn a_dry_shard_orders_its_stream_after_another_shards_stream_before_taking_its_blocks() {
    if !gates_work() {
        return;
    }
    let _serial = SERIAL.lock();
    let rt = rt();
    let up = Counting::new();
    let fs = FixedSizeMemoryResource::with_shards(up.clone(), 256, 4, 2).unwrap();
    let (a, b) = (fs.my_shard(), (fs.my_shard() + 1) % 2);
    let s = new_stream();
    // Hold the default stream back; its blocks (shard a) go to `s` in shard b only after
    // `s` waits for the default stream, which a host function on `s` shows.
    let gate = Gate::close(Stream::DEFAULT);
    let p = on(b, || fs.allocate(256, s).unwrap());
    assert_eq!(fs.shard_free(), if a == 0 { [2, 1] } else { [1, 2] });
    let ran = Arc::new(AtomicBool::new(false));
    let r = ran.clone();
    rt.launch_host_func(s, Box::new(move || r.store(true, Ordering::SeqCst)))
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert!(
        !ran.load(Ordering::SeqCst),
        "work on the new stream ran before the default stream's"
    );
    gate.open();
    rt.stream_synchronize(s).unwrap();
    assert!(ran.load(Ordering::SeqCst));
    on(b, || fs.deallocate(p, 256, s).unwrap());
    fs.forget_stream(s).unwrap();
    assert_eq!(
        fs.stream_free(b, Stream::DEFAULT),
        2,
        "s's blocks moved to default"
    );
    rt.stream_destroy(s).unwrap();
    drop(fs);
    assert_eq!(up.outstanding(), 0);
}

/// Another shard's stream with fewer than a batch of free blocks is passed over (growth
/// costs no event; threads on their own streams would else trade a few blocks back and
/// forth), unless growth fails for lack of memory; one with a batch or more is taken from.
#[test]
fn a_dry_shard_grows_rather_than_take_a_few_blocks_of_another_stream() {
    let up = Counting::new();
    let fs = FixedSizeMemoryResource::with_shards(up.clone(), 256, 4, 2).unwrap();
    let (a, b) = (fs.my_shard(), (fs.my_shard() + 1) % 2);
    let s = new_stream();
    // Shard a: 3 free blocks of the default stream (one live).
    let held = on(a, || fs.allocate(256, Stream::DEFAULT).unwrap());
    assert_eq!(fs.stream_free(a, Stream::DEFAULT), 3);
    // Shard b on stream s: 3 < 4 (a batch), so it grows, leaving shard a alone.
    let p = on(b, || fs.allocate(256, s).unwrap());
    assert_eq!(fs.pool_size(), 8 * 256, "grew by a batch");
    assert_eq!(fs.stream_free(a, Stream::DEFAULT), 3, "shard a untouched");
    assert_eq!(fs.stream_free(b, s), 3);
    // With the upstream full, the few blocks are taken after all.
    let q: Vec<_> = (0..3)
        .map(|_| on(b, || fs.allocate(256, s).unwrap()))
        .collect();
    up.budget.store(up.outstanding(), Ordering::SeqCst);
    let r = on(b, || fs.allocate(256, s).unwrap());
    assert_eq!(fs.pool_size(), 8 * 256, "no growth past the budget");
    assert_eq!(
        fs.stream_free(a, Stream::DEFAULT),
        1,
        "half of shard a's 3, rounded up"
    );
    assert_eq!(fs.stream_free(b, s), 1);
    // A batch or more of another stream is taken without trying to grow.
    up.budget.store(usize::MAX, Ordering::SeqCst);
    for x in q.into_iter().chain([p, r]) {
        on(b, || fs.deallocate(x, 256, s).unwrap());
    }
    assert_eq!(fs.stream_free(b, s), 6);
    let t = on(a, || fs.allocate(256, Stream::DEFAULT).unwrap());
    assert_eq!(fs.stream_free(a, Stream::DEFAULT), 0);
    let u = on(a, || fs.allocate(256, Stream::DEFAULT).unwrap());
    assert_eq!(
        fs.pool_size(),
        8 * 256,
        "taken from shard b's 6 of s, no growth"
    );
    assert_eq!(fs.stream_free(b, s), 3);
    assert_eq!(fs.stream_free(a, Stream::DEFAULT), 2);
    for x in [held, t, u] {
        on(a, || fs.deallocate(x, 256, Stream::DEFAULT).unwrap());
    }
    fs.forget_stream(s).unwrap();
    rt().stream_destroy(s).unwrap();
    drop(fs);
    assert_eq!(up.outstanding(), 0);
}

#[test]
fn own_shard_streams_come_before_other_shards_other_streams_and_growth() {
    let up = Counting::new();
    let fs = FixedSizeMemoryResource::with_shards(up.clone(), 512, 2, 2).unwrap();
    let me = fs.my_shard();
    let s = new_stream();
    // Two blocks of the default stream in my shard; `s` takes both (all of a stream's
    // stack within a shard).
    let x = fs.allocate(512, s).unwrap();
    assert_eq!(fs.stream_free(me, s), 1);
    assert_eq!(fs.stream_free(me, Stream::DEFAULT), 0);
    let y = fs.allocate(512, s).unwrap();
    // Nothing free anywhere: growth, on the requesting stream's stack.
    let z = fs.allocate(512, Stream::DEFAULT).unwrap();
    assert_eq!(fs.pool_size(), 4 * 512);
    assert_eq!(fs.stream_free(me, Stream::DEFAULT), 1);
    for p in [x, y, z] {
        fs.deallocate(p, 512, s).unwrap();
    }
    assert_eq!(fs.free_block_count(), 4);
    fs.forget_stream(s).unwrap();
    assert_eq!(fs.stream_free(me, Stream::DEFAULT), 4);
    rt().stream_destroy(s).unwrap();
    assert_eq!(fs.release().unwrap(), 4 * 512);
    assert_eq!((fs.pool_size(), fs.free_block_count()), (0, 0));
    // Usable again after a release.
    let p = fs.allocate(1, Stream::DEFAULT).unwrap();
    assert_eq!(fs.pool_size(), 2 * 512);
    fs.deallocate(p, 1, Stream::DEFAULT).unwrap();
    drop(fs);
    assert_eq!(up.outstanding(), 0);
}

#[test]
fn foreign_interior_and_double_frees_are_refused_with_what_went_wrong() {
    let up = Counting::new();
    let fs = FixedSizeMemoryResource::with_shards(up.clone(), 1000, 3, 2).unwrap();
    let p = fs.allocate(1000, Stream::DEFAULT).unwrap();
    let q = fs.allocate(1000, Stream::DEFAULT).unwrap();
    let msg = |r: Result<()>| match r {
        Err(Error::InvalidArgument(m)) => m,
        other => panic!("expected an invalid-argument error, got {other:?}"),
    };
    // Freed on the other shard: the second free is caught there.
    on(1 - fs.my_shard(), || {
        fs.deallocate(p, 1000, Stream::DEFAULT).unwrap()
    });
    let m = msg(fs.deallocate(p, 1000, Stream::DEFAULT));
    assert!(
        m.contains("already freed") && m.contains(&format!("{p:p}")),
        "{m}"
    );
    let inside = q.cast::<u8>().wrapping_add(256).cast();
    let m = msg(fs.deallocate(inside, 8, Stream::DEFAULT));
    assert!(m.contains("inside a block of 1024 bytes"), "{m}");
    let other = up.allocate(256, Stream::DEFAULT).unwrap();
    let m = msg(fs.deallocate(other, 256, Stream::DEFAULT));
    assert!(m.contains("not allocated by this resource"), "{m}");
    up.deallocate(other, 256, Stream::DEFAULT).unwrap();
    let m = msg(fs.deallocate(q, 2000, Stream::DEFAULT));
    assert!(m.contains("2000") && m.contains("1024"), "{m}");
    // None of that changed anything.
    assert_eq!(fs.free_block_count(), 2);
    assert_eq!(fs.live_blocks(), 1);
    assert_eq!(fs.release().unwrap(), 0, "a block is live");
    fs.deallocate(q, 1000, Stream::DEFAULT).unwrap();
    assert_eq!(fs.live_blocks(), 0);
    assert_eq!(fs.release().unwrap(), 3 * 1024);
    drop(fs);
    assert_eq!(up.outstanding(), 0);
}

#[test]
fn dropping_with_live_blocks_returns_every_batch() {
    let up = Counting::new();
    let fs = FixedSizeMemoryResource::with_shards(up.clone(), 256, 2, 4).unwrap();
    let live: Vec<_> = (0..4)
        .flat_map(|i| on(i, || [fs.allocate(256, Stream::DEFAULT).unwrap()]))
        .collect();
    assert_eq!(live.len(), 4);
    assert!(fs.pool_size() >= 4 * 256);
    drop(fs);
    assert_eq!(up.outstanding(), 0);
}

/// One step of the gated model.
#[derive(Clone, Debug)]
enum Op {
    Alloc {
        shard: usize,
        stream: usize,
    },
    Free {
        pick: usize,
        shard: usize,
        stream: usize,
    },
    /// Frees a block that is already free.
    DoubleFree {
        pick: usize,
        shard: usize,
    },
    /// Frees an address inside a block.
    Interior {
        pick: usize,
        shard: usize,
    },
    /// Makes the resource forget a stream (its free blocks go to the default stream).
    Forget {
        stream: usize,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (0..4usize, 0..4usize).prop_map(|(shard, stream)| Op::Alloc { shard, stream }),
        4 => (any::<usize>(), 0..4usize, 0..4usize)
            .prop_map(|(pick, shard, stream)| Op::Free { pick, shard, stream }),
        1 => (any::<usize>(), 0..4usize).prop_map(|(pick, shard)| Op::DoubleFree { pick, shard }),
        1 => (any::<usize>(), 0..4usize).prop_map(|(pick, shard)| Op::Interior { pick, shard }),
        1 => (1..4usize).prop_map(|stream| Op::Forget { stream }),
    ]
}

/// Runs `ops` over 4 shards and 4 streams (the default stream and three others, tracked or
/// foreign) whose work is held back by gates until the end. Every free enqueues, just
/// before it, a marker on its stream (the block's last use); every allocation of a block
/// last freed on another stream enqueues a check on its stream that the marker has run.
/// The gates then open one stream at a time in the order `open` gives: a missing
/// ordering shows as a check that runs before its marker. Also checks that no block is
/// handed out twice, that double and interior frees are refused and change nothing, and
/// the counters.
fn gated_model(ops: &[Op], tracked: bool, open_order: &[usize]) {
    if !gates_work() {
        return;
    }
    let _serial = SERIAL.lock();
    let rt = rt();
    let up = Counting::new();
    let streams: Vec<Stream> = std::iter::once(Stream::DEFAULT)
        .chain((0..3).map(|_| new_stream()))
        .collect();
    if tracked {
        for &s in &streams[1..] {
            crate::mr::stream_created(s).unwrap();
        }
    }
    let fs = FixedSizeMemoryResource::with_shards(up.clone(), 256, 3, 4).unwrap();
    let gates: Vec<Gate> = streams.iter().map(|&s| Gate::close(s)).collect();
    // A resource that waited for the device here (a fallback the model never needs) would
    // wait for the gates forever: a watchdog opens them and fails the run instead.
    let (done, watch) = std::sync::mpsc::channel::<()>();
    let held: Vec<_> = gates.iter().map(|g| Gate(g.0.clone())).collect();
    let watchdog = std::thread::spawn(move || {
        let timed_out = watch
            .recv_timeout(std::time::Duration::from_secs(5))
            .is_err();
        drop(held);
        timed_out
    });
    let markers: Arc<Vec<AtomicBool>> = Arc::new((0..ops.len()).map(|_| false.into()).collect());
    let violations: Arc<Mutex<Vec<String>>> = Arc::default();
    // addr -> stream index it was allocated on.
    let mut live: BTreeMap<usize, usize> = BTreeMap::new();
    // Free blocks the model knows of: addr -> (stream index, marker) of their last free.
    let mut free: BTreeMap<usize, (usize, usize)> = BTreeMap::new();
    let mut order: Vec<usize> = Vec::new();
    for (id, op) in ops.iter().enumerate() {
        match *op {
            Op::Alloc { shard, stream } => {
                let s = streams[stream];
                let p = on(shard, || fs.allocate(256, s)).unwrap() as usize;
                assert_eq!(p % ALIGN, 0);
                assert!(!live.contains_key(&p), "{p:#x} handed out twice");
                if let Some((t, m)) = free.remove(&p) {
                    if t != stream {
                        let (markers, violations) = (markers.clone(), violations.clone());
                        rt.launch_host_func(
                            s,
                            Box::new(move || {
                                if !markers[m].load(Ordering::SeqCst) {
                                    violations.lock().push(format!(
                                        "{p:#x} freed on stream {t} (step {m}) was used on \
                                         stream {stream} first"
                                    ));
                                }
                            }),
                        )
                        .unwrap();
                    }
                }
                live.insert(p, stream);
                order.push(p);
            }
            Op::Free {
                pick,
                shard,
                stream,
            } => {
                if order.is_empty() {
                    continue;
                }
                let p = order.swap_remove(pick % order.len());
                live.remove(&p).unwrap();
                // The block's last use before the free, on the freeing stream (a program
                // freeing on another stream than the allocating one orders the two itself).
                let markers2 = markers.clone();
                rt.launch_host_func(
                    streams[stream],
                    Box::new(move || markers2[id].store(true, Ordering::SeqCst)),
                )
                .unwrap();
                let (t, m) = (stream, id);
                on(shard, || {
                    fs.deallocate(p as *mut c_void, 256, streams[stream])
                })
                .unwrap();
                free.insert(p, (t, m));
            }
            Op::DoubleFree { pick, shard } => {
                if free.is_empty() {
                    continue;
                }
                let p = *free.keys().nth(pick % free.len()).unwrap();
                let before = fs.free_block_count();
                let r = on(shard, || {
                    fs.deallocate(p as *mut c_void, 256, Stream::DEFAULT)
                });
                assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
                assert_eq!(fs.free_block_count(), before);
            }
            Op::Interior { pick, shard } => {
                let all: Vec<usize> = live.keys().chain(free.keys()).copied().collect();
                if all.is_empty() {
                    continue;
                }
                let p = all[pick % all.len()] + 128;
                let r = on(shard, || {
                    fs.deallocate(p as *mut c_void, 8, Stream::DEFAULT)
                });
                assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
            }
            Op::Forget { stream } => {
                let before = fs.free_block_count();
                fs.forget_stream(streams[stream]).unwrap();
                assert_eq!(fs.free_block_count(), before);
                for shard in 0..4 {
                    assert_eq!(fs.stream_free(shard, streams[stream]), 0);
                }
            }
        }
        assert_eq!(
            (fs.free_block_count() + live.len()) * 256,
            fs.pool_size(),
            "after {op:?}"
        );
        assert_eq!(fs.live_blocks(), live.len());
    }
    let _ = done.send(());
    assert!(
        !watchdog.join().unwrap(),
        "the resource waited on the host for held-back streams"
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
    for (p, a) in live {
        fs.deallocate(p as *mut c_void, 256, streams[a]).unwrap();
    }
    for &s in &streams[1..] {
        if tracked {
            crate::mr::stream_destroyed(s).unwrap();
        } else {
            fs.forget_stream(s).unwrap();
        }
        rt.stream_destroy(s).unwrap();
    }
    assert_eq!(fs.free_block_count() * 256, fs.pool_size());
    let size = fs.pool_size();
    assert_eq!(fs.release().unwrap(), size);
    drop(fs);
    assert_eq!(up.outstanding(), 0);
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 40,
        max_shrink_iters: 32,
        ..ProptestConfig::default()
    })]

    #[test]
    fn stream_rules_hold_across_shards(
        ops in prop::collection::vec(op(), 1..200),
        tracked in any::<bool>(),
        open_order in Just(vec![0usize, 1, 2, 3]).prop_shuffle(),
    ) {
        gated_model(&ops, tracked, &open_order);
    }
}

/// What a stress thread hands another to free.
struct Parcel(usize, u8, Stream);

/// Fills `p` with `tag` on `s` and returns; [`expect`] reads it back.
fn fill(p: usize, bytes: usize, tag: u8, s: Stream) {
    // SAFETY: `p` is a live block of at least `bytes` bytes until freed after `expect`.
    unsafe { rt().memset_async(p as *mut c_void, tag, bytes, s).unwrap() };
}

fn expect(p: usize, bytes: usize, tag: u8, s: Stream) {
    let mut back = [0u8; 64];
    for off in [0, bytes - 64] {
        // SAFETY: `off + 64 <= bytes` of a live block; `back` outlives the sync below.
        unsafe {
            rt().memcpy_async(back.as_mut_ptr().cast(), (p + off) as *const c_void, 64, s)
                .unwrap();
        }
        rt().stream_synchronize(s).unwrap();
        assert!(
            back.iter().all(|&b| b == tag),
            "block {p:#x} overwritten: {:?}",
            &back[..8]
        );
    }
}

/// `threads` threads over `shards` shards, each with its own stream plus the default one;
/// a quarter of the frees happen on another thread (and another stream) than the
/// allocation; patterns are checked before every free.
fn stress(threads: usize, shards: usize, steps: usize) {
    let _serial = SERIAL.lock();
    const BS: usize = 4096;
    let up = Counting::new();
    let fs = Arc::new(FixedSizeMemoryResource::with_shards(up.clone(), BS, 8, shards).unwrap());
    let mailbox: Mutex<Vec<Parcel>> = Mutex::new(Vec::new());
    std::thread::scope(|sc| {
        for t in 0..threads {
            let (fs, mailbox) = (fs.clone(), &mailbox);
            sc.spawn(move || {
                let rt = rt();
                let own = new_stream();
                let mut rng = 0x9e37_79b9_7f4a_7c15u64 ^ ((t as u64 + 1) * 0x2545_f491);
                let mut live: Vec<(usize, u8, Stream)> = Vec::new();
                for step in 0..steps {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    let s = if rng & 1 == 0 { own } else { Stream::DEFAULT };
                    if live.is_empty() || (rng >> 1) % 10 < 5 && live.len() < 48 {
                        let p = fs.allocate(1 + (rng >> 8) as usize % BS, s).unwrap() as usize;
                        let tag = (step as u8).wrapping_mul(31) ^ t as u8 | 1;
                        fill(p, BS, tag, s);
                        live.push((p, tag, s));
                    } else {
                        let (p, tag, ws) = live.swap_remove((rng >> 20) as usize % live.len());
                        expect(p, BS, tag, ws);
                        if (rng >> 40) % 4 == 0 {
                            mailbox.lock().push(Parcel(p, tag, ws));
                        } else {
                            fs.deallocate(p as *mut c_void, BS, s).unwrap();
                        }
                        let parcel = mailbox.lock().pop();
                        if let Some(Parcel(p, tag, ws)) = parcel {
                            expect(p, BS, tag, ws);
                            fs.deallocate(p as *mut c_void, BS, s).unwrap();
                        }
                    }
                }
                for (p, tag, ws) in live {
                    expect(p, BS, tag, ws);
                    fs.deallocate(p as *mut c_void, BS, ws).unwrap();
                }
                rt.stream_synchronize(own).unwrap();
                fs.forget_stream(own).unwrap();
                rt.stream_destroy(own).unwrap();
            });
        }
    });
    for Parcel(p, tag, ws) in mailbox.into_inner() {
        expect(p, BS, tag, ws);
        fs.deallocate(p as *mut c_void, BS, Stream::DEFAULT)
            .unwrap();
    }
    assert_eq!(fs.live_blocks(), 0);
    assert_eq!(fs.free_block_count() * BS, fs.pool_size());
    let size = fs.pool_size();
    assert_eq!(fs.release().unwrap(), size);
    drop(fs);
    assert_eq!(up.outstanding(), 0);
}

#[test]
fn stress_more_threads_than_shards_with_cross_thread_frees() {
    stress(12, 4, 3_000);
}

#[test]
fn stress_one_shard_per_thread_with_cross_thread_frees() {
    stress(8, 8, 3_000);
}

#[test]
fn concurrent_double_frees_let_exactly_one_through() {
    let _serial = SERIAL.lock();
    let up = Counting::new();
    let fs = Arc::new(FixedSizeMemoryResource::with_shards(up.clone(), 256, 64, 4).unwrap());
    for _ in 0..50 {
        let ptrs: Vec<usize> = (0..32)
            .map(|_| fs.allocate(256, Stream::DEFAULT).unwrap() as usize)
            .collect();
        let wins = AtomicUsize::new(0);
        std::thread::scope(|sc| {
            for _ in 0..4 {
                sc.spawn(|| {
                    for &p in &ptrs {
                        if fs
                            .deallocate(p as *mut c_void, 256, Stream::DEFAULT)
                            .is_ok()
                        {
                            wins.fetch_add(1, Ordering::SeqCst);
                        }
                    }
                });
            }
        });
        assert_eq!(wins.into_inner(), ptrs.len());
        assert_eq!(fs.live_blocks(), 0);
        assert_eq!(fs.free_block_count() * 256, fs.pool_size());
        let handed: BTreeSet<usize> = (0..fs.free_block_count())
            .map(|_| fs.allocate(256, Stream::DEFAULT).unwrap() as usize)
            .collect();
        assert_eq!(handed.len() * 256, fs.pool_size(), "a block on two stacks");
        for p in handed {
            fs.deallocate(p as *mut c_void, 256, Stream::DEFAULT)
                .unwrap();
        }
    }
    drop(fs);
    assert_eq!(up.outstanding(), 0);
}
