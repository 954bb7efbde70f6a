//! Tests of the memory history: the recorder through the C ABI, snapshots and their
//! segments.

use std::ffi::c_void;
use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::{json, Value};

use super::recorder::program_frame;
use super::*;
use crate::ffi::*;
use crate::mr::SharedResource;

/// Tests that turn recording on and off run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// The frames a snapshot keeps of a stack, innermost first.
fn kept<'a>(stack: &[&'a str]) -> Vec<&'a str> {
    let (mut out, mut after) = (Vec::new(), false);
    for &name in stack {
        if program_frame(name, out.is_empty(), &mut after) {
            out.push(name);
        }
    }
    out
}

#[test]
fn snapshots_keep_the_program_frames_above_the_interposer() {
    // PyTorch under librmm_preload.so (as seen on a GPU): its allocator is the site.
    let torch = [
        "backtrace::capture::Backtrace::new_unresolved",
        "rmm::history::record",
        "rmm_preload::engine::Engine::allocate",
        "rmm_preload::engine::allocate",
        "cudaMalloc",
        "c10::cuda::CUDACachingAllocator::allocate",
        "at::empty",
    ];
    assert_eq!(
        kept(&torch),
        ["c10::cuda::CUDACachingAllocator::allocate", "at::empty"]
    );
    // A C program: its call of the C ABI is kept; a cudaMalloc that is not the
    // interposer's (no interposer frame under it) is the program's own.
    let c = [
        "core::ops::function::FnOnce::call_once",
        "rmm::ffi::x",
        "main",
    ];
    assert_eq!(kept(&c), ["main"]);
    assert_eq!(
        kept(&["rmm::a", "cudaMalloc", "main"]),
        ["cudaMalloc", "main"]
    );
}

fn pool() -> rmm_resource_t {
    crate::mr::tests::init();
    let mut up = std::ptr::null_mut();
    let mut pool = std::ptr::null_mut();
    // SAFETY: valid out-pointers.
    unsafe {
        assert_eq!(rmm_cuda_create(&mut up), rmm_status_t::RMM_STATUS_SUCCESS);
        assert_eq!(
            rmm_pool_create(up, 1 << 20, 4 << 20, &mut pool),
            rmm_status_t::RMM_STATUS_SUCCESS
        );
    }
    rmm_resource_release(up);
    pool
}

/// The resource's id in events and segments (`rmm_resource_id`: its address).
fn id_of(r: rmm_resource_t) -> usize {
    let mut id = 0u64;
    // SAFETY: a live handle and a valid out-pointer.
    assert_eq!(
        unsafe { rmm_resource_id(r, &mut id) },
        rmm_status_t::RMM_STATUS_SUCCESS
    );
    id as usize
}

fn mine<'a>(doc: &'a Value, key: &str, id: usize) -> Vec<&'a Value> {
    doc[key]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["resource_id"] == json!(id))
        .collect()
}

