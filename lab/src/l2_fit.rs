//! An architecture's L2 bandwidth per SM and cycle (`L2BytesPerCyclePerSM` in
//! models/data/hopper.toml), fitted on the launches a benchmark set's descriptor marks as
//! L2-resident (a family's `l2_resident`; the shipped H100 kit marks saxpy2_l2's at intensity
//! 1 whose arrays fit in its 50 MiB L2): between the two that move the most bytes through
//! L2, the extra bytes over the extra time, per SM and cycle. Two launches that both stay in
//! L2 differ only in the bytes L2 serves, so their difference leaves out the launch overhead
//! and the ramp that the smaller launches show. Each launch's bytes are what the set's own
//! application's `kernel_params()` finds in its SASS (`L2BytesTransferred` a warp, times its
//! warps), so no kernel's byte count is written here.

use anyhow::{anyhow, bail, Result};

use hetsim_models::hierarchy::L2_BYTES_PER_CYCLE_PER_SM;
use hetsim_models::queueing::traffic_keys;
use rhai::Map;

use crate::benchset::{marked_family, BenchSet};
use crate::gpu_file::significant;
use crate::measurements::Measurements;
use crate::set_samples::SetApp;
use crate::toml_lines::{with_values, Assignment};

/// The fitted figure and what it was fitted on.
#[derive(Clone, Debug)]
pub struct L2Fit {
    pub bytes_per_cycle_per_sm: f64,
    /// `…/kit/benchset.toml: saxpy2_l2, n=2097152;… (kernels.csv line 43) and n=4194304;…
    /// (kernels.csv line 45)`.
    pub fitted_on: String,
    /// The architecture file's `from` for the fit, after the measurement folder's path.
    source: String,
}

impl L2Fit {
    /// The architecture file's `from` for the fit on the measurement folder `folder` (as its
    /// user names it).
    pub fn from_text(&self, folder: &str) -> String {
        format!("{folder}/{}", self.source)
    }
}

/// The fit on the measurement folder `m` (its props.csv: SMs and clock) and the L2-resident
/// launches of `sets`; none where no family is marked.
pub fn l2_bytes_per_cycle_per_sm(m: &Measurements, sets: &[BenchSet]) -> Result<Option<L2Fit>> {
    let Some((set, family)) = marked_family(
        sets,
        "l2_resident",
        |f| !f.l2_resident.is_empty(),
        "the L2 figure",
    )?
    else {
        return Ok(None);
    };
    let (sms, clock_hz) = (m.prop("sms")?, m.prop("sm_clock_khz_max")? * 1e3);
    let origin = set.path.display().to_string();
    let app = SetApp::load(
        set,
        "gpu-queueing",
        "its L2-resident launches are analysed through it",
    )?;
    let marked = &set.families[family];
    let mut resident: Vec<(f64, f64, String)> = Vec::new();
    for launch in set
        .launches
        .iter()
        .filter(|l| l.family == family && marked.l2_resident(&l.variables))
    {
        let (_, params) = app
            .kernel_params(&launch.variables)
            .map_err(|e| anyhow!("{origin}: {}: {e}", launch.at))?;
        let bytes = l2_bytes(&params).ok_or_else(|| {
            anyhow!(
                "{origin}: {}: kernel_params() gave no L2 traffic for the launch",
                launch.at
            )
        })?;
        resident.push((
            bytes,
            launch.seconds,
            format!("{} ({})", launch.params, launch.at),
        ));
    }
    resident.sort_by(|a, b| a.0.total_cmp(&b.0));
    let [.., (small_bytes, small_s, ref small_at), (large_bytes, large_s, ref large_at)] = resident[..]
    else {
        bail!(
            "{origin}: [families.{family}]: expected two launches within `l2_resident`, found {}",
            resident.len()
        );
    };
    if large_s <= small_s || large_bytes <= small_bytes {
        bail!("{origin}: [families.{family}]: the L2-resident launch that moves more bytes ({large_at}) is not slower than the other ({small_at})");
    }
    let set_file = set.path.strip_prefix(&m.dir).unwrap_or(&set.path).display();
    Ok(Some(L2Fit {
        bytes_per_cycle_per_sm: (large_bytes - small_bytes) / (large_s - small_s) / (sms * clock_hz),
        fitted_on: format!("{}: {family}, {small_at} and {large_at}", origin),
        source: format!(
            "{set_file}: {family}, {small_at} and {large_at}, the two launches of its `l2_resident` range that move the most bytes through L2: the extra bytes over the extra time, per SM and cycle (props.csv: {sms} SMs at {} MHz)",
            clock_hz / 1e6
        ),
    }))
}

/// The bytes a launch moves through L2: its warps' `L2BytesTransferred` each.
fn l2_bytes(params: &Map) -> Option<f64> {
    let int = |key: &str| params.get(key)?.as_int().ok();
    let per_warp = params.get(traffic_keys::L2_BYTES)?.as_float().ok()?;
    let warps = int("gridSize")? * ((int("blockSize")? + 31) / 32);
    Some(per_warp * warps as f64)
}

