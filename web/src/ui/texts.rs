//! `/models`, `/systems`, `/apps`: the named texts, each edited in a code editor with line
//! numbers; a text the server refuses comes back with the error shown at its line.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Form;
use maud::{html, Markup};
use serde::Deserialize;

use super::{encode, layout, see_other, PageResult};
use crate::error::ApiError;
use crate::state::AppState;
use hetsim_service::storage::{app_title, Library, Named, Refused};
use hetsim_system::BUILTIN_MODELS;

/// What the pages of one library call it.
struct Kind {
    library: Library,
    /// The URL and the title: "apps", "Apps".
    path: &'static str,
    title: &'static str,
    /// One of them: "app".
    one: &'static str,
    /// The editor's language, for its class: "rhai", "toml".
    language: &'static str,
    help: &'static str,
    template: &'static str,
    /// Read-only texts shipped with hetsim, by name (the built-in computational models).
    builtin: &'static [(&'static str, &'static str)],
}

const APPS: Kind = Kind {
    builtin: &[],
    library: Library::Apps,
    path: "apps",
    title: "Apps",
    one: "app",
    language: "rhai",
    help: "Application models: a Rhai script run once per process, with tag, rank, pid, labels, the run's variables and the sim.* primitives in scope (docs/SIMULATION.md).",
    template: "// Each process computes, then the first sends its result to the second.\nsim.compute(#{ ops: 1e9 });\nif rank == 0 {\n    sim.send(1e6, [tag, 1]);\n}\n",
};

const MODELS: Kind = Kind {
    builtin: &BUILTIN_MODELS,
    library: Library::Models,
    path: "models",
    title: "Models",
    one: "model",
    language: "rhai",
    help: "Computational models: Rhai defining compute_time(params) or transfer_time(params); a system names them by name.",
    template: "fn compute_time(params) {\n    params.ops / params.component.flops\n}\n",
};

const SYSTEMS: Kind = Kind {
    builtin: &[],
    library: Library::Systems,
    path: "systems",
    title: "Systems",
    one: "system",
    language: "toml",
    help: "System models: nodes with their component, computational model and process labels, and the links between them (TOML or JSON).",
    template: "[[node]]\nid = \"host\"\ncomponent = \"Intel Core i7-4790K\"\nmodel = \"cpu-flops\"\nlabels = { Worker = 2 }\n",
};

#[derive(Deserialize)]
pub struct TextForm {
    name: String,
    body: String,
}

async fn list(s: &AppState, kind: &Kind) -> PageResult<Markup> {
    let items = s.store.named(kind.library, None, None).await?;
    Ok(list_page(
        kind,
        &items,
        &TextForm {
            name: String::new(),
            body: kind.template.to_owned(),
        },
        None,
    ))
}

fn list_page(kind: &Kind, items: &[Named], draft: &TextForm, error: Option<&Refusal>) -> Markup {
    layout::page(
        kind.title,
        html! {
            h1 { (kind.title) }
            p.muted { (kind.help) }
            @if items.is_empty() && kind.builtin.is_empty() {
                p.muted { "None stored yet." }
                (layout::load_examples())
            } @else if items.is_empty() {
                p.muted { "None stored yet: the built-in ones below serve every system that names them." }
            } @else {
                (layout::table(
                    ["name", "lines"],
                    items.iter().map(|item| html! {
                        tr {
                            td { a href={ "/" (kind.path) "/" (encode(&item.name)) } { (item.name) } }
                            td.num { (item.body.lines().count()) }
                        }
                    }),
                ))
                @if kind.builtin.is_empty() { (layout::load_examples()) }
            }
            @if !kind.builtin.is_empty() {
                h2 #builtin { "Built in (read-only)" }
                p.muted { "A system names one by its name; copy one into a new " (kind.one) " to change it (a stored one of the same name shadows it)." }
                @for (name, source) in kind.builtin {
                    details.builtin {
                        summary { code { (name) } " " span.muted { (first_comment(name, source)) } }
                        pre { code { (source) } }
                    }
                }
            }
            h2 #new { "New " (kind.one) }
            (editor(kind, &format!("/{}", kind.path), draft, error, true))
        },
    )
}

