//! Tests of the host emulation.

use super::*;
use crate::runtime::MemoryType;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::time::Duration;

const GIB: usize = 1 << 30;

fn rt(devices: usize, memory_per_device: usize) -> HostRuntime {
    HostRuntime::new(HostConfig {
        devices,
        memory_per_device,
        ..HostConfig::default()
    })
}

fn kind<T: std::fmt::Debug>(r: RtResult<T>) -> RuntimeErrorKind {
    r.expect_err("expected an error").kind
}

#[test]
fn free_waits_for_work_queued_on_any_stream() {
    let rt = rt(1, GIB);
    let s = rt.stream_create(StreamFlags::default()).unwrap();
    let p = rt.malloc(1 << 20).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let d = done.clone();
    rt.launch_host_func(
        s,
        Box::new(move || {
            std::thread::sleep(Duration::from_millis(50));
            d.store(true, Ordering::SeqCst);
        }),
    )
    .unwrap();
    // SAFETY: `p` is live; the fill is queued behind the sleeping host function.
    unsafe { rt.memset_async(p, 1, 1 << 20, s).unwrap() };
    rt.free(p).unwrap();
    assert!(
        done.load(Ordering::SeqCst),
        "free returned before queued work finished"
    );
    rt.stream_destroy(s).unwrap();
}

/// A host function that blocks its stream until the returned sender is used or dropped.
fn gate(rt: &HostRuntime, s: Stream) -> mpsc::Sender<()> {
    let (tx, rx) = mpsc::channel::<()>();
    rt.launch_host_func(
        s,
        Box::new(move || {
            let _ = rx.recv();
        }),
    )
    .unwrap();
    tx
}

#[test]
fn description_and_kind() {
    let r = rt(2, 16 * GIB);
    assert_eq!(r.kind(), RuntimeKind::Host);
    assert_eq!(r.description(), "host emulation: 2 device(s) of 16 GiB");
    assert_eq!(r.device_count().unwrap(), 2);
    assert_eq!(human_size(1536 << 20), "1536 MiB");
    assert_eq!(human_size((1536 << 20) + 1), "1.50 GiB");
    assert_eq!(human_size(100), "100 B");
}

#[test]
fn malloc_is_aligned_usable_and_accounted() {
    let r = rt(1, GIB);
    let info = r.mem_get_info().unwrap();
    assert_eq!(
        info,
        MemInfo {
            free: GIB,
            total: GIB
        }
    );
    let p = r.malloc(1000).unwrap();
    assert_eq!(p as usize % 256, 0);
    // SAFETY: `p` is a fresh 1000-byte read/write mapping.
    unsafe { std::ptr::write_bytes(p as *mut u8, 7, 1000) };
    assert_eq!(r.mem_get_info().unwrap().free, GIB - 1000);
    let attrs = r.pointer_attributes(p).unwrap();
    assert_eq!(attrs.memory_type, MemoryType::Device);
    assert_eq!(attrs.device, 0);
    // SAFETY: only the address is computed; it is not dereferenced.
    let interior = unsafe { (p as *const u8).add(999) } as *const c_void;
    assert_eq!(
        r.pointer_attributes(interior).unwrap().memory_type,
        MemoryType::Device
    );
    r.free(p).unwrap();
    assert_eq!(r.mem_get_info().unwrap().free, GIB);
    assert_eq!(
        r.pointer_attributes(p).unwrap().memory_type,
        MemoryType::Unregistered
    );
    assert!(r.malloc(0).unwrap().is_null());
}

#[test]
fn out_of_memory_changes_nothing() {
    let r = rt(1, GIB);
    let p = r.malloc(GIB / 2).unwrap();
    let e = r.malloc(1 << 60).unwrap_err();
    assert_eq!(e.kind, RuntimeErrorKind::OutOfMemory);
    assert_eq!(e.code, 2);
    assert_eq!(e.name, "hostErrorMemoryAllocation");
    assert_eq!(e.message, "out of memory");
    assert_eq!(e.call, "hostMalloc");
    assert_eq!(kind(r.malloc(GIB / 2 + 1)), RuntimeErrorKind::OutOfMemory);
    assert_eq!(
        kind(r.malloc_managed(1 << 60)),
        RuntimeErrorKind::OutOfMemory
    );
    assert_eq!(r.mem_get_info().unwrap().free, GIB / 2);
    let q = r.malloc(GIB / 2).unwrap();
    assert_eq!(r.mem_get_info().unwrap().free, 0);
    r.free(p).unwrap();
    r.free(q).unwrap();
    assert_eq!(r.mem_get_info().unwrap().free, GIB);
}

#[test]
fn bad_frees_are_invalid_value_and_change_nothing() {
    let r = rt(1, GIB);
    let p = r.malloc(4096).unwrap();
    let mut local = 0u64;
    let foreign = &mut local as *mut u64 as *mut c_void;
    let e = r.free(foreign).unwrap_err();
    assert_eq!(e.kind, RuntimeErrorKind::InvalidValue);
    assert_eq!(e.name, "hostErrorInvalidValue");
    assert_eq!(e.message, "invalid argument");
    // SAFETY: address arithmetic only.
    let interior = unsafe { (p as *mut u8).add(256) } as *mut c_void;
    assert_eq!(kind(r.free(interior)), RuntimeErrorKind::InvalidValue);
    assert_eq!(kind(r.free_host(p)), RuntimeErrorKind::InvalidValue);
    assert_eq!(r.mem_get_info().unwrap().free, GIB - 4096);
    r.free(p).unwrap();
    assert_eq!(kind(r.free(p)), RuntimeErrorKind::InvalidValue);
    assert_eq!(r.mem_get_info().unwrap().free, GIB);
    r.free(std::ptr::null_mut()).unwrap();
    r.free_host(std::ptr::null_mut()).unwrap();
}

