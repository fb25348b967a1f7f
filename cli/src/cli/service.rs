//! The arguments of the commands that talk to a server or are one: `serve`, `worker`,
//! `submit`, `sweep`, `results`, `cancel`, `delete`, `catalog`; and `token`, which manages
//! a server's tokens in its database.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};
use hetsim_service::budgets::{ByteSize, RunBudgets};
use hetsim_service::limits::{Attempts, ServiceLimits};
use hetsim_service::storage::Role;

#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Make a named token with a role and print it, once: the database keeps only its hash.
    #[command(
        after_help = "Example:\n  hetsim token create ana --role submit --db postgres://127.0.0.1/hetsim\n\n\
Roles: read (everything a GET shows), submit (also queue, cancel and delete runs and sweeps),\n\
admin (also change the catalog). A running server accepts the token within 2 s."
    )]
    Create(TokenCreateArgs),
    /// List the tokens: name, role, when made, when revoked (never a secret or a hash).
    #[command(after_help = "Example:\n  hetsim token list --db hetsim.db")]
    List(TokenListArgs),
    /// Revoke the token of a name: a running server refuses it within 2 s.
    #[command(after_help = "Example:\n  hetsim token revoke ana")]
    Revoke(TokenRevokeArgs),
}

/// The database whose tokens a `token` command manages (the server's own, as `serve --db`).
#[derive(Debug, Args)]
pub struct TokenDb {
    /// Database: a SQLite file, or postgres://…
    #[arg(long, env = "HETSIM_DB", default_value = "hetsim.db")]
    pub db: String,
}

/// What a token may do.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum RoleArg {
    Read,
    Submit,
    Admin,
}

impl From<RoleArg> for Role {
    fn from(role: RoleArg) -> Self {
        match role {
            RoleArg::Read => Role::Read,
            RoleArg::Submit => Role::Submit,
            RoleArg::Admin => Role::Admin,
        }
    }
}

#[derive(Debug, Args)]
pub struct TokenCreateArgs {
    #[command(flatten)]
    pub db: TokenDb,
    /// Who holds it: the name every run they submit records, and the UI shows.
    pub name: String,
    #[arg(long, value_enum)]
    pub role: RoleArg,
}

#[derive(Debug, Args)]
pub struct TokenListArgs {
    #[command(flatten)]
    pub db: TokenDb,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct TokenRevokeArgs {
    #[command(flatten)]
    pub db: TokenDb,
    /// The name of the token's holder.
    pub name: String,
}

#[derive(Debug, Subcommand)]
pub enum CatalogCommand {
    /// List a server's stored items of one kind: id and name (components with their kind).
    #[command(
        after_help = "Examples:\n  hetsim catalog list apps --server http://127.0.0.1:8080\n  hetsim catalog list components --json"
    )]
    List(CatalogListArgs),
    /// Fetch one stored item by id or name: a model's or an app's Rhai source, a system's
    /// TOML or JSON, a component as JSON.
    #[command(
        after_help = "Examples:\n  hetsim catalog get apps saxpy2 -o saxpy2.rhai\n  hetsim catalog get components \"GTX 970 - gajger\""
    )]
    Get(CatalogGetArgs),
    /// Store a local file on a server under a name: a model's or an app's Rhai source, a
    /// system's TOML or JSON, a component as JSON (the `[[component]]` fields). An item of
    /// that name is replaced.
    #[command(
        after_help = "Examples:\n  hetsim catalog put apps saxpy2 examples/gajger/app.rhai\n  hetsim catalog put systems gtx970 examples/gajger/gtx970.toml"
    )]
    Put(CatalogPutArgs),
}

#[derive(Debug, Subcommand)]
pub enum TracesCommand {
    /// Store a Chakra trace on a server under a name: a `.et` file (one rank), or a prefix
    /// whose PREFIX.N.et files are the ranks. The server reads it whole first and refuses
    /// a trace that does not read; a trace of that name is replaced.
    #[command(after_help = "Example:\n  hetsim traces put dp-step examples/traces/dp-step")]
    Put(TracesPutArgs),
    /// List a server's stored traces: id, name, ranks and nodes.
    #[command(after_help = "Examples:\n  hetsim traces list\n  hetsim traces list --json")]
    List(TracesListArgs),
    /// Show a stored trace's ranks and node counts, or write its rank files to a folder.
    #[command(
        after_help = "Examples:\n  hetsim traces get dp-step\n  hetsim traces get dp-step --output-dir out/"
    )]
    Get(TracesGetArgs),
    /// Delete a stored trace.
    #[command(after_help = "Example:\n  hetsim traces delete dp-step")]
    Delete(TracesDeleteArgs),
}

