//! A run's report at a chosen level of detail, as JSON or CSV, written row by row.
//!
//! The summary level ([`Summary`]) does not grow with the processes or the events: it is what
//! `hetsim run --json` prints and what the server stores in a run's row. Per-process and
//! per-compute rows are opt-in ([`Detail`]); they are written to the output one at a time,
//! never gathered into one JSON value, so that a million processes cost their rows' bytes
//! and no more.

use std::io::{self, Write};

use hetsim_simulator::{LabelSummary, ProcessResult, Span, SpanKind, Summary};
use serde::Serialize;

use crate::RunReport;

/// How much a report says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Detail {
    /// Overall figures, one row per label and one per node.
    #[default]
    Summary,
    /// The summary and one row per process.
    Processes,
    /// The summary, one row per process and one per compute (the run records a trace).
    Computes,
}

impl Detail {
    /// Whether the run must record its spans for this level.
    pub fn needs_trace(self) -> bool {
        self == Detail::Computes
    }
}

/// The summary level as JSON: the summary, then the run log.
#[derive(Serialize)]
struct SummaryReport<'a> {
    #[serde(flatten)]
    summary: Summary,
    log: &'a [String],
    log_dropped: u64,
}

/// One compute of the run, with its error bar (`uncertainty`, the half-width [s], 0 where the
/// model states none).
#[derive(Serialize)]
struct ComputeRow<'a> {
    pid: usize,
    start: f64,
    seconds: f64,
    uncertainty: f64,
    detail: &'a str,
}

impl<'a> From<&'a Span> for ComputeRow<'a> {
    fn from(s: &'a Span) -> Self {
        ComputeRow {
            pid: s.pid,
            start: s.start,
            seconds: s.end - s.start,
            uncertainty: s.uncertainty,
            detail: &s.detail,
        }
    }
}

impl RunReport {
    pub fn summary(&self) -> Summary {
        Summary {
            activities: self.activities.clone(),
            ..Summary::of(&self.results)
        }
    }

    /// The run's computes in the order they started (none unless the run was traced).
    fn computes(&self) -> impl Iterator<Item = ComputeRow<'_>> {
        let spans = self.results.trace.iter().flatten();
        spans
            .filter(|s| s.kind == SpanKind::Compute)
            .map(ComputeRow::from)
    }

    /// Writes the report as one JSON object: the summary and log, then, as `detail` asks, a
    /// `processes` array and a `computes` array, one row per line.
    pub fn write_json(&self, detail: Detail, out: &mut impl Write) -> io::Result<()> {
        let head = SummaryReport {
            summary: self.summary(),
            log: &self.log,
            log_dropped: self.log_dropped,
        };
        let head = serde_json::to_string_pretty(&head)?;
        // The pretty object ends with "\n}"; the arrays go in before its brace.
        let open = head.strip_suffix('}').unwrap_or(&head).trim_end();
        out.write_all(open.as_bytes())?;
        if detail >= Detail::Processes {
            write_json_array(out, "processes", self.results.processes.iter())?;
        }
        if detail >= Detail::Computes {
            write_json_array(out, "computes", self.computes())?;
        }
        out.write_all(b"\n}\n")
    }

    /// Writes the rows of `detail`'s level as CSV: one per label for the summary, one per
    /// process, or one per compute.
    pub fn write_csv(&self, detail: Detail, out: &mut impl Write) -> io::Result<()> {
        match detail {
            Detail::Summary => write_labels_csv(&self.summary().labels, out),
            Detail::Processes => write_processes_csv(&self.results.processes, out),
            Detail::Computes => {
                writeln!(out, "pid,start,seconds,uncertainty,detail")?;
                for c in self.computes() {
                    let detail = csv_text(c.detail);
                    writeln!(
                        out,
                        "{},{},{},{},{detail}",
                        c.pid, c.start, c.seconds, c.uncertainty
                    )?;
                }
                Ok(())
            }
        }
    }
}

/// `,\n  "name": [` then one compact JSON row per line, then `]`.
fn write_json_array<T: Serialize>(
    out: &mut impl Write,
    name: &str,
    rows: impl Iterator<Item = T>,
) -> io::Result<()> {
    write!(out, ",\n  \"{name}\": [")?;
    for (i, row) in rows.enumerate() {
        out.write_all(if i == 0 { b"\n    " } else { b",\n    " })?;
        serde_json::to_writer(&mut *out, &row)?;
    }
    out.write_all(b"\n  ]")
}

/// The columns of a statistics group, e.g. `finish_min,…,finish_max`.
fn stats_header(name: &str) -> String {
    ["min", "mean", "p50", "p99", "max"]
        .map(|s| format!("{name}_{s}"))
        .join(",")
}

/// One row per label: count and the statistics of finish, compute and wait times [s].
pub fn write_labels_csv(labels: &[LabelSummary], out: &mut impl Write) -> io::Result<()> {
    let groups = ["finish", "compute", "wait"].map(stats_header).join(",");
    writeln!(out, "label,count,{groups}")?;
    for l in labels {
        write!(out, "{},{}", csv_text(&l.label), l.count)?;
        for s in [l.finish, l.compute, l.wait] {
            write!(out, ",{},{},{},{},{}", s.min, s.mean, s.p50, s.p99, s.max)?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// One row per process: its pid, label, rank, node, finish time with its error bar, compute
/// and wait times [s].
pub fn write_processes_csv<'a>(
    processes: impl IntoIterator<Item = &'a ProcessResult>,
    out: &mut impl Write,
) -> io::Result<()> {
    write_processes_header(out)?;
    processes.into_iter().try_for_each(|p| write_process_row(p, out))
}

/// The header of [`write_processes_csv`], for writers that add the rows a page at a time.
pub fn write_processes_header(out: &mut impl Write) -> io::Result<()> {
    writeln!(
        out,
        "pid,label,rank,node,finish_time,finish_low,finish_high,compute_time,wait_time"
    )
}

/// One process as a CSV row, the columns of [`write_processes_csv`].
pub fn write_process_row(p: &ProcessResult, out: &mut impl Write) -> io::Result<()> {
    let [low, high] = p.finish_interval;
    writeln!(
        out,
        "{},{},{},{},{},{low},{high},{},{}",
        p.pid,
        csv_text(&p.label),
        p.rank,
        csv_text(&p.node),
        p.finish_time,
        p.compute_time,
        p.wait_time
    )
}

/// A text as one CSV cell, quoted where it must be (RFC 4180).
pub fn csv_text(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\"")).into()
    } else {
        text.into()
    }
}
