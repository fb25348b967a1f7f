//! A folder of GPU measurements as `bench/gpu/run.sh` writes it and `examples/validation/data`
//! holds it (`props.csv`, `sweep.csv`, `occupancy_block256.csv`, `launch.csv`,
//! `transfers.csv`, `power.csv`, `saxpy2_sm90.sass`, `heldout_times.csv`, `heldout_sm90.sass`):
//! read into typed rows, every error
//! naming the file, line and column.
//!
//! # Missing files
//!
//! A file the folder *promises* and that is missing fails [`Measurements::read`], naming the
//! file and what promised it; a file nothing promises is *optional*: missing, it reads as
//! empty, [`Measurements::absent`] lists it, and the validation report says in a line which
//! check did not run for want of it (never a silent drop). What promises a file:
//!
//! - the folder itself: `props.csv` is always required;
//! - the folder's `README.md`, as `bench/gpu/run.sh` writes it: its `| file | rows |` table
//!   lists every file the run wrote;
//! - a companion written with it: `heldout_times.csv` and `heldout_sm<XY>.sass` come from one
//!   binary (the held-out kernels' times and the SASS they ran), so each promises the other;
//! - `power.csv` promises its `idle`, `compute` and `memory` phases (a row each);
//! - a benchmark set's descriptor (`benchset.toml`) promises the files it names
//!   ([`crate::benchset`] checks them).
//!
//! `heldout_times.csv`, which neither shipped folder holds, is therefore optional unless its
//! SASS or a README.md promises it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};

use crate::files::{csv_rows, number_field};

mod power;
use power::power_phases;
pub use power::{PowerPhase, POWER_PHASES};

/// One timed saxpy2 configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelRun {
    /// `sweep` or `occupancy`.
    pub file: &'static str,
    pub line: u64,
    pub n: f64,
    pub intensity: f64,
    pub block: f64,
    pub grid: f64,
    pub dynamic_shared: f64,
    /// The median of the CUDA-event times [s].
    pub seconds: f64,
}

impl KernelRun {
    /// `sweep line 12: a=1 block=256 smem=0`, how reports name the launch.
    pub fn label(&self) -> String {
        format!(
            "{} line {}: a={} block={} smem={}",
            self.file, self.line, self.intensity, self.block, self.dynamic_shared
        )
    }
}

/// One copy measurement (the mean of `reps` copies).
#[derive(Clone, Debug, PartialEq)]
pub struct TransferRun {
    pub line: u64,
    /// `HostToDevice` or `DeviceToHost`.
    pub direction: String,
    /// `pageable` or `pinned`.
    pub memory: String,
    pub bytes: f64,
    pub seconds: f64,
}

/// One held-out kernel launch of `heldout_times.csv` (bench/gpu/heldout.cu), its fields as
/// the kit writes them (`grid` and `block` as `XxYxZ`, `args` separated by `;`).
#[derive(Clone, Debug, PartialEq)]
pub struct HeldOutRun {
    pub line: u64,
    pub kernel: String,
    pub launch: String,
    pub args: String,
    pub grid: String,
    pub block: String,
    pub dynamic_shared: f64,
    /// The median of the CUDA-event times [s].
    pub seconds: f64,
}

/// The files [`Measurements::read`] reads when the folder has them, in the order it reads them
/// (see the module's "Missing files" for when one is required).
pub const OPTIONAL_FILES: [&str; 6] = [
    "sweep.csv",
    "occupancy_block256.csv",
    "launch.csv",
    "transfers.csv",
    "power.csv",
    "heldout_times.csv",
];

/// Everything a measurement folder holds; absent optional files give empty lists.
#[derive(Clone, Debug, PartialEq)]
pub struct Measurements {
    pub dir: PathBuf,
    pub props: BTreeMap<String, String>,
    pub sweep: Vec<KernelRun>,
    pub occupancy: Vec<KernelRun>,
    /// (grid, seconds per launch) of back-to-back (`async`) empty launches.
    pub launches: Vec<(f64, f64)>,
    pub transfers: Vec<TransferRun>,
    pub power: Vec<PowerPhase>,
    /// saxpy2's SASS as measured (`saxpy2_sm90.sass`, or another `saxpy2_*.sass`).
    pub sass: Option<String>,
    /// The held-out kernels' launches and the SASS they ran (`heldout_sm<XY>.sass`).
    pub heldout: Vec<HeldOutRun>,
    pub heldout_sass: Option<String>,
    /// The [`OPTIONAL_FILES`] the folder does not hold (nothing promised them).
    pub absent: Vec<&'static str>,
}

