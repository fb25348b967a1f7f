//! Runs: queued with their inputs, claimed by workers, finished once.

use std::collections::BTreeMap;

use anyhow::Result;
use hetsim_scripting::Variable;
use serde::Serialize;
use sqlx::any::AnyRow;
use sqlx::Row;

use super::{now, Store};

/// A run to queue: its inputs, self-contained.
#[derive(Clone, Debug)]
pub struct NewRun {
    pub id: String,
    pub queue: String,
    /// Rhai source of the application.
    pub app: String,
    /// The system as self-contained JSON (components and models inline).
    pub system: String,
    pub labels: BTreeMap<String, u64>,
    pub variables: BTreeMap<String, Variable>,
}

/// What a worker needs to simulate a run.
#[derive(Clone, Debug)]
pub struct RunInputs {
    pub app: String,
    pub system: String,
    pub labels: String,
    pub variables: String,
    pub attempts: i64,
}

/// A run as the API shows it.
#[derive(Clone, Debug, Serialize)]
pub struct RunRecord {
    pub id: String,
    pub status: String,
    pub queue: String,
    pub sweep: Option<String>,
    pub labels: serde_json::Value,
    pub variables: serde_json::Value,
    pub attempts: i64,
    pub error: Option<String>,
    pub worker: Option<String>,
    pub created_at: String,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    /// The `hetsim run --json` object, once done.
    pub result: Option<serde_json::Value>,
}

