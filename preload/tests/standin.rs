//! The interposer against a stand-in CUDA runtime (host memory, soname `libcudart.so.13`),
//! built here with the `cc` crate: no GPU needed. A multi-threaded C program linked against
//! the stand-in runs with and without `LD_PRELOAD=librmm_preload.so`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

struct Built {
    dir: PathBuf,
    program: PathBuf,
    preload: PathBuf,
}

fn compiler() -> Command {
    let target = format!("{}-unknown-linux-gnu", std::env::consts::ARCH);
    cc::Build::new()
        .target(&target)
        .host(&target)
        .opt_level(2)
        .cargo_metadata(false)
        .warnings_into_errors(true)
        .get_compiler()
        .to_command()
}

fn run_cc(args: &[&str]) {
    let mut cmd = compiler();
    cmd.args(["-Wall", "-Wextra", "-Werror"]).args(args);
    let out = cmd.output().expect("run the C compiler");
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The interposer of this test's profile (target/<profile>/librmm_preload.so). `cargo test`
/// does not build a cdylib for integration tests, so it is built here when missing.
fn preload_library() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    let profile_dir = deps.parent().unwrap();
    let p = profile_dir.join("librmm_preload.so");
    if !p.exists() {
        let mut cmd = Command::new(env!("CARGO"));
        cmd.args(["build", "-p", "rmm-preload", "--lib"]);
        if profile_dir.file_name().is_some_and(|n| n == "release") {
            cmd.arg("--release");
        }
        let status = cmd.status().expect("run cargo build -p rmm-preload");
        assert!(status.success(), "cargo build -p rmm-preload failed");
    }
    assert!(
        p.exists(),
        "librmm_preload.so not found in {}",
        profile_dir.display()
    );
    p
}

fn built() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c");
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("preload-standin");
        std::fs::create_dir_all(&dir).unwrap();
        let lib = dir.join("libcudart.so.13");
        run_cc(&[
            "-shared",
            "-fPIC",
            "-Wl,-soname,libcudart.so.13",
            "-o",
            lib.to_str().unwrap(),
            src.join("standin_cudart.c").to_str().unwrap(),
            "-lpthread",
        ]);
        let program = dir.join("loop");
        run_cc(&[
            "-o",
            program.to_str().unwrap(),
            src.join("loop.c").to_str().unwrap(),
            lib.to_str().unwrap(),
            "-lpthread",
        ]);
        Built {
            dir,
            program,
            preload: preload_library(),
        }
    })
}

/// Runs the loop program; `preload` adds LD_PRELOAD, `env` more variables.
fn run(preload: bool, env: &[(&str, &str)]) -> Output {
    let b = built();
    let mut cmd = Command::new(&b.program);
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
    cmd.output().expect("run the loop program")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The stand-in's count for `what` (from its exit report on stderr).
fn standin_count(stderr: &str, what: &str) -> u64 {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("standin:"))
        .unwrap_or_else(|| panic!("no stand-in report in:\n{stderr}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    let i = words.iter().position(|w| *w == what).unwrap();
    words[i + 1].parse().unwrap()
}

fn assert_ok(out: &Output) {
    assert!(
        out.status.success(),
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
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
            ("RMM_PRELOAD_INITIAL_POOL_SIZE", "64MiB"),
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
        let syncs = standin_count(&stderr, "device_synchronize");
        if env.contains(&("RMM_PRELOAD_SYNC", "0")) {
            assert!(syncs < 10, "{stderr}");
        } else {
            // Every cudaFree of ours synchronizes (the async frees do not).
            assert!(syncs >= 60_000, "{stderr}");
        }
    }
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
    let lines = csv.lines().count();
    assert!(lines > 144_000, "{lines} lines in the log");
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
