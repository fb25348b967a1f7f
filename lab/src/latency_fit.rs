//! The two figures of an architecture's latency table (kernel/data/latency/*.toml) that are
//! calibrated rather than measured, fitted again on a measurement folder: a taken branch
//! (`branch_taken`) and a block's replacement (`block_replacement`).
//!
//! A latency-bound launch (so few warps resident per SM that each waits out its own
//! dependences) takes, per warp, the analyser's latency bound: each SM runs its warps in
//! rounds of its resident warps, so the measured cycles a warp are the time × the clock ÷
//! the rounds. The analyser's bound is affine in the two figures (a taken branch is paid
//! once per loop iteration, a replacement once per warp), so each launch gives one linear
//! equation `measured = bound₀ + taken · branch_taken + replaced · block_replacement`, its
//! coefficients read off the analyser at three settings of the figures; the figures are the
//! least-squares solution over the launches. That needs launches whose loops run different
//! numbers of times (different intensities of one kernel), else the two columns are one.
//!
//! The launches are the family a benchmark set marks `latency_bound` (any kernel, analysed
//! through the set's own app and `gpu-queueing` system), or else saxpy2's launches of
//! occupancy_block256.csv at [`LATENCY_BOUND_WARPS`] resident warps per SM. On saxpy2 this
//! is the line `c + s·a` through the cycles over the intensities of docs/MODELS.md
//! ("Latency tables"): `branch_taken = s − path` and `block_replacement = c + s − pass`.

use anyhow::{anyhow, bail, Result};
use hetsim_kernel::{analyze, parse, CalibratedLatencies, Options};
use hetsim_models::occupancy::Limits;
use hetsim_models::queueing::{resident_blocks, Kernel};

use crate::benchset::{marked_family, BenchSet};
use crate::files::{csv_rows, number_field};
use crate::measurements::{KernelRun, Measurements};
use crate::saxpy2;
use crate::set_samples::{kernel_of, SetApp};
use crate::toml_lines::{with_values, Assignment};

/// Resident warps per SM at which saxpy2's launches are latency-bound, and the table is
/// fitted where no benchmark set names a family: one block of 256 threads per SM.
pub const LATENCY_BOUND_WARPS: u32 = 8;

/// The two figures and what they were fitted on.
#[derive(Clone, Debug, PartialEq)]
pub struct LatencyFit {
    pub branch_taken: f64,
    pub block_replacement: f64,
    /// The launches' mean absolute error of the fitted bound against the measured cycles.
    pub mape: f64,
    /// `occupancy_block256.csv: saxpy2's 9 launches at 8 resident warps per SM (clock.csv's
    /// mean clock)`.
    pub fitted_on: String,
}

/// One latency-bound launch as an equation in the two figures [cycles a warp].
#[derive(Clone, Copy, Debug)]
struct Equation {
    measured: f64,
    /// The bound with both figures at 0.
    bound: f64,
    /// Its growth per cycle of `branch_taken` (the taken branches of a warp's path) and of
    /// `block_replacement`.
    taken: f64,
    replaced: f64,
}

/// The step at which the analyser is read off: its bound is affine, so any step gives the
/// same coefficients; a large one keeps them clear of rounding.
const PROBE: f64 = 100.0;

impl Equation {
    /// `bound(figures)` is the analyser's latency bound of the launch with those figures.
    fn of(measured: f64, bound: impl Fn(CalibratedLatencies) -> Result<f64>) -> Result<Equation> {
        let at = |branch_taken, block_replacement| {
            bound(CalibratedLatencies {
                branch_taken,
                block_replacement,
            })
        };
        let zero = at(0.0, 0.0)?;
        Ok(Equation {
            measured,
            bound: zero,
            taken: (at(PROBE, 0.0)? - zero) / PROBE,
            replaced: (at(0.0, PROBE)? - zero) / PROBE,
        })
    }

    fn predicted(&self, f: CalibratedLatencies) -> f64 {
        self.bound + self.taken * f.branch_taken + self.replaced * f.block_replacement
    }
}

