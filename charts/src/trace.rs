//! A run's trace as its readers take it: the processes, the overall time and the spans,
//! from a run just simulated or from the JSON a server stored; and the trace in the Chrome
//! trace-event format, which Perfetto and chrome://tracing open.

use std::borrow::Cow;
use std::collections::HashMap;

use hetsim_simulator::{ProcessResult, Results, Span, SpanKind};
use serde::Deserialize;
use serde_json::{json, Value};

/// The format of a written or served trace.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum TraceFormat {
    /// hetsim's own: the array of spans (pid, kind, start, end, uncertainty, detail) [s].
    #[default]
    Native,
    /// The Chrome trace-event format, for Perfetto and chrome://tracing.
    Chrome,
}

/// A stored run that is not the shape a trace is drawn from.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("the run's result: expected an object with overall_time and processes: {0}")]
    Result(#[source] serde_json::Error),
    #[error("the run's trace: expected an array of spans (pid, kind, start, end, detail): {0}")]
    Spans(#[source] serde_json::Error),
}

/// What timelines and trace files are made of.
pub struct RunTrace<'a> {
    /// The latest finish time [s].
    pub overall_time: f64,
    /// How many processes the run had.
    pub process_count: usize,
    /// In pid order: all of them, or the first ones (a stored run of a million processes
    /// draws its first rows without reading the rest).
    pub processes: Cow<'a, [ProcessResult]>,
    pub spans: Cow<'a, [Span]>,
    /// Spans the run did not record past its cap: the trace is the start of the run's.
    pub dropped: u64,
}

/// The part of a stored result (the `hetsim run --json` object, or the server's stored
/// result) that a trace needs.
#[derive(Deserialize)]
struct StoredResult {
    overall_time: f64,
    processes: Vec<ProcessResult>,
}

impl RunTrace<'_> {
    /// The trace of a run just simulated (no spans if it was run without a trace).
    pub fn of(results: &Results) -> RunTrace<'_> {
        RunTrace {
            overall_time: results.overall_time,
            process_count: results.processes.len(),
            processes: Cow::Borrowed(&results.processes),
            spans: Cow::Borrowed(results.trace.as_deref().unwrap_or_default()),
            dropped: results.trace_dropped,
        }
    }

    /// The trace of a stored run: its result object and its spans (`null` where the run
    /// stored none).
    pub fn from_stored(result: &Value, trace: &Value) -> Result<RunTrace<'static>, TraceError> {
        let stored = StoredResult::deserialize(result).map_err(TraceError::Result)?;
        let count = stored.processes.len();
        RunTrace::stored(stored.overall_time, count, stored.processes, trace, 0)
    }

    /// The trace of a run stored as data: its overall time, its process count, its first
    /// `processes` (spans of the others are left out), its spans as JSON (`null` where it
    /// stored none) and how many spans it did not record.
    pub fn stored(
        overall_time: f64,
        process_count: usize,
        processes: Vec<ProcessResult>,
        trace: &Value,
        dropped: u64,
    ) -> Result<RunTrace<'static>, TraceError> {
        let mut spans = if trace.is_null() {
            Vec::new()
        } else {
            Vec::<Span>::deserialize(trace).map_err(TraceError::Spans)?
        };
        if processes.len() < process_count {
            let shown = processes.len();
            spans.retain(|s| s.pid < shown);
        }
        Ok(RunTrace {
            overall_time,
            process_count,
            processes: Cow::Owned(processes),
            spans: Cow::Owned(spans),
            dropped,
        })
    }

    /// The note a truncated trace carries, if it is one.
    pub fn truncation_note(&self) -> Option<String> {
        (self.dropped > 0).then(|| {
            format!(
                "trace truncated after {} spans: {} more were not recorded",
                self.spans.len(),
                self.dropped
            )
        })
    }

    /// `label[rank] @ node`, the name of process `p` in charts and traces.
    pub fn process_name(p: &ProcessResult) -> String {
        format!("{}[{}] @ {}", p.label, p.rank, p.node)
    }
}

/// The name of a span kind in charts and trace files, as the native trace spells it.
pub fn kind_name(kind: SpanKind) -> &'static str {
    match kind {
        SpanKind::Compute => "compute",
        SpanKind::Sleep => "sleep",
        SpanKind::Wait => "wait",
        SpanKind::Send => "send",
        SpanKind::Collective => "collective",
    }
}

