//! A lock biased to the thread that owns its value: that thread enters with plain stores and
//! loads, other threads take a [`SpinLock`] and first revoke the bias with an asymmetric
//! fence. A pool's per-thread front is taken by its owner on every allocation and free and
//! by another thread only to empty it (growth, release, introspection) or to free a block
//! it handed out. The owner's atomic swap, on x86 a full barrier that waits for every
//! earlier store to reach the cache, was about 3% of the C ABI's churn on the host runtime.
//!
//! The protocol is Dekker's, with the fences split unevenly (as in Linux's RCU and Folly's
//! `asymmetric_thread_fence_heavy`):
//! - the owner stores `busy = true`, fences the compiler only, and reads `bias`: still its
//!   own slot, it is inside; on leaving it stores `busy = false` (release);
//! - another thread, holding the lock, stores `bias = NO_BIAS`, makes every running thread
//!   of the process pass a full barrier ([`os::heavy_fence`], `membarrier`), and waits for
//!   `busy` to be false (acquire).
//!
//! After the heavy fence, either the owner's `busy = true` is visible to the revoker (which
//! waits for it to leave), or the owner's next read of `bias` sees the revocation (and it
//! takes the lock instead). The bias comes back when the owner has taken the lock
//! [`REBIAS_AFTER`] times in a row with no other thread taking it in between, so a front
//! that others keep freeing into stays on the lock instead of paying a heavy fence for
//! each of them. Where `membarrier` is unavailable nothing is ever biased: everyone locks.

use std::sync::atomic::{compiler_fence, AtomicBool, AtomicU32, AtomicUsize, Ordering};

use crate::runtime::os;
use crate::spin_lock::{SpinGuard, SpinLock};

/// The bias while nobody may enter without the lock. Thread slots are small numbers, so
/// neither this nor `usize::MAX` (the slot of a thread that is ending) is one.
pub(crate) const NO_BIAS: usize = usize::MAX - 1;

/// The owner's locked entries in a row, with no other thread's in between, before the bias
/// comes back: a revocation costs a few microseconds (an interrupt to each CPU running a
/// thread of the process), a locked entry a few nanoseconds more than a biased one.
pub(crate) const REBIAS_AFTER: u32 = 4096;

/// Whether `me` is a thread's slot (one the lock may be biased to).
#[inline(always)]
fn is_slot(me: usize) -> bool {
    me < NO_BIAS
}

/// A value with an owner: the thread slot that may be biased to.
pub(crate) trait Owned {
    /// The owner's thread slot; any value that is no thread's when there is none.
    fn owner(&self) -> usize;
}

/// `T` behind a lock biased to its owner (see the module docs).
pub(crate) struct BiasedLock<T> {
    /// The owner's slot while it may enter without the lock, else [`NO_BIAS`]. Set and
    /// cleared under the lock.
    bias: AtomicUsize,
    /// True while the biased owner is inside without the lock.
    busy: AtomicBool,
    /// The owner's locked entries since another thread last took the lock (under the lock).
    quiet: AtomicU32,
    lock: SpinLock<T>,
}

/// The biased owner's access: no lock is held, other threads are kept out by `busy`.
pub(crate) struct OwnerGuard<'a, T>(&'a BiasedLock<T>);

/// Access under the lock; on release it gives the bias to the owner after enough quiet
/// entries, or takes it away when the owner changed.
pub(crate) struct LockGuard<'a, T: Owned> {
    cell: &'a BiasedLock<T>,
    me: usize,
    guard: SpinGuard<'a, T>,
}

impl<T: Owned> BiasedLock<T> {
    pub fn new(value: T) -> Self {
        BiasedLock {
            bias: AtomicUsize::new(NO_BIAS),
            busy: AtomicBool::new(false),
            quiet: AtomicU32::new(0),
            lock: SpinLock::new(value),
        }
    }

