//! Each workload run on one resource, as the rows of the table: its cases, its sizes (shorter
//! loops for the baselines and for `--quick`) and its notes.

use std::sync::atomic::Ordering;

use rmm::counters;
use rmm::runtime::runtime;
use rmm::{Error, Result, Stream};
use rmm_tools::trace::{self, Plan};

use crate::cli::{Options, Workload, STREAMS_COUNT, THREADS_STEPS};
use crate::placement::{arena_w4, w4_floor};
use crate::report::Row;
use crate::resources::{make, Sizing, Streams};
use crate::workloads::{churn, churn_gated, median, w1, Gate, Sample};
use crate::{fragmentation, history};

/// The log the replay workload replays: its file name (the rows' case) and its plan.
pub struct ReplayLog {
    pub name: String,
    pub plan: Plan,
}

/// Runs workload `w` on resource `name` and appends its rows.
pub fn run(
    name: &str,
    w: Workload,
    opts: &Options,
    log: Option<&ReplayLog>,
    rows: &mut Vec<Row>,
) -> Result<()> {
    // Plain malloc is a runtime call per operation: shorter loops keep runs bounded; the
    // per-operation figures stay comparable.
    let slow = name == "cuda" || name == "managed";
    let scale = |n: usize| if opts.quick { (n / 10).max(1000) } else { n };
    match w {
        Workload::Random => {
            for &(n, max) in &opts.random_cases {
                let n = if slow || opts.quick { n.min(10_000) } else { n };
                let subject = make(name, Sizing::HalfFree)?;
                let mut s = median(|| w1(subject.mr.as_ref(), n, max))?;
                s.peak_upstream = (subject.peak)();
                rows.push(Row::new(name, w, format!("N={n} max={max}MiB"), s));
            }
        }
        Workload::Churn => {
            let steps = scale(if slow { 100_000 } else { 1_000_000 });
            let subject = make(name, Sizing::HalfFree)?;
            let mut s = median(|| churn(subject.mr.as_ref(), steps, 7, &[Stream::DEFAULT], false))?;
            s.peak_upstream = (subject.peak)();
            rows.push(Row::new(name, w, format!("{steps} steps"), s));
        }
        Workload::Threads => {
            // Baselines serialize inside the runtime: fewer steps keep 16 threads bounded.
            let steps = scale(match name {
                "cuda" | "managed" => 5_000,
                "async" => 20_000,
                _ => match THREADS_STEPS.load(Ordering::Relaxed) {
                    0 => 200_000,
                    n => n,
                },
            });
            threads(name, steps, rows)?;
        }
        Workload::Streams => rows.push(streams(name, scale(if slow { 20_000 } else { 200_000 }))?),
        Workload::Replay => {
            let log = log.ok_or_else(|| Error::invalid("the replay workload needs a log"))?;
            rows.push(replay(name, log)?);
        }
        Workload::Fragmentation => rows.push(fragmentation::row(name)?),
        Workload::History => history::rows(name, opts.quick, rows)?,
    }
    Ok(())
}

