//! The event log (`LoggingResourceAdaptor`), its C ABI, and the debug log's level.

use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use rmm::mr::{CudaMemoryResource, DeviceMemoryResource, LoggingResourceAdaptor, SharedResource};
use rmm::Stream;

fn setup() {
    if std::env::var_os("RMM_RUNTIME").is_none() {
        std::env::set_var("RMM_RUNTIME", "host");
    }
}

fn cuda() -> SharedResource {
    setup();
    Arc::new(CudaMemoryResource::new().unwrap())
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rmm-logging-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

/// Replaces the Thread and Time columns (which vary) after checking their format.
fn normalize(text: &str) -> String {
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        if i == 0 {
            out.push_str(line);
        } else {
            let f: Vec<&str> = line.splitn(3, ',').collect();
            assert_eq!(f.len(), 3, "{line}");
            assert!(f[0].parse::<u64>().is_ok(), "thread id '{}'", f[0]);
            let t = f[1].as_bytes();
            assert_eq!(t.len(), 15, "time '{}'", f[1]);
            assert!(
                t[2] == b':' && t[5] == b':' && t[8] == b'.',
                "time '{}'",
                f[1]
            );
            assert!(f[1].chars().filter(|c| c.is_ascii_digit()).count() == 12);
            out.push_str("TID,TIME,");
            out.push_str(f[2]);
        }
        out.push('\n');
    }
    out
}

#[test]
fn csv_matches_rmm_format_byte_for_byte() {
    let path = temp("golden.csv");
    let mr = LoggingResourceAdaptor::new(cuda(), Some(&path), false).unwrap();
    let p = mr.allocate(1000, Stream::DEFAULT).unwrap();
    let q = mr.allocate(256, Stream(0x1234)).unwrap();
    mr.deallocate(q, 256, Stream(0x1234)).unwrap();
    mr.deallocate(p, 1000, Stream::DEFAULT).unwrap();
    let z = mr.allocate(0, Stream::DEFAULT).unwrap();
    mr.deallocate(z, 0, Stream::DEFAULT).unwrap();
    assert!(mr.allocate(usize::MAX / 2, Stream::DEFAULT).is_err());
    drop(mr);
    let expected = format!(
        "Thread,Time,Action,Pointer,Size,Stream\n\
         TID,TIME,allocate,{p:p},1000,0\n\
         TID,TIME,allocate,{q:p},256,0x1234\n\
         TID,TIME,free,{q:p},256,0x1234\n\
         TID,TIME,free,{p:p},1000,0\n\
         TID,TIME,allocate,(nil),0,0\n\
         TID,TIME,free,(nil),0,0\n\
         TID,TIME,allocate failure,(nil),{},0\n",
        usize::MAX / 2
    );
    assert_eq!(normalize(&read(&path)), expected);
}

#[test]
fn auto_flush_writes_each_row_immediately() {
    let path = temp("auto_flush.csv");
    let mr = LoggingResourceAdaptor::new(cuda(), Some(&path), true).unwrap();
    let p = mr.allocate(512, Stream::DEFAULT).unwrap();
    assert_eq!(
        read(&path).lines().count(),
        2,
        "header and one row before any flush"
    );
    mr.deallocate(p, 512, Stream::DEFAULT).unwrap();
    assert_eq!(read(&path).lines().count(), 3);
}

#[test]
fn rows_are_buffered_until_flush_or_drop() {
    let path = temp("buffered.csv");
    let mr = LoggingResourceAdaptor::new(cuda(), Some(&path), false).unwrap();
    let p = mr.allocate(512, Stream::DEFAULT).unwrap();
    assert_eq!(read(&path).lines().count(), 0, "buffered");
    mr.flush().unwrap();
    assert_eq!(read(&path).lines().count(), 2);
    mr.deallocate(p, 512, Stream::DEFAULT).unwrap();
    drop(mr);
    assert_eq!(read(&path).lines().count(), 3, "drop flushes");
}

#[test]
fn many_threads_never_tear_lines() {
    let path = temp("threads.csv");
    let mr = Arc::new(LoggingResourceAdaptor::new(cuda(), Some(&path), false).unwrap());
    std::thread::scope(|s| {
        for t in 0..8 {
            let mr = mr.clone();
            s.spawn(move || {
                for i in 0..500 {
                    let n = 256 * (1 + (i + t) % 7);
                    let p = mr.allocate(n, Stream::DEFAULT).unwrap();
                    mr.deallocate(p, n, Stream::DEFAULT).unwrap();
                }
            });
        }
    });
    drop(mr);
    let text = read(&path);
    let norm = normalize(&text);
    assert_eq!(norm.lines().count(), 1 + 8 * 500 * 2);
    let tids: std::collections::HashSet<&str> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(tids.len(), 8, "one OS thread id per thread");
    for l in norm.lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        assert_eq!(f.len(), 6, "{l}");
        assert!(
            f[3].starts_with("0x") && f[4].parse::<usize>().is_ok(),
            "{l}"
        );
    }
}

