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
//!   found in O(1) and change nothing. The table is the entries themselves, open-addressed
//!   by address: a free finds its block's whole entry in one probe sequence, with no second,
//!   dependent load (a free is one cache miss, not two). Removed entries leave tombstones,
//!   so entries never move and bins link them by slot; the table is rebuilt (bins too) when
//!   entries and tombstones fill half of it.
//! - A front and a pool structure are never locked together: blocks leave a front in a list
//!   that the caller then frees into their structures.
//! - Fronts are emptied into the pool before it grows or fails a request, on `release()`,
//!   on introspection, when their stream is destroyed, when they switch streams and when
//!   their thread ends. Statistics count cached blocks as free.

use std::ffi::c_void;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

use super::{round_up, ALIGN, NAME, UNIT_SHIFT};
use crate::error::{Error, Result};
use crate::mr::biased_lock::{BiasedLock, LockGuard, Owned, OwnerGuard};
use crate::mr::size_classes::{bin_of, bins_of_request, caps_for, CACHED_MAX, CLASSES};
use crate::mr::stream_ordered::thread_number;
use crate::mr::thread_slot::known_thread_slot;
use crate::runtime::Stream;

/// Blocks up to this size are cached.
pub(super) const FRONT_MAX: usize = CACHED_MAX;
// A class fits in an entry's `class` byte.
const _: () = assert!(CLASSES <= 256);
/// Bytes a front holds at most. The churn workload (146 MiB live in blocks up to 1 MiB) on
/// a large pool hits the front on 96% of its operations with 128 MiB, against 87% with
/// 32 MiB; a miss costs several hits (the pool's lock, lists and merges): the C ABI's churn
/// took 20 ns per operation instead of 29 (host runtime).
const FRONT_BYTES: usize = 256 << 20;
/// A front holds at most this fraction of its pool's size, but may hold
/// [`FRONT_MIN_BYTES`] (see [`Fronts::set_pool_size`]). A 64th raised the vmm pool's peak
/// on the streams workload (a pool growing from nothing) from 1.18 to 1.23 times the live
/// bytes.
const POOL_SHARE: usize = 256;
/// The budget of the fronts of a small pool.
const FRONT_MIN_BYTES: usize = 1 << 20;
/// Frees on another stream in a row before a front switches to that stream.
const RETARGET_MISSES: u32 = 32;
/// An owner slot no thread has.
pub(super) const UNCLAIMED: usize = usize::MAX;
/// "No slot" in bin links.
const NONE: u32 = u32::MAX;
/// The address of a slot never used since the table was built.
const EMPTY: usize = 0;
/// The address of a slot whose entry was removed (a tombstone). Block addresses are
/// 256-byte aligned and nonzero, so neither marker is one.
const GONE: usize = 1;

/// A block held by a front: one table slot (32 bytes, two to a cache line). Aligned to its
/// size so that no entry straddles two lines: the system allocator returns a large table
/// 16 bytes past a page boundary, where half of the entries straddled and a free that found
/// its entry missed the caches twice (the many-live workload with 100 000 live blocks: 30%
/// of the front's misses, in cachegrind with a 2 MiB last-level cache).
#[repr(align(32))]
#[derive(Clone, Copy, Debug)]
struct Entry {
    /// The block's address, or [`EMPTY`] / [`GONE`].
    addr: usize,
    /// The block's size in its structure (at most [`FRONT_MAX`]).
    size: u32,
    /// The request it was handed out for (rounded), which its free must match; 0 while the
    /// block is free in a bin.
    req: u32,
    /// Descriptor index in its structure.
    block: u32,
    /// Its structure: 0 the global pool, k + 1 shard k.
    owner: u32,
    /// Next slot in its bin.
    next: u32,
    /// Its size class ([`bin_of`] its size), kept so that a free need not compute it
    /// (in what was padding).
    class: u8,
    /// The size of the next entry in its bin in 256-byte units, rounded down (0: none), so
    /// that taking this entry out of its bin sets the bin's head size without reading the
    /// next entry (a dependent load that missed the caches on many takes).
    next_units: u16,
}

const _: () = assert!(size_of::<Entry>() == 32 && align_of::<Entry>() == 32);

