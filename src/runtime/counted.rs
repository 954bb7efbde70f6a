//! The counting layer: the one place where runtime calls are counted (see
//! [`crate::counters`]). [`super::runtime`] hands out the chosen backend wrapped in
//! [`Counted`], so every call through the [`Runtime`] trait, from any part of the library
//! and on every backend, bumps the counter of its kind (a thread-local increment) and is
//! passed on unchanged.
//!
//! A method added to [`Runtime`] needs one line here, in the kind it belongs to (most are
//! `RtOther`).

use std::ffi::c_void;

use super::{
    DeviceAttribute, DeviceId, Event, HostFn, MemAdvice, MemHandleType, MemInfo, MemPool,
    MemPoolAttr, MemPoolProps, PhysicalHandle, PointerAttributes, RtResult, Runtime, RuntimeKind,
    Stream, StreamFlags,
};
use crate::counters::{bump, Counter};

/// A backend whose calls are counted.
pub(super) struct Counted(pub(super) Box<dyn Runtime>);

/// Methods that count as `$kind` and pass their arguments on.
macro_rules! counted {
    ($($kind:ident fn $name:ident(&self $(, $arg:ident: $ty:ty)*) -> $ret:ty;)*) => {
        $(
            #[inline]
            fn $name(&self $(, $arg: $ty)*) -> $ret {
                bump(Counter::$kind);
                self.0.$name($($arg),*)
            }
        )*
    };
}

impl Runtime for Counted {
    fn kind(&self) -> RuntimeKind {
        self.0.kind()
    }

    fn description(&self) -> String {
        self.0.description()
    }

    /// Not counted: the C ABI takes the direct path only while counting is off.
    fn direct_calls(&self) -> super::DirectCalls {
        self.0.direct_calls()
    }

    counted! {
        RtOther fn device_count(&self) -> RtResult<i32>;
        RtOther fn get_device(&self) -> RtResult<DeviceId>;
        RtOther fn set_device(&self, device: DeviceId) -> RtResult<()>;
        RtSynchronize fn device_synchronize(&self) -> RtResult<()>;
        RtOther fn mem_get_info(&self) -> RtResult<MemInfo>;
        RtOther fn device_attribute(&self, attr: DeviceAttribute, device: DeviceId) -> RtResult<i32>;
        RtOther fn device_attribute_by_cuda_number(&self, attr: i32, device: DeviceId) -> RtResult<i32>;
        RtOther fn device_name(&self, device: DeviceId) -> RtResult<String>;
        RtOther fn runtime_version(&self) -> RtResult<i32>;
        RtOther fn driver_version(&self) -> RtResult<i32>;

        RtMalloc fn malloc(&self, bytes: usize) -> RtResult<*mut c_void>;
        RtMalloc fn free(&self, ptr: *mut c_void) -> RtResult<()>;
        RtMalloc fn malloc_managed(&self, bytes: usize) -> RtResult<*mut c_void>;
        RtMalloc fn malloc_host(&self, bytes: usize) -> RtResult<*mut c_void>;
        RtMalloc fn free_host(&self, ptr: *mut c_void) -> RtResult<()>;

        RtAsync fn malloc_async(&self, bytes: usize, stream: Stream) -> RtResult<*mut c_void>;
        RtAsync fn malloc_from_pool_async(&self, bytes: usize, pool: MemPool, stream: Stream) -> RtResult<*mut c_void>;
        RtAsync fn free_async(&self, ptr: *mut c_void, stream: Stream) -> RtResult<()>;
        RtOther fn mem_pool_create(&self, props: &MemPoolProps) -> RtResult<MemPool>;
        RtOther fn mem_pool_destroy(&self, pool: MemPool) -> RtResult<()>;
        RtOther fn device_get_default_mem_pool(&self, device: DeviceId) -> RtResult<MemPool>;
        RtOther fn mem_pool_set_attribute(&self, pool: MemPool, attr: MemPoolAttr, value: u64) -> RtResult<()>;
        RtOther fn mem_pool_get_attribute(&self, pool: MemPool, attr: MemPoolAttr) -> RtResult<u64>;
        RtOther fn mem_pool_trim_to(&self, pool: MemPool, min_bytes_to_keep: usize) -> RtResult<()>;

        RtOther fn stream_create(&self, flags: StreamFlags) -> RtResult<Stream>;
        RtOther fn stream_destroy(&self, stream: Stream) -> RtResult<()>;
        RtSynchronize fn stream_synchronize(&self, stream: Stream) -> RtResult<()>;
        RtOther fn stream_query(&self, stream: Stream) -> RtResult<bool>;
        RtOther fn event_create(&self) -> RtResult<Event>;
        RtOther fn event_destroy(&self, event: Event) -> RtResult<()>;
        RtEventRecord fn event_record(&self, event: Event, stream: Stream) -> RtResult<()>;
        RtEventWait fn event_synchronize(&self, event: Event) -> RtResult<()>;
        RtEventWait fn event_query(&self, event: Event) -> RtResult<bool>;
        RtStreamWaitEvent fn stream_wait_event(&self, stream: Stream, event: Event) -> RtResult<()>;
        RtOther fn launch_host_func(&self, stream: Stream, f: HostFn) -> RtResult<()>;

        RtOther fn mem_prefetch_async(&self, ptr: *const c_void, bytes: usize, device: DeviceId, stream: Stream) -> RtResult<()>;
        RtOther fn mem_advise(&self, ptr: *const c_void, bytes: usize, advice: MemAdvice, device: DeviceId) -> RtResult<()>;
        RtOther fn pointer_attributes(&self, ptr: *const c_void) -> RtResult<PointerAttributes>;

        RtOther fn mem_pool_export_to_shareable_handle(&self, pool: MemPool, handle_type: MemHandleType) -> RtResult<i64>;
        RtOther fn mem_pool_import_from_shareable_handle(&self, handle: i64, handle_type: MemHandleType) -> RtResult<MemPool>;
        RtOther fn mem_pool_export_pointer(&self, ptr: *mut c_void) -> RtResult<[u8; 64]>;
        RtOther fn mem_pool_import_pointer(&self, pool: MemPool, data: &[u8; 64]) -> RtResult<*mut c_void>;

        RtOther fn vmm_granularity(&self, device: DeviceId) -> RtResult<(usize, usize)>;
        RtOther fn vmm_address_reserve(&self, size: usize, alignment: usize) -> RtResult<usize>;
        RtOther fn vmm_address_free(&self, addr: usize, size: usize) -> RtResult<()>;
        RtMalloc fn vmm_create(&self, size: usize, device: DeviceId) -> RtResult<PhysicalHandle>;
        RtMalloc fn vmm_release(&self, handle: PhysicalHandle) -> RtResult<()>;
        RtOther fn vmm_map(&self, addr: usize, size: usize, handle: PhysicalHandle) -> RtResult<()>;
        RtOther fn vmm_unmap(&self, addr: usize, size: usize) -> RtResult<()>;
        RtOther fn vmm_set_access(&self, addr: usize, size: usize, devices: &[DeviceId]) -> RtResult<()>;
    }

