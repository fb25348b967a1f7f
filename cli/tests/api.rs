//! The HTTP API as users meet it: tokens, bodies, JSON errors, the OpenAPI document, items
//! by id or name, and submissions that carry their model files.
//! Real processes, a real SQLite file, and the machine's real PostgreSQL and RabbitMQ: tests
//! that need PostgreSQL or RabbitMQ fail when CI=true and the services are missing; elsewhere
//! they skip with a message on stderr.

mod common;

use std::time::{Duration, Instant};

use common::fixture::*;
use common::*;

#[test]
fn embedded_sqlite_server_runs_submissions() {
    let db = scratch().join("embedded.db");
    let port = free_port();
    let bind = format!("127.0.0.1:{port}");
    let _server = hetsim(&["serve", "--db", db.to_str().unwrap(), "--bind", &bind], &[]);
    wait_healthy(port);
    let run = submit_thesis(&format!("http://{bind}"), "default", &["--trace"]);
    assert_eq!(run["status"], "done");
    assert!((run["result"]["overall_time"].as_f64().unwrap() - 0.595696).abs() < 1e-6);
    // The stored system carries saxpy2's listing (submit inlines it): the worker analyses it.
    // 24 + 3a issues instead of Figure 5.23's 26 + 4a: the kernel takes 145.837 ms, not 146.655.
    let analysed = submit_thesis(
        &format!("http://{bind}"),
        "default",
        &["--var", "kernelParams=analysed"],
    );
    assert_eq!(analysed["status"], "done", "{analysed}");
    assert!(
        (analysed["result"]["overall_time"].as_f64().unwrap() - 0.594878).abs() < 2e-6,
        "{analysed}"
    );
    assert_eq!(run["attempts"], 1);
    let id = run["id"].as_str().unwrap();
    let (status, body) = http(port, "POST", &format!("/api/runs/{id}/cancel"), "", None);
    assert_eq!(status, 409, "a finished run cannot be cancelled: {body}");
    assert!(body.contains("already done"), "{body}");
    let (status, trace) = http(port, "GET", &format!("/api/runs/{id}/trace"), "", None);
    assert_eq!(status, 200);
    assert!(json(&trace)
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["kind"] == "compute"));
    // A run submitted without --trace recorded none, and says so.
    let untraced = analysed["id"].as_str().unwrap();
    let (status, body) = http(port, "GET", &format!("/api/runs/{untraced}/trace"), "", None);
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("without \\\"trace\\\": true"), "{body}");
    // Its processes, a page at a time, from the API and from `hetsim results`.
    let path = format!("/api/runs/{untraced}/processes?label=GPU&limit=1");
    let (status, page) = http(port, "GET", &path, "", None);
    assert_eq!(status, 200, "{page}");
    let page = json(&page);
    assert_eq!(
        (page["total"].as_i64(), page["processes"][0]["label"].as_str()),
        (Some(1), Some("GPU"))
    );
    let (status, body) = http(
        port,
        "GET",
        &format!("/api/runs/{untraced}/processes?limit=0"),
        "",
        None,
    );
    assert_error_json("limit 0", (status, body), 422);
    let server = format!("http://{bind}");
    let (ok, out, err) = cli(&["results", "--server", &server, untraced, "--processes", "--csv"]);
    assert!(ok, "{err}");
    let rows: Vec<&str> = out.lines().collect();
    assert_eq!(rows.len(), 3, "a header and two processes: {out}");
    assert!(
        rows[1].starts_with("0,CPU,0,") && rows[2].starts_with("1,GPU,0,"),
        "{out}"
    );
}

