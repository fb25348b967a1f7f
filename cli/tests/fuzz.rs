//! Fuzzing the HTTP API (proptest): requests of every shape, near-valid submissions with
//! hostile numbers, names and scripts, and random bytes, against a real embedded server.
//! Properties: no request gets a 5xx or a non-JSON error, the server stays healthy, and
//! every run it accepted reaches a final status. The corpus in `tests/fuzz-corpus/` (the
//! requests that once took the server down) is replayed first, every time.
//!
//! `PROPTEST_CASES=N` sets the cases per property (default 64); `FUZZ_SECONDS=S` repeats them
//! with fresh seeds for S seconds. docs/RELIABILITY.md records the long runs. Failing cases
//! are saved in `tests/fuzz.proptest-regressions` and tried first on every later run.

mod common;

use std::time::{Duration, Instant};

use common::*;
use hetsim_tests::fuzz;
use proptest::collection::{btree_map, vec};
use proptest::prelude::*;
use serde_json::{json, Map, Value};

/// The statuses the API may answer; anything else (a 5xx above all) is a failure.
const ALLOWED: [u16; 11] = [200, 201, 202, 204, 400, 401, 404, 405, 409, 413, 422];

/// Sends one request to the server on `port` and checks the answer's status and, for an
/// error, its JSON body.
fn check_answer(port: u16, method: &str, path: &str, body: &[u8]) -> Result<(), TestCaseError> {
    let (status, text) = http_bytes(port, method, path, body, None);
    prop_assert!(
        ALLOWED.contains(&status),
        "{method} {path} answered {status}: {text}\nbody: {}",
        String::from_utf8_lossy(body)
    );
    if status >= 400 {
        let error: Value = serde_json::from_str(&text)
            .map_err(|e| TestCaseError::fail(format!("{method} {path} {status}: not JSON ({e}): {text}")))?;
        prop_assert!(error["error"].is_string(), "{method} {path} {status}: {text}");
    }
    Ok(())
}

/// Numbers that have broken servers: zero, negatives, 2^32 and 2^64 edges, huge floats.
fn hostile_number() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!(0)),
        Just(json!(1)),
        Just(json!(2)),
        Just(json!(-1)),
        Just(json!(4_000_000_000u64)),
        Just(json!(u64::MAX)),
        Just(json!(i64::MIN)),
        Just(json!(1e308)),
        Just(json!(0.5)),
        any::<u64>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
    ]
}

/// Any JSON value, nested a few levels.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        hostile_number(),
        any::<f64>()
            .prop_filter("JSON numbers are finite", |x| x.is_finite())
            .prop_map(Value::from),
        "\\PC{0,24}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 5, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..5).prop_map(Value::Array),
            btree_map("[a-zA-Z_.]{0,8}", inner, 0..5).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn queue_name() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!("default")),
        Just(json!("gpu_2-a")),
        Just(json!("X.dead")),
        Just(json!("")),
        Just(json!("q".repeat(65))),
        "\\PC{0,12}".prop_map(Value::from),
        any_json(),
    ]
}

/// Scripts that run quickly, fail to parse, or misuse the `sim` API.
fn app() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!("1")),
        Just(json!("sim.compute(#{ ops: x * 1e6 });")),
        Just(json!("let a = x + y; sim.sleep(0.001); sim.log(`${a}`);")),
        Just(json!(
            "if tag == \"P\" { sim.send(10.0, 0); } else { sim.receive(); }"
        )),
        Just(json!("sim.compute(#{ ops: -1 }); x")),
        Just(json!("let s = \"x\"; for i in 0..40 { s += s; } x")),
        Just(json!("let = ; (")),
        Just(json!("sim.nothing(x)")),
        "\\PC{0,40}".prop_map(Value::from),
        any_json(),
    ]
}

/// A one-node system with hostile `count` and label multiplicity, or anything else.
fn system() -> impl Strategy<Value = Value> {
    let toml = (hostile_number(), hostile_number(), prop_oneof![Just("cpu-flops"), Just("nope"), Just("")]).prop_map(
        |(count, multiplicity, model)| {
            json!(format!(
                "[[node]]\nid = \"a\"\ncomponent = \"Intel Core i7-4790K\"\nmodel = \"{model}\"\ncount = {count}\ninternal = \"InfiniBand NDR 400G\"\nlabels = {{ P = {multiplicity} }}\n"
            ))
        },
    );
    prop_oneof![
        4 => toml,
        1 => "\\PC{0,60}".prop_map(Value::from),
        1 => any_json(),
    ]
}

