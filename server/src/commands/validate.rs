//! `hetsim validate`: the validation example (examples/validation/saxpy2) run for every
//! measured configuration of a measurement folder, through the whole stack (system file,
//! catalog, kernel analyser, Rhai models, engine), against what the GPU measured.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use hetsim_models::queueing::calibration::{error_bars, out_of_fold, relative_error, Residual};
use hetsim_scripting::{default_labels, RunOptions, RunReport};
use hetsim_system::{load as load_system, System, Variable};
use serde::Serialize;

use super::calibrate::gpu::{folds, groups, samples};
use crate::charts::{Chart, Series};
use crate::cli::ValidateArgs;
use crate::input::read_text;
use crate::measurements::{KernelRun, Measurements};
use crate::saxpy2;

mod coverage;
use coverage::Coverage;

/// One measured configuration and the simulated figure for it.
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    pub what: String,
    pub measured: f64,
    pub predicted: f64,
    /// The prediction's 90 % error bar (`overall_time_interval`).
    pub interval: [f64; 2],
}

impl Point {
    fn error(&self) -> f64 {
        relative_error(self.predicted, self.measured)
    }
}

/// The error of one group of points against its target.
#[derive(Clone, Debug, Serialize)]
pub struct Check {
    pub name: String,
    pub points: usize,
    pub mape: f64,
    pub worst: f64,
    pub worst_at: String,
    /// MAPE ceiling and worst-case ceiling (both fractions).
    pub target_mape: f64,
    pub target_worst: f64,
    pub pass: bool,
}

fn check(name: &str, points: &[Point], target_mape: f64, target_worst: f64) -> Check {
    let errs: Vec<f64> = points.iter().map(|p| p.error().abs()).collect();
    let mape = errs.iter().sum::<f64>() / errs.len().max(1) as f64;
    let (worst, worst_at) = points
        .iter()
        .zip(&errs)
        .fold((0.0, String::new()), |(w, at), (p, &e)| {
            if e > w {
                (e, p.what.clone())
            } else {
                (w, at)
            }
        });
    Check {
        name: name.to_owned(),
        points: points.len(),
        mape,
        worst,
        worst_at,
        target_mape,
        target_worst,
        pass: !points.is_empty() && mape <= target_mape && worst <= target_worst,
    }
}

/// Runs the validation application with `vars`.
struct Simulator {
    app: String,
    origin: String,
    system: System,
    labels: BTreeMap<String, u64>,
}

impl Simulator {
    fn run(&self, vars: &[(&str, Variable)]) -> Result<RunReport> {
        let variables = vars.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect();
        hetsim_scripting::run(
            &self.app,
            &self.origin,
            &self.system,
            &self.labels,
            &variables,
            &RunOptions::default(),
        )
        .map_err(|e| anyhow!("{}: {e}", self.origin))
    }

    fn kernel(&self, run: &KernelRun) -> Result<RunReport> {
        self.run(&[
            ("phases", Variable::Text("kernel".into())),
            ("computeIntensity", Variable::Int(run.intensity as i64)),
            ("blockSize", Variable::Int(run.block as i64)),
            ("numElements", Variable::Int(run.n as i64)),
            ("dynamicSharedMemory", Variable::Int(run.dynamic_shared as i64)),
        ])
    }
}

/// The GPU node's mean power over a kernel-only run [W].
fn gpu_power(report: &RunReport) -> Option<f64> {
    let gpu = report.results.nodes.iter().find(|n| n.id.starts_with("gpu"))?;
    (report.results.overall_time > 0.0).then(|| gpu.energy / report.results.overall_time)
}

/// Everything `hetsim validate` found.
#[derive(Clone, Debug, Serialize)]
pub struct Validation {
    pub data: String,
    pub checks: Vec<Check>,
    pub sweep: Vec<(KernelKey, Point)>,
    pub occupancy: Vec<(KernelKey, Point)>,
    pub transfers: Vec<(TransferKey, Point)>,
    pub power: Vec<Point>,
    pub cross_validation: Vec<Check>,
    pub error_bars: Vec<Coverage>,
}

