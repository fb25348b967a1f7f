//! Leases: which worker holds a running run, until when, and under which attempt.
//!
//! Claiming a queued run makes it `running`, counts the attempt and sets `lease_until`; the
//! worker renews the lease while it simulates. The attempt number taken at the claim is the
//! fencing token of every later write (renewal, result, failure): once the reaper has taken
//! an expired run back and another worker has claimed it, the first worker's writes match no
//! row and change nothing. Only queued runs are claimed, so a broker message redelivered
//! while its run is held is dropped, and a run whose holder died waits for the reaper.

use std::time::Duration;

use sqlx::any::AnyRow;
use sqlx::Row;

use super::{now, ReplayInput, Result, RunInputs, Store};
use crate::limits::Attempts;

/// A claimed run: the fencing token of its worker's writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    pub run: String,
    /// The run's attempt this worker is making (its `attempts` after the claim).
    pub attempt: i64,
}

/// What one pass of the reaper did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reclaimed {
    /// Runs put back in the queue (and the outbox) for another attempt.
    pub requeued: u64,
    /// Runs failed because their last allowed attempt lost its lease.
    pub failed: u64,
}

/// `lease` from now, as the database stores times.
fn expiry(lease: Duration) -> String {
    let lease = chrono::Duration::from_std(lease).unwrap_or(chrono::Duration::MAX);
    let at = chrono::Utc::now()
        .checked_add_signed(lease)
        .unwrap_or(chrono::DateTime::<chrono::Utc>::MAX_UTC);
    at.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

/// The claim's SET clause: `$1` the worker, `$2` now, `$3` the lease's expiry.
const CLAIM: &str =
    "status = 'running', attempts = attempts + 1, worker = $1, started_at = $2, lease_until = $3";

/// The lease a claim's `RETURNING id, attempts` row gives.
fn claimed(row: &AnyRow) -> Result<Lease> {
    Ok(Lease {
        run: row.try_get("id")?,
        attempt: row.try_get("attempts")?,
    })
}

/// A running run whose lease passed, at time `$1`.
const EXPIRED: &str = "status = 'running' AND (lease_until IS NULL OR lease_until < $1)";

impl Store {
    /// Claims queued run `id` for `worker` for `lease`, if it is queued and (for a broker
    /// message) of the message's `publication`; `None` when it is not to be run here.
    pub async fn claim(
        &self,
        id: &str,
        worker: &str,
        publication: Option<i64>,
        lease: Duration,
    ) -> Result<Option<Lease>> {
        let sql = format!(
            "UPDATE runs SET {CLAIM} WHERE id = $4 AND status = 'queued' AND ($5 < 0 OR publication = $5) \
             RETURNING id, attempts"
        );
        let row = sqlx::query(&sql)
            .bind(worker)
            .bind(now())
            .bind(expiry(lease))
            .bind(id)
            .bind(publication.unwrap_or(-1))
            .fetch_optional(self.pool())
            .await?;
        row.as_ref().map(claimed).transpose()
    }

    /// Claims the oldest queued run of any queue for `worker` (the embedded, broker-less
    /// queue).
    pub async fn claim_next(&self, worker: &str, lease: Duration) -> Result<Option<Lease>> {
        let sql = format!(
            "UPDATE runs SET {CLAIM} WHERE id = (SELECT id FROM runs WHERE status = 'queued' \
             ORDER BY created_at, id LIMIT 1) AND status = 'queued' RETURNING id, attempts"
        );
        let row = sqlx::query(&sql)
            .bind(worker)
            .bind(now())
            .bind(expiry(lease))
            .fetch_optional(self.pool())
            .await?;
        row.as_ref().map(claimed).transpose()
    }

    /// What the holder of `lease` needs to simulate its run (`None`: the run was deleted).
    pub async fn run_inputs(&self, lease: &Lease) -> Result<Option<RunInputs>> {
        let row = sqlx::query(
            "SELECT i.app, i.system, i.trace, i.replay_trace_id, i.replay_compute, r.labels, r.variables FROM runs r \
             JOIN inputs i ON i.id = r.input_id WHERE r.id = $1",
        )
        .bind(&lease.run)
        .fetch_optional(self.pool())
        .await?;
        row.map(|row| {
            Ok(RunInputs {
                app: row.try_get("app")?,
                system: row.try_get("system")?,
                labels: row.try_get("labels")?,
                variables: row.try_get("variables")?,
                trace: row.try_get::<i64, _>("trace")? != 0,
                replay: match (row.try_get("replay_trace_id")?, row.try_get("replay_compute")?) {
                    (Some(trace_id), Some(compute)) => Some(ReplayInput { trace_id, compute }),
                    _ => None,
                },
            })
        })
        .transpose()
    }

    /// Extends `lease` to `duration` from now; false when it is no longer held (taken back
    /// by the reaper, cancelled, deleted).
    pub async fn renew(&self, lease: &Lease, duration: Duration) -> Result<bool> {
        Ok(sqlx::query(
            "UPDATE runs SET lease_until = $1 WHERE id = $2 AND attempts = $3 AND status = 'running'",
        )
        .bind(expiry(duration))
        .bind(&lease.run)
        .bind(lease.attempt)
        .execute(self.pool())
        .await?
        .rows_affected()
            > 0)
    }

    /// Whether `lease` is still held.
    pub async fn holds(&self, lease: &Lease) -> Result<bool> {
        Ok(
            sqlx::query("SELECT 1 AS held FROM runs WHERE id = $1 AND attempts = $2 AND status = 'running'")
                .bind(&lease.run)
                .bind(lease.attempt)
                .fetch_optional(self.pool())
                .await?
                .is_some(),
        )
    }

    /// Fails the run of `lease` with `error` if the lease is still held; returns whether it
    /// did (a lost lease's failure is discarded like its result).
    pub async fn fail_attempt(&self, lease: &Lease, error: &str) -> Result<bool> {
        Ok(sqlx::query(
            "UPDATE runs SET status = 'failed', error = $1, finished_at = $2, lease_until = NULL \
             WHERE id = $3 AND attempts = $4 AND status = 'running'",
        )
        .bind(error)
        .bind(now())
        .bind(&lease.run)
        .bind(lease.attempt)
        .execute(self.pool())
        .await?
        .rows_affected()
            > 0)
    }

    /// Fails queued run `id` whose broker message (of `publication`) the broker gave up on:
    /// a run that is held, finished or re-published meanwhile is left alone.
    pub async fn fail_dead_letter(&self, id: &str, publication: Option<i64>, error: &str) -> Result<()> {
        sqlx::query(
            "UPDATE runs SET status = 'failed', error = $1, finished_at = $2 \
             WHERE id = $3 AND status = 'queued' AND ($4 < 0 OR publication = $4)",
        )
        .bind(error)
        .bind(now())
        .bind(id)
        .bind(publication.unwrap_or(-1))
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Takes back the runs whose lease expired: each goes back to the queue under a new
    /// publication number (a message of its old one is then dropped), or fails once it has
    /// used up its `attempts`.
    pub async fn reclaim_expired(&self, attempts: Attempts) -> Result<Reclaimed> {
        let at = now();
        let mut tx = self.pool().begin().await?;
        let failed = sqlx::query(&format!(
            "UPDATE runs SET status = 'failed', error = $2, finished_at = $1, lease_until = NULL \
             WHERE {EXPIRED} AND attempts >= $3"
        ))
        .bind(&at)
        .bind(attempts.exhausted_message())
        .bind(attempts.get())
        .execute(&mut *tx)
        .await?
        .rows_affected();
        let requeued = sqlx::query(&format!(
            "UPDATE runs SET status = 'queued', lease_until = NULL, published = 0, \
             publication = publication + 1 WHERE {EXPIRED}"
        ))
        .bind(&at)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        tx.commit().await?;
        Ok(Reclaimed { requeued, failed })
    }
}
