//! The whole check on a small workspace written to a temporary directory: a circle and a
//! long file fail it unless allowed, allowed ones that are gone fail it, and the crate table
//! must match the manifests.

use super::{check, Allowed, KnownCycle};
use std::path::{Path, PathBuf};

/// A workspace of two crates: `x-a` (a library whose modules `p` and `q` import each other)
/// depending on `x-b` (a binary with a 601-line test file); `table` is the arrows table.
fn workspace(name: &str, table: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("hetsim-architecture-{}-{name}", std::process::id()));
    let files = [
        (
            "Cargo.toml",
            "[workspace]\nmembers = [\"a\", \"b\"]\n".to_string(),
        ),
        (
            "a/Cargo.toml",
            "[package]\nname = \"x-a\"\n\n[dependencies]\nx-b = { path = \"../b\" }\nserde = \"1\"\n"
                .to_string(),
        ),
        ("a/src/lib.rs", "mod p;\nmod q;\nmod r;\n".to_string()),
        (
            "a/src/p.rs",
            "use crate::q::T;\n// crate::r::U in a comment names nothing\n".to_string(),
        ),
        (
            "a/src/q.rs",
            "pub struct T;\nfn f() {\n    super::p::g();\n    let _ = \"crate::r\";\n}\n".to_string(),
        ),
        ("a/src/r.rs", "pub struct U;\n".to_string()),
        ("b/Cargo.toml", "[package]\nname = \"x-b\"\n".to_string()),
        ("b/src/main.rs", "fn main() {}\n".to_string()),
        ("b/tests/long.rs", "#[test]\nfn t() {}\n".repeat(300) + "\n"),
        (
            "docs/ARCHITECTURE.md",
            format!("# A\n\n## Crates and arrows\n\n| crate | depends on |\n|---|---|\n{table}"),
        ),
    ];
    for (path, text) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    root
}

const TABLE: &str = "| x-a | x-b |\n| x-b | — |\n";
const CIRCLE: KnownCycle = KnownCycle {
    krate: "x-a",
    level: "",
    modules: &["p", "q"],
};

fn failures(root: &Path, cycles: &[KnownCycle], long_files: &[&str]) -> Vec<String> {
    check(root, &Allowed { cycles, long_files }).unwrap().failures
}

#[test]
fn circles_and_long_files_fail_unless_allowed() {
    let root = workspace("unallowed", TABLE);
    let found = failures(&root, &[], &[]);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(found[0].contains("{p, q}"), "{}", found[0]);
    assert!(
        found[0].contains("a/src/p.rs:1 names `crate::q::T`"),
        "{}",
        found[0]
    );
    assert!(
        found[0].contains("a/src/q.rs:3 names `super::p::g`"),
        "{}",
        found[0]
    );
    assert!(found[1].contains("b/tests/long.rs has 601 lines"), "{}", found[1]);
    assert!(failures(&root, &[CIRCLE], &["b/tests/long.rs"]).is_empty());
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn allowed_entries_that_are_gone_fail() {
    let root = workspace("stale", TABLE);
    let gone = KnownCycle {
        krate: "x-a",
        level: "",
        modules: &["p", "r"],
    };
    let found = failures(&root, &[CIRCLE, gone], &["b/tests/long.rs", "b/src/main.rs"]);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(
        found[0].contains("{p, r}") && found[0].contains("no longer exists"),
        "{}",
        found[0]
    );
    assert!(
        found[1].contains("b/src/main.rs is no longer over"),
        "{}",
        found[1]
    );
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn the_table_must_match_the_manifests() {
    let root = workspace("table", "| x-a | |\n| x-c | x-a |\n");
    let found = failures(&root, &[CIRCLE], &["b/tests/long.rs"]);
    assert_eq!(found.len(), 3, "{found:#?}");
    assert!(
        found[0].contains("x-a") && found[0].contains("only in Cargo.toml [x-b]"),
        "{}",
        found[0]
    );
    assert!(found[1].contains("x-b is missing from the table"), "{}", found[1]);
    assert!(
        found[2].contains("lists x-c, which is no workspace member"),
        "{}",
        found[2]
    );
    std::fs::remove_dir_all(root).unwrap();
}
