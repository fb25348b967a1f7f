//! The `gpu-teg` model through the scripting layer: the validation application's kernel
//! phase (examples/validation/saxpy2) on the H100 with the GPU's model switched to
//! `gpu-teg`, against `hetsim kernel simulate`'s engine called directly on the same launch.

mod common;

use std::path::PathBuf;

use common::{labels, vars};
use hetsim_kernel::emulate::{Arg, Launch};
use hetsim_scripting::{run, RunOptions};
use hetsim_system::SystemFile;

fn example(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/validation/saxpy2")
        .join(file)
}

fn kernel_seconds(app: &str, variables: &[(&str, &str)]) -> f64 {
    let text = std::fs::read_to_string(example("h100.toml")).expect("reads");
    let text = text.replace("model = \"gpu-queueing\"", "model = \"gpu-teg\"");
    let system = SystemFile::parse(&text, "h100.toml")
        .expect("parses")
        .resolve("h100.toml", Some(&example("")))
        .expect("resolves");
    run(
        app,
        "app.rhai",
        &system,
        &labels(&[("CPU", 1), ("GPU", 1)]),
        &vars(variables),
        &RunOptions::default(),
    )
    .expect("runs")
    .results
    .overall_time
}

#[test]
fn gpu_teg_times_a_launch_as_the_engine_does_and_once_per_launch() {
    let app = std::fs::read_to_string(example("app.rhai")).expect("reads");
    let vars = [
        ("phases", "kernel"),
        ("numElements", "16777216"),
        ("computeIntensity", "32"),
        ("blockSize", "256"),
    ];
    let scripted = kernel_seconds(&app, &vars);

    let listing = hetsim_kernel::parse(
        &std::fs::read_to_string(example("../data/h100/saxpy2_sm90.sass")).expect("reads"),
    )
    .expect("parses");
    let kernel = &listing.kernels[0];
    let prepared = hetsim_teg::Prepared::new(kernel, kernel.arch.expect("sm_90")).expect("prepares");
    let gpu = hetsim_teg::Gpu::from_catalog("H100 SXM5 80GB").expect("in the catalog");
    let launch = Launch {
        grid: [65536, 1, 1],
        block: [256, 1, 1],
        args: vec![Arg::Int(16777216), Arg::Int(32), Arg::Pointer, Arg::Pointer],
        dynamic_shared: 0,
    };
    let direct = hetsim_teg::simulate(&prepared, &launch, &gpu, &hetsim_teg::Options::default())
        .expect("simulates")
        .seconds;
    assert!(
        (scripted - direct).abs() <= 1e-12,
        "scripted {scripted} s, direct {direct} s"
    );

    // Ten identical launches in one run take ten times one (KernelLibrary::teg_seconds
    // memoises the launch, so it is simulated once).
    let ten = r#"if tag == "GPU" { for i in 0..10 { sim.compute(kernel_params("saxpy2", #{ n: 16777216, a: 32, block: 256 })); } }"#;
    let repeated = kernel_seconds(ten, &[]);
    assert!(
        (repeated - 10.0 * direct).abs() <= 1e-9 * repeated,
        "{repeated} vs 10 × {direct}"
    );
}
