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
//! the stacks; the page's script (`src/bin/rmm_viz/report.js`) lays the figures out.
//!
//! Exit status: 0 on success, 1 when the snapshot cannot be read or is not one this
//! program understands, 2 on bad arguments.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::process::exit;

use serde_json::{json, Value};

/// The snapshot schema this viewer reads (`rmm::history::SCHEMA_VERSION`).
const SCHEMA_VERSION: u64 = 1;

/// Allocations drawn as bands of their own by default (the largest by size × lifetime).
const DEFAULT_MAX_BANDS: usize = 1000;

const TEMPLATE: &str = include_str!("rmm_viz/report.html");
const STYLE: &str = include_str!("rmm_viz/report.css");
const SCRIPT: &str = include_str!("rmm_viz/report.js");

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

/// What went wrong with the input: printed after "rmm-viz: ".
type Fail = String;

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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    Allocate,
    Free,
    AllocateFailed,
    FreeFailed,
    Grow,
    Release,
}

impl Action {
    fn parse(s: &str) -> Option<Action> {
        Some(match s {
            "allocate" => Action::Allocate,
            "free" => Action::Free,
            "allocate_failed" => Action::AllocateFailed,
            "free_failed" => Action::FreeFailed,
            "grow" => Action::Grow,
            "release" => Action::Release,
            _ => return None,
        })
    }

    /// The code of a marked event in the embedded data (`marks.kind`).
    fn mark_code(self) -> Option<u8> {
        match self {
            Action::AllocateFailed => Some(0),
            Action::FreeFailed => Some(1),
            Action::Grow => Some(2),
            Action::Release => Some(3),
            _ => None,
        }
    }
}

/// One event of the snapshot, its strings interned.
#[derive(Clone, Debug)]
struct Ev {
    seq: u64,
    t: u64,
    action: Action,
    addr: u64,
    size: u64,
    stream: u32,
    device: i64,
    res: u32,
    thread: u64,
    /// Index into the stack table, -1 without a stack.
    stack: i64,
}

/// One allocation, from its allocation (or the window's start) to its free (or the end).
#[derive(Clone, Debug)]
struct Alloc {
    /// Index of its allocation event; -1 when it was made before the recorded window (its
    /// event was dropped, or it was made before recording started).
    start: i64,
    /// Index of its free event; -1 when it is live at the end.
    end: i64,
    size: u64,
    addr: u64,
    stream: u32,
    device: i64,
    res: u32,
    thread: u64,
    stack: i64,
    /// Its allocation event's seq and time, -1 when unknown (allocated before the window
    /// and known only from its free).
    seq: i64,
    t: i64,
    /// Listed in the snapshot's `live`.
    live: bool,
}

/// Interned strings and stacks.
#[derive(Default)]
struct Tables {
    frames: Vec<(String, Option<String>, Option<u64>)>,
    frame_ix: HashMap<(String, Option<String>, Option<u64>), u32>,
    stacks: Vec<Vec<u32>>,
    stack_ix: HashMap<Vec<u32>, i64>,
    resources: Vec<(String, u64)>,
    res_ix: HashMap<(String, u64), u32>,
    streams: Vec<u64>,
    stream_ix: HashMap<u64, u32>,
}

impl Tables {
    fn resource(&mut self, name: &str, id: u64) -> u32 {
        let key = (name.to_string(), id);
        if let Some(&i) = self.res_ix.get(&key) {
            return i;
        }
        let i = self.resources.len() as u32;
        self.resources.push(key.clone());
        self.res_ix.insert(key, i);
        i
    }

    fn stream(&mut self, s: u64) -> u32 {
        let n = self.streams.len() as u32;
        let i = *self.stream_ix.entry(s).or_insert(n);
        if i == n {
            self.streams.push(s);
        }
        i
    }

    fn stack(&mut self, frames: &Value, what: &str) -> std::result::Result<i64, Fail> {
        let list = match frames {
            Value::Null => return Ok(-1),
            Value::Array(list) => list,
            _ => return Err(format!("{what}: `frames` is neither null nor a list")),
        };
        let mut ids = Vec::with_capacity(list.len());
        for f in list {
            let function = f["function"].as_str().unwrap_or("").to_string();
            let file = f["file"].as_str().map(str::to_string);
            let line = f["line"].as_u64();
            let key = (function, file, line);
            let id = match self.frame_ix.get(&key) {
                Some(&i) => i,
                None => {
                    let i = self.frames.len() as u32;
                    self.frames.push(key.clone());
                    self.frame_ix.insert(key, i);
                    i
                }
            };
            ids.push(id);
        }
        if let Some(&i) = self.stack_ix.get(&ids) {
            return Ok(i);
        }
        let i = self.stacks.len() as i64;
        self.stacks.push(ids.clone());
        self.stack_ix.insert(ids, i);
        Ok(i)
    }
}

