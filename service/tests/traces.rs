//! Stored Chakra traces against real SQLite and PostgreSQL: stored, listed, replaced and
//! deleted with their bytes intact; a bad trace refused naming the file, the rank and the
//! node; a submission of a stored trace replayed by a worker to the time a local replay
//! gives.
//!
//! The PostgreSQL test needs it on 127.0.0.1:5432 (trust auth, as CI has it): under CI=true
//! it fails without it; elsewhere it skips with a loud message.

mod common;

use std::path::PathBuf;

use common::{postgres, sqlite_url};
use hetsim_service::budgets::RunBudgets;
use hetsim_service::execute::execute;
use hetsim_service::limits::ServiceLimits;
use hetsim_service::status::RunStatus;
use hetsim_service::storage::{check_trace, RankBreakdown, Store, TraceFile, TraceRefused};
use hetsim_service::submit::{RunSpec, Submission};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The ranks of the shipped example trace.
fn paths() -> Vec<PathBuf> {
    hetsim_chakra::rank_files(&repo().join("examples/traces/dp-step")).unwrap()
}

fn dp_step() -> Vec<TraceFile> {
    paths()
        .iter()
        .map(|p| TraceFile {
            name: p.file_name().unwrap().to_string_lossy().into_owned(),
            data: std::fs::read(p).unwrap(),
        })
        .collect()
}

const SYSTEM: &str = "examples/training-8gpu/system.toml";

/// The report `hetsim replay` gives the example trace on the example system.
fn local_replay() -> hetsim_replay::ReplayReport {
    local_replay_under("replay")
}

/// The report `hetsim replay --compute POLICY` gives the example trace on the example system.
fn local_replay_under(policy: &str) -> hetsim_replay::ReplayReport {
    let system = hetsim_system::load(&repo().join(SYSTEM)).unwrap();
    let options = hetsim_replay::ReplayOptions {
        policy: hetsim_replay::Policy::parse(policy).unwrap(),
        policy_text: policy.to_owned(),
        ..Default::default()
    };
    hetsim_replay::replay(&paths(), &system, &options).unwrap()
}

async fn stores_reads_replaces_and_deletes(url: &str) {
    let store = Store::connect(url).await.unwrap();
    let files = dp_step();
    let nodes = check_trace("dp-step", &files).unwrap();
    assert_eq!(nodes, vec![17; 8], "17 nodes a rank");
    let (stored, replaced) = store.put_trace("dp-step", &files, &nodes).await.unwrap();
    assert!(!replaced);
    assert_eq!((stored.ranks, stored.nodes), (8, 136));
    assert_eq!(stored.files[3].name, "dp-step.3.et");
    assert_eq!(stored.files[3].bytes, files[3].data.len() as u64);
    assert_eq!(
        store.trace_files(&stored.id).await.unwrap(),
        files,
        "the bytes come back"
    );
    assert_eq!(store.trace(&stored.id).await.unwrap().as_ref(), Some(&stored));

    // Stored again under its name: the files replaced, the id kept.
    let (again, replaced) = store
        .put_trace("dp-step", &files[..2], &nodes[..2])
        .await
        .unwrap();
    assert!(replaced);
    assert_eq!(
        (again.id.as_str(), again.ranks, again.nodes),
        (stored.id.as_str(), 2, 34)
    );
    assert_eq!(store.traces().await.unwrap().len(), 1);

    assert!(store.delete_trace(&stored.id).await.unwrap());
    assert!(store.trace("dp-step").await.unwrap().is_none());
    assert!(store.trace_files(&stored.id).await.unwrap().is_empty());
    assert!(!store.delete_trace(&stored.id).await.unwrap());
}

