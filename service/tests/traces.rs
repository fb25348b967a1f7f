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
use hetsim_service::storage::{check_trace, Store, TraceFile, TraceRefused};
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

/// The overall time `hetsim replay` gives the example trace on the example system.
fn local_time() -> f64 {
    let system = hetsim_system::load(&repo().join(SYSTEM)).unwrap();
    let report = hetsim_replay::replay(&paths(), &system, &Default::default()).unwrap();
    report.run.results.overall_time
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

/// A submission of the stored trace runs to `done` with the overall time of a local replay,
/// and one naming a policy a server cannot apply, or too many ranks, is refused.
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
    let time = run.result.unwrap()["overall_time"].as_f64().unwrap();
    assert_eq!(time, local_time());
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
