//! Small SVG charts: measured points and predicted lines on linear or log axes, as the
//! thesis's Figures 6.2–6.7 draw them. Plain SVG text, so reports need no plotting stack.

use std::fmt::Write;

/// One series: points drawn as dots (measured) or joined by a line (predicted).
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    pub line: bool,
    /// Index into the palette; a measured series and its prediction share a colour.
    pub colour: usize,
}

pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub log_x: bool,
    pub log_y: bool,
    pub series: Vec<Series>,
}

const PALETTE: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2",
];
const WIDTH: f64 = 800.0;
const HEIGHT: f64 = 440.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 230.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 60.0;

/// An axis: maps data to pixels, linearly or by log10.
struct Axis {
    log: bool,
    lo: f64,
    hi: f64,
}

impl Axis {
    fn new(values: impl Iterator<Item = f64>, log: bool) -> Axis {
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
            hi = if hi > lo { hi * 1.05 } else { lo + 1.0 };
        }
        Axis { log, lo, hi }
    }

    /// 0 … 1 along the axis.
    fn fraction(&self, v: f64) -> f64 {
        let v = if self.log {
            v.max(f64::MIN_POSITIVE).log10()
        } else {
            v
        };
        (v - self.lo) / (self.hi - self.lo)
    }

    fn ticks(&self) -> Vec<f64> {
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

fn nice_step(raw: f64) -> f64 {
    let magnitude = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * magnitude)
}

fn label(v: f64) -> String {
    if v != 0.0 && (v.abs() >= 1e4 || v.abs() < 1e-2) {
        format!("{v:.0e}")
    } else {
        format!("{}", (v * 1000.0).round() / 1000.0)
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

impl Chart {
    /// The chart as a standalone SVG document.
    pub fn svg(&self) -> String {
        let points = || self.series.iter().flat_map(|s| s.points.iter());
        let x = Axis::new(points().map(|p| p.0), self.log_x);
        let y = Axis::new(points().map(|p| p.1), self.log_y);
        let (pw, ph) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
        let px = |v: f64| LEFT + x.fraction(v) * pw;
        let py = |v: f64| TOP + (1.0 - y.fraction(v)) * ph;
        let mut s = String::new();
        let _ = write!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" font-family="sans-serif" font-size="12"><rect width="100%" height="100%" fill="white"/><text x="{}" y="22" text-anchor="middle" font-size="14">{}</text>"#,
            WIDTH / 2.0,
            escape(&self.title)
        );
        for t in x.ticks() {
            let _ = write!(
                s,
                r##"<line x1="{0:.1}" x2="{0:.1}" y1="{1}" y2="{2}" stroke="#ddd"/><text x="{0:.1}" y="{3}" text-anchor="middle">{4}</text>"##,
                px(t),
                TOP,
                TOP + ph,
                TOP + ph + 16.0,
                label(t)
            );
        }
        for t in y.ticks() {
            let _ = write!(
                s,
                r##"<line x1="{0}" x2="{1}" y1="{2:.1}" y2="{2:.1}" stroke="#ddd"/><text x="{3}" y="{2:.1}" text-anchor="end" dominant-baseline="middle">{4}</text>"##,
                LEFT,
                LEFT + pw,
                py(t),
                LEFT - 6.0,
                label(t)
            );
        }
        let _ = write!(
            s,
            r##"<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="#333"/><text x="{}" y="{}" text-anchor="middle">{}</text><text transform="translate(18 {}) rotate(-90)" text-anchor="middle">{}</text>"##,
            LEFT + pw / 2.0,
            HEIGHT - 18.0,
            escape(&self.x_label),
            TOP + ph / 2.0,
            escape(&self.y_label)
        );
        for (i, series) in self.series.iter().enumerate() {
            let colour = PALETTE[series.colour % PALETTE.len()];
            let visible: Vec<(f64, f64)> = series
                .points
                .iter()
                .filter(|(a, b)| (!self.log_x || *a > 0.0) && (!self.log_y || *b > 0.0))
                .map(|&(a, b)| (px(a), py(b)))
                .collect();
            if series.line {
                let path: Vec<String> = visible.iter().map(|(a, b)| format!("{a:.1},{b:.1}")).collect();
                let _ = write!(
                    s,
                    r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="1.5"/>"#,
                    path.join(" ")
                );
            } else {
                for (a, b) in &visible {
                    let _ = write!(s, r#"<circle cx="{a:.1}" cy="{b:.1}" r="3" fill="{colour}"/>"#);
                }
            }
            let ly = TOP + 14.0 * i as f64 + 6.0;
            let lx = WIDTH - RIGHT + 12.0;
            if series.line {
                let _ = write!(
                    s,
                    r#"<line x1="{lx}" x2="{}" y1="{ly}" y2="{ly}" stroke="{colour}" stroke-width="1.5"/>"#,
                    lx + 16.0
                );
            } else {
                let _ = write!(
                    s,
                    r#"<circle cx="{}" cy="{ly}" r="3" fill="{colour}"/>"#,
                    lx + 8.0
                );
            }
            let _ = write!(
                s,
                r#"<text x="{}" y="{ly}" dominant-baseline="middle">{}</text>"#,
                lx + 22.0,
                escape(&series.label)
            );
        }
        s.push_str("</svg>\n");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_axes_place_decades_evenly_and_skip_non_positive_points() {
        let chart = Chart {
            title: "t < u".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            log_x: true,
            log_y: true,
            series: vec![Series {
                label: "s".into(),
                points: vec![(1.0, 10.0), (100.0, 1000.0), (0.0, 5.0)],
                line: false,
                colour: 0,
            }],
        };
        let svg = chart.svg();
        assert_eq!(
            svg.matches("<circle").count(),
            3,
            "two points and the legend's dot: {svg}"
        );
        assert!(svg.contains("t &lt; u"));
        let axis = Axis::new([1.0, 100.0].into_iter(), true);
        assert_eq!(axis.ticks(), vec![1.0, 10.0, 100.0]);
        assert!((axis.fraction(10.0) - 0.5).abs() < 1e-12);
    }
}
