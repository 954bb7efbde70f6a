//! Per-thread front caches of a pool, by size class (as tcmalloc's and mimalloc's thread
//! caches): a block a thread frees is kept in its front instead of going back through the
//! pool's lock, TLSF lists and address-neighbour merges, and that thread's next request of
//! a size the block fits takes it back in a few instructions.
//!
//! Rules that keep it exact and stream-ordered:
//! - A front belongs to one thread at a time (its [`thread_slot`](crate::mr::thread_slot)
//!   owns it; another thread mapping to it uses the pool directly) and caches for one
//!   *tracked* stream: only blocks freed on that stream enter it, and only requests on that
//!   stream take them, so a block never reaches another stream's allocation without going
//!   back to the pool, whose stream rules then apply (an event).
//! - A cached block stays allocated (state `Cached`) in the structure that owns it (the
//!   global pool or a shard); the front keeps its own table of the blocks it holds, live
//!   (handed out again) or free (in a bin), so foreign, double and wrong-size frees are still
//!   found in O(1) and change nothing.
//! - A front and a pool structure are never locked together: blocks leave a front in a list
//!   that the caller then frees into their structures.
//! - Fronts are emptied into the pool before it grows or fails a request, on `release()`,
//!   on introspection, when their stream is destroyed, when they switch streams and when
//!   their thread ends. Statistics count cached blocks as free.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, Ordering};

use super::{mapping_insert, mapping_search, round_up, NAME, UNIT_SHIFT};
use crate::error::{Error, Result};
use crate::mr::ptr_map::PtrMap;
use crate::runtime::Stream;

/// Blocks up to this size are cached.
pub(super) const FRONT_MAX: usize = 1 << 20;
/// Size classes of blocks up to [`FRONT_MAX`] (TLSF's: 16 per power of two).
const CLASSES: usize = 10 * 16;
/// Blocks each bin holds at most, by class. A bin's fill does a random walk in a churn, so
/// it is empty (a miss) about 1/(cap + 1) of the time, and holding its blocks costs cap ×
/// size bytes of [`FRONT_BYTES`]: the misses for a given budget are fewest with caps in
/// proportion to 1/√size. Here 3 blocks of 1 MiB, 12 of 64 KiB, at most 32 of small ones
/// (a W2 churn: 95% of operations hit a front, against 83% with 8 blocks in every bin).
static BIN_CAPS: [u8; CLASSES] = bin_caps();
/// Bytes a front holds at most.
const FRONT_BYTES: usize = 64 << 20;
/// Frees on another stream in a row before a front switches to that stream.
const RETARGET_MISSES: u32 = 32;
/// An owner slot no thread has.
pub(super) const UNCLAIMED: usize = usize::MAX;
/// "No entry" in entry links (entry 0 is never used).
const NONE: u32 = 0;

/// A block held by a front.
#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    addr: usize,
    /// The block's size in its structure.
    size: usize,
    /// The request it was handed out for (rounded), which its free must match.
    req: usize,
    /// Descriptor index in its structure.
    block: u32,
    /// Its structure: 0 the global pool, k + 1 shard k.
    owner: u32,
    /// Next entry in its bin (or in the vacant list).
    next: u32,
    live: bool,
}

/// A block leaving a front, to be freed into its structure on `stream`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Returned {
    pub addr: usize,
    pub block: u32,
    pub owner: u32,
    pub stream: Stream,
}

/// What a front did with a free.
#[derive(Debug)]
pub(super) enum Freed {
    /// Kept in a bin.
    Kept,
    /// The front held the block but let it go: free it into its structure.
    Return(Returned),
    /// The front does not hold this pointer.
    NotHere,
}

/// One thread's cache (see the module docs).
pub(super) struct Front {
    /// The thread slot that owns this front, or [`UNCLAIMED`].
    pub owner: usize,
    /// The stream cached for (a tracked stream).
    pub stream: Option<Stream>,
    /// The last stream found untracked (not cached for; looked up once).
    pub declined: Option<Stream>,
    /// Frees seen in a row on another stream than [`Front::stream`].
    pub misses: u32,
    map: PtrMap,
    entries: Vec<Entry>,
    vacant: u32,
    heads: [u32; CLASSES],
    counts: [u8; CLASSES],
    /// Bytes and blocks in bins (free).
    pub cached_bytes: usize,
    pub cached_count: usize,
}

/// ⌊√n⌋ (`usize::isqrt` is newer than the crate's minimum Rust).
const fn isqrt(n: usize) -> usize {
    let mut r = 0;
    while (r + 1) * (r + 1) <= n {
        r += 1;
    }
    r
}

