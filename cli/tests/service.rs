//! The server under misuse and over a run's life: hostile submissions, taken names, half-open
//! connections, health, cancel and delete, traces, results CSV, and bad systems.
//! Real processes, a real SQLite file, and the machine's real PostgreSQL and RabbitMQ: tests
//! that need PostgreSQL or RabbitMQ fail when CI=true and the services are missing; elsewhere
//! they skip with a message on stderr.

mod common;

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::fixture::*;
use common::*;

#[test]
fn hostile_submissions_are_refused_by_name_before_anything_is_allocated() {
    let (_server, port) = embedded_server(&[]);
    let post = |body: String| http(port, "POST", "/api/runs", &body, None);
    let system = |count: &str, multiplicity: &str| {
        format!(
            r#"[[node]]\nid = \"a\"\ncomponent = \"Intel Core i7-4790K\"\nmodel = \"cpu-flops\"\ncount = {count}\ninternal = \"InfiniBand NDR 400G\"\nlabels = {{ P = {multiplicity} }}\n"#
        )
    };
    // The 191-byte request that allocated 128 GB: 4·10⁹ units of one label.
    let huge_count = format!(
        r#"{{"queue":"q","app":"1","system":"{}"}}"#,
        system("4000000000", "1")
    );
    assert_refused(port, post(huge_count), 422, "labels", "max_processes");
    let huge_multiplicity = format!(
        r#"{{"queue":"q","app":"1","system":"{}"}}"#,
        system("1", "4000000000")
    );
    assert_refused(port, post(huge_multiplicity), 422, "labels", "max_processes");
    let huge_label = format!(
        r#"{{"queue":"q","app":"1","system":"{}","labels":{{"P":18446744073709551615}}}}"#,
        system("1", "2")
    );
    assert_refused(port, post(huge_label), 422, "labels", "max_processes");
    // 64 two-valued variables: 2^64 runs, a product that wrapped to 0 before.
    let variables: Vec<String> = (0..64).map(|i| format!(r#""v{i}":[1,2]"#)).collect();
    let sweep = format!(
        r#"{{"queue":"q","app":"1","system":"{}","variables":{{{}}}}}"#,
        system("1", "2"),
        variables.join(",")
    );
    let answer = http(port, "POST", "/api/sweeps", &sweep, None);
    assert_refused(port, answer, 422, "variables", "max_sweep_runs");
    let small = |extra: &str| {
        format!(
            r#"{{"queue":"q","app":"1","system":"{}"{extra}}}"#,
            system("1", "2")
        )
    };
    // Queue names cannot collide with the broker-side names hetsim derives (`hetsim.Q.dead`).
    let dotted = small("").replace(r#""queue":"q""#, r#""queue":"X.dead""#);
    assert_refused(port, post(dotted), 422, "queue", "letters, digits");
    for reserved in ["sim", "tag", "rank", "pid", "labels"] {
        let answer = post(small(&format!(r#","variables":{{"{reserved}":1}}"#)));
        assert_refused(port, answer, 422, &format!("variables.{reserved}"), "reserved");
    }
    let many: Vec<String> = (0..1001).map(|i| format!(r#""v{i}":1"#)).collect();
    let answer = post(small(&format!(r#","variables":{{{}}}"#, many.join(","))));
    assert_refused(port, answer, 422, "variables", "max_variables");
    let long = "x".repeat(65 << 10);
    let answer = post(small(&format!(r#","variables":{{"text":"{long}"}}"#)));
    assert_refused(port, answer, 422, "variables.text", "max_variable_bytes");
    // An unknown route answers a JSON 404.
    let (status, body) = http(port, "GET", "/api/nothing-here", "", None);
    assert_eq!(status, 404);
    assert!(
        json(&body)["error"]
            .as_str()
            .unwrap()
            .contains("/api/nothing-here"),
        "{body}"
    );
}

#[test]
fn taken_names_answer_409_even_under_races_and_renames() {
    let (_server, port) = embedded_server(&[]);
    let create = |name: &str| {
        http(
            port,
            "POST",
            "/api/apps",
            &format!(r#"{{"name": "{name}", "body": "1"}}"#),
            None,
        )
    };
    // Eight creations of one name at once: one 201, the rest 409.
    let statuses: Vec<u16> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8).map(|_| s.spawn(|| create("raced").0)).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(statuses.iter().filter(|&&s| s == 201).count(), 1, "{statuses:?}");
    assert!(statuses.iter().all(|&s| s == 201 || s == 409), "{statuses:?}");
    let (status, body) = create("other");
    assert_eq!(status, 201, "{body}");
    let other = json(&body)["id"].as_str().unwrap().to_owned();
    let (status, body) = http(
        port,
        "PUT",
        &format!("/api/apps/{other}"),
        r#"{"name": "raced", "body": "2"}"#,
        None,
    );
    assert_eq!(status, 409, "a rename onto a taken name: {body}");
    assert_eq!(json(&body)["field"], "name", "{body}");
}

/// `n` connections that each send half a request and wait.
fn half_sent(port: u16, n: usize) -> Vec<TcpStream> {
    (0..n)
        .map(|_| {
            let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
            let _ = s.write_all(b"GET /api/health HTTP/1.1\r\nHost: x\r\n");
            s
        })
        .collect()
}

#[test]
fn connections_over_the_limit_are_answered_503_at_once() {
    let (_server, port) = embedded_server(&["--max-connections", "4", "--header-timeout-seconds", "30"]);
    // Slowloris: idle, half-sent connections take the slots. One accepted while the
    // health check's connection still held its slot is itself refused, so they are added
    // until a fresh request finds every slot taken.
    let mut idle = Vec::new();
    let (body, elapsed) = loop {
        assert!(idle.len() < 40, "40 idle connections and still no 503");
        idle.extend(half_sent(port, 1));
        std::thread::sleep(Duration::from_millis(50));
        let started = Instant::now();
        let (status, body) = http(port, "GET", "/api/health", "", None);
        if status == 503 {
            break (body, started.elapsed());
        }
        assert_eq!(status, 200, "{body}");
    };
    assert!(
        idle.len() >= 4,
        "refused with {} idle connections under a limit of 4",
        idle.len()
    );
    assert!(body.contains("limit of 4 connections"), "{body}");
    assert!(elapsed < Duration::from_secs(2), "answered after {elapsed:?}");
    // Once they close, clients are served again.
    drop(idle);
    wait_for(|| (http(port, "GET", "/api/health", "", None).0 == 200).then_some(()));
}

/// The default limit comes from the descriptor budget: 1,500 idle, half-sent connections (a
/// slowloris client; 1,024 was the limit before) leave a fresh client served at once.
#[test]
fn a_fresh_client_is_served_beside_1500_idle_connections_by_default() {
    let (_server, port) = embedded_server(&[]);
    let idle = half_sent(port, 1500);
    let started = Instant::now();
    let (status, body) = http(port, "GET", "/api/health", "", None);
    assert_eq!(status, 200, "{body}");
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "answered after {:?}",
        started.elapsed()
    );
    drop(idle);
}

#[test]
fn the_server_raises_its_soft_open_file_limit_and_serves_past_the_old_one() {
    let db = scratch().join("nofile.db");
    let port = free_port();
    let command = format!(
        "ulimit -Sn 256 && exec {} serve --db {} --bind 127.0.0.1:{port}",
        env!("CARGO_BIN_EXE_hetsim"),
        db.display()
    );
    let mut child = std::process::Command::new("sh")
        .args(["-c", &command])
        .current_dir(repo())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let server = Proc(child);
    wait_healthy(port);
    // More idle connections than 256 descriptors could hold: health is still answered.
    let idle = half_sent(port, 400);
    assert_eq!(http(port, "GET", "/api/health", "", None).0, 200);
    drop(idle);
    drop(server);
    let mut log = String::new();
    let _ = std::io::Read::read_to_string(&mut std::io::BufReader::new(stderr), &mut log);
    assert!(log.contains("(was 256)"), "the server logs both limits: {log}");
    assert!(
        !log.contains('\u{1b}'),
        "no colour codes in a log that is not a terminal: {log}"
    );
}

#[test]
fn half_sent_requests_time_out() {
    let (_server, port) = embedded_server(&["--max-connections", "4", "--header-timeout-seconds", "1"]);
    let mut idle = half_sent(port, 1).remove(0);
    idle.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let started = Instant::now();
    let mut answer = Vec::new();
    let _ = std::io::Read::read_to_end(&mut idle, &mut answer);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "closed after {:?}",
        started.elapsed()
    );
    assert_eq!(http(port, "GET", "/api/health", "", None).0, 200);
}

#[test]
fn health_names_the_database_or_the_broker_that_is_down() {
    if !services() {
        return;
    }
    let fixture = Fixture::new("health");
    let port = free_port();
    let bind = format!("127.0.0.1:{port}");
    // A broker URL where nothing listens: the server starts (the outbox publisher retries),
    // and health says which dependency is down.
    let nowhere = format!("amqp://guest:guest@127.0.0.1:{}/%2f", free_port());
    let _server = hetsim(
        &["serve", "--db", &fixture.db, "--amqp", &nowhere, "--bind", &bind],
        &[],
    );
    wait_for(|| reachable(port).then_some(()));
    let health = wait_for(|| {
        let (status, body) = http(port, "GET", "/api/health", "", None);
        (status != 0).then(|| (status, json(&body)))
    });
    assert_eq!(health.0, 503, "{:?}", health.1);
    assert_eq!(health.1["down"], serde_json::json!(["broker"]), "{:?}", health.1);
    assert_eq!(health.1["database"], "up");
    // The database refuses connections: health names it too.
    psql(&format!(
        "ALTER DATABASE {} ALLOW_CONNECTIONS false",
        fixture.name
    ));
    psql(&format!(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{}'",
        fixture.name
    ));
    let (status, body) = wait_for(|| {
        let (status, body) = http(port, "GET", "/api/health", "", None);
        (json(&body)["database"] == "down").then_some((status, body))
    });
    assert_eq!(status, 503, "{body}");
    assert_eq!(
        json(&body)["down"],
        serde_json::json!(["database", "broker"]),
        "{body}"
    );
    psql(&format!("ALTER DATABASE {} ALLOW_CONNECTIONS true", fixture.name));
}

#[test]
fn cancelled_runs_stop_and_free_their_worker_and_deleted_ones_vanish() {
    let (_server, port) = embedded_server(&["--workers", "1"]);
    // Three runs that would each spin for hours; one worker.
    let sweep = sweep_of_slow_app(port, "default", &["spin=1000000,1000001,1000002"]);
    let running = a_running_run(port, &sweep);
    let (ok, out, err) = cli(&[
        "cancel",
        "--server",
        &format!("http://127.0.0.1:{port}"),
        &running,
    ]);
    assert!(ok && out.contains("cancelled"), "{out}{err}");
    assert_eq!(status_of(port, &running), "cancelled");
    // The worker drops the cancelled simulation and takes the next run: it was not stuck in
    // a spin of hours.
    let cancelled_at = Instant::now();
    let next = a_running_run(port, &sweep);
    assert_ne!(next, running);
    eprintln!(
        "the worker took the next run {:?} after the cancellation",
        cancelled_at.elapsed()
    );
    // Cancelling is idempotent; a sweep cancels what is left of it.
    let (status, body) = http(port, "POST", &format!("/api/runs/{running}/cancel"), "", None);
    assert_eq!(status, 202, "{body}");
    let (status, body) = http(port, "POST", &format!("/api/sweeps/{sweep}/cancel"), "", None);
    assert_eq!(
        (status, json(&body)["cancelled"].clone()),
        (202, 2.into()),
        "{body}"
    );
    let summary = sweep_summary(port, &sweep);
    assert_eq!(
        (summary["cancelled"].as_u64(), summary["total"].as_u64()),
        (Some(3), Some(3)),
        "{summary}"
    );
    // Deleting a run removes it with its log; deleting the sweep removes the rest.
    let (status, _) = http(port, "DELETE", &format!("/api/runs/{running}"), "", None);
    assert_eq!(status, 204);
    for path in [format!("/api/runs/{running}"), format!("/api/runs/{running}/log")] {
        assert_eq!(http(port, "GET", &path, "", None).0, 404, "{path}");
    }
    let (ok, out, err) = cli(&["delete", "--server", &format!("http://127.0.0.1:{port}"), &sweep]);
    assert!(ok && out.contains("sweep"), "{out}{err}");
    assert_eq!(
        http(port, "GET", &format!("/api/sweeps/{sweep}"), "", None).0,
        404
    );
    assert!(runs_of(port, &sweep).is_empty());
    let (status, body) = http(port, "POST", "/api/runs/nope/cancel", "", None);
    assert_eq!(status, 404, "{body}");
}

#[test]
fn wait_exits_1_for_a_failed_run_alike_in_submit_and_sweep() {
    let (_server, port) = embedded_server(&[]);
    let server = format!("http://127.0.0.1:{port}");
    let dir = scratch();
    let app = dir.join("deadlock.rhai");
    std::fs::write(&app, "sim.receive(\"any\");").unwrap();
    for command in ["submit", "sweep"] {
        let (ok, out, err) = cli(&[
            command,
            "--server",
            &server,
            "--app",
            app.to_str().unwrap(),
            "--system",
            ONE_CPU,
            "--wait",
        ]);
        assert!(!ok, "{command} --wait of a failing run exited 0: {out}{err}");
        assert!(
            err.contains("failed") || err.contains("did not finish done"),
            "{command}: {err}"
        );
    }
    let (ok, out, err) = cli(&[
        "sweep",
        "--server",
        &server,
        "--app",
        "examples/master-worker/app.rhai",
        "--system",
        ONE_CPU,
        "--label",
        "Worker=1,2",
        "--wait",
    ]);
    assert!(ok && out.contains("2 runs, 2 done, 0 failed"), "{out}{err}");
}

#[test]
fn a_log_cut_short_says_so_in_the_stored_log() {
    let (_server, port) = embedded_server(&[]);
    let app = scratch().join("chatty.rhai");
    std::fs::write(
        &app,
        "if tag == \"Master\" { for i in 0..12000 { sim.log(`line ${i}`); sim.sleep(1e-6); } }",
    )
    .unwrap();
    let (ok, out, err) = cli(&[
        "submit",
        "--server",
        &format!("http://127.0.0.1:{port}"),
        "--app",
        app.to_str().unwrap(),
        "--system",
        ONE_CPU,
        "--wait",
        "--json",
    ]);
    assert!(ok, "{out}{err}");
    let id = json(&out)["id"].as_str().expect("an id").to_owned();
    let (status, log) = http(port, "GET", &format!("/api/runs/{id}/log"), "", None);
    assert_eq!(status, 200, "{log}");
    let last = log.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("the log holds the first 10000 lines; 2000 more were dropped"),
        "{last}"
    );
}

#[test]
fn the_api_serves_a_runs_trace_in_the_chrome_format() {
    let (_server, port) = embedded_server(&[]);
    let (ok, out, err) = cli(&[
        "submit",
        "--server",
        &format!("http://127.0.0.1:{port}"),
        "--app",
        "examples/master-worker/app.rhai",
        "--system",
        ONE_CPU,
        "--label",
        "Worker=2",
        "--trace",
        "--wait",
        "--json",
    ]);
    assert!(ok, "{err}");
    let id = json(&out)["id"].as_str().expect("an id").to_owned();
    let (status, body) = http(
        port,
        "GET",
        &format!("/api/runs/{id}/trace?format=chrome"),
        "",
        None,
    );
    assert_eq!(status, 200, "{body}");
    assert!(
        http_headers(port, &format!("/api/runs/{id}/trace?format=chrome")).contains(&format!(
            "content-disposition: inline; filename=\"run-{}-trace-chrome.json\"",
            &id[..8]
        )),
        "the download is named"
    );
    let doc = json(&body);
    assert_eq!(doc["displayTimeUnit"], "ms");
    let events = doc["traceEvents"].as_array().expect("traceEvents");
    assert!(
        events.iter().any(|e| e["ph"] == "X" && e["cat"] == "compute"),
        "{body}"
    );
    assert!(
        events
            .iter()
            .any(|e| e["ph"] == "M" && e["args"]["name"] == "Worker[1]"),
        "{body}"
    );
    let (status, native) = http(
        port,
        "GET",
        &format!("/api/runs/{id}/trace?format=native"),
        "",
        None,
    );
    assert_eq!(status, 200);
    assert!(
        json(&native).as_array().is_some_and(|spans| !spans.is_empty()),
        "{native}"
    );
    let (status, body) = http(
        port,
        "GET",
        &format!("/api/runs/{id}/trace?format=perfetto"),
        "",
        None,
    );
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("chrome"), "the error names the formats: {body}");
}

#[test]
fn results_csv_orders_a_sweeps_rows_by_its_variables_numerically() {
    let (_server, port) = embedded_server(&[]);
    let server = format!("http://127.0.0.1:{port}");
    let sweep = gajger_sweep(
        &server,
        &[
            "occupancy=64",
            "numElements=1000000",
            "blockSize=256,32,128,64",
            "computeIntensity=8,1",
        ],
    );
    let (ok, csv, err) = cli(&["results", "--server", &server, &sweep, "--csv"]);
    assert!(ok, "{err}");
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    assert_eq!(
        header,
        [
            "id",
            "status",
            "label:CPU",
            "label:GPU",
            "blockSize",
            "computeIntensity",
            "numElements",
            "occupancy",
            "overall_time",
            "total_energy",
            "failure_chance",
            "error"
        ]
    );
    let order: Vec<(String, String)> = lines
        .map(|line| {
            let cells: Vec<&str> = line.split(',').collect();
            (cells[4].to_owned(), cells[5].to_owned())
        })
        .collect();
    let want: Vec<(String, String)> = [32, 64, 128, 256]
        .iter()
        .flat_map(|b| [1, 8].map(|c| (b.to_string(), c.to_string())))
        .collect();
    assert_eq!(order, want, "{csv}");
}

#[test]
fn systems_with_bad_links_are_refused_when_stored_or_submitted_and_the_schema_is_served() {
    let (_server, port) = embedded_server(&[]);
    let nodes = r#"[[node]]\nid = \"a\"\ncomponent = \"Intel Core i7-4790K\"\nmodel = \"cpu-flops\"\nlabels = { P = 1 }\n[[node]]\nid = \"b\"\ncomponent = \"Intel Core i7-4790K\"\nmodel = \"cpu-flops\"\n"#;
    let wire = r#"[[component]]\nname = \"wire\"\nkind = \"NETWORK\"\nattributes = { bandwidth = 0, startup = 1e-6 }\n[[link]]\nbetween = [\"a\", \"b\"]\ncomponent = \"wire\"\n"#;
    let store = |body: &str| {
        let (status, body) = http(
            port,
            "POST",
            "/api/systems",
            &format!(r#"{{"name": "bad", "body": "{body}"}}"#),
            None,
        );
        (status, json(&body))
    };
    let (status, body) = store(&format!("{nodes}{wire}"));
    assert_eq!((status, &body["field"]), (422, &"body".into()), "{body}");
    assert_eq!(
        body["error"],
        "bad:14: link[0] `a`–`b`, component `wire`: key `bandwidth`: expected a number > 0, got 0"
    );
    let (status, body) = store(&format!(
        r#"{nodes}[[link]]\nbetween = [\"a\", \"bb\"]\ncomponent = \"PCIe 4.0 x16\"\n"#
    ));
    assert_eq!(status, 422, "{body}");
    assert_eq!(
        body["error"],
        "bad:11: link[0] `a`–`bb`: unknown node `bb`; did you mean `b`?"
    );
    // A submission's system as a JSON object is checked against the schema too.
    let system = r#"{"node": [{"id": "a", "component": "Intel Core i7-4790K", "model": "cpu-flops", "labels": {"P": 1}},
        {"id": "b", "component": "Intel Core i7-4790K", "model": "cpu-flops"}],
        "link": [{"between": ["a", "b"], "component": "PCIe 4.0 x16", "channels": 0}]}"#;
    let (status, body) = http(
        port,
        "POST",
        "/api/runs",
        &format!(r#"{{"queue": "q", "app": "1", "system": {system}}}"#),
        None,
    );
    let body = json(&body);
    assert_eq!((status, &body["field"]), (422, &"system".into()), "{body}");
    assert_eq!(
        body["error"],
        "system: link[0].channels: 0 is less than the minimum of 1"
    );
    // The schema served is the one published.
    let (status, body) = http(port, "GET", "/api/schemas/system.json", "", None);
    assert_eq!(status, 200);
    let published = std::fs::read_to_string(repo().join("docs/schema/system.schema.json")).unwrap();
    assert_eq!(json(&body), json(&published));
}
