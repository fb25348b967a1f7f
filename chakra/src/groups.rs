//! Process groups (communicators): which ranks a collective's `pg_name` names.
//!
//! ASTRA-sim reads them from a communicator-group JSON, `{"<pg_name>": [rank, ...], ...}`.
//! Traces converted from PyTorch carry them in a METADATA node named
//! `## process_group:init ##`: PyTorch's execution-trace observer records
//! `json.dumps(torch.distributed.distributed_c10d._world.pg_config_info)` as the node's one
//! input, a list of `{"pg_name", "pg_desc", "backend_config", "ranks", "group_size",
//! "group_count"}` (`ranks` empty when the group spans every rank: then ranks 0 to
//! `group_size` − 1), and Chakra's converter writes the inputs' values as Python's text of
//! that list (`['[{"pg_name": "0", ...}]']`). A collective without a `pg_name`, or whose
//! name no group lists, runs over all ranks.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{At, ChakraError, Problem};

/// Ranks per group name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Groups(pub BTreeMap<String, Vec<usize>>);

impl Groups {
    /// Reads ASTRA-sim's communicator-group JSON.
    pub fn read(file: &Path) -> Result<Self, ChakraError> {
        let fail = |why: String| ChakraError {
            file: file.to_owned(),
            rank: 0,
            at: At::File,
            problem: Problem::Groups(why),
        };
        let text = std::fs::read_to_string(file).map_err(|e| fail(e.to_string()))?;
        Self::parse(&text).map_err(fail)
    }

    /// Parses `{"name": [ranks]}`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let object = value
            .as_object()
            .ok_or("expected an object of group name to its ranks")?;
        let mut groups = BTreeMap::new();
        for (name, ranks) in object {
            groups.insert(name.clone(), ranks_of(name, ranks)?);
        }
        Ok(Groups(groups))
    }

    /// Reads PyTorch's process-group configs from the input values of a
    /// `process_group:init` METADATA node (Python's text of a list holding their JSON, or
    /// that JSON itself).
    pub fn from_pg_config(values: &str) -> Result<Self, String> {
        let json = serde_json::from_str(values)
            .or_else(|_| {
                let inner = python_string_list(values)
                    .ok_or("expected Python's text of a list holding a JSON string, or JSON")?;
                serde_json::from_str(&inner).map_err(|e| e.to_string())
            })
            .map_err(|e| format!("process-group configs: {e}"))?;
        let mut groups = Groups::default();
        for entry in config_entries(json)? {
            let name = match entry.get("pg_name") {
                Some(serde_json::Value::String(s)) => s.clone(),
                Some(serde_json::Value::Number(n)) => n.to_string(),
                _ => return Err(format!("a process-group config without `pg_name`: {entry}")),
            };
            let mut ranks = match entry.get("ranks") {
                Some(list) => ranks_of(&name, list)?,
                None => Vec::new(),
            };
            if ranks.is_empty() {
                let size = entry
                    .get("group_size")
                    .and_then(serde_json::Value::as_u64)
                    .and_then(|n| usize::try_from(n).ok())
                    .ok_or_else(|| format!("group {name:?}: no `ranks` and no `group_size`"))?;
                ranks = (0..size).collect();
            }
            groups.merge(&Groups(BTreeMap::from([(name, ranks)])))?;
        }
        Ok(groups)
    }

    /// Adds `other`'s groups; a name both have with different ranks is an error.
    pub fn merge(&mut self, other: &Groups) -> Result<(), String> {
        for (name, ranks) in &other.0 {
            match self.0.get(name) {
                Some(known) if known != ranks => {
                    return Err(format!(
                        "process group {name:?} is {known:?} in one place and {ranks:?} in another"
                    ))
                }
                Some(_) => {}
                None => {
                    self.0.insert(name.clone(), ranks.clone());
                }
            }
        }
        Ok(())
    }

    /// The ranks of `pg_name`, if a group has that name.
    pub fn get(&self, pg_name: &str) -> Option<&[usize]> {
        self.0.get(pg_name).map(Vec::as_slice)
    }
}

