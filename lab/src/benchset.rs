//! Benchmark sets: timed launches of any kernels, described by a `benchset.toml` beside
//! them, so that validation needs no code per benchmark. The descriptor names
//!
//! - `times`, a CSV of timed launches, and three of its columns: `family` (the kernel family
//!   of a row), `params` (the launch's parameters as `key=value;key=value`, each of which
//!   becomes a variable of the application) and `seconds` (the measured time);
//! - `app`, the application that runs one launch, and `systems`, the system files it runs on
//!   by GPU model (`gpu-queueing = "…"`), whose `[[kernel]]` tables give the SASS, the
//!   function and the parameter names;
//! - `[families.NAME]`: the system's `kernel` the family's rows launch (the app's `kernel`
//!   variable) and, where a number was fitted on the family's launches, `fitted`, what it
//!   was (one text, or a table by GPU model where only some models' numbers were): those rows
//!   are then in-sample, for every model or for the models named.
//!
//! Paths are relative to the descriptor. A file it names that is missing, a row of an unknown
//! family or a field that is no number fails the read, naming the file and the line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use hetsim_system::Variable;
use serde::Deserialize;

use crate::files::{csv_rows, number_field, read_text};

/// The file name of a benchmark set's descriptor.
pub const DESCRIPTOR: &str = "benchset.toml";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Descriptor {
    times: PathBuf,
    family: String,
    params: String,
    seconds: String,
    app: PathBuf,
    systems: BTreeMap<String, PathBuf>,
    families: BTreeMap<String, Family>,
    /// The MAPE the held-out families together must reach, by GPU model, where the set sets
    /// its own (a GPU nothing was calibrated on); else the GPU-model issue's.
    #[serde(default)]
    targets: BTreeMap<String, f64>,
    /// Steady board power per family launch (bench/gpu's `families_power.csv`), if measured.
    power: Option<PathBuf>,
    /// The MAPE the power predictions must reach (default 15 %, the H100 target).
    power_target: Option<f64>,
    /// The phases of `power` that fit the GPU's power coefficients, by the limiter each
    /// loads: `{ compute = "FAMILY PARAMS", memory = "FAMILY PARAMS" }`, a phase named by
    /// its family and its `kernel` field as the file writes them.
    power_fit: Option<BTreeMap<String, String>>,
}

/// The limiters a power fit solves for, in [`PowerPhases::fit`]'s order.
pub const POWER_LIMITERS: [&str; 2] = ["compute", "memory"];

/// A power phase of a set's `power` file: one launch run back to back, its steady power.
#[derive(Clone, Debug)]
pub struct PowerPhase {
    /// `families_power.csv line N`.
    pub at: String,
    pub family: String,
    pub params: String,
    pub variables: Vec<(String, Variable)>,
    pub watts: f64,
}

/// What a set's `power` file measured: the GPU at rest, and one phase per family launch.
#[derive(Clone, Debug)]
pub struct PowerPhases {
    /// The first idle phase (`idle1`) [W]: the second follows the loads and still cools down.
    pub idle: f64,
    pub phases: Vec<PowerPhase>,
    /// MAPE target of the predictions.
    pub target: f64,
    /// The descriptor's `power_fit`: the phases (indices into `phases`) that load the
    /// compute and the memory limiter, which `hetsim calibrate gpu` fits the coefficients on
    /// where the folder has no power.csv.
    pub fit: Option<[usize; 2]>,
}

/// One kernel family of a set.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Family {
    /// The `[[kernel]]` of the systems that the family's launches run.
    pub kernel: String,
    /// What was fitted on the family's launches, if anything.
    pub fitted: Option<Fitted>,
    /// The launches the family's target applies to, by parameter (`n = [1048576, 1e9]`,
    /// inclusive); the others are reported without a target, for the reason `outside` gives.
    #[serde(default)]
    pub range: BTreeMap<String, [f64; 2]>,
    pub outside: Option<String>,
    /// The launches whose data stay in L2, by parameter as `range` (inclusive): where given,
    /// `hetsim calibrate gpu` fits the architecture's L2 bandwidth on the two of them that
    /// move the most bytes ([`crate::l2_fit`]). One family of a folder's sets at most.
    #[serde(default)]
    pub l2_resident: BTreeMap<String, [f64; 2]>,
    /// The launches that are latency-bound (so few warps resident per SM that each waits out
    /// its own dependences), by parameter as `range` (inclusive): where given, `hetsim
    /// calibrate gpu` fits the latency table's `branch_taken` and `block_replacement` on them
    /// ([`crate::latency_fit`]). One family of a folder's sets at most. The table feeds every
    /// GPU model, so the family's rows are in-sample for each ([`Family::fitted_for`]).
    #[serde(default)]
    pub latency_bound: BTreeMap<String, [f64; 2]>,
}

