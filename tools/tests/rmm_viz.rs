//! `rmm-viz`: a report of a snapshot recorded through the C ABI (the data embedded, no
//! external resources), argument and input errors named, 100 000 events quickly.

mod common;

use std::ffi::c_void;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::temp;
use rmm::ffi::*;
use serde_json::{json, Value};

fn viz(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rmm-viz"))
        .args(args)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The JSON the page embeds.
fn embedded(html: &str) -> Value {
    let open = r#"<script type="application/json" id="rmm-viz-data">"#;
    let at = html.find(open).expect("the data's script element") + open.len();
    let end = at + html[at..].find("</script>").unwrap();
    serde_json::from_str(&html[at..end]).expect("the embedded data is JSON")
}

/// No script, style, image or link is fetched: nothing names a network address.
fn assert_self_contained(html: &str) {
    for bad in [
        "http://",
        "https://",
        "<link",
        "<script src",
        "@import",
        "<iframe",
    ] {
        assert!(!html.contains(bad), "the report contains {bad:?}");
    }
    assert!(html.contains("<style>") && html.contains("document.body.dataset.rendered"));
}

#[test]
fn a_recorded_run_is_embedded_whole() {
    if std::env::var_os("RMM_RUNTIME").is_none() {
        std::env::set_var("RMM_RUNTIME", "host");
    }
    let (mut up, mut pool) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!(rmm_cuda_create(&mut up), rmm_status_t::RMM_STATUS_SUCCESS);
        assert_eq!(
            rmm_pool_create(up, 1 << 20, 16 << 20, &mut pool),
            rmm_status_t::RMM_STATUS_SUCCESS
        );
    }
    rmm::history::enable(10_000, true).unwrap();
    let sizes = [1000usize, 256 << 10, 3 << 20, 4096, 2 << 20];
    let mut ptrs = Vec::new();
    for &n in &sizes {
        let mut p: *mut c_void = std::ptr::null_mut();
        // SAFETY: valid out-pointer.
        let s = unsafe { rmm_allocate(pool, n, &mut p) };
        assert_eq!(s, rmm_status_t::RMM_STATUS_SUCCESS);
        ptrs.push((p, n));
    }
    // Two freed, three live; one allocation over the pool's maximum fails.
    for &(p, n) in &ptrs[..2] {
        assert_eq!(rmm_deallocate(pool, p, n), rmm_status_t::RMM_STATUS_SUCCESS);
    }
    let mut huge = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    let s = unsafe { rmm_allocate(pool, 64 << 20, &mut huge) };
    assert_eq!(s, rmm_status_t::RMM_STATUS_OUT_OF_MEMORY);
    let snap = temp("run.json");
    rmm::history::write_snapshot(snap.to_str().unwrap()).unwrap();
    rmm::history::disable();
    for &(p, n) in &ptrs[2..] {
        rmm_deallocate(pool, p, n);
    }
    rmm_resource_release(pool);
    rmm_resource_release(up);

    let doc: Value = serde_json::from_slice(&std::fs::read(&snap).unwrap()).unwrap();
    let report = temp("run.html");
    let out = viz(&[
        snap.to_str().unwrap(),
        "-o",
        report.to_str().unwrap(),
        "--title",
        "a <recorded> run",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("5 allocations"),
        "{}",
        text(&out.stdout)
    );
    let html = std::fs::read_to_string(&report).unwrap();
    assert_self_contained(&html);
    assert!(html.contains("<title>a &lt;recorded&gt; run</title>"));

    let data = embedded(&html);
    assert_eq!(data["format"], json!("rmm-viz-data 1"));
    assert_eq!(data["meta"]["schema_version"], doc["schema_version"]);
    assert_eq!(data["meta"]["producer"], doc["producer"]);
    assert_eq!(data["meta"]["runtime"], doc["runtime"]);
    assert_eq!(data["meta"]["allocate_failed"], json!(1));
    assert_eq!(data["meta"]["stacks"], json!(true));
    assert_eq!(
        data["times"].as_array().unwrap().len(),
        doc["events"].as_array().unwrap().len()
    );
    // Each allocation with its address, size and fate.
    let a = &data["allocs"];
    let addrs: Vec<&str> = a["addr"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for (i, &(p, n)) in ptrs.iter().enumerate() {
        let k = addrs
            .iter()
            .position(|&x| x == format!("{:#x}", p as usize))
            .unwrap_or_else(|| panic!("allocation {i} at {p:?} in {addrs:?}"));
        assert_eq!(a["size"][k], json!(n));
        assert!(a["start"][k].as_i64().unwrap() >= 0);
        let live = i >= 2;
        assert_eq!(a["end"][k].as_i64().unwrap() < 0, live, "allocation {i}");
        assert_eq!(a["live"][k], json!(u8::from(live)), "allocation {i}");
        // Its stack: the C call first (after the recorder's closure in a debug build), then
        // its callers.
        let stack = &data["stacks"][a["stack"][k].as_u64().unwrap() as usize];
        let names: Vec<&str> = stack
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                data["frames"][f.as_u64().unwrap() as usize][0]
                    .as_str()
                    .unwrap()
            })
            .collect();
        let first = names.iter().find(|f| !f.starts_with("core::"));
        assert!(first.unwrap().starts_with("rmm_allocate"), "{names:?}");
        // (In a release build this test's own frame may be inlined away.)
        assert!(names.len() > 2, "{names:?}");
    }
    assert_eq!(data["meta"]["live_count"], json!(3));
    assert_eq!(
        data["meta"]["live_bytes"],
        json!(sizes[2..].iter().sum::<usize>())
    );
    // The pool's chunks, their blocks covering them; the live blocks point at their
    // allocations.
    let segments = data["segments"].as_array().unwrap();
    assert_eq!(segments.len(), doc["segments"].as_array().unwrap().len());
    let chunks: Vec<&Value> = segments
        .iter()
        .filter(|s| s["kind"] == "pool_chunk")
        .collect();
    assert!(!chunks.is_empty());
    let mut linked = 0;
    for s in &chunks {
        let blocks = s["blocks"].as_array().unwrap();
        let covered: u64 = blocks.iter().map(|b| b[1].as_u64().unwrap()).sum();
        assert_eq!(json!(covered), s["size"]);
        linked += blocks
            .iter()
            .filter(|b| b[3].as_i64().unwrap() >= 0)
            .count();
    }
    assert_eq!(linked, 3, "each live allocation's block links to it");
    std::fs::remove_file(&snap).ok();
    std::fs::remove_file(&report).ok();
}

