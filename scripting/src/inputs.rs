//! The inputs an application declares: the variables its script reads, which of them it
//! must be given and which it can do without, found once from the source, and the one
//! check of a run's variables against them that `hetsim run`, `hetsim submit`, the API and
//! the Launch page all make.
//!
//! - **Read**: a name the script uses that nothing in the script defines (Rhai's own
//!   parser decides, in strict-variables mode, so a `let`, a loop variable or a function
//!   parameter of the same name is not an input). The names every script has
//!   ([`RESERVED_NAMES`]) are not inputs.
//! - **Optional**: the script asks `is_def_var("name")`, so it has a way on without it, or
//!   the author's doc comment declares a default; every other input is **required**. A
//!   script that needs a name only on some paths (one phase of several) is still taken to
//!   need it: guard such a read with `is_def_var` to make it optional.
//! - **Default**: the literal of `if is_def_var("name") { name } else { LITERAL }`, or what
//!   the doc comment says, written as `--var` takes it (a string without its quotes). A
//!   default declared by a doc comment for a name the script reads unguarded is given to
//!   the run ([`with_declared_defaults`]) when the run leaves the name out.
//! - **Doc comment**: a line `//! name [unit] = default: description`, best at the top of
//!   the app (unit, default and description each optional), e.g.
//!   `//! numElements [elements]: length of each array`.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, OnceLock};

use hetsim_system::{Variable, RESERVED_NAMES};
use rhai::{Dynamic, ParseErrorType, Scope};
use serde::Serialize;

use crate::errors::{parse_error, ScriptError};
use crate::run::parsing_engine;
use crate::typos;

/// One variable an app reads.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AppInput {
    pub name: String,
    /// The script cannot run without it: it never asks `is_def_var` and no default is
    /// declared.
    pub required: bool,
    /// The script asks `is_def_var("name")`.
    pub guarded: bool,
    /// The value the app uses when it is not given, as written for a person (a string
    /// without its quotes).
    pub default: Option<String>,
    /// The same value typed: a string stays a string (`"64"`), a number is a number.
    pub default_value: Option<Variable>,
    pub unit: Option<String>,
    pub description: Option<String>,
    /// The line of the script's first read of it.
    pub line: Option<usize>,
    /// A name the script defines (a `let`, a parameter, a function) that this one is most
    /// likely a misspelling of: then the script needs a fix, not an input.
    pub looks_like: Option<String>,
}

/// Apps whose inputs [`app_inputs`] remembers (the Launch page and every submission of a
/// stored app ask again for the same text).
const CACHED_APPS: usize = 64;

/// The inputs of `app` (Rhai source named `origin`), required first, each group in the
/// order the script first reads them. Finding them compiles the app once per input (at
/// most [`MAX_INPUTS`] + 1 times), so the answer is remembered for the last
/// [`CACHED_APPS`] texts; an async caller runs it off its executor's threads.
pub fn app_inputs(app: &str, origin: &str) -> Result<Vec<AppInput>, ScriptError> {
    static CACHE: OnceLock<Mutex<HashMap<String, Vec<AppInput>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Mutex::default);
    if let Some(inputs) = cache.lock().ok().and_then(|c| c.get(app).cloned()) {
        return Ok(inputs);
    }
    let inputs = find_inputs(app, origin)?;
    if let Ok(mut c) = cache.lock() {
        if c.len() >= CACHED_APPS {
            c.clear();
        }
        c.insert(app.to_owned(), inputs.clone());
    }
    Ok(inputs)
}

fn find_inputs(app: &str, origin: &str) -> Result<Vec<AppInput>, ScriptError> {
    let docs = doc_comments(app);
    let defined = typos::defined_names(app);
    let mut inputs: Vec<AppInput> = free_variables(app, origin)?
        .into_iter()
        .map(|(name, line)| {
            let doc = docs.get(&name);
            let guarded = guards(app, &name).next().is_some();
            let declared = doc.and_then(|d| d.default.clone());
            let required = !guarded && declared.is_none();
            let literal = declared.or_else(|| literal_default(app, &name));
            AppInput {
                required,
                guarded,
                default: literal.as_deref().map(unquoted),
                default_value: literal.as_deref().map(typed),
                unit: doc.and_then(|d| d.unit.clone()),
                description: doc.and_then(|d| d.description.clone()),
                line,
                looks_like: typos::closest(&name, defined.iter().map(String::as_str)).map(str::to_owned),
                name,
            }
        })
        .collect();
    inputs.sort_by_key(|i| !i.required);
    Ok(inputs)
}

