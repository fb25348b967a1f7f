//! `hetsim traces put|list|get|delete` against an embedded server, a bad trace refused with
//! nothing stored, and `hetsim submit --trace-name` / `hetsim sweep --trace-name` replaying
//! a stored trace to the time `hetsim replay` gives locally.

mod common;

use common::*;

const SYSTEM: &str = "examples/training-8gpu/system.toml";

/// Runs the CLI, asserting it succeeds; its standard output.
fn ok(args: &[&str]) -> String {
    let (success, out, err) = cli(args);
    assert!(success, "hetsim {args:?} failed: {err}");
    out
}

#[test]
fn a_stored_trace_is_listed_fetched_submitted_swept_and_deleted() {
    let (_server, port) = embedded_server(&[]);
    let server = format!("http://127.0.0.1:{port}");
    let s = ["--server", server.as_str()];

    let put = ok(&[&["traces", "put", "dp-step", "examples/traces/dp-step"], &s[..]].concat());
    assert!(put.contains("dp-step  8 ranks, 136 nodes"), "{put}");
    let list = ok(&[&["traces", "list"], &s[..]].concat());
    assert_eq!(list.lines().count(), 1, "{list}");
    assert!(list.contains("dp-step  8 ranks, 136 nodes"), "{list}");
    let get = ok(&[&["traces", "get", "dp-step"], &s[..]].concat());
    assert!(
        get.contains("rank 7  dp-step.7.et  17 nodes, 1247 bytes"),
        "{get}"
    );
    let dir = scratch();
    let out = dir.to_str().unwrap();
    ok(&[&["traces", "get", "dp-step", "--output-dir", out], &s[..]].concat());
    for rank in 0..8 {
        let name = format!("dp-step.{rank}.et");
        assert_eq!(
            std::fs::read(dir.join(&name)).unwrap(),
            std::fs::read(repo().join("examples/traces").join(&name)).unwrap(),
            "{name} comes back byte for byte"
        );
    }

    // Submitted: the overall time of a local replay, with the same policy.
    let local = json(&ok(&[
        "replay",
        "examples/traces/dp-step",
        "--system",
        SYSTEM,
        "--json",
    ]));
    let run = json(&ok(&[
        &[
            "submit",
            "--trace-name",
            "dp-step",
            "--system",
            SYSTEM,
            "--wait",
            "--json",
        ],
        &s[..],
    ]
    .concat()));
    assert_eq!(run["status"], "done", "{run}");
    assert_eq!(
        run["result"]["overall_time"], local["overall_time"],
        "{run}\n{local}"
    );
    assert_eq!(run["app_title"], "Replay of trace dp-step (compute replay)");
    assert_eq!(run["variables"]["compute"], "replay", "{run}");
    // The per-rank breakdown: in the run's JSON as the local report has it, and on its page
    // a row per rank; the traces page lists the trace.
    for field in [
        "ran",
        "nodes",
        "finish_time",
        "compute_time",
        "comm_time",
        "exposed_comm",
        "cpu_time",
        "cpu_nodes",
        "gpu_nodes",
        "comm_nodes",
        "metadata_nodes",
        "missing_deps",
        "dropped_ctrl",
    ] {
        assert_eq!(
            run["result"]["ranks"][7][field], local["ranks"][7][field],
            "{field}"
        );
    }
    let (status, page) = http_page(port, &format!("/runs/{}", run["id"].as_str().unwrap()));
    assert_eq!(status, 200, "{page}");
    let ranks = page.split("<div id=\"ranks\">").nth(1).expect("a Ranks table");
    let table = ranks.split("</table>").next().unwrap();
    assert_eq!(table.matches("<tr>").count(), 9, "a header and 8 ranks: {table}");
    let (status, traces) = http_page(port, "/traces");
    assert_eq!(status, 200, "{traces}");
    assert!(
        traces.contains(">dp-step</a>") && traces.contains("<td class=\"num\">136</td>"),
        "{traces}"
    );

    // A sweep over the cluster's `boards` variable and two compute policies: 2 x 2 runs.
    let sweep = json(&ok(&[
        &[
            "sweep",
            "--trace-name",
            "dp-step",
            "--compute",
            "replay,roofline",
            "--system",
            "examples/clusters/h100-ib.toml",
            "--var",
            "boards=1,2",
            "--wait",
            "--json",
        ],
        &s[..],
    ]
    .concat()));
    assert_eq!(
        (sweep["total"].as_u64(), sweep["done"].as_u64()),
        (Some(4), Some(4)),
        "{sweep}"
    );

    ok(&[&["traces", "delete", "dp-step"], &s[..]].concat());
    assert_eq!(ok(&[&["traces", "list"], &s[..]].concat()), "");
    let (success, _, err) = cli(&[&["traces", "get", "dp-step"], &s[..]].concat());
    assert!(
        !success && err.contains("no trace with id or name \"dp-step\""),
        "{err}"
    );
}

#[test]
fn a_truncated_trace_is_refused_and_nothing_is_stored() {
    let (_server, port) = embedded_server(&[]);
    let server = format!("http://127.0.0.1:{port}");
    let dir = scratch();
    for rank in 0..2 {
        let name = format!("bad.{rank}.et");
        let mut data = std::fs::read(repo().join(format!("examples/traces/dp-step.{rank}.et"))).unwrap();
        if rank == 1 {
            data.truncate(data.len() - 7);
        }
        std::fs::write(dir.join(name), data).unwrap();
    }
    let prefix = dir.join("bad");
    let (success, _, err) = cli(&[
        "traces",
        "put",
        "bad",
        prefix.to_str().unwrap(),
        "--server",
        &server,
    ]);
    assert!(!success, "a truncated trace is refused");
    assert!(
        err.contains("422")
            && err.contains("bad.1.et")
            && err.contains("rank 1")
            && err.contains("field `files`"),
        "{err}"
    );
    let list = ok(&["traces", "list", "--server", &server]);
    assert_eq!(list, "", "nothing half-stored");
}
