//! What the service tests (api.rs, broker.rs, service.rs) share: PostgreSQL and RabbitMQ
//! fixtures that fail under CI=true when the services are missing, the thesis scenario, a
//! slow application, and helpers that submit, wait and read results.

use std::io::Write;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use super::*;

pub const AMQP: &str = "amqp://guest:guest@127.0.0.1:5672/%2f";

/// PostgreSQL and RabbitMQ are up; or, outside CI, a loud skip.
pub fn services() -> bool {
    available_or_skip(
        reachable(5432) && reachable(5672),
        "PostgreSQL (5432) or RabbitMQ (5672) is not reachable on 127.0.0.1",
        in_ci(),
    )
}

pub fn psql(sql: &str) {
    let ok = Command::new("psql")
        .env("PGOPTIONS", "--client-min-messages=warning")
        .args(["-h", "127.0.0.1", "-U", "postgres", "-d", "postgres", "-qc", sql])
        .status()
        .expect("psql runs")
        .success();
    assert!(ok, "psql: {sql}");
}

/// A fresh PostgreSQL database and RabbitMQ queue name for one test, removed when dropped
/// (declare it before the processes using it, so that it is dropped after them).
pub struct Fixture {
    pub db: String,
    pub name: String,
    pub queue: String,
}

impl Fixture {
    pub fn new(prefix: &str) -> Self {
        static N: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "hetsim_test_{}_{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        );
        psql(&format!("DROP DATABASE IF EXISTS {name}"));
        psql(&format!("CREATE DATABASE {name}"));
        Fixture {
            db: format!("postgres://postgres@127.0.0.1/{name}"),
            queue: format!("{prefix}-{name}"),
            name,
        }
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = Command::new("psql")
            .args(["-h", "127.0.0.1", "-U", "postgres", "-d", "postgres", "-qc"])
            .arg(format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name))
            .status();
        for queue in [
            format!("hetsim.{}", self.queue),
            format!("hetsim.{}.dead", self.queue),
        ] {
            let _ = Command::new("rabbitmqctl")
                .args(["delete_queue", &queue])
                .output();
        }
    }
}

pub const THESIS: [&str; 8] = [
    "--var",
    "occupancy=64",
    "--var",
    "computeIntensity=128",
    "--var",
    "blockSize=256",
    "--var",
    "numElements=400000000",
];

/// Runs `spin` units of about 3 ms of wall time each (spinning on the clock, so that a
/// release build takes as long as a debug one) with 1 ms of simulated sleep between them, so
/// that no slice exceeds the sandbox's wall-time limit. A macro, so that [`SLOW_APP`] can
/// build on the same literal.
macro_rules! spinning {
    () => {
        "let n = 0;\nfor i in 0..spin { let t = timestamp(); while t.elapsed < 0.003 { n += 1; } sim.sleep(0.001); }\n"
    };
}

/// An application that only spins ([`spinning`]): seconds of wall time at a few thousand.
pub const SPINNING_APP: &str = spinning!();

/// A small application whose runs each take some wall time ([`spinning`]): long enough to
/// kill a worker mid-run.
/// (`abortWorker` is acted on by the worker built with fault injection; the script reads it
/// only so that a submission may give it.)
pub const SLOW_APP: &str = concat!(
    "if is_def_var(\"abortWorker\") { let abort = abortWorker; }\n",
    spinning!(),
    "sim.compute(#{ ops: 1e9 });\n"
);

pub fn slow_app_file() -> PathBuf {
    let path = scratch().join("slow.rhai");
    std::fs::write(&path, SLOW_APP).unwrap();
    path
}

pub const ONE_CPU: &str = "examples/master-worker/system.toml";

/// `hetsim submit --wait` of the thesis scenario, with `extra` arguments; returns the finished run.
pub fn submit_thesis(server: &str, queue: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = on_the_gtx970("submit", server);
    args.extend(["--queue", queue]);
    args.extend(THESIS);
    args.extend(extra);
    let (ok, out, err) = cli(&args);
    assert!(ok, "{err}");
    json(&out)
}

/// A path of the OpenAPI document with its parameters filled in.
pub fn concrete(path: &str) -> String {
    path.replace("{id}", "no-such-id")
        .replace("{id_or_name}", "no-such-item")
        .replace("{key}", "k")
        .replace("{name}", "no-such-trace")
}

