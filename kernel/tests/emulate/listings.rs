//! Hand-written listings: unresolved branches, divergence, uniform instructions, errors.

use super::*;

/// A loop whose trip count is loaded from memory.
const LOADED_TRIP_COUNT: [&str; 12] = [
    "LDC R1, c[0x0][0x28]",
    "LDC.64 R2, c[0x0][0x210]",
    "ULDC.64 UR4, c[0x0][0x208]",
    "LDG.E R4, desc[UR4][R2.64]",
    "ISETP.GE.AND P0, PT, R4, 0x1, PT",
    "@!P0 EXIT",
    "MOV R5, RZ",
    "IADD3 R5, R5, 0x1, RZ",
    "ISETP.GE.AND P0, PT, R5, R4, PT",
    "@!P0 BRA 0x70",
    "EXIT",
    "BRA 0xb0",
];

#[test]
fn branches_on_loaded_data_are_unresolved() {
    let r = emulate(&sm90(&LOADED_TRIP_COUNT), &launch([1, 1, 1], [64, 1, 1], &[None]));
    // The guarded exit goes on; the loop runs once: 6 + 1 + 3 + 1.
    assert_eq!(executed(&r), 11.0);
    assert_eq!(summary(&r).loop_runs_per_warp["L0"], 1.0);
    // Every thread loads p[0]: one sector.
    assert_eq!(bytes(&r), 32.0);
    let lines: Vec<(u64, &str)> = r
        .unresolved
        .iter()
        .map(|u| (u.address, u.instruction.as_str()))
        .collect();
    assert_eq!(lines, vec![(0x50, "@!P0 EXIT"), (0x90, "@!P0 BRA 0x70")]);
    for u in &r.unresolved {
        assert!(u.reason.contains("LDG.E R4"), "{}", u.reason);
        assert!(u.reason.contains("global memory"), "{}", u.reason);
    }
    assert!(
        r.unresolved[1].reason.contains("leaving loop L0"),
        "{}",
        r.unresolved[1].reason
    );
    assert!(
        r.notes.iter().any(|n| n.contains("depend on loaded data")),
        "{:?}",
        r.notes
    );
}

/// Odd and even lanes take different sides and reconverge at the EXIT, which runs once.
#[test]
fn divergent_lanes_reconverge_at_the_post_dominator() {
    let listing = sm90(&[
        "S2R R0, SR_TID.X",
        "LOP3.LUT R1, R0, 0x1, RZ, 0xc0, !PT",
        "ISETP.NE.AND P0, PT, R1, RZ, PT",
        "@P0 BRA 0x70",
        "IADD3 R2, R0, 0x1, RZ",
        "IADD3 R2, R2, 0x1, RZ",
        "BRA 0xa0",
        "IADD3 R2, R0, 0x2, RZ",
        "IADD3 R2, R2, 0x2, RZ",
        "IADD3 R2, R2, 0x2, RZ",
        "EXIT",
        "BRA 0xb0",
    ]);
    let r = emulate(&listing, &launch([1, 1, 1], [32, 1, 1], &[]));
    assert_eq!(executed(&r), 4.0 + 3.0 + 3.0 + 1.0);
    let s = summary(&r);
    assert_eq!(
        s.active_thread_instructions_per_warp,
        4.0 * 32.0 + 6.0 * 16.0 + 32.0
    );
    // The branch's guard holds in the 16 odd lanes.
    assert_eq!(
        s.thread_instructions_per_warp,
        3.0 * 32.0 + 16.0 + 6.0 * 16.0 + 32.0
    );
    assert!(r.unresolved.is_empty());
}

/// A ballot, its move to the uniform datapath and a uniform branch on it.
#[test]
fn votes_and_uniform_branches() {
    let listing = sm90(&[
        "S2R R0, SR_TID.X",
        "ISETP.GE.U32.AND P0, PT, R0, 0x8, PT",
        "VOTE.ANY R1, PT, P0",
        "R2UR UR4, R1",
        "ULOP3.LUT UR5, UR4, 0xff, URZ, 0xc0, !UPT",
        "UISETP.NE.AND UP0, UPT, UR5, URZ, UPT",
        "@UP0 EXIT",
        "EXIT",
    ]);
    // Lanes 8–31 vote yes: the ballot 0xffffff00 has no bit in 0xff, so the warp goes on.
    let r = emulate(&listing, &launch([1, 1, 1], [32, 1, 1], &[]));
    assert_eq!(executed(&r), 8.0);
    assert!(r.unresolved.is_empty());
    let by_pipe = &r.per_warp.by_pipe;
    assert_eq!(value(&by_pipe["uniform"]), 2.0);
    assert_eq!(value(&by_pipe["misc"]), 3.0, "S2R, VOTE, R2UR");
}

#[test]
fn missing_arguments_are_refused_at_the_line_that_reads_them() {
    let e = analyze(
        &example("saxpy2-sm90.sass"),
        &launch([1, 1, 1], [256, 1, 1], &[Some(1000)]),
    )
    .expect_err("one argument of four");
    assert!(e.line.is_some());
    assert!(e.message.contains("past the 1 argument(s)"), "{e}");
}

#[test]
fn bad_launches_are_refused() {
    let listing = example("saxpy2-sm90.sass");
    let e = analyze(&listing, &saxpy(1, 2048, 10, 1)).expect_err("2048 threads");
    assert!(e.message.contains("1024"), "{e}");
    let e = analyze(&listing, &saxpy(0, 256, 10, 1)).expect_err("empty grid");
    assert!(e.message.contains("at least 1"), "{e}");
    let e = analyze(&listing, &saxpy(1, 256, 1 << 33, 1)).expect_err("wide int");
    assert!(e.message.contains("32 bits"), "{e}");
}

#[test]
fn maxwell_convergence_instructions_are_refused() {
    let listing = parse("1.  SSY 0x28;\n2.  MOV R0, RZ;\n3.  SYNC;\n4.  EXIT;\n").expect("parses");
    let e = analyze(&listing, &launch([1, 1, 1], [32, 1, 1], &[])).expect_err("SSY");
    assert_eq!(e.line, Some(1));
    assert!(e.message.contains("static mode"), "{e}");
}