/// A snapshot, read and reconstructed.
struct Model {
    doc_meta: Value,
    tables: Tables,
    times: Vec<u64>,
    allocs: Vec<Alloc>,
    /// Failed allocations and frees, growth and release: (event index, event).
    marks: Vec<(usize, Ev)>,
    segments: Vec<Value>,
    block_states: Vec<String>,
    unknown_actions: usize,
    stacks_seen: bool,
}

fn u64_of(v: &Value, key: &str, what: &str) -> std::result::Result<u64, Fail> {
    match &v[key] {
        Value::Null => Err(format!("{what} has no `{key}`")),
        x => x
            .as_u64()
            .ok_or_else(|| format!("{what}: `{key}` is not a non-negative integer: {x}")),
    }
}

fn parse_event(
    v: &Value,
    what: &str,
    tables: &mut Tables,
) -> std::result::Result<Option<Ev>, Fail> {
    if !v.is_object() {
        return Err(format!("{what} is not an object"));
    }
    let action = v["action"]
        .as_str()
        .ok_or_else(|| format!("{what} has no `action`"))?;
    let Some(action) = Action::parse(action) else {
        return Ok(None);
    };
    let resource = v["resource"].as_str().unwrap_or("unknown");
    let res = tables.resource(resource, v["resource_id"].as_u64().unwrap_or(0));
    let stream = tables.stream(v["stream"].as_u64().unwrap_or(0));
    Ok(Some(Ev {
        seq: u64_of(v, "seq", what)?,
        t: u64_of(v, "time_ns", what)?,
        action,
        addr: u64_of(v, "address", what)?,
        size: u64_of(v, "size", what)?,
        stream,
        device: v["device"].as_i64().unwrap_or(-1),
        res,
        thread: v["thread"].as_u64().unwrap_or(0),
        stack: tables.stack(&v["frames"], what)?,
    }))
}

fn alloc_of(e: &Ev, start: i64) -> Alloc {
    Alloc {
        start,
        end: -1,
        size: e.size,
        addr: e.addr,
        stream: e.stream,
        device: e.device,
        res: e.res,
        thread: e.thread,
        stack: e.stack,
        seq: e.seq as i64,
        t: e.t as i64,
        live: false,
    }
}

