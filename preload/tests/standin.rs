//! The interposer against a stand-in CUDA runtime (host memory, soname `libcudart.so.13`),
//! built here with the `cc` crate: no GPU needed. A multi-threaded C program linked against
//! the stand-in runs with and without `LD_PRELOAD=librmm_preload.so`.

mod common;

use common::{assert_ok, preload_library, run_cc, standin_count, text, value_after};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The stand-in runtime and the programs linked against it, for one API family.
struct Built {
    dir: PathBuf,
    program: PathBuf,
    defer: PathBuf,
    /// tests/c/proc_address.c (HIP only).
    proc_address: Option<PathBuf>,
    /// tests/c/loop.c built for the per-thread default stream (`cudaMallocAsync_ptsz`;
    /// CUDA only).
    loop_ptsz: Option<PathBuf>,
    preload: PathBuf,
}

/// Builds the stand-in (`libcudart.so.13`, or `libamdhip64.so.6` for HIP) and the test
/// programs in a directory of their own.
fn build(hip: bool) -> Built {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c");
    let (name, soname, define) = if hip {
        ("preload-standin-hip", "libamdhip64.so.6", "-DSTANDIN_HIP")
    } else {
        ("preload-standin", "libcudart.so.13", "-DSTANDIN_CUDA")
    };
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let lib = dir.join(soname);
    let include = format!("-I{}", src.display());
    let soname_flag = format!("-Wl,-soname,{soname}");
    run_cc(&[
        define,
        &include,
        "-shared",
        "-fPIC",
        &soname_flag,
        "-o",
        lib.to_str().unwrap(),
        src.join("standin_runtime.c").to_str().unwrap(),
        "-lpthread",
    ]);
    let program = |file: &str, out: &str| {
        let exe = dir.join(out);
        run_cc(&[
            define,
            &include,
            "-o",
            exe.to_str().unwrap(),
            src.join(file).to_str().unwrap(),
            lib.to_str().unwrap(),
            "-lpthread",
        ]);
        exe
    };
    Built {
        program: program("loop.c", "loop"),
        defer: program("defer.c", "defer"),
        proc_address: hip.then(|| program("proc_address.c", "proc_address")),
        loop_ptsz: (!hip).then(|| {
            let exe = dir.join("loop_ptsz");
            run_cc(&[
                define,
                "-DSTANDIN_PTSZ",
                &include,
                "-o",
                exe.to_str().unwrap(),
                src.join("loop.c").to_str().unwrap(),
                lib.to_str().unwrap(),
                "-lpthread",
            ]);
            exe
        }),
        dir,
        preload: preload_library(),
    }
}

fn built() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| build(false))
}

fn built_hip() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| build(true))
}

/// Runs the loop program; `preload` adds LD_PRELOAD, `env` more variables.
fn run(preload: bool, env: &[(&str, &str)]) -> Output {
    run_program(built(), &built().program, preload, env)
}

/// Runs `exe` (one of `b`'s programs) against `b`'s stand-in.
fn run_program(b: &Built, exe: &Path, preload: bool, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(exe);
    cmd.env("LD_LIBRARY_PATH", &b.dir)
        // The CI exports RMM_RUNTIME=host for the other tests; the interposer must still
        // pick the CUDA runtime the program called.
        .env("RMM_RUNTIME", "host")
        .env_remove("LD_PRELOAD");
    for v in [
        "RMM_PRELOAD_RESOURCE",
        "RMM_PRELOAD_INITIAL_POOL_SIZE",
        "RMM_PRELOAD_MAXIMUM_POOL_SIZE",
        "RMM_PRELOAD_LOG_FILE",
        "RMM_PRELOAD_STATS",
        "RMM_PRELOAD_SYNC",
        "RMM_PRELOAD_MANAGED",
    ] {
        cmd.env_remove(v);
    }
    if preload {
        cmd.env("LD_PRELOAD", &b.preload);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run a test program")
}

#[test]
fn raw_run_is_sane() {
    let out = run(false, &[]);
    assert_ok(&out);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("failures 0"), "{stdout}");
    assert!(stdout.contains("double free -> 1"), "{stdout}");
    // 8 threads × 3000 iterations × 3 buffers, half of the third ones async.
    assert!(standin_count(&text(&out.stderr), "cudaMalloc") >= 60_000);
}

