//! A snapshot read: its schema checked, its strings and stacks interned, allocations paired
//! with their frees (or the window's edges), the segments' block maps summed.

use std::collections::HashMap;

use serde_json::{json, Value};

use crate::page::hex;

/// The snapshot schema this viewer reads (`rmm::history::SCHEMA_VERSION`).
const SCHEMA_VERSION: u64 = 1;

/// What went wrong with the input: printed after "rmm-viz: ".
pub type Fail = String;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
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
    pub fn mark_code(self) -> Option<u8> {
        match self {
            Action::AllocateFailed => Some(0),
            Action::FreeFailed => Some(1),
            Action::Grow => Some(2),
            Action::Release => Some(3),
            _ => None,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Ev {
    pub seq: u64,
    pub t: u64,
    pub action: Action,
    pub addr: u64,
    pub size: u64,
    pub stream: u32,
    pub device: i64,
    pub res: u32,
    pub thread: u64,
    /// Index into the stack table, -1 without a stack.
    pub stack: i64,
}

/// One allocation, from its allocation (or the window's start) to its free (or the end).
#[derive(Clone, Debug)]
pub struct Alloc {
    /// Index of its allocation event; -1 when it was made before the recorded window (its
    /// event was dropped, or it was made before recording started).
    pub start: i64,
    /// Index of its free event; -1 when it is live at the end.
    pub end: i64,
    pub size: u64,
    pub addr: u64,
    pub stream: u32,
    pub device: i64,
    pub res: u32,
    pub thread: u64,
    pub stack: i64,
    /// Its allocation event's seq and time, -1 when unknown (allocated before the window
    /// and known only from its free).
    pub seq: i64,
    pub t: i64,
    /// Listed in the snapshot's `live`.
    pub live: bool,
}

/// Interned strings and stacks.
#[derive(Default)]
pub struct Tables {
    pub frames: Vec<(String, Option<String>, Option<u64>)>,
    pub frame_ix: HashMap<(String, Option<String>, Option<u64>), u32>,
    pub stacks: Vec<Vec<u32>>,
    pub stack_ix: HashMap<Vec<u32>, i64>,
    pub resources: Vec<(String, u64)>,
    pub res_ix: HashMap<(String, u64), u32>,
    pub streams: Vec<u64>,
    pub stream_ix: HashMap<u64, u32>,
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
pub struct Model {
    pub doc_meta: Value,
    pub tables: Tables,
    pub times: Vec<u64>,
    pub allocs: Vec<Alloc>,
    /// Failed allocations and frees, growth and release: (event index, event).
    pub marks: Vec<(usize, Ev)>,
    pub segments: Vec<Value>,
    pub block_states: Vec<String>,
    pub unknown_actions: usize,
    pub stacks_seen: bool,
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
pub fn model(doc: &Value) -> std::result::Result<Model, Fail> {
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

/// Peak live bytes over the window: an allocation counts from its allocation (the window's
/// start when made before it) until its free.
pub fn peak_live(m: &Model) -> u64 {
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

/// Snapshot documents for the tests.
#[cfg(test)]
pub mod fixtures {
    use serde_json::{json, Value};

    pub fn ev(seq: u64, action: &str, addr: u64, size: u64) -> Value {
        json!({
            "seq": seq, "time_ns": seq * 1000, "action": action, "address": addr,
            "size": size, "stream": 0, "device": 0, "resource": "pool_memory_resource",
            "resource_id": 7, "thread": 1, "frames": null,
        })
    }

    pub fn doc(events: Vec<Value>, live: Vec<Value>) -> Value {
        json!({
            "schema_version": 1, "producer": "test", "runtime": "host", "recording": true,
            "events_dropped": 0, "events": events, "live": live, "segments": [],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::{doc, ev};
    use super::*;
    use crate::page::embedded;

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
}
