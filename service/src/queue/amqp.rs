//! RabbitMQ through lapin.
//!
//! Each simulation queue `Q` is a durable quorum queue `hetsim.Q` with `x-delivery-limit`;
//! messages it gives up on go to `hetsim.Q.dead`. Messages are persistent, carry the run id
//! and its publication number, and are published with confirms from the database's outbox,
//! so a broker outage delays runs but loses none. Workers take one message at a time and ack
//! it after the run's outcome is committed. The database arbitrates, not the broker: a
//! message whose run is held by another worker's lease, finished, or of an older publication
//! than its run's is acked without running anything; a run whose worker died or froze is
//! re-published by the lease reaper (`crate::reclaim`) under a new publication. The dead
//! letter of a message fails its run only while the run is still queued under it.
//!
//! A message can still be lost after its confirm (a queue deleted or purged by an operator,
//! a broker that lost its disk): the reaper asks the broker, for each queue holding runs
//! queued longer than `--requeue-after-seconds`, whether any message is waiting there; when
//! none is, it puts those runs back in the outbox under a new publication number.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use futures_util::future::BoxFuture;
use futures_util::StreamExt;
use lapin::options::{
    BasicAckOptions, BasicCancelOptions, BasicConsumeOptions, BasicPublishOptions, BasicQosOptions,
    ConfirmSelectOptions, QueueDeclareOptions,
};
use lapin::types::{AMQPValue, FieldTable, LongString, ShortString};
use lapin::{BasicProperties, Channel, Connection, ConnectionProperties};
use tokio::sync::{watch, Notify};
use tokio::task::JoinSet;

use super::RunQueue;
use crate::budgets::RunBudgets;
use crate::execute::execute;
use crate::limits::Attempts;
use crate::storage::{Store, Unpublished};

/// RabbitMQ behind [`RunQueue`]: the outbox publisher, the reaper and `workers` in-process
/// workers on `queue`.
pub struct Broker {
    pub url: String,
    pub attempts: Attempts,
    /// How long a published run may wait before the reaper checks for its message.
    pub requeue_after: Duration,
    pub workers: usize,
    pub queue: String,
    /// The name workers are known by in the runs they take (`NAME-I`).
    pub name: String,
    pub wake: Arc<Notify>,
    pub budgets: RunBudgets,
}

impl RunQueue for Broker {
    fn start(&self, tasks: &mut JoinSet<()>, store: &Store, stop: &watch::Receiver<bool>) {
        tasks.spawn(publisher(
            store.clone(),
            self.url.clone(),
            self.attempts,
            self.wake.clone(),
            stop.clone(),
        ));
        tasks.spawn(reaper(
            store.clone(),
            self.url.clone(),
            self.requeue_after,
            self.wake.clone(),
            stop.clone(),
        ));
        for i in 0..self.workers {
            tasks.spawn(worker(
                store.clone(),
                self.url.clone(),
                self.queue.clone(),
                format!("{}-{i}", self.name),
                self.attempts,
                self.budgets,
                stop.clone(),
            ));
        }
    }

    fn submitted(&self) {
        self.wake.notify_waiters();
    }

    fn broker_health(&self) -> Option<BoxFuture<'static, Result<()>>> {
        let url = self.url.clone();
        Some(Box::pin(async move { ping(&url).await }))
    }

    fn describe(&self) -> &'static str {
        "RabbitMQ"
    }
}

/// The message header with the run's publication number.
const PUBLICATION_HEADER: &str = "hetsim-publication";

/// How long the publisher leaves a queue the broker refused to declare before trying again;
/// meanwhile the other queues' runs are published as usual.
const REDECLARE_AFTER: Duration = Duration::from_secs(30);

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
///
/// A connection and channel opened is the broker answering: a failure to close them after
/// (the broker closed them first, as `rabbitmqctl close_all_connections` does) is only logged.
pub async fn ping(url: &str) -> Result<()> {
    let (connection, _channel) = channel(url).await?;
    if let Err(error) = connection.close(0, "health check").await {
        tracing::debug!(%error, "the health check's broker connection was closed before it closed it");
    }
    Ok(())
}

