//! Scripted processes take turns on one stack (`hetsim_scripting::stack`): many of them, deep
//! frames kept across other processes' turns, and suspended ones unwound when a run fails.

mod common;

use std::collections::BTreeMap;

use common::{labels, system_from};
use hetsim_scripting::{run, RunOptions, RunReport};

/// One node entry standing for `count` machines, each with one `W` process.
fn run_on_many(app: &str, count: u64) -> Result<RunReport, String> {
    let system = system_from(
        &format!(
            r#"
            [[component]]
            name = "cpu"
            kind = "CPU"
            attributes = {{ performance = 1e9 }}
            [[node]]
            id = "n"
            component = "cpu"
            count = {count}
            internal = "InfiniBand NDR 400G"
            model = "cpu-flops"
            labels = {{ W = 1 }}
            "#
        ),
        "many.toml",
    );
    run(
        app,
        "test.rhai",
        &system,
        &labels(&[("W", count)]),
        &BTreeMap::new(),
        &RunOptions::default(),
    )
    .map_err(String::from)
}

#[test]
fn more_scripted_processes_than_the_old_per_process_stacks_allowed_run_to_the_end() {
    // Stacks of their own (two memory mappings each) stopped a run at about 32,700
    // processes under Linux's default vm.max_map_count of 65,530.
    let n = 40_000;
    let app = r#"
        sim.sleep(rank * 1e-6);
        sim.send(8, ["W", (rank + 1) % labels["W"]]);
        let m = sim.receive("any");
        if m.from_rank != (rank + labels["W"] - 1) % labels["W"] { throw "wrong sender"; }
    "#;
    let report = run_on_many(app, n).unwrap();
    assert_eq!(report.results.processes.len(), n as usize);
    // The last sender's time, plus at most every 8-byte message in turn on the units'
    // internal link (NDR, 50 GB/s, no startup).
    let last = (n - 1) as f64 * 1e-6;
    let overall = report.results.overall_time;
    assert!(
        overall >= last && overall <= last + n as f64 * 8.0 / 50e9,
        "{overall}"
    );
}

#[test]
fn frames_deep_in_recursion_survive_the_other_processes_turns() {
    // Each process suspends at every level of a recursion whose depth depends on its rank,
    // and the processes' sleeps interleave them, so each resumes on frames another left.
    let app = r#"
        fn descend(level, rank, sim) {
            if level == 0 { return rank; }
            sim.sleep(((rank * 7 + level * 3) % 11) * 1e-3);
            let below = descend(level - 1, rank, sim);
            below + level * (rank + 1)
        }
        let depth = 5 + rank % 20;
        let got = descend(depth, rank, sim);
        sim.log(`${rank} ${got}`);
    "#;
    let n = 60;
    let report = run_on_many(app, n).unwrap();
    let mut got: Vec<(i64, i64)> = report
        .log
        .iter()
        .map(|line| {
            let mut words = line.rsplit(' ');
            let value = words.next().unwrap().parse().unwrap();
            (words.next().unwrap().parse().unwrap(), value)
        })
        .collect();
    got.sort();
    let expected: Vec<(i64, i64)> = (0..n as i64)
        .map(|rank| {
            let depth = 5 + rank % 20;
            (rank, rank + (rank + 1) * depth * (depth + 1) / 2)
        })
        .collect();
    assert_eq!(got, expected);
}

#[test]
fn a_failing_process_ends_the_run_and_the_suspended_ones_unwind() {
    let app = r#"
        if rank == 7 {
            sim.sleep(1.0);
            throw "boom";
        }
        let scratch = [rank, rank * 2, "kept on the stack"];
        sim.receive("any");
    "#;
    let err = run_on_many(app, 100).unwrap_err();
    assert!(err.contains("boom") && err.contains("W[7]"), "{err}");
}

#[test]
fn suspended_processes_that_catch_the_runs_end_still_end_and_the_first_failure_stands() {
    // At a run's end each suspended process's pending `sim` call fails; a script that
    // catches that and calls `sim` again is unwound after a few tries.
    let app = r#"
        if rank == 7 {
            sim.sleep(1.0);
            throw "boom";
        }
        loop {
            try { sim.receive("any"); } catch (e) { sim.log(e); }
        }
    "#;
    let err = run_on_many(app, 100).unwrap_err();
    assert!(err.contains("boom") && err.contains("W[7]"), "{err}");
}