/// The fit of `equations`, two or more (`what` names them in an error), said to be
/// `fitted_on` them.
fn fitted(equations: &[Equation], what: &str, fitted_on: String) -> Result<LatencyFit> {
    if equations.len() < 2 {
        bail!("{what}: expected two or more, found {}", equations.len());
    }
    let (figures, mape) = solve(equations, what)?;
    Ok(LatencyFit {
        branch_taken: figures.branch_taken,
        block_replacement: figures.block_replacement,
        mape,
        fitted_on,
    })
}

/// The least-squares figures of `equations`, and their MAPE; `what` names the launches in
/// an error.
fn solve(equations: &[Equation], what: &str) -> Result<(CalibratedLatencies, f64)> {
    let (mut tt, mut tr, mut rr, mut ty, mut ry) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for e in equations {
        let y = e.measured - e.bound;
        tt += e.taken * e.taken;
        tr += e.taken * e.replaced;
        rr += e.replaced * e.replaced;
        ty += e.taken * y;
        ry += e.replaced * y;
    }
    let det = tt * rr - tr * tr;
    if det.abs() <= 1e-9 * (tt * rr).max(f64::MIN_POSITIVE) {
        bail!(
            "{what}: the launches do not tell a taken branch from a block's replacement: the fit needs launches whose loops run different numbers of times (say, two intensities or more)"
        );
    }
    let figures = CalibratedLatencies {
        branch_taken: (ty * rr - ry * tr) / det,
        block_replacement: (ry * tt - ty * tr) / det,
    };
    let mape = equations
        .iter()
        .map(|e| ((e.predicted(figures) - e.measured) / e.measured).abs())
        .sum::<f64>()
        / equations.len() as f64;
    Ok((figures, mape))
}

/// The fit on the folder `m`: on the family one of `sets` marks `latency_bound`, else on
/// saxpy2's latency-bound occupancy level where the folder has occupancy_block256.csv and
/// clock.csv; none where it has neither.
pub fn fit(m: &Measurements, sets: &[BenchSet]) -> Result<Option<LatencyFit>> {
    if let Some((set, family)) = marked_family(
        sets,
        "latency_bound",
        |f| !f.latency_bound.is_empty(),
        "the latency table",
    )? {
        return fit_family(m, set, family).map(Some);
    }
    if m.occupancy.is_empty() || !m.dir.join("clock.csv").is_file() {
        return Ok(None);
    }
    fit_saxpy2(m).map(Some)
}

/// The fit on `family`'s launches within its `latency_bound`, each the launch the set's app
/// makes, analysed through its `gpu-queueing` system.
fn fit_family(m: &Measurements, set: &BenchSet, family: &str) -> Result<LatencyFit> {
    let origin = set.path.display().to_string();
    let app = SetApp::load(
        set,
        "gpu-queueing",
        "its latency-bound launches are analysed through it",
    )?;
    let limits = m.occupancy_limits()?;
    let sms = m.prop("sms")?;
    let (clock_hz, clock_from) = clock_hz(m)?;
    let marked = &set.families[family];
    let library = app.library();
    let mut equations = Vec::new();
    for launch in set
        .launches
        .iter()
        .filter(|l| l.family == family && marked.latency_bound(&l.variables))
    {
        let at = |e: String| anyhow!("{origin}: {}: {e}", launch.at);
        let (name, params) = app
            .kernel_params(&launch.variables)
            .map_err(|e| at(e.to_string()))?;
        let kernel = kernel_of(&name, &params).map_err(|e| at(e.to_string()))?;
        let key = params
            .get("launch")
            .and_then(|k| k.clone().into_string().ok())
            .ok_or_else(|| {
                at("kernel_params() gave no `launch`: the kernel needs a launch to emulate".into())
            })?;
        let cycles = launch.seconds * clock_hz / rounds(&kernel, limits, sms);
        equations.push(Equation::of(cycles, |f| {
            library.latency_bound_with(&key, f).map_err(&at)
        })?);
    }
    let fitted_on = format!(
        "{origin}: {family}'s {} launches within `latency_bound` ({clock_from})",
        equations.len()
    );
    let what = format!("{origin}: [families.{family}]'s `latency_bound` launches");
    fitted(&equations, &what, fitted_on)
}

