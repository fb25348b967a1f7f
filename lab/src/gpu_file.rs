//! A GPU's data file (models/data/*.toml): the numbers `hetsim calibrate gpu` fits or measures
//! for the `gpu-queueing` model, each with what it is (fitted, measured) and from what, which
//! the catalog reads instead of copies in Rust. `hetsim calibrate gpu DIR --data-file FILE`
//! writes it; five significant digits, so that a calibration run again on the same folder
//! writes the same text.

use hetsim_models::queueing::keys;

use crate::gpu::{attributes, GpuCalibration};

/// Where a number of the file comes from.
enum From {
    Text(&'static str),
    /// The launches the calibration fitted on ([`GpuCalibration::fitted_on`]).
    Fit,
    /// The folds of the error bars ([`GpuCalibration::bars_from`]).
    Bars,
    /// The phase the power figure comes from ([`GpuCalibration::power_from`]: idle, compute,
    /// memory).
    Power(usize),
}

/// The calibrated attributes, in the file's order: key, what it is, and from what.
const FIELDS: &[(&str, &str, From)] = &[
    (keys::MEMORY_QUEUE_CYCLES, "fitted", From::Fit),
    (keys::ISSUE_EFFICIENCY, "fitted", From::Fit),
    (keys::BLOCK_LAUNCH_RATE, "fitted", From::Fit),
    (keys::WARP_SKEW, "fitted", From::Fit),
    (
        keys::LAUNCH_OVERHEAD,
        "measured",
        From::Text("launch.csv: the intercept of back-to-back empty launches"),
    ),
    (keys::POWER_IDLE, "measured", From::Power(0)),
    (keys::POWER_COMPUTE, "fitted", From::Power(1)),
    (keys::POWER_MEMORY, "fitted", From::Power(2)),
    (keys::ERROR_COMPUTE, "fitted", From::Bars),
    (keys::ERROR_MEMORY, "fitted", From::Bars),
    (keys::ERROR_LATENCY, "fitted", From::Bars),
    (keys::ERROR_LAUNCH, "fitted", From::Bars),
    (keys::CALIBRATED_WARPS_MIN, "measured", From::Text(DOMAIN)),
    (keys::CALIBRATED_WARPS_MAX, "measured", From::Text(DOMAIN)),
    (
        keys::CALIBRATED_RESIDENT_WARPS_MIN,
        "measured",
        From::Text(DOMAIN),
    ),
    (
        keys::CALIBRATED_RESIDENT_WARPS_MAX,
        "measured",
        From::Text(DOMAIN),
    ),
];

const DOMAIN: &str = "the calibration launches' extent (warps launched, resident warps per SM)";

/// `text` as a TOML basic string, quotes included.
pub fn toml_string(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The data file of calibration `c` of the folder `folder`, for the catalog entry `gpu`.
pub fn data_file(c: &GpuCalibration, folder: &str, gpu: &str) -> String {
    let values = attributes(c);
    let mut out = format!(
        "# The gpu-queueing calibration of the catalog's \"{gpu}\", written by\n\
         # `hetsim calibrate gpu {folder} --name \"{gpu}\" --data-file FILE`\n\
         # (docs/MODELS.md, \"Calibration\"). models/src/catalog.rs reads it; a test runs the\n\
         # calibration again and compares. Each number says what it is and from what.\n\
         gpu = \"{gpu}\"\n\
         measurements = \"{folder}\"\n"
    );
    for (key, basis, from) in FIELDS {
        let Some((_, value)) = values.iter().find(|(k, _)| k == key) else {
            continue;
        };
        out.push_str(&format!(
            "\n[{key}]\nvalue = {}\nbasis = \"{basis}\"\nfrom = {}\n",
            significant(*value, 5),
            toml_string(match from {
                From::Text(text) => text,
                From::Fit => &c.fitted_on,
                From::Bars => &c.bars_from,
                From::Power(i) => &c.power_from[*i],
            })
        ));
    }
    out
}

/// `x` to `digits` significant digits (whole numbers whole), as TOML reads it back.
pub fn significant(x: f64, digits: i32) -> String {
    if x == 0.0 || !x.is_finite() || (x.fract() == 0.0 && x.abs() < 1e15) {
        return format!("{x:?}");
    }
    // Rounded through its decimal text, which the shortest round-trip formats then keep.
    let decimals = usize::try_from(digits - 1).unwrap_or(0);
    let rounded: f64 = format!("{x:.decimals$e}").parse().unwrap_or(x);
    if (1e-3..1e6).contains(&rounded.abs()) {
        format!("{rounded:?}")
    } else {
        format!("{rounded:e}")
    }
}

#[cfg(test)]
mod tests {
    use super::significant;

    #[test]
    fn a_text_with_quotes_and_backslashes_reads_back_as_a_toml_string() {
        let text = r#"C:\data "h100"\kit"#;
        let v: toml::Value = toml::from_str(&format!("x = {}", super::toml_string(text))).expect("TOML");
        assert_eq!(v["x"].as_str(), Some(text));
    }

    #[test]
    fn five_significant_digits_read_back_as_toml_numbers() {
        assert_eq!(significant(285.7035598, 5), "285.7");
        assert_eq!(significant(0.9602647264, 5), "0.96026");
        assert_eq!(significant(1.7459360324e9, 5), "1.7459e9");
        assert_eq!(significant(3.914125522e-6, 5), "3.9141e-6");
        assert_eq!(significant(2_097_152.0, 5), "2097152.0");
        assert_eq!(significant(64.0, 5), "64.0");
        for text in ["285.7", "1.7459e9", "3.9141e-6", "64.0"] {
            let v: toml::Value = toml::from_str(&format!("x = {text}")).expect("TOML");
            assert!(v["x"].as_float().is_some(), "{text}");
        }
    }
}
