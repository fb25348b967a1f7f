//! A set of sector numbers that holds, besides single sectors, arithmetic progressions of
//! them: the sectors a replayed loop's access touches over all its trips, entered at once
//! rather than trip by trip, so that the cost of counting a long loop's distinct sectors does
//! not grow with its trips (a naive SGEMM at N = 16384 walks 16,384 rows of B a thread).
//!
//! Progressions are kept as they come and merged only when the set is counted: grouped by
//! stride and residue (`first mod stride`), each is an interval of quotients, and intervals
//! of one class merge. Classes of different strides can hold the same sector only where
//! their spans meet (one array walked two ways); there, the later class's sectors are
//! looked up one by one in the earlier ones. Single sectors are looked up in the classes.

use super::SectorSet;

/// `first + stride·u` for `u` in `0..count`, `stride` > 0.
#[derive(Debug, Clone, Copy)]
struct Run {
    first: u64,
    stride: u64,
    count: u64,
}

/// Sector numbers, single or in progressions ([`Distinct::insert_run`]).
#[derive(Debug, Default, Clone)]
pub struct Distinct {
    singles: SectorSet,
    runs: Vec<Run>,
}

/// The progressions of one stride and residue, merged: intervals of quotients, increasing,
/// disjoint and not touching.
struct Class {
    stride: u64,
    residue: u64,
    intervals: Vec<(u64, u64)>,
}

/// The classes of one stride, and the least and greatest sector they hold.
struct Stride {
    classes: std::ops::Range<usize>,
    span: (u64, u64),
}

/// A set's progressions merged, ready for lookups.
struct Merged {
    classes: Vec<Class>,
    strides: Vec<Stride>,
}

impl Merged {
    fn new(runs: &[Run]) -> Merged {
        let mut keyed: Vec<(u64, u64, u64, u64)> = runs
            .iter()
            .filter(|r| r.count > 0)
            .map(|r| {
                let q = r.first / r.stride;
                (r.stride, r.first % r.stride, q, q + r.count)
            })
            .collect();
        keyed.sort_unstable();
        let mut classes: Vec<Class> = Vec::new();
        for (stride, residue, start, end) in keyed {
            match classes.last_mut() {
                Some(c) if c.stride == stride && c.residue == residue => match c.intervals.last_mut() {
                    Some(last) if start <= last.1 => last.1 = last.1.max(end),
                    _ => c.intervals.push((start, end)),
                },
                _ => classes.push(Class {
                    stride,
                    residue,
                    intervals: vec![(start, end)],
                }),
            }
        }
        let mut strides: Vec<Stride> = Vec::new();
        for (k, c) in classes.iter().enumerate() {
            let (first, last) = c.span();
            match strides.last_mut() {
                Some(s) if classes[s.classes.start].stride == c.stride => {
                    s.classes.end = k + 1;
                    s.span = (s.span.0.min(first), s.span.1.max(last));
                }
                _ => strides.push(Stride {
                    classes: k..k + 1,
                    span: (first, last),
                }),
            }
        }
        Merged { classes, strides }
    }

    /// Whether the classes of stride group `g` hold sector `s`.
    fn holds(&self, g: &Stride, s: u64) -> bool {
        if s < g.span.0 || s > g.span.1 {
            return false;
        }
        let classes = &self.classes[g.classes.clone()];
        let stride = classes[0].stride;
        let residue = s % stride;
        let Ok(k) = classes.binary_search_by_key(&residue, |c| c.residue) else {
            return false;
        };
        classes[k].holds_quotient(s / stride)
    }

    /// Whether any class holds `s`.
    fn contains(&self, s: u64) -> bool {
        self.strides.iter().any(|g| self.holds(g, s))
    }

    /// The distinct sectors the classes hold: each counted in the first stride group holding
    /// it. A class whose span meets no earlier group's counts whole (arrays lie far apart, so
    /// one walked two ways is the only overlap); the others sector by sector.
    fn count(&self) -> u64 {
        let mut total = 0;
        for (k, g) in self.strides.iter().enumerate() {
            let earlier = &self.strides[..k];
            for c in &self.classes[g.classes.clone()] {
                let (first, last) = c.span();
                if earlier.iter().any(|e| e.span.0 <= last && first <= e.span.1) {
                    total += c
                        .sectors()
                        .filter(|&s| !earlier.iter().any(|e| self.holds(e, s)))
                        .count() as u64;
                } else {
                    total += c.len();
                }
            }
        }
        total
    }
}

impl Class {
    fn span(&self) -> (u64, u64) {
        let first = self.intervals.first().map_or(0, |i| i.0);
        let end = self.intervals.last().map_or(0, |i| i.1);
        (
            self.residue + self.stride * first,
            self.residue + self.stride * (end - 1),
        )
    }

    fn len(&self) -> u64 {
        self.intervals.iter().map(|(a, b)| b - a).sum()
    }

    fn holds_quotient(&self, q: u64) -> bool {
        let k = self.intervals.partition_point(|i| i.1 <= q);
        self.intervals.get(k).is_some_and(|i| i.0 <= q)
    }

    fn sectors(&self) -> impl Iterator<Item = u64> + '_ {
        self.intervals
            .iter()
            .flat_map(move |&(a, b)| (a..b).map(move |q| self.residue + self.stride * q))
    }
}

impl Distinct {
    /// Adds sector `s`; whether it was new. Exact only while the set holds no progression
    /// (a block's loads told apart into hits and misses for a stream); with progressions, a
    /// sector one of them holds may be reported new, and [`Distinct::len`] still counts it
    /// once.
    pub fn insert(&mut self, s: u64) -> bool {
        self.singles.insert(s)
    }