const VACANT: Entry = Entry {
    addr: EMPTY,
    size: 0,
    req: 0,
    block: 0,
    owner: 0,
    next: NONE,
    class: 0,
    next_units: 0,
};

/// The entries of a front, open-addressed by block address (linear probing, the
/// multiplicative hash of `addr >> 8`, tombstones on removal; see the module docs).
///
/// Each slot also has a one-byte tag, probed before the slot itself (as in SwissTable):
/// [`TAG_EMPTY`], [`TAG_GONE`], or [`TAG_LIVE`] with 7 more bits of the address's hash.
/// Most frees in a large working set are of blocks the front does not hold: that lookup
/// must probe up to an empty slot, and through the tags it reads bytes, 64 to a cache line
/// and a 64th of the table, where it read 32-byte entries (the many-live workload with
/// 100 000 live blocks: a table of 65 536 slots, 2 MiB of entries, 64 KiB of tags).
struct Table {
    slots: Box<[Entry]>,
    /// One tag per slot, kept in step with the slot's address.
    tags: Box<[u8]>,
    /// Entries (not tombstones).
    len: usize,
    /// Tombstones.
    gone: usize,
    /// `64 - log2(slots.len())`: the hash's top bits index the table.
    shift: u32,
}

/// The tag of a slot never used since the table was built (its address is [`EMPTY`]).
const TAG_EMPTY: u8 = 0;
/// The tag of a removed entry (its address is [`GONE`]).
const TAG_GONE: u8 = 1;
/// The bit every live entry's tag has (with 7 bits of its address's hash).
const TAG_LIVE: u8 = 0x80;
/// Tags read at a time by [`Table::find`] (one `u64`); the first `GROUP - 1` tags are
/// repeated after the last, so that a group starting near the end needs no wrap.
const GROUP: usize = 8;
/// Every byte's low bit, and every byte's high bit (bytewise tests on a group of tags).
const LO_BITS: u64 = 0x0101_0101_0101_0101;
const HI_BITS: u64 = 0x8080_8080_8080_8080;

/// The high bit of every zero byte of `x` (and perhaps of bytes above the lowest zero byte:
/// the lowest flag is always a zero byte).
#[inline(always)]
fn zero_bytes(x: u64) -> u64 {
    x.wrapping_sub(LO_BITS) & !x & HI_BITS
}

impl Table {
    /// A table for at least `n` entries at a quarter load.
    fn with_capacity(n: usize) -> Self {
        let slots = Self::slots_for(n);
        Self::over(
            vec![VACANT; slots].into_boxed_slice(),
            vec![TAG_EMPTY; slots + GROUP - 1].into_boxed_slice(),
        )
    }

    /// Slots for `n` entries at a quarter load.
    fn slots_for(n: usize) -> usize {
        (4 * n).next_power_of_two().max(16)
    }

    /// An empty table over `slots` (a power of two of them, all vacant) and their `tags`
    /// (as many plus `GROUP - 1`, all [`TAG_EMPTY`]).
    fn over(slots: Box<[Entry]>, tags: Box<[u8]>) -> Self {
        debug_assert!(slots.len().is_power_of_two() && slots.len() >= GROUP);
        debug_assert_eq!(tags.len(), slots.len() + GROUP - 1);
        debug_assert!(tags.iter().all(|&t| t == TAG_EMPTY));
        Table {
            shift: 64 - slots.len().trailing_zeros(),
            slots,
            tags,
            len: 0,
            gone: 0,
        }
    }

    #[inline(always)]
    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// The home slot of `addr` and its tag: the hash's top bits index the table, the 7
    /// bits below them go in the tag.
    #[inline(always)]
    fn home(&self, addr: usize) -> (usize, u8) {
        let h = crate::mr::ptr_map::address_hash(addr);
        let tag = TAG_LIVE | ((h >> (self.shift - 7)) as u8 & 0x7f);
        ((h >> self.shift) as usize, tag)
    }

    /// Sets slot `i`'s tag (and its copy past the end, for the first `GROUP - 1` slots).
    #[inline(always)]
    fn set_tag(&mut self, i: usize, tag: u8) {
        self.tags[i] = tag;
        if i < GROUP - 1 {
            let n = self.slots.len();
            self.tags[n + i] = tag;
        }
    }