/// `body` is the API's error JSON: `{error: text, field: text or null}`.
pub fn assert_error_json(what: &str, (status, body): (u16, String), want: u16) {
    assert_eq!(status, want, "{what}: {body}");
    let error: serde_json::Value =
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {body:?}"));
    assert!(
        error["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{what}: {body}"
    );
    assert!(error.get("field").is_some(), "{what}: {body}");
}

/// Sends the headers of a POST with a body of `length` bytes and only `sent` of them, then
/// waits for the answer; returns (status, body).
pub fn post_a_slow_body(port: u16, token: &str, length: usize, sent: usize) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let head = format!(
        "POST /api/runs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer {token}\r\nContent-Length: {length}\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(&vec![b' '; sent]).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    read_response(stream)
}

/// POSTs `body` to `path` and returns the created item's id.
pub fn create(port: u16, path: &str, body: &str) -> String {
    let (status, answer) = http(port, "POST", path, body, None);
    assert_eq!(status, 201, "{path}: {answer}");
    json(&answer)["id"].as_str().unwrap().to_owned()
}

/// A system whose node names a computational model file beside it, and that model.
pub fn system_with_a_local_model() -> PathBuf {
    let dir = scratch();
    std::fs::write(dir.join("app.rhai"), "sim.compute(#{ ops: 1 });\n").unwrap();
    std::fs::create_dir_all(dir.join("models")).unwrap();
    std::fs::write(dir.join("models/fixed.rhai"), "fn compute_time(params) { 3.5 }\n").unwrap();
    let system = "[[node]]\nid = \"a\"\ncomponent = \"Intel Core i7-4790K\"\nmodel = \"models/fixed.rhai\"\nlabels = { P = 1 }\n";
    std::fs::write(dir.join("system.toml"), system).unwrap();
    dir
}

/// The lease of the fault tests' workers [s]: short, so that a run whose worker died or
/// froze is taken back within seconds.
pub const LEASE_SECONDS: &str = "2";

pub fn broker_server(db: &str) -> (Proc, u16) {
    let port = free_port();
    let bind = format!("127.0.0.1:{port}");
    let server = hetsim(&["serve", "--db", db, "--amqp", AMQP, "--bind", &bind], &[]);
    wait_healthy(port);
    (server, port)
}

/// The arguments of `hetsim worker` on `queue` through the broker at `amqp`.
pub fn worker_args<'a>(db: &'a str, amqp: &'a str, queue: &'a str, name: &'a str) -> Vec<&'a str> {
    vec![
        "worker",
        "--db",
        db,
        "--amqp",
        amqp,
        "--queue",
        queue,
        "--name",
        name,
        "--lease-seconds",
        LEASE_SECONDS,
    ]
}

pub fn worker(db: &str, queue: &str, name: &str) -> Proc {
    hetsim(&worker_args(db, AMQP, queue, name), &[])
}

pub fn sweep_summary(port: u16, id: &str) -> serde_json::Value {
    json(&http(port, "GET", &format!("/api/sweeps/{id}"), "", None).1)
}

pub fn runs_of(port: u16, sweep: &str) -> Vec<serde_json::Value> {
    json(
        &http(
            port,
            "GET",
            &format!("/api/runs?sweep={sweep}&limit=100000"),
            "",
            None,
        )
        .1,
    )
    .as_array()
    .unwrap()
    .clone()
}

/// Held exclusively while every broker connection is being closed, and shared by a test that
/// asserts the broker answers a health check: the close reaches every test's connections, the
/// health check's own included, so the two must not overlap (they did, and CI failed 503 ≠ 200).
static BROKER_CLOSES: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// `GET /api/health`'s status, asked while no test closes every broker connection.
pub fn health_with_broker_left_open(port: u16) -> u16 {
    let _open = BROKER_CLOSES
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    http(port, "GET", "/api/health", "", None).0
}

/// Has RabbitMQ close every client connection (`rabbitmqctl close_all_connections`), every
/// test's alike, giving `reason`.
pub fn close_every_broker_connection(reason: &str) {
    let _closing = BROKER_CLOSES
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let closed = Command::new("rabbitmqctl")
        .args(["close_all_connections", &format!("hetsim test: {reason}")])
        .output()
        .expect("rabbitmqctl runs");
    assert!(
        closed.status.success(),
        "{}",
        String::from_utf8_lossy(&closed.stderr)
    );
}

/// Queues a sweep of the slow app with `runs` runs (spin = spin, spin + 1, spin + 2, …);
/// returns its id.
pub fn slow_sweep(port: u16, queue: &str, runs: usize, spin: usize) -> String {
    let spins: Vec<String> = (0..runs).map(|i| (spin + i % 3).to_string()).collect();
    sweep_of_slow_app(port, queue, &[&format!("spin={}", spins.join(","))])
}

/// Queues a sweep of the slow app with the given `NAME=V1,V2,…` variables; returns its id.
pub fn sweep_of_slow_app(port: u16, queue: &str, variables: &[&str]) -> String {
    sweep_of_app(port, queue, &slow_app_file(), variables)
}

/// Queues a sweep of the app at `app` on the one-CPU system (a master alone) with the given
/// `NAME=V1,V2,…` variables; returns its id.
pub fn sweep_of_app(port: u16, queue: &str, app: &Path, variables: &[&str]) -> String {
    let server = format!("http://127.0.0.1:{port}");
    let args = vec![
        "sweep",
        "--server",
        &server,
        "--queue",
        queue,
        "--app",
        app.to_str().unwrap(),
        "--system",
        ONE_CPU,
        "--label",
        "Master=1",
        "--label",
        "Worker=0",
        "--json",
    ];
    queued_sweep(args, variables)
}

/// Runs `hetsim sweep` with `args` and a `--var` for each of `variables`; the sweep's id.
fn queued_sweep<'a>(mut args: Vec<&'a str>, variables: &[&'a str]) -> String {
    for v in variables {
        args.extend(["--var", v]);
    }
    let (ok, out, err) = cli(&args);
    assert!(ok, "{err}");
    json(&out)["id"].as_str().expect("an id").to_owned()
}

/// Waits for a run of `sweep` to be running; returns its id.
pub fn a_running_run(port: u16, sweep: &str) -> String {
    wait_for(|| {
        runs_of(port, sweep)
            .into_iter()
            .find(|r| r["status"] == "running")
            .map(|r| r["id"].as_str().unwrap().to_owned())
    })
}

/// Waits until `total` runs of the sweep are done or failed; its summary.
pub fn finished_sweep(port: u16, sweep: &str, total: usize) -> serde_json::Value {
    wait_for(|| {
        let s = sweep_summary(port, sweep);
        (s["done"].as_u64().unwrap() + s["failed"].as_u64().unwrap() == total as u64).then_some(s)
    })
}

/// Every run of the sweep is done and has exactly one result.
pub fn assert_all_done_once(port: u16, sweep: &str, total: usize) {
    let summary = finished_sweep(port, sweep, total);
    assert_eq!(summary["done"], total as u64, "{summary}");
    let runs = runs_of(port, sweep);
    assert_eq!(runs.len(), total);
    for run in &runs {
        assert_eq!(run["status"], "done", "{run}");
        assert!(run["result"]["overall_time"].is_number(), "{run}");
    }
}

/// Asserts a 4xx JSON error naming `field` and containing `words`.
pub fn assert_refused(port: u16, (status, body): (u16, String), want: u16, field: &str, words: &str) {
    assert_eq!(status, want, "{body}");
    let error = json(&body);
    assert_eq!(error["field"], field, "{body}");
    assert!(error["error"].as_str().unwrap().contains(words), "{body}");
    assert_eq!(
        http(port, "GET", "/api/health", "", None).0,
        200,
        "the server survives"
    );
}

/// `GET /api/runs/{run}` on a server without a token.
pub fn run_record(port: u16, run: &str) -> serde_json::Value {
    json(&http(port, "GET", &format!("/api/runs/{run}"), "", None).1)
}

pub fn status_of(port: u16, run: &str) -> serde_json::Value {
    run_record(port, run)["status"].clone()
}

/// Runs `rabbitmqctl` with `args`; its stdout.
pub fn rabbitmqctl(args: &[&str]) -> String {
    let out = Command::new("rabbitmqctl")
        .args(args)
        .output()
        .expect("rabbitmqctl runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Messages ready in the broker queue `name` (0 when it does not exist).
pub fn broker_messages(name: &str) -> u64 {
    rabbitmqctl(&["list_queues", "--quiet", "--no-table-headers", "name", "messages"])
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .find(|(n, _)| *n == name)
        .and_then(|(_, m)| m.trim().parse().ok())
        .unwrap_or(0)
}

/// Sweeps the thesis's app on the GTX 970 testbed over `vars` (`NAME=V1,V2`) on `server`,
/// waiting for it; returns the sweep's id.
pub fn gajger_sweep(server: &str, vars: &[&str]) -> String {
    queued_sweep(on_the_gtx970("sweep", server), vars)
}

/// `hetsim COMMAND` of the thesis's app on its GTX 970 testbed on `server`, waiting, as JSON.
fn on_the_gtx970<'a>(command: &'a str, server: &'a str) -> Vec<&'a str> {
    vec![
        command,
        "--server",
        server,
        "--app",
        "examples/gajger/app.rhai",
        "--system",
        "examples/gajger/gtx970.toml",
        "--wait",
        "--json",
    ]
}
