//! Which files hold a trace's ranks: one `.et` file (one rank), or a prefix whose
//! `PREFIX.N.et` (or `PREFIX.N.et.gz`) files are ranks 0 to n − 1.

use std::path::{Path, PathBuf};

use crate::error::{At, ChakraError, Problem};

/// The rank number of `name` under `stem` (`stem.N.et` or `stem.N.et.gz`).
fn rank_of(name: &str, stem: &str) -> Option<usize> {
    let rest = name.strip_prefix(stem)?.strip_prefix('.')?;
    let number = rest.strip_suffix(".et").or_else(|| rest.strip_suffix(".et.gz"))?;
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    number.parse().ok()
}

/// The files of `trace`, in rank order: `trace` itself when it is a file (one rank), else
/// the `trace.N.et` files, which must be ranks 0 to n − 1 without a gap.
pub fn rank_files(trace: &Path) -> Result<Vec<PathBuf>, ChakraError> {
    let fail = |why: String| ChakraError {
        file: trace.to_owned(),
        rank: 0,
        at: At::File,
        problem: Problem::Files(why),
    };
    if trace.is_file() {
        return Ok(vec![trace.to_owned()]);
    }
    let dir = match trace.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    };
    let stem = trace
        .file_name()
        .and_then(|s| s.to_str())
        .ok_or_else(|| fail("not a file, nor a prefix of PREFIX.N.et files".to_owned()))?;
    let entries = std::fs::read_dir(&dir).map_err(|e| fail(format!("{}: {e}", dir.display())))?;
    let mut found: Vec<(usize, PathBuf)> = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| fail(format!("{}: {e}", dir.display())))?;
        let name = entry.file_name();
        if let Some(rank) = name.to_str().and_then(|n| rank_of(n, stem)) {
            found.push((rank, entry.path()));
        }
    }
    if found.is_empty() {
        return Err(fail(format!(
            "no such file, and no {stem}.N.et files in {}",
            dir.display()
        )));
    }
    found.sort();
    for (expected, (rank, path)) in found.iter().enumerate() {
        if *rank != expected {
            let why = if *rank < expected {
                format!("rank {rank} has two files ({} and another)", path.display())
            } else {
                format!("rank {expected} is missing ({stem}.{expected}.et): ranks must be 0 to n - 1")
            };
            return Err(fail(why));
        }
    }
    Ok(found.into_iter().map(|(_, p)| p).collect())
}

#[cfg(test)]
mod tests {
    use super::rank_of;

    #[test]
    fn rank_numbers_come_from_the_suffix() {
        assert_eq!(rank_of("all_reduce.12.et", "all_reduce"), Some(12));
        assert_eq!(rank_of("all_reduce.3.et.gz", "all_reduce"), Some(3));
        assert_eq!(rank_of("all_reduce.x.et", "all_reduce"), None);
        assert_eq!(rank_of("all_reducer.1.et", "all_reduce"), None);
        assert_eq!(rank_of("all_reduce.1.json", "all_reduce"), None);
    }
}
