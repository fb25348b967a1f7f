//! Serving the router with the connection limits of `ServiceLimits`: at most
//! `max_connections` connections at once, lowered to what the open-file limit allows (the
//! server raises its soft limit to the hard one first); a connection over the limit is
//! answered 503 at once and closed, so that idle or half-sent connections cannot make new
//! clients wait behind them; `header_timeout_seconds` for a client to send its headers
//! (hyper's `header_read_timeout`, against slowloris); and a graceful shutdown that lets the
//! requests in flight finish. axum::serve has none of these settings; hyper-util's
//! connection builder, which it wraps, has them.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

use hetsim_service::limits::ServiceLimits;

/// How long a shutdown waits for the connections in flight before it drops them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// Open files kept free of connections: the database pools (at most 8 + 2), SQLite's files,
/// the broker, the listener, standard streams, logs, and the refusals of connections over
/// the limit, which each hold a descriptor for the moment of their answer.
const FILE_HEADROOM: u64 = 128;

/// How long a refusal may take to write before the connection is dropped unanswered.
const REFUSAL_TIMEOUT: Duration = Duration::from_secs(1);

/// Raises the soft open-file limit to the hard one (the common default soft limit, 1,024,
/// holds far fewer connections than the hard one allows) and returns the soft limit held
/// afterwards, or `None` where it cannot be read.
fn raise_open_files() -> Option<u64> {
    use rustix::process::{getrlimit, setrlimit, Resource};
    let before = getrlimit(Resource::Nofile);
    let mut raised = before;
    raised.current = before.maximum;
    if let Err(e) = setrlimit(Resource::Nofile, raised) {
        tracing::warn!("open files: cannot raise the soft limit to the hard one: {e}");
    }
    let after = getrlimit(Resource::Nofile);
    tracing::info!(
        "open files: soft limit {} (was {}), hard limit {}",
        shown(after.current),
        shown(before.current),
        shown(after.maximum)
    );
    after.current
}

fn shown(limit: Option<u64>) -> String {
    limit.map_or_else(|| "unlimited".to_owned(), |n| n.to_string())
}

/// The connections served where neither the flag nor the open-file limit bounds them.
const UNBOUNDED_CONNECTIONS: usize = 1 << 20;

/// The connections served at once: `configured` (`None`: as many as fit), lowered to leave
/// [`FILE_HEADROOM`] of `open_files` (`None`: unlimited) to the rest of the server; at
/// least 1.
pub fn connection_limit(configured: Option<usize>, open_files: Option<u64>) -> usize {
    let fits = open_files.map_or(UNBOUNDED_CONNECTIONS, |n| {
        usize::try_from(n.saturating_sub(FILE_HEADROOM)).unwrap_or(UNBOUNDED_CONNECTIONS)
    });
    configured.unwrap_or(UNBOUNDED_CONNECTIONS).min(fits).max(1)
}

/// Answers a connection over the limit with 503 and closes it, without reading its request.
async fn refuse(mut stream: TcpStream, limit: usize) {
    let body = format!(
        "{{\"error\":\"the server is serving its limit of {limit} connections (--max-connections); try again shortly\",\"field\":null}}"
    );
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\n\
         connection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let answered = tokio::time::timeout(REFUSAL_TIMEOUT, async {
        stream.write_all(response.as_bytes()).await?;
        stream.shutdown().await
    })
    .await;
    if let Ok(Err(e)) = answered {
        tracing::debug!("refusing a connection over the limit: {e}");
    }
}

pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: &ServiceLimits,
    shutdown: impl Future<Output = ()>,
) -> Result<()> {
    let limit = connection_limit(limits.max_connections, raise_open_files());
    match limits.max_connections {
        Some(asked) if limit < asked => tracing::warn!(
            "serving at most {limit} connections, not {asked}: the open-file limit leaves no more"
        ),
        _ => tracing::info!("serving at most {limit} connections at once"),
    }
    let slots = Arc::new(Semaphore::new(limit));
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(Duration::from_secs(limits.header_timeout_seconds.max(1)));
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of descriptors or a reset before accept: the listener stays usable.
                    tracing::warn!("accept: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            tokio::spawn(refuse(stream, limit));
            continue;
        };
        let service = TowerToHyperService::new(app.clone());
        let connection = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
        let connection = graceful.watch(connection.into_owned());
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("connection: {e}");
            }
            drop(slot);
        });
    }
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(SHUTDOWN_GRACE) => tracing::warn!("shutdown: connections still open after {SHUTDOWN_GRACE:?}"),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_connection_limit_leaves_room_for_the_rest_of_the_server() {
        assert_eq!(connection_limit(Some(1024), Some(1024)), 1024 - 128);
        assert_eq!(connection_limit(Some(1024), Some(1_048_576)), 1024);
        assert_eq!(connection_limit(Some(1024), None), 1024);
        assert_eq!(connection_limit(Some(1024), Some(100)), 1);
        assert_eq!(connection_limit(Some(0), None), 1);
        // Not configured: the descriptor budget decides.
        assert_eq!(connection_limit(None, Some(20_000)), 20_000 - 128);
        assert_eq!(connection_limit(None, None), UNBOUNDED_CONNECTIONS);
    }
}