/// Digits the architecture file keeps of the fit: three, what a difference of two launches
/// supports (15.27 is written 15.3).
const DIGITS: i32 = 3;

/// `text`, an architecture data file (models/data/hopper.toml), with its
/// `L2BytesPerCyclePerSM` value and `from` replaced by `fit`'s, fitted on the measurement
/// folder `folder`: what `hetsim calibrate gpu --architecture-file` writes; every other line
/// as it was.
pub fn with_fitted_value(text: &str, fit: &L2Fit, folder: &str, origin: &str) -> Result<String> {
    let from = fit.from_text(folder).replace('\\', "\\\\").replace('"', "\\\"");
    let at = |key, value| Assignment {
        table: L2_BYTES_PER_CYCLE_PER_SM,
        key,
        value,
    };
    let wanted = [
        at("value", significant(fit.bytes_per_cycle_per_sm, DIGITS)),
        at("from", format!("\"{from}\"")),
    ];
    with_values(text, &wanted, origin)
}

#[cfg(test)]
mod tests {
    use hetsim_models::hierarchy::{architecture_value, L2_BYTES_PER_CYCLE_PER_SM};

    #[test]
    fn the_shipped_hopper_l2_bandwidth_is_fitted_again_on_the_shipped_h100_data() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/validation/data/h100");
        let m = crate::measurements::Measurements::read(&dir).expect("the H100 folder");
        let sets = crate::benchset::BenchSet::in_folder(&dir).expect("its sets");
        let fit = super::l2_bytes_per_cycle_per_sm(&m, &sets)
            .expect("the kit fits")
            .expect("the kit marks saxpy2_l2");
        assert_eq!(
            fit.fitted_on.rsplit_once(": ").map(|(_, on)| on),
            Some("saxpy2_l2, n=2097152;intensity=1;block=256 (kernels.csv line 43) and n=4194304;intensity=1;block=256 (kernels.csv line 45)")
        );
        let value = fit.bytes_per_cycle_per_sm;
        let shipped = architecture_value("9.0", L2_BYTES_PER_CYCLE_PER_SM).expect("Hopper's file");
        // By hand: 12 × 2^21 bytes more in 25.248 − 18.944 = 6.304 µs more, 3.99 TB/s over
        // 132 SMs × 1.98 GHz: 15.27 bytes a cycle per SM; the file keeps three digits.
        assert!((value - 15.27).abs() < 0.01, "{value}");
        assert_eq!(format!("{value:.1}"), format!("{shipped:.1}"));
        // Written into the shipped file, the fit leaves it as it is, byte for byte: its value
        // and what it says it was fitted on.
        let path = dir.join("../../../../models/data/hopper.toml");
        let text = std::fs::read_to_string(&path).expect("models/data/hopper.toml");
        let folder = "examples/validation/data/h100";
        assert_eq!(
            super::with_fitted_value(&text, &fit, folder, "hopper.toml").expect("a value"),
            text
        );
        let moved = super::L2Fit {
            bytes_per_cycle_per_sm: 16.04,
            ..fit.clone()
        };
        let moved = super::with_fitted_value(&text, &moved, "elsewhere", "hopper.toml").expect("a value");
        assert!(
            moved.contains("[L2BytesPerCyclePerSM]\nvalue = 16.0\n"),
            "{moved}"
        );
        assert!(
            moved.contains("from = \"elsewhere/kit/benchset.toml: saxpy2_l2, n=2097152;intensity=1;block=256 (kernels.csv line 43) and"),
            "{moved}"
        );
        assert_eq!(moved.lines().count(), text.lines().count());
    }

    #[test]
    fn one_family_is_marked_at_most_and_none_fits_nothing() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/validation/data/h100");
        let m = crate::measurements::Measurements::read(&dir).expect("the H100 folder");
        let mut sets = crate::benchset::BenchSet::in_folder(&dir).expect("its sets");
        let kit = sets
            .iter()
            .position(|s| s.path.ends_with("kit/benchset.toml"))
            .expect("the kit");
        let mut twice = sets.clone();
        let strided = twice[kit].families.get_mut("strided").expect("strided");
        strided.l2_resident.insert("n".into(), [1.0, 1e6]);
        let e = super::l2_bytes_per_cycle_per_sm(&m, &twice)
            .expect_err("two marked")
            .to_string();
        assert!(
            e.contains("[families.saxpy2_l2]") && e.contains("[families.strided]"),
            "{e}"
        );
        sets[kit]
            .families
            .get_mut("saxpy2_l2")
            .expect("saxpy2_l2")
            .l2_resident
            .clear();
        assert!(super::l2_bytes_per_cycle_per_sm(&m, &sets)
            .expect("no error")
            .is_none());
    }
}