/// The first line of a source's leading comment, without its `//` and its `name:`.
fn first_comment<'a>(name: &str, source: &'a str) -> &'a str {
    let line = app_title(source).unwrap_or("");
    line.strip_prefix(name)
        .and_then(|rest| rest.strip_prefix(':'))
        .unwrap_or(line)
        .trim()
}

/// Why the editor's text was refused: the message, and the line of the text it is about
/// where the compiler or parser says.
struct Refusal {
    message: String,
    line: Option<usize>,
}

impl From<Refused> for Refusal {
    fn from(refused: Refused) -> Self {
        Refusal {
            line: refused.line(),
            message: refused.to_string(),
        }
    }
}

/// A code editor: line numbers beside a textarea (kept in step by app.js while typing),
/// the line an error names marked.
fn editor(kind: &Kind, action: &str, form: &TextForm, error: Option<&Refusal>, new: bool) -> Markup {
    let bad_line = error.and_then(|e| e.line);
    let lines = form.body.lines().count().max(1);
    html! {
        form.card.editor-form method="post" action=(action) {
            label { "Name " input name="name" value=(form.name) required readonly[!new]; }
            @if let Some(error) = error {
                p.error role="alert" {
                    @if let Some(line) = bad_line { a href={ "#line-" (line) } { "Line " (line) } ": " }
                    (error.message)
                }
            }
            div.editor data-error-line=[bad_line] {
                pre.gutter aria-hidden="true" {
                    @for n in 1..=lines {
                        span id={ "line-" (n) } class=[(bad_line == Some(n)).then_some("bad")] { (n) "\n" }
                    }
                }
                textarea name="body" class=(kind.language) rows=(lines.clamp(12, 40)) spellcheck="false" wrap="off" { (form.body) }
            }
            @if layout::may_post(action) {
                button type="submit" { @if new { "Create" } @else { "Save" } }
            } @else {
                (layout::refused(action, "Changing the catalog"))
            }
        }
    }
}

async fn create(s: &AppState, kind: &Kind, form: TextForm) -> PageResult<Response> {
    let item = Named {
        id: String::new(),
        name: form.name.trim().to_owned(),
        body: form.body.replace("\r\n", "\n"),
    };
    let refused = match kind.library.check(&item) {
        Err(refused) => Some(Refusal::from(refused)),
        Ok(())
            if !s
                .store
                .named(kind.library, None, Some(&item.name))
                .await?
                .is_empty() =>
        {
            Some(Refusal {
                message: format!("name: {:?} exists", item.name),
                line: None,
            })
        }
        Ok(()) => None,
    };
    if let Some(refusal) = refused {
        let items = s.store.named(kind.library, None, None).await?;
        let form = TextForm {
            name: item.name,
            body: item.body,
        };
        return Ok((
            StatusCode::UNPROCESSABLE_ENTITY,
            list_page(kind, &items, &form, Some(&refusal)),
        )
            .into_response());
    }
    s.store.insert_named(kind.library, &item).await?;
    Ok(see_other(&format!("/{}/{}", kind.path, encode(&item.name))))
}

async fn by_name(s: &AppState, kind: &Kind, name: &str) -> PageResult<Named> {
    s.store
        .named(kind.library, None, Some(name))
        .await?
        .pop()
        .ok_or_else(|| ApiError::not_found(kind.one, name).into())
}

async fn edit(s: &AppState, kind: &Kind, name: &str) -> PageResult<Markup> {
    let item = by_name(s, kind, name).await?;
    Ok(edit_page(
        kind,
        &TextForm {
            name: item.name,
            body: item.body,
        },
        None,
    ))
}

