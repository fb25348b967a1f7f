//! The architecture check that CI runs (`tests/tests/architecture.rs`): the workspace's
//! dependencies point one way at every scale.
//!
//! 1. **Crates.** Each member crate's `[dependencies]` on other workspace crates are exactly
//!    the arrows of the table in `docs/ARCHITECTURE.md` ([`manifest`] documents both formats),
//!    and those arrows have no circle.
//! 2. **Modules.** Within each crate target (`src/lib.rs`, `src/main.rs`), at every level of
//!    the module tree, the modules that are siblings depend on each other without a circle.
//!    Module `a` depends on its sibling `b` when code in `a` or below it names `b` or anything
//!    inside `b` by a path starting at `crate`, `super` or `self` ([`paths`], [`tree`]); a
//!    parent naming its child or a child its parent is no arrow between siblings. Paths in
//!    comments and string literals name nothing ([`lexer`]). Circles are the strongly
//!    connected components of each level's graph ([`graph`]).
//! 3. **Files.** No `.rs` file is over [`sizes::MAX_LINES`] lines unless its first comment
//!    calls it a table ([`sizes`]).
//!
//! Circles and long files that exist today and are being removed are passed in as
//! [`Allowed`]: each is reported but does not fail the check, and an allowed entry that no
//! longer exists fails it, so the lists only shrink.

pub mod graph;
pub mod lexer;
pub mod manifest;
pub mod paths;
pub mod sizes;
pub mod tree;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use graph::Graph;

/// A module circle known to exist: in crate target `krate` (the package name, or
/// `"<package> (main.rs)"` for the binary root of a crate that also has a library), at the
/// module `level` (`""` for the crate root, `"a::b"` below), the sibling modules `modules`
/// form one strongly connected component, exactly this set.
#[derive(Debug, Clone, Copy)]
pub struct KnownCycle {
    pub krate: &'static str,
    pub level: &'static str,
    pub modules: &'static [&'static str],
}

/// What the check lets pass for now: known circles, and files (paths relative to the
/// workspace root, `/`-separated) known to be over [`sizes::MAX_LINES`] lines.
#[derive(Debug, Clone, Copy)]
pub struct Allowed<'a> {
    pub cycles: &'a [KnownCycle],
    pub long_files: &'a [&'a str],
}

/// The check's findings: a report to print, and the failures (empty when it passes).
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub text: String,
    pub failures: Vec<String>,
}

/// Why a module depends on a sibling: a path named at a line of a file.
#[derive(Debug, Clone)]
struct Evidence {
    file: PathBuf,
    line: usize,
    written: String,
}

impl std::fmt::Display for Evidence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{} names `{}`",
            self.file.display(),
            self.line,
            self.written
        )
    }
}

/// Runs the whole check on the workspace at `root`.
pub fn check(root: &Path, allowed: &Allowed<'_>) -> io::Result<Report> {
    let mut report = Report::default();
    let members = manifest::members(&std::fs::read_to_string(root.join("Cargo.toml"))?);
    let mut packages: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut dependencies: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for member in &members {
        let text = std::fs::read_to_string(root.join(member).join("Cargo.toml"))?;
        let name = manifest::package_name(&text).unwrap_or_else(|| member.clone());
        packages.insert(name.clone(), root.join(member));
        dependencies.insert(name, manifest::dependencies(&text));
    }
    let arrows: manifest::Arrows = dependencies
        .into_iter()
        .map(|(name, deps)| {
            (
                name,
                deps.into_iter().filter(|d| packages.contains_key(d)).collect(),
            )
        })
        .collect();
    check_crates(root, &arrows, &mut report)?;

    let _ = writeln!(
        report.text,
        "\nModule trees (sibling modules must not depend in a circle):"
    );
    let mut unused: Vec<&KnownCycle> = allowed.cycles.iter().collect();
    for (name, dir) in &packages {
        let lib = dir.join("src/lib.rs");
        let main = dir.join("src/main.rs");
        let mut targets = Vec::new();
        if lib.is_file() {
            targets.push((name.clone(), lib));
        }
        if main.is_file() {
            let label = if targets.is_empty() {
                name.clone()
            } else {
                format!("{name} (main.rs)")
            };
            targets.push((label, main));
        }
        for (label, file) in targets {
            let tree = tree::load(&file, root)?;
            check_tree(&label, &tree, &mut unused, &mut report);
        }
    }
    for known in unused {
        report.failures.push(format!(
            "the allow-listed circle {{{}}} in {}, {} no longer exists: remove it from the list",
            known.modules.join(", "),
            known.krate,
            level_name(known.level),
        ));
    }

    check_sizes(root, allowed.long_files, &mut report)?;
    let _ = writeln!(
        report.text,
        "\n{}",
        match report.failures.len() {
            0 => "The architecture check passes.".to_string(),
            n => format!("The architecture check fails: {n} failure(s)."),
        }
    );
    Ok(report)
}

