//! `kernel_params` and the `[[kernel]]` tables of system models: the thesis's saxpy2 listing
//! (seed 004, Figure 5.2) stored with the GTX 970 testbed.

mod common;

use std::path::Path;

use common::{labels, vars};

use hetsim_models::{catalog, transfer, volkov};
use hetsim_scripting::{run, RunOptions, RunReport};
use hetsim_system::{load as load_system, System, SystemFile};

fn gajger() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/gajger"))
}

fn gtx970() -> System {
    load_system(&gajger().join("gtx970.toml")).expect("the GTX 970 testbed loads")
}

/// Runs `app` on one GPU process of the GTX 970 testbed.
fn run_gpu(app: &str, variables: &[(&str, &str)]) -> Result<RunReport, String> {
    run(
        app,
        "app.rhai",
        &gtx970(),
        &labels(&[("GPU", 1)]),
        &vars(variables),
        &RunOptions::default(),
    )
    .map_err(String::from)
}

#[test]
fn a_system_file_reads_its_kernel_listing() {
    let system = gtx970();
    assert_eq!(system.kernels.len(), 1);
    let listing = system.kernels[0].listing.as_deref().expect("read in");
    assert!(listing.contains("22.{   FADD R5, R0, R5;"));
}

/// Checks that the first line `app` logs on the GPU process holds every one of `parts`.
fn logged_line_with(app: &str, parts: &[&str]) {
    let report = run_gpu(app, &[]).expect("runs");
    let line = &report.log[0];
    for part in parts {
        assert!(line.contains(part), "{part} not in {line}");
    }
}

#[test]
fn static_parameters_are_the_thesis_equations() {
    // Seed 004: eq. 5.3 (23 + 4a), eq. 5.1 (942 + 24a), 384 bytes; 24 + 3a issues.
    logged_line_with(
        r#"let k = kernel_params("saxpy2", #{ trips: #{ L0: 128 } }); sim.log(k);"#,
        &[
            r#""CUDACoreInstructions": 535.0"#,
            r#""latencyBound": 4014.0"#,
            r#""GMEMBytesTransferred": 384.0"#,
            r#""issuedInstructions": 408.0"#,
        ],
    );
}

#[test]
fn an_emulated_launch_returns_its_memory_traffic() {
    // saxpy2 streams: per warp x and y read (4 sectors, one 128-byte line each) and y written
    // (4, one line); nothing is read twice, so every requested byte misses L1 and reaches DRAM
    // (docs/MODELS.md, "The memory hierarchy"); no shared memory, no barrier.
    logged_line_with(
        r#"sim.log(kernel_params("saxpy2", #{ n: 1048576, a: 1, block: 256 }));"#,
        &[
            r#""GMEMBytesTransferred": 384.0"#,
            r#""L1Wavefronts": 3.0"#,
            r#""L2BytesTransferred": 384.0"#,
            r#""DRAMBytesTransferred": 384.0"#,
            r#""sharedWavefronts": 0.0"#,
            r#""barriers": 0.0"#,
            r#""reuseExponent": "#,
        ],
    );
}

