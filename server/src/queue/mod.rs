//! How runs reach workers: RabbitMQ (durable quorum queues, publisher confirms, manual acks,
//! a delivery limit and a dead-letter queue) or, without a broker, the database itself.

pub mod amqp;
pub mod local;

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

/// Runs a run may stop its worker before it is failed (quorum queue `x-delivery-limit`).
pub const DEFAULT_DELIVERY_LIMIT: i64 = 3;
