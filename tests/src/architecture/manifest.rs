//! The crate-level arrows: which workspace crates each crate's `Cargo.toml` depends on, and
//! the table `docs/ARCHITECTURE.md` says they should be.
//!
//! Manifests are read line by line, enough for this workspace's style rather than all of
//! TOML: the root's `members = [ "a", "b", … ]` (on one line or several); each member's
//! `[package]` `name = "…"`; and the keys of its `[dependencies]` section
//! (`hetsim-x.workspace = true`, `hetsim-x = { path = "../x" }`, …) and `[dependencies.x]`
//! headers. Dev-, build- and target-specific dependencies are not arrows.
//!
//! The table: under the first line that is exactly `## Crates and arrows`, the first
//! markdown table, which ends at the first line not starting with `|`. Its first row is the
//! header and its second the `|---|---|` separator; each further row is
//! `| crate | depends on |`, the crate's package name and the comma-separated package names
//! it depends on, either of them possibly in backticks; an empty cell or `—` means none.

use std::collections::{BTreeMap, BTreeSet};

/// Each crate's package name and the workspace crates it depends on.
pub type Arrows = BTreeMap<String, BTreeSet<String>>;

/// The `members` of the root manifest `text`.
pub fn members(text: &str) -> Vec<String> {
    // The line starting `members` (not `default-members`).
    let start = if text.starts_with("members") {
        0
    } else if let Some(at) = text.find("\nmembers") {
        at + 1
    } else {
        return Vec::new();
    };
    let rest = &text[start..];
    let (Some(open), Some(close)) = (rest.find('['), rest.find(']')) else {
        return Vec::new();
    };
    if close < open {
        return Vec::new();
    }
    rest[open + 1..close]
        .lines()
        .map(|line| line.split('#').next().unwrap_or(line))
        .flat_map(|line| line.split('"').skip(1).step_by(2))
        .map(str::to_string)
        .collect()
}

/// The `[section]` each line of `text` is in, with the line (comments and blank lines out).
fn lines_by_section(text: &str) -> impl Iterator<Item = (String, &str)> {
    let mut section = String::new();
    text.lines().filter_map(move |line| {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            return None;
        }
        if line.starts_with('[') {
            section = line.trim_matches(['[', ']']).trim().to_string();
            return Some((section.clone(), line));
        }
        Some((section.clone(), line))
    })
}

/// The package name in manifest `text`.
pub fn package_name(text: &str) -> Option<String> {
    lines_by_section(text)
        .filter(|(section, _)| section == "package")
        .find_map(|(_, line)| {
            let (key, value) = line.split_once('=')?;
            (key.trim() == "name").then(|| value.trim().trim_matches('"').to_string())
        })
}

/// The keys of the `[dependencies]` section of manifest `text` (normal dependencies only).
pub fn dependencies(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for (section, line) in lines_by_section(text) {
        if let Some(name) = section.strip_prefix("dependencies.") {
            found.insert(name.trim().trim_matches('"').to_string());
        } else if section == "dependencies" && !line.starts_with('[') {
            if let Some((key, _)) = line.split_once('=') {
                let key = key.split('.').next().unwrap_or(key);
                found.insert(key.trim().trim_matches('"').to_string());
            }
        }
    }
    found
}

/// Cell text without backticks and spaces.
fn cell_name(cell: &str) -> String {
    cell.trim().trim_matches('`').trim().to_string()
}

/// The table of section `## Crates and arrows` of the markdown `text`.
pub fn arrows_table(text: &str) -> Result<Arrows, String> {
    let mut lines = text.lines().skip_while(|l| l.trim() != "## Crates and arrows");
    if lines.next().is_none() {
        return Err("no section `## Crates and arrows`".to_string());
    }
    let rows: Vec<&str> = lines
        .skip_while(|l| !l.trim_start().starts_with('|'))
        .take_while(|l| l.trim_start().starts_with('|'))
        .collect();
    if rows.len() < 2 {
        return Err("no `| crate | depends on |` table under `## Crates and arrows`".to_string());
    }
    let mut arrows = Arrows::new();
    for row in &rows[2..] {
        let cells: Vec<&str> = row.trim().trim_matches('|').split('|').collect();
        let [name, targets] = cells[..] else {
            return Err(format!("a row without two cells: {row}"));
        };
        let targets: BTreeSet<String> = targets
            .split(',')
            .map(cell_name)
            .filter(|t| !t.is_empty() && t != "—" && t != "-")
            .collect();
        if arrows.insert(cell_name(name), targets).is_some() {
            return Err(format!("a crate listed twice: {row}"));
        }
    }
    Ok(arrows)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROOT: &str =
        "[workspace]\nresolver = \"2\"\nmembers = [\n  \"models\",\n  \"kernel\", # the SASS side\n]\n";

    const MEMBER: &str = r#"
[package]
name = "hetsim-teg"
version.workspace = true

[dependencies]
hetsim-kernel.workspace = true
hetsim-models = { path = "../models" }
serde.workspace = true
# hetsim-commented.workspace = true

[dependencies.hetsim-dotted]
workspace = true

[dev-dependencies]
hetsim-tests = { path = "../tests" }
"#;

    #[test]
    fn members_on_several_lines() {
        assert_eq!(members(ROOT), ["models", "kernel"]);
        assert_eq!(members("members = [\"a\", \"b\"]"), ["a", "b"]);
    }

    #[test]
    fn dependencies_are_the_normal_section_only() {
        assert_eq!(package_name(MEMBER).as_deref(), Some("hetsim-teg"));
        assert_eq!(
            dependencies(MEMBER),
            ["hetsim-dotted", "hetsim-kernel", "hetsim-models", "serde"]
                .map(String::from)
                .into()
        );
    }

    #[test]
    fn the_table_under_its_heading() {
        let doc = "# A\n| x | y |\n## Crates and arrows\nText.\n\n| crate | depends on |\n|---|---|\n| `a` | |\n| b | `a`, c |\n| c | — |\nAfter.\n| d | e |\n";
        let arrows = arrows_table(doc).unwrap();
        assert_eq!(arrows.len(), 3);
        assert!(arrows["a"].is_empty());
        assert_eq!(arrows["b"], ["a", "c"].map(String::from).into());
        assert!(arrows["c"].is_empty());
        assert!(arrows_table("## Other\n| a | b |").is_err());
    }
}