    /// The slot holding `addr`, if any. Tags are compared eight at a time: the probe
    /// sequence of a free ends at the first empty slot, and a byte-at-a-time loop
    /// mispredicted its exit on most frees (the churn workload: 0.75 mispredictions per free).
    #[inline(always)]
    fn find(&self, addr: usize) -> Option<u32> {
        if addr <= GONE {
            return None;
        }
        let mask = self.mask();
        let (mut i, tag) = self.home(addr);
        let pattern = LO_BITS * u64::from(tag);
        loop {
            let mut group = [0u8; GROUP];
            group.copy_from_slice(&self.tags[i..i + GROUP]);
            let g = u64::from_le_bytes(group);
            let empty = zero_bytes(g);
            // Candidates before the first empty slot: the probe sequence ends there.
            let mut hits = zero_bytes(g ^ pattern) & (empty ^ empty.wrapping_sub(1));
            while hits != 0 {
                let j = (i + (hits.trailing_zeros() / 8) as usize) & mask;
                if self.slots[j].addr == addr {
                    return Some(j as u32);
                }
                hits &= hits - 1;
            }
            if empty != 0 {
                return None;
            }
            i = (i + GROUP) & mask;
        }
    }

    /// [`Self::find`] over the first group of `addr`'s probe sequence only, for a hit path:
    /// at most half the table is taken, so nearly every entry is within 8 slots of its
    /// home, and this makes no loop but the one over that group's candidates.
    #[inline(always)]
    fn find_near(&self, addr: usize) -> Near {
        let mask = self.mask();
        let (i, tag) = self.home(addr);
        debug_assert!(i + GROUP <= self.tags.len());
        // SAFETY: `i` is at most `mask` and the tags have `mask + GROUP` entries (`over`):
        // the group's 8 bytes are in them. `u64::from_le_bytes` needs no alignment.
        let g = u64::from_le_bytes(unsafe { self.tags.as_ptr().add(i).cast::<[u8; 8]>().read() });
        // Every candidate is compared by address: one past the first empty slot (or a
        // false flag of `zero_bytes`) is never the address, since entries never lie past
        // an empty slot of their sequence. Nor is an empty or removed slot (address 0 or 1:
        // their tags have no live bit).
        let mut hits = zero_bytes(g ^ (LO_BITS * u64::from(tag)));
        while hits != 0 {
            let j = (i + (hits.trailing_zeros() / 8) as usize) & mask;
            // SAFETY: `j` is masked into the slots.
            if unsafe { self.slots.get_unchecked(j) }.addr == addr {
                return Near::Found(j as u32);
            }
            hits &= hits - 1;
        }
        if zero_bytes(g) != 0 {
            Near::Absent
        } else {
            Near::Further
        }
    }

    /// Whether one more entry keeps entries and tombstones within half the table.
    #[inline(always)]
    fn has_room(&self) -> bool {
        2 * (self.len + self.gone + 1) <= self.slots.len()
    }

    /// Puts `e` (its address not in the table; [`Self::has_room`]) in the first free or
    /// removed slot of its probe sequence.
    #[inline]
    fn insert(&mut self, e: Entry) -> u32 {
        debug_assert!(e.addr > GONE && self.has_room());
        debug_assert!(self.find(e.addr).is_none(), "{:#x} is in the table", e.addr);
        let mask = self.mask();
        let (mut i, tag) = self.home(e.addr);
        loop {
            let t = self.tags[i];
            if t < TAG_LIVE {
                if t == TAG_GONE {
                    self.gone -= 1;
                }
                self.slots[i] = e;
                self.set_tag(i, tag);
                self.len += 1;
                return i as u32;
            }
            i = (i + 1) & mask;
        }
    }

    /// Removes the entry of slot `i`: a tombstone, unless the next slot is empty (then no
    /// probe sequence runs through it, nor through the tombstones just before it).
    #[inline]
    fn remove(&mut self, i: u32) {
        let mask = self.mask();
        let mut i = i as usize;
        debug_assert!(self.slots[i].addr > GONE && self.tags[i] >= TAG_LIVE);
        self.len -= 1;
        if self.tags[(i + 1) & mask] != TAG_EMPTY {
            self.slots[i].addr = GONE;
            self.set_tag(i, TAG_GONE);
            self.gone += 1;
            return;
        }
        self.slots[i].addr = EMPTY;
        self.set_tag(i, TAG_EMPTY);
        loop {
            i = i.wrapping_sub(1) & mask;
            if self.tags[i] != TAG_GONE {
                break;
            }
            self.slots[i].addr = EMPTY;
            self.set_tag(i, TAG_EMPTY);
            self.gone -= 1;
        }
    }
}

