//! A run's computes and transfers by kind (`RunReport::activities`, in the summary the
//! server stores): the thesis scenario's kernel with its model and limiter, and its copies
//! each way with the bandwidth they achieved.

mod common;

use common::{thesis, thesis_with};
use hetsim_scripting::RunOptions;
use hetsim_simulator::SpanKind;

#[test]
fn the_thesis_run_lists_its_kernel_by_model_and_limiter_and_its_copies_each_way() {
    let summary = thesis("gtx970.toml").summary();
    let find = |kind: &str, place: &str| {
        summary
            .activities
            .iter()
            .find(|a| a.kind == kind && a.place == place)
            .unwrap_or_else(|| panic!("{kind} at {place}: {:?}", summary.activities))
    };
    let kernel = find("compute", "gpu");
    assert_eq!((kernel.model.as_str(), kernel.count), ("gpu-volkov", 1));
    assert!(!kernel.limiter.is_empty(), "Volkov's model names its limiter");
    // 146.65 ms: the thesis's saxpy2 time on the GTX 970 (seed 004, section 6.1).
    assert!((kernel.seconds - 0.14665).abs() < 1e-4, "{}", kernel.seconds);
    let host_to_gpu = find("transfer", "host → gpu");
    assert_eq!(
        (host_to_gpu.count, host_to_gpu.bytes),
        (2, 3.2e9),
        "x and y copied in"
    );
    let achieved = host_to_gpu.bytes / host_to_gpu.seconds;
    assert!(
        (10e9..15.8e9).contains(&achieved),
        "below PCIe 3.0 x16's 15.8 GB/s: {achieved}"
    );
    assert_eq!(
        find("transfer", "gpu → host").bytes,
        1.6e9,
        "y copied out (and a 0-byte sync)"
    );
    assert!(
        summary
            .activities
            .windows(2)
            .all(|w| w[0].seconds >= w[1].seconds),
        "the longest first"
    );
}

#[test]
fn a_compute_span_names_its_model_kernel_and_limiter() {
    let mut options = RunOptions::default();
    options.engine.trace = true;
    let report = thesis_with("gtx970.toml", &[("kernelParams", "analysed")], &options);
    let summary = report.summary();
    let compute = summary
        .activities
        .iter()
        .find(|a| a.kind == "compute")
        .expect("listed");
    let spans = report.results.trace.as_deref().expect("traced");
    let kernel = spans
        .iter()
        .find(|s| s.kind == SpanKind::Compute)
        .expect("the kernel's span");
    assert_eq!(
        kernel.detail,
        format!("model gpu-volkov, kernel saxpy2, limiter {}", compute.limiter)
    );
}
