//! The interposer's driver route, against a stand-in CUDA driver (`libcuda.so.1` with
//! `cuGetProcAddress[_v2]`, tests/c/standin_libcuda.c) and a stand-in CUDA runtime built
//! over it (tests/c/standin_cudart.c) both as a static library, as nvcc links by default,
//! and as `libcudart.so.13`. Programs linked statically against that runtime, or against the
//! driver itself, run with and without `LD_PRELOAD=librmm_preload.so`.

mod common;

use common::{assert_ok, preload_library, run_cc, standin_count, text, value_after};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The stand-ins and the programs, in a directory of their own.
struct Built {
    dir: PathBuf,
    /// tests/c/loop.c, linked with the static runtime.
    static_loop: PathBuf,
    /// tests/c/defer.c, linked with the static runtime.
    static_defer: PathBuf,
    /// tests/c/driver_api.c, linked with the driver, under ASan and UBSan.
    driver_api: PathBuf,
    /// A program linked with a library whose SONAME is `librmm.so` (not ours).
    beside: PathBuf,
    /// tests/c/loop.c on the static runtime, finding the driver through its run path, in a
    /// directory that also holds `libcudart.so.13` (as pip's `nvidia/cu13/lib` does).
    pip_layout: PathBuf,
}

fn built() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c");
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("preload-standin-driver");
        std::fs::create_dir_all(&dir).unwrap();
        let include = format!("-I{}", src.display());
        let c = |f: &str| src.join(f).to_str().unwrap().to_string();
        let out = |f: &str| dir.join(f).to_str().unwrap().to_string();
        run_cc(&[
            "-DSTANDIN_DRIVER",
            &include,
            "-shared",
            "-fPIC",
            "-Wl,-soname,libcuda.so.1",
            "-o",
            &out("libcuda.so.1"),
            &c("standin_runtime.c"),
            &c("standin_libcuda.c"),
            &c("standin_driver.c"),
            "-lpthread",
        ]);
        run_cc(&[
            &include,
            "-shared",
            "-fPIC",
            "-Wl,-soname,libcudart.so.13",
            "-o",
            &out("libcudart.so.13"),
            &c("standin_cudart.c"),
            "-ldl",
            "-lpthread",
        ]);
        run_cc(&[
            &include,
            "-c",
            "-fPIC",
            "-o",
            &out("cudart_static.o"),
            &c("standin_cudart.c"),
        ]);
        let ar = Command::new("ar")
            .args(["rcs", &out("libcudart_static.a"), &out("cudart_static.o")])
            .status()
            .expect("run ar");
        assert!(ar.success());
        let program = |file: &str, exe: &str| {
            run_cc(&[
                &include,
                "-o",
                &out(exe),
                &c(file),
                &out("libcudart_static.a"),
                "-ldl",
                "-lpthread",
            ]);
            dir.join(exe)
        };
        let static_loop = program("loop.c", "static_loop");
        let static_defer = program("defer.c", "static_defer");
        let driver_api = dir.join("driver_api");
        let lib_dir = format!("-L{}", dir.display());
        run_cc(&[
            "-O1",
            "-g",
            "-fsanitize=address,undefined",
            "-fno-sanitize-recover=undefined",
            "-static-libasan",
            &include,
            "-o",
            driver_api.to_str().unwrap(),
            &c("driver_api.c"),
            &lib_dir,
            "-l:libcuda.so.1",
            "-ldl",
            "-lpthread",
        ]);
        // A stand-in for RAPIDS's librmm.so: the same SONAME, other symbols.
        let theirs = dir.join("rapids");
        std::fs::create_dir_all(&theirs).unwrap();
        let lib = theirs.join("librmm.so");
        run_cc(&[
            "-shared",
            "-fPIC",
            "-Wl,-soname,librmm.so",
            "-o",
            lib.to_str().unwrap(),
            &c("rapids_librmm.c"),
        ]);
        let beside = dir.join("beside");
        let rpath = format!("-Wl,-rpath,{}", theirs.display());
        run_cc(&[
            &rpath,
            "-DMAIN",
            "-o",
            beside.to_str().unwrap(),
            &c("rapids_librmm.c"),
            lib.to_str().unwrap(),
        ]);
        let pip = dir.join("pip-layout");
        std::fs::create_dir_all(&pip).unwrap();
        for lib in ["libcuda.so.1", "libcudart.so.13"] {
            std::fs::copy(dir.join(lib), pip.join(lib)).unwrap();
        }
        let pip_layout = pip.join("static_loop");
        let runpath = format!("-Wl,-rpath,{}", pip.display());
        run_cc(&[
            &include,
            &runpath,
            "-o",
            pip_layout.to_str().unwrap(),
            &c("loop.c"),
            &out("libcudart_static.a"),
            "-ldl",
            "-lpthread",
        ]);
        Built {
            pip_layout,
            dir,
            static_loop,
            static_defer,
            driver_api,
            beside,
        }
    })
}