#[derive(Clone, Debug, Serialize)]
pub struct KernelKey {
    pub intensity: f64,
    pub block: f64,
    pub warps_per_sm: f64,
}

#[derive(Clone, Debug, Serialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct TransferKey {
    pub direction: String,
    pub memory: String,
    pub bytes: u64,
}

fn kernel_points(sim: &Simulator, m: &Measurements, file: &str) -> Result<Vec<(KernelKey, Point)>> {
    let device = saxpy2::device(m)?;
    m.kernel_runs()
        .filter(|r| r.file == file)
        .map(|r| {
            let report = sim.kernel(r)?;
            let warps_per_block = (r.block / 32.0).ceil();
            let blocks = hetsim_models::occupancy::evaluate(&hetsim_models::occupancy::Input {
                limits: device.limits,
                threads_per_block: r.block as u32,
                registers_per_thread: 8,
                shared_memory_per_block: r.dynamic_shared as u32,
            })
            .active_blocks_per_sm;
            Ok((
                KernelKey {
                    intensity: r.intensity,
                    block: r.block,
                    warps_per_sm: f64::from(blocks) * warps_per_block,
                },
                Point {
                    what: run_label(r),
                    measured: r.seconds,
                    predicted: report.results.overall_time,
                    interval: report.results.overall_time_interval,
                },
            ))
        })
        .collect()
}

/// The saxpy2 launches of sweep.csv and occupancy_block256.csv predicted by TEG
/// (`hetsim-teg`, the `gpu-teg` model) from the folder's saxpy2 SASS and the catalog's H100,
/// with teg/data's parameters: no per-kernel constant, nothing fitted here. One check per file.
fn teg_checks(m: &Measurements) -> Result<Vec<Check>> {
    let Some(sass) = &m.sass else {
        return Ok(Vec::new());
    };
    let listing = hetsim_kernel::parse(sass).map_err(|e| anyhow!("saxpy2 SASS: {e}"))?;
    let kernel = listing
        .kernels
        .first()
        .ok_or_else(|| anyhow!("saxpy2 SASS: no kernel"))?;
    let arch = kernel.arch.unwrap_or(hetsim_kernel::Arch::HOPPER);
    let prepared = hetsim_teg::Prepared::new(kernel, arch).map_err(|e| anyhow!("saxpy2 SASS: {e}"))?;
    let gpu = hetsim_teg::Gpu::from_catalog(TEG_GPU).map_err(|e| anyhow!("{TEG_GPU}: {e}"))?;
    let points = |file: &str| -> Result<Vec<Point>> {
        m.kernel_runs()
            .filter(|r| r.file == file)
            .map(|r| {
                let launch = saxpy2::launch(r)?;
                let simulation =
                    hetsim_teg::simulate(&prepared, &launch, &gpu, &hetsim_teg::Options::default())
                        .map_err(|e| anyhow!("{} line {}: TEG: {e}", r.file, r.line))?;
                Ok(Point {
                    what: run_label(r),
                    measured: r.seconds,
                    predicted: simulation.seconds,
                    interval: [simulation.seconds; 2],
                })
            })
            .collect()
    };
    let mut checks = Vec::new();
    for (file, name) in [
        ("sweep", "sweep.csv (kernel, TEG)"),
        ("occupancy", "occupancy_block256.csv (kernel, TEG)"),
    ] {
        let teg = points(file)?;
        if !teg.is_empty() {
            checks.push(check(name, &teg, 0.08, 0.25));
        }
    }
    Ok(checks)
}

/// Where a kernel run is in its file, and its configuration.
fn run_label(r: &KernelRun) -> String {
    format!(
        "{} line {}: a={} block={} smem={}",
        r.file, r.line, r.intensity, r.block, r.dynamic_shared
    )
}

