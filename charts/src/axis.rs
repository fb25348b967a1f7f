//! Axes: mapping data to a 0–1 position, linearly or by log10, with "nice" ticks (1, 2, 5
//! × 10ⁿ) and their labels; and time axes whose ticks are in s, ms, µs or ns, chosen from
//! the span drawn.

/// An axis over `lo..hi` (in log10 units on a log axis).
pub struct Axis {
    log: bool,
    lo: f64,
    hi: f64,
}

impl Axis {
    /// An axis covering `values` (non-finite ones, and non-positive ones on a log axis, are
    /// left out): whole decades on a log axis; from 0, or the least value if negative, to
    /// 5 % above the largest on a linear one.
    pub fn new(values: impl Iterator<Item = f64>, log: bool) -> Axis {
        let (mut lo, mut hi) = values
            .filter(|v| v.is_finite() && (!log || *v > 0.0))
            .map(|v| if log { v.log10() } else { v })
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(v), b.max(v))
            });
        if !lo.is_finite() {
            (lo, hi) = (0.0, 1.0);
        }
        if log {
            (lo, hi) = (lo.floor(), hi.ceil().max(lo.floor() + 1.0));
        } else {
            lo = lo.min(0.0);
            hi = if hi > lo { hi + 0.05 * (hi - lo) } else { lo + 1.0 };
        }
        Axis { log, lo, hi }
    }

    /// A linear axis over exactly `lo..hi` (`hi > lo`, else `lo..lo + 1`).
    pub fn linear(lo: f64, hi: f64) -> Axis {
        let hi = if hi > lo { hi } else { lo + 1.0 };
        Axis { log: false, lo, hi }
    }

    /// 0 … 1 along the axis.
    pub fn fraction(&self, v: f64) -> f64 {
        let v = if self.log {
            v.max(f64::MIN_POSITIVE).log10()
        } else {
            v
        };
        (v - self.lo) / (self.hi - self.lo)
    }

    /// Every decade on a log axis; 1, 2 or 5 × 10ⁿ steps, about five of them, on a linear one.
    pub fn ticks(&self) -> Vec<f64> {
        if self.log {
            (self.lo as i32..=self.hi as i32).map(|e| 10f64.powi(e)).collect()
        } else {
            let step = nice_step((self.hi - self.lo) / 5.0);
            let first = (self.lo / step).ceil() as i64;
            let last = (self.hi / step).floor() as i64;
            (first..=last).map(|i| i as f64 * step).collect()
        }
    }
}

/// Whether values spanning `values` read better on a log axis: all positive and spanning at
/// least two decades.
pub fn spans_decades(values: impl Iterator<Item = f64>) -> bool {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    lo > 0.0 && hi / lo >= 100.0
}

/// The least of 1, 2, 5 × 10ⁿ not below `raw`.
fn nice_step(raw: f64) -> f64 {
    let magnitude = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * magnitude)
}

/// A tick label: plain up to three decimals, scientific for very large or small values
/// (to three significant digits, so that ticks 1e5 apart as 1.5e5 and 2e5 read apart).
pub fn label(v: f64) -> String {
    if v != 0.0 && (v.abs() >= 1e4 || v.abs() < 1e-2) {
        let rounded: f64 = format!("{v:.2e}").parse().unwrap_or(v);
        format!("{rounded:e}")
    } else {
        format!("{}", (v * 1000.0).round() / 1000.0)
    }
}

/// A unit of time: its symbol and how many of it make a second.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeUnit {
    pub symbol: &'static str,
    pub per_second: f64,
}

const TIME_UNITS: [TimeUnit; 4] = [
    TimeUnit {
        symbol: "s",
        per_second: 1.0,
    },
    TimeUnit {
        symbol: "ms",
        per_second: 1e3,
    },
    TimeUnit {
        symbol: "µs",
        per_second: 1e6,
    },
    TimeUnit {
        symbol: "ns",
        per_second: 1e9,
    },
];

impl TimeUnit {
    /// The largest unit in which `seconds` is at least 1 (ns for anything shorter).
    pub fn for_span(seconds: f64) -> TimeUnit {
        TIME_UNITS
            .into_iter()
            .find(|u| seconds.abs() * u.per_second >= 1.0)
            .unwrap_or(TIME_UNITS[3])
    }
}

/// `seconds` in the unit that suits it, to four significant digits or more: `146.655 ms`.
pub fn format_time(seconds: f64) -> String {
    if seconds == 0.0 {
        return "0 s".into();
    }
    let unit = TimeUnit::for_span(seconds);
    format!("{:.3} {}", seconds * unit.per_second, unit.symbol)
}

/// Ticks of a time axis from 0 to `span` seconds: (seconds, label in the unit chosen from
/// the span, e.g. `150 ms`), five to ten of them: a wide chart reads better with more.
pub fn time_ticks(span: f64) -> Vec<(f64, String)> {
    let span = if span > 0.0 && span.is_finite() { span } else { 1.0 };
    let unit = TimeUnit::for_span(span);
    let step = nice_step(span * unit.per_second / 8.0);
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    let last = (span * unit.per_second / step + 1e-9).floor() as i64;
    (0..=last)
        .map(|i| {
            let value = i as f64 * step;
            (
                value / unit.per_second,
                format!("{value:.decimals$} {}", unit.symbol),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_labels_tell_neighbouring_large_ticks_apart() {
        assert_eq!(label(150_000.0), "1.5e5");
        assert_eq!(label(200_000.000_000_03), "2e5");
        assert_eq!(label(1e6), "1e6");
        assert_eq!(label(2.5e-3), "2.5e-3");
        assert_eq!(label(12.5), "12.5");
    }

    #[test]
    fn log_axes_place_decades_evenly() {
        let axis = Axis::new([1.0, 100.0].into_iter(), true);
        assert_eq!(axis.ticks(), vec![1.0, 10.0, 100.0]);
        assert!((axis.fraction(10.0) - 0.5).abs() < 1e-12);
        assert!(spans_decades([1.0, 100.0].into_iter()));
        assert!(!spans_decades([1.0, 99.0].into_iter()));
        assert!(!spans_decades([0.0, 1000.0].into_iter()), "zero has no logarithm");
    }

    #[test]
    fn time_ticks_are_in_the_unit_of_the_span() {
        let labels = |span: f64| -> Vec<String> { time_ticks(span).into_iter().map(|t| t.1).collect() };
        assert_eq!(
            labels(0.5957),
            ["0 ms", "100 ms", "200 ms", "300 ms", "400 ms", "500 ms"]
        );
        assert_eq!(
            labels(2.5),
            ["0.0 s", "0.5 s", "1.0 s", "1.5 s", "2.0 s", "2.5 s"]
        );
        assert_eq!(labels(42e-6), ["0 µs", "10 µs", "20 µs", "30 µs", "40 µs"]);
        assert_eq!(
            labels(3e-9),
            ["0.0 ns", "0.5 ns", "1.0 ns", "1.5 ns", "2.0 ns", "2.5 ns", "3.0 ns"]
        );
        let (last, _) = *time_ticks(0.5957).last().expect("ticks");
        assert!((last - 0.5).abs() < 1e-12, "ticks carry seconds: {last}");
        assert_eq!(format_time(0.146655), "146.655 ms");
        assert_eq!(format_time(3.96868e-6), "3.969 µs");
    }
}