#[test]
fn managed_and_pinned_memory() {
    let r = rt(2, GIB);
    r.set_device(1).unwrap();
    let m = r.malloc_managed(8192).unwrap();
    assert_eq!(r.mem_get_info().unwrap().free, GIB - 8192);
    let a = r.pointer_attributes(m).unwrap();
    assert_eq!((a.memory_type, a.device), (MemoryType::Managed, 1));
    let h = r.malloc_host(1 << 40).map(|_| ()).err();
    let _ = h; // 1 TiB of pinned memory may or may not map; either way nothing is charged.
    let h = r.malloc_host(4096).unwrap();
    assert_eq!(r.mem_get_info().unwrap().free, GIB - 8192);
    assert_eq!(
        r.pointer_attributes(h).unwrap().memory_type,
        MemoryType::Host
    );
    assert_eq!(kind(r.free(h)), RuntimeErrorKind::InvalidValue);
    assert_eq!(kind(r.free_host(m)), RuntimeErrorKind::InvalidValue);
    r.free_host(h).unwrap();
    r.free(m).unwrap();
    assert_eq!(r.mem_get_info().unwrap().free, GIB);
    assert_eq!(kind(r.malloc_managed(0)), RuntimeErrorKind::InvalidValue);
}

#[test]
fn current_device_is_per_thread() {
    let r = Arc::new(rt(3, GIB));
    assert_eq!(r.get_device().unwrap(), 0);
    r.set_device(2).unwrap();
    assert_eq!(r.get_device().unwrap(), 2);
    let r2 = Arc::clone(&r);
    std::thread::spawn(move || {
        assert_eq!(r2.get_device().unwrap(), 0);
        r2.set_device(1).unwrap();
        assert_eq!(r2.get_device().unwrap(), 1);
    })
    .join()
    .unwrap();
    assert_eq!(r.get_device().unwrap(), 2);
    let e = r.set_device(3).unwrap_err();
    assert_eq!(e.kind, RuntimeErrorKind::InvalidDevice);
    assert_eq!(e.name, "hostErrorInvalidDevice");
    assert_eq!(kind(r.set_device(-1)), RuntimeErrorKind::InvalidDevice);
    assert_eq!(r.get_device().unwrap(), 2);
    // A second runtime has its own current device on this thread.
    assert_eq!(rt(3, GIB).get_device().unwrap(), 0);
    // Allocations land on the current device.
    let p = r.malloc(100).unwrap();
    assert_eq!(r.pointer_attributes(p).unwrap().device, 2);
    assert_eq!(r.mem_get_info().unwrap().free, GIB - 100);
    r.set_device(0).unwrap();
    assert_eq!(r.mem_get_info().unwrap().free, GIB);
    r.free(p).unwrap();
}

#[test]
fn attributes_by_cuda_number_and_versions() {
    let r = rt(2, GIB);
    assert_eq!(r.runtime_version(), Ok(EMULATED_CUDA_VERSION));
    assert_eq!(r.driver_version(), Ok(13000));
    let mp = r
        .device_attribute(DeviceAttribute::MultiprocessorCount, 0)
        .unwrap();
    for number in -2..200 {
        let got = r.device_attribute_by_cuda_number(number, 1);
        if !crate::runtime::cuda::attr::is_attribute(number) {
            assert_eq!(kind(got), RuntimeErrorKind::InvalidValue, "{number}");
            continue;
        }
        let v = got.unwrap();
        assert_eq!(Some(v), emulated_attribute(number, 1, mp), "{number}");
        if let Some(typed) = crate::runtime::cuda::typed_attribute(number) {
            assert_eq!(r.device_attribute(typed, 1), Ok(v), "{typed:?}");
        }
    }
    let a = |n| r.device_attribute_by_cuda_number(n, 0).unwrap();
    assert_eq!(a(10), 32); // warp size
    assert_eq!(a(1), 1024); // threads per block
    assert_eq!((a(75), a(76)), (9, 0)); // compute capability
    assert_eq!(a(16), mp);
    assert_eq!(a(88), 1); // pageable memory access
    assert_eq!(a(115), 1); // memory pools
    assert_eq!(a(119), 0); // no IPC handle types
    assert_eq!(r.device_attribute_by_cuda_number(33, 1), Ok(1)); // PCI bus id
    assert_eq!(
        kind(r.device_attribute_by_cuda_number(10, 2)),
        RuntimeErrorKind::InvalidDevice
    );
    assert_eq!(
        kind(r.device_attribute_by_cuda_number(10, -1)),
        RuntimeErrorKind::InvalidDevice
    );
    let e = r.device_attribute_by_cuda_number(92, 0).unwrap_err();
    assert_eq!((e.code, e.call), (1, "hostDeviceGetAttribute"));
}

#[test]
fn device_attributes() {
    let r = rt(2, GIB);
    assert_eq!(
        r.device_attribute(DeviceAttribute::PageableMemoryAccess, 0),
        Ok(1)
    );
    assert_eq!(
        r.device_attribute(DeviceAttribute::ConcurrentManagedAccess, 1),
        Ok(1)
    );
    assert_eq!(r.device_attribute(DeviceAttribute::ManagedMemory, 0), Ok(1));
    assert_eq!(
        r.device_attribute(DeviceAttribute::MemoryPoolsSupported, 0),
        Ok(1)
    );
    assert_eq!(
        r.device_attribute(DeviceAttribute::MemoryPoolSupportedHandleTypes, 0),
        Ok(0)
    );
    assert!(
        r.device_attribute(DeviceAttribute::MultiprocessorCount, 0)
            .unwrap()
            >= 1
    );
    assert_eq!(r.device_attribute(DeviceAttribute::PciBusId, 1), Ok(1));
    assert_eq!(
        kind(r.device_attribute(DeviceAttribute::PciBusId, 2)),
        RuntimeErrorKind::InvalidDevice
    );
}