/// The held-out kernels of `heldout_times.csv` predicted by TEG from the SASS they ran
/// (`heldout_sm<XY>.sass`), as `teg_checks` does saxpy2: no kernel's constant, nothing fitted
/// to them.
fn heldout_points(m: &Measurements) -> Result<Vec<Point>> {
    let (Some(sass), false) = (&m.heldout_sass, m.heldout.is_empty()) else {
        return Ok(Vec::new());
    };
    let listing = hetsim_kernel::parse(sass).map_err(|e| anyhow!("heldout SASS: {e}"))?;
    let gpu = hetsim_teg::Gpu::from_catalog(TEG_GPU).map_err(|e| anyhow!("{TEG_GPU}: {e}"))?;
    m.heldout
        .iter()
        .map(|r| {
            let at = format!("heldout_times.csv line {}", r.line);
            let kernel = hetsim_kernel::select_kernel(&listing, Some(&r.kernel), None)
                .map_err(|e| anyhow!("{at}: {e}"))?;
            let arch = kernel.arch.unwrap_or(hetsim_kernel::Arch::HOPPER);
            let prepared = hetsim_teg::Prepared::new(kernel, arch).map_err(|e| anyhow!("{at}: {e}"))?;
            let commas = |s: &str| s.replace(['x', ';'], ",");
            let launch = super::kernel::launch_of(
                &commas(&r.grid),
                &commas(&r.block),
                Some(&commas(&r.args)),
                r.dynamic_shared as u32,
            )
            .map_err(|e| anyhow!("{at}: {e}"))?;
            let simulation = hetsim_teg::simulate(&prepared, &launch, &gpu, &hetsim_teg::Options::default())
                .map_err(|e| anyhow!("{at}: TEG: {e}"))?;
            Ok(Point {
                what: format!("{at}: {} {}", r.kernel, r.launch),
                measured: r.seconds,
                predicted: simulation.seconds,
                interval: [simulation.seconds; 2],
            })
        })
        .collect()
}

/// The catalog GPU the measurements were taken on, for TEG.
const TEG_GPU: &str = "H100 SXM5 80GB";

/// Transfers by (direction, memory, size), the trials averaged; sizes of 1 MiB and more (the
/// issue's targets; below, the copy's fixed costs dominate and are reported separately).
fn transfer_points(sim: &Simulator, m: &Measurements) -> Result<Vec<(TransferKey, Point)>> {
    let mut groups: BTreeMap<TransferKey, Vec<f64>> = BTreeMap::new();
    for t in m.transfers.iter().filter(|t| t.bytes > 0.0) {
        groups
            .entry(TransferKey {
                direction: t.direction.clone(),
                memory: t.memory.clone(),
                bytes: t.bytes as u64,
            })
            .or_default()
            .push(t.seconds);
    }
    groups
        .into_iter()
        .map(|(key, times)| {
            let phase = if key.direction.starts_with("Host") {
                "htd"
            } else {
                "dth"
            };
            let report = sim.run(&[
                ("phases", Variable::Text(phase.into())),
                ("numElements", Variable::Float(key.bytes as f64 / 4.0)),
                ("hostMemory", Variable::Text(key.memory.clone())),
            ])?;
            let point = Point {
                what: format!("{} {} {} B", key.direction, key.memory, key.bytes),
                measured: times.iter().sum::<f64>() / times.len() as f64,
                predicted: report.results.overall_time,
                interval: report.results.overall_time_interval,
            };
            Ok((key, point))
        })
        .collect()
}

