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
//!   was: those rows are then in-sample.
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
}

/// One kernel family of a set.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Family {
    /// The `[[kernel]]` of the systems that the family's launches run.
    pub kernel: String,
    /// What was fitted on the family's launches, if anything.
    pub fitted: Option<String>,
    /// The launches the family's target applies to, by parameter (`n = [1048576, 1e9]`,
    /// inclusive); the others are reported without a target, for the reason `outside` gives.
    #[serde(default)]
    pub range: BTreeMap<String, [f64; 2]>,
    pub outside: Option<String>,
}

impl Family {
    /// Whether the family's target applies to a launch with these variables.
    pub fn in_range(&self, variables: &[(String, Variable)]) -> bool {
        self.range.iter().all(|(key, [lo, hi])| {
            variables.iter().any(|(k, v)| {
                let x = match v {
                    Variable::Int(i) => *i as f64,
                    Variable::Float(x) => *x,
                    _ => return false,
                };
                k == key && (*lo..=*hi).contains(&x)
            })
        })
    }
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
        Ok(BenchSet {
            path: path.to_owned(),
            app,
            systems,
            families: d.families,
            targets: d.targets,
            launches,
        })
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

fn timed_launches(times: &Path, d: &Descriptor) -> Result<Vec<TimedLaunch>> {
    let origin = times.display().to_string();
    let name = times
        .file_name()
        .map_or(origin.clone(), |n| n.to_string_lossy().into_owned());
    csv_rows(times, &[&d.family, &d.params, &d.seconds])?
        .into_iter()
        .map(|(line, f)| {
            let at = format!("{name} line {line}");
            let family = d.families.get(&f[0]).ok_or_else(|| {
                let known: Vec<&str> = d.families.keys().map(String::as_str).collect();
                anyhow!(
                    "{origin}: line {line}: family `{}` is not in the descriptor's [families] ({})",
                    f[0],
                    known.join(", ")
                )
            })?;
            let mut variables = vec![("kernel".to_owned(), Variable::Text(family.kernel.clone()))];
            for pair in f[1].split(';').filter(|p| !p.trim().is_empty()) {
                let (key, value) = pair.split_once('=').ok_or_else(|| {
                    anyhow!(
                        "{origin}: line {line}: field `{}`: expected key=value, got {pair:?}",
                        d.params
                    )
                })?;
                let value = number_field(&origin, line, key.trim(), value.trim())?;
                let variable = if value.fract() == 0.0 && value.abs() < 9e15 {
                    Variable::Int(value as i64)
                } else {
                    Variable::Float(value)
                };
                variables.push((key.trim().to_owned(), variable));
            }
            Ok(TimedLaunch {
                at,
                family: f[0].clone(),
                params: f[1].clone(),
                variables,
                seconds: number_field(&origin, line, &d.seconds, &f[2])?,
            })
        })
        .collect()
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
}
