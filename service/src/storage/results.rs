//! Results as data: a run's summary in its `results` row (small at any scale), the summary's
//! rows per label in `run_labels`, one row per process in `run_processes` (written in bulk:
//! PostgreSQL `COPY`, batched inserts on SQLite; read a page at a time), and the trace only
//! where the submission asked for one.

use hetsim_simulator::{LabelSummary, NodeResult, ProcessResult, Results, Summary};
use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use sqlx::Row;

use super::{now, Dialect, Lease, Result, Store};

/// `results.format` of a result stored whole, before issue 26: every process in the JSON.
const FORMAT_WHOLE_REPORT: i64 = 1;
/// `results.format` of a summary, its processes in `run_processes`.
const FORMAT_SUMMARY: i64 = 2;

/// Processes per multi-row INSERT on SQLite (10 parameters each). Binding through sqlx costs
/// more per parameter the more a statement has: measured in release on the 2-core machine,
/// 20,000 rows went in at 14 k rows/s one per statement, 118 k at 20, 65 k at 100 and 8 k
/// at 1,000 (SQLite itself, from Python, takes 300 k/s).
const INSERT_BATCH: usize = 20;
/// Processes per SQLite transaction: short enough that other writers (workers finishing
/// small runs) get the write lock between two, rather than wait out the whole write.
const ROWS_PER_TRANSACTION: usize = 50_000;
/// Runs of at most this many processes are stored in one transaction, rows and all (the
/// many small runs of a sweep pay no extra round trips).
const ROWS_IN_ONE_TRANSACTION: usize = 1000;
/// Processes per chunk sent to PostgreSQL's `COPY`.
const COPY_CHUNK: usize = 20_000;

/// The most processes one page returns.
pub const MAX_PAGE: i64 = 10_000;

/// What a finished simulation leaves to store.
#[derive(Clone, Debug)]
pub struct RunOutput {
    pub summary: Summary,
    pub processes: Vec<ProcessResult>,
    /// The spans as JSON, where the submission asked for a trace.
    pub trace: Option<String>,
    /// Spans left out of `trace` past the cap.
    pub trace_dropped: u64,
    pub log: String,
    /// A replayed trace's per-rank breakdown (empty for an app's run).
    pub ranks: Vec<RankBreakdown>,
}

/// One rank of a replayed trace, as `hetsim replay` reports it (its `RankReport` less the
/// scratch file's path): stored in the run's summary JSON under `ranks`, served with the run
/// and shown on its page. The node-kind counts were added on 2026-11-28: a run stored before
/// reads them as 0.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankBreakdown {
    pub rank: usize,
    /// Nodes in the rank's file, and of them the nodes that ran.
    pub nodes: u64,
    pub ran: u64,
    /// When its last stream finished [s].
    pub finish_time: f64,
    /// Time with a GPU compute in flight [s].
    pub compute_time: f64,
    /// Time with a communication in flight [s].
    pub comm_time: f64,
    /// Communication time with no GPU compute in flight [s].
    pub exposed_comm: f64,
    /// Time with a CPU op in flight [s].
    pub cpu_time: f64,
    /// The nodes that ran by stream (CPU ops, GPU computation, communication), and the
    /// METADATA nodes, which complete as they issue.
    #[serde(default)]
    pub cpu_nodes: u64,
    #[serde(default)]
    pub gpu_nodes: u64,
    #[serde(default)]
    pub comm_nodes: u64,
    #[serde(default)]
    pub metadata_nodes: u64,
    /// Dependencies on ids not in the file, skipped; control dependencies dropped to break
    /// cycles.
    #[serde(default)]
    pub missing_deps: u64,
    #[serde(default)]
    pub dropped_ctrl: u64,
}

/// The `results.result` JSON of a summary: the summary's fields, and a replay's ranks
/// beside them (absent for an app's run, so that its JSON is as before).
#[derive(Serialize)]
struct StoredSummary<'a> {
    #[serde(flatten)]
    summary: &'a Summary,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    ranks: &'a [RankBreakdown],
}

