//! Stored Chakra execution traces: a name and each rank's file as it was given (plain or
//! gzip), read whole with hetsim-chakra before anything is stored, so that a trace a worker
//! meets always reads. Their rank and node counts are kept beside the files for listings.

use std::collections::HashMap;
use std::io::Cursor;
use std::path::Path;

use hetsim_chakra::{ChakraError, RankReader};
use hetsim_replay::graph::{Graph, GraphError};
use serde::{Deserialize, Serialize};
use sqlx::any::AnyRow;
use sqlx::Row;

use super::{now, Result, Store};

/// One rank's file, as `PUT /api/traces/{name}` takes it and `GET /api/traces/{name}/files`
/// gives it back.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TraceFile {
    /// The file's name (e.g. `dp-step.0.et`): errors name it, `hetsim traces get` writes it.
    pub name: String,
    /// The file's bytes (a Chakra ET file, plain or gzip), in base64 (standard alphabet,
    /// padded).
    #[serde(with = "base64_bytes")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = Byte))]
    pub data: Vec<u8>,
}

/// The body of `PUT /api/traces/{name}`: the rank files, rank 0 first.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TraceUpload {
    pub files: Vec<TraceFile>,
}

/// A stored rank file, without its bytes.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TraceFileInfo {
    pub rank: u64,
    pub name: String,
    /// The nodes the file holds (every type, metadata nodes included).
    pub nodes: u64,
    pub bytes: u64,
}

/// A stored trace as the API shows it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TraceRecord {
    pub id: String,
    pub name: String,
    pub ranks: u64,
    /// The nodes of all the ranks.
    pub nodes: u64,
    /// The files' bytes, as stored.
    pub bytes: u64,
    pub created_at: String,
    /// The rank files, rank 0 first.
    pub files: Vec<TraceFileInfo>,
}

/// Why a trace cannot be stored.
#[derive(Debug, thiserror::Error)]
pub enum TraceRefused {
    #[error("a name is needed")]
    NoName,
    #[error("a trace needs at least one rank file")]
    NoFiles,
    /// Files whose names do not say their ranks (an upload's, which come in any order).
    #[error("{0}")]
    Ranks(String),
    /// Two ranks' files of one name (less its folders): written side by side they would
    /// overwrite each other.
    #[error("ranks {0} and {1} have files of one name, {2:?}: give each rank its own")]
    SameName(usize, usize, String),
    /// More nodes than a server holds: a gzip file of a few MiB can expand a thousandfold.
    #[error(
        "{file} (rank {rank}): the trace has more than {MAX_TRACE_NODES} nodes, the most a server stores"
    )]
    TooManyNodes { file: String, rank: usize },
    /// A file does not read: the reader's error names the file, the rank and the node.
    #[error(transparent)]
    Read(#[from] ChakraError),
    /// A rank's dependency graph cannot be built (a node id twice, a cycle of data
    /// dependencies), as a replay would find it.
    #[error("{file} (rank {rank}): {problem}")]
    Graph {
        file: String,
        rank: usize,
        problem: String,
    },
}

impl TraceRefused {
    /// The field at fault: `name` or `files`.
    pub fn field(&self) -> &'static str {
        match self {
            TraceRefused::NoName => "name",
            _ => "files",
        }
    }
}

/// `files` in rank order by their names, which must be `PREFIX.N.et` (or `.et.gz`) for ranks
/// 0 to n − 1 (one file is rank 0): for an upload, whose files come in any order.
pub fn in_rank_order(files: Vec<TraceFile>) -> std::result::Result<Vec<TraceFile>, TraceRefused> {
    let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
    let order = hetsim_chakra::rank_order(&names).map_err(TraceRefused::Ranks)?;
    let mut files: Vec<Option<TraceFile>> = files.into_iter().map(Some).collect();
    Ok(order.into_iter().filter_map(|i| files[i].take()).collect())
}

/// The most nodes a stored trace may hold, all ranks together: its graphs are built whole
/// when it is stored, and when it is replayed unless its files are in dependency order
/// (docs/TRACES.md).
pub const MAX_TRACE_NODES: usize = 4_000_000;

