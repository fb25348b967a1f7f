//! A run's summary: what a report says at any scale. Its size depends on the system's
//! labels and nodes, never on the number of processes or events, so that a run of a million
//! processes reports, stores and answers as fast as a run of two.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::{NodeResult, ProcessResult, Results};

/// Order statistics of one quantity over a label's processes [s].
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub min: f64,
    pub mean: f64,
    /// The median, nearest rank.
    pub p50: f64,
    /// The 99th percentile, nearest rank: the value that 99 % of the processes do not pass.
    pub p99: f64,
    pub max: f64,
}

impl Stats {
    /// The statistics of `values` (sorted here); all zero for none.
    pub fn of(mut values: Vec<f64>) -> Stats {
        if values.is_empty() {
            return Stats::default();
        }
        values.sort_by(f64::total_cmp);
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        Stats {
            min: values[0],
            mean,
            p50: nearest_rank(&values, 0.50),
            p99: nearest_rank(&values, 0.99),
            max: values[values.len() - 1],
        }
    }
}

/// The `q` quantile of non-empty sorted `values` by the nearest-rank method: the smallest
/// value with at least a fraction `q` of the values at or below it.
fn nearest_rank(sorted: &[f64], q: f64) -> f64 {
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// The processes of one label.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LabelSummary {
    pub label: Arc<str>,
    pub count: u64,
    /// When they finished.
    pub finish: Stats,
    /// Seconds each spent computing.
    pub compute: Stats,
    /// Seconds each spent blocked in receive.
    pub wait: Stats,
}

/// A run at the summary level: overall figures, one row per label, one per node.
///
/// Energy is per node, not per label: idle power belongs to a node whatever runs on it, and
/// processes of several labels share a node's busy time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// The latest finish time [s].
    pub overall_time: f64,
    /// Its error bar [s] (see [`Results::overall_time_interval`]).
    pub overall_time_interval: [f64; 2],
    pub total_energy: f64,
    pub failure_chance: f64,
    /// Events the engine processed.
    pub events: u64,
    /// How many processes ran.
    pub processes: u64,
    /// Per label, sorted by name.
    pub labels: Vec<LabelSummary>,
    /// Per node of the system: busy time and energy.
    pub nodes: Vec<NodeResult>,
    /// The computes and transfers by kind (filled by whoever knows the models: the
    /// scripting layer), the longest first; empty where nobody did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub activities: Vec<Activity>,
}

/// Computes of one node by one model and limiter, or messages between two nodes: how many,
/// how long in all, how many bytes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Activity {
    /// `compute` or `transfer`.
    pub kind: String,
    /// The node (a compute), or `from → to` (a transfer).
    pub place: String,
    /// The computational model (a compute); empty for a transfer.
    #[serde(default)]
    pub model: String,
    /// What bounds it, where the model says (`memory`, `latency`, …).
    #[serde(default)]
    pub limiter: String,
    pub count: u64,
    /// Summed durations [s]: a compute's model time, a message's send to arrival.
    pub seconds: f64,
    /// Summed sizes [bytes] (transfers).
    #[serde(default)]
    pub bytes: f64,
}

impl Summary {
    pub fn of(results: &Results) -> Summary {
        Summary {
            overall_time: results.overall_time,
            overall_time_interval: results.overall_time_interval,
            total_energy: results.total_energy,
            failure_chance: results.failure_chance,
            events: results.events,
            processes: results.processes.len() as u64,
            labels: label_summaries(&results.processes),
            nodes: results.nodes.clone(),
            activities: Vec::new(),
        }
    }
}

/// One [`LabelSummary`] per label of `processes`.
pub fn label_summaries(processes: &[ProcessResult]) -> Vec<LabelSummary> {
    let mut by_label: BTreeMap<&str, Vec<&ProcessResult>> = BTreeMap::new();
    for p in processes {
        by_label.entry(&p.label).or_default().push(p);
    }
    by_label
        .into_values()
        .map(|group| {
            let stats =
                |field: fn(&ProcessResult) -> f64| Stats::of(group.iter().map(|p| field(p)).collect());
            LabelSummary {
                label: group[0].label.clone(),
                count: group.len() as u64,
                finish: stats(|p| p.finish_time),
                compute: stats(|p| p.compute_time),
                wait: stats(|p| p.wait_time),
            }
        })
        .collect()
}
