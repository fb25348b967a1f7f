//! The Gantt chart of a run (`hetsim run --timeline`, and the web UI from a stored run): one
//! row per process, named in a left column; computes, sleeps and waits as bars, messages in
//! flight as thin bars on the sender's row; a time axis with gridlines whose ticks are in
//! s, ms, µs or ns as the run's length suits; a legend; a tooltip on every bar and name.

use std::collections::HashMap;
use std::fmt::Write as _;

use hetsim_simulator::{Results, SpanKind};
use serde_json::Value;

use super::axis::{format_time, time_ticks, Axis};
use super::{escape, fit, open_svg, text_width, FONT_SIZE};
use crate::trace::{kind_name, RunTrace, TraceError};

/// At most this many rows are drawn; the chart says how many were left out.
pub const MAX_ROWS: usize = 500;

const WIDTH: f64 = 1000.0;
const ROW: f64 = 18.0;
/// Above the rows: the title and the legend.
const TOP: f64 = 56.0;
/// Right of the plot: room for half the last tick's label.
const RIGHT: f64 = 40.0;
/// The widest the column of process names grows; longer names are shortened.
const MAX_NAME_WIDTH: f64 = 280.0;
const PAD: f64 = 6.0;

/// Each kind with its colour and its legend entry, in legend order.
const KINDS: [(SpanKind, &str, &str); 5] = [
    (SpanKind::Compute, "#2ca02c", "compute"),
    (SpanKind::Sleep, "#bcbd22", "sleep"),
    (SpanKind::Wait, "#d62728", "wait (blocked in receive)"),
    (SpanKind::Send, "#1f77b4", "send (message in flight)"),
    (SpanKind::Collective, "#9467bd", "collective (call to return)"),
];

fn colour(kind: SpanKind) -> &'static str {
    KINDS.iter().find(|k| k.0 == kind).map_or("#7f7f7f", |k| k.1)
}

/// The timeline of a run just simulated (rows without bars if it ran without a trace).
pub fn timeline_svg(results: &Results) -> String {
    draw(&RunTrace::of(results))
}

/// The timeline of a stored run: its result object (`hetsim run --json`'s, or the one the
/// server stores) and its trace spans (`null` where none were stored). The same chart as
/// [`timeline_svg`] draws for the run.
pub fn timeline_svg_from_json(result: &Value, trace: &Value) -> Result<String, TraceError> {
    Ok(draw(&RunTrace::from_stored(result, trace)?))
}

/// The horizontal layout: the name column's width and the plot's extent in pixels.
struct Layout {
    names: f64,
    left: f64,
    plot: f64,
    axis: Axis,
}

impl Layout {
    fn new(names: &[String], span: f64) -> Layout {
        let widest = names.iter().map(|n| text_width(n, FONT_SIZE)).fold(0.0, f64::max);
        let names = widest.clamp(60.0, MAX_NAME_WIDTH);
        let left = PAD + names + 2.0 * PAD;
        Layout {
            names,
            left,
            plot: WIDTH - left - RIGHT,
            axis: Axis::linear(0.0, span),
        }
    }

    fn x(&self, t: f64) -> f64 {
        self.left + self.axis.fraction(t) * self.plot
    }
}