fn numbers(path: &Path, columns: &[&str]) -> Result<Vec<(u64, Vec<f64>)>> {
    let origin = path.display().to_string();
    csv_rows(path, columns)?
        .into_iter()
        .map(|(line, fields)| {
            let values = fields
                .iter()
                .zip(columns)
                .map(|(text, column)| number_field(&origin, line, column, text))
                .collect::<Result<Vec<f64>>>()?;
            Ok((line, values))
        })
        .collect()
}

fn kernel_runs(path: &Path, file: &'static str, with_shared: bool) -> Result<Vec<KernelRun>> {
    let mut columns = vec!["n", "intensity", "block", "grid", "median_seconds"];
    if with_shared {
        columns.push("dynamic_smem");
    }
    if file == "occupancy" {
        // occupancy_block256.csv has no grid column: the grid is ⌈n / block⌉.
        columns.retain(|c| *c != "grid");
    }
    numbers(path, &columns)?
        .into_iter()
        .map(|(line, v)| {
            let (n, intensity, block) = (v[0], v[1], v[2]);
            let (grid, seconds, shared) = if file == "occupancy" {
                ((n / block).ceil(), v[3], v[4])
            } else {
                (v[3], v[4], 0.0)
            };
            if seconds <= 0.0 || block < 1.0 || grid < 1.0 {
                return Err(anyhow!(
                    "{}: line {line}: expected block ≥ 1, grid ≥ 1 and median_seconds > 0",
                    path.display()
                ));
            }
            Ok(KernelRun {
                file,
                line,
                n,
                intensity,
                block,
                grid,
                dynamic_shared: shared,
                seconds,
            })
        })
        .collect()
}

fn optional<T>(path: &Path, read: impl FnOnce(&Path) -> Result<Vec<T>>) -> Result<Vec<T>> {
    if path.exists() {
        read(path)
    } else {
        Ok(Vec::new())
    }
}

impl Measurements {
    /// Reads `dir`: `props.csv` is required, each file the folder promises must be there
    /// (the module's "Missing files"), the others are optional and listed in `absent`.
    pub fn read(dir: &Path) -> Result<Measurements> {
        let props = csv_rows(&dir.join("props.csv"), &["key", "value"])
            .with_context(|| {
                format!(
                    "{}: not a measurement folder (bench/gpu/run.sh writes one)",
                    dir.display()
                )
            })?
            .into_iter()
            .map(|(_, f)| (f[0].clone(), f[1].clone()))
            .collect();
        let sweep = optional(&dir.join("sweep.csv"), |p| kernel_runs(p, "sweep", false))?;
        let occupancy = optional(&dir.join("occupancy_block256.csv"), |p| {
            kernel_runs(p, "occupancy", true)
        })?;
        let launches = optional(&dir.join("launch.csv"), |p| {
            let origin = p.display().to_string();
            csv_rows(p, &["grid", "mode", "seconds_per_launch"])?
                .into_iter()
                .filter(|(_, f)| f[1] == "async")
                .map(|(line, f)| {
                    Ok((
                        number_field(&origin, line, "grid", &f[0])?,
                        number_field(&origin, line, "seconds_per_launch", &f[2])?,
                    ))
                })
                .collect()
        })?;
        let transfers = optional(&dir.join("transfers.csv"), |p| {
            let origin = p.display().to_string();
            csv_rows(p, &["direction", "memory", "bytes", "mean_seconds"])?
                .into_iter()
                .map(|(line, f)| {
                    Ok(TransferRun {
                        line,
                        direction: f[0].clone(),
                        memory: f[1].clone(),
                        bytes: number_field(&origin, line, "bytes", &f[2])?,
                        seconds: number_field(&origin, line, "mean_seconds", &f[3])?,
                    })
                })
                .collect()
        })?;
        for (file, why) in promises(dir)? {
            if !dir.join(&file).exists() {
                bail!("{}: no {file}, which {why}", dir.display());
            }
        }
        let power = optional(&dir.join("power.csv"), power_phases)?;
        let sass = read_sass(sass_file(dir, "saxpy2")?)?;
        let heldout = optional(&dir.join("heldout_times.csv"), heldout_runs)?;
        let heldout_sass = read_sass(sass_file(dir, "heldout_sm")?)?;
        let absent = OPTIONAL_FILES
            .into_iter()
            .filter(|f| !dir.join(f).exists())
            .collect();
        Ok(Measurements {
            absent,
            heldout,
            heldout_sass,
            dir: dir.to_owned(),
            props,
            sweep,
            occupancy,
            launches,
            transfers,
            power,
            sass,
        })
    }

