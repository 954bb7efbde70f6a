//! Stream ordering inside one structure: the free epochs that make memory freed on one
//! stream ready for all (see [`Epochs`]), and taking another stream's free memory when a
//! stream runs short ([`Inner::steal`]).

use std::ffi::c_void;

use super::block::Inner;
use crate::error::Result;
use crate::mr::free_index::NIL;
use crate::mr::stream_ordered::{EPOCH_EVENTS, READY};

/// The free epochs of one stream slot of a pool structure. Memory freed on stream T may
/// be used by another stream S only once the work enqueued on T before the free has
/// completed. Rather than make S wait on an event recorded on T whenever S runs short (a
/// record, a wait, and the block moves to S only), the structure records an *epoch* event
/// on T every [`Inner::epoch_bytes`] bytes freed there, during a free on T, and queries it
/// later, without waiting: once it has completed, every block freed on T before it moves
/// to the [`READY`] slot, where it merges with its free neighbours whichever stream freed
/// them and serves any stream with no event. Only structures that have taken memory
/// across streams do this (a single stream never needs it). Under the streams workload
/// (each block freed on another stream than the one it was allocated on), a growing pool
/// took 1.70 times its peak live bytes from upstream before: per-stream lists that cannot
/// merge with each other fragment it.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Epochs {
    /// The tag of blocks freed on the slot now (the next epoch to record).
    pub(super) cur: u16,
    /// The oldest recorded epoch not yet seen complete, when `outstanding > 0`.
    pub(super) oldest: u16,
    /// Recorded epochs not yet seen complete: `oldest ..` (at most [`EPOCH_EVENTS`]).
    pub(super) outstanding: u16,
    /// Bytes freed on the slot since its last record or query.
    pub(super) since: usize,
    /// [`Inner::switches`] at the slot's last record.
    pub(super) seen: u32,
}

impl Inner {
    /// Bytes freed on a stream slot between two epoch events (see [`Epochs`]): a 128th of
    /// the structure, at least 1 MiB; in contiguous mode (whose point is to hold little
    /// memory) a 512th, at least 512 KiB. Each epoch costs a record and a query or two, and
    /// a slot holds back at most about two epochs from the other streams. Under the streams
    /// workload a pool took 1.36 times its peak live bytes with a 64th, 1.28 times with a
    /// 128th and with a 256th, recording 0.019, 0.036 and 0.048 events per operation. With
    /// best fit in class lists (`SCAN`), a contiguous pool took 1.27 times with a 128th,
    /// 1.23 times with a 256th, 1.18 times with a 512th (0.077 events per operation, as one
    /// stream does).
    #[inline]
    pub(super) fn epoch_bytes(&self) -> usize {
        if self.granule != 0 {
            (self.pool_size / 512).max(1 << 19)
        } else {
            (self.pool_size / 128).max(1 << 20)
        }
    }

    /// After `bytes` were freed on slot `s` by an operation on its stream: advances its
    /// free epochs (see [`Epochs`]) when this structure takes memory across streams.
    #[inline(always)]
    pub(super) fn after_free(&mut self, s: u32, bytes: usize) {
        if self.multi {
            self.advance_epoch(s, bytes);
        }
    }

    #[inline(never)]
    pub(super) fn advance_epoch(&mut self, s: u32, bytes: usize) {
        let threshold = self.epoch_bytes();
        let e = &mut self.epochs[s as usize];
        e.since += bytes;
        if e.since < threshold {
            return;
        }
        e.since = 0;
        self.poll(s);
        if self.epochs[s as usize].seen != self.switches {
            self.record(s);
        }
    }

    /// Records slot `s`'s next epoch (during an operation on its stream), unless
    /// [`EPOCH_EVENTS`] are outstanding.
    pub(super) fn record(&mut self, s: u32) {
        let e = self.epochs[s as usize];
        if usize::from(e.outstanding) < EPOCH_EVENTS && self.streams.record_epoch(s, e.cur) {
            self.epoch_recorded(s);
        }
    }

    /// Counts slot `s`'s epoch `cur` as recorded: blocks freed on `s` from now on belong
    /// to the next one.
    pub(super) fn epoch_recorded(&mut self, s: u32) {
        let switches = self.switches;
        let e = &mut self.epochs[s as usize];
        if e.outstanding == 0 {
            e.oldest = e.cur;
        }
        e.outstanding += 1;
        e.cur = e.cur.wrapping_add(1);
        e.seen = switches;
    }

    /// Orders slot `s` after slot `t` before using `t`'s free memory, with an epoch event
    /// of `t` when one can be recorded (then all of `t`'s free memory becomes ready for
    /// every stream once it completes, and the next miss on `s` finds it there with no
    /// event). Returns `true` when the device was synchronized instead (see
    /// [`StreamRegistry::order_after`](crate::mr::stream_ordered::StreamRegistry::order_after)).
    pub(super) fn order_after(&mut self, s: u32, t: u32) -> Result<bool> {
        let e = self.epochs[t as usize];
        if usize::from(e.outstanding) < EPOCH_EVENTS
            && self.streams.order_after_epoch(s, t, e.cur)?
        {
            self.epoch_recorded(t);
            return Ok(false);
        }
        self.streams.order_after(s, t)
    }

