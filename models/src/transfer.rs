//! Transfer time over a link: eq. 5.5 of seed 004 (section 5.4) for copies whose time is
//! linear in size (pinned host memory, device to device, networks), and a calibrated
//! bandwidth curve for copies that are not (pageable host memory).
//!
//! Why two models: the CUDA driver copies pinned (page-locked, `cudaMallocHost`) host memory
//! by DMA at a constant rate, so T = t_s + n / (bw × λ) holds from a few KiB up. Pageable
//! memory (plain `malloc`) is first staged through a pinned buffer by the CPU, and the
//! staging's speed depends on the size (caches, page faults, the host's memory system): on
//! the H100 host of hetsim's measurements the bandwidth of a pageable host-to-device copy
//! rises to ≈ 12 GB/s at 16 MiB and falls to ≈ 7 GB/s from 256 MiB on (hetsim GPU
//! measurements, H100 SXM 80GB, 2026-11-22: transfers.csv). No line fits that; a curve
//! measured once per host does.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::params::{
    require_fraction, require_non_negative, require_positive, ParamError, ParamReader, Params, Scalar,
};

/// Which host memory a host↔device copy reads or writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HostMemory {
    /// `malloc`'d memory, staged by the driver through a pinned buffer: what a program gets
    /// unless it asks for more, hence the default.
    #[default]
    Pageable,
    /// Page-locked memory (`cudaMallocHost`, `cudaHostAlloc`, `cudaHostRegister`), copied by
    /// DMA.
    Pinned,
}

impl HostMemory {
    pub const ALL: [HostMemory; 2] = [HostMemory::Pageable, HostMemory::Pinned];

    /// `pageable` or `pinned`: the value of a link model's `params.hostMemory`.
    pub fn name(self) -> &'static str {
        match self {
            HostMemory::Pageable => "pageable",
            HostMemory::Pinned => "pinned",
        }
    }

    /// Reads `pageable` or `pinned` (any case).
    pub fn parse(text: &str) -> Option<Self> {
        HostMemory::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(text))
    }
}

impl fmt::Display for HostMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One calibrated point of a [`BandwidthCurve`]: copies of `size` bytes stream at `bandwidth`
/// bytes/s once the startup is paid.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Knot {
    /// [bytes], > 0.
    pub size: f64,
    /// [bytes/s], > 0: size / (measured time − startup).
    pub bandwidth: f64,
}

/// The streaming bandwidth of a copy as a function of its size, through calibrated knots:
/// log B is piecewise linear in log₂ n between knots, and B is constant beyond the first and
/// the last knot.
///
/// Equivalently the streaming time S(n) = n / B(n) is a power law between neighbouring knots,
/// S(n) = S_i · (S_{i+1} / S_i)^f with f = log(n / n_i) / log(n_{i+1} / n_i). So S, and with it
/// the copy time, never decreases with size exactly when the knots' own streaming times
/// n_i / B_i do not decrease: [`BandwidthCurve::new`] requires that.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BandwidthCurve {
    knots: Vec<Knot>,
}

/// Why knots do not make a [`BandwidthCurve`]; indices count knots from 0.
#[derive(Clone, Debug, PartialEq)]
pub enum CurveError {
    Empty,
    /// An item of the text form is not `SIZE:BANDWIDTH` with two numbers.
    Syntax(String),
    /// A size or bandwidth is not a finite number > 0.
    NotPositive {
        index: usize,
    },
    /// Sizes must increase strictly.
    SizesNotIncreasing {
        index: usize,
    },
    /// Knot `index` streams in less time (size / bandwidth) than knot `index − 1`: the curve
    /// would make a larger copy faster.
    TimeDecreases {
        index: usize,
    },
}

impl fmt::Display for CurveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CurveError::Empty => write!(f, "no knots (expected SIZE:BANDWIDTH items)"),
            CurveError::Syntax(item) => {
                write!(
                    f,
                    "`{item}` is not SIZE:BANDWIDTH (bytes, bytes/s), e.g. 1048576:1.08e10"
                )
            }
            CurveError::NotPositive { index } => {
                write!(f, "knot {index}: size and bandwidth must be finite numbers > 0")
            }
            CurveError::SizesNotIncreasing { index } => {
                write!(f, "knot {index}: sizes must increase from knot to knot")
            }
            CurveError::TimeDecreases { index } => write!(
                f,
                "knot {index}: size / bandwidth is smaller than at knot {}: a larger copy would be faster",
                index - 1
            ),
        }
    }
}

