//! SQL storage through sqlx's `Any` driver: PostgreSQL for shared deployments, SQLite as the
//! embedded default, one set of queries for both (`$n` parameters, text timestamps and JSON).

mod catalog;
mod runs;

use anyhow::{Context, Result};
use sqlx::any::{install_default_drivers, AnyPoolOptions};
use sqlx::AnyPool;

pub use catalog::{Attribute, ComponentRecord, Library, Named};
pub use runs::{NewInput, NewRun, RunFilter, RunInputs, RunRecord, Start, SweepSummary, Unpublished};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Postgres,
    Sqlite,
}

#[derive(Clone)]
pub struct Store {
    pool: AnyPool,
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
            .with_context(|| format!("connecting to the database {}", crate::redact::redact_url(&url)))?;
        if dialect == Dialect::Sqlite {
            // Readers and one writer at a time without "database is locked" between workers.
            sqlx::query("PRAGMA journal_mode = WAL").execute(&pool).await?;
        }
        let migrator = match dialect {
            Dialect::Postgres => sqlx::migrate!("../migrations/postgres"),
            Dialect::Sqlite => sqlx::migrate!("../migrations/sqlite"),
        };
        migrator
            .run(&pool)
            .await
            .context("applying the database migrations")?;
        let store = Store { pool };
        store.seed_catalog().await?;
        Ok(store)
    }

    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }
}
