//! A partition's event queue: events bucketed by time.
//!
//! A GPU model has many events at each instant (every compute unit ticks
//! on the same clock edge), so the queue keeps one bucket per pending time
//! in a `BTreeMap` and sorts a bucket by key once, when it becomes the
//! earliest; events then come out of it in O(1). An event for the instant
//! being run (a zero-latency link or delay) is inserted into the sorted
//! bucket at its place.

use std::collections::BTreeMap;

use crate::engine::Event;
use crate::time::Time;

pub(crate) struct EventQueue<M> {
    /// The events of the earliest time, sorted by key, latest first (they
    /// are popped from the end).
    current: Vec<Event<M>>,
    /// The time of `current`'s events (meaningless while it is empty).
    current_time: Time,
    /// Later times' events, unsorted.
    later: BTreeMap<Time, Vec<Event<M>>>,
    /// Emptied buckets, kept for their allocations.
    spare: Vec<Vec<Event<M>>>,
}

impl<M> Default for EventQueue<M> {
    fn default() -> Self {
        EventQueue {
            current: Vec::new(),
            current_time: 0,
            later: BTreeMap::new(),
            spare: Vec::new(),
        }
    }
}

impl<M> EventQueue<M> {
    pub(crate) fn push(&mut self, ev: Event<M>) {
        let t = ev.time();
        if !self.current.is_empty() {
            if t == self.current_time {
                let at = self.current.partition_point(|e| e.key > ev.key);
                self.current.insert(at, ev);
                return;
            }
            if t < self.current_time {
                // Earlier than the loaded bucket (a message collected from
                // another partition): put the bucket back with the others.
                let bucket = std::mem::take(&mut self.current);
                self.later.insert(self.current_time, bucket);
            }
        }
        let spare = &mut self.spare;
        self.later
            .entry(t)
            .or_insert_with(|| spare.pop().unwrap_or_default())
            .push(ev);
    }

    /// The time of the earliest event.
    pub(crate) fn next_time(&self) -> Option<Time> {
        if self.current.is_empty() {
            self.later.first_key_value().map(|(&t, _)| t)
        } else {
            Some(self.current_time)
        }
    }

    /// Removes the earliest event (by key).
    pub(crate) fn pop(&mut self) -> Option<Event<M>> {
        if self.current.is_empty() {
            let (t, mut bucket) = self.later.pop_first()?;
            bucket.sort_unstable_by_key(|e| std::cmp::Reverse(e.key));
            let empty = std::mem::replace(&mut self.current, bucket);
            self.spare.push(empty);
            self.current_time = t;
        }
        self.current.pop()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::pack;

    fn ev(time: Time, src: u32, seq: u64) -> Event<()> {
        Event {
            key: pack(time, src, seq),
            dst_local: 0,
            port: 0,
            msg: (),
        }
    }

    /// Pushes and pops interleaved as a run does them, against a sorted
    /// list: events at the current instant, earlier ones, later ones.
    #[test]
    fn pops_in_key_order() {
        let mut q = EventQueue::default();
        let mut model: Vec<u128> = Vec::new();
        let mut state = 0x1234_5678_u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            state >> 33
        };
        let mut popped = Vec::new();
        let mut now = 0;
        for i in 0..20_000u64 {
            let r = next();
            if r % 3 == 0 && !model.is_empty() {
                let e = q.pop().unwrap();
                assert_eq!(Some(e.key), model.first().copied());
                model.remove(0);
                now = e.time();
                popped.push(e.key);
                assert_eq!(q.next_time(), model.first().map(|k| (k >> 64) as Time));
            } else {
                // Mostly at or after the last popped time (a delay or a
                // link), sometimes before it (mail from another partition).
                let t = match r % 7 {
                    0 => now,
                    1 => now.saturating_sub(next() % 3),
                    _ => now + next() % 5,
                };
                let e = ev(t, (next() % 6) as u32, i);
                let at = model.partition_point(|&k| k < e.key);
                model.insert(at, e.key);
                q.push(e);
            }
        }
        while let Some(e) = q.pop() {
            assert_eq!(e.key, model.remove(0));
        }
        assert!(model.is_empty() && q.next_time().is_none());
        assert!(popped.len() > 5_000);
    }
}