impl std::error::Error for CurveError {}

impl BandwidthCurve {
    /// Checks the knots: at least one, sizes and bandwidths finite and > 0, sizes strictly
    /// increasing, streaming times size / bandwidth non-decreasing.
    pub fn new(knots: Vec<Knot>) -> Result<Self, CurveError> {
        if knots.is_empty() {
            return Err(CurveError::Empty);
        }
        for (index, k) in knots.iter().enumerate() {
            let ok = |x: f64| x.is_finite() && x > 0.0;
            if !ok(k.size) || !ok(k.bandwidth) {
                return Err(CurveError::NotPositive { index });
            }
            if index > 0 {
                let previous = knots[index - 1];
                if k.size <= previous.size {
                    return Err(CurveError::SizesNotIncreasing { index });
                }
                if k.size / k.bandwidth < previous.size / previous.bandwidth {
                    return Err(CurveError::TimeDecreases { index });
                }
            }
        }
        Ok(BandwidthCurve { knots })
    }

    pub fn knots(&self) -> &[Knot] {
        &self.knots
    }

    /// B(n) [bytes/s] for a copy of `size` bytes.
    pub fn bandwidth(&self, size: f64) -> f64 {
        let s = self.streaming_seconds(size);
        if s > 0.0 {
            size / s
        } else {
            self.knots[0].bandwidth
        }
    }

    /// S(n) = n / B(n) [s]: the copy's time without its startup.
    pub fn streaming_seconds(&self, size: f64) -> f64 {
        let knots = &self.knots;
        let (first, last) = (knots[0], knots[knots.len() - 1]);
        if size.is_nan() || size <= first.size {
            return size / first.bandwidth;
        }
        if size >= last.size {
            return size / last.bandwidth;
        }
        // knots[i - 1].size <= size < knots[i].size, with 1 <= i < len.
        let i = knots.partition_point(|k| k.size <= size);
        let (a, b) = (knots[i - 1], knots[i]);
        let (sa, sb) = (a.size / a.bandwidth, b.size / b.bandwidth);
        let f = (size / a.size).ln() / (b.size / a.size).ln();
        // The clamp keeps rounding from stepping outside the segment, so that S stays
        // non-decreasing across knots.
        (sa * (sb / sa).powf(f)).clamp(sa, sb)
    }
}

/// The text form of knots, as a link attribute stores it: `SIZE:BANDWIDTH` items (bytes,
/// bytes/s) separated by spaces or commas, e.g. `"1024:1.231e9 4096:2.808e9"`.
pub fn format_knots(knots: &[Knot]) -> String {
    knots
        .iter()
        .map(|k| format!("{}:{:e}", k.size, k.bandwidth))
        .collect::<Vec<_>>()
        .join(" ")
}

impl fmt::Display for BandwidthCurve {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_knots(&self.knots))
    }
}

impl FromStr for BandwidthCurve {
    type Err = CurveError;

