//! The frame every page shares: head, navigation, who is signed in, main; and what a page
//! shows in place of a form the caller's role may not use.

use axum::http::Method;
use maud::{html, Markup, DOCTYPE};

use crate::access::{self, Identity};

const SECTIONS: [(&str, &str); 9] = [
    ("/", "Overview"),
    ("/components", "Components"),
    ("/models", "Models"),
    ("/systems", "Systems"),
    ("/apps", "Apps"),
    ("/traces", "Traces"),
    ("/launch", "Launch"),
    ("/occupancy", "Occupancy"),
    ("/api/docs", "API"),
];

/// A whole page titled `title` around `content`.
pub fn page(title: &str, content: Markup) -> Markup {
    page_with(title, content, None)
}

/// A page that reloads itself every `refresh_seconds` (a run still in progress).
pub fn page_with(title: &str, content: Markup, refresh_seconds: Option<u32>) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                @if let Some(seconds) = refresh_seconds {
                    meta http-equiv="refresh" content=(seconds);
                }
                title { (title) " · hetsim" }
                link rel="stylesheet" href="/ui/app.css";
                script src="/ui/app.js" defer {}
            }
            body {
                header {
                    a.brand href="/" { "hetsim" }
                    nav {
                        @for (href, name) in SECTIONS {
                            @if href != "/launch" || may_post(href) {
                                a href=(href) { (name) }
                            }
                        }
                    }
                    @if let Identity::Signed(caller) = crate::auth::identity() {
                        span.who { "Signed in as " strong.name { (caller.name) } " (" span.role { (caller.role) } ")" }
                        form.logout method="post" action="/logout" { button type="submit" { "Log out" } }
                    }
                }
                main { (content) }
            }
        }
    }
}

/// Whether the caller may post to `action`: a page offers a form's button only then.
pub fn may_post(action: &str) -> bool {
    crate::auth::allows(&Method::POST, action)
}

/// What a page shows in place of the button of a form posting to `action` that the caller's
/// role may not use: `what` ("changing the catalog") needs a higher role.
pub fn refused(action: &str, what: &str) -> Markup {
    let needed = access::needed(&Method::POST, action);
    let role = match crate::auth::identity() {
        Identity::Signed(caller) => caller.role.to_string(),
        Identity::Open | Identity::Anonymous => "none".to_owned(),
    };
    html! {
        p.muted.refused {
            (what) " needs the " (needed.map_or("", |r| r.as_str())) " role; your token's role is " (role) "."
        }
    }
}

/// One button that stores the shipped examples not stored yet (an admin's): an empty
/// server's first step, and still there once something is stored, so that examples removed
/// or added by a newer version can be loaded again.
pub fn load_examples() -> Markup {
    if !may_post("/examples") {
        return refused("/examples", "Loading the shipped examples");
    }
    html! {
        form.examples method="post" action="/examples" {
            button type="submit" { "Load the shipped examples" }
            span.muted { " the thesis's saxpy2 app on a GTX 970 and a Titan X, master-worker, multi-GPU training, a dumbbell network" }
        }
    }
}

/// A table with `headers` and rows of cells already rendered.
pub fn table<'a>(
    headers: impl IntoIterator<Item = &'a str>,
    rows: impl IntoIterator<Item = Markup>,
) -> Markup {
    html! {
        table {
            thead { tr { @for h in headers { th { (h) } } } }
            tbody { @for row in rows { (row) } }
        }
    }
}

/// A number as every table of hetsim writes it (`hetsim_service::table::number`).
pub use hetsim_service::table::number;