#[test]
fn kernel_params_errors_say_what_to_give() {
    let err = run_gpu(r#"kernel_params("saxpy3", #{ block: 256 });"#, &[]).expect_err("unknown kernel");
    assert!(
        err.contains("no kernel `saxpy3` in the system model (it declares: saxpy2)"),
        "{err}"
    );
    let err = run_gpu(r#"kernel_params("saxpy2", #{ block: 256, n: 1000 });"#, &[]).expect_err("no a");
    assert!(err.contains("give `a`, the kernel's parameter"), "{err}");
    let err = run_gpu(r#"kernel_params("saxpy2", #{ n: 1000, a: 1 });"#, &[]).expect_err("no block");
    assert!(err.contains("give `block`"), "{err}");
    let err = run_gpu(r#"kernel_params("saxpy2", #{ block: 0, n: 1000, a: 1 });"#, &[]).expect_err("block 0");
    assert!(err.contains("`block`: 0 is not a whole number from 1"), "{err}");
    let err = run_gpu(r#"kernel_params("saxpy2", #{ trips: #{ L0: 1 }, block: 1 }); kernel_params("saxpy2", #{ trips: #{} });"#, &[])
        .expect_err("formula");
    assert!(
        err.contains("CUDACoreInstructions is `23 + 4·L0`: give the trip counts"),
        "{err}"
    );
}

#[test]
fn a_server_needs_the_listing_inline_and_submit_inlines_it() {
    let text = std::fs::read_to_string(gajger().join("gtx970.toml")).unwrap();
    let file = SystemFile::parse(&text, "gtx970.toml").unwrap();
    let err = file
        .clone()
        .resolve("system", None)
        .expect_err("a file on a server")
        .to_string();
    assert!(
        err.contains("kernel `saxpy2`: `sass` names a file, which a server cannot read"),
        "{err}"
    );
    let inlined = file.inline_kernel_listings(gajger()).expect("reads the listing");
    let json = serde_json::to_string(&inlined).unwrap();
    assert!(json.contains("\"listing\":\"//") && !json.contains("\"sass\""));
    let stored = SystemFile::parse(&json, "system")
        .unwrap()
        .resolve("system", None)
        .expect("self-contained");
    assert_eq!(stored.kernels, gtx970().kernels);
}

#[test]
fn a_bad_listing_fails_when_the_system_loads() {
    let text = r#"
        [[node]]
        id = "gpu"
        component = "GTX 970 - gajger"
        model = "gpu-volkov"
        [[kernel]]
        name = "k"
        listing = "1.   MOV R1, RZ;\n2.   FROB R2,, R3;\n"
        params = []
    "#;
    let err = SystemFile::parse(text, "s.toml")
        .unwrap()
        .resolve("s.toml", None)
        .expect_err("bad listing")
        .to_string();
    assert!(
        err.contains("s.toml: kernel `k`: listing line 2: operand"),
        "{err}"
    );
}

/// The thesis application with its kernel parameters from the analyser (emulating the launch
/// of Figure 5.2's SASS) instead of Figure 5.23's hand-written numbers.
#[test]
fn the_thesis_application_takes_its_parameters_from_the_analyser() {
    let app = std::fs::read_to_string(gajger().join("app.rhai")).unwrap();
    let variables = vars(&[
        ("occupancy", "64"),
        ("computeIntensity", "128"),
        ("blockSize", "256"),
        ("numElements", "400000000"),
        ("kernelParams", "analysed"),
    ]);
    let report = run(
        &app,
        "app.rhai",
        &gtx970(),
        &labels(&[("CPU", 1), ("GPU", 1)]),
        &variables,
        &RunOptions::default(),
    )
    .expect("runs");
    // The analyser's parameters: eq. 5.3's 23 + 4a, eq. 5.1's 942 + 24a, 384 bytes, and
    // 24 + 3a issues (Figure 5.23 writes 26 + 4a; docs/MODELS.md explains the difference).
    let mut input = volkov::Input::gajger_saxpy2_gtx970(128.0);
    input.issued_instructions = 24.0 + 3.0 * 128.0;
    let kernel = volkov::evaluate(&input).seconds;
    let gpu = report
        .results
        .processes
        .iter()
        .find(|p| &*p.label == "GPU")
        .unwrap();
    assert!(
        (gpu.compute_time - kernel).abs() < 1e-9 * kernel,
        "{} vs {kernel}",
        gpu.compute_time
    );
    let link = catalog::find("PCIe 3.0 16x - gajger").unwrap();
    let a = |k: &str| link.attributes[k].as_number().unwrap();
    let htd = transfer::seconds(1.6e9, a("bandwidth"), a("startupHtD"), a("lambdaHtD"));
    let dth = transfer::seconds(1.6e9, a("bandwidth"), a("startupDtH"), a("lambdaDtH"));
    assert!((report.results.overall_time - (2.0 * htd + kernel + dth)).abs() < 1e-9);
}

/// A system of one `component` GPU and the listing `sass` (relative to examples/kernels), with
/// `arch` if given.
fn one_gpu_with(component: &str, sass: &str, arch: Option<&str>) -> System {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/kernels"));
    let arch = arch.map_or(String::new(), |a| format!("arch = \"{a}\"\n"));
    let text = format!(
        "[[node]]\nid = \"gpu\"\ncomponent = \"{component}\"\nmodel = \"gpu-teg\"\nlabels = {{ GPU = 1 }}\n\
         [[kernel]]\nname = \"saxpy2\"\nsass = \"{sass}\"\nparams = [\"n\", \"a\", \"*x\", \"*y\"]\n{arch}"
    );
    SystemFile::parse(&text, "s.toml")
        .and_then(|f| f.resolve("s.toml", Some(dir)))
        .expect("resolves")
}

/// The architecture is the listing's, else the system's GPUs': an sm_90 listing in a GTX 970
/// system is refused when the run starts, and a kernel's own `arch` forces it.
#[test]
fn kernel_params_take_the_gpus_architecture_and_refuse_another() {
    use hetsim_scripting::kernels::KernelLibrary;
    let refused = KernelLibrary::for_system(&one_gpu_with("GTX 970 - gajger", "saxpy2-sm90.sass", None))
        .err()
        .expect("sm_90 on a GTX 970")
        .to_string();
    assert!(
        refused.contains("kernel `saxpy2`: the listing is compiled for sm_90")
            && refused.contains("compute capability 5.2"),
        "{refused}"
    );
    let forced = one_gpu_with("GTX 970 - gajger", "saxpy2-sm90.sass", Some("sm_90"));
    assert!(KernelLibrary::for_system(&forced).is_ok());
    // The thesis's listing names no architecture: on an H100 it would be read as sm_90.
    let library =
        KernelLibrary::for_system(&one_gpu_with("GTX 970 - gajger", "saxpy2-figure-5-2.sass", None))
            .expect("loads");
    let mut call = rhai::Map::new();
    for (k, v) in [("n", 3907 * 256_i64), ("a", 8), ("block", 256)] {
        call.insert(k.into(), rhai::Dynamic::from_int(v));
    }
    call.insert("grid".into(), rhai::Dynamic::from_int(3907));
    let params = library.params("saxpy2", &call).expect("analysed as sm_52");
    // Seed 004, eq. 5.3 at a = 8: 23 + 4·8 CUDA-core instructions.
    assert_eq!(params["CUDACoreInstructions"].as_float().ok(), Some(55.0));
}
