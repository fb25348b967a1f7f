//! A Gantt chart of a trace as SVG: one row per process, compute, sleep and wait spans as
//! bars, messages in flight as thin bars on the sender's row.

use std::fmt::Write as _;

use crate::results::{Results, SpanKind};

/// At most this many rows are drawn; the chart says how many were left out.
pub const MAX_ROWS: usize = 500;

fn color(kind: SpanKind) -> &'static str {
    match kind {
        SpanKind::Compute => "#2ca02c",
        SpanKind::Sleep => "#bcbd22",
        SpanKind::Wait => "#d62728",
        SpanKind::Send => "#1f77b4",
    }
}

/// The chart of `results.trace` (empty chart without a trace).
pub fn svg(results: &Results) -> String {
    const ROW: f64 = 18.0;
    const LEFT: f64 = 150.0;
    const WIDTH: f64 = 1000.0;
    let rows = results.processes.len().min(MAX_ROWS);
    let height = 60.0 + ROW * rows as f64;
    let total = if results.overall_time > 0.0 {
        results.overall_time
    } else {
        1.0
    };
    let x = |t: f64| LEFT + t / total * (WIDTH - LEFT - 20.0);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" font-family="sans-serif" font-size="11">
<title>hetsim timeline: overall time {total} s</title>
<rect width="100%" height="100%" fill="white"/>"#
    );
    for p in results.processes.iter().take(rows) {
        let y = 30.0 + ROW * p.pid as f64;
        let _ = writeln!(
            s,
            r#"<text x="4" y="{:.1}">{}[{}] @ {}</text>"#,
            y + 12.0,
            xml(&p.label),
            p.rank,
            xml(&p.node)
        );
    }
    for span in results.trace.iter().flatten().filter(|s| s.pid < rows) {
        let y = 30.0 + ROW * span.pid as f64;
        let (top, h) = if span.kind == SpanKind::Send {
            (y + 12.0, 3.0)
        } else {
            (y + 2.0, ROW - 6.0)
        };
        let w = (x(span.end) - x(span.start)).max(0.5);
        let _ = writeln!(
            s,
            r#"<rect x="{:.2}" y="{top:.1}" width="{w:.2}" height="{h}" fill="{}"><title>{:?} {}–{} s {}</title></rect>"#,
            x(span.start),
            color(span.kind),
            span.kind,
            span.start,
            span.end,
            xml(&span.detail)
        );
    }
    let axis = 30.0 + ROW * rows as f64 + 14.0;
    let _ = writeln!(
        s,
        r#"<text x="{LEFT}" y="{axis}">0 s</text><text x="{:.1}" y="{axis}" text-anchor="end">{total:.6} s</text>"#,
        WIDTH - 20.0
    );
    let _ = writeln!(
        s,
        r#"<text x="4" y="16">compute (green), wait (red), sleep (olive), message in flight (blue){}</text>"#,
        if results.processes.len() > rows {
            format!("; {} more processes not drawn", results.processes.len() - rows)
        } else {
            String::new()
        }
    );
    s.push_str("</svg>\n");
    s
}

fn xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