#[test]
fn pool_routes_allocations_and_results_match() {
    let raw = run(false, &[]);
    assert_ok(&raw);
    for env in [
        &[("RMM_PRELOAD_STATS", "1")][..],
        &[("RMM_PRELOAD_STATS", "1"), ("RMM_PRELOAD_SYNC", "0")][..],
        &[
            ("RMM_PRELOAD_STATS", "1"),
            ("RMM_PRELOAD_RESOURCE", "binning"),
        ][..],
        &[
            ("RMM_PRELOAD_STATS", "1"),
            ("RMM_PRELOAD_RESOURCE", "arena"),
            // 8 threads, each arena caching up to 4 MiB of empty 1 MiB superblocks, plus
            // the blocks that deferred reuse holds back while the stand-in's event worker
            // lags (tens of MiB on a loaded machine): 64 MiB is too tight for that.
            ("RMM_PRELOAD_INITIAL_POOL_SIZE", "256MiB"),
        ][..],
        &[
            ("RMM_PRELOAD_STATS", "1"),
            ("RMM_PRELOAD_INITIAL_POOL_SIZE", "10%"),
            ("RMM_PRELOAD_MAXIMUM_POOL_SIZE", "50%"),
        ][..],
    ] {
        let out = run(true, env);
        assert_ok(&out);
        // Same output: checksum, and NULL / zero-size / foreign / interior / double frees
        // answered as the runtime answers them.
        assert_eq!(text(&out.stdout), text(&raw.stdout), "{env:?}");
        let stderr = text(&out.stderr);
        let mallocs = standin_count(&stderr, "cudaMalloc");
        assert!(
            mallocs < 100,
            "{env:?}: {mallocs} runtime mallocs\n{stderr}"
        );
        assert_eq!(standin_count(&stderr, "cudaMallocAsync"), 0, "{stderr}");
        assert!(stderr.contains("rmm_preload statistics"), "{stderr}");
        assert!(
            stderr.contains("device 0: allocations 72001, frees 72001"),
            "{stderr}"
        );
        assert!(
            stderr.contains("foreign frees 1, NULL/zero-size 2"),
            "{stderr}"
        );
        assert!(
            stderr.contains("refused frees (double/interior) 2"),
            "{stderr}"
        );
        // Deferred reuse (the default) and RMM_PRELOAD_SYNC=0 never synchronize the
        // device in a free.
        let syncs = standin_count(&stderr, "device_synchronize");
        assert!(syncs < 10, "{env:?}: {syncs} synchronizations\n{stderr}");
        if !env.contains(&("RMM_PRELOAD_SYNC", "0")) {
            assert!(stderr.contains("deferred reuse: seals"), "{stderr}");
            assert!(standin_count(&stderr, "event_record") > 1000, "{stderr}");
        }
    }
    // RMM_PRELOAD_SYNC=device: every cudaFree of ours synchronizes (the async frees not).
    let out = run(true, &[("RMM_PRELOAD_SYNC", "device")]);
    assert_ok(&out);
    assert_eq!(text(&out.stdout), text(&raw.stdout));
    let stderr = text(&out.stderr);
    assert!(
        standin_count(&stderr, "device_synchronize") >= 60_000,
        "{stderr}"
    );
    assert!(standin_count(&stderr, "cudaMalloc") < 100, "{stderr}");
}