/// A truncated rank file is refused with the reader's error naming the file, the rank and
/// where it stopped; nothing is stored.
#[test]
fn a_truncated_rank_is_refused_naming_file_and_rank() {
    let mut files = dp_step();
    let half = files[5].data.len() / 2;
    files[5].data.truncate(half);
    let refused = check_trace("broken", &files).unwrap_err();
    assert!(matches!(refused, TraceRefused::Read(_)), "{refused:?}");
    let message = refused.to_string();
    assert!(
        message.contains("dp-step.5.et") && message.contains("rank 5"),
        "{message}"
    );
    assert_eq!(refused.field(), "files");
    assert!(matches!(check_trace("", &dp_step()), Err(TraceRefused::NoName)));
    assert!(matches!(check_trace("empty", &[]), Err(TraceRefused::NoFiles)));
    // Two ranks' files of one name would overwrite each other when written out.
    let mut files = dp_step();
    files[3].name = "elsewhere/dp-step.1.et".to_owned();
    let refused = check_trace("clash", &files).unwrap_err();
    assert_eq!(
        refused.to_string(),
        "ranks 1 and 3 have files of one name, \"dp-step.1.et\": give each rank its own"
    );
}

/// A submission of the stored trace runs to `done` with the overall time and per-rank
/// breakdown of a local replay (stored in the result's `ranks`), and one naming a policy a server cannot apply, or too many ranks, is refused.
async fn a_submitted_trace_replays_like_a_local_one(url: &str) {
    let store = Store::connect(url).await.unwrap();
    let files = dp_step();
    let nodes = check_trace("dp-step", &files).unwrap();
    store.put_trace("dp-step", &files, &nodes).await.unwrap();
    let system = std::fs::read_to_string(repo().join(SYSTEM)).unwrap();
    let submission = |compute: &str| -> Submission {
        serde_json::from_value(serde_json::json!({
            "trace_name": "dp-step", "compute": compute, "system": system,
        }))
        .unwrap()
    };
    let limits = ServiceLimits::default();
    let spec = RunSpec::check(&store, &limits, submission("replay"), false)
        .await
        .unwrap();
    let runs = spec.runs();
    store
        .insert_runs(&spec.queue, &spec.input, &runs, None, None)
        .await
        .unwrap();
    execute(&store, &runs[0].id, "w", None, &RunBudgets::default())
        .await
        .unwrap();
    let run = store.run(&runs[0].id).await.unwrap().unwrap();
    assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
    let result = run.result.unwrap();
    let local = local_replay();
    assert_eq!(
        result["overall_time"].as_f64().unwrap(),
        local.run.results.overall_time
    );
    let ranks: Vec<RankBreakdown> = serde_json::from_value(result["ranks"].clone()).unwrap();
    assert_eq!(ranks.len(), 8, "one row a rank");
    for (stored, local) in ranks.iter().zip(&local.ranks) {
        assert_eq!(
            (stored.rank, stored.nodes, stored.ran),
            (local.rank, 17, 17),
            "every node of the rank's file ran"
        );
        let times = [
            stored.finish_time,
            stored.compute_time,
            stored.comm_time,
            stored.exposed_comm,
            stored.cpu_time,
        ];
        let expected = [
            local.finish_time,
            local.compute_time,
            local.comm_time,
            local.exposed_comm,
            local.cpu_time,
        ];
        assert_eq!(times, expected, "rank {}", stored.rank);
        assert!(stored.compute_time > 0.0 && stored.comm_time > 0.0, "{stored:?}");
    }
    let log = store.run_output(&runs[0].id).await.unwrap().unwrap().log;
    assert!(log.contains("rank 7: 17 of 17 nodes ran"), "{log}");

    let refused = RunSpec::check(&store, &limits, submission("model:mine.rhai"), false)
        .await
        .unwrap_err();
    assert_eq!(refused.field(), "compute");
    let small: Submission = serde_json::from_value(serde_json::json!({
        "trace_name": "dp-step",
        "system": "[[node]]\nid = \"g\"\ncomponent = \"H100 SXM5 80GB\"\nmodel = \"gpu-volkov\"\nlabels = { GPU = 1 }\n",
    }))
    .unwrap();
    let refused = RunSpec::check(&store, &limits, small, false).await.unwrap_err();
    assert_eq!(refused.field(), "trace_name");
    assert!(refused.to_string().contains("8 ranks"), "{refused}");
}

