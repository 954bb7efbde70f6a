//! `rmm_callback_create*`: resources whose allocate/deallocate are C functions. The vtable
//! form is the bridge that lets a C++ `device_memory_resource` subclass live in Rust.

use std::cell::RefCell;
use std::ffi::{c_char, c_void, CStr};
use std::sync::Arc;

use super::status::non_null;
use super::{create, resource_of, rmm_resource_t, rmm_status_t, rmm_stream_t, write_out};
use crate::error::{Error, Result};
use crate::mr::CallbackMemoryResource;
use crate::runtime::Stream;

/// RMM's allocate callback: returns the memory, or NULL on failure.
#[allow(non_camel_case_types)]
pub type rmm_allocate_callback_t = Option<
    unsafe extern "C" fn(bytes: usize, stream: rmm_stream_t, arg: *mut c_void) -> *mut c_void,
>;

/// RMM's deallocate callback.
#[allow(non_camel_case_types)]
pub type rmm_deallocate_callback_t = Option<
    unsafe extern "C" fn(ptr: *mut c_void, bytes: usize, stream: rmm_stream_t, arg: *mut c_void),
>;

/// Functions of a bridged resource. Callbacks return an `rmm_status_t` value; on failure
/// they may call `rmm_callback_set_error_message` first so the message reaches the caller.
#[repr(C)]
#[derive(Clone, Copy)]
#[allow(non_camel_case_types)]
pub struct rmm_callback_vtable {
    /// Allocates `bytes` on `stream`, writing the pointer to `out`.
    pub allocate: Option<
        unsafe extern "C" fn(
            ctx: *mut c_void,
            bytes: usize,
            stream: rmm_stream_t,
            out: *mut *mut c_void,
        ) -> u32,
    >,
    /// Frees `ptr` of `bytes` on `stream`.
    pub deallocate: Option<
        unsafe extern "C" fn(
            ctx: *mut c_void,
            ptr: *mut c_void,
            bytes: usize,
            stream: rmm_stream_t,
        ) -> u32,
    >,
    /// Called once when the last reference to the resource is released; may be NULL.
    pub destroy: Option<unsafe extern "C" fn(ctx: *mut c_void)>,
}

