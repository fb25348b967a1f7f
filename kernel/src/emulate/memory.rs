//! Memory traffic of one warp-wide access: the 32-byte sectors a global access touches, the
//! wavefronts a shared access takes through the banks.

use std::collections::HashSet;
use std::hash::{BuildHasher, Hasher};

use super::lanes::WARP;
use crate::arch::Space;

mod distinct;
mod shifting;

pub use distinct::{Distinct, Touched};
pub use shifting::Shifting;

/// Bytes of an L2 sector, the unit global memory moves.
pub const SECTOR: u64 = 32;

/// Sectors of a 128-byte cache line: L1 looks up one line a cycle, so a global access takes
/// one L1 wavefront per distinct line its sectors lie in.
pub const SECTORS_PER_LINE: u64 = 4;

/// Shared memory's banks, each 4 bytes wide; one wavefront reads one word from each.
pub const BANKS: u64 = 32;

/// A set of sector numbers. The keys are the emulator's own addresses, so SipHash's guard
/// against chosen keys buys nothing, and hashing was a fifth of a long kernel's emulation.
pub type SectorSet = HashSet<u64, SectorHash>;

/// No sector: an address / 32 never has every bit set.
const NO_SECTOR: u64 = u64::MAX;

/// Builds [`SectorHasher`]s.
#[derive(Debug, Clone, Copy, Default)]
pub struct SectorHash;

/// A multiplicative hash of a `u64`, its high half folded into the low bits that pick a
/// bucket (strided sectors differ only in their high bits).
#[derive(Debug, Clone, Copy, Default)]
pub struct SectorHasher(u64);

impl BuildHasher for SectorHash {
    type Hasher = SectorHasher;

    fn build_hasher(&self) -> SectorHasher {
        SectorHasher::default()
    }
}

impl Hasher for SectorHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, x: u64) {
        let h = (self.0.rotate_left(5) ^ x).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 32);
    }
}

/// Room for the distinct sectors (address / 32) of one access, on the stack: this runs for
/// every access emulated. An access of up to 16 bytes a lane touches at most two sectors a
/// lane.
struct Sectors {
    inline: [u64; 2 * WARP],
    spilled: Vec<u64>,
}

impl Default for Sectors {
    fn default() -> Sectors {
        Sectors {
            inline: [0; 2 * WARP],
            spilled: Vec::new(),
        }
    }
}

impl Sectors {
    /// The distinct sectors that lanes accessing `bytes` each at `addresses` touch, in
    /// increasing order: each moves once (a coalesced float access moves 4 sectors; a stride
    /// of 2 floats, 8).
    fn fill(&mut self, addresses: &[u64], bytes: u32) -> &[u64] {
        let span = u64::from(bytes.max(1)) - 1;
        let mut len = 0;
        let mut last = NO_SECTOR;
        // Neighbouring lanes mostly share a sector: each run of one sector is kept once.
        let mut keep = |s: u64| {
            if s != last {
                last = s;
                if len < self.inline.len() {
                    self.inline[len] = s;
                } else {
                    if len == self.inline.len() {
                        self.spilled.extend_from_slice(&self.inline);
                    }
                    self.spilled.push(s);
                }
                len += 1;
            }
        };
        for &a in addresses {
            let (first, end) = (a / SECTOR, a.saturating_add(span) / SECTOR);
            keep(first);
            // At most one more sector a lane for up to 32 bytes, the common case.
            if end != first {
                (first + 1..=end).for_each(&mut keep);
            }
        }
        let list: &mut [u64] = if len > self.inline.len() {
            &mut self.spilled
        } else {
            &mut self.inline[..len]
        };
        // Coalesced lanes come in order already.
        if !list.is_sorted() {
            list.sort_unstable();
        }
        let mut distinct = 0;
        for k in 0..list.len() {
            if k == 0 || list[k] != list[distinct - 1] {
                list[distinct] = list[k];
                distinct += 1;
            }
        }
        &list[..distinct]
    }
}