#[test]
fn memset_memcpy_host_fn_run_in_order() {
    let r = rt(1, GIB);
    let s = r.stream_create(StreamFlags::default()).unwrap();
    assert!(s.0 >= 0x1000 && s.0 % 0x10 == 0);
    let a = r.malloc(1 << 20).unwrap();
    let b = r.malloc(1 << 20).unwrap();
    let ok = Arc::new(AtomicBool::new(false));
    let (bu, ok2) = (b as usize, Arc::clone(&ok));
    // Block the stream first so every step is really queued behind the previous one.
    let tx = gate(&r, s);
    // SAFETY: `a` and `b` are live 1 MiB allocations until the end of the test.
    unsafe {
        r.memset_async(a, 0xab, 1 << 20, s).unwrap();
        r.memcpy_async(b, a, 1 << 20, s).unwrap();
    }
    r.launch_host_func(
        s,
        Box::new(move || {
            // SAFETY: `b` stays allocated until after the stream synchronizes.
            let data = unsafe { std::slice::from_raw_parts(bu as *const u8, 1 << 20) };
            ok2.store(data.iter().all(|&x| x == 0xab), Ordering::SeqCst);
        }),
    )
    .unwrap();
    assert!(!r.stream_query(s).unwrap());
    drop(tx);
    r.stream_synchronize(s).unwrap();
    assert!(r.stream_query(s).unwrap());
    assert!(ok.load(Ordering::SeqCst));
    r.free(a).unwrap();
    r.free(b).unwrap();
    r.stream_destroy(s).unwrap();
}

#[test]
fn pageable_source_is_read_before_memcpy_async_returns() {
    let r = rt(1, GIB);
    let s = r.stream_create(StreamFlags::default()).unwrap();
    let dst = r.malloc(256).unwrap();
    let tx = gate(&r, s);
    let mut x = 0x1111_1111u32;
    // SAFETY: `dst` is live; `x` is a live local (pageable: read before the call returns).
    unsafe {
        r.memcpy_async(dst, &x as *const u32 as *const c_void, 4, s)
            .unwrap()
    };
    x = 0x2222_2222;
    std::hint::black_box(&mut x);
    drop(tx);
    r.stream_synchronize(s).unwrap();
    // SAFETY: `dst` holds 4 initialized bytes after the synchronize.
    assert_eq!(unsafe { *(dst as *const u32) }, 0x1111_1111);
    r.free(dst).unwrap();
    r.stream_destroy(s).unwrap();
}

#[test]
fn pinned_source_is_read_in_stream_order() {
    let r = rt(1, GIB);
    let s = r.stream_create(StreamFlags::default()).unwrap();
    let dst = r.malloc(256).unwrap();
    let pinned = r.malloc_host(4).unwrap() as *mut u32;
    // SAFETY: `pinned` is a live 4-byte pinned allocation; `dst` is live.
    unsafe {
        *pinned = 1;
        let tx = gate(&r, s);
        r.memcpy_async(dst, pinned as *const c_void, 4, s).unwrap();
        *pinned = 2;
        drop(tx);
        r.stream_synchronize(s).unwrap();
        assert_eq!(*(dst as *const u32), 2);
    }
    r.free_host(pinned as *mut c_void).unwrap();
    r.free(dst).unwrap();
    r.stream_destroy(s).unwrap();
}

#[test]
fn copies_into_pageable_memory_are_synchronous() {
    let r = rt(1, GIB);
    let s = r.stream_create(StreamFlags::default()).unwrap();
    let src = r.malloc(1 << 20).unwrap();
    let (tx, rx) = mpsc::channel::<()>();
    let mut out = vec![0u8; 1 << 20];
    // SAFETY: `src` is live for 1 MiB.
    unsafe { r.memset_async(src, 0x5a, 1 << 20, s).unwrap() };
    // Let the gate go from another thread a little later: the copy must wait for it.
    let opener = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(20));
        let _ = tx.send(());
    });
    r.launch_host_func(
        s,
        Box::new(move || {
            let _ = rx.recv();
        }),
    )
    .unwrap();
    // SAFETY: both ranges are valid for 1 MiB; the call returns after the copy.
    unsafe {
        r.memcpy_async(out.as_mut_ptr() as *mut c_void, src, 1 << 20, s)
            .unwrap()
    };
    assert!(
        r.stream_query(s).unwrap(),
        "returned before the stream drained"
    );
    assert!(out.iter().all(|&b| b == 0x5a));
    opener.join().unwrap();
    // Host to host (pageable both ends) is synchronous too.
    let from = vec![7u8; 64];
    let mut to = vec![0u8; 64];
    // SAFETY: both are live 64-byte host buffers.
    unsafe {
        r.memcpy_async(
            to.as_mut_ptr() as *mut c_void,
            from.as_ptr() as *const c_void,
            64,
            s,
        )
        .unwrap()
    };
    assert_eq!(to, from);
    r.free(src).unwrap();
    r.stream_destroy(s).unwrap();
}

#[test]
fn copies_past_an_allocation_are_invalid() {
    let r = rt(1, GIB);
    let a = r.malloc(1024).unwrap();
    let b = r.malloc(4096).unwrap();
    // SAFETY: the calls are refused before any byte is touched.
    unsafe {
        assert_eq!(
            kind(r.memcpy_async(b, a, 2048, Stream::DEFAULT)),
            RuntimeErrorKind::InvalidValue
        );
        assert_eq!(
            kind(r.memset_async(a, 0, 1025, Stream::DEFAULT)),
            RuntimeErrorKind::InvalidValue
        );
        assert_eq!(
            kind(r.memset_async(a, 0, usize::MAX, Stream::DEFAULT)),
            RuntimeErrorKind::InvalidValue
        );
    }
    r.free(a).unwrap();
    r.free(b).unwrap();
}

