//! `rmm-replay`: replays of a real log (tests/data), statistics preserved, malformed input.

mod common;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use common::{num, temp};
use rmm::mr::{CudaMemoryResource, DeviceMemoryResource, LoggingResourceAdaptor};
use rmm::Stream;

const DATA_LOG: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/replay_3threads.csv"
);

fn setup() {
    if std::env::var_os("RMM_RUNTIME").is_none() {
        std::env::set_var("RMM_RUNTIME", "host");
    }
}

fn replay(args: &[&str]) -> std::process::Output {
    setup();
    Command::new(env!("CARGO_BIN_EXE_rmm-replay"))
        .args(args)
        .output()
        .unwrap()
}

/// Replays `log` on the resource `spec` (successfully) and returns the JSON it wrote.
fn replay_json(log: &Path, spec: &str) -> String {
    let json = temp(&format!(
        "{}.json",
        log.file_stem().unwrap().to_string_lossy()
    ));
    let out = replay(&[
        log.to_str().unwrap(),
        "--mr",
        spec,
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    std::fs::read_to_string(&json).unwrap()
}

/// A workload of `threads` threads through the logging adaptor; returns the allocation
/// count, total bytes and peak live bytes of the run.
fn record(path: &Path, threads: usize, per_thread: usize) -> (usize, usize, usize) {
    setup();
    let up = Arc::new(CudaMemoryResource::new().unwrap());
    let mr = Arc::new(LoggingResourceAdaptor::new(up, Some(path), false).unwrap());
    let live = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let peak = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut totals = (0, 0);
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let (mr, live, peak) = (mr.clone(), live.clone(), peak.clone());
                s.spawn(move || {
                    use std::sync::atomic::Ordering::Relaxed;
                    let mut held: Vec<(usize, usize)> = Vec::new();
                    let mut x = 0x9e37_79b9_u64 ^ t as u64;
                    let (mut n, mut bytes) = (0, 0);
                    for _ in 0..per_thread {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        if held.len() < 4 || (x % 3 != 0 && held.len() < 40) {
                            let size = 256 + (x as usize >> 8) % (1 << 16);
                            let p = mr.allocate(size, Stream::DEFAULT).unwrap();
                            let now = live.fetch_add(size, Relaxed) + size;
                            peak.fetch_max(now, Relaxed);
                            held.push((p as usize, size));
                            n += 1;
                            bytes += size;
                        } else {
                            let (p, size) = held.swap_remove((x >> 20) as usize % held.len());
                            live.fetch_sub(size, Relaxed);
                            mr.deallocate(p as *mut _, size, Stream::DEFAULT).unwrap();
                        }
                    }
                    for (p, size) in held {
                        live.fetch_sub(size, Relaxed);
                        mr.deallocate(p as *mut _, size, Stream::DEFAULT).unwrap();
                    }
                    (n, bytes)
                })
            })
            .collect();
        for h in hs {
            let (n, b) = h.join().unwrap();
            totals.0 += n;
            totals.1 += b;
        }
    });
    (
        totals.0,
        totals.1,
        peak.load(std::sync::atomic::Ordering::Relaxed),
    )
}

/// Regenerates tests/data/replay_3threads.csv (`cargo test -p rmm-tools --test replay --
/// --ignored`).
#[test]
#[ignore = "regenerates the committed data log"]
fn generate_data_log() {
    record(Path::new(DATA_LOG), 3, 120);
}

