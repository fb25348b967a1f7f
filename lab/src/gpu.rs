//! `hetsim calibrate gpu DIR`: a catalog entry for the `gpu-queueing` model from a measurement
//! folder (bench/gpu/run.sh's output, or examples/validation/data/h100).

use anyhow::{anyhow, bail, Result};
use hetsim_models::queueing::calibration::{
    calibrate, error_bars, fit_launch, leave_group_out, out_of_fold, Fit, Fold, Sample,
};
use hetsim_models::queueing::{evaluate, keys, Device, Input, Kernel, Power};
use serde::Serialize;

use crate::benchset::BenchSet;
use crate::benchset::PowerPhase;
use crate::measurements::Measurements;
use crate::saxpy2::{self, Saxpy2};
use crate::set_samples::{kernel as set_kernel, set_samples, SetApp};

/// The fitted device, the fit's quality and the power levels.
#[derive(Clone, Debug, Serialize)]
pub struct GpuCalibration {
    pub name: String,
    pub compute_capability: String,
    pub fit: Fit,
    pub launch_overhead: f64,
    pub power: Option<Power>,
    /// What the power's idle, compute and memory figures come from.
    pub power_from: [String; 3],
    /// The launches the four attributes were fitted on.
    pub fitted_on: String,
    /// What the error bars' folds held out.
    pub bars_from: String,
    #[serde(skip)]
    pub device: Device,
}

/// Every measured saxpy2 launch of the folder as a calibration sample (none where it has no
/// sweep.csv or occupancy_block256.csv).
pub fn samples(m: &Measurements) -> Result<Vec<(&'static str, Sample)>> {
    if m.kernel_runs().next().is_none() {
        return Ok(Vec::new());
    }
    let sass = m.sass.as_deref().ok_or_else(|| {
        anyhow!(
            "{}: no saxpy2_*.sass (cuobjdump -sass of the measured binary)",
            m.dir.display()
        )
    })?;
    let mut saxpy2 = Saxpy2::new(sass)?;
    m.kernel_runs()
        .map(|run| {
            Ok((
                run.file,
                Sample {
                    kernel: saxpy2.kernel(run)?,
                    seconds: run.seconds,
                },
            ))
        })
        .collect()
}