#[test]
fn freed_blocks_are_not_reused_before_their_kernels_finish() {
    let b = built();
    let raw = run_program(b, &b.defer, false, &[]);
    assert_ok(&raw);
    assert!(
        text(&raw.stdout).contains("corrupt 0 failures 0"),
        "{}",
        text(&raw.stdout)
    );
    for env in [
        &[("RMM_PRELOAD_STATS", "1")][..],
        &[("RMM_PRELOAD_STATS", "1"), ("RMM_PRELOAD_SYNC", "device")][..],
        &[
            ("RMM_PRELOAD_STATS", "1"),
            ("RMM_PRELOAD_RESOURCE", "arena"),
        ][..],
        &[
            ("RMM_PRELOAD_STATS", "1"),
            ("RMM_PRELOAD_RESOURCE", "binning"),
        ][..],
    ] {
        let out = run_program(b, &b.defer, true, env);
        assert_ok(&out);
        let stderr = text(&out.stderr);
        assert_eq!(text(&out.stdout), text(&raw.stdout), "{env:?}\n{stderr}");
        // 209 allocations; the pool's own cudaMallocs as it grows: blocks still pending
        // behind their kernels keep it growing, by 4 MiB at a time at this size (13 calls
        // when it doubled up to 8 MiB, 20 since it grows by a 32nd past 4 MiB).
        assert!(
            standin_count(&stderr, "cudaMalloc") < 24,
            "{env:?}\n{stderr}"
        );
    }
    // Without synchronization the late kernel writes into the next allocation: the risk
    // RMM_PRELOAD_SYNC=0 documents, and proof that this test sees it.
    let out = run_program(b, &b.defer, true, &[("RMM_PRELOAD_SYNC", "0")]);
    let stdout = text(&out.stdout);
    assert!(value_after(&stdout, "corrupt") > 0, "{stdout}");
    assert_eq!(value_after(&stdout, "failures"), 0, "{stdout}");
}

#[test]
fn a_full_pool_waits_for_deferred_blocks_instead_of_failing() {
    let b = built();
    let out = run_program(
        b,
        &b.defer,
        true,
        &[
            ("RMM_PRELOAD_STATS", "1"),
            ("RMM_PRELOAD_INITIAL_POOL_SIZE", "4MiB"),
            ("RMM_PRELOAD_MAXIMUM_POOL_SIZE", "4MiB"),
        ],
    );
    assert_ok(&out);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("corrupt 0 failures 0"), "{stdout}");
    let stderr = text(&out.stderr);
    let line = stderr
        .lines()
        .find(|l| l.contains("deferred reuse: seals"))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        value_after(line, "batches") > 0,
        "no wait for pending blocks: {line}"
    );
    assert!(stderr.contains("failed 0"), "{stderr}");
}

#[test]
fn a_forked_child_uses_the_runtime_and_the_parent_keeps_its_pool() {
    let b = built();
    let out = run_program(b, &b.defer, true, &[("RMM_PRELOAD_STATS", "1")]);
    assert_ok(&out);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("child 0"), "{stdout}");
    let stderr = text(&out.stderr);
    // One stand-in report per process; the child's allocation went to the runtime, the
    // parent's (48 × 3 + 64 + 1, before and after the fork) to the pool.
    let reports: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("standin:"))
        .collect();
    assert_eq!(reports.len(), 2, "{stderr}");
    // The child inherits the parent's counters; its own free went to the runtime.
    assert!(
        reports.iter().any(|r| r.contains(" cudaFree 1 ")),
        "the child's allocation did not reach the runtime:\n{stderr}"
    );
    assert!(stderr.contains("allocations 209, frees 209"), "{stderr}");
}

#[test]
fn hip_programs_are_routed_through_the_pool() {
    let b = built_hip();
    let raw = run_program(b, &b.program, false, &[]);
    assert_ok(&raw);
    let out = run_program(b, &b.program, true, &[("RMM_PRELOAD_STATS", "1")]);
    assert_ok(&out);
    assert_eq!(text(&out.stdout), text(&raw.stdout));
    let stderr = text(&out.stderr);
    assert!(standin_count(&stderr, "hipMalloc") < 100, "{stderr}");
    assert!(stderr.contains("runtime hip ("), "{stderr}");
    assert!(
        stderr.contains("device 0: allocations 72001, frees 72001"),
        "{stderr}"
    );
    let deferred = run_program(b, &b.defer, true, &[]);
    assert_ok(&deferred);
    assert!(
        text(&deferred.stdout).contains("corrupt 0 failures 0"),
        "{}",
        text(&deferred.stdout)
    );
}

