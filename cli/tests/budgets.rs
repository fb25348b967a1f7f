//! Per-run budgets with real processes on the machine's PostgreSQL and RabbitMQ: a run over
//! its memory budget and a run over its wall-time budget each fail naming the limit, and
//! their worker goes on to the next run. Tests fail when CI=true and the services are
//! missing; elsewhere they skip with a message on stderr.

mod common;

use common::fixture::*;
use common::*;

/// `mode = "hoard"` keeps 64 KiB more at every step; `"spin"` holds the CPU for a long
/// while (yielding to the simulator, so that no sandbox slice limit stops it first); any
/// other mode is a small run.
const GREEDY_APP: &str = r#"
if mode == "hoard" {
    let kept = [];
    for i in 0..200 { let block = []; block.pad(4096, 0); kept.push(block); sim.sleep(0.001); }
} else if mode == "spin" {
    let n = 0;
    for i in 0..100000000 { for j in 0..2000 { n += j; } sim.sleep(0.001); }
}
sim.compute(#{ ops: 1e9 });
"#;

#[test]
fn runs_over_their_memory_or_time_budget_fail_naming_it_and_the_worker_goes_on() {
    if !services() {
        return;
    }
    let fixture = Fixture::new("budgets");
    let (db, queue) = (fixture.db.clone(), fixture.queue.clone());
    let (_server, port) = broker_server(&db);
    let mut args = worker_args(&db, AMQP, &queue, "bounded");
    args.extend(["--max-run-memory", "8MiB", "--max-run-seconds", "3"]);
    let _worker = hetsim(&args, &[]);
    let app = scratch().join("greedy.rhai");
    std::fs::write(&app, GREEDY_APP).unwrap();
    let sweep = sweep_of_app(port, &queue, &app, &["mode=hoard,spin,small"]);
    let summary = finished_sweep(port, &sweep, 3);
    assert_eq!(
        (summary["done"].as_u64(), summary["failed"].as_u64()),
        (Some(1), Some(2)),
        "{summary}"
    );
    let runs = runs_of(port, &sweep);
    let by_mode = |mode: &str| {
        runs.iter()
            .find(|r| r["variables"]["mode"] == mode)
            .unwrap_or_else(|| panic!("a {mode} run in {runs:?}"))
    };
    let hoard = by_mode("hoard");
    let error = hoard["error"].as_str().unwrap();
    assert!(
        error.contains("over its budget of 8.0 MiB (limit max_run_memory)"),
        "{error}"
    );
    let spin = by_mode("spin");
    let error = spin["error"].as_str().unwrap();
    assert!(
        error.contains("wall-time budget of 3 s (limit --max-run-seconds)"),
        "{error}"
    );
    let small = by_mode("small");
    assert_eq!(small["status"], "done", "{small}");
    for run in &runs {
        assert_eq!(
            (&run["worker"], &run["attempts"]),
            (&"bounded".into(), &1.into()),
            "one worker, one attempt each: {run}"
        );
    }
}
