//! The pool's hot path: no host heap allocation in steady state, and per-operation cost
//! that stays flat as the number of free blocks grows (no linear scans).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;
use std::time::Instant;

use rmm::mr::{
    CudaMemoryResource, DeviceMemoryResource, FixedSizeMemoryResource, PoolMemoryResource,
    SharedResource,
};
use rmm::runtime::runtime;
use rmm::Stream;

/// Counts heap allocations made by the calling thread while counting is on.
struct Counting;

thread_local! {
    static ON: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards every call to `System` unchanged; the thread-local bookkeeping
// allocates nothing (const-initialized `Cell`s).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ON.try_with(|on| {
            if on.get() {
                COUNT.with(|c| c.set(c.get() + 1));
            }
        });
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ON.try_with(|on| {
            if on.get() {
                COUNT.with(|c| c.set(c.get() + 1));
            }
        });
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn upstream() -> SharedResource {
    if std::env::var_os("RMM_RUNTIME").is_none() {
        std::env::set_var("RMM_RUNTIME", "host");
    }
    runtime().unwrap();
    Arc::new(CudaMemoryResource::new().unwrap())
}

/// Sizes for step `i` of a fixed pseudo-random sequence (256 B .. 64 KiB).
fn size(i: usize) -> usize {
    let x = (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40;
    256 + (x as usize % (64 << 10))
}

/// Churn: a working set of `live` blocks, each step frees one and allocates another.
fn churn(mr: &dyn DeviceMemoryResource, work: &mut [(*mut std::ffi::c_void, usize)], steps: usize) {
    for i in 0..steps {
        let k = (i * 7919) % work.len();
        let (p, n) = work[k];
        mr.deallocate(p, n, Stream::DEFAULT).unwrap();
        let n = size(i);
        work[k] = (mr.allocate(n, Stream::DEFAULT).unwrap(), n);
    }
}

fn fill(mr: &dyn DeviceMemoryResource, live: usize) -> Vec<(*mut std::ffi::c_void, usize)> {
    (0..live)
        .map(|i| {
            let n = size(i + 1_000_000);
            (mr.allocate(n, Stream::DEFAULT).unwrap(), n)
        })
        .collect()
}

#[test]
fn steady_state_allocates_nothing_on_the_host_heap() {
    let pool = PoolMemoryResource::new(upstream(), 256 << 20, None).unwrap();
    let mut work = fill(&pool, 2000);
    churn(&pool, &mut work, 200_000); // warm up: descriptors, map, free lists
    ON.with(|on| on.set(true));
    churn(&pool, &mut work, 200_000);
    ON.with(|on| on.set(false));
    assert_eq!(
        COUNT.with(|c| c.get()),
        0,
        "heap allocations in the pool's hot path"
    );
    for (p, n) in work {
        pool.deallocate(p, n, Stream::DEFAULT).unwrap();
    }

    let fs = FixedSizeMemoryResource::new(upstream(), 128 << 10, 256).unwrap();
    let mut work = fill(&fs, 2000);
    churn(&fs, &mut work, 50_000);
    COUNT.with(|c| c.set(0));
    ON.with(|on| on.set(true));
    churn(&fs, &mut work, 50_000);
    ON.with(|on| on.set(false));
    assert_eq!(
        COUNT.with(|c| c.get()),
        0,
        "heap allocations in fixed_size's hot path"
    );
    for (p, n) in work {
        fs.deallocate(p, n, Stream::DEFAULT).unwrap();
    }
}

/// ns per allocate+deallocate pair with `live` blocks in the working set (best of 5: the
/// machine's noise only ever adds time).
fn ns_per_pair(live: usize) -> f64 {
    let pool = PoolMemoryResource::new(upstream(), 0, None).unwrap();
    let mut work = fill(&pool, live);
    // Free every other block so that there are about live/2 free blocks to search.
    for (p, n) in work.iter_mut().step_by(2) {
        pool.deallocate(*p, *n, Stream::DEFAULT).unwrap();
        *n = 0;
    }
    let mut work: Vec<_> = work.into_iter().filter(|w| w.1 != 0).collect();
    churn(&pool, &mut work, 20_000);
    let mut t = [0f64; 5];
    for t in &mut t {
        let start = Instant::now();
        churn(&pool, &mut work, 100_000);
        *t = start.elapsed().as_nanos() as f64 / 100_000.0;
    }
    t.sort_by(f64::total_cmp);
    for (p, n) in work {
        pool.deallocate(p, n, Stream::DEFAULT).unwrap();
    }
    t[0]
}

#[test]
fn cost_per_operation_stays_flat_as_free_blocks_grow() {
    let small = ns_per_pair(10_000);
    let large = ns_per_pair(100_000);
    eprintln!("pool: {small:.0} ns/pair at 10 000 live, {large:.0} ns/pair at 100 000 live");
    // A scan of the ~50 000 free blocks would cost microseconds per operation (RMM's pool is
    // ~15x slower here); allow for cache misses in a 10x larger working set, not for scans.
    assert!(large < small * 8.0, "{small:.0} -> {large:.0} ns per pair");
}
