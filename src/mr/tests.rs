//! Tests of the core resources and the registry on the process's runtime (the host
//! emulation unless `RMM_RUNTIME` says otherwise, so the same tests run on a GPU).

use std::sync::Arc;

use super::*;
use crate::runtime::{runtime, MemoryType, Stream};

pub(crate) fn init() -> &'static dyn Runtime {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("RMM_RUNTIME").is_none() {
            std::env::set_var("RMM_RUNTIME", "host");
        }
    });
    runtime().expect("a runtime for tests (RMM_RUNTIME)")
}

fn factories() -> Vec<(&'static str, Option<SharedResource>)> {
    init();
    vec![
        (
            "cuda",
            Some(Arc::new(CudaMemoryResource::new().unwrap()) as _),
        ),
        (
            "managed",
            Some(Arc::new(ManagedMemoryResource::new().unwrap()) as _),
        ),
        (
            "pinned_host",
            Some(Arc::new(PinnedHostMemoryResource::new().unwrap()) as _),
        ),
        (
            "system",
            SystemMemoryResource::new().ok().map(|r| Arc::new(r) as _),
        ),
        (
            "vmm_pool",
            VmmPoolMemoryResource::new(VmmPoolOptions {
                reserved_size: Some(1 << 30),
                ..VmmPoolOptions::default()
            })
            .ok()
            .map(|r| Arc::new(r) as _),
        ),
    ]
}

/// Writes a pattern through the runtime, reads it back, and checks it.
fn round_trip(ptr: *mut std::ffi::c_void, bytes: usize, seed: u8) {
    let rt = init();
    let src: Vec<u8> = (0..bytes)
        .map(|i| (i as u8).wrapping_mul(31) ^ seed)
        .collect();
    let mut back = vec![0u8; bytes];
    // SAFETY: `ptr` is a live allocation of `bytes`; both host buffers outlive the sync.
    unsafe {
        rt.memcpy_async(ptr, src.as_ptr().cast(), bytes, Stream::DEFAULT)
            .unwrap();
        rt.memcpy_async(back.as_mut_ptr().cast(), ptr, bytes, Stream::DEFAULT)
            .unwrap();
    }
    rt.stream_synchronize(Stream::DEFAULT).unwrap();
    assert_eq!(src, back);
}

#[test]
fn every_resource_allocates_aligned_usable_memory() {
    for (name, r) in factories() {
        let Some(r) = r else { continue };
        for (i, bytes) in [1usize, 7, 256, 1000, 4096, 1 << 20, (3 << 20) + 5]
            .into_iter()
            .enumerate()
        {
            let p = r.allocate(bytes, Stream::DEFAULT).unwrap();
            assert!(!p.is_null(), "{name}: {bytes} bytes");
            assert_eq!(
                p as usize % ALLOCATION_ALIGNMENT,
                0,
                "{name}: {bytes} bytes"
            );
            round_trip(p, bytes, i as u8);
            r.deallocate(p, bytes, Stream::DEFAULT).unwrap();
        }
    }
}

#[test]
fn zero_bytes_is_null_and_freeing_null_is_a_no_op() {
    for (name, r) in factories() {
        let Some(r) = r else { continue };
        let p = r.allocate(0, Stream::DEFAULT).unwrap();
        assert!(p.is_null(), "{name}");
        r.deallocate(std::ptr::null_mut(), 0, Stream::DEFAULT)
            .unwrap();
    }
}

#[test]
fn absurd_size_is_out_of_memory_naming_the_size() {
    for (name, r) in factories() {
        let Some(r) = r else { continue };
        let err = r.allocate(1 << 60, Stream::DEFAULT).unwrap_err();
        let msg = err.to_string();
        assert!(
            matches!(err, Error::OutOfMemory { requested, .. } if requested == 1 << 60),
            "{name}: {msg}"
        );
        assert!(msg.contains("1152921504606846976"), "{name}: {msg}");
    }
}