#[derive(Debug, Args)]
pub struct TracesPutArgs {
    #[command(flatten)]
    pub target: ServerArgs,
    /// The name to store it under.
    pub name: String,
    /// A `.et` file (one rank), or the prefix of the PREFIX.N.et (or .et.gz) rank files.
    pub trace: PathBuf,
}

#[derive(Debug, Args)]
pub struct TracesListArgs {
    #[command(flatten)]
    pub target: ServerArgs,
    /// Print the traces as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct TracesGetArgs {
    #[command(flatten)]
    pub target: ServerArgs,
    /// The trace's name or id.
    pub name: String,
    /// Write its rank files into this folder, under their stored names.
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct TracesDeleteArgs {
    #[command(flatten)]
    pub target: ServerArgs,
    /// The trace's name or id.
    pub name: String,
}

/// The kinds of item a server's catalog stores (the routes `/api/<kind>`).
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum CatalogKind {
    Components,
    Models,
    Systems,
    Apps,
}

impl CatalogKind {
    /// The collection's name in the API's routes.
    pub fn route(self) -> &'static str {
        match self {
            CatalogKind::Components => "components",
            CatalogKind::Models => "models",
            CatalogKind::Systems => "systems",
            CatalogKind::Apps => "apps",
        }
    }
}

/// Where a server is and how to be let in.
#[derive(Debug, Args)]
pub struct ServerArgs {
    #[arg(long, env = "HETSIM_SERVER", default_value = "http://127.0.0.1:8080")]
    pub server: String,
    #[arg(long, env = "HETSIM_TOKEN")]
    pub token: Option<String>,
}

#[derive(Debug, Args)]
pub struct CatalogListArgs {
    #[command(flatten)]
    pub target: ServerArgs,
    pub kind: CatalogKind,
    /// Print the items as JSON (with their bodies).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct CatalogGetArgs {
    #[command(flatten)]
    pub target: ServerArgs,
    pub kind: CatalogKind,
    /// The item's id or name (an id wins when both match).
    pub id_or_name: String,
    /// Write it to this file instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CatalogPutArgs {
    #[command(flatten)]
    pub target: ServerArgs,
    pub kind: CatalogKind,
    /// The name to store it under (a component's is the `name` in its JSON).
    pub name: String,
    /// The file to store.
    pub file: PathBuf,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Database: a SQLite file, or postgres://…
    #[arg(long, env = "HETSIM_DB", default_value = "hetsim.db")]
    pub db: String,
    /// RabbitMQ URL; without it, runs are queued in the database and run in-process.
    #[arg(long, env = "HETSIM_AMQP")]
    pub amqp: Option<String>,
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub bind: String,
    /// The admin token: with it (or with named tokens in the database, `hetsim token`) every
    /// route but /api/health and the API's description needs `Authorization: Bearer TOKEN`;
    /// this one acts as the user `admin` with every right. Prefer HETSIM_TOKEN or
    /// --token-file: an argument is visible to every user in `ps`.
    #[arg(long, env = "HETSIM_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Read the token from this file (its first line).
    #[arg(long, conflicts_with = "token")]
    pub token_file: Option<std::path::PathBuf>,
    /// In-process workers (default: 2 without --amqp, none with it).
    #[arg(long)]
    pub workers: Option<usize>,
    /// With --amqp and --workers: the queue the in-process workers take runs from.
    #[arg(long, default_value = "default")]
    pub queue: String,
    /// Times a run may be started before it is failed (when its worker's process dies with
    /// it each time): the queues' one delivery limit.
    #[arg(long, default_value_t = Attempts::DEFAULT)]
    pub max_attempts: Attempts,
    /// With --amqp: seconds a published run may wait before the reaper asks the broker
    /// whether its message is still queued, and re-publishes it if not.
    #[arg(long, default_value_t = 300)]
    pub requeue_after_seconds: u64,
    /// Store the shipped examples (apps and systems of examples/) that the database does not
    /// hold yet, as the UI's "Load the shipped examples" does.
    #[arg(long)]
    pub examples: bool,
    #[command(flatten)]
    pub limits: LimitFlags,
    #[command(flatten)]
    pub budgets: BudgetFlags,
}

