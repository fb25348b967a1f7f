//! What the server checks of the items it stores: an app's inputs (a misspelt name flagged
//! by the inputs route and the Launch page) and a system a worker could never run.

mod common;

use common::fixture::create;
use common::*;

/// A name an app reads but never defines, alike a name it defines, is a misspelling more
/// likely than an input: the inputs route and the Launch page say which name it resembles.
#[test]
fn a_misspelt_variable_is_flagged_by_the_inputs_route_and_launch() {
    let (_server, port) = embedded_server(&[]);
    create(
        port,
        "/api/apps",
        r#"{"name": "typo", "body": "let gradBytes = 4.0e8;\nsim.log(`${gradByts}`);"}"#,
    );
    let (status, body) = http(port, "GET", "/api/apps/typo/inputs", "", None);
    assert_eq!(status, 200, "{body}");
    let inputs = json(&body);
    assert_eq!(inputs[0]["name"], "gradByts", "{body}");
    assert_eq!(inputs[0]["looks_like"], "gradBytes", "{body}");
    assert_eq!(inputs[0]["line"], 2, "{body}");
    let (status, page) = http_page(port, "/launch?app=typo");
    assert_eq!(status, 200);
    assert!(page.contains("misspelt gradBytes?"), "{page}");
}

/// A stored system runs on a worker that has none of the client's files: a kernel listing
/// named by a file is refused when the system is stored, not at every launch after.
#[test]
fn a_system_whose_kernel_listing_is_a_file_is_refused_when_stored() {
    let (_server, port) = embedded_server(&[]);
    let system = r#"[[node]]\nid = \"a\"\ncomponent = \"Intel Core i7-4790K\"\nmodel = \"cpu-flops\"\nlabels = { P = 1 }\n\n[[kernel]]\nname = \"saxpy2\"\nsass = \"saxpy2.sass\"\nparams = [\"n\"]\n"#;
    let (status, body) = http(
        port,
        "POST",
        "/api/systems",
        &format!(r#"{{"name": "with-file", "body": "{system}"}}"#),
        None,
    );
    assert_eq!(status, 422, "{body}");
    let body = json(&body);
    let error = body["error"].as_str().unwrap_or_default();
    assert!(
        error.starts_with("with-file: kernel `saxpy2`: `sass` names a file (saxpy2.sass)")
            && error.contains("`listing`"),
        "{body}"
    );
}