/// Runs `exe` with the stand-ins on the library path; `preload` adds the interposer.
fn run(exe: &Path, args: &[&str], preload: bool, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .env("LD_LIBRARY_PATH", &built().dir)
        // The CI exports RMM_RUNTIME=host; the interposer must still use CUDA.
        .env("RMM_RUNTIME", "host")
        // The stand-ins keep their streams alive on purpose (queued work outlives them).
        .env("ASAN_OPTIONS", "detect_leaks=0:abort_on_error=1")
        .env_remove("LD_PRELOAD");
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("RMM_PRELOAD_")) {
        cmd.env_remove(k);
    }
    if preload {
        cmd.env("LD_PRELOAD", preload_library());
    }
    cmd.envs(env.iter().copied());
    cmd.output().expect("run a test program")
}

/// The interposer's count of allocations `entry` served.
fn served(stderr: &str, entry: &str) -> i64 {
    let line = stderr
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{entry}:")))
        .unwrap_or_else(|| panic!("no {entry} line in:\n{stderr}"));
    value_after(line, "served")
}

#[test]
fn a_static_runtime_is_served_through_cu_get_proc_address() {
    let b = built();
    let raw = run(&b.static_loop, &[], false, &[]);
    assert_ok(&raw);
    let raw_err = text(&raw.stderr);
    // 8 threads × 3000 iterations × 3 buffers (half of the third ones stream-ordered).
    assert!(standin_count(&raw_err, "cuMalloc") >= 60_000, "{raw_err}");
    for resource in ["pool", "binning", "vmm_pool"] {
        let env = [
            ("RMM_PRELOAD_STATS", "1"),
            ("RMM_PRELOAD_RESOURCE", resource),
        ];
        let out = run(&b.static_loop, &[], true, &env);
        assert_ok(&out);
        assert_eq!(text(&out.stdout), text(&raw.stdout), "{env:?}");
        let err = text(&out.stderr);
        let mallocs = standin_count(&err, "cuMalloc");
        assert!(
            mallocs < 100,
            "{env:?}: {mallocs} driver allocations\n{err}"
        );
        assert_eq!(standin_count(&err, "cuMallocAsync"), 0, "{err}");
        assert_eq!(served(&err, "cuMemAlloc_v2"), 60_001, "{err}");
        assert_eq!(served(&err, "cuMemAllocAsync"), 12_000, "{err}");
        assert!(
            err.contains("device 0: allocations 72001, frees 72001"),
            "{err}"
        );
        assert!(err.contains("refused frees (double/interior) 2"), "{err}");
        assert!(err.contains("foreign frees 1"), "{err}");
        assert!(!err.contains("warning"), "{err}");
    }
}

#[test]
fn a_static_runtime_defers_reuse_waits_and_forks() {
    let b = built();
    let raw = run(&b.static_defer, &[], false, &[]);
    assert_ok(&raw);
    assert!(text(&raw.stdout).contains("corrupt 0 failures 0"));
    let out = run(&b.static_defer, &[], true, &[("RMM_PRELOAD_STATS", "1")]);
    assert_ok(&out);
    let stdout = text(&out.stdout);
    // No late kernel write lands in a reused block; the forked child allocates (status 0).
    assert!(stdout.contains("corrupt 0 failures 0"), "{stdout}");
    assert!(stdout.contains("child 0"), "{stdout}");
    let err = text(&out.stderr);
    assert!(err.contains("deferred reuse: seals"), "{err}");
    // A pool capped below what the deferred blocks hold waits for them instead of failing.
    let capped = run(
        &b.static_defer,
        &[],
        true,
        &[
            ("RMM_PRELOAD_INITIAL_POOL_SIZE", "4MiB"),
            ("RMM_PRELOAD_MAXIMUM_POOL_SIZE", "4MiB"),
            ("RMM_PRELOAD_STATS", "1"),
        ],
    );
    assert_ok(&capped);
    assert!(text(&capped.stdout).contains("corrupt 0 failures 0"));
    // Without deferral the late writes do land: the test can see corruption.
    let off = run(&b.static_defer, &[], true, &[("RMM_PRELOAD_SYNC", "0")]);
    assert!(value_after(&text(&off.stdout), "corrupt") > 0);
}

