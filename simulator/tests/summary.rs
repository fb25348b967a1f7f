//! The summary level of a report: its statistics and its size, which must not grow with the
//! processes.

use std::sync::Arc;

use hetsim_simulator::{ProcessResult, Results, Stats, Summary};
use proptest::prelude::*;

fn process(pid: usize, label: &str, finish: f64) -> ProcessResult {
    ProcessResult {
        pid,
        label: Arc::from(label),
        rank: pid as u64,
        node: Arc::from("n"),
        finish_time: finish,
        finish_interval: [finish, finish],
        compute_time: finish / 2.0,
        wait_time: finish / 4.0,
    }
}

fn results(processes: Vec<ProcessResult>) -> Results {
    Results {
        overall_time: processes.iter().map(|p| p.finish_time).fold(0.0, f64::max),
        overall_time_interval: [0.0, 0.0],
        total_energy: 0.0,
        failure_chance: 0.0,
        events: 0,
        processes,
        nodes: Vec::new(),
        trace: None,
        trace_dropped: 0,
    }
}

#[test]
fn nearest_rank_percentiles_of_one_to_a_hundred() {
    let stats = Stats::of((1..=100).rev().map(f64::from).collect());
    assert_eq!(
        stats,
        Stats {
            min: 1.0,
            mean: 50.5,
            p50: 50.0,
            p99: 99.0,
            max: 100.0
        }
    );
    assert_eq!(Stats::of(vec![7.0]).p99, 7.0);
    assert_eq!(Stats::of(Vec::new()), Stats::default());
}

#[test]
fn one_row_per_label_sorted_by_name() {
    let summary = Summary::of(&results(vec![
        process(0, "Worker", 2.0),
        process(1, "Master", 1.0),
        process(2, "Worker", 4.0),
    ]));
    let labels: Vec<_> = summary.labels.iter().map(|l| (&*l.label, l.count)).collect();
    assert_eq!(labels, [("Master", 1), ("Worker", 2)]);
    assert_eq!(summary.labels[1].finish.mean, 3.0);
    assert_eq!(summary.labels[1].compute.max, 2.0);
    assert_eq!(summary.labels[1].wait.min, 0.5);
    assert_eq!(summary.processes, 3);
}

/// The serialized summary of `n` processes of two labels, with finish times drawn from the
/// same few values so that the numbers' digits do not vary with `n`.
fn summary_bytes(n: usize) -> usize {
    let processes = (0..n)
        .map(|pid| process(pid, if pid == 0 { "Master" } else { "Worker" }, (pid % 4) as f64))
        .collect();
    serde_json::to_string(&Summary::of(&results(processes)))
        .unwrap()
        .len()
}

#[test]
fn the_summary_of_a_hundred_thousand_processes_is_as_big_as_that_of_ten() {
    let small = summary_bytes(10);
    let large = summary_bytes(100_000);
    assert!(
        large <= small + 16,
        "{small} bytes for 10 processes, {large} for 100,000"
    );
    assert!(large < 2048, "{large} bytes");
}

proptest! {
    #[test]
    fn statistics_are_ordered(values in prop::collection::vec(-1e6f64..1e6, 1..200)) {
        let s = Stats::of(values);
        prop_assert!(s.min <= s.p50 && s.p50 <= s.p99 && s.p99 <= s.max);
        // The mean of values within [min, max] lies there, up to the sum's rounding.
        prop_assert!(s.min - 1e-6 <= s.mean && s.mean <= s.max + 1e-6);
    }

    #[test]
    fn label_counts_add_up(labels in prop::collection::vec(0u8..5, 1..300)) {
        let processes = labels.iter().enumerate().map(|(pid, l)| process(pid, &format!("L{l}"), pid as f64)).collect();
        let summary = Summary::of(&results(processes));
        prop_assert_eq!(summary.labels.iter().map(|l| l.count).sum::<u64>(), labels.len() as u64);
        let distinct: std::collections::BTreeSet<_> = labels.iter().collect();
        prop_assert_eq!(summary.labels.len(), distinct.len());
    }
}