/// Reads a snapshot document: checks its schema and pairs allocations with their frees.
fn model(doc: &Value) -> std::result::Result<Model, Fail> {
    if !doc.is_object() {
        return Err("not a memory snapshot (the document is not a JSON object)".into());
    }
    match &doc["schema_version"] {
        Value::Null => {
            return Err(
                "no schema_version: not a memory snapshot of rmm (rmm_snapshot_write, \
                 RMM_MEMORY_HISTORY)"
                    .into(),
            )
        }
        v if v.as_u64() == Some(SCHEMA_VERSION) => {}
        v => {
            return Err(format!(
                "unknown schema_version {v} (this rmm-viz reads schema_version {SCHEMA_VERSION})"
            ))
        }
    }
    let list = |key: &str| -> std::result::Result<&Vec<Value>, Fail> {
        match &doc[key] {
            Value::Array(a) => Ok(a),
            Value::Null => Err(format!("no `{key}` list")),
            _ => Err(format!("`{key}` is not a list")),
        }
    };
    let (raw_events, raw_live, raw_segments) = (list("events")?, list("live")?, list("segments")?);

    let mut tables = Tables::default();
    let mut unknown_actions = 0;
    let mut events = Vec::with_capacity(raw_events.len());
    for (i, v) in raw_events.iter().enumerate() {
        match parse_event(v, &format!("events[{i}]"), &mut tables)? {
            Some(e) => events.push(e),
            None => unknown_actions += 1,
        }
    }
    // The ring is in seq order; a merged or edited file may not be.
    events.sort_by_key(|e| e.seq);
    let stacks_seen = raw_events
        .iter()
        .chain(raw_live.iter())
        .any(|e| e["frames"].is_array());

    let mut allocs: Vec<Alloc> = Vec::new();
    let mut marks = Vec::new();
    let mut open: HashMap<u64, usize> = HashMap::new();
    for (i, e) in events.iter().enumerate() {
        match e.action {
            Action::Allocate => {
                if let Some(prev) = open.insert(e.addr, allocs.len()) {
                    // Its free was not recorded: it ends where its address was reused.
                    allocs[prev].end = i as i64;
                }
                allocs.push(alloc_of(e, i as i64));
            }
            Action::Free => match open.remove(&e.addr) {
                Some(k) => allocs[k].end = i as i64,
                None => {
                    // Allocated before the window: known from its free (no stack, no time).
                    allocs.push(Alloc {
                        end: i as i64,
                        stack: -1,
                        seq: -1,
                        t: -1,
                        ..alloc_of(e, -1)
                    });
                }
            },
            _ => marks.push((i, e.clone())),
        }
    }
    for (i, v) in raw_live.iter().enumerate() {
        let what = format!("live[{i}]");
        let Some(e) = parse_event(v, &what, &mut tables)? else {
            continue;
        };
        if e.action != Action::Allocate {
            return Err(format!("{what} is not an allocation"));
        }
        match open.get(&e.addr) {
            Some(&k) => allocs[k].live = true,
            None => {
                // Its allocation event was dropped from the ring (or made before it).
                let mut a = alloc_of(&e, -1);
                a.live = true;
                open.insert(e.addr, allocs.len());
                allocs.push(a);
            }
        }
    }
    // Allocations drawn in the order they were made (unknown ones first).
    let mut order: Vec<usize> = (0..allocs.len()).collect();
    order.sort_by_key(|&k| (allocs[k].start, allocs[k].seq));
    let allocs: Vec<Alloc> = order.iter().map(|&k| allocs[k].clone()).collect();
    let live_at: HashMap<u64, usize> = allocs
        .iter()
        .enumerate()
        .filter(|(_, a)| a.end < 0)
        .map(|(k, a)| (a.addr, k))
        .collect();

    let mut block_states: Vec<String> = vec!["free".into(), "used".into(), "slab".into()];
    let mut segments = Vec::new();
    for (i, s) in raw_segments.iter().enumerate() {
        let what = format!("segments[{i}]");
        let addr = u64_of(s, "address", &what)?;
        let size = u64_of(s, "size", &what)?;
        let resource = s["resource"].as_str().unwrap_or("unknown");
        let res = tables.resource(resource, s["resource_id"].as_u64().unwrap_or(0));
        let Value::Array(raw_blocks) = &s["blocks"] else {
            return Err(format!("{what} has no `blocks` list"));
        };
        let mut blocks = Vec::with_capacity(raw_blocks.len());
        let (mut free, mut largest) = (0u64, 0u64);
        for (k, b) in raw_blocks.iter().enumerate() {
            let bw = format!("{what}.blocks[{k}]");
            let baddr = u64_of(b, "address", &bw)?;
            let bsize = u64_of(b, "size", &bw)?;
            let state = b["state"].as_str().unwrap_or("used");
            let si = match block_states.iter().position(|s| s == state) {
                Some(p) => p,
                None => {
                    block_states.push(state.to_string());
                    block_states.len() - 1
                }
            };
            if state == "free" {
                free += bsize;
                largest = largest.max(bsize);
            }
            let alloc = if state == "used" {
                live_at.get(&baddr).map_or(-1, |&k| k as i64)
            } else {
                -1
            };
            blocks.push(json!([baddr.wrapping_sub(addr), bsize, si, alloc]));
        }
        segments.push(json!({
            "res": res,
            "kind": s["kind"].as_str().unwrap_or("segment"),
            "addr": hex(addr),
            "size": size,
            "free": s["free_bytes"].as_u64().unwrap_or(free),
            "largest": s["largest_free_block"].as_u64().unwrap_or(largest),
            "blocks": blocks,
        }));
    }

    let doc_meta = json!({
        "schema_version": doc["schema_version"],
        "producer": doc["producer"].as_str().unwrap_or("unknown"),
        "runtime": doc["runtime"].as_str().unwrap_or("unknown"),
        "recording": doc["recording"].as_bool().unwrap_or(false),
        "events_dropped": doc["events_dropped"].as_u64().unwrap_or(0),
    });
    Ok(Model {
        doc_meta,
        times: events.iter().map(|e| e.t).collect(),
        tables,
        allocs,
        marks,
        segments,
        block_states,
        unknown_actions,
        stacks_seen,
    })
}

fn hex(v: u64) -> String {
    format!("{v:#x}")
}

/// Peak live bytes over the window: an allocation counts from its allocation (the window's
/// start when made before it) until its free.
fn peak_live(m: &Model) -> u64 {
    let n = m.times.len();
    let mut delta = vec![0i128; n + 1];
    for a in &m.allocs {
        delta[a.start.max(0) as usize] += a.size as i128;
        if a.end >= 0 {
            delta[a.end as usize] -= a.size as i128;
        }
    }
    let (mut live, mut peak) = (0i128, 0i128);
    for d in delta {
        live += d;
        peak = peak.max(live);
    }
    peak as u64
}

