//! Leases against real SQLite and PostgreSQL: a claim's attempt fences every later write, an
//! expired lease is taken back (re-published, or failed once its attempts are used up), a
//! live one is not, and a dead letter fails only a run still queued under its message.
//!
//! The PostgreSQL tests need it on 127.0.0.1:5432 (trust auth, as CI has it): under CI=true
//! they fail without it; elsewhere they skip with a loud message.

mod common;

use std::time::Duration;

use common::{postgres, queued_run, running_run, sqlite_url};
use hetsim_service::limits::Attempts;
use hetsim_service::status::RunStatus;
use hetsim_service::storage::{Lease, Reclaimed, RunOutput, Store};
use hetsim_simulator::{Results, Summary};

/// A lease that has expired by the time the next statement runs.
const PASSED: Duration = Duration::from_millis(1);

fn output() -> RunOutput {
    let results = Results {
        overall_time: 1.0,
        overall_time_interval: [1.0, 1.0],
        total_energy: 0.0,
        failure_chance: 0.0,
        events: 1,
        processes: Vec::new(),
        nodes: Vec::new(),
        trace: None,
        trace_dropped: 0,
    };
    RunOutput {
        summary: Summary::of(&results),
        processes: Vec::new(),
        trace: None,
        trace_dropped: 0,
        log: String::new(),
        ranks: Vec::new(),
    }
}

async fn claim_expired(store: &Store, id: &str, publication: Option<i64>) -> Lease {
    let lease = store
        .claim(id, "w", publication, PASSED)
        .await
        .unwrap()
        .expect("claimed");
    tokio::time::sleep(Duration::from_millis(5)).await;
    lease
}

async fn fences_writes_and_takes_back_expired_runs(url: &str) {
    let store = Store::connect(url).await.unwrap();
    let attempts: Attempts = "3".parse().unwrap();

    // A held lease: no second claim, renewals work, the reaper leaves it.
    let held = running_run(&store).await;
    assert_eq!(held.attempt, 1);
    assert_eq!(store.claim(&held.run, "other", None, PASSED).await.unwrap(), None);
    assert!(store.renew(&held, Duration::from_secs(60)).await.unwrap());
    assert_eq!(
        store.reclaim_expired(attempts).await.unwrap(),
        Reclaimed::default()
    );

    // An expired lease goes back to the queue under publication 1.
    let id = queued_run(&store).await;
    let stale = claim_expired(&store, &id, Some(0)).await;
    assert_eq!(
        store.reclaim_expired(attempts).await.unwrap(),
        Reclaimed {
            requeued: 1,
            failed: 0
        }
    );
    assert_eq!(store.status(&id).await.unwrap(), Some(RunStatus::Queued));
    // The stale holder can neither renew, nor finish, nor fail it.
    assert!(!store.renew(&stale, Duration::from_secs(60)).await.unwrap());
    assert!(!store.finish_run(&stale, &output()).await.unwrap());
    assert!(!store.fail_attempt(&stale, "late").await.unwrap());
    // Its old message is dropped; the new one claims attempt 2, which alone may finish.
    assert_eq!(store.claim(&id, "w2", Some(0), PASSED).await.unwrap(), None);
    let fresh = store
        .claim(&id, "w2", Some(1), Duration::from_secs(60))
        .await
        .unwrap()
        .expect("the re-published message claims the run");
    assert_eq!(fresh.attempt, 2);
    assert!(!store.finish_run(&stale, &output()).await.unwrap());
    assert!(store.finish_run(&fresh, &output()).await.unwrap());
    assert!(
        !store.finish_run(&fresh, &output()).await.unwrap(),
        "written once"
    );
    let run = store.run(&id).await.unwrap().unwrap();
    assert_eq!(
        (run.status, run.attempts, run.worker.as_deref()),
        (RunStatus::Done, 2, Some("w2"))
    );
    assert!(run.result.is_some());
    assert!(
        !store.fail_attempt(&fresh, "late").await.unwrap(),
        "a done run stays done"
    );
}

async fn fails_a_run_whose_last_attempt_expired(url: &str) {
    let store = Store::connect(url).await.unwrap();
    let attempts: Attempts = "2".parse().unwrap();
    let id = queued_run(&store).await;
    claim_expired(&store, &id, None).await;
    assert_eq!(store.reclaim_expired(attempts).await.unwrap().requeued, 1);
    claim_expired(&store, &id, None).await;
    assert_eq!(
        store.reclaim_expired(attempts).await.unwrap(),
        Reclaimed {
            requeued: 0,
            failed: 1
        }
    );
    let run = store.run(&id).await.unwrap().unwrap();
    assert_eq!((run.status, run.attempts), (RunStatus::Failed, 2));
    assert!(run.error.unwrap().contains("--max-attempts 2"));
}

async fn a_dead_letter_fails_only_a_queued_run_of_its_publication(url: &str) {
    let store = Store::connect(url).await.unwrap();
    let held = running_run(&store).await;
    store.fail_dead_letter(&held.run, None, "given up").await.unwrap();
    assert_eq!(store.status(&held.run).await.unwrap(), Some(RunStatus::Running));
    let id = queued_run(&store).await;
    store.fail_dead_letter(&id, Some(7), "given up").await.unwrap();
    assert_eq!(store.status(&id).await.unwrap(), Some(RunStatus::Queued));
    store.fail_dead_letter(&id, Some(0), "given up").await.unwrap();
    assert_eq!(store.status(&id).await.unwrap(), Some(RunStatus::Failed));
}

#[tokio::test]
async fn sqlite_leases_fence_writes_and_expired_ones_are_taken_back() {
    fences_writes_and_takes_back_expired_runs(&sqlite_url()).await;
    fails_a_run_whose_last_attempt_expired(&sqlite_url()).await;
    a_dead_letter_fails_only_a_queued_run_of_its_publication(&sqlite_url()).await;
}

#[tokio::test]
async fn postgres_leases_fence_writes_and_expired_ones_are_taken_back() {
    if let Some(db) = postgres() {
        fences_writes_and_takes_back_expired_runs(&db.url).await;
        fails_a_run_whose_last_attempt_expired(&db.url).await;
        a_dead_letter_fails_only_a_queued_run_of_its_publication(&db.url).await;
    }
}
