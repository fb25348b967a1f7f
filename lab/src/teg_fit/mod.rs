//! The fit of TEG's four fitted parameters (teg/data/hopper.toml's `efficiency`,
//! `queue_cycles`, `replacement` and `taken_branch`) on measured launches: each launch is
//! emulated once into the engine's plan, then the engine reruns the plans at each point a
//! pattern search visits, keeping the point of least MAPE. Nothing is per kernel: the
//! launches are saxpy2's (sweep.csv, occupancy_block256.csv) and the in-range launches of
//! benchmark sets, each analysed as `kernel_params()` analyses it in a run of the set's
//! `gpu-teg` system.
//!
//! The search walks a lattice from the file's values: each parameter a step up or down while
//! that lowers the MAPE, then the steps halved, down to [`FINEST`]. The engine is
//! cycle-approximate, so the MAPE is not smooth in the parameters and the walk finds a local
//! minimum near where it starts; [`fit`] says how many points it tried.

use anyhow::{anyhow, Result};
use hetsim_kernel::sass::Kernel;
use hetsim_teg::{Gpu, Plan, Prepared};
use serde::Serialize;

use crate::benchset::BenchSet;
use crate::measurements::Measurements;
use crate::saxpy2;
use crate::set_samples::SetApp;
use crate::toml_lines::{with_values, Assignment};

mod search;

pub use search::{
    errors, fit, leave_one_family_out, mape, refit_at_finest, FitProgress, Fold, TegFit, UNFITTED_START,
};

/// The system model whose kernels a set's launches are planned on.
const MODEL: &str = "gpu-teg";

/// One measured launch, planned.
pub struct TegLaunch<'a> {
    /// `saxpy2: sweep`, `kit: strided`.
    pub family: String,
    /// Where it was measured and how: `sweep line 12: a=1 block=256 smem=0`.
    pub what: String,
    pub prepared: Prepared<'a>,
    pub plan: Plan,
    pub seconds: f64,
}

/// TEG's four fitted parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct TegPoint {
    /// `memory.efficiency`: the share of eq. 4.7's bandwidth in `C_mem`.
    pub efficiency: f64,
    /// `memory.queue_cycles`: DRAM's queueing delay scale.
    pub queue_cycles: f64,
    /// `blocks.replacement`: cycles from a block's end to its successor's first issue.
    pub replacement: f64,
    /// `taken_branch`: cycles a taken branch adds (fetch).
    pub taken_branch: f64,
}

/// The finest lattice step of each parameter: a hundredth of the bandwidth, 5 cycles of
/// queueing, 25 cycles of replacement, a cycle of fetch.
pub const FINEST: TegPoint = TegPoint {
    efficiency: 0.01,
    queue_cycles: 5.0,
    replacement: 25.0,
    taken_branch: 1.0,
};

impl TegPoint {
    /// The four values of an architecture's parameters (a TEG data file, read).
    pub fn of(params: &hetsim_teg::ArchParams) -> TegPoint {
        TegPoint {
            efficiency: params.memory.efficiency,
            queue_cycles: params.memory.queue_cycles,
            replacement: params.blocks.replacement,
            taken_branch: params.taken_branch,
        }
    }

    fn apply(&self, p: &mut Prepared) {
        p.params.memory.efficiency = self.efficiency;
        p.params.memory.queue_cycles = self.queue_cycles;
        p.params.blocks.replacement = self.replacement;
        p.params.taken_branch = self.taken_branch;
    }

    fn values(&self) -> [f64; 4] {
        [
            self.efficiency,
            self.queue_cycles,
            self.replacement,
            self.taken_branch,
        ]
    }

    fn from_values([efficiency, queue_cycles, replacement, taken_branch]: [f64; 4]) -> TegPoint {
        TegPoint {
            efficiency,
            queue_cycles,
            replacement,
            taken_branch,
        }
    }

    /// Whether the engine can run at this point: some bandwidth, no negative cycles.
    fn valid(&self) -> bool {
        (0.0..=1.0).contains(&self.efficiency)
            && self.efficiency > 0.0
            && self.queue_cycles >= 0.0
            && self.replacement >= 0.0
            && self.taken_branch >= 0.0
    }

    /// The point in whole finest steps, a memo key.
    fn key(&self) -> [i64; 4] {
        let steps = FINEST.values();
        let mut key = [0; 4];
        for (k, (v, s)) in key.iter_mut().zip(self.values().into_iter().zip(steps)) {
            *k = (v / s).round() as i64;
        }
        key
    }
}

/// The architecture TEG takes `kernel` for on `gpu`: its listing's, where it names one that
/// can run on the GPU (else an error naming both), or the GPU's compute capability; never a
/// default.
pub fn listing_arch(kernel: &Kernel, gpu: &Gpu) -> Result<hetsim_kernel::Arch> {
    let gpu_arch = gpu.arch().map_err(|e| anyhow!("the GPU's {e}"))?;
    let choice = hetsim_kernel::Arch::choose(None, kernel.arch, Some(("the GPU", gpu_arch)))
        .map_err(|e| anyhow!("{e}"))?;
    Ok(choice.map_or(gpu_arch, |c| c.arch))
}

