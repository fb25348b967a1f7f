//! hetsim-chakra: MLCommons Chakra execution traces (Chakra ET), read as streams of nodes.
//!
//! A trace is one file per rank (`PREFIX.RANK.et`, plain or gzip), each a sequence of
//! protobuf messages framed by their varint length: a `GlobalMetadata`, then `Node`s
//! ([`proto`], the schema's messages by prost derive; versions 0.0.4 and 1.0.x).
//! [`RankReader`] streams a rank's nodes as [`TraceNode`]s holding what a replay needs
//! (id, name, type, dependencies, recorded duration, the attributes with conventional
//! names, the data type: [`DataType`]), so the file is never held whole, and gathers the
//! process groups its METADATA nodes state. [`rank_files`] finds a prefix's rank files,
//! [`Groups`] reads ASTRA-sim's communicator groups and PyTorch's process-group configs,
//! and [`writer`] writes traces for tests and examples. Every error is a [`ChakraError`]
//! naming the file, the rank and the node.
//!
//! This crate knows nothing of the engine: the replay lives in hetsim-replay.

mod dtype;
mod error;
mod files;
mod groups;
mod node;
pub mod proto;
mod reader;
pub mod writer;

pub use dtype::DataType;
pub use error::{At, ChakraError, Problem};
pub use files::{rank_files, rank_order};
pub use groups::Groups;
pub use node::{Attributes, NodeKind, TraceNode};
pub use reader::{known_version, Metadata, RankReader, MAX_MESSAGE};
