//! Why a replay fails: each case names the file, the rank and the nodes at fault.

use std::path::PathBuf;

use hetsim_chakra::ChakraError;
use hetsim_scripting::ScriptError;
use hetsim_simulator::SimError;

#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error(transparent)]
    Trace(#[from] ChakraError),
    #[error("{} (rank {rank}): node id {id} appears twice", file.display())]
    Duplicate { file: PathBuf, rank: usize, id: u64 },
    #[error("{} (rank {rank}): a cycle of data dependencies: nodes {}", file.display(), ids(nodes))]
    Cycle {
        file: PathBuf,
        rank: usize,
        nodes: Vec<u64>,
    },
    #[error(
        "the trace has {ranks} ranks but the system runs at most {capacity} processes of label `{label}`"
    )]
    Ranks {
        ranks: usize,
        label: String,
        capacity: u64,
    },
    #[error("the system: {0}")]
    System(#[from] ScriptError),
    #[error("deadlock at t = {time} s: these nodes wait and nothing is on its way:\n  {}", waiting.join("\n  "))]
    Deadlock { time: f64, waiting: Vec<String> },
    #[error("sends no receive matched (a deadlock in the traced program):\n  {}", sends.join("\n  "))]
    Unmatched { sends: Vec<String> },
    #[error("{0}")]
    Engine(SimError),
    #[error("{0}")]
    Other(String),
}

fn ids(nodes: &[u64]) -> String {
    nodes.iter().map(u64::to_string).collect::<Vec<_>>().join(" -> ")
}