    /// The owner's way in without the lock: `None` unless the lock is biased to `me` (then
    /// the caller takes [`Self::lock_as`]).
    #[inline(always)]
    pub fn enter(&self, me: usize) -> Option<OwnerGuard<'_, T>> {
        if self.bias.load(Ordering::Relaxed) != me {
            return None;
        }
        self.busy.store(true, Ordering::Relaxed);
        // The light side of the asymmetric fence: a revoker's heavy fence orders this store
        // before the load below as a full barrier would.
        compiler_fence(Ordering::SeqCst);
        if self.bias.load(Ordering::Relaxed) != me {
            self.busy.store(false, Ordering::Release);
            return None;
        }
        Some(OwnerGuard(self))
    }

    /// Takes the lock as thread slot `me`, revoking the bias when it is another thread's.
    #[inline]
    pub fn lock_as(&self, me: usize) -> LockGuard<'_, T> {
        let guard = self.lock.lock();
        let bias = self.bias.load(Ordering::Relaxed);
        if bias != NO_BIAS && bias != me {
            self.revoke();
        }
        if !is_slot(me) || guard.owner() != me {
            self.quiet.store(0, Ordering::Relaxed);
        }
        LockGuard {
            cell: self,
            me,
            guard,
        }
    }

    /// Takes the lock as a thread that owns nothing.
    #[cfg(test)]
    pub fn lock(&self) -> LockGuard<'_, T> {
        self.lock_as(usize::MAX)
    }

    /// Takes the bias from its owner (the caller holds the lock) and waits until the owner
    /// is out.
    #[cold]
    #[inline(never)]
    fn revoke(&self) {
        self.bias.store(NO_BIAS, Ordering::Relaxed);
        os::heavy_fence();
        self.wait_out();
    }

    /// Waits until the owner is out (after a revocation and the heavy fence).
    fn wait_out(&self) {
        let mut spins = 0u32;
        while self.busy.load(Ordering::Acquire) {
            // The owner is inside for a few dozen instructions, unless it was preempted.
            if spins < 128 {
                std::hint::spin_loop();
                spins += 1;
            } else {
                std::thread::yield_now();
            }
        }
    }
}

/// Takes the bias of every lock in `locks` from its owner with one heavy fence, and waits
/// until each owner is out; a lock biased to `me` (the caller's own) needs neither and keeps
/// it. Locks with no bias are not even taken: a pass over many fronts (emptying them before
/// a pool grows) took every lock once more before. A later [`BiasedLock::lock_as`] revokes
/// again only if an owner got its bias back in between.
///
/// Each revoked lock stays held until its owner is out: a thread taking it in between would
/// find no bias to revoke and go in beside the owner. Holding several at once cannot
/// deadlock, since no other path holds two of these locks.
pub(crate) fn revoke_all<'a, T: Owned + 'a>(
    locks: impl Iterator<Item = &'a BiasedLock<T>>,
    me: usize,
) {
    let mut revoked = Vec::new();
    for l in locks {
        let bias = l.bias.load(Ordering::Relaxed);
        if bias == NO_BIAS || bias == me {
            continue;
        }
        let guard = l.lock.lock();
        // Set and cleared under the lock: it may have changed since it was read.
        let bias = l.bias.load(Ordering::Relaxed);
        if bias != NO_BIAS && bias != me {
            l.bias.store(NO_BIAS, Ordering::Relaxed);
            l.quiet.store(0, Ordering::Relaxed);
            revoked.push((l, guard));
        }
    }
    if revoked.is_empty() {
        return;
    }
    os::heavy_fence();
    for (l, _guard) in &revoked {
        l.wait_out();
    }
}

impl<T> std::ops::Deref for OwnerGuard<'_, T> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T {
        // SAFETY: the lock is biased to this thread and `busy` is set: a thread taking the
        // lock waits for `busy` to clear after revoking (module docs), so no other
        // reference to the value exists while this guard lives.
        unsafe { &*self.0.lock.data_ptr() }
    }
}

impl<T> std::ops::DerefMut for OwnerGuard<'_, T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`; `&mut self` makes this the only reference from the guard.
        unsafe { &mut *self.0.lock.data_ptr() }
    }
}

impl<T> Drop for OwnerGuard<'_, T> {
    #[inline(always)]
    fn drop(&mut self) {
        // Release: a revoker that sees `busy` false sees every write made inside.
        self.0.busy.store(false, Ordering::Release);
    }
}

impl<T: Owned> std::ops::Deref for LockGuard<'_, T> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T {
        &self.guard
    }
}

