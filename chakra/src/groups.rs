//! Process groups (communicators): which ranks a collective's `pg_name` names.
//!
//! ASTRA-sim reads them from a communicator-group JSON, `{"<pg_name>": [rank, ...], ...}`;
//! a collective without a `pg_name`, or whose name no group lists, runs over all ranks.

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
            let ranks = ranks
                .as_array()
                .ok_or_else(|| format!("group {name:?}: expected an array of ranks"))?
                .iter()
                .map(|r| {
                    r.as_u64()
                        .and_then(|r| usize::try_from(r).ok())
                        .ok_or_else(|| format!("group {name:?}: {r} is not a rank"))
                })
                .collect::<Result<Vec<usize>, String>>()?;
            groups.insert(name.clone(), ranks);
        }
        Ok(Groups(groups))
    }

    /// The ranks of `pg_name`, if a group has that name.
    pub fn get(&self, pg_name: &str) -> Option<&[usize]> {
        self.0.get(pg_name).map(Vec::as_slice)
    }
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
}
