//! A resource shared by the activities on it: a link direction's bandwidth, a node's cores.
//!
//! The resource has `capacity` units and an activity can use at most one (a transfer runs
//! at most at the link's full rate, a process computes on at most one core), so the max-min
//! fair share of each of `n` active activities is `min(1, capacity / n)` of a unit: SimGrid's
//! flow model on one resource. An activity's work is the time it would take with a unit to
//! itself; under sharing it progresses at its share.
//!
//! All active activities progress at the same rate, so the resource keeps one clock of
//! progress (the work each activity has done since the resource started: processor-sharing
//! virtual time) and each activity's finish as a point on that clock. A join, a finish and
//! the next finish's time cost O(log n) whatever the number of activities, which a million
//! transfers on one link need.

use std::cmp::Ordering;

use crate::quad_heap::QuadHeap;

/// Relative rounding under which an activity counts as due.
const DUE: f64 = 1e-12;

/// Activities `T` sharing a resource of `capacity` units.
#[derive(Debug)]
pub struct Shared<T> {
    capacity: f64,
    /// The fraction of a unit's speed a unit runs at (a link direction slowed by traffic the
    /// other way).
    speed: f64,
    /// Work done by each activity active since the resource started [s].
    progress: f64,
    /// When `progress` was last brought up to date [s].
    updated: f64,
    active: QuadHeap<Active<T>>,
    joined: u64,
}

#[derive(Debug)]
struct Active<T> {
    /// The value of `progress` at which the activity is done.
    finish: f64,
    order: u64,
    item: T,
}

impl<T> PartialEq for Active<T> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl<T> Eq for Active<T> {}

impl<T> PartialOrd for Active<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<T> Ord for Active<T> {
    /// Reversed, so that the max-heap pops the earliest finish (then the first joined).
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .finish
            .total_cmp(&self.finish)
            .then_with(|| other.order.cmp(&self.order))
    }
}

impl<T> Shared<T> {
    /// A resource of `capacity` units (at least one activity runs at full rate).
    pub fn new(capacity: f64) -> Self {
        Shared {
            capacity: capacity.max(1.0),
            speed: 1.0,
            progress: 0.0,
            updated: 0.0,
            active: QuadHeap::default(),
            joined: 0,
        }
    }

    /// The share of a unit each active activity gets, times the speed.
    pub fn rate(&self) -> f64 {
        let share = match self.active.len() {
            0 => 1.0,
            n => (self.capacity / n as f64).min(1.0),
        };
        share * self.speed
    }

    /// Whether an activity is active.
    pub fn is_busy(&self) -> bool {
        !self.active.is_empty()
    }

    /// Runs the units at `speed` from `now` on; says whether that changed it.
    pub fn set_speed(&mut self, now: f64, speed: f64) -> bool {
        if speed == self.speed {
            return false;
        }
        self.bring_up_to(now);
        self.speed = speed;
        true
    }

    fn bring_up_to(&mut self, now: f64) {
        if now > self.updated {
            self.progress += self.rate() * (now - self.updated);
            self.updated = now;
        }
    }

    /// Starts `item`, which needs `work` seconds with a unit to itself, at `now`.
    pub fn join(&mut self, now: f64, work: f64, item: T) {
        self.bring_up_to(now);
        self.joined += 1;
        self.active.push(Active {
            finish: self.progress + work.max(0.0),
            order: self.joined,
            item,
        });
    }

    /// When the next activity will be done at the current shares, if any is active.
    pub fn next_finish(&self) -> Option<f64> {
        let first = self.active.peek()?;
        Some(self.updated + (first.finish - self.progress).max(0.0) / self.rate())
    }