fn names() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("x".to_owned()),
        Just("y".to_owned()),
        Just("P".to_owned()),
        Just("sim".to_owned()),
        Just("labels".to_owned()),
        "[a-zA-Z_]{1,6}",
        "\\PC{0,8}",
    ]
}

fn value_or_list() -> impl Strategy<Value = Value> {
    prop_oneof![
        hostile_number(),
        vec(hostile_number(), 0..4).prop_map(Value::Array),
        "\\PC{0,16}".prop_map(Value::from),
        any_json(),
    ]
}

/// A submission object: each key present or not, each value near-valid or hostile, and now
/// and then a key the API does not know.
fn wild_submission() -> impl Strategy<Value = Value> {
    (
        proptest::option::of(queue_name()),
        proptest::option::of(app()),
        proptest::option::of(system()),
        proptest::option::of(btree_map(names(), value_or_list(), 0..4)),
        proptest::option::of(btree_map(names(), value_or_list(), 0..4)),
        proptest::option::of(("[a-z_]{1,10}", any_json())),
    )
        .prop_map(|(queue, app, system, labels, variables, extra)| {
            let mut body = Map::new();
            let fields = [
                ("queue", queue),
                ("app", app),
                ("system", system),
                ("labels", labels.map(|m| Value::Object(m.into_iter().collect()))),
                (
                    "variables",
                    variables.map(|m| Value::Object(m.into_iter().collect())),
                ),
            ];
            for (key, value) in fields {
                if let Some(value) = value {
                    body.insert(key.to_owned(), value);
                }
            }
            if let Some((key, value)) = extra {
                body.insert(key, value);
            }
            Value::Object(body)
        })
}

/// A submission that is valid but for one field at most, so that runs are accepted and the
/// workers execute them: quick scripts reading `x` and `y`, a small system, small lists.
fn mostly_valid_submission() -> impl Strategy<Value = Value> {
    let app = prop_oneof![
        Just("sim.compute(#{ ops: x * 1e6 + y });"),
        Just("let a = x + y; sim.sleep(0.001); sim.log(`${a}`);"),
        Just("if rank == 0 { sim.send(x * 1.0, 1); } else if rank == 1 { sim.receive(); } y"),
        Just("sim.compute(#{ ops: -x }); y"),
        Just("let s = \"x\"; for i in 0..x { s += s; } y"),
    ];
    let small = || prop_oneof![Just(json!(1)), Just(json!(2)), Just(json!(3)), Just(json!(0.5))];
    let variable = prop_oneof![small(), vec(small(), 1..4).prop_map(Value::Array)];
    (
        app,
        1..3u32,
        1..3u32,
        proptest::option::of(1..4u32),
        variable.clone(),
        variable,
        0..6usize,
        any_json(),
    )
        .prop_map(|(app, count, multiplicity, processes, x, y, broken, junk)| {
            let system = format!(
                "[[node]]\nid = \"a\"\ncomponent = \"Intel Core i7-4790K\"\nmodel = \"cpu-flops\"\ncount = {count}\ninternal = \"InfiniBand NDR 400G\"\nlabels = {{ P = {multiplicity} }}\n"
            );
            let mut body = json!({ "queue": "default", "app": app, "system": system, "variables": { "x": x, "y": y } });
            if let Some(n) = processes {
                body["labels"] = json!({ "P": n });
            }
            // One field broken, or (broken ≥ 4) none.
            match broken {
                0 => body["queue"] = junk,
                1 => body["system"] = junk,
                2 => body["variables"]["x"] = junk,
                3 => body["labels"] = json!({ "P": junk }),
                _ => {}
            }
            body
        })
}

fn submission() -> impl Strategy<Value = Value> {
    prop_oneof![wild_submission(), mostly_valid_submission()]
}

/// A route of the API with its `{id}`s filled with anything URL-safe, and a query.
fn path() -> impl Strategy<Value = String> {
    let route = prop_oneof![
        Just("/api/runs"),
        Just("/api/runs/ID"),
        Just("/api/runs/ID/cancel"),
        Just("/api/runs/ID/trace"),
        Just("/api/runs/ID/log"),
        Just("/api/sweeps"),
        Just("/api/sweeps/ID"),
        Just("/api/sweeps/ID/cancel"),
        Just("/api/components"),
        Just("/api/components/ID"),
        Just("/api/components/ID/attributes/ID"),
        Just("/api/models/ID"),
        Just("/api/systems"),
        Just("/api/apps/ID"),
        Just("/api/health"),
        Just("/api/nothing"),
    ];
    let query = prop_oneof![
        Just(String::new()),
        Just("?status=done".to_owned()),
        Just("?status=bogus&limit=-5".to_owned()),
        Just("?limit=99999999999999999999".to_owned()),
        "\\?[a-z=&%0-9]{0,20}",
    ];
    (route, "[A-Za-z0-9_~%-]{1,40}", query)
        .prop_map(|(route, id, query)| format!("{}{query}", route.replace("ID", &id)))
}