    /// Whether the folder lacks `file`, one of [`OPTIONAL_FILES`] (nothing promised it).
    pub fn lacks(&self, file: &str) -> bool {
        self.absent.contains(&file)
    }

    /// A property of `props.csv` as a number.
    pub fn prop(&self, key: &str) -> Result<f64> {
        let text = self
            .props
            .get(key)
            .ok_or_else(|| anyhow!("{}: no key `{key}`", self.dir.join("props.csv").display()))?;
        number_field(&self.dir.join("props.csv").display().to_string(), 0, key, text)
    }

    /// The kernel runs of both timing files.
    pub fn kernel_runs(&self) -> impl Iterator<Item = &KernelRun> {
        self.sweep.iter().chain(&self.occupancy)
    }

    /// The occupancy limits of the folder's GPU (props.csv's compute capability).
    pub fn occupancy_limits(&self) -> Result<&'static hetsim_models::occupancy::Limits> {
        let cc = self
            .props
            .get("compute_capability")
            .ok_or_else(|| anyhow!("{}: no compute_capability", self.dir.join("props.csv").display()))?;
        hetsim_models::occupancy::limits_of(cc)
            .ok_or_else(|| anyhow!("compute capability {cc} has no occupancy limits"))
    }

    /// The saxpy2 launch of the power phase whose name starts with `prefix`.
    pub fn power_launch(&self, prefix: &str) -> Option<&KernelRun> {
        self.power
            .iter()
            .find(|p| p.phase.starts_with(prefix))
            .and_then(|p| p.launch.as_ref())
    }

    /// The steady-state board power of a phase whose name starts with `prefix` [W]: its
    /// maximum, since nvidia-smi averages over a second and each phase starts with a ramp.
    pub fn steady_power(&self, prefix: &str) -> Option<f64> {
        self.power.iter().find(|p| p.phase.starts_with(prefix)).map(|p| {
            if prefix == "idle" {
                p.mean_watts
            } else {
                p.max_watts
            }
        })
    }
}

/// The files `dir` promises besides `props.csv`, each with what promises it, as an error
/// completes "no FILE, which …" (the module's "Missing files"; power.csv's phases are
/// checked as it is read).
fn promises(dir: &Path) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    let readme = dir.join("README.md");
    if readme.is_file() {
        let text =
            std::fs::read_to_string(&readme).with_context(|| format!("reading {}", readme.display()))?;
        out.extend(listed_files(&text).into_iter().map(|file| {
            (
                file,
                "README.md lists among the files bench/gpu/run.sh wrote".to_owned(),
            )
        }));
    }
    let companion =
        "bench/gpu/run.sh writes the two together (the held-out kernels' times and the SASS they ran)";
    match sass_file(dir, "heldout_sm")? {
        Some(sass) => {
            let name = sass
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            out.push((
                "heldout_times.csv".to_owned(),
                format!("{name} promises: {companion}"),
            ));
        }
        None if dir.join("heldout_times.csv").exists() => bail!(
            "{}: no heldout_sm<XY>.sass, which heldout_times.csv promises: {companion}",
            dir.display()
        ),
        None => {}
    }
    Ok(out)
}

/// The file names of the `| file | rows |` table of a README.md as `bench/gpu/run.sh` writes
/// it (none where it has no such table).
fn listed_files(readme: &str) -> Vec<String> {
    readme
        .lines()
        .skip_while(|l| l.replace(' ', "") != "|file|rows|")
        .skip(2)
        .take_while(|l| l.trim_start().starts_with('|'))
        .filter_map(|l| l.split('|').nth(1).map(str::trim))
        .filter(|f| !f.is_empty() && !f.contains('/'))
        .map(str::to_owned)
        .collect()
}

fn heldout_runs(path: &Path) -> Result<Vec<HeldOutRun>> {
    let origin = path.display().to_string();
    let columns = [
        "kernel",
        "launch",
        "args",
        "grid",
        "block",
        "dynamic_smem",
        "median_seconds",
    ];
    csv_rows(path, &columns)?
        .into_iter()
        .map(|(line, f)| {
            Ok(HeldOutRun {
                line,
                kernel: f[0].clone(),
                launch: f[1].clone(),
                args: f[2].clone(),
                grid: f[3].clone(),
                block: f[4].clone(),
                dynamic_shared: number_field(&origin, line, "dynamic_smem", &f[5])?,
                seconds: number_field(&origin, line, "median_seconds", &f[6])?,
            })
        })
        .collect()
}

