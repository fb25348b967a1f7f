//! Random launches of the H100's saxpy2 against a hand-computed oracle (proptest).

use super::*;

/// What one warp of the H100's saxpy2 does, from the listing by hand: `v` of its threads lie
/// below n (block sizes are multiples of 32, so the warp's threads are `32w … 32w + 31`).
/// - v = 0: up to and including `@P0 EXIT`, 8 instructions, each with its guard true in all
///   32 threads.
/// - a ≥ 1: 26 + 4a instructions; three accesses of v floats.
/// - a < 1: `@!P0 BRA 0x160` skips the loop and the x load: 13 + 8 = 21; two accesses.
fn oracle_warp(v: u32, a: i64) -> [f64; 5] {
    let v = f64::from(v);
    let sectors = (v * 4.0 / 32.0).ceil() * 32.0;
    if v == 0.0 {
        return [8.0, 0.0, 256.0, 256.0, 0.0];
    }
    if a >= 1 {
        let a = a as f64;
        // [executed, bytes, guard-true threads, active threads, loop runs]
        [
            26.0 + 4.0 * a,
            3.0 * sectors,
            256.0 + v * (15.0 + 4.0 * a),
            256.0 + v * (18.0 + 4.0 * a),
            a,
        ]
    } else {
        [21.0, 2.0 * sectors, 256.0 + 12.0 * v, 256.0 + 13.0 * v, 0.0]
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn saxpy2_launches_match_the_oracle(grid in 1u32..64, warps_per_block in 1u32..=32, n in 0i64..100_000, a in 0i64..20) {
        let block = 32 * warps_per_block;
        let r = emulate(&example("saxpy2-sm90.sass"), &saxpy(grid, block, n, a));
        let warps = grid * warps_per_block;
        let mut sum = [0.0; 5];
        for w in 0..warps {
            let v = (n - 32 * i64::from(w)).clamp(0, 32) as u32;
            for (s, x) in sum.iter_mut().zip(oracle_warp(v, a)) {
                *s += x;
            }
        }
        let mean = sum.map(|s| s / f64::from(warps));
        let s = summary(&r);
        prop_assert!(close(executed(&r), mean[0]), "executed {} vs {}", executed(&r), mean[0]);
        prop_assert!(close(value(&r.parameters.issuedInstructions), mean[0]));
        prop_assert!(close(bytes(&r), mean[1]), "bytes {} vs {}", bytes(&r), mean[1]);
        prop_assert!(close(s.thread_instructions_per_warp, mean[2]));
        prop_assert!(close(s.active_thread_instructions_per_warp, mean[3]));
        prop_assert!(close(s.loop_runs_per_warp["L0"], mean[4]));
        prop_assert_eq!(s.warps, u64::from(warps));
        prop_assert!(s.groups <= 3);
        prop_assert!(r.unresolved.is_empty());
    }
}