#[derive(Debug, Args)]
pub struct WorkerArgs {
    #[arg(long)]
    pub queue: String,
    #[arg(long, env = "HETSIM_DB")]
    pub db: String,
    #[arg(long, env = "HETSIM_AMQP")]
    pub amqp: String,
    /// A name for this worker in the runs it takes (default: host and process id).
    #[arg(long)]
    pub name: Option<String>,
    /// As `serve --max-attempts`; the queue's delivery limit is declared from it.
    #[arg(long, default_value_t = Attempts::DEFAULT)]
    pub max_attempts: Attempts,
    #[command(flatten)]
    pub budgets: BudgetFlags,
}

/// What each run a worker takes may use (docs/SERVER.md, "Leases and budgets").
#[derive(Debug, Args)]
pub struct BudgetFlags {
    /// Seconds a worker holds a run without renewing its lease (renewed every third of it);
    /// a worker frozen or cut off from the database longer loses the run to another.
    #[arg(long, default_value_t = RunBudgets::DEFAULT_LEASE_SECONDS, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub lease_seconds: u64,
    /// Wall-time budget of one run [s]; past it the run fails naming this limit. Keep it
    /// below the broker's consumer_timeout (RabbitMQ's default: 30 min).
    #[arg(long, default_value_t = RunBudgets::DEFAULT_MAX_RUN_SECONDS, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_run_seconds: u64,
    /// Memory budget of one run (65536, 512MiB, 8GiB); past it the run fails naming this
    /// limit and the worker goes on.
    #[arg(long, default_value_t = RunBudgets::DEFAULT_MAX_RUN_MEMORY)]
    pub max_run_memory: ByteSize,
}

impl From<&BudgetFlags> for RunBudgets {
    fn from(flags: &BudgetFlags) -> Self {
        RunBudgets {
            lease: std::time::Duration::from_secs(flags.lease_seconds),
            max_run_time: std::time::Duration::from_secs(flags.max_run_seconds),
            max_run_memory: Some(flags.max_run_memory),
        }
    }
}

#[derive(Debug, Args)]
pub struct SubmitArgs {
    #[arg(long, env = "HETSIM_SERVER", default_value = "http://127.0.0.1:8080")]
    pub server: String,
    #[arg(long, env = "HETSIM_TOKEN")]
    pub token: Option<String>,
    #[arg(long, default_value = "default")]
    pub queue: String,
    /// The application model, a local Rhai file.
    #[arg(long, value_name = "FILE.rhai", required_unless_present_any = ["app_name", "trace_name"])]
    pub app: Option<PathBuf>,
    /// An application stored on the server, by name (`hetsim catalog list apps`).
    #[arg(long, value_name = "NAME", conflicts_with = "app")]
    pub app_name: Option<String>,
    /// A Chakra trace stored on the server (`hetsim traces put`), replayed instead of an
    /// app: rank r on the r-th process of the label GPU; --var sets the system's variables.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["app", "app_name", "labels"])]
    pub trace_name: Option<String>,
    /// The trace's compute policy: replay (its recorded durations), roofline or scale:GPU;
    /// a sweep's may be a comma list (replay,roofline), each policy a run.
    #[arg(long, value_name = "POLICY", requires = "trace_name")]
    pub compute: Option<String>,
    /// The system model, a local TOML or JSON file; the .rhai model files and SASS listings
    /// it names are sent with it.
    #[arg(long, value_name = "FILE.toml", required_unless_present = "system_name")]
    pub system: Option<PathBuf>,
    /// A system stored on the server, by name (`hetsim catalog list systems`).
    #[arg(long, value_name = "NAME", conflicts_with = "system")]
    pub system_name: Option<String>,
    /// NAME=COUNT (a sweep takes NAME=C1,C2,…).
    #[arg(long = "label", value_name = "NAME=COUNT")]
    pub labels: Vec<String>,
    /// NAME=VALUE (a sweep takes NAME=V1,V2,…).
    #[arg(long = "var", value_name = "NAME=VALUE")]
    pub vars: Vec<String>,
    /// Wait for the run or sweep to finish, with a progress bar, and print the result; exit 1
    /// unless every run ended `done` (submit and sweep alike).
    #[arg(long)]
    pub wait: bool,
    #[arg(long)]
    pub json: bool,
    /// Record each run's trace (for its timeline and `GET /api/runs/{id}/trace`); without
    /// it a run stores its summary and its processes only.
    #[arg(long)]
    pub trace: bool,
}