/// The steady power of power.csv's compute (intensity 4096) and memory (intensity 1) phases:
/// saxpy2 at n = 2^26, block 256, back to back.
fn power_points(sim: &Simulator, m: &Measurements) -> Result<Vec<Point>> {
    let mut out = Vec::new();
    for (phase, intensity) in [("compute", 4096.0), ("memory", 1.0)] {
        let Some(watts) = m.steady_power(phase) else {
            continue;
        };
        let run = KernelRun {
            file: "power",
            line: 0,
            n: 67108864.0,
            intensity,
            block: 256.0,
            grid: 262144.0,
            dynamic_shared: 0.0,
            seconds: 0.0,
        };
        let predicted =
            gpu_power(&sim.kernel(&run)?).ok_or_else(|| anyhow!("the system has no node `gpu`"))?;
        out.push(Point {
            what: format!("{phase}-bound phase (steady state)"),
            measured: watts,
            predicted,
            interval: [predicted, predicted],
        });
    }
    Ok(out)
}

/// Leave-one-group-out cross-validation (each block size of sweep.csv, the occupancy file):
/// the error of each group under a calibration that never saw it, and the coverage of each
/// group's launches by error bars drawn from the other groups' out-of-fold residuals only.
fn cross_validation(m: &Measurements) -> Result<(Vec<Check>, Coverage)> {
    let base = saxpy2::device(m)?;
    let all = samples(m)?;
    let groups = groups(&all);
    let residuals = out_of_fold(&folds(&base, &all, &groups));
    let mut checks = Vec::new();
    let mut intervals = Vec::new();
    for group in groups.iter().map(String::as_str).collect::<BTreeSet<_>>() {
        let (own, others): (Vec<&Residual>, Vec<&Residual>) =
            residuals.iter().partition(|r| r.group == group);
        let points: Vec<Point> = own
            .iter()
            .map(|r| Point {
                what: group.to_owned(),
                measured: r.measured,
                predicted: r.predicted,
                interval: [r.predicted, r.predicted],
            })
            .collect();
        // The held-out target is per block size; an occupancy level held out is
        // reported without one (the lowest is an extrapolation below every other).
        let target = if group.starts_with("sweep") {
            0.10
        } else {
            f64::INFINITY
        };
        let mut c = check(&format!("{group} held out"), &points, target, f64::INFINITY);
        c.worst_at.clear();
        checks.push(c);
        if let Some(bars) = error_bars(others) {
            intervals.extend(own.iter().map(|r| {
                let w = bars.bar(r.regime, r.warps_launched, r.resident_warps).relative * r.predicted;
                (r.predicted, [r.predicted - w, r.predicted + w], r.measured)
            }));
        }
    }
    let held_out = Coverage::of("each group held out of the fit and of the bars", &intervals);
    Ok((checks, held_out))
}