#[test]
fn records_allocations_frees_failures_and_growth_with_stacks() {
    let _serial = SERIAL.lock();
    let r = pool();
    enable(1000, true).unwrap();
    let (mut a, mut b) = (
        std::ptr::null_mut::<c_void>(),
        std::ptr::null_mut::<c_void>(),
    );
    // SAFETY: valid out-pointers; the pointers are freed with their sizes.
    unsafe {
        assert_eq!(
            rmm_allocate(r, 1000, &mut a),
            rmm_status_t::RMM_STATUS_SUCCESS
        );
        assert_eq!(
            rmm_allocate(r, 2 << 20, &mut b),
            rmm_status_t::RMM_STATUS_SUCCESS
        );
        let mut c = std::ptr::null_mut();
        assert_eq!(
            rmm_allocate(r, 64 << 20, &mut c),
            rmm_status_t::RMM_STATUS_OUT_OF_MEMORY
        );
        assert_eq!(rmm_deallocate(r, a, 1000), rmm_status_t::RMM_STATUS_SUCCESS);
        assert_ne!(rmm_deallocate(r, a, 1000), rmm_status_t::RMM_STATUS_SUCCESS);
    }
    let doc = snapshot();
    disable();
    assert_eq!(doc["schema_version"], json!(SCHEMA_VERSION));
    let events = mine(&doc, "events", id_of(r));
    let actions: Vec<_> = events
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert_eq!(
        actions,
        [
            "allocate",
            "grow",
            "allocate",
            "allocate_failed",
            "free",
            "free_failed"
        ]
    );
    assert_eq!(events[0]["size"], json!(1000));
    assert_eq!(events[0]["address"], json!(a as usize));
    assert_eq!(events[3]["size"], json!(64 << 20));
    // The stack starts at the C call the program made, and goes on into its caller.
    let frames = events[0]["frames"].as_array().unwrap();
    assert_eq!(
        frames[0]["function"],
        json!("rmm_allocate_async"),
        "{frames:?}"
    );
    assert!(frames.len() > 2, "{frames:?}");
    // Live now: `b` only.
    let live = mine(&doc, "live", id_of(r));
    assert_eq!(live.len(), 1);
    assert_eq!(live[0]["address"], json!(b as usize));
    // The pool grew for `b` (its first chunk was 1 MiB): a growth event, and its chunks
    // are segments whose blocks cover them.
    assert!(doc["events"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["action"] == "grow" && e["resource"] == "pool_memory_resource"));
    let segs: Vec<_> = doc["segments"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["kind"] == "pool_chunk")
        .filter(|s| {
            s["blocks"]
                .as_array()
                .unwrap()
                .iter()
                .any(|k| k["address"] == json!(b as usize))
        })
        .collect();
    assert_eq!(segs.len(), 1, "the chunk holding b");
    let covered: u64 = segs[0]["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["size"].as_u64().unwrap())
        .sum();
    assert_eq!(json!(covered), segs[0]["size"]);
    rmm_deallocate(r, b, 2 << 20);
    rmm_resource_release(r);
}

#[test]
fn the_ring_keeps_the_newest_events_and_off_records_nothing() {
    let _serial = SERIAL.lock();
    let r = pool();
    enable(4, false).unwrap();
    for _ in 0..5 {
        let mut p = std::ptr::null_mut();
        // SAFETY: valid out-pointer; freed with its size.
        unsafe {
            rmm_allocate(r, 256, &mut p);
            rmm_deallocate(r, p, 256);
        }
    }
    let doc = snapshot();
    assert_eq!(doc["events"].as_array().unwrap().len(), 4);
    assert!(doc["events_dropped"].as_u64().unwrap() >= 6);
    assert!(doc["events"][0]["frames"].is_null());
    disable();
    let mut p = std::ptr::null_mut();
    // SAFETY: as above.
    unsafe {
        rmm_allocate(r, 256, &mut p);
        rmm_deallocate(r, p, 256);
    }
    let doc = snapshot();
    assert_eq!(doc["recording"], json!(false));
    assert!(doc["events"].as_array().unwrap().is_empty());
    assert!(enable(0, false).is_err());
    rmm_resource_release(r);
}

#[test]
fn snapshot_file_is_json_and_bad_paths_are_errors() {
    let _serial = SERIAL.lock();
    let dir = std::env::temp_dir().join(format!("rmm-history-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("snap.json");
    write_snapshot(path.to_str().unwrap()).unwrap();
    let doc: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(doc["schema_version"], json!(SCHEMA_VERSION));
    let e = write_snapshot("/nonexistent-dir/x.json")
        .unwrap_err()
        .to_string();
    assert!(e.contains("/nonexistent-dir/x.json"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn fixed_size_and_binning_segments_show_live_and_free_blocks() {
    use crate::mr::{DeviceMemoryResource, FixedSizeMemoryResource};
    crate::mr::tests::init();
    let up: SharedResource = Arc::new(crate::mr::CudaMemoryResource::new().unwrap());
    let fixed = FixedSizeMemoryResource::new(up, 1 << 16, 8).unwrap();
    let s = crate::Stream::DEFAULT;
    let ptrs: Vec<_> = (0..3)
        .map(|_| fixed.allocate(1 << 16, s).unwrap())
        .collect();
    fixed.deallocate(ptrs[1], 1 << 16, s).unwrap();
    let segs = fixed.segments();
    assert_eq!(segs.len(), 1);
    assert_eq!(segs[0].kind, "fixed_size_batch");
    assert_eq!(segs[0].blocks.len(), 8);
    let used: Vec<_> = segs[0]
        .blocks
        .iter()
        .filter(|b| b.state == "used")
        .map(|b| b.addr)
        .collect();
    assert_eq!(used.len(), 2);
    assert!(used.contains(&(ptrs[0] as usize)) && used.contains(&(ptrs[2] as usize)));
    for p in [ptrs[0], ptrs[2]] {
        fixed.deallocate(p, 1 << 16, s).unwrap();
    }
}