/// The text of the SASS file at `path`, if any.
fn read_sass(path: Option<PathBuf>) -> Result<Option<String>> {
    path.map(|p| std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display())))
        .transpose()
}

/// The first (by name) `.sass` file of `dir` whose name starts with `prefix`.
fn sass_file(dir: &Path, prefix: &str) -> Result<Option<PathBuf>> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    let mut candidates: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix) && n.ends_with(".sass"))
        })
        .collect();
    candidates.sort();
    Ok(candidates.into_iter().next())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A copy of the shipped H100 folder's own files (not its sub-folders) in a fresh temp
    /// folder named after `test`.
    /// Reading `dir` fails (as `why` says it must) with an error holding `expected`.
    fn assert_read_fails(dir: &Path, why: &str, expected: &str) {
        let e = Measurements::read(dir).expect_err(why).to_string();
        assert!(e.contains(expected), "{e}");
    }

    fn h100_copy(test: &str) -> PathBuf {
        let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/validation/data/h100");
        let dir = std::env::temp_dir().join(format!("hetsim-{test}-{}", std::process::id()));
        std::fs::remove_dir_all(&dir).ok();
        std::fs::create_dir_all(&dir).expect("temp dir");
        for entry in std::fs::read_dir(&shipped).expect("the shipped folder") {
            let path = entry.expect("an entry").path();
            if let (true, Some(name)) = (path.is_file(), path.file_name()) {
                std::fs::copy(&path, dir.join(name)).expect("copies");
            }
        }
        dir
    }

    #[test]
    fn the_shipped_folders_read_and_list_what_they_lack() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/validation/data");
        let h100 = Measurements::read(&root.join("h100")).expect("reads");
        assert_eq!(h100.absent, ["heldout_times.csv"]);
        let h200 = Measurements::read(&root.join("h200")).expect("reads");
        assert_eq!(h200.absent, ["transfers.csv", "heldout_times.csv"]);
        assert!(h200.transfers.is_empty() && !h200.power.is_empty());
    }

    #[test]
    fn a_file_the_readme_lists_is_promised() {
        let dir = h100_copy("readme-promise");
        let readme = "# GPU measurements: H100\n\n| file | rows |\n|---|---|\n| props.csv | 40 |\n| transfers.csv | 120 |\n\nTook 900 s.\n";
        std::fs::write(dir.join("README.md"), readme).expect("writes");
        assert!(Measurements::read(&dir).is_ok(), "every listed file is there");
        std::fs::remove_file(dir.join("transfers.csv")).expect("removes");
        assert_read_fails(
            &dir,
            "transfers.csv is promised",
            "no transfers.csv, which README.md lists among the files bench/gpu/run.sh wrote",
        );
        // Without the README, nothing promises it: the read goes on and says it is absent.
        std::fs::remove_file(dir.join("README.md")).expect("removes");
        let m = Measurements::read(&dir).expect("optional");
        assert!(m.absent.contains(&"transfers.csv") && m.transfers.is_empty());
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn heldout_times_and_their_sass_promise_each_other() {
        let dir = h100_copy("heldout-promise");
        std::fs::write(dir.join("heldout_sm90.sass"), "").expect("writes");
        assert_read_fails(
            &dir,
            "the times are promised",
            "no heldout_times.csv, which heldout_sm90.sass promises",
        );
        std::fs::remove_file(dir.join("heldout_sm90.sass")).expect("removes");
        std::fs::write(
            dir.join("heldout_times.csv"),
            "kernel,launch,args,grid,block,dynamic_smem,median_seconds\n",
        )
        .expect("writes");
        assert_read_fails(
            &dir,
            "the SASS is promised",
            "no heldout_sm<XY>.sass, which heldout_times.csv promises",
        );
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn a_power_file_without_a_phase_names_it() {
        let dir = h100_copy("power-phase");
        let power = std::fs::read_to_string(dir.join("power.csv")).expect("reads");
        let without: Vec<&str> = power.lines().filter(|l| !l.starts_with("compute")).collect();
        std::fs::write(dir.join("power.csv"), without.join("\n")).expect("writes");
        let e = Measurements::read(&dir)
            .expect_err("no compute phase")
            .to_string();
        assert!(
            e.contains(
                "power.csv: no `compute` phase: expected a row for each of the phases idle, compute, memory"
            ),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
