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
    in_rank_order(found, stem, |p| p.display().to_string()).map_err(fail)
}

/// `found` (rank, file) sorted by rank, which must be 0 to n − 1, each once.
fn in_rank_order<T: Ord>(
    mut found: Vec<(usize, T)>,
    stem: &str,
    name: impl Fn(&T) -> String,
) -> Result<Vec<T>, String> {
    found.sort();
    for (expected, (rank, file)) in found.iter().enumerate() {
        if *rank != expected {
            return Err(if *rank < expected {
                format!("rank {rank} has two files ({} and another)", name(file))
            } else {
                format!("rank {expected} is missing ({stem}.{expected}.et): ranks must be 0 to n - 1")
            });
        }
    }
    Ok(found.into_iter().map(|(_, file)| file).collect())
}

/// The order of the files `names` by rank (indices into `names`, rank 0 first): one file is
/// rank 0; several are `STEM.N.et` (or `.et.gz`) with one stem and ranks 0 to n − 1, as
/// [`rank_files`] finds them in a folder. For files that come without their folder (a
/// browser's upload).
pub fn rank_order(names: &[&str]) -> Result<Vec<usize>, String> {
    if names.len() == 1 {
        return Ok(vec![0]);
    }
    let stem_of = |name: &str| -> Option<String> {
        let base = name.strip_suffix(".et").or_else(|| name.strip_suffix(".et.gz"))?;
        Some(base.rsplit_once('.')?.0.to_owned())
    };
    let stem = names
        .first()
        .and_then(|n| stem_of(n))
        .ok_or_else(|| format!("{:?}: not a PREFIX.N.et file name", names.first().unwrap_or(&"")))?;
    let found = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            rank_of(n, &stem)
                .map(|rank| (rank, i))
                .ok_or_else(|| format!("{n:?}: not {stem}.N.et, as the first file's name says"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    in_rank_order(found, &stem, |&i| names[i].to_owned())
}

#[cfg(test)]
mod tests {
    use super::{rank_of, rank_order};

    #[test]
    fn uploaded_names_are_put_in_rank_order_and_gaps_refused() {
        assert_eq!(rank_order(&["t.1.et", "t.0.et", "t.2.et.gz"]), Ok(vec![1, 0, 2]));
        assert_eq!(rank_order(&["anything.et"]), Ok(vec![0]));
        assert!(rank_order(&["t.0.et", "t.2.et"])
            .unwrap_err()
            .contains("rank 1 is missing (t.1.et)"));
        assert!(rank_order(&["t.0.et", "u.1.et"])
            .unwrap_err()
            .contains("\"u.1.et\": not t.N.et"));
        assert!(rank_order(&["t.0.et", "t.0.et.gz"])
            .unwrap_err()
            .contains("rank 0 has two files"));
        assert!(rank_order(&["t.et", "t.1.et"]).is_err());
    }

    #[test]
    fn rank_numbers_come_from_the_suffix() {
        assert_eq!(rank_of("all_reduce.12.et", "all_reduce"), Some(12));
        assert_eq!(rank_of("all_reduce.3.et.gz", "all_reduce"), Some(3));
        assert_eq!(rank_of("all_reduce.x.et", "all_reduce"), None);
        assert_eq!(rank_of("all_reducer.1.et", "all_reduce"), None);
        assert_eq!(rank_of("all_reduce.1.json", "all_reduce"), None);
    }
}
