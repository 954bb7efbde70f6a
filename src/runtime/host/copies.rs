//! Where a copy's ends lie, as CUDA's copy rules see them, and which ranges a copy, fill,
//! prefetch or advice may name.

use std::ffi::c_void;

use super::memory::AllocKind;
use super::{rt_err, HostRuntime};
use crate::runtime::{RtResult, RuntimeErrorKind};

/// Where a copy's end lies, as CUDA's copy rules see it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Side {
    /// Device, managed or mempool memory of this runtime: read and written in stream order.
    Device,
    /// Host memory from `malloc_host`: read and written in stream order (DMA).
    Pinned,
    /// Any other host memory (stack, heap, mappings the runtime does not know).
    Pageable,
}

impl HostRuntime {
    pub(super) fn side(&self, ptr: usize) -> Side {
        match self.inner.memory.find(ptr).map(|(_, a)| a.kind) {
            None => Side::Pageable,
            Some(AllocKind::Pinned) => Side::Pinned,
            Some(_) => Side::Device,
        }
    }

    /// Accepts any host range (system memory is accessible), but a range that starts in a
    /// known allocation must end inside it.
    pub(super) fn check_range(
        &self,
        call: &'static str,
        ptr: *const c_void,
        bytes: usize,
    ) -> RtResult<()> {
        let invalid = || rt_err(call, RuntimeErrorKind::InvalidValue);
        if ptr.is_null() {
            return if bytes == 0 { Ok(()) } else { Err(invalid()) };
        }
        match self.inner.memory.find(ptr as usize) {
            // Virtual memory: contiguous mappings are one range, and a mapping without
            // access would fault (on a GPU, and here the host).
            Some((_, a)) if matches!(a.kind, AllocKind::Mapped { .. }) => {
                if self.inner.memory.vmm_accessible(ptr as usize, bytes) {
                    Ok(())
                } else {
                    Err(invalid())
                }
            }
            Some((start, a)) if bytes > a.size - (ptr as usize - start) => Err(invalid()),
            _ => Ok(()),
        }
    }
}