#[derive(Debug, Args)]
pub struct ResultsArgs {
    #[arg(long, env = "HETSIM_SERVER", default_value = "http://127.0.0.1:8080")]
    pub server: String,
    #[arg(long, env = "HETSIM_TOKEN")]
    pub token: Option<String>,
    /// A run id or a sweep id.
    pub id: String,
    /// One CSV row per run (with --processes, per process).
    #[arg(long)]
    pub csv: bool,
    /// List a run's processes (label, rank, node, finish, compute and wait times), paged
    /// through the API: one JSON object per line, or CSV with --csv.
    #[arg(long)]
    pub processes: bool,
    /// Only the processes of this label.
    #[arg(long, requires = "processes")]
    pub label: Option<String>,
}

#[derive(Debug, Args)]
pub struct TargetArgs {
    #[arg(long, env = "HETSIM_SERVER", default_value = "http://127.0.0.1:8080")]
    pub server: String,
    #[arg(long, env = "HETSIM_TOKEN")]
    pub token: Option<String>,
    /// A run id or a sweep id.
    pub id: String,
}

/// `hetsim serve`'s limits on what one request may ask (docs/SERVER.md, "Limits"); their
/// defaults are [`ServiceLimits::default`]'s.
#[derive(Clone, Debug, Args)]
pub struct LimitFlags {
    /// Largest request body [bytes] (413 above).
    #[arg(long, default_value_t = ServiceLimits::default().max_body_bytes)]
    pub max_body_bytes: usize,
    /// Processes one run may place (the labels' counts summed, or the system's nodes ×
    /// count × label multiplicity when no labels are given).
    #[arg(long, default_value_t = ServiceLimits::default().max_processes)]
    pub max_processes: u64,
    /// Runs one sweep may expand to (the product of its lists, checked).
    #[arg(long, default_value_t = ServiceLimits::default().max_sweep_runs)]
    pub max_sweep_runs: u64,
    /// Variables one run may have.
    #[arg(long, default_value_t = ServiceLimits::default().max_variables)]
    pub max_variables: usize,
    /// Largest text variable [bytes].
    #[arg(long, default_value_t = ServiceLimits::default().max_variable_bytes)]
    pub max_variable_bytes: usize,
    /// Largest application script [bytes].
    #[arg(long, default_value_t = ServiceLimits::default().max_script_bytes)]
    pub max_script_bytes: usize,
    /// Simultaneous connections (lowered to what the open-file limit allows); further ones are
    /// answered 503 at once. Default: as many as the open-file limit allows, less 128.
    #[arg(long)]
    pub max_connections: Option<usize>,
    /// Seconds a client may take to send a request's headers.
    #[arg(long, default_value_t = ServiceLimits::default().header_timeout_seconds)]
    pub header_timeout_seconds: u64,
    /// Seconds a request may take, body and handler included (408 after).
    #[arg(long, default_value_t = ServiceLimits::default().request_timeout_seconds)]
    pub request_timeout_seconds: u64,
}

impl From<LimitFlags> for ServiceLimits {
    fn from(f: LimitFlags) -> Self {
        ServiceLimits {
            max_body_bytes: f.max_body_bytes,
            max_processes: f.max_processes,
            max_sweep_runs: f.max_sweep_runs,
            max_variables: f.max_variables,
            max_variable_bytes: f.max_variable_bytes,
            max_script_bytes: f.max_script_bytes,
            max_connections: f.max_connections,
            header_timeout_seconds: f.header_timeout_seconds,
            request_timeout_seconds: f.request_timeout_seconds,
        }
    }
}