/// The distinct 128-byte lines of `sectors` (in increasing order, as `Sectors::fill` gives them):
/// the L1 wavefronts of the access, but for wide loads, which take at least one per register
/// returned. A coalesced float access takes 1; lanes 128 bytes apart, 32.
pub fn lines(sectors: &[u64]) -> u64 {
    changes(sectors.iter().map(|s| s / SECTORS_PER_LINE)).count() as u64
}

/// The items that differ from the one before them: a sorted sequence's distinct items.
fn changes(items: impl Iterator<Item = u64> + Clone) -> impl Iterator<Item = u64> + Clone {
    let mut previous = None;
    items.filter(move |&x| previous.replace(x) != Some(x))
}

/// Wavefronts a shared-memory access takes. A 16-byte access is served a half-warp at a time,
/// narrower ones a warp at a time; each pass takes the most distinct 4-byte words any one bank
/// must deliver (lanes reading the same word share it, a broadcast), at least one. Nsight
/// Compute on the H100 (examples/validation/data/h100/families/ncu_families.csv) counts 2 for
/// a broadcast LDS.128, one or two addresses (the tiled SGEMMs' `As[ty][k..k+3]`), not the 4
/// registers it returns. A conflict-free 4-byte access takes 1; a 16-byte one, 4; 32 lanes
/// striding by 32 words, 32. `addresses` are the active lanes' (the set bits of `lanes`), in
/// lane order.
pub fn bank_wavefronts(addresses: &[u64], bytes: u32, lanes: u32) -> u64 {
    let first_half = if bytes >= 16 {
        (lanes & 0xFFFF).count_ones() as usize
    } else {
        addresses.len()
    };
    let (low, high) = addresses.split_at(first_half.min(addresses.len()));
    pass_wavefronts(low, bytes) + pass_wavefronts(high, bytes)
}

/// The wavefronts of one pass through the banks: the most distinct words one bank delivers.
fn pass_wavefronts(addresses: &[u64], bytes: u32) -> u64 {
    if addresses.is_empty() {
        return 0;
    }
    let words_per_lane = (bytes.max(4) / 4) as usize;
    // A pass's words fit on the stack (a half-warp of LDS.128, a warp of LDS.64); this runs
    // for every shared access emulated.
    let mut inline = [0u64; 2 * WARP];
    let mut spilled = Vec::new();
    let total = addresses.len() * words_per_lane;
    let words: &mut [u64] = if total <= inline.len() {
        &mut inline[..total]
    } else {
        spilled.resize(total, 0);
        &mut spilled
    };
    // Neighbouring lanes often read the same word (a broadcast row): their words count once.
    let distinct = changes(addresses.iter().copied());
    let mut len = 0;
    for (slot, w) in words
        .iter_mut()
        .zip(distinct.flat_map(|a| (a / 4..).take(words_per_lane)))
    {
        *slot = w;
        len += 1;
    }
    let words = &mut words[..len];
    if let Some(w) = without_conflicts(words) {
        return w;
    }
    words.sort_unstable();
    let mut per_bank = [0u64; BANKS as usize];
    for w in changes(words.iter().copied()) {
        per_bank[(w % BANKS) as usize] += 1;
    }
    per_bank.into_iter().max().unwrap_or(0).max(1)
}

/// The wavefronts of a pass whose banks each deliver one distinct word (coalesced rows,
/// broadcasts: most accesses): 1, found without sorting. `None` where some bank delivers two.
fn without_conflicts(words: &[u64]) -> Option<u64> {
    let mut word_of_bank = [0u64; BANKS as usize];
    let mut used = 0u32;
    for &w in words {
        let bank = (w % BANKS) as usize;
        if used >> bank & 1 == 0 {
            used |= 1 << bank;
            word_of_bank[bank] = w;
        } else if word_of_bank[bank] != w {
            return None;
        }
    }
    Some(1)
}