/// What a family marked `latency_bound` has fitted on it, where its `fitted` says nothing.
pub const LATENCY_FITTED: &str =
    "the latency table's branch_taken and block_replacement, on its latency-bound launches";

/// What was fitted on a family's launches: one text for every GPU model, or a text for each
/// model a number of which was fitted there (`{ gpu-teg = "…" }`).
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum Fitted {
    Every(String),
    ByModel(BTreeMap<String, String>),
}

impl Family {
    /// What was fitted on the family's launches that `model` (`gpu-queueing`, `gpu-teg`)
    /// uses: its rows for that model are then in-sample.
    pub fn fitted_for(&self, model: &str) -> Option<&str> {
        let declared = match &self.fitted {
            Some(Fitted::Every(what)) => Some(what.as_str()),
            Some(Fitted::ByModel(by_model)) => by_model.get(model).map(String::as_str),
            None => None,
        };
        declared.or_else(|| (!self.latency_bound.is_empty()).then_some(LATENCY_FITTED))
    }

    /// Whether a launch with these variables is latency-bound, as the family's
    /// `latency_bound` says (none is where it says nothing).
    pub fn latency_bound(&self, variables: &[(String, Variable)]) -> bool {
        !self.latency_bound.is_empty() && within(&self.latency_bound, variables)
    }

    /// Whether the family's target applies to a launch with these variables.
    pub fn in_range(&self, variables: &[(String, Variable)]) -> bool {
        within(&self.range, variables)
    }

    /// Whether a launch with these variables stays in L2, as the family's `l2_resident`
    /// says (none does where it says nothing).
    pub fn l2_resident(&self, variables: &[(String, Variable)]) -> bool {
        !self.l2_resident.is_empty() && within(&self.l2_resident, variables)
    }
}

/// The one set and family among `sets` whose descriptor sets `mark` (`l2_resident`,
/// `latency_bound`: `marks` tells whether a family does), if any; an error naming both where
/// two do, since what they fit is one number (`figure` says which).
pub fn marked_family<'s>(
    sets: &'s [BenchSet],
    mark: &str,
    marks: fn(&Family) -> bool,
    figure: &str,
) -> Result<Option<(&'s BenchSet, &'s str)>> {
    let mut marked = sets.iter().flat_map(|set| {
        set.families
            .iter()
            .filter(|(_, f)| marks(f))
            .map(move |(name, _)| (set, name.as_str()))
    });
    let first = marked.next();
    if let (Some((a, fa)), Some((b, fb))) = (first, marked.next()) {
        bail!(
            "two families are marked `{mark}`: [families.{fa}] of {} and [families.{fb}] of {}; {figure} is fitted on one",
            a.path.display(),
            b.path.display()
        );
    }
    Ok(first)
}

/// Whether each parameter `ranges` names is among `variables` and within its range.
fn within(ranges: &BTreeMap<String, [f64; 2]>, variables: &[(String, Variable)]) -> bool {
    ranges.iter().all(|(key, [lo, hi])| {
        variables
            .iter()
            .any(|(k, v)| k == key && v.as_f64().is_some_and(|x| (*lo..=*hi).contains(&x)))
    })
}

/// One timed launch.
#[derive(Clone, Debug)]
pub struct TimedLaunch {
    /// Where it is: `kernels.csv line 7`.
    pub at: String,
    pub family: String,
    /// The `params` column as it reads.
    pub params: String,
    /// The application's variables: `kernel` and the launch's parameters.
    pub variables: Vec<(String, Variable)>,
    pub seconds: f64,
}

/// A benchmark set, read and checked.
#[derive(Clone, Debug)]
pub struct BenchSet {
    /// The descriptor's path.
    pub path: PathBuf,
    pub app: PathBuf,
    /// System files by GPU model.
    pub systems: BTreeMap<String, PathBuf>,
    pub families: BTreeMap<String, Family>,
    /// The descriptor's `targets`: MAPE over the held-out families, by GPU model.
    pub targets: BTreeMap<String, f64>,
    /// The descriptor's `power` file, read.
    pub power: Option<PowerPhases>,
    pub launches: Vec<TimedLaunch>,
}