/// [`BIN_CAPS`]: ⌊3·√(1 MiB / class size)⌋, between 1 and 32.
const fn bin_caps() -> [u8; CLASSES] {
    let max_units = FRONT_MAX >> UNIT_SHIFT;
    let mut caps = [0u8; CLASSES];
    let mut c = 0;
    while c < CLASSES {
        let (fl, sl) = (c / 16, c % 16);
        // The class's smallest size in units (the inverse of `mapping_insert`).
        let units = if fl == 0 { sl } else { (16 + sl) << (fl - 1) };
        let cap = match (9 * max_units).checked_div(units) {
            Some(q) => isqrt(q),
            None => 32,
        };
        caps[c] = if cap < 1 {
            1
        } else if cap > 32 {
            32
        } else {
            cap as u8
        };
        c += 1;
    }
    caps
}

#[inline(always)]
fn class_of(size: usize) -> usize {
    let (fl, sl) = mapping_insert(size >> UNIT_SHIFT);
    fl * 16 + sl
}

impl Front {
    fn new() -> Self {
        Front {
            owner: UNCLAIMED,
            stream: None,
            declined: None,
            misses: 0,
            map: PtrMap::with_capacity(0),
            entries: vec![Entry::default()],
            vacant: NONE,
            heads: [NONE; CLASSES],
            counts: [0; CLASSES],
            cached_bytes: 0,
            cached_count: 0,
        }
    }

    #[inline(always)]
    fn ent(&self, e: u32) -> &Entry {
        &self.entries[e as usize]
    }

    #[inline(always)]
    fn ent_mut(&mut self, e: u32) -> &mut Entry {
        &mut self.entries[e as usize]
    }

    /// Whether a free block of `size` may be kept.
    #[inline(always)]
    fn room(&self, size: usize) -> bool {
        size <= FRONT_MAX
            && {
                let c = class_of(size);
                self.counts[c] < BIN_CAPS[c]
            }
            && self.cached_bytes + size <= FRONT_BYTES
    }

    /// Files entry `e` (free) in its bin.
    #[inline(always)]
    fn push(&mut self, e: u32) {
        let size = self.ent(e).size;
        let c = class_of(size);
        let head = self.heads[c];
        let en = self.ent_mut(e);
        en.live = false;
        en.next = head;
        self.heads[c] = e;
        self.counts[c] += 1;
        self.cached_bytes += size;
        self.cached_count += 1;
    }

    /// Unlinks the head of bin `c` (non-empty).
    #[inline(always)]
    fn pop(&mut self, c: usize) -> u32 {
        let e = self.heads[c];
        let en = *self.ent(e);
        self.heads[c] = en.next;
        self.counts[c] -= 1;
        self.cached_bytes -= en.size;
        self.cached_count -= 1;
        e
    }

    /// Forgets entry `e` (not in a bin).
    fn drop_entry(&mut self, e: u32) -> Entry {
        let en = *self.ent(e);
        self.map.remove(en.addr);
        let vacant = self.vacant;
        self.ent_mut(e).next = vacant;
        self.vacant = e;
        en
    }

    /// A cached block for a request of `rounded` bytes on this front's stream, handed out.
    #[inline(always)]
    pub fn take(&mut self, rounded: usize) -> Option<usize> {
        let units = rounded >> UNIT_SHIFT;
        // The request's own class first (its head may be big enough), then the first class
        // whose every block fits.
        let (fl, sl) = mapping_insert(units);
        let c = fl * 16 + sl;
        let mut pick = None;
        if c < CLASSES && self.heads[c] != NONE && self.ent(self.heads[c]).size >= rounded {
            pick = Some(c);
        } else {
            let (fl, sl) = mapping_search(units);
            let c = fl * 16 + sl;
            if c < CLASSES && self.heads[c] != NONE {
                pick = Some(c);
            }
        }
        let e = self.pop(pick?);
        let en = self.ent_mut(e);
        en.live = true;
        en.req = rounded;
        Some(en.addr)
    }

    /// A free of `ptr` (`bytes`, on `stream`) by the owning thread, if this front holds it:
    /// kept in a bin when `keep` allows and it fits, else handed back for its structure.
    #[inline(always)]
    pub fn free(&mut self, ptr: usize, bytes: usize, stream: Stream, keep: bool) -> Result<Freed> {
        let Some(e) = self.map.get(ptr) else {
            return Ok(Freed::NotHere);
        };
        let en = *self.ent(e);
        if !en.live {
            return Err(Error::invalid(format!(
                "{NAME}: cannot free {ptr:#x} ({bytes} bytes): it was already freed"
            )));
        }
        if round_up(bytes) != Some(en.req) {
            return Err(Error::invalid(format!(
                "{NAME}: cannot free {ptr:#x} with bytes = {bytes}: it was allocated with {} \
                 bytes",
                en.req
            )));
        }
        if keep && self.stream == Some(stream) && self.room(en.size) {
            self.push(e);
            return Ok(Freed::Kept);
        }
        self.drop_entry(e);
        Ok(Freed::Return(Returned {
            addr: en.addr,
            block: en.block,
            owner: en.owner,
            stream,
        }))
    }

    /// Whether a block of `size` freed on `stream` would be kept now.
    #[inline]
    pub fn would_keep(&self, size: usize, stream: Stream) -> bool {
        self.stream == Some(stream) && self.room(size)
    }

