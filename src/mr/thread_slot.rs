//! Dense per-thread slot numbers, recycled when threads end, and thread-exit hooks.
//!
//! A per-thread cache indexed by [`thread_number`](super::stream_ordered::thread_number)
//! modulo a table size lets two live threads collide on one entry as soon as enough threads
//! have come and gone (benchmarks and thread pools start new threads all the time). A slot
//! is instead the smallest number no live thread holds: live threads never share one while
//! there are fewer of them than table entries. A thread's slot is given back (and its exit
//! hooks run) when the thread ends.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Weak;

use parking_lot::Mutex;

use crate::runtime::os;

/// Something with per-thread state to hand back when a thread ends.
pub(crate) trait ThreadExit: Send + Sync {
    /// The thread that held `slot` is ending (its thread-locals are being destroyed).
    fn thread_exited(&self, slot: usize);
}

/// "No slot": the thread's thread-locals are already destroyed (or being destroyed).
pub(crate) const NO_SLOT: usize = usize::MAX;

/// Slots given back by ended threads, reused smallest first.
static FREE: Mutex<Vec<usize>> = Mutex::new(Vec::new());
/// The next never-used slot.
static NEXT: AtomicUsize = AtomicUsize::new(0);

/// The thread's slot and exit hooks; dropped (slot returned) when the thread ends.
struct Holder {
    slot: usize,
    hooks: RefCell<Vec<Weak<dyn ThreadExit>>>,
}

impl Drop for Holder {
    fn drop(&mut self) {
        MINE.with(|m| m.set(NO_SLOT));
        os::set_thread_word(0);
        let hooks = std::mem::take(&mut *self.hooks.borrow_mut());
        if !crate::runtime::process_is_exiting() {
            for hook in hooks.iter().filter_map(Weak::upgrade) {
                hook.thread_exited(self.slot);
            }
        }
        let mut free = FREE.lock();
        free.push(self.slot);
        // Smallest first: keeps live slots dense.
        free.sort_unstable_by(|a, b| b.cmp(a));
    }
}

thread_local! {
    /// The slot, read on hot paths without touching the destructor-registered holder.
    /// `NO_SLOT - 1` until the thread first asks.
    static MINE: Cell<usize> = const { Cell::new(NO_SLOT - 1) };
    static HOLDER: Holder = Holder {
        slot: FREE.lock().pop().unwrap_or_else(|| NEXT.fetch_add(1, Ordering::Relaxed)),
        hooks: RefCell::new(Vec::new()),
    };
}

/// The calling thread's slot (see the module docs), or [`NO_SLOT`] while the thread ends.
#[inline(always)]
pub(crate) fn thread_slot() -> usize {
    // The slot plus one, 0 until `first_slot` stored it.
    let word = os::thread_word();
    if word != 0 {
        return word - 1;
    }
    first_slot()
}

/// The calling thread's slot when it already has one: no call, for paths that must make
/// none (`None` sends them to their full path, which calls [`thread_slot`]).
#[inline(always)]
pub(crate) fn known_thread_slot() -> Option<usize> {
    os::thread_word().checked_sub(1)
}

#[cold]
#[inline(never)]
fn first_slot() -> usize {
    let s = MINE.with(Cell::get);
    if s < NO_SLOT - 1 {
        // Not reached while the thread word holds the slot.
        return s;
    }
    if s == NO_SLOT {
        return NO_SLOT;
    }
    match HOLDER.try_with(|h| h.slot) {
        Ok(slot) => {
            MINE.with(|m| m.set(slot));
            os::set_thread_word(slot + 1);
            slot
        }
        Err(_) => NO_SLOT,
    }
}

/// Runs `hook.thread_exited(slot)` when the calling thread ends (nothing if it is ending).
pub(crate) fn on_thread_exit(hook: Weak<dyn ThreadExit>) {
    let _ = HOLDER.try_with(|h| {
        let mut hooks = h.hooks.borrow_mut();
        hooks.retain(|w| w.strong_count() > 0);
        if !hooks.iter().any(|w| w.ptr_eq(&hook)) {
            hooks.push(hook);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    struct Seen(Mutex<Vec<usize>>);
    impl ThreadExit for Seen {
        fn thread_exited(&self, slot: usize) {
            self.0.lock().push(slot);
        }
    }

    #[test]
    fn live_threads_have_distinct_slots_and_exits_run_hooks() {
        let seen = Arc::new(Seen(Mutex::new(Vec::new())));
        let slots: Vec<usize> = (0..8)
            .map(|_| {
                let seen = seen.clone();
                std::thread::spawn(move || {
                    let s = thread_slot();
                    assert_eq!(thread_slot(), s);
                    on_thread_exit(Arc::downgrade(&seen) as _);
                    on_thread_exit(Arc::downgrade(&seen) as _); // once only
                    s
                })
                .join()
                .unwrap()
            })
            .collect();
        assert_eq!(
            *seen.0.lock(),
            slots,
            "one hook call per thread, with its slot"
        );
        // Sequential threads reuse a slot instead of taking new ones.
        let distinct: std::collections::BTreeSet<_> = slots.iter().collect();
        assert!(distinct.len() < 8, "{slots:?}");

        // Threads alive together never share a slot.
        let barrier = Arc::new(std::sync::Barrier::new(6));
        let handles: Vec<_> = (0..6)
            .map(|_| {
                let b = barrier.clone();
                std::thread::spawn(move || {
                    let s = thread_slot();
                    b.wait();
                    s
                })
            })
            .collect();
        let mut together: Vec<usize> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        together.sort_unstable();
        together.dedup();
        assert_eq!(together.len(), 6);
    }
}
