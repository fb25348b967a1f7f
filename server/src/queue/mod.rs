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

/// The times a run may be started before it is failed: a run whose worker process dies
/// with it (killed, out of memory, aborted) at every attempt. The one delivery limit of both
/// queues: the embedded queue compares it with a run's attempts, RabbitMQ gets it as the
/// quorum queue's `x-delivery-limit`, which counts returns, one fewer than attempts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attempts(u32);

impl Attempts {
    pub const DEFAULT: Attempts = Attempts(3);
    const MAX: u32 = 100;

    pub fn get(self) -> i64 {
        i64::from(self.0)
    }

    /// RabbitMQ's `x-delivery-limit`: a message returned more times than this is
    /// dead-lettered, so `n` attempts allow `n - 1` returns.
    pub fn x_delivery_limit(self) -> i64 {
        self.get() - 1
    }

    /// Why a run that used them up failed.
    pub fn exhausted_message(self) -> String {
        format!(
            "the run stopped its worker process at each of its {} attempts (--max-attempts {}); not retried",
            self.0, self.0
        )
    }
}

impl std::str::FromStr for Attempts {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text.parse::<u32>() {
            Ok(n) if (1..=Self::MAX).contains(&n) => Ok(Attempts(n)),
            _ => Err(format!(
                "expected a whole number of attempts from 1 to {}",
                Self::MAX
            )),
        }
    }
}

impl std::fmt::Display for Attempts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

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

    #[test]
    fn the_broker_limit_counts_returns_one_fewer_than_attempts() {
        let three: Attempts = "3".parse().unwrap();
        assert_eq!((three.get(), three.x_delivery_limit()), (3, 2));
        assert!("0".parse::<Attempts>().is_err() && "101".parse::<Attempts>().is_err());
    }
}