#[test]
fn device_memory_oom_names_device_and_runtime_error() {
    init();
    let r = CudaMemoryResource::new().unwrap();
    let msg = r
        .allocate(1 << 60, Stream::DEFAULT)
        .unwrap_err()
        .to_string();
    assert!(msg.contains("cuda_memory_resource"), "{msg}");
    assert!(msg.contains("on device 0"), "{msg}");
    assert!(msg.contains("Error"), "runtime error name missing: {msg}");
}

#[test]
fn double_and_foreign_frees_are_reported_and_change_nothing() {
    for (name, r) in factories() {
        let Some(r) = r else { continue };
        let p = r.allocate(4096, Stream::DEFAULT).unwrap();
        let q = r.allocate(4096, Stream::DEFAULT).unwrap();
        r.deallocate(p, 4096, Stream::DEFAULT).unwrap();
        let err = r.deallocate(p, 4096, Stream::DEFAULT).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{name}: {err}");
        let mut local = 0u64;
        let foreign = (&mut local as *mut u64).cast();
        assert!(r.deallocate(foreign, 8, Stream::DEFAULT).is_err(), "{name}");
        round_trip(q, 4096, 9);
        r.deallocate(q, 4096, Stream::DEFAULT).unwrap();
    }
}

#[test]
fn allocations_are_visible_in_device_memory_info() {
    let rt = init();
    let r = CudaMemoryResource::new().unwrap();
    let bytes = 256 << 20;
    // Tests running beside this one on a GPU allocate and free too, so one reading can be
    // off by their frees: the allocation must show in at least one of a few attempts.
    let mut seen = Vec::new();
    for _ in 0..5 {
        let before = crate::device::available_device_memory().unwrap();
        let p = r.allocate(bytes, Stream::DEFAULT).unwrap();
        let during = crate::device::available_device_memory().unwrap();
        let attrs = rt.pointer_attributes(p).unwrap();
        assert_eq!(attrs.memory_type, MemoryType::Device);
        r.deallocate(p, bytes, Stream::DEFAULT).unwrap();
        if during.free + bytes <= before.free + (64 << 20) {
            return;
        }
        seen.push((before, during));
    }
    panic!("a {bytes}-byte allocation never showed in the free memory: {seen:?}");
}

#[test]
fn resources_compare_by_class_and_identity() {
    init();
    let a = CudaMemoryResource::new().unwrap();
    let b = CudaMemoryResource::new().unwrap();
    let m = ManagedMemoryResource::new().unwrap();
    assert!(a.is_equal(&b));
    assert!(!a.is_equal(&m));
    let cb = |ctx| {
        CallbackMemoryResource::new(
            Box::new(|_, _| Err(Error::invalid("unused"))),
            Box::new(|_, _, _| Ok(())),
            ctx,
        )
    };
    let (c1, c2, c3) = (cb(0), cb(0), cb(7));
    assert!(c1.is_equal(&c1));
    assert!(
        !c1.is_equal(&c2),
        "distinct callback resources without context"
    );
    assert!(
        c3.is_equal(&cb(7)),
        "same context means the same bridged object"
    );
    assert!(!c1.is_equal(&a));
}

#[test]
fn callback_resource_passes_zero_bytes_and_null_frees_through() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    init();
    let upstream: SharedResource = Arc::new(CudaMemoryResource::new().unwrap());
    let calls = Arc::new(AtomicUsize::new(0));
    let (u1, u2, c1) = (upstream.clone(), upstream.clone(), calls.clone());
    let r = CallbackMemoryResource::new(
        Box::new(move |b, s| {
            c1.fetch_add(1, Ordering::SeqCst);
            u1.allocate(b, s)
        }),
        Box::new(move |p, b, s| u2.deallocate(p, b, s)),
        42,
    );
    assert_eq!(r.context(), 42);
    // As RMM's callback resource does, zero bytes reach the callback (here: the upstream,
    // which gives null for them) and so does the free of what it gave.
    assert!(r.allocate(0, Stream::DEFAULT).unwrap().is_null());
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "zero bytes reach the callback"
    );
    r.deallocate(std::ptr::null_mut(), 0, Stream::DEFAULT)
        .unwrap();
    let p = r.allocate(1000, Stream::DEFAULT).unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    round_trip(p, 1000, 3);
    r.deallocate(p, 1000, Stream::DEFAULT).unwrap();
}

