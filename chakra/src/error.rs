//! Why a trace cannot be read: always naming the file and the rank, and the node where one
//! is at fault.

use std::fmt;
use std::path::PathBuf;

/// What is wrong.
#[derive(Debug, thiserror::Error)]
pub enum Problem {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The file ends inside a length prefix or a message.
    #[error("the file ends inside a message (truncated?)")]
    Truncated,
    /// The bytes are not the schema's message (a wrong wire type, a bad varint).
    #[error("not a Chakra message: {0}")]
    Decode(String),
    #[error("unknown node type {0} (the schema has 1 METADATA to 7 COMM_COLL)")]
    UnknownNodeType(i32),
    #[error("attribute `{name}`: {why}")]
    Attribute { name: String, why: &'static str },
    #[error("schema version {0:?} is not one this reader knows (0.0.4, 1.0.x)")]
    Version(String),
    /// A length prefix above the reader's limit (256 MiB), taken for corruption.
    #[error("a message of {0} bytes (over the 256 MiB a message may have: a corrupted length?)")]
    TooLong(u64),
    #[error("{0}")]
    Files(String),
    #[error("communicator groups: {0}")]
    Groups(String),
}

/// Where in a trace a node is: its id where it was read, else its position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum At {
    /// The whole file (its metadata, its name).
    File,
    /// The node with this id.
    Node(u64),
    /// The `index`-th message after the metadata (0-based), whose id could not be read;
    /// `after` is the id of the node before it, if any.
    Message { index: u64, after: Option<u64> },
}

/// A trace's error.
#[derive(Debug)]
pub struct ChakraError {
    pub file: PathBuf,
    /// The rank the file holds (its `PREFIX.RANK.et` number; 0 for a single file).
    pub rank: usize,
    pub at: At,
    pub problem: Problem,
}

impl fmt::Display for ChakraError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (rank {})", self.file.display(), self.rank)?;
        match self.at {
            At::File => {}
            At::Node(id) => write!(f, ", node {id}")?,
            At::Message {
                index,
                after: Some(id),
            } => write!(f, ", node #{index} (after node {id})")?,
            At::Message { index, after: None } => write!(f, ", node #{index} (the first)")?,
        }
        write!(f, ": {}", self.problem)
    }
}

impl std::error::Error for ChakraError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.problem)
    }
}
