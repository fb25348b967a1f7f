//! Covering a launch's warps by emulating few of them.
//!
//! A warp is a point of the box (warp within its block) × (block x) × (block y) × (block z).
//! What a warp does depends on its coordinates mostly through comparisons (`i < n`, `x == 0`,
//! `x == M − 1`, a partial last warp), so the box splits into a few sub-boxes of alike warps.
//! A box whose corners, centre and one pseudo-random point behave alike (equal
//! [`Profile`](super::simt::Profile)s) is taken to behave alike throughout; otherwise it is
//! cut along its longest axis whose corners disagree. Where the behaviour changes right at an
//! end of that axis (a domain's first or last row or column, a grid's last partial block), the
//! end slab is peeled off; elsewhere the box is halved. Peeling finds a 2-D stencil's four
//! edges in a few dozen emulated warps, where halving towards them emulates thousands (the
//! boxes along a perimeter at every scale). A behaviour confined to the inside of a box whose
//! corners, centre and probe agree is missed: the price of not emulating every warp.
//!
//! Boxes are processed breadth first, so that when the cap on emulated warps is reached, the
//! boxes left are of similar size. Those are then sampled: each is shared equally among warps
//! drawn uniformly from it, at most another `cap` emulations in all; a box no larger than its
//! share of draws is emulated warp by warp instead, exactly.

use crate::error::Result;
use std::collections::{HashMap, VecDeque};

/// Axes of the warp space: warp within the block, then block x, y, z.
pub const AXES: usize = 4;

/// How the warps were covered.
#[derive(Debug, Clone, PartialEq)]
pub struct Cover {
    /// Warps attributed to each behaviour id (fractional where sampled).
    pub weights: HashMap<usize, f64>,
    /// Warps emulated.
    pub emulated: u64,
    /// Where the cap was reached: what was left to sampling.
    pub sampled: Option<Sampled>,
}

/// The part of a launch covered by sampling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sampled {
    /// Boxes left when grouping reached its cap.
    pub boxes: usize,
    /// Warps in them.
    pub warps: u64,
    /// Warps drawn from them.
    pub draws: u64,
}

/// Inclusive coordinate ranges along each axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Region {
    lo: [u64; AXES],
    hi: [u64; AXES],
}

impl Region {
    fn volume(&self) -> u64 {
        (0..AXES).map(|a| self.hi[a] - self.lo[a] + 1).product()
    }

    /// The corners, each with the axes on which it takes the high end (a bit per axis);
    /// axes of one coordinate are always taken low, so no corner repeats.
    fn corners(&self) -> Vec<(u32, [u64; AXES])> {
        let spread = (0..AXES)
            .filter(|&a| self.hi[a] > self.lo[a])
            .fold(0u32, |m, a| m | 1 << a);
        (0..1u32 << AXES)
            .filter(|choice| choice & !spread == 0)
            .map(|choice| {
                let corner = std::array::from_fn(|a| {
                    if choice >> a & 1 == 1 {
                        self.hi[a]
                    } else {
                        self.lo[a]
                    }
                });
                (choice, corner)
            })
            .collect()
    }

    fn centre(&self) -> [u64; AXES] {
        std::array::from_fn(|a| self.lo[a] + (self.hi[a] - self.lo[a]) / 2)
    }

    /// The `n`-th warp of the region, first axis fastest.
    fn point(&self, mut n: u64) -> [u64; AXES] {
        std::array::from_fn(|a| {
            let extent = self.hi[a] - self.lo[a] + 1;
            let c = self.lo[a] + n % extent;
            n /= extent;
            c
        })
    }

    fn random(&self, probe: &mut Probe) -> [u64; AXES] {
        std::array::from_fn(|a| self.lo[a] + probe.next() % (self.hi[a] - self.lo[a] + 1))
    }

    /// The two parts along `axis`, the low one ending at coordinate `last_low`.
    fn cut(&self, axis: usize, last_low: u64) -> (Region, Region) {
        let mut low = *self;
        let mut high = *self;
        low.hi[axis] = last_low;
        high.lo[axis] = last_low + 1;
        (low, high)
    }

    fn longest_axis(&self, among: impl Iterator<Item = usize>) -> Option<usize> {
        among
            .filter(|&a| self.hi[a] > self.lo[a])
            .max_by_key(|&a| self.hi[a] - self.lo[a])
    }
}