/// Threads (W3): churn on 1, 2, 4, 8 and 16 threads, each with its own stream, sharing the
/// resource; a row per thread count with the aggregate rate and the scaling over 1 thread.
fn threads(name: &str, steps: usize, rows: &mut Vec<Row>) -> Result<()> {
    // Streams outlive the resource: pools keep per-stream state, and a stream must not
    // be destroyed while a resource still knows it (the documented rule).
    let all_streams = Streams::new(runtime()?, 16)?;
    let subject = make(name, Sizing::HalfFree)?;
    let mut base = 0.0;
    for t in [1usize, 2, 4, 8, 16] {
        let streams = &all_streams.0[..t];
        let mr = subject.mr.clone();
        let s = median(|| {
            // Counted around all threads (each thread's 1000 setup allocations and
            // teardown frees included): the counters are process-wide.
            let before = counters::snapshot();
            let gate = Gate::new();
            let seconds = std::thread::scope(|sc| -> Result<f64> {
                let hs: Vec<_> = streams
                    .iter()
                    .enumerate()
                    .map(|(i, st)| {
                        let mr = mr.clone();
                        let (st, gate) = (*st, &gate);
                        sc.spawn(move || {
                            let seed = 100 + i as u64;
                            churn_gated(mr.as_ref(), steps, seed, &[st], false, Some(gate))
                        })
                    })
                    .collect();
                // From all threads ready to the last one done with its steps.
                let t0 = gate.start(t);
                let mut last = t0;
                for h in hs {
                    last = last.max(h.join().expect("benchmark thread")?.1);
                }
                Ok(last.duration_since(t0).as_secs_f64())
            })?;
            Ok(Sample {
                seconds,
                ops: 2 * steps * t,
                counters: counters::snapshot().since(&before),
                counted_ops: (2 * steps + 2 * 1000) * t,
                ..Sample::default()
            })
        })?;
        let rate = (s.ops / 2) as f64 / s.seconds;
        if t == 1 {
            base = rate;
        }
        let mut row = Row::new(
            name,
            Workload::Threads,
            format!("T={t}"),
            Sample {
                peak_upstream: (subject.peak)(),
                ..s
            },
        );
        row.note = format!("{:.2} Mpairs/s, scaling {:.2}x", rate / 1e6, rate / base);
        rows.push(row);
    }
    Ok(())
}

/// "mapped" for the vmm pool (its upstream is the bytes it maps), "upstream" otherwise.
fn held(name: &str) -> &'static str {
    if name == "vmm_pool" {
        "mapped"
    } else {
        "upstream"
    }
}

/// Streams (W4): churn with each block freed on the stream after the one it was allocated
/// on; pools start small and grow, so that what placement costs shows as peak memory.
fn streams(name: &str, steps: usize) -> Result<Row> {
    let rt = runtime()?;
    let n_streams = STREAMS_COUNT.load(Ordering::Relaxed);
    let streams = Streams::new(rt, n_streams)?;
    let (s, how) = if name == "arena" {
        (
            arena_w4(steps, &streams.0)?,
            ", smallest arena that runs it (to 2 MiB)",
        )
    } else {
        let subject = make(name, Sizing::Grow)?;
        let mut s = median(|| churn(subject.mr.as_ref(), steps, 11, &streams.0, true))?;
        rt.device_synchronize().ok();
        s.peak_upstream = (subject.peak)();
        (s, "")
    };
    let case = match n_streams {
        4 => format!("{steps} steps"),
        1 => format!("{steps} steps, 1 stream"),
        n => format!("{steps} steps, {n} streams"),
    };
    let mut row = Row::new(name, Workload::Streams, case, s);
    row.note = format!(
        "peak {} / peak live = {:.2}{how}; best-fit floor {:.2}",
        held(name),
        s.peak_upstream as f64 / s.peak_live.max(1) as f64,
        w4_floor(steps)
    );
    Ok(row)
}

/// Replay (W5): the log replayed on the resource rmm-replay's spec of the same name makes
/// (sub-allocators on the runtime's malloc, growing from nothing; the async pool on the
/// device's default mempool), one thread per recorded thread.
fn replay(name: &str, log: &ReplayLog) -> Result<Row> {
    if name == "managed" {
        return Err(Error::Unsupported(
            "the replay has no managed baseline".into(),
        ));
    }
    let s = median(|| {
        let before = counters::snapshot();
        let o = trace::replay(name, &log.plan)?;
        let ops = o.allocations + o.frees;
        Ok(Sample {
            seconds: o.seconds,
            ops,
            peak_upstream: o.peak_upstream,
            peak_live: o.peak_live,
            failures: o.failures,
            counters: counters::snapshot().since(&before),
            counted_ops: ops,
        })
    })?;
    let mut row = Row::new(name, Workload::Replay, log.name.clone(), s);
    row.note = format!(
        "peak {} / peak live = {:.2}; {} threads, {} allocations",
        held(name),
        s.peak_upstream as f64 / s.peak_live.max(1) as f64,
        log.plan.threads.len(),
        log.plan.allocations
    );
    Ok(row)
}