/// A finished run's trace (JSON spans, `None` where none was recorded) and log.
#[derive(Clone, Debug, Default)]
pub struct StoredOutput {
    pub trace: Option<String>,
    /// Spans left out of `trace` past the cap.
    pub trace_dropped: u64,
    pub log: String,
}

/// One page of a run's processes, in pid order (rank order within a label).
#[derive(Clone, Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProcessPage {
    /// Processes of the run (of the label, where one is asked).
    pub total: i64,
    pub offset: i64,
    pub limit: i64,
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<Object>))]
    pub processes: Vec<ProcessResult>,
}

const PROCESS_COLUMNS: &str =
    "pid, label, rank, node, finish_time, finish_low, finish_high, compute_time, wait_time";

fn process(row: &AnyRow) -> Result<ProcessResult> {
    let pid: i64 = row.try_get("pid")?;
    let rank: i64 = row.try_get("rank")?;
    Ok(ProcessResult {
        pid: usize::try_from(pid).map_err(|_| super::StoreError::Corrupt(format!("process pid {pid}")))?,
        label: row.try_get::<String, _>("label")?.into(),
        rank: u64::try_from(rank).map_err(|_| super::StoreError::Corrupt(format!("process rank {rank}")))?,
        node: row.try_get::<String, _>("node")?.into(),
        finish_time: row.try_get("finish_time")?,
        finish_interval: [row.try_get("finish_low")?, row.try_get("finish_high")?],
        compute_time: row.try_get("compute_time")?,
        wait_time: row.try_get("wait_time")?,
    })
}

/// A process row as `COPY … (FORMAT csv)` reads it: the run's id, then the columns of
/// `hetsim run --csv --detail processes`.
fn csv_row(out: &mut Vec<u8>, id: &str, p: &ProcessResult) {
    out.extend_from_slice(id.as_bytes());
    out.push(b',');
    // Writing to a Vec cannot fail.
    let _ = hetsim_scripting::report::write_process_row(p, out);
}

/// The report a result stored whole held (format 1): what a summary is computed from.
#[derive(Deserialize)]
struct WholeReport {
    #[serde(default)]
    overall_time: f64,
    #[serde(default)]
    overall_time_interval: Option<[f64; 2]>,
    #[serde(default)]
    total_energy: f64,
    #[serde(default)]
    failure_chance: f64,
    #[serde(default)]
    events: u64,
    #[serde(default)]
    processes: Vec<ProcessResult>,
    #[serde(default)]
    nodes: Vec<NodeResult>,
}

impl WholeReport {
    fn into_results(self) -> Results {
        Results {
            overall_time: self.overall_time,
            overall_time_interval: self.overall_time_interval.unwrap_or([self.overall_time; 2]),
            total_energy: self.total_energy,
            failure_chance: self.failure_chance,
            events: self.events,
            processes: self.processes,
            nodes: self.nodes,
            trace: None,
            trace_dropped: 0,
        }
    }
}