fn level_name(level: &str) -> String {
    if level.is_empty() {
        "at the crate root".to_string()
    } else {
        format!("in module {level}")
    }
}

/// The crate arrows against `docs/ARCHITECTURE.md`, and their circles.
fn check_crates(root: &Path, arrows: &manifest::Arrows, report: &mut Report) -> io::Result<()> {
    let doc = root.join("docs/ARCHITECTURE.md");
    let _ = writeln!(
        report.text,
        "Crates and arrows (Cargo.toml [dependencies] against docs/ARCHITECTURE.md):"
    );
    for (name, deps) in arrows {
        let deps: Vec<&str> = deps.iter().map(String::as_str).collect();
        let shown = if deps.is_empty() {
            "nothing".to_string()
        } else {
            deps.join(", ")
        };
        let _ = writeln!(report.text, "  {name} → {shown}");
    }
    let table = match manifest::arrows_table(&std::fs::read_to_string(&doc)?) {
        Ok(table) => table,
        Err(e) => {
            report.failures.push(format!("docs/ARCHITECTURE.md: {e}"));
            return Ok(());
        }
    };
    for (name, deps) in arrows {
        match table.get(name) {
            None => report.failures.push(format!(
                "crate {name} is missing from the table in docs/ARCHITECTURE.md (it depends on {})",
                if deps.is_empty() {
                    "nothing".to_string()
                } else {
                    deps.iter().cloned().collect::<Vec<_>>().join(", ")
                }
            )),
            Some(documented) if documented != deps => {
                let only = |a: &BTreeSet<String>, b: &BTreeSet<String>| {
                    a.difference(b).cloned().collect::<Vec<_>>().join(", ")
                };
                report.failures.push(format!(
                    "crate {name}: Cargo.toml and docs/ARCHITECTURE.md disagree: only in Cargo.toml [{}], only in the table [{}]",
                    only(deps, documented),
                    only(documented, deps),
                ));
            }
            Some(_) => {}
        }
    }
    for name in table.keys().filter(|n| !arrows.contains_key(*n)) {
        report.failures.push(format!(
            "docs/ARCHITECTURE.md lists {name}, which is no workspace member"
        ));
    }
    let mut crates: Graph<()> = Graph::default();
    for (name, deps) in arrows {
        crates.add_node(name);
        for dep in deps {
            crates.add_edge(name, dep, ());
        }
    }
    for circle in crates.circles() {
        report.failures.push(format!(
            "crates depend in a circle: {}",
            crates.cycle_in(&circle).join(" → ")
        ));
    }
    Ok(())
}

