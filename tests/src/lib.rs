//! End-to-end tests live in `tests/tests/`; they drive the `hetsim` binary. The library holds
//! test support the crates' own tests share: [`fuzz`], the runner of the fuzzing suites;
//! [`architecture`], the check that crates, modules and files keep their shape
//! (`tests/tests/architecture.rs`); and [`services`], the one skip guard of the tests that
//! need PostgreSQL, RabbitMQ or Chromium.

pub mod architecture;
pub mod services;

use proptest::prelude::*;
use proptest::test_runner::{FileFailurePersistence, TestRunner};

/// The fuzzing suites' configuration: `PROPTEST_CASES` cases (default 64), failures saved
/// beside `source_file` (`tests/fuzz.rs` → `tests/fuzz.proptest-regressions`) and tried
/// first on every later run.
fn config(source_file: &'static str) -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(64),
        source_file: Some(source_file),
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        ..ProptestConfig::default()
    }
}

/// Runs `test` on the configured cases of `strategy`, shrinking a failure to a minimal input
/// and panicking with it; with `FUZZ_SECONDS=S`, again with fresh seeds until S seconds have
/// passed (the long runs), printing the cases tried. `source_file` is the caller's `file!()`.
pub fn fuzz<S: Strategy>(
    source_file: &'static str,
    strategy: S,
    test: impl Fn(S::Value) -> Result<(), TestCaseError>,
) {
    let seconds: u64 = std::env::var("FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let started = std::time::Instant::now();
    let mut cases = 0u64;
    loop {
        let config = config(source_file);
        cases += u64::from(config.cases);
        if let Err(e) = TestRunner::new(config).run(&strategy, &test) {
            panic!("{e}");
        }
        if started.elapsed().as_secs() >= seconds {
            break;
        }
    }
    eprintln!("{cases} cases in {:.0} s", started.elapsed().as_secs_f64());
}
