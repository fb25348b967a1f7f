//! A replayed loop's global access whose sectors move by whole sectors a trip.

use super::{coalesced_bytes, lines, sectors, Moved, Seen, SECTOR, SECTORS_PER_LINE};

/// The sectors of a replayed loop's global access whose lanes all move by the same whole
/// sectors each trip (the naive SGEMM's rows and columns): moved on a trip at a time instead
/// of gathered from 32 lanes each trip.
pub struct Shifting {
    list: Vec<u64>,
    /// Sectors a trip, signed: a loop may walk down.
    by: i64,
}

impl Shifting {
    /// The sectors of lanes accessing `bytes` each at `addresses`, for `trips` trips that each
    /// move every lane by `step` bytes (wrapping). `None` unless the step is whole sectors and
    /// no sector wraps around the address space within those trips.
    pub fn new(addresses: &[u64], bytes: u32, step: u64, trips: u32) -> Option<Shifting> {
        if step % SECTOR != 0 {
            return None;
        }
        let by = (step as i64) / SECTOR as i64;
        let list = sectors(addresses, bytes);
        let last = i128::from(u64::MAX / SECTOR);
        // Sectors move monotonically, so the ends of the list at the last trip tell.
        let stays = |s: u64| (0..=last).contains(&(i128::from(s) + i128::from(by) * i128::from(trips)));
        let fits = list.first().is_none_or(|&s| stays(s)) && list.last().is_none_or(|&s| stays(s));
        fits.then_some(Shifting { list, by })
    }

    /// The sectors a trip later.
    pub fn next(&mut self) -> &[u64] {
        for s in &mut self.list {
            *s = s.wrapping_add_signed(self.by);
        }
        &self.list
    }

    /// What the next `trips` trips of the access (`count` lanes of `bytes`) move together,
    /// their sectors entered in `seen` as runs ([`super::Distinct::insert_run`]) instead of
    /// one by one: the sums of [`super::moved`]'s over the trips, but for a load's misses
    /// where `seen` has the block's loads, which that set counts (0 here). The list is left
    /// as it was.
    pub fn all_trips(&self, bytes: u32, count: u32, load: bool, trips: u32, seen: Seen) -> Moved {
        let t = u64::from(trips);
        let n = self.list.len() as u64;
        let missed = match seen.block_loads.filter(|_| load) {
            Some(loads) => {
                for &s in &self.list {
                    loads.insert_run(s, self.by, t);
                }
                0
            }
            None => n * t,
        };
        if let Some(all) = seen.touched {
            all.add_runs(&self.list, self.by, t, load);
        }
        Moved {
            sectors: n * t,
            coalesced_sectors: coalesced_bytes(count, bytes) / SECTOR * t,
            missed_sectors: missed,
            l1_wavefronts: self.lines_over(trips, bytes),
            ..Moved::default()
        }
    }

    /// The L1 wavefronts of the next `trips` trips: a list moved by whole lines keeps its
    /// count, so the count repeats every [`SECTORS_PER_LINE`] trips at most.
    fn lines_over(&self, trips: u32, bytes: u32) -> u64 {
        let t = u64::from(trips);
        let period = SECTORS_PER_LINE.min(t);
        (1..=period)
            .map(|phase| {
                let moved: Vec<u64> = self
                    .list
                    .iter()
                    .map(|s| s.wrapping_add_signed(self.by.wrapping_mul(phase as i64)))
                    .collect();
                let per_trip = lines(&moved).max(u64::from(bytes.max(4) / 4));
                // The trips 1..=t that fall on this phase.
                per_trip * ((t - phase) / SECTORS_PER_LINE + 1)
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{moved, Distinct, Target, Touched};
    use super::*;
    use crate::arch::Space;
    use proptest::prelude::*;

    proptest! {
        /// The sectors moved on a trip at a time are those gathered afresh from the lanes'
        /// addresses moved on likewise; and counting every trip at once gives what counting
        /// each trip gives: sectors, L1 wavefronts, misses, and the block's and the launch's
        /// distinct sectors and DRAM pairs. Steps go up and down, by whole lines or not, for
        /// fewer trips than a line's period and more.
        #[test]
        fn all_trips_at_once_count_as_trip_by_trip(
            base in 0u64..1 << 30,
            stride in 0u64..40,
            bytes in prop::sample::select(vec![4u32, 8, 16]),
            step in -70i64..70,
            trips in 1u32..20,
            load: bool,
        ) {
            let addresses: Vec<u64> =
                (0..32).map(|l| (1 << 40) + base / 4 * 4 + l * stride * u64::from(bytes)).collect();
            let step = (step * SECTOR as i64) as u64;
            let mut shifting = Shifting::new(&addresses, bytes, step, trips).expect("whole sectors, no wrap");
            // Both ways, the template trip has run already.
            let template = |loads: &mut Distinct, touched: &mut Touched| {
                let seen = Seen { block_loads: Some(loads), touched: Some(touched) };
                moved(Target::Lanes(Some(&addresses)), Space::Global, bytes, u32::MAX, load, seen)
            };
            let (mut loads, mut touched) = (Distinct::default(), Touched::default());
            template(&mut loads, &mut touched);
            let seen = Seen { block_loads: Some(&mut loads), touched: Some(&mut touched) };
            let at_once = shifting.all_trips(bytes, 32, load, trips, seen);
            let (mut each_loads, mut each_touched) = (Distinct::default(), Touched::default());
            let first = template(&mut each_loads, &mut each_touched);
            let mut each = Moved { missed_sectors: first.missed_sectors, ..Moved::default() };
            for trip in 1..=u64::from(trips) {
                let moved_on = |a: &u64| a.wrapping_add(step.wrapping_mul(trip));
                let fresh = sectors(&addresses.iter().map(moved_on).collect::<Vec<_>>(), bytes);
                let seen = Seen { block_loads: Some(&mut each_loads), touched: Some(&mut each_touched) };
                let list = shifting.next();
                prop_assert_eq!(list, &fresh[..]);
                let m = moved(Target::Sectors(list), Space::Global, bytes, u32::MAX, load, seen);
                each.sectors += m.sectors;
                each.coalesced_sectors += m.coalesced_sectors;
                each.missed_sectors += m.missed_sectors;
                each.l1_wavefronts += m.l1_wavefronts;
            }
            prop_assert_eq!(at_once.sectors, each.sectors);
            prop_assert_eq!(at_once.coalesced_sectors, each.coalesced_sectors);
            prop_assert_eq!(at_once.l1_wavefronts, each.l1_wavefronts);
            if load {
                // The block's set counts a load's misses.
                prop_assert_eq!(loads.len(), each.missed_sectors);
                prop_assert_eq!(loads.len(), each_loads.len());
            } else {
                prop_assert_eq!(at_once.missed_sectors + first.missed_sectors, each.missed_sectors);
            }
            prop_assert_eq!(touched.count(), each_touched.count());
            prop_assert_eq!(touched.dram_sectors(), each_touched.dram_sectors());
        }
    }
}