/// One crate target's levels: their circles, known or not.
fn check_tree(label: &str, tree: &tree::Tree, unused: &mut Vec<&KnownCycle>, report: &mut Report) {
    let mut levels: BTreeMap<Vec<String>, Graph<Evidence>> = BTreeMap::new();
    for module in tree.modules.keys() {
        if let Some((name, parent)) = module.split_last() {
            levels.entry(parent.to_vec()).or_default().add_node(name);
        }
    }
    for edge in tree.sibling_edges() {
        let evidence = Evidence {
            file: edge.reference.file.clone(),
            line: edge.reference.line,
            written: edge.reference.written.clone(),
        };
        levels
            .entry(edge.level)
            .or_default()
            .add_edge(&edge.from, &edge.to, evidence);
    }
    let mut known = 0;
    let mut new = 0;
    let mut details = String::new();
    for (level, graph) in &levels {
        let level = level.join("::");
        for circle in graph.circles() {
            let position = unused.iter().position(|k| {
                k.krate == label
                    && k.level == level
                    && circle.iter().map(String::as_str).eq(k
                        .modules
                        .iter()
                        .copied()
                        .collect::<BTreeSet<_>>())
            });
            let text = describe_circle(label, &level, graph, &circle);
            if let Some(at) = position {
                unused.remove(at);
                known += 1;
                let _ = write!(details, "    allow-listed: {text}");
            } else {
                new += 1;
                report.failures.push(text.clone());
                let _ = write!(details, "    NEW: {text}");
            }
        }
    }
    let verdict = match (known, new) {
        (0, 0) => "acyclic".to_string(),
        (k, 0) => format!("{k} allow-listed circle(s)"),
        (k, n) => format!("{n} circle(s) not allowed, {k} allow-listed"),
    };
    let _ = writeln!(
        report.text,
        "  {label}: {} modules, {verdict}",
        tree.modules.len()
    );
    report.text.push_str(&details);
}

/// A circle as a shortest cycle with the evidence for each edge, then the circle's other
/// edges.
fn describe_circle(label: &str, level: &str, graph: &Graph<Evidence>, circle: &BTreeSet<String>) -> String {
    let members: Vec<&str> = circle.iter().map(String::as_str).collect();
    let cycle = graph.cycle_in(circle);
    let mut text = format!(
        "{label}, {}: the modules {{{}}} depend on each other in a circle: {} → {}\n",
        level_name(level),
        members.join(", "),
        cycle.join(" → "),
        cycle.first().map_or("", String::as_str),
    );
    let edge_line = |text: &mut String, from: &str, to: &str| {
        let evidence = graph.evidence(from, to).unwrap_or(&[]);
        let more = match evidence.len() {
            0 | 1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        };
        if let Some(first) = evidence.first() {
            let _ = writeln!(text, "        {from} → {to}: {first}{more}");
        }
    };
    let mut on_cycle = BTreeSet::new();
    for (k, from) in cycle.iter().enumerate() {
        let to = &cycle[(k + 1) % cycle.len()];
        edge_line(&mut text, from, to);
        on_cycle.insert((from.as_str(), to.as_str()));
    }
    for from in &members {
        for to in &members {
            if !on_cycle.contains(&(*from, *to)) && graph.evidence(from, to).is_some() {
                edge_line(&mut text, from, to);
            }
        }
    }
    text
}

/// The file-size rule, with the allowed long files.
fn check_sizes(root: &Path, allowed: &[&str], report: &mut Report) -> io::Result<()> {
    let _ = writeln!(
        report.text,
        "\nFiles over {} lines (fine only as a table that says so in its first comment):",
        sizes::MAX_LINES
    );
    let long = sizes::long_files(root)?;
    for file in &long {
        let verdict = if file.is_table {
            "a table"
        } else if allowed.contains(&file.path.as_str()) {
            "allow-listed"
        } else {
            report.failures.push(format!(
                "{} has {} lines, over {}: split it along a seam (or, if it is a table, say so in its first comment)",
                file.path,
                file.lines,
                sizes::MAX_LINES
            ));
            "TOO LONG"
        };
        let _ = writeln!(report.text, "  {}: {} lines, {verdict}", file.path, file.lines);
    }
    for path in allowed {
        if !long.iter().any(|f| f.path == *path && !f.is_table) {
            report.failures.push(format!(
                "the allow-listed long file {path} is no longer over {} lines (or is gone, or says it is a table): remove it from the list",
                sizes::MAX_LINES
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
