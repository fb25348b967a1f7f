//! The web UI in a real browser: Debian's headless Chromium, driven through chromedriver
//! (WebDriver, fantoccini), against `hetsim serve` on SQLite with its in-process workers.
//! A user creates a component, stores an app through the editor (a syntax error shown at
//! its line first), launches a run and sees its result and timeline, launches a sweep and
//! sees its plot; a stored trace is launched and replayed; a server with a token asks for it
//! once per browser session.
//! (`ui_first_day.rs`: an empty server, the shipped examples, a three-input sweep.)
//!
//! Every page visited is photographed into `target/ui-screenshots/`, or into the folder
//! `HETSIM_UI_SCREENSHOTS` names: `HETSIM_UI_SCREENSHOTS=docs/ui cargo test -p
//! hetsim --test ui` renews the README's and docs/ui's pictures.
//!
//! Without chromedriver the tests fail under `CI=true` (`.ci/run` installs `chromium` and
//! `chromium-driver`) and skip with a message elsewhere.

mod common;

use common::browser::{chromedriver, Browser};
use common::fixture::SPINNING_APP;
use common::{cli, embedded_server, http, repo, server_with_the_example_trace};
use fantoccini::Locator;
use serde_json::json;

const APP: &str = r#"// Master-worker: the master sends every worker a task and collects the results.
let ops = if is_def_var("ops") { ops } else { 1e9 };
let workers = labels["Worker"];
if tag == "Master" {
    for w in 0..workers { sim.send(1e6, ["Worker", w]); }
    for w in 0..workers { sim.receive("any"); }
} else {
    sim.receive("Master");
    sim.compute(#{ ops: ops });
    sim.send(1e3, "Master");
}
"#;

const SYSTEM: &str = r#"name = "lab"

[[node]]
id = "master"
component = "Intel Core i7-4790K"
model = "cpu-flops"
labels = { Master = 1 }

[[node]]
id = "workers"
component = "Intel Core i7-4790K"
model = "cpu-flops"
labels = { Worker = 4 }

[[link]]
between = ["master", "workers"]
component = "Lab Ethernet"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_creates_a_component_launches_a_run_and_a_sweep_and_sees_their_results() {
    let Some((_driver, driver_port)) = chromedriver() else {
        return;
    };
    let (_server, port) = embedded_server(&[]);
    let b = Browser::open(driver_port, port).await;

    // A component, through the form.
    b.goto("/components").await;
    b.fill("form.card input[name=name]", "Lab Ethernet").await;
    b.client
        .find(Locator::Css("form.card select[name=kind]"))
        .await
        .unwrap()
        .select_by_value("NETWORK")
        .await
        .unwrap();
    b.fill("form.card input[name=source]", "a lab's switch, measured")
        .await;
    b.paste(
        "form.card textarea[name=attributes]",
        "bandwidth = 1.25e8\nstartup = 5e-5\nlambda = 0.94",
    )
    .await;
    b.click("form.card button[type=submit]").await;
    assert_eq!(b.current_path().await, "/components/Lab%20Ethernet");
    let attributes = b.text("main table").await;
    assert!(
        attributes.contains("bandwidth") && attributes.contains("1.25e8"),
        "{attributes}"
    );
    b.shoot("component").await;
    b.goto("/components?kind=NETWORK").await;
    assert!(b.text("main table").await.contains("Lab Ethernet"));
    b.goto("/components").await;
    b.shoot("components").await;

    // An app through the editor: a syntax error comes back at its line, then the fix.
    b.goto("/apps").await;
    b.fill("input[name=name]", "master-worker").await;
    b.paste(
        "textarea[name=body]",
        &APP.replace("sim.compute(#{ ops: ops });", "sim.compute(#{ ops: ops };"),
    )
    .await;
    b.click("form.editor-form button[type=submit]").await;
    let error = b.text("p.error").await;
    assert!(error.starts_with("Line 9"), "the error names line 9: {error}");
    assert_eq!(b.text(".gutter span.bad").await, "9");
    b.shoot("app-error").await;
    b.paste("textarea[name=body]", APP).await;
    b.click("form.editor-form button[type=submit]").await;
    assert_eq!(b.current_path().await, "/apps/master-worker");
    b.shoot("app").await;
    let (status, body) = http(
        port,
        "POST",
        "/api/systems",
        &json!({"name": "lab", "body": SYSTEM}).to_string(),
        None,
    );
    assert_eq!(status, 201, "{body}");
    b.goto("/systems").await;
    b.shoot("systems").await;
    b.goto("/models").await;
    b.shoot("models").await;

    // One run: its result, processes and timeline.
    b.goto("/launch?app=master-worker&system=lab").await;
    assert_eq!(
        b.client
            .find(Locator::Css("input[name='label.Worker']"))
            .await
            .unwrap()
            .attr("placeholder")
            .await
            .unwrap()
            .as_deref(),
        Some("4")
    );
    b.fill("input[name='label.Worker']", "2").await;
    b.fill("tbody tr:first-child input[name=var_value]", "2e9").await;
    assert_eq!(b.text("#run-count").await, "1 run");
    b.client
        .find(Locator::Css("input[name=trace]"))
        .await
        .expect("the Record a trace box")
        .click()
        .await
        .unwrap();
    b.click("#launch button[type=submit]").await;
    assert!(b.current_path().await.starts_with("/runs/"));
    b.reload_until("h1", "done").await;
    let processes = b.text("#processes").await;
    assert_eq!(
        b.count("#processes tbody tr").await,
        3,
        "a master and two workers: {processes}"
    );
    assert_eq!(
        b.count(".timeline svg").await,
        1,
        "the run page shows its timeline"
    );
    assert!(b.text(".summary").await.contains("overall time"));
    assert_eq!(
        b.count("#labels tbody tr").await,
        2,
        "a row per label: Master, Worker"
    );
    b.shoot("run-master-worker").await;

    // A sweep: 3 worker counts × 2 task sizes, plotted with one line per task size.
    b.goto("/launch?app=master-worker&system=lab").await;
    b.fill("input[name='label.Worker']", "1,2,4").await;
    b.fill("tbody tr:first-child input[name=var_value]", "1e9,4e9")
        .await;
    assert_eq!(b.text("#run-count").await, "6 runs (a sweep)");
    b.shoot("launch-sweep").await;
    b.click("#launch button[type=submit]").await;
    let sweep = b.current_path().await;
    assert!(sweep.starts_with("/sweeps/"), "{sweep}");
    b.reload_until("p.progress", "6 of 6 runs finished").await;
    assert_eq!(b.count("#runs tbody tr").await, 6);
    assert_eq!(
        b.count(".sweep-plot svg polyline").await,
        2,
        "one line per task size"
    );
    let plot = b
        .client
        .find(Locator::Css(".sweep-plot svg"))
        .await
        .unwrap()
        .html(false)
        .await
        .unwrap();
    assert!(
        plot.contains("ops = 1e9") && plot.contains("label:Worker"),
        "{plot}"
    );
    b.shoot("sweep-master-worker").await;
    let (status, csv) = http(port, "GET", &format!("/api{sweep}/results.csv"), "", None);
    assert_eq!(status, 200);
    let moved = http(port, "GET", &format!("{sweep}/results.csv"), "", None).0;
    assert_eq!(moved, 308, "the UI's old CSV link redirects to the API's");
    let workers: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(3).unwrap_or(""))
        .collect();
    assert_eq!(
        workers,
        ["1", "1", "2", "2", "4", "4"],
        "rows ordered by the sweep's inputs: {csv}"
    );

    b.goto("/").await;
    assert!(b.text("main").await.contains("Recent sweeps"));
    assert_eq!(b.count("#sweeps tbody tr").await, 1, "the sweep is listed");
    assert_eq!(b.count("#runs tbody tr").await, 1, "the run alone is listed");
    b.shoot("overview").await;
    b.goto("/occupancy?gpu=H100%20SXM5%2080GB&threads=256&registers=64")
        .await;
    assert_eq!(b.count(".charts svg").await, 3);
    b.shoot("occupancy").await;
    b.goto("/api/docs").await;
    assert!(b.text("body").await.contains("/api/runs"));
    b.shoot("api-docs").await;
    b.client.close().await.unwrap();
}

