//! RabbitMQ through lapin.
//!
//! Each simulation queue `Q` is a durable quorum queue `hetsim.Q` with `x-delivery-limit`;
//! messages it gives up on go to `hetsim.Q.dead`. Messages are persistent, carry the run id,
//! and are published with confirms from the database's outbox, so a broker outage delays
//! runs but loses none. Workers take one message at a time and ack it after the run's outcome
//! is committed; a redelivered run that is already finished is acked without a second result.

use std::time::Duration;

use anyhow::{Context, Result};
use futures_util::StreamExt;
use lapin::options::{
    BasicAckOptions, BasicCancelOptions, BasicConsumeOptions, BasicPublishOptions, BasicQosOptions,
    ConfirmSelectOptions, QueueDeclareOptions,
};
use lapin::types::{AMQPValue, FieldTable, LongString, ShortString};
use lapin::{BasicProperties, Channel, Connection, ConnectionProperties};
use tokio::sync::{watch, Notify};

use crate::execute::execute;
use crate::storage::Store;

fn queue_name(queue: &str) -> String {
    format!("hetsim.{queue}")
}

fn dead_queue_name(queue: &str) -> String {
    format!("hetsim.{queue}.dead")
}

async fn channel(url: &str) -> Result<(Connection, Channel)> {
    let connection = Connection::connect(url, ConnectionProperties::default())
        .await
        .with_context(|| format!("connecting to the broker {}", crate::redact::redact_url(url)))?;
    let channel = connection.create_channel().await?;
    Ok((connection, channel))
}

/// Opens and closes a connection: whether the broker answers.
pub async fn ping(url: &str) -> Result<()> {
    let (connection, _channel) = channel(url).await?;
    connection.close(0, "health check").await?;
    Ok(())
}

/// Declares `hetsim.Q` (quorum, delivery limit, dead-lettered) and `hetsim.Q.dead`.
async fn declare(channel: &Channel, queue: &str, delivery_limit: i64) -> Result<()> {
    let durable = QueueDeclareOptions {
        durable: true,
        ..QueueDeclareOptions::default()
    };
    channel
        .queue_declare(&dead_queue_name(queue), durable, FieldTable::default())
        .await?;
    let mut arguments = FieldTable::default();
    arguments.insert(
        ShortString::from("x-queue-type"),
        AMQPValue::LongString(LongString::from("quorum")),
    );
    arguments.insert(
        ShortString::from("x-delivery-limit"),
        AMQPValue::LongLongInt(delivery_limit),
    );
    arguments.insert(
        ShortString::from("x-dead-letter-exchange"),
        AMQPValue::LongString(LongString::from("")),
    );
    arguments.insert(
        ShortString::from("x-dead-letter-routing-key"),
        AMQPValue::LongString(LongString::from(dead_queue_name(queue))),
    );
    channel
        .queue_declare(&queue_name(queue), durable, arguments)
        .await?;
    Ok(())
}

