//! Global-memory traffic of one warp-wide access: the 32-byte sectors its lanes touch.

/// Bytes of an L2 sector, the unit global memory moves.
pub const SECTOR: u64 = 32;

/// Bytes moved for lanes accessing `bytes` each at `addresses`: every distinct 32-byte sector
/// touched, once (a coalesced float access moves 128 bytes; a stride of 2 floats, 256).
pub fn sector_bytes(addresses: &[u64], bytes: u32) -> u64 {
    let mut sectors: Vec<u64> = addresses
        .iter()
        .flat_map(|&a| {
            let last = a.saturating_add(u64::from(bytes.max(1)) - 1);
            a / SECTOR..=last / SECTOR
        })
        .collect();
    sectors.sort_unstable();
    sectors.dedup();
    sectors.len() as u64 * SECTOR
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

    proptest! {
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
