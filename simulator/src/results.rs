//! What a run produces: times per process, busy time and energy per node, and a trace.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::Pid;

/// Serialized into run results; deserialized by readers of stored results (charts, traces).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProcessResult {
    pub pid: Pid,
    pub label: Arc<str>,
    pub rank: u64,
    /// The id of the node it ran on.
    pub node: Arc<str>,
    /// When its program returned [s].
    pub finish_time: f64,
    /// The error bar of `finish_time` (crate::uncertainty) [s].
    pub finish_interval: [f64; 2],
    /// Seconds spent computing.
    pub compute_time: f64,
    /// Seconds spent blocked in receive.
    pub wait_time: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeResult {
    pub id: Arc<str>,
    /// Compute seconds of all the node's processes.
    pub busy_time: f64,
    /// The energy of the computes whose model states its power, plus load power × the rest
    /// of the busy time, plus idle power × (count × overall time − busy time) [J].
    pub energy: f64,
    /// The idle part of `energy` [J]. Links draw no power of their own, so the energy of
    /// the time spent waiting for transfers is in here: a node that waits is idle.
    #[serde(default)]
    pub idle_energy: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum SpanKind {
    Compute,
    Sleep,
    Wait,
    /// A message in flight, on the sender's row: from the send to the arrival.
    Send,
    /// A collective, on each member's row: from its call to its return; its detail names
    /// the collective, its algorithm (and protocol) and its bytes.
    Collective,
}

/// One interval of one process's time line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Span {
    /// The process: its index in the run's processes.
    #[cfg_attr(feature = "openapi", schema(value_type = u64))]
    pub pid: Pid,
    pub kind: SpanKind,
    /// When it began [s].
    pub start: f64,
    /// When it ended [s].
    pub end: f64,
    /// The half-width of a compute's error bar, where its model states one [s].
    #[serde(default, skip_serializing_if = "is_zero")]
    pub uncertainty: f64,
    pub detail: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Results {
    /// The latest finish time [s].
    pub overall_time: f64,
    /// Its error bar: the latest lower and upper ends of the processes' finish intervals,
    /// the widths summed along the critical path (crate::uncertainty) [s].
    pub overall_time_interval: [f64; 2],
    pub total_energy: f64,
    /// 1 − exp(−Σ failureRate × count × overall time) over the nodes hosting processes.
    pub failure_chance: f64,
    /// Events the engine processed.
    pub events: u64,
    pub processes: Vec<ProcessResult>,
    pub nodes: Vec<NodeResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<Vec<Span>>,
    /// Spans left out of `trace` past [`crate::Options::max_spans`]: the trace holds the
    /// spans recorded first, not the run's whole time line.
    #[serde(default, skip_serializing_if = "is_zero_count")]
    pub trace_dropped: u64,
}

fn is_zero_count(n: &u64) -> bool {
    *n == 0
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}