fn method() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just("GET"),
        Just("POST"),
        Just("PUT"),
        Just("DELETE"),
        Just("PATCH")
    ]
}

/// A component body (`POST /api/components`, `PUT …/{id}`), mostly well-formed.
fn component() -> impl Strategy<Value = Value> {
    let attribute = prop_oneof![hostile_number(), "\\PC{0,12}".prop_map(Value::from), any_json()];
    (
        prop_oneof![Just(json!("fuzzed")), "\\PC{0,12}".prop_map(Value::from), any_json()],
        prop_oneof![Just(json!("GPU")), Just(json!("CPU")), Just(json!("NETWORK")), any_json()],
        btree_map("[a-zA-Z]{1,12}", attribute, 0..4),
    )
        .prop_map(|(name, kind, attributes)| {
            json!({ "name": name, "kind": kind, "attributes": Value::Object(attributes.into_iter().collect()) })
        })
}

/// A model, system or app body (`{name, body}`): a script or a system text.
fn named() -> impl Strategy<Value = Value> {
    (
        prop_oneof![
            Just(json!("fuzzed")),
            "\\PC{0,12}".prop_map(Value::from),
            any_json()
        ],
        prop_oneof![app(), system()],
    )
        .prop_map(|(name, body)| json!({ "name": name, "body": body }))
}

fn body() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(Vec::new()),
        any_json().prop_map(|v| v.to_string().into_bytes()),
        submission().prop_map(|v| v.to_string().into_bytes()),
        component().prop_map(|v| v.to_string().into_bytes()),
        named().prop_map(|v| v.to_string().into_bytes()),
        hostile_number().prop_map(|v| json!({ "value": v }).to_string().into_bytes()),
        vec(any::<u8>(), 0..256),
    ]
}

/// Waits until no run is queued or running, then checks that every run is final.
fn assert_every_run_final(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        let pending: usize = ["queued", "running"]
            .iter()
            .map(|s| {
                json(&http(port, "GET", &format!("/api/runs?status={s}"), "", None).1)
                    .as_array()
                    .map_or(0, Vec::len)
            })
            .sum();
        if pending == 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{pending} runs still queued or running after 600 s"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    let runs = json(&http(port, "GET", "/api/runs?limit=100000", "", None).1);
    let mut statuses = std::collections::BTreeMap::new();
    for run in runs.as_array().unwrap() {
        let status = run["status"].as_str().unwrap();
        assert!(["done", "failed", "cancelled"].contains(&status), "{run}");
        *statuses.entry(status.to_owned()).or_insert(0) += 1;
    }
    eprintln!("accepted runs by final status: {statuses:?}");
}

/// The properties run one after the other on one server, then every run they got accepted
/// must reach a final status.
#[test]
fn fuzzed_requests_never_get_a_server_error_and_every_accepted_run_ends() {
    let (_server, port) = embedded_server(&[]);
    fuzz(file!(), (submission(), any::<bool>()), |(sub, sweep)| {
        let path = if sweep { "/api/sweeps" } else { "/api/runs" };
        check_answer(port, "POST", path, sub.to_string().as_bytes())
    });
    fuzz(file!(), (method(), path(), body()), |(method, path, body)| {
        check_answer(port, method, &path, &body)
    });
    assert_every_run_final(port);
    assert_eq!(http(port, "GET", "/api/health", "", None).0, 200);
}

#[test]
fn the_corpus_of_requests_that_once_broke_the_server_is_answered() {
    let (_server, port) = embedded_server(&[]);
    let corpus = repo().join("cli/tests/fuzz-corpus/requests.jsonl");
    let text = std::fs::read_to_string(&corpus).unwrap();
    let mut replayed = 0;
    for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let request: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{}:{}: {e}", corpus.display(), n + 1));
        let body = match &request["body"] {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        let method = request["method"].as_str().unwrap();
        let path = request["path"].as_str().unwrap();
        check_answer(port, method, path, body.as_bytes())
            .unwrap_or_else(|e| panic!("{}:{}: {e}", corpus.display(), n + 1));
        replayed += 1;
    }
    assert!(replayed >= 10, "the corpus holds {replayed} requests");
}
