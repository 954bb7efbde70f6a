//! Which local arena serves an operation: the calling thread's (default and per-thread
//! default streams) or its stream's, found through a one-entry thread-local cache and the
//! thread's list of entries; and the end of a stream's arena when the stream is destroyed.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Weak};

use super::local::{ArenaCell, ArenaKind, CACHE_BYTES, CACHE_SHARE};
use super::Inner;
use crate::error::Result;
use crate::mr::stream_lifetime::{self, StreamState};
use crate::runtime::{RuntimeErrorKind, Stream};

/// Key of a thread's own arena in the thread-local cache (no stream handle is `usize::MAX`).
const THREAD_KEY: usize = usize::MAX;

/// One thread's reference to a local arena of one resource.
pub(super) struct TlsEntry {
    resource: u64,
    key: usize,
    arena: Arc<ArenaCell>,
    inner: Weak<Inner>,
    /// The thread's own arena: retire it when the thread exits.
    owns: bool,
}

impl TlsEntry {
    /// The entry no longer serves: its resource was dropped or its stream destroyed.
    fn is_dead(&self) -> bool {
        self.inner.strong_count() == 0 || self.arena.is_orphaned()
    }
}

impl Drop for TlsEntry {
    fn drop(&mut self) {
        if self.owns {
            if let Some(inner) = self.inner.upgrade() {
                inner.retire(&self.arena);
            }
        }
    }
}

/// The thread's entries; clears the one-entry cache before they go.
pub(super) struct TlsList(pub(super) Vec<TlsEntry>);

impl Drop for TlsList {
    fn drop(&mut self) {
        let _ = FAST.try_with(|f| f.set(FAST_NONE));
    }
}

/// The last arena this thread used: (resource id, key, arena). The arena is kept alive by
/// an entry of `TLS` for as long as it is cached here: entries are only removed by this
/// thread, in [`Inner::arena_slow`] (which resets this cache first when it removes the
/// cached entry) and when `TLS` is destroyed (whose drop resets it first).
type FastEntry = (u64, usize, *const ArenaCell);
const FAST_NONE: FastEntry = (0, 0, std::ptr::null());

thread_local! {
    pub(super) static TLS: RefCell<TlsList> = const { RefCell::new(TlsList(Vec::new())) };
    static FAST: Cell<FastEntry> = const { Cell::new(FAST_NONE) };
}

/// A small process-unique number for the calling thread, never reused (starts at 1; 0
/// means "no thread").
pub(super) fn thread_number() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(1);
    thread_local! {
        static ME: Cell<usize> = const { Cell::new(0) };
    }
    ME.try_with(|me| {
        if me.get() == 0 {
            me.set(NEXT.fetch_add(1, Ordering::Relaxed));
        }
        me.get()
    })
    // Torn down: a number of its own (ordering stays conservative).
    .unwrap_or_else(|_| NEXT.fetch_add(1, Ordering::Relaxed))
}

/// A local arena found for an operation: borrowed from the thread's cache, or held (while
/// the thread is being torn down).
pub(super) enum ArenaRef {
    Cached(*const ArenaCell),
    Held(Arc<ArenaCell>),
}

impl ArenaRef {
    #[inline(always)]
    pub(super) fn get(&self) -> &ArenaCell {
        match self {
            // SAFETY: see `FastEntry`: the thread's `TLS` entry keeps the arena alive, and
            // nothing run while this reference is used (one allocate or deallocate) removes
            // entries from `TLS`.
            ArenaRef::Cached(p) => unsafe { &**p },
            ArenaRef::Held(a) => a,
        }
    }
}

impl Inner {
    pub(super) fn new_cell(&self, kind: ArenaKind) -> Arc<ArenaCell> {
        let (foreign, thread) = match kind {
            ArenaKind::Thread => (false, thread_number()),
            ArenaKind::Stream(s) => (!stream_lifetime::is_tracked(s), 0),
        };
        ArenaCell::new(
            self.next_arena_id.fetch_add(1, Ordering::Relaxed),
            kind,
            self.rt,
            foreign,
            thread,
            CACHE_BYTES.min(self.size / CACHE_SHARE),
        )
    }

    pub(super) fn stream_arena(&self, stream: Stream) -> Arc<ArenaCell> {
        if let Some(a) = self.stream_arenas.read().get(&stream.0) {
            return a.clone();
        }
        self.stream_arenas
            .write()
            .entry(stream.0)
            .or_insert_with(|| self.new_cell(ArenaKind::Stream(stream)))
            .clone()
    }

