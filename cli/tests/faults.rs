//! Leases under faults, with real processes on the machine's PostgreSQL and RabbitMQ: a
//! worker frozen (SIGSTOP) past its lease and then thawed, a worker whose broker connection
//! is cut mid-run, and a server killed (SIGKILL) while it writes a result. Each time every
//! run ends done, exactly once: one stored result, written by one attempt, and the loser's
//! late outcome discarded and logged. Tests fail when CI=true and the services are missing;
//! elsewhere they skip with a message on stderr.

mod common;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use common::fixture::*;
use common::*;

fn log_of(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// Lines of the log at `path` that say `what` about run `id`.
fn lines_about(path: &Path, id: &str, what: &str) -> usize {
    log_of(path)
        .lines()
        .filter(|l| l.contains(what) && l.contains(id))
        .count()
}

fn signal(process: &Proc, name: &str) {
    let sent = Command::new("kill")
        .args([name, &process.0.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "kill {name}");
}

fn logged_worker(db: &str, amqp: &str, queue: &str, name: &str, dir: &Path) -> (Proc, PathBuf) {
    let log = dir.join(format!("{name}.log"));
    (hetsim_logged(&worker_args(db, amqp, queue, name), &log), log)
}

#[test]
fn a_worker_frozen_past_its_lease_loses_its_run_and_its_late_outcome_is_discarded() {
    if !services() {
        return;
    }
    let fixture = Fixture::new("freeze");
    let (db, queue) = (fixture.db.clone(), fixture.queue.clone());
    let dir = scratch();
    let (_server, port) = broker_server(&db);
    let (frozen, frozen_log) = logged_worker(&db, AMQP, &queue, "frozen", &dir);
    let sweep = slow_sweep(port, &queue, 1, 400);
    let id = a_running_run(port, &sweep);
    signal(&frozen, "-STOP");
    let (_rescuer, rescuer_log) = logged_worker(&db, AMQP, &queue, "rescuer", &dir);
    assert_all_done_once(port, &sweep, 1);
    let run = run_record(port, &id);
    assert_eq!(
        (&run["worker"], &run["attempts"]),
        (&"rescuer".into(), &2.into()),
        "{run}"
    );
    signal(&frozen, "-CONT");
    wait_for(|| (lines_about(&frozen_log, &id, "no longer held by this attempt") == 1).then_some(()));
    assert_eq!(lines_about(&rescuer_log, &id, "result stored"), 1);
    assert_eq!(
        lines_about(&frozen_log, &id, "result stored"),
        0,
        "{}",
        log_of(&frozen_log)
    );
    let after = run_record(port, &id);
    assert_eq!(
        (&after["status"], &after["worker"], &after["attempts"]),
        (&"done".into(), &"rescuer".into(), &2.into())
    );
    assert_eq!(after["result"], run["result"], "the thawed worker wrote nothing");
}

/// A TCP proxy to RabbitMQ whose connections the test can cut (the network failing between
/// one worker and the broker, not the broker itself).
struct Proxy {
    port: u16,
    open: Arc<Mutex<Vec<TcpStream>>>,
}

impl Proxy {
    fn to_rabbitmq() -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let open: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let streams = open.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let Ok(broker) = TcpStream::connect("127.0.0.1:5672") else {
                    continue;
                };
                streams
                    .lock()
                    .unwrap()
                    .extend([client.try_clone().unwrap(), broker.try_clone().unwrap()]);
                pipe(client.try_clone().unwrap(), broker.try_clone().unwrap());
                pipe(broker, client);
            }
        });
        Proxy { port, open }
    }

    fn url(&self) -> String {
        format!("amqp://guest:guest@127.0.0.1:{}/%2f", self.port)
    }

    /// Cuts every connection made so far; new ones go through.
    fn cut(&self) {
        for stream in self.open.lock().unwrap().drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }
}

fn pipe(mut from: TcpStream, mut to: TcpStream) {
    std::thread::spawn(move || {
        let mut buffer = [0; 16 << 10];
        while let Ok(n @ 1..) = from.read(&mut buffer) {
            if to.write_all(&buffer[..n]).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Both);
    });
}

