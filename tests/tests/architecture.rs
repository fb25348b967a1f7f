//! The architecture check (`hetsim_tests::architecture`, docs/ARCHITECTURE.md): crate
//! arrows match the table in docs/ARCHITECTURE.md; within every crate, sibling modules
//! depend on each other without a circle; no `.rs` file is over 600 lines unless its first
//! comment calls it a table.
//!
//! The two lists below hold what exists today and is being removed. They only shrink: the
//! test fails on a circle or a long file not listed, and on a listed one that is gone.
//!
//! - A circle is listed by its crate target (package name), the module whose children form
//!   it (`""` for the crate root, `"a::b"` below) and exactly the set of sibling modules in
//!   it (its strongly connected component, as the report prints it). When a circle shrinks
//!   (one module leaves it), the entry is edited to the smaller set; when it is broken, the
//!   entry is deleted.
//! - A long file is listed by its path from the workspace root. When it is split (or its
//!   first comment says it is a table), the entry is deleted.
//!
//! The crate table of docs/ARCHITECTURE.md, kept simple to read: under the line
//! `## Crates and arrows`, the first markdown table. Its first two lines (the header
//! `| crate | depends on |` and the `|---|---|` separator) are skipped; every further line is
//! `| package | packages it depends on |`, names in backticks or not, several
//! comma-separated, `—` or an empty cell for none; the table ends at the first line not
//! starting with `|`. Every workspace member (the root Cargo.toml's `members`) has exactly one
//! row, and its cell lists exactly the workspace crates under its manifest's `[dependencies]`
//! (path or `.workspace = true`; dev-dependencies are no arrows). A new crate or arrow is
//! added to the table in the same change.
//!
//! `cargo test -p hetsim-tests --test architecture -- --nocapture` prints the report.

use std::path::Path;

use hetsim_tests::architecture::{check, Allowed, KnownCycle};

/// Module circles known today.
const KNOWN_CYCLES: &[KnownCycle] = &[];

/// Files over 600 lines known today.
const KNOWN_LONG_FILES: &[&str] = &[];

#[test]
fn crates_modules_and_files_keep_their_shape() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let allowed = Allowed {
        cycles: KNOWN_CYCLES,
        long_files: KNOWN_LONG_FILES,
    };
    let report = check(&root, &allowed).expect("the workspace's files read");
    println!("{}", report.text);
    assert!(
        report.failures.is_empty(),
        "the architecture check fails:\n\n{}\n\n(report above; docs/ARCHITECTURE.md says what it checks)",
        report.failures.join("\n\n")
    );
}