/// What [`Table::find_near`] found.
enum Near {
    /// The address's slot.
    Found(u32),
    /// The address is not in the table.
    Absent,
    /// Its probe sequence goes on past the first group: [`Table::find`] answers.
    Further,
}

/// A block leaving a front, to be freed into its structure on `stream`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Returned {
    pub addr: usize,
    pub block: u32,
    pub owner: u32,
    pub stream: Stream,
    /// The thread ([`thread_number`]) whose per-thread default stream `stream` is, when it
    /// is that stream: a front is emptied by other threads too.
    pub thread: usize,
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
    /// The thread ([`thread_number`]) that set [`Front::stream`]: the owner of the
    /// per-thread default stream, when it is that stream.
    pub stream_thread: usize,
    /// The last stream found untracked (not cached for; looked up once).
    pub declined: Option<Stream>,
    /// Frees seen in a row on another stream than [`Front::stream`].
    pub misses: u32,
    table: Table,
    /// The slots and tags the table had before its last rebuild, for the next one.
    spare: (Box<[Entry]>, Box<[u8]>),
    /// First slot of each bin; the extra last bin is always empty (see [`Front::take`]).
    heads: [u32; CLASSES + 1],
    /// The size of each bin's first block, 0 when the bin is empty: `take` chooses its bin
    /// by a comparison with no dependent load, which the compiler makes without a branch
    /// (that branch, on the first block's size, was mispredicted on half the takes).
    head_size: [u32; CLASSES + 1],
    counts: [u8; CLASSES],
    /// Bytes in bins (free). Blocks are not counted apart: the hit paths would keep a
    /// second sum, and only tests ask.
    pub cached_bytes: usize,
}

impl Front {
    fn new() -> Self {
        Front {
            owner: UNCLAIMED,
            stream: None,
            stream_thread: 0,
            declined: None,
            misses: 0,
            table: Table::with_capacity(0),
            spare: Default::default(),
            heads: [NONE; CLASSES + 1],
            head_size: [0; CLASSES + 1],
            counts: [0; CLASSES],
            cached_bytes: 0,
        }
    }

    /// Blocks in bins (free).
    #[cfg(test)]
    pub fn cached_count(&self) -> usize {
        self.counts.iter().map(|&n| usize::from(n)).sum()
    }

    #[inline(always)]
    fn ent(&self, i: u32) -> &Entry {
        &self.table.slots[i as usize]
    }

    #[inline(always)]
    fn ent_mut(&mut self, i: u32) -> &mut Entry {
        &mut self.table.slots[i as usize]
    }

    /// Whether a free block of `size` may be kept within `limits`.
    #[inline(always)]
    fn room(&self, size: usize, limits: &Limits) -> bool {
        size <= FRONT_MAX && self.room_in(bin_of(size), size, limits)
    }

    /// [`Self::room`] for a block of `size` (at most [`FRONT_MAX`]) of class `c`.
    #[inline(always)]
    fn room_in(&self, c: usize, size: usize, limits: &Limits) -> bool {
        // Both tests, one branch: each alone is near a coin toss while the pool's free
        // blocks fill the front (the churn workload), together they are mostly true.
        (self.counts[c] < limits.cap(c)) & (self.cached_bytes + size <= limits.bytes())
    }

    /// Files the entry of slot `i` (free) in its bin.
    #[inline(always)]
    fn push(&mut self, i: u32) {
        let (size, c) = {
            let en = self.ent(i);
            (en.size as usize, en.class as usize)
        };
        debug_assert_eq!(c, bin_of(size));
        let head = self.heads[c];
        // A head size rounded down only makes `take` pass over the bin's head: never wrong.
        let head_units = (self.head_size[c] >> 8) as u16;
        let en = self.ent_mut(i);
        en.req = 0;
        en.next = head;
        en.next_units = head_units;
        self.heads[c] = i;
        self.head_size[c] = size as u32;
        self.counts[c] += 1;
        self.cached_bytes += size;
    }

