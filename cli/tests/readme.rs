//! Every shell command in the README's code blocks, run as written: `hetsim` is the built
//! binary, outputs land in a scratch directory (with `examples/` linked in), and the server
//! commands talk to an embedded server (SQLite) that this test starts: a README's
//! `hetsim serve …` line stands for that server and is not run. The few commands that
//! cannot run as written here are listed in [`EXCEPTIONS`] with the reason and what runs
//! instead; a README command neither run nor listed cannot exist, so a new command is tested
//! the day it is written.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

/// What the test does with a README command that cannot run as written.
enum Instead {
    /// Run this command instead.
    Run(&'static str),
    /// Run nothing: `why` says where the command's behaviour is tested.
    Nothing,
}

/// README commands (as the test extracts them: continuation lines joined, comments cut) that
/// are not run as written, why, and what is done instead.
const EXCEPTIONS: &[(&str, Instead, &str)] = &[
    (
        "cargo run --release -- run --app examples/gajger/app.rhai --system examples/gajger/gtx970.toml --var occupancy=64 --var computeIntensity=128 --var blockSize=256 --var numElements=400000000",
        Instead::Run("hetsim run --app examples/gajger/app.rhai --system examples/gajger/gtx970.toml --var occupancy=64 --var computeIntensity=128 --var blockSize=256 --var numElements=400000000"),
        "`cargo run --release --` is the binary under test; cargo inside a test would build a second copy",
    ),
    (
        "cargo test --workspace",
        Instead::Nothing,
        "the test suite this test is part of",
    ),
    (
        "hetsim run --app examples/master-worker/app.rhai --system examples/master-worker/million.toml",
        Instead::Run("hetsim run --app examples/master-worker/app.rhai --system million-as-1000.toml"),
        "a million workers take about 2 minutes in a release build, far longer in the tests' debug one: the same system with count = 1000 (written by the test)",
    ),
    (
        "export HETSIM_DB=postgres://hetsim@db.example/hetsim HETSIM_AMQP=amqp://user:pass@broker.example:5672/%2f",
        Instead::Nothing,
        "placeholder hosts; service.rs's postgres_rabbitmq_sweep_of_200_runs_with_two_workers runs this setup on the machine's PostgreSQL and RabbitMQ",
    ),
    (
        "hetsim serve --bind 0.0.0.0:8080 --token \"$TOKEN\"",
        Instead::Nothing,
        "placeholder setup (see the export above); tokens are tested in service.rs's api_checks_tokens_bodies_and_fields",
    ),
    (
        "HETSIM_DB=… HETSIM_AMQP=… hetsim worker --queue gpu-sims",
        Instead::Nothing,
        "placeholder setup (see the export above)",
    ),
    (
        "hetsim sweep --server http://server.example:8080 --token \"$TOKEN\" --queue gpu-sims --app app.rhai --system sys.toml --var n=1,2,4 --wait",
        Instead::Nothing,
        "placeholder server and files (see the export above)",
    ),
];

/// The shell commands of the README's ```sh blocks: continuation lines joined, comment lines
/// dropped, trailing comments cut.
fn readme_commands(readme: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let mut in_block = false;
    let mut pending = String::new();
    for line in readme.lines() {
        if line.starts_with("```") {
            in_block = !in_block && line.trim() == "```sh";
            continue;
        }
        if !in_block {
            continue;
        }
        let code = cut_comment(line);
        let code = code.trim();
        if code.is_empty() {
            continue;
        }
        match code.strip_suffix('\\') {
            Some(part) => pending += part,
            None => {
                pending += code;
                commands.push(pending.split_whitespace().collect::<Vec<_>>().join(" "));
                pending.clear();
            }
        }
    }
    assert!(
        pending.is_empty(),
        "a README command ends in a continuation: {pending}"
    );
    commands
}

/// `line` up to a `#` that starts a shell comment (after whitespace, outside quotes).
fn cut_comment(line: &str) -> &str {
    let mut quote = None;
    let mut previous = ' ';
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            (None, '#') if previous.is_whitespace() => return &line[..i],
            _ => {}
        }
        previous = c;
    }
    line
}

