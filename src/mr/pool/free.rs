//! The slow free path: a free that the calling thread's front does not hold goes to the
//! structure that owns the block, or to the front that holds it; and the thread's front is
//! claimed, or switched to the stream the thread frees on.

use std::ffi::c_void;
use std::sync::Arc;

use super::block::Owned;
use super::{front, round_up, PoolMemoryResource, NAME};
use crate::error::{Error, Result};
use crate::mr::stream_lifetime;
use crate::mr::stream_ordered::thread_number;
use crate::mr::thread_slot::{on_thread_exit, thread_slot};
use crate::runtime::Stream;

impl PoolMemoryResource {
    /// The slow free path: the pool's structures, and the fronts holding blocks the
    /// caller's front does not.
    #[cold]
    #[inline(never)]
    pub(super) fn deallocate_slow(
        &self,
        ptr: *mut c_void,
        bytes: usize,
        stream: Stream,
    ) -> Result<()> {
        // The global table's probe comes after the front's second lock and the pool's lock,
        // and misses the caches when the table is large: start it now.
        self.core.live_hint.prefetch(ptr as usize);
        let me = thread_slot();
        let (adopt, settled) = self.front_for(me, bytes, stream);
        let (done, owner) = self.free_structures(ptr, bytes, stream, adopt)?;
        let r = self.finish_free(ptr, bytes, stream, me, adopt, done, owner);
        if r.is_ok() && !settled {
            // Only a good free may claim or switch the thread's front: bad input changes
            // nothing.
            self.update_front(me, bytes, stream);
        }
        r
    }

    /// The rest of [`Self::deallocate_slow`] once a structure has answered.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn finish_free(
        &self,
        ptr: *mut c_void,
        bytes: usize,
        stream: Stream,
        me: usize,
        adopt: Option<u16>,
        done: Owned,
        owner: u32,
    ) -> Result<()> {
        match done {
            Owned::Freed => Ok(()),
            Owned::No => Err(Error::invalid(format!(
                "{NAME}: cannot free {ptr:p} ({bytes} bytes): it was not allocated by this \
                 pool or was already freed"
            ))),
            Owned::Adopted { block, size } => {
                let f = adopt.expect("adopted for this front") as usize;
                let kept = {
                    let mut g = self.core.fronts.of(f).lock_as(me);
                    // The front may have filled up (or been emptied) since it was asked.
                    g.owner == me
                        && g.adopt(
                            ptr as usize,
                            size,
                            block,
                            owner,
                            front::norm(stream),
                            self.core.fronts.limits(),
                        )
                };
                if !kept {
                    self.core.give_back(&[front::Returned {
                        addr: ptr as usize,
                        block,
                        owner,
                        stream,
                        thread: thread_number(),
                    }]);
                }
                Ok(())
            }
            Owned::Cached(f) => {
                // Held by front `f` (handed out by it, or freed already).
                let freed = {
                    let mut g = self.core.fronts.of(f as usize).lock_as(me);
                    let keep = g.owner == me;
                    self.core.front_free(&mut g, ptr, bytes, stream, keep)?
                };
                match freed {
                    front::Freed::Kept => Ok(()),
                    front::Freed::Return(r) => {
                        self.core.give_back(&[r]);
                        Ok(())
                    }
                    front::Freed::NotHere => Err(Error::invalid(format!(
                        "{NAME}: cannot free {ptr:p} ({bytes} bytes): it was already freed"
                    ))),
                }
            }
        }
    }

    /// The front of thread slot `me` when it should keep a block of `bytes` freed on
    /// `stream`, and whether that front is already `me`'s and caching for `stream` (then
    /// [`Self::update_front`] would change nothing, and a free need not lock the front again
    /// to make it). One lock of the front.
    pub(super) fn front_for(&self, me: usize, bytes: usize, stream: Stream) -> (Option<u16>, bool) {
        // Where `update_front` returns early, it does nothing either.
        if me == crate::mr::thread_slot::NO_SLOT {
            return (None, true);
        }
        let Some(size) = round_up(bytes).filter(|&s| s <= front::FRONT_MAX) else {
            return (None, true);
        };
        let norm = front::norm(stream);
        let f = self.core.fronts.of(me).lock_as(me);
        let keep = f.owner == me && f.would_keep(size, norm, self.core.fronts.limits());
        (
            keep.then_some((me & (self.core.fronts.len() - 1)) as u16),
            f.owner == me && f.stream == Some(norm),
        )
    }

    /// After a good free of `bytes` on `stream`: claims thread slot `me`'s front if no
    /// thread has it, and switches the front to `stream` after enough frees on it (tracked
    /// streams only).
    pub(super) fn update_front(&self, me: usize, bytes: usize, stream: Stream) {
        let stream = front::norm(stream);
        if me == crate::mr::thread_slot::NO_SLOT
            || !round_up(bytes).is_some_and(|size| size <= front::FRONT_MAX)
        {
            return;
        }
        let (mut out, mut batches) = (Vec::new(), 0);
        {
            let mut f = self.core.fronts.of(me).lock_as(me);
            if f.owner != me && f.owner != front::UNCLAIMED {
                return;
            }
            if f.stream != Some(stream) {
                f.misses = f.misses.saturating_add(1);
            }
            if front::should_retarget(&f, stream) && f.declined != Some(stream) {
                if !stream_lifetime::is_tracked(stream) {
                    f.declined = Some(stream);
                } else {
                    if f.owner == front::UNCLAIMED {
                        f.owner = me;
                        on_thread_exit(Arc::downgrade(&self.core) as _);
                    }
                    batches = self.core.drain(&mut f, &mut out);
                    f.stream = Some(stream);
                    f.stream_thread = thread_number();
                    f.misses = 0;
                }
            }
        }
        self.core.give_back_drained(&out, batches);
    }
}