    /// Unlinks the head of bin `c` (non-empty).
    #[inline(always)]
    fn pop(&mut self, c: usize) -> u32 {
        debug_assert!(c < CLASSES && self.heads[c] != NONE);
        // SAFETY (the hit path's indexing, unchecked): `c` is below CLASSES, the length of
        // the bin arrays but `heads` and `head_size`, which have one more (callers pop
        // non-empty bins, and the last bin is always empty); a bin's head is a slot of the
        // table (bins link table slots, rebuilt with it).
        let i = unsafe { *self.heads.get_unchecked(c) };
        debug_assert!((i as usize) < self.table.slots.len());
        // SAFETY: as above.
        let en = unsafe { *self.table.slots.get_unchecked(i as usize) };
        // SAFETY: as above.
        unsafe {
            *self.heads.get_unchecked_mut(c) = en.next;
            *self.head_size.get_unchecked_mut(c) = u32::from(en.next_units) << 8;
            *self.counts.get_unchecked_mut(c) -= 1;
        }
        self.cached_bytes -= en.size as usize;
        i
    }

    /// Rebuilds the table (and the bins, which link its slots) for its entries plus one.
    #[cold]
    #[inline(never)]
    fn rebuild(&mut self) {
        // Never smaller, and into the slots of the last rebuild when they are the right
        // size: clearing tombstones in a steady state allocates nothing.
        let mut cap = self.table.slots.len();
        if Table::slots_for(self.table.len + 1) > cap {
            // Growing: twice what is needed, so that a working set that still creeps up
            // rarely makes it grow again.
            cap = Table::slots_for(2 * (self.table.len + 1));
        }
        let (mut slots, mut tags) = if self.spare.0.len() == cap {
            std::mem::take(&mut self.spare)
        } else {
            (
                vec![VACANT; cap].into_boxed_slice(),
                vec![TAG_EMPTY; cap + GROUP - 1].into_boxed_slice(),
            )
        };
        slots.fill(VACANT);
        tags.fill(TAG_EMPTY);
        let old = std::mem::replace(&mut self.table, Table::over(slots, tags));
        self.heads = [NONE; CLASSES + 1];
        self.head_size = [0; CLASSES + 1];
        self.counts = [0; CLASSES];
        self.cached_bytes = 0;
        for e in old.slots.iter().filter(|e| e.addr > GONE) {
            let i = self.table.insert(*e);
            if e.req == 0 {
                self.push(i);
            }
        }
        self.spare = (old.slots, old.tags);
    }

    /// A cached block for a request of `rounded` bytes on this front's stream, handed out.
    #[inline(always)]
    pub fn take(&mut self, rounded: usize) -> Option<usize> {
        // The request's own class first (its head may be big enough), then the first class
        // whose every block fits.
        let (own, fits) = bins_of_request(rounded >> UNIT_SHIFT);
        debug_assert!(own <= CLASSES && fits <= CLASSES);
        // SAFETY: a request of at most FRONT_MAX is of classes at most CLASSES
        // (`bins_of_request`), and `head_size` and `heads` have CLASSES + 1 entries.
        let own_size = unsafe { *self.head_size.get_unchecked(own) };
        // An empty bin's head size is 0, below any request; the last bin stays empty.
        let c = if own_size as usize >= rounded {
            own
        } else {
            fits
        };
        // SAFETY: as above.
        if unsafe { *self.heads.get_unchecked(c) } == NONE {
            return None;
        }
        let i = self.pop(c);
        // SAFETY: `pop` returns a slot of the table.
        let en = unsafe { self.table.slots.get_unchecked_mut(i as usize) };
        // `rounded` fits in the block (at most FRONT_MAX): no truncation.
        en.req = rounded as u32;
        Some(en.addr)
    }

    /// [`Self::take`] when the front caches for `stream`.
    #[inline(always)]
    pub fn take_for(&mut self, rounded: usize, stream: Stream) -> Option<usize> {
        if self.stream != Some(norm(stream)) {
            return None;
        }
        self.take(rounded)
    }