/// The cross-validation groups of the launches: each block size of sweep.csv, each shared
/// memory size (occupancy level) of occupancy_block256.csv.
pub fn groups(samples: &[(&'static str, Sample)]) -> Vec<String> {
    samples
        .iter()
        .map(|(file, s)| match *file {
            "sweep" => format!("sweep block {}", s.kernel.block_size),
            other => format!("{other} smem {}", s.kernel.shared_memory_per_block),
        })
        .collect()
}

/// The samples without the file each came from.
pub fn plain(samples: &[(&'static str, Sample)]) -> Vec<Sample> {
    samples.iter().map(|(_, s)| s.clone()).collect()
}

/// Leave-one-group-out calibrations of `base` over the launches, `groups[i]` the group of
/// `samples[i]`.
pub fn folds<'a>(base: &Device, samples: &[Sample], groups: &'a [String]) -> Vec<Fold<'a>> {
    let names: Vec<&str> = groups.iter().map(String::as_str).collect();
    leave_group_out(base, samples, &names)
}

/// The compute and memory utilisations of one launch.
fn utilisations(device: &Device, kernel: &Kernel) -> (f64, f64) {
    let out = evaluate(&Input {
        device: device.clone(),
        kernel: kernel.clone(),
    });
    (out.compute_utilisation, out.memory_utilisation)
}

/// What a power fit on power.csv takes each figure from.
const POWER_CSV_FROM: [&str; 3] = [
    "power.csv: the idle phase",
    "power.csv: the compute-bound saxpy2 phase, with its utilisations",
    "power.csv: the memory-bound saxpy2 phase, with its utilisations",
];

/// power.csv's loaded phases, each the saxpy2 launch its `kernel` field names run back to
/// back, the phase's name its limiter (`compute`, `memory`): solves
/// `idle + u_c·compute + u_m·memory = steady watts` for both, with the utilisations the
/// calibrated model gives those launches. None where the folder has no power.csv or no
/// saxpy2 SASS, or where the two phases load the GPU alike.
fn power(m: &Measurements, device: &Device) -> Result<Option<Power>> {
    let (Some(sass), Some(idle)) = (m.sass.as_deref(), m.steady_power("idle")) else {
        return Ok(None);
    };
    let mut saxpy2 = Saxpy2::new(sass)?;
    let mut phase = |limiter: &str| -> Result<Option<(f64, (f64, f64))>> {
        let (Some(watts), Some(launch)) = (m.steady_power(limiter), m.power_launch(limiter)) else {
            return Ok(None);
        };
        Ok(Some((watts, utilisations(device, &saxpy2.kernel(launch)?))))
    };
    let (Some(compute), Some(memory)) = (phase("compute")?, phase("memory")?) else {
        return Ok(None);
    };
    Ok(solve_power(idle, compute, memory))
}

/// The power fit of the first set among `sets` whose descriptor names its phases
/// (`power_fit`): its file's idle level, and its compute- and memory-loading phases, each the
/// launch the set's app makes, weighed by the calibrated model's utilisations. Also what it
/// was fitted on, for the data file.
fn set_power(sets: &[BenchSet], device: &Device) -> Result<Option<(Power, [String; 3])>> {
    let Some((set, phases, fit)) = sets
        .iter()
        .find_map(|set| set.power.as_ref().and_then(|p| Some((set, p, p.fit?))))
    else {
        return Ok(None);
    };
    let app = SetApp::load(set, "gpu-queueing", "its power phases are analysed through it")?;
    let [compute, memory] = fit.map(|i| &phases.phases[i]);
    let phase = |p: &PowerPhase| -> Result<(f64, (f64, f64))> {
        let kernel =
            set_kernel(&app, &p.variables).map_err(|e| anyhow!("{}: {}: {e}", set.path.display(), p.at))?;
        Ok((p.watts, utilisations(device, &kernel)))
    };
    let at = set.path.display();
    let from = [
        format!("{at}: the power file's idle phase"),
        format!(
            "{at}: `power_fit.compute`, {} ({} {}), with its utilisations",
            compute.at, compute.family, compute.params
        ),
        format!(
            "{at}: `power_fit.memory`, {} ({} {}), with its utilisations",
            memory.at, memory.family, memory.params
        ),
    ];
    Ok(solve_power(phases.idle, phase(compute)?, phase(memory)?).map(|p| (p, from)))
}

/// The compute and memory coefficients that give each phase its steady watts over `idle`,
/// from the phases' `(watts, (u_compute, u_memory))`; none where the two load the GPU alike.
fn solve_power(idle: f64, compute: (f64, (f64, f64)), memory: (f64, (f64, f64))) -> Option<Power> {
    let (watts_c, (ci, cm)) = compute;
    let (watts_m, (mi, mm)) = memory;
    let det = ci * mm - cm * mi;
    if det.abs() < 1e-9 {
        return None;
    }
    let (dc, dm) = (watts_c - idle, watts_m - idle);
    Some(Power {
        idle,
        compute: (dc * mm - cm * dm) / det,
        memory: (ci * dm - mi * dc) / det,
    })
}

/// The device of a measurement folder before the fit: props.csv's spec sheet, and the launch
/// overhead and block launch rate of launch.csv's back-to-back empty launches.
pub fn base_device(m: &Measurements) -> Result<Device> {
    let mut base = saxpy2::device(m)?;
    let (overhead, rate) = fit_launch(&m.launches).ok_or_else(|| {
        anyhow!(
            "{}: launch.csv: no async rows over several grids",
            m.dir.display()
        )
    })?;
    base.launch_overhead = overhead.max(0.0);
    base.block_launch_rate = rate;
    Ok(base)
}

/// What a calibration fits its four attributes on: saxpy2's launches of sweep.csv and
/// occupancy_block256.csv, where the folder has them, then those of `sets`.
fn fitted_on(m: &Measurements, sets: &[BenchSet]) -> String {
    let mut parts = Vec::new();
    if m.kernel_runs().next().is_some() {
        parts.push("sweep.csv and occupancy_block256.csv: every saxpy2 launch".to_owned());
    }
    parts.extend(sets.iter().map(|s| {
        let at = s.path.strip_prefix(&m.dir).unwrap_or(&s.path);
        format!("every launch of {} in its family's range", at.display())
    }));
    format!("{}, least squares on the relative error", parts.join(" and "))
}

/// What the error bars' residuals held out, fold by fold.
fn bars_from(m: &Measurements, sets: &[BenchSet]) -> String {
    let mut groups = Vec::new();
    if m.kernel_runs().next().is_some() {
        groups.extend(["a block size", "an occupancy level"]);
    }
    if !sets.is_empty() {
        groups.push("a kernel family");
    }
    format!(
        "the conformal 90 % quantile of this regime's residuals, each group of launches ({}) held out of the fit",
        groups.join(", ")
    )
}

/// Calibrates the `gpu-queueing` model on the folder `m`: on its saxpy2 launches and those of
/// the benchmark sets `sets` (none for the catalog's entries, so that every kernel family
/// stays a held-out prediction; a user's own kernel set where the model should fit it).
pub fn calibrate_folder(m: &Measurements, name: Option<String>, sets: &[BenchSet]) -> Result<GpuCalibration> {
    let base = base_device(m)?;
    let saxpy2 = samples(m)?;
    let mut launches = plain(&saxpy2);
    let mut groups = groups(&saxpy2);
    for set in sets {
        for s in set_samples(set)? {
            launches.push(s.sample);
            groups.push(s.family);
        }
    }
    if launches.is_empty() {
        bail!(
            "{}: no kernel timings (sweep.csv, occupancy_block256.csv, or a benchmark set's)",
            m.dir.display()
        );
    }
    let fit = calibrate(&base, &launches).ok_or_else(|| anyhow!("no samples"))?;
    let folds = folds(&base, &launches, &groups);
    let device = Device {
        error_bars: error_bars(&out_of_fold(&folds)),
        ..fit.apply(&base)
    };
    let (power, power_from) = match power(m, &device)? {
        Some(p) => (Some(p), POWER_CSV_FROM.map(str::to_owned)),
        None => match set_power(sets, &device)? {
            Some((p, from)) => (Some(p), from),
            None => (None, Default::default()),
        },
    };
    Ok(GpuCalibration {
        name: name
            .or_else(|| m.props.get("name").cloned())
            .unwrap_or_else(|| "calibrated GPU".to_owned()),
        compute_capability: device.limits.compute_capability.to_owned(),
        power,
        power_from,
        launch_overhead: device.launch_overhead,
        fitted_on: fitted_on(m, sets),
        bars_from: bars_from(m, sets),
        fit,
        device,
    })
}

/// The catalog attributes of a calibration, as `(key, value)` pairs.
pub fn attributes(c: &GpuCalibration) -> Vec<(&'static str, f64)> {
    let d = &c.device;
    let mut out = vec![
        ("SMs", d.sms),
        ("SMCoreClock", d.sm_clock_mhz),
        ("schedulers", d.schedulers),
        ("warpSize", d.warp_size),
        (keys::MEMORY_BANDWIDTH, d.memory_bandwidth),
        (keys::MEMORY_QUEUE_CYCLES, d.memory_queue_cycles),
        (keys::ISSUE_EFFICIENCY, d.issue_efficiency),
        (keys::BLOCK_LAUNCH_RATE, d.block_launch_rate),
        (keys::WARP_SKEW, d.warp_skew),
        (keys::LAUNCH_OVERHEAD, d.launch_overhead),
        ("fp32Lanes", d.lanes.fp32),
        ("intLanes", d.lanes.int),
        ("sfuLanes", d.lanes.sfu),
        ("fp64Lanes", d.lanes.fp64),
    ];
    if let Some(p) = &c.power {
        out.extend([
            (keys::POWER_IDLE, p.idle),
            (keys::POWER_COMPUTE, p.compute),
            (keys::POWER_MEMORY, p.memory),
        ]);
    }
    if let Some(bars) = &d.error_bars {
        out.extend(bars.attributes());
    }
    if let Some(h) = &d.hierarchy {
        out.extend(h.attributes());
    }
    out
}