/// A group's ranks from a JSON array.
fn ranks_of(name: &str, ranks: &serde_json::Value) -> Result<Vec<usize>, String> {
    ranks
        .as_array()
        .ok_or_else(|| format!("group {name:?}: expected an array of ranks"))?
        .iter()
        .map(|r| {
            r.as_u64()
                .and_then(|r| usize::try_from(r).ok())
                .ok_or_else(|| format!("group {name:?}: {r} is not a rank"))
        })
        .collect()
}

/// The config objects in `value`: the list itself, or the one string or list it wraps
/// (PyTorch's inputs are a list of one JSON string).
fn config_entries(value: serde_json::Value) -> Result<Vec<serde_json::Value>, String> {
    use serde_json::Value;
    match value {
        Value::String(text) => config_entries(serde_json::from_str(&text).map_err(|e| e.to_string())?),
        Value::Array(items) if items.iter().all(Value::is_object) => Ok(items),
        Value::Array(mut items) if items.len() == 1 => config_entries(items.remove(0)),
        other => Err(format!("expected a list of process-group configs, found {other}")),
    }
}

/// The one string of Python's text of a one-string list (`['…']`), its escapes undone
/// (`\\`, `\'`, `\"`; others are kept, as JSON reads them).
fn python_string_list(text: &str) -> Option<String> {
    let inner = text.trim().strip_prefix("['")?.strip_suffix("']")?;
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some(e @ ('\\' | '\'' | '"')) => out.push(e),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::Groups;

    #[test]
    fn astra_sim_groups_read_and_bad_ones_say_why() {
        let g = Groups::parse(r#"{"0": [0, 1, 2, 3], "1": [4, 5]}"#).expect("reads");
        assert_eq!(g.get("1"), Some(&[4, 5][..]));
        assert_eq!(g.get("2"), None);
        let e = Groups::parse(r#"{"0": [0, -1]}"#).expect_err("a negative rank");
        assert!(e.contains("-1 is not a rank"), "{e}");
    }

    #[test]
    fn pytorch_process_group_configs_read_as_chakras_converter_writes_them() {
        // PyTorch's pg_config_info for 4 ranks with two data-parallel pairs: the default
        // group lists no ranks (it spans all), the others theirs; as Chakra's converter
        // writes it, Python's str() of the one-string list of inputs (an apostrophe in a
        // description is escaped by Python).
        let values = r#"['[{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl", "ranks": [], "group_size": 4, "group_count": 3}, {"pg_name": "1", "pg_desc": "dp\'s", "ranks": [0, 2], "group_size": 2, "group_count": 3}, {"pg_name": "2", "pg_desc": "dp", "ranks": [1, 3], "group_size": 2, "group_count": 3}]']"#;
        let g = Groups::from_pg_config(values).expect("reads");
        assert_eq!(g.get("0"), Some(&[0, 1, 2, 3][..]));
        assert_eq!(g.get("1"), Some(&[0, 2][..]));
        assert_eq!(g.get("2"), Some(&[1, 3][..]));
        // The same as JSON (a list of one JSON string) reads the same.
        let json = serde_json::to_string(&[r#"[{"pg_name": "1", "ranks": [0, 2]}]"#]).expect("json");
        assert_eq!(
            Groups::from_pg_config(&json).expect("reads").get("1"),
            Some(&[0, 2][..])
        );
        let e = Groups::from_pg_config("['[{\"ranks\": [1]}]']").expect_err("no name");
        assert!(e.contains("without `pg_name`"), "{e}");
        let e = Groups::from_pg_config("not a list").expect_err("garbage");
        assert!(e.contains("process-group configs"), "{e}");
        let mut merged = g.clone();
        let e = merged
            .merge(&Groups::parse(r#"{"1": [0, 3]}"#).expect("reads"))
            .expect_err("two memberships");
        assert!(
            e.contains(r#"process group "1" is [0, 2] in one place and [0, 3]"#),
            "{e}"
        );
    }
}