/// A directory to run the commands in: `examples/` linked in, `hetsim` on the PATH, and the
/// shrunken million-worker system.
fn workspace() -> (PathBuf, String) {
    let dir = scratch();
    std::os::unix::fs::symlink(repo().join("examples"), dir.join("examples")).unwrap();
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_hetsim"), bin.join("hetsim")).unwrap();
    let million = std::fs::read_to_string(repo().join("examples/master-worker/million.toml")).unwrap();
    assert!(
        million.contains("count = 1000000"),
        "million.toml's worker count moved"
    );
    std::fs::write(
        dir.join("million-as-1000.toml"),
        million.replace("count = 1000000", "count = 1000"),
    )
    .unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    (dir, path)
}

/// Runs `command` with `sh` in `dir`; returns its standard output, or fails the test.
fn shell(command: &str, dir: &Path, path: &str, server: &str) -> String {
    let out = Command::new("sh")
        .args(["-c", command])
        .current_dir(dir)
        .env("PATH", path)
        .env("HETSIM_SERVER", server)
        .output()
        .expect("sh runs");
    assert!(
        out.status.success(),
        "README command failed: {command}\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The sweep id in `hetsim sweep --wait`'s answer `sweep ID: N runs, …`.
fn sweep_id(output: &str) -> Option<String> {
    let line = output.lines().find(|l| l.starts_with("sweep "))?;
    Some(line.strip_prefix("sweep ")?.split(':').next()?.to_owned())
}

#[test]
fn every_readme_command_runs() {
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("README.md");
    let commands = readme_commands(&readme);
    assert!(
        commands.len() > 20,
        "the extraction found the tour: {commands:#?}"
    );
    for (listed, _, _) in EXCEPTIONS {
        assert!(
            commands.iter().any(|c| c == listed),
            "an exception no README command matches (update EXCEPTIONS): {listed}"
        );
    }
    let (dir, path) = workspace();
    let (_server, port) = embedded_server(&[]);
    let server = format!("http://127.0.0.1:{port}");
    let mut sweep: Option<String> = None;
    for command in &commands {
        let command = match EXCEPTIONS.iter().find(|e| e.0 == command) {
            Some((_, Instead::Nothing, _)) => continue,
            None if command.starts_with("hetsim serve") => continue,
            Some((_, Instead::Run(instead), _)) => instead.to_string(),
            None => command.clone(),
        };
        let command = match (&sweep, command.contains("SWEEP_ID")) {
            (Some(id), true) => command.replace("SWEEP_ID", id.as_str()),
            (None, true) => panic!("{command}: no `hetsim sweep --wait` before it named a sweep"),
            (_, false) => command,
        };
        let output = shell(&command, &dir, &path, &server);
        if command.starts_with("hetsim sweep") {
            sweep = Some(sweep_id(&output).unwrap_or_else(|| panic!("{command}: no sweep id in {output}")));
        }
    }
    // The tour writes where it is told: into out/, which .gitignore covers, and nowhere else.
    assert!(dir.join("out/timeline.svg").exists() && dir.join("out/VALIDATION.md").exists());
    let mut written: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| !["examples", "bin", "million-as-1000.toml", "out"].contains(&name.as_str()))
        .collect();
    written.sort();
    assert!(written.is_empty(), "the tour wrote outside out/: {written:?}");
    let ignored = std::fs::read_to_string(repo().join(".gitignore")).unwrap();
    assert!(ignored.lines().any(|l| l == "/out"), ".gitignore covers out/");
}

#[test]
fn readme_commands_are_extracted_whole() {
    let text = "```sh\nhetsim a \\\n  --b   # c\n# only a comment\necho '#x' | hetsim d -   # e\n```\n```text\nnot a command\n```\n";
    assert_eq!(readme_commands(text), ["hetsim a --b", "echo '#x' | hetsim d -"]);
    assert_eq!(sweep_id("sweep 1f2e: 12 runs, 12 done"), Some("1f2e".into()));
}
