//! rmm-viz: turns a memory snapshot (`rmm::history`; the format is in
//! docs/memory-history.md) into one self-contained HTML report.
//!
//! ```text
//! rmm-viz SNAPSHOT.json [-o REPORT.html] [--max-bands N] [--title TEXT]
//! ```
//! The report is a single file that needs no network: its script and style are inline and
//! the data is embedded as JSON (`<script type="application/json" id="rmm-viz-data">`).
//! It shows:
//! - the active memory timeline: live bytes over the recorded events, stacked by
//!   allocation, each allocation a band from its allocation to its free (or the end). The
//!   N allocations with the largest size × lifetime (`--max-bands`, default 1000; the page
//!   can pick by size instead) are bands of their own, the rest one "other" band; failed
//!   allocations and frees, pool growth and release are marked;
//! - each segment's block map (pool chunks, mapped extents, slabs, ...): its blocks to
//!   scale, its free bytes, largest free block and fragmentation;
//! - the allocation sites: allocations grouped by the first frames of their stacks (by
//!   resource when the snapshot has no stacks) with counts, bytes, peak live bytes.
//!
//! This program reads the snapshot, pairs allocations with their frees and deduplicates
//! the stacks (`model`); the page (`page`, its script `assets/report.js`) lays the figures out.
//!
//! Exit status: 0 on success, 1 when the snapshot cannot be read or is not one this
//! program understands, 2 on bad arguments.

mod model;
mod page;

use std::fmt::Write as _;
use std::process::exit;

use serde_json::Value;

use model::{model, Fail};
use page::{embedded, render};

/// Allocations drawn as bands of their own by default (the largest by size × lifetime).
const DEFAULT_MAX_BANDS: usize = 1000;

const USAGE: &str = "\
usage: rmm-viz SNAPSHOT.json [-o REPORT.html] [--max-bands N] [--title TEXT]

Writes an HTML report (one self-contained file) of a memory snapshot written by
rmm_snapshot_write, rmm::history::write_snapshot, rmm.statistics.dump_snapshot or
RMM_MEMORY_HISTORY=<path>: the active memory timeline, each segment's block map and
the top allocation sites.

  -o, --output FILE   where to write the report (default: SNAPSHOT with .html)
  --max-bands N       the N allocations with the largest size x lifetime are drawn
                      as bands of their own, the others as one \"other\" band
                      (default 1000; the page can change it)
  --title TEXT        the report's title (default: the snapshot's file name)
  -h, --help          this text
";

#[derive(Debug)]
struct Args {
    input: String,
    output: String,
    max_bands: usize,
    title: Option<String>,
}

fn parse_args(args: &[String]) -> std::result::Result<Option<Args>, String> {
    let (mut input, mut output, mut max_bands, mut title) = (None, None, DEFAULT_MAX_BANDS, None);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match a.as_str() {
            "-h" | "--help" => return Ok(None),
            "-o" | "--output" => output = Some(value(a)?),
            "--max-bands" => {
                let v = value(a)?;
                max_bands = v
                    .parse()
                    .map_err(|_| format!("--max-bands: not a count: {v:?}"))?;
            }
            "--title" => title = Some(value(a)?),
            _ if a.starts_with('-') => return Err(format!("unknown option {a}")),
            _ if input.is_none() => input = Some(a.clone()),
            _ => return Err(format!("one snapshot at a time ({a:?} is a second one)")),
        }
    }
    let input = input.ok_or("no snapshot named")?;
    let output = output.unwrap_or_else(|| {
        let p = std::path::Path::new(&input);
        p.with_extension("html").display().to_string()
    });
    if output == input {
        return Err(format!(
            "the report would replace the snapshot {input:?}: name it with -o"
        ));
    }
    Ok(Some(Args {
        input,
        output,
        max_bands,
        title,
    }))
}

fn fmt_bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let (mut v, mut u) = (n as f64, 0);
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

fn run(args: &Args) -> std::result::Result<String, Fail> {
    let text = std::fs::read(&args.input)
        .map_err(|e| format!("cannot read the snapshot {:?}: {e}", args.input))?;
    let doc: Value =
        serde_json::from_slice(&text).map_err(|e| format!("{}: not JSON ({e})", args.input))?;
    let m = model(&doc).map_err(|e| format!("{}: {e}", args.input))?;
    let source = std::path::Path::new(&args.input)
        .file_name()
        .map_or(args.input.clone(), |n| n.to_string_lossy().into_owned());
    let data = embedded(&m, &source, args.max_bands);
    let title = args
        .title
        .clone()
        .unwrap_or_else(|| format!("rmm memory snapshot: {source}"));
    std::fs::write(&args.output, render(&data, &title))
        .map_err(|e| format!("cannot write the report {:?}: {e}", args.output))?;
    let meta = &data["meta"];
    let mut summary = String::new();
    let _ = write!(
        summary,
        "{}: {} events ({} dropped), {} allocations, peak live {}, {} live at the end ({}), {} segments",
        args.output,
        m.times.len(),
        meta["events_dropped"],
        meta["allocations"],
        fmt_bytes(meta["peak_live"].as_u64().unwrap_or(0)),
        meta["live_count"],
        fmt_bytes(meta["live_bytes"].as_u64().unwrap_or(0)),
        m.segments.len(),
    );
    if m.unknown_actions > 0 {
        let _ = write!(
            summary,
            "; {} events of actions this rmm-viz does not know were left out",
            m.unknown_actions
        );
    }
    Ok(summary)
}

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let args = match parse_args(&argv) {
        Ok(Some(a)) => a,
        Ok(None) => {
            print!("{USAGE}");
            return;
        }
        Err(e) => {
            eprintln!("rmm-viz: {e}\n\n{USAGE}");
            exit(2);
        }
    };
    match run(&args) {
        Ok(summary) => println!("rmm-viz: wrote {summary}"),
        Err(e) => {
            eprintln!("rmm-viz: {e}");
            exit(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments() {
        let a = |v: &[&str]| parse_args(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        let ok = a(&["s.json", "-o", "r.html", "--max-bands", "5"])
            .unwrap()
            .unwrap();
        assert_eq!((ok.output.as_str(), ok.max_bands), ("r.html", 5));
        assert_eq!(a(&["dir/s.json"]).unwrap().unwrap().output, "dir/s.html");
        assert!(a(&["--help"]).unwrap().is_none());
        assert!(a(&[]).unwrap_err().contains("no snapshot"));
        assert!(a(&["s.json", "--frobnicate"])
            .unwrap_err()
            .contains("--frobnicate"));
        assert!(a(&["s.json", "--max-bands", "x"])
            .unwrap_err()
            .contains("--max-bands"));
        assert!(a(&["s.html"]).unwrap_err().contains("replace the snapshot"));
    }
}