/// Microseconds, the Chrome format's time unit, from seconds.
fn micros(seconds: f64) -> f64 {
    seconds * 1e6
}

/// The trace as a Chrome trace-event document (`{"traceEvents": [...], "displayTimeUnit":
/// "ms"}`): each node is a Chrome process (`pid` = the node's index in order of first use,
/// named by `process_name` metadata), each simulated process a thread of it (`tid` = its
/// pid, named `label[rank]` by `thread_name` metadata). Computes, sleeps and waits are
/// complete events (`ph: "X"`, `cat` = kind); a message in flight is a pair of nestable
/// async events (`ph: "b"`/`"e"`, `cat: "send"`, an `id` each) on the sender's thread,
/// because it overlaps the sender's computes, which complete events on one thread may not.
pub fn chrome(run: &RunTrace) -> Value {
    let mut nodes: HashMap<&str, usize> = HashMap::new();
    let mut events = Vec::new();
    let mut node_of_pid = HashMap::with_capacity(run.processes.len());
    for p in run.processes.iter() {
        let next = nodes.len();
        let node = *nodes.entry(&p.node).or_insert_with(|| {
            events.push(
                json!({"ph": "M", "name": "process_name", "pid": next, "tid": 0, "args": {"name": &*p.node}}),
            );
            next
        });
        node_of_pid.insert(p.pid, node);
        events.push(json!({
            "ph": "M", "name": "thread_name", "pid": node, "tid": p.pid,
            "args": {"name": format!("{}[{}]", p.label, p.rank)},
        }));
    }
    for (id, span) in run.spans.iter().enumerate() {
        let pid = node_of_pid.get(&span.pid).copied().unwrap_or(0);
        let kind = kind_name(span.kind);
        let name = if span.detail.is_empty() {
            kind
        } else {
            &span.detail
        };
        let mut args = json!({"detail": span.detail});
        if span.uncertainty > 0.0 {
            args["uncertainty_us"] = json!(micros(span.uncertainty));
        }
        if span.kind == SpanKind::Send {
            let common = json!({"cat": kind, "name": name, "id": id, "pid": pid, "tid": span.pid});
            let mut begin = common.clone();
            begin["ph"] = json!("b");
            begin["ts"] = json!(micros(span.start));
            begin["args"] = args;
            let mut end = common;
            end["ph"] = json!("e");
            end["ts"] = json!(micros(span.end));
            events.extend([begin, end]);
        } else {
            events.push(json!({
                "ph": "X", "cat": kind, "name": name, "pid": pid, "tid": span.pid,
                "ts": micros(span.start), "dur": micros(span.end - span.start), "args": args,
            }));
        }
    }
    let mut doc = json!({"traceEvents": events, "displayTimeUnit": "ms"});
    if let Some(note) = run.truncation_note() {
        let end = run.spans.iter().map(|s| s.end).fold(0.0, f64::max);
        let marker = json!({"ph": "i", "s": "g", "name": &note, "pid": 0, "tid": 0, "ts": micros(end)});
        if let Some(events) = doc["traceEvents"].as_array_mut() {
            events.push(marker);
        }
        doc["otherData"] = json!({"truncated": note, "spans_not_recorded": run.dropped});
    }
    doc
}

#[cfg(test)]
mod tests {
    use super::*;

    fn process(pid: usize, label: &str, node: &str) -> ProcessResult {
        ProcessResult {
            pid,
            label: label.into(),
            rank: pid as u64,
            node: node.into(),
            finish_time: 1.0,
            finish_interval: [1.0, 1.0],
            compute_time: 0.5,
            wait_time: 0.0,
        }
    }

    fn span(pid: usize, kind: SpanKind, start: f64, end: f64) -> Span {
        Span {
            pid,
            kind,
            start,
            end,
            uncertainty: 0.0,
            detail: String::new(),
        }
    }

