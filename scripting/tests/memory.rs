//! A run's memory budget (`hetsim_scripting::memory`), with the counting allocator installed
//! as this test binary's global allocator, as the `hetsim` binary installs it: a script that
//! piles up data and a run that places many processes each fail naming the limit, the same
//! runs pass without a budget, and the thread is free of the budget after the run.

mod common;

use common::{labels, small_system};
use hetsim_scripting::memory::{counting, over_budget, CountingAllocator};
use hetsim_scripting::{run, Limits, RunOptions};

#[global_allocator]
static ALLOCATOR: CountingAllocator<std::alloc::System> = CountingAllocator(std::alloc::System);

/// Each process keeps 200 arrays of 4,096 values (16 bytes each): 12.5 MiB.
const HOARDER: &str = r#"
let kept = [];
for i in 0..200 {
    let block = [];
    block.pad(4096, 0);
    kept.push(block);
    sim.sleep(0.001);
}
"#;

fn options(budget: Option<u64>) -> RunOptions {
    RunOptions {
        limits: Limits {
            max_run_memory: budget,
            ..Limits::default()
        },
        ..RunOptions::default()
    }
}

#[test]
fn this_binary_counts_allocations() {
    assert!(counting());
}

#[test]
fn a_script_over_its_memory_budget_fails_naming_the_limit() {
    let system = small_system();
    let run_with = |budget| {
        run(
            HOARDER,
            "hoarder.rhai",
            &system,
            &labels(&[("P", 4), ("Q", 4)]),
            &Default::default(),
            &options(budget),
        )
    };
    let error = run_with(Some(8 << 20)).unwrap_err().to_string();
    assert!(
        error.contains("over its budget of 8.0 MiB") && error.contains("max_run_memory"),
        "{error}"
    );
    assert_eq!(over_budget(), None, "the budget ends with its run");
    let report = run_with(None).expect("without a budget the run passes");
    assert_eq!(report.results.processes.len(), 8);
    run_with(Some(1 << 30)).expect("a large budget holds it");
}

#[test]
fn placing_more_processes_than_the_budget_holds_fails_before_any_script_runs() {
    let system = common::system_from(
        r#"
        [[component]]
        name = "cpu"
        kind = "CPU"
        attributes = { performance = 1e9 }

        [[node]]
        id = "n"
        component = "cpu"
        model = "cpu-flops"
        labels = { P = 200000 }
        "#,
        "many.toml",
    );
    let error = run(
        "sim.sleep(1.0);",
        "app.rhai",
        &system,
        &labels(&[("P", 200_000)]),
        &Default::default(),
        &options(Some(8 << 20)),
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("max_run_memory"), "{error}");
}