#[test]
fn registry_starts_with_cuda_resource_and_set_returns_previous() {
    init();
    let _g = REGISTRY_LOCK.lock();
    let initial = get_current_device_resource().unwrap();
    assert_eq!(initial.name(), "cuda_memory_resource");
    let mine: SharedResource = Arc::new(ManagedMemoryResource::new().unwrap());
    let prev = set_current_device_resource(Some(mine.clone())).unwrap();
    assert!(Arc::ptr_eq(&prev, &initial));
    assert!(Arc::ptr_eq(&get_current_device_resource().unwrap(), &mine));
    let prev = set_current_device_resource(None).unwrap();
    assert!(Arc::ptr_eq(&prev, &mine));
    assert!(Arc::ptr_eq(
        &get_current_device_resource().unwrap(),
        &initial
    ));
    assert!(Arc::ptr_eq(
        &reset_current_device_resource().unwrap(),
        &initial
    ));
}

#[test]
fn registry_tags_travel_with_entries() {
    init();
    let _g = REGISTRY_LOCK.lock();
    let tag = initial_resource_tag(0, 0, 0x1000).unwrap();
    assert_eq!(initial_resource_tag(0, 0, 0x2000).unwrap(), tag, "set once");
    let mine: SharedResource = Arc::new(ManagedMemoryResource::new().unwrap());
    let (_, prev_tag) = set_per_device_resource_tagged(0, Some(mine), 0, 0xbeef, None).unwrap();
    assert_eq!(prev_tag, tag);
    assert_eq!(get_per_device_resource_tagged(0, 0).unwrap().1, 0xbeef);
    let (_, prev_tag) = set_per_device_resource_tagged(0, None, 0, 0, None).unwrap();
    assert_eq!(prev_tag, 0xbeef);
    assert_eq!(get_per_device_resource_tagged(0, 0).unwrap().1, tag);
}

#[test]
fn registry_tags_untagged_current_entries_apart_from_the_initial_resource() {
    init();
    let _g = REGISTRY_LOCK.lock();
    let initial = get_per_device_resource(0).unwrap();
    let initial_tag = initial_resource_tag(0, 0, 0x1000).unwrap();
    assert!(is_initial_resource(0, &initial).unwrap());
    assert!(
        current_entry_tag(0, &initial, 0, 0x3000, None).is_err(),
        "the initial resource keeps its dedicated tag"
    );
    assert_eq!(initial_resource_tag(0, 0, 0x4000).unwrap(), initial_tag);

    // An entry set without a tag (as from C or Python) is not the initial resource.
    let mine: SharedResource = Arc::new(ManagedMemoryResource::new().unwrap());
    set_per_device_resource(0, Some(mine.clone())).unwrap();
    assert!(!is_initial_resource(0, &mine).unwrap());
    assert_eq!(get_per_device_resource_tagged(0, 0).unwrap().1, 0);
    assert_eq!(
        current_entry_tag(0, &mine, 0, 0xa000, None).unwrap(),
        0xa000
    );
    assert_eq!(
        current_entry_tag(0, &mine, 0, 0xb000, None).unwrap(),
        0xa000,
        "set once"
    );
    assert_eq!(get_per_device_resource_tagged(0, 0).unwrap().1, 0xa000);
    assert_eq!(
        initial_resource_tag(0, 0, 0x5000).unwrap(),
        initial_tag,
        "the initial tag is untouched"
    );

    // A resource that is not the current entry is never tagged.
    let other: SharedResource = Arc::new(ManagedMemoryResource::new().unwrap());
    assert_eq!(current_entry_tag(0, &other, 0, 0xc000, None).unwrap(), 0);
    assert_eq!(get_per_device_resource_tagged(0, 0).unwrap().1, 0xa000);

    // Setting the same resource again makes a new, untagged entry; once replaced, the old
    // entry can't be tagged.
    set_per_device_resource(0, Some(mine.clone())).unwrap();
    assert_eq!(get_per_device_resource_tagged(0, 0).unwrap().1, 0);
    let (prev, prev_tag) = set_per_device_resource_tagged(0, None, 0, 0, None).unwrap();
    assert!(Arc::ptr_eq(&prev, &mine));
    assert_eq!(prev_tag, 0);
    assert_eq!(current_entry_tag(0, &mine, 0, 0xd000, None).unwrap(), 0);
    assert_eq!(get_per_device_resource_tagged(0, 0).unwrap().1, initial_tag);
}