/// A sweep over two compute policies queues a run for each, the policy its variable
/// `compute`, and each replays to the time a local replay under that policy gives; a list
/// outside a sweep, an empty one, or a policy as a variable is refused.
async fn a_sweep_varies_the_compute_policy(url: &str) {
    let store = Store::connect(url).await.unwrap();
    let files = dp_step();
    let nodes = check_trace("dp-step", &files).unwrap();
    store.put_trace("dp-step", &files, &nodes).await.unwrap();
    let system = std::fs::read_to_string(repo().join(SYSTEM)).unwrap();
    let submission = |compute: serde_json::Value, variables: serde_json::Value| -> Submission {
        serde_json::from_value(serde_json::json!({
            "trace_name": "dp-step", "compute": compute, "system": system, "variables": variables,
        }))
        .unwrap()
    };
    let limits = ServiceLimits::default();
    let policies = serde_json::json!(["replay", "roofline"]);
    let spec = RunSpec::check(
        &store,
        &limits,
        submission(policies.clone(), serde_json::json!({})),
        true,
    )
    .await
    .unwrap();
    let runs = spec.runs();
    assert_eq!(runs.len(), 2);
    store
        .insert_runs(&spec.queue, &spec.input, &runs, None, None)
        .await
        .unwrap();
    let mut times = Vec::new();
    for (new, policy) in runs.iter().zip(["replay", "roofline"]) {
        execute(&store, &new.id, "w", None, &RunBudgets::default())
            .await
            .unwrap();
        let run = store.run(&new.id).await.unwrap().unwrap();
        assert_eq!(run.status, RunStatus::Done, "{:?}", run.error);
        assert_eq!(run.variables["compute"], policy);
        let time = run.result.unwrap()["overall_time"].as_f64().unwrap();
        assert_eq!(
            time,
            local_replay_under(policy).run.results.overall_time,
            "{policy}"
        );
        times.push(time);
    }
    assert_ne!(
        times[0], times[1],
        "roofline re-times the GEMMs that replay keeps"
    );

    let refused = |compute, variables, sweep| {
        let sub = submission(compute, variables);
        let store = &store;
        let limits = &limits;
        async move { RunSpec::check(store, limits, sub, sweep).await.unwrap_err() }
    };
    let e = refused(policies, serde_json::json!({}), false).await;
    assert_eq!(
        (e.field(), e.to_string().as_str()),
        ("compute", "a list is allowed only in a sweep")
    );
    let e = refused(serde_json::json!([]), serde_json::json!({}), true).await;
    assert_eq!((e.field(), e.to_string().as_str()), ("compute", "an empty list"));
    let e = refused(
        serde_json::json!("replay"),
        serde_json::json!({"compute": "roofline"}),
        true,
    )
    .await;
    assert_eq!(e.field(), "variables.compute");
}

#[tokio::test]
async fn sqlite_sweeps_a_trace_over_compute_policies() {
    a_sweep_varies_the_compute_policy(&sqlite_url()).await;
}

#[tokio::test]
async fn postgres_sweeps_a_trace_over_compute_policies() {
    if let Some(db) = postgres() {
        a_sweep_varies_the_compute_policy(&db.url).await;
    }
}

#[tokio::test]
async fn sqlite_stores_traces_and_replays_a_submitted_one() {
    stores_reads_replaces_and_deletes(&sqlite_url()).await;
    a_submitted_trace_replays_like_a_local_one(&sqlite_url()).await;
}

#[tokio::test]
async fn postgres_stores_traces_and_replays_a_submitted_one() {
    if let Some(db) = postgres() {
        stores_reads_replaces_and_deletes(&db.url).await;
        a_submitted_trace_replays_like_a_local_one(&db.url).await;
    }
}
