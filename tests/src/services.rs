//! The skip guard of the tests that need a service (PostgreSQL, RabbitMQ) or a program
//! (Chromium): under CI a missing one fails the test; elsewhere the test skips, loudly.

/// Whether this is CI (`CI=true`, which `.ci/run` exports).
pub fn in_ci() -> bool {
    std::env::var("CI").as_deref() == Ok("true")
}

/// `true` when what a test needs is `available`; otherwise, under CI (`ci`), a panic saying
/// "CI=true but {what}", and elsewhere a loud message on stderr and `false` (the test then
/// returns early).
pub fn available_or_skip(available: bool, what: &str, ci: bool) -> bool {
    if available {
        return true;
    }
    assert!(!ci, "CI=true but {what}");
    eprintln!("\n!!! SKIPPED: {what}; install or start it to run this test !!!\n");
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_service_fails_under_ci_and_skips_only_elsewhere() {
        assert!(available_or_skip(true, "nothing is missing", true));
        assert!(!available_or_skip(false, "PostgreSQL is not reachable", false));
        let failed =
            std::panic::catch_unwind(|| available_or_skip(false, "PostgreSQL is not reachable", true));
        let message = failed.expect_err("under CI a missing service fails the test");
        let text = message
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| message.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        assert_eq!(text, "CI=true but PostgreSQL is not reachable");
    }

    #[test]
    fn ci_runs_the_tests_with_ci_true() {
        let script =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../.ci/run")).expect(".ci/run");
        assert!(
            script.lines().any(|l| l.trim() == "export CI=true"),
            ".ci/run must export CI=true, so that no service test skips in CI"
        );
    }
}
