//! The resources under test: each made as a workload wants its pools sized, with a way to
//! read its peak upstream memory; and the streams a workload runs on.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use rmm::mr::{
    ArenaMemoryResource, BinningMemoryResource, CudaMemoryResource, LimitingResourceAdaptor,
    ManagedMemoryResource, PoolMemoryResource, SharedResource, StatisticsResourceAdaptor,
    VmmPoolMemoryResource, VmmPoolOptions,
};
use rmm::runtime::{Runtime, StreamFlags};
use rmm::{Error, Result, Stream};
use rmm_tools::runtime_async::RuntimeAsync;

use crate::cli::{FOREIGN_STREAMS, VMM_RELEASE_THRESHOLD};
use crate::MIB;

/// The resources rmm-bench knows: the runtime's malloc, managed malloc and async pool
/// (baselines), and the library's sub-allocators.
pub const RESOURCES: &[&str] = &[
    "cuda", "managed", "async", "pool", "vmm_pool", "binning", "arena",
];

/// How a workload wants its pools sized.
#[derive(Clone, Copy, PartialEq)]
pub enum Sizing {
    /// Pools start at half of free memory (random, churn, threads: like RMM's benchmark).
    HalfFree,
    /// Pools start at the smallest size they accept and grow (streams).
    Grow,
    /// An arena of this many bytes (an arena cannot grow: streams looks for the smallest that
    /// runs it, see [`crate::placement::arena_w4`]).
    Arena(usize),
    /// Fragmentation: a device of this many bytes. The runtime's malloc, the pool and the
    /// arena take their memory through a limiting adaptor of this size (the pool has no
    /// maximum, so it grows as on a device that fills up); the vmm pool maps at most this
    /// much (its maximum pool size, so it grows by half the room left, RMM's rule with a
    /// maximum); the async pool is a mempool of this maximum size; the arena takes all of
    /// it.
    Device(usize),
}

/// A resource under test and how to read its peak upstream memory.
pub struct Subject {
    pub mr: SharedResource,
    pub peak: Box<dyn Fn() -> usize>,
    /// Gives back what the resource can while blocks are live and returns the bytes it
    /// still holds from the device (fragmentation); `None` where it cannot give anything
    /// back. The async baseline gives its cached memory back when dropped, so the next
    /// resource sees the device's free memory.
    pub release: Option<Box<dyn Fn() -> Result<usize>>>,
}

