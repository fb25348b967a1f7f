//! The thesis's listing (Figure 5.2, sm_52) against eqs. 5.1 and 5.3 (seed 004): the XMAD
//! multiply and the IADD .CC/.X carry must be right for the addresses and the `i < n` test
//! to come out.

use super::*;

#[test]
fn thesis_figure_5_2_gives_eqs_5_1_and_5_3() {
    let listing = example("saxpy2-figure-5-2.sass");
    for a in [1.0, 16.0, 128.0] {
        // 2^20 elements: every warp is full and below n.
        let r = emulate(&listing, &saxpy(4096, 256, 1 << 20, a as i64));
        assert_eq!(r.arch.to_string(), "sm_52");
        assert_eq!(executed(&r), 26.0 + 4.0 * a);
        // Three dual-issued pairs, one in the loop.
        assert_eq!(value(&r.parameters.issuedInstructions), 24.0 + 3.0 * a);
        assert_eq!(value(&r.parameters.CUDACoreInstructions), 23.0 + 4.0 * a);
        assert_eq!(bytes(&r), 384.0);
        assert_eq!(
            value(&r.parameters.latencyBound),
            942.0 + 24.0 * a,
            "eq. 5.1 at a = {a}"
        );
        assert_eq!(summary(&r).loop_runs_per_warp["L0"], a);
        assert_modes_agree(&r, &static_mode(&listing, &[("L0", a)]));
    }
}

/// n = 10^6 with grid ⌈n/256⌉ = 3907: 31,250 full warps and, in the last block, 6 warps past n
/// that run instructions 1–8 (no pair, all on CUDA cores, no global access).
#[test]
fn thesis_listing_with_a_ragged_last_block() {
    let r = emulate(
        &example("saxpy2-figure-5-2.sass"),
        &saxpy(3907, 256, 1_000_000, 128),
    );
    let average = |full: f64, early: f64| (31_250.0 * full + 6.0 * early) / 31_256.0;
    assert!(close(executed(&r), average(538.0, 8.0)));
    assert!(close(
        value(&r.parameters.issuedInstructions),
        average(408.0, 8.0)
    ));
    assert!(close(
        value(&r.parameters.CUDACoreInstructions),
        average(535.0, 8.0)
    ));
    assert!(close(bytes(&r), average(384.0, 0.0)));
    assert_eq!(summary(&r).groups, 2);
}
