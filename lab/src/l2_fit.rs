//! An architecture's L2 bandwidth per SM and cycle (`L2BytesPerCyclePerSM` in
//! models/data/hopper.toml), fitted on a measurement folder's L2-resident saxpy2 launches:
//! between the two largest launches at intensity 1 whose three arrays (x read, y read and
//! written: 12 bytes a float) fit in L2, the extra bytes over the extra time, per SM and cycle.
//! Two launches that both stay in L2 differ only in the bytes L2 serves, so their difference
//! leaves out the launch overhead and the ramp that the smaller launches show.

use std::path::Path;

use anyhow::{anyhow, Result};

use crate::files::{csv_rows, display_name, number_field};
use crate::measurements::Measurements;

/// Bytes a saxpy2 float moves: x and y read, y written.
const BYTES_PER_FLOAT: f64 = 12.0;

/// The fit on `dir` (props.csv, and kit/kernels.csv's `saxpy2_l2` rows).
pub fn l2_bytes_per_cycle_per_sm(dir: &Path) -> Result<f64> {
    let m = Measurements::read(dir)?;
    let (sms, clock_hz, l2_bytes) = (
        m.prop("sms")?,
        m.prop("sm_clock_khz_max")? * 1e3,
        m.prop("l2_bytes")?,
    );
    let path = dir.join("kit").join("kernels.csv");
    let origin = display_name(&path);
    let mut resident: Vec<(f64, f64)> = Vec::new();
    for (line, row) in csv_rows(&path, &["kernel", "params", "median_seconds"])? {
        if row[0] != "saxpy2_l2" {
            continue;
        }
        let param = |name: &str| -> Result<f64> {
            let text = row[1]
                .split(';')
                .find_map(|kv| kv.strip_prefix(name).and_then(|v| v.strip_prefix('=')))
                .ok_or_else(|| anyhow!("{origin}: line {line}: params: expected `{name}=…`"))?;
            number_field(&origin, line, "params", text)
        };
        let bytes = BYTES_PER_FLOAT * param("n")?;
        if param("intensity")? == 1.0 && bytes <= l2_bytes {
            resident.push((bytes, number_field(&origin, line, "median_seconds", &row[2])?));
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

#[cfg(test)]
mod tests {
    use hetsim_models::hierarchy::{architecture_value, L2_BYTES_PER_CYCLE_PER_SM};

    #[test]
    fn the_shipped_hopper_l2_bandwidth_is_fitted_again_on_the_shipped_h100_data() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/validation/data/h100");
        let fit = super::l2_bytes_per_cycle_per_sm(&dir).expect("the kit fits");
        let shipped = architecture_value("9.0", L2_BYTES_PER_CYCLE_PER_SM).expect("Hopper's file");
        // By hand: 12 × 2^21 bytes more in 25.248 − 18.944 = 6.304 µs more, 3.99 TB/s over
        // 132 SMs × 1.98 GHz: 15.27 bytes a cycle per SM; the file keeps three digits.
        assert!((fit - 15.27).abs() < 0.01, "{fit}");
        assert_eq!(format!("{fit:.1}"), format!("{shipped:.1}"));
    }
}
