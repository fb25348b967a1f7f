//! x–y charts: measured points and predicted lines on linear or log axes, as the thesis's
//! Figures 6.2–6.7 draw them, and sweep plots (one line per value of a second variable).

use std::fmt::Write;

use super::axis::{label, spans_decades, Axis};
use super::{escape, fit, open_svg, FONT_SIZE, PALETTE};

/// One series: points drawn as dots (measured) or joined by a line (predicted).
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    pub line: bool,
    /// Index into the palette; a measured series and its prediction share a colour.
    pub colour: usize,
}

/// A chart of series on two axes, with a legend on the right.
pub struct Chart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub log_x: bool,
    pub log_y: bool,
    /// A marker on every point of a line (sweep plots: where a line bends is where a run
    /// is); figures of measured dots against predicted lines leave the lines plain.
    pub markers: bool,
    pub series: Vec<Series>,
}

const WIDTH: f64 = 800.0;
const HEIGHT: f64 = 440.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 230.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 60.0;

impl Chart {
    /// A sweep plot: `y` against `x`, one line per value of a second variable named
    /// `group_name` (legend `group_name = value`, in increasing order of the values), each
    /// line's points in increasing `x`. An axis is logarithmic where its values are all
    /// positive and span two decades or more, as sweeps over sizes usually do.
    pub fn sweep<G: Ord + std::fmt::Display>(
        title: &str,
        (x_label, y_label, group_name): (&str, &str, &str),
        points: impl IntoIterator<Item = (G, f64, f64)>,
    ) -> Chart {
        let mut groups: Vec<(G, Vec<(f64, f64)>)> = Vec::new();
        for (group, x, y) in points {
            match groups.iter_mut().find(|(g, _)| *g == group) {
                Some((_, line)) => line.push((x, y)),
                None => groups.push((group, vec![(x, y)])),
            }
        }
        groups.sort_by(|a, b| a.0.cmp(&b.0));
        let series: Vec<Series> = groups
            .into_iter()
            .enumerate()
            .map(|(i, (group, mut line))| {
                line.sort_by(|a, b| a.0.total_cmp(&b.0));
                Series {
                    label: format!("{group_name} = {group}"),
                    points: line,
                    line: true,
                    colour: i,
                }
            })
            .collect();
        let all = || series.iter().flat_map(|s| s.points.iter());
        Chart {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            log_x: spans_decades(all().map(|p| p.0)),
            log_y: spans_decades(all().map(|p| p.1)),
            markers: true,
            series,
        }
    }

    /// The chart as a standalone SVG document.
    pub fn svg(&self) -> String {
        let points = || self.series.iter().flat_map(|s| s.points.iter());
        let x = Axis::new(points().map(|p| p.0), self.log_x);
        let y = Axis::new(points().map(|p| p.1), self.log_y);
        let (pw, ph) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
        let px = |v: f64| LEFT + x.fraction(v) * pw;
        let py = |v: f64| TOP + (1.0 - y.fraction(v)) * ph;
        let mut s = open_svg(WIDTH, HEIGHT, &self.title);
        let _ = write!(
            s,
            r#"<text x="{}" y="22" text-anchor="middle" font-size="14">{}</text>"#,
            WIDTH / 2.0,
            escape(&fit(&self.title, WIDTH - 8.0, 14.0))
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
                for (a, b) in visible.iter().filter(|_| self.markers) {
                    let _ = write!(
                        s,
                        r#"<rect class="marker" x="{:.1}" y="{:.1}" width="5" height="5" fill="{colour}"/>"#,
                        a - 2.5,
                        b - 2.5
                    );
                }
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
            let room = WIDTH - (lx + 22.0) - 4.0;
            let _ = write!(
                s,
                r#"<g><title>{}</title><text x="{}" y="{ly}" dominant-baseline="middle">{}</text></g>"#,
                escape(&series.label),
                lx + 22.0,
                escape(&fit(&series.label, room, FONT_SIZE))
            );
        }
        s.push_str("</svg>\n");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::assert_texts_inside;

    #[test]
    fn log_axes_skip_non_positive_points() {
        let chart = Chart {
            title: "t < u".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            log_x: true,
            log_y: true,
            markers: false,
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
    }

    #[test]
    fn a_sweep_draws_one_line_per_value_of_the_second_variable_with_a_legend() {
        let points = [(64, 1e6, 0.002), (8, 1e6, 0.001), (64, 1e4, 2e-5), (8, 1e4, 1e-5)];
        let chart = Chart::sweep(
            "kernel time by size",
            ("numElements", "overall time [s]", "computeIntensity"),
            points,
        );
        assert!(chart.log_x && chart.log_y, "both span two decades");
        let labels: Vec<&str> = chart.series.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["computeIntensity = 8", "computeIntensity = 64"]);
        assert_eq!(chart.series[0].points, [(1e4, 1e-5), (1e6, 0.001)]);
        let svg = chart.svg();
        assert_eq!(svg.matches("<polyline").count(), 2, "{svg}");
        assert_eq!(
            svg.matches(r#"class="marker""#).count(),
            4,
            "a marker per point: {svg}"
        );
        assert!(svg.contains(">computeIntensity = 64</text>"), "legend: {svg}");
        assert!(svg.contains(">1e6</text>"), "decade ticks: {svg}");
        let linear = Chart::sweep("t", ("x", "y", "g"), [(1, 1.0, 2.0), (1, 2.0, 3.0)]);
        assert!(!linear.log_x && !linear.log_y);
    }

    #[test]
    fn no_label_reaches_past_the_chart() {
        let long = "a series label far too long for the legend column of the chart".to_owned();
        let chart = Chart {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            log_x: false,
            log_y: true,
            markers: false,
            series: vec![Series {
                label: long.clone(),
                points: vec![(0.0, 1e-3), (12345.0, 1e5)],
                line: true,
                colour: 0,
            }],
        };
        let svg = chart.svg();
        assert_texts_inside(&svg, WIDTH);
        assert!(
            svg.contains(&format!("<title>{long}</title>")),
            "the full label as a tooltip: {svg}"
        );
    }
}
