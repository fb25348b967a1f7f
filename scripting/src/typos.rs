//! Names an app defines, and the closest of them to a name it reads without defining: the
//! difference between an input it needs and a misspelt variable (`gradByts` beside a
//! `let gradBytes`), which Rhai's parser alone cannot tell.
//!
//! The scan is lexical, not Rhai's: it takes the identifier after `let`, `const`, `fn` and
//! `for` (and the names of `for (a, b)`), a function's parameters and a closure's `|a, b|`,
//! outside strings and comments. A name it misses only costs a hint.

/// How alike two names must be (Jaro–Winkler, case folded) to offer one for the other:
/// `gradByts`/`gradBytes` score 0.98, `blockSize`/`gridSize` 0.76.
const ALIKE: f64 = 0.9;

/// The names `app` defines (`let`, `const`, `fn`, loop variables, parameters), in order,
/// each once.
pub fn defined_names(app: &str) -> Vec<String> {
    let tokens = tokens(app);
    let mut names: Vec<String> = Vec::new();
    let mut add = |name: &str| {
        if !names.iter().any(|n| n == name) {
            names.push(name.to_owned());
        }
    };
    for (i, token) in tokens.iter().enumerate() {
        let after = |k: usize| tokens.get(i + k).map(String::as_str);
        match token.as_str() {
            "let" | "const" | "for" | "fn" => {
                if let Some(name) = after(1).filter(|t| is_identifier(t)) {
                    add(name);
                }
                let parameters_from = match (token.as_str(), after(1), after(2)) {
                    ("for", Some("("), _) => Some(i + 2),
                    ("fn", Some(_), Some("(")) => Some(i + 3),
                    _ => None,
                };
                if let Some(from) = parameters_from {
                    list_until(&tokens[from..], ")").for_each(&mut add);
                }
            }
            "|" if i == 0 || matches!(tokens[i - 1].as_str(), "=" | "(" | "," | "[" | "{" | ";") => {
                list_until(&tokens[i + 1..], "|").for_each(&mut add);
            }
            _ => {}
        }
    }
    names
}

/// The name among `candidates` that `name` most likely misspells, if one is alike enough.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let folded = name.to_lowercase();
    candidates
        .into_iter()
        .filter(|c| *c != name)
        .map(|c| (strsim::jaro_winkler(&folded, &c.to_lowercase()), c))
        .filter(|(score, _)| *score >= ALIKE)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// The identifiers of a comma-separated list up to `end`.
fn list_until<'t>(tokens: &'t [String], end: &'t str) -> impl Iterator<Item = &'t str> + 't {
    tokens
        .iter()
        .take_while(move |t| *t != end)
        .map(String::as_str)
        .filter(|t| is_identifier(t))
}

fn is_identifier(token: &str) -> bool {
    token.starts_with(|c: char| c.is_alphabetic() || c == '_')
        && !matches!(
            token,
            "let" | "const" | "fn" | "for" | "in" | "if" | "else" | "true" | "false"
        )
}

/// Identifiers and single punctuation characters of `app`, skipping strings, characters,
/// back-ticked templates and comments.
fn tokens(app: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut chars = app.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' | '\'' | '`' => skip_quoted(&mut chars, c),
            '/' if chars.peek() == Some(&'/') => {
                chars.by_ref().take_while(|&c| c != '\n').for_each(drop);
            }
            '/' if chars.peek() == Some(&'*') => skip_block_comment(&mut chars),
            c if c.is_alphanumeric() || c == '_' => {
                let mut word = c.to_string();
                while let Some(&next) = chars.peek().filter(|n| n.is_alphanumeric() || **n == '_') {
                    word.push(next);
                    chars.next();
                }
                tokens.push(word);
            }
            c if c.is_whitespace() => {}
            c => tokens.push(c.to_string()),
        }
    }
    tokens
}

fn skip_quoted(chars: &mut std::iter::Peekable<std::str::Chars>, quote: char) {
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            c if c == quote => return,
            _ => {}
        }
    }
}

fn skip_block_comment(chars: &mut std::iter::Peekable<std::str::Chars>) {
    chars.next();
    let mut previous = ' ';
    for c in chars.by_ref() {
        if previous == '*' && c == '/' {
            return;
        }
        previous = c;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_of_every_kind_are_found_outside_strings_and_comments() {
        let app = r#"
let gradBytes = 4.0e8; // let commented = 1;
const STEPS = 3;
fn step(bytes, rank) { bytes * 2 }
for (i, x) in [1, 2] { }
for k in 0..STEPS { }
let f = |a, b| a + b;
let s = "let quoted = 1";
/* const hidden = 2; */
"#;
        assert_eq!(
            defined_names(app),
            [
                "gradBytes",
                "STEPS",
                "step",
                "bytes",
                "rank",
                "i",
                "x",
                "k",
                "f",
                "a",
                "b",
                "s"
            ]
        );
    }

    #[test]
    fn a_misspelt_name_finds_its_original_and_an_unlike_one_finds_none() {
        let names = ["gradBytes", "blockSize"];
        assert_eq!(closest("gradByts", names), Some("gradBytes"));
        assert_eq!(closest("GradBytes", names), Some("gradBytes"));
        assert_eq!(closest("gridSize", names), None);
        assert_eq!(closest("gradBytes", names), None, "a name is not its own typo");
    }
}