/// The data the page's script reads.
fn embedded(m: &Model, source: &str, max_bands: usize) -> Value {
    let a = &m.allocs;
    let col = |f: &dyn Fn(&Alloc) -> Value| a.iter().map(f).collect::<Vec<_>>();
    let live: Vec<&Alloc> = a.iter().filter(|x| x.end < 0).collect();
    let made: Vec<&Alloc> = a.iter().filter(|x| x.start >= 0).collect();
    let count = |k: u8| {
        m.marks
            .iter()
            .filter(|(_, e)| e.action.mark_code() == Some(k))
            .count()
    };
    let mut meta = m.doc_meta.clone();
    let extra = json!({
        "events": m.times.len(),
        "unknown_actions": m.unknown_actions,
        "stacks": m.stacks_seen,
        "allocations": made.len(),
        "allocated_bytes": made.iter().map(|x| x.size).sum::<u64>(),
        "frees": a.iter().filter(|x| x.end >= 0).count(),
        "allocations_before_window": a.len() - made.len(),
        "allocate_failed": count(0),
        "free_failed": count(1),
        "grows": count(2),
        "releases": count(3),
        "peak_live": peak_live(m),
        "live_count": live.len(),
        "live_bytes": live.iter().map(|x| x.size).sum::<u64>(),
        "segment_bytes": m.segments.iter().map(|s| s["size"].as_u64().unwrap_or(0)).sum::<u64>(),
        "segment_free_bytes": m.segments.iter().map(|s| s["free"].as_u64().unwrap_or(0)).sum::<u64>(),
    });
    if let (Value::Object(meta), Value::Object(extra)) = (&mut meta, extra) {
        meta.extend(extra);
    }
    let t = &m.tables;
    json!({
        "format": "rmm-viz-data 1",
        "source": source,
        "max_bands": max_bands,
        "meta": meta,
        "times": m.times,
        "resources": t.resources.iter().map(|(n, id)| json!([n, hex(*id)])).collect::<Vec<_>>(),
        "streams": t.streams.iter().map(|s| hex(*s)).collect::<Vec<_>>(),
        "frames": t.frames.iter().map(|(f, file, line)| json!([f, file, line])).collect::<Vec<_>>(),
        "stacks": t.stacks,
        "allocs": {
            "start": col(&|x| json!(x.start)),
            "end": col(&|x| json!(x.end)),
            "size": col(&|x| json!(x.size)),
            "addr": col(&|x| json!(hex(x.addr))),
            "stream": col(&|x| json!(x.stream)),
            "device": col(&|x| json!(x.device)),
            "res": col(&|x| json!(x.res)),
            "thread": col(&|x| json!(x.thread)),
            "stack": col(&|x| json!(x.stack)),
            "seq": col(&|x| json!(x.seq)),
            "t": col(&|x| json!(x.t)),
            "live": col(&|x| json!(u8::from(x.live))),
        },
        "marks": {
            "at": m.marks.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
            "kind": m.marks.iter().map(|(_, e)| e.action.mark_code()).collect::<Vec<_>>(),
            "size": m.marks.iter().map(|(_, e)| e.size).collect::<Vec<_>>(),
            "addr": m.marks.iter().map(|(_, e)| hex(e.addr)).collect::<Vec<_>>(),
            "res": m.marks.iter().map(|(_, e)| e.res).collect::<Vec<_>>(),
            "stream": m.marks.iter().map(|(_, e)| e.stream).collect::<Vec<_>>(),
            "thread": m.marks.iter().map(|(_, e)| e.thread).collect::<Vec<_>>(),
            "stack": m.marks.iter().map(|(_, e)| e.stack).collect::<Vec<_>>(),
        },
        "segments": m.segments,
        "block_states": m.block_states,
    })
}

fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// The report: the template with its `{{NAME}}` slots filled. The data's `<` are written
/// as `\u003c` (the same JSON), so nothing in it can end its script element.
fn render(data: &Value, title: &str) -> String {
    let json = serde_json::to_string(data)
        .expect("a JSON value serializes")
        .replace('<', "\\u003c");
    let mut out = String::with_capacity(TEMPLATE.len() + STYLE.len() + SCRIPT.len() + json.len());
    let mut rest = TEMPLATE;
    while let Some(i) = rest.find("{{") {
        out.push_str(&rest[..i]);
        let j = rest[i..].find("}}").expect("a template slot ends with }}") + i;
        match &rest[i + 2..j] {
            "TITLE" => out.push_str(&escape_html(title)),
            "STYLE" => out.push_str(STYLE),
            "SCRIPT" => out.push_str(SCRIPT),
            "DATA" => out.push_str(&json),
            other => panic!("unknown template slot {other}"),
        }
        rest = &rest[j + 2..];
    }
    out.push_str(rest);
    out
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

    fn ev(seq: u64, action: &str, addr: u64, size: u64) -> Value {
        json!({
            "seq": seq, "time_ns": seq * 1000, "action": action, "address": addr,
            "size": size, "stream": 0, "device": 0, "resource": "pool_memory_resource",
            "resource_id": 7, "thread": 1, "frames": null,
        })
    }

    fn doc(events: Vec<Value>, live: Vec<Value>) -> Value {
        json!({
            "schema_version": 1, "producer": "test", "runtime": "host", "recording": true,
            "events_dropped": 0, "events": events, "live": live, "segments": [],
        })
    }

    #[test]
    fn the_schema_version_is_the_librarys() {
        assert_eq!(SCHEMA_VERSION, u64::from(rmm::history::SCHEMA_VERSION));
    }

    #[test]
    fn allocations_pair_with_frees_and_the_window_edges() {
        // 0x100 was allocated before the window (freed in it); 0x200 is paired; 0x300 is
        // live, its allocation dropped; 0x400 is live and in the window.
        let d = doc(
            vec![
                ev(10, "free", 0x100, 64),
                ev(11, "allocate", 0x200, 128),
                ev(12, "allocate", 0x400, 512),
                ev(13, "free", 0x200, 128),
                ev(14, "allocate_failed", 0, 1 << 40),
                ev(15, "grow", 0x1000, 4096),
            ],
            vec![
                ev(3, "allocate", 0x300, 256),
                ev(12, "allocate", 0x400, 512),
            ],
        );
        let m = model(&d).unwrap();
        let got: Vec<_> = m
            .allocs
            .iter()
            .map(|a| (a.addr, a.start, a.end, a.live, a.seq))
            .collect();
        assert_eq!(
            got,
            [
                (0x100, -1, 0, false, -1),
                (0x300, -1, -1, true, 3),
                (0x200, 1, 3, false, 11),
                (0x400, 2, -1, true, 12),
            ]
        );
        assert_eq!(m.marks.len(), 2);
        // Live after event 2: 0x300, 0x200 and 0x400 (0x100 was freed by event 0).
        assert_eq!(peak_live(&m), 256 + 128 + 512);
        let data = embedded(&m, "x.json", 10);
        assert_eq!(data["meta"]["allocations"], json!(2));
        assert_eq!(data["meta"]["live_count"], json!(2));
        assert_eq!(data["meta"]["allocate_failed"], json!(1));
        assert_eq!(data["marks"]["kind"], json!([0, 2]));
    }

    #[test]
    fn bad_documents_are_named() {
        let e = |d: Value| model(&d).err().unwrap();
        assert!(e(json!([])).contains("not a JSON object"));
        assert!(e(json!({"events": []})).contains("no schema_version"));
        assert!(e(json!({"schema_version": 2})).contains("unknown schema_version 2"));
        let mut d = doc(vec![ev(0, "allocate", 1, 1)], vec![]);
        d["events"][0]["size"] = json!("big");
        assert!(e(d).contains("events[0]: `size`"));
        let mut d = doc(vec![], vec![]);
        d["segments"] = json!(3);
        assert!(e(d).contains("`segments` is not a list"));
        // Unknown actions are counted and left out.
        let d = doc(vec![ev(0, "defragment", 1, 1)], vec![]);
        assert_eq!(model(&d).unwrap().unknown_actions, 1);
    }

    #[test]
    fn the_page_cannot_be_broken_out_of() {
        let mut d = doc(vec![ev(0, "allocate", 1, 1)], vec![]);
        d["events"][0]["frames"] =
            json!([{"function": "</script><script>alert(1)</script>", "file": null, "line": 1}]);
        let m = model(&d).unwrap();
        let html = render(&embedded(&m, "x.json", 10), "<b>t</b>");
        assert!(!html.contains("alert(1)</script>"));
        assert!(html.contains("&lt;b&gt;t&lt;/b&gt;"));
        // One script element for the data, one for the code; no template slot left.
        assert_eq!(html.matches("</script>").count(), 2);
        assert!(!html.contains("{{"));
        assert!(!SCRIPT.contains("</script") && !STYLE.contains("</style"));
    }

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
