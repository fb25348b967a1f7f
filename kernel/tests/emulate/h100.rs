//! The H100's saxpy2 (`examples/kernels/saxpy2-sm90.sass`) against Nsight Compute
//! (`shared/measurements/h100/ncu_saxpy2.csv`: 524,288 warps, n = 2^24, block 256), and
//! against static mode.

use super::*;

/// `smsp__thread_inst_executed.sum / sm__warps_launched.sum` in ncu_saxpy2.csv, block 256.
const NCU_THREAD_INSTRUCTIONS: [(i64, f64); 5] = [
    (1, 503_316_480.0 / 524_288.0),
    (8, 973_078_528.0 / 524_288.0),
    (32, 2_583_691_264.0 / 524_288.0),
    (128, 9_026_142_208.0 / 524_288.0),
    (1024, 69_155_684_352.0 / 524_288.0),
];

#[test]
fn h100_saxpy2_matches_nsight_compute() {
    let listing = example("saxpy2-sm90.sass");
    for (a, ncu_threads) in NCU_THREAD_INSTRUCTIONS {
        let r = emulate(&listing, &saxpy(65_536, 256, 16_777_216, a));
        let a_f = a as f64;
        // smsp__inst_executed / warps: 15,728,640 / 524,288 = 30 at a = 1.
        assert_eq!(executed(&r), 26.0 + 4.0 * a_f, "a = {a}");
        assert_eq!(value(&r.parameters.issuedInstructions), 26.0 + 4.0 * a_f);
        assert_eq!(bytes(&r), 384.0);
        let s = summary(&r);
        assert_eq!(s.loop_runs_per_warp["L0"], a_f);
        // Nsight Compute's thread instructions count every active thread, guard or not
        // (960 = 30·32 at a = 1, 1856 at a = 8): so does the active count.
        assert_eq!(s.active_thread_instructions_per_warp, ncu_threads, "a = {a}");
        // Threads whose guard holds: three instructions run with the guard false in every
        // thread (`@P0 EXIT`, `@!P0 BRA 0x160`, the last `@!P0 BRA 0x120`): 96 fewer.
        assert_eq!(s.thread_instructions_per_warp, ncu_threads - 96.0);
        // Alike warps: the four corners of (warp in block) × (block), the centre and a probe.
        assert_eq!((s.warps, s.groups, s.emulated_warps), (524_288, 1, 6));
        assert!(s.coverage.starts_with("grouped"), "{}", s.coverage);
        assert!(r.unresolved.is_empty());
        assert!(r.notes.is_empty(), "{:?}", r.notes);
    }
}

#[test]
fn h100_saxpy2_agrees_with_static_mode() {
    let listing = example("saxpy2-sm90.sass");
    for a in [1, 2, 8, 128, 1024] {
        let emulated = emulate(&listing, &saxpy(65_536, 256, 16_777_216, a));
        let fixed = static_mode(&listing, &[("L0", a as f64)]);
        assert_modes_agree(&emulated, &fixed);
        assert_eq!(bytes(&emulated), value(&fixed.gmem_bytes_per_warp));
    }
}

/// 4·10^8 elements, block 256: 12.5 million warps that all behave alike, so six are
/// emulated (`cargo bench -p hetsim-kernel --bench emulate` times it).
#[test]
fn twelve_million_warps_emulate_six() {
    let r = emulate(
        &example("saxpy2-sm90.sass"),
        &saxpy(1_562_500, 256, 400_000_000, 128),
    );
    assert_eq!(executed(&r), 538.0);
    assert_eq!(bytes(&r), 384.0);
    let s = summary(&r);
    assert_eq!((s.warps, s.groups, s.emulated_warps), (12_500_000, 1, 6));
}

/// n = 1000 on 8 blocks of 256: warps 0–30 are full, warp 31 holds 8 threads below n, warps
/// 32–63 lie past n and run only up to their `@P0 EXIT` (8 instructions).
#[test]
fn warps_past_n_exit_early() {
    let a = 3.0;
    let r = emulate(&example("saxpy2-sm90.sass"), &saxpy(8, 256, 1000, 3));
    let full = 26.0 + 4.0 * a;
    assert_eq!(executed(&r), (32.0 * full + 32.0 * 8.0) / 64.0);
    // Three accesses a warp: 4 sectors each for a full warp, 1 for warp 31's 8 threads.
    assert_eq!(bytes(&r), (31.0 * 384.0 + 3.0 * 32.0) / 64.0);
    let s = summary(&r);
    assert_eq!(s.groups, 3);
    // Guard-true thread instructions: 7·32 before the exit, (32 − v) exiting, then v threads
    // run 18 + 4a instructions of which two have a false guard: 256 + v·(15 + 4a).
    let threads = |v: f64| 256.0 + v * (15.0 + 4.0 * a);
    assert_eq!(
        s.thread_instructions_per_warp,
        (31.0 * threads(32.0) + threads(8.0) + 32.0 * 256.0) / 64.0
    );
    assert_eq!(s.loop_runs_per_warp["L0"], 32.0 * a / 64.0);
}

/// Blocks of 48 threads: every second warp holds 16 threads.
#[test]
fn partial_warps_of_odd_blocks() {
    let r = emulate(&example("saxpy2-sm90.sass"), &saxpy(1000, 48, 48_000, 2));
    assert_eq!(executed(&r), 34.0);
    // A full warp's accesses move 4 sectors, a half warp's 2.
    assert_eq!(bytes(&r), (384.0 + 192.0) / 2.0);
    let s = summary(&r);
    assert_eq!(s.active_thread_instructions_per_warp, (32.0 + 16.0) * 34.0 / 2.0);
    assert_eq!((s.warps, s.groups), (2000, 2));
}