impl BenchSet {
    /// Reads the descriptor at `path` and the launches it names.
    pub fn read(path: &Path) -> Result<BenchSet> {
        let origin = path.display().to_string();
        let d: Descriptor = toml::from_str(&read_text(path)?).map_err(|e| anyhow!("{origin}: {e}"))?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let existing = |field: &str, file: &Path| -> Result<PathBuf> {
            let full = dir.join(file);
            if full.is_file() {
                Ok(full)
            } else {
                bail!(
                    "{origin}: `{field}` names {}, which does not exist",
                    full.display()
                )
            }
        };
        let times = existing("times", &d.times)?;
        let app = existing("app", &d.app)?;
        let systems = d
            .systems
            .iter()
            .map(|(model, file)| Ok((model.clone(), existing(&format!("systems.{model}"), file)?)))
            .collect::<Result<_>>()?;
        if d.families.is_empty() {
            bail!("{origin}: no [families.NAME] table: name the kernel of each family");
        }
        if let Some((name, _)) = d
            .families
            .iter()
            .find(|(_, f)| !f.range.is_empty() && f.outside.is_none())
        {
            bail!("{origin}: [families.{name}] has a `range` but no `outside`: say why the launches outside it have no target");
        }
        let launches = timed_launches(&times, &d)?;
        for (name, family) in &d.families {
            if let Some(Fitted::ByModel(by_model)) = &family.fitted {
                if let Some(model) = by_model.keys().find(|m| !d.systems.contains_key(*m)) {
                    let known: Vec<&str> = d.systems.keys().map(String::as_str).collect();
                    let known = if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    };
                    bail!(
                        "{origin}: [families.{name}] `fitted` names the model `{model}`, which `systems` does not: expected one of {known}"
                    );
                }
            }
        }
        let power = match &d.power {
            Some(file) => {
                Some(power_phases(&existing("power", file)?, &d).map_err(|e| anyhow!("{origin}: {e}"))?)
            }
            None if d.power_fit.is_some() => {
                bail!("{origin}: `power_fit` names phases, but there is no `power` file")
            }
            None => None,
        };
        Ok(BenchSet {
            path: path.to_owned(),
            app,
            systems,
            families: d.families,
            targets: d.targets,
            power,
            launches,
        })
    }

    /// Whether the launch's family target applies to it (its `range` admits it).
    pub fn scores(&self, launch: &TimedLaunch) -> bool {
        self.families
            .get(&launch.family)
            .is_none_or(|f| f.in_range(&launch.variables))
    }

    /// The set's name in reports: its folder's.
    pub fn name(&self) -> String {
        self.path.parent().and_then(|p| p.file_name()).map_or_else(
            || "benchmark set".to_owned(),
            |n| n.to_string_lossy().into_owned(),
        )
    }

    /// The benchmark sets of a measurement folder: its own descriptor and those of its
    /// sub-folders (`h100/kit/benchset.toml`).
    pub fn in_folder(dir: &Path) -> Result<Vec<BenchSet>> {
        let mut paths = vec![dir.join(DESCRIPTOR)];
        let entries = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
        let mut nested: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path().join(DESCRIPTOR)))
            .collect();
        nested.sort();
        paths.extend(nested);
        paths
            .iter()
            .filter(|p| p.is_file())
            .map(|p| BenchSet::read(p))
            .collect()
    }
}

/// The family of `name`, named in `origin` at `line`.
fn family_of<'d>(d: &'d Descriptor, origin: &str, line: u64, name: &str) -> Result<&'d Family> {
    d.families.get(name).ok_or_else(|| {
        let known: Vec<&str> = d.families.keys().map(String::as_str).collect();
        anyhow!(
            "{origin}: line {line}: family `{name}` is not in the descriptor's [families] ({})",
            known.join(", ")
        )
    })
}

