//! The example clusters (examples/clusters) as a user runs them through a server: stored,
//! submitted with their number of boards as a run variable, and refused when the labels ask
//! more processes than those boards hold. A real process and a real SQLite file.

mod common;

use common::*;

#[test]
fn the_example_clusters_run_through_submit_with_their_boards_as_a_run_variable() {
    let db = scratch().join("clusters.db");
    let port = free_port();
    let bind = format!("127.0.0.1:{port}");
    let _server = hetsim(&["serve", "--db", db.to_str().unwrap(), "--bind", &bind], &[]);
    wait_healthy(port);
    let server = format!("http://{bind}");
    // (succeeded, stdout, stderr) of a submission of the training app on `system`.
    let submit = |system: &str, extra: &[&str]| {
        let mut args = vec![
            "submit",
            "--server",
            &server,
            "--app",
            "examples/training-8gpu/app.rhai",
            "--system",
            system,
            "--var",
            "steps=1",
            "--wait",
            "--json",
        ];
        args.extend(extra);
        cli(&args)
    };
    let done = |(ok, out, err): (bool, String, String)| {
        assert!(ok, "{err}");
        json(&out)
    };
    // The same run as `hetsim run` gives, through the server: one board, then four boards of
    // eight GPUs (32 processes of label GPU, the system's default at boards = 4).
    let (_, local, _) = cli(&[
        "run",
        "--app",
        "examples/training-8gpu/app.rhai",
        "--system",
        "examples/clusters/hgx-h100.toml",
        "--var",
        "steps=1",
        "--json",
    ]);
    let board = done(submit("examples/clusters/hgx-h100.toml", &[]));
    assert_eq!(board["status"], "done", "{board}");
    assert_eq!(board["result"]["overall_time"], json(&local)["overall_time"]);
    let four = done(submit(
        "examples/clusters/h100-ib.toml",
        &["--var", "boards=4", "--label", "GPU=32"],
    ));
    assert_eq!(four["status"], "done", "{four}");
    assert_eq!(four["result"]["labels"][0]["count"], 32, "{four}");
    // More GPUs than four boards hold is refused at submit, naming the label.
    let (ok, _, err) = submit(
        "examples/clusters/h100-ib.toml",
        &["--var", "boards=4", "--label", "GPU=40"],
    );
    assert!(!ok && err.contains("GPU"), "{err}");
}
