//! What each allocation entry point did: served from rmm-rs or passed through to the
//! vendor, with bytes, for `RMM_PRELOAD_STATS=1`.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// One intercepted allocation entry point.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum EntryPoint {
    CudaMalloc,
    CudaMallocAsync,
    CudaMallocManaged,
    HipMalloc,
    HipMallocAsync,
    HipExtMallocWithFlags,
    HipMallocManaged,
    CuMemAlloc,
    CuMemAllocAsync,
    CuMemAllocPitch,
    CuMemAllocManaged,
    CuMemAllocFromPoolAsync,
    CuMemCreate,
    CuMemAllocHost,
    CuMemHostAlloc,
}

/// What kind of memory an entry point hands out, which decides the warning at exit.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Memory {
    /// Device memory that rmm-rs serves (passing through is the exception).
    Served,
    /// Device or managed memory that always passes through (explicit pools, VMM, managed
    /// memory unless `RMM_PRELOAD_MANAGED=1`): the program allocates beside our pool.
    Beside,
    /// Pinned host memory: not what a device pool is for.
    Host,
}

const ENTRY_POINTS: [(EntryPoint, &str, Memory); 15] = [
    (EntryPoint::CudaMalloc, "cudaMalloc", Memory::Served),
    (
        EntryPoint::CudaMallocAsync,
        "cudaMallocAsync",
        Memory::Served,
    ),
    (
        EntryPoint::CudaMallocManaged,
        "cudaMallocManaged",
        Memory::Beside,
    ),
    (EntryPoint::HipMalloc, "hipMalloc", Memory::Served),
    (EntryPoint::HipMallocAsync, "hipMallocAsync", Memory::Served),
    (
        EntryPoint::HipExtMallocWithFlags,
        "hipExtMallocWithFlags",
        Memory::Served,
    ),
    (
        EntryPoint::HipMallocManaged,
        "hipMallocManaged",
        Memory::Beside,
    ),
    (EntryPoint::CuMemAlloc, "cuMemAlloc_v2", Memory::Served),
    (
        EntryPoint::CuMemAllocAsync,
        "cuMemAllocAsync",
        Memory::Served,
    ),
    (
        EntryPoint::CuMemAllocPitch,
        "cuMemAllocPitch_v2",
        Memory::Served,
    ),
    (
        EntryPoint::CuMemAllocManaged,
        "cuMemAllocManaged",
        Memory::Beside,
    ),
    (
        EntryPoint::CuMemAllocFromPoolAsync,
        "cuMemAllocFromPoolAsync",
        Memory::Beside,
    ),
    (EntryPoint::CuMemCreate, "cuMemCreate", Memory::Beside),
    (
        EntryPoint::CuMemAllocHost,
        "cuMemAllocHost_v2",
        Memory::Host,
    ),
    (EntryPoint::CuMemHostAlloc, "cuMemHostAlloc", Memory::Host),
];

#[derive(Default)]
struct Counts {
    served: AtomicU64,
    served_bytes: AtomicU64,
    passed: AtomicU64,
    passed_bytes: AtomicU64,
}

static COUNTS: [Counts; ENTRY_POINTS.len()] = [const {
    Counts {
        served: AtomicU64::new(0),
        served_bytes: AtomicU64::new(0),
        passed: AtomicU64::new(0),
        passed_bytes: AtomicU64::new(0),
    }
}; ENTRY_POINTS.len()];

fn counts(e: EntryPoint) -> &'static Counts {
    &COUNTS[e as usize]
}

/// An allocation of `bytes` through `e` served from rmm-rs.
pub(crate) fn served(e: EntryPoint, bytes: usize) {
    let c = counts(e);
    c.served.fetch_add(1, Relaxed);
    c.served_bytes.fetch_add(bytes as u64, Relaxed);
}

/// An allocation of `bytes` through `e` passed through to the vendor's function.
pub(crate) fn passed(e: EntryPoint, bytes: usize) {
    let c = counts(e);
    c.passed.fetch_add(1, Relaxed);
    c.passed_bytes.fetch_add(bytes as u64, Relaxed);
}

/// The per-entry-point lines of the exit report, and a warning for device memory that
/// went around the pool.
pub(crate) fn report() -> String {
    let mut out = String::from("  entry points (served by rmm-rs / passed through):\n");
    let mut beside = Vec::new();
    for (i, (_, name, memory)) in ENTRY_POINTS.iter().enumerate() {
        let c = &COUNTS[i];
        let (s, sb) = (c.served.load(Relaxed), c.served_bytes.load(Relaxed));
        let (p, pb) = (c.passed.load(Relaxed), c.passed_bytes.load(Relaxed));
        if s + p == 0 {
            continue;
        }
        out += &format!("    {name}: served {s} ({sb} bytes), passed through {p} ({pb} bytes)\n");
        if p > 0 && *memory != Memory::Host {
            beside.push(format!("{name} {p}"));
        }
    }
    if !beside.is_empty() {
        out += &format!(
            "  warning: device allocations passed through, not served by rmm-rs: {} (explicit \
             pools, virtual memory and managed memory pass through by design; cuMemAlloc* \
             passes through in a context that is not the device's primary one)\n",
            beside.join(", ")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_in_enum_order() {
        for (i, (e, _, _)) in ENTRY_POINTS.iter().enumerate() {
            assert_eq!(*e as usize, i, "{e:?}");
        }
    }
}
