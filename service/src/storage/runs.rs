//! Runs: queued with their inputs, claimed by workers, finished once.

use std::collections::{BTreeMap, BTreeSet};

use super::Result;
use hetsim_system::Variable;
use serde::Serialize;
use sqlx::any::AnyRow;
use sqlx::Row;

use super::{now, Store};
use crate::status::RunStatus;

/// The error of a run cancelled through the API.
const CANCELLED_BY_A_USER: &str = "cancelled by a user";

/// What the runs of one submission share, stored once: the application's Rhai source and
/// the system as self-contained JSON (components and models inline).
#[derive(Clone, Debug)]
pub struct NewInput {
    pub id: String,
    pub app: String,
    pub system: String,
    /// Whether its runs record a trace.
    pub trace: bool,
    /// The stored Chakra trace its runs replay instead of the app (`app` is then only a
    /// title).
    pub replay: Option<ReplayInput>,
}

/// A submission's stored trace and compute policy.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayInput {
    pub trace_id: String,
    /// `replay`, `roofline` or `scale:GPU`.
    pub compute: String,
}

/// One run to queue: its own labels and variables (its app and system are its submission's).
#[derive(Clone, Debug)]
pub struct NewRun {
    pub id: String,
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
    /// Whether to record the trace.
    pub trace: bool,
    /// The stored trace to replay instead of the app.
    pub replay: Option<ReplayInput>,
}

/// A run the outbox has yet to publish: `publication` numbers its message.
#[derive(Clone, Debug)]
pub struct Unpublished {
    pub id: String,
    pub queue: String,
    pub publication: i64,
}

/// The most runs a listing of one sweep reads: its page and its CSV.
pub const MAX_SWEEP_LISTING: i64 = 100_000;

/// What a run ran, as `GET /api/runs/{id}/source` shows it.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunSource {
    /// The app's Rhai source.
    pub app: String,
    /// The system, self-contained: its components, models and kernel listings inline.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub system: serde_json::Value,
}

/// A run as the API shows it.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunRecord {
    pub id: String,
    pub status: RunStatus,
    pub queue: String,
    pub sweep: Option<String>,
    /// Each label's process count.
    #[cfg_attr(feature = "openapi", schema(value_type = std::collections::BTreeMap<String, u64>))]
    pub labels: serde_json::Value,
    /// Each variable's value: a number, a bool or a string.
    #[cfg_attr(feature = "openapi", schema(value_type = std::collections::BTreeMap<String, hetsim_system::Variable>))]
    pub variables: serde_json::Value,
    pub attempts: i64,
    pub error: Option<String>,
    pub worker: Option<String>,
    pub created_at: String,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    /// The name of the token that submitted the run (`admin` for the server's admin token);
    /// null on a server open to all.
    pub submitter: Option<String>,
    /// The app's title: its first comment line (null when it has none, or was stored before
    /// titles were kept).
    pub app_title: Option<String>,
    /// The system's `name` (null when it has none).
    pub system_name: Option<String>,
    /// The run's summary (what `hetsim run --json` prints at its summary level, less the
    /// log), once done; its processes are paged by `GET /api/runs/{id}/processes`.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub result: Option<serde_json::Value>,
}

#[derive(Clone, Debug, Default)]
pub struct RunFilter {
    pub status: Option<RunStatus>,
    pub queue: Option<String>,
    pub sweep: Option<String>,
}

/// A sweep: its runs' ids and how many are in each status.
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SweepSummary {
    pub id: String,
    pub queue: String,
    pub total: i64,
    pub queued: i64,
    pub running: i64,
    pub done: i64,
    pub failed: i64,
    pub cancelled: i64,
    pub runs: Vec<String>,
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or(serde_json::Value::Null)
}

fn status(row: &AnyRow) -> Result<RunStatus> {
    let text: String = row.try_get("status")?;
    RunStatus::parse(&text)
        .ok_or_else(|| super::StoreError::Corrupt(format!("unknown run status {text:?} in the database")))
}

pub(super) fn record(row: &AnyRow) -> Result<RunRecord> {
    let result: Option<String> = row.try_get("result")?;
    Ok(RunRecord {
        id: row.try_get("id")?,
        status: status(row)?,
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
        submitter: row.try_get("submitter")?,
        app_title: row.try_get("app_title")?,
        system_name: row.try_get("system_name")?,
        result: result.as_deref().map(json),
    })
}