fn edit_page(kind: &Kind, form: &TextForm, error: Option<&Refusal>) -> Markup {
    let action = format!("/{}/{}", kind.path, encode(&form.name));
    let launch = match kind.library {
        _ if !layout::may_post("/launch") => None,
        Library::Apps => Some(format!("/launch?app={}", encode(&form.name))),
        Library::Systems => Some(format!("/launch?system={}", encode(&form.name))),
        Library::Models => None,
    };
    layout::page(
        &form.name,
        html! {
            p.crumbs { a href={ "/" (kind.path) } { (kind.title) } }
            h1 { (form.name) }
            @if let Some(launch) = launch { p { a.button href=(launch) { "Launch with this " (kind.one) } } }
            (editor(kind, &action, form, error, false))
        },
    )
}

async fn update(s: &AppState, kind: &Kind, name: &str, form: TextForm) -> PageResult<Response> {
    let stored = by_name(s, kind, name).await?;
    let item = Named {
        id: stored.id.clone(),
        name: stored.name,
        body: form.body.replace("\r\n", "\n"),
    };
    if let Err(refused) = kind.library.check(&item) {
        let form = TextForm {
            name: item.name,
            body: item.body,
        };
        return Ok((
            StatusCode::UNPROCESSABLE_ENTITY,
            edit_page(kind, &form, Some(&Refusal::from(refused))),
        )
            .into_response());
    }
    s.store.update_named(kind.library, &stored.id, &item).await?;
    Ok(see_other(&format!("/{}/{}", kind.path, encode(&item.name))))
}

/// The four handlers of one library's pages.
macro_rules! text_pages {
    ($kind:expr, $list:ident, $create:ident, $edit:ident, $update:ident) => {
        pub async fn $list(State(s): State<AppState>) -> PageResult<Markup> {
            list(&s, &$kind).await
        }
        pub async fn $create(State(s): State<AppState>, Form(form): Form<TextForm>) -> PageResult<Response> {
            create(&s, &$kind, form).await
        }
        pub async fn $edit(State(s): State<AppState>, Path(name): Path<String>) -> PageResult<Markup> {
            edit(&s, &$kind, &name).await
        }
        pub async fn $update(
            State(s): State<AppState>,
            Path(name): Path<String>,
            Form(form): Form<TextForm>,
        ) -> PageResult<Response> {
            update(&s, &$kind, &name, form).await
        }
    };
}

text_pages!(APPS, list_apps, create_app, edit_app, update_app);
text_pages!(MODELS, list_models, create_model, edit_model, update_model);
text_pages!(SYSTEMS, list_systems, create_system, edit_system, update_system);

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(library: Library, name: &str, body: &str) -> Refusal {
        let item = Named {
            id: String::new(),
            name: name.to_owned(),
            body: body.to_owned(),
        };
        Refusal::from(library.check(&item).expect_err("refused"))
    }

    #[test]
    fn the_error_line_comes_from_rhai_and_toml_errors() {
        let rhai = "let a = 1;\nlet b = 2;\nlet c = 3;\nlet d = 4;\nlet e = 5;\nlet f = 6;\nlet g = (7;\n";
        let app = refusal(Library::Apps, "ring", rhai);
        assert_eq!(app.line, Some(7), "{}", app.message);
        let toml = "[[node]]\nname = \"a\"\n\nthis is not toml\n";
        let system = refusal(Library::Systems, "sys", toml);
        assert_eq!(system.line, Some(4), "{}", system.message);
        // A schema error is marked at the line of its path (the link's table), a misspelt
        // key at its own line.
        let missing = refusal(Library::Systems, "sys", "[[link]]\n");
        assert_eq!(missing.line, Some(1), "{}", missing.message);
        let misspelt = refusal(
            Library::Systems,
            "sys",
            "[[node]]\nid = \"a\"\ncomponent = \"x\"\nmodel = \"cpu-flops\"\ncout = 2\n",
        );
        assert_eq!(misspelt.line, Some(5), "{}", misspelt.message);
    }
}