/// Wavefronts the same access would take without bank conflicts: its bytes over the banks'
/// width, and never more than it takes (broadcasts can do better).
pub fn conflict_free_wavefronts(lanes: u32, bytes: u32, actual: u64) -> u64 {
    let ideal = (u64::from(lanes) * u64::from(bytes.max(4))).div_ceil(BANKS * 4);
    ideal.min(actual).max(1)
}

/// What one warp-wide access moves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Moved {
    /// 32-byte sectors a global access touches; 0 for a shared one.
    pub sectors: u64,
    /// Sectors the same lanes would touch if perfectly coalesced.
    pub coalesced_sectors: u64,
    /// Of `sectors`, those that leave the SM (see [`moved`]).
    pub missed_sectors: u64,
    /// L1 wavefronts of a global access.
    pub l1_wavefronts: u64,
    /// Wavefronts of a shared access, and the same without bank conflicts.
    pub wavefronts: u64,
    pub conflict_free_wavefronts: u64,
    /// A global access whose addresses are unknown: counted coalesced, conflict-free and
    /// missing.
    pub unknown: bool,
}

/// Where [`moved`] records the sectors an access touches, when asked to.
#[derive(Default)]
pub struct Seen<'a> {
    /// Sectors the block has loaded: a global load's sectors found here are L1 hits (and,
    /// where `touched` is counted too, among its sectors already). Once a replay has entered
    /// runs ([`Distinct::insert_run`]), a sector a run holds may still be found new: the
    /// per-access hits are then not exact, and the traffic sums take the block's misses
    /// from the set's count instead ([`Distinct::len`]).
    pub block_loads: Option<&'a mut Distinct>,
    /// Every sector touched so far, when counted.
    pub touched: Option<&'a mut Touched>,
}

