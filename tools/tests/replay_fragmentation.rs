//! `rmm-replay` on tests/data/replay_fragmentation.csv: a log on which the chunked pool, out
//! of room on a small device while it holds enough free bytes in pieces, runs to its end only
//! by giving its entirely free chunks back, and the pool on virtual memory runs to its end
//! with less memory from upstream (rmm-bench's W6 "fragmentation" sequence, recorded).
//!
//! The log: three rounds of allocations on one thread (12 blocks of 2 MiB, 12 of 4 MiB, 6
//! of 8 MiB), each round asking for more than the chunked pool has free (so it grows to 22
//! chunks, the largest 8 MiB), all but every fourth block of each round freed before the next
//! (scattered survivors), then one request of 24 MiB: larger than any chunk the chunked
//! pool took (at most 8 MiB), smaller than the bytes it holds free (74 MiB). On a device
//! of 128 MiB the chunked pool cannot take a 24 MiB chunk (20 MiB are left) until it gives
//! its entirely free chunks back (as RMM 26.10's pool does); the vmm pool's free memory
//! merged across its growths, and the request fits without that.
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

#[test]
fn both_pools_run_to_the_end_the_chunked_one_by_giving_chunks_back() {
    let json = temp("frag.json");
    let args = [LOG, "--mr", "pool", "--mr", "vmm_pool", "--json"];
    let out = replay(
        &[&args[..], &[json.to_str().unwrap()]].concat(),
        Some(DEVICE_MEMORY),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{out:?}");
    let j = std::fs::read_to_string(&json).unwrap();
    let recorded = num(&j, "\"recorded\"", "allocations");
    assert_eq!(recorded, 31, "{j}");
    assert_eq!(num(&j, "\"recorded\"", "allocation_failures"), 0, "{j}");
    let pool = "\"resource\": \"pool\"";
    let vmm = "\"resource\": \"vmm_pool\"";
    for r in [pool, vmm] {
        assert_eq!(
            num(&j, r, "failures"),
            0,
            "{r} runs to its end: {j}\n{stderr}"
        );
        assert_eq!(num(&j, r, "allocations"), recorded, "{j}");
        assert_eq!(num(&j, r, "frees"), recorded, "{j}");
        assert!(num(&j, r, "peak_upstream") <= 128 * MIB, "{j}");
        assert!(
            num(&j, r, "peak_upstream") >= num(&j, r, "peak_live"),
            "{j}"
        );
    }
    // The chunked pool took the 24 MiB after giving chunks back: the vmm pool, whose free
    // memory merged, needed less from upstream.
    assert!(
        num(&j, vmm, "peak_upstream") < num(&j, pool, "peak_upstream"),
        "{j}"
    );
}
