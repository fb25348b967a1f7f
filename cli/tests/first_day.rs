//! A new user's first day at the seams between the CLI and the server (issue: "a user's first
//! day"): `serve --examples` stores the shipped examples; the app's inputs are listed and a
//! submission missing one is refused by name; a system put as TOML comes back as TOML with its
//! comments; the sweeps are listed, their CSV is under /api, and `hetsim results SWEEP` lists
//! the runs with their inputs, in the order of those inputs.

mod common;

use common::fixture::gajger_sweep;
use common::{cli, embedded_server, http, json, scratch, wait_for};

const REQUIRED: [&str; 4] = ["numElements", "computeIntensity", "blockSize", "occupancy"];

#[test]
fn serve_examples_stores_them_and_the_saxpy2_app_says_what_it_needs() {
    let (_server, port) = embedded_server(&["--examples"]);
    let (status, apps) = http(port, "GET", "/api/apps", "", None);
    assert_eq!(status, 200);
    let names: Vec<String> = json(&apps)
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap().to_owned())
        .collect();
    for app in [
        "saxpy2",
        "master-worker",
        "multi-gpu",
        "training-8gpu",
        "dumbbell",
    ] {
        assert!(names.iter().any(|n| n == app), "{app} stored: {names:?}");
    }
    let (status, inputs) = http(port, "GET", "/api/apps/saxpy2/inputs", "", None);
    assert_eq!(status, 200, "{inputs}");
    let inputs = json(&inputs);
    let required: Vec<&str> = inputs
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["required"] == true)
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert_eq!(required, REQUIRED);
    let kernel_params = inputs
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == "kernelParams");
    assert_eq!(kernel_params.unwrap()["default"], "thesis");

    // Missing a required input: refused at submission, every missing one named.
    let submission = |variables: &str| {
        format!(r#"{{"app_name": "saxpy2", "system_name": "saxpy2-gtx970", "variables": {{{variables}}}}}"#)
    };
    let (status, body) = http(
        port,
        "POST",
        "/api/runs",
        &submission(r#""numElements": 1000000"#),
        None,
    );
    assert_eq!(status, 422, "{body}");
    let error = json(&body);
    assert_eq!(error["field"], "variables.computeIntensity", "{body}");
    assert!(
        error["error"]
            .as_str()
            .unwrap()
            .contains("needs `computeIntensity`, `blockSize`, `occupancy`"),
        "{body}"
    );
    let (status, body) = http(
        port,
        "POST",
        "/api/runs",
        &submission(r#""numElements": 1000000, "blocksize": 256"#),
        None,
    );
    assert_eq!(status, 422, "{body}");
    assert!(body.contains("did you mean `blockSize`?"), "{body}");

    // Only the required ones: a done run.
    let given = r#""numElements": 1000000, "computeIntensity": 8, "blockSize": 256, "occupancy": 64"#;
    let (status, body) = http(port, "POST", "/api/runs", &submission(given), None);
    assert_eq!(status, 202, "{body}");
    let id = json(&body)["id"].as_str().unwrap().to_owned();
    let run = wait_for(|| {
        let (_, body) = http(port, "GET", &format!("/api/runs/{id}"), "", None);
        let run = json(&body);
        (run["status"] == "done" || run["status"] == "failed").then_some(run)
    });
    assert_eq!(run["status"], "done", "{run}");
}

#[test]
fn a_toml_system_put_comes_back_as_toml_with_its_comments() {
    let (_server, port) = embedded_server(&[]);
    let server = format!("http://127.0.0.1:{port}");
    let put = [
        "catalog",
        "put",
        "--server",
        &server,
        "systems",
        "gtx970",
        "examples/gajger/gtx970.toml",
    ];
    let (ok, _, err) = cli(&put);
    assert!(ok, "{err}");
    let out = scratch().join("gtx970.toml");
    let path = out.display().to_string();
    let (ok, _, err) = cli(&[
        "catalog", "get", "--server", &server, "systems", "gtx970", "-o", &path,
    ]);
    assert!(ok, "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    let original = std::fs::read_to_string(common::repo().join("examples/gajger/gtx970.toml")).unwrap();
    let head: Vec<&str> = original.lines().take_while(|l| !l.starts_with("sass")).collect();
    assert!(
        text.starts_with(&head.join("\n")),
        "everything before the SASS kept:\n{text}"
    );
    assert!(
        text.contains("# ../kernels/saxpy2-figure-5-2.sass, inlined"),
        "{text}"
    );
    assert!(
        text.contains("XMAD.PSL.CBCC R0, R0.H1, R3.H1, R2;"),
        "the listing inlined: {text}"
    );
    assert!(!text.trim_start().starts_with('{'), "TOML, not JSON");
    // What comes back runs as what was put.
    let vars = [
        "--var",
        "occupancy=64",
        "--var",
        "computeIntensity=8",
        "--var",
        "blockSize=256",
        "--var",
        "numElements=1000000",
    ];
    let run = |system: &str| {
        let mut args = vec![
            "run",
            "--app",
            "examples/gajger/app.rhai",
            "--system",
            system,
            "--json",
        ];
        args.extend(vars);
        let (ok, out, err) = cli(&args);
        assert!(ok, "{err}");
        json(&out)["overall_time"].as_f64().unwrap()
    };
    assert_eq!(run(&path), run("examples/gajger/gtx970.toml"));
}

#[test]
fn sweeps_are_listed_their_csv_is_under_the_api_and_results_lists_inputs_in_order() {
    let (_server, port) = embedded_server(&[]);
    let server = format!("http://127.0.0.1:{port}");
    let sweep = gajger_sweep(
        &server,
        &[
            "occupancy=64",
            "numElements=1e6,1e8",
            "blockSize=256,32",
            "computeIntensity=8",
        ],
    );
    let (status, list) = http(port, "GET", "/api/sweeps", "", None);
    assert_eq!(status, 200);
    assert_eq!(json(&list)[0]["id"], sweep.as_str(), "{list}");
    let (status, csv) = http(port, "GET", &format!("/api/sweeps/{sweep}/results.csv"), "", None);
    assert_eq!((status, csv.lines().count()), (200, 5), "{csv}");
    let (ok, table, err) = cli(&["results", "--server", &server, &sweep]);
    assert!(ok, "{err}");
    let lines: Vec<&str> = table.lines().collect();
    let header: Vec<&str> = lines[0].split_whitespace().collect();
    assert_eq!(
        header[..4],
        ["run", "status", "blockSize", "numElements"],
        "only the varied inputs: {table}"
    );
    let inputs: Vec<(String, String)> = lines[1..]
        .iter()
        .map(|l| {
            let cells: Vec<&str> = l.split_whitespace().collect();
            (cells[2].to_owned(), cells[3].to_owned())
        })
        .collect();
    let want = [("32", "1e6"), ("32", "1e8"), ("256", "1e6"), ("256", "1e8")]
        .map(|(b, n)| (b.to_owned(), n.to_owned()));
    assert_eq!(inputs, want, "ordered by the inputs: {table}");
}
