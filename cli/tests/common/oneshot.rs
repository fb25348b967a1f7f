//! The `hetsim` binary run once, as a user runs a command: its output, its JSON, its failure.

use std::io::Write;
use std::process::{Command, Output, Stdio};

pub use super::repo;

pub fn hetsim(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hetsim"))
        .args(args)
        .current_dir(repo())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the hetsim binary runs");
    let mut input = child.stdin.take().expect("stdin is piped");
    // A command that fails before reading its input closes the pipe: not a test failure.
    if let Err(e) = input.write_all(stdin.unwrap_or("").as_bytes()) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "writing stdin: {e}");
    }
    drop(input);
    child.wait_with_output().expect("hetsim finishes")
}

pub fn ok_json(args: &[&str]) -> serde_json::Value {
    let out = hetsim(args, None);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("--json prints JSON")
}

pub fn failure(args: &[&str], stdin: Option<&str>) -> String {
    let out = hetsim(args, stdin);
    assert!(
        !out.status.success(),
        "expected failure: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}
