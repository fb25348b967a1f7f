//! SQL storage through sqlx's `Any` driver: PostgreSQL for shared deployments, SQLite as the
//! embedded default, one set of queries for both (`$n` parameters, text timestamps and JSON).

mod catalog;
mod error;
mod leases;
mod overview;
mod results;
mod runs;
mod tokens;
mod traces;

use sqlx::any::{install_default_drivers, AnyPoolOptions};
use sqlx::AnyPool;

pub use catalog::{Attribute, ComponentRecord, Library, Named, Refused};
pub use error::{Result, StoreError};
pub use hetsim_simulator::ProcessResult;
pub use leases::{Lease, Reclaimed};
pub use overview::SweepRow;
pub use results::{ProcessPage, RankBreakdown, RunOutput, StoredOutput, MAX_PAGE};
pub use runs::{
    app_title, NewInput, NewRun, ReplayInput, RunFilter, RunInputs, RunRecord, RunSource, SweepSummary,
    Unpublished,
};
pub use tokens::{
    check_name, parse_token, same_token, ActiveToken, NewToken, Role, TokenError, TokenRecord, ADMIN_NAME,
    TOKEN_PREFIX,
};
pub use traces::{
    check_trace, file_name, in_rank_order, TraceFile, TraceFileInfo, TraceRecord, TraceRefused, TraceUpload,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Postgres,
    Sqlite,
}

#[derive(Clone)]
pub struct Store {
    pool: AnyPool,
    dialect: Dialect,
    /// PostgreSQL's own pool beside the `Any` one, for what only it can do (`COPY`).
    postgres: Option<sqlx::PgPool>,
}

/// `hetsim.db` or `sqlite:…` → a SQLite URL that creates the file; `postgres://…` as is.
pub fn database_url(text: &str) -> String {
    if text.starts_with("postgres://") || text.starts_with("postgresql://") || text.starts_with("sqlite:") {
        text.to_owned()
    } else {
        format!("sqlite://{text}?mode=rwc")
    }
}

pub fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

impl Store {
    /// Whether the database answers a query.
    pub async fn ping(&self) -> Result<()> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    /// Connects, applies the dialect's migrations and loads the catalog into an empty
    /// database.
    pub async fn connect(url: &str) -> Result<Self> {
        install_default_drivers();
        let url = database_url(url);
        let dialect = if url.starts_with("sqlite:") {
            Dialect::Sqlite
        } else {
            Dialect::Postgres
        };
        let pool = AnyPoolOptions::new()
            .max_connections(if dialect == Dialect::Sqlite { 4 } else { 8 })
            .connect(&url)
            .await
            .map_err(|source| StoreError::Connect {
                url: crate::redact::redact_url(&url),
                source,
            })?;
        if dialect == Dialect::Sqlite {
            // Readers and one writer at a time without "database is locked" between workers.
            sqlx::query("PRAGMA journal_mode = WAL").execute(&pool).await?;
        }
        let migrator = match dialect {
            Dialect::Postgres => sqlx::migrate!("../migrations/postgres"),
            Dialect::Sqlite => sqlx::migrate!("../migrations/sqlite"),
        };
        migrator.run(&pool).await.map_err(StoreError::Migrate)?;
        let postgres = match dialect {
            Dialect::Postgres => Some(
                sqlx::postgres::PgPoolOptions::new()
                    .max_connections(2)
                    .connect(&url)
                    .await
                    .map_err(|source| StoreError::Connect {
                        url: crate::redact::redact_url(&url),
                        source,
                    })?,
            ),
            Dialect::Sqlite => None,
        };
        let store = Store {
            pool,
            dialect,
            postgres,
        };
        store.upgrade_results().await?;
        store.seed_catalog().await?;
        Ok(store)
    }

    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::Row;

    /// A database made by the first schema (before migration 0002 moved apps and systems to
    /// `inputs` and rebuilt `runs` and `results`) keeps its runs and results.
    #[tokio::test]
    async fn migration_0002_keeps_the_runs_and_results_of_an_old_database() {
        let dir = std::env::temp_dir().join(format!("hetsim-migrate-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let url = format!("sqlite://{}?mode=rwc", dir.join("old.db").display());
        install_default_drivers();
        let pool = AnyPoolOptions::new().connect(&url).await.unwrap();
        let mut first = sqlx::migrate!("../migrations/sqlite");
        first.migrations = std::borrow::Cow::Owned(first.migrations[..1].to_vec());
        first.run(&pool).await.unwrap();
        sqlx::raw_sql(
            "INSERT INTO runs (id, queue, app, system, labels, variables, status, attempts, published, created_at) \
             VALUES ('r1', 'default', 'sim.sleep(1.0);', '{}', '{}', '{}', 'done', 1, 1, '2026-01-01T00:00:00Z'); \
             INSERT INTO results (run_id, result, trace, log) VALUES ('r1', '{\"overall_time\": 1.0}', NULL, 'a log');",
        )
        .execute(&pool)
        .await
        .unwrap();
        pool.close().await;

        let store = Store::connect(&url).await.unwrap();
        let run = store.run("r1").await.unwrap().unwrap();
        assert_eq!(run.result.unwrap()["overall_time"], 1.0);
        assert_eq!(store.run_output("r1").await.unwrap().unwrap().log, "a log");
        let app: String =
            sqlx::query("SELECT i.app FROM runs r JOIN inputs i ON i.id = r.input_id WHERE r.id = 'r1'")
                .fetch_one(store.pool())
                .await
                .unwrap()
                .get("app");
        assert_eq!(app, "sim.sleep(1.0);");
        // The rebuilt `results` references the rebuilt `runs`, not the dropped one.
        let parent: String =
            sqlx::query("SELECT \"table\" AS parent FROM pragma_foreign_key_list('results')")
                .fetch_one(store.pool())
                .await
                .unwrap()
                .get("parent");
        assert_eq!(parent, "runs");
        assert!(store.delete_run("r1").await.unwrap());
        assert!(store.run_output("r1").await.unwrap().is_none());
        std::fs::remove_dir_all(dir).unwrap();
    }
}