#[test]
fn work_is_asynchronous() {
    let r = rt(1, GIB);
    for s in [Stream::DEFAULT, Stream::LEGACY, Stream::PER_THREAD] {
        let tx = gate(&r, s);
        assert!(!r.stream_query(s).unwrap(), "{s:?}");
        tx.send(()).unwrap();
        r.stream_synchronize(s).unwrap();
        assert!(r.stream_query(s).unwrap(), "{s:?}");
    }
}

#[test]
fn events_order_work_across_streams() {
    let r = rt(1, GIB);
    let a = r.stream_create(StreamFlags { non_blocking: true }).unwrap();
    let b = r.stream_create(StreamFlags { non_blocking: true }).unwrap();
    let ev = r.event_create().unwrap();
    assert!(ev.0 >= 0x1000 && ev.0 != a.0 && ev.0 != b.0);
    // Never recorded: complete.
    assert!(r.event_query(ev).unwrap());
    r.event_synchronize(ev).unwrap();
    r.stream_wait_event(b, ev).unwrap();
    r.stream_synchronize(b).unwrap();

    let flag = Arc::new(AtomicBool::new(false));
    let tx = gate(&r, a);
    let f = Arc::clone(&flag);
    r.launch_host_func(a, Box::new(move || f.store(true, Ordering::SeqCst)))
        .unwrap();
    r.event_record(ev, a).unwrap();
    assert!(!r.event_query(ev).unwrap());
    r.stream_wait_event(b, ev).unwrap();
    let seen = Arc::new(AtomicBool::new(false));
    let (f, s2) = (Arc::clone(&flag), Arc::clone(&seen));
    r.launch_host_func(
        b,
        Box::new(move || s2.store(f.load(Ordering::SeqCst), Ordering::SeqCst)),
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(20));
    assert!(!r.stream_query(b).unwrap(), "b must wait for the event");
    drop(tx);
    r.event_synchronize(ev).unwrap();
    assert!(r.event_query(ev).unwrap());
    r.stream_synchronize(b).unwrap();
    assert!(seen.load(Ordering::SeqCst));

    r.event_destroy(ev).unwrap();
    assert_eq!(kind(r.event_destroy(ev)), RuntimeErrorKind::InvalidHandle);
    assert_eq!(kind(r.event_query(ev)), RuntimeErrorKind::InvalidHandle);
    assert_eq!(kind(r.event_record(ev, a)), RuntimeErrorKind::InvalidHandle);
    assert_eq!(
        kind(r.event_destroy(Event(0x1234))),
        RuntimeErrorKind::InvalidHandle
    );
}

#[test]
fn records_with_nothing_before_them_complete_at_once() {
    let r = rt(1, GIB);
    let nb = r.stream_create(StreamFlags { non_blocking: true }).unwrap();
    let blocking = r.stream_create(StreamFlags::default()).unwrap();
    let ev = r.event_create().unwrap();
    let records = event_records();
    // An idle stream: complete when the call returns, and still counted.
    r.event_record(ev, nb).unwrap();
    assert!(r.event_query(ev).unwrap());
    assert!(event_records() > records);
    // Waiting for it queues nothing.
    r.stream_wait_event(blocking, ev).unwrap();
    assert!(r.stream_query(blocking).unwrap());

    // Pending work on the stream: the record waits for it, and so does a wait on it.
    let tx = gate(&r, nb);
    r.event_record(ev, nb).unwrap();
    assert!(!r.event_query(ev).unwrap());
    r.stream_wait_event(blocking, ev).unwrap();
    assert!(!r.stream_query(blocking).unwrap());
    drop(tx);
    r.stream_synchronize(blocking).unwrap();
    assert!(r.event_query(ev).unwrap());

    // A blocking stream orders after the legacy default stream's pending work, and the
    // legacy stream after the blocking streams'.
    let tx = gate(&r, Stream::DEFAULT);
    r.event_record(ev, blocking).unwrap();
    assert!(!r.event_query(ev).unwrap());
    drop(tx);
    r.event_synchronize(ev).unwrap();
    let tx = gate(&r, blocking);
    r.event_record(ev, Stream::DEFAULT).unwrap();
    assert!(!r.event_query(ev).unwrap());
    drop(tx);
    r.event_synchronize(ev).unwrap();
    // A non-blocking stream ignores the legacy stream.
    let tx = gate(&r, Stream::DEFAULT);
    r.event_record(ev, nb).unwrap();
    assert!(r.event_query(ev).unwrap());
    drop(tx);
    r.device_synchronize().unwrap();
    r.event_destroy(ev).unwrap();
    r.stream_destroy(nb).unwrap();
    r.stream_destroy(blocking).unwrap();
}

#[test]
fn legacy_default_stream_orders_with_blocking_streams() {
    let r = rt(1, GIB);
    let s = r.stream_create(StreamFlags::default()).unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));

    // Blocking stream work submitted first; default stream work must wait for it.
    let tx = gate(&r, s);
    let l = Arc::clone(&log);
    r.launch_host_func(s, Box::new(move || l.lock().push("blocking")))
        .unwrap();
    let l = Arc::clone(&log);
    r.launch_host_func(Stream::DEFAULT, Box::new(move || l.lock().push("default")))
        .unwrap();
    std::thread::sleep(Duration::from_millis(20));
    assert!(!r.stream_query(Stream::DEFAULT).unwrap());
    drop(tx);
    r.stream_synchronize(Stream::LEGACY).unwrap();
    assert_eq!(*log.lock(), ["blocking", "default"]);

    // Default stream work submitted first; later blocking stream work waits for it.
    log.lock().clear();
    let tx = gate(&r, Stream::DEFAULT);
    let l = Arc::clone(&log);
    r.launch_host_func(Stream::DEFAULT, Box::new(move || l.lock().push("default")))
        .unwrap();
    let l = Arc::clone(&log);
    r.launch_host_func(s, Box::new(move || l.lock().push("blocking")))
        .unwrap();
    // The per-thread stream is blocking too.
    let l = Arc::clone(&log);
    r.launch_host_func(
        Stream::PER_THREAD,
        Box::new(move || l.lock().push("per-thread")),
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(20));
    assert!(!r.stream_query(s).unwrap());
    assert!(!r.stream_query(Stream::PER_THREAD).unwrap());
    drop(tx);
    r.device_synchronize().unwrap();
    assert_eq!(log.lock()[0], "default");
    assert_eq!(log.lock().len(), 3);
    r.stream_destroy(s).unwrap();
}

