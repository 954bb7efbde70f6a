//! Exercises every entry point of a real GPU runtime when one with a device is present
//! (the CUDA path on an NVIDIA machine, HIP on an AMD one); skips elsewhere.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rmm::runtime::{
    cuda, hip, DeviceAttribute, MemAdvice, MemPoolAttr, MemPoolLocation, MemPoolProps, MemoryType,
    Runtime, RuntimeErrorKind, StreamFlags,
};
use rmm::Stream;

fn gpu() -> Option<Box<dyn Runtime>> {
    for load in [cuda::load, hip::load] {
        if let Ok(rt) = load() {
            if rt.device_count().is_ok_and(|n| n > 0) {
                return Some(rt);
            }
        }
    }
    None
}

#[test]
fn every_entry_point_on_a_real_gpu() {
    let Some(rt) = gpu() else {
        eprintln!("skipping: no GPU runtime with a device");
        return;
    };
    eprintln!(
        "{}: {} device(s)",
        rt.description(),
        rt.device_count().unwrap()
    );
    rt.set_device(0).unwrap();
    assert_eq!(rt.get_device().unwrap(), 0);
    let info = rt.mem_get_info().unwrap();
    assert!(info.free > 0 && info.total >= info.free, "{info:?}");
    for attr in [
        DeviceAttribute::PageableMemoryAccess,
        DeviceAttribute::ConcurrentManagedAccess,
        DeviceAttribute::ManagedMemory,
        DeviceAttribute::MemoryPoolsSupported,
        DeviceAttribute::MemoryPoolSupportedHandleTypes,
        DeviceAttribute::MultiprocessorCount,
        DeviceAttribute::PciBusId,
    ] {
        eprintln!("{attr:?} = {:?}", rt.device_attribute(attr, 0));
    }
    assert!(
        rt.device_attribute(DeviceAttribute::MultiprocessorCount, 0)
            .unwrap()
            > 0
    );
    assert_eq!(
        rt.device_attribute(DeviceAttribute::MemoryPoolsSupported, 0)
            .unwrap(),
        1
    );

    // Out of memory is classified, and the sticky-free error does not leak into later calls.
    let oom = rt.malloc(1 << 55).unwrap_err();
    assert_eq!(oom.kind, RuntimeErrorKind::OutOfMemory, "{oom:?}");
    eprintln!("oom: {oom}");

    const N: usize = 1 << 20;
    let s = rt
        .stream_create(StreamFlags { non_blocking: true })
        .unwrap();
    let d = rt.malloc(N).unwrap();
    let h = rt.malloc_host(N).unwrap();
    // SAFETY: both buffers hold N bytes and live until the stream is synchronized.
    unsafe {
        rt.memset_async(d, 0xA5, N, s).unwrap();
        rt.memcpy_async(h, d, N, s).unwrap();
    }
    rt.stream_synchronize(s).unwrap();
    assert!(rt.stream_query(s).unwrap());
    // SAFETY: pinned host memory of N bytes, the copy has completed.
    let bytes = unsafe { std::slice::from_raw_parts(h as *const u8, N) };
    assert!(bytes.iter().all(|&b| b == 0xA5));

    let pd = rt.pointer_attributes(d).unwrap();
    assert_eq!((pd.memory_type, pd.device), (MemoryType::Device, 0));
    assert_eq!(
        rt.pointer_attributes(h).unwrap().memory_type,
        MemoryType::Host
    );
    let local = 0u64;
    let pl = rt
        .pointer_attributes((&local as *const u64).cast())
        .unwrap();
    assert_eq!(pl.memory_type, MemoryType::Unregistered);

    // Events and cross-stream waits.
    let e = rt.event_create().unwrap();
    assert!(rt.event_query(e).unwrap());
    rt.event_record(e, s).unwrap();
    rt.stream_wait_event(Stream::DEFAULT, e).unwrap();
    rt.event_synchronize(e).unwrap();
    assert!(rt.event_query(e).unwrap());

    // Host functions run, once.
    let ran = Arc::new(AtomicBool::new(false));
    let r2 = ran.clone();
    rt.launch_host_func(s, Box::new(move || r2.store(true, Ordering::SeqCst)))
        .unwrap();
    rt.stream_synchronize(s).unwrap();
    assert!(ran.load(Ordering::SeqCst));

    // Managed memory, prefetch and advice (the CUDA 13 location forms where present).
    let m = rt.malloc_managed(N).unwrap();
    assert_eq!(
        rt.pointer_attributes(m).unwrap().memory_type,
        MemoryType::Managed
    );
    eprintln!(
        "advise: {:?}",
        rt.mem_advise(m, N, MemAdvice::SetPreferredLocation, 0)
    );
    eprintln!(
        "advise host: {:?}",
        rt.mem_advise(m, N, MemAdvice::SetAccessedBy, -1)
    );
    eprintln!("prefetch: {:?}", rt.mem_prefetch_async(m, N, 0, s));
    eprintln!("prefetch host: {:?}", rt.mem_prefetch_async(m, N, -1, s));
    rt.stream_synchronize(s).unwrap();
    rt.free(m).unwrap();

    // Stream-ordered allocation on the default pool.
    let pool = rt.device_get_default_mem_pool(0).unwrap();
    rt.mem_pool_set_attribute(pool, MemPoolAttr::ReleaseThreshold, 1 << 30)
        .unwrap();
    assert_eq!(
        rt.mem_pool_get_attribute(pool, MemPoolAttr::ReleaseThreshold)
            .unwrap(),
        1 << 30
    );
    rt.mem_pool_set_attribute(pool, MemPoolAttr::ReuseAllowOpportunistic, 1)
        .unwrap();
    assert_eq!(
        rt.mem_pool_get_attribute(pool, MemPoolAttr::ReuseAllowOpportunistic)
            .unwrap(),
        1
    );
    let a = rt.malloc_async(N, s).unwrap();
    assert!(
        rt.mem_pool_get_attribute(pool, MemPoolAttr::UsedMemCurrent)
            .unwrap()
            >= N as u64
    );
    rt.free_async(a, s).unwrap();
    rt.stream_synchronize(s).unwrap();
    rt.mem_pool_trim_to(pool, 0).unwrap();

    // An explicit pool, with and without a maximum size.
    for max_size in [0, 64 << 20] {
        let props = MemPoolProps {
            device: 0,
            max_size,
            ..Default::default()
        };
        let p = match rt.mem_pool_create(&props) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("mem_pool_create(max_size {max_size}): {e:?}");
                assert!(max_size != 0 && e.kind == RuntimeErrorKind::NotSupported);
                continue;
            }
        };
        let a = rt.malloc_from_pool_async(N, p, s).unwrap();
        rt.free_async(a, s).unwrap();
        rt.stream_synchronize(s).unwrap();
        if max_size != 0 {
            let big = rt.malloc_from_pool_async(128 << 20, p, s);
            eprintln!("over max_size: {big:?}");
            assert!(big.is_err());
        }
        rt.mem_pool_destroy(p).unwrap();
    }
    let managed = MemPoolProps {
        device: 0,
        location: MemPoolLocation::Managed,
        ..Default::default()
    };
    match rt.mem_pool_create(&managed) {
        Ok(p) => {
            let a = rt.malloc_from_pool_async(N, p, s).unwrap();
            eprintln!("managed pool ptr: {:?}", rt.pointer_attributes(a));
            rt.free_async(a, s).unwrap();
            rt.stream_synchronize(s).unwrap();
            rt.mem_pool_destroy(p).unwrap();
        }
        Err(e) => eprintln!("managed pool: {e:?}"),
    }

    rt.event_destroy(e).unwrap();
    rt.free(d).unwrap();
    rt.free_host(h).unwrap();
    rt.stream_destroy(s).unwrap();
    rt.device_synchronize().unwrap();
}
