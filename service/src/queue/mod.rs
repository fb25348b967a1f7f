//! How runs reach workers, behind one trait: RabbitMQ (durable quorum queues, publisher
//! confirms, manual acks, a delivery limit, a dead-letter queue and a reaper of lost
//! messages) or, without a broker, the database itself.

pub mod amqp;
pub mod local;

use anyhow::Result;
use futures_util::future::BoxFuture;
use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::storage::Store;

/// Where stored runs wait for workers.
pub trait RunQueue: Send + Sync {
    /// Starts the queue's tasks (outbox publisher, reaper, workers) on `tasks`; they finish
    /// the run in hand and end once `stop` turns true.
    fn start(&self, tasks: &mut JoinSet<()>, store: &Store, stop: &watch::Receiver<bool>);
    /// Says that runs were stored: wakes the publisher or the embedded workers.
    fn submitted(&self);
    /// Whether the broker answers; `None` for a queue without one.
    fn broker_health(&self) -> Option<BoxFuture<'static, Result<()>>>;
    /// A few words for the log: which queue this is.
    fn describe(&self) -> &'static str;
}

/// A simulation queue name: `[A-Za-z0-9_-]{1,64}`.
pub fn valid_queue_name(name: &str) -> bool {
    (1..=MAX_QUEUE_NAME).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-".contains(c))
}

/// The longest queue name. Names have no '.', so that no user's queue can be named like the
/// broker-side queues hetsim derives from them (`hetsim.Q.dead`).
pub const MAX_QUEUE_NAME: usize = 64;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_names_are_short_words_without_dots() {
        assert!(valid_queue_name("gpu-a100_2"));
        for bad in ["", "X.dead", "a b", "é", &"q".repeat(65)] {
            assert!(!valid_queue_name(bad), "{bad:?}");
        }
    }
}
