//! An event log of the logging adaptor (RMM's CSV, `Thread,Time,Action,Pointer,Size,Stream`)
//! read and turned into a replay plan: one list of operations per recorded thread, frees
//! naming the allocation they free.

use std::collections::{BTreeMap, HashMap};

use rmm::mr::LOG_HEADER;

use crate::program;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Allocate,
    AllocateFailure,
    Free,
}

#[derive(Clone, Copy, Debug)]
pub struct Event {
    pub line: usize,
    pub thread: u64,
    pub action: Action,
    pub pointer: usize,
    pub size: usize,
    pub stream: usize,
}

fn parse_hex(s: &str) -> Option<usize> {
    if s == "(nil)" {
        return Some(0);
    }
    let h = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    usize::from_str_radix(h, 16).ok()
}

fn parse_line(line: &str) -> std::result::Result<(u64, Action, usize, usize, usize), String> {
    let f: Vec<&str> = line.split(',').collect();
    if f.len() != 6 {
        return Err(format!(
            "expected 6 comma-separated fields, found {}",
            f.len()
        ));
    }
    let thread = f[0]
        .trim()
        .parse::<u64>()
        .map_err(|_| format!("Thread '{}' is not a decimal number", f[0]))?;
    let action = match f[2].trim() {
        "allocate" => Action::Allocate,
        "allocate failure" => Action::AllocateFailure,
        "free" => Action::Free,
        a => {
            return Err(format!(
                "Action '{a}' is not allocate, allocate failure or free"
            ))
        }
    };
    let pointer =
        parse_hex(f[3].trim()).ok_or_else(|| format!("Pointer '{}' is not a hex address", f[3]))?;
    let size = f[4]
        .trim()
        .parse::<usize>()
        .map_err(|_| format!("Size '{}' is not a decimal number", f[4]))?;
    let stream =
        parse_hex(f[5].trim()).ok_or_else(|| format!("Stream '{}' is not a hex handle", f[5]))?;
    Ok((thread, action, pointer, size, stream))
}

/// Reads and validates a log; errors name the line.
pub fn parse_log(text: &str, skip_bad: bool) -> std::result::Result<(Vec<Event>, usize), String> {
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, h)) if h.trim_end_matches('\r').trim() == LOG_HEADER => {}
        Some((_, h)) => {
            return Err(format!(
                "line 1: expected the header '{LOG_HEADER}', found '{h}'"
            ))
        }
        None => return Err("line 1: the log is empty (no header)".into()),
    }
    let mut events = Vec::new();
    let mut skipped = 0;
    for (i, raw) in lines {
        let line = raw.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        match parse_line(line) {
            Ok((thread, action, pointer, size, stream)) => events.push(Event {
                line: i + 1,
                thread,
                action,
                pointer,
                size,
                stream,
            }),
            Err(e) if skip_bad => {
                eprintln!("{}: warning: line {}: {e} (skipped)", program(), i + 1);
                skipped += 1;
            }
            Err(e) => {
                return Err(format!(
                    "line {}: {e}: '{line}' (use --skip-bad-lines to skip such lines)",
                    i + 1
                ))
            }
        }
    }
    Ok((events, skipped))
}

#[derive(Clone, Copy, Debug)]
pub enum Op {
    Alloc {
        id: usize,
        size: usize,
        stream: usize,
    },
    Free {
        id: usize,
        size: usize,
        stream: usize,
    },
}

/// The replay plan: per-thread operations; frees refer to allocation ids.
pub struct Plan {
    /// (recorded thread, its operations in order)
    pub threads: Vec<(u64, Vec<Op>)>,
    pub allocations: usize,
    pub total_bytes: usize,
    pub recorded_peak_live: usize,
    pub recorded_failures: usize,
    pub unmatched_frees: usize,
}

pub fn plan(events: &[Event]) -> Plan {
    let mut live: HashMap<usize, (usize, usize)> = HashMap::new();
    let mut per_thread: BTreeMap<u64, Vec<Op>> = BTreeMap::new();
    let mut next_id = 1; // 0 is never an id (PENDING marker convenience)
    let (mut allocations, mut total, mut cur, mut peak, mut fails, mut unmatched) =
        (0, 0, 0usize, 0usize, 0, 0);
    for e in events {
        match e.action {
            Action::Allocate => {
                if e.pointer == 0 {
                    continue; // a zero-byte allocation: nothing to replay
                }
                if live.contains_key(&e.pointer) {
                    eprintln!(
                        "{}: warning: line {}: {:#x} allocated again while live; \
                         the earlier allocation is treated as leaked",
                        program(),
                        e.line,
                        e.pointer
                    );
                }
                let id = next_id;
                next_id += 1;
                live.insert(e.pointer, (id, e.size));
                allocations += 1;
                total += e.size;
                cur += e.size;
                peak = peak.max(cur);
                per_thread.entry(e.thread).or_default().push(Op::Alloc {
                    id,
                    size: e.size,
                    stream: e.stream,
                });
            }
            Action::AllocateFailure => fails += 1,
            Action::Free => {
                if e.pointer == 0 {
                    continue;
                }
                match live.remove(&e.pointer) {
                    Some((id, size)) => {
                        cur -= size;
                        per_thread.entry(e.thread).or_default().push(Op::Free {
                            id,
                            size: e.size,
                            stream: e.stream,
                        });
                    }
                    None => {
                        eprintln!(
                            "{}: warning: line {}: free of {:#x}, which the log never \
                             allocated (skipped)",
                            program(),
                            e.line,
                            e.pointer
                        );
                        unmatched += 1;
                    }
                }
            }
        }
    }
    Plan {
        threads: per_thread.into_iter().collect(),
        allocations,
        total_bytes: total,
        recorded_peak_live: peak,
        recorded_failures: fails,
        unmatched_frees: unmatched,
    }
}