#[test]
fn driver_queries_and_bad_frees_answer_as_the_driver_does() {
    let b = built();
    let raw = run(&b.driver_api, &["queries"], false, &[]);
    assert_ok(&raw);
    let out = run(
        &b.driver_api,
        &["queries"],
        true,
        &[("RMM_PRELOAD_STATS", "1")],
    );
    assert_ok(&out);
    // The block's own range, start, size and a buffer id of its own, pitch, NULL/zero-size
    // forwarded, a foreign free forwarded, interior and double frees refused.
    assert_eq!(text(&out.stdout), text(&raw.stdout));
    let err = text(&out.stderr);
    assert_eq!(served(&err, "cuMemAlloc_v2"), 2, "{err}");
    assert_eq!(served(&err, "cuMemAllocPitch_v2"), 1, "{err}");
    assert!(err.contains("refused frees (double/interior) 2"), "{err}");
    // The pool's growth, and the NULL and zero-size calls forwarded.
    assert!(standin_count(&err, "cuMalloc") < 10, "{err}");
}

#[test]
fn legacy_ipc_of_a_block_inside_a_chunk_is_refused() {
    let b = built();
    let raw = run(&b.driver_api, &["ipc"], false, &[]);
    assert!(text(&raw.stdout).contains("ipc first 0\nipc second 0"));
    let out = run(&b.driver_api, &["ipc"], true, &[("RMM_PRELOAD_SYNC", "0")]);
    assert_ok(&out);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("ipc first 0\nipc second 1"), "{stdout}");
    let err = text(&out.stderr);
    assert!(err.contains("cuIpcGetMemHandle(0x"), "{err}");
    assert!(err.contains("RMM_PRELOAD_RESOURCE=cuda"), "{err}");
    assert_eq!(driver_count(&err, "cuIpcGetMemHandle"), 1, "{err}");
}

/// The stand-in driver's count for `what` (its "standin-libcuda:" exit line).
fn driver_count(stderr: &str, what: &str) -> i64 {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("standin-libcuda:"))
        .unwrap_or_else(|| panic!("no stand-in driver report in:\n{stderr}"));
    value_after(line, what)
}

#[test]
fn every_lookup_route_hands_out_the_hooks() {
    let b = built();
    let out = run(
        &b.driver_api,
        &["lookup"],
        true,
        &[("RMM_PRELOAD_STATS", "1")],
    );
    assert_ok(&out);
    let stdout = text(&out.stdout);
    for how in [
        "dlsym: ok",
        "cuGetProcAddress: ok",
        "cuGetProcAddress_v2 per-thread: ok",
        "cudaGetDriverEntryPoint: ok",
        "cudaGetDriverEntryPointByVersion: ok",
    ] {
        assert!(stdout.contains(how), "{stdout}");
    }
    let err = text(&out.stderr);
    // 2000 rounds through each of four synchronous routes and one stream-ordered one.
    assert_eq!(served(&err, "cuMemAlloc_v2"), 8000, "{err}");
    assert_eq!(served(&err, "cuMemAllocAsync"), 2000, "{err}");
    assert!(standin_count(&err, "cuMalloc") < 100, "{err}");
}

#[test]
fn a_context_of_the_programs_own_passes_through() {
    let b = built();
    let out = run(
        &b.driver_api,
        &["context"],
        true,
        &[("RMM_PRELOAD_STATS", "1")],
    );
    assert_ok(&out);
    let err = text(&out.stderr);
    let line = err
        .lines()
        .find(|l| l.contains("cuMemAlloc_v2: served"))
        .unwrap();
    assert_eq!(value_after(line, "served"), 2000, "{err}");
    assert_eq!(value_after(line, "through"), 2000, "{err}");
    assert!(
        err.contains("warning: device allocations passed through"),
        "{err}"
    );
}