/// saxpy2's launches of the folder's `file` (`sweep` or `occupancy`), on `kernel` (the
/// folder's saxpy2 SASS), with the shipped parameters of its architecture.
pub fn saxpy2_launches<'a>(
    kernel: &'a Kernel,
    m: &Measurements,
    gpu: &Gpu,
    file: &str,
) -> Result<Vec<TegLaunch<'a>>> {
    let arch = listing_arch(kernel, gpu).map_err(|e| anyhow!("saxpy2 SASS: {e}"))?;
    let prepared = Prepared::new(kernel, arch).map_err(|e| anyhow!("saxpy2 SASS: {e}"))?;
    m.kernel_runs()
        .filter(|r| r.file == file)
        .map(|r| {
            let launch = saxpy2::launch(r)?;
            let plan = hetsim_teg::plan(&prepared, &launch, gpu, &hetsim_teg::Options::default())
                .map_err(|e| anyhow!("{} line {}: TEG: {e}", r.file, r.line))?;
            Ok(TegLaunch {
                family: format!("saxpy2: {}", r.file),
                what: r.label(),
                prepared: prepared.clone(),
                plan,
                seconds: r.seconds,
            })
        })
        .collect()
}

/// The set's launches inside their family's range, each the launch its application `app`
/// makes, planned through the app's kernels.
pub fn set_launches<'a>(set: &BenchSet, app: &'a SetApp, gpu: &Gpu) -> Result<Vec<TegLaunch<'a>>> {
    let name = set.name();
    set.launches
        .iter()
        .filter(|l| set.scores(l))
        .map(|launch| {
            let at = |e: String| anyhow!("{}: {}: {e}", set.path.display(), launch.at);
            let (_, params) = app
                .kernel_params(&launch.variables)
                .map_err(|e| at(e.to_string()))?;
            let key = params
                .get("launch")
                .and_then(|k| k.clone().into_string().ok())
                .ok_or_else(|| at("kernel_params() gave no `launch`".into()))?;
            let (prepared, plan) = app
                .library()
                .teg_plan(&key, gpu, None)
                .map_err(|e| at(e.to_string()))?;
            Ok(TegLaunch {
                family: format!("{name}: {}", launch.family),
                what: format!("{}: {} {}", launch.at, launch.family, launch.params),
                prepared,
                plan,
                seconds: launch.seconds,
            })
        })
        .collect()
}

/// `text`, a TEG data file (teg/data/hopper.toml), with the fitted `point` in place of its
/// four values, every other line and each line's comment kept.
pub fn with_fitted_point(text: &str, point: TegPoint, origin: &str) -> Result<String> {
    let at = |table, key, value: f64| Assignment {
        table,
        key,
        value: format!("{value}"),
    };
    let wanted = [
        at("", "taken_branch", point.taken_branch),
        at("memory", "efficiency", point.efficiency),
        at("memory", "queue_cycles", point.queue_cycles),
        at("blocks", "replacement", point.replacement),
    ];
    with_values(text, &wanted, origin)
}

/// What TEG's fit plans its launches with: the folder's saxpy2 SASS, the sets and their
/// `gpu-teg` kernels, the catalog's GPU and the TEG data file.
pub struct FitInputs {
    saxpy2: Option<Kernel>,
    sets: Vec<BenchSet>,
    apps: Vec<SetApp>,
    pub gpu: Gpu,
    pub params: hetsim_teg::ArchParams,
    /// The data file as read, and its name.
    text: String,
    origin: String,
}

impl FitInputs {
    /// `text` is the TEG data file (`origin` names it); `gpu` the catalog's GPU TEG runs on,
    /// as in an application. Everything is checked here, before any launch is planned.
    pub fn new(
        m: &Measurements,
        sets: &[BenchSet],
        gpu: &str,
        text: &str,
        origin: &str,
    ) -> Result<FitInputs> {
        let saxpy2 = match m.sass.as_deref() {
            Some(sass) => {
                let listing = hetsim_kernel::parse(sass)
                    .map_err(|e| anyhow!("{}: saxpy2 SASS: {e}", m.dir.display()))?;
                let kernel = listing.kernels.into_iter().next();
                Some(kernel.ok_or_else(|| anyhow!("{}: saxpy2 SASS: no kernel", m.dir.display()))?)
            }
            None => None,
        };
        Ok(FitInputs {
            saxpy2,
            sets: sets.to_vec(),
            apps: sets
                .iter()
                .map(|s| SetApp::load(s, MODEL, "TEG is fitted through its kernels"))
                .collect::<Result<_>>()?,
            gpu: Gpu::from_catalog(gpu).map_err(|e| anyhow!("{gpu}: {e}"))?,
            params: hetsim_teg::ArchParams::parse(text, origin).map_err(|e| anyhow!("{e}"))?,
            text: text.to_owned(),
            origin: origin.to_owned(),
        })
    }

