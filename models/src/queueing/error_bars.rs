//! The error bar of a kernel prediction: the conformal half-width of the calibration residuals
//! of the regime the kernel falls in (crate::uncertainty), widened by `errorExtrapolation`
//! when the kernel lies outside the calibrated domain.
//!
//! The domain is the range of warps launched that the calibration measured, with a factor of
//! two of margin each way (`calibratedWarpsMin / 2` to `2 · calibratedWarpsMax`), and the
//! range of resident warps per SM it measured (`calibratedResidentWarpsMin` to `…Max`): the
//! block sizes and intensities of the thesis's sweep cover the whole range a saxpy-like
//! kernel can take, the data size does not, and an occupancy below the lowest measured one
//! is deeper in the latency-bound regime than any calibration point. A device without a
//! domain (no measurements of its own, such as the H200 entry, whose calibration is the
//! H100's) extrapolates everywhere.

use serde::Serialize;

use super::{keys, Regime};
use crate::params::{ParamError, ParamReader};
use crate::uncertainty::{conformal_half_width, COVERAGE};

/// Relative half-widths at [`COVERAGE`] per regime, and where they hold.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ErrorBars {
    pub compute: f64,
    pub memory: f64,
    pub latency: f64,
    pub launch: f64,
    /// The factor that widens a bar outside the domain.
    pub extrapolation: f64,
    pub domain: Option<Domain>,
}

/// Where the calibration measured.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Domain {
    /// Warps launched, fewest and most.
    pub warps_launched: [f64; 2],
    /// Resident warps per SM, fewest and most.
    pub resident_warps: [f64; 2],
}

impl Domain {
    fn holds(&self, warps_launched: f64, resident_warps: f64) -> bool {
        let [low, high] = self.warps_launched;
        let [fewest, most] = self.resident_warps;
        low / DOMAIN_MARGIN <= warps_launched
            && warps_launched <= high * DOMAIN_MARGIN
            && fewest <= resident_warps
            && resident_warps <= most
    }

    fn of(points: impl Iterator<Item = (f64, f64)> + Clone) -> Domain {
        let range = |values: &mut dyn Iterator<Item = f64>| {
            values.fold([f64::INFINITY, 0.0], |[lo, hi], x| [lo.min(x), hi.max(x)])
        };
        Domain {
            warps_launched: range(&mut points.clone().map(|p| p.0)),
            resident_warps: range(&mut points.map(|p| p.1)),
        }
    }
}

/// A calibration launch's residual: its regime, warps launched, resident warps per SM and
/// relative residual.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scored {
    pub regime: Regime,
    pub warps_launched: f64,
    pub resident_warps: f64,
    pub residual: f64,
}

/// What a fresh calibration uses for `errorExtrapolation`: the cross-validation by block size
/// of docs/VALIDATION.md finds held-out errors up to about twice the in-sample ones.
pub const DEFAULT_EXTRAPOLATION: f64 = 2.0;

/// How far beyond the calibrated range of warps launched a kernel still counts as inside.
const DOMAIN_MARGIN: f64 = 2.0;

/// The error bar of one prediction.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ErrorBar {
    /// Relative half-width at [`COVERAGE`].
    pub relative: f64,
    pub extrapolated: bool,
}

impl ErrorBars {
    pub fn of(&self, regime: Regime) -> f64 {
        match regime {
            Regime::Compute => self.compute,
            Regime::Memory => self.memory,
            Regime::Latency => self.latency,
            Regime::Launch => self.launch,
        }
    }

    /// The bar of a prediction in `regime` for a launch of `warps_launched` warps with
    /// `resident_warps` warps per SM.
    pub fn bar(&self, regime: Regime, warps_launched: f64, resident_warps: f64) -> ErrorBar {
        let inside = self
            .domain
            .is_some_and(|d| d.holds(warps_launched, resident_warps));
        let widen = if inside { 1.0 } else { self.extrapolation };
        ErrorBar {
            relative: self.of(regime) * widen,
            extrapolated: !inside,
        }
    }

    /// From the residuals of calibration launches. A regime with too few residuals for a
    /// conformal quantile takes that of all of them. `None` with fewer than 9 residuals.
    pub fn from_residuals(residuals: &[Scored]) -> Option<ErrorBars> {
        let all: Vec<f64> = residuals.iter().map(|s| s.residual).collect();
        let pooled = conformal_half_width(&all, COVERAGE)?;
        let width = |regime: Regime| {
            let own: Vec<f64> = residuals
                .iter()
                .filter(|s| s.regime == regime)
                .map(|s| s.residual)
                .collect();
            conformal_half_width(&own, COVERAGE).unwrap_or(pooled)
        };
        Some(ErrorBars {
            compute: width(Regime::Compute),
            memory: width(Regime::Memory),
            latency: width(Regime::Latency),
            launch: width(Regime::Launch),
            extrapolation: DEFAULT_EXTRAPOLATION,
            domain: Some(Domain::of(
                residuals.iter().map(|s| (s.warps_launched, s.resident_warps)),
            )),
        })
    }

    /// The catalog attributes of these bars.
    pub fn attributes(&self) -> Vec<(&'static str, f64)> {
        let mut out = vec![
            (keys::ERROR_COMPUTE, self.compute),
            (keys::ERROR_MEMORY, self.memory),
            (keys::ERROR_LATENCY, self.latency),
            (keys::ERROR_LAUNCH, self.launch),
            (keys::ERROR_EXTRAPOLATION, self.extrapolation),
        ];
        if let Some(d) = self.domain {
            out.extend([
                (keys::CALIBRATED_WARPS_MIN, d.warps_launched[0]),
                (keys::CALIBRATED_WARPS_MAX, d.warps_launched[1]),
                (keys::CALIBRATED_RESIDENT_WARPS_MIN, d.resident_warps[0]),
                (keys::CALIBRATED_RESIDENT_WARPS_MAX, d.resident_warps[1]),
            ]);
        }
        out
    }

    /// Reads the bars where the device has `errorCompute`; then the other three regimes'
    /// widths are required, `errorExtrapolation` defaults to 2 and the domain is optional
    /// (all four of its keys, or none).
    pub(super) fn read(r: &mut ParamReader) -> Result<Option<ErrorBars>, ParamError> {
        let Some(compute) = r.optional_non_negative(keys::ERROR_COMPUTE)? else {
            return Ok(None);
        };
        let bars = ErrorBars {
            compute,
            memory: r.non_negative(keys::ERROR_MEMORY)?,
            latency: r.non_negative(keys::ERROR_LATENCY)?,
            launch: r.non_negative(keys::ERROR_LAUNCH)?,
            extrapolation: r.positive_or(keys::ERROR_EXTRAPOLATION, DEFAULT_EXTRAPOLATION)?,
            domain: match r.optional_positive(keys::CALIBRATED_WARPS_MIN)? {
                Some(low) => Some(Domain {
                    warps_launched: [low, r.positive(keys::CALIBRATED_WARPS_MAX)?],
                    resident_warps: [
                        r.positive(keys::CALIBRATED_RESIDENT_WARPS_MIN)?,
                        r.positive(keys::CALIBRATED_RESIDENT_WARPS_MAX)?,
                    ],
                }),
                None => None,
            },
        };
        Ok(Some(bars))
    }
}
