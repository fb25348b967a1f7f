//! The `hetsim` binary's GPU commands as a user runs them: `kernel analyze` and `kernel
//! simulate`, `calibrate gpu`, `validate`, and the error bars of saxpy2 runs.

mod common;

use std::process::Command;

use common::oneshot::*;
use common::repo;

#[test]
fn kernel_analyze_gives_the_thesis_formulas() {
    let out = hetsim(
        &["kernel", "analyze", "examples/kernels/saxpy2-figure-5-2.sass"],
        None,
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Seed 004, eqs. 5.3 and 5.1.
    for line in [
        "CUDA cores  23 + 4·L0",
        "latency bound  942 + 24·L0 cycles",
        "global bytes   384",
    ] {
        assert!(text.contains(line), "no `{line}` in:\n{text}");
    }
}

#[test]
fn kernel_analyze_parameters_plug_into_the_volkov_model() {
    let report = ok_json(&[
        "kernel",
        "analyze",
        "examples/kernels/saxpy2-figure-5-2.sass",
        "--trip",
        "L0=128",
        "--json",
    ]);
    assert_eq!(report["loops"][0]["id"], "L0");
    assert_eq!(report["loops"][0]["body_instructions"], 4);
    assert_eq!(report["per_warp"]["executed"], 26.0 + 4.0 * 128.0);
    let mut params = report["parameters"].clone();
    assert_eq!(params["latencyBound"], 942.0 + 24.0 * 128.0);
    let gtx970: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("examples/models/volkov-gtx970.json")).unwrap(),
    )
    .unwrap();
    for key in [
        "SMs",
        "SMCoreClock",
        "CUDACores",
        "schedulers",
        "warpSize",
        "GMEMThroughput",
        "gridSize",
        "blockSize",
        "occupancy",
        "kernelExecutionLambda",
    ] {
        params[key] = gtx970[key].clone();
    }
    let out = hetsim(
        &["model", "volkov", "--params", "-", "--json"],
        Some(&params.to_string()),
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let volkov: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // The analysed 24 + 3a issues leave the CUDA-core bound (eq. 5.3) as the limiter.
    assert_eq!(volkov["limiter"], "cuda_cores");
    assert_eq!(volkov["cpw_cuda"], 133.75);
}

