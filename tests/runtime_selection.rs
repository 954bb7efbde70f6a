//! Backend selection through `RMM_RUNTIME`, checked in child processes because the choice is
//! made once per process.
//!
//! The parent re-runs this test binary on the `child` test with the marker variable set; the
//! child prints what `rmm::runtime::runtime()` answered and the parent inspects it.

use std::path::Path;
use std::process::Command;

const MARKER: &str = "RMM_SELECTION_CHILD";

/// Runs in the child only: reports the selection outcome on stdout.
#[test]
fn child() {
    if std::env::var_os(MARKER).is_none() {
        return;
    }
    match rmm::runtime::runtime() {
        Ok(rt) => println!("RESULT ok {}", rt.description()),
        Err(e) => println!("RESULT err {e:?} | {e}"),
    }
}

/// Runs the `child` test with `RMM_RUNTIME=value` and returns its RESULT line.
fn select(value: &str) -> String {
    select_with(value, &[])
}

/// As [`select`], with extra environment variables for the child.
fn select_with(value: &str, env: &[(&str, &str)]) -> String {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(exe)
        .args(["--exact", "child", "--nocapture", "--test-threads=1"])
        .env(MARKER, "1")
        .env("RMM_RUNTIME", value)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        // libtest may print "test child ... " on the same line first.
        .find_map(|l| l.split_once("RESULT ").map(|(_, r)| r))
        .unwrap_or_else(|| panic!("no RESULT line in {stdout}"))
        .to_string()
}

fn hip_installed() -> bool {
    [
        "/usr/lib/x86_64-linux-gnu",
        "/opt/rocm/lib",
        "/usr/lib64",
        "/usr/lib",
    ]
    .iter()
    .any(|d| {
        [
            "libamdhip64.so.7",
            "libamdhip64.so.6",
            "libamdhip64.so.5",
            "libamdhip64.so",
        ]
        .iter()
        .any(|n| Path::new(d).join(n).exists())
    })
}

#[test]
fn hip_without_device_says_so_and_how_to_choose_host() {
    if !hip_installed() {
        eprintln!("skipping: libamdhip64 is not installed");
        return;
    }
    let r = select("hip");
    if r.starts_with("ok ") {
        eprintln!("skipping: this machine has an AMD GPU ({r})");
        return;
    }
    assert!(r.starts_with("err NoRuntime("), "{r}");
    assert!(
        r.contains("found no device") || r.contains("no device"),
        "{r}"
    );
    assert!(r.contains("RMM_RUNTIME=host"), "{r}");
    assert!(r.contains("libamdhip64.so"), "{r}");
}

#[test]
fn cuda_without_library_lists_names_tried() {
    let r = select("cuda");
    if r.starts_with("ok ") || r.contains("loaded but") {
        eprintln!("skipping: a CUDA runtime is installed here ({r})");
        return;
    }
    assert!(r.starts_with("err NoRuntime("), "{r}");
    for name in [
        "libcudart.so.13",
        "libcudart.so.12",
        "libcudart.so.11.0",
        "libcudart.so",
    ] {
        assert!(r.contains(name), "{name} missing from {r}");
    }
    assert!(r.contains("RMM_RUNTIME=host"), "{r}");
}

#[test]
fn bogus_value_is_an_invalid_argument_naming_it() {
    let r = select("bogus");
    assert!(r.starts_with("err InvalidArgument("), "{r}");
    assert!(r.contains("bogus"), "{r}");
}

#[test]
fn host_runtime_reads_its_environment() {
    let r = select_with(
        "host",
        &[
            ("RMM_HOST_DEVICES", "2"),
            ("RMM_HOST_DEVICE_MEMORY", "512MiB"),
        ],
    );
    assert!(r.starts_with("ok host"), "{r}");
    assert!(r.contains("2 device"), "{r}");
}

#[test]
fn unparsable_host_memory_is_an_invalid_argument_naming_variable_and_value() {
    for bad in ["lots", "12XB", "-5GiB", "0"] {
        let r = select_with("host", &[("RMM_HOST_DEVICE_MEMORY", bad)]);
        assert!(r.starts_with("err InvalidArgument("), "{bad}: {r}");
        assert!(
            r.contains("RMM_HOST_DEVICE_MEMORY") && r.contains(bad),
            "{r}"
        );
    }
    let r = select_with("host", &[("RMM_HOST_DEVICES", "zero")]);
    assert!(r.contains("RMM_HOST_DEVICES") && r.contains("zero"), "{r}");
}
