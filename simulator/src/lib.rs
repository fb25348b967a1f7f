//! hetsim-simulator: the discrete-event engine.
//!
//! The engine drives anything that implements [`Process`]: it hands a process the outcome of
//! its last request ([`Resume`]) and gets its next [`Request`] (compute, sleep, send, receive,
//! finish). It knows nothing of scripts: Rhai processes live in `hetsim-scripting`, and the
//! benchmarks drive native Rust processes. Link transfer times come from a [`LinkTiming`].
//!
//! Semantics (docs/SIMULATION.md): time is `f64` seconds; events at equal
//! times run in the order they were scheduled, so the same inputs give identical results. A
//! send costs the sender nothing; after its startup, a message shares its link direction's
//! bandwidth max-min fairly with the others on it (`channels` of them run at full rate); the
//! processes computing on a node share its count × cores cores the same way; messages within
//! a unit of a node and zero-byte messages arrive at once; a message between nodes is one flow
//! over its whole route ([`flows`]), chosen by least latency (`platform`).
//!
//! Modules: [`events`] (the event kernel: time, queue, cancellation), [`sharing`] (a resource
//! shared by its activities), [`flows`] (messages sharing the links of their routes), `engine` (the loop, activities and transfers), `process` (what
//! a process and the engine say to each other), `platform`, `results`, `summary` (a
//! report whose size does not grow with the processes), [`collectives`].

pub mod collectives;
mod engine;
mod error;
pub mod events;
pub mod flows;
mod placement;
mod platform;
mod process;
mod quad_heap;
mod results;
pub mod sharing;
mod summary;
mod uncertainty;
pub mod word_hash;

pub use engine::{finite_non_negative, simulate, LinkTiming, Options, Progress, ProgressFn, PROGRESS_EVERY};
pub use error::SimError;
pub use placement::{place, Placement};
pub use platform::{
    Direction, Hop, HostMemory, Link, LinkId, LinkParameterError, Node, NodeId, Platform, PlatformError,
    Routing,
};
pub use process::{Handle, Message, Process, Request, Resume, Source};
pub use results::{NodeResult, ProcessResult, Results, Span, SpanKind};
pub use summary::{label_summaries, Activity, LabelSummary, Stats, Summary};
pub use uncertainty::{Estimate, Spread};

/// A process's global id: its index in the placement, 0-based.
pub type Pid = usize;