    /// Queries slot `t`'s outstanding epochs, oldest first, and ripens up to the last one
    /// that has completed.
    pub(super) fn poll(&mut self, t: u32) {
        let mut done = None;
        loop {
            let e = self.epochs[t as usize];
            if e.outstanding == 0 || !self.streams.epoch_done(t, e.oldest) {
                break;
            }
            done = Some(e.oldest);
            let e = &mut self.epochs[t as usize];
            e.oldest = e.oldest.wrapping_add(1);
            e.outstanding -= 1;
        }
        if let Some(done) = done {
            self.ripen(t, done);
        }
    }

    /// Records slot `s`'s next epoch now (during an operation on its stream), so that every
    /// block on its list (just gathered from other streams) becomes ready once it
    /// completes.
    pub(super) fn seal(&mut self, s: u32) {
        if self.multi && s != READY {
            self.record(s);
        }
    }

    /// Moves every free block of slot `t` freed up to epoch `done` (completed) to
    /// [`READY`] (merging there).
    pub(super) fn ripen(&mut self, t: u32, done: u16) {
        let mut fl_bits = self.lists[t as usize].fl_bitmap;
        while fl_bits != 0 {
            let fl = fl_bits.trailing_zeros() as usize;
            fl_bits &= fl_bits - 1;
            let mut sl_bits = self.lists[t as usize].sl_bitmap[fl];
            while sl_bits != 0 {
                let sl = sl_bits.trailing_zeros() as usize;
                sl_bits &= sl_bits - 1;
                let mut i = self.lists[t as usize].heads[fl][sl];
                while i != NIL {
                    let b = *self.blk(i);
                    // Tags in a list are at most EPOCH_EVENTS + 1 epochs apart: no
                    // wrap-around issue.
                    if done.wrapping_sub(b.tag) < u16::MAX / 2 {
                        // Merging in READY never touches `t`'s blocks: `next_free` holds.
                        self.list_remove(i);
                        self.free_insert(i, READY);
                    }
                    i = b.next_free;
                }
            }
        }
    }

    /// Moves to [`READY`] what every slot's completed epoch event covers (the slow path,
    /// before taking memory from another stream with an event).
    pub(super) fn ripen_all(&mut self) {
        for t in 1..self.lists.len() as u32 {
            self.poll(t);
        }
    }

    /// The allocation path when stream slot `s` has no fitting block, before growing: take
    /// another stream's free memory (ordered after it).
    pub(super) fn steal(&mut self, rounded: usize, s: u32) -> Result<Option<*mut c_void>> {
        // Nothing moves for a request that all the free memory could not serve: a failed
        // request changes nothing.
        if self.multi && self.bytes_free >= rounded {
            self.ripen_all();
            if let Some(i) = self.find(READY, rounded) {
                return Ok(Some(self.take(i, rounded, s)));
            }
        }
        // Path 1: a stream whose free memory has a fitting block. Only that block moves
        // (after the event), not the stream's whole list: with many threads, moving whole
        // lists made them bounce between streams at O(free blocks) per miss.
        for t in 0..self.lists.len() as u32 {
            if t != s {
                if let Some(i) = self.find(t, rounded) {
                    self.multi = true;
                    if self.order_after(s, t)? {
                        // The device was synchronized: all of `t`'s memory is safe here.
                        self.merge_stream(t, s);
                        self.seal(s);
                        if let Some(i) = self.find(s, rounded) {
                            return Ok(Some(self.take(i, rounded, s)));
                        }
                    } else {
                        // `s` is ordered after `t`: carve the request out of `t`'s block,
                        // whose rest stays `t`'s (moving the whole block to `s` scattered
                        // large free blocks over the streams).
                        return Ok(Some(self.take(i, rounded, s)));
                    }
                }
            }
        }
        // Path 2: enough bytes are free over all streams that merging them may create a
        // block that fits: gather every stream's free memory here before growing. Each
        // free block moves at most once per time it is freed, so this stays amortized O(1).
        if self.bytes_free >= rounded {
            for t in 0..self.lists.len() as u32 {
                if t != s && self.lists[t as usize].fl_bitmap != 0 {
                    self.multi = true;
                    self.streams.order_after(s, t)?;
                    self.merge_stream(t, s);
                }
            }
            // What merged here is `s`'s now: make it ready for every stream soon.
            self.seal(s);
            if let Some(i) = self.find(s, rounded) {
                return Ok(Some(self.take(i, rounded, s)));
            }
        }
        Ok(None)
    }
}