/// The name a worker writes a stored rank file under: its stored name less any folders, so
/// that a name cannot lead out of the worker's folder (`trace.et` where nothing is left).
pub fn file_name(stored: &str) -> &str {
    Path::new(stored)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("trace.et")
}

/// Reads every rank file of a trace to its end and builds its dependency graph as a replay
/// does (control dependencies followed, their cycles broken): the node count of each rank,
/// or the first problem. A trace that passes is one a worker can read.
pub fn check_trace(name: &str, files: &[TraceFile]) -> std::result::Result<Vec<u64>, TraceRefused> {
    if name.trim().is_empty() {
        return Err(TraceRefused::NoName);
    }
    if files.is_empty() {
        return Err(TraceRefused::NoFiles);
    }
    for (rank, file) in files.iter().enumerate() {
        if let Some(first) = files[..rank]
            .iter()
            .position(|f| file_name(&f.name) == file_name(&file.name))
        {
            return Err(TraceRefused::SameName(
                first,
                rank,
                file_name(&file.name).to_owned(),
            ));
        }
    }
    let mut left = MAX_TRACE_NODES;
    files
        .iter()
        .enumerate()
        .map(|(rank, file)| {
            let input = Cursor::new(file.data.clone());
            let nodes = RankReader::from_reader(Path::new(&file.name), rank, input)?
                .take(left + 1)
                .collect::<std::result::Result<Vec<_>, _>>()?;
            if nodes.len() > left {
                return Err(TraceRefused::TooManyNodes {
                    file: file.name.clone(),
                    rank,
                });
            }
            left -= nodes.len();
            let count = nodes.len() as u64;
            Graph::build(nodes, true).map_err(|e| TraceRefused::Graph {
                file: file.name.clone(),
                rank,
                problem: match e {
                    GraphError::Duplicate(id) => format!("node {id}: its id is used twice"),
                    GraphError::Cycle(ids) => format!("a cycle of data dependencies through nodes {ids:?}"),
                },
            })?;
            Ok(count)
        })
        .collect()
}

mod base64_bytes {
    use base64::engine::general_purpose::STANDARD;
    use base64::Engine;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&STANDARD.encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(d)?;
        STANDARD
            .decode(text.as_bytes())
            .map_err(|e| serde::de::Error::custom(format!("not base64: {e}")))
    }
}

fn count(row: &AnyRow, column: &str) -> Result<u64> {
    Ok(u64::try_from(row.try_get::<i64, _>(column)?).unwrap_or_default())
}