#[test]
fn per_thread_stream_names_are_served() {
    let b = built();
    let exe = b.loop_ptsz.as_ref().unwrap();
    let raw = run_program(b, exe, false, &[]);
    assert_ok(&raw);
    let out = run_program(b, exe, true, &[("RMM_PRELOAD_STATS", "1")]);
    assert_ok(&out);
    assert_eq!(text(&out.stdout), text(&raw.stdout));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("cudaMallocAsync: served 12000"), "{stderr}");
    assert_eq!(standin_count(&stderr, "cudaMallocAsync"), 0, "{stderr}");
}

#[test]
fn hip_get_proc_address_hands_out_the_hooks() {
    let b = built_hip();
    let exe = b.proc_address.as_ref().unwrap();
    let out = run_program(b, exe, true, &[("RMM_PRELOAD_STATS", "1")]);
    assert_ok(&out);
    assert!(text(&out.stdout).contains("hipGetProcAddress: ok"));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("hipMalloc: served 2000"), "{stderr}");
    assert!(standin_count(&stderr, "hipMalloc") < 100, "{stderr}");
}

#[test]
fn cuda_resource_passes_through() {
    let out = run(
        true,
        &[("RMM_PRELOAD_RESOURCE", "cuda"), ("RMM_PRELOAD_STATS", "1")],
    );
    assert_ok(&out);
    assert_eq!(text(&out.stdout), text(&run(false, &[]).stdout));
    assert!(standin_count(&text(&out.stderr), "cudaMalloc") >= 72_000);
}

#[test]
fn log_file_is_written() {
    let log = built().dir.join("preload-log.csv");
    let _ = std::fs::remove_file(&log);
    let out = run(true, &[("RMM_PRELOAD_LOG_FILE", log.to_str().unwrap())]);
    assert_ok(&out);
    let csv = std::fs::read_to_string(&log).unwrap();
    let count = |action: &str| csv.lines().filter(|l| l.contains(action)).count();
    // Every allocation; every free the pool has seen: with deferred reuse a free reaches
    // the pool (and the log) when the work before it has completed, so the last few
    // blocks may still be pending at exit.
    assert_eq!(count(",allocate,"), 72_001, "allocations in the log");
    let frees = count(",free,");
    assert!(
        (60_000..=72_001).contains(&frees),
        "{frees} frees in the log"
    );
}

#[test]
fn memory_history_snapshot_is_written_at_exit() {
    let path = built().dir.join("preload-history.json");
    let _ = std::fs::remove_file(&path);
    let out = run(
        true,
        &[
            ("RMM_MEMORY_HISTORY", path.to_str().unwrap()),
            ("RMM_MEMORY_HISTORY_MAX_ENTRIES", "1000"),
        ],
    );
    assert_ok(&out);
    let json = std::fs::read_to_string(&path).expect("the snapshot was written at exit");
    assert!(
        json.contains("\"schema_version\":1"),
        "{}",
        &json[..json.len().min(300)]
    );
    // The program's allocations and frees, through the interposer's pool, in a full ring.
    assert!(json.contains("\"action\":\"allocate\""));
    assert!(json.contains("\"action\":\"free\""));
    assert!(json.contains("\"events_dropped\":"));
    assert!(
        !json.contains("\"events_dropped\":0,"),
        "72 001 allocations overflow 1000 entries"
    );
    assert!(
        json.contains("\"kind\":\"pool_chunk\""),
        "the pool's chunks are segments"
    );
}

