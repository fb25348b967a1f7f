//! What one file's tokens say about modules: the modules it declares (`mod x;` for a file,
//! `mod x { … }` inline) and every module path it names that starts at `crate`, `$crate`,
//! `super` or `self`: in `use` and `pub use` items, grouped (`use crate::{a, b::{c, self}}`,
//! `use super::*`), and in expressions and types (`crate::a::f()`, `super::super::T`).
//!
//! Paths are kept as written (`["super", "a", "T"]`); [`resolve`] turns one into an absolute
//! module path given the module it is written in.

use super::lexer::{Tok, Token};

/// A path the file names, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    /// The segments, the first being `crate`, `super` or `self` (`$crate` reads as `crate`).
    pub segments: Vec<String>,
    /// The inline modules (`mod tests { … }`) the path is written in, outermost first.
    pub inline: Vec<String>,
    pub line: usize,
}

/// A module the file declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declared {
    pub name: String,
    /// The inline modules the declaration is written in, outermost first.
    pub inline: Vec<String>,
    /// `mod x { … }` (true) or `mod x;`, whose code is in another file (false).
    pub is_inline: bool,
    pub line: usize,
}

/// The modules one file declares and the paths it names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scan {
    pub declared: Vec<Declared>,
    pub named: Vec<Named>,
}

fn ident(token: Option<&Token>) -> Option<&str> {
    match token.map(|t| &t.tok) {
        Some(Tok::Ident(i)) => Some(i),
        _ => None,
    }
}

fn is_anchor(name: &str) -> bool {
    matches!(name, "crate" | "super" | "self")
}

/// Scans the tokens of one file.
pub fn scan(tokens: &[Token]) -> Scan {
    let mut out = Scan::default();
    // The open inline modules, each with the brace depth inside it.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < tokens.len() {
        let t = &tokens[i];
        if t.is_punct('{') {
            depth += 1;
        } else if t.is_punct('}') {
            depth = depth.saturating_sub(1);
            while inline.last().is_some_and(|(_, d)| *d > depth) {
                inline.pop();
            }
        } else if t.is_ident("mod") {
            if let Some(name) = ident(tokens.get(i + 1)) {
                let next = tokens.get(i + 2);
                let is_inline = next.is_some_and(|n| n.is_punct('{'));
                if is_inline || next.is_some_and(|n| n.is_punct(';')) {
                    out.declared.push(Declared {
                        name: name.to_string(),
                        inline: inline.iter().map(|(n, _)| n.clone()).collect(),
                        is_inline,
                        line: t.line,
                    });
                    if is_inline {
                        inline.push((name.to_string(), depth + 1));
                    }
                    i += 2;
                    continue;
                }
            }
        } else if let Some(name) = ident(Some(t)) {
            let starts_path = tokens.get(i + 1).is_some_and(|n| n.tok == Tok::PathSep)
                && !(i > 0 && tokens[i - 1].tok == Tok::PathSep);
            if is_anchor(name) && starts_path {
                let here: Vec<String> = inline.iter().map(|(n, _)| n.clone()).collect();
                let mut leaves = Vec::new();
                i = path_tree(tokens, i, Vec::new(), &mut leaves);
                out.named.extend(leaves.into_iter().map(|(segments, line)| Named {
                    segments,
                    inline: here.clone(),
                    line,
                }));
                continue;
            }
        }
        i += 1;
    }
    out
}

/// Reads the path (tree) starting at `tokens[i]` below `prefix`, pushing each leaf path and
/// the line of its last segment; returns the index after it. A group `{a, b::c}` gives one
/// leaf per member, `*` and `self` their prefix.
fn path_tree(
    tokens: &[Token],
    mut i: usize,
    mut prefix: Vec<String>,
    leaves: &mut Vec<(Vec<String>, usize)>,
) -> usize {
    let mut line = tokens.get(i).map_or(0, |t| t.line);
    loop {
        let Some(t) = tokens.get(i) else {
            leaves.push((prefix, line));
            return i;
        };
        match &t.tok {
            Tok::Ident(name) => {
                prefix.push(name.clone());
                line = t.line;
                i += 1;
                if tokens.get(i).is_some_and(|n| n.tok == Tok::PathSep) {
                    i += 1;
                    continue;
                }
                leaves.push((prefix, line));
                return i;
            }
            Tok::Punct('{') => {
                i += 1;
                while i < tokens.len() && !tokens[i].is_punct('}') {
                    i = path_tree(tokens, i, prefix.clone(), leaves);
                    // Past `as name` and anything else up to the next member.
                    while i < tokens.len() && !tokens[i].is_punct(',') && !tokens[i].is_punct('}') {
                        i += 1;
                    }
                    if tokens.get(i).is_some_and(|n| n.is_punct(',')) {
                        i += 1;
                    }
                }
                return i + 1;
            }
            Tok::Punct('*') => {
                leaves.push((prefix, t.line));
                return i + 1;
            }
            _ => {
                // `crate::f::<T>` and the like: the path so far.
                leaves.push((prefix, line));
                return i;
            }
        }
    }
}