impl Store {
    /// Stores the output of `lease`'s run and marks it done, if the lease is still held: a
    /// second call, a call for a run cancelled or deleted meanwhile, and a late one from a
    /// lease the reaper took back change nothing (and leave no process rows behind). Returns
    /// whether it stored.
    ///
    /// A run of up to [`ROWS_IN_ONE_TRANSACTION`] processes is written in one transaction.
    /// A larger one's process rows go first, in transactions of their own (a million of them
    /// must not hold SQLite's write lock at once, and PostgreSQL takes them by `COPY` on its
    /// own connection); readers list the processes of done runs only, and a retry replaces
    /// them.
    pub async fn finish_run(&self, lease: &Lease, output: &RunOutput) -> Result<bool> {
        let id = lease.run.as_str();
        let small = output.processes.len() <= ROWS_IN_ONE_TRANSACTION;
        if !small {
            if !self.holds(lease).await? {
                return Ok(false);
            }
            self.write_processes(id, &output.processes).await?;
        }
        let mut tx = self.pool().begin().await?;
        let finished = Self::mark_done(&mut tx, lease, output).await?;
        if finished && small {
            Self::insert_process_rows(&mut tx, id, &output.processes).await?;
        }
        tx.commit().await?;
        if !finished && !small {
            // Cancelled or deleted while its rows were written; a run another worker
            // finished meanwhile keeps the rows (the same rows: a simulation is deterministic).
            sqlx::query(
                "DELETE FROM run_processes WHERE run_id = $1 AND NOT EXISTS \
                 (SELECT 1 FROM runs WHERE id = $1 AND status = 'done')",
            )
            .bind(id)
            .execute(self.pool())
            .await?;
        }
        Ok(finished)
    }

