//! `hetsim serve` and `hetsim worker`: the long-running processes.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use tokio::sync::{watch, Notify};
use tokio::task::JoinSet;

use crate::cli::{BudgetFlags, ServeArgs, WorkerArgs};
use hetsim_service::budgets::RunBudgets;
use hetsim_service::limits::ServiceLimits;
use hetsim_service::queue::amqp::{self, Broker};
use hetsim_service::queue::local::Embedded;
use hetsim_service::queue::RunQueue;
use hetsim_service::reclaim::reclaimer;
use hetsim_service::storage::Store;
use hetsim_web::{router, Access, AppState};

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,sqlx=warn,lapin=warn"));
    // Colour codes only for a person at a terminal, not in a redirected log.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}

/// Resolves on SIGTERM or Ctrl-C.
async fn termination() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(term) => term,
            Err(_) => return std::future::pending().await,
        };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}

fn worker_name(given: Option<String>) -> String {
    given.unwrap_or_else(|| {
        let host = std::fs::read_to_string("/etc/hostname").unwrap_or_default();
        format!("{}-{}", host.trim(), std::process::id())
    })
}

/// The queue `args` ask for: RabbitMQ with `--amqp`, else the embedded one.
fn run_queue(args: &ServeArgs) -> Arc<dyn RunQueue> {
    let wake = Arc::new(Notify::new());
    let name = worker_name(None);
    let budgets = RunBudgets::from(&args.budgets);
    match &args.amqp {
        None => Arc::new(Embedded {
            workers: args.workers.unwrap_or(2),
            name,
            wake,
            budgets,
        }),
        Some(url) => Arc::new(Broker {
            url: url.clone(),
            attempts: args.max_attempts,
            requeue_after: Duration::from_secs(args.requeue_after_seconds),
            workers: args.workers.unwrap_or(0),
            queue: args.queue.clone(),
            name,
            wake,
            budgets,
        }),
    }
}

pub async fn serve(args: ServeArgs) -> Result<()> {
    init_logging();
    check_queue_name(&args.queue)?;
    let store = Store::connect(&args.db).await?;
    log_budgets(&args.budgets);
    if args.examples {
        let loaded = hetsim_service::examples::load(&store).await?;
        tracing::info!(
            "examples stored: apps {:?}, systems {:?}",
            loaded.apps,
            loaded.systems
        );
    }
    let queue = run_queue(&args);
    let (stop, stopped) = watch::channel(false);
    let mut tasks = JoinSet::new();
    queue.start(&mut tasks, &store, &stopped);
    tasks.spawn(reclaimer(
        store.clone(),
        args.max_attempts,
        queue.clone(),
        stopped.clone(),
    ));
    let describe = queue.describe();
    let limits = ServiceLimits::from(args.limits.clone());
    let app = router(AppState {
        store,
        queue,
        access: Arc::new(Access::new(token(&args)?)),
        limits: Arc::new(limits.clone()),
    });
    let listener = tokio::net::TcpListener::bind(&args.bind)
        .await
        .with_context(|| format!("binding {}", args.bind))?;
    tracing::info!("serving http://{} ({describe})", listener.local_addr()?);
    hetsim_web::serve(listener, app, &limits, termination()).await?;
    // Workers finish the run in hand, then stop.
    let _ = stop.send(true);
    while tasks.join_next().await.is_some() {}
    Ok(())
}

/// Says what each run may use, and whether the memory budget is enforced (it is when this
/// binary counts allocations: `hetsim_scripting::memory`).
fn log_budgets(flags: &BudgetFlags) {
    let enforced = if hetsim_scripting::memory::counting() {
        ""
    } else {
        " (not enforced: this build does not count allocations)"
    };
    tracing::info!(
        "each run: lease {} s, at most {} s of wall time and {} of memory{enforced}",
        flags.lease_seconds,
        flags.max_run_seconds,
        flags.max_run_memory
    );
}

fn check_queue_name(queue: &str) -> Result<()> {
    if !hetsim_service::queue::valid_queue_name(queue) {
        anyhow::bail!(
            "--queue {queue:?}: expected 1 to {} letters, digits, '-' or '_'",
            hetsim_service::queue::MAX_QUEUE_NAME
        );
    }
    Ok(())
}

/// The bearer token: `--token` or HETSIM_TOKEN, or the first line of `--token-file`.
fn token(args: &ServeArgs) -> Result<Option<String>> {
    let Some(path) = &args.token_file else {
        return Ok(args.token.clone());
    };
    let text = std::fs::read_to_string(path).with_context(|| format!("--token-file {}", path.display()))?;
    let token = text.lines().next().unwrap_or("").trim();
    if token.is_empty() {
        anyhow::bail!("--token-file {}: the first line is empty", path.display());
    }
    Ok(Some(token.to_owned()))
}

pub async fn worker(args: WorkerArgs) -> Result<()> {
    init_logging();
    check_queue_name(&args.queue)?;
    let store = Store::connect(&args.db).await?;
    log_budgets(&args.budgets);
    let (stop, stopped) = watch::channel(false);
    let name = worker_name(args.name);
    let task = tokio::spawn(amqp::worker(
        store,
        args.amqp,
        args.queue,
        name,
        args.max_attempts,
        RunBudgets::from(&args.budgets),
        stopped,
    ));
    termination().await;
    tracing::info!("stopping after the run in hand");
    let _ = stop.send(true);
    task.await?;
    Ok(())
}
