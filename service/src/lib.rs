//! hetsim-service: the simulation service below its HTTP edge. A submission is checked whole
//! and stored ([`submit`]), waits in a queue ([`queue`]: the database itself, or RabbitMQ),
//! is taken by a worker and simulated ([`execute`]), and its result, log and trace are
//! written back ([`storage`], SQLite or PostgreSQL). The CLI and the web crate call in here;
//! nothing here knows HTTP or the command line.
//!
//! Runs are held by leases and bounded by budgets ([`budgets`]); a server takes back runs
//! whose lease expired ([`reclaim`]).
//!
//! Modules, lowest first (each uses only those above it): [`status`], [`limits`],
//! [`budgets`], `redact`, [`table`], [`storage`], [`examples`], [`execute`], [`queue`],
//! [`reclaim`], [`submit`].

pub mod budgets;
pub mod examples;
pub mod execute;
pub mod limits;
pub mod queue;
pub mod reclaim;
mod redact;
mod replayed;
pub mod status;
pub mod storage;
pub mod submit;
pub mod table;

pub use redact::redact_url;
