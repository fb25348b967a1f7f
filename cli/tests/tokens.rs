//! Named API tokens against real PostgreSQL: made, listed and revoked with `hetsim token`;
//! a server that has them needs one; each role may do what docs/SERVER.md ("Tokens and
//! roles") says and gets 403 naming the role needed otherwise; every run records who
//! submitted it; the admin token (HETSIM_TOKEN) still works; a token made or revoked while
//! the server runs counts within a few seconds. (`ui_tokens.rs`: the same in Chromium.)

mod common;

use std::time::{Duration, Instant};

use common::fixture::{services, Fixture};
use common::{cli, free_port, hetsim, http, json, wait_for, wait_healthy, Proc};

/// A run that finishes at once on one CPU.
fn run_body() -> String {
    let system = "[[node]]\nid = \"a\"\ncomponent = \"Intel Core i7-4790K\"\nmodel = \"cpu-flops\"\nlabels = { P = 1 }\n";
    serde_json::json!({"queue": "default", "app": "sim.sleep(1.0);", "system": system}).to_string()
}

/// `hetsim token ARGS --db DB`; (success, stdout, stderr).
fn token(db: &str, args: &[&str]) -> (bool, String, String) {
    let mut all = vec!["token"];
    all.extend(args);
    all.extend(["--db", db]);
    cli(&all)
}

/// Makes a token with the CLI; the token it printed.
fn made(db: &str, name: &str, role: &str) -> String {
    let (ok, out, err) = token(db, &["create", name, "--role", role]);
    assert!(ok, "{err}");
    assert!(err.contains("cannot be shown again"), "{err}");
    let token = out.trim().to_owned();
    assert!(
        token.starts_with("hst_") && !token.contains(char::is_whitespace),
        "{out}"
    );
    token
}

fn server(db: &str, admin: Option<&str>) -> (Proc, u16) {
    let port = free_port();
    let bind = format!("127.0.0.1:{port}");
    let envs: Vec<(&str, &str)> = admin.map(|t| ("HETSIM_TOKEN", t)).into_iter().collect();
    let server = hetsim(&["serve", "--db", db, "--bind", &bind], &envs);
    wait_healthy(port);
    (server, port)
}

/// A 403 whose JSON error names `role` as the one needed.
fn assert_forbidden(what: &str, (status, body): (u16, String), role: &str) {
    assert_eq!(status, 403, "{what}: {body}");
    let error = json(&body);
    let message = error["error"].as_str().unwrap_or("");
    assert!(
        message.contains(&format!("needs the {role} role")),
        "{what}: {body}"
    );
    assert!(error.get("field").is_some(), "{what}: {body}");
}