    /// In `tx`: marks the run of `lease` done if the lease is held, with its summary, trace,
    /// log and label rows. Returns whether it was held.
    async fn mark_done(
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        lease: &Lease,
        output: &RunOutput,
    ) -> Result<bool> {
        let id = lease.run.as_str();
        let finished = sqlx::query(
            "UPDATE runs SET status = 'done', error = NULL, finished_at = $1, lease_until = NULL \
             WHERE id = $2 AND attempts = $3 AND status = 'running'",
        )
        .bind(now())
        .bind(id)
        .bind(lease.attempt)
        .execute(&mut **tx)
        .await?
        .rows_affected()
            > 0;
        if finished {
            sqlx::query(
                "INSERT INTO results (run_id, result, trace, log, format, trace_dropped) VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .bind(id)
            .bind(serde_json::to_string(&StoredSummary {
                summary: &output.summary,
                ranks: &output.ranks,
            })?)
            .bind(output.trace.as_deref())
            .bind(&output.log)
            .bind(FORMAT_SUMMARY)
            .bind(i64::try_from(output.trace_dropped).unwrap_or(i64::MAX))
            .execute(&mut **tx)
            .await?;
            Self::insert_labels(tx, id, &output.summary.labels).await?;
        }
        Ok(finished)
    }

    async fn insert_labels(
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        id: &str,
        labels: &[LabelSummary],
    ) -> Result<()> {
        let stats = ["finish", "compute", "wait"]
            .map(|s| {
                ["min", "mean", "p50", "p99", "max"]
                    .map(|q| format!("{s}_{q}"))
                    .join(", ")
            })
            .join(", ");
        let values = (3..=18).map(|i| format!("${i}")).collect::<Vec<_>>().join(", ");
        let sql =
            format!("INSERT INTO run_labels (run_id, label, processes, {stats}) VALUES ($1, $2, {values})");
        for l in labels {
            let mut query = sqlx::query(&sql)
                .bind(id)
                .bind(&*l.label)
                .bind(i64::try_from(l.count).unwrap_or(i64::MAX));
            for s in [l.finish, l.compute, l.wait] {
                for x in [s.min, s.mean, s.p50, s.p99, s.max] {
                    query = query.bind(x);
                }
            }
            query.execute(&mut **tx).await?;
        }
        Ok(())
    }

    async fn delete_processes(&self, id: &str) -> Result<()> {
        sqlx::query("DELETE FROM run_processes WHERE run_id = $1")
            .bind(id)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Replaces run `id`'s process rows with `processes`.
    async fn write_processes(&self, id: &str, processes: &[ProcessResult]) -> Result<()> {
        match (&self.dialect, &self.postgres) {
            (Dialect::Postgres, Some(pg)) => Self::copy_processes(pg, id, processes).await,
            _ => self.insert_processes(id, processes).await,
        }
    }

    /// PostgreSQL: one transaction, the rows sent through `COPY … FROM STDIN` as CSV.
    async fn copy_processes(pg: &sqlx::PgPool, id: &str, processes: &[ProcessResult]) -> Result<()> {
        let mut tx = pg.begin().await?;
        sqlx::query("DELETE FROM run_processes WHERE run_id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        let statement =
            format!("COPY run_processes (run_id, {PROCESS_COLUMNS}) FROM STDIN WITH (FORMAT csv)");
        let mut copy = tx.copy_in_raw(&statement).await?;
        let mut chunk = Vec::new();
        for rows in processes.chunks(COPY_CHUNK) {
            chunk.clear();
            for p in rows {
                csv_row(&mut chunk, id, p);
            }
            copy.send(chunk.as_slice()).await?;
        }
        copy.finish().await?;
        tx.commit().await?;
        Ok(())
    }

    /// SQLite: multi-row INSERTs, [`ROWS_PER_TRANSACTION`] rows per transaction.
    async fn insert_processes(&self, id: &str, processes: &[ProcessResult]) -> Result<()> {
        self.delete_processes(id).await?;
        for rows in processes.chunks(ROWS_PER_TRANSACTION) {
            let mut tx = self.pool().begin().await?;
            Self::insert_process_rows(&mut tx, id, rows).await?;
            tx.commit().await?;
        }
        Ok(())
    }

    /// In `tx`: `processes` as rows of run `id`, [`INSERT_BATCH`] per statement.
    async fn insert_process_rows(
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        id: &str,
        processes: &[ProcessResult],
    ) -> Result<()> {
        for batch in processes.chunks(INSERT_BATCH) {
            let placeholders: Vec<String> = (0..batch.len())
                .map(|i| {
                    let first = i * 10 + 1;
                    let row: Vec<String> = (first..first + 10).map(|n| format!("${n}")).collect();
                    format!("({})", row.join(", "))
                })
                .collect();
            let sql = format!(
                "INSERT INTO run_processes (run_id, {PROCESS_COLUMNS}) VALUES {}",
                placeholders.join(", ")
            );
            let mut query = sqlx::query(&sql);
            for p in batch {
                query = query
                    .bind(id)
                    .bind(i64::try_from(p.pid).unwrap_or(i64::MAX))
                    .bind(&*p.label)
                    .bind(i64::try_from(p.rank).unwrap_or(i64::MAX))
                    .bind(&*p.node)
                    .bind(p.finish_time)
                    .bind(p.finish_interval[0])
                    .bind(p.finish_interval[1])
                    .bind(p.compute_time)
                    .bind(p.wait_time);
            }
            query.execute(&mut **tx).await?;
        }
        Ok(())
    }

    /// A page of the processes of run `id` (of `label`, where given): at most `limit` (up to
    /// [`MAX_PAGE`]) from the `offset`th. Pids are 0 to n − 1 in a run and ranks 0 to
    /// count − 1 in a label, so a page is an index range, as fast at the millionth process as
    /// at the first.
    pub async fn processes(
        &self,
        id: &str,
        label: Option<&str>,
        offset: i64,
        limit: i64,
    ) -> Result<ProcessPage> {
        let (offset, limit) = (offset.max(0), limit.clamp(0, MAX_PAGE));
        let sql = match label {
            None => format!(
                "SELECT {PROCESS_COLUMNS} FROM run_processes WHERE run_id = $1 AND pid >= $2 ORDER BY pid LIMIT $3"
            ),
            Some(_) => format!(
                "SELECT {PROCESS_COLUMNS} FROM run_processes WHERE run_id = $1 AND label = $4 AND rank >= $2 \
                 ORDER BY rank LIMIT $3"
            ),
        };
        let mut query = sqlx::query(&sql).bind(id).bind(offset).bind(limit);
        if let Some(label) = label {
            query = query.bind(label);
        }
        let processes = query
            .fetch_all(self.pool())
            .await?
            .iter()
            .map(process)
            .collect::<Result<_>>()?;
        let total: Option<i64> = sqlx::query(
            "SELECT CAST(SUM(processes) AS BIGINT) AS total FROM run_labels WHERE run_id = $1 AND ($2 = '' OR label = $2)",
        )
        .bind(id)
        .bind(label.unwrap_or(""))
        .fetch_one(self.pool())
        .await?
        .try_get("total")?;
        Ok(ProcessPage {
            total: total.unwrap_or(0),
            offset,
            limit,
            processes,
        })
    }

    /// Every process of run `id`, in pid order (what a trace export names its rows by).
    pub async fn all_processes(&self, id: &str) -> Result<Vec<ProcessResult>> {
        let sql = format!("SELECT {PROCESS_COLUMNS} FROM run_processes WHERE run_id = $1 ORDER BY pid");
        sqlx::query(&sql)
            .bind(id)
            .fetch_all(self.pool())
            .await?
            .iter()
            .map(process)
            .collect()
    }

    /// The trace and the log of a finished run.
    pub async fn run_output(&self, id: &str) -> Result<Option<StoredOutput>> {
        let row = sqlx::query("SELECT trace, trace_dropped, log FROM results WHERE run_id = $1")
            .bind(id)
            .fetch_optional(self.pool())
            .await?;
        row.map(|r| {
            Ok(StoredOutput {
                trace: r.try_get("trace")?,
                trace_dropped: u64::try_from(r.try_get::<i64, _>("trace_dropped")?).unwrap_or(0),
                log: r.try_get("log")?,
            })
        })
        .transpose()
    }

    /// Moves the results stored whole (before issue 26) to the tables: each one's processes
    /// to `run_processes`, its summary in its place, its labels to `run_labels`. A result
    /// that does not read as a report stays as it was (and is logged). Returns how many moved.
    pub(super) async fn upgrade_results(&self) -> Result<u64> {
        let ids: Vec<String> = sqlx::query("SELECT run_id FROM results WHERE format = $1 ORDER BY run_id")
            .bind(FORMAT_WHOLE_REPORT)
            .fetch_all(self.pool())
            .await?
            .iter()
            .map(|r| r.try_get("run_id"))
            .collect::<std::result::Result<_, _>>()?;
        let mut moved = 0;
        for id in ids {
            let text: String = sqlx::query("SELECT result FROM results WHERE run_id = $1")
                .bind(&id)
                .fetch_one(self.pool())
                .await?
                .try_get("result")?;
            let report = match serde_json::from_str::<WholeReport>(&text) {
                Ok(report) => report.into_results(),
                Err(e) => {
                    tracing::warn!(run = id, "its stored result is not a report, left as it is: {e}");
                    continue;
                }
            };
            let summary = Summary::of(&report);
            self.write_processes(&id, &report.processes).await?;
            let mut tx = self.pool().begin().await?;
            // The format changes first, on the condition that it is still the old one: a
            // server and a worker starting together move each result once (the second
            // waits on the first's row lock, then finds nothing to move).
            let claimed =
                sqlx::query("UPDATE results SET result = $1, format = $2 WHERE run_id = $3 AND format = $4")
                    .bind(serde_json::to_string(&summary)?)
                    .bind(FORMAT_SUMMARY)
                    .bind(&id)
                    .bind(FORMAT_WHOLE_REPORT)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected()
                    > 0;
            if !claimed {
                tx.rollback().await?;
                continue;
            }
            sqlx::query("DELETE FROM run_labels WHERE run_id = $1")
                .bind(&id)
                .execute(&mut *tx)
                .await?;
            Self::insert_labels(&mut tx, &id, &summary.labels).await?;
            tx.commit().await?;
            moved += 1;
        }
        if moved > 0 {
            tracing::info!("moved {moved} results stored whole to the result tables");
        }
        Ok(moved)
    }
}