#[test]
fn a_worker_cut_off_from_the_broker_finishes_its_run_and_no_run_starts_twice() {
    if !services() {
        return;
    }
    let fixture = Fixture::new("cut");
    let (db, queue) = (fixture.db.clone(), fixture.queue.clone());
    let dir = scratch();
    let proxy = Proxy::to_rabbitmq();
    let (_server, port) = broker_server(&db);
    let (_cut, cut_log) = logged_worker(&db, &proxy.url(), &queue, "cut", &dir);
    let (_other, _) = logged_worker(&db, AMQP, &queue, "other", &dir);
    let sweep = slow_sweep(port, &queue, 12, 150);
    let id = wait_for(|| {
        runs_of(port, &sweep)
            .into_iter()
            .find(|r| r["status"] == "running" && r["worker"] == "cut")
            .map(|r| r["id"].as_str().unwrap().to_owned())
    });
    proxy.cut();
    assert_all_done_once(port, &sweep, 12);
    // The broker gave the cut worker's unacked message to a consumer again; the lease said
    // the run was held (or done), so nothing ran it a second time.
    let runs = runs_of(port, &sweep);
    assert!(runs.iter().all(|r| r["attempts"] == 1), "{runs:?}");
    let run = run_record(port, &id);
    assert_eq!(run["worker"], "cut", "{run}");
    wait_for(|| (lines_about(&cut_log, &id, "result stored") == 1).then_some(()));
}

/// One node holding `processes` processes of label P, and an app that only sleeps: a run
/// whose result takes a while to write.
fn many_processes(dir: &Path, processes: u64) -> (PathBuf, PathBuf) {
    let system = dir.join("many.toml");
    std::fs::write(
        &system,
        format!(
            "[[node]]\nid = \"n\"\ncomponent = \"Intel Core i7-4790K\"\nmodel = \"cpu-flops\"\nlabels = {{ P = {processes} }}\n"
        ),
    )
    .unwrap();
    let app = dir.join("sleep.rhai");
    std::fs::write(&app, "sim.sleep(1.0);\n").unwrap();
    (app, system)
}

fn embedded_server_logged(db: &str, port: u16, log: &Path) -> Proc {
    let bind = format!("127.0.0.1:{port}");
    let server = hetsim_logged(
        &[
            "serve",
            "--db",
            db,
            "--bind",
            &bind,
            "--workers",
            "1",
            "--lease-seconds",
            LEASE_SECONDS,
        ],
        log,
    );
    wait_healthy(port);
    server
}

#[test]
fn a_server_killed_while_it_writes_a_result_loses_nothing_and_writes_it_once() {
    if !services() {
        return;
    }
    const PROCESSES: u64 = 300_000;
    let fixture = Fixture::new("kill-write");
    let db = fixture.db.clone();
    let dir = scratch();
    let (app, system) = many_processes(&dir, PROCESSES);
    let port = free_port();
    let first_log = dir.join("first.log");
    let mut first = embedded_server_logged(&db, port, &first_log);
    let server = format!("http://127.0.0.1:{port}");
    let (ok, out, err) = cli(&[
        "submit",
        "--server",
        &server,
        "--app",
        app.to_str().unwrap(),
        "--system",
        system.to_str().unwrap(),
        "--json",
    ]);
    assert!(ok, "{err}");
    let id = json(&out)["id"].as_str().unwrap().to_owned();
    wait_for(|| (lines_about(&first_log, &id, "storing the result") == 1).then_some(()));
    first.0.kill().unwrap(); // SIGKILL, mid-write
    let _ = first.0.wait();
    assert_eq!(
        lines_about(&first_log, &id, "result stored"),
        0,
        "the kill came after the write"
    );

    let _second = embedded_server_logged(&db, port, &dir.join("second.log"));
    let run = wait_for(|| {
        let run = run_record(port, &id);
        (run["status"] == "done").then_some(run)
    });
    assert_eq!(run["attempts"], 2, "{run}");
    let page = json(
        &http(
            port,
            "GET",
            &format!("/api/runs/{id}/processes?limit=1"),
            "",
            None,
        )
        .1,
    );
    assert_eq!(
        page["total"], PROCESSES,
        "every process row once, none left from the killed write"
    );
    assert_eq!(run["result"]["processes"], PROCESSES);
}

#[test]
fn processes_started_together_on_an_empty_database_all_start() {
    if !services() {
        return;
    }
    // A server and its workers started at once each seed the catalog of an empty database;
    // the ones that lose the race go on instead of exiting on a duplicate name.
    let fixture = Fixture::new("together");
    let starts: Vec<_> = (0..8)
        .map(|_| {
            let db = fixture.db.clone();
            std::thread::spawn(move || cli(&["token", "list", "--db", &db]))
        })
        .collect();
    for start in starts {
        let (ok, _, err) = start.join().unwrap();
        assert!(ok, "{err}");
    }
    let (ok, out, err) = cli(&["components", "--json"]);
    assert!(ok, "{err}");
    let shipped = json(&out).as_array().unwrap().len();
    let (status, body) = {
        let (_server, port) = broker_server(&fixture.db);
        http(port, "GET", "/api/components", "", None)
    };
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        json(&body).as_array().unwrap().len(),
        shipped,
        "the catalog is seeded once"
    );
}