    /// Ends the activities due at `now`, in the order of their finish, then of joining; none
    /// if `now` is before [`Self::next_finish`].
    pub fn finish_due(&mut self, now: f64) -> Vec<T> {
        self.bring_up_to(now);
        let mut done = Vec::new();
        while let Some(first) = self.active.peek() {
            // At the time next_finish gave, the clock reaches the finish up to rounding: set
            // it there, so that activities due at the same point end together and none is
            // left a rounding error short.
            if first.finish > self.progress + DUE * first.finish.abs().max(1.0) {
                break;
            }
            self.progress = self.progress.max(first.finish);
            if let Some(a) = self.active.pop() {
                done.push(a.item);
            }
        }
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Runs `joins` (time, work) on a resource of `capacity`; the finish time of each.
    fn finish_times(capacity: f64, joins: &[(f64, f64)]) -> Vec<f64> {
        let mut shared = Shared::new(capacity);
        let mut finished = vec![f64::NAN; joins.len()];
        let mut next_join = 0;
        loop {
            let join_at = joins.get(next_join).map(|j| j.0);
            match (join_at, shared.next_finish()) {
                (Some(t), finish) if finish.is_none_or(|f| t < f) => {
                    shared.join(t, joins[next_join].1, next_join);
                    next_join += 1;
                }
                (_, Some(f)) => {
                    for i in shared.finish_due(f) {
                        finished[i] = f;
                    }
                }
                (None, None) => return finished,
                (Some(_), None) => unreachable!("the first arm takes a join when nothing is active"),
            }
        }
    }

    fn assert_close(got: &[f64], want: &[f64]) {
        let close = got.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-12);
        assert!(close && got.len() == want.len(), "{got:?} != {want:?}");
    }

    #[test]
    fn two_activities_on_one_unit() {
        // Worked by hand: A (2 s) alone until 0.5 s, then with B (1 s) at half rate each: B
        // ends at 0.5 + 2 = 2.5 s, A has 0.5 s left, alone again: 3.0 s.
        assert_close(&finish_times(1.0, &[(0.0, 2.0), (0.5, 1.0)]), &[3.0, 2.5]);
    }

    #[test]
    fn three_activities_on_two_units() {
        // Worked by hand: A (3 s) and B (1 s) at full rate until 0.5 s; then three at 2/3: B
        // ends at 0.5 + 0.5 / (2/3) = 1.25 s; A (2 s left) and C (1.5 s left) at full rate
        // again: C at 2.75 s, A at 3.25 s.
        assert_close(
            &finish_times(2.0, &[(0.0, 3.0), (0.0, 1.0), (0.5, 2.0)]),
            &[3.25, 1.25, 2.75],
        );
    }

    #[test]
    fn activities_due_together_end_together_in_joining_order() {
        let mut shared = Shared::new(1.0);
        for i in 0..3 {
            shared.join(0.0, 1.0, i);
        }
        assert_eq!(shared.next_finish(), Some(3.0));
        assert_eq!(shared.finish_due(3.0), [0, 1, 2]);
        assert_eq!(shared.next_finish(), None);
    }

    proptest! {
        /// No activity ends before its work alone would; with a unit each, all end exactly
        /// then; and the last ends no earlier than the total work over the capacity allows,
        /// and no later than doing the works one after another would.
        #[test]
        fn shares_are_fair_and_work_conserving(
            capacity in 1u32..4,
            works in proptest::collection::vec(0.01f64..10.0, 1..12),
        ) {
            let joins: Vec<(f64, f64)> = works.iter().map(|&w| (0.0, w)).collect();
            let finished = finish_times(f64::from(capacity), &joins);
            for (f, w) in finished.iter().zip(&works) {
                prop_assert!(*f >= w - 1e-9);
            }
            let total: f64 = works.iter().sum();
            let longest = works.iter().cloned().fold(0.0, f64::max);
            let last = finished.iter().cloned().fold(0.0, f64::max);
            if works.len() <= capacity as usize {
                prop_assert!((last - longest).abs() < 1e-9);
            }
            prop_assert!(last >= (total / f64::from(capacity)).max(longest) - 1e-9);
            prop_assert!(last <= total + 1e-9);
        }
    }
}
