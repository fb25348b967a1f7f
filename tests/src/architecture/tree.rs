//! One crate target's module tree, read from its root file (`src/lib.rs` or `src/main.rs`)
//! by following `mod x;` to `x.rs` or `x/mod.rs` (beside the root and `mod.rs` files, in
//! the directory named after any other file) and `mod x { … }` inline; and every module
//! path its code names, resolved to an absolute path.
//!
//! A `#[path = …]` attribute is not followed (the checker then reads the module as missing:
//! it is left out, as a module whose file does not exist is).

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use super::lexer::tokens;
use super::paths::{resolve, scan};

/// An absolute module path from the crate root (`[]` is the root).
pub type ModPath = Vec<String>;

/// A module path named in code: where, and what it resolves to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// The module the code is in (inline modules included).
    pub from: ModPath,
    /// The absolute path named (a module, or an item inside one).
    pub to: ModPath,
    pub file: PathBuf,
    pub line: usize,
    /// The path as written, `super::a::T`.
    pub written: String,
}

/// The modules of one crate target and the references between them.
#[derive(Debug, Clone, Default)]
pub struct Tree {
    /// Every module and the file it is declared in (its own file, or for an inline module
    /// the file holding it).
    pub modules: BTreeMap<ModPath, PathBuf>,
    pub references: Vec<Reference>,
}

/// Reads the tree whose root file is `root` (paths in it are shown relative to `base`).
pub fn load(root: &Path, base: &Path) -> io::Result<Tree> {
    let mut tree = Tree::default();
    let dir = root.parent().unwrap_or(Path::new(".")).to_path_buf();
    // Files to read: (module path, file, directory of its `mod x;` children).
    let mut pending = vec![(ModPath::new(), root.to_path_buf(), dir)];
    while let Some((module, file, children)) = pending.pop() {
        let source = std::fs::read_to_string(&file)?;
        let shown = file.strip_prefix(base).unwrap_or(&file).to_path_buf();
        tree.modules.insert(module.clone(), shown.clone());
        let found = scan(&tokens(&source));
        for declared in found.declared {
            let mut path = module.clone();
            path.extend(declared.inline.iter().cloned());
            path.push(declared.name.clone());
            if declared.is_inline {
                tree.modules.insert(path, shown.clone());
                continue;
            }
            let dir = declared.inline.iter().fold(children.clone(), |d, m| d.join(m));
            let flat = dir.join(format!("{}.rs", declared.name));
            let nested = dir.join(&declared.name).join("mod.rs");
            let own = if flat.is_file() {
                flat
            } else if nested.is_file() {
                nested
            } else {
                continue;
            };
            pending.push((path, own, dir.join(&declared.name)));
        }
        for named in found.named {
            let mut here = module.clone();
            here.extend(named.inline.iter().cloned());
            if let Some(to) = resolve(&here, &named.segments) {
                tree.references.push(Reference {
                    from: here,
                    to,
                    file: shown.clone(),
                    line: named.line,
                    written: named.segments.join("::"),
                });
            }
        }
    }
    Ok(tree)
}

/// An edge between sibling modules: at module `level`, child `from` depends on child `to`
/// because `reference` (written in `from` or below it) names `to` or something inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiblingEdge<'t> {
    pub level: ModPath,
    pub from: String,
    pub to: String,
    pub reference: &'t Reference,
}

impl Tree {
    /// The sibling edges its references make. A reference from module `F` to path `T` with
    /// longest common prefix `P` is an edge at level `P` from `F`'s next segment to `T`'s
    /// next segment, when both exist and `T`'s names a module (a child of `P`); references
    /// to an ancestor, a descendant or an item of an ancestor are no edge.
    pub fn sibling_edges(&self) -> Vec<SiblingEdge<'_>> {
        let mut edges = Vec::new();
        for reference in &self.references {
            let common = reference
                .from
                .iter()
                .zip(&reference.to)
                .take_while(|(a, b)| a == b)
                .count();
            let (Some(from), Some(to)) = (reference.from.get(common), reference.to.get(common)) else {
                continue;
            };
            let level = reference.to[..common].to_vec();
            let mut target = level.clone();
            target.push(to.clone());
            if self.modules.contains_key(&target) {
                edges.push(SiblingEdge {
                    level,
                    from: from.clone(),
                    to: to.clone(),
                    reference,
                });
            }
        }
        edges
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(from: &str, to: &str) -> Reference {
        let path = |p: &str| -> ModPath {
            p.split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()
        };
        Reference {
            from: path(from),
            to: path(to),
            file: PathBuf::from("f.rs"),
            line: 1,
            written: to.to_string(),
        }
    }

    #[test]
    fn edges_join_the_children_of_the_common_ancestor() {
        let mut tree = Tree::default();
        for m in ["", "a", "a::x", "a::y", "b", "b::z"] {
            let path: ModPath = m
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            tree.modules.insert(path, PathBuf::from("f.rs"));
        }
        tree.references = vec![
            reference("a::x", "b::z::T"),     // a → b at the root
            reference("a::x", "a::y::f"),     // x → y at a
            reference("a::x", "a::T"),        // an item of the parent: no edge
            reference("a", "a::x::T"),        // a child: no edge
            reference("a::x::tests", "a::x"), // the parent: no edge
            reference("b", "Item"),           // a root item: no edge
        ];
        let edges: Vec<(String, String, String)> = tree
            .sibling_edges()
            .into_iter()
            .map(|e| (e.level.join("::"), e.from, e.to))
            .collect();
        assert_eq!(
            edges,
            [
                (String::new(), "a".to_string(), "b".to_string()),
                ("a".to_string(), "x".to_string(), "y".to_string()),
            ]
        );
    }
}