/// Waits until `check` holds, at most `seconds`; how long it took.
fn within(seconds: u64, mut check: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    while !check() {
        assert!(
            start.elapsed() < Duration::from_secs(seconds),
            "not within {seconds} s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    start.elapsed()
}

#[test]
fn tokens_have_roles_runs_name_their_submitter_and_revocation_counts_at_once() {
    if !services() {
        return;
    }
    let fx = Fixture::new("tokens");
    let db = fx.db.as_str();
    let reader = made(db, "rita", "read");
    let submitter = made(db, "sam", "submit");
    let (ok, _, err) = token(db, &["create", "rita", "--role", "admin"]);
    assert!(
        !ok && err.contains("an unrevoked token named \"rita\" exists"),
        "{err}"
    );
    let (ok, _, err) = token(db, &["create", "admin", "--role", "read"]);
    assert!(!ok && err.contains("reserved"), "{err}");
    let (ok, _, err) = token(db, &["revoke", "nobody"]);
    assert!(
        !ok && err.contains("no unrevoked token named \"nobody\""),
        "{err}"
    );

    let (ok, list, err) = token(db, &["list"]);
    assert!(ok, "{err}");
    assert!(
        list.contains("rita") && list.contains("read") && list.contains("sam") && list.contains("submit"),
        "{list}"
    );
    let (ok, listed, err) = token(db, &["list", "--json"]);
    assert!(ok, "{err}");
    let listed = json(&listed);
    assert_eq!(listed.as_array().map(Vec::len), Some(2), "{listed}");
    for text in [&list, &listed.to_string()] {
        for t in [&reader, &submitter] {
            let secret = t.rsplit('_').next().unwrap_or_default();
            assert!(!text.contains(secret), "a listing shows a secret: {text}");
        }
        let long_hex = text
            .split(|c: char| !c.is_ascii_hexdigit())
            .any(|word| word.len() >= 32);
        assert!(!long_hex, "a listing shows something like a hash: {text}");
        assert!(!text.contains("hash"), "{text}");
    }

    let (_server, port) = server(db, Some("adm1n"));
    let (read, submit, admin) = (Some(reader.as_str()), Some(submitter.as_str()), Some("adm1n"));

    // Who is let in.
    assert_eq!(http(port, "GET", "/api/runs", "", None).0, 401);
    let (reader_id, _) = reader
        .strip_prefix("hst_")
        .and_then(|rest| rest.split_once('_'))
        .expect("hst_<id>_<secret>");
    let wrong_secret = format!("hst_{reader_id}_{}", "0".repeat(64));
    for malformed in [
        "hst_",
        "hst__",
        "hst_zz_zz",
        "garbage",
        &wrong_secret,
        &reader[..reader.len() - 1],
        "hst_ü_ü",
    ] {
        let (status, body) = http(port, "GET", "/api/runs", "", Some(malformed));
        assert_eq!(status, 401, "{malformed:?}: {body}");
        assert!(json(&body)["error"].is_string(), "{body}");
    }
    assert_eq!(http(port, "GET", "/api/health", "", Some("garbage")).0, 200);

    // read: reads everything, changes nothing.
    assert_eq!(http(port, "GET", "/api/runs", "", read).0, 200);
    assert_eq!(http(port, "GET", "/api/components", "", read).0, 200);
    let (status, queued) = http(port, "POST", "/api/runs", &run_body(), admin);
    assert_eq!(status, 202, "{queued}");
    let admins_run = json(&queued)["id"].as_str().unwrap().to_owned();
    for (method, path) in [
        ("POST", "/api/runs".to_owned()),
        ("POST", "/api/sweeps".to_owned()),
        ("POST", format!("/api/runs/{admins_run}/cancel")),
        ("DELETE", format!("/api/runs/{admins_run}")),
        ("POST", "/launch".to_owned()),
        ("POST", format!("/runs/{admins_run}/delete")),
    ] {
        let refused = http(port, method, &path, &run_body(), read);
        if path.starts_with("/api/") {
            assert_forbidden(&format!("read: {method} {path}"), refused, "submit");
        } else {
            assert_eq!(refused.0, 403, "read: {method} {path}: {}", refused.1);
            assert!(refused.1.contains("needs the submit role"), "{}", refused.1);
        }
    }
    let app = r#"{"name": "nap", "body": "sim.sleep(1.0);"}"#;
    for (method, path) in [
        ("POST", "/api/apps"),
        ("PUT", "/api/apps/nap"),
        ("DELETE", "/api/components/x"),
    ] {
        assert_forbidden(
            &format!("read: {method} {path}"),
            http(port, method, path, app, read),
            "admin",
        );
    }

    // submit: submits, cancels and deletes; the run names its submitter; no catalog edits.
    let (status, queued) = http(port, "POST", "/api/runs", &run_body(), submit);
    assert_eq!(status, 202, "{queued}");
    let sams_run = json(&queued)["id"].as_str().unwrap().to_owned();
    let run = json(&http(port, "GET", &format!("/api/runs/{sams_run}"), "", read).1);
    assert_eq!(run["submitter"], "sam", "{run}");
    let cancelled = http(port, "POST", &format!("/api/runs/{sams_run}/cancel"), "", submit).0;
    assert!(cancelled == 202 || cancelled == 409, "{cancelled}");
    let sweep = serde_json::json!({"queue": "default", "app": "sim.sleep(d);", "variables": {"d": [1.0, 2.0]},
        "system": json(&run_body())["system"]});
    let (status, queued) = http(port, "POST", "/api/sweeps", &sweep.to_string(), submit);
    assert_eq!(status, 202, "{queued}");
    let sweep_id = json(&queued)["id"].as_str().unwrap().to_owned();
    let runs = json(&http(port, "GET", &format!("/api/runs?sweep={sweep_id}"), "", read).1);
    assert!(
        runs.as_array().unwrap().iter().all(|r| r["submitter"] == "sam"),
        "{runs}"
    );
    assert_eq!(
        http(port, "DELETE", &format!("/api/sweeps/{sweep_id}"), "", submit).0,
        204
    );
    assert_forbidden(
        "submit: POST /api/apps",
        http(port, "POST", "/api/apps", app, submit),
        "admin",
    );

    // admin, the server's own token: everything, under the name "admin".
    assert_eq!(http(port, "POST", "/api/apps", app, admin).0, 201);
    let run = json(&http(port, "GET", &format!("/api/runs/{admins_run}"), "", admin).1);
    assert_eq!(run["submitter"], "admin", "{run}");
    let (ok, out, err) = cli(&[
        "results",
        &sams_run,
        "--server",
        &format!("http://127.0.0.1:{port}"),
        "--token",
        &reader,
    ]);
    assert!(ok, "{err}");
    assert_eq!(json(&out)["submitter"], "sam", "{out}");
    assert_eq!(
        http(port, "DELETE", &format!("/api/runs/{sams_run}"), "", submit).0,
        204
    );

    // A token made while the server runs is taken, and a revoked one refused, within seconds.
    let late = made(db, "lena", "read");
    let took = within(10, || http(port, "GET", "/api/runs", "", Some(&late)).0 == 200);
    assert!(took < Duration::from_secs(4), "taken after {took:?}");
    let (ok, out, err) = token(db, &["revoke", "sam"]);
    assert!(ok && out.contains("revoked"), "{err}");
    let took = within(10, || http(port, "GET", "/api/runs", "", submit).0 == 401);
    assert!(took < Duration::from_secs(4), "refused after {took:?}");
    assert_eq!(
        http(port, "GET", "/api/runs", "", read).0,
        200,
        "other tokens still work"
    );
    let (ok, list, _) = token(db, &["list"]);
    assert!(ok);
    let sams = list.lines().find(|l| l.starts_with("sam ")).unwrap_or_default();
    assert!(
        sams.split_whitespace().count() == 4 && !sams.ends_with(" -"),
        "revoked shows: {list}"
    );
    // The name is free again: a new token for the same holder.
    let again = made(db, "sam", "submit");
    within(10, || http(port, "GET", "/api/runs", "", Some(&again)).0 == 200);
}

#[test]
fn a_server_needs_a_token_once_its_database_holds_one() {
    if !services() {
        return;
    }
    let fx = Fixture::new("tokens-open");
    let db = fx.db.as_str();
    let (_server, port) = server(db, None);
    // Nothing set up: open to all, and runs name no one.
    let (status, queued) = http(port, "POST", "/api/runs", &run_body(), None);
    assert_eq!(status, 202, "{queued}");
    let run = json(&queued)["id"].as_str().unwrap().to_owned();
    let record = wait_for(|| {
        let r = json(&http(port, "GET", &format!("/api/runs/{run}"), "", None).1);
        (r["status"] == "done").then_some(r)
    });
    assert!(record["submitter"].is_null(), "{record}");

    let only = made(db, "ana", "admin");
    within(10, || http(port, "GET", "/api/runs", "", None).0 == 401);
    let record = json(&http(port, "GET", &format!("/api/runs/{run}"), "", Some(&only)).1);
    assert!(record["submitter"].is_null(), "{record}");
    let (ok, _, err) = token(db, &["revoke", "ana"]);
    assert!(ok, "{err}");
    within(10, || http(port, "GET", "/api/runs", "", None).0 == 200);
}
