//! A lock for state that one thread takes almost always alone: a pool's per-thread front,
//! a fixed-size resource's per-thread shard. Locking is one atomic swap and unlocking a
//! plain store, where a parking mutex's unlock is a second atomic read-modify-write (it
//! must learn whether a waiter sleeps): on x86 each such instruction drains the store
//! buffer, and a shard's allocate or free made two or three of them.
//!
//! A waiter spins briefly, then yields its CPU a while, then sleeps in short naps until the
//! holder is done: holders may make runtime calls (a growth, an event, a device
//! synchronization), and threads sharing a stream share its arena, so a long wait must not
//! keep a CPU busy. Waits are counted as lock waits ([`crate::counters`]).

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::counters::{bump, Counter};

/// Spins before a waiter starts yielding its CPU.
const SPINS: u32 = 64;
/// Yields before it starts napping.
const YIELDS: u32 = 64;
/// A nap: long against a lock held for bookkeeping, short against a runtime call.
const NAP: std::time::Duration = std::time::Duration::from_micros(20);

/// `T` behind a swap-and-store lock (see the module docs).
pub(crate) struct SpinLock<T> {
    locked: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: `value` is only reached through a `SpinGuard`, which holds `locked`, or through
// `&mut self`: one thread at a time has it, as with a mutex.
unsafe impl<T: Send> Sync for SpinLock<T> {}
// SAFETY: moving the lock moves `T`, which is `Send`.
unsafe impl<T: Send> Send for SpinLock<T> {}

/// Exclusive access to a [`SpinLock`]'s value until dropped.
pub(crate) struct SpinGuard<'a, T>(&'a SpinLock<T>);

impl<T> SpinLock<T> {
    pub const fn new(value: T) -> Self {
        SpinLock {
            locked: AtomicBool::new(false),
            value: UnsafeCell::new(value),
        }
    }

    /// Waits for the lock and takes it.
    #[inline(always)]
    pub fn lock(&self) -> SpinGuard<'_, T> {
        if self.locked.swap(true, Ordering::Acquire) {
            self.lock_slow();
        }
        SpinGuard(self)
    }

    /// A pointer to the value, for a lock that can prove exclusive access another way
    /// ([`crate::mr::biased_lock`]); dereferencing it is up to that proof.
    #[inline(always)]
    pub fn data_ptr(&self) -> *mut T {
        self.value.get()
    }

    /// The value, without locking: `&mut self` already excludes every other user.
    pub fn get_mut(&mut self) -> &mut T {
        self.value.get_mut()
    }

    #[cold]
    #[inline(never)]
    fn lock_slow(&self) {
        let mut waits = 0u32;
        loop {
            while self.locked.load(Ordering::Relaxed) {
                if waits < SPINS {
                    std::hint::spin_loop();
                } else if waits < SPINS + YIELDS {
                    std::thread::yield_now();
                } else {
                    std::thread::sleep(NAP);
                }
                waits = waits.saturating_add(1);
            }
            if !self.locked.swap(true, Ordering::Acquire) {
                bump(Counter::LockWaits);
                return;
            }
        }
    }
}

impl<T> std::ops::Deref for SpinGuard<'_, T> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T {
        // SAFETY: this guard holds the lock, so no other reference to the value exists.
        unsafe { &*self.0.value.get() }
    }
}

impl<T> std::ops::DerefMut for SpinGuard<'_, T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`; `&mut self` makes this the only reference from the guard.
        unsafe { &mut *self.0.value.get() }
    }
}

impl<T> Drop for SpinGuard<'_, T> {
    #[inline(always)]
    fn drop(&mut self) {
        self.0.locked.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn threads_take_turns_and_lose_no_update() {
        let lock = Arc::new(SpinLock::new(0u64));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let lock = lock.clone();
                std::thread::spawn(move || {
                    for _ in 0..20_000 {
                        let mut g = lock.lock();
                        // A read and a separate write: an unexcluded thread between them
                        // would lose an increment.
                        let v = *g;
                        std::hint::black_box(&mut *g);
                        *g = v + 1;
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(*lock.lock(), 80_000);
    }

    #[test]
    fn a_waiter_gets_the_lock_when_a_long_holder_lets_go() {
        let lock = Arc::new(SpinLock::new(Vec::new()));
        let g = lock.lock();
        let waiter = {
            let lock = lock.clone();
            std::thread::spawn(move || lock.lock().push(2))
        };
        std::thread::sleep(std::time::Duration::from_millis(20));
        drop(g);
        waiter.join().unwrap();
        lock.lock().insert(0, 1);
        let mut lock = Arc::try_unwrap(lock).ok().expect("the waiter is done");
        assert_eq!(*lock.get_mut(), [1, 2]);
    }
}