#[test]
fn unwritable_path_names_the_path() {
    let path = Path::new("/nonexistent-dir-rmm/sub/log.csv");
    let err = LoggingResourceAdaptor::new(cuda(), Some(path), false).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("/nonexistent-dir-rmm/sub/log.csv"), "{msg}");
    assert!(msg.contains("cannot open log file"), "{msg}");
}

/// Runs the ignored test `name` of this binary in a child with `env` (and RMM_LOG_FILE
/// removed unless given).
fn child(name: &str, env: &[(&str, &str)]) -> std::process::Output {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args([
        "--ignored",
        "--exact",
        name,
        "--nocapture",
        "--test-threads=1",
    ]);
    c.env_remove("RMM_LOG_FILE");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

#[test]
#[ignore = "child process of exit_flushes_live_logs"]
fn child_exit_with_live_log() {
    let path = std::env::var("CHILD_LOG").unwrap();
    let mr = LoggingResourceAdaptor::new(cuda(), Some(Path::new(&path)), false).unwrap();
    for _ in 0..100 {
        let p = mr.allocate(4096, Stream::DEFAULT).unwrap();
        mr.deallocate(p, 4096, Stream::DEFAULT).unwrap();
    }
    std::mem::forget(mr); // still alive when the process exits
    std::process::exit(0);
}

#[test]
fn exit_flushes_live_logs() {
    let path = temp("exit.csv");
    let out = child(
        "child_exit_with_live_log",
        &[("CHILD_LOG", path.to_str().unwrap())],
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(normalize(&read(&path)).lines().count(), 201);
}

#[test]
#[ignore = "child process of rmm_log_file_is_the_default"]
fn child_default_file() {
    let r = LoggingResourceAdaptor::new(cuda(), None, true);
    match std::env::var("EXPECT") {
        Ok(v) if v == "error" => {
            let msg = r.unwrap_err().to_string();
            assert!(msg.contains("RMM_LOG_FILE is unset"), "{msg}");
        }
        _ => {
            let mr = r.unwrap();
            let p = mr.allocate(256, Stream::DEFAULT).unwrap();
            mr.deallocate(p, 256, Stream::DEFAULT).unwrap();
        }
    }
}

#[test]
fn rmm_log_file_is_the_default() {
    let path = temp("env.csv");
    let out = child(
        "child_default_file",
        &[("RMM_LOG_FILE", path.to_str().unwrap())],
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(read(&path).lines().count(), 3);
    let out = child("child_default_file", &[("EXPECT", "error")]);
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn c_abi_logging_and_debug_level() {
    use rmm::ffi::*;
    setup();
    let path = temp("c_abi.csv");
    let cpath = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    unsafe {
        let mut up: rmm_resource_t = std::ptr::null_mut();
        assert_eq!(rmm_cuda_create(&mut up), rmm_status_t::RMM_STATUS_SUCCESS);
        let mut mr: rmm_resource_t = std::ptr::null_mut();
        assert_eq!(
            rmm_logging_create(up, cpath.as_ptr(), 0, &mut mr),
            rmm_status_t::RMM_STATUS_SUCCESS
        );
        let mut p = std::ptr::null_mut();
        assert_eq!(
            rmm_allocate_async(mr, 300, std::ptr::null_mut(), &mut p),
            rmm_status_t::RMM_STATUS_SUCCESS
        );
        assert_eq!(rmm_logging_flush(mr), rmm_status_t::RMM_STATUS_SUCCESS);
        assert_eq!(read(&path).lines().count(), 2);
        assert_eq!(
            rmm_deallocate_async(mr, p, 300, std::ptr::null_mut()),
            rmm_status_t::RMM_STATUS_SUCCESS
        );
        assert_eq!(
            rmm_logging_flush(up),
            rmm_status_t::RMM_STATUS_INVALID_ARGUMENT,
            "not a logging adaptor"
        );
        assert_eq!(rmm_resource_release(mr), rmm_status_t::RMM_STATUS_SUCCESS);
        assert_eq!(read(&path).lines().count(), 3);
        assert_eq!(rmm_resource_release(up), rmm_status_t::RMM_STATUS_SUCCESS);

        let mut level = -1;
        assert_eq!(rmm_set_debug_log_level(0), rmm_status_t::RMM_STATUS_SUCCESS);
        assert_eq!(
            rmm_get_debug_log_level(&mut level),
            rmm_status_t::RMM_STATUS_SUCCESS
        );
        assert_eq!(level, 0);
        assert_eq!(rmm_set_debug_log_level(5), rmm_status_t::RMM_STATUS_SUCCESS);
        assert_eq!(
            rmm_get_debug_log_level(&mut level),
            rmm_status_t::RMM_STATUS_SUCCESS
        );
        assert_eq!(level, 5);
        assert_eq!(log::max_level(), log::LevelFilter::Error);
        assert_eq!(rmm_set_debug_log_level(6), rmm_status_t::RMM_STATUS_SUCCESS);
        assert_eq!(log::max_level(), log::LevelFilter::Off);
        assert_eq!(
            rmm_set_debug_log_level(7),
            rmm_status_t::RMM_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(
            rmm_get_debug_log_level(std::ptr::null_mut()),
            rmm_status_t::RMM_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(rmm_set_debug_log_level(2), rmm_status_t::RMM_STATUS_SUCCESS);
        assert_eq!(rmm::logger::level(), rmm::logger::Level::Info);
    }
}

#[test]
#[ignore = "child process of debug_log_goes_to_rmm_debug_log_file"]
fn child_debug_log() {
    rmm::logger::set_level(rmm::logger::Level::Debug);
    rmm::logger::log_message(rmm::logger::Level::Info, "hello from the test");
    rmm::logger::log_message(rmm::logger::Level::Trace, "not shown");
    let pool =
        rmm::mr::PoolMemoryResource::new(cuda(), 0, None).expect("pool for the debug log test");
    let p = pool.allocate(1 << 20, Stream::DEFAULT).unwrap();
    pool.deallocate(p, 1 << 20, Stream::DEFAULT).unwrap();
    rmm::logger::flush();
}

#[test]
fn debug_log_goes_to_rmm_debug_log_file() {
    let path = temp("debug.log");
    let out = child(
        "child_debug_log",
        &[("RMM_DEBUG_LOG_FILE", path.to_str().unwrap())],
    );
    assert!(out.status.success(), "{out:?}");
    let text = read(&path);
    assert!(text.contains("[info  ] hello from the test"), "{text}");
    assert!(!text.contains("not shown"), "{text}");
    assert!(text.contains("pool_memory_resource: grew by"), "{text}");
}

/// What the C ABI callback of `callback_passes_whole_lines_through` received.
#[derive(Default)]
struct Received {
    calls: Vec<Option<String>>,
}

unsafe extern "C" fn record_write(data: *const std::ffi::c_char, len: usize, arg: *mut c_void) {
    // SAFETY: `arg` is the test's `Mutex<Received>`; `data` holds `len` bytes when non-null.
    let rec = unsafe { &*(arg as *const std::sync::Mutex<Received>) };
    let item = if data.is_null() {
        None
    } else {
        // SAFETY: as above.
        let bytes = unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) };
        Some(String::from_utf8(bytes.to_vec()).unwrap())
    };
    rec.lock().unwrap().calls.push(item);
}

#[test]
fn callback_passes_whole_lines_through() {
    use rmm::ffi::*;
    setup();
    let rec = std::sync::Mutex::new(Received::default());
    let arg = &rec as *const _ as *mut c_void;
    unsafe {
        let mut up: rmm_resource_t = std::ptr::null_mut();
        assert_eq!(rmm_cuda_create(&mut up), rmm_status_t::RMM_STATUS_SUCCESS);
        let mut mr: rmm_resource_t = std::ptr::null_mut();
        assert_eq!(
            rmm_logging_create_with_callback(up, Some(record_write), arg, 0, &mut mr),
            rmm_status_t::RMM_STATUS_SUCCESS
        );
        assert_eq!(
            rec.lock().unwrap().calls,
            vec![Some("Thread,Time,Action,Pointer,Size,Stream\n".to_string())],
            "the header arrives at once, in one call"
        );
        let mut p = std::ptr::null_mut();
        assert_eq!(
            rmm_allocate_async(mr, 300, std::ptr::null_mut(), &mut p),
            rmm_status_t::RMM_STATUS_SUCCESS
        );
        {
            let r = rec.lock().unwrap();
            assert_eq!(r.calls.len(), 2, "the row arrives without a flush");
            let row = r.calls[1].as_deref().unwrap();
            assert!(row.ends_with(",300,0\n"), "{row}");
            assert_eq!(row.matches('\n').count(), 1, "one whole line: {row}");
        }
        assert_eq!(rmm_logging_flush(mr), rmm_status_t::RMM_STATUS_SUCCESS);
        assert_eq!(
            rec.lock().unwrap().calls.last(),
            Some(&None),
            "flush forwarded"
        );
        assert_eq!(
            rmm_deallocate_async(mr, p, 300, std::ptr::null_mut()),
            rmm_status_t::RMM_STATUS_SUCCESS
        );
        assert_eq!(rmm_resource_release(mr), rmm_status_t::RMM_STATUS_SUCCESS);
        assert_eq!(rmm_resource_release(up), rmm_status_t::RMM_STATUS_SUCCESS);
    }
    let r = rec.lock().unwrap();
    let text: String = r.calls.iter().flatten().cloned().collect();
    assert_eq!(normalize(&text).lines().count(), 3);
    assert!(normalize(&text)
        .lines()
        .nth(2)
        .unwrap()
        .starts_with("TID,TIME,free,0x"));
}
