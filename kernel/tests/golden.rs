//! Golden values: the thesis's Figure 5.2 listing (seed 004, eqs. 5.1 and 5.3) and the H100's
//! saxpy2 (hetsim GPU measurements, H100 SXM 80GB, 2026-11-22: saxpy2_sm90.sass, ncu_saxpy2.csv).

use hetsim_kernel::{analyze, parse, Options, Quantity};
use std::collections::BTreeMap;

fn listing(name: &str) -> hetsim_kernel::Listing {
    let path = format!("{}/../examples/kernels/{name}", env!("CARGO_MANIFEST_DIR"));
    parse(&std::fs::read_to_string(&path).expect("example listing")).expect("parses")
}

fn formula(q: &Quantity) -> String {
    match q {
        Quantity::Formula(f) => f.clone(),
        Quantity::Value(v) => panic!("expected a formula, got {v}"),
    }
}

#[test]
fn thesis_figure_5_2_static_formulas() {
    let report = analyze(&listing("saxpy2-figure-5-2.sass"), &Options::default()).expect("analyses");
    assert_eq!(report.arch.to_string(), "sm_52");
    assert_eq!(report.loops.len(), 1);
    assert_eq!(report.loops[0].body_instructions, 4);
    // Eq. 5.3: 23 + 4a CUDA-core instructions; 384 bytes per warp; eq. 5.1: 942 + 24a.
    assert_eq!(formula(&report.parameters.CUDACoreInstructions), "23 + 4·L0");
    assert_eq!(report.parameters.GMEMBytesTransferred, Quantity::Value(384.0));
    assert_eq!(formula(&report.parameters.latencyBound), "942 + 24·L0");
    // Three dual-issued pairs, one in the loop: 26 + 4a executed, 24 + 3a issued.
    assert_eq!(formula(&report.per_warp.executed), "26 + 4·L0");
    assert_eq!(formula(&report.parameters.issuedInstructions), "24 + 3·L0");
    assert_eq!(report.registers, Some(8));
}

#[test]
fn h100_saxpy2_static_formulas() {
    let report = analyze(&listing("saxpy2-sm90.sass"), &Options::default()).expect("analyses");
    assert_eq!(report.arch.to_string(), "sm_90");
    assert_eq!(
        report.demangled.as_deref(),
        Some("saxpy2(int, int, float*, float*)")
    );
    // Nsight Compute: 15,728,640 instructions over 524,288 warps at a = 1 … 26 + 4a.
    assert_eq!(formula(&report.parameters.issuedInstructions), "26 + 4·L0");
    assert_eq!(report.parameters.GMEMBytesTransferred, Quantity::Value(384.0));
    assert_eq!(report.registers, Some(8));
    let trips = BTreeMap::from([("L0".to_string(), 1024.0)]);
    let report = analyze(
        &listing("saxpy2-sm90.sass"),
        &Options {
            trips,
            ..Options::default()
        },
    )
    .expect("analyses");
    assert_eq!(
        report.parameters.issuedInstructions,
        Quantity::Value(26.0 + 4096.0)
    );
    println!("{}", serde_json::to_string_pretty(&report).unwrap());
}

fn corpus(name: &str) -> hetsim_kernel::Listing {
    let path = format!("{}/tests/sass/{name}", env!("CARGO_MANIFEST_DIR"));
    parse(&std::fs::read_to_string(&path).expect("corpus listing")).expect("parses")
}

/// Held-out sm_90 kernels, against the counts derived by hand from their listings
/// (kernel/tests/sass/README.md).
#[test]
fn held_out_kernels_static_counts() {
    let report = analyze(&corpus("strided_sm90.sass"), &Options::default()).expect("analyses");
    assert_eq!(report.per_warp.executed, Quantity::Value(18.0));
    assert_eq!(report.gmem_bytes_per_warp, Quantity::Value(256.0));
    let report = analyze(&corpus("sgemm_tiled_sm90.sass"), &Options::default()).expect("analyses");
    assert_eq!(formula(&report.per_warp.executed), "41 + 50·L0");
    let trips = BTreeMap::from([("L0".to_string(), 256.0 / 16.0)]);
    let report = analyze(
        &corpus("sgemm_tiled_sm90.sass"),
        &Options {
            trips,
            ..Options::default()
        },
    )
    .expect("analyses");
    // N = 256 with 16×16 tiles: 841 instructions and 132 sectors (4,224 bytes) per warp.
    assert_eq!(report.per_warp.executed, Quantity::Value(841.0));
    assert_eq!(report.gmem_bytes_per_warp, Quantity::Value(4224.0));
}
