//! A new user's first day in the web UI, in headless Chromium (see `common::browser`): an
//! empty server says so and offers the shipped examples; Launch lists what the saxpy2 app
//! needs, required first, defaults filled in, and a run launched with only those typed is
//! done; a three-input sweep reads as one clean line per value, the third input fixed, or as
//! a plot per value; its table sorts by any column.
//!
//! `HETSIM_UI_SCREENSHOTS=docs/ui cargo test -p hetsim --test ui_first_day` renews
//! docs/ui's launch, run and sweep pictures.

mod common;

use common::browser::{chromedriver, Browser};
use common::embedded_server;
use fantoccini::Locator;

/// The texts of every element `css` selects.
async fn texts(b: &Browser, css: &str) -> Vec<String> {
    let mut out = Vec::new();
    for element in b.client.find_all(Locator::Css(css)).await.unwrap() {
        out.push(element.text().await.unwrap());
    }
    out
}

/// Types each `(input, value)` into the Launch page's field of that input.
async fn fill_inputs(b: &Browser, values: &[(&str, &str)]) {
    for (name, value) in values {
        b.fill(&format!("input[aria-label='value of {name}']"), value)
            .await;
    }
}

async fn value_of(b: &Browser, variable: &str) -> String {
    let css = format!("input[aria-label='value of {variable}']");
    let field = b
        .client
        .find(Locator::Css(&css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"));
    field.prop("value").await.unwrap().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_user_loads_the_examples_launches_saxpy2_and_reads_a_three_input_sweep() {
    let Some((_driver, driver_port)) = chromedriver() else {
        return;
    };
    let (_server, port) = embedded_server(&[]);
    let b = Browser::open(driver_port, port).await;

    // An empty server: nothing to launch, the button is off, the examples are offered; a
    // server without a token offers no "Log out"; the built-in models are listed.
    b.goto("/launch").await;
    assert_eq!(b.text("#run-count").await, "nothing to run");
    let launch = b
        .client
        .find(Locator::Css("#launch button[type=submit]"))
        .await
        .unwrap();
    assert_eq!(launch.attr("disabled").await.unwrap().as_deref(), Some("true"));
    assert_eq!(b.count("form.logout").await, 0, "no token, no Log out");
    b.shoot("launch-empty").await;
    b.goto("/models").await;
    let builtin = texts(&b, "details.builtin summary code").await;
    for model in [
        "gpu-volkov",
        "gpu-queueing",
        "cpu-flops",
        "link-startup-bandwidth",
    ] {
        assert!(builtin.iter().any(|m| m == model), "{model} listed: {builtin:?}");
    }

    // One click stores the examples and opens Launch on saxpy2 and the GTX 970.
    b.goto("/launch").await;
    b.click("form.examples button").await;
    assert_eq!(b.current_path().await, "/launch");
    let required = texts(&b, "table.variables tr.required code").await;
    assert_eq!(
        required,
        ["numElements", "computeIntensity", "blockSize", "occupancy"]
    );
    assert_eq!(
        value_of(&b, "kernelParams").await,
        "thesis",
        "a default filled in"
    );
    assert!(
        b.text("table.variables").await.contains("warps/SM"),
        "units shown"
    );
    fill_inputs(
        &b,
        &[
            ("numElements", "1e6"),
            ("computeIntensity", "8"),
            ("blockSize", "256"),
            ("occupancy", "64"),
        ],
    )
    .await;
    assert_eq!(b.text("#run-count").await, "1 run");
    b.shoot("launch").await;
    b.click("#launch button[type=submit]").await;
    assert!(b.current_path().await.starts_with("/runs/"));
    b.reload_until("h1", "done").await;
    let what_ran = b.text("#what-ran").await;
    assert!(
        what_ran.contains("saxpy2-gtx970") && what_ran.contains("application model"),
        "{what_ran}"
    );
    let system = b.text("main").await;
    assert!(
        system.contains("GTX 970 - gajger") && system.contains("gpu-volkov"),
        "{system}"
    );
    assert!(
        b.text("dl.facts").await.contains("kernelParams=thesis"),
        "the variables it ran with"
    );
    let activities = b.text("#activities").await;
    assert!(
        activities.contains("gpu-volkov")
            && activities.contains("host → gpu")
            && activities.contains("gpu → host"),
        "computes with their model, transfers each way: {activities}"
    );
    b.shoot("run").await;

    // The overview names each recent run's app and system; Launch still offers the examples.
    b.goto("/").await;
    let recent = b.text("#runs").await;
    assert!(
        recent.contains("The thesis's application model") && recent.contains("saxpy2-gtx970"),
        "{recent}"
    );
    b.goto("/launch?app=saxpy2&system=saxpy2-gtx970").await;
    assert_eq!(b.count("form.examples").await, 1, "the examples stay on offer");

    // blockSize × computeIntensity × numElements: 2 × 2 × 3 runs.
    b.goto("/launch?app=saxpy2&system=saxpy2-gtx970").await;
    fill_inputs(
        &b,
        &[
            ("numElements", "1e6,1e7,1e8"),
            ("computeIntensity", "1,64"),
            ("blockSize", "128,256"),
            ("occupancy", "64"),
        ],
    )
    .await;
    assert_eq!(b.text("#run-count").await, "12 runs (a sweep)");
    b.click("#launch button[type=submit]").await;
    let sweep = b.current_path().await;
    assert!(sweep.starts_with("/sweeps/"), "{sweep}");
    b.reload_until("p.progress", "12 of 12 runs finished").await;
    let shared = b.text("#what-ran").await;
    for what in [
        "The thesis's application model",
        "saxpy2-gtx970",
        "occupancy = 64",
        "kernelParams = thesis",
    ] {
        assert!(shared.contains(what), "the sweep page names {what}: {shared}");
    }
    assert!(
        b.text("p.progress").await.contains("12 done"),
        "{}",
        b.text("p.progress").await
    );

    // One clean line per computeIntensity over numElements, blockSize fixed at 128.
    b.goto(&format!("{sweep}?x=numElements&by=computeIntensity"))
        .await;
    let lines = b
        .client
        .find_all(Locator::Css(".sweep-plot svg polyline"))
        .await
        .unwrap();
    assert_eq!(lines.len(), 2, "one line per computeIntensity");
    for line in lines {
        let points = line.attr("points").await.unwrap().unwrap_or_default();
        let xs: Vec<f64> = points
            .split_whitespace()
            .map(|p| p.split(',').next().unwrap().parse().unwrap())
            .collect();
        assert_eq!(xs.len(), 3, "three sizes, one run each: {points}");
        assert!(xs.windows(2).all(|w| w[0] < w[1]), "no zig-zag: {points}");
    }
    assert_eq!(
        b.count(".sweep-plot svg rect.marker").await,
        6,
        "a marker per point"
    );
    let plot = b.text(".sweep-plot svg").await;
    assert!(
        plot.contains("blockSize = 128"),
        "the title says what is fixed: {plot}"
    );
    b.shoot("sweep").await;

    // "all": a plot per blockSize; a forced linear scale.
    b.goto(&format!(
        "{sweep}?x=numElements&by=computeIntensity&fix.blockSize=all&scale=linear"
    ))
    .await;
    assert_eq!(b.count(".sweep-plot svg").await, 2, "small multiples");

    // The table sorts by any column, both ways.
    b.goto(&sweep).await;
    b.click("#runs th a[href*='sort=overall_time']").await;
    let times = column(&b, 6).await;
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "ascending: {times:?}");
    b.click("#runs th a[href*='sort=overall_time']").await;
    let times = column(&b, 6).await;
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "descending: {times:?}");
    b.client.close().await.unwrap();
}

/// The numbers in column `n` (1-based) of the runs table.
async fn column(b: &Browser, n: usize) -> Vec<f64> {
    texts(b, &format!("#runs tbody tr td:nth-child({n})"))
        .await
        .iter()
        .map(|t| t.parse().unwrap_or_else(|_| panic!("a number: {t:?}")))
        .collect()
}
