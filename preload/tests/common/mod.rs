//! What the interposer's integration tests share: the C compiler, the interposer library
//! of this profile, and readers of the programs' output.

// Each test binary uses a part of this module.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The C compiler `cc` finds, for this machine.
pub fn compiler() -> Command {
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

/// Compiles with warnings as errors; fails the test with the compiler's output.
pub fn run_cc(args: &[&str]) {
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
/// does not build a cdylib for integration tests, so it is built here, once per test
/// process: cargo leaves an up-to-date library alone, and rebuilds one older than the
/// sources (a library left by an earlier build would not know newer settings).
pub fn preload_library() -> PathBuf {
    static LIBRARY: OnceLock<PathBuf> = OnceLock::new();
    LIBRARY
        .get_or_init(|| {
            let exe = std::env::current_exe().unwrap();
            let deps = exe.parent().unwrap();
            let profile_dir = deps.parent().unwrap();
            let p = profile_dir.join("librmm_preload.so");
            let mut cmd = Command::new(env!("CARGO"));
            cmd.args(["build", "-p", "rmm-preload", "--lib"]);
            if profile_dir.file_name().is_some_and(|n| n == "release") {
                cmd.arg("--release");
            }
            let status = cmd.status().expect("run cargo build -p rmm-preload");
            assert!(status.success(), "cargo build -p rmm-preload failed");
            assert!(
                p.exists(),
                "librmm_preload.so not found in {}",
                profile_dir.display()
            );
            p
        })
        .clone()
}

/// A program's output as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The stand-in's count for `what` (from its exit report on stderr).
pub fn standin_count(stderr: &str, what: &str) -> u64 {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("standin:"))
        .unwrap_or_else(|| panic!("no stand-in report in:\n{stderr}"));
    value_after(line, what) as u64
}

/// Fails the test, with the output, unless the program exited with status 0.
pub fn assert_ok(out: &Output) {
    assert!(
        out.status.success(),
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
}

/// The number after `key` in the program's output (`corrupt 0 failures 0`).
pub fn value_after(out: &str, key: &str) -> i64 {
    let words: Vec<&str> = out.split_whitespace().collect();
    let i = words
        .iter()
        .position(|w| *w == key)
        .unwrap_or_else(|| panic!("no {key} in:\n{out}"));
    words[i + 1].trim_end_matches(',').parse().unwrap()
}
