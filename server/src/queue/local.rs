//! The embedded queue: in-process workers claim queued runs from the database, woken when a
//! run is submitted. Nothing to install; a restart picks up where the last process stopped.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{watch, Notify};

use crate::execute::execute;
use crate::storage::Store;

/// Claims and executes runs until `stop` turns true, finishing the run in hand first.
pub async fn worker(store: Store, name: String, wake: Arc<Notify>, mut stop: watch::Receiver<bool>) {
    while !*stop.borrow() {
        match store.claim_next(None).await {
            Ok(Some(id)) => {
                if let Err(e) = execute(&store, &id, &name).await {
                    tracing::error!(run = %id, "storing the outcome failed: {e:#}");
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