#[test]
fn replays_the_committed_log_on_every_resource() {
    let json = temp("data.json");
    let svg = temp("data.svg");
    let out = replay(&[
        DATA_LOG,
        "--mr",
        "cuda",
        "--mr",
        "pool",
        "--mr",
        "binning:10:16",
        "--mr",
        "arena:64M",
        "--mr",
        "fixed_size:128K",
        "--mr",
        "vmm_pool",
        "--mr",
        "vmm_pool:4M:64M",
        "--mr",
        "async",
        "--mr",
        "async:64M",
        "--json",
        json.to_str().unwrap(),
        "--svg",
        svg.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(stdout.contains("3 threads"), "{stdout}");
    let j = std::fs::read_to_string(&json).unwrap();
    let allocs = num(&j, "\"recorded\"", "allocations");
    assert!(allocs > 100, "{j}");
    for r in [
        "\"cuda\"",
        "\"pool\"",
        "\"binning:10:16\"",
        "\"arena:64M\"",
        "\"fixed_size:128K\"",
        "\"vmm_pool\"",
        "\"vmm_pool:4M:64M\"",
        "\"async\"",
        "\"async:64M\"",
    ] {
        assert_eq!(num(&j, r, "allocations"), allocs, "{r}: {j}");
        assert_eq!(num(&j, r, "frees"), allocs, "{r}: {j}");
        assert_eq!(num(&j, r, "failures"), 0, "{r}: {j}");
        assert!(
            num(&j, r, "peak_upstream") >= num(&j, r, "peak_live"),
            "{r}: {j}"
        );
    }
    let s = std::fs::read_to_string(&svg).unwrap();
    assert!(
        s.starts_with("<svg") && s.matches("<polyline").count() == 18,
        "{s}"
    );
}

#[test]
fn our_log_replays_to_the_statistics_of_the_original_run() {
    let log = temp("single.csv");
    let (n, bytes, peak) = record(&log, 1, 400);
    let j = replay_json(&log, "pool");
    for from in ["\"recorded\"", "\"pool\""] {
        assert_eq!(num(&j, from, "allocations"), n, "{j}");
        assert_eq!(num(&j, from, "total_bytes"), bytes, "{j}");
        assert_eq!(num(&j, from, "peak_live"), peak, "{j}");
    }
    // Several threads: counts and bytes are preserved (the peak depends on interleaving).
    let log = temp("multi.csv");
    let (n, bytes, _) = record(&log, 4, 300);
    let j = replay_json(&log, "pool");
    assert_eq!(num(&j, "\"pool\"", "allocations"), n, "{j}");
    assert_eq!(num(&j, "\"pool\"", "total_bytes"), bytes, "{j}");
}

#[test]
fn reads_rmm_written_logs() {
    // As RMM 25.02 writes them (`%p` prints null as "(nil)"; streams in hex).
    let log = temp("rmm.csv");
    std::fs::write(
        &log,
        "Thread,Time,Action,Pointer,Size,Stream\n\
         140234,10:00:00.000001,allocate,0x7f0000000000,1024,0\n\
         140235,10:00:00.000002,allocate,0x7f0000000400,2048,0x5\n\
         140234,10:00:00.000003,allocate failure,(nil),99999999,0\n\
         140235,10:00:00.000004,free,0x7f0000000000,1024,0\n\
         140234,10:00:00.000005,free,0x7f0000000400,2048,0x5\n",
    )
    .unwrap();
    let j = replay_json(&log, "cuda");
    assert_eq!(num(&j, "\"cuda\"", "allocations"), 2, "{j}");
    assert_eq!(num(&j, "\"cuda\"", "peak_live"), 3072, "{j}");
    assert_eq!(num(&j, "\"recorded\"", "allocation_failures"), 1, "{j}");
}

#[test]
fn malformed_line_is_reported_with_its_number() {
    let log = temp("bad.csv");
    std::fs::write(
        &log,
        "Thread,Time,Action,Pointer,Size,Stream\n\
         1,10:00:00.000001,allocate,0x1000,1024,0\n\
         1,10:00:00.000002,allocat,0x2000,1024,0\n\
         1,10:00:00.000003,free,0x1000,1024,0\n",
    )
    .unwrap();
    let out = replay(&[log.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("line 3:") && err.contains("allocat"), "{err}");
    assert!(out.stdout.is_empty(), "nothing replayed: {out:?}");

    let json = temp("bad.json");
    let out = replay(&[
        log.to_str().unwrap(),
        "--skip-bad-lines",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    let j = std::fs::read_to_string(&json).unwrap();
    assert_eq!(num(&j, "\"recorded\"", "skipped_lines"), 1, "{j}");
    assert_eq!(num(&j, "\"pool\"", "allocations"), 1, "{j}");

    std::fs::write(&log, "a,b\n").unwrap();
    let out = replay(&[log.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("line 1:"), "{err}");
}