    /// A free of `ptr` (`bytes`, on `stream`) by the owning thread, if this front holds it:
    /// kept in a bin when `keep` allows and it fits, else handed back for its structure.
    #[inline(always)]
    pub fn free(
        &mut self,
        ptr: usize,
        bytes: usize,
        stream: Stream,
        keep: bool,
        limits: &Limits,
    ) -> Result<Freed> {
        let Some(i) = self.table.find(ptr) else {
            return Ok(Freed::NotHere);
        };
        let en = *self.ent(i);
        if en.req == 0 {
            return Err(Error::invalid(format!(
                "{NAME}: cannot free {ptr:#x} ({bytes} bytes): it was already freed"
            )));
        }
        if round_up(bytes) != Some(en.req as usize) {
            return Err(Error::invalid(format!(
                "{NAME}: cannot free {ptr:#x} with bytes = {bytes}: it was allocated with {} \
                 bytes",
                en.req
            )));
        }
        if keep
            && self.stream == Some(stream)
            && self.room_in(en.class as usize, en.size as usize, limits)
        {
            self.push(i);
            return Ok(Freed::Kept);
        }
        self.table.remove(i);
        Ok(Freed::Return(Returned {
            addr: en.addr,
            block: en.block,
            owner: en.owner,
            stream,
            thread: thread_number(),
        }))
    }

    /// The hit path of a free by the owning thread: keeps `ptr` (`bytes`, on `stream`, which
    /// [`norm`] made) in its bin when this front handed it out, the size matches and it has
    /// room within `limits`. False, with nothing changed, for anything else: the caller then
    /// takes the full path ([`Front::free`]), which reports or returns the block.
    #[inline(always)]
    pub fn keep(&mut self, ptr: usize, bytes: usize, stream: Stream, limits: &Limits) -> bool {
        match self.table.find(ptr) {
            Some(i) => self.keep_at(i, bytes, stream, limits),
            None => false,
        }
    }

    /// [`Self::keep`] for the call-free hit path, which looks in the first group of the
    /// table only ([`Table::find_near`]): [`FrontAnswer::NotAsked`] when the block may lie
    /// further, [`FrontAnswer::Missed`] when the front does not hold it or does not keep it.
    #[inline(always)]
    pub fn keep_near(
        &mut self,
        ptr: usize,
        bytes: usize,
        stream: Stream,
        limits: &Limits,
    ) -> FrontAnswer<()> {
        match self.table.find_near(ptr) {
            Near::Found(i) if self.keep_at(i, bytes, stream, limits) => FrontAnswer::Served(()),
            Near::Found(_) | Near::Absent => FrontAnswer::Missed,
            Near::Further => FrontAnswer::NotAsked,
        }
    }

    /// [`Self::keep`] of the block in slot `i` (a slot of the table).
    #[inline(always)]
    fn keep_at(&mut self, i: u32, bytes: usize, stream: Stream, limits: &Limits) -> bool {
        debug_assert!((i as usize) < self.table.slots.len());
        // SAFETY: `i` is a slot of the table (callers pass what `find` or `find_near` found).
        let en = unsafe { self.table.slots.get_unchecked(i as usize) };
        // A live entry's `req` is nonzero and at most FRONT_MAX: `bytes` matches when it
        // rounds to it (a free block's 0 and an overflowing size never do).
        let (req, size, class) = (en.req as usize, en.size as usize, en.class as usize);
        if bytes.wrapping_add(ALIGN - 1) & !(ALIGN - 1) != req
            || req == 0
            || self.stream != Some(stream)
            || !self.room_in(class, size, limits)
        {
            return false;
        }
        self.push(i);
        true
    }

    /// Whether a block of `size` freed on `stream` would be kept now, within `limits`.
    #[inline]
    pub fn would_keep(&self, size: usize, stream: Stream, limits: &Limits) -> bool {
        self.stream == Some(stream) && self.room(size, limits)
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
        limits: &Limits,
    ) -> bool {
        if !self.would_keep(size, stream, limits) {
            return false;
        }
        if !self.table.has_room() {
            self.rebuild();
        }
        let i = self.table.insert(Entry {
            addr,
            // At most FRONT_MAX (`would_keep`): no truncation.
            size: size as u32,
            req: 0,
            block,
            owner,
            next: NONE,
            class: bin_of(size) as u8,
            next_units: 0,
        });
        self.push(i);
        true
    }