    /// The arena that serves `stream` for the calling thread.
    #[inline(always)]
    pub(super) fn arena_for(self: &Arc<Self>, stream: Stream) -> ArenaRef {
        let key = if stream.is_default() || stream.is_per_thread_default() {
            THREAD_KEY
        } else {
            stream.0
        };
        if let Ok((resource, k, p)) = FAST.try_with(Cell::get) {
            if resource == self.id && k == key {
                let cached = ArenaRef::Cached(p);
                if !cached.get().is_orphaned() {
                    return cached;
                }
            }
        }
        self.arena_slow(stream, key)
    }

    /// The thread-local cache missed: look through the thread's entries, making one if
    /// needed (pruning dead ones).
    #[inline(never)]
    pub(super) fn arena_slow(self: &Arc<Self>, stream: Stream, key: usize) -> ArenaRef {
        let thread = key == THREAD_KEY;
        let found = TLS.try_with(|t| {
            t.borrow()
                .0
                .iter()
                .find(|e| e.resource == self.id && e.key == key && !e.arena.is_orphaned())
                .map(|e| Arc::as_ptr(&e.arena))
        });
        let p = match found {
            Ok(Some(p)) => p,
            Ok(None) => {
                let (arena, owns) = if thread {
                    let a = self.new_cell(ArenaKind::Thread);
                    self.thread_arenas.lock().push(a.clone());
                    (a, true)
                } else {
                    (self.stream_arena(stream), false)
                };
                let p = Arc::as_ptr(&arena);
                let held = arena.clone();
                let entry = TlsEntry {
                    resource: self.id,
                    key,
                    arena,
                    inner: Arc::downgrade(self),
                    owns,
                };
                // Dead entries are pruned here; they are dropped outside the borrow since
                // dropping may retire an arena.
                let _ = FAST.try_with(|f| f.set(FAST_NONE));
                let dead = TLS.try_with(|t| {
                    let mut t = t.borrow_mut();
                    let mut dead = Vec::new();
                    let mut i = 0;
                    while i < t.0.len() {
                        if t.0[i].is_dead() {
                            dead.push(t.0.swap_remove(i));
                        } else {
                            i += 1;
                        }
                    }
                    t.0.push(entry);
                    dead
                });
                match dead {
                    Ok(dead) => drop(dead),
                    // Torn down meanwhile: the entry is gone, hold the arena instead.
                    Err(_) => return ArenaRef::Held(held),
                }
                p
            }
            // The thread is being torn down: a shared arena on the legacy stream serves it.
            Err(_) => {
                return ArenaRef::Held(self.stream_arena(if thread {
                    Stream::LEGACY
                } else {
                    stream
                }))
            }
        };
        let _ = FAST.try_with(|f| f.set((self.id, key, p)));
        ArenaRef::Cached(p)
    }
}

impl StreamState for Inner {
    fn forget_stream(&self, stream: Stream) -> Result<()> {
        let arena = self.stream_arenas.write().remove(&stream.0);
        let Some(arena) = arena else {
            // Large allocations freed on it may still be pending.
            return self.global.lock().forget(stream, self.rt, self.device);
        };
        let mut st = arena.state.lock();
        // It serves no more allocations: frees into it merge at once.
        st.cache_budget = 0;
        st.flush_cache();
        let mut result = self.release_empties(&arena, &mut st);
        // Records the stream's pending releases on it, still alive; from now on they are
        // matched to the stream no more: a new stream reusing the handle must wait on them.
        if let Err(e) = self.global.lock().forget(stream, self.rt, self.device) {
            result = Err(e);
        }
        if st.sb_count == 0 {
            // Thread-local caches hold the arena: orphaned, it serves nobody any more.
            arena.orphaned.store(true, Ordering::Release);
            return result;
        }
        // The rest is ordered by the legacy stream from now on: make it wait for `stream`.
        let ev = arena.scratch_event(&mut st, self.device)?;
        let ordered = if arena.is_foreign() {
            // Forgetting a foreign stream (a tracked one now reuses its handle) must not
            // touch it: wait for its last recorded free.
            arena.order_legacy_after_free_event(&st)
        } else {
            self.rt
                .event_record(ev, stream)
                .and_then(|()| self.rt.stream_wait_event(Stream::LEGACY, ev))
        };
        if let Err(e) = ordered {
            if e.kind != RuntimeErrorKind::InvalidHandle {
                return Err(self.rt_err(e));
            }
            stream_lifetime::count_fallback();
            self.rt.device_synchronize().map_err(|e| self.rt_err(e))?;
        }
        arena.orphaned.store(true, Ordering::Release);
        st.retired = true;
        self.thread_arenas.lock().push(arena.clone());
        result
    }
}
