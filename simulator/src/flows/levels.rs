//! The progressive filling's candidates, lowest fair level first.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use super::Direction;

/// The fair levels of a solve's candidates, lowest first, then by their order in the solve
/// (directions, then bundles): the order in which a scan of them all would find the lowest,
/// found in O(log n). A direction is offered again each time its level moves; an entry that
/// is no longer its direction's level is skipped when it comes up.
#[derive(Default)]
pub(super) struct Levels(BinaryHeap<Reverse<Candidate>>);

#[derive(Clone, Copy, PartialEq)]
struct Candidate {
    level: f64,
    order: usize,
}

impl Eq for Candidate {}

impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> Ordering {
        self.level
            .total_cmp(&other.level)
            .then(self.order.cmp(&other.order))
    }
}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Levels {
    pub(super) fn push(&mut self, level: f64, order: usize) {
        self.0.push(Reverse(Candidate { level, order }));
    }

    /// Offers a direction's level while it has unfixed flows.
    pub(super) fn offer_direction(&mut self, d: &Direction) {
        if d.unfixed > 0 {
            self.push(d.level(), d.order);
        }
    }

    pub(super) fn pop(&mut self) -> Option<(f64, usize)> {
        self.0.pop().map(|Reverse(c)| (c.level, c.order))
    }
}