#[derive(Clone, Debug, Default)]
pub struct RunFilter {
    pub status: Option<String>,
    pub queue: Option<String>,
    pub sweep: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct SweepSummary {
    pub id: String,
    pub queue: String,
    pub total: i64,
    pub queued: i64,
    pub running: i64,
    pub done: i64,
    pub failed: i64,
    pub runs: Vec<String>,
}

/// What claiming a run found.
pub enum Start {
    /// The run is now `running`, with its attempts counted.
    Run(RunInputs),
    /// Already `done` or `failed` (a redelivery): nothing to do.
    Finished,
    /// No such run.
    Missing,
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or(serde_json::Value::Null)
}

fn record(row: &AnyRow) -> Result<RunRecord> {
    let result: Option<String> = row.try_get("result")?;
    Ok(RunRecord {
        id: row.try_get("id")?,
        status: row.try_get("status")?,
        queue: row.try_get("queue")?,
        sweep: row.try_get("sweep_id")?,
        labels: json(&row.try_get::<String, _>("labels")?),
        variables: json(&row.try_get::<String, _>("variables")?),
        attempts: row.try_get("attempts")?,
        error: row.try_get("error")?,
        worker: row.try_get("worker")?,
        created_at: row.try_get("created_at")?,
        started_at: row.try_get("started_at")?,
        finished_at: row.try_get("finished_at")?,
        result: result.as_deref().map(json),
    })
}

const RUN_COLUMNS: &str = "r.id, r.status, r.queue, r.sweep_id, r.labels, r.variables, r.attempts, r.error, \
     r.worker, r.created_at, r.started_at, r.finished_at, s.result";

impl Store {
    /// Inserts `runs` (and their sweep) in one transaction, unpublished.
    pub async fn insert_runs(&self, runs: &[NewRun], sweep: Option<&str>) -> Result<()> {
        let created = now();
        let mut tx = self.pool().begin().await?;
        if let (Some(sweep), Some(first)) = (sweep, runs.first()) {
            sqlx::query("INSERT INTO sweeps (id, queue, created_at) VALUES ($1, $2, $3)")
                .bind(sweep)
                .bind(&first.queue)
                .bind(&created)
                .execute(&mut *tx)
                .await?;
        }
        for run in runs {
            sqlx::query(
                "INSERT INTO runs (id, sweep_id, queue, app, system, labels, variables, status, attempts, published, \
                 created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, 'queued', 0, 0, $8)",
            )
            .bind(&run.id)
            .bind(sweep)
            .bind(&run.queue)
            .bind(&run.app)
            .bind(&run.system)
            .bind(serde_json::to_string(&run.labels)?)
            .bind(serde_json::to_string(&run.variables)?)
            .bind(&created)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    pub async fn run(&self, id: &str) -> Result<Option<RunRecord>> {
        let sql = format!(
            "SELECT {RUN_COLUMNS} FROM runs r LEFT JOIN results s ON s.run_id = r.id WHERE r.id = $1"
        );
        sqlx::query(&sql)
            .bind(id)
            .fetch_optional(self.pool())
            .await?
            .as_ref()
            .map(record)
            .transpose()
    }

    pub async fn runs(&self, filter: &RunFilter, limit: i64) -> Result<Vec<RunRecord>> {
        let sql = format!(
            "SELECT {RUN_COLUMNS} FROM runs r LEFT JOIN results s ON s.run_id = r.id \
             WHERE ($1 = '' OR r.status = $1) AND ($2 = '' OR r.queue = $2) AND ($3 = '' OR r.sweep_id = $3) \
             ORDER BY r.created_at, r.id LIMIT $4"
        );
        sqlx::query(&sql)
            .bind(filter.status.as_deref().unwrap_or(""))
            .bind(filter.queue.as_deref().unwrap_or(""))
            .bind(filter.sweep.as_deref().unwrap_or(""))
            .bind(limit)
            .fetch_all(self.pool())
            .await?
            .iter()
            .map(record)
            .collect()
    }

    /// The trace and the log of a finished run.
    pub async fn run_output(&self, id: &str) -> Result<Option<(Option<String>, String)>> {
        let row = sqlx::query("SELECT trace, log FROM results WHERE run_id = $1")
            .bind(id)
            .fetch_optional(self.pool())
            .await?;
        row.map(|r| Ok((r.try_get("trace")?, r.try_get("log")?)))
            .transpose()
    }

    pub async fn sweep(&self, id: &str) -> Result<Option<SweepSummary>> {
        let Some(sweep) = sqlx::query("SELECT id, queue FROM sweeps WHERE id = $1")
            .bind(id)
            .fetch_optional(self.pool())
            .await?
        else {
            return Ok(None);
        };
        let rows = sqlx::query("SELECT id, status FROM runs WHERE sweep_id = $1 ORDER BY created_at, id")
            .bind(id)
            .fetch_all(self.pool())
            .await?;
        let mut summary = SweepSummary {
            id: sweep.try_get("id")?,
            queue: sweep.try_get("queue")?,
            total: rows.len() as i64,
            queued: 0,
            running: 0,
            done: 0,
            failed: 0,
            runs: Vec::with_capacity(rows.len()),
        };
        for row in rows {
            match row.try_get::<String, _>("status")?.as_str() {
                "queued" => summary.queued += 1,
                "running" => summary.running += 1,
                "done" => summary.done += 1,
                _ => summary.failed += 1,
            }
            summary.runs.push(row.try_get("id")?);
        }
        Ok(Some(summary))
    }

    /// Marks `id` running for `worker`, counting the attempt, unless it is finished. One
    /// conditional UPDATE, so that it takes the write lock at once (SQLite refuses to upgrade
    /// a read transaction that another writer overtook).
    pub async fn start_run(&self, id: &str, worker: &str) -> Result<Start> {
        let claimed = sqlx::query(
            "UPDATE runs SET status = 'running', attempts = attempts + 1, worker = $1, started_at = $2 \
             WHERE id = $3 AND status IN ('queued', 'running')",
        )
        .bind(worker)
        .bind(now())
        .bind(id)
        .execute(self.pool())
        .await?
        .rows_affected()
            > 0;
        let row = sqlx::query("SELECT app, system, labels, variables, attempts FROM runs WHERE id = $1")
            .bind(id)
            .fetch_optional(self.pool())
            .await?;
        Ok(match (claimed, row) {
            (_, None) => Start::Missing,
            (false, Some(_)) => Start::Finished,
            (true, Some(row)) => Start::Run(RunInputs {
                app: row.try_get("app")?,
                system: row.try_get("system")?,
                labels: row.try_get("labels")?,
                variables: row.try_get("variables")?,
                attempts: row.try_get("attempts")?,
            }),
        })
    }

    /// Claims the oldest queued run of `queue`, or of any queue (the embedded, broker-less
    /// queue).
    pub async fn claim_next(&self, queue: Option<&str>) -> Result<Option<String>> {
        let row = sqlx::query(
            "UPDATE runs SET status = 'running' WHERE id = (SELECT id FROM runs WHERE status = 'queued' AND ($1 = '' OR queue = $1) \
             ORDER BY created_at, id LIMIT 1) AND status = 'queued' RETURNING id",
        )
        .bind(queue.unwrap_or(""))
        .fetch_optional(self.pool())
        .await?;
        row.map(|r| Ok(r.try_get("id")?)).transpose()
    }

    /// Stores the result and marks the run done, once: a second call changes nothing.
    pub async fn finish_run(&self, id: &str, result: &str, trace: Option<&str>, log: &str) -> Result<bool> {
        let mut tx = self.pool().begin().await?;
        let inserted = sqlx::query(
            "INSERT INTO results (run_id, result, trace, log) VALUES ($1, $2, $3, $4) ON CONFLICT (run_id) DO NOTHING",
        )
        .bind(id)
        .bind(result)
        .bind(trace)
        .bind(log)
        .execute(&mut *tx)
        .await?
        .rows_affected()
            > 0;
        sqlx::query("UPDATE runs SET status = 'done', error = NULL, finished_at = $1 WHERE id = $2 AND status <> 'done'")
            .bind(now())
            .bind(id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(inserted)
    }

    /// Marks the run failed with `error`, unless it is done.
    pub async fn fail_run(&self, id: &str, error: &str) -> Result<()> {
        sqlx::query("UPDATE runs SET status = 'failed', error = $1, finished_at = $2 WHERE id = $3 AND status <> 'done'")
            .bind(error)
            .bind(now())
            .bind(id)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Runs committed but not yet confirmed by the broker (the outbox).
    pub async fn unpublished(&self, limit: i64) -> Result<Vec<(String, String)>> {
        sqlx::query("SELECT id, queue FROM runs WHERE published = 0 AND status = 'queued' ORDER BY created_at, id LIMIT $1")
            .bind(limit)
            .fetch_all(self.pool())
            .await?
            .into_iter()
            .map(|r| Ok((r.try_get("id")?, r.try_get("queue")?)))
            .collect()
    }

    pub async fn mark_published(&self, ids: &[String]) -> Result<()> {
        let mut tx = self.pool().begin().await?;
        for id in ids {
            sqlx::query("UPDATE runs SET published = 1 WHERE id = $1")
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// After a crash of the embedded server: runs left `running` go back to the queue, or
    /// fail once they have used up `limit` attempts.
    pub async fn requeue_interrupted(&self, limit: i64) -> Result<()> {
        let reason = format!(
            "the run stopped its worker process at each of its attempts (limit {limit}); not retried"
        );
        sqlx::query("UPDATE runs SET status = 'failed', error = $1, finished_at = $2 WHERE status = 'running' AND attempts >= $3")
            .bind(&reason)
            .bind(now())
            .bind(limit)
            .execute(self.pool())
            .await?;
        sqlx::query("UPDATE runs SET status = 'queued' WHERE status = 'running'")
            .execute(self.pool())
            .await?;
        Ok(())
    }
}