#[test]
fn bad_arguments_and_inputs_are_named() {
    let out = viz(&[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no snapshot named"));
    assert!(text(&out.stderr).contains("usage: rmm-viz"));
    let out = viz(&["--help"]);
    assert!(out.status.success());
    assert!(text(&out.stdout).starts_with("usage: rmm-viz"));
    let out = viz(&["x.json", "--bands"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("unknown option --bands"));

    let missing = temp("missing.json");
    let out = viz(&[missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let e = text(&out.stderr);
    assert!(
        e.contains("cannot read the snapshot") && e.contains("missing.json"),
        "{e}"
    );

    let cases: [(&str, &str, &str); 4] = [
        ("bad.json", "{\"schema_version\": 1,", "bad.json: not JSON"),
        (
            "v2.json",
            r#"{"schema_version": 2, "events": []}"#,
            "v2.json: unknown schema_version 2 (this rmm-viz reads schema_version 1)",
        ),
        (
            "other.json",
            r#"{"traceEvents": []}"#,
            "other.json: no schema_version",
        ),
        (
            "field.json",
            r#"{"schema_version": 1, "events": [{"action": "allocate", "seq": 0, "time_ns": 0, "address": 16}], "live": [], "segments": []}"#,
            "field.json: events[0] has no `size`",
        ),
    ];
    for (name, body, want) in cases {
        let p = temp(name);
        std::fs::write(&p, body).unwrap();
        let out = viz(&[p.to_str().unwrap(), "-o", temp("x.html").to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{name}");
        let e = text(&out.stderr);
        assert!(e.contains(want), "{name}: {e}");
        std::fs::remove_file(&p).ok();
    }

    // An unwritable report.
    let p = temp("empty.json");
    std::fs::write(
        &p,
        r#"{"schema_version": 1, "events": [], "live": [], "segments": []}"#,
    )
    .unwrap();
    let out = viz(&[p.to_str().unwrap(), "-o", "/nonexistent-dir/r.html"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("cannot write the report \"/nonexistent-dir/r.html\""));
    // An empty snapshot is a report too (with nothing to draw).
    let r = temp("empty.html");
    let out = viz(&[p.to_str().unwrap(), "-o", r.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_self_contained(&std::fs::read_to_string(&r).unwrap());
}

/// A snapshot of 100 000 events (50 000 allocations, their stacks from 4 sites, a ring
/// that dropped older events) becomes a report in seconds, the bands capped.
#[test]
fn a_hundred_thousand_events() {
    let frames = |site: &str| {
        json!([
            {"function": "rmm_allocate_async", "file": null, "line": null},
            {"function": site, "file": "/src/app.c", "line": 10},
            {"function": "main", "file": "/src/app.c", "line": 99},
        ])
    };
    let sites = ["load", "scratch", "cache", "tensor"];
    let mut events = Vec::with_capacity(100_000);
    let mut live = Vec::new();
    let mut open: Vec<(u64, u64, usize)> = Vec::new();
    let mut state = 12345u64;
    let mut seq = 5000u64;
    while events.len() < 100_000 {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let r = state >> 33;
        let ev = |action: &str, addr: u64, size: u64, site: usize, seq: u64| {
            json!({
                "seq": seq, "time_ns": seq * 250, "action": action, "address": addr,
                "size": size, "stream": 0, "device": 0, "resource": "pool_memory_resource",
                "resource_id": 1, "thread": 1 + site as u64 % 2, "frames": frames(sites[site]),
            })
        };
        if open.len() < 10 || (r % 100 < 51 && open.len() < 4000) {
            let site = (r % 4) as usize;
            let addr = 0x7f00_0000_0000 + seq * 4096;
            let size = 256 + (r >> 8) % (8 << 20);
            events.push(ev("allocate", addr, size, site, seq));
            open.push((addr, size, site));
        } else {
            let i = (r >> 8) as usize % open.len();
            let (addr, size, site) = open.swap_remove(i);
            events.push(ev("free", addr, size, site, seq));
        }
        seq += 1;
    }
    for &(addr, size, site) in &open {
        let mut e = events
            .iter()
            .rev()
            .find(|e| e["address"] == json!(addr) && e["action"] == "allocate")
            .unwrap()
            .clone();
        e["size"] = json!(size);
        e["frames"] = frames(sites[site]);
        live.push(e);
    }
    let doc = json!({
        "schema_version": 1, "producer": "rmm-rs test", "runtime": "synthetic",
        "recording": true, "events_dropped": 5000, "events": events, "live": live,
        "segments": [{
            "resource": "pool_memory_resource", "resource_id": 9, "kind": "pool_chunk",
            "address": 0x7e00_0000_0000u64, "size": 1u64 << 30, "free_bytes": 1u64 << 29,
            "largest_free_block": 1u64 << 28,
            "blocks": (0..10_000u64).map(|k| json!({
                "address": 0x7e00_0000_0000u64 + k * (1 << 30) / 10_000,
                "size": (1u64 << 30) / 10_000,
                "state": if k % 2 == 0 { "used" } else { "free" },
            })).collect::<Vec<_>>(),
        }],
    });
    let snap = temp("large.json");
    std::fs::write(&snap, serde_json::to_vec(&doc).unwrap()).unwrap();
    let report = temp("large.html");
    let t = Instant::now();
    let out = viz(&[snap.to_str().unwrap(), "-o", report.to_str().unwrap()]);
    let took = t.elapsed();
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Generous: a debug build on a slow machine; a release build takes well under a second.
    assert!(took < Duration::from_secs(60), "{took:?}");
    let html = std::fs::read_to_string(&report).unwrap();
    assert_self_contained(&html);
    let data = embedded(&html);
    assert_eq!(data["times"].as_array().unwrap().len(), 100_000);
    assert_eq!(data["max_bands"], json!(1000));
    assert_eq!(data["meta"]["events_dropped"], json!(5000));
    // Four call sites, three frames each: four stacks, six distinct frames.
    assert_eq!(data["stacks"].as_array().unwrap().len(), 4);
    assert_eq!(data["frames"].as_array().unwrap().len(), 6);
    assert_eq!(
        data["meta"]["live_count"].as_u64().unwrap() as usize,
        open.len()
    );
    // The stacks are not repeated per event: the page stays a few MiB.
    assert!(html.len() < 12 << 20, "{} bytes", html.len());
    std::fs::remove_file(&snap).ok();
    std::fs::remove_file(&report).ok();
}