    #[test]
    fn chrome_names_nodes_and_processes_and_times_spans_in_microseconds() {
        let processes = [
            process(0, "Master", "host"),
            process(1, "Worker", "gpu"),
            process(2, "Worker", "gpu"),
        ];
        let spans = [
            span(1, SpanKind::Compute, 0.001, 0.003),
            span(0, SpanKind::Send, 0.0, 0.002),
        ];
        let run = RunTrace {
            overall_time: 0.003,
            process_count: processes.len(),
            processes: Cow::Borrowed(&processes),
            spans: Cow::Borrowed(&spans),
            dropped: 0,
        };
        let doc = chrome(&run);
        assert_eq!(doc["displayTimeUnit"], "ms");
        let events = doc["traceEvents"].as_array().expect("events");
        let named = |what: &str| -> Vec<(u64, u64, String)> {
            events
                .iter()
                .filter(|e| e["ph"] == "M" && e["name"] == what)
                .map(|e| {
                    (
                        e["pid"].as_u64().unwrap(),
                        e["tid"].as_u64().unwrap(),
                        e["args"]["name"].to_string(),
                    )
                })
                .collect()
        };
        assert_eq!(
            named("process_name"),
            [(0, 0, "\"host\"".into()), (1, 0, "\"gpu\"".into())]
        );
        assert_eq!(
            named("thread_name"),
            [
                (0, 0, "\"Master[0]\"".into()),
                (1, 1, "\"Worker[1]\"".into()),
                (1, 2, "\"Worker[2]\"".into())
            ]
        );
        let compute = events.iter().find(|e| e["ph"] == "X").expect("a complete event");
        assert_eq!(
            (compute["pid"].as_u64(), compute["tid"].as_u64()),
            (Some(1), Some(1))
        );
        assert_eq!(compute["cat"], "compute");
        assert!((compute["ts"].as_f64().unwrap() - 1000.0).abs() < 1e-9);
        assert!((compute["dur"].as_f64().unwrap() - 2000.0).abs() < 1e-9);
        let send: Vec<&Value> = events.iter().filter(|e| e["cat"] == "send").collect();
        assert_eq!(send.len(), 2);
        assert_eq!(
            (send[0]["ph"].as_str(), send[1]["ph"].as_str()),
            (Some("b"), Some("e"))
        );
        assert_eq!(send[0]["id"], send[1]["id"]);
        assert!((send[1]["ts"].as_f64().unwrap() - 2000.0).abs() < 1e-9);
    }

    #[test]
    fn stored_json_reads_back_and_bad_json_names_what_was_expected() {
        let processes = vec![process(0, "Master", "host")];
        let result = json!({"overall_time": 0.5, "processes": processes, "log": []});
        let trace = json!([span(0, SpanKind::Sleep, 0.0, 0.5)]);
        let run = RunTrace::from_stored(&result, &trace).expect("reads");
        assert_eq!(
            (run.overall_time, run.processes.len(), run.spans.len()),
            (0.5, 1, 1)
        );
        assert!(RunTrace::from_stored(&result, &Value::Null)
            .expect("no trace")
            .spans
            .is_empty());
        let error = RunTrace::from_stored(&json!({"processes": []}), &Value::Null)
            .err()
            .expect("an error");
        assert!(format!("{error:#}").contains("overall_time"), "{error:#}");
        let error = RunTrace::from_stored(&result, &json!({"spans": 1}))
            .err()
            .expect("an error");
        assert!(format!("{error:#}").contains("array of spans"), "{error:#}");
    }

    #[test]
    fn a_truncated_trace_says_so_in_the_chrome_export() {
        let processes = vec![process(0, "Master", "host"), process(1, "Worker", "gpu")];
        let trace = json!([
            span(0, SpanKind::Sleep, 0.0, 0.5),
            span(1, SpanKind::Sleep, 0.0, 0.25)
        ]);
        let run = RunTrace::stored(0.5, 2, processes.clone(), &trace, 7).expect("reads");
        let doc = chrome(&run);
        let note = "trace truncated after 2 spans: 7 more were not recorded";
        assert_eq!(doc["otherData"]["truncated"], note);
        let marker = doc["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["ph"] == "i");
        assert_eq!(marker.expect("an instant event")["name"], note);
        assert!(
            chrome(&RunTrace::stored(0.5, 2, processes.clone(), &trace, 0).unwrap())
                .get("otherData")
                .is_none()
        );
        // The first process of two: the other's spans are left out, its count kept.
        let first = RunTrace::stored(0.5, 2, processes[..1].to_vec(), &trace, 0).unwrap();
        assert_eq!((first.process_count, first.spans.len()), (2, 1));
    }
}
