//! Taking back runs whose lease expired (`storage::leases`): every server runs this, whatever
//! its queue holds, so a run whose worker died, froze or lost the database is retried (or,
//! its attempts used up, failed) within a lease and [`EVERY`].

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::limits::Attempts;
use crate::queue::RunQueue;
use crate::storage::Store;

/// How often the server looks for expired leases (one indexed query).
pub const EVERY: Duration = Duration::from_secs(1);

/// Takes back expired runs until `stop`, waking `queue`'s publisher or workers when it put
/// some back.
pub async fn reclaimer(
    store: Store,
    attempts: Attempts,
    queue: Arc<dyn RunQueue>,
    mut stop: watch::Receiver<bool>,
) {
    while !*stop.borrow() {
        match store.reclaim_expired(attempts).await {
            Ok(reclaimed) => {
                if reclaimed.requeued > 0 || reclaimed.failed > 0 {
                    tracing::warn!(
                        requeued = reclaimed.requeued,
                        failed = reclaimed.failed,
                        "took back runs whose lease expired (their worker died, froze or lost the database)"
                    );
                }
                if reclaimed.requeued > 0 {
                    queue.submitted();
                }
            }
            Err(e) => tracing::warn!("looking for expired leases: {e:#}"),
        }
        tokio::select! {
            _ = tokio::time::sleep(EVERY) => {}
            _ = stop.changed() => {}
        }
    }
}
