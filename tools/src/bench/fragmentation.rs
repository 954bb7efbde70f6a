//! Fragmentation (W6): on a small device, rounds of allocations that each make a pool grow,
//! all but every fourth block of each round freed, then one request larger than any chunk
//! the chunked pool took but smaller than the free bytes. Reported: whether that request
//! is served, the peak upstream (mapped) bytes over the peak live bytes, and what the pools
//! still hold after `release()` against the survivors' bytes.

use std::ffi::c_void;
use std::fmt::Write as _;
use std::time::Instant;

use rmm::counters;
use rmm::mr::{PoolMemoryResource, VmmPoolMemoryResource};
use rmm::runtime::runtime;
use rmm::{Error, Result, Stream};

use crate::cli::Workload;
use crate::report::Row;
use crate::resources::{make, Sizing, Subject};
use crate::workloads::Sample;
use crate::MIB;

/// The device: every resource gets this many bytes (see [`Sizing::Device`]). Below 128 MiB
/// the chunked pool grows by chunks of 4 MiB or the request when full (its rule without a
/// maximum), so the rounds below take it past twenty chunks.
const DEVICE: usize = 128 * MIB;
/// The rounds: (block size, blocks). Each round asks for more than the chunked pool has
/// free, so it grows in each (to 22 chunks, the largest 8 MiB, by its growth rule today).
const ROUNDS: &[(usize, usize)] = &[(2 * MIB, 12), (4 * MIB, 12), (8 * MIB, 6)];
/// Every this-many-th block of each round survives it (the first, the fifth, ...).
const KEEP_EVERY: usize = 4;
/// The large request: larger than any chunk the chunked pool took (8 MiB), smaller than
/// the bytes it has free, and more than its device has left once the rounds are done.
const LARGE: usize = 24 * MIB;

/// What fragmentation found on one resource.
struct Frag {
    sample: Sample,
    /// The large request's error, `None` when it succeeded.
    large_error: Option<String>,
    /// (bytes free, largest free block) of the pool before the large request, where the
    /// resource is a pool.
    free_before: Option<(usize, usize)>,
    survivor_bytes: usize,
    /// Bytes the resource holds from the device after giving back what it could.
    held_after_release: Option<usize>,
}

/// Fragmentation on `subject` (made with [`Sizing::Device`]): the rounds of
/// [`ROUNDS`] (each freeing all but every [`KEEP_EVERY`]th of its blocks before the
/// next starts), then [`LARGE`] bytes at once, then (the large block freed) the
/// resource's release, then the survivors freed. One run: what counts is the outcome.
fn run(subject: &Subject) -> Result<Frag> {
    let mr = subject.mr.as_ref();
    let st = Stream::DEFAULT;
    let (mut live_bytes, mut peak, mut ops, mut failures) = (0usize, 0usize, 0usize, 0usize);
    let mut survivors: Vec<(*mut c_void, usize)> = Vec::new();
    let before = counters::snapshot();
    let start = Instant::now();
    for &(size, count) in ROUNDS {
        let mut round = Vec::with_capacity(count);
        for _ in 0..count {
            ops += 1;
            match mr.allocate(size, st) {
                Ok(p) => {
                    round.push(Some(p));
                    live_bytes += size;
                    peak = peak.max(live_bytes);
                }
                Err(Error::OutOfMemory { .. }) => {
                    failures += 1;
                    round.push(None);
                }
                Err(e) => return Err(e),
            }
        }
        for (j, p) in round.into_iter().enumerate() {
            let Some(p) = p else { continue };
            if j % KEEP_EVERY == 0 {
                survivors.push((p, size));
            } else {
                mr.deallocate(p, size, st)?;
                live_bytes -= size;
                ops += 1;
            }
        }
    }
    let any = mr.as_any();
    let free_before = if let Some(p) = any.downcast_ref::<PoolMemoryResource>() {
        Some(p.free_summary())
    } else {
        any.downcast_ref::<VmmPoolMemoryResource>()
            .map(|v| v.free_summary())
    }
    .map(|f| (f.bytes_free, f.largest_free_block));
    // The frees' work done first: a stream-ordered pool may count memory whose free is
    // still queued as in use, and the outcome must not depend on how far the stream got.
    runtime()?.stream_synchronize(st).ok();
    ops += 1;
    let large_error = match mr.allocate(LARGE, st) {
        Ok(p) => {
            peak = peak.max(live_bytes + LARGE);
            mr.deallocate(p, LARGE, st)?;
            ops += 1;
            None
        }
        Err(e @ Error::OutOfMemory { .. }) => Some(e.to_string()),
        Err(e) => return Err(e),
    };
    runtime()?.stream_synchronize(st).ok();
    let seconds = start.elapsed().as_secs_f64();
    let counted = counters::snapshot().since(&before);
    let peak_upstream = (subject.peak)();
    let survivor_bytes = live_bytes;
    let held_after_release = subject.release.as_ref().map(|f| f()).transpose()?;
    for (p, size) in survivors {
        mr.deallocate(p, size, st)?;
    }
    Ok(Frag {
        sample: Sample {
            seconds,
            ops,
            peak_upstream,
            peak_live: peak,
            failures,
            counters: counted,
            counted_ops: ops,
        },
        large_error,
        free_before,
        survivor_bytes,
        held_after_release,
    })
}

/// Fragmentation's row for resource `name`.
pub fn row(name: &str) -> Result<Row> {
    let f = {
        let subject = make(name, Sizing::Device(DEVICE))?;
        let f = run(&subject)?;
        runtime()?.device_synchronize().ok();
        f
    };
    let mib = |b: usize| b as f64 / MIB as f64;
    let mut note = format!(
        "{} MiB request: {}",
        LARGE / MIB,
        if f.large_error.is_none() {
            "served"
        } else {
            "not served"
        }
    );
    if let Some((free, largest)) = f.free_before {
        let _ = write!(
            note,
            " (pool free {:.0} MiB, largest free block {:.0} MiB)",
            mib(free),
            mib(largest)
        );
    }
    let _ = write!(
        note,
        "; peak {} / peak live = {:.2}",
        if name == "vmm_pool" {
            "mapped"
        } else {
            "upstream"
        },
        f.sample.peak_upstream as f64 / f.sample.peak_live.max(1) as f64
    );
    if let Some(held) = f.held_after_release {
        let _ = write!(
            note,
            "; after release {:.0} MiB held for {:.0} MiB of survivors ({:.2}x)",
            mib(held),
            mib(f.survivor_bytes),
            held as f64 / f.survivor_bytes.max(1) as f64
        );
    }
    let opt = |v: Option<usize>| v.map_or("null".to_string(), |b| b.to_string());
    let extra = vec![
        ("device_bytes", DEVICE.to_string()),
        ("large_request_bytes", LARGE.to_string()),
        ("large_request_ok", f.large_error.is_none().to_string()),
        (
            "large_request_error",
            f.large_error
                .as_ref()
                .map_or("null".to_string(), |e| format!("{e:?}")),
        ),
        (
            "pool_bytes_free_before_large",
            opt(f.free_before.map(|x| x.0)),
        ),
        (
            "largest_free_block_before_large",
            opt(f.free_before.map(|x| x.1)),
        ),
        ("survivor_bytes", f.survivor_bytes.to_string()),
        ("held_after_release_bytes", opt(f.held_after_release)),
    ];
    Ok(Row {
        resource: name.into(),
        workload: Workload::Fragmentation,
        case: format!("{} MiB device", DEVICE / MIB),
        sample: f.sample,
        note,
        extra,
    })
}
