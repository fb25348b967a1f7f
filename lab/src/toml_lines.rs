//! Fitted values written into a hand-kept TOML data file line by line, so that its comments,
//! order and layout stay as a person left them (a TOML library would rewrite the file).

use anyhow::{anyhow, Result};

/// One value to write: its table (`""` for the top level, `memory` for `[memory]`), its key
/// and the value as TOML text.
pub struct Assignment<'a> {
    pub table: &'a str,
    pub key: &'a str,
    pub value: String,
}

/// `text` with each assignment's value in place of the first `key = …` of its table, every
/// other line and each line's comment kept; an error naming `origin` and the key where one
/// is missing.
pub fn with_values(text: &str, wanted: &[Assignment], origin: &str) -> Result<String> {
    let mut found = vec![false; wanted.len()];
    let mut table = String::new();
    let mut out = Vec::new();
    for line in text.lines() {
        let comment_at = line.find('#');
        let code = line[..comment_at.unwrap_or(line.len())].trim();
        if let Some(header) = table_header(code) {
            header.clone_into(&mut table);
        }
        let hit = code.split_once('=').and_then(|(key, _)| {
            wanted
                .iter()
                .position(|a| a.table == table && a.key == key.trim())
        });
        match hit {
            Some(i) if !found[i] => {
                found[i] = true;
                out.push(with_value(line, &wanted[i].value, comment_at));
            }
            _ => out.push(line.to_owned()),
        }
    }
    if let Some(i) = found.iter().position(|f| !f) {
        let Assignment { table, key, .. } = &wanted[i];
        let table = if table.is_empty() {
            "the top level".to_owned()
        } else {
            format!("[{table}]")
        };
        return Err(anyhow!("{origin}: no `{key} = …` in {table}"));
    }
    Ok(out.join("\n") + "\n")
}

/// The table a line (its comment cut) opens, `[memory]` or `[ memory ]`; not an array of
/// tables, nor a line of an array's values.
fn table_header(code: &str) -> Option<&str> {
    let inner = code.strip_prefix('[')?.strip_suffix(']')?.trim();
    let bare = !inner.is_empty()
        && inner
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c));
    bare.then_some(inner)
}

/// `line` (`key = value  # comment`) with `value` in place of its value: its indentation and
/// key as they were, the comment where it was if the new value leaves room.
fn with_value(line: &str, value: &str, comment_at: Option<usize>) -> String {
    let eq = line.find('=').unwrap_or(line.len());
    let assignment = format!("{}= {value}", &line[..eq]);
    match comment_at {
        Some(at) => {
            let pad = at.saturating_sub(assignment.len()).max(1);
            format!("{assignment}{}{}", " ".repeat(pad), &line[at..])
        }
        None => assignment,
    }
}
