//! Named tokens in a real browser (headless Chromium through chromedriver) on a server
//! whose PostgreSQL database holds them: a read token's holder logs in, sees their name and
//! role in the header, and is offered no Launch, Cancel, Delete or catalog button (a form
//! posted anyway is refused with a page naming the role needed); a submit token's holder
//! launches a run and its page names them as its submitter.
//!
//! Without chromedriver, PostgreSQL or RabbitMQ the test fails under `CI=true` and skips
//! with a message elsewhere.

mod common;

use std::time::{Duration, Instant};

use common::browser::{chromedriver, Browser};
use common::fixture::{services, Fixture};
use common::{cli, free_port, hetsim, http, json, wait_healthy};
use fantoccini::Locator;
use serde_json::json;

const SYSTEM: &str = "name = \"one CPU\"\n\n[[node]]\nid = \"a\"\ncomponent = \"Intel Core i7-4790K\"\nmodel = \"cpu-flops\"\nlabels = { P = 1 }\n";

fn made(db: &str, name: &str, role: &str) -> String {
    let (ok, out, err) = cli(&["token", "create", name, "--role", role, "--db", db]);
    assert!(ok, "{err}");
    out.trim().to_owned()
}

async fn log_in(b: &Browser, token: &str) {
    b.goto("/login").await;
    b.fill("input[name=token]", token).await;
    b.click("form.card button[type=submit]").await;
}

/// Posts a form to `action` from the page, as a button would (same site, with the login's
/// cookie), and waits for the answer's page.
async fn post_from_the_page(b: &Browser, action: &str) {
    let old = b.client.find(Locator::Css("html")).await.unwrap();
    let script = "const f = document.createElement('form'); f.method = 'post'; f.action = arguments[0]; \
                  document.body.appendChild(f); f.submit();";
    b.client.execute(script, vec![json!(action)]).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while old.tag_name().await.is_ok() {
        assert!(Instant::now() < deadline, "posting {action} loaded no page");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_token_is_offered_no_changes_and_a_submit_token_launches_as_itself() {
    if !services() {
        return;
    }
    let Some((_driver, driver_port)) = chromedriver() else {
        return;
    };
    let fx = Fixture::new("ui-tokens");
    let reader = made(&fx.db, "rita", "read");
    let submitter = made(&fx.db, "sam", "submit");
    let admin = made(&fx.db, "ada", "admin");
    let port = free_port();
    let bind = format!("127.0.0.1:{port}");
    let _server = hetsim(&["serve", "--db", &fx.db, "--bind", &bind], &[]);
    wait_healthy(port);
    let token = Some(admin.as_str());
    // A run and the catalog's items to look at, stored by the admin.
    for (path, name, body) in [
        ("/api/apps", "nap", "// Sleeps a second.\nsim.sleep(1.0);\n"),
        ("/api/systems", "one-cpu", SYSTEM),
    ] {
        let (status, answer) = http(
            port,
            "POST",
            path,
            &json!({"name": name, "body": body}).to_string(),
            token,
        );
        assert_eq!(status, 201, "{answer}");
    }
    let run = json!({"queue": "default", "app_name": "nap", "system_name": "one-cpu"});
    let (status, answer) = http(port, "POST", "/api/runs", &run.to_string(), token);
    assert_eq!(status, 202, "{answer}");
    let admins_run = json(&answer)["id"].as_str().unwrap().to_owned();

    let b = Browser::open(driver_port, port).await;
    b.goto("/").await;
    assert_eq!(
        b.current_path().await,
        "/login",
        "a server with tokens asks for one"
    );

    // read: sees everything, is offered no change.
    log_in(&b, &reader).await;
    assert_eq!(b.current_path().await, "/");
    assert_eq!(b.text("header .who .name").await, "rita");
    assert_eq!(b.text("header .who .role").await, "read");
    assert_eq!(
        b.count("a[href^='/launch']").await,
        0,
        "no Launch in the menu or the overview"
    );
    b.shoot("tokens-read-overview").await;
    b.goto(&format!("/runs/{admins_run}")).await;
    b.reload_until("h1", "done").await;
    assert_eq!(b.text("dd.submitter").await, "ada");
    assert_eq!(b.count("div.lifecycle button").await, 0, "no Cancel or Delete");
    b.goto("/launch").await;
    assert_eq!(
        b.count("#launch button[type=submit]").await,
        0,
        "no Launch button"
    );
    assert!(b
        .text("#launch p.refused")
        .await
        .contains("needs the submit role"));
    b.goto("/apps/nap").await;
    assert_eq!(
        b.count("form.editor-form button[type=submit]").await,
        0,
        "no Save"
    );
    assert_eq!(b.count("a[href^='/launch']").await, 0, "no Launch with this app");
    assert!(b
        .text("form.editor-form p.refused")
        .await
        .contains("needs the admin role"));
    b.goto("/components").await;
    assert_eq!(b.count("form.card button[type=submit]").await, 0, "no Create");
    b.goto(&format!("/runs/{admins_run}")).await;
    post_from_the_page(&b, &format!("/runs/{admins_run}/delete")).await;
    assert!(b.text("h1").await.contains("403"));
    assert!(b.text("p.error").await.contains("needs the submit role"));
    assert_eq!(
        http(port, "GET", &format!("/api/runs/{admins_run}"), "", token).0,
        200,
        "still there"
    );

    // submit: launches; the run's page names its submitter and offers Delete.
    b.click("form.logout button").await;
    log_in(&b, &submitter).await;
    assert_eq!(b.text("header .who").await, "Signed in as sam (submit)");
    b.goto("/launch?app=nap&system=one-cpu").await;
    assert_eq!(b.text("#run-count").await, "1 run");
    b.click("#launch button[type=submit]").await;
    let page = b.current_path().await;
    assert!(page.starts_with("/runs/"), "{page}");
    b.reload_until("h1", "done").await;
    assert_eq!(b.text("dd.submitter").await, "sam");
    assert_eq!(b.count("div.lifecycle button.delete").await, 1);
    b.shoot("tokens-submit-run").await;
    let id = page.trim_start_matches("/runs/");
    let record = json(&http(port, "GET", &format!("/api/runs/{id}"), "", token).1);
    assert_eq!(record["submitter"], "sam", "{record}");
    b.client.close().await.unwrap();
}
