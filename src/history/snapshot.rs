//! Memory snapshots: one JSON document with the events still in the recorder's ring, the
//! allocations live now that were made while recording, and each resource's segments (pool
//! chunks, mapped extents, ...) with their blocks (the format is in
//! `docs/memory-history.md`; `rmm-viz` turns it into an HTML report).
//!
//! The top layer, beside the C ABI: a snapshot enumerates the live C handles
//! (`crate::ffi`), each device's resource and the resources given to [`describe`]. Only
//! `ffi` and users outside the crate call it; the layers below record through
//! [`super::recorder`], which reaches [`write_snapshot`] at exit through the writer
//! installed here ([`install_exit_writer`]).

use std::io::Write;
use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::{json, Value};

use super::recorder;
use crate::error::{Error, Result};
use crate::mr::{DeviceMemoryResource, SharedResource};

/// The snapshot format's version (`schema_version` in the JSON); bumped on any change a
/// reader could notice.
pub const SCHEMA_VERSION: u32 = 1;

/// Makes the exit hook of `RMM_MEMORY_HISTORY` (registered by the recorder at the runtime's
/// first use) write its snapshot with [`write_snapshot`]. Called by the top layer's entry
/// points before any snapshot matters: each C handle made (`crate::ffi`), each resource
/// described (the interposer's), each snapshot taken.
pub(crate) fn install_exit_writer() {
    recorder::set_exit_writer(write_snapshot);
}

/// Resources made outside the C ABI that snapshots should describe (the interposer's).
static EXTRA: Mutex<Vec<std::sync::Weak<dyn DeviceMemoryResource>>> = Mutex::new(Vec::new());

/// Makes snapshots describe `resource` (and what lies under it) while it lives, for
/// resources that no C handle or per-device entry holds.
pub fn describe(resource: &SharedResource) {
    install_exit_writer();
    let mut extra = EXTRA.lock();
    extra.retain(|w| w.strong_count() > 0);
    extra.push(Arc::downgrade(resource));
}

/// The resources a snapshot describes: every live C handle, each device's current
/// resource and those given to [`describe`], with the resources under them, each once.
fn resources() -> Vec<SharedResource> {
    let mut out: Vec<SharedResource> = crate::ffi::live_resources();
    out.extend(EXTRA.lock().iter().filter_map(std::sync::Weak::upgrade));
    if let Ok(rt) = crate::runtime::runtime() {
        for d in 0..rt.device_count().unwrap_or(0) {
            if let Ok(r) = crate::mr::get_per_device_resource(d) {
                out.push(r);
            }
        }
    }
    let mut seen = Vec::new();
    let mut all = Vec::new();
    while let Some(r) = out.pop() {
        let key = Arc::as_ptr(&r) as *const () as usize;
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        if let Some(up) = r.upstream() {
            out.push(up);
        }
        all.push(r);
    }
    all
}

/// The snapshot as a JSON value (see the module docs; the format is in
/// `docs/memory-history.md`).
pub fn snapshot() -> Value {
    install_exit_writer();
    let recorded = recorder::recorded();
    let mut segments = Vec::new();
    for r in resources() {
        let id = Arc::as_ptr(&r) as *const () as usize;
        for s in r.segments() {
            let free: usize = s
                .blocks
                .iter()
                .filter(|b| b.state == "free")
                .map(|b| b.size)
                .sum();
            let largest = s
                .blocks
                .iter()
                .filter(|b| b.state == "free")
                .map(|b| b.size)
                .max()
                .unwrap_or(0);
            segments.push(json!({
                "resource": r.name(),
                "resource_id": id,
                "kind": s.kind,
                "address": s.addr,
                "size": s.size,
                "free_bytes": free,
                "largest_free_block": largest,
                "blocks": s.blocks.iter().map(|b| json!({
                    "address": b.addr, "size": b.size, "state": b.state,
                })).collect::<Vec<_>>(),
            }));
        }
    }
    let runtime = crate::runtime::runtime()
        .map(|rt| rt.description())
        .unwrap_or_else(|e| e.to_string());
    json!({
        "schema_version": SCHEMA_VERSION,
        "producer": format!("rmm-rs {}", env!("CARGO_PKG_VERSION")),
        "runtime": runtime,
        "recording": recorded.recording,
        "events_dropped": recorded.dropped,
        "events": recorded.events,
        "live": recorded.live,
        "segments": segments,
    })
}

/// Writes [`snapshot`] to `path` (replacing it).
pub fn write_snapshot(path: &str) -> Result<()> {
    let doc = snapshot();
    let io =
        |e: std::io::Error| Error::invalid(format!("memory snapshot: cannot write {path:?}: {e}"));
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).map_err(io)?);
    serde_json::to_writer(&mut f, &doc)
        .map_err(|e| Error::invalid(format!("memory snapshot: cannot write {path:?}: {e}")))?;
    f.flush().map_err(io)
}

/// After an allocation failed for lack of memory: with `RMM_MEMORY_HISTORY`, writes the
/// snapshot now (the state that failed is what the user wants to see).
#[cold]
pub fn out_of_memory() {
    if let Some(path) = recorder::env_path() {
        if let Err(e) = write_snapshot(path) {
            eprintln!("rmm: {e}");
        }
    }
}