/// Resource `name` sized as `sizing` says.
pub fn make(name: &str, sizing: Sizing) -> Result<Subject> {
    // The managed baseline takes managed memory; everything else sits on the plain malloc.
    let base = || -> Result<SharedResource> {
        Ok(if name == "managed" {
            Arc::new(ManagedMemoryResource::new()?)
        } else {
            Arc::new(CudaMemoryResource::new()?)
        })
    };
    let device: SharedResource = match sizing {
        Sizing::Device(bytes) => Arc::new(LimitingResourceAdaptor::new(base()?, bytes, 256)?),
        _ => base()?,
    };
    // The statistics adaptor counts bytes taken from the upstream; its peak is the
    // resource's peak upstream memory.
    let upstream = Arc::new(StatisticsResourceAdaptor::new(device));
    let counted = {
        let u = upstream.clone();
        move || u.bytes_counter().peak.max(0) as usize
    };
    let up: SharedResource = upstream.clone();
    let half = || rmm::device::percent_of_free_device_memory(50);
    let initial = || -> Result<usize> {
        Ok(match sizing {
            Sizing::HalfFree => half()?,
            Sizing::Grow | Sizing::Arena(_) | Sizing::Device(_) => 0,
        })
    };
    let mut release: Option<Box<dyn Fn() -> Result<usize>>> = None;
    let mr: SharedResource = match name {
        "cuda" | "managed" => upstream.clone(),
        "pool" => {
            let pool = Arc::new(PoolMemoryResource::new(up, initial()?, None)?);
            let p = pool.clone();
            release = Some(Box::new(move || {
                p.release()?;
                Ok(p.pool_size())
            }));
            pool
        }
        "vmm_pool" => {
            // Sized as the pool: half of free memory at once (random, churn, threads), or from
            // nothing (streams, fragmentation); on fragmentation's device it maps at most the
            // device's bytes.
            let vmm = Arc::new(VmmPoolMemoryResource::new(VmmPoolOptions {
                initial_pool_size: initial()?,
                maximum_pool_size: match sizing {
                    Sizing::Device(bytes) => Some(bytes),
                    _ => None,
                },
                release_threshold: Some(VMM_RELEASE_THRESHOLD.load(Ordering::Relaxed))
                    .filter(|&t| t != usize::MAX),
                ..VmmPoolOptions::default()
            })?);
            // Its peak mapped memory (the pool's size falls with a release threshold, and at
            // release(), which fragmentation calls after reading the peak).
            let (v, r) = (vmm.clone(), vmm.clone());
            return Ok(Subject {
                mr: vmm,
                peak: Box::new(move || v.peak_pool_size()),
                release: Some(Box::new(move || {
                    r.release()?;
                    Ok(r.pool_size())
                })),
            });
        }
        "binning" => {
            let pool: SharedResource = Arc::new(PoolMemoryResource::new(up, initial()?, None)?);
            Arc::new(BinningMemoryResource::with_range(pool, 18, 22)?)
        }
        "arena" => {
            let size = match sizing {
                Sizing::HalfFree => {
                    let free = rmm::device::available_device_memory()?.free;
                    (free.saturating_sub(64 * MIB)) & !255
                }
                Sizing::Grow => 256 * MIB,
                Sizing::Arena(size) | Sizing::Device(size) => size,
            };
            Arc::new(ArenaMemoryResource::new(up, Some(size), false)?)
        }
        "async" => {
            // The device's default mempool, or on fragmentation's device a mempool of that
            // maximum size.
            let a = Arc::new(RuntimeAsync::new(match sizing {
                Sizing::Device(bytes) => Some(bytes),
                _ => None,
            })?);
            let (peak, trim) = (a.clone(), a.clone());
            return Ok(Subject {
                mr: a,
                peak: Box::new(move || peak.peak_reserved()),
                // What the mempool reserves once its cached memory is trimmed.
                release: Some(Box::new(move || trim.trim())),
            });
        }
        other => {
            return Err(Error::invalid(format!(
                "unknown resource {other:?}; known: {}",
                RESOURCES.join(", ")
            )))
        }
    };
    Ok(Subject {
        mr,
        peak: Box::new(counted),
        release,
    })
}

/// Streams made for a workload, destroyed when dropped (after the resources using them).
/// They are announced to the library, as `rmm::cuda_stream` / `rmm_stream_create` streams
/// are (tracked streams, see `rmm::mr::stream_created`), so the workloads measure what C++
/// and C programs using the library's streams get; `--foreign-streams` leaves them
/// unannounced (an event recorded at every free, as for streams made by other libraries).
pub struct Streams(pub Vec<Stream>, &'static dyn Runtime, bool);

impl Streams {
    pub fn new(rt: &'static dyn Runtime, n: usize) -> Result<Self> {
        let v: Vec<Stream> = (0..n)
            .map(|_| rt.stream_create(StreamFlags { non_blocking: true }))
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| Error::runtime(0, e))?;
        let tracked = !FOREIGN_STREAMS.load(Ordering::Relaxed);
        if tracked {
            for s in &v {
                rmm::mr::stream_created(*s)?;
            }
        }
        Ok(Streams(v, rt, tracked))
    }
}

impl Drop for Streams {
    fn drop(&mut self) {
        let _ = self.1.device_synchronize();
        for s in &self.0 {
            if self.2 {
                let _ = rmm::mr::stream_destroyed(*s);
            }
            let _ = self.1.stream_destroy(*s);
        }
    }
}