pub fn validate(args: &ValidateArgs) -> Result<Validation> {
    let m = Measurements::read(&args.data)?;
    let system = load_system(&args.system).map_err(|e| anyhow!(e))?;
    let sim = Simulator {
        app: read_text(&args.app)?,
        origin: args.app.display().to_string(),
        labels: default_labels(&system),
        system,
    };
    let sweep = kernel_points(&sim, &m, "sweep")?;
    let occupancy = kernel_points(&sim, &m, "occupancy")?;
    let transfers = transfer_points(&sim, &m)?;
    let power = power_points(&sim, &m)?;
    let points = |v: &[(KernelKey, Point)]| v.iter().map(|(_, p)| p.clone()).collect::<Vec<_>>();
    let copies = |direction: &str, memory: &str| -> Vec<Point> {
        transfers
            .iter()
            .filter(|(k, _)| k.direction == direction && k.memory == memory && k.bytes >= 1 << 20)
            .map(|(_, p)| p.clone())
            .collect()
    };
    let mut checks = vec![
        check("sweep.csv (kernel)", &points(&sweep), 0.08, 0.25),
        check("occupancy_block256.csv (kernel)", &points(&occupancy), 0.08, 0.25),
    ];
    checks.extend(teg_checks(&m)?);
    let heldout = heldout_points(&m)?;
    if !heldout.is_empty() {
        checks.push(check(
            "heldout_times.csv (kernels, TEG)",
            &heldout,
            0.15,
            f64::INFINITY,
        ));
    }
    if !transfers.is_empty() {
        for direction in ["HostToDevice", "DeviceToHost"] {
            checks.push(check(
                &format!("transfers.csv {direction} pinned ≥ 1 MiB"),
                &copies(direction, "pinned"),
                0.05,
                f64::INFINITY,
            ));
            checks.push(check(
                &format!("transfers.csv {direction} pageable ≥ 1 MiB"),
                &copies(direction, "pageable"),
                0.10,
                f64::INFINITY,
            ));
        }
    }
    if !power.is_empty() {
        checks.push(check("power.csv (steady board power)", &power, 0.10, 0.10));
    }
    let (cross_validation, held_out) = cross_validation(&m)?;
    let all_copies = |memory: &'static str| {
        transfers
            .iter()
            .filter(move |(k, _)| k.memory == memory)
            .map(|(_, p)| p)
    };
    let mut error_bars = vec![
        Coverage::of_points("sweep.csv (kernel)", sweep.iter().map(|(_, p)| p)),
        Coverage::of_points(
            "occupancy_block256.csv (kernel)",
            occupancy.iter().map(|(_, p)| p),
        ),
        held_out,
    ];
    if !transfers.is_empty() {
        error_bars.push(Coverage::of_points(
            "transfers.csv pinned, all sizes",
            all_copies("pinned"),
        ));
        error_bars.push(Coverage::of_points(
            "transfers.csv pageable, all sizes",
            all_copies("pageable"),
        ));
    }
    Ok(Validation {
        data: args.data.display().to_string(),
        checks,
        sweep,
        occupancy,
        transfers,
        power,
        cross_validation,
        error_bars,
    })
}

fn percent(x: f64) -> String {
    if x.is_finite() {
        format!("{:.1} %", x * 100.0)
    } else {
        "—".to_owned()
    }
}

fn table(checks: &[Check]) -> String {
    let mut s = String::from("| what | points | MAPE | worst | target | |\n|---|---:|---:|---:|---|---|\n");
    for c in checks {
        let target = if !c.target_mape.is_finite() {
            "(reported)".to_owned()
        } else if c.target_worst.is_finite() {
            format!(
                "MAPE ≤ {}, worst ≤ {}",
                percent(c.target_mape),
                percent(c.target_worst)
            )
        } else {
            format!("MAPE ≤ {}", percent(c.target_mape))
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} |",
            c.name,
            c.points,
            percent(c.mape),
            percent(c.worst),
            target,
            if !c.target_mape.is_finite() {
                "—"
            } else if c.pass {
                "met"
            } else {
                "**missed**"
            }
        );
    }
    s
}

/// Groups kernel points by `group` into measured dots and predicted lines along `x`.
fn kernel_chart(
    title: String,
    x_label: &str,
    points: &[(KernelKey, Point)],
    group: impl Fn(&KernelKey) -> f64,
    x: impl Fn(&KernelKey) -> f64,
    log_x: bool,
    group_name: &str,
) -> Chart {
    let mut groups: BTreeMap<u64, Vec<(f64, &Point)>> = BTreeMap::new();
    for (k, p) in points {
        groups.entry(group(k) as u64).or_default().push((x(k), p));
    }
    let mut series = Vec::new();
    for (i, (g, mut pts)) in groups.into_iter().enumerate() {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        series.push(Series {
            label: format!("{group_name} {g}"),
            points: pts.iter().map(|(x, p)| (*x, p.measured * 1e3)).collect(),
            line: false,
            colour: i,
        });
        series.push(Series {
            label: "  predicted".into(),
            points: pts.iter().map(|(x, p)| (*x, p.predicted * 1e3)).collect(),
            line: true,
            colour: i,
        });
    }
    Chart {
        title,
        x_label: x_label.into(),
        y_label: "kernel time [ms]".into(),
        log_x,
        log_y: true,
        series,
    }
}

