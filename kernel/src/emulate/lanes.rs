//! Values of one warp: a 32-bit word per lane ([`Lanes`]) or a predicate per lane ([`Bits`]),
//! each lane's value known or not. Unknown is contagious: an operation on an unknown input
//! gives an unknown result.

/// Threads in a warp.
pub const WARP: usize = 32;

/// Every lane.
pub const ALL: u32 = u32::MAX;

/// A word per lane; bit `l` of `known` says whether lane `l`'s word is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lanes {
    pub v: [u32; WARP],
    pub known: u32,
}

impl Lanes {
    pub const UNKNOWN: Lanes = Lanes {
        v: [0; WARP],
        known: 0,
    };

    /// The same known word in every lane.
    pub fn splat(x: u32) -> Lanes {
        Lanes {
            v: [x; WARP],
            known: ALL,
        }
    }

    /// The same word in every lane, or unknown everywhere.
    pub fn from_option(x: Option<u32>) -> Lanes {
        x.map_or(Lanes::UNKNOWN, Lanes::splat)
    }

    /// Lane `lane`'s word, if known.
    pub fn get(&self, lane: usize) -> Option<u32> {
        (self.known >> lane & 1 == 1).then_some(self.v[lane])
    }

    pub fn set(&mut self, lane: usize, x: Option<u32>) {
        match x {
            Some(x) => {
                self.v[lane] = x;
                self.known |= 1 << lane;
            }
            None => self.known &= !(1 << lane),
        }
    }

    /// The word every lane of `mask` holds, when all of them know it and agree.
    pub fn uniform(&self, mask: u32) -> Option<u32> {
        let first = lanes_of(mask).next()?;
        let x = self.get(first)?;
        lanes_of(mask).all(|l| self.get(l) == Some(x)).then_some(x)
    }
}

/// A predicate per lane; bit `l` of `value` is meaningful only where bit `l` of `known` is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bits {
    pub value: u32,
    pub known: u32,
}

impl Bits {
    pub const UNKNOWN: Bits = Bits { value: 0, known: 0 };

    pub fn splat(x: bool) -> Bits {
        Bits {
            value: if x { ALL } else { 0 },
            known: ALL,
        }
    }

    pub fn from_option(x: Option<bool>) -> Bits {
        x.map_or(Bits::UNKNOWN, Bits::splat)
    }

    /// Lanes where the predicate is known to hold.
    pub fn true_lanes(self) -> u32 {
        self.value & self.known
    }

    /// Lanes where the predicate is not known.
    pub fn unknown_lanes(self) -> u32 {
        !self.known
    }

    pub fn not(self) -> Bits {
        Bits {
            value: !self.value & self.known,
            known: self.known,
        }
    }

    pub fn get(self, lane: usize) -> Option<bool> {
        (self.known >> lane & 1 == 1).then_some(self.value >> lane & 1 == 1)
    }

    pub fn set(&mut self, lane: usize, x: Option<bool>) {
        let bit = 1 << lane;
        match x {
            Some(x) => {
                self.known |= bit;
                if x {
                    self.value |= bit;
                } else {
                    self.value &= !bit;
                }
            }
            None => {
                self.known &= !bit;
                self.value &= !bit;
            }
        }
    }
}

/// The lane numbers whose bits are set in `mask`, lowest first.
pub fn lanes_of(mask: u32) -> impl Iterator<Item = usize> {
    let mut rest = mask;
    std::iter::from_fn(move || {
        if rest == 0 {
            return None;
        }
        let lane = rest.trailing_zeros() as usize;
        rest &= rest - 1;
        Some(lane)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_of_lists_set_bits_in_order() {
        assert_eq!(lanes_of(0b1010_0001).collect::<Vec<_>>(), vec![0, 5, 7]);
        assert_eq!(lanes_of(0).count(), 0);
        assert_eq!(lanes_of(ALL).count(), 32);
    }

    #[test]
    fn uniform_needs_every_lane_known_and_equal() {
        let mut x = Lanes::splat(7);
        assert_eq!(x.uniform(0b1011), Some(7));
        x.set(1, Some(8));
        assert_eq!(x.uniform(0b1011), None);
        assert_eq!(x.uniform(0b1001), Some(7));
        x.set(3, None);
        assert_eq!(x.uniform(0b1001), None);
        assert_eq!(x.uniform(0), None);
    }

    #[test]
    fn bits_track_known_lanes() {
        let mut b = Bits::splat(true);
        b.set(2, None);
        assert_eq!(b.get(2), None);
        assert_eq!(b.not().get(0), Some(false));
        assert_eq!(b.not().get(2), None);
        assert_eq!(b.true_lanes() & 0b111, 0b011);
        assert_eq!(b.unknown_lanes(), 0b100);
    }
}