#[test]
fn api_checks_tokens_bodies_and_fields() {
    let db = scratch().join("api.db");
    let port = free_port();
    let bind = format!("127.0.0.1:{port}");
    let _server = hetsim(
        &[
            "serve",
            "--db",
            db.to_str().unwrap(),
            "--bind",
            &bind,
            "--token",
            "s3cret",
        ],
        &[],
    );
    wait_healthy(port);
    let t = Some("s3cret");
    assert_eq!(http(port, "GET", "/api/health", "", None).0, 200);
    assert_eq!(http(port, "GET", "/api/runs", "", None).0, 401);
    assert_eq!(http(port, "GET", "/api/runs", "", Some("wrong")).0, 401);
    assert_eq!(http(port, "GET", "/api/runs", "", t).0, 200);
    let (status, body) = http(port, "POST", "/api/runs", "{bad", t);
    assert_eq!(status, 400, "{body}");
    let (status, _) = http(port, "POST", "/api/runs", &"x".repeat(5 << 20), t);
    assert_eq!(status, 413);
    let system = r#"[[node]]\nid = \"a\"\ncomponent = \"Intel Core i7-4790K\"\nmodel = \"cpu-flops\"\nlabels = { P = 2 }\n"#;
    let submit = |app: &str, extra: &str| {
        http(
            port,
            "POST",
            "/api/runs",
            &format!(r#"{{"queue": "q", "app": "{app}", "system": "{system}"{extra}}}"#),
            t,
        )
    };
    let (status, body) = submit("let x = ;", "");
    assert_eq!(
        (status, json(&body)["field"].clone()),
        (422, "app".into()),
        "{body}"
    );
    assert!(
        json(&body)["error"].as_str().unwrap().contains("app:1:"),
        "{body}"
    );
    let (status, body) = submit("1", r#", "labels": {"Q": 1}"#);
    assert_eq!(
        (status, json(&body)["field"].clone()),
        (422, "labels".into()),
        "{body}"
    );
    let (status, body) = submit("1", r#", "labels": {"P": 3}"#);
    assert!(status == 422 && body.contains("3 processes asked"), "{body}");
    let (status, body) = http(
        port,
        "POST",
        "/api/runs",
        r#"{"queue": "q", "app": "1", "sytem": "x"}"#,
        t,
    );
    assert!(status == 422 && body.contains("unknown field `sytem`"), "{body}");
    assert_eq!(http(port, "GET", "/api/runs/no-such-run", "", t).0, 404);
    // A component without the attribute its model needs: the run fails with a clear message.
    let (status, body) = http(
        port,
        "POST",
        "/api/components",
        r#"{"name": "bare", "kind": "CPU", "source": "test", "attributes": {"cores": 2}}"#,
        t,
    );
    assert_eq!(status, 201, "{body}");
    let component = json(&body)["id"].as_str().unwrap().to_owned();
    let bare = r#"[[node]]\nid = \"a\"\ncomponent = \"bare\"\nmodel = \"cpu-flops\"\nlabels = { P = 1 }\n"#;
    let (status, body) = http(
        port,
        "POST",
        "/api/runs",
        &format!(r#"{{"queue": "q", "app": "sim.compute(#{{ ops: 1 }});", "system": "{bare}"}}"#),
        t,
    );
    assert_eq!(status, 202, "{body}");
    let id = json(&body)["id"].as_str().unwrap().to_owned();
    let run = wait_for(|| {
        let (_, body) = http(port, "GET", &format!("/api/runs/{id}"), "", t);
        let run = json(&body);
        (run["status"] == "failed").then_some(run)
    });
    assert!(run["error"].as_str().unwrap().contains("performance"), "{run}");
    // Setting the attribute makes the same submission succeed.
    let (status, _) = http(
        port,
        "PUT",
        &format!("/api/components/{component}/attributes/performance"),
        "1e9",
        t,
    );
    assert_eq!(status, 204);
    let (_, body) = http(port, "GET", &format!("/api/components/{component}"), "", t);
    assert_eq!(json(&body)["attributes"]["performance"], 1e9);
    // Replacing the component replaces its attributes; unknown fields are refused.
    let replaced = r#"{"name": "bare", "kind": "CPU", "source": "test", "attributes": {"performance": 2e9}}"#;
    let (status, _) = http(port, "PUT", &format!("/api/components/{component}"), replaced, t);
    assert_eq!(status, 200);
    let (_, body) = http(port, "GET", &format!("/api/components/{component}"), "", t);
    assert_eq!(json(&body)["attributes"], serde_json::json!({"performance": 2e9}));
    let (status, body) = http(
        port,
        "PUT",
        &format!("/api/components/{component}"),
        r#"{"name": "x", "knd": "CPU"}"#,
        t,
    );
    assert!(status == 422 && body.contains("unknown field `knd`"), "{body}");
    assert_eq!(http(port, "PUT", "/api/components/nope", replaced, t).0, 404);
    // Stored applications and systems are submitted by id.
    let (status, body) = http(
        port,
        "POST",
        "/api/apps",
        r#"{"name": "one", "body": "sim.compute(#{ ops: 2e9 });"}"#,
        t,
    );
    assert_eq!(status, 201, "{body}");
    let app = json(&body)["id"].as_str().unwrap().to_owned();
    let (status, body) = http(
        port,
        "POST",
        "/api/systems",
        &format!(r#"{{"name": "bare", "body": "{bare}"}}"#),
        t,
    );
    assert_eq!(status, 201, "{body}");
    let system = json(&body)["id"].as_str().unwrap().to_owned();
    // No queue: `default`, as the CLI's.
    let by_id = format!(r#"{{"app_id": "{app}", "system_id": "{system}"}}"#);
    let (status, body) = http(port, "POST", "/api/runs", &by_id, t);
    assert_eq!(status, 202, "{body}");
    let id = json(&body)["id"].as_str().unwrap().to_owned();
    let run = wait_for(|| {
        let run = json(&http(port, "GET", &format!("/api/runs/{id}"), "", t).1);
        (run["status"] == "done").then_some(run)
    });
    assert_eq!(
        run["result"]["overall_time"], 1.0,
        "2e9 FLOP at the replaced 2e9 FLOP/s: {run}"
    );
    assert_eq!(run["queue"], "default", "{run}");
    let (status, body) = http(
        port,
        "POST",
        "/api/runs",
        r#"{"queue": "q", "app_id": "nope", "system_id": "x"}"#,
        t,
    );
    assert!(
        status == 422 && body.contains("no stored application with id nope"),
        "{body}"
    );
}

#[test]
fn the_openapi_document_and_its_page_list_every_route_with_its_methods() {
    let (_server, port) = embedded_server(&[]);
    let (status, body) = http(port, "GET", "/api/openapi.json", "", None);
    assert_eq!(status, 200);
    let doc = json(&body);
    let paths = doc["paths"].as_object().unwrap();
    let mut listed: Vec<&str> = paths.keys().map(String::as_str).collect();
    listed.sort();
    assert_eq!(
        listed,
        [
            "/api/apps",
            "/api/apps/{id_or_name}",
            "/api/apps/{id_or_name}/inputs",
            "/api/components",
            "/api/components/{id_or_name}",
            "/api/components/{id_or_name}/attributes/{key}",
            "/api/docs",
            "/api/health",
            "/api/models",
            "/api/models/{id_or_name}",
            "/api/openapi.json",
            "/api/runs",
            "/api/runs/{id}",
            "/api/runs/{id}/cancel",
            "/api/runs/{id}/log",
            "/api/runs/{id}/processes",
            "/api/runs/{id}/source",
            "/api/runs/{id}/trace",
            "/api/schemas/system.json",
            "/api/sweeps",
            "/api/sweeps/{id}",
            "/api/sweeps/{id}/cancel",
            "/api/sweeps/{id}/results.csv",
            "/api/systems",
            "/api/systems/{id_or_name}",
            "/api/traces",
            "/api/traces/{name}",
            "/api/traces/{name}/files",
        ]
    );
    // Each documented method is served, each other method of the path answers 405: the
    // router and the document agree both ways.
    for (path, item) in paths {
        for method in ["GET", "POST", "PUT", "DELETE", "PATCH"] {
            let (status, body) = http(port, method, &concrete(path), "{}", None);
            if item.get(method.to_lowercase()).is_some() {
                assert!(
                    status != 405 && !body.contains("no route"),
                    "{method} {path} is documented but not served: {status} {body}"
                );
            } else {
                assert_eq!(
                    status, 405,
                    "{method} {path} is served but not documented: {body}"
                );
            }
        }
    }
    for (path, method, schema) in [
        ("/api/runs", "post", "Submission"),
        ("/api/sweeps", "post", "Submission"),
        ("/api/components", "post", "Component"),
        ("/api/apps/{id_or_name}", "put", "Named"),
        ("/api/traces/{name}", "put", "TraceUpload"),
    ] {
        let body = &doc["paths"][path][method]["requestBody"]["content"]["application/json"]["schema"];
        assert_eq!(
            body["$ref"],
            format!("#/components/schemas/{schema}"),
            "{method} {path}"
        );
    }
    for (path, method, status, schema) in [
        ("/api/runs", "post", "202", "RunAccepted"),
        ("/api/runs/{id}", "get", "200", "RunRecord"),
        ("/api/runs/{id}/processes", "get", "200", "ProcessPage"),
        ("/api/runs/{id}/cancel", "post", "202", "RunAccepted"),
        ("/api/sweeps", "post", "202", "SweepQueued"),
        ("/api/sweeps/{id}/cancel", "post", "202", "SweepCancelled"),
        ("/api/components/{id_or_name}", "get", "200", "ComponentRecord"),
        ("/api/runs/{id}", "get", "404", "ErrorBody"),
        ("/api/apps", "post", "422", "ErrorBody"),
    ] {
        let response =
            &doc["paths"][path][method]["responses"][status]["content"]["application/json"]["schema"];
        assert_eq!(
            response["$ref"],
            format!("#/components/schemas/{schema}"),
            "{method} {path} {status}"
        );
    }
    // The page names every route, and loads nothing from elsewhere.
    let (status, page) = http(port, "GET", "/api/docs", "", None);
    assert_eq!(status, 200);
    assert!(page.contains("<h1>hetsim API"), "{page}");
    for path in paths.keys() {
        assert!(
            page.contains(&format!("<code>{path}</code>")),
            "/api/docs lacks {path}"
        );
    }
    assert!(!page.contains("src=\"http") && !page.contains("href=\"http") && !page.contains("<script"));
    // Each route with a request example; a submission's names a shipped example.
    let methods = ["get", "post", "put", "delete", "patch"];
    let operations: usize = paths
        .values()
        .map(|item| methods.iter().filter(|m| item.get(**m).is_some()).count())
        .sum();
    assert_eq!(
        page.matches("<pre class=\"example\">curl -X ").count(),
        operations
    );
    assert!(page.contains("saxpy2-gtx970"), "POST /api/runs's example body");
}

#[test]
fn every_error_answers_json_with_error_and_field() {
    let (_server, port) = embedded_server(&[
        "--token",
        "t0k",
        "--request-timeout-seconds",
        "1",
        "--max-body-bytes",
        "1000",
    ]);
    let t = Some("t0k");
    assert_error_json("bad JSON", http(port, "POST", "/api/runs", "{bad", t), 400);
    assert_error_json(
        "a query of the wrong type",
        http(port, "GET", "/api/runs?limit=x", "", t),
        400,
    );
    assert_error_json("no token", http(port, "GET", "/api/runs", "", None), 401);
    for public in ["/api/health", "/api/openapi.json", "/api/docs"] {
        assert_eq!(
            http(port, "GET", public, "", None).0,
            200,
            "{public} needs no token"
        );
    }
    assert_error_json("no route", http(port, "GET", "/api/nothing", "", t), 404);
    assert_error_json("no item", http(port, "GET", "/api/apps/nothing", "", t), 404);
    assert_error_json(
        "a method the route does not take",
        http(port, "PATCH", "/api/runs", "", t),
        405,
    );
    assert_error_json(
        "a body over the limit",
        http(port, "POST", "/api/runs", &"x".repeat(2000), t),
        413,
    );
    assert_error_json(
        "a wrong field",
        http(port, "POST", "/api/runs", r#"{"queue": "q"}"#, t),
        422,
    );
    let started = Instant::now();
    let answer = post_a_slow_body(port, "t0k", 100, 10);
    assert!(answer.1.contains("--request-timeout-seconds"), "{answer:?}");
    assert_error_json("tower-http's timeout", answer, 408);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn stored_items_are_addressed_by_id_or_name_on_every_route_and_in_submissions() {
    let (_server, port) = embedded_server(&[]);
    let component = create(
        port,
        "/api/components",
        r#"{"name": "my cpu/2", "kind": "CPU", "attributes": {"performance": 1e9}}"#,
    );
    let by_name = "/api/components/my%20cpu%2F2";
    assert_eq!(
        json(&http(port, "GET", by_name, "", None).1)["id"],
        component.as_str()
    );
    let (status, body) = http(
        port,
        "PUT",
        &format!("{by_name}/attributes/performance"),
        "4e9",
        None,
    );
    assert_eq!(status, 204, "{body}");
    let renamed = r#"{"name": "my cpu/2", "kind": "CPU", "attributes": {"performance": 4e9, "cores": 2}}"#;
    assert_eq!(http(port, "PUT", by_name, renamed, None).0, 200);
    let stored = json(&http(port, "GET", &format!("/api/components/{component}"), "", None).1);
    assert_eq!(
        stored["attributes"],
        serde_json::json!({"performance": 4e9, "cores": 2.0})
    );
    let system =
        r#"[[node]]\nid = \"a\"\ncomponent = \"my cpu/2\"\nmodel = \"cpu-flops\"\nlabels = { P = 1 }\n"#;
    create(
        port,
        "/api/systems",
        &format!(r#"{{"name": "one-cpu", "body": "{system}"}}"#),
    );
    let app = create(
        port,
        "/api/apps",
        r#"{"name": "eight", "body": "sim.compute(#{ ops: 8e9 });"}"#,
    );
    // An item named like another's id does not hide it: ids win.
    create(
        port,
        "/api/apps",
        &format!(r#"{{"name": "{app}", "body": "sim.compute(#{{ ops: 1 }});"}}"#),
    );
    assert_eq!(
        json(&http(port, "GET", &format!("/api/apps/{app}"), "", None).1)["name"],
        "eight"
    );
    let (status, body) = http(
        port,
        "PUT",
        &format!("/api/apps/{}", "eight"),
        r#"{"name": "eight", "body": "sim.compute(#{ ops: 8e9 }); // by name"}"#,
        None,
    );
    assert_eq!(
        (status, json(&body)["id"].as_str()),
        (200, Some(app.as_str())),
        "{body}"
    );
    let by_names = r#"{"queue": "q", "app_name": "eight", "system_name": "one-cpu"}"#;
    let (status, body) = http(port, "POST", "/api/runs", by_names, None);
    assert_eq!(status, 202, "{body}");
    let id = json(&body)["id"].as_str().unwrap().to_owned();
    let run = wait_for(|| {
        let run = json(&http(port, "GET", &format!("/api/runs/{id}"), "", None).1);
        (run["status"] == "done").then_some(run)
    });
    assert_eq!(
        run["result"]["overall_time"], 2.0,
        "8e9 FLOP at 4e9 FLOP/s: {run}"
    );
    let (status, body) = http(
        port,
        "POST",
        "/api/sweeps",
        r#"{"queue": "q", "app_name": "nope", "system_name": "one-cpu"}"#,
        None,
    );
    assert!(
        status == 422
            && json(&body)["field"] == "app_name"
            && body.contains(r#"no stored application named \"nope\""#),
        "{body}"
    );
    let (status, body) = http(
        port,
        "POST",
        "/api/runs",
        r#"{"queue": "q", "app": "1", "app_name": "eight", "system_name": "one-cpu"}"#,
        None,
    );
    assert!(
        status == 422 && json(&body)["field"] == "app" && body.contains("exactly one of"),
        "{body}"
    );
    assert_eq!(http(port, "DELETE", "/api/systems/one-cpu", "", None).0, 204);
    assert_eq!(http(port, "DELETE", by_name, "", None).0, 204);
    let (status, body) = http(port, "GET", by_name, "", None);
    assert!(
        status == 404 && body.contains(r#"no component with id or name \"my cpu/2\""#),
        "{body}"
    );
}

#[test]
fn submit_sends_local_model_files_and_the_catalog_commands_list_and_fetch() {
    let (_server, port) = embedded_server(&[]);
    let server = format!("http://127.0.0.1:{port}");
    let dir = system_with_a_local_model();
    let (app, system) = (dir.join("app.rhai"), dir.join("system.toml"));
    let (app, system) = (app.to_str().unwrap(), system.to_str().unwrap());
    let (ok, local, err) = cli(&["run", "--app", app, "--system", system, "--json"]);
    assert!(ok, "{err}");
    assert_eq!(json(&local)["overall_time"], 3.5);
    let (ok, out, err) = cli(&[
        "submit", "--server", &server, "--app", app, "--system", system, "--wait", "--json",
    ]);
    assert!(ok, "{err}");
    assert_eq!(
        json(&out)["result"]["overall_time"],
        3.5,
        "the server ran the local model: {out}"
    );
    // Stored items: listed, fetched by name into a file, submitted by name.
    create(
        port,
        "/api/apps",
        r#"{"name": "tiny app", "body": "sim.compute(#{ ops: 2e9 });"}"#,
    );
    let (ok, out, err) = cli(&["catalog", "list", "apps", "--server", &server]);
    assert!(ok && out.contains("  tiny app"), "{out}{err}");
    let (ok, out, err) = cli(&["catalog", "list", "components", "--server", &server]);
    assert!(ok && out.contains("GTX 970 - gajger [GPU]"), "{out}{err}");
    let fetched = dir.join("fetched.rhai");
    let (ok, _, err) = cli(&[
        "catalog",
        "get",
        "apps",
        "tiny app",
        "-o",
        fetched.to_str().unwrap(),
        "--server",
        &server,
    ]);
    assert!(ok, "{err}");
    assert_eq!(
        std::fs::read_to_string(&fetched).unwrap(),
        "sim.compute(#{ ops: 2e9 });"
    );
    let (ok, _, err) = cli(&["catalog", "get", "systems", "nothing", "--server", &server]);
    assert!(
        !ok && err.contains("no systems item with id or name \"nothing\""),
        "{err}"
    );
    let (ok, out, err) = cli(&[
        "submit",
        "--server",
        &server,
        "--app-name",
        "tiny app",
        "--system",
        system,
        "--wait",
        "--json",
    ]);
    assert!(ok, "{err}");
    assert_eq!(json(&out)["result"]["overall_time"], 3.5, "{out}");
    let (ok, _, err) = cli(&[
        "sweep",
        "--server",
        &server,
        "--app-name",
        "nope",
        "--system-name",
        "nope",
    ]);
    assert!(!ok && err.contains("no stored application named"), "{err}");
    let (ok, _, err) = cli(&["submit", "--server", &server, "--system", system]);
    assert!(!ok && err.contains("--app"), "{err}");
}