/// The most variables an app may read. Each is one more compile of the app (below), so the
/// cost grows with their number: 256 keep a large app's check within tens of milliseconds.
pub const MAX_INPUTS: usize = 256;

/// The names `app` reads without defining them, each with the line of its first read, in the order Rhai's parser meets them:
/// each round of a strict-variables compile stops at the first undefined name, which then
/// joins the scope of the next round (so the rounds are at most [`MAX_INPUTS`] + 1).
fn free_variables(app: &str, origin: &str) -> Result<Vec<(String, Option<usize>)>, ScriptError> {
    let mut engine = parsing_engine();
    engine.set_strict_variables(true);
    let mut scope = Scope::new();
    for name in RESERVED_NAMES {
        scope.push_constant_dynamic(name, Dynamic::UNIT);
    }
    let mut found = Vec::new();
    loop {
        match engine.compile_with_scope(&scope, app) {
            Ok(_) => return Ok(found),
            Err(error) => match error.err_type() {
                ParseErrorType::VariableUndefined(_) if found.len() == MAX_INPUTS => {
                    return Err(ScriptError::Other(format!(
                        "{origin}: reads more than {MAX_INPUTS} variables (the most an app may read)"
                    )));
                }
                ParseErrorType::VariableUndefined(name) if !found.iter().any(|(n, _)| n == name) => {
                    scope.push_constant_dynamic(name.clone(), Dynamic::UNIT);
                    found.push((name.clone(), error.position().line()));
                }
                _ => return Err(parse_error(origin, app, error)),
            },
        }
    }
}

/// What a `//! name [unit] = default: description` line says of one input.
#[derive(Clone, Debug, Default, PartialEq)]
struct Doc {
    unit: Option<String>,
    default: Option<String>,
    description: Option<String>,
}

fn doc_comments(app: &str) -> BTreeMap<String, Doc> {
    app.lines()
        .filter_map(|line| line.trim_start().strip_prefix("//!"))
        .filter_map(doc_line)
        .collect()
}

fn doc_line(text: &str) -> Option<(String, Doc)> {
    let text = text.trim();
    let name_end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    let (name, mut rest) = text.split_at(name_end);
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let mut doc = Doc::default();
    rest = rest.trim_start();
    if let Some(after) = rest.strip_prefix('[') {
        let (unit, after) = after.split_once(']')?;
        doc.unit = non_empty(unit);
        rest = after.trim_start();
    }
    if let Some(after) = rest.strip_prefix('=') {
        let (default, description) = split_default(after);
        doc.default = non_empty(default);
        rest = description;
    }
    let description = match rest.strip_prefix(':') {
        Some(description) => description,
        None if rest.is_empty() => "",
        None => return None,
    };
    doc.description = non_empty(description);
    Some((name.to_owned(), doc))
}

/// Splits `= "a: b": description` at the first colon outside quotes.
fn split_default(text: &str) -> (&str, &str) {
    let mut quoted = false;
    for (i, c) in text.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ':' if !quoted => return (&text[..i], &text[i..]),
            _ => {}
        }
    }
    (text, "")
}

fn non_empty(text: &str) -> Option<String> {
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// Where `app` asks `is_def_var` of `name` (`"name"` or `` `name` ``, spaces allowed inside
/// the parentheses): the text after each call's closing parenthesis.
fn guards<'a>(app: &'a str, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    app.match_indices("is_def_var").filter_map(move |(at, call)| {
        let rest = app[at + call.len()..]
            .trim_start()
            .strip_prefix('(')?
            .trim_start();
        let quote = rest.chars().next().filter(|q| *q == '"' || *q == '`')?;
        let rest = rest[1..].strip_prefix(name)?.strip_prefix(quote)?;
        rest.trim_start().strip_prefix(')')
    })
}