/// The rounds of resident warps each SM runs a launch of `kernel` in (fractional: the last
/// round's share of a full one).
fn rounds(kernel: &Kernel, limits: &'static Limits, sms: f64) -> f64 {
    let warps_per_block = (kernel.block_size / 32.0).ceil();
    let resident = resident_blocks(limits, kernel, warps_per_block).max(1.0) * warps_per_block;
    kernel.grid_size * warps_per_block / (sms * resident)
}

/// The fit on saxpy2's launches of occupancy_block256.csv at [`LATENCY_BOUND_WARPS`]
/// resident warps per SM, analysed on the folder's saxpy2 SASS.
fn fit_saxpy2(m: &Measurements) -> Result<LatencyFit> {
    let runs = latency_bound_runs(m)?;
    let (clock_hz, clock_from) = clock_hz(m)?;
    let sms = m.prop("sms")?;
    let sass = m
        .sass
        .as_deref()
        .ok_or_else(|| anyhow!("{}: no saxpy2_*.sass", m.dir.display()))?;
    let listing = parse(sass).map_err(|e| anyhow!("saxpy2 SASS: {e}"))?;
    let equations =
        runs.iter()
            .map(|r| {
                let rounds = r.n / 32.0 / sms / f64::from(LATENCY_BOUND_WARPS);
                let launch = saxpy2::launch(r)?;
                Equation::of(r.seconds * clock_hz / rounds, |figures| {
                    let options = Options {
                        launch: Some(launch.clone()),
                        calibrated: Some(figures),
                        ..Options::default()
                    };
                    let report = analyze(&listing, &options).map_err(|e| anyhow!("saxpy2: {e}"))?;
                    report.latency_bound.value().ok_or_else(|| {
                        anyhow!("saxpy2: the latency bound of an emulated launch is a formula")
                    })
                })
            })
            .collect::<Result<Vec<_>>>()?;
    let fitted_on = format!(
        "occupancy_block256.csv: saxpy2's {} launches at {LATENCY_BOUND_WARPS} resident warps per SM ({clock_from})",
        equations.len()
    );
    let what = format!(
        "{}: occupancy_block256.csv's launches at {LATENCY_BOUND_WARPS} resident warps per SM",
        m.dir.display()
    );
    fitted(&equations, &what, fitted_on)
}

/// `text`, a latency table (kernel/data/latency/hopper.toml), with the fit's `branch_taken`
/// and `block_replacement` in place of its own, to a hundredth of a cycle; every other line
/// and each line's comment kept.
pub fn with_fitted_figures(text: &str, fit: &LatencyFit, origin: &str) -> Result<String> {
    let at = |key, value: f64| Assignment {
        table: "",
        key,
        value: format!("{value:.2}"),
    };
    let wanted = [
        at("branch_taken", fit.branch_taken),
        at("block_replacement", fit.block_replacement),
    ];
    with_values(text, &wanted, origin)
}

/// occupancy_block256.csv's launches at [`LATENCY_BOUND_WARPS`] resident warps per SM.
fn latency_bound_runs(m: &Measurements) -> Result<Vec<KernelRun>> {
    let limits = saxpy2::device(m)?.limits;
    let runs: Vec<KernelRun> = m
        .occupancy
        .iter()
        .filter(|r| saxpy2::resident_warps(limits, r) == f64::from(LATENCY_BOUND_WARPS))
        .cloned()
        .collect();
    if runs.len() < 2 {
        bail!(
            "{}: occupancy_block256.csv has {} launches at {LATENCY_BOUND_WARPS} resident warps per SM; the fit needs two intensities or more",
            m.dir.display(),
            runs.len()
        );
    }
    Ok(runs)
}

