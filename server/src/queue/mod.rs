//! How runs reach workers: RabbitMQ (durable quorum queues, publisher confirms, manual acks,
//! a delivery limit and a dead-letter queue) or, without a broker, the database itself.

pub mod amqp;
pub mod local;

/// A simulation queue name: letters, digits, `.`, `-`, `_`; 1 to 100 characters.
pub fn valid_queue_name(name: &str) -> bool {
    (1..=100).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
}

/// Runs a run may stop its worker before it is failed (quorum queue `x-delivery-limit`).
pub const DEFAULT_DELIVERY_LIMIT: i64 = 3;