#[test]
fn bad_environment_fails_at_start() {
    for (var, value) in [
        ("RMM_PRELOAD_RESOURCE", "bogus"),
        ("RMM_PRELOAD_INITIAL_POOL_SIZE", "lots"),
        ("RMM_PRELOAD_INITIAL_POOL_SIZE", "1000"),
        ("RMM_PRELOAD_MAXIMUM_POOL_SIZE", "150%"),
        ("RMM_PRELOAD_SYNC", "maybe"),
        ("RMM_PRELOAD_STATS", "2"),
        ("RMM_PRELOAD_MANAGED", "x"),
        ("RMM_PRELOAD_LOG_FILE", ""),
    ] {
        let out = run(true, &[(var, value)]);
        assert_eq!(out.status.code(), Some(1), "{var}={value}");
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains(var) && stderr.contains(&format!("{value:?}")),
            "{stderr}"
        );
        // Stopped in the constructor: main never ran.
        assert!(out.stdout.is_empty(), "{var}={value}");
    }
    let out = run(
        true,
        &[
            ("RMM_PRELOAD_INITIAL_POOL_SIZE", "2GiB"),
            ("RMM_PRELOAD_MAXIMUM_POOL_SIZE", "1GiB"),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("below"), "{}", text(&out.stderr));
    // Larger than the stand-in's 1 GiB device: found when the pool is made, still fatal.
    let out = run(true, &[("RMM_PRELOAD_INITIAL_POOL_SIZE", "4GiB")]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("RMM_PRELOAD_INITIAL_POOL_SIZE=4294967296 exceeds"),
        "{stderr}"
    );
}

#[test]
fn nothing_intercepted_warns() {
    let b = built();
    let out = Command::new("/bin/true")
        .env("LD_PRELOAD", &b.preload)
        .env("RMM_PRELOAD_STATS", "1")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        text(&out.stderr).contains("no allocation was intercepted"),
        "{}",
        text(&out.stderr)
    );
}

/// The stand-in CUDA driver (`libcuda.so.1`: virtual memory management on host memory), in a
/// directory of its own: only the `vmm_pool` tests put it on the library path.
fn driver_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c");
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("preload-standin-driver");
        std::fs::create_dir_all(&dir).unwrap();
        let lib = dir.join("libcuda.so.1");
        run_cc(&[
            "-shared",
            "-fPIC",
            "-Wl,-soname,libcuda.so.1",
            "-o",
            lib.to_str().unwrap(),
            src.join("standin_driver.c").to_str().unwrap(),
            "-lpthread",
        ]);
        dir
    })
}

/// Runs `exe` of the CUDA stand-in with `RMM_PRELOAD_RESOURCE=vmm_pool`, the stand-in driver
/// on the library path, and `env`.
fn run_vmm(exe: &Path, env: &[(&str, &str)]) -> Output {
    let b = built();
    let path = format!("{}:{}", b.dir.display(), driver_dir().display());
    let mut all = vec![
        ("RMM_PRELOAD_RESOURCE", "vmm_pool"),
        ("LD_LIBRARY_PATH", path.as_str()),
    ];
    all.extend_from_slice(env);
    run_program(b, exe, true, &all)
}

/// The stand-in driver's count for `what` (from its exit report on stderr).
fn driver_count(stderr: &str, what: &str) -> u64 {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("standin-driver:"))
        .unwrap_or_else(|| panic!("no stand-in driver report in:\n{stderr}"));
    value_after(line, what) as u64
}