#[test]
fn threads_through_the_driver_route_under_asan_and_ubsan() {
    let b = built();
    for env in [&[][..], &[("RMM_PRELOAD_RESOURCE", "arena")][..]] {
        let mut env = env.to_vec();
        env.push(("RMM_PRELOAD_STATS", "1"));
        let out = run(&b.driver_api, &["threads"], true, &env);
        assert_ok(&out);
        let stdout = text(&out.stdout);
        assert!(
            stdout.contains("threads: ok\nfailures 0"),
            "{env:?}: {stdout}"
        );
        let err = text(&out.stderr);
        assert!(!err.contains("Sanitizer"), "{err}");
        assert!(served(&err, "cuMemAllocAsync") > 1000, "{err}");
        assert!(standin_count(&err, "cuMalloc") < 100, "{err}");
    }
}

#[test]
fn it_loads_beside_another_library_named_librmm_so() {
    let b = built();
    let raw = run(&b.beside, &[], false, &[]);
    assert_ok(&raw);
    let out = run(&b.beside, &[], true, &[]);
    assert_ok(&out);
    assert_eq!(text(&out.stdout), text(&raw.stdout));
    assert!(text(&out.stdout).contains("their librmm.so answers 2610"));
}

#[test]
fn large_free_memory_goes_back_to_the_driver() {
    let b = built();
    let raw = run(&b.driver_api, &["large"], false, &[]);
    assert_ok(&raw);
    // Beyond the release threshold (default: an eighth of the device), a large block coming
    // back returns its chunk to the driver.
    let out = run(
        &b.driver_api,
        &["large"],
        true,
        &[("RMM_PRELOAD_STATS", "1")],
    );
    assert_ok(&out);
    assert_eq!(text(&out.stdout), text(&raw.stdout));
    let err = text(&out.stderr);
    assert!(value_after(&err, "threshold") >= 1, "{err}");
    // With a threshold that keeps it, the 700 MiB request fails in the pool and the driver
    // until the free chunk goes back: it does (the pool gives its entirely free chunks back
    // when its upstream is out of memory, before the interposer would), and the request is
    // served.
    let out = run(
        &b.driver_api,
        &["large"],
        true,
        &[
            ("RMM_PRELOAD_STATS", "1"),
            ("RMM_PRELOAD_RELEASE_THRESHOLD", "1GiB"),
        ],
    );
    assert_ok(&out);
    assert_eq!(text(&out.stdout), text(&raw.stdout));
    let err = text(&out.stderr);
    let upstream_frees: i64 = err
        .split("allocations and ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no upstream frees in:\n{err}"));
    assert!(
        upstream_frees + value_after(&err, "out-of-memory") >= 1,
        "the free chunk never went back:\n{err}"
    );
    assert_eq!(value_after(&err, "failed"), 0, "{err}");
}

#[test]
fn a_static_runtimes_memory_timeline_is_recorded() {
    let b = built();
    let path = b.dir.join("static-history.json");
    let _ = std::fs::remove_file(&path);
    let out = run(
        &b.static_defer,
        &[],
        true,
        &[("RMM_MEMORY_HISTORY", path.to_str().unwrap())],
    );
    assert_ok(&out);
    let json = std::fs::read_to_string(&path).expect("the snapshot was written at exit");
    assert!(json.contains("\"schema_version\":1"));
    assert!(json.contains("\"action\":\"allocate\""));
    assert!(json.contains("\"action\":\"free\""));
    assert!(
        json.contains("\"kind\":\"pool_chunk\""),
        "the pool's chunks are segments"
    );
}

#[test]
fn a_cuda_runtime_beside_the_loaded_driver_serves_the_engine() {
    // No libcudart on the loader's path: the program finds the driver through its run path,
    // and the engine takes the runtime that sits beside it.
    let b = built();
    let run_here = |preload: bool| {
        let mut cmd = Command::new(&b.pip_layout);
        cmd.env_remove("LD_LIBRARY_PATH")
            .env("RMM_RUNTIME", "host")
            .env("RMM_PRELOAD_STATS", "1")
            .env_remove("LD_PRELOAD");
        if preload {
            cmd.env("LD_PRELOAD", preload_library());
        }
        cmd.output().expect("run the program")
    };
    let raw = run_here(false);
    assert_ok(&raw);
    let out = run_here(true);
    assert_ok(&out);
    assert_eq!(text(&out.stdout), text(&raw.stdout));
    let err = text(&out.stderr);
    assert!(err.contains("pip-layout/libcudart.so.13"), "{err}");
    assert_eq!(served(&err, "cuMemAlloc_v2"), 60_001, "{err}");
    assert!(standin_count(&err, "cuMalloc") < 100, "{err}");
}