/// The application's variables for a launch of `family` whose `field` reads `params`
/// (`key=value;key=value`): `kernel`, then each key, integers as integers.
fn variables(
    origin: &str,
    line: u64,
    field: &str,
    family: &Family,
    params: &str,
) -> Result<Vec<(String, Variable)>> {
    let mut variables = vec![("kernel".to_owned(), Variable::Text(family.kernel.clone()))];
    for pair in params.split(';').filter(|p| !p.trim().is_empty()) {
        let (key, value) = pair.split_once('=').ok_or_else(|| {
            anyhow!("{origin}: line {line}: field `{field}`: expected key=value, got {pair:?}")
        })?;
        let value = number_field(origin, line, key.trim(), value.trim())?;
        let variable = if value.fract() == 0.0 && value.abs() < 9e15 {
            Variable::Int(value as i64)
        } else {
            Variable::Float(value)
        };
        variables.push((key.trim().to_owned(), variable));
    }
    Ok(variables)
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

fn timed_launches(times: &Path, d: &Descriptor) -> Result<Vec<TimedLaunch>> {
    let origin = times.display().to_string();
    let name = file_name(times);
    csv_rows(times, &[&d.family, &d.params, &d.seconds])?
        .into_iter()
        .map(|(line, f)| {
            let family = family_of(d, &origin, line, &f[0])?;
            Ok(TimedLaunch {
                at: format!("{name} line {line}"),
                family: f[0].clone(),
                params: f[1].clone(),
                variables: variables(&origin, line, &d.params, family, &f[1])?,
                seconds: number_field(&origin, line, &d.seconds, &f[2])?,
            })
        })
        .collect()
}

/// The phases of a `power` file (`phase,kernel,…,mean_watts,…,max_watts`: the phase is the
/// family, or `idle1`/`idle2`; `kernel` the launch's parameters). A loaded phase's steady
/// power is its `max_watts`, as power.csv's ([`Measurements::steady_power`]): the catalog's
/// coefficients are fitted on that statistic, so the phases are scored on the same one (a
/// phase's samples are nvidia-smi's one-second moving averages, whose maximum is the level
/// the load settles at; where the samples were all taken in the steady state it lies 0–2 W
/// above their mean). The GPU at rest is its `mean_watts`.
///
/// [`Measurements::steady_power`]: crate::measurements::Measurements::steady_power
fn power_phases(file: &Path, d: &Descriptor) -> Result<PowerPhases> {
    let origin = file.display().to_string();
    let name = file_name(file);
    let mut idle = None;
    let mut phases = Vec::new();
    for (line, f) in csv_rows(file, &["phase", "kernel", "mean_watts", "max_watts"])? {
        if f[0].starts_with("idle") {
            idle = idle.or(Some(number_field(&origin, line, "mean_watts", &f[2])?));
            continue;
        }
        let watts = number_field(&origin, line, "max_watts", &f[3])?;
        let family = family_of(d, &origin, line, &f[0])?;
        phases.push(PowerPhase {
            at: format!("{name} line {line}"),
            family: f[0].clone(),
            params: f[1].clone(),
            variables: variables(&origin, line, "kernel", family, &f[1])?,
            watts,
        });
    }
    Ok(PowerPhases {
        idle: idle.ok_or_else(|| anyhow!("{origin}: no idle phase (`idle1`): the GPU at rest is needed"))?,
        fit: d
            .power_fit
            .as_ref()
            .map(|named| power_fit(named, &phases, &origin))
            .transpose()?,
        phases,
        target: d.power_target.unwrap_or(0.15),
    })
}

/// The phases `power_fit` names, by [`POWER_LIMITERS`]; an error naming the field where one
/// is missing, unknown, or names no phase of the file.
fn power_fit(named: &BTreeMap<String, String>, phases: &[PowerPhase], file: &str) -> Result<[usize; 2]> {
    if let Some(other) = named.keys().find(|k| !POWER_LIMITERS.contains(&k.as_str())) {
        bail!(
            "`power_fit.{other}`: expected the limiters {}",
            POWER_LIMITERS.join(" and ")
        );
    }
    let find = |limiter: &str| -> Result<usize> {
        let phase = named
            .get(limiter)
            .ok_or_else(|| anyhow!("`power_fit`: no `{limiter}`: name the phase that loads it"))?;
        phases
            .iter()
            .position(|p| format!("{} {}", p.family, p.params) == *phase)
            .ok_or_else(|| {
                let known: Vec<String> = phases
                    .iter()
                    .map(|p| format!("{:?}", format!("{} {}", p.family, p.params)))
                    .collect();
                anyhow!(
                    "`power_fit.{limiter}` = {phase:?} is no phase of {file} (it has {})",
                    known.join(", ")
                )
            })
    };
    Ok([find(POWER_LIMITERS[0])?, find(POWER_LIMITERS[1])?])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kit() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/validation/data/h100/kit")
    }

    #[test]
    fn the_kit_reads_every_launch() {
        let set = BenchSet::read(&kit().join(DESCRIPTOR)).expect("reads");
        assert_eq!(set.launches.len(), 51);
        assert_eq!(set.families.len(), 4);
        assert_eq!(set.systems.len(), 2);
        let first = &set.launches[0];
        assert_eq!(first.at, "kernels.csv line 2");
        assert_eq!(
            first.variables[0],
            ("kernel".to_owned(), Variable::Text("strided".into()))
        );
        assert!(first.variables.contains(&("stride".to_owned(), Variable::Int(1))));
        // TEG's numbers are fitted on the kit, the catalog's gpu-queueing entry is not; the
        // L2 figure, on saxpy2_l2, serves both.
        let strided = &set.families["strided"];
        assert!(strided
            .fitted_for("gpu-teg")
            .is_some_and(|w| w.contains("taken_branch")));
        assert_eq!(strided.fitted_for("gpu-queueing"), None);
        let l2 = &set.families["saxpy2_l2"];
        assert!(["gpu-teg", "gpu-queueing"]
            .iter()
            .all(|m| l2.fitted_for(m).is_some_and(|w| w.contains("L2Bandwidth"))));
        let every: Family = toml::from_str("kernel = \"k\"\nfitted = \"x\"").expect("one text");
        assert_eq!(every.fitted_for("gpu-volkov"), Some("x"));
    }

    #[test]
    fn fitted_naming_a_model_without_a_system_is_refused() {
        let dir = std::env::temp_dir().join(format!("hetsim-benchset-fitted-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let text = std::fs::read_to_string(kit().join(DESCRIPTOR)).expect("the kit's");
        let kit_dir = kit().display().to_string();
        let typo = text
            .replace("fitted = { gpu-teg =", "fitted = { gpu_teg =")
            .replace("\"kernels.csv\"", &format!("\"{kit_dir}/kernels.csv\""))
            .replace("\"../../../kernels/", &format!("\"{kit_dir}/../../../kernels/"));
        let path = dir.join(DESCRIPTOR);
        std::fs::write(&path, typo).expect("writes");
        let e = BenchSet::read(&path).expect_err("gpu_teg has no system");
        let e = e.to_string();
        assert!(
            e.contains("[families.") && e.contains("`gpu_teg`") && e.contains("gpu-queueing, gpu-teg"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn a_missing_file_and_an_unknown_family_are_named() {
        let dir = std::env::temp_dir().join(format!("hetsim-benchset-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let descriptor = std::fs::read_to_string(kit().join(DESCRIPTOR)).expect("reads");
        let app = kit().join("../../../kernels/app.rhai");
        let descriptor = descriptor
            .replace("../../../kernels/app.rhai", &app.display().to_string())
            .replace("systems = {", "systems = {}\n# {");
        std::fs::write(dir.join(DESCRIPTOR), &descriptor).expect("writes");
        let e = BenchSet::read(&dir.join(DESCRIPTOR)).expect_err("no kernels.csv here");
        assert!(e.to_string().contains("`times` names"), "{e}");
        std::fs::write(
            dir.join("kernels.csv"),
            "kernel,params,median_seconds\nfft,n=4,1e-3\n",
        )
        .expect("writes");
        let e = BenchSet::read(&dir.join(DESCRIPTOR)).expect_err("fft is no family");
        assert!(e.to_string().contains("line 2: family `fft`"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn power_fit_names_two_phases_of_the_power_file_or_is_refused_naming_the_field() {
        let families = kit().join("../families");
        let phases = BenchSet::read(&families.join(DESCRIPTOR))
            .expect("reads")
            .power
            .expect("a power file");
        let named = |compute: &str, memory: &str| {
            BTreeMap::from([
                ("compute".to_owned(), compute.to_owned()),
                ("memory".to_owned(), memory.to_owned()),
            ])
        };
        let sfu = "sfu_loop n=67108864;intensity=1024;block=256";
        let strided = "strided n=16777216;stride=1;intensity=1;block=256";
        let [c, m] = power_fit(&named(sfu, strided), &phases.phases, "p.csv").expect("both are phases");
        assert_eq!(
            (phases.phases[c].family.as_str(), phases.phases[m].family.as_str()),
            ("sfu_loop", "strided")
        );
        let e = power_fit(&named(sfu, "strided n=1"), &phases.phases, "p.csv")
            .expect_err("no such phase")
            .to_string();
        assert!(
            e.starts_with(
                "`power_fit.memory` = \"strided n=1\" is no phase of p.csv (it has \"strided n=16777216;"
            ),
            "{e}"
        );
        let mut typo = named(sfu, strided);
        typo.insert("dram".into(), strided.into());
        let e = power_fit(&typo, &phases.phases, "p.csv")
            .expect_err("no limiter dram")
            .to_string();
        assert!(
            e.contains("`power_fit.dram`: expected the limiters compute and memory"),
            "{e}"
        );
    }
}
