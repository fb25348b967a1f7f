//! A TOML system file made self-contained as text, for a server that reads no file: each
//! kernel's `sass = "FILE"` becomes `listing = '''…'''` and each `.rhai` model file a node
//! or link names becomes a `[[model]]` with its `source`, while the rest of the text (its
//! comments, its order, its number formats) stays as the author wrote it. What is stored is
//! then TOML, and `catalog get` gives it back as TOML.

use toml_edit::{value, ArrayOfTables, DocumentMut, Item, Table, TableLike};

use crate::error::SystemError;
use crate::spec::SystemFile;

/// `text` (TOML named `origin`) with the files it names inlined, each read by `read` (its
/// path as the file writes it, relative to the file's folder). A file that names none
/// comes back unchanged, byte for byte.
pub fn self_contained_toml(
    text: &str,
    origin: &str,
    read: impl Fn(&str) -> std::io::Result<String>,
) -> Result<String, SystemError> {
    let file = SystemFile::parse(text, origin)?;
    let mut model_files: Vec<&str> = Vec::new();
    for model in file
        .nodes
        .iter()
        .map(|n| n.model.as_str())
        .chain(file.links.iter().map(|l| l.model.as_str()))
    {
        let inline = file.models.iter().any(|m| m.name == model);
        if model.ends_with(".rhai") && !inline && !model_files.contains(&model) {
            model_files.push(model);
        }
    }
    if file.kernels.iter().all(|k| k.sass.is_none()) && model_files.is_empty() {
        return Ok(text.to_owned());
    }
    let mut doc: DocumentMut = text
        .parse()
        .map_err(|e| SystemError::new(format!("not TOML: {e}")).in_file(origin))?;
    let read_at = |path: &str, field: String| {
        read(path).map_err(|e| {
            SystemError::new(format!("{path}: {e}"))
                .in_file(origin)
                .at_path(field)
        })
    };
    for (number, kernel) in tables_of(doc.get_mut("kernel")).into_iter().enumerate() {
        let Some(path) = kernel.get("sass").and_then(Item::as_str).map(str::to_owned) else {
            continue;
        };
        let listing = read_at(&path, format!("kernel[{number}].sass"))?;
        kernel.remove("sass");
        kernel.insert("listing", value(listing));
        if let Some(mut key) = kernel.key_mut("listing") {
            key.leaf_decor_mut()
                .set_prefix(format!("# {path}, inlined for a server (which reads no file)\n"));
        }
    }
    let mut added = Vec::new();
    for (number, path) in model_files.iter().enumerate() {
        let source = read_at(path, format!("model file {number}"))?;
        let mut model = Table::new();
        model.insert("name", value(*path));
        model.insert("source", value(source));
        added.push(model);
    }
    match doc.get_mut("model") {
        _ if added.is_empty() => {}
        Some(Item::ArrayOfTables(models)) => models.extend(added),
        Some(Item::Value(toml_edit::Value::Array(models))) => {
            for model in added {
                models.push(model.into_inline_table());
            }
        }
        _ => {
            doc.insert("model", Item::ArrayOfTables(ArrayOfTables::from_iter(added)));
        }
    }
    Ok(doc.to_string())
}

/// The tables of `[[kernel]]` entries or of an inline array `kernel = [{…}]`.
fn tables_of(item: Option<&mut Item>) -> Vec<&mut dyn TableLike> {
    match item {
        Some(Item::ArrayOfTables(tables)) => tables.iter_mut().map(|t| t as &mut dyn TableLike).collect(),
        Some(Item::Value(toml_edit::Value::Array(values))) => values
            .iter_mut()
            .filter_map(|v| v.as_inline_table_mut())
            .map(|t| t as &mut dyn TableLike)
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SYSTEM: &str = r#"# A comment the author wrote.
name = "lab"

[[node]]
id = "gpu"
component = "GTX 970 - gajger"
model = "gpu.rhai" # a model file
labels = { GPU = 1 }

# saxpy2's SASS.
[[kernel]]
name = "saxpy2"
sass = "saxpy2.sass"
params = ["n", "a", "*x", "*y"]
threads = "n"
"#;

    fn read(path: &str) -> std::io::Result<String> {
        match path {
            "saxpy2.sass" => Ok("\tcode for sm_52\n\t\tFunction : _Z6saxpy2ifPfS_\n".to_owned()),
            "gpu.rhai" => Ok("fn compute_time(p) { 1.0 }\n".to_owned()),
            _ => Err(std::io::Error::new(std::io::ErrorKind::NotFound, "no such file")),
        }
    }

    #[test]
    fn files_are_inlined_and_comments_kept() {
        let text = self_contained_toml(SYSTEM, "lab.toml", read).unwrap();
        assert!(
            text.starts_with("# A comment the author wrote.\nname = \"lab\""),
            "{text}"
        );
        assert!(text.contains("model = \"gpu.rhai\" # a model file"), "{text}");
        assert!(text.contains("# saxpy2's SASS.\n[[kernel]]"), "{text}");
        assert!(!text.contains("sass = "), "{text}");
        let file = SystemFile::parse(&text, "lab.toml").unwrap();
        assert_eq!(file.kernels[0].sass, None);
        assert_eq!(
            file.kernels[0].listing.as_deref(),
            Some(read("saxpy2.sass").unwrap().as_str())
        );
        assert_eq!(file.models[0].name, "gpu.rhai");
        assert_eq!(file.models[0].source, read("gpu.rhai").unwrap());
    }

    #[test]
    fn inline_arrays_are_inlined_in_place_and_a_file_named_twice_once() {
        let text = r#"name = "lab"
model = [{ name = "other", source = "fn compute_time(p) { 2.0 }" }]
kernel = [{ name = "saxpy2", sass = "saxpy2.sass", params = ["n"], threads = "n" }]

[[node]]
id = "gpu"
component = "GTX 970 - gajger"
model = "gpu.rhai"

[[node]]
id = "gpu2"
component = "GTX 970 - gajger"
model = "gpu.rhai"
"#;
        let inlined = self_contained_toml(text, "lab.toml", read).unwrap();
        let file = SystemFile::parse(&inlined, "lab.toml").unwrap();
        let names: Vec<&str> = file.models.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["other", "gpu.rhai"], "{inlined}");
        assert_eq!(file.kernels[0].sass, None, "{inlined}");
        assert!(file.kernels[0].listing.is_some(), "{inlined}");
    }

    #[test]
    fn a_file_that_names_none_is_unchanged_and_a_missing_one_is_named() {
        let plain = SYSTEM.replace("gpu.rhai", "gpu-volkov");
        let plain = plain.replace("sass = \"saxpy2.sass\"", "listing = \"…\" # kept");
        assert_eq!(self_contained_toml(&plain, "x.toml", read).unwrap(), plain);
        let err = self_contained_toml(&SYSTEM.replace("saxpy2.sass", "gone.sass"), "lab.toml", read)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("lab.toml") && err.contains("gone.sass: no such file"),
            "{err}"
        );
    }
}