fn transfer_chart(v: &Validation) -> Chart {
    let mut groups: BTreeMap<(String, String), Vec<(f64, &Point)>> = BTreeMap::new();
    for (k, p) in &v.transfers {
        groups
            .entry((k.direction.clone(), k.memory.clone()))
            .or_default()
            .push((k.bytes as f64, p));
    }
    let mut series = Vec::new();
    for (i, ((direction, memory), pts)) in groups.into_iter().enumerate() {
        series.push(Series {
            label: format!("{direction} {memory}"),
            points: pts.iter().map(|(x, p)| (*x, p.measured)).collect(),
            line: false,
            colour: i,
        });
        series.push(Series {
            label: "  predicted".into(),
            points: pts.iter().map(|(x, p)| (*x, p.predicted)).collect(),
            line: true,
            colour: i,
        });
    }
    let errs: Vec<String> = v
        .checks
        .iter()
        .filter(|c| c.name.starts_with("transfers"))
        .map(|c| {
            let name = c
                .name
                .trim_start_matches("transfers.csv ")
                .trim_end_matches(" ≥ 1 MiB");
            format!(
                "{} {}",
                name.replace("HostToDevice", "HtD").replace("DeviceToHost", "DtH"),
                percent(c.mape)
            )
        })
        .collect();
    Chart {
        title: format!("cudaMemcpy, MAPE ≥ 1 MiB: {}", errs.join(", ")),
        x_label: "bytes".into(),
        y_label: "seconds".into(),
        log_x: true,
        log_y: true,
        series,
    }
}

fn mape_of(v: &Validation, prefix: &str) -> String {
    v.checks.iter().find(|c| c.name.starts_with(prefix)).map_or_else(
        || "—".to_owned(),
        |c| format!("MAPE {}, worst {}", percent(c.mape), percent(c.worst)),
    )
}

/// Writes the Markdown report and its figures (in `validation/` beside it).
fn write_report(v: &Validation, path: &Path) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new(".")).join("validation");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let figures = [
        (
            "sweep.svg",
            kernel_chart(
                format!(
                    "saxpy2 time vs intensity per block size ({})",
                    mape_of(v, "sweep")
                ),
                "compute intensity a",
                &v.sweep,
                |k| k.block,
                |k| k.intensity,
                true,
                "block",
            ),
        ),
        (
            "occupancy.svg",
            kernel_chart(
                format!(
                    "saxpy2 time vs occupancy, block 256 ({})",
                    mape_of(v, "occupancy")
                ),
                "resident warps per SM",
                &v.occupancy,
                |k| k.intensity,
                |k| k.warps_per_sm,
                false,
                "a =",
            ),
        ),
        ("transfers.svg", transfer_chart(v)),
    ];
    for (name, chart) in &figures {
        let file = dir.join(name);
        std::fs::write(&file, chart.svg()).with_context(|| format!("writing {}", file.display()))?;
    }
    let mut s = String::new();
    let _ = writeln!(s, "# Validation against measurements\n");
    let _ = writeln!(
        s,
        "Written by `hetsim validate --data {} --report {}`: the validation example \
(examples/validation/saxpy2, system h100.toml) simulated for every configuration the GPU \
measured, through the whole stack (catalog, kernel analyser on the measured SASS, \
`gpu-queueing` and `link-host-memory` models, engine). Errors are (predicted − measured) / measured.\n",
        v.data,
        path.display()
    );
    let _ = writeln!(s, "## Targets\n\n{}", table(&v.checks));
    let _ = writeln!(s, "{TEG_AGAINST_CLOSED_FORM}");
    let _ = writeln!(
        s,
        "## Cross-validation\n\nThe four calibrated attributes (memoryQueueCycles, \
issueEfficiency, blockLaunchRate, warpSkew) fitted by `hetsim calibrate gpu`'s procedure on \
every group of launches but one (a group: one block size of sweep.csv, or one occupancy level \
of occupancy_block256.csv); the error is that of the pure model on the group left out \
(held-out target per block size: MAPE ≤ 10 %). These residuals also give the error bars.\n\n{}",
        table(&v.cross_validation)
    );
    let _ = writeln!(
        s,
        "## Error bars\n\nEvery kernel and copy prediction carries a 90 % interval: the conformal \
quantile of the calibration's relative residuals in its regime (compute-, memory-, latency- or \
launch-bound; copies: pinned or pageable), doubled outside the calibrated domain (docs/MODELS.md, \
\"Error bars\"). `covered` is the fraction of measurements inside their interval; `needed ±` the \
half-width a conformal calibration on these very points would state. The kernel rows are the \
catalog's predictions, fitted on these launches, with bars from cross-validated residuals \
(so wider than the in-sample errors need); the held-out row is the strict one: each group of \
launches (a block size, an occupancy level) predicted by a fit that never saw it, against bars \
drawn from the other groups' residuals only. A coverage measured on n points passes above \
90 % − 2·√(0.09/n).\n\n{}",
        coverage::table(&v.error_bars)
    );
    let _ = writeln!(s, "## Figures\n");
    for (name, chart) in &figures {
        let _ = writeln!(s, "![{}](validation/{name})\n", chart.title);
    }
    let _ = writeln!(
        s,
        "## Power\n\n| phase | measured [W] | predicted [W] | error |\n|---|---:|---:|---:|"
    );
    for p in &v.power {
        let _ = writeln!(
            s,
            "| {} | {:.1} | {:.1} | {} |",
            p.what,
            p.measured,
            p.predicted,
            percent(p.error())
        );
    }
    s.push_str(LIMITS);
    std::fs::write(path, s).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// How the TEG rows differ from the closed-form ones, stated under the targets.
