//! Whether anything watches allocations: the memory history ([`crate::history`]) and the
//! counters ([`crate::counters`]), a copy of their switches for the C ABI's hit paths. One
//! byte holds both, so that those paths learn that nobody watches from one load, where a
//! flag each was two loads, each through the GOT: the switches are read by functions other
//! crates may inline, so they are exported, and an exported static is reached through the
//! GOT. Only the C ABI reads this copy, and it stays local to the library.

use std::sync::atomic::{AtomicU8, Ordering};

/// What may watch allocations: one bit each.
#[derive(Clone, Copy, Debug)]
#[repr(u8)]
pub(crate) enum Watcher {
    /// The memory history is recording.
    History = 1,
    /// The counters are counting.
    Counters = 2,
}

/// The watchers that are on, a bit each.
pub(crate) struct Watchers(AtomicU8);

/// The process's watchers.
pub(crate) static WATCHERS: Watchers = Watchers::new();

impl Watchers {
    const fn new() -> Self {
        Watchers(AtomicU8::new(0))
    }

    /// Turns `w` on or off. Sequentially consistent, as the history's switch always was.
    pub(crate) fn set(&self, w: Watcher, on: bool) {
        if on {
            self.0.fetch_or(w as u8, Ordering::SeqCst);
        } else {
            self.0.fetch_and(!(w as u8), Ordering::SeqCst);
        }
    }

    /// Whether `w` is on.
    #[inline(always)]
    pub(crate) fn on(&self, w: Watcher) -> bool {
        self.0.load(Ordering::Relaxed) & w as u8 != 0
    }

    /// Whether any watcher is on: the hit paths' one test.
    #[inline(always)]
    pub(crate) fn any(&self) -> bool {
        self.0.load(Ordering::Relaxed) != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_watcher_has_its_own_bit_and_any_sees_either() {
        let w = Watchers::new();
        assert!(!w.any());
        w.set(Watcher::History, true);
        assert!(w.on(Watcher::History) && !w.on(Watcher::Counters) && w.any());
        w.set(Watcher::Counters, true);
        w.set(Watcher::History, false);
        assert!(!w.on(Watcher::History) && w.on(Watcher::Counters) && w.any());
        w.set(Watcher::Counters, false);
        assert!(!w.any());
    }
}
