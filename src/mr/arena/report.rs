//! What an arena reports: its free bytes, and on failure its out-of-memory error with,
//! when asked, a dump of every local arena's state.

use std::fmt::Write as _;

use super::{Inner, NAME};
use crate::error::Error;

impl Inner {
    pub(super) fn bytes_free(&self) -> usize {
        let global = self.global.lock().heap.bytes_free();
        global
            + self
                .all_arenas()
                .iter()
                .map(|a| a.state.lock().free_bytes())
                .sum::<usize>()
    }

    /// The state of every arena, one line each (for the failure dump).
    pub(super) fn dump(&self) -> (String, String) {
        let mut out = String::new();
        let mut total_sb = 0;
        let mut local_free = 0;
        let arenas = self.all_arenas();
        for a in &arenas {
            let st = a.state.lock();
            let free = st.free_bytes();
            let largest = st.largest_free();
            let frag = if free == 0 {
                0.0
            } else {
                100.0 * (1.0 - largest as f64 / free as f64)
            };
            total_sb += st.sb_count;
            local_free += free;
            let _ = writeln!(
                out,
                "  arena {} ({:?}{}): {} superblocks, {} bytes owned, {free} bytes free, \
                 {} live blocks ({} bytes beyond their requests), largest free block \
                 {largest}, fragmentation {frag:.1}%",
                a.id,
                a.kind,
                if st.retired { ", retired" } else { "" },
                st.sb_count,
                st.owned_bytes,
                st.live_blocks(),
                st.slack(),
            );
        }
        let (takes, gives, large, large_live, calls) = {
            let g = self.global.lock();
            (g.takes, g.gives, g.large_takes, g.large.len(), g.calls)
        };
        let summary = format!(
            "{} local arenas hold {total_sb} superblocks with {local_free} bytes free; \
             {takes} superblocks taken from and {gives} returned to the global arena so far; \
             {large} large allocations served by the global arena so far, {large_live} live; \
             ordering spans took {} event records, {} waits, {} queries, {} host \
             synchronizations",
            arenas.len(),
            calls.records,
            calls.waits,
            calls.queries,
            calls.syncs
        );
        (summary, out)
    }

    pub(super) fn oom(&self, requested: usize) -> Error {
        let (gfree, glargest, pending) = {
            let g = self.global.lock();
            (g.heap.bytes_free(), g.heap.largest_free(), g.outstanding())
        };
        let mut detail = format!(
            "arena size {} bytes, {gfree} bytes free in the global arena, largest free span \
             {glargest} bytes",
            self.size
        );
        if self.dump_log_on_failure {
            let (summary, lines) = self.dump();
            log::warn!(
                "{NAME}: out of memory allocating {requested} bytes: {detail}; \
                 {pending} release records pending\n{lines}"
            );
            let _ = write!(detail, "; dump: {summary}");
        }
        Error::OutOfMemory {
            requested,
            resource: NAME,
            device: self.device,
            detail,
        }
    }
}

pub(super) fn wrong_size(p: usize, bytes: usize, actual: usize, size: usize) -> Error {
    Error::invalid(format!(
        "{NAME}: cannot free {p:#x} with {bytes} bytes: it was allocated with a size that \
         rounds to {actual} bytes, not {size}"
    ))
}
