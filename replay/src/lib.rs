//! hetsim-replay: Chakra execution traces replayed on the hetsim engine.
//!
//! Rank r of a trace runs on the r-th process of a label (`GPU` by default) as four engine
//! processes on its node: a CPU stream, a GPU stream and a communication stream (one node
//! of each kind in flight at a time, as ASTRA-sim defines a rank) and a relay that wakes
//! them ([`stream`]). A node issues when its dependencies are done ([`graph`]: data
//! dependencies always, control dependencies unless they close a cycle; a file in
//! dependency order is read as the run goes instead of into a graph, [`feed`]); compute nodes
//! take the compute policy's time ([`policy`]); collectives run hetsim's plans over the
//! group, as a script's `sim.<collective>` does ([`comm`]). docs/TRACES.md tells the
//! semantics and the limits.

mod busy;
pub mod comm;
pub mod context;
mod error;
pub mod feed;
pub mod graph;
pub mod kind;
pub mod model;
mod nodes;
pub mod policy;
pub mod rank;
mod report;
mod run;
pub mod stream;

pub use error::ReplayError;
pub use policy::Policy;
pub use report::{RankReport, ReplayReport};
pub use run::{replay, ReplayOptions};