    /// Takes every free block out (live ones stay), for their structures.
    pub fn drain(&mut self, out: &mut Vec<Returned>) {
        let Some(stream) = self.stream else {
            debug_assert_eq!(self.cached_bytes, 0);
            return;
        };
        for c in 0..CLASSES {
            while self.heads[c] != NONE {
                let i = self.pop(c);
                let en = *self.ent(i);
                self.table.remove(i);
                out.push(Returned {
                    addr: en.addr,
                    block: en.block,
                    owner: en.owner,
                    stream,
                    thread: self.stream_thread,
                });
            }
        }
    }
}

impl Owned for Front {
    #[inline(always)]
    fn owner(&self) -> usize {
        self.owner
    }
}

/// A front behind a lock biased to its owner, on its own cache lines. The owning thread is
/// almost always the only one to take it (others do when they empty it or free a block it
/// handed out), so it enters without an atomic read-modify-write.
///
/// Aligned to a power of two above its size, so that finding a thread's front is a shift
/// (1 664 bytes were a multiplication on every hit path's chain of dependent loads).
#[repr(align(2048))]
pub(super) struct FrontCell(BiasedLock<Front>);

const _: () = assert!(size_of::<FrontCell>() == 2048);

/// Exclusive access to a front, under its lock.
pub(super) type FrontGuard<'a> = LockGuard<'a, Front>;

impl FrontCell {
    fn new() -> Self {
        FrontCell(BiasedLock::new(Front::new()))
    }

    /// The owner's way in without the lock, when the front is biased to thread slot `me`
    /// (which then owns it).
    #[inline(always)]
    pub fn enter(&self, me: usize) -> Option<OwnerGuard<'_, Front>> {
        self.0.enter(me)
    }

    /// The front, locked by thread slot `me` (its owner or not).
    #[inline(always)]
    pub fn lock_as(&self, me: usize) -> FrontGuard<'_> {
        self.0.lock_as(me)
    }
}

/// A pool's fronts, indexed by thread slot.
///
/// On cache lines of its own: every allocation and free of every thread reads it, and a
/// neighbour written by another thread (the global pool's state, the count of batches
/// being returned) would make each of them miss.
#[repr(align(128))]
pub(crate) struct Fronts {
    list: Box<[FrontCell]>,
    /// What each front may hold. Read at every free, written when the pool grows.
    limits: Limits,
}

/// What a front may hold: bytes in all ([`FRONT_BYTES`], or less in a small pool: see
/// [`Fronts::set_pool_size`]) and blocks in each bin ([`caps_for`] those bytes).
pub(super) struct Limits {
    bytes: AtomicUsize,
    caps: [AtomicU8; CLASSES],
}

impl Limits {
    /// The limits of a front of `bytes`.
    pub fn new(bytes: usize) -> Self {
        let l = Limits {
            bytes: AtomicUsize::new(0),
            caps: [const { AtomicU8::new(1) }; CLASSES],
        };
        l.set(bytes);
        l
    }

    /// Changes the limits to those of a front of `bytes` (racing readers see some of the old
    /// caps and some of the new for a moment: either is a valid limit).
    fn set(&self, bytes: usize) {
        for (cap, v) in self.caps.iter().zip(caps_for(bytes)) {
            cap.store(v, Ordering::Relaxed);
        }
        self.bytes.store(bytes, Ordering::Relaxed);
    }

    /// Bytes a front may hold.
    #[inline(always)]
    pub fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Blocks bin `c` may hold.
    #[inline(always)]
    fn cap(&self, c: usize) -> u8 {
        self.caps[c].load(Ordering::Relaxed)
    }
}

