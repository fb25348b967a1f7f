//! Rust source text as the tokens the module scan needs: identifiers, `::`, and single
//! punctuation characters, each with its 1-based line. Comments (line, doc and nested block
//! comments), string literals (plain, byte, C, raw with any number of `#`), character and
//! byte literals, lifetimes and numbers are dropped, so that a path in a comment or a
//! string names nothing.

/// What a token is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tok {
    /// An identifier or keyword (`crate`, `super`, `use`, `r#type` as `type`).
    Ident(String),
    /// The path separator `::`.
    PathSep,
    /// Any other single character outside whitespace.
    Punct(char),
}

/// A token and the 1-based line it starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub tok: Tok,
    pub line: usize,
}

impl Token {
    /// Whether this is the identifier `name`.
    pub fn is_ident(&self, name: &str) -> bool {
        matches!(&self.tok, Tok::Ident(i) if i == name)
    }

    /// Whether this is the punctuation character `c`.
    pub fn is_punct(&self, c: char) -> bool {
        self.tok == Tok::Punct(c)
    }
}

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// A cursor over the characters of one source file that counts lines.
struct Cursor {
    chars: Vec<char>,
    at: usize,
    line: usize,
}

impl Cursor {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    /// Moves one character on, counting a newline.
    fn bump(&mut self) {
        if self.peek(0) == Some('\n') {
            self.line += 1;
        }
        self.at += 1;
    }

    fn bump_n(&mut self, n: usize) {
        for _ in 0..n {
            self.bump();
        }
    }

    fn read_ident(&mut self) -> String {
        let start = self.at;
        while self.peek(0).is_some_and(is_ident_char) {
            self.at += 1;
        }
        self.chars[start..self.at].iter().collect()
    }

    /// After `//`: up to (not past) the end of the line.
    fn skip_line_comment(&mut self) {
        while self.peek(0).is_some_and(|c| c != '\n') {
            self.at += 1;
        }
    }

    /// At `/*`: past the matching `*/`, block comments nesting.
    fn skip_block_comment(&mut self) {
        self.bump_n(2);
        let mut depth = 1;
        while depth > 0 && self.peek(0).is_some() {
            match (self.peek(0), self.peek(1)) {
                (Some('/'), Some('*')) => {
                    depth += 1;
                    self.bump_n(2);
                }
                (Some('*'), Some('/')) => {
                    depth -= 1;
                    self.bump_n(2);
                }
                _ => self.bump(),
            }
        }
    }

    /// At the opening `"` of a string with escapes: past the closing `"`.
    fn skip_string(&mut self) {
        self.bump();
        while let Some(c) = self.peek(0) {
            match c {
                '\\' => self.bump_n(2),
                '"' => {
                    self.bump();
                    return;
                }
                _ => self.bump(),
            }
        }
    }

    /// At the first `#` or the `"` after `r`: past the closing `"` and as many `#`.
    fn skip_raw_string(&mut self) {
        let mut hashes = 0;
        while self.peek(0) == Some('#') {
            hashes += 1;
            self.bump();
        }
        self.bump(); // the opening quote
        while self.peek(0).is_some() {
            if self.peek(0) == Some('"') && (1..=hashes).all(|k| self.peek(k) == Some('#')) {
                self.bump_n(1 + hashes);
                return;
            }
            self.bump();
        }
    }

    /// At `'`: past a character literal (`'a'`, `'\n'`, `'\u{2764}'`) or a lifetime (`'a`).
    fn skip_quote(&mut self) {
        if self.peek(1) == Some('\\') {
            self.bump_n(3);
            while self.peek(0).is_some_and(|c| c != '\'') {
                self.bump();
            }
            self.bump();
        } else if self.peek(2) == Some('\'') {
            self.bump_n(3);
        } else {
            self.bump();
            self.read_ident();
        }
    }

    /// Whether the characters from here are `#`… then `"` (a raw string's opening).
    fn raw_string_follows(&self) -> bool {
        let mut k = 0;
        while self.peek(k) == Some('#') {
            k += 1;
        }
        self.peek(k) == Some('"')
    }
}

/// The tokens of `source`, without comments and literals.
pub fn tokens(source: &str) -> Vec<Token> {
    let mut cur = Cursor {
        chars: source.chars().collect(),
        at: 0,
        line: 1,
    };
    let mut out = Vec::new();
    while let Some(c) = cur.peek(0) {
        let line = cur.line;
        match (c, cur.peek(1)) {
            ('/', Some('/')) => cur.skip_line_comment(),
            ('/', Some('*')) => cur.skip_block_comment(),
            ('"', _) => cur.skip_string(),
            ('\'', _) => cur.skip_quote(),
            (':', Some(':')) => {
                cur.bump_n(2);
                out.push(Token {
                    tok: Tok::PathSep,
                    line,
                });
            }
            _ if c.is_whitespace() => cur.bump(),
            _ if c.is_ascii_digit() => {
                cur.read_ident();
            }
            _ if is_ident_start(c) => {
                let ident = cur.read_ident();
                match (ident.as_str(), cur.peek(0)) {
                    ("b" | "c", Some('"')) => cur.skip_string(),
                    ("b", Some('\'')) => cur.skip_quote(),
                    ("r" | "br" | "cr", Some('"' | '#')) if cur.raw_string_follows() => cur.skip_raw_string(),
                    ("r", Some('#')) if cur.peek(1).is_some_and(is_ident_start) => {
                        cur.bump();
                        let raw = cur.read_ident();
                        out.push(Token {
                            tok: Tok::Ident(raw),
                            line,
                        });
                    }
                    _ => out.push(Token {
                        tok: Tok::Ident(ident),
                        line,
                    }),
                }
            }
            _ => {
                cur.bump();
                out.push(Token {
                    tok: Tok::Punct(c),
                    line,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idents(source: &str) -> Vec<String> {
        tokens(source)
            .into_iter()
            .filter_map(|t| match t.tok {
                Tok::Ident(i) => Some(i),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn comments_and_literals_name_nothing() {
        let source = r####"
//! use crate::doc;
/// crate::item_doc
// crate::line
/* crate::block /* nested crate::inner */ still */
let a = "crate::string \" crate::escaped";
let b = r#"crate::raw " still"#;
let c = br##"crate::bytes"##;
let d = b"crate::b";
let e = '"'; let f = '\''; let g = b'x'; let h = '\u{2764}';
fn k<'a>(x: &'a str) {}
let r#type = 1u32;
"####;
        assert_eq!(
            idents(source),
            [
                "let", "a", "let", "b", "let", "c", "let", "d", "let", "e", "let", "f", "let", "g", "let",
                "h"
            ]
            .into_iter()
            .chain(["fn", "k", "x", "str", "let", "type"])
            .collect::<Vec<_>>()
        );
    }

    #[test]
    fn lines_count_through_skipped_text() {
        let toks = tokens("/* a\nb */ x\n\"s\ns\" y\n// c\nz");
        let lines: Vec<(String, usize)> = toks
            .into_iter()
            .filter_map(|t| match t.tok {
                Tok::Ident(i) => Some((i, t.line)),
                _ => None,
            })
            .collect();
        assert_eq!(
            lines,
            [("x".to_string(), 2), ("y".to_string(), 4), ("z".to_string(), 6)]
        );
    }

    #[test]
    fn path_separators_are_one_token() {
        let toks = tokens("crate::a::{b, c}");
        assert_eq!(toks[1].tok, Tok::PathSep);
        assert!(toks[4].is_punct('{'));
        assert_eq!(toks.len(), 9);
    }
}