/// The `LITERAL` of `is_def_var("name") { name } else { LITERAL }`, when it is a number, a
/// quoted string or a boolean.
fn literal_default(app: &str, name: &str) -> Option<String> {
    guards(app, name).find_map(|rest| {
        let rest = rest
            .trim_start()
            .strip_prefix('{')?
            .trim_start()
            .strip_prefix(name)?;
        let rest = rest.trim_start().strip_prefix('}')?.trim_start();
        let rest = rest.strip_prefix("else")?.trim_start().strip_prefix('{')?;
        let literal = rest.split_once('}')?.0.trim();
        is_literal(literal).then(|| literal.to_owned())
    })
}

/// A literal as the run would be given it: a quoted string stays a string, `1_000` is 1000.
fn typed(literal: &str) -> Variable {
    match literal.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        Some(text) => Variable::Text(text.to_owned()),
        None => Variable::infer(&literal.replace('_', "")),
    }
}

fn unquoted(text: &str) -> String {
    let text = text.trim();
    let inner = text.strip_prefix('"').and_then(|t| t.strip_suffix('"'));
    inner.unwrap_or(text).to_owned()
}

/// `variables` with the default of every unguarded input that declares one and that
/// `variables` leaves out: the script reads the name whatever happens, so the run must have
/// it.
pub fn with_declared_defaults(
    inputs: &[AppInput],
    mut variables: BTreeMap<String, Variable>,
) -> BTreeMap<String, Variable> {
    for (name, value) in declared_defaults(inputs) {
        variables.entry(name).or_insert(value);
    }
    variables
}

/// The default of every unguarded input that declares one (see [`with_declared_defaults`]).
pub fn declared_defaults(inputs: &[AppInput]) -> impl Iterator<Item = (String, Variable)> + '_ {
    inputs
        .iter()
        .filter(|i| !i.guarded)
        .filter_map(|i| Some((i.name.clone(), i.default_value.clone()?)))
}

fn is_literal(text: &str) -> bool {
    let quoted = text.len() >= 2
        && text.starts_with('"')
        && text.ends_with('"')
        && !text[1..text.len() - 1].contains('"');
    quoted || text == "true" || text == "false" || text.replace('_', "").parse::<f64>().is_ok()
}

/// Why a run's variables do not fit its app.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct VariableError {
    /// The variable at fault (given but not read, or read but not given).
    pub name: String,
    pub message: String,
}

/// The one check of a run's variables: each given name is one the app reads (else the
/// closest it reads is suggested, and all of them listed), no name every script has is
/// taken, and every required input is given. `origin` names the app in messages.
pub fn check_variables<'a>(
    inputs: &[AppInput],
    given: impl IntoIterator<Item = &'a str>,
    origin: &str,
) -> Result<(), VariableError> {
    let given: Vec<&str> = given.into_iter().collect();
    for name in &given {
        if RESERVED_NAMES.contains(name) {
            return Err(VariableError {
                name: (*name).to_owned(),
                message: format!(
                    "`{name}` is a reserved name (every script has {}); it cannot be a variable",
                    RESERVED_NAMES.join(", ")
                ),
            });
        }
        if !inputs.iter().any(|i| i.name == *name) {
            return Err(VariableError {
                name: (*name).to_owned(),
                message: format!("{origin} never reads `{name}`{}", hint(inputs, name)),
            });
        }
    }
    let missing: Vec<&AppInput> = inputs
        .iter()
        .filter(|i| i.required && !given.contains(&i.name.as_str()))
        .collect();
    if let Some((input, original)) = missing.iter().find_map(|i| misspelt(i, &given)) {
        return Err(VariableError {
            name: input.name.clone(),
            message: format!(
                "{origin}{}: `{}` is defined nowhere in the app and not given: did you mean \
                 `{original}`? (if it is an input, give it a value)",
                input.line.map_or(String::new(), |l| format!(":{l}")),
                input.name,
            ),
        });
    }
    match missing.first() {
        None => Ok(()),
        Some(first) => Err(VariableError {
            name: first.name.clone(),
            message: format!(
                "{origin} needs {}: give {}",
                names(missing.iter().map(|i| i.name.as_str())),
                if missing.len() == 1 { "it" } else { "each" },
            ),
        }),
    }
}

