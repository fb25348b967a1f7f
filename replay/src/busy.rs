//! A rank's busy time per stream and its exposed communication (communication time that no
//! GPU computation covers), summed as the run goes.
//!
//! Only the intervals that one still to come may overlap are held: a replay of 10⁶ nodes
//! would otherwise keep an interval per node to the end. What settles them is a horizon
//! that no later interval starts before: the earliest of the engine's time and the starts
//! of the ops still in flight.

use std::collections::VecDeque;

use crate::kind::Stream;

#[derive(Debug, Default)]
pub struct Busy {
    /// Per stream, the summed length of its intervals [s].
    total: [f64; 3],
    /// Communication before the last horizon that no GPU interval covers [s].
    exposed: f64,
    /// The communication intervals (or their parts) after the last horizon, and the GPU
    /// intervals that may still cover them, in time order.
    comm: VecDeque<(f64, f64)>,
    gpu: VecDeque<(f64, f64)>,
}

impl Busy {
    /// `stream` was busy from `start` to `end`, after every interval it had before.
    pub fn add(&mut self, stream: Stream, start: f64, end: f64) {
        self.total[stream as usize] += end - start;
        match stream {
            Stream::Comm => self.comm.push_back((start, end)),
            Stream::Gpu => self.gpu.push_back((start, end)),
            Stream::Cpu => {}
        }
    }

    /// No interval added from now on starts before `horizon`: what lies before it is
    /// settled, and the intervals that end by it are let go.
    pub fn settle(&mut self, horizon: f64) {
        if self.comm.front().is_some_and(|&(start, _)| start < horizon) {
            let before: Vec<(f64, f64)> = self
                .comm
                .iter()
                .take_while(|&&(start, _)| start < horizon)
                .map(|&(start, end)| (start, end.min(horizon)))
                .collect();
            self.exposed += uncovered(&before, self.gpu.make_contiguous());
            while let Some(first) = self.comm.front_mut() {
                if first.1 <= horizon {
                    self.comm.pop_front();
                } else {
                    first.0 = first.0.max(horizon);
                    break;
                }
            }
        }
        while self.gpu.front().is_some_and(|&(_, end)| end <= horizon) {
            self.gpu.pop_front();
        }
    }

    /// The summed length of `stream`'s intervals [s].
    pub fn time(&self, stream: Stream) -> f64 {
        self.total[stream as usize]
    }

    /// The communication time no GPU interval covers, once every interval is added [s].
    pub fn exposed(&mut self) -> f64 {
        self.settle(f64::INFINITY);
        self.exposed
    }
}

/// The measure of `a` not covered by `b` (each sorted and disjoint within itself) [s].
fn uncovered(a: &[(f64, f64)], b: &[(f64, f64)]) -> f64 {
    let mut total = 0.0;
    let mut j = 0;
    for &(start, end) in a {
        let mut at = start;
        while j < b.len() && b[j].1 <= at {
            j += 1;
        }
        let mut k = j;
        while at < end {
            match b.get(k) {
                Some(&(bs, be)) if bs < end => {
                    if bs > at {
                        total += bs - at;
                    }
                    at = at.max(be);
                    k += 1;
                }
                _ => {
                    total += end - at;
                    at = end;
                }
            }
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn exposed_time_is_what_no_interval_of_the_other_covers() {
        let comm = [(0.0, 4.0), (6.0, 10.0)];
        let compute = [(1.0, 2.0), (3.0, 7.0), (9.0, 12.0)];
        // Uncovered: [0,1), [2,3), [7,9): 1 + 1 + 2.
        assert_eq!(uncovered(&comm, &compute), 4.0);
        assert_eq!(uncovered(&comm, &[]), 8.0);
    }

    /// Back-to-back intervals from gaps and lengths, in time order.
    fn timeline(steps: &[(u8, u8)]) -> Vec<(f64, f64)> {
        let mut at = 0.0;
        steps
            .iter()
            .map(|&(gap, length)| {
                let start = at + f64::from(gap);
                at = start + f64::from(length) + 1.0;
                (start, at)
            })
            .collect()
    }

    proptest! {
        /// Added as a replay adds them (each interval when it ends, the horizon then the
        /// earliest of that end and the start of an interval in flight), the
        /// exposed time is what the whole lists give.
        #[test]
        fn settling_as_the_run_goes_gives_the_exposed_time_of_the_whole_lists(
            comm in proptest::collection::vec((0u8..6, 0u8..6), 0..20),
            gpu in proptest::collection::vec((0u8..6, 0u8..6), 0..20),
        ) {
            let (comm, gpu) = (timeline(&comm), timeline(&gpu));
            let mut ends: Vec<(f64, Stream, f64)> = comm
                .iter()
                .map(|&(s, e)| (e, Stream::Comm, s))
                .chain(gpu.iter().map(|&(s, e)| (e, Stream::Gpu, s)))
                .collect();
            ends.sort_by(|a, b| a.0.total_cmp(&b.0));
            // Per stream, how many of its intervals were added: the next one is in flight
            // once it has started.
            let mut added = [0usize; 2];
            let mut busy = Busy::default();
            for (end, stream, start) in ends {
                busy.add(stream, start, end);
                added[usize::from(stream == Stream::Gpu)] += 1;
                let horizon = [(&comm, added[0]), (&gpu, added[1])]
                    .into_iter()
                    .filter_map(|(list, next)| list.get(next).map(|&(s, _)| s).filter(|&s| s <= end))
                    .fold(end, f64::min);
                busy.settle(horizon);
            }
            let whole = uncovered(&comm, &gpu);
            prop_assert!((busy.exposed() - whole).abs() < 1e-9, "{} against {whole}", busy.exposed());
            prop_assert!(busy.comm.is_empty() && busy.gpu.is_empty());
        }
    }
}