/// What probing a region finds.
enum Verdict {
    /// Every probed warp behaves this way.
    Alike(usize),
    /// Cut the region along an axis (the first), the low part ending at a coordinate (the
    /// second).
    Split(usize, u64),
}

/// splitmix64: a fixed-seed generator, so that the same launch always probes the same warps.
struct Probe(u64);

impl Probe {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// The behaviour of each emulated warp, emulating on first need.
struct Memo<F> {
    extent: [u64; AXES],
    known: HashMap<u64, usize>,
    behaviour: F,
}

impl<F: FnMut(u64) -> Result<usize>> Memo<F> {
    /// The warp at `point`, numbered block-major: block `x + y·gx + z·gx·gy`, then warp.
    fn index(&self, point: [u64; AXES]) -> u64 {
        (0..AXES).rev().fold(0, |acc, a| acc * self.extent[a] + point[a])
    }

    fn get(&mut self, point: [u64; AXES]) -> Result<usize> {
        let warp = self.index(point);
        if let Some(&b) = self.known.get(&warp) {
            return Ok(b);
        }
        let b = (self.behaviour)(warp)?;
        self.known.insert(warp, b);
        Ok(b)
    }

    /// Probes `region`'s corners, centre and one random warp.
    fn probe(&mut self, region: &Region, probe: &mut Probe) -> Result<Verdict> {
        let corners = region.corners();
        let mut seen = Vec::with_capacity(corners.len());
        for &(choice, point) in &corners {
            seen.push((choice, self.get(point)?));
        }
        let behaviour_at = |choice: u32| seen.iter().find(|c| c.0 == choice).map(|c| c.1);
        // Whether the corner `choice` and its partner across `axis` behave differently.
        let breaks = |&(choice, b): &(u32, usize), axis: usize| {
            choice >> axis & 1 == 0 && behaviour_at(choice | 1 << axis).is_some_and(|other| other != b)
        };
        let first = seen[0].1;
        let inside_agrees = self.get(region.centre())? == first && self.get(region.random(probe))? == first;
        if seen.iter().all(|c| c.1 == first) && inside_agrees {
            return Ok(Verdict::Alike(first));
        }
        let axis = region
            .longest_axis((0..AXES).filter(|&a| seen.iter().any(|c| breaks(c, a))))
            .or_else(|| region.longest_axis(0..AXES))
            .unwrap_or(0);
        // Along an edge whose two corners disagree on `axis`, or along the first corner's.
        let start = corners
            .iter()
            .zip(&seen)
            .find(|(_, c)| breaks(c, axis))
            .map_or(corners[0].1, |(&(_, point), _)| point);
        Ok(Verdict::Split(axis, self.cut_at(region, axis, start)?))
    }

