//! rmm-bench's command line: the workloads by name (BENCH.md's codes, `w1` … `w6`, are
//! accepted too), the resources, and the settings of single workloads.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::resources::RESOURCES;

/// BENCH.md's workloads, and what recording the memory history costs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    Random,
    Churn,
    Threads,
    Streams,
    Replay,
    Fragmentation,
    History,
}

impl Workload {
    pub const ALL: [Workload; 7] = [
        Workload::Random,
        Workload::Churn,
        Workload::Threads,
        Workload::Streams,
        Workload::Replay,
        Workload::Fragmentation,
        Workload::History,
    ];

    /// What the command line, the table and the JSON call it.
    pub fn name(self) -> &'static str {
        match self {
            Workload::Random => "random",
            Workload::Churn => "churn",
            Workload::Threads => "threads",
            Workload::Streams => "streams",
            Workload::Replay => "replay",
            Workload::Fragmentation => "fragmentation",
            Workload::History => "history",
        }
    }

    /// Its code in BENCH.md, accepted on the command line as another name (in either case).
    pub fn code(self) -> &'static str {
        match self {
            Workload::Random => "w1",
            Workload::Churn => "w2",
            Workload::Threads => "w3",
            Workload::Streams => "w4",
            Workload::Replay => "w5",
            Workload::Fragmentation => "w6",
            Workload::History => "hist",
        }
    }

    fn summary(self) -> &'static str {
        match self {
            Workload::Random => "RMM's random_allocations loop",
            Workload::Churn => "steady-state small allocations, one stream",
            Workload::Threads => "churn on 1 to 16 threads sharing the resource",
            Workload::Streams => "churn with frees on another stream than the allocation",
            Workload::Replay => "a logging adaptor's CSV replayed (--replay-log FILE)",
            Workload::Fragmentation => "pools grown in rounds, then one large request",
            Workload::History => "churn through the C ABI, memory history off and on",
        }
    }

    /// The workload `arg` names, by name or code.
    pub fn parse(arg: &str) -> Option<Workload> {
        Workload::ALL
            .into_iter()
            .find(|w| arg == w.name() || arg.eq_ignore_ascii_case(w.code()))
    }
}

/// What a run measures and where it writes.
pub struct Options {
    pub resources: Vec<String>,
    pub workloads: Vec<Workload>,
    pub json: Option<String>,
    pub quick: bool,
    /// The random workload's cases: (N, max size in MiB).
    pub random_cases: Vec<(usize, usize)>,
    /// The log the replay workload replays.
    pub replay_log: Option<String>,
}

/// The random workload's cases of BENCH.md: (N, max size in MiB).
const RANDOM_CASES: &[(usize, usize)] = &[(10_000, 1), (100_000, 1), (1_000, 64), (1_000, 4096)];

/// Set by `--foreign-streams`.
pub static FOREIGN_STREAMS: AtomicBool = AtomicBool::new(false);
/// Set by `--history-entries`: the ring of the history rows.
pub static HISTORY_ENTRIES: AtomicUsize = AtomicUsize::new(rmm::history::DEFAULT_MAX_ENTRIES);
/// Set by `--streams-count`: the streams workload's streams (4 by default).
pub static STREAMS_COUNT: AtomicUsize = AtomicUsize::new(4);
/// Set by `--threads-steps` (0: the default).
pub static THREADS_STEPS: AtomicUsize = AtomicUsize::new(0);
/// Set by `--vmm-release-threshold` (`usize::MAX`: none).
pub static VMM_RELEASE_THRESHOLD: AtomicUsize = AtomicUsize::new(usize::MAX);

/// The command line's synopsis.
pub fn usage() -> String {
    let names: Vec<&str> = Workload::ALL.iter().map(|w| w.name()).collect();
    format!(
        "usage: rmm-bench [--resources {}] [--workloads {}] [--replay-log FILE] [--json FILE] \
         [--quick] [--foreign-streams] [--random-cases N:MAX_MIB,...] [--threads-steps N] \
         [--streams-count N] [--history-entries N] [--vmm-release-threshold BYTES]",
        RESOURCES.join(","),
        names.join(",")
    )
}

/// `--help`'s text: the synopsis and the workloads.
pub fn help() -> String {
    let mut s = format!(
        "{}\n\nRuns the benchmark workloads over each resource and the runtime's baselines, on \
         the runtime RMM_RUNTIME selects; prints a table and, with --json, writes it to FILE.\n\n\
         Workloads (BENCH.md's codes are accepted as names too):\n",
        usage()
    );
    for w in Workload::ALL {
        s.push_str(&format!(
            "  {:<14} {:<5} {}\n",
            w.name(),
            w.code(),
            w.summary()
        ));
    }
    s.push_str(
        "Default: random, churn, threads, streams, fragmentation, and replay when --replay-log \
         names a log.\n\
         --random-cases runs only those random cases (e.g. 1000:4096); --threads-steps sets \
         the sub-allocators' steps per thread of threads (200 000 by default); --streams-count \
         runs streams on that many streams (4 by default; 1 shows placement without stream \
         order); --history-entries sets the ring of the history rows; --vmm-release-threshold \
         gives vmm_pool that release threshold (none by default). --w1-cases, --w3-steps and \
         --w4-streams are the first three's other names.",
    );
    s
}

/// A number argument in `ok`, or the complaint `what`.
fn number(v: Option<&String>, ok: impl Fn(usize) -> bool, what: &str) -> Result<usize, String> {
    v.and_then(|v| v.parse::<usize>().ok())
        .filter(|&n| ok(n))
        .ok_or_else(|| what.to_string())
}

