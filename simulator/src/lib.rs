//! hetsim-simulator: the discrete-event engine.
//!
//! The engine drives anything that implements [`Process`]: it hands a process the outcome of
//! its last request ([`Resume`]) and gets its next [`Request`] (compute, sleep, send, receive,
//! finish). It knows nothing of scripts: Rhai processes live in `hetsim-scripting`, and the
//! benchmarks drive native Rust processes. Link transfer times come from a [`LinkTiming`].
//!
//! Semantics (DESIGN.md, "Application primitives"): time is `f64` seconds; events at equal
//! times run in the order they were scheduled, so the same inputs give identical results. A
//! send costs the sender nothing; a link carries `channels` transfers at once per direction
//! and queues the rest FIFO; messages within a node and zero-byte messages arrive at once;
//! messages between unlinked nodes are stored and forwarded along the fewest links.

pub mod collectives;
mod engine;
mod platform;
mod results;
pub mod timeline;
mod uncertainty;

pub use engine::{
    simulate, LinkTiming, Message, Options, Process, Progress, ProgressFn, Request, Resume, SimError, Source,
    PROGRESS_EVERY,
};
pub use platform::{
    place, Direction, Hop, HostMemory, Link, LinkId, Node, NodeId, Placement, Platform, PlatformError,
};
pub use results::{NodeResult, ProcessResult, Results, Span, SpanKind};
pub use uncertainty::{Estimate, Spread};

/// A process's global id: its index in the placement, 0-based.
pub type Pid = usize;
