//! One rank's trace file as a stream: the metadata, then its nodes one at a time.
//!
//! The file is a sequence of messages, each framed by its length as a varint: one
//! `GlobalMetadata`, then `Node`s. It is read plain or, when it starts with gzip's magic
//! bytes, through a gzip decoder; either way through a buffer, one message in memory at a
//! time.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use flate2::read::MultiGzDecoder;
use prost::Message;

use crate::dtype::DataType;
use crate::error::{At, ChakraError, Problem};
use crate::groups::Groups;
use crate::node::{Attributes, NodeKind, TraceNode};
use crate::proto;

/// The longest message read [bytes]: a length prefix above it is taken for corruption
/// rather than allocated.
pub const MAX_MESSAGE: u64 = 1 << 28;

/// The metadata of a rank's trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Metadata {
    /// `GlobalMetadata.version`, else its `schema` attribute.
    pub version: String,
}

/// One rank's trace, open: its metadata read, its nodes to come.
pub struct RankReader {
    file: PathBuf,
    rank: usize,
    input: Box<dyn BufRead>,
    pub metadata: Metadata,
    /// The process groups of the METADATA nodes read so far (`process_group:init`,
    /// crate::groups).
    pub groups: Groups,
    index: u64,
    last_id: Option<u64>,
    done: bool,
}

/// Whether `version` is one this reader knows: 0.0.4 and 1.0.x, as the version field or
/// as the start of a converter's `schema` (e.g. "1.0.2-chakra.0.0.4").
pub fn known_version(version: &str) -> bool {
    version.starts_with("0.0.4") || version.starts_with("1.0.")
}

/// Reads a varint; `Ok(None)` at a clean end of input (no byte of it read).
fn varint(input: &mut dyn BufRead) -> Result<Option<u64>, Problem> {
    let mut value: u64 = 0;
    for i in 0..10 {
        let mut byte = [0u8; 1];
        match input.read(&mut byte)? {
            0 if i == 0 => return Ok(None),
            0 => return Err(Problem::Truncated),
            _ => {}
        }
        value |= u64::from(byte[0] & 0x7f) << (7 * i);
        if byte[0] & 0x80 == 0 {
            return Ok(Some(value));
        }
    }
    Err(Problem::Decode("a length prefix longer than 10 bytes".to_owned()))
}

/// The next framed message's bytes, or `None` at the end of the input.
fn frame(input: &mut dyn BufRead) -> Result<Option<Vec<u8>>, Problem> {
    let Some(length) = varint(input)? else {
        return Ok(None);
    };
    if length > MAX_MESSAGE {
        return Err(Problem::TooLong(length));
    }
    let mut bytes = Vec::new();
    input.take(length).read_to_end(&mut bytes)?;
    if (bytes.len() as u64) < length {
        return Err(Problem::Truncated);
    }
    Ok(Some(bytes))
}

impl RankReader {
    /// Opens `file` as rank `rank` and reads its metadata.
    pub fn open(file: &Path, rank: usize) -> Result<Self, ChakraError> {
        let fail = |problem| ChakraError {
            file: file.to_owned(),
            rank,
            at: At::File,
            problem,
        };
        let opened = File::open(file).map_err(|e| fail(e.into()))?;
        Self::from_reader(file, rank, opened)
    }

    /// Reads a trace from `input` (plain or gzip), named `file` in errors.
    pub fn from_reader(file: &Path, rank: usize, input: impl Read + 'static) -> Result<Self, ChakraError> {
        let fail = |problem| ChakraError {
            file: file.to_owned(),
            rank,
            at: At::File,
            problem,
        };
        let mut buffered = BufReader::with_capacity(1 << 16, input);
        let head = buffered.fill_buf().map_err(|e| fail(e.into()))?;
        let mut input: Box<dyn BufRead> = if head.starts_with(&[0x1f, 0x8b]) {
            Box::new(BufReader::with_capacity(1 << 16, MultiGzDecoder::new(buffered)))
        } else {
            Box::new(buffered)
        };
        let bytes = frame(&mut *input)
            .map_err(fail)?
            .ok_or_else(|| fail(Problem::Decode("an empty file: no GlobalMetadata".to_owned())))?;
        let meta = proto::GlobalMetadata::decode(bytes.as_slice())
            .map_err(|e| fail(Problem::Decode(e.to_string())))?;
        let version = if meta.version.is_empty() {
            meta.attr
                .iter()
                .find(|a| a.name == "schema")
                .and_then(|a| a.value.as_ref()?.as_str().map(str::to_owned))
                .unwrap_or_default()
        } else {
            meta.version
        };
        if !known_version(&version) {
            return Err(fail(Problem::Version(version)));
        }
        Ok(RankReader {
            file: file.to_owned(),
            rank,
            input,
            metadata: Metadata { version },
            groups: Groups::default(),
            index: 0,
            last_id: None,
            done: false,
        })
    }

    pub fn file(&self) -> &Path {
        &self.file
    }

    pub fn rank(&self) -> usize {
        self.rank
    }

    fn error(&self, at: At, problem: Problem) -> ChakraError {
        ChakraError {
            file: self.file.clone(),
            rank: self.rank,
            at,
            problem,
        }
    }

    fn next_node(&mut self) -> Result<Option<TraceNode>, ChakraError> {
        let here = At::Message {
            index: self.index,
            after: self.last_id,
        };
        let Some(bytes) = frame(&mut *self.input).map_err(|p| self.error(here, p))? else {
            return Ok(None);
        };
        let node = proto::Node::decode(bytes.as_slice())
            .map_err(|e| self.error(here, Problem::Decode(e.to_string())))?;
        let at = At::Node(node.id);
        let kind =
            NodeKind::of(node.r#type).ok_or_else(|| self.error(at, Problem::UnknownNodeType(node.r#type)))?;
        let mut attributes = Attributes::read(&node.attr).map_err(|b| {
            self.error(
                at,
                Problem::Attribute {
                    name: b.name,
                    why: b.why,
                },
            )
        })?;
        if let Some(inputs) = &node.inputs {
            if attributes.dtype.is_none() {
                attributes.dtype = DataType::of_input_types(&inputs.types);
            }
            if kind == NodeKind::Metadata && node.name.contains("process_group:init") {
                Groups::from_pg_config(&inputs.values)
                    .and_then(|groups| self.groups.merge(&groups))
                    .map_err(|why| self.error(at, Problem::Groups(why)))?;
            }
        }
        self.index += 1;
        self.last_id = Some(node.id);
        Ok(Some(TraceNode {
            id: node.id,
            name: node.name,
            kind,
            data_deps: node.data_deps,
            ctrl_deps: node.ctrl_deps,
            duration_micros: node.duration_micros,
            attributes,
        }))
    }
}

impl Iterator for RankReader {
    type Item = Result<TraceNode, ChakraError>;

    /// The next node; after an error, none.
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let next = self.next_node().transpose();
        if !matches!(next, Some(Ok(_))) {
            self.done = true;
        }
        next
    }
}
