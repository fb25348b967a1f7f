//! Why the store failed: the database's own error, with what the store was doing where that
//! says more, as a type the callers can ask (a name taken, a database that does not answer)
//! instead of reading its text.

/// A storage error. Its text is what the store was doing (or the database's message); the
/// database's error is its source.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("connecting to the database {url}")]
    Connect {
        /// The database's URL, its password redacted.
        url: String,
        #[source]
        source: sqlx::Error,
    },
    #[error("applying the database migrations")]
    Migrate(#[source] sqlx::migrate::MigrateError),
    #[error(transparent)]
    Database(#[from] sqlx::Error),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// A component the catalog cannot hold (its kind).
    #[error(transparent)]
    Component(#[from] hetsim_system::SystemError),
    /// A row holds what no version of hetsim writes.
    #[error("{0}")]
    Corrupt(String),
}

pub type Result<T> = std::result::Result<T, StoreError>;

impl StoreError {
    /// The database's error, where there is one.
    fn database(&self) -> Option<&sqlx::Error> {
        match self {
            StoreError::Connect { source, .. } => Some(source),
            StoreError::Database(e) => Some(e),
            _ => None,
        }
    }

    /// Whether the database refused a duplicate of a unique key (a name taken by a
    /// concurrent creation, or a rename onto a taken name).
    pub fn is_unique_violation(&self) -> bool {
        matches!(self.database(), Some(sqlx::Error::Database(db)) if db.is_unique_violation())
    }

    /// Whether the database does not answer (down, restarting, out of connections), which a
    /// client may retry, rather than a fault.
    pub fn is_unreachable(&self) -> bool {
        matches!(
            self.database(),
            Some(sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_))
        )
    }
}