    /// Keeps a block just marked `Cached` in its structure (free, in a bin); false when it
    /// no longer fits (the caller frees it into its structure).
    pub fn adopt(
        &mut self,
        addr: usize,
        size: usize,
        block: u32,
        owner: u32,
        stream: Stream,
    ) -> bool {
        if !self.would_keep(size, stream) {
            return false;
        }
        let entry = Entry {
            addr,
            size,
            req: size,
            block,
            owner,
            next: NONE,
            live: false,
        };
        let e = if self.vacant != NONE {
            let e = self.vacant;
            self.vacant = self.ent(e).next;
            *self.ent_mut(e) = entry;
            e
        } else {
            self.entries.push(entry);
            (self.entries.len() - 1) as u32
        };
        self.map.insert(addr, e);
        self.push(e);
        true
    }

    /// Takes every free block out (live ones stay), for their structures.
    pub fn drain(&mut self, out: &mut Vec<Returned>) {
        let Some(stream) = self.stream else {
            debug_assert_eq!(self.cached_count, 0);
            return;
        };
        for c in 0..CLASSES {
            while self.heads[c] != NONE {
                let e = self.pop(c);
                let en = self.drop_entry(e);
                out.push(Returned {
                    addr: en.addr,
                    block: en.block,
                    owner: en.owner,
                    stream,
                });
            }
        }
    }
}

/// A front behind a spin lock, on its own cache lines. The owning thread is almost always
/// the only one to take it (others do when they empty it), so locking costs one atomic
/// swap and unlocking a plain store.
#[repr(align(128))]
pub(super) struct FrontCell {
    locked: AtomicBool,
    front: UnsafeCell<Front>,
}

// SAFETY: `front` is only reached through `FrontGuard`, which holds `locked`.
unsafe impl Sync for FrontCell {}
// SAFETY: `Front` owns plain data (no thread-bound state).
unsafe impl Send for FrontCell {}

/// Exclusive access to a front.
pub(super) struct FrontGuard<'a>(&'a FrontCell);

impl FrontCell {
    fn new() -> Self {
        FrontCell {
            locked: AtomicBool::new(false),
            front: UnsafeCell::new(Front::new()),
        }
    }

    #[inline(always)]
    pub fn lock(&self) -> FrontGuard<'_> {
        if self.locked.swap(true, Ordering::Acquire) {
            self.lock_slow();
        }
        FrontGuard(self)
    }

    #[cold]
    #[inline(never)]
    fn lock_slow(&self) {
        let mut spins = 0u32;
        loop {
            while self.locked.load(Ordering::Relaxed) {
                if spins < 64 {
                    std::hint::spin_loop();
                    spins += 1;
                } else {
                    std::thread::yield_now();
                }
            }
            if !self.locked.swap(true, Ordering::Acquire) {
                crate::counters::bump(crate::counters::Counter::LockWaits);
                return;
            }
        }
    }
}

impl std::ops::Deref for FrontGuard<'_> {
    type Target = Front;
    fn deref(&self) -> &Front {
        // SAFETY: this guard holds the cell's lock, so no other reference exists.
        unsafe { &*self.0.front.get() }
    }
}

impl std::ops::DerefMut for FrontGuard<'_> {
    fn deref_mut(&mut self) -> &mut Front {
        // SAFETY: as in `deref`; `&mut self` makes this the only reference from the guard.
        unsafe { &mut *self.0.front.get() }
    }
}

impl Drop for FrontGuard<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        self.0.locked.store(false, Ordering::Release);
    }
}

/// A pool's fronts, indexed by thread slot.
pub(super) struct Fronts {
    list: Box<[FrontCell]>,
}

impl Fronts {
    pub fn new() -> Self {
        // Twice the CPUs: live threads get distinct slots (smallest first), so a program
        // with a thread per CPU plus a main thread still gives each its own front.
        let n = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(8)
            .saturating_mul(2)
            .clamp(8, 256)
            .next_power_of_two();
        Fronts {
            list: (0..n).map(|_| FrontCell::new()).collect(),
        }
    }

    /// The front of thread slot `slot`.
    #[inline(always)]
    pub fn of(&self, slot: usize) -> &FrontCell {
        &self.list[slot & (self.list.len() - 1)]
    }

    /// How many fronts there are (a power of two).
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Every front.
    pub fn all(&self) -> impl Iterator<Item = &FrontCell> {
        self.list.iter()
    }
}

/// `stream` as fronts compare it: the legacy default stream is the default stream.
#[inline(always)]
pub(super) fn norm(stream: Stream) -> Stream {
    if stream == Stream::LEGACY {
        Stream::DEFAULT
    } else {
        stream
    }
}

/// Whether fronts switch streams after [`RETARGET_MISSES`] frees on another one.
#[inline]
pub(super) fn should_retarget(front: &Front, stream: Stream) -> bool {
    front.stream.is_none() || (front.stream != Some(stream) && front.misses >= RETARGET_MISSES)
}