/// Publishes the outbox until `stop`: every committed, unpublished run, with confirms; woken
/// by `wake` after a submission, and at least every second. Reconnects after failures.
pub async fn publisher(
    store: Store,
    url: String,
    delivery_limit: i64,
    wake: std::sync::Arc<Notify>,
    mut stop: watch::Receiver<bool>,
) {
    while !*stop.borrow() {
        if let Err(e) = publish_until_error(&store, &url, delivery_limit, &wake, &mut stop).await {
            tracing::warn!("publisher: {e:#}; reconnecting in 1 s");
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }
}

async fn publish_until_error(
    store: &Store,
    url: &str,
    delivery_limit: i64,
    wake: &Notify,
    stop: &mut watch::Receiver<bool>,
) -> Result<()> {
    let (_connection, channel) = channel(url).await?;
    channel.confirm_select(ConfirmSelectOptions::default()).await?;
    let mut declared = std::collections::HashSet::new();
    while !*stop.borrow() {
        let batch = store.unpublished(500).await?;
        if batch.is_empty() {
            tokio::select! {
                _ = wake.notified() => {}
                _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                _ = stop.changed() => {}
            }
            continue;
        }
        let mut confirms = Vec::with_capacity(batch.len());
        for (id, queue) in &batch {
            if declared.insert(queue.clone()) {
                declare(&channel, queue, delivery_limit).await?;
            }
            let properties = BasicProperties::default()
                .with_delivery_mode(2)
                .with_message_id(ShortString::from(id.as_str()));
            confirms.push(
                channel
                    .basic_publish(
                        "",
                        &queue_name(queue),
                        BasicPublishOptions::default(),
                        id.as_bytes(),
                        properties,
                    )
                    .await?,
            );
        }
        let mut published = Vec::with_capacity(batch.len());
        for ((id, _), confirm) in batch.into_iter().zip(confirms) {
            if confirm.await?.is_ack() {
                published.push(id);
            }
        }
        store.mark_published(&published).await?;
    }
    Ok(())
}

/// Consumes `queue` one run at a time until `stop` (finishing the run in hand), reconnecting
/// after broker or database failures.
pub async fn worker(
    store: Store,
    url: String,
    queue: String,
    name: String,
    delivery_limit: i64,
    mut stop: watch::Receiver<bool>,
) {
    while !*stop.borrow() {
        if let Err(e) = consume_until_error(&store, &url, &queue, &name, delivery_limit, &mut stop).await {
            tracing::warn!("worker {name}: {e:#}; reconnecting in 1 s");
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }
}

async fn consume_until_error(
    store: &Store,
    url: &str,
    queue: &str,
    name: &str,
    delivery_limit: i64,
    stop: &mut watch::Receiver<bool>,
) -> Result<()> {
    let (_connection, channel) = channel(url).await?;
    declare(&channel, queue, delivery_limit).await?;
    channel.basic_qos(1, BasicQosOptions::default()).await?;
    let mut runs = channel
        .basic_consume(
            &queue_name(queue),
            name,
            BasicConsumeOptions::default(),
            FieldTable::default(),
        )
        .await?;
    let mut dead = channel
        .basic_consume(
            &dead_queue_name(queue),
            &format!("{name}-dead"),
            BasicConsumeOptions::default(),
            FieldTable::default(),
        )
        .await?;
    tracing::info!(queue, worker = name, "consuming");
    let dead_tag = format!("{name}-dead");
    loop {
        if *stop.borrow() {
            return Ok(());
        }
        tokio::select! {
            biased;
            _ = stop.changed() => {}
            delivery = runs.next() => {
                let delivery = delivery.context("the broker closed the consumer")??;
                let id = String::from_utf8_lossy(&delivery.data).into_owned();
                let run = execute(store, &id, name);
                tokio::pin!(run);
                let mut cancelled = false;
                loop {
                    tokio::select! {
                        biased;
                        outcome = &mut run => {
                            outcome?;
                            break;
                        }
                        // Stop taking runs at once: with prefetch 1 and this run unacked, no
                        // other message reaches this consumer, so none is returned (and
                        // counted against its delivery limit) when the worker exits.
                        _ = stop.changed(), if !cancelled => {
                            channel.basic_cancel(name, BasicCancelOptions::default()).await?;
                            channel.basic_cancel(&dead_tag, BasicCancelOptions::default()).await?;
                            cancelled = true;
                        }
                    }
                }
                delivery.ack(BasicAckOptions::default()).await?;
            }
            delivery = dead.next() => {
                let delivery = delivery.context("the broker closed the dead-letter consumer")??;
                let id = String::from_utf8_lossy(&delivery.data).into_owned();
                let attempts = store.run(&id).await?.map_or(0, |r| r.attempts);
                let reason = format!(
                    "the run stopped its worker process at each of its {attempts} attempts \
                     (delivery limit {delivery_limit}); not retried"
                );
                store.fail_run(&id, &reason).await?;
                delivery.ack(BasicAckOptions::default()).await?;
            }
        }
    }
}