    /// Reads the form of [`format_knots`].
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let knots = text
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|item| !item.is_empty())
            .map(|item| {
                let (size, bandwidth) = item
                    .split_once(':')
                    .ok_or_else(|| CurveError::Syntax(item.to_owned()))?;
                let number = |s: &str| {
                    s.trim()
                        .parse::<f64>()
                        .map_err(|_| CurveError::Syntax(item.to_owned()))
                };
                Ok(Knot {
                    size: number(size)?,
                    bandwidth: number(bandwidth)?,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        BandwidthCurve::new(knots)
    }
}

/// How fast the bytes of a copy move once it has started.
#[derive(Clone, Debug, PartialEq)]
pub enum Rate {
    /// Eq. 5.5: a constant `bandwidth` [bytes/s] × `lambda`.
    Linear { bandwidth: f64, lambda: f64 },
    /// A calibrated [`BandwidthCurve`] (pageable host memory).
    Curve(BandwidthCurve),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Input {
    /// `size` [bytes].
    pub size: f64,
    /// `startup` [s] (t_s), default 0.
    pub startup: f64,
    /// `bandwidth` [bytes/s] (the link's theoretical peak in one direction, thesis Table 4.3)
    /// and `lambda` (the fraction of it reached, default 1); or `pageable`, the knots of a
    /// bandwidth curve in the text form of [`format_knots`] (then neither `bandwidth` nor
    /// `lambda` may be given).
    pub rate: Rate,
}

impl Input {
    pub fn from_params(params: Params) -> Result<Self, ParamError> {
        let mut r = ParamReader::new(params);
        let size = r.non_negative("size")?;
        // Read in the order of eq. 5.5's keys (size, bandwidth, startup, lambda), so that errors
        // come in the order they always came.
        let (startup, rate) = match r.optional_text("pageable")? {
            None => {
                let bandwidth = r.positive("bandwidth")?;
                let startup = r.non_negative_or("startup", 0.0)?;
                let lambda = r.fraction_or("lambda", 1.0)?;
                (startup, Rate::Linear { bandwidth, lambda })
            }
            Some(text) => {
                let bandwidth = r.optional_positive("bandwidth")?;
                let startup = r.non_negative_or("startup", 0.0)?;
                let lambda = r.optional_positive("lambda")?;
                for (key, value) in [("bandwidth", bandwidth), ("lambda", lambda)] {
                    if let Some(x) = value {
                        return Err(ParamError::invalid(
                            key,
                            "no value: `pageable` gives the bandwidth",
                            x,
                        ));
                    }
                }
                let curve = text.parse().map_err(|e: CurveError| {
                    ParamError::invalid("pageable", "knots SIZE:BANDWIDTH ...", format!("{text:?} ({e})"))
                })?;
                (startup, Rate::Curve(curve))
            }
        };
        let input = Input { size, startup, rate };
        r.finish()?;
        Ok(input)
    }
}

/// Checks, where present, the attributes of a link component that the transfer models read,
/// so that a system with a bad link fails when it is loaded rather than at its first message:
/// `bandwidth` a finite number > 0; `lambda` and `lambda<Dir>` fractions in (0, 1] (the share
/// of the bandwidth reached, eq. 5.5); `startup…` (every per-direction and pageable startup)
/// and `latency` finite numbers ≥ 0 [s]; `errorPinned`, `errorPageable` finite numbers ≥ 0;
/// `pageable<Dir>` knots that make a [`BandwidthCurve`]. Other attributes belong to other
/// models and are left to them.
pub fn check_link_attributes(attributes: &Params) -> Result<(), ParamError> {
    for (key, value) in attributes {
        if key.starts_with("pageable") {
            let Scalar::Text(text) = value else {
                return Err(ParamError::invalid(key, "knots SIZE:BANDWIDTH ... (text)", value));
            };
            text.parse::<BandwidthCurve>().map_err(|e| {
                ParamError::invalid(key, "knots SIZE:BANDWIDTH ...", format!("{text:?} ({e})"))
            })?;
            continue;
        }
        let rule: fn(&str, f64) -> Result<f64, ParamError> = if key == "bandwidth" {
            require_positive
        } else if key.starts_with("lambda") {
            require_fraction
        } else if key.starts_with("startup")
            || matches!(key.as_str(), "latency" | "errorPinned" | "errorPageable")
        {
            require_non_negative
        } else {
            continue;
        };
        match value {
            Scalar::Number(x) if x.is_finite() => {
                rule(key, *x)?;
            }
            other => return Err(ParamError::invalid(key, "a finite number", other)),
        }
    }
    Ok(())
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Output {
    pub startup: f64,
    /// size / (bandwidth × λ), or size / B(size) on a curve [s].
    pub streaming_seconds: f64,
    /// Eq. 5.5, or startup + size / B(size) on a curve [s].
    pub seconds: f64,
    /// size / seconds [bytes/s].
    pub effective_bandwidth: f64,
}

/// Eq. 5.5: T = t_s + n / (bw × λ).
///
/// The model applies to every size, 0 included (T = t_s): that an empty copy costs nothing
/// (thesis Table 5.1) is a rule of the simulator's links, not of this equation.
pub fn seconds(size: f64, bandwidth: f64, startup: f64, lambda: f64) -> f64 {
    startup + size / (bandwidth * lambda)
}

/// A pageable copy: T = t_s + n / B(n), B the calibrated [`BandwidthCurve`] (hetsim's, not the
/// thesis's: eq. 5.5 with B in place of the constant bw × λ). At size 0, T = t_s.
pub fn curve_seconds(size: f64, curve: &BandwidthCurve, startup: f64) -> f64 {
    startup + curve.streaming_seconds(size)
}

pub fn evaluate(i: &Input) -> Output {
    let total = match &i.rate {
        Rate::Linear { bandwidth, lambda } => seconds(i.size, *bandwidth, i.startup, *lambda),
        Rate::Curve(curve) => curve_seconds(i.size, curve, i.startup),
    };
    Output {
        startup: i.startup,
        streaming_seconds: total - i.startup,
        seconds: total,
        effective_bandwidth: if total > 0.0 { i.size / total } else { 0.0 },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, Scalar)]) -> Params {
        pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
    }

    fn curve() -> BandwidthCurve {
        "1024:1e9 4096:2e9, 16384:2e9".parse().unwrap()
    }

    #[test]
    fn the_curve_passes_through_its_knots_and_is_flat_beyond_them() {
        let c = curve();
        for k in c.knots() {
            assert!((c.bandwidth(k.size) / k.bandwidth - 1.0).abs() < 1e-12);
        }
        assert_eq!(c.bandwidth(10.0), 1e9);
        assert_eq!(c.bandwidth(1e9), 2e9);
        // Halfway in log2(size) between 1 KiB and 4 KiB: the geometric mean of the bandwidths.
        assert!((c.bandwidth(2048.0) / 2f64.sqrt() / 1e9 - 1.0).abs() < 1e-12);
        assert_eq!(curve_seconds(0.0, &c, 5e-6), 5e-6);
    }

    #[test]
    fn bad_knots_are_refused_with_the_reason() {
        let err = |t: &str| t.parse::<BandwidthCurve>().unwrap_err();
        assert_eq!(err(""), CurveError::Empty);
        assert_eq!(err("1024"), CurveError::Syntax("1024".into()));
        assert_eq!(err("1024:0"), CurveError::NotPositive { index: 0 });
        assert_eq!(
            err("1024:1e9 1024:2e9"),
            CurveError::SizesNotIncreasing { index: 1 }
        );
        // 4096 B at 8e9 B/s streams in less time than 1024 B at 1e9 B/s.
        assert_eq!(err("1024:1e9 4096:8e9"), CurveError::TimeDecreases { index: 1 });
    }

    #[test]
    fn text_form_round_trips() {
        let c = curve();
        assert_eq!(c.to_string().parse::<BandwidthCurve>().unwrap(), c);
    }

    #[test]
    fn the_pageable_key_selects_the_curve_and_excludes_bandwidth() {
        let knots = Scalar::from("1024:1e9 4096:2e9");
        let i = Input::from_params(params(&[
            ("size", 4096.0.into()),
            ("startup", 1e-6.into()),
            ("pageable", knots.clone()),
        ]))
        .unwrap();
        let o = evaluate(&i);
        assert_eq!(o.seconds, 1e-6 + 4096.0 / 2e9);
        assert_eq!(o.streaming_seconds, o.seconds - 1e-6);
        let err = Input::from_params(params(&[
            ("size", 1.0.into()),
            ("bandwidth", 1e9.into()),
            ("pageable", knots),
        ]))
        .unwrap_err();
        assert_eq!(err.key(), "bandwidth");
        let err =
            Input::from_params(params(&[("size", 1.0.into()), ("pageable", "fast".into())])).unwrap_err();
        assert_eq!(err.key(), "pageable");
        assert!(err.to_string().contains("`fast` is not SIZE:BANDWIDTH"), "{err}");
        // Without `pageable`, eq. 5.5 as before.
        let i = Input::from_params(params(&[("size", 1.6e9.into()), ("bandwidth", 15.8e9.into())])).unwrap();
        assert_eq!(evaluate(&i).seconds, 1.6e9 / 15.8e9);
    }

    #[test]
    fn host_memory_names() {
        assert_eq!(HostMemory::default(), HostMemory::Pageable);
        assert_eq!(HostMemory::parse("Pinned"), Some(HostMemory::Pinned));
        assert_eq!(HostMemory::parse("locked"), None);
    }

    #[test]
    fn lambda_is_a_fraction_of_the_bandwidth() {
        let input = |lambda: f64| {
            Input::from_params(params(&[
                ("size", 1.0.into()),
                ("bandwidth", 1e9.into()),
                ("lambda", lambda.into()),
            ]))
        };
        assert!(input(1.0).is_ok());
        let err = input(1.5).unwrap_err();
        assert_eq!(
            err.to_string(),
            "key `lambda`: expected a fraction in (0, 1], got 1.5"
        );
    }
}