    /// The folder's saxpy2 launches and the sets', planned, with the data file's parameters;
    /// an error where a kernel's architecture is not one the file serves.
    pub fn launches(&self, m: &Measurements) -> Result<Vec<TegLaunch<'_>>> {
        let mut launches = Vec::new();
        if let Some(kernel) = &self.saxpy2 {
            for file in ["sweep", "occupancy"] {
                launches.extend(saxpy2_launches(kernel, m, &self.gpu, file)?);
            }
        }
        for (set, app) in self.sets.iter().zip(&self.apps) {
            launches.extend(set_launches(set, app, &self.gpu)?);
        }
        if launches.is_empty() {
            return Err(anyhow!(
                "{}: no saxpy2 launches and no set launches to fit TEG on",
                m.dir.display()
            ));
        }
        let majors = &self.params.majors;
        if let Some(l) = launches.iter().find(|l| !majors.contains(&l.prepared.arch.major)) {
            return Err(anyhow!(
                "{}: serves compute capability majors {majors:?}, but {} runs on sm_{}{}",
                self.origin,
                l.family,
                l.prepared.arch.major,
                l.prepared.arch.minor
            ));
        }
        for l in &mut launches {
            l.prepared.params = self.params.clone();
        }
        Ok(launches)
    }

    /// The fit from the data file's values, and the file with the fitted values.
    pub fn fit_file(&self, m: &Measurements, progress: FitProgress) -> Result<(TegFit, String)> {
        let mut launches = self.launches(m)?;
        let fit = fit(&mut launches, &self.gpu, TegPoint::of(&self.params), progress);
        let text = with_fitted_point(&self.text, fit.point, &self.origin)?;
        Ok((fit, text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    const SHIPPED: &str = "teg/data/hopper.toml";

    fn shipped_text() -> String {
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(SHIPPED))
            .expect("the shipped TEG data file")
    }

    #[test]
    fn a_fitted_point_replaces_the_four_values_and_keeps_every_other_line() {
        let text = "taken_branch = 5\n[memory]  # the DRAM side\nl1 = 39.598        # a comment\n  efficiency = 0.68\nqueue_cycles = 30\n[ blocks ]\nreplacement = 600          # fitted\n";
        let point = TegPoint {
            efficiency: 0.84,
            queue_cycles: 45.0,
            replacement: 700.0,
            taken_branch: 4.0,
        };
        let out = with_fitted_point(text, point, "t.toml").expect("all four present");
        assert_eq!(
            out,
            "taken_branch = 4\n[memory]  # the DRAM side\nl1 = 39.598        # a comment\n  efficiency = 0.84\nqueue_cycles = 45\n[ blocks ]\nreplacement = 700          # fitted\n"
        );
        let e = with_fitted_point("[memory]\nefficiency = 1\n", point, "t.toml").expect_err("three missing");
        assert!(
            e.to_string()
                .contains("t.toml: no `taken_branch = …` in the top level"),
            "{e}"
        );
    }

    /// The calibration run again on the shipped H100 data (saxpy2's sweep and occupancy
    /// launches and the kit's, as `hetsim calibrate gpu … --set kit/benchset.toml --teg-file`
    /// fits them), from the shipped values at the finest steps: no neighbour is better, so the
    /// search that wrote the file stops where it stands, and writing its point gives the file
    /// back byte for byte.
    #[test]
    fn the_shipped_hopper_teg_parameters_are_where_the_fit_on_the_shipped_h100_data_stops() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/validation/data/h100");
        let m = Measurements::read(&dir).expect("the H100 folder");
        let sets = [BenchSet::read(&dir.join("kit/benchset.toml")).expect("the kit")];
        let text = shipped_text();
        let inputs = FitInputs::new(&m, &sets, "H100 SXM5 80GB", &text, SHIPPED).expect("inputs");
        let mut launches = inputs.launches(&m).expect("planned");
        let shipped = TegPoint::of(&inputs.params);
        let fit = refit_at_finest(&mut launches, &inputs.gpu, shipped);
        assert_eq!(fit.point, shipped, "{fit:?}");
        assert!(fit.mape < 0.05, "in-sample MAPE {:.2} %", fit.mape * 100.0);
        assert_eq!(
            with_fitted_point(&text, fit.point, SHIPPED).expect("writes"),
            text
        );
    }

    #[test]
    fn the_architecture_is_the_listings_or_the_gpus_never_a_default() {
        let sass = |file: &str| {
            std::fs::read_to_string(
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("../examples/kernels")
                    .join(file),
            )
            .expect("the example SASS")
        };
        let gtx970 = Gpu::from_catalog("GTX 970 - gajger").expect("the thesis's GPU");
        let maxwell = hetsim_kernel::parse(&sass("saxpy2-figure-5-2.sass")).expect("parses");
        let arch = listing_arch(&maxwell.kernels[0], &gtx970).expect("the GPU's architecture");
        assert_eq!(arch.to_string(), "sm_52");
        let hopper = hetsim_kernel::parse(&sass("saxpy2-sm90.sass")).expect("parses");
        let e = listing_arch(&hopper.kernels[0], &gtx970)
            .expect_err("sm_90 cannot run on sm_52")
            .to_string();
        assert!(e.contains("sm_90") && e.contains("sm_52"), "{e}");
    }
}
