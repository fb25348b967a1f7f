//! Serving the router with the connection limits of `ServiceLimits`: at most
//! `max_connections` connections at once (the accept loop waits for a free slot, so file
//! descriptors cannot run out), `header_timeout_seconds` for a client to send its headers
//! (hyper's `header_read_timeout`, against slowloris), and a graceful shutdown that lets the
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
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use hetsim_service::limits::ServiceLimits;

/// How long a shutdown waits for the connections in flight before it drops them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: &ServiceLimits,
    shutdown: impl Future<Output = ()>,
) -> Result<()> {
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(Duration::from_secs(limits.header_timeout_seconds.max(1)));
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let slot = tokio::select! {
            slot = slots.clone().acquire_owned() => slot?,
            () = &mut shutdown => break,
        };
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
