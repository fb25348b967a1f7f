//! Emulation mode against measured and hand-derived values:
//! - the H100's saxpy2 (`examples/kernels/saxpy2-sm90.sass`) against Nsight Compute
//!   (`shared/measurements/h100/ncu_saxpy2.csv`: 524,288 warps, n = 2^24, block 256);
//! - the thesis's Figure 5.2 listing (sm_52) against eqs. 5.1 and 5.3 (seed 004);
//! - the kernel corpus (`kernel/tests/sass/`) against the goldens of its README;
//! - static mode, wherever both modes apply;
//! - a hand-computed oracle, on random launches (proptest).

use hetsim_kernel::{analyze, parse, Arg, Launch, Listing, Options, Quantity, Report};
use proptest::prelude::*;
use std::collections::BTreeMap;

fn read(path: &str) -> Listing {
    let path = format!("{}/{path}", env!("CARGO_MANIFEST_DIR"));
    parse(&std::fs::read_to_string(&path).expect("listing")).expect("parses")
}

fn example(name: &str) -> Listing {
    read(&format!("../examples/kernels/{name}"))
}

fn corpus(name: &str) -> Listing {
    read(&format!("tests/sass/{name}"))
}

/// A one-kernel sm_90 listing, instruction `k` at address `0x10·k`.
fn sm90(body: &[&str]) -> Listing {
    let mut text = "\tcode for sm_90\n\t\tFunction : test\n\t.headerflags\t@\"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)\"\n".to_string();
    for (k, ins) in body.iter().enumerate() {
        text += &format!("        /*{:04x}*/                   {ins} ;\n", 16 * k);
    }
    parse(&text).expect("parses")
}

fn args(list: &[Option<i64>]) -> Vec<Arg> {
    list.iter().map(|a| a.map_or(Arg::Pointer, Arg::Int)).collect()
}

fn launch(grid: [u32; 3], block: [u32; 3], list: &[Option<i64>]) -> Options {
    Options {
        launch: Some(Launch {
            grid,
            block,
            args: args(list),
            dynamic_shared: 0,
        }),
        ..Options::default()
    }
}

/// `n, a, x, y` for saxpy2-like kernels, one block dimension.
fn saxpy(grid: u32, block: u32, n: i64, a: i64) -> Options {
    launch([grid, 1, 1], [block, 1, 1], &[Some(n), Some(a), None, None])
}

fn emulate(listing: &Listing, options: &Options) -> Report {
    let report = analyze(listing, options).expect("emulates");
    assert_eq!(report.mode, "emulation");
    report
}

fn value(q: &Quantity) -> f64 {
    q.value().unwrap_or_else(|| panic!("expected a number, got {q}"))
}

fn executed(r: &Report) -> f64 {
    value(&r.per_warp.executed)
}

fn bytes(r: &Report) -> f64 {
    value(&r.gmem_bytes_per_warp)
}