fn size(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl Store {
    /// Stores `files` (checked by [`check_trace`], whose node counts are `nodes`) as the
    /// trace `name`, replacing the files of a trace of that name (which keeps its id, so
    /// that queued runs of it replay the new files), all in one transaction. Returns the
    /// stored trace and whether it replaced one.
    pub async fn put_trace(
        &self,
        name: &str,
        files: &[TraceFile],
        nodes: &[u64],
    ) -> Result<(TraceRecord, bool)> {
        match self.put_trace_once(name, files, nodes).await {
            // Another upload of the name committed between the lookup and the insert: this
            // one replaces it, as a later upload does.
            Err(e) if e.is_unique_violation() => self.put_trace_once(name, files, nodes).await,
            done => done,
        }
    }

    async fn put_trace_once(
        &self,
        name: &str,
        files: &[TraceFile],
        nodes: &[u64],
    ) -> Result<(TraceRecord, bool)> {
        let existing: Option<String> = sqlx::query("SELECT id FROM traces WHERE name = $1")
            .bind(name)
            .fetch_optional(self.pool())
            .await?
            .map(|row| row.try_get("id"))
            .transpose()?;
        let id = existing
            .clone()
            .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        let total: u64 = nodes.iter().sum();
        let bytes: usize = files.iter().map(|f| f.data.len()).sum();
        let created = now();
        let mut tx = self.pool().begin().await?;
        if existing.is_some() {
            sqlx::query("DELETE FROM trace_files WHERE trace_id = $1")
                .bind(&id)
                .execute(&mut *tx)
                .await?;
            sqlx::query("DELETE FROM traces WHERE id = $1")
                .bind(&id)
                .execute(&mut *tx)
                .await?;
        }
        sqlx::query(
            "INSERT INTO traces (id, name, ranks, nodes, bytes, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(&id)
        .bind(name)
        .bind(size(files.len()))
        .bind(i64::try_from(total).unwrap_or(i64::MAX))
        .bind(size(bytes))
        .bind(&created)
        .execute(&mut *tx)
        .await?;
        for (rank, (file, &count)) in files.iter().zip(nodes).enumerate() {
            sqlx::query(
                "INSERT INTO trace_files (trace_id, rank, file_name, nodes, data) VALUES ($1, $2, $3, $4, $5)",
            )
            .bind(&id)
            .bind(size(rank))
            .bind(&file.name)
            .bind(i64::try_from(count).unwrap_or(i64::MAX))
            .bind(file.data.clone())
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        let record = self
            .trace(&id)
            .await?
            .ok_or_else(|| super::StoreError::Corrupt(format!("trace {name:?} vanished as it was stored")))?;
        Ok((record, existing.is_some()))
    }

    /// The id of the trace whose id is `key`, else of the one named `key`.
    pub async fn trace_id(&self, key: &str) -> Result<Option<String>> {
        self.id_by_id_or_name("traces", key).await
    }

    /// Every stored trace, by name.
    pub async fn traces(&self) -> Result<Vec<TraceRecord>> {
        self.trace_records(None).await
    }

    /// The trace whose id or name is `key`.
    pub async fn trace(&self, key: &str) -> Result<Option<TraceRecord>> {
        match self.trace_id(key).await? {
            Some(id) => Ok(self.trace_records(Some(&id)).await?.pop()),
            None => Ok(None),
        }
    }

    async fn trace_records(&self, id: Option<&str>) -> Result<Vec<TraceRecord>> {
        let rows = sqlx::query(
            "SELECT id, name, ranks, nodes, bytes, created_at FROM traces WHERE ($1 = '' OR id = $1) ORDER BY name",
        )
        .bind(id.unwrap_or(""))
        .fetch_all(self.pool())
        .await?;
        let file_rows = sqlx::query(
            "SELECT trace_id, rank, file_name, nodes, CAST(LENGTH(data) AS BIGINT) AS bytes FROM trace_files \
             WHERE ($1 = '' OR trace_id = $1) ORDER BY trace_id, rank",
        )
        .bind(id.unwrap_or(""))
        .fetch_all(self.pool())
        .await?;
        let mut files: HashMap<String, Vec<TraceFileInfo>> = HashMap::new();
        for f in &file_rows {
            files
                .entry(f.try_get("trace_id")?)
                .or_default()
                .push(TraceFileInfo {
                    rank: count(f, "rank")?,
                    name: f.try_get("file_name")?,
                    nodes: count(f, "nodes")?,
                    bytes: count(f, "bytes")?,
                });
        }
        let mut records = Vec::with_capacity(rows.len());
        for row in rows {
            let id: String = row.try_get("id")?;
            records.push(TraceRecord {
                name: row.try_get("name")?,
                ranks: count(&row, "ranks")?,
                nodes: count(&row, "nodes")?,
                bytes: count(&row, "bytes")?,
                created_at: row.try_get("created_at")?,
                files: files.remove(&id).unwrap_or_default(),
                id,
            });
        }
        Ok(records)
    }

    /// The rank files of trace `id` with their bytes, rank 0 first (empty: no such trace).
    pub async fn trace_files(&self, id: &str) -> Result<Vec<TraceFile>> {
        sqlx::query("SELECT file_name, data FROM trace_files WHERE trace_id = $1 ORDER BY rank")
            .bind(id)
            .fetch_all(self.pool())
            .await?
            .iter()
            .map(|row| {
                Ok(TraceFile {
                    name: row.try_get("file_name")?,
                    data: row.try_get("data")?,
                })
            })
            .collect()
    }

    /// Deletes trace `id` and its files; false when there is no such trace.
    pub async fn delete_trace(&self, id: &str) -> Result<bool> {
        let mut tx = self.pool().begin().await?;
        sqlx::query("DELETE FROM trace_files WHERE trace_id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        let done = sqlx::query("DELETE FROM traces WHERE id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(done.rows_affected() > 0)
    }
}