const TEG_AGAINST_CLOSED_FORM: &str = "The rows marked TEG are the same launches predicted by \
the cycle-approximate issue engine (`hetsim kernel simulate`, model `gpu-teg`; docs/MODELS.md, \
\"TEG\") from the measured SASS and teg/data/hopper.toml, against the closed-form \
`gpu-queueing` rows above them. Both fit four numbers to these launches (`gpu-queueing`: \
memoryQueueCycles, issueEfficiency, blockLaunchRate, warpSkew; TEG: efficiency, queue_cycles, \
replacement, taken_branch), so both are in-sample. TEG's loop costs come from the compiler's \
stall counts and its latency/issue overlap from simulation, not from a fitted issue \
efficiency; it also follows bank conflicts, block barriers and L1/L2 reuse, which saxpy2 does \
not exercise.
";

/// What the report cannot show, stated in every report.
const LIMITS: &str = "
## What this does not show

- **Other GPUs.** The H200 SXM 141GB entry is its spec sheet plus the H100's calibration; no
  H200 was measured, so its predictions are unvalidated here. A GPU at hand is measured with
  `bench/gpu/run.sh OUTDIR` and calibrated with `hetsim calibrate gpu OUTDIR`; then
  `hetsim validate --data OUTDIR --system …` checks it.
- **Other kernels.** Every timing here is saxpy2. The models take no per-kernel number (the
  analyser gives them from SASS), but kernels with L2 reuse, shared-memory traffic or tensor
  cores meet parts of the models that saxpy2 does not exercise. The kernels of
  kernel/tests/kernels (strided, double precision, SFU loops, naive and tiled SGEMM, a
  5-point stencil) are there to be measured with `bench/gpu/run.sh` where a GPU is at hand.
- **Pageable copies** are fitted at these very sizes (knots of the curve): their errors are
  in-sample; they belong to this host.
- **Error bars** are calibrated on saxpy2 at one data size; other kernels and sizes are
  extrapolations, whose bars are only doubled, not validated.
- **The thesis's GPUs** (GTX 970, GTX TITAN X) stay exact under the thesis's `gpu-volkov`
  model: the golden tests of models/tests/golden.rs and tests/tests/examples.rs check them.