fn summary(r: &Report) -> &hetsim_kernel::analysis::EmulationSummary {
    r.emulation.as_ref().expect("an emulation summary")
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// Static mode with every loop's trip count given.
fn static_mode(listing: &Listing, trips: &[(&str, f64)]) -> Report {
    let trips: BTreeMap<String, f64> = trips.iter().map(|(l, n)| (l.to_string(), *n)).collect();
    let report = analyze(
        listing,
        &Options {
            trips,
            ..Options::default()
        },
    )
    .expect("analyses");
    assert_eq!(report.mode, "static");
    report
}

/// Executed, issued, CUDA-core and per-pipe counts, bytes and latency bound agree.
fn assert_modes_agree(emulated: &Report, fixed: &Report) {
    let e = &emulated.per_warp;
    let s = &fixed.per_warp;
    for (what, a, b) in [
        ("executed", &e.executed, &s.executed),
        ("issued", &e.issued, &s.issued),
        ("cuda_core", &e.cuda_core, &s.cuda_core),
        ("latency bound", &emulated.latency_bound, &fixed.latency_bound),
    ] {
        assert!(close(value(a), value(b)), "{what}: emulated {a}, static {b}");
    }
    assert_eq!(
        e.by_pipe.keys().collect::<Vec<_>>(),
        s.by_pipe.keys().collect::<Vec<_>>()
    );
    for (pipe, q) in &e.by_pipe {
        assert!(close(value(q), value(&s.by_pipe[pipe])), "{pipe}");
    }
}

// ---------------------------------------------------------------------------------------------
// The H100's saxpy2 against Nsight Compute.

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

// ---------------------------------------------------------------------------------------------
// The thesis's listing (sm_52): the XMAD multiply and the IADD .CC/.X carry must be right for
// the addresses and the `i < n` test to come out.

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

// ---------------------------------------------------------------------------------------------
// The corpus (kernel/tests/sass/README.md, "Golden values").

/// Formula S of the README, for saxpy2 and daxpy_loop as nvcc 13 unrolls them.
fn formula_s(a: i64) -> f64 {
    let ind = |c: bool| f64::from(u8::from(c));
    match a {
        ..=0 => 21.0,
        1..=3 => 32.0 + 4.0 * a as f64,
        _ => {
            43.0 + ind(a >= 16) * (1.0 + 19.0 * (a / 16) as f64)
                + 10.0 * ind(a % 16 >= 8)
                + 7.0 * ((a % 8) / 4) as f64
                + 4.0 * (a % 4) as f64
        }
    }
}

#[test]
fn corpus_saxpy2_and_daxpy_follow_formula_s() {
    let saxpy2 = corpus("saxpy2_sm90.sass");
    let daxpy = corpus("daxpy_loop_sm90.sass");
    for (a, expected) in [
        (1, 36.0),
        (4, 50.0),
        (7, 62.0),
        (8, 53.0),
        (16, 63.0),
        (32, 82.0),
        (128, 196.0),
        (1024, 1260.0),
    ] {
        assert_eq!(formula_s(a), expected);
        assert_eq!(
            executed(&emulate(&saxpy2, &saxpy(4096, 256, 1 << 20, a))),
            expected,
            "a = {a}"
        );
    }
    for a in [-3, 0, 2, 5, 9, 13, 23, 200] {
        assert_eq!(
            executed(&emulate(&saxpy2, &saxpy(4096, 256, 1 << 20, a))),
            formula_s(a),
            "a = {a}"
        );
    }
    assert_eq!(bytes(&emulate(&saxpy2, &saxpy(4096, 256, 1 << 20, 8))), 384.0);
    assert_eq!(bytes(&emulate(&saxpy2, &saxpy(4096, 256, 1 << 20, 0))), 256.0);
    let r = emulate(&daxpy, &saxpy(4096, 256, 1 << 20, 8));
    assert_eq!((executed(&r), bytes(&r)), (53.0, 768.0));
}

#[test]
fn corpus_unroll1_and_sfu_loop() {
    let unroll1 = corpus("saxpy2_unroll1_sm90.sass");
    for a in [0, 1, 8, 100] {
        let r = emulate(&unroll1, &saxpy(4096, 256, 1 << 20, a));
        let expected = if a >= 1 { 27.0 + 4.0 * a as f64 } else { 21.0 };
        assert_eq!(executed(&r), expected, "a = {a}");
        // The x load sits in the loop's preheader: skipped when a ≤ 0.
        assert_eq!(bytes(&r), if a >= 1 { 384.0 } else { 256.0 });
        if a >= 1 {
            assert_modes_agree(&r, &static_mode(&unroll1, &[("L0", a as f64)]));
        }
    }
    let sfu = corpus("sfu_loop_sm90.sass");
    for a in [0, 2, 4, 8, 11] {
        let r = emulate(&sfu, &saxpy(4096, 256, 1 << 20, a));
        let expected = match a {
            ..=0 => 21.0,
            1..=3 => 27.0 + 10.0 * a as f64,
            _ => 28.0 + 22.0 * (a / 4) as f64 + 10.0 * (a % 4) as f64,
        };
        assert_eq!(executed(&r), expected, "a = {a}");
        assert_eq!(bytes(&r), 256.0);
    }
    let r = emulate(&sfu, &saxpy(4096, 256, 1 << 20, 8));
    assert_eq!(value(&r.per_warp.by_pipe["sfu"]), 16.0, "8 MUFU.EX2 + 8 MUFU.SIN");
}

/// Stride 1, 2, 4, 32: the load spans 128·stride bytes (at most 32 sectors), the store 128.
#[test]
fn corpus_strided_copy_counts_sectors() {
    let listing = corpus("strided_sm90.sass");
    for (stride, expected) in [(1, 256.0), (2, 384.0), (4, 640.0), (8, 1152.0), (32, 1152.0)] {
        let r = emulate(&listing, &saxpy(4096, 256, 1 << 20, stride));
        assert_eq!(executed(&r), 18.0);
        assert_eq!(bytes(&r), expected, "stride {stride}");
        assert!(r.notes.is_empty(), "{:?}", r.notes);
    }
    // Static mode sees the coalesced case only.
    let r = emulate(&listing, &saxpy(4096, 256, 1 << 20, 1));
    assert_modes_agree(&r, &static_mode(&listing, &[]));
    assert_eq!(bytes(&r), value(&static_mode(&listing, &[]).gmem_bytes_per_warp));
}

fn square(n: i64) -> Options {
    launch([16, 16, 1], [16, 16, 1], &[Some(n), None, None, None])
}

#[test]
fn corpus_sgemm_counts_two_rows_a_warp() {
    let r = emulate(&corpus("sgemm_naive_sm90.sass"), &square(256));
    assert_eq!((executed(&r), bytes(&r)), (1215.0, 32_896.0));
    let tiled = corpus("sgemm_tiled_sm90.sass");
    let r = emulate(&tiled, &square(256));
    assert_eq!((executed(&r), bytes(&r)), (841.0, 4224.0));
    assert_modes_agree(&r, &static_mode(&tiled, &[("L0", 16.0)]));
}

/// 572 warps hold a boundary thread (42 instructions), 7620 do not (40); bytes 7,319,552 in
/// all, 64 y-edge warps moving 576 bytes and the rest 896.
#[test]
fn corpus_stencil_averages_boundary_warps() {
    let r = emulate(
        &corpus("stencil5_sm90.sass"),
        &launch([32, 32, 1], [16, 16, 1], &[Some(512), Some(512), None, None]),
    );
    assert_eq!(executed(&r), 328_824.0 / 8192.0);
    assert_eq!(bytes(&r), 7_319_552.0 / 8192.0);
    let s = summary(&r);
    assert_eq!(s.warps, 8192);
    assert!(s.coverage.starts_with("grouped"), "{}", s.coverage);
}

/// The bytes a warp moves are the source's, whatever the architecture: every sm_70–sm_90
/// listing of the corpus gives the sm_90 goldens, with every address known.
#[test]
fn corpus_bytes_agree_across_architectures() {
    let kernels: [(&str, Options, f64); 7] = [
        ("saxpy2", saxpy(4096, 256, 1 << 20, 8), 384.0),
        ("strided_copy", saxpy(4096, 256, 1 << 20, 2), 384.0),
        ("daxpy_loop", saxpy(4096, 256, 1 << 20, 8), 768.0),
        ("sfu_loop", saxpy(4096, 256, 1 << 20, 8), 256.0),
        ("sgemm_naive", square(256), 32_896.0),
        ("sgemm_tiled", square(256), 4224.0),
        (
            "stencil5",
            launch([32, 32, 1], [16, 16, 1], &[Some(512), Some(512), None, None]),
            893.5,
        ),
    ];
    for arch in [70, 75, 80, 86, 89, 90] {
        let listing = corpus(&format!("all_kernels_sm{arch}.sass"));
        for (name, options, expected) in &kernels {
            let options = Options {
                kernel: Some(name.to_string()),
                ..options.clone()
            };
            let r = emulate(&listing, &options);
            assert_eq!(bytes(&r), *expected, "{name} on sm_{arch}");
            assert!(
                r.notes.is_empty() && r.unresolved.is_empty(),
                "{name} on sm_{arch}: {:?}",
                r.notes
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Hand-written listings: unresolved branches, divergence, uniform instructions, errors.

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

// ---------------------------------------------------------------------------------------------
// Random launches of the H100's saxpy2 against a hand-computed oracle.

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