#[test]
fn non_blocking_stream_skips_legacy_sync() {
    let r = rt(1, GIB);
    let nb = r.stream_create(StreamFlags { non_blocking: true }).unwrap();
    let tx = gate(&r, Stream::DEFAULT);
    let done = Arc::new(AtomicBool::new(false));
    let d = Arc::clone(&done);
    r.launch_host_func(nb, Box::new(move || d.store(true, Ordering::SeqCst)))
        .unwrap();
    r.stream_synchronize(nb).unwrap();
    assert!(done.load(Ordering::SeqCst));
    assert!(!r.stream_query(Stream::DEFAULT).unwrap());
    // And the default stream does not wait for non-blocking work.
    let tx2 = gate(&r, nb);
    tx.send(()).unwrap();
    r.stream_synchronize(Stream::DEFAULT).unwrap();
    assert!(!r.stream_query(nb).unwrap());
    drop(tx2);
    r.stream_synchronize(nb).unwrap();
    r.stream_destroy(nb).unwrap();
}

#[test]
fn destroyed_stream_is_invalid_handle_and_drains() {
    let r = rt(1, GIB);
    let s = r.stream_create(StreamFlags::default()).unwrap();
    let tx = gate(&r, s);
    let done = Arc::new(AtomicBool::new(false));
    let d = Arc::clone(&done);
    r.launch_host_func(s, Box::new(move || d.store(true, Ordering::SeqCst)))
        .unwrap();
    r.stream_destroy(s).unwrap();
    let e = r.stream_synchronize(s).unwrap_err();
    assert_eq!(e.kind, RuntimeErrorKind::InvalidHandle);
    assert_eq!(e.name, "hostErrorInvalidResourceHandle");
    assert_eq!(kind(r.stream_query(s)), RuntimeErrorKind::InvalidHandle);
    assert_eq!(kind(r.stream_destroy(s)), RuntimeErrorKind::InvalidHandle);
    assert_eq!(
        kind(r.launch_host_func(s, Box::new(|| ()))),
        RuntimeErrorKind::InvalidHandle
    );
    assert_eq!(
        kind(r.stream_query(Stream(0xdead0))),
        RuntimeErrorKind::InvalidHandle
    );
    assert_eq!(
        kind(r.stream_destroy(Stream::DEFAULT)),
        RuntimeErrorKind::InvalidHandle
    );
    drop(tx);
    // Queued work still completes after destroy.
    for _ in 0..500 {
        if done.load(Ordering::SeqCst) {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    assert!(done.load(Ordering::SeqCst));
}

#[test]
fn panicking_host_fn_is_a_sticky_error_and_worker_survives() {
    let r = rt(1, GIB);
    let s = r.stream_create(StreamFlags::default()).unwrap();
    r.launch_host_func(s, Box::new(|| panic!("boom"))).unwrap();
    let e = r.stream_synchronize(s).unwrap_err();
    assert_eq!(e.kind, RuntimeErrorKind::Other);
    assert_eq!(e.name, "hostErrorLaunchFailure");
    assert!(e.message.contains("boom"), "{}", e.message);
    let done = Arc::new(AtomicBool::new(false));
    let d = Arc::clone(&done);
    r.launch_host_func(s, Box::new(move || d.store(true, Ordering::SeqCst)))
        .unwrap();
    r.stream_synchronize(s).unwrap();
    assert!(done.load(Ordering::SeqCst));
    r.stream_destroy(s).unwrap();
}

#[test]
fn pool_reuses_freed_blocks_in_stream_order() {
    let r = rt(1, GIB);
    let pool = r.device_get_default_mem_pool(0).unwrap();
    assert_eq!(r.device_get_default_mem_pool(0).unwrap(), pool);
    r.mem_pool_set_attribute(pool, MemPoolAttr::ReleaseThreshold, u64::MAX)
        .unwrap();
    let s = r.stream_create(StreamFlags::default()).unwrap();
    let p = r.malloc_async(1 << 20, s).unwrap();
    assert_eq!(p as usize % 256, 0);
    assert_eq!(
        r.pointer_attributes(p).unwrap().memory_type,
        MemoryType::Device
    );
    assert_eq!(r.mem_get_info().unwrap().free, GIB - (1 << 20));
    // The free only takes effect when the stream reaches it.
    let tx = gate(&r, s);
    r.free_async(p, s).unwrap();
    assert_eq!(kind(r.free_async(p, s)), RuntimeErrorKind::InvalidValue);
    let q = r.malloc_from_pool_async(1 << 20, pool, s).unwrap();
    assert_ne!(p, q);
    drop(tx);
    r.stream_synchronize(s).unwrap();
    let again = r.malloc_from_pool_async(1 << 20, pool, s).unwrap();
    assert_eq!(again, p);
    assert_eq!(
        r.mem_pool_get_attribute(pool, MemPoolAttr::UsedMemCurrent),
        Ok(2 << 20)
    );
    r.free_async(q, s).unwrap();
    r.free_async(again, s).unwrap();
    r.stream_synchronize(s).unwrap();
    assert_eq!(
        r.mem_pool_get_attribute(pool, MemPoolAttr::UsedMemCurrent),
        Ok(0)
    );
    assert_eq!(
        r.mem_pool_get_attribute(pool, MemPoolAttr::ReservedMemCurrent),
        Ok(2 << 20)
    );
    // Not pool memory / zero bytes.
    let d = r.malloc(4096).unwrap();
    assert_eq!(kind(r.free_async(d, s)), RuntimeErrorKind::InvalidValue);
    assert_eq!(kind(r.free(q)), RuntimeErrorKind::InvalidValue);
    r.free(d).unwrap();
    assert_eq!(kind(r.malloc_async(0, s)), RuntimeErrorKind::InvalidValue);
    assert_eq!(
        kind(r.malloc_async(1 << 60, s)),
        RuntimeErrorKind::OutOfMemory
    );
    assert_eq!(
        kind(r.malloc_async(16, Stream(0x99990))),
        RuntimeErrorKind::InvalidHandle
    );
    r.free_async(std::ptr::null_mut(), s).unwrap();
    r.stream_destroy(s).unwrap();
}

#[test]
fn release_threshold_and_trim() {
    let r = rt(1, GIB);
    let pool = r.device_get_default_mem_pool(0).unwrap();
    let reserved = |r: &HostRuntime| {
        r.mem_pool_get_attribute(pool, MemPoolAttr::ReservedMemCurrent)
            .unwrap()
    };
    assert_eq!(
        r.mem_pool_get_attribute(pool, MemPoolAttr::ReleaseThreshold),
        Ok(0)
    );
    // Threshold 0: freed memory goes back to the device once the free is reached.
    let p = r.malloc_async(1 << 20, Stream::DEFAULT).unwrap();
    assert_eq!(reserved(&r), 1 << 20);
    r.free_async(p, Stream::DEFAULT).unwrap();
    r.stream_synchronize(Stream::DEFAULT).unwrap();
    assert_eq!(reserved(&r), 0);
    assert_eq!(r.mem_get_info().unwrap().free, GIB);
    // Large threshold: kept.
    r.mem_pool_set_attribute(pool, MemPoolAttr::ReleaseThreshold, 64 << 20)
        .unwrap();
    let ps: Vec<_> = (0..4)
        .map(|_| r.malloc_async(1 << 20, Stream::DEFAULT).unwrap())
        .collect();
    for p in ps {
        r.free_async(p, Stream::DEFAULT).unwrap();
    }
    r.device_synchronize().unwrap();
    assert_eq!(reserved(&r), 4 << 20);
    assert_eq!(r.mem_get_info().unwrap().free, GIB - (4 << 20));
    // trim_to keeps at least the requested amount.
    r.mem_pool_trim_to(pool, 2 << 20).unwrap();
    assert_eq!(reserved(&r), 2 << 20);
    // ... and never drops below what is in use.
    let p = r.malloc_async(1 << 20, Stream::DEFAULT).unwrap();
    r.mem_pool_trim_to(pool, 0).unwrap();
    assert_eq!(reserved(&r), 1 << 20);
    r.free_async(p, Stream::DEFAULT).unwrap();
    r.stream_synchronize(Stream::DEFAULT).unwrap();
    r.mem_pool_trim_to(pool, 0).unwrap();
    assert_eq!(reserved(&r), 0);
}

#[test]
fn pool_attributes_and_high_water_marks() {
    let r = rt(1, GIB);
    let pool = r.mem_pool_create(&MemPoolProps::default()).unwrap();
    for attr in [
        MemPoolAttr::ReuseFollowEventDependencies,
        MemPoolAttr::ReuseAllowOpportunistic,
        MemPoolAttr::ReuseAllowInternalDependencies,
    ] {
        assert_eq!(r.mem_pool_get_attribute(pool, attr), Ok(1));
        r.mem_pool_set_attribute(pool, attr, 0).unwrap();
        assert_eq!(r.mem_pool_get_attribute(pool, attr), Ok(0));
    }
    r.mem_pool_set_attribute(pool, MemPoolAttr::ReleaseThreshold, 1 << 30)
        .unwrap();
    assert_eq!(
        r.mem_pool_get_attribute(pool, MemPoolAttr::ReleaseThreshold),
        Ok(1 << 30)
    );
    for attr in [MemPoolAttr::ReservedMemCurrent, MemPoolAttr::UsedMemCurrent] {
        assert_eq!(
            kind(r.mem_pool_set_attribute(pool, attr, 0)),
            RuntimeErrorKind::InvalidValue
        );
    }
    let s = Stream::DEFAULT;
    let a = r.malloc_from_pool_async(3 << 20, pool, s).unwrap();
    let b = r.malloc_from_pool_async(1 << 20, pool, s).unwrap();
    r.free_async(a, s).unwrap();
    r.stream_synchronize(s).unwrap();
    let get = |attr| r.mem_pool_get_attribute(pool, attr).unwrap();
    assert_eq!(get(MemPoolAttr::UsedMemCurrent), 1 << 20);
    assert_eq!(get(MemPoolAttr::UsedMemHigh), 4 << 20);
    assert_eq!(get(MemPoolAttr::ReservedMemCurrent), 4 << 20);
    assert_eq!(get(MemPoolAttr::ReservedMemHigh), 4 << 20);
    assert_eq!(
        kind(r.mem_pool_set_attribute(pool, MemPoolAttr::UsedMemHigh, 5)),
        RuntimeErrorKind::InvalidValue
    );
    r.mem_pool_set_attribute(pool, MemPoolAttr::UsedMemHigh, 0)
        .unwrap();
    assert_eq!(get(MemPoolAttr::UsedMemHigh), 1 << 20);
    r.mem_pool_trim_to(pool, 0).unwrap();
    r.mem_pool_set_attribute(pool, MemPoolAttr::ReservedMemHigh, 0)
        .unwrap();
    assert_eq!(get(MemPoolAttr::ReservedMemHigh), 1 << 20);
    // Destroying with a block still allocated frees it too.
    r.mem_pool_destroy(pool).unwrap();
    assert_eq!(r.mem_get_info().unwrap().free, GIB);
    assert_eq!(kind(r.free_async(b, s)), RuntimeErrorKind::InvalidValue);
    assert_eq!(
        kind(r.mem_pool_destroy(pool)),
        RuntimeErrorKind::InvalidHandle
    );
    assert_eq!(
        kind(r.mem_pool_get_attribute(pool, MemPoolAttr::UsedMemCurrent)),
        RuntimeErrorKind::InvalidHandle
    );
    let default = r.device_get_default_mem_pool(0).unwrap();
    assert_eq!(
        kind(r.mem_pool_destroy(default)),
        RuntimeErrorKind::InvalidValue
    );
}

#[test]
fn pool_creation_rules() {
    let r = rt(2, GIB);
    let ipc = MemPoolProps {
        handle_type: MemHandleType::PosixFileDescriptor,
        ..Default::default()
    };
    let e = r.mem_pool_create(&ipc).unwrap_err();
    assert_eq!(e.kind, RuntimeErrorKind::NotSupported);
    assert_eq!(e.name, "hostErrorNotSupported");
    let bad = MemPoolProps {
        device: 2,
        ..Default::default()
    };
    assert_eq!(
        kind(r.mem_pool_create(&bad)),
        RuntimeErrorKind::InvalidDevice
    );
    assert_eq!(
        kind(r.device_get_default_mem_pool(5)),
        RuntimeErrorKind::InvalidDevice
    );
    let managed = r
        .mem_pool_create(&MemPoolProps {
            device: 1,
            location: MemPoolLocation::Managed,
            max_size: 2 << 20,
            ..Default::default()
        })
        .unwrap();
    let p = r
        .malloc_from_pool_async(1 << 20, managed, Stream::DEFAULT)
        .unwrap();
    let a = r.pointer_attributes(p).unwrap();
    assert_eq!((a.memory_type, a.device), (MemoryType::Managed, 1));
    // max_size limits the pool.
    assert_eq!(
        kind(r.malloc_from_pool_async(2 << 20, managed, Stream::DEFAULT)),
        RuntimeErrorKind::OutOfMemory
    );
    r.set_device(1).unwrap();
    assert_eq!(r.mem_get_info().unwrap().free, GIB - (1 << 20));
    r.mem_pool_destroy(managed).unwrap();
    assert_eq!(r.mem_get_info().unwrap().free, GIB);
}

#[test]
fn prefetch_and_advise_validate() {
    let r = rt(1, GIB);
    let m = r.malloc_managed(4096).unwrap();
    r.mem_prefetch_async(m, 4096, 0, Stream::DEFAULT).unwrap();
    r.mem_prefetch_async(m, 4096, -1, Stream::DEFAULT).unwrap();
    assert_eq!(
        kind(r.mem_prefetch_async(m, 4096, 1, Stream::DEFAULT)),
        RuntimeErrorKind::InvalidDevice
    );
    assert_eq!(
        kind(r.mem_prefetch_async(m, 8192, 0, Stream::DEFAULT)),
        RuntimeErrorKind::InvalidValue
    );
    let local = [0u8; 64];
    r.mem_prefetch_async(local.as_ptr() as *const c_void, 64, 0, Stream::DEFAULT)
        .unwrap();
    r.mem_advise(m, 4096, MemAdvice::SetReadMostly, 0).unwrap();
    assert_eq!(
        kind(r.mem_advise(m, 4096, MemAdvice::SetAccessedBy, 7)),
        RuntimeErrorKind::InvalidDevice
    );
    r.free(m).unwrap();
}

#[test]
fn concurrent_allocations_are_consistent() {
    let r = Arc::new(rt(1, GIB));
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let r = Arc::clone(&r);
            std::thread::spawn(move || {
                for i in 0..200 {
                    let p = r.malloc(4096 + i).unwrap();
                    let q = r.malloc_async(1024 + i, Stream::PER_THREAD).unwrap();
                    r.free_async(q, Stream::PER_THREAD).unwrap();
                    r.free(p).unwrap();
                }
                r.stream_synchronize(Stream::PER_THREAD).unwrap();
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(r.mem_get_info().unwrap().free, GIB);
}

#[test]
fn per_thread_stream_ends_with_its_thread() {
    let r = Arc::new(rt(1, GIB));
    let r2 = Arc::clone(&r);
    let done = Arc::new(AtomicBool::new(false));
    let d = Arc::clone(&done);
    std::thread::spawn(move || {
        let tx = gate(&r2, Stream::PER_THREAD);
        r2.launch_host_func(
            Stream::PER_THREAD,
            Box::new(move || d.store(true, Ordering::SeqCst)),
        )
        .unwrap();
        assert_eq!(r2.device_streams(0).len(), 1);
        tx.send(()).unwrap();
    })
    .join()
    .unwrap();
    // The thread's stream is unregistered at thread exit; its queued work still ran.
    assert!(r.device_streams(0).is_empty());
    for _ in 0..500 {
        if done.load(Ordering::SeqCst) {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    assert!(done.load(Ordering::SeqCst));
}

#[test]
fn runtime_is_send_and_sync() {
    fn check<T: Send + Sync + 'static>() {}
    check::<HostRuntime>();
}

#[test]
fn vmm_reserve_map_access_unmap_release() {
    const G: usize = VMM_GRANULARITY;
    let rt = rt(1, 16 * G);
    assert_eq!(rt.vmm_granularity(0).unwrap(), (G, G));
    let base = rt.vmm_address_reserve(64 * G, 0).unwrap();
    assert_eq!(base % G, 0);
    let h1 = rt.vmm_create(2 * G, 0).unwrap();
    let h2 = rt.vmm_create(G, 0).unwrap();
    assert_eq!(rt.mem_get_info().unwrap().free, 13 * G);
    rt.vmm_map(base, 2 * G, h1).unwrap();
    rt.vmm_map(base + 2 * G, G, h2).unwrap();
    let p = base as *mut c_void;
    // No access yet: a fill is refused rather than faulting the host.
    // SAFETY: the emulation checks the range before running the fill.
    let r = unsafe { rt.memset_async(p, 1, 3 * G, Stream::DEFAULT) };
    assert_eq!(kind(r), RuntimeErrorKind::InvalidValue);
    rt.vmm_set_access(base, 3 * G, &[0]).unwrap();
    // Both mappings are one range: a fill may cross their boundary.
    // SAFETY: the range is mapped and accessible.
    unsafe { rt.memset_async(p, 7, 3 * G, Stream::DEFAULT).unwrap() };
    rt.stream_synchronize(Stream::DEFAULT).unwrap();
    // SAFETY: mapped, accessible, and the fill completed.
    assert_eq!(unsafe { *(base as *const u8).add(3 * G - 1) }, 7);
    assert_eq!(
        rt.pointer_attributes(p).unwrap().memory_type,
        MemoryType::Device
    );
    // Unmapping must cover whole mappings.
    assert_eq!(kind(rt.vmm_unmap(base, G)), RuntimeErrorKind::InvalidValue);
    rt.vmm_release(h1).unwrap();
    // Released but still mapped: its capacity is still in use.
    assert_eq!(rt.mem_get_info().unwrap().free, 13 * G);
    rt.vmm_unmap(base, 2 * G).unwrap();
    assert_eq!(rt.mem_get_info().unwrap().free, 15 * G);
    assert_eq!(
        rt.pointer_attributes(p).unwrap().memory_type,
        MemoryType::Unregistered
    );
    // Remapped memory is fresh (its old pages went back to the kernel).
    let h3 = rt.vmm_create(2 * G, 0).unwrap();
    rt.vmm_map(base, 2 * G, h3).unwrap();
    rt.vmm_set_access(base, 2 * G, &[0]).unwrap();
    // SAFETY: mapped and accessible again.
    assert_eq!(unsafe { *(base as *const u8) }, 0);
    // The reservation cannot be freed while something is mapped in it.
    assert_eq!(
        kind(rt.vmm_address_free(base, 64 * G)),
        RuntimeErrorKind::InvalidValue
    );
    rt.vmm_unmap(base, 3 * G).unwrap();
    rt.vmm_release(h2).unwrap();
    rt.vmm_release(h3).unwrap();
    assert_eq!(rt.mem_get_info().unwrap().free, 16 * G);
    rt.vmm_address_free(base, 64 * G).unwrap();
}

#[test]
fn vmm_bad_input_changes_nothing() {
    const G: usize = VMM_GRANULARITY;
    let rt = rt(2, 8 * G);
    let base = rt.vmm_address_reserve(8 * G, 0).unwrap();
    // Sizes off the granularity, beyond the capacity, or a device that does not exist.
    assert_eq!(
        kind(rt.vmm_create(G / 2, 0)),
        RuntimeErrorKind::InvalidValue
    );
    assert_eq!(kind(rt.vmm_create(9 * G, 0)), RuntimeErrorKind::OutOfMemory);
    assert_eq!(kind(rt.vmm_create(G, 5)), RuntimeErrorKind::InvalidDevice);
    assert_eq!(
        kind(rt.vmm_address_reserve(G + 1, 0)),
        RuntimeErrorKind::InvalidValue
    );
    let h = rt.vmm_create(G, 1).unwrap();
    // Outside the reservation, misaligned, the wrong size, or over a mapping.
    assert_eq!(
        kind(rt.vmm_map(base + 8 * G, G, h)),
        RuntimeErrorKind::InvalidValue
    );
    assert_eq!(
        kind(rt.vmm_map(base + 4096, G, h)),
        RuntimeErrorKind::InvalidValue
    );
    assert_eq!(
        kind(rt.vmm_map(base, 2 * G, h)),
        RuntimeErrorKind::InvalidValue
    );
    rt.vmm_map(base, G, h).unwrap();
    assert_eq!(kind(rt.vmm_map(base, G, h)), RuntimeErrorKind::InvalidValue);
    assert_eq!(
        kind(rt.vmm_set_access(base, G, &[7])),
        RuntimeErrorKind::InvalidDevice
    );
    assert_eq!(
        kind(rt.vmm_release(PhysicalHandle(12345))),
        RuntimeErrorKind::InvalidValue
    );
    // The device-1 handle charged device 1, not the current device 0.
    rt.set_device(1).unwrap();
    assert_eq!(rt.mem_get_info().unwrap().free, 7 * G);
    rt.set_device(0).unwrap();
    rt.vmm_unmap(base, G).unwrap();
    rt.vmm_release(h).unwrap();
    assert_eq!(kind(rt.vmm_release(h)), RuntimeErrorKind::InvalidValue);
    rt.vmm_address_free(base, 8 * G).unwrap();
    assert_eq!(
        kind(rt.vmm_address_free(base, 8 * G)),
        RuntimeErrorKind::InvalidValue
    );
}

#[test]
fn vmm_can_be_switched_off() {
    let rt = HostRuntime::new(HostConfig {
        vmm: false,
        ..HostConfig::default()
    });
    assert_eq!(kind(rt.vmm_granularity(0)), RuntimeErrorKind::NotSupported);
    assert_eq!(
        kind(rt.vmm_address_reserve(VMM_GRANULARITY, 0)),
        RuntimeErrorKind::NotSupported
    );
}
