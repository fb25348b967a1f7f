//! Memory traffic of one warp-wide access: the 32-byte sectors a global access touches, the
//! wavefronts a shared access takes through the banks.

/// Bytes of an L2 sector, the unit global memory moves.
pub const SECTOR: u64 = 32;

/// Shared memory's banks, each 4 bytes wide; one wavefront reads one word from each.
pub const BANKS: u64 = 32;

/// The distinct sectors (address / 32) that lanes accessing `bytes` each at `addresses` touch,
/// in increasing order: each moves once (a coalesced float access moves 4 sectors; a stride of
/// 2 floats, 8).
pub fn sectors(addresses: &[u64], bytes: u32) -> Vec<u64> {
    let mut sectors: Vec<u64> = addresses
        .iter()
        .flat_map(|&a| {
            let last = a.saturating_add(u64::from(bytes.max(1)) - 1);
            a / SECTOR..=last / SECTOR
        })
        .collect();
    sectors.sort_unstable();
    sectors.dedup();
    sectors
}

/// Wavefronts a shared-memory access takes: the most distinct 4-byte words any one bank must
/// deliver (lanes reading the same word share it, a broadcast). A conflict-free 4-byte access
/// takes 1; a 16-byte one, 4; 32 lanes striding by 32 words, 32.
pub fn bank_wavefronts(addresses: &[u64], bytes: u32) -> u64 {
    let words_per_lane = u64::from(bytes.max(4) / 4);
    let mut words: Vec<u64> = addresses
        .iter()
        .flat_map(|&a| (a / 4..).take(words_per_lane as usize))
        .collect();
    words.sort_unstable();
    words.dedup();
    let mut per_bank = [0u64; BANKS as usize];
    for w in words {
        per_bank[(w % BANKS) as usize] += 1;
    }
    per_bank.into_iter().max().unwrap_or(0)
}

/// Wavefronts the same access would take without bank conflicts: its bytes over the banks'
/// width, and never more than it takes (broadcasts can do better).
pub fn conflict_free_wavefronts(lanes: u32, bytes: u32, actual: u64) -> u64 {
    let ideal = (u64::from(lanes) * u64::from(bytes.max(4))).div_ceil(BANKS * 4);
    ideal.min(actual).max(1)
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
    fn bank_conflicts() {
        let w = |stride, bytes| bank_wavefronts(&strided(0x400, stride, bytes, 32), bytes);
        // sgemm_tiled's `As[ty][k]`: one word for the warp's lanes of a row, a broadcast.
        assert_eq!(bank_wavefronts(&[0x400; 32], 4), 1);
        assert_eq!(
            (w(1, 4), w(2, 4), w(16, 4), w(32, 4), w(33, 4)),
            (1, 2, 16, 32, 1)
        );
        assert_eq!((w(1, 8), w(1, 16)), (2, 4));
        assert_eq!(conflict_free_wavefronts(32, 4, 32), 1);
        assert_eq!(conflict_free_wavefronts(32, 16, 4), 4);
        assert_eq!(conflict_free_wavefronts(32, 16, 1), 1);
        assert_eq!(bank_wavefronts(&[], 4), 0);
    }

    proptest! {
        #[test]
        fn wavefronts_between_ideal_and_lanes(base in 0u64..1 << 20, stride in 0u64..70, lanes in 1u64..=32) {
            let base = base / 4 * 4;
            let actual = bank_wavefronts(&strided(base, stride, 4, lanes), 4);
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