";

pub fn run(args: ValidateArgs) -> Result<()> {
    let v = validate(&args)?;
    if let Some(path) = &args.report {
        write_report(&v, path)?;
    }
    if args.json {
        super::print_json(&v)?;
    } else {
        println!("validation on {}\n\n{}", v.data, table(&v.checks));
        println!(
            "cross-validation (each group held out)\n\n{}",
            table(&v.cross_validation)
        );
        println!(
            "error bars (90 % intervals)\n\n{}",
            coverage::table(&v.error_bars)
        );
    }
    let missed: Vec<&str> = v
        .checks
        .iter()
        .filter(|c| !c.pass)
        .map(|c| c.name.as_str())
        .chain(v.error_bars.iter().filter(|c| !c.pass).map(|c| c.name.as_str()))
        .collect();
    if !missed.is_empty() {
        bail!("targets missed: {}", missed.join("; "));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A measurement folder with the kit's held-out files: the corpus's SASS of every kernel and
    /// two launches timed at `seconds`.
    fn heldout_folder(seconds: [f64; 2]) -> std::path::PathBuf {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let dir = std::env::temp_dir().join(format!("hetsim-heldout-{}-{}", std::process::id(), seconds[0]));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let copy = |from: &str, to: &str| {
            std::fs::copy(root.join(from), dir.join(to)).expect("copies");
        };
        copy("examples/validation/data/h100/props.csv", "props.csv");
        copy("kernel/tests/sass/all_kernels_sm90.sass", "heldout_sm90.sass");
        let header =
            "kernel,launch,args,grid,block,dynamic_smem,source,reps,mean_seconds,median_seconds,min_seconds";
        let rows = [
            format!(
                "sgemm_tiled<16>,N=256,256;_;_;_,16x16x1,16x16x1,0,sgemm_tiled.cu,20,0,{},0",
                seconds[0]
            ),
            format!(
                "stencil5,N=512_M=512,512;512;_;_,32x32x1,16x16x1,0,stencil5.cu,20,0,{},0",
                seconds[1]
            ),
        ];
        std::fs::write(
            dir.join("heldout_times.csv"),
            format!("{header}\n{}\n", rows.join("\n")),
        )
        .expect("writes");
        dir
    }

    #[test]
    fn heldout_launches_are_predicted_from_their_own_sass() {
        let dir = heldout_folder([1e-5, 1e-5]);
        let m = Measurements::read(&dir).expect("reads");
        let points = heldout_points(&m).expect("predicts");
        assert_eq!(points.len(), 2);
        assert!(
            points[0].what.contains("line 2: sgemm_tiled<16> N=256"),
            "{}",
            points[0].what
        );
        assert!(
            points.iter().all(|p| p.predicted > 3.9e-6 && p.predicted < 1e-3),
            "{points:?}"
        );
        // Timed at exactly what TEG predicts, the check's error is 0.
        let exact = heldout_folder([points[0].predicted, points[1].predicted]);
        let again = heldout_points(&Measurements::read(&exact).expect("reads")).expect("predicts");
        let c = check("held out", &again, 0.15, f64::INFINITY);
        assert!(c.pass && c.mape < 1e-6, "{c:?}");
        std::fs::remove_dir_all(&dir).ok();
        std::fs::remove_dir_all(&exact).ok();
    }

    #[test]
    fn a_heldout_row_naming_no_kernel_of_the_sass_is_an_error_naming_its_line() {
        let dir = heldout_folder([2e-5, 2e-5]);
        let text = std::fs::read_to_string(dir.join("heldout_times.csv")).expect("reads");
        std::fs::write(
            dir.join("heldout_times.csv"),
            text.replace("stencil5,N=512", "stencil9,N=512"),
        )
        .expect("writes");
        let e = heldout_points(&Measurements::read(&dir).expect("reads")).expect_err("no stencil9");
        assert!(e.to_string().contains("heldout_times.csv line 3"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
