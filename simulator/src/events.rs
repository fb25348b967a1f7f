//! The event kernel: simulated time and the pending events, which can be cancelled.
//!
//! Events at equal times fire in the order they were scheduled, so the same inputs give
//! identical runs. A cancelled event stays in the queue and is dropped when it comes up
//! (cancelling is O(1); the shared resources cancel their finish event at every change).

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashSet};

/// A scheduled event, to cancel it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EventId(u64);

/// Pending events of kind `K`, and the time of the last one fired.
pub struct Events<K> {
    queue: BinaryHeap<Entry<K>>,
    scheduled: u64,
    cancelled: HashSet<u64>,
    now: f64,
    fired: u64,
}

struct Entry<K> {
    time: f64,
    seq: u64,
    kind: K,
}

impl<K> PartialEq for Entry<K> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl<K> Eq for Entry<K> {}

impl<K> PartialOrd for Entry<K> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<K> Ord for Entry<K> {
    /// Reversed, so that the max-heap pops the earliest (time, sequence) first.
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .time
            .total_cmp(&self.time)
            .then_with(|| other.seq.cmp(&self.seq))
    }
}

impl<K> Default for Events<K> {
    fn default() -> Self {
        Events {
            queue: BinaryHeap::new(),
            scheduled: 0,
            cancelled: HashSet::new(),
            now: 0.0,
            fired: 0,
        }
    }
}

impl<K> Events<K> {
    /// The time of the event fired last [s].
    pub fn now(&self) -> f64 {
        self.now
    }

    /// Events fired so far (cancelled ones not counted).
    pub fn fired(&self) -> u64 {
        self.fired
    }

    /// Schedules `kind` at `time`; a time before now fires at once, at now.
    pub fn schedule(&mut self, time: f64, kind: K) -> EventId {
        self.scheduled += 1;
        self.queue.push(Entry {
            time: time.max(self.now),
            seq: self.scheduled,
            kind,
        });
        EventId(self.scheduled)
    }

    /// Makes a pending event not fire. Only pending events may be cancelled: the id of one
    /// that fired would be kept until the run ends.
    pub fn cancel(&mut self, id: EventId) {
        self.cancelled.insert(id.0);
    }

    /// Fires the next event: advances now to its time and hands it out.
    pub fn fire_next(&mut self) -> Option<K> {
        while let Some(entry) = self.queue.pop() {
            if !self.cancelled.is_empty() && self.cancelled.remove(&entry.seq) {
                continue;
            }
            self.now = entry.time;
            self.fired += 1;
            return Some(entry.kind);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(events: &mut Events<&'static str>) -> Vec<(f64, &'static str)> {
        std::iter::from_fn(|| events.fire_next().map(|e| (events.now(), e))).collect()
    }

    #[test]
    fn a_cancelled_event_does_not_fire_and_the_rest_keep_their_order() {
        let mut events = Events::default();
        events.schedule(2.0, "b");
        let c = events.schedule(1.0, "c");
        events.schedule(2.0, "d");
        events.schedule(1.0, "e");
        events.cancel(c);
        assert_eq!(drain(&mut events), [(1.0, "e"), (2.0, "b"), (2.0, "d")]);
        assert_eq!(events.fired(), 3);
    }

    #[test]
    fn an_event_scheduled_in_the_past_fires_now() {
        let mut events = Events::default();
        events.schedule(5.0, "late");
        assert_eq!(events.fire_next(), Some("late"));
        events.schedule(1.0, "past");
        assert_eq!(drain(&mut events), [(5.0, "past")]);
    }

    #[test]
    fn cancelling_the_only_event_leaves_none() {
        let mut events = Events::default();
        let only = events.schedule(1.0, "only");
        events.cancel(only);
        assert_eq!(events.fire_next(), None);
        assert_eq!(events.fired(), 0);
    }
}