impl Fronts {
    pub(super) fn new() -> Self {
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
            limits: Limits::new(FRONT_MIN_BYTES),
        }
    }

    /// What a front may hold now.
    #[inline(always)]
    pub(super) fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Sizes the fronts' budget for a pool of `pool_size` bytes: 1/[`POOL_SHARE`] of it,
    /// within [`FRONT_MIN_BYTES`] ..= [`FRONT_BYTES`]. Blocks in a front neither merge nor
    /// serve other sizes, so a
    /// front that holds much of a small pool's free memory makes it grow: with 64 MiB fronts
    /// a pool growing from nothing under the streams workload took 1.70 times its peak live
    /// bytes from upstream, against 1.36 times without fronts.
    pub(super) fn set_pool_size(&self, pool_size: usize) {
        let bytes = (pool_size / POOL_SHARE).clamp(FRONT_MIN_BYTES, FRONT_BYTES);
        if bytes != self.limits.bytes() {
            self.limits.set(bytes);
        }
    }

    /// The front of thread slot `slot`.
    #[inline(always)]
    pub(super) fn of(&self, slot: usize) -> &FrontCell {
        let i = slot & (self.list.len() - 1);
        debug_assert!(i < self.list.len());
        // SAFETY: the list's length is a power of two, at least 8 (`new`), so `i` is in it
        // (the check the compiler could not remove: a length of 0 would wrap the mask).
        unsafe { self.list.get_unchecked(i) }
    }

    /// The C ABI's leanest hit path: an allocation from the calling thread's front when the
    /// front is biased to the thread (the pool's `allocate_cached` without its locked way
    /// in). It counts nothing: the caller takes it only while no watcher is on
    /// ([`crate::watchers`]). It makes no call (a call makes the C entry point that inlines
    /// it save registers on every allocation). Anything but [`FrontAnswer::Served`] changed
    /// nothing: after [`FrontAnswer::Missed`] the caller goes to the pool's
    /// `allocate_uncached`, after [`FrontAnswer::NotAsked`] to the full path.
    #[inline(always)]
    pub(crate) fn allocate_hit(&self, bytes: usize, stream: Stream) -> FrontAnswer<*mut c_void> {
        if bytes.wrapping_sub(1) >= FRONT_MAX {
            return FrontAnswer::NotAsked;
        }
        // At most FRONT_MAX: no overflow.
        let rounded = (bytes + ALIGN - 1) & !(ALIGN - 1);
        let Some(me) = known_thread_slot() else {
            return FrontAnswer::NotAsked;
        };
        let Some(mut f) = self.of(me).enter(me) else {
            return FrontAnswer::NotAsked;
        };
        match f.take_for(rounded, stream) {
            Some(p) => FrontAnswer::Served(p as *mut c_void),
            None => FrontAnswer::Missed,
        }
    }

    /// The free's counterpart of [`Self::allocate_hit`]: after [`FrontAnswer::Missed`] the
    /// caller goes to the pool's `deallocate_uncached`.
    #[inline(always)]
    pub(crate) fn deallocate_hit(
        &self,
        ptr: *mut c_void,
        bytes: usize,
        stream: Stream,
    ) -> FrontAnswer<()> {
        let Some(me) = known_thread_slot() else {
            return FrontAnswer::NotAsked;
        };
        let Some(mut f) = self.of(me).enter(me) else {
            return FrontAnswer::NotAsked;
        };
        f.keep_near(ptr as usize, bytes, norm(stream), &self.limits)
    }

    /// How many fronts there are (a power of two).
    pub(super) fn len(&self) -> usize {
        self.list.len()
    }

    /// Every front.
    pub(super) fn all(&self) -> impl Iterator<Item = &FrontCell> {
        self.list.iter()
    }

    /// Takes every front's bias from its owner at once (one heavy fence, not one per
    /// front), before a pass by thread slot `me` that locks them all; `me`'s own front
    /// needs no fence and stays biased.
    pub(super) fn revoke_all(&self, me: usize) {
        crate::mr::biased_lock::revoke_all(self.list.iter().map(|c| &c.0), me);
    }
}

/// What a front's call-free hit path found ([`Fronts::allocate_hit`]).
pub(crate) enum FrontAnswer<T> {
    /// The front served the call.
    Served(T),
    /// The front was asked and could not serve it (nothing changed): the pool's uncached
    /// path answers, without asking the front again.
    Missed,
    /// The front was not asked (not biased to the thread, a size it never holds): the full
    /// path answers.
    NotAsked,
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

#[cfg(test)]
#[path = "front_table_tests.rs"]
mod table_tests;
