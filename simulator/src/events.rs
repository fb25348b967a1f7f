//! The event kernel: simulated time and the pending events, which can be cancelled.
//!
//! Events at equal times fire in the order they were scheduled, so the same inputs give
//! identical runs. The queue orders small keys (time, sequence, slot) and the events
//! themselves wait in a slab of slots, so that a run with a million pending events moves 24
//! bytes per heap step, not the event; cancelling empties the event's slot (O(1)), and the
//! key is dropped when it comes up.

use std::cmp::Ordering;

use crate::quad_heap::QuadHeap;

/// A scheduled event, to cancel it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EventId {
    slot: usize,
    seq: u64,
}

/// Pending events of kind `K`, and the time of the last one fired.
pub struct Events<K> {
    queue: QuadHeap<Key>,
    /// Per slot, the pending event and its sequence number; none once cancelled.
    slots: Vec<Option<(u64, K)>>,
    free: Vec<usize>,
    scheduled: u64,
    now: f64,
    fired: u64,
}

struct Key {
    time: f64,
    seq: u64,
    slot: usize,
}

impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Key {}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
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
            queue: QuadHeap::default(),
            slots: Vec::new(),
            free: Vec::new(),
            scheduled: 0,
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
        let seq = self.scheduled;
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot] = Some((seq, kind));
                slot
            }
            None => {
                self.slots.push(Some((seq, kind)));
                self.slots.len() - 1
            }
        };
        self.queue.push(Key {
            time: time.max(self.now),
            seq,
            slot,
        });
        EventId { slot, seq }
    }

    /// Makes a pending event not fire; an event that fired or was cancelled is left alone.
    pub fn cancel(&mut self, id: EventId) {
        if let Some(slot) = self.slots.get_mut(id.slot) {
            if slot.as_ref().is_some_and(|(seq, _)| *seq == id.seq) {
                *slot = None;
            }
        }
    }

    /// The time of the next event to fire, if any is left (cancelled ones are dropped on
    /// the way).
    pub fn next_time(&mut self) -> Option<f64> {
        while let Some(key) = self.queue.peek() {
            if self.slots[key.slot].is_some() {
                return Some(key.time);
            }
            if let Some(cancelled) = self.queue.pop() {
                self.free.push(cancelled.slot);
            }
        }
        None
    }

    /// Fires the next event: advances now to its time and hands it out.
    pub fn fire_next(&mut self) -> Option<K> {
        while let Some(key) = self.queue.pop() {
            let event = self.slots[key.slot].take();
            self.free.push(key.slot);
            if let Some((_, kind)) = event {
                self.now = key.time;
                self.fired += 1;
                return Some(kind);
            }
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

    #[test]
    fn cancelling_an_event_that_fired_leaves_the_one_now_in_its_slot() {
        let mut events = Events::default();
        let first = events.schedule(1.0, "first");
        assert_eq!(events.fire_next(), Some("first"));
        events.schedule(2.0, "second");
        events.cancel(first);
        assert_eq!(drain(&mut events), [(2.0, "second")]);
    }
}