/// The name a missing input most likely misspells: one the app defines or one given. (Of two
/// alike inputs neither given, which is the typo is anyone's guess: both are asked for.)
fn misspelt<'a>(input: &'a AppInput, given: &[&'a str]) -> Option<(&'a AppInput, &'a str)> {
    let original = input
        .looks_like
        .as_deref()
        .or_else(|| typos::closest(&input.name, given.iter().copied()))?;
    Some((input, original))
}

fn hint(inputs: &[AppInput], name: &str) -> String {
    if inputs.is_empty() {
        return "; it reads no variables".to_owned();
    }
    let closest = inputs
        .iter()
        .map(|i| {
            (
                strsim::jaro_winkler(&name.to_lowercase(), &i.name.to_lowercase()),
                &i.name,
            )
        })
        .filter(|(score, _)| *score > 0.85)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    let guess = closest.map_or(String::new(), |(_, w)| format!("; did you mean `{w}`?"));
    format!(
        "{guess} (it reads {})",
        names(inputs.iter().map(|i| i.name.as_str()))
    )
}

fn names<'a>(names: impl Iterator<Item = &'a str>) -> String {
    names.map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const APP: &str = r#"
//! numElements [elements]: length of each array
//! mode = "fast": how to run, "fast" or "slow"
let n = numElements * 2;
let rounds = if is_def_var("rounds") { rounds } else { 10 };
let mode = if is_def_var("mode") && mode == "slow" { 1 } else { 0 };
for i in 0..rounds { let x = i + blockSize; }
fn twice(numElements) { numElements * 2 }
if tag == "A" { sim.log(`${rank} ${labels}`); }
"#;

    fn inputs() -> Vec<AppInput> {
        app_inputs(APP, "app.rhai").unwrap()
    }

    #[test]
    fn inputs_are_the_undefined_names_required_first() {
        let all = inputs();
        let found: Vec<(&str, bool)> = all.iter().map(|i| (i.name.as_str(), i.required)).collect();
        assert_eq!(
            found,
            [
                ("numElements", true),
                ("blockSize", true),
                ("rounds", false),
                ("mode", false)
            ]
        );
    }

    #[test]
    fn defaults_come_from_the_else_literal_or_the_doc_comment() {
        let all = inputs();
        let get = |n: &str| all.iter().find(|i| i.name == n).unwrap().clone();
        assert_eq!(get("rounds").default.as_deref(), Some("10"));
        assert_eq!(get("mode").default.as_deref(), Some("fast"));
        assert_eq!(
            get("mode").description.as_deref(),
            Some("how to run, \"fast\" or \"slow\"")
        );
        assert_eq!(get("numElements").unit.as_deref(), Some("elements"));
        assert_eq!(
            get("numElements").description.as_deref(),
            Some("length of each array")
        );
        assert_eq!(get("blockSize").default, None);
    }

    #[test]
    fn a_declared_default_makes_an_unguarded_input_optional_and_is_given() {
        let app =
            "//! size = 64: bytes\n//! mode = \"a\"\nlet x = size + 1;\nif is_def_var(\"mode\") { mode }";
        let all = app_inputs(app, "app.rhai").unwrap();
        assert!(all.iter().all(|i| !i.required), "{all:?}");
        assert!(check_variables(&all, [], "app.rhai").is_ok());
        let given = with_declared_defaults(&all, BTreeMap::new());
        assert_eq!(given, BTreeMap::from([("size".to_owned(), Variable::Int(64))]));
        let kept = with_declared_defaults(&all, BTreeMap::from([("size".to_owned(), Variable::Int(8))]));
        assert_eq!(kept["size"], Variable::Int(8));
    }

    #[test]
    fn guards_allow_spaces_and_backticks_and_defaults_keep_their_type() {
        let app = "let a = if is_def_var( `n` ) { n } else { 1_000 };\nlet b = if is_def_var(\"s\") { s } else { \"64\" };";
        let all = app_inputs(app, "app.rhai").unwrap();
        let get = |n: &str| all.iter().find(|i| i.name == n).unwrap().clone();
        assert!(!get("n").required && get("n").guarded);
        assert_eq!(get("n").default_value, Some(Variable::Int(1000)));
        assert_eq!(get("s").default_value, Some(Variable::Text("64".into())));
        assert_eq!(get("s").default.as_deref(), Some("64"));
    }

    #[test]
    fn an_app_reading_too_many_variables_is_refused() {
        let app: String = (0..=MAX_INPUTS).map(|i| format!("v{i};")).collect();
        let err = app_inputs(&app, "big.rhai").unwrap_err();
        assert!(err.to_string().contains("more than 256 variables"), "{err}");
    }

    #[test]
    fn a_syntax_error_names_the_line() {
        let err = app_inputs("let x = 1;\nlet = 2;", "bad.rhai").unwrap_err();
        assert!(err.to_string().starts_with("bad.rhai:2:"), "{err}");
    }

    #[test]
    fn unknown_names_are_refused_with_the_apps_names() {
        let all = inputs();
        let err = check_variables(&all, ["numElements", "blockSize", "blocksize"], "app.rhai").unwrap_err();
        assert_eq!(err.name, "blocksize");
        assert_eq!(
            err.message,
            "app.rhai never reads `blocksize`; did you mean `blockSize`? \
             (it reads `numElements`, `blockSize`, `rounds`, `mode`)"
        );
        let err = check_variables(&all, ["foo"], "app.rhai").unwrap_err();
        assert!(
            err.message.starts_with("app.rhai never reads `foo` (it reads"),
            "{err}"
        );
        let err = check_variables(&[], ["foo"], "app.rhai").unwrap_err();
        assert_eq!(err.message, "app.rhai never reads `foo`; it reads no variables");
    }

    #[test]
    fn a_misspelt_variable_is_named_at_its_line_with_its_original() {
        let app = "let gradBytes = 4.0e8;\nsim.allreduce(gradByts);\n";
        let inputs = app_inputs(app, "typo.rhai").unwrap();
        assert_eq!(inputs[0].looks_like.as_deref(), Some("gradBytes"));
        let error = check_variables(&inputs, [], "typo.rhai").unwrap_err();
        assert_eq!(error.name, "gradByts");
        assert!(
            error
                .message
                .starts_with("typo.rhai:2: `gradByts` is defined nowhere")
                && error.message.contains("did you mean `gradBytes`?"),
            "{}",
            error.message
        );
        let given = "sim.allreduce(gradBytes);\nsim.allreduce(gradByts);\n";
        let inputs = app_inputs(given, "typo.rhai").unwrap();
        let error = check_variables(&inputs, ["gradBytes"], "typo.rhai").unwrap_err();
        assert!(
            error.message.contains("did you mean `gradBytes`?"),
            "{}",
            error.message
        );
    }

    #[test]
    fn missing_required_inputs_are_all_named() {
        let err = check_variables(&inputs(), ["rounds"], "app.rhai").unwrap_err();
        assert_eq!(err.name, "numElements");
        assert_eq!(
            err.message,
            "app.rhai needs `numElements`, `blockSize`: give each"
        );
        assert!(check_variables(&inputs(), ["numElements", "blockSize"], "app.rhai").is_ok());
    }

    #[test]
    fn reserved_names_are_refused() {
        let err = check_variables(&inputs(), ["tag"], "app.rhai").unwrap_err();
        assert!(err.message.contains("every script has"), "{err}");
    }

    #[test]
    fn doc_lines_parse_each_part() {
        assert_eq!(
            doc_line(" taskOps [FLOP] = 1e9: work of one task"),
            Some((
                "taskOps".into(),
                Doc {
                    unit: Some("FLOP".into()),
                    default: Some("1e9".into()),
                    description: Some("work of one task".into())
                }
            ))
        );
        assert_eq!(doc_line(" plain"), Some(("plain".into(), Doc::default())));
        assert_eq!(doc_line(" A sentence of prose."), None);
        assert_eq!(doc_line(" 3 things"), None);
    }
}