/// The timeline of any [`RunTrace`]: a run just simulated, or one stored as data.
pub fn draw(run: &RunTrace) -> String {
    let rows = run.processes.len().min(MAX_ROWS);
    let names: Vec<String> = run.processes[..rows].iter().map(RunTrace::process_name).collect();
    let span = run.spans.iter().map(|s| s.end).fold(run.overall_time, f64::max);
    let span = if span > 0.0 && span.is_finite() { span } else { 1.0 };
    let layout = Layout::new(&names, span);
    let bottom = TOP + ROW * rows as f64;
    let title = format!(
        "hetsim timeline: {} processes, overall time {}",
        run.process_count,
        format_time(run.overall_time)
    );
    let left_out = run.process_count.saturating_sub(rows);
    let notes = usize::from(left_out > 0) + usize::from(run.dropped > 0);
    let height = bottom + 44.0 + 16.0 * notes as f64;
    let mut s = open_svg(WIDTH, height, &title);
    let _ = writeln!(
        s,
        r#"<text x="{PAD}" y="18" font-size="14">{}</text>"#,
        escape(&fit(&title, WIDTH - 2.0 * PAD, 14.0))
    );
    legend(&mut s);
    rows_and_names(&mut s, &names, &layout);
    grid_and_axis(&mut s, &layout, span, bottom);
    bars(&mut s, run, &names, &layout);
    let mut y = bottom + 52.0;
    if left_out > 0 {
        let _ = writeln!(
            s,
            r#"<text x="{PAD}" y="{y:.1}">{left_out} more processes not drawn (at most {MAX_ROWS} rows)</text>"#
        );
        y += 16.0;
    }
    if let Some(note) = run.truncation_note() {
        let _ = writeln!(s, r#"<text x="{PAD}" y="{y:.1}">{}</text>"#, escape(&note));
    }
    s.push_str("</svg>\n");
    s
}

fn legend(s: &mut String) {
    let mut x = PAD;
    for (_, colour, label) in KINDS {
        let _ = writeln!(
            s,
            r#"<rect x="{x:.1}" y="30" width="12" height="10" fill="{colour}"/><text x="{:.1}" y="39">{label}</text>"#,
            x + 16.0
        );
        x += 16.0 + text_width(label, FONT_SIZE) + 18.0;
    }
}

/// Alternate rows shaded, each named in the left column (shortened names keep the full
/// one as a tooltip).
fn rows_and_names(s: &mut String, names: &[String], layout: &Layout) {
    for (row, name) in names.iter().enumerate() {
        let y = TOP + ROW * row as f64;
        if row % 2 == 1 {
            let _ = writeln!(
                s,
                r##"<rect x="0" y="{y:.1}" width="{WIDTH}" height="{ROW}" fill="#f4f4f4"/>"##
            );
        }
        let _ = writeln!(
            s,
            r#"<g><title>{}</title><text x="{PAD}" y="{:.1}">{}</text></g>"#,
            escape(name),
            y + 13.0,
            escape(&fit(name, layout.names, FONT_SIZE))
        );
    }
}

fn grid_and_axis(s: &mut String, layout: &Layout, span: f64, bottom: f64) {
    for (t, label) in time_ticks(span) {
        let x = layout.x(t);
        let _ = writeln!(
            s,
            r##"<line x1="{x:.2}" x2="{x:.2}" y1="{TOP}" y2="{:.1}" stroke="#ccc"/><text x="{x:.2}" y="{:.1}" text-anchor="middle">{}</text>"##,
            bottom + 4.0,
            bottom + 17.0,
            escape(&label)
        );
    }
    let _ = writeln!(
        s,
        r##"<line x1="{:.2}" x2="{:.2}" y1="{bottom:.1}" y2="{bottom:.1}" stroke="#333"/><text x="{:.1}" y="{:.1}" text-anchor="middle">time since the start of the run</text>"##,
        layout.left,
        layout.left + layout.plot,
        layout.left + layout.plot / 2.0,
        bottom + 34.0
    );
}

/// The spans of the drawn rows, each with a tooltip: process, kind, start, duration, detail.
fn bars(s: &mut String, run: &RunTrace, names: &[String], layout: &Layout) {
    let row_of: HashMap<usize, usize> = run.processes[..names.len()]
        .iter()
        .enumerate()
        .map(|(row, p)| (p.pid, row))
        .collect();
    for span in run.spans.iter() {
        let Some(&row) = row_of.get(&span.pid) else {
            continue;
        };
        let y = TOP + ROW * row as f64;
        // A message and a collective overlap the process's other spans: thin bands below
        // and above them.
        let (top, height) = match span.kind {
            SpanKind::Send => (y + 13.0, 3.0),
            SpanKind::Collective => (y, 2.5),
            _ => (y + 3.0, ROW - 8.0),
        };
        let x = layout.x(span.start);
        let width = (layout.x(span.end) - x).max(0.5);
        let detail = if span.detail.is_empty() {
            String::new()
        } else {
            format!(": {}", span.detail)
        };
        let _ = writeln!(
            s,
            r#"<rect x="{x:.2}" y="{top:.1}" width="{width:.2}" height="{height}" fill="{}"><title>{} {} from {} for {}{}</title></rect>"#,
            colour(span.kind),
            escape(&names[row]),
            kind_name(span.kind),
            format_time(span.start),
            format_time(span.end - span.start),
            escape(&detail)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::assert_texts_inside;
    use hetsim_simulator::{ProcessResult, Span};
    use std::borrow::Cow;

    fn run_of(processes: &[ProcessResult], spans: &[Span], overall_time: f64) -> String {
        draw(&RunTrace {
            overall_time,
            process_count: processes.len(),
            processes: Cow::Borrowed(processes),
            spans: Cow::Borrowed(spans),
            dropped: 0,
        })
    }

    fn process(pid: usize, label: &str) -> ProcessResult {
        ProcessResult {
            pid,
            label: label.into(),
            rank: 0,
            node: "node".into(),
            finish_time: 0.0,
            finish_interval: [0.0, 0.0],
            compute_time: 0.0,
            wait_time: 0.0,
        }
    }

    #[test]
    fn a_timeline_has_time_ticks_a_legend_names_and_tooltips_inside_its_width() {
        let long = "AVeryLongProcessLabelThatWouldNeverFitInTheNameColumnOfTheChart";
        let processes = [process(0, "Master"), process(1, long)];
        let spans = [Span {
            pid: 1,
            kind: SpanKind::Compute,
            start: 0.1,
            end: 0.4,
            uncertainty: 0.0,
            detail: "saxpy2".into(),
        }];
        let svg = run_of(&processes, &spans, 0.5957);
        assert_texts_inside(&svg, WIDTH);
        for tick in ["0 ms", "100 ms", "500 ms"] {
            assert!(svg.contains(&format!(">{tick}</text>")), "tick {tick}: {svg}");
        }
        assert_eq!(
            svg.matches(r##"stroke="#ccc""##).count(),
            6,
            "a gridline a tick: {svg}"
        );
        for entry in [
            "compute",
            "sleep",
            "wait (blocked in receive)",
            "send (message in flight)",
        ] {
            assert!(svg.contains(&format!(">{entry}</text>")), "legend {entry}: {svg}");
        }
        assert!(svg.contains(">Master[0] @ node</text>"), "{svg}");
        assert!(
            svg.contains(&format!("<title>{long}[0] @ node</title>")),
            "full name: {svg}"
        );
        assert!(svg.contains("…</text>"), "the long name shortened: {svg}");
        assert!(
            svg.contains(&format!(
                "<title>{long}[0] @ node compute from 100.000 ms for 300.000 ms: saxpy2</title>"
            )),
            "bar tooltip: {svg}"
        );
    }

    #[test]
    fn rows_over_the_cap_are_counted_not_drawn() {
        let processes: Vec<ProcessResult> = (0..MAX_ROWS + 7).map(|pid| process(pid, "Worker")).collect();
        let spans: Vec<Span> = [0, MAX_ROWS + 3]
            .map(|pid| Span {
                pid,
                kind: SpanKind::Sleep,
                start: 0.0,
                end: 1e-6,
                uncertainty: 0.0,
                detail: String::new(),
            })
            .to_vec();
        let svg = run_of(&processes, &spans, 1e-6);
        assert!(
            svg.contains(">7 more processes not drawn (at most 500 rows)</text>"),
            "{svg}"
        );
        assert_eq!(
            svg.matches("Worker[0] @ node sleep").count(),
            1,
            "one bar drawn, one not"
        );
        assert!(svg.contains(">1.0 µs</text>"), "{svg}");
        assert_texts_inside(&svg, WIDTH);
    }
}
