//! `rmm-replay` on tests/data/replay_fragmentation.csv: a log on which the chunked pool runs
//! out of memory while it holds enough free bytes, and the pool on virtual memory runs to
//! its end (rmm-bench's W6 "fragmentation" sequence, recorded).
//!
//! The log: three rounds of allocations on one thread (12 blocks of 2 MiB, 12 of 4 MiB, 6
//! of 8 MiB), each round asking for more than the chunked pool has free (so it grows to 22
//! chunks, the largest 8 MiB), all but every fourth block of each round freed before the next
//! (scattered survivors), then one request of 24 MiB: larger than any chunk the chunked
//! pool took (at most 8 MiB), smaller than the bytes it holds free (74 MiB). On a device
//! of 128 MiB the chunked pool cannot take a 24 MiB chunk (20 MiB are left) and fails; the
//! vmm pool's free memory merged across its growths, and the request fits.

mod common;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use common::{num, temp};
use rmm::mr::{CudaMemoryResource, DeviceMemoryResource, LoggingResourceAdaptor};
use rmm::Stream;

const LOG: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/replay_fragmentation.csv"
);

/// The emulated device the log is replayed on.
const DEVICE_MEMORY: &str = "128M";

const MIB: usize = 1 << 20;
/// (block size, blocks) of each round, as rmm-bench's W6.
const ROUNDS: &[(usize, usize)] = &[(2 * MIB, 12), (4 * MIB, 12), (8 * MIB, 6)];
const KEEP_EVERY: usize = 4;
const LARGE: usize = 24 * MIB;

/// Records the sequence through the logging adaptor into `path`.
fn record(path: &Path) {
    if std::env::var_os("RMM_RUNTIME").is_none() {
        std::env::set_var("RMM_RUNTIME", "host");
    }
    let up = Arc::new(CudaMemoryResource::new().unwrap());
    let mr = LoggingResourceAdaptor::new(up, Some(path), false).unwrap();
    let s = Stream::DEFAULT;
    let mut survivors = Vec::new();
    for &(size, count) in ROUNDS {
        let round: Vec<_> = (0..count).map(|_| mr.allocate(size, s).unwrap()).collect();
        for (j, p) in round.into_iter().enumerate() {
            if j % KEEP_EVERY == 0 {
                survivors.push((p, size));
            } else {
                mr.deallocate(p, size, s).unwrap();
            }
        }
    }
    let large = mr.allocate(LARGE, s).unwrap();
    mr.deallocate(large, LARGE, s).unwrap();
    for (p, size) in survivors {
        mr.deallocate(p, size, s).unwrap();
    }
}

/// Regenerates tests/data/replay_fragmentation.csv
/// (`cargo test -p rmm-tools --test replay_fragmentation -- --ignored`).
#[test]
#[ignore = "regenerates the committed data log"]
fn generate_fragmentation_log() {
    record(Path::new(LOG));
}

/// Runs rmm-replay on the host runtime (the emulated device's size is the point), on a
/// device of `device_memory` (the emulation's default, 16 GiB, when `None`).
fn replay(args: &[&str], device_memory: Option<&str>) -> std::process::Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rmm-replay"));
    c.args(args)
        .env("RMM_RUNTIME", "host")
        .env_remove("RMM_HOST_VMM")
        .env_remove("RMM_HOST_DEVICES");
    match device_memory {
        Some(m) => c.env("RMM_HOST_DEVICE_MEMORY", m),
        None => c.env_remove("RMM_HOST_DEVICE_MEMORY"),
    };
    c.output().unwrap()
}

/// The (bytes free, largest free block) the chunked pool's out-of-memory error reports.
fn free_in_error(stderr: &str) -> (usize, usize) {
    let key = " bytes free, largest free block ";
    let at = stderr
        .find(key)
        .unwrap_or_else(|| panic!("the pool's error names its free bytes: {stderr}"));
    let free = stderr[..at]
        .rsplit(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let largest = stderr[at + key.len()..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap();
    (free, largest)
}

#[test]
fn the_chunked_pool_fails_where_the_vmm_pool_runs_to_its_end() {
    let json = temp("frag.json");
    let args = [LOG, "--mr", "pool", "--mr", "vmm_pool", "--json"];
    let out = replay(
        &[&args[..], &[json.to_str().unwrap()]].concat(),
        Some(DEVICE_MEMORY),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    // 3: an allocation failed (the chunked pool's).
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let j = std::fs::read_to_string(&json).unwrap();
    let recorded = num(&j, "\"recorded\"", "allocations");
    assert_eq!(recorded, 31, "{j}");
    assert_eq!(num(&j, "\"recorded\"", "allocation_failures"), 0, "{j}");

    let pool = "\"resource\": \"pool\"";
    let failed = num(&j, pool, "failures");
    assert!(failed >= 1, "the chunked pool must fail: {j}");
    assert_eq!(num(&j, pool, "allocations"), recorded - failed, "{j}");
    // It failed with enough free bytes, none of its free blocks large enough.
    let (free, largest) = free_in_error(&stderr);
    assert!(free >= LARGE && largest < LARGE, "{stderr}");

    let vmm = "\"resource\": \"vmm_pool\"";
    assert_eq!(
        num(&j, vmm, "failures"),
        0,
        "the vmm pool runs to its end: {j}\n{stderr}"
    );
    assert_eq!(num(&j, vmm, "allocations"), recorded, "{j}");
    assert_eq!(num(&j, vmm, "frees"), recorded, "{j}");
    assert!(num(&j, vmm, "peak_upstream") <= 128 * MIB, "{j}");
    assert!(
        num(&j, vmm, "peak_upstream") >= num(&j, vmm, "peak_live"),
        "{j}"
    );

    // On the emulation's default device (16 GiB) both run to the end: the failure above is
    // the small device and the chunked pool's free memory in pieces, not the log.
    let out = replay(&[&args[..], &[json.to_str().unwrap()]].concat(), None);
    assert!(out.status.success(), "{out:?}");
    let j = std::fs::read_to_string(&json).unwrap();
    assert_eq!(num(&j, pool, "failures"), 0, "{j}");
    assert_eq!(num(&j, vmm, "failures"), 0, "{j}");
}
