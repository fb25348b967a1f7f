//! A folder of GPU measurements as `bench/gpu/run.sh` writes it and `examples/validation/data`
//! holds it (`props.csv`, `sweep.csv`, `occupancy_block256.csv`, `launch.csv`,
//! `transfers.csv`, `power.csv`, `saxpy2_sm90.sass`, `heldout_times.csv`, `heldout_sm90.sass`):
//! read into typed rows, every error
//! naming the file, line and column.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context, Result};

use crate::files::{csv_rows, number_field};

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

/// A power phase of `power.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct PowerPhase {
    pub phase: String,
    pub mean_watts: f64,
    pub max_watts: f64,
}

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
    /// Reads `dir`; `props.csv` is required, the rest optional.
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
        let power = optional(&dir.join("power.csv"), power_phases)?;
        let sass = sass_file(dir, "saxpy2")?;
        let heldout = optional(&dir.join("heldout_times.csv"), heldout_runs)?;
        let heldout_sass = sass_file(dir, "heldout_sm")?;
        Ok(Measurements {
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

/// power.csv's `kernel` column holds unquoted commas, so a row is read as its first field
/// (the phase) and its last three (samples are before them: mean, min and max watts).
fn power_phases(path: &Path) -> Result<Vec<PowerPhase>> {
    let origin = path.display().to_string();
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {origin}"))?;
    text.lines()
        .enumerate()
        .skip(1)
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let line = i as u64 + 1;
            let fields: Vec<&str> = l.split(',').map(str::trim).collect();
            if fields.len() < 6 {
                return Err(anyhow!(
                    "{origin}: line {line}: expected phase,kernel,samples,mean_watts,min_watts,max_watts"
                ));
            }
            let n = fields.len();
            Ok(PowerPhase {
                phase: fields[0].to_owned(),
                mean_watts: number_field(&origin, line, "mean_watts", fields[n - 3])?,
                max_watts: number_field(&origin, line, "max_watts", fields[n - 1])?,
            })
        })
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

/// The first (by name) `.sass` file of `dir` whose name starts with `prefix`.
fn sass_file(dir: &Path, prefix: &str) -> Result<Option<String>> {
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
    candidates
        .first()
        .map(|p| std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display())))
        .transpose()
}
