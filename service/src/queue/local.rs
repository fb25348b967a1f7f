//! The embedded queue: in-process workers claim queued runs from the database, woken when a
//! run is submitted. Nothing to install; a restart picks up where the last process stopped.
//! The database is the queue, so no message can be lost; a run whose worker died with its
//! server is taken back when its lease expires (`crate::reclaim`).

use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use futures_util::future::BoxFuture;
use tokio::sync::{watch, Notify};
use tokio::task::JoinSet;

use super::RunQueue;
use crate::budgets::RunBudgets;
use crate::execute::run_claimed;
use crate::storage::Store;

pub struct Embedded {
    /// In-process workers.
    pub workers: usize,
    /// The name workers are known by in the runs they take (`NAME-local-I`).
    pub name: String,
    pub wake: Arc<Notify>,
    pub budgets: RunBudgets,
}

impl RunQueue for Embedded {
    fn start(&self, tasks: &mut JoinSet<()>, store: &Store, stop: &watch::Receiver<bool>) {
        for i in 0..self.workers {
            let name = format!("{}-local-{i}", self.name);
            tasks.spawn(worker(
                store.clone(),
                name,
                self.budgets,
                self.wake.clone(),
                stop.clone(),
            ));
        }
    }

    fn submitted(&self) {
        self.wake.notify_waiters();
    }

    fn broker_health(&self) -> Option<BoxFuture<'static, Result<()>>> {
        None
    }

    fn describe(&self) -> &'static str {
        "in-process queue"
    }
}

/// Claims and executes runs until `stop` turns true, finishing the run in hand first.
async fn worker(
    store: Store,
    name: String,
    budgets: RunBudgets,
    wake: Arc<Notify>,
    mut stop: watch::Receiver<bool>,
) {
    while !*stop.borrow() {
        match store.claim_next(&name, budgets.lease).await {
            Ok(Some(lease)) => {
                if let Err(e) = run_claimed(&store, &lease, &budgets).await {
                    tracing::error!(run = %lease.run, "storing the outcome failed: {e:#}");
                }
            }
            Ok(None) => {
                tokio::select! {
                    _ = wake.notified() => {}
                    _ = tokio::time::sleep(Duration::from_millis(500)) => {}
                    _ = stop.changed() => {}
                }
            }
            Err(e) => {
                tracing::warn!("claiming a run failed, retrying: {e:#}");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
}