    /// Adds the sectors `s + by·t` for `t` in `1..=trips`; the caller has checked that none
    /// wraps.
    pub fn insert_run(&mut self, s: u64, by: i64, trips: u64) {
        if trips == 0 {
            return;
        }
        if by == 0 {
            self.singles.insert(s);
            return;
        }
        let stride = by.unsigned_abs();
        let first = if by > 0 { s + stride } else { s - stride * trips };
        self.runs.push(Run {
            first,
            stride,
            count: trips,
        });
    }

    /// The distinct sectors held.
    pub fn len(&self) -> u64 {
        if self.runs.is_empty() {
            return self.singles.len() as u64;
        }
        let merged = Merged::new(&self.runs);
        let lone = self.singles.iter().filter(|&&s| !merged.contains(s)).count() as u64;
        lone + merged.count()
    }

    /// The distinct 64-byte pairs (sector / 2) the sectors lie in.
    pub fn pairs(&self) -> Distinct {
        let mut pairs = Distinct {
            singles: self.singles.iter().map(|s| s / 2).collect(),
            runs: Vec::new(),
        };
        for c in Merged::new(&self.runs).classes {
            if c.stride % 2 == 0 {
                // residue + stride·q lies in pair residue/2 + (stride/2)·q.
                for &(a, b) in &c.intervals {
                    pairs.runs.push(Run {
                        first: (c.residue + c.stride * a) / 2,
                        stride: c.stride / 2,
                        count: b - a,
                    });
                }
            } else {
                pairs.singles.extend(c.sectors().map(|s| s / 2));
            }
        }
        pairs
    }

    pub fn clear(&mut self) {
        self.singles.clear();
        self.runs.clear();
    }
}

/// The distinct sectors a run of warps touched, loaded and stored apart (a sector both loaded
/// and stored moves both ways); and the sectors of accesses whose addresses are unknown.
#[derive(Debug, Default)]
pub struct Touched {
    loaded: Distinct,
    stored: Distinct,
    unknown: u64,
}

impl Touched {
    /// Adds the sectors of a load (`load`) or a store.
    pub fn add(&mut self, sectors: &[u64], load: bool) {
        let set = self.of(load);
        for &s in sectors {
            set.insert(s);
        }
    }

    /// Adds the sectors `s + by·t`, `t` in `1..=trips`, of each `s` in `sectors`: a replayed
    /// access's trips (see [`Distinct::insert_run`]).
    pub fn add_runs(&mut self, sectors: &[u64], by: i64, trips: u64, load: bool) {
        let set = self.of(load);
        for &s in sectors {
            set.insert_run(s, by, trips);
        }
    }

    fn of(&mut self, load: bool) -> &mut Distinct {
        if load {
            &mut self.loaded
        } else {
            &mut self.stored
        }
    }

    /// Adds `n` sectors whose addresses are unknown, each counted as distinct.
    pub fn add_unknown(&mut self, n: u64) {
        self.unknown += n;
    }

    /// The distinct sectors loaded plus the distinct sectors stored.
    pub fn count(&self) -> u64 {
        self.loaded.len() + self.stored.len() + self.unknown
    }

    /// The sectors DRAM moves for them: a loaded sector comes with the other half of its
    /// 64-byte pair (DRAM's read granularity, which Nsight Compute's `dram__bytes_read` shows
    /// on the H100: 64 bytes per float read at a 128-byte stride), a stored one alone (L2
    /// writes back the sectors it holds dirty).
    pub fn dram_sectors(&self) -> u64 {
        2 * self.loaded.pairs().len() + self.stored.len() + self.unknown
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashSet;

    /// `(s, by, trips)`: the sectors a run enters.
    fn enumerated(s: u64, by: i64, trips: u64) -> impl Iterator<Item = u64> {
        (1..=trips).map(move |t| s.wrapping_add_signed(by * t as i64))
    }

    #[test]
    fn rows_and_columns_count_once() {
        let mut set = Distinct::default();
        // A row walked 2 sectors a trip from 100, twice over, the second start 1 trip on,
        // and a column 2048 sectors a trip: 10 + 1 + 5 distinct.
        set.insert_run(100, 2, 10);
        set.insert_run(102, 2, 10);
        set.insert_run(7, 2048, 5);
        // Already in the row; new; on the column's line but before it.
        assert!(set.insert(104));
        assert!(set.insert(1));
        assert!(set.insert(7));
        assert_eq!(set.len(), 11 + 5 + 2);
        // Pairs: the row's sectors 102..=122 lie in pairs 51..=61, the column's in 3 + 1024·t.
        assert_eq!(set.pairs().len(), 11 + 5 + 2);
        // Counting down from 50 by 3: 47, 44, 41.
        let mut down = Distinct::default();
        down.insert_run(50, -3, 3);
        down.insert(44);
        assert_eq!(down.len(), 3);
    }

    proptest! {
        /// Counts and pairs are those of every sector entered, one by one: runs of a few
        /// strides that overlap each other, their spans meeting, and singles among them.
        #[test]
        fn counts_as_the_sectors_one_by_one(
            runs in prop::collection::vec((0u64..400, -12i64..12, 0u64..40), 0..12),
            singles in prop::collection::vec(0u64..800, 0..30),
        ) {
            let mut set = Distinct::default();
            let mut all = HashSet::new();
            for &(s, by, trips) in &runs {
                let s = s + 500;
                set.insert_run(s, by, trips);
                all.extend(enumerated(s, by, trips));
            }
            for &s in &singles {
                set.insert(s);
                all.insert(s);
            }
            prop_assert_eq!(set.len(), all.len() as u64);
            let pairs: HashSet<u64> = all.iter().map(|s| s / 2).collect();
            prop_assert_eq!(set.pairs().len(), pairs.len() as u64);
        }
    }
}