#[test]
fn kernel_analyze_errors_name_the_file_the_line_or_the_choices() {
    let err = failure(
        &["kernel", "analyze", "kernel/tests/sass/all_kernels_fatbin.sass"],
        None,
    );
    assert!(
        err.contains("14 kernels match")
            && err.contains("strided_copy(int, int, float const*, float*) [sm_90]"),
        "{err}"
    );
    let err = failure(
        &[
            "kernel",
            "analyze",
            "examples/kernels/saxpy2-sm90.sass",
            "--trip",
            "L3=2",
        ],
        None,
    );
    assert!(
        err.contains("--trip L3: no such loop; the kernel's loops are: L0"),
        "{err}"
    );
    let err = failure(
        &["kernel", "analyze", "-"],
        Some("        /*0000*/   IMAD R0, R1, [R2, 0x1 ;\n"),
    );
    assert!(err.contains("<stdin>: line 1: operand"), "{err}");
    let dir = std::env::temp_dir().join(format!("hetsim-no-nvcc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("k.cu");
    std::fs::write(&source, "__global__ void k() {}\n").unwrap();
    let analyze = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_hetsim"))
            .args(["kernel", "analyze"])
            .arg(&source)
            .args(extra)
            .env("PATH", &dir)
            .output()
            .unwrap();
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = analyze(&["--arch", "sm_90"]);
    assert!(err.contains("pip install nvidia-cuda-nvcc"), "{err}");
    // No target given: nvcc's is not guessed (it was Hopper, silently).
    let err = analyze(&[]);
    assert!(
        err.contains("k.cu: compiling a .cu file needs nvcc's target: give --arch"),
        "{err}"
    );
}

#[test]
fn calibrate_gpu_fits_the_shipped_h100_measurements() {
    let out = ok_json(&["calibrate", "gpu", "examples/validation/data/h100", "--json"]);
    let fit = &out["calibration"]["fit"];
    assert_eq!(fit["samples"], 136, "{out}");
    assert!(fit["mape"].as_f64().expect("mape") < 0.04, "{out}");
    let attrs = &out["attributes"];
    // The catalog's H100 SXM5 80GB holds what the calibration fits (models/src/catalog.rs),
    // rounded to four digits: every fitted, measured or derived number of the entry.
    let catalog = hetsim_models::catalog::components()
        .into_iter()
        .find(|c| c.name == "H100 SXM5 80GB")
        .expect("in the catalog");
    let mut compared = 0;
    for (key, value) in &catalog.attributes {
        let hetsim_models::params::Scalar::Number(expected) = value else {
            continue;
        };
        let Some(fitted) = attrs[key.as_str()].as_f64() else {
            continue;
        };
        compared += 1;
        assert!(
            (fitted / expected - 1.0).abs() < 5e-4,
            "{key}: calibrated {fitted}, catalog {expected}"
        );
    }
    assert!(compared >= 24, "{compared} attributes compared: {out}");
    // The kit's L2-resident launches give the architecture's L2 figure, which
    // models/data/hopper.toml keeps to three digits (lab/src/l2_fit.rs works it by hand).
    let l2 = out["architecture"]["L2BytesPerCyclePerSM"]
        .as_f64()
        .expect("fitted on the kit");
    let kept = hetsim_models::hierarchy::architecture_value("9.0", "L2BytesPerCyclePerSM");
    assert_eq!(Some(format!("{l2:.1}")), kept.map(|k| format!("{k:.1}")), "{out}");
    // And the latency table's calibrated taken branch (kernel/data/latency/hopper.toml).
    let branch = out["architecture"]["branch_taken"].as_f64().expect("fitted");
    assert_eq!(format!("{branch:.2}"), "22.84", "{out}");
    // The catalog reads those numbers from the data file the calibration writes: run again,
    // it writes the shipped file, every fitted and measured field, byte for byte.
    let file = std::env::temp_dir().join(format!("hetsim-h100-{}.toml", std::process::id()));
    let file_arg = file.display().to_string();
    // And the architecture file, its fitted L2 figure written in: the shipped file again.
    let architecture = std::env::temp_dir().join(format!("hetsim-hopper-{}.toml", std::process::id()));
    let hopper = std::fs::read_to_string(repo().join("models/data/hopper.toml")).expect("shipped");
    std::fs::write(&architecture, hopper.replace("value = 15.3", "value = 1.0")).expect("writes");
    let architecture_arg = architecture.display().to_string();
    // And the latency table, its two calibrated figures written in: the shipped table again.
    let latency = std::env::temp_dir().join(format!("hetsim-latency-{}.toml", std::process::id()));
    let table = std::fs::read_to_string(repo().join("kernel/data/latency/hopper.toml")).expect("shipped");
    let stale = table
        .replace("branch_taken = 22.84 ", "branch_taken = 1.00  ")
        .replace("block_replacement = 467.87", "block_replacement = 1.00");
    assert_ne!(stale, table, "the test's edit takes");
    std::fs::write(&latency, stale).expect("writes");
    let latency_arg = latency.display().to_string();
    ok_json(&[
        "calibrate",
        "gpu",
        "examples/validation/data/h100",
        "--name",
        "H100 SXM5 80GB",
        "--data-file",
        &file_arg,
        "--architecture-file",
        &architecture_arg,
        "--latency-file",
        &latency_arg,
        "--json",
    ]);
    let rewritten = std::fs::read_to_string(&latency).expect("written");
    assert_eq!(
        rewritten, table,
        "kernel/data/latency/hopper.toml is stale: write it again with --latency-file"
    );
    let rewritten = std::fs::read_to_string(&architecture).expect("written");
    assert_eq!(
        rewritten, hopper,
        "models/data/hopper.toml is stale: write it again with --architecture-file"
    );
    std::fs::remove_file(&architecture).ok();
    let written = std::fs::read_to_string(&file).expect("the data file is written");
    let shipped = std::fs::read_to_string(repo().join("models/data/h100-sxm5-80gb.toml")).expect("shipped");
    assert_eq!(
        written, shipped,
        "models/data/h100-sxm5-80gb.toml is stale: write it again with --data-file"
    );
    assert_eq!(attrs["calibratedResidentWarpsMin"], 8.0, "{out}");
    assert_eq!(attrs["calibratedResidentWarpsMax"], 64.0, "{out}");
    // Any kernel set calibrates: a folder with only the spec sheet and the launch timings,
    // fitted on the kit's launches through its descriptor, its data file saying so.
    let kit_only = std::env::temp_dir().join(format!("hetsim-kit-only-{}", std::process::id()));
    std::fs::create_dir_all(&kit_only).expect("temp dir");
    for name in ["props.csv", "launch.csv"] {
        std::fs::copy(
            repo().join("examples/validation/data/h100").join(name),
            kit_only.join(name),
        )
        .expect("copies");
    }
    let kit_only_arg = kit_only.display().to_string();
    // `calibrate gpu` of that folder on the kit's set; each call below adds its flags.
    let kit_only_calibration = [
        "calibrate",
        "gpu",
        &kit_only_arg,
        "--set",
        "examples/validation/data/h100/kit/benchset.toml",
    ];
    let out = ok_json(&[&kit_only_calibration[..], &["--data-file", &file_arg, "--json"]].concat());
    let on_the_kit = std::fs::read_to_string(&file).expect("the data file is written");
    assert!(
        on_the_kit.contains(
            "from = \"every launch of examples/validation/data/h100/kit/benchset.toml in its family's range, least squares"
        ),
        "{on_the_kit}"
    );
    let fit = &out["calibration"]["fit"];
    assert_eq!(fit["samples"], 45, "the kit's launches in range: {out}");
    assert!(fit["mape"].as_f64().expect("mape") < 0.10, "{out}");
    // TEG runs on a catalog GPU: a name the catalog lacks fails --teg-file before any TEG
    // work, naming it, and leaves the file as it was (the fit itself: lab/src/teg_fit.rs).
    let teg = std::env::temp_dir().join(format!("hetsim-teg-{}.toml", std::process::id()));
    let teg_text = std::fs::read_to_string(repo().join("teg/data/hopper.toml")).expect("shipped");
    std::fs::write(&teg, &teg_text).expect("writes");
    let teg_arg = teg.display().to_string();
    let unknown = failure(
        &[
            &kit_only_calibration[..],
            &["--name", "Nonesuch GPU", "--teg-file", &teg_arg],
        ]
        .concat(),
        None,
    );
    assert!(
        unknown.contains("Nonesuch GPU") && unknown.contains("H100 SXM5 80GB"),
        "names the GPU and the catalog's: {unknown}"
    );
    assert_eq!(std::fs::read_to_string(&teg).expect("kept"), teg_text);
    std::fs::remove_file(&teg).ok();
    // The latency table needs occupancy_block256.csv and clock.csv: without them
    // --latency-file fails, naming both, before the data file or the table is written.
    std::fs::write(&latency, &table).expect("writes");
    std::fs::remove_file(&file).ok();
    let no_occupancy = failure(
        &[
            &kit_only_calibration[..],
            &["--data-file", &file_arg, "--latency-file", &latency_arg],
        ]
        .concat(),
        None,
    );
    assert!(
        no_occupancy.contains("--latency-file") && no_occupancy.contains("occupancy_block256.csv"),
        "{no_occupancy}"
    );
    assert!(!file.exists(), "no data file written");
    assert_eq!(std::fs::read_to_string(&latency).expect("kept"), table);
    std::fs::remove_file(&latency).ok();
    std::fs::remove_dir_all(&kit_only).ok();
    std::fs::remove_file(&file).ok();
    let missing = failure(&["calibrate", "gpu", "examples/gajger"], None);
    assert!(
        missing.contains("props.csv") && missing.contains("not a measurement folder"),
        "{missing}"
    );
}

/// In a pipe, `validate` draws nothing: its stderr is its error alone.
#[test]
fn validate_draws_no_progress_in_a_pipe() {
    let out = hetsim(&["validate", "--data", "no-such-folder"], None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("no-such-folder") && !stderr.contains("validating"),
        "{stderr}"
    );
}

#[test]
fn validate_meets_the_targets_on_the_shipped_h100_data_and_writes_its_report() {
    let dir = std::env::temp_dir().join(format!("hetsim-validate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let report = dir.join("VALIDATION.md");
    let report_arg = report.display().to_string();
    // On a terminal (util-linux's `script` gives the command one) the stages are drawn on
    // stderr, while stdout, redirected to a file, holds the JSON alone.
    let json_file = dir.join("validation.json");
    let command = format!(
        "{} validate --report {report_arg} --json > {}",
        env!("CARGO_BIN_EXE_hetsim"),
        json_file.display()
    );
    let run = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(repo())
        .output()
        .expect("util-linux's script runs");
    let terminal = String::from_utf8_lossy(&run.stdout);
    assert_eq!(run.status.code(), Some(0), "every target met: {terminal}");
    assert!(
        terminal.contains("validating: "),
        "no progress on a terminal: {terminal}"
    );
    let out: serde_json::Value = serde_json::from_slice(&std::fs::read(&json_file).expect("the JSON file"))
        .expect("--json prints JSON");
    let checks = out["checks"].as_array().expect("checks");
    assert!(checks.len() >= 9, "kernel ×2, TEG ×2, transfers ×4, power: {out}");
    // The one check the folder has no file for is said, not dropped, and so are TEG's folds,
    // which run only with --refit-teg.
    assert_eq!(
        out["not_run"],
        serde_json::json!([
            "heldout_times.csv (kernels, TEG): not run: no heldout_times.csv",
            "TEG refitted without each family it is fitted on: not run: give --refit-teg (a TEG fit per family, minutes each)"
        ]),
        "{out}"
    );
    assert!(
        checks.iter().any(|c| c["name"] == "sweep.csv (kernel, TEG)"),
        "{out}"
    );
    let families = out["families"].as_array().expect("families");
    assert!(
        families
            .iter()
            .any(|c| c["name"] == "families: sgemm_tiled16 (gpu-queueing)"),
        "the project's own families are scored: {out}"
    );
    // Leave-one-kernel-family-out: gpu-queueing fitted on saxpy2 and every family but one.
    // The kit's 45 launches in range and the own 26, less saxpy2_l2's 12, in-sample since
    // the L2 figure is fitted on them.
    let refit = out["refit"].as_array().expect("refit");
    let row = |name: &str| {
        refit
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("{name}: {out}"))
    };
    let summary = row("every held-out family, each held out in turn");
    assert_eq!(
        (&summary["basis"], &summary["points"]),
        (&"held-out".into(), &59.into()),
        "{summary}"
    );
    assert_eq!(row("kit: saxpy2_l2 held out of the fit")["basis"], "in-sample");
    assert!(row("families: block_sum, each block size held out of the fit in turn")["points"] == 6);
    for c in checks.iter().chain(families).chain(refit) {
        assert_eq!(c["pass"], true, "{c}");
    }
    // TEG's four fitted numbers are fitted on the kit (teg/data/hopper.toml), so its kit rows
    // are in-sample; gpu-queueing's stay held-out, and the project's own families are
    // held-out for both.
    let basis = |name: &str| {
        families
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("{name}: {out}"))["basis"]
            .clone()
    };
    assert_eq!(basis("kit: strided (gpu-teg)"), "in-sample");
    assert_eq!(basis("kit: strided (gpu-queueing)"), "held-out");
    assert_eq!(basis("families: every held-out family (gpu-teg)"), "held-out");
    let folds = out["cross_validation"].as_array().expect("cross-validation");
    assert_eq!(
        folds.len(),
        7 + 9 + 1,
        "7 block sizes, 9 occupancy levels, their summary: {out}"
    );
    for c in folds
        .iter()
        .filter(|c| c["name"].as_str().is_some_and(|n| n.starts_with("sweep")))
    {
        assert!(c["mape"].as_f64().expect("mape") < 0.10, "{c}");
    }
    // The level the latency table is fitted on (8 warps per SM) is in-sample on the H100's
    // own data, and the held-out levels together meet their target without it.
    let basis = |name: &str| {
        folds
            .iter()
            .find(|c| c["name"].as_str().is_some_and(|n| n.starts_with(name)))
            .map(|c| (c["basis"].clone(), c["pass"].clone(), c["points"].clone()))
    };
    assert_eq!(
        basis("occupancy smem 232320").map(|b| b.0),
        Some("in-sample".into()),
        "{out}"
    );
    assert_eq!(
        basis("occupancy smem 115584").map(|b| b.0),
        Some("held-out".into()),
        "{out}"
    );
    let summary = basis("occupancy, each level").expect("the occupancy summary");
    assert_eq!(summary, ("held-out".into(), true.into(), 40.into()), "{out}");
    let bars = out["error_bars"].as_array().expect("error bars");
    assert_eq!(bars.len(), 5, "{out}");
    for c in bars {
        assert_eq!(c["pass"], true, "the 90 % intervals cover their points: {c}");
        assert!(c["covered"].as_f64().expect("covered") >= c["floor"].as_f64().expect("floor"));
    }
    let text = std::fs::read_to_string(&report).expect("the report is written");
    assert!(text.contains("| sweep.csv (kernel) | 91 |"), "{text}");
    assert!(text.contains("## Error bars"), "{text}");
    // The tracked report and figures are what this run writes: a change that moves them
    // fails here until `hetsim validate --report docs/VALIDATION.md` is run and checked in.
    let stale = "is stale: run `hetsim validate --report docs/VALIDATION.md` and commit it";
    let tracked = std::fs::read_to_string(repo().join("docs/VALIDATION.md")).expect("docs/VALIDATION.md");
    assert!(
        text.replace(&report_arg, "docs/VALIDATION.md") == tracked,
        "docs/VALIDATION.md {stale}"
    );
    for figure in ["sweep.svg", "occupancy.svg", "transfers.svg"] {
        let svg = std::fs::read_to_string(dir.join("validation").join(figure)).expect("figure");
        assert!(svg.starts_with("<svg") && svg.contains("MAPE"), "{figure}");
        let tracked =
            std::fs::read_to_string(repo().join("docs/validation").join(figure)).expect("tracked figure");
        assert!(svg == tracked, "docs/validation/{figure} {stale}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

fn saxpy2_run(system: &str, vars: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "run",
        "--app",
        "examples/validation/saxpy2/app.rhai",
        "--system",
        system,
        "--json",
        "--detail",
        "computes",
    ];
    for v in vars {
        args.extend(["--var", v]);
    }
    ok_json(&args)
}

/// `[low, high]` of `overall_time_interval`, relative to `overall_time`.
fn relative_bar(out: &serde_json::Value) -> (f64, f64) {
    let t = out["overall_time"].as_f64().expect("overall_time");
    let [low, high] = [0, 1].map(|i| out["overall_time_interval"][i].as_f64().expect("interval"));
    (1.0 - low / t, high / t - 1.0)
}

#[test]
fn run_json_states_error_bars_per_compute_and_for_the_overall_time() {
    // Memory-bound saxpy2 (a = 1, 2^26 elements, block 256): the H100's memory bar (errorMemory, ±5.9847 % in
    // models/data/h100-sxm5-80gb.toml),
    // twice that on the H200, which has no calibrated domain.
    let kernel = [
        "phases=kernel",
        "computeIntensity=1",
        "blockSize=256",
        "numElements=67108864",
    ];
    let h100 = saxpy2_run("examples/validation/saxpy2/h100.toml", &kernel);
    let computes = h100["computes"].as_array().expect("computes");
    assert_eq!(computes.len(), 1, "{h100}");
    let seconds = computes[0]["seconds"].as_f64().expect("seconds");
    let bar = computes[0]["uncertainty"].as_f64().expect("uncertainty");
    assert!((bar / seconds - 0.059847).abs() < 1e-9, "{h100}");
    let (below, above) = relative_bar(&h100);
    assert!(
        (below - 0.059847).abs() < 1e-6 && (above - 0.059847).abs() < 1e-6,
        "{h100}"
    );
    let h200 = saxpy2_run("examples/validation/saxpy2/h200.toml", &kernel);
    let (below, above) = relative_bar(&h200);
    assert!(
        (below - 0.119694).abs() < 1e-6 && (above - 0.119694).abs() < 1e-6,
        "{h200}"
    );
    // The application (copy x and y in, the kernel, y back): the copies' pinned bar (±3.652 %)
    // and the kernel's add along the one process that waits for each.
    let app = saxpy2_run(
        "examples/validation/saxpy2/h100.toml",
        &[
            "computeIntensity=1",
            "blockSize=256",
            "numElements=67108864",
            "hostMemory=pinned",
        ],
    );
    let (below, above) = relative_bar(&app);
    assert!(
        below > 0.03652 && below < 0.05980 && (above - below).abs() < 1e-9,
        "{app}"
    );
}

#[test]
fn kernel_simulate_times_a_launch_with_teg_and_its_bottlenecks() {
    // occupancy_block256.csv at intensity 128, 8 warps per SM: 5.743 ms measured.
    let args = [
        "kernel",
        "simulate",
        "examples/kernels/saxpy2-sm90.sass",
        "--grid",
        "262144",
        "--block",
        "256",
        "--args",
        "67108864,128,_,_",
    ];
    let few: Vec<&str> = args
        .iter()
        .copied()
        .chain(["--warps-per-sm", "8", "--json"])
        .collect();
    let v = ok_json(&few);
    let seconds = v["simulation"]["seconds"].as_f64().expect("seconds");
    assert!((seconds - 5.743e-3).abs() / 5.743e-3 < 0.08, "{seconds}");
    assert_eq!(v["simulation"]["warps_per_sm"], 8);
    let bottlenecks = v["bottlenecks"].as_array().expect("bottlenecks");
    assert_eq!(bottlenecks.len(), 4);
    assert!(bottlenecks
        .iter()
        .any(|b| b["what"] == "shared-memory bank conflicts" && b["share"] == 0.0));
    assert!(v["not_modelled"]
        .as_str()
        .is_some_and(|s| s.contains("--dynamic-shared")));
    let many: Vec<&str> = args.iter().copied().chain(["--json"]).collect();
    let v = ok_json(&many);
    assert_eq!(v["simulation"]["warps_per_sm"], 64);
    assert_eq!(v["simulation"]["limiter"], "issue");
    let table = hetsim(&args, None);
    assert!(String::from_utf8_lossy(&table.stdout).contains("the busiest SM runs 1986"));
    let bad: Vec<&str> = args.iter().copied().chain(["--gpu", "H1000"]).collect();
    let e = failure(&bad, None);
    assert!(e.contains("--gpu H1000") && e.contains("H100 SXM5 80GB"), "{e}");
}
