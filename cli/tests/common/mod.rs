//! What the server's integration tests share: the binary as a child process, free ports,
//! scratch directories, and a minimal HTTP/1.1 client (raw, so that tests can send what no
//! well-behaved client would).
#![allow(dead_code)] // each test file uses its own part

pub mod browser;
pub mod fixture;
pub mod oneshot;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

pub fn scratch() -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "hetsim-service-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub use hetsim_tests::services::{available_or_skip, in_ci};

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A child process killed when dropped.
pub struct Proc(pub Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub fn hetsim(args: &[&str], envs: &[(&str, &str)]) -> Proc {
    spawn(args, envs, Stdio::null())
}

/// As [`hetsim`], with its log (stderr) written to the file `log`.
pub fn hetsim_logged(args: &[&str], log: &std::path::Path) -> Proc {
    spawn(args, &[], std::fs::File::create(log).unwrap().into())
}

fn spawn(args: &[&str], envs: &[(&str, &str)], stderr: Stdio) -> Proc {
    let mut command = Command::new(env!("CARGO_BIN_EXE_hetsim"));
    command
        .args(args)
        .current_dir(repo())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr);
    for (k, v) in envs {
        command.env(k, v);
    }
    Proc(command.spawn().expect("hetsim starts"))
}

/// Runs the hetsim CLI to completion; returns (success, stdout, stderr).
pub fn cli(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_hetsim"))
        .args(args)
        .current_dir(repo())
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// One HTTP/1.1 request; returns (status, body).
pub fn http(port: u16, method: &str, path: &str, body: &str, token: Option<&str>) -> (u16, String) {
    http_bytes(port, method, path, body.as_bytes(), token)
}

/// [`http`] with any bytes as the body.
pub fn http_bytes(port: u16, method: &str, path: &str, body: &[u8], token: Option<&str>) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n{auth}Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let _ = stream.write_all(body);
    read_response(stream)
}

/// `GET path` of an HTML page; returns (status, the raw text after the headers: a chunked
/// page keeps its chunk-size lines, which a search for a phrase in it does not mind).
pub fn http_page(port: u16, path: &str) -> (u16, String) {
    let (status, _, body) = raw_response(get(port, path));
    (status, body)
}

/// `GET path`'s response headers, lower-cased names and values as sent.
pub fn http_headers(port: u16, path: &str) -> String {
    let (_, headers, _) = raw_response(get(port, path));
    headers.to_lowercase()
}

fn get(port: u16, path: &str) -> TcpStream {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    stream
}

/// Reads an HTTP/1.1 response to its end; returns (status, body).
pub fn read_response(stream: TcpStream) -> (u16, String) {
    let (status, _, body) = raw_response(stream);
    // Chunked bodies: keep the JSON between the first '{' or '[' and the last '}' or ']'.
    let body = match (body.find(['{', '[']), body.rfind(['}', ']'])) {
        (Some(a), Some(b)) if a <= b && !body.starts_with(['{', '[']) => body[a..=b].to_owned(),
        _ => body,
    };
    (status, body)
}

/// The status, the headers and the text after them of a response read to its end.
fn raw_response(mut stream: TcpStream) -> (u16, String, String) {
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    let text = String::from_utf8_lossy(&response).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let (headers, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    (status, headers.to_owned(), body.to_owned())
}

pub fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// Whether a server on `port` answers `GET /api/health` with 200; false for any failure to
/// connect or read (a server still starting, or one that closed the connection).
fn answers_healthy(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let request = b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    let mut response = String::new();
    stream.write_all(request).is_ok()
        && stream.read_to_string(&mut response).is_ok()
        && response.starts_with("HTTP/1.1 200")
}

pub fn wait_healthy(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if answers_healthy(port) {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("the server on port {port} did not become healthy");
}

pub fn reachable(port: u16) -> bool {
    TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), Duration::from_secs(2)).is_ok()
}

pub fn wait_for<T>(mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// An embedded server holding the example trace `dp-step` (examples/traces); its process,
/// port and address.
pub fn server_with_the_example_trace() -> (Proc, u16, String) {
    let (server, port) = embedded_server(&[]);
    let address = format!("http://127.0.0.1:{port}");
    let (stored, _, err) = cli(&[
        "traces",
        "put",
        "dp-step",
        "examples/traces/dp-step",
        "--server",
        &address,
    ]);
    assert!(stored, "{err}");
    (server, port, address)
}

/// An embedded server on a fresh SQLite file, with `extra` arguments; and its port.
pub fn embedded_server(extra: &[&str]) -> (Proc, u16) {
    let db = scratch().join("embedded.db");
    let port = free_port();
    let bind = format!("127.0.0.1:{port}");
    let mut args = vec!["serve", "--db", db.to_str().unwrap(), "--bind", &bind];
    args.extend(extra);
    let server = hetsim(&args, &[]);
    wait_healthy(port);
    (server, port)
}
