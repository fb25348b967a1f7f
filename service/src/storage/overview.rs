//! What the web UI's overview shows: queues with their runs per status, and the newest runs
//! and sweeps.

use super::Result;
use sqlx::Row;

use super::runs::{record, RUN_COLUMNS, RUN_TABLES};
use super::{RunRecord, Store};

/// How many runs of `queue` are in `status`.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueCount {
    pub queue: String,
    pub status: String,
    pub runs: i64,
}

/// A sweep as a list shows it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SweepRow {
    pub id: String,
    pub queue: String,
    pub created_at: String,
}

impl Store {
    pub async fn queue_counts(&self) -> Result<Vec<QueueCount>> {
        sqlx::query(
            "SELECT queue, status, COUNT(*) AS n FROM runs GROUP BY queue, status ORDER BY queue, status",
        )
        .fetch_all(self.pool())
        .await?
        .iter()
        .map(|row| {
            Ok(QueueCount {
                queue: row.try_get("queue")?,
                status: row.try_get("status")?,
                runs: row.try_get("n")?,
            })
        })
        .collect()
    }

    /// The newest `limit` runs submitted alone (not as part of a sweep), newest first.
    pub async fn recent_runs(&self, limit: i64) -> Result<Vec<RunRecord>> {
        let sql = format!(
            "SELECT {RUN_COLUMNS} FROM {RUN_TABLES} \
             WHERE r.sweep_id IS NULL ORDER BY r.created_at DESC, r.id DESC LIMIT $1"
        );
        sqlx::query(&sql)
            .bind(limit)
            .fetch_all(self.pool())
            .await?
            .iter()
            .map(record)
            .collect()
    }

    /// The newest `limit` sweeps, newest first.
    pub async fn recent_sweeps(&self, limit: i64) -> Result<Vec<SweepRow>> {
        sqlx::query("SELECT id, queue, created_at FROM sweeps ORDER BY created_at DESC, id DESC LIMIT $1")
            .bind(limit)
            .fetch_all(self.pool())
            .await?
            .iter()
            .map(|row| {
                Ok(SweepRow {
                    id: row.try_get("id")?,
                    queue: row.try_get("queue")?,
                    created_at: row.try_get("created_at")?,
                })
            })
            .collect()
    }
}