/// Where an access's lanes go.
#[derive(Debug, Clone, Copy)]
pub enum Target<'a> {
    /// Each active lane's address, in lane order; `None` where some are unknown.
    Lanes(Option<&'a [u64]>),
    /// The distinct sectors of a global access, in increasing order, gathered already (a
    /// replayed loop's access that moves by whole sectors a trip: [`Shifting`]).
    Sectors(&'a [u64]),
}

/// What an access of `bytes` per lane in `space` by `lanes` at `target` moves. A global
/// load's sectors are split into hits and misses against `seen.block_loads` where given (a
/// store's all leave the SM).
pub fn moved(target: Target, space: Space, bytes: u32, lanes: u32, load: bool, seen: Seen) -> Moved {
    let count = lanes.count_ones();
    let addresses = match target {
        Target::Lanes(addresses) => addresses,
        Target::Sectors(list) => return global_moved(list, bytes, count, load, seen),
    };
    if space == Space::Shared {
        let ideal = conflict_free_wavefronts(count, bytes, u64::MAX);
        let wavefronts = addresses.map_or(ideal, |a| bank_wavefronts(a, bytes, lanes));
        return Moved {
            wavefronts,
            conflict_free_wavefronts: conflict_free_wavefronts(count, bytes, wavefronts),
            ..Moved::default()
        };
    }
    let coalesced = coalesced_bytes(count, bytes) / SECTOR;
    let Some(addresses) = addresses else {
        if let Some(all) = seen.touched {
            all.add_unknown(coalesced);
        }
        return Moved {
            sectors: coalesced,
            coalesced_sectors: coalesced,
            missed_sectors: coalesced,
            l1_wavefronts: coalesced.div_ceil(SECTORS_PER_LINE),
            unknown: true,
            ..Moved::default()
        };
    };
    global_moved(
        Sectors::default().fill(addresses, bytes),
        bytes,
        count,
        load,
        seen,
    )
}

/// What a global access of `bytes` per lane by `count` lanes, touching the distinct sectors
/// `list` (increasing), moves.
fn global_moved(list: &[u64], bytes: u32, count: u32, load: bool, seen: Seen) -> Moved {
    let coalesced = coalesced_bytes(count, bytes) / SECTOR;
    let n = list.len() as u64;
    // One wavefront per line, and one per register the data path returns (as for shared).
    let l1_wavefronts = lines(list).max(u64::from(bytes.max(4) / 4));
    let missed = match seen.block_loads.filter(|_| load) {
        Some(loads) => {
            // A sector the block loaded before is among those touched already.
            let mut touched = seen.touched;
            let mut missed = 0;
            for &s in list.iter().filter(|&&s| loads.insert(s)) {
                missed += 1;
                if let Some(all) = touched.as_deref_mut() {
                    all.add(&[s], true);
                }
            }
            missed
        }
        None => {
            if let Some(all) = seen.touched {
                all.add(list, load);
            }
            n
        }
    };
    Moved {
        sectors: n,
        coalesced_sectors: coalesced,
        missed_sectors: missed,
        l1_wavefronts,
        ..Moved::default()
    }
}

/// The distinct sectors (address / 32, increasing) that lanes accessing `bytes` each at
/// `addresses` touch: a coalesced float access touches 4; a stride of 2 floats, 8.
fn sectors(addresses: &[u64], bytes: u32) -> Vec<u64> {
    Sectors::default().fill(addresses, bytes).to_vec()
}

/// Bytes moved when the addresses are unknown: `lanes` accesses of `bytes`, taken as fully
/// coalesced (rounded up to whole sectors).
pub fn coalesced_bytes(lanes: u32, bytes: u32) -> u64 {
    (u64::from(lanes) * u64::from(bytes)).div_ceil(SECTOR) * SECTOR
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sector_bytes(addresses: &[u64], bytes: u32) -> u64 {
        sectors(addresses, bytes).len() as u64 * SECTOR
    }

    fn strided(base: u64, stride: u64, bytes: u32, lanes: u64) -> Vec<u64> {
        (0..lanes).map(|l| base + l * stride * u64::from(bytes)).collect()
    }

    #[test]
    fn strides_double_the_bytes() {
        assert_eq!(sector_bytes(&strided(1 << 40, 1, 4, 32), 4), 128);
        assert_eq!(sector_bytes(&strided(1 << 40, 2, 4, 32), 4), 256);
        assert_eq!(sector_bytes(&strided(1 << 40, 4, 4, 32), 4), 512);
        assert_eq!(sector_bytes(&strided(1 << 40, 32, 4, 32), 4), 1024);
        assert_eq!(sector_bytes(&strided(1 << 40, 1, 8, 32), 8), 256);
        assert_eq!(sector_bytes(&strided(1 << 40, 1, 16, 32), 16), 512);
    }

    #[test]
    fn misaligned_and_partial_accesses() {
        // Eight floats from a 32-byte boundary: one sector; shifted by 4 bytes: two.
        assert_eq!(sector_bytes(&strided(0, 1, 4, 8), 4), 32);
        assert_eq!(sector_bytes(&strided(4, 1, 4, 8), 4), 64);
        // A 16-byte access straddling a sector boundary touches both.
        assert_eq!(sector_bytes(&[24], 16), 64);
        assert_eq!(sector_bytes(&[], 4), 0);
        assert_eq!(coalesced_bytes(32, 4), 128);
        assert_eq!(coalesced_bytes(9, 4), 64);
        assert_eq!(coalesced_bytes(0, 4), 0);
    }

    #[test]
    fn l1_wavefronts_are_the_lines_touched() {
        let l = |stride, bytes| lines(&sectors(&strided(1 << 40, stride, bytes, 32), bytes));
        assert_eq!((l(1, 4), l(2, 4), l(4, 4), l(8, 4), l(32, 4)), (1, 2, 4, 8, 32));
        assert_eq!((l(1, 8), l(1, 16)), (2, 4));
        // sgemm_naive's A[row·N + k]: two rows of a warp, two lines; B's 16 columns, one.
        assert_eq!(lines(&sectors(&[0x1000, 0x1000 + 1024], 4)), 2);
        assert_eq!(lines(&[]), 0);
    }

    #[test]
    fn only_whole_sectors_within_the_address_space_shift() {
        let lanes = strided(1 << 20, 1, 4, 32);
        assert!(Shifting::new(&lanes, 4, 16, 4).is_none(), "half a sector a trip");
        let down = (-(1i64 << 20)) as u64;
        assert!(Shifting::new(&lanes, 4, down, 1).is_some());
        assert!(
            Shifting::new(&lanes, 4, down, 2).is_none(),
            "below address 0 on the second trip"
        );
        let top = strided(u64::MAX - 127, 1, 4, 32);
        assert!(Shifting::new(&top, 4, 32, 1).is_none(), "past the last sector");
    }

    #[test]
    fn bank_conflicts() {
        let all = u32::MAX;
        let w = |stride, bytes| bank_wavefronts(&strided(0x400, stride, bytes, 32), bytes, all);
        // sgemm_tiled's `As[ty][k]`: one word for the warp's lanes of a row, a broadcast.
        assert_eq!(bank_wavefronts(&[0x400; 32], 4, all), 1);
        assert_eq!(
            (w(1, 4), w(2, 4), w(16, 4), w(32, 4), w(33, 4)),
            (1, 2, 16, 32, 1)
        );
        assert_eq!((w(1, 8), w(1, 16)), (2, 4));
        // A 16-byte broadcast, a half-warp a pass: sgemm_tiled<16>'s LDS.128 of
        // As[ty][k..k+3] (lanes 0-15 one row, 16-31 the next) and sgemm_tiled<32>'s (one
        // address) take 2, as Nsight Compute counts them on the H100; none is a conflict.
        let two_rows: Vec<u64> = (0..32)
            .map(|lane| if lane < 16 { 0x400 } else { 0x440 })
            .collect();
        assert_eq!(bank_wavefronts(&two_rows, 16, all), 2);
        assert_eq!(bank_wavefronts(&[0x400; 32], 16, all), 2);
        // Only the upper half-warp active: one pass.
        assert_eq!(bank_wavefronts(&[0x400; 16], 16, 0xFFFF_0000), 1);
        assert_eq!(conflict_free_wavefronts(32, 16, 2), 2);
        assert_eq!(conflict_free_wavefronts(32, 16, 8), 4);
        assert_eq!(conflict_free_wavefronts(32, 4, 32), 1);
        assert_eq!(conflict_free_wavefronts(8, 16, 4), 1);
        assert_eq!(bank_wavefronts(&[], 4, 0), 0);
    }

    proptest! {
        #[test]
        fn wavefronts_between_ideal_and_lanes(base in 0u64..1 << 20, stride in 0u64..70, lanes in 1u64..=32) {
            let base = base / 4 * 4;
            let actual = bank_wavefronts(&strided(base, stride, 4, lanes), 4, u32::MAX);
            prop_assert!(actual >= 1 && actual <= lanes);
            prop_assert!(conflict_free_wavefronts(lanes as u32, 4, actual) <= actual);
        }

        #[test]
        fn same_address_is_one_sector(a: u64, lanes in 1usize..32) {
            let a = a % (1 << 50) / 4 * 4;
            prop_assert_eq!(sector_bytes(&vec![a; lanes], 4), 32);
        }

        #[test]
        fn bytes_never_less_than_coalesced(base in 0u64..1 << 40, stride in 0u64..64, lanes in 1u64..=32) {
            let base = base / 4 * 4;
            let addresses = strided(base, stride, 4, lanes);
            let distinct = if stride == 0 { 1 } else { lanes as u32 };
            prop_assert!(sector_bytes(&addresses, 4) >= coalesced_bytes(distinct, 4));
            prop_assert!(sector_bytes(&addresses, 4) <= lanes * 32);
        }
    }
}