    unsafe fn memcpy_async(
        &self,
        dst: *mut c_void,
        src: *const c_void,
        bytes: usize,
        stream: Stream,
    ) -> RtResult<()> {
        bump(Counter::RtOther);
        // SAFETY: the caller's guarantees are passed on unchanged.
        unsafe { self.0.memcpy_async(dst, src, bytes, stream) }
    }

    unsafe fn memset_async(
        &self,
        dst: *mut c_void,
        value: u8,
        bytes: usize,
        stream: Stream,
    ) -> RtResult<()> {
        bump(Counter::RtOther);
        // SAFETY: the caller's guarantees are passed on unchanged.
        unsafe { self.0.memset_async(dst, value, bytes, stream) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters::snapshot;

    #[test]
    fn calls_are_counted_by_kind() {
        let rt = Counted(Box::new(
            crate::runtime::host::HostRuntime::from_env().expect("host runtime"),
        ));
        // Other tests count in parallel: compare with lower bounds only.
        let _serial = crate::counters::TEST_SERIAL.lock();
        let before = snapshot();
        let p = rt.malloc(256).unwrap();
        rt.free(p).unwrap();
        let e = rt.event_create().unwrap();
        rt.event_record(e, Stream::DEFAULT).unwrap();
        rt.event_query(e).unwrap();
        rt.stream_wait_event(Stream::DEFAULT, e).unwrap();
        rt.stream_synchronize(Stream::DEFAULT).unwrap();
        rt.event_destroy(e).unwrap();
        let d = snapshot().since(&before);
        assert!(d.runtime_malloc >= 2, "{d:?}");
        assert!(d.runtime_event_record >= 1, "{d:?}");
        assert!(d.runtime_event_wait >= 1, "{d:?}");
        assert!(d.runtime_stream_wait_event >= 1, "{d:?}");
        assert!(d.runtime_synchronize >= 1, "{d:?}");
        assert!(d.runtime_other >= 2, "{d:?}");
    }
}