#[test]
fn vmm_pool_routes_allocations_and_results_match() {
    let raw = run(false, &[]);
    assert_ok(&raw);
    for env in [
        &[("RMM_PRELOAD_STATS", "1")][..],
        &[
            ("RMM_PRELOAD_STATS", "1"),
            ("RMM_PRELOAD_INITIAL_POOL_SIZE", "64MiB"),
            ("RMM_PRELOAD_MAXIMUM_POOL_SIZE", "50%"),
        ][..],
        &[("RMM_PRELOAD_STATS", "1"), ("RMM_PRELOAD_SYNC", "0")][..],
    ] {
        let out = run_vmm(&built().program, env);
        assert_ok(&out);
        let stderr = text(&out.stderr);
        // Same output: checksum, and NULL / zero-size / foreign / interior / double frees
        // answered as the runtime answers them.
        assert_eq!(text(&out.stdout), text(&raw.stdout), "{env:?}\n{stderr}");
        assert!(stderr.contains("resource VmmPool"), "{stderr}");
        // Every allocation came from mappings of the driver; the runtime saw only the
        // program's zero-size cudaMalloc, which is forwarded.
        assert_eq!(standin_count(&stderr, "cudaMalloc"), 1, "{env:?}\n{stderr}");
        assert_eq!(standin_count(&stderr, "cudaMallocAsync"), 0, "{stderr}");
        let mappings = driver_count(&stderr, "cuMemMap");
        assert!(mappings > 0, "{env:?}\n{stderr}");
        assert_eq!(driver_count(&stderr, "cuMemCreate"), mappings, "{stderr}");
        assert_eq!(driver_count(&stderr, "cuMemAddressReserve"), 1, "{stderr}");
        assert!(
            stderr.contains("device 0: allocations 72001, frees 72001"),
            "{stderr}"
        );
        assert!(
            stderr.contains("foreign frees 1, NULL/zero-size 2"),
            "{stderr}"
        );
        // A double or interior free inside the reservation is refused, never forwarded.
        assert!(
            stderr.contains("refused frees (double/interior) 2"),
            "{stderr}"
        );
        assert!(
            standin_count(&stderr, "device_synchronize") < 10,
            "{stderr}"
        );
    }
}

#[test]
fn vmm_pool_defers_reuse_and_a_full_pool_waits() {
    let b = built();
    let raw = run_program(b, &b.defer, false, &[]);
    assert_ok(&raw);
    let out = run_vmm(&b.defer, &[("RMM_PRELOAD_STATS", "1")]);
    assert_ok(&out);
    let stderr = text(&out.stderr);
    assert_eq!(text(&out.stdout), text(&raw.stdout), "{stderr}");
    assert!(stderr.contains("allocations 209, frees 209"), "{stderr}");
    // 4 MiB, two granules of the stand-in driver: blocks still waiting for their kernels
    // must be waited for, not turned into failures.
    let out = run_vmm(
        &b.defer,
        &[
            ("RMM_PRELOAD_STATS", "1"),
            ("RMM_PRELOAD_INITIAL_POOL_SIZE", "4MiB"),
            ("RMM_PRELOAD_MAXIMUM_POOL_SIZE", "4MiB"),
        ],
    );
    assert_ok(&out);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("corrupt 0 failures 0"), "{stdout}");
    let stderr = text(&out.stderr);
    let line = stderr
        .lines()
        .find(|l| l.contains("deferred reuse: seals"))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        value_after(line, "batches") > 0,
        "no wait for pending blocks: {line}"
    );
    assert!(stderr.contains("failed 0"), "{stderr}");
    assert!(driver_count(&stderr, "peak_bytes") <= 4 << 20, "{stderr}");
}

#[test]
fn vmm_pool_without_virtual_memory_management_or_with_bad_sizes_stops_the_program() {
    // The stand-in runtime alone, without the driver: no virtual memory management. The
    // first allocation stops the program, saying why.
    let out = run(true, &[("RMM_PRELOAD_RESOURCE", "vmm_pool")]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("cannot create the VmmPool resource on device 0"),
        "{stderr}"
    );
    // A maximum beyond the stand-in's 1 GiB device.
    let out = run_vmm(
        &built().program,
        &[("RMM_PRELOAD_MAXIMUM_POOL_SIZE", "4GiB")],
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("RMM_PRELOAD_MAXIMUM_POOL_SIZE=4294967296 exceeds"),
        "{stderr}"
    );
    // The resource's name is one of those the error lists; the maximum is accepted for it
    // (refused for the arena).
    let out = run(true, &[("RMM_PRELOAD_RESOURCE", "vmm")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("vmm_pool"),
        "{}",
        text(&out.stderr)
    );
    let out = run(
        true,
        &[
            ("RMM_PRELOAD_RESOURCE", "arena"),
            ("RMM_PRELOAD_MAXIMUM_POOL_SIZE", "64MiB"),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("only the pool, vmm_pool and binning resources"),
        "{}",
        text(&out.stderr)
    );
}
