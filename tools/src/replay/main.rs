//! rmm-replay: replays a CSV event log written by a `logging_resource_adaptor` (ours or
//! RMM's) against resource configurations, one replay thread per recorded thread
//! (BENCH.md W5 "replay"; the engine is `rmm_tools::trace`).
//!
//! ```text
//! rmm-replay LOG [--mr SPEC]... [--json FILE] [--svg FILE] [--skip-bad-lines]
//! ```
//! SPEC is a resource spec of `rmm::mr::config` (cuda, pool[:INITIAL[:MAX]],
//! binning[:MIN:MAX], arena[:SIZE], fixed_size[:BLOCK[:PREALLOC]]), or one of the two this
//! tool adds: `vmm_pool[:INITIAL[:MAX]]` (the pool on virtual memory, as `pool`: growing
//! from INITIAL, default 0, mapping at most MAX) and `async[:MAX]` (the runtime's
//! stream-ordered pool: the device's default mempool, or with MAX a mempool of that maximum
//! size); default `pool`.
//!
//! Reported per configuration: wall time, peak live bytes, peak upstream bytes (what the
//! resource holds from the device), failures.
//!
//! The exit status is 3 when any allocation failed (the table and the files are written
//! first), 1 on a bad log or spec, 2 on bad arguments.

use rmm_tools::trace::{json, parse_log, plan, replay, svg};

fn usage() -> ! {
    eprintln!(
        "usage: rmm-replay LOG [--mr SPEC]... [--json FILE] [--svg FILE] [--skip-bad-lines]\n\
         SPEC: cuda | pool[:INITIAL[:MAX]] | vmm_pool[:INITIAL[:MAX]] | async[:MAX] | \
         binning[:MIN_EXP:MAX_EXP] | arena[:SIZE] | fixed_size[:BLOCK[:PREALLOC]] \
         (default: pool)\n\
         peak upstream: bytes held from the device (vmm_pool: mapped; async: reserved)"
    );
    std::process::exit(2)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut log, mut specs, mut json_out, mut svg_out, mut skip_bad) =
        (None, Vec::new(), None, None, false);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--mr" => specs.push(args.next().unwrap_or_else(|| usage())),
            "--json" => json_out = Some(args.next().unwrap_or_else(|| usage())),
            "--svg" => svg_out = Some(args.next().unwrap_or_else(|| usage())),
            "--skip-bad-lines" => skip_bad = true,
            "-h" | "--help" => usage(),
            _ if a.starts_with('-') => usage(),
            _ if log.is_none() => log = Some(a),
            _ => usage(),
        }
    }
    let log = log.unwrap_or_else(|| usage());
    if specs.is_empty() {
        specs.push("pool".to_string());
    }
    let fail = |msg: String| -> ! {
        eprintln!("rmm-replay: {msg}");
        std::process::exit(1)
    };
    let text =
        std::fs::read_to_string(&log).unwrap_or_else(|e| fail(format!("cannot read '{log}': {e}")));
    let (events, skipped) =
        parse_log(&text, skip_bad).unwrap_or_else(|e| fail(format!("{log}: {e}")));
    let plan = plan(&events);
    println!(
        "{log}: {} events, {} threads, {} allocations ({} bytes), recorded peak live {} bytes, \
         {} recorded allocation failures",
        events.len(),
        plan.threads.len(),
        plan.allocations,
        plan.total_bytes,
        plan.recorded_peak_live,
        plan.recorded_failures
    );
    println!(
        "{:<28} {:>10} {:>8} {:>8} {:>8} {:>14} {:>14} {:>7}",
        "resource", "time ms", "allocs", "frees", "fails", "peak live", "peak upstream", "ratio"
    );
    let mut outcomes = Vec::new();
    for spec in &specs {
        let o = replay(spec, &plan).unwrap_or_else(|e| fail(format!("{spec}: {e}")));
        println!(
            "{:<28} {:>10.3} {:>8} {:>8} {:>8} {:>14} {:>14} {:>7.3}",
            o.spec,
            o.seconds * 1e3,
            o.allocations,
            o.frees,
            o.failures,
            o.peak_live,
            o.peak_upstream,
            o.peak_upstream as f64 / o.peak_live.max(1) as f64
        );
        outcomes.push(o);
    }
    if let Some(p) = json_out {
        std::fs::write(&p, json(&log, &plan, skipped, &outcomes))
            .unwrap_or_else(|e| fail(format!("cannot write '{p}': {e}")));
    }
    if let Some(p) = svg_out {
        std::fs::write(&p, svg(&outcomes))
            .unwrap_or_else(|e| fail(format!("cannot write '{p}': {e}")));
    }
    if outcomes.iter().any(|o| o.failures > 0) {
        std::process::exit(3);
    }
}
