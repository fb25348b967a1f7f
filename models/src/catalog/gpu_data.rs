//! The GPU data files the catalog compiles in (models/data/*.toml, read by [`crate::data_file`]): what
//! `hetsim calibrate gpu DIR --data-file FILE` fitted and measured, each number with what it
//! is and from what, so that no calibrated constant is copied into Rust by hand.

use std::sync::OnceLock;

use super::Queueing;
use crate::data_file;
use crate::queueing::{Domain, ErrorBars, DEFAULT_EXTRAPOLATION};

/// The H100 SXM5 80GB's data file: what `hetsim calibrate gpu examples/validation/data/h100`
/// fitted and measured (136 saxpy2 launches, launch.csv, power.csv; the error bars the
/// conformal 90 % quantiles of the cross-validated residuals per regime), each number with
/// what it is and from what. cli/tests/kernels.rs runs the calibration again and compares.
const H100_SXM5_FILE: &str = include_str!("../../data/h100-sxm5-80gb.toml");

/// The calibrated GPUs' data files by compute capability: where another data file (TEG's
/// teg/data/*.toml) needs a calibrated number of the architecture, it reads it from here, so
/// that the number has one home.
const CALIBRATED: [(&str, &str); 1] = [("9.0", H100_SXM5_FILE)];

/// The calibrated number `key` (`blockLaunchRate`, `kernelLaunchOverhead`, …) of the data file
/// of compute capability `compute_capability`, where one ships.
pub fn calibrated_value(compute_capability: &str, key: &str) -> Option<f64> {
    let (_, text) = CALIBRATED.iter().find(|(cc, _)| *cc == compute_capability)?;
    data_file::values(text).ok()?.get(key).copied()
}

/// The H100's calibration, from its data file, read once.
pub(super) fn h100_sxm5_measured() -> &'static Queueing {
    static H100: OnceLock<Queueing> = OnceLock::new();
    H100.get_or_init(read_h100)
}

fn read_h100() -> Queueing {
    use crate::queueing::keys;
    let numbers = data_file::values(H100_SXM5_FILE)
        .unwrap_or_else(|e| panic!("models/data/h100-sxm5-80gb.toml (the catalog's tests read it): {e}"));
    let get = |key: &str| -> f64 {
        numbers
            .get(key)
            .copied()
            .unwrap_or_else(|| panic!("models/data/h100-sxm5-80gb.toml has no [{key}]"))
    };
    Queueing {
        memory_queue_cycles: get(keys::MEMORY_QUEUE_CYCLES),
        issue_efficiency: get(keys::ISSUE_EFFICIENCY),
        block_launch_rate: get(keys::BLOCK_LAUNCH_RATE),
        warp_skew: get(keys::WARP_SKEW),
        launch_overhead: get(keys::LAUNCH_OVERHEAD),
        power_idle: get(keys::POWER_IDLE),
        power_compute: get(keys::POWER_COMPUTE),
        power_memory: get(keys::POWER_MEMORY),
        error_bars: ErrorBars {
            compute: get(keys::ERROR_COMPUTE),
            memory: get(keys::ERROR_MEMORY),
            latency: get(keys::ERROR_LATENCY),
            launch: get(keys::ERROR_LAUNCH),
            extrapolation: DEFAULT_EXTRAPOLATION,
            domain: Some(Domain {
                warps_launched: [get(keys::CALIBRATED_WARPS_MIN), get(keys::CALIBRATED_WARPS_MAX)],
                resident_warps: [
                    get(keys::CALIBRATED_RESIDENT_WARPS_MIN),
                    get(keys::CALIBRATED_RESIDENT_WARPS_MAX),
                ],
            }),
        },
        // The whitepaper's 50 MiB: a datasheet figure.
        l2_size: 52_428_800.0,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_shipped_h100_file_gives_every_calibrated_value() {
        let numbers = crate::data_file::values(super::H100_SXM5_FILE).expect("the shipped file reads");
        assert!(numbers.len() >= 16, "{numbers:?}");
        assert!(numbers.contains_key("memoryQueueCycles"));
    }
}
