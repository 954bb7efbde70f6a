//! Allocator benchmark: the workloads of BENCH.md over any set of resources, with the
//! runtime's plain malloc, its managed malloc and its async pool as baselines. Prints a
//! table and, with `--json FILE`, writes the same as JSON.
//!
//! Workloads, by name (BENCH.md's codes are accepted on the command line too): `random`
//! (W1, RMM's random_allocations loop), `churn` (W2), `threads` (W3), `streams` (W4),
//! `replay` (W5, the log that `--replay-log FILE` names), `fragmentation` (W6), and
//! `history` (churn through the C ABI with the memory history off and on). The table's
//! workload column and the JSON's `workload` field carry the name; the case (N and size,
//! steps, threads, log) follows in the table and is the JSON's `case`.
//!
//! Resources: `cuda` (the runtime's malloc), `managed` (the runtime's managed malloc, a
//! baseline like `cuda`), `async` (the runtime's stream-ordered pool),
//! `pool` (the chunked pool), `vmm_pool` (the pool on virtual memory: one reservation,
//! granules mapped in place), `binning` (bins over a pool), `arena`. For the vmm pool the
//! "peak upstream" column is its peak mapped memory (its pool size: it has no release
//! threshold here and nothing releases it before the peak is read, so its size only grows
//! and the size at the end is the peak).
//!
//! Each cell also reports what happened per operation, from [`rmm::counters`] taken around
//! the measured loop (threads: around all threads, setup and teardown included, while its
//! clock runs from all threads ready to the last one done with its steps): runtime calls,
//! events recorded and waited by the stream-ordered resources, cross-stream steals,
//! upstream calls of sub-allocators, contended resource locks. The JSON has the raw counts
//! too (`counters`, over `counted_operations`).
//!
//! The streams note also gives the trace's best-fit floor ([`placement`]): what exact best
//! fit, with every free at once usable by every stream, takes in 2 MiB granules over the
//! peak live bytes: no allocator that never moves a block placed it much better.
//!
//! Files: `cli` (the command line), `resources` (what is measured), `workloads` (the
//! measured loops), `rows` (each workload's cases as table rows), `placement`,
//! `fragmentation`, `history` (the workloads with logic of their own), `report` (the table
//! and the JSON).

mod cli;
mod fragmentation;
mod history;
mod placement;
mod report;
mod resources;
mod rows;
mod workloads;

use rmm::runtime::runtime;
use rmm::Error;
use rmm_tools::trace;

use report::Row;
use rows::ReplayLog;
use workloads::Sample;

const MIB: usize = 1 << 20;

/// Reads and plans the log of the replay workload; exits on a bad one.
fn replay_log(path: &str) -> ReplayLog {
    let fail = |e: String| -> ! {
        eprintln!("rmm-bench: {e}");
        std::process::exit(1)
    };
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| fail(format!("cannot read '{path}': {e}")));
    let (events, _) =
        trace::parse_log(&text, false).unwrap_or_else(|e| fail(format!("{path}: {e}")));
    ReplayLog {
        name: std::path::Path::new(path)
            .file_name()
            .map_or(path.to_string(), |n| n.to_string_lossy().into_owned()),
        plan: trace::plan(&events),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opts = match cli::parse(&args) {
        Ok(Some(o)) => o,
        Ok(None) => {
            // A reader such as `| head` may close the pipe early; that is not an error.
            use std::io::Write;
            let _ = writeln!(std::io::stdout().lock(), "{}", cli::help());
            return;
        }
        Err(e) => {
            eprintln!("rmm-bench: {e}");
            std::process::exit(2);
        }
    };
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("rmm-bench: {e}");
            std::process::exit(2);
        }
    };
    let log = opts.replay_log.as_deref().map(replay_log);
    println!("runtime: {}", rt.description());
    let mut rows = Vec::new();
    report::print_header();
    for &w in &opts.workloads {
        for r in &opts.resources {
            let before = rows.len();
            let outcome = rows::run(r, w, &opts, log.as_ref(), &mut rows);
            for row in &rows[before..] {
                report::print_row(row);
            }
            if let Err(e) = outcome {
                // A resource the device cannot have (the vmm pool without virtual memory
                // management) is skipped, not a failed run.
                let note = match e {
                    Error::Unsupported(why) => format!("skipped: {why}"),
                    e => {
                        eprintln!("rmm-bench: {r} {}: {e}", w.name());
                        format!("error: {e}")
                    }
                };
                let mut row = Row::new(r, w, String::new(), Sample::default());
                row.note = note;
                report::print_row(&row);
                rows.push(row);
            }
        }
    }
    if let Some(path) = &opts.json {
        if let Err(e) = std::fs::write(path, report::json(&rows)) {
            eprintln!("rmm-bench: cannot write {path}: {e}");
            std::process::exit(1);
        }
    }
    // A workload that failed must fail the run (the test command's smoke run relies on it).
    if rows.iter().any(|r| r.note.starts_with("error:")) {
        std::process::exit(1);
    }
}