/// The absolute module path (from the crate root) that `segments`, written in the module
/// `here`, names; `None` where `super` would climb above the crate root or the path does not
/// start at `crate`, `super` or `self`.
pub fn resolve(here: &[String], segments: &[String]) -> Option<Vec<String>> {
    let (first, rest) = segments.split_first()?;
    let mut path: Vec<String> = match first.as_str() {
        "crate" => Vec::new(),
        "self" => here.to_vec(),
        "super" => {
            let (_, parent) = here.split_last()?;
            parent.to_vec()
        }
        _ => return None,
    };
    for segment in rest {
        match segment.as_str() {
            "super" => {
                path.pop()?;
            }
            "self" => {}
            _ => path.push(segment.clone()),
        }
    }
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::super::lexer::tokens;
    use super::*;

    fn named(source: &str) -> Vec<String> {
        scan(&tokens(source))
            .named
            .into_iter()
            .map(|n| {
                let mut s = n.segments.join("::");
                if !n.inline.is_empty() {
                    s = format!("{}: {s}", n.inline.join("::"));
                }
                format!("{}@{s}", n.line)
            })
            .collect()
    }

    fn v(path: &str) -> Vec<String> {
        path.split("::")
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn use_items_plain_grouped_and_public() {
        let source = "use crate::a::B;\npub use super::c::{self, d::E as F,\n  g::*};\nuse std::fmt;";
        assert_eq!(
            named(source),
            [
                "1@crate::a::B",
                "2@super::c::self",
                "2@super::c::d::E",
                "3@super::c::g"
            ]
        );
    }

    #[test]
    fn nested_groups_and_crate_groups() {
        assert_eq!(
            named("use crate::{a, b::{c, d::{self, e}}};"),
            [
                "1@crate::a",
                "1@crate::b::c",
                "1@crate::b::d::self",
                "1@crate::b::d::e"
            ]
        );
    }

    #[test]
    fn expression_paths_and_supers() {
        let source = "fn f() { let x = crate::a::f::<u8>(super::super::b::T::new()); self::c::g(); }";
        assert_eq!(
            named(source),
            ["1@crate::a::f", "1@super::super::b::T::new", "1@self::c::g"]
        );
    }

    #[test]
    fn visibility_is_no_path_but_dollar_crate_is() {
        assert_eq!(
            named("pub(crate) fn f() {} pub(super) struct S; macro_rules! m { () => { $crate::a::b() } }"),
            ["1@crate::a::b"]
        );
    }

    #[test]
    fn inline_modules_scope_their_paths() {
        let source = "mod x;\npub mod keys { use super::y; }\n#[cfg(test)]\nmod tests {\n  use super::*;\n  mod deep { fn f() { super::super::z(); } }\n}\nuse crate::w;";
        let scan = scan(&tokens(source));
        let declared: Vec<(String, bool, Vec<String>)> = scan
            .declared
            .iter()
            .map(|d| (d.name.clone(), d.is_inline, d.inline.clone()))
            .collect();
        assert_eq!(
            declared,
            [
                ("x".into(), false, vec![]),
                ("keys".into(), true, vec![]),
                ("tests".into(), true, vec![]),
                ("deep".into(), true, vec!["tests".to_string()]),
            ]
        );
        assert_eq!(
            named(source),
            [
                "2@keys: super::y",
                "5@tests: super",
                "6@tests::deep: super::super::z",
                "8@crate::w"
            ]
        );
    }

    #[test]
    fn resolving_climbs_and_stays_in_the_crate() {
        let here = v("a::b");
        assert_eq!(resolve(&here, &v("super::c::T")), Some(v("a::c::T")));
        assert_eq!(resolve(&here, &v("super::super::d")), Some(v("d")));
        assert_eq!(resolve(&here, &v("self::e")), Some(v("a::b::e")));
        assert_eq!(resolve(&here, &v("crate::f::self")), Some(v("f")));
        assert_eq!(resolve(&here, &v("super::super::super::x")), None);
        assert_eq!(resolve(&[], &v("super::x")), None);
        assert_eq!(resolve(&here, &v("std::x")), None);
    }
}