pub(super) const RUN_COLUMNS: &str =
    "r.id, r.status, r.queue, r.sweep_id, r.labels, r.variables, r.attempts, r.error, \
     r.worker, r.created_at, r.started_at, r.finished_at, r.submitter, i.app_title, i.system_name, s.result";

/// The tables [`RUN_COLUMNS`] come from.
pub(super) const RUN_TABLES: &str =
    "runs r JOIN inputs i ON i.id = r.input_id LEFT JOIN results s ON s.run_id = r.id";

/// An app's title: the first line of its first comment, without its `//`, `///` or `//!`
/// (what a Rhai source says it is); `None` when that is empty or there is no comment.
pub fn app_title(source: &str) -> Option<&str> {
    source
        .lines()
        .find_map(|l| l.trim().strip_prefix("//"))
        .map(|l| l.trim_start_matches(['/', '!']).trim())
        .filter(|l| !l.is_empty())
}

/// A self-contained system's `name`, from its JSON.
fn system_name(system: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(system).ok()?;
    value["name"]
        .as_str()
        .filter(|n| !n.is_empty())
        .map(str::to_owned)
}

impl Store {
    /// Inserts `runs` of `input` on `queue` (and their sweep) in one transaction, unpublished,
    /// each naming its `submitter` (the token's holder; `None` on a server open to all).
    pub async fn insert_runs(
        &self,
        queue: &str,
        input: &NewInput,
        runs: &[NewRun],
        sweep: Option<&str>,
        submitter: Option<&str>,
    ) -> Result<()> {
        let created = now();
        let mut tx = self.pool().begin().await?;
        sqlx::query(
            "INSERT INTO inputs (id, app, system, trace, app_title, system_name, replay_trace_id, replay_compute) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(&input.id)
        .bind(&input.app)
        .bind(&input.system)
        .bind(i64::from(input.trace))
        .bind(app_title(&input.app))
        .bind(system_name(&input.system))
        .bind(input.replay.as_ref().map(|r| r.trace_id.clone()))
        .bind(input.replay.as_ref().map(|r| r.compute.clone()))
            .execute(&mut *tx)
            .await?;
        if let Some(sweep) = sweep {
            sqlx::query("INSERT INTO sweeps (id, queue, created_at) VALUES ($1, $2, $3)")
                .bind(sweep)
                .bind(queue)
                .bind(&created)
                .execute(&mut *tx)
                .await?;
        }
        for run in runs {
            sqlx::query(
                "INSERT INTO runs (id, sweep_id, queue, input_id, labels, variables, status, attempts, published, \
                 created_at, submitter) VALUES ($1, $2, $3, $4, $5, $6, 'queued', 0, 0, $7, $8)",
            )
            .bind(&run.id)
            .bind(sweep)
            .bind(queue)
            .bind(&input.id)
            .bind(serde_json::to_string(&run.labels)?)
            .bind(serde_json::to_string(&run.variables)?)
            .bind(&created)
            .bind(submitter)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// What run `id` ran: its app's source and its self-contained system (JSON), as stored
    /// once for its submission.
    pub async fn run_source(&self, id: &str) -> Result<Option<RunSource>> {
        let row = sqlx::query(
            "SELECT i.app, i.system FROM runs r JOIN inputs i ON i.id = r.input_id WHERE r.id = $1",
        )
        .bind(id)
        .fetch_optional(self.pool())
        .await?;
        let Some(row) = row else { return Ok(None) };
        let system: String = row.try_get("system")?;
        Ok(Some(RunSource {
            app: row.try_get("app")?,
            system: serde_json::from_str(&system)?,
        }))
    }

    pub async fn run(&self, id: &str) -> Result<Option<RunRecord>> {
        let sql = format!("SELECT {RUN_COLUMNS} FROM {RUN_TABLES} WHERE r.id = $1");
        sqlx::query(&sql)
            .bind(id)
            .fetch_optional(self.pool())
            .await?
            .as_ref()
            .map(record)
            .transpose()
    }

    /// The runs of sweep `id`, at most [`MAX_SWEEP_LISTING`] (its page and its CSV).
    pub async fn sweep_runs(&self, id: &str) -> Result<Vec<RunRecord>> {
        let filter = RunFilter {
            sweep: Some(id.to_owned()),
            ..RunFilter::default()
        };
        self.runs(&filter, MAX_SWEEP_LISTING).await
    }

    pub async fn runs(&self, filter: &RunFilter, limit: i64) -> Result<Vec<RunRecord>> {
        let sql = format!(
            "SELECT {RUN_COLUMNS} FROM {RUN_TABLES} \
             WHERE ($1 = '' OR r.status = $1) AND ($2 = '' OR r.queue = $2) AND ($3 = '' OR r.sweep_id = $3) \
             ORDER BY r.created_at, r.id LIMIT $4"
        );
        sqlx::query(&sql)
            .bind(filter.status.map_or("", RunStatus::as_str))
            .bind(filter.queue.as_deref().unwrap_or(""))
            .bind(filter.sweep.as_deref().unwrap_or(""))
            .bind(limit)
            .fetch_all(self.pool())
            .await?
            .iter()
            .map(record)
            .collect()
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
            cancelled: 0,
            runs: Vec::with_capacity(rows.len()),
        };
        for row in rows {
            *match status(&row)? {
                RunStatus::Queued => &mut summary.queued,
                RunStatus::Running => &mut summary.running,
                RunStatus::Done => &mut summary.done,
                RunStatus::Failed => &mut summary.failed,
                RunStatus::Cancelled => &mut summary.cancelled,
            } += 1;
            summary.runs.push(row.try_get("id")?);
        }
        Ok(Some(summary))
    }

    /// The status of run `id`, if it exists.
    pub async fn status(&self, id: &str) -> Result<Option<RunStatus>> {
        sqlx::query("SELECT status FROM runs WHERE id = $1")
            .bind(id)
            .fetch_optional(self.pool())
            .await?
            .as_ref()
            .map(status)
            .transpose()
    }

    /// Moves the runs whose `column` (`id` or `sweep_id`, named by the code) is `key` to
    /// `to` with `error`, each if the transition table allows it from its status. Returns how
    /// many moved.
    async fn end_runs(&self, column: &'static str, key: &str, to: RunStatus, error: &str) -> Result<u64> {
        let sql = format!(
            "UPDATE runs SET status = $1, error = $2, finished_at = $3 WHERE {column} = $4 AND status IN ({})",
            to.sql_sources()
        );
        Ok(sqlx::query(&sql)
            .bind(to.as_str())
            .bind(error)
            .bind(now())
            .bind(key)
            .execute(self.pool())
            .await?
            .rows_affected())
    }

    /// Cancels run `id` unless it is finished; returns its status afterwards (`None`: no
    /// such run). A worker running it sees the status and stops the simulation.
    pub async fn cancel_run(&self, id: &str) -> Result<Option<RunStatus>> {
        self.end_runs("id", id, RunStatus::Cancelled, CANCELLED_BY_A_USER)
            .await?;
        self.status(id).await
    }

    /// Cancels every unfinished run of sweep `id`; returns how many (`None`: no such sweep).
    pub async fn cancel_sweep(&self, id: &str) -> Result<Option<u64>> {
        if !self.sweep_exists(id).await? {
            return Ok(None);
        }
        let cancelled = self
            .end_runs("sweep_id", id, RunStatus::Cancelled, CANCELLED_BY_A_USER)
            .await?;
        Ok(Some(cancelled))
    }

    async fn sweep_exists(&self, id: &str) -> Result<bool> {
        Ok(sqlx::query("SELECT id FROM sweeps WHERE id = $1")
            .bind(id)
            .fetch_optional(self.pool())
            .await?
            .is_some())
    }

    /// Deletes, in `tx`, the runs whose `column` (`id` or `sweep_id`) is `key`, with their
    /// results, traces and logs, and the inputs no other run shares. Returns how many runs.
    async fn delete_runs(
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        column: &'static str,
        key: &str,
    ) -> Result<usize> {
        for table in ["results", "run_labels", "run_processes"] {
            sqlx::query(&format!(
                "DELETE FROM {table} WHERE run_id IN (SELECT id FROM runs WHERE {column} = $1)"
            ))
            .bind(key)
            .execute(&mut **tx)
            .await?;
        }
        let inputs: Vec<String> = sqlx::query(&format!(
            "DELETE FROM runs WHERE {column} = $1 RETURNING input_id"
        ))
        .bind(key)
        .fetch_all(&mut **tx)
        .await?
        .iter()
        .map(|r| r.try_get("input_id"))
        .collect::<std::result::Result<_, _>>()?;
        for input in inputs.iter().collect::<BTreeSet<_>>() {
            sqlx::query(
                "DELETE FROM inputs WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM runs WHERE input_id = $1)",
            )
            .bind(input)
            .execute(&mut **tx)
            .await?;
        }
        Ok(inputs.len())
    }

    /// Deletes run `id` with its result, trace and log (and its input, when no other run
    /// shares it); an unfinished run is cancelled first. Returns whether it existed.
    pub async fn delete_run(&self, id: &str) -> Result<bool> {
        self.cancel_run(id).await?;
        let mut tx = self.pool().begin().await?;
        let deleted = Self::delete_runs(&mut tx, "id", id).await?;
        tx.commit().await?;
        Ok(deleted > 0)
    }

    /// Deletes sweep `id` and all its runs as [`Store::delete_run`] does. Returns whether it
    /// existed.
    pub async fn delete_sweep(&self, id: &str) -> Result<bool> {
        if self.cancel_sweep(id).await?.is_none() {
            return Ok(false);
        }
        let mut tx = self.pool().begin().await?;
        Self::delete_runs(&mut tx, "sweep_id", id).await?;
        sqlx::query("DELETE FROM sweeps WHERE id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Runs committed but not yet confirmed by the broker (the outbox), leaving out `skip`'s
    /// queues (ones the broker refused lately, so that they hold up no other).
    pub async fn unpublished(&self, limit: i64, skip: &[String]) -> Result<Vec<Unpublished>> {
        let skipped: String = (0..skip.len())
            .map(|i| format!(" AND queue <> ${}", i + 2))
            .collect();
        let sql = format!(
            "SELECT id, queue, publication FROM runs WHERE published = 0 AND status = 'queued'{skipped} \
             ORDER BY created_at, id LIMIT $1"
        );
        let mut query = sqlx::query(&sql).bind(limit);
        for queue in skip {
            query = query.bind(queue);
        }
        query
            .fetch_all(self.pool())
            .await?
            .iter()
            .map(|row| {
                Ok(Unpublished {
                    id: row.try_get("id")?,
                    queue: row.try_get("queue")?,
                    publication: row.try_get("publication")?,
                })
            })
            .collect()
    }

    /// Records that the broker confirmed these publications (a run re-published meanwhile
    /// keeps waiting for its newer one).
    pub async fn mark_published(&self, published: &[Unpublished]) -> Result<()> {
        let at = now();
        let mut tx = self.pool().begin().await?;
        for run in published {
            sqlx::query(
                "UPDATE runs SET published = 1, published_at = $1 WHERE id = $2 AND publication = $3",
            )
            .bind(&at)
            .bind(&run.id)
            .bind(run.publication)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// The queues holding runs published before `before` and still queued: the reaper asks
    /// the broker whether their messages are still there.
    pub async fn queues_waiting_since(&self, before: &str) -> Result<Vec<String>> {
        sqlx::query(
            "SELECT DISTINCT queue FROM runs WHERE status = 'queued' AND published = 1 AND published_at < $1",
        )
        .bind(before)
        .fetch_all(self.pool())
        .await?
        .iter()
        .map(|r| Ok(r.try_get("queue")?))
        .collect()
    }

    /// Puts the runs of `queue` published before `before` and still queued back in the
    /// outbox under a new publication number (their lost messages, should they turn up, are
    /// then dropped). Returns how many.
    pub async fn republish(&self, queue: &str, before: &str) -> Result<u64> {
        Ok(sqlx::query(
            "UPDATE runs SET published = 0, publication = publication + 1 \
             WHERE queue = $1 AND status = 'queued' AND published = 1 AND published_at < $2",
        )
        .bind(queue)
        .bind(before)
        .execute(self.pool())
        .await?
        .rows_affected())
    }
}
