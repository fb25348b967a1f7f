//! What the store's tests share: fresh SQLite files and PostgreSQL databases (the latter
//! failing under CI=true when PostgreSQL is missing, skipping loudly elsewhere), and runs
//! queued and claimed as a worker would.
#![allow(dead_code)] // each test file uses its own part

use std::collections::BTreeMap;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use hetsim_service::storage::{Lease, NewInput, NewRun, Store};
use hetsim_tests::services::{available_or_skip, in_ci};

static N: AtomicU32 = AtomicU32::new(0);

pub fn unique(prefix: &str) -> String {
    format!(
        "{prefix}_{}_{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    )
}

pub fn sqlite_url() -> String {
    let dir = std::env::temp_dir().join(unique("hetsim-results"));
    std::fs::create_dir_all(&dir).unwrap();
    format!("sqlite://{}?mode=rwc", dir.join("runs.db").display())
}

fn psql(sql: &str) -> bool {
    Command::new("psql")
        .env("PGOPTIONS", "--client-min-messages=warning")
        .args(["-h", "127.0.0.1", "-U", "postgres", "-d", "postgres", "-qc", sql])
        .status()
        .is_ok_and(|s| s.success())
}

/// A fresh PostgreSQL database, dropped with this.
pub struct Database {
    pub name: String,
    pub url: String,
}

impl Drop for Database {
    fn drop(&mut self) {
        psql(&format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name));
    }
}

/// A fresh PostgreSQL database; `None` (with a loud message) where PostgreSQL is not there
/// outside CI.
pub fn postgres() -> Option<Database> {
    let name = unique("hetsim_results");
    let created = psql(&format!("CREATE DATABASE {name}"));
    let what = "PostgreSQL on 127.0.0.1:5432 does not take CREATE DATABASE";
    available_or_skip(created, what, in_ci()).then(|| Database {
        url: format!("postgres://postgres@127.0.0.1/{name}"),
        name,
    })
}

/// Queues one run (id returned) without claiming it.
pub async fn queued_run(store: &Store) -> String {
    let id = unique("run");
    let input = NewInput {
        id: unique("input"),
        app: "sim.sleep(1.0);".into(),
        system: "{}".into(),
        trace: false,
        replay: None,
    };
    let run = NewRun {
        id: id.clone(),
        labels: BTreeMap::new(),
        variables: BTreeMap::new(),
    };
    store
        .insert_runs("default", &input, &[run], None, None)
        .await
        .unwrap();
    id
}

/// Queues one run and claims it for a minute, as a worker would.
pub async fn running_run(store: &Store) -> Lease {
    let id = queued_run(store).await;
    store
        .claim(&id, "w", None, Duration::from_secs(60))
        .await
        .unwrap()
        .expect("a queued run is claimed")
}
