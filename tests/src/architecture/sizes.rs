//! The file-size rule: a `.rs` file reads as one idea, so it is at most [`MAX_LINES`] lines
//! long, unless it is a table (of opcodes, of instruction semantics, …) and says so: its
//! first non-blank line is a comment (`//!`, `//`, `///` or `/*`) containing the word
//! "table" or "tables" (any case).
//!
//! Every `.rs` file under the workspace root counts (sources, tests, benches, examples),
//! except under `target/` and hidden directories (`.git/`).

use std::io;
use std::path::{Path, PathBuf};

/// The most lines a file that is no table may have.
pub const MAX_LINES: usize = 600;

/// A file over [`MAX_LINES`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LongFile {
    /// The path relative to the workspace root, with `/` separators.
    pub path: String,
    pub lines: usize,
    /// Whether its first comment says it is a table (then its length is fine).
    pub is_table: bool,
}

/// Whether `source` starts with a comment line that calls it a table.
pub fn says_table(source: &str) -> bool {
    let Some(first) = source.lines().map(str::trim).find(|l| !l.is_empty()) else {
        return false;
    };
    (first.starts_with("//") || first.starts_with("/*"))
        && first
            .split(|c: char| !c.is_alphabetic())
            .any(|w| w.eq_ignore_ascii_case("table") || w.eq_ignore_ascii_case("tables"))
}

/// Every `.rs` file under `dir`, sorted, skipping `target/` and hidden directories.
pub fn rust_files(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if path.is_dir() {
                if name != "target" && !name.starts_with('.') {
                    pending.push(path);
                }
            } else if name.ends_with(".rs") {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

/// The `.rs` files under `root` longer than [`MAX_LINES`], tables included.
pub fn long_files(root: &Path) -> io::Result<Vec<LongFile>> {
    let mut long = Vec::new();
    for file in rust_files(root)? {
        let source = std::fs::read_to_string(&file)?;
        let lines = source.lines().count();
        if lines > MAX_LINES {
            let relative = file.strip_prefix(root).unwrap_or(&file);
            long.push(LongFile {
                path: relative
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/"),
                lines,
                is_table: says_table(&source),
            });
        }
    }
    Ok(long)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_says_so_first() {
        assert!(says_table("\n//! A table: the SASS opcodes.\nuse x;"));
        assert!(says_table("/* Tables of latencies */"));
        assert!(!says_table("use x;\n//! A table"));
        assert!(!says_table("//! A notable timetable."));
        assert!(!says_table(""));
    }
}
