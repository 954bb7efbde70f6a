//! `rmm-bench`'s interface: workloads chosen by name or by BENCH.md's code, the table's and
//! the JSON's rows named by workload with their case, the replay workload on a log, and
//! unknown workloads refused before anything runs.

mod common;

use std::process::{Command, Output};

use common::{num, temp};

const LOG: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/replay_3threads.csv"
);

fn bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rmm-bench"))
        .args(args)
        .env("RMM_RUNTIME", "host")
        .env_remove("RMM_HOST_DEVICE_MEMORY")
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn rows_are_named_by_workload_whichever_way_it_was_asked_for() {
    let json = temp("rows.json");
    let out = bench(&[
        "--resources",
        "pool,managed",
        "--workloads",
        "w1,replay,W6",
        "--random-cases",
        "100:1",
        "--replay-log",
        LOG,
        "--quick",
        "--json",
        json.to_str().unwrap(),
    ]);
    let table = text(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    for row in [
        "pool         random N=100 max=1MiB ",
        "managed      random N=100 max=1MiB ",
        "pool         replay replay_3threads.csv ",
        "managed      replay    ",
        "pool         fragmentation 128 MiB device ",
    ] {
        assert!(table.contains(row), "{row:?} in\n{table}");
    }
    assert!(table.contains("skipped: the replay has no managed baseline"));
    assert!(!table.contains("W1") && !table.contains("W6"), "{table}");

    let j = std::fs::read_to_string(&json).unwrap();
    let rows: Vec<&str> = j.lines().filter(|l| l.contains("\"resource\"")).collect();
    let field = |row: &str, key: &str| -> String {
        let k = format!("\"{key}\": \"");
        let at = row.find(&k).unwrap_or_else(|| panic!("{key} in {row}")) + k.len();
        row[at..].split('"').next().unwrap().to_string()
    };
    let named: Vec<(String, String, String)> = rows
        .iter()
        .map(|r| (field(r, "resource"), field(r, "workload"), field(r, "case")))
        .collect();
    let want = [
        ("pool", "random", "N=100 max=1MiB"),
        ("managed", "random", "N=100 max=1MiB"),
        ("pool", "replay", "replay_3threads.csv"),
        ("managed", "replay", ""),
        ("pool", "fragmentation", "128 MiB device"),
        ("managed", "fragmentation", "128 MiB device"),
    ];
    let want: Vec<(String, String, String)> = want
        .iter()
        .map(|(r, w, c)| (r.to_string(), w.to_string(), c.to_string()))
        .collect();
    assert_eq!(named, want, "{j}");
    // The replay row counts the log's operations: 228 allocations and as many frees.
    let replay = rows.iter().find(|r| r.contains("replay_3threads")).unwrap();
    assert_eq!(num(replay, "", "operations"), 2 * 228, "{replay}");
    assert_eq!(num(replay, "", "failures"), 0, "{replay}");
}

#[test]
fn unknown_workloads_and_a_replay_without_log_are_refused() {
    let out = bench(&["--workloads", "churn,w7"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let e = text(&out.stderr);
    assert!(
        e.contains("unknown workload \"w7\"") && e.contains("fragmentation (w6)"),
        "{e}"
    );
    assert!(out.stdout.is_empty(), "nothing ran: {out:?}");

    let out = bench(&["--workloads", "w5"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(text(&out.stderr).contains("--replay-log"), "{out:?}");

    let out = bench(&["--help"]);
    assert!(out.status.success());
    let help = text(&out.stdout);
    assert!(help.starts_with("usage: rmm-bench"), "{help}");
    for (name, code) in [("random", "w1"), ("streams", "w4"), ("fragmentation", "w6")] {
        assert!(
            help.lines()
                .any(|l| l.split_whitespace().take(2).eq([name, code])),
            "{name} ({code}) in\n{help}"
        );
    }
}
