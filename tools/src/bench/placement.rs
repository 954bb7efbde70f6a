//! Placement on the streams workload (W4): the floor exact best fit reaches on its trace,
//! and the smallest arena that runs it.

use std::collections::BTreeMap;

use rmm::runtime::runtime;
use rmm::{Error, Result, Stream};

use crate::resources::{make, Sizing};
use crate::workloads::{churn, median, Rng, Sample};
use crate::MIB;

/// The streams workload's [`best_fit_floor`] (seed 11) for `steps`, computed once per run:
/// every resource's streams row prints it.
pub fn w4_floor(steps: usize) -> f64 {
    static DONE: std::sync::Mutex<Vec<(usize, f64)>> = std::sync::Mutex::new(Vec::new());
    let mut done = DONE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&(_, f)) = done.iter().find(|(s, _)| *s == steps) {
        return f;
    }
    let f = best_fit_floor(steps, 11);
    done.push((steps, f));
    f
}

/// The streams workload's trace (the sizes and frees [`churn`] makes from `seed`) replayed
/// through a model of exact best fit: free blocks merge with every free neighbour, a
/// request takes the smallest free block that fits (the lowest address among equals), and
/// the range grows at its end in 2 MiB granules, joining a free block there. Stream order
/// is ignored (every free usable at once by every stream), which no real pool may do, so
/// this is a floor for placement, not a competitor. Returns peak extent ÷ peak live bytes.
fn best_fit_floor(steps: usize, seed: u64) -> f64 {
    use std::collections::BTreeSet;
    const GRANULE: usize = 2 * MIB;
    let align = |b: usize| b.div_ceil(256) * 256;
    let mut by_size: BTreeSet<(usize, usize)> = BTreeSet::new();
    let mut by_addr: BTreeMap<usize, usize> = BTreeMap::new();
    let mut top = 0usize;
    let mut alloc =
        |n: usize, by_size: &mut BTreeSet<(usize, usize)>, by_addr: &mut BTreeMap<usize, usize>| {
            let found = by_size.range((n, 0)..).next().copied();
            let (size, addr) = found.unwrap_or_else(|| {
                // Grow, joining the free block that ends at the top.
                let last = by_addr.range(..top).next_back().map(|(&a, &s)| (a, s));
                let (addr, have) = match last {
                    Some((a, s)) if a + s == top => (a, s),
                    _ => (top, 0),
                };
                let grow = (n - have).div_ceil(GRANULE) * GRANULE;
                top += grow;
                if have > 0 {
                    by_size.remove(&(have, addr));
                }
                (have + grow, addr)
            });
            by_size.remove(&(size, addr));
            by_addr.remove(&addr);
            if size > n {
                by_size.insert((size - n, addr + n));
                by_addr.insert(addr + n, size - n);
            }
            (addr, top)
        };
    let free = |addr: usize,
                n: usize,
                by_size: &mut BTreeSet<(usize, usize)>,
                by_addr: &mut BTreeMap<usize, usize>| {
        let (mut a, mut s) = (addr, n);
        if let Some(&next) = by_addr.get(&(addr + n)) {
            by_addr.remove(&(addr + n));
            by_size.remove(&(next, addr + n));
            s += next;
        }
        if let Some((&pa, &ps)) = by_addr.range(..addr).next_back() {
            if pa + ps == addr {
                by_addr.remove(&pa);
                by_size.remove(&(ps, pa));
                a = pa;
                s += ps;
            }
        }
        by_addr.insert(a, s);
        by_size.insert((s, a));
    };
    let mut rng = Rng(seed);
    let (mut live, mut live_bytes, mut extent) = (Vec::with_capacity(1000), 0usize, 0usize);
    for _ in 0..1000 {
        let n = rng.log_uniform(256, MIB);
        let (a, t) = alloc(align(n), &mut by_size, &mut by_addr);
        live.push((a, n));
        live_bytes += n;
        extent = extent.max(t);
    }
    let mut peak = live_bytes;
    let plan: Vec<(usize, usize)> = (0..steps)
        .map(|_| (rng.range(0, live.len() - 1), rng.log_uniform(256, MIB)))
        .collect();
    for (i, n) in plan {
        let (a, old) = live[i];
        free(a, align(old), &mut by_size, &mut by_addr);
        live_bytes -= old;
        let (a, t) = alloc(align(n), &mut by_size, &mut by_addr);
        live[i] = (a, n);
        live_bytes += n;
        peak = peak.max(live_bytes);
        extent = extent.max(t);
    }
    extent as f64 / peak as f64
}

/// The streams workload for the arena, which takes a fixed size and never grows: its peak
/// upstream memory is the smallest arena (to 2 MiB) that runs the trace, found by bisection
/// between the trace's peak live bytes and a size that runs it; the timed runs use that
/// size.
pub fn arena_w4(steps: usize, streams: &[Stream]) -> Result<Sample> {
    // The peak live bytes when an arena of `size` runs the trace; `None` when it runs out.
    let run = |size: usize| -> Result<Option<usize>> {
        let subject = make("arena", Sizing::Arena(size))?;
        let r = churn(subject.mr.as_ref(), steps, 11, streams, true);
        runtime()?.device_synchronize().ok();
        match r {
            Ok(s) => Ok(Some(s.peak_live)),
            Err(Error::OutOfMemory { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    };
    let mut hi = 256 * MIB;
    let live = loop {
        if let Some(live) = run(hi)? {
            break live;
        }
        if hi >= 64 << 30 {
            return Err(Error::invalid(
                "the streams workload does not fit in a 64 GiB arena".to_string(),
            ));
        }
        hi *= 2;
    };
    // No arena smaller than the peak live bytes can run it.
    let mut lo = live & !(MIB - 1);
    while hi - lo > 2 * MIB {
        let mid = (lo + (hi - lo) / 2) & !(MIB - 1);
        if run(mid)?.is_some() {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    // A size that ran once may need a little more with other event timings.
    loop {
        let subject = make("arena", Sizing::Arena(hi))?;
        match median(|| churn(subject.mr.as_ref(), steps, 11, streams, true)) {
            Ok(mut s) => {
                runtime()?.device_synchronize().ok();
                s.peak_upstream = (subject.peak)();
                return Ok(s);
            }
            Err(Error::OutOfMemory { .. }) => hi += 2 * MIB,
            Err(e) => return Err(e),
        }
    }
}