/// The SM clock the launches ran at [Hz], and where it was read: clock.csv's mean (the
/// clock under load) where the folder has one, else props.csv's maximum clock.
fn clock_hz(m: &Measurements) -> Result<(f64, &'static str)> {
    let path = m.dir.join("clock.csv");
    if !path.is_file() {
        return Ok((m.prop("sm_clock_khz_max")? * 1e3, "props.csv's sm_clock_khz_max"));
    }
    let origin = path.display().to_string();
    let rows = csv_rows(&path, &["mhz"])?;
    let clocks = rows
        .iter()
        .map(|(line, f)| number_field(&origin, *line, "mhz", &f[0]))
        .collect::<Result<Vec<f64>>>()?;
    if clocks.is_empty() {
        bail!("{origin}: no rows");
    }
    Ok((
        clocks.iter().sum::<f64>() / clocks.len() as f64 * 1e6,
        "clock.csv's mean clock",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    fn h100() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/validation/data/h100")
    }

    /// The shipped table's calibrated figures are what the shipped H100 data gives: fitted
    /// again here and written into the shipped table, they give it back byte for byte. By
    /// hand (docs/MODELS.md, "Latency tables"): the line 2049.3 + 28.916·a cycles per warp, a
    /// taken branch 28.916 − 6.07 = 22.84, a replacement 2049.31 + 28.916 − 1610.36 = 467.87.
    #[test]
    fn the_hopper_latency_table_is_fitted_again_on_the_h100_data() {
        let m = Measurements::read(&h100()).expect("reads");
        let fit = fit(&m, &[]).expect("fits").expect("saxpy2's level");
        assert!((fit.branch_taken - 22.84).abs() < 0.01, "{fit:?}");
        assert!((fit.block_replacement - 467.87).abs() < 0.01, "{fit:?}");
        let table =
            hetsim_kernel::latency::LatencyTable::for_arch(hetsim_kernel::Arch::HOPPER).expect("hopper");
        assert_eq!(
            format!("{:.2}", table.branch_taken),
            format!("{:.2}", fit.branch_taken)
        );
        assert_eq!(
            format!("{:.2}", table.block_replacement),
            format!("{:.2}", fit.block_replacement)
        );
        let shipped = "kernel/data/latency/hopper.toml";
        let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(shipped))
            .expect("the shipped table");
        assert_eq!(
            with_fitted_figures(&text, &fit, shipped).expect("both keys"),
            text
        );
    }

    #[test]
    fn fitted_figures_replace_the_two_values_and_keep_every_other_line() {
        let fit = LatencyFit {
            branch_taken: 23.456,
            block_replacement: 500.0,
            mape: 0.0,
            fitted_on: String::new(),
        };
        let text = "ilp = 2\nbranch_taken = 22.84    # calibrated\nblock_replacement = 467.55 # calibrated\n[memory]\nbranch_taken = 1\n";
        assert_eq!(
            with_fitted_figures(text, &fit, "t.toml").expect("both keys"),
            "ilp = 2\nbranch_taken = 23.46    # calibrated\nblock_replacement = 500.00 # calibrated\n[memory]\nbranch_taken = 1\n"
        );
        let e = with_fitted_figures(
            "[memory]\nbranch_taken = 1\nblock_replacement = 2\n",
            &fit,
            "t.toml",
        )
        .expect_err("only in a table");
        assert!(
            e.to_string()
                .contains("t.toml: no `branch_taken = …` in the top level"),
            "{e}"
        );
    }

    /// A benchmark set of the H100's occupancy launches under names of a user's own (the
    /// kernel `chain`, its parameters `elements`, `work`, `threads`, `smem`), its own app and
    /// system, marking the launches at one block per SM `latency_bound` (plus `extra` in the
    /// family's table).
    fn chain_set(test: &str, extra: &str) -> (PathBuf, BenchSet) {
        let dir = std::env::temp_dir().join(format!("hetsim-latency-{test}-{}", std::process::id()));
        std::fs::remove_dir_all(&dir).ok();
        std::fs::create_dir_all(&dir).unwrap();
        let occupancy = std::fs::read_to_string(h100().join("occupancy_block256.csv")).unwrap();
        let mut times = String::from("family,launch,seconds\n");
        for line in occupancy.lines().skip(1) {
            let c: Vec<&str> = line.split(',').collect();
            times += &format!(
                "chain,elements={};work={};threads={};smem={},{}\n",
                c[0], c[1], c[2], c[3], c[8]
            );
        }
        std::fs::write(dir.join("times.csv"), times).unwrap();
        std::fs::write(
            dir.join("chain.rhai"),
            "if tag == \"GPU\" {\n    sim.compute(kernel_params(\"chain\", #{ elements: elements, work: work, block: threads, dynamicSharedMemory: smem }));\n}\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("gpu.toml"),
            format!(
                "name = \"chain\"\n[[node]]\nid = \"gpu\"\ncomponent = \"H100 SXM5 80GB\"\nmodel = \"gpu-queueing\"\nlabels = {{ GPU = 1 }}\n[[kernel]]\nname = \"chain\"\nsass = \"{}\"\nfunction = \"saxpy2\"\nparams = [\"elements\", \"work\", \"*x\", \"*y\"]\nthreads = \"elements\"\n",
                h100().join("saxpy2_sm90.sass").display()
            ),
        )
        .unwrap();
        std::fs::write(
            dir.join("benchset.toml"),
            format!("times = \"times.csv\"\nfamily = \"family\"\nparams = \"launch\"\nseconds = \"seconds\"\napp = \"chain.rhai\"\nsystems = {{ gpu-queueing = \"gpu.toml\" }}\n[families.chain]\nkernel = \"chain\"\nlatency_bound = {{ smem = [232320, 232320]{extra} }}\n"),
        )
        .unwrap();
        let set = BenchSet::read(&dir.join("benchset.toml")).expect("the set reads");
        (dir, set)
    }

    /// The fit through a set's own app and names, on the launches its descriptor marks, gives
    /// the figures of saxpy2's latency-bound level, which kernel/data/latency/hopper.toml
    /// keeps (22.84 and 467.87 cycles): the two paths weigh the same launches.
    #[test]
    fn a_family_marked_latency_bound_gives_the_figures_of_the_saxpy2_level() {
        let m = Measurements::read(&h100()).expect("the H100 folder");
        let saxpy2 = fit(&m, &[]).expect("fits").expect("saxpy2's level");
        let (dir, set) = chain_set("marked", "");
        let marked = fit(&m, std::slice::from_ref(&set))
            .expect("fits")
            .expect("the family");
        std::fs::remove_dir_all(&dir).ok();
        for f in [&saxpy2, &marked] {
            assert_eq!(
                (
                    format!("{:.2}", f.branch_taken),
                    format!("{:.2}", f.block_replacement)
                ),
                ("22.84".to_owned(), "467.87".to_owned()),
                "{f:?}"
            );
        }
        assert!(
            marked
                .fitted_on
                .contains("chain's 5 launches within `latency_bound`"),
            "{marked:?}"
        );
        assert!(marked.mape < 0.01, "{marked:?}");
        assert_eq!(
            set.families["chain"].fitted_for("gpu-teg"),
            Some(crate::benchset::LATENCY_FITTED),
            "a latency-bound family is in-sample for every model"
        );
    }

    #[test]
    fn one_intensity_is_refused_naming_the_family() {
        let m = Measurements::read(&h100()).expect("the H100 folder");
        let (dir, set) = chain_set("one", ", work = [8, 8]");
        let e = fit(&m, std::slice::from_ref(&set))
            .expect_err("one launch")
            .to_string();
        std::fs::remove_dir_all(&dir).ok();
        assert!(
            e.contains("[families.chain]'s `latency_bound` launches: expected two or more, found 1"),
            "{e}"
        );
    }

    #[test]
    fn the_least_squares_figures_solve_exact_equations_and_refuse_proportional_columns() {
        let truth = CalibratedLatencies {
            branch_taken: 20.0,
            block_replacement: 400.0,
        };
        let equation = |bound: f64, taken: f64| {
            let mut e = Equation {
                measured: 0.0,
                bound,
                taken,
                replaced: 1.0,
            };
            e.measured = e.predicted(truth);
            e
        };
        let (f, mape) = solve(
            &[
                equation(1000.0, 0.0),
                equation(3000.0, 7.0),
                equation(9000.0, 31.0),
            ],
            "t",
        )
        .expect("two columns apart");
        assert!((f.branch_taken - 20.0).abs() < 1e-9 && (f.block_replacement - 400.0).abs() < 1e-9);
        assert!(mape < 1e-12);
        let e = solve(&[equation(1000.0, 1.0), equation(3000.0, 1.0)], "t").expect_err("one column");
        assert!(e.to_string().starts_with("t: the launches do not tell"), "{e}");
    }
}