    /// Where to cut `region` along `axis`, given the line through `start` along it: after its
    /// first slab where the behaviour changes from the first warp to the second and not from
    /// the second to the third (an edge, not a pattern such as alternating blocks), likewise
    /// before its last slab, in the middle otherwise.
    fn cut_at(&mut self, region: &Region, axis: usize, start: [u64; AXES]) -> Result<u64> {
        let (lo, hi) = (region.lo[axis], region.hi[axis]);
        let mut on_line = |c: u64| {
            let mut point = start;
            point[axis] = c;
            self.get(point)
        };
        if hi - lo >= 2 {
            let second = on_line(lo + 1)?;
            if on_line(lo)? != second && on_line(lo + 2)? == second {
                return Ok(lo);
            }
            let second_last = on_line(hi - 1)?;
            if on_line(hi)? != second_last && on_line(hi - 2)? == second_last {
                return Ok(hi - 1);
            }
        }
        Ok(lo + (hi - lo) / 2)
    }
}

/// Covers the warps of a launch whose warp space has `extent` (warps per block, grid x, y, z),
/// calling `behaviour(warp)` — which emulates the warp and returns an id shared by warps that
/// behave alike — on about `cap` warps at most (twice that where sampling is needed).
pub fn cover(extent: [u64; AXES], cap: usize, behaviour: impl FnMut(u64) -> Result<usize>) -> Result<Cover> {
    let mut memo = Memo {
        extent,
        known: HashMap::new(),
        behaviour,
    };
    let mut weights: HashMap<usize, f64> = HashMap::new();
    let mut queue: VecDeque<Region> = VecDeque::new();
    let mut left: Vec<Region> = Vec::new();
    let mut probe = Probe(0x5eed);
    if extent.iter().all(|&e| e > 0) {
        queue.push_back(Region {
            lo: [0; AXES],
            hi: extent.map(|e| e - 1),
        });
    }
    while let Some(region) = queue.pop_front() {
        if region.volume() == 1 {
            let b = memo.get(region.lo)?;
            *weights.entry(b).or_default() += 1.0;
        } else if memo.known.len() >= cap {
            left.push(region);
        } else {
            match memo.probe(&region, &mut probe)? {
                Verdict::Alike(b) => *weights.entry(b).or_default() += region.volume() as f64,
                Verdict::Split(axis, last_low) => {
                    let (low, high) = region.cut(axis, last_low);
                    queue.push_back(low);
                    queue.push_back(high);
                }
            }
        }
    }
    let sampled = sample(&mut memo, &left, cap, &mut probe, &mut weights)?;
    Ok(Cover {
        weights,
        emulated: memo.known.len() as u64,
        sampled,
    })
}

/// Shares each region of `left` equally among warps drawn uniformly from it, about `budget`
/// draws in all; emulates every warp of a region no larger than its share. `None` when every
/// region was emulated whole (the cover is then exact).
fn sample<F: FnMut(u64) -> Result<usize>>(
    memo: &mut Memo<F>,
    left: &[Region],
    budget: usize,
    probe: &mut Probe,
    weights: &mut HashMap<usize, f64>,
) -> Result<Option<Sampled>> {
    let per_region = (budget / left.len().max(1)).max(1) as u64;
    let mut sampled = Sampled {
        boxes: 0,
        warps: 0,
        draws: 0,
    };
    for region in left {
        let volume = region.volume();
        if volume <= per_region {
            for n in 0..volume {
                *weights.entry(memo.get(region.point(n))?).or_default() += 1.0;
            }
            continue;
        }
        for _ in 0..per_region {
            let b = memo.get(region.random(probe))?;
            *weights.entry(b).or_default() += volume as f64 / per_region as f64;
        }
        sampled.boxes += 1;
        sampled.warps += volume;
        sampled.draws += per_region;
    }
    Ok((sampled.boxes > 0).then_some(sampled))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn exact(extent: [u64; AXES], behaviour: impl Fn(u64) -> usize) -> HashMap<usize, f64> {
        let mut out = HashMap::new();
        for w in 0..extent.iter().product() {
            *out.entry(behaviour(w)).or_default() += 1.0;
        }
        out
    }

    /// Coordinates of warp `w` in `extent`.
    fn point(extent: [u64; AXES], mut w: u64) -> [u64; AXES] {
        std::array::from_fn(|a| {
            let c = w % extent[a];
            w /= extent[a];
            c
        })
    }

    #[test]
    fn a_uniform_launch_emulates_its_corners_centre_and_probe() {
        let c = cover([8, 1_562_500, 1, 1], 4096, |_| Ok(0)).expect("covers");
        assert_eq!(c.weights, HashMap::from([(0, 12_500_000.0)]));
        assert_eq!(c.emulated, 6);
        assert_eq!(c.sampled, None);
        let c = cover([1, 1, 1, 1], 4096, |_| Ok(7)).expect("covers");
        assert_eq!(c.weights, HashMap::from([(7, 1.0)]));
        assert!(cover([0, 1, 1, 1], 4096, |_| Ok(0))
            .expect("covers")
            .weights
            .is_empty());
    }

    #[test]
    fn warp_numbering_is_block_major() {
        let extent = [2, 3, 4, 5];
        let mut seen = Vec::new();
        cover(extent, 4096, |w| {
            seen.push(w);
            Ok(usize::try_from(w).unwrap_or(0))
        })
        .expect("covers");
        seen.sort_unstable();
        assert_eq!(
            seen,
            (0..120).collect::<Vec<_>>(),
            "every warp differs, so each is emulated once"
        );
        let memo = Memo {
            extent,
            known: HashMap::new(),
            behaviour: |_| Ok(0),
        };
        assert_eq!(memo.index([1, 2, 3, 4]), 1 + 2 * (2 + 3 * (3 + 4 * 4)));
    }

    #[test]
    fn periodic_partial_warps_are_found() {
        // Blocks of 48 threads: warp 1 of every block is half full.
        let c = cover([2, 1000, 1, 1], 4096, |w| Ok((w % 2) as usize)).expect("covers");
        assert_eq!(c.weights, HashMap::from([(0, 1000.0), (1, 1000.0)]));
        assert!(c.emulated <= 10, "{}", c.emulated);
    }

    #[test]
    fn the_cap_turns_to_uniform_sampling() {
        // A checkerboard of blocks defeats grouping.
        let cap = 1024;
        let c = cover([1, 1000, 1000, 1], cap, |w| {
            Ok(((w % 1000 + w / 1000) % 2) as usize)
        })
        .expect("covers");
        let sampled = c.sampled.expect("sampled");
        assert!(sampled.boxes > 0 && sampled.warps > 0 && sampled.draws > 0);
        assert!(c.emulated <= 2 * cap as u64 + 32, "{}", c.emulated);
        let total: f64 = c.weights.values().sum();
        assert!((total - 1e6).abs() < 1e-6);
        let odd = c.weights.get(&1).copied().unwrap_or(0.0) / total;
        assert!((odd - 0.5).abs() < 0.1, "{odd}");
    }

    #[test]
    fn a_stencils_edges_are_peeled_off() {
        // A 5-point stencil on 4096² points in 16 × 16 blocks (8 warps of two rows): the
        // first and last columns of blocks, the first warp of the top row of blocks and the
        // last warp of the bottom row each hold boundary points.
        let extent = [8, 256, 256, 1];
        let behaviour = |w: u64| {
            let [warp, x, y, _] = point(extent, w);
            usize::from(x == 0)
                | usize::from(x == 255) << 1
                | usize::from(y == 0 && warp == 0) << 2
                | usize::from(y == 255 && warp == 7) << 3
        };
        let c = cover(extent, 4096, |w| Ok(behaviour(w))).expect("covers");
        assert_eq!(c.weights, exact(extent, behaviour));
        // 93 warps; halving towards the edges instead of peeling them emulates 2,935.
        assert!(c.emulated <= 120, "{}", c.emulated);
    }

    #[test]
    fn small_leftovers_are_emulated_whole() {
        // A cap of 12 stops grouping before it reaches the step at 20; the box left is small
        // enough to run whole.
        let behaviour = |w: u64| usize::from(w >= 20);
        let mut emulated = 0;
        let c = cover([1, 24, 1, 1], 12, |w| {
            emulated += 1;
            Ok(behaviour(w))
        })
        .expect("covers");
        assert!(emulated > 12, "{emulated}: the cap was not reached");
        assert_eq!(c.sampled, None);
        assert_eq!(c.weights, exact([1, 24, 1, 1], behaviour));
    }

    #[test]
    fn errors_pass_through() {
        let e = cover([1, 10, 1, 1], 4096, |w| {
            if w == 9 {
                Err(crate::Error::new("boom"))
            } else {
                Ok(0)
            }
        });
        assert!(e.is_err());
    }

    proptest! {
        /// Behaviours set by thresholds on each coordinate (a launch's tail past n, edges of a
        /// 2-D domain, partial warps) are found exactly.
        #[test]
        fn thresholds_are_found_exactly(
            extent in proptest::array::uniform4(1u64..12),
            cuts in proptest::collection::vec((0usize..AXES, 0u64..12, any::<bool>()), 0..4),
        ) {
            let behaviour = |w: u64| {
                let p = point(extent, w);
                cuts.iter().enumerate().fold(0, |acc, (i, &(axis, at, above))| {
                    acc | usize::from((p[axis] >= at) == above) << i
                })
            };
            let c = cover(extent, usize::MAX, |w| Ok(behaviour(w))).expect("covers");
            prop_assert!(c.sampled.is_none());
            prop_assert!(c.emulated <= extent.iter().product());
            prop_assert_eq!(c.weights, exact(extent, behaviour));
        }

        /// A linear tail (`i < n` over warps numbered block-major) is found exactly.
        #[test]
        fn a_linear_tail_is_found_exactly(warps_per_block in 1u64..33, blocks in 1u64..200, n in 0u64..7000) {
            let extent = [warps_per_block, blocks, 1, 1];
            let behaviour = |w: u64| usize::from(w < n / 32) + usize::from(w == n / 32);
            let c = cover(extent, 4096, |w| Ok(behaviour(w))).expect("covers");
            prop_assert_eq!(c.weights, exact(extent, behaviour));
        }
    }
}
