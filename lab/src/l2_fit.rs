//! An architecture's L2 bandwidth per SM and cycle (`L2BytesPerCyclePerSM` in
//! models/data/hopper.toml), fitted on the L2-resident saxpy2 launches of a measurement
//! folder's kit (its `kit/benchset.toml`, read as every benchmark set is):
//! between the two largest launches at intensity 1 whose three arrays (x read, y read and
//! written: 12 bytes a float) fit in L2, the extra bytes over the extra time, per SM and cycle.
//! Two launches that both stay in L2 differ only in the bytes L2 serves, so their difference
//! leaves out the launch overhead and the ramp that the smaller launches show.

use anyhow::{anyhow, Result};

use hetsim_models::hierarchy::L2_BYTES_PER_CYCLE_PER_SM;

use crate::benchset::{BenchSet, TimedLaunch, DESCRIPTOR};
use crate::gpu_file::significant;
use crate::measurements::Measurements;

/// Bytes a saxpy2 float moves: x and y read, y written.
const BYTES_PER_FLOAT: f64 = 12.0;

/// The kit's benchmark set within a measurement folder (`kit/benchset.toml`), whose
/// `saxpy2_l2` launches the fit takes.
pub fn kit_descriptor(m: &Measurements) -> std::path::PathBuf {
    m.dir.join("kit").join(DESCRIPTOR)
}

/// The fit on the measurement folder `m`: its props.csv, and its kit's `saxpy2_l2` launches.
pub fn l2_bytes_per_cycle_per_sm(m: &Measurements) -> Result<f64> {
    let (sms, clock_hz, l2_bytes) = (
        m.prop("sms")?,
        m.prop("sm_clock_khz_max")? * 1e3,
        m.prop("l2_bytes")?,
    );
    let kit = BenchSet::read(&kit_descriptor(m))?;
    let origin = kit.path.display().to_string();
    let mut resident: Vec<(f64, f64)> = Vec::new();
    for launch in kit.launches.iter().filter(|l| l.family == "saxpy2_l2") {
        let bytes = BYTES_PER_FLOAT * number(launch, "n")?;
        if number(launch, "intensity")? == 1.0 && bytes <= l2_bytes {
            resident.push((bytes, launch.seconds));
        }
    }
    resident.sort_by(|a, b| a.0.total_cmp(&b.0));
    let [.., (small_bytes, small_s), (large_bytes, large_s)] = resident[..] else {
        return Err(anyhow!(
            "{origin}: expected two saxpy2_l2 launches at intensity 1 whose 12 bytes a float fit in L2 ({l2_bytes} bytes)"
        ));
    };
    if large_s <= small_s {
        return Err(anyhow!(
            "{origin}: the larger L2-resident saxpy2_l2 launch is not slower than the smaller"
        ));
    }
    Ok((large_bytes - small_bytes) / (large_s - small_s) / (sms * clock_hz))
}

/// Digits the architecture file keeps of the fit: three, what a difference of two launches
/// supports (15.27 is written 15.3).
const DIGITS: i32 = 3;

/// `text`, an architecture data file (models/data/hopper.toml), with its
/// `L2BytesPerCyclePerSM` value replaced by `fit`: what `hetsim calibrate gpu
/// --architecture-file` writes; every other line as it was.
pub fn with_fitted_value(text: &str, fit: f64, origin: &str) -> Result<String> {
    let header = format!("[{L2_BYTES_PER_CYCLE_PER_SM}]");
    let mut in_table = false;
    let mut replaced = false;
    let lines: Vec<String> = text
        .lines()
        .map(|line| {
            if line.starts_with('[') {
                in_table = line.trim() == header;
            } else if in_table && !replaced && line.trim_start().starts_with("value") {
                replaced = true;
                return format!("value = {}", significant(fit, DIGITS));
            }
            line.to_owned()
        })
        .collect();
    if !replaced {
        return Err(anyhow!("{origin}: no `value` in a {header} table"));
    }
    Ok(lines.join("\n") + "\n")
}

/// The launch's numeric parameter `name`, or an error naming where the launch is.
fn number(launch: &TimedLaunch, name: &str) -> Result<f64> {
    launch
        .variables
        .iter()
        .find(|(k, _)| k == name)
        .and_then(|(_, v)| v.as_f64())
        .ok_or_else(|| anyhow!("{}: params: expected a number `{name}=…`", launch.at))
}

#[cfg(test)]
mod tests {
    use hetsim_models::hierarchy::{architecture_value, L2_BYTES_PER_CYCLE_PER_SM};

    #[test]
    fn the_shipped_hopper_l2_bandwidth_is_fitted_again_on_the_shipped_h100_data() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/validation/data/h100");
        let m = crate::measurements::Measurements::read(&dir).expect("the H100 folder");
        let fit = super::l2_bytes_per_cycle_per_sm(&m).expect("the kit fits");
        let shipped = architecture_value("9.0", L2_BYTES_PER_CYCLE_PER_SM).expect("Hopper's file");
        // By hand: 12 × 2^21 bytes more in 25.248 − 18.944 = 6.304 µs more, 3.99 TB/s over
        // 132 SMs × 1.98 GHz: 15.27 bytes a cycle per SM; the file keeps three digits.
        assert!((fit - 15.27).abs() < 0.01, "{fit}");
        assert_eq!(format!("{fit:.1}"), format!("{shipped:.1}"));
        // Written into the shipped file, the fit leaves it as it is, byte for byte.
        let path = dir.join("../../../../models/data/hopper.toml");
        let text = std::fs::read_to_string(&path).expect("models/data/hopper.toml");
        assert_eq!(
            super::with_fitted_value(&text, fit, "hopper.toml").expect("a value"),
            text
        );
        let moved = super::with_fitted_value(&text, 16.04, "hopper.toml").expect("a value");
        assert!(
            moved.contains("[L2BytesPerCyclePerSM]\nvalue = 16.0\n"),
            "{moved}"
        );
        assert_eq!(moved.lines().count(), text.lines().count());
    }
}
