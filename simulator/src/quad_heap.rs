//! A priority queue for the event kernel and shared resources: a 4-ary max-heap.
//!
//! With a million pending events a binary heap's pop walks 20 levels, each a cache miss once
//! the heap outgrows the caches; four children to a node halve the levels, and the four lie
//! in two cache lines (docs/PERFORMANCE.md, issue 46). Items pop greatest first, as from
//! `std::collections::BinaryHeap`; with totally ordered, distinct items (the kernel's keys)
//! the order is the same as that heap's.

const ARITY: usize = 4;

#[derive(Debug)]
pub struct QuadHeap<T> {
    items: Vec<T>,
}

impl<T> Default for QuadHeap<T> {
    fn default() -> Self {
        QuadHeap { items: Vec::new() }
    }
}

impl<T: Ord> QuadHeap<T> {
    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The greatest item.
    pub fn peek(&self) -> Option<&T> {
        self.items.first()
    }

    pub fn push(&mut self, item: T) {
        self.items.push(item);
        self.sift_up(self.items.len() - 1);
    }

    /// The greatest item, taken out.
    pub fn pop(&mut self) -> Option<T> {
        let last = self.items.pop()?;
        if self.items.is_empty() {
            return Some(last);
        }
        let top = std::mem::replace(&mut self.items[0], last);
        self.sift_down(0);
        Some(top)
    }

    fn sift_up(&mut self, mut at: usize) {
        while at > 0 {
            let parent = (at - 1) / ARITY;
            if self.items[at] <= self.items[parent] {
                break;
            }
            self.items.swap(at, parent);
            at = parent;
        }
    }

    fn sift_down(&mut self, mut at: usize) {
        loop {
            let first = at * ARITY + 1;
            let children = first..(first + ARITY).min(self.items.len());
            let Some(greatest) = children.max_by(|&a, &b| self.items[a].cmp(&self.items[b])) else {
                return;
            };
            if self.items[greatest] <= self.items[at] {
                return;
            }
            self.items.swap(at, greatest);
            at = greatest;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Items pop in the order of `BinaryHeap`'s pops, pushes and pops interleaved.
        #[test]
        fn pops_as_the_standard_heap_does(steps in proptest::collection::vec(proptest::option::of(0u32..50), 0..400)) {
            let (mut quad, mut binary) = (QuadHeap::default(), std::collections::BinaryHeap::new());
            for (n, step) in steps.into_iter().enumerate() {
                match step {
                    // Distinct items, as the kernel's keys are.
                    Some(value) => {
                        quad.push((value, n));
                        binary.push((value, n));
                    }
                    None => prop_assert_eq!(quad.pop(), binary.pop()),
                }
            }
            while let Some(item) = binary.pop() {
                prop_assert_eq!(quad.pop(), Some(item));
            }
            prop_assert_eq!(quad.pop(), None);
        }
    }
}