thread_local! {
    static CALLBACK_MESSAGE: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Lets a failing callback attach a message to the status it returns (copied; NULL clears).
#[no_mangle]
pub unsafe extern "C" fn rmm_callback_set_error_message(message: *const c_char) {
    let msg = if message.is_null() {
        None
    } else {
        // SAFETY: the caller passes a NUL-terminated string (the module's contract).
        Some(
            unsafe { CStr::from_ptr(message) }
                .to_string_lossy()
                .into_owned(),
        )
    };
    CALLBACK_MESSAGE.with(|m| *m.borrow_mut() = msg);
}

fn take_callback_message(default: &str) -> String {
    CALLBACK_MESSAGE
        .with(|m| m.borrow_mut().take())
        .unwrap_or_else(|| default.to_string())
}

/// A context pointer owned by the resource: C gave it to us and gets it back in callbacks.
struct Context {
    ctx: usize,
    destroy: Option<unsafe extern "C" fn(*mut c_void)>,
}

impl Drop for Context {
    fn drop(&mut self) {
        if let Some(destroy) = self.destroy {
            // SAFETY: the creator registered `destroy` for exactly this context, to be called
            // once when the resource dies; this is that single call.
            unsafe { destroy(self.ctx as *mut c_void) }
        }
    }
}

fn callback_failure(status: u32, bytes: usize, what: &str) -> Error {
    let msg = take_callback_message(&format!("{what} callback returned status {status}"));
    match status {
        2 => Error::OutOfMemory {
            requested: bytes,
            resource: "callback_memory_resource",
            device: crate::device::get_current_device().unwrap_or(-1),
            detail: msg,
        },
        3 => Error::BadAlloc {
            requested: bytes,
            resource: "callback_memory_resource",
            detail: msg,
        },
        1 => Error::InvalidArgument(msg),
        _ => Error::Callback(msg),
    }
}

/// Creates RMM's `callback_memory_resource`: `allocate(bytes, stream, allocate_arg)` and
/// `deallocate(ptr, bytes, stream, deallocate_arg)`. An allocate that returns NULL for a
/// non-zero size fails with `RMM_STATUS_BAD_ALLOC`.
#[no_mangle]
pub unsafe extern "C" fn rmm_callback_create(
    allocate: rmm_allocate_callback_t,
    deallocate: rmm_deallocate_callback_t,
    allocate_arg: *mut c_void,
    deallocate_arg: *mut c_void,
    out: *mut rmm_resource_t,
) -> rmm_status_t {
    let (aa, da) = (allocate_arg as usize, deallocate_arg as usize);
    let make = move || -> Result<_> {
        let alloc = allocate.ok_or_else(|| Error::invalid("`allocate` callback is NULL"))?;
        let dealloc = deallocate.ok_or_else(|| Error::invalid("`deallocate` callback is NULL"))?;
        let resource = CallbackMemoryResource::new(
            Box::new(move |bytes, stream: Stream| {
                // SAFETY: the creator promised `alloc` is callable with its argument.
                let p = unsafe { alloc(bytes, stream.0 as rmm_stream_t, aa as *mut c_void) };
                if p.is_null() && bytes > 0 {
                    return Err(Error::BadAlloc {
                        requested: bytes,
                        resource: "callback_memory_resource",
                        detail: "the allocate callback returned NULL".into(),
                    });
                }
                Ok(p)
            }),
            Box::new(move |p, bytes, stream: Stream| {
                // SAFETY: as above, for the deallocate callback.
                unsafe { dealloc(p, bytes, stream.0 as rmm_stream_t, da as *mut c_void) };
                Ok(())
            }),
            0,
        );
        Ok(Arc::new(resource) as _)
    };
    // SAFETY: same contract as this function.
    unsafe { create("rmm_callback_create", out, make) }
}

/// Creates a resource whose operations are `vtable`'s functions called with `ctx` (the
/// vtable is copied). `destroy(ctx)` runs once when the last reference goes, even if the
/// creation itself fails after the vtable was checked.
#[no_mangle]
pub unsafe extern "C" fn rmm_callback_create_with_vtable(
    vtable: *const rmm_callback_vtable,
    ctx: *mut c_void,
    out: *mut rmm_resource_t,
) -> rmm_status_t {
    let make = move || -> Result<_> {
        non_null(vtable, "vtable")?;
        // SAFETY: checked non-null; the caller passes a readable vtable.
        let vt = unsafe { *vtable };
        let alloc = vt
            .allocate
            .ok_or_else(|| Error::invalid("`vtable->allocate` is NULL"))?;
        let dealloc = vt
            .deallocate
            .ok_or_else(|| Error::invalid("`vtable->deallocate` is NULL"))?;
        let owner = Arc::new(Context {
            ctx: ctx as usize,
            destroy: vt.destroy,
        });
        let (a, d) = (owner.clone(), owner);
        let context = a.ctx;
        let resource = CallbackMemoryResource::new(
            Box::new(move |bytes, stream: Stream| {
                let mut p: *mut c_void = std::ptr::null_mut();
                // SAFETY: the creator promised `alloc` accepts its context and an out-pointer.
                let status = unsafe {
                    alloc(
                        a.ctx as *mut c_void,
                        bytes,
                        stream.0 as rmm_stream_t,
                        &mut p,
                    )
                };
                match status {
                    0 if p.is_null() && bytes > 0 => Err(Error::BadAlloc {
                        requested: bytes,
                        resource: "callback_memory_resource",
                        detail: "the allocate callback succeeded but returned NULL".into(),
                    }),
                    0 => Ok(p),
                    s => Err(callback_failure(s, bytes, "allocate")),
                }
            }),
            Box::new(move |p, bytes, stream: Stream| {
                // SAFETY: as above, for the deallocate function.
                let status =
                    unsafe { dealloc(d.ctx as *mut c_void, p, bytes, stream.0 as rmm_stream_t) };
                match status {
                    0 => Ok(()),
                    s => Err(callback_failure(s, bytes, "deallocate")),
                }
            }),
            context,
        );
        Ok(Arc::new(resource) as _)
    };
    // SAFETY: same contract as this function.
    unsafe { create("rmm_callback_create_with_vtable", out, make) }
}

/// The `ctx` of a resource made by `rmm_callback_create_with_vtable`.
#[no_mangle]
pub unsafe extern "C" fn rmm_callback_get_context(
    resource: rmm_resource_t,
    ctx: *mut *mut c_void,
) -> rmm_status_t {
    super::status::guard("rmm_callback_get_context", || {
        non_null(ctx, "ctx")?;
        let r = resource_of(resource)?;
        let c = r
            .as_any()
            .downcast_ref::<CallbackMemoryResource>()
            .map(|c| c.context())
            .filter(|c| *c != 0)
            .ok_or_else(|| {
                Error::invalid(format!(
                    "resource handle {resource:p} is a {}, not a callback resource made by \
                     rmm_callback_create_with_vtable",
                    r.name()
                ))
            })?;
        // SAFETY: `ctx` checked non-null above.
        unsafe { write_out(ctx, c as *mut c_void) };
        Ok(())
    })
}
