//! Emulation mode against measured and hand-derived values, one file a topic:
//! - [`h100`]: the H100's saxpy2 (`examples/kernels/saxpy2-sm90.sass`) against Nsight Compute
//!   (`shared/measurements/h100/ncu_saxpy2.csv`: 524,288 warps, n = 2^24, block 256);
//! - [`thesis`]: the thesis's Figure 5.2 listing (sm_52) against eqs. 5.1 and 5.3 (seed 004);
//! - [`corpus`]: the kernel corpus (`kernel/tests/sass/`) against the goldens of its README;
//! - [`listings`]: hand-written listings (unresolved branches, divergence, errors);
//! - [`oracle`]: a hand-computed oracle, on random launches (proptest);
//!
//! and static mode wherever both modes apply. This file holds the helpers they share.

mod corpus;
mod h100;
mod listings;
mod oracle;
mod thesis;

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