/// Declares `hetsim.Q` (quorum, delivery limit, dead-lettered) and `hetsim.Q.dead`.
async fn declare(channel: &Channel, queue: &str, attempts: Attempts) -> Result<()> {
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
        AMQPValue::LongLongInt(attempts.x_delivery_limit()),
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

/// Declares `queue` on a channel of its own: the broker closes a channel whose declaration it
/// refuses (PRECONDITION_FAILED for a queue that exists with other arguments), and that must
/// not stop the publishing of any other queue.
async fn declare_apart(connection: &Connection, queue: &str, attempts: Attempts) -> Result<()> {
    let channel = connection.create_channel().await?;
    declare(&channel, queue, attempts)
        .await
        .with_context(|| format!("declaring the broker queue {}", queue_name(queue)))?;
    channel.close(200, "declared").await?;
    Ok(())
}

/// Publishes the outbox until `stop`: every committed, unpublished run, with confirms; woken
/// by `wake` after a submission, and at least every second. Reconnects after failures.
async fn publisher(
    store: Store,
    url: String,
    attempts: Attempts,
    wake: Arc<Notify>,
    mut stop: watch::Receiver<bool>,
) {
    while !*stop.borrow() {
        if let Err(e) = publish_until_error(&store, &url, attempts, &wake, &mut stop).await {
            tracing::warn!("publisher: {e:#}; reconnecting in 1 s");
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }
}

async fn publish_until_error(
    store: &Store,
    url: &str,
    attempts: Attempts,
    wake: &Notify,
    stop: &mut watch::Receiver<bool>,
) -> Result<()> {
    let (connection, channel) = within(BROKER_ANSWER, "connecting", channel(url)).await??;
    within(
        BROKER_ANSWER,
        "selecting confirms",
        channel.confirm_select(ConfirmSelectOptions::default()),
    )
    .await??;
    let mut declared = std::collections::HashSet::new();
    let mut refused: HashMap<String, Instant> = HashMap::new();
    while !*stop.borrow() {
        refused.retain(|_, at| at.elapsed() < REDECLARE_AFTER);
        let skip: Vec<String> = refused.keys().cloned().collect();
        let batch = store.unpublished(500, &skip).await?;
        if batch.is_empty() {
            tokio::select! {
                _ = wake.notified() => {}
                _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                _ = stop.changed() => {}
            }
            continue;
        }
        let mut confirms = Vec::with_capacity(batch.len());
        for run in batch {
            if refused.contains_key(&run.queue) {
                continue;
            }
            if !declared.contains(&run.queue) {
                let declaring = declare_apart(&connection, &run.queue, attempts);
                if let Err(e) = within(BROKER_ANSWER, "declaring a queue", declaring).await? {
                    // A declaration on a connection the broker has closed fails too: that is
                    // the connection's fault, not the queue's.
                    if !connection.status().connected() {
                        return Err(e.context("declaring a queue: the connection to the broker is lost"));
                    }
                    tracing::warn!(
                        queue = run.queue,
                        "{e:#}; its runs wait, the other queues' are published; retrying in {} s",
                        REDECLARE_AFTER.as_secs()
                    );
                    refused.insert(run.queue.clone(), Instant::now());
                    continue;
                }
                declared.insert(run.queue.clone());
            }
            let routing = queue_name(&run.queue);
            let publishing = channel.basic_publish(
                "",
                &routing,
                BasicPublishOptions::default(),
                run.id.as_bytes(),
                message_properties(&run),
            );
            let confirm = within(BROKER_ANSWER, "publishing", publishing).await??;
            confirms.push((run, confirm));
        }
        let mut published = Vec::with_capacity(confirms.len());
        for (run, confirm) in confirms {
            if within(BROKER_ANSWER, "awaiting a publisher confirm", confirm)
                .await??
                .is_ack()
            {
                published.push(run);
            }
        }
        store.mark_published(&published).await?;
    }
    Ok(())
}

/// How long the publisher waits for the broker to answer one step (connect, declare, publish,
/// confirm) before it reconnects, and the reaper one pass: a connection closed under it (an
/// operator's `close_all_connections`) can leave lapin's answer pending for ever, and that must
/// not leave the outbox unpublished for good.
const BROKER_ANSWER: Duration = Duration::from_secs(30);

/// `step`, or an error naming `what` once it has taken longer than `limit`.
async fn within<T>(limit: Duration, what: &str, step: impl std::future::Future<Output = T>) -> Result<T> {
    tokio::time::timeout(limit, step)
        .await
        .with_context(|| format!("the broker did not answer within {} s ({what})", limit.as_secs()))
}

/// Persistent, with the run id as message id and the publication number in a header.
fn message_properties(run: &Unpublished) -> BasicProperties {
    let mut headers = FieldTable::default();
    headers.insert(
        ShortString::from(PUBLICATION_HEADER),
        AMQPValue::LongLongInt(run.publication),
    );
    BasicProperties::default()
        .with_delivery_mode(2)
        .with_message_id(ShortString::from(run.id.as_str()))
        .with_headers(headers)
}

/// The publication number a message carries (`None` for a message without one).
fn publication(properties: &BasicProperties) -> Option<i64> {
    match properties.headers().as_ref()?.inner().get(PUBLICATION_HEADER)? {
        AMQPValue::LongLongInt(n) => Some(*n),
        _ => None,
    }
}

/// Re-publishes runs whose messages were lost, until `stop`: see the module's documentation.
async fn reaper(
    store: Store,
    url: String,
    after: Duration,
    wake: Arc<Notify>,
    mut stop: watch::Receiver<bool>,
) {
    let every = (after / 4).clamp(Duration::from_millis(500), Duration::from_secs(60));
    while !*stop.borrow() {
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            _ = stop.changed() => continue,
        }
        match within(BROKER_ANSWER, "reaping", reap(&store, &url, after))
            .await
            .and_then(|reaped| reaped)
        {
            Ok(0) => {}
            Ok(n) => {
                tracing::warn!("re-publishing {n} queued runs whose broker messages were lost");
                wake.notify_waiters();
            }
            Err(e) => tracing::warn!("reaper: {e:#}; trying again in {} s", every.as_secs_f64()),
        }
    }
}

/// One pass of the reaper; returns how many runs it put back in the outbox.
async fn reap(store: &Store, url: &str, after: Duration) -> Result<u64> {
    let before = chrono::Utc::now() - chrono::Duration::from_std(after)?;
    let before = before.to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
    let queues = store.queues_waiting_since(&before).await?;
    if queues.is_empty() {
        return Ok(0);
    }
    let (connection, _channel) = channel(url).await?;
    let mut republished = 0;
    for queue in queues {
        if waiting_messages(&connection, &queue).await? == 0 {
            republished += store.republish(&queue, &before).await?;
        }
    }
    connection.close(200, "reaped").await?;
    Ok(republished)
}

/// Messages ready in `hetsim.Q` (0 when the queue does not exist: its messages went with it).
async fn waiting_messages(connection: &Connection, queue: &str) -> Result<u32> {
    let channel = connection.create_channel().await?;
    let passive = QueueDeclareOptions {
        passive: true,
        ..QueueDeclareOptions::default()
    };
    match channel
        .queue_declare(&queue_name(queue), passive, FieldTable::default())
        .await
    {
        Ok(declared) => {
            channel.close(200, "counted").await?;
            Ok(declared.message_count())
        }
        Err(lapin::Error::ProtocolError(e)) if e.get_id() == 404 => Ok(0),
        Err(e) => Err(e.into()),
    }
}

/// Consumes `queue` one run at a time until `stop` (finishing the run in hand), reconnecting
/// after broker or database failures.
pub async fn worker(
    store: Store,
    url: String,
    queue: String,
    name: String,
    attempts: Attempts,
    budgets: RunBudgets,
    mut stop: watch::Receiver<bool>,
) {
    while !*stop.borrow() {
        if let Err(e) = consume_until_error(&store, &url, &queue, &name, attempts, &budgets, &mut stop).await
        {
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
    attempts: Attempts,
    budgets: &RunBudgets,
    stop: &mut watch::Receiver<bool>,
) -> Result<()> {
    let (_connection, channel) = channel(url).await?;
    declare(&channel, queue, attempts).await?;
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
                let run = execute(store, &id, name, publication(&delivery.properties), budgets);
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
                store
                    .fail_dead_letter(&id, publication(&delivery.properties), &attempts.exhausted_message())
                    .await?;
                delivery.ack(BasicAckOptions::default()).await?;
            }
        }
    }
}