/// The options of `args` (without the program's name); `None` for `--help`.
pub fn parse(args: &[String]) -> Result<Option<Options>, String> {
    let mut o = Options {
        resources: RESOURCES.iter().map(|s| s.to_string()).collect(),
        workloads: Vec::new(),
        json: None,
        quick: false,
        random_cases: RANDOM_CASES.to_vec(),
        replay_log: None,
    };
    let mut workloads = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--resources" => {
                o.resources = it
                    .next()
                    .map(|v| v.split(',').map(String::from).collect())
                    .unwrap_or_default()
            }
            "--workloads" => {
                let list = it.next().map(String::as_str).unwrap_or_default();
                let parsed: Result<Vec<Workload>, String> = list
                    .split(',')
                    .map(|w| {
                        Workload::parse(w).ok_or_else(|| {
                            let known: Vec<String> = Workload::ALL
                                .iter()
                                .map(|w| format!("{} ({})", w.name(), w.code()))
                                .collect();
                            format!("unknown workload {w:?}; known: {}", known.join(", "))
                        })
                    })
                    .collect();
                workloads = Some(parsed?);
            }
            "--replay-log" => {
                o.replay_log = Some(it.next().cloned().ok_or("--replay-log takes a file")?)
            }
            "--json" => o.json = it.next().cloned(),
            "--quick" => o.quick = true,
            "--foreign-streams" => FOREIGN_STREAMS.store(true, Ordering::Relaxed),
            "--threads-steps" | "--w3-steps" => THREADS_STEPS.store(
                number(
                    it.next(),
                    |n| n > 0,
                    "--threads-steps takes a positive number of steps",
                )?,
                Ordering::Relaxed,
            ),
            "--streams-count" | "--w4-streams" => STREAMS_COUNT.store(
                number(
                    it.next(),
                    |n| (1..=16).contains(&n),
                    "--streams-count takes 1 to 16 streams",
                )?,
                Ordering::Relaxed,
            ),
            "--vmm-release-threshold" => VMM_RELEASE_THRESHOLD.store(
                number(
                    it.next(),
                    |n| n != usize::MAX,
                    "--vmm-release-threshold takes a number of bytes",
                )?,
                Ordering::Relaxed,
            ),
            "--history-entries" => HISTORY_ENTRIES.store(
                number(
                    it.next(),
                    |n| n > 0,
                    "--history-entries takes a positive number of events",
                )?,
                Ordering::Relaxed,
            ),
            "--random-cases" | "--w1-cases" => {
                let parsed: Option<Vec<(usize, usize)>> = it.next().and_then(|v| {
                    v.split(',')
                        .map(|c| {
                            let (n, m) = c.split_once(':')?;
                            Some((n.parse().ok()?, m.parse().ok()?))
                        })
                        .collect()
                });
                match parsed {
                    Some(c) if !c.is_empty() => o.random_cases = c,
                    _ => return Err("--random-cases takes N:MAX_MIB[,N:MAX_MIB...]".into()),
                }
            }
            "-h" | "--help" => return Ok(None),
            other => return Err(format!("unknown argument {other:?}\n{}", usage())),
        }
    }
    o.workloads = workloads.unwrap_or_else(|| {
        let mut w = vec![
            Workload::Random,
            Workload::Churn,
            Workload::Threads,
            Workload::Streams,
            Workload::Fragmentation,
        ];
        if o.replay_log.is_some() {
            w.push(Workload::Replay);
        }
        w
    });
    if o.workloads.contains(&Workload::Replay) && o.replay_log.is_none() {
        return Err(
            "the replay workload (w5) replays a log: name it with --replay-log FILE \
                    (a logging adaptor's CSV, as rmm-replay reads)"
                .into(),
        );
    }
    Ok(Some(o))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn workloads_by_name_and_by_code() {
        for w in Workload::ALL {
            assert_eq!(Workload::parse(w.name()), Some(w));
            assert_eq!(Workload::parse(w.code()), Some(w));
            assert_eq!(Workload::parse(&w.code().to_uppercase()), Some(w));
        }
        assert_eq!(Workload::parse("w7"), None);
        assert_eq!(Workload::parse("Churn"), None);
        let o = parse(&args(&["--workloads", "w2,random,W4,hist"]))
            .unwrap()
            .unwrap();
        assert_eq!(
            o.workloads,
            [
                Workload::Churn,
                Workload::Random,
                Workload::Streams,
                Workload::History
            ]
        );
    }

    #[test]
    fn the_defaults_and_the_replay_log() {
        let o = parse(&[]).unwrap().unwrap();
        assert_eq!(o.workloads.len(), 5);
        assert!(!o.workloads.contains(&Workload::Replay));
        let o = parse(&args(&["--replay-log", "x.csv"])).unwrap().unwrap();
        assert_eq!(o.workloads.last(), Some(&Workload::Replay));
        let e = parse(&args(&["--workloads", "replay"])).err().unwrap();
        assert!(e.contains("--replay-log"), "{e}");
        let e = parse(&args(&["--workloads", "w2,w7"])).err().unwrap();
        assert!(e.contains("\"w7\"") && e.contains("churn (w2)"), "{e}");
        assert!(parse(&args(&["--help"])).unwrap().is_none());
        assert!(parse(&args(&["--w4-streams", "17"])).is_err());
        let o = parse(&args(&["--w1-cases", "1:2"])).unwrap().unwrap();
        assert_eq!(o.random_cases, [(1, 2)]);
        let o = parse(&args(&["--random-cases", "3:4,5:6"]))
            .unwrap()
            .unwrap();
        assert_eq!(o.random_cases, [(3, 4), (5, 6)]);
    }
}
