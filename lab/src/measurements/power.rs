//! `power.csv`: the board power of the GPU at rest and under saxpy2's loaded phases, as
//! `bench/gpu/run.sh` measures it (nvidia-smi, 100 ms samples), and the launch each loaded
//! phase ran, read from the file's own `kernel` field.

use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};

use super::KernelRun;
use crate::files::number_field;

/// A power phase of `power.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct PowerPhase {
    pub phase: String,
    /// The saxpy2 launch a loaded phase ran back to back, as its `kernel` field says
    /// (`saxpy2 n=2^26 intensity=4096 block=256 back to back`); none for an idle phase.
    pub launch: Option<KernelRun>,
    pub mean_watts: f64,
    pub max_watts: f64,
}

/// The phases a `power.csv` must hold (by name prefix): the GPU at rest, saxpy2 compute-bound
/// and memory-bound, as `bench/gpu/run.sh` measures them.
pub const POWER_PHASES: [&str; 3] = ["idle", "compute", "memory"];

/// power.csv's `kernel` column holds unquoted commas, so a row is read as its first field
/// (the phase) and its last three (samples are before them: mean, min and max watts). Each
/// of [`POWER_PHASES`] must be there.
pub(super) fn power_phases(path: &Path) -> Result<Vec<PowerPhase>> {
    let phases = power_rows(path)?;
    if let Some(missing) = POWER_PHASES
        .iter()
        .find(|want| !phases.iter().any(|p| p.phase.starts_with(*want)))
    {
        bail!(
            "{}: no `{missing}` phase: expected a row for each of the phases {} (bench/gpu/run.sh measures them; the power fit and validate's power row read them)",
            path.display(),
            POWER_PHASES.join(", ")
        );
    }
    Ok(phases)
}

fn power_rows(path: &Path) -> Result<Vec<PowerPhase>> {
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
            let launch = if fields[0].starts_with("idle") {
                None
            } else {
                Some(power_launch(&origin, line, &fields[1..n - 4].join(","))?)
            };
            Ok(PowerPhase {
                phase: fields[0].to_owned(),
                launch,
                mean_watts: number_field(&origin, line, "mean_watts", fields[n - 3])?,
                max_watts: number_field(&origin, line, "max_watts", fields[n - 1])?,
            })
        })
        .collect()
}

/// The saxpy2 launch of a loaded power phase, from its `kernel` field: `saxpy2` and the
/// launch's `n`, `intensity` and `block` as `key=value` words, separated by spaces or commas
/// (a value may be `2^26`).
fn power_launch(origin: &str, line: u64, kernel: &str) -> Result<KernelRun> {
    let expected = || {
        anyhow!(
            "{origin}: line {line}: `kernel`: expected the saxpy2 launch the phase ran, as `saxpy2 n=2^26 intensity=4096 block=256 back to back`, got {kernel:?}"
        )
    };
    let words = || kernel.split(|c: char| c.is_whitespace() || c == ',');
    if words().next() != Some("saxpy2") {
        return Err(expected());
    }
    let value = |key: &str| -> Result<f64> {
        let text = words()
            .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
            .ok_or_else(expected)?;
        match text.split_once('^') {
            Some((base, power)) => {
                let (base, power) = (base.parse::<f64>(), power.parse::<i32>());
                Ok(base.map_err(|_| expected())?.powi(power.map_err(|_| expected())?))
            }
            None => number_field(origin, line, key, text),
        }
    };
    let (n, intensity, block) = (value("n")?, value("intensity")?, value("block")?);
    Ok(KernelRun {
        file: "power",
        line,
        n,
        intensity,
        block,
        grid: (n / block).ceil(),
        dynamic_shared: 0.0,
        seconds: 0.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loaded_phase_names_its_launch_and_a_wrong_one_is_refused_naming_its_line() {
        let run = power_launch(
            "power.csv",
            3,
            "saxpy2 n=2^26 intensity=4096 block=256, back to back",
        )
        .expect("the H100 folder's wording");
        assert_eq!(
            (run.n, run.intensity, run.block, run.grid),
            (67108864.0, 4096.0, 256.0, 262144.0)
        );
        let run = power_launch("power.csv", 4, "saxpy2 n=1000 intensity=1 block=128 back to back")
            .expect("the H200 folder's wording, plain numbers");
        assert_eq!(
            (run.n, run.intensity, run.block, run.grid),
            (1000.0, 1.0, 128.0, 8.0)
        );
        for wrong in [
            "sgemm n=2^26 intensity=1 block=256",
            "saxpy2 n=2^26 block=256",
            "saxpy2 n=2^x intensity=1 block=256",
        ] {
            let e = power_launch("power.csv", 3, wrong).expect_err(wrong).to_string();
            assert!(
                e.starts_with("power.csv: line 3: `kernel`: expected the saxpy2 launch"),
                "{e}"
            );
        }
    }
}