#[test]
fn registry_keeps_one_tag_per_key_and_releases_the_other_keys_on_replacement() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    init();
    let _g = REGISTRY_LOCK.lock();
    static RELEASED: AtomicUsize = AtomicUsize::new(0);
    let release = || -> Option<TagRelease> {
        Some(Box::new(|v| {
            RELEASED.fetch_add(v, Ordering::SeqCst);
        }))
    };
    let first: SharedResource = Arc::new(ManagedMemoryResource::new().unwrap());
    set_per_device_resource_tagged(0, Some(first.clone()), 2, 0x10, release()).unwrap();
    assert_eq!(get_per_device_resource_tagged(0, 2).unwrap().1, 0x10);
    assert_eq!(
        get_per_device_resource_tagged(0, 0).unwrap().1,
        0,
        "no key-0 tag yet"
    );
    assert_eq!(current_entry_tag(0, &first, 0, 0x20, None).unwrap(), 0x20);
    assert_eq!(
        current_entry_tag(0, &first, 1, 0x40, release()).unwrap(),
        0x40
    );
    assert!(
        get_per_device_resource_tagged(0, TAG_KEYS).is_err(),
        "keys are bounded"
    );

    // Key 0 replaces the entry: it gets its own tag back; keys 1 and 2 are released.
    let second: SharedResource = Arc::new(ManagedMemoryResource::new().unwrap());
    let (prev, prev_tag) = set_per_device_resource_tagged(0, Some(second), 0, 0x80, None).unwrap();
    assert!(Arc::ptr_eq(&prev, &first));
    assert_eq!(prev_tag, 0x20);
    assert_eq!(RELEASED.load(Ordering::SeqCst), 0x10 + 0x40);

    // The replacing key's own tag is never released by the registry.
    set_per_device_resource_tagged(0, None, 0, 0, None).unwrap();
    assert_eq!(RELEASED.load(Ordering::SeqCst), 0x10 + 0x40);
}

#[test]
fn registry_rejects_devices_out_of_range() {
    init();
    let n = crate::device::get_device_count().unwrap();
    for bad in [-1, n, n + 5, i32::MAX] {
        let err = get_per_device_resource(bad).unwrap_err();
        assert!(err.to_string().contains(&bad.to_string()), "{err}");
        assert!(set_per_device_resource(bad, None).is_err());
    }
}

#[test]
fn percent_of_free_memory_is_aligned_and_bounded() {
    init();
    let free = crate::device::available_device_memory().unwrap().free;
    let half = crate::device::percent_of_free_device_memory(50).unwrap();
    assert_eq!(half % 256, 0);
    assert!(half <= free / 2 && half + 256 > free / 2 - (64 << 20));
    assert!(crate::device::percent_of_free_device_memory(101).is_err());
    assert!(crate::device::percent_of_free_device_memory(-1).is_err());
}

#[test]
fn concurrent_allocation_from_many_threads() {
    init();
    let r: SharedResource = get_per_device_resource(0).unwrap();
    std::thread::scope(|s| {
        for t in 0..8 {
            let r = r.clone();
            s.spawn(move || {
                let mut live = Vec::new();
                for i in 0..200usize {
                    let bytes = 256 * (1 + (i * 7 + t) % 64);
                    live.push((r.allocate(bytes, Stream::DEFAULT).unwrap(), bytes));
                    if i % 3 == 0 {
                        let (p, b) = live.swap_remove((i * 13) % live.len());
                        r.deallocate(p, b, Stream::DEFAULT).unwrap();
                    }
                }
                for (p, b) in live {
                    r.deallocate(p, b, Stream::DEFAULT).unwrap();
                }
            });
        }
    });
}

/// The registry is process-wide: tests that change it run one at a time.
static REGISTRY_LOCK: parking_lot::Mutex<()> = parking_lot::Mutex::new(());