impl<T: Owned> std::ops::DerefMut for LockGuard<'_, T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut T {
        &mut self.guard
    }
}

impl<T: Owned> Drop for LockGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        // Still under the lock (the guard field is dropped after this).
        let cell = self.cell;
        let owner = self.guard.owner();
        if cell.bias.load(Ordering::Relaxed) != NO_BIAS {
            // Biased to this thread (another's bias was revoked when the lock was taken):
            // it stays so only while this thread still owns the value.
            if owner != self.me {
                cell.bias.store(NO_BIAS, Ordering::Relaxed);
            }
        } else if is_slot(self.me) && owner == self.me {
            let quiet = cell.quiet.load(Ordering::Relaxed) + 1;
            if quiet >= REBIAS_AFTER && os::heavy_fence_available() {
                cell.quiet.store(0, Ordering::Relaxed);
                cell.bias.store(self.me, Ordering::Relaxed);
            } else {
                cell.quiet.store(quiet.min(REBIAS_AFTER), Ordering::Relaxed);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A counter owned by slot 0, which records whether someone is inside (atomically: a
    /// plain flag's stores could be merged away, and two threads inside would go unseen).
    struct Counter {
        owner: usize,
        inside: AtomicBool,
        count: u64,
    }

    impl Owned for Counter {
        fn owner(&self) -> usize {
            self.owner
        }
    }

    fn new_counter(owner: usize) -> BiasedLock<Counter> {
        BiasedLock::new(Counter {
            owner,
            inside: AtomicBool::new(false),
            count: 0,
        })
    }

    /// One increment, checking that nobody else is inside.
    fn bump(c: &mut Counter) {
        bump_for(c, 1);
    }

    /// [`bump`] that stays inside for `spins` spin-loop hints.
    fn bump_for(c: &mut Counter, spins: u32) {
        assert!(
            !c.inside.swap(true, Ordering::Relaxed),
            "two threads inside at once"
        );
        c.count += 1;
        for _ in 0..spins {
            std::hint::spin_loop();
        }
        c.inside.store(false, Ordering::Relaxed);
    }

    /// The owner's entry as the pool's fast paths make it: biased, else locked.
    fn owner_bump(l: &BiasedLock<Counter>, me: usize) -> bool {
        owner_bump_for(l, me, 1)
    }

    /// [`owner_bump`] that stays inside for `spins` spin-loop hints when biased.
    fn owner_bump_for(l: &BiasedLock<Counter>, me: usize, spins: u32) -> bool {
        match l.enter(me) {
            Some(mut g) => {
                bump_for(&mut g, spins);
                true
            }
            None => {
                bump(&mut l.lock_as(me));
                false
            }
        }
    }

    #[test]
    fn the_owner_gets_the_bias_after_quiet_locked_entries_and_others_take_it_away() {
        let l = new_counter(0);
        assert!(l.enter(0).is_none(), "not biased before any entry");
        for _ in 0..REBIAS_AFTER {
            assert!(!owner_bump(&l, 0));
        }
        if !os::heavy_fence_available() {
            assert!(l.enter(0).is_none(), "never biased without membarrier");
            return;
        }
        assert!(l.enter(1).is_none(), "biased to its owner only");
        assert!(
            owner_bump(&l, 0),
            "biased after {REBIAS_AFTER} quiet entries"
        );
        // Another thread's entry revokes the bias and restarts the count.
        bump(&mut l.lock_as(1));
        assert!(l.enter(0).is_none());
        for _ in 0..REBIAS_AFTER - 1 {
            assert!(!owner_bump(&l, 0));
        }
        bump(&mut l.lock());
        for _ in 0..REBIAS_AFTER {
            assert!(!owner_bump(&l, 0));
        }
        assert!(owner_bump(&l, 0));
        // An owner that gives its value away loses the bias at once.
        l.lock_as(0).owner = 5;
        assert!(l.enter(0).is_none());
        assert_eq!(l.lock().count, 3 * u64::from(REBIAS_AFTER) + 3);
    }

    #[test]
    fn revoke_all_takes_every_bias_with_one_fence() {
        let locks: Vec<_> = (0..4).map(new_counter).collect();
        for (me, l) in locks.iter().enumerate() {
            for _ in 0..=REBIAS_AFTER {
                owner_bump(l, me);
            }
        }
        // The caller's own lock (slot 2) keeps its bias.
        revoke_all(locks.iter(), 2);
        for (me, l) in locks.iter().enumerate() {
            assert_eq!(
                l.enter(me).is_some(),
                me == 2 && os::heavy_fence_available()
            );
            assert_eq!(l.lock().count, u64::from(REBIAS_AFTER) + 1);
        }
    }

    #[test]
    fn no_thread_gets_in_while_a_revoke_all_waits_for_the_owner() {
        // The owner stays inside for long stretches once biased; a second thread revokes
        // every bias (as a pool does before it grows) and, in that very moment, a third
        // takes the lock. The third must not get in before the owner is out: it sees no
        // bias left to revoke, so it is safe only if the revocation still holds the lock.
        if !os::heavy_fence_available() {
            return;
        }
        let l = Arc::new(new_counter(0));
        let (window, stop) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
        );
        let third = {
            let (l, window, stop) = (l.clone(), window.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    if window.load(Ordering::Acquire) {
                        bump(&mut l.lock_as(1));
                        n += 1;
                    } else {
                        std::thread::yield_now();
                    }
                }
                n
            })
        };
        let revoker = {
            let (l, window, stop) = (l.clone(), window.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut revocations = 0u32;
                while revocations < 200 {
                    if l.bias.load(Ordering::Relaxed) == 0 {
                        window.store(true, Ordering::Release);
                        revoke_all(std::iter::once(&*l), 7);
                        window.store(false, Ordering::Release);
                        revocations += 1;
                    }
                    std::thread::sleep(std::time::Duration::from_micros(200));
                }
                stop.store(true, Ordering::Relaxed);
            })
        };
        let mut mine = 0u64;
        while !stop.load(Ordering::Relaxed) {
            owner_bump_for(&l, 0, 2000);
            mine += 1;
        }
        revoker.join().unwrap();
        let theirs = third
            .join()
            .expect("the third thread found the owner inside");
        assert_eq!(l.lock().count, mine + theirs);
    }

    #[test]
    fn owner_and_others_never_overlap_and_lose_no_update() {
        // The owner makes long quiet runs; two other threads keep taking the lock, every
        // other time once the owner is biased again, so that revocations happen however
        // fast the machine's sleeps are (on idle cores, two threads locking every 50 us
        // never leave the owner REBIAS_AFTER quiet entries). Any overlap trips `bump`'s
        // check; a lost update shows in the sum.
        let l = Arc::new(new_counter(0));
        let stop = Arc::new(AtomicBool::new(false));
        let others: Vec<_> = (1..=2)
            .map(|me| {
                let (l, stop) = (l.clone(), stop.clone());
                std::thread::spawn(move || {
                    let mut n = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        while n % 2 == 1
                            && os::heavy_fence_available()
                            && l.bias.load(Ordering::Relaxed) != 0
                            && !stop.load(Ordering::Relaxed)
                        {
                            std::thread::sleep(std::time::Duration::from_micros(20));
                        }
                        bump(&mut l.lock_as(me));
                        n += 1;
                        std::thread::sleep(std::time::Duration::from_micros(50));
                    }
                    n
                })
            })
            .collect();
        let (mut mine, mut biased) = (0u64, 0u64);
        for _ in 0..400_000 {
            // A thread that found the owner inside has panicked: stop before the long
            // biased stays that nobody revokes any more add up to minutes.
            if others.iter().any(|t| t.is_finished()) {
                break;
            }
            // Inside for a while when biased, so that a revoker that did not wait for the
            // owner to leave would be caught inside with it.
            biased += u64::from(owner_bump_for(&l, 0, 20_000));
            mine += 1;
        }
        stop.store(true, Ordering::Relaxed);
        let theirs: u64 = others.into_iter().map(|t| t.join().unwrap()).sum();
        assert_eq!(l.lock().count, mine + theirs);
        if os::heavy_fence_available() {
            assert!(biased > 0, "the owner never entered biased");
        }
    }
}