/// The id of what `POST path` queued.
fn queued(port: u16, path: &str, submission: &serde_json::Value) -> String {
    let (status, body) = http(port, "POST", path, &submission.to_string(), None);
    assert_eq!(status, 202, "{body}");
    let answer: serde_json::Value = serde_json::from_str(&body).unwrap();
    answer["id"].as_str().expect("an id").to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_cancels_a_sweep_and_deletes_a_run_from_their_pages() {
    let Some((_driver, driver_port)) = chromedriver() else {
        return;
    };
    let (_server, port) = embedded_server(&["--workers", "1"]);
    let b = Browser::open(driver_port, port).await;
    let system = std::fs::read_to_string(repo().join("examples/master-worker/system.toml")).unwrap();
    let sweep = json!({"queue": "default", "app": SPINNING_APP, "system": system,
        "labels": {"Worker": 1}, "variables": {"spin": [3000, 3001, 3002, 3003]}});
    let id = queued(port, "/api/sweeps", &sweep);

    // One worker, four slow runs: the sweep is unfinished, and offers to cancel.
    b.goto(&format!("/sweeps/{id}")).await;
    assert_eq!(b.count("div.lifecycle button.cancel").await, 1);
    b.shoot("sweep-running").await;
    b.click_and_confirm("div.lifecycle button.cancel", false).await;
    b.click_and_confirm("div.lifecycle button.cancel", true).await;
    assert_eq!(b.current_path().await, format!("/sweeps/{id}"));
    b.reload_until("p.progress", "4 of 4 runs finished").await;
    assert!(b.text("p.progress").await.contains("cancelled"));
    assert_eq!(
        b.count("div.lifecycle button.cancel").await,
        0,
        "nothing left to cancel"
    );

    b.click_and_confirm("div.lifecycle button.delete", true).await;
    assert_eq!(b.current_path().await, "/");
    assert_eq!(http(port, "GET", &format!("/api/sweeps/{id}"), "", None).0, 404);

    // A finished run: delete only, and its page is gone.
    let run = json!({"queue": "default", "app": "sim.sleep(1.0);", "system": system});
    let run = queued(port, "/api/runs", &run);
    b.goto(&format!("/runs/{run}")).await;
    b.reload_until("h1", "done").await;
    assert_eq!(b.count("div.lifecycle button.cancel").await, 0);
    b.click_and_confirm("div.lifecycle button.delete", true).await;
    assert_eq!(b.current_path().await, "/");
    assert_eq!(http(port, "GET", &format!("/api/runs/{run}"), "", None).0, 404);
    b.client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_with_a_token_asks_for_it_once_per_browser_session() {
    let Some((_driver, driver_port)) = chromedriver() else {
        return;
    };
    let (_server, port) = embedded_server(&["--token", "s3cret"]);
    let b = Browser::open(driver_port, port).await;
    b.goto("/components?kind=GPU").await;
    assert_eq!(b.current_path().await, "/login");
    b.shoot("login").await;
    b.fill("input[name=token]", "wrong").await;
    b.click("form.card button[type=submit]").await;
    assert!(b.text("p.error").await.contains("not the server's token"));
    b.fill("input[name=token]", "s3cret").await;
    b.click("form.card button[type=submit]").await;
    let url = b.client.current_url().await.unwrap();
    assert_eq!((url.path(), url.query()), ("/components", Some("kind=GPU")));
    assert!(b.text("main table").await.contains("H100"));
    b.goto("/api/components").await;
    assert!(
        b.text("body").await.contains("H100"),
        "the API takes the login's cookie"
    );
    b.goto("/").await;
    b.click("form.logout button").await;
    assert_eq!(b.current_path().await, "/login");
    b.goto("/api/components").await;
    assert!(
        b.text("body").await.contains("bearer token"),
        "the login's cookie is gone"
    );
    b.goto("/components").await;
    assert_eq!(b.current_path().await, "/login");
    b.client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn launch_offers_a_stored_trace_and_replays_it_under_a_compute_policy() {
    let Some((_driver, driver_port)) = chromedriver() else {
        return;
    };
    let (_server, port, _) = server_with_the_example_trace();
    let b = Browser::open(driver_port, port).await;
    b.goto("/launch").await;
    b.click("form.examples button").await;

    // The trace among the apps: a compute policy instead of labels.
    b.goto("/launch?app=trace:dp-step&system=training-8gpu-hgx-h100-8")
        .await;
    assert!(b.text("select[name=app]").await.contains("dp-step (8 ranks)"));
    assert_eq!(b.count("input#compute").await, 1);
    assert_eq!(
        b.count("input[name^='label.']").await,
        0,
        "a replay takes no labels"
    );
    assert_eq!(b.text("#run-count").await, "1 run");
    b.click("#launch button[type=submit]").await;
    assert!(b.current_path().await.starts_with("/runs/"));
    b.reload_until("h1", "done").await;
    let log = b.text("pre.log").await;
    assert!(
        log.contains("compute policy: replay") && log.contains("rank 7"),
        "{log}"
    );
    // The per-rank breakdown: one row a rank, all 17 nodes of each run.
    assert_eq!(b.count("#ranks tbody tr").await, 8);
    assert!(b.text("#ranks thead").await.contains("exposed communication"));
    b.client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trace_is_stored_from_its_rank_files_chosen_in_the_browser() {
    let Some((_driver, driver_port)) = chromedriver() else {
        return;
    };
    let (_server, port) = embedded_server(&[]);
    let b = Browser::open(driver_port, port).await;
    let file = |rank: usize| repo().join(format!("examples/traces/dp-step.{rank}.et"));
    // The rank files chosen in any order: their names say their ranks.
    let files: Vec<_> = [3, 0, 7, 1, 6, 2, 5, 4].into_iter().map(file).collect();
    b.goto("/traces").await;
    b.fill("#upload input[name=name]", "uploaded").await;
    b.attach("#upload input[name=files]", &files).await;
    b.click("#upload button[type=submit]").await;
    assert_eq!(b.current_path().await, "/traces");
    let row = b.text("#traces tbody").await;
    assert!(row.contains("uploaded") && row.contains("136"), "{row}");
    let (ok, listed, err) = cli(&[
        "traces",
        "get",
        "uploaded",
        "--server",
        &format!("http://127.0.0.1:{port}"),
    ]);
    assert!(ok, "{err}");
    assert!(
        listed.contains("rank 0  dp-step.0.et")
            && listed.contains("rank 7  dp-step.7.et  17 nodes, 1247 bytes"),
        "{listed}"
    );

    // A rank missing: refused, naming it, and nothing stored.
    b.fill("#upload input[name=name]", "gap").await;
    b.attach("#upload input[name=files]", &[file(0), file(2)]).await;
    b.click("#upload button[type=submit]").await;
    let alert = b.text("#upload p.error").await;
    assert!(
        alert.contains("files: rank 1 is missing (dp-step.1.et)"),
        "{alert}"
    );
    assert!(!b.text("#traces tbody").await.contains("gap"));
    b.client.close().await.unwrap();
}
