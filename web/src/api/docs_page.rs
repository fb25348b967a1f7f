//! `/api/docs`: the OpenAPI document as one HTML page, rendered here from the document
//! itself (routes grouped by tag, with their methods, summaries, parameters, request and
//! response schemas and a request example, then every schema). No script and no CDN: it works on a server without
//! internet, and adds no bundle to the repository (docs/SERVER.md says why not Swagger UI).

use hetsim_charts::escape;
use std::fmt::Write as _;
use std::sync::OnceLock;

use axum::response::Html;
use serde_json::Value;

/// This API's reference, as an HTML page.
#[utoipa::path(get, path = "/api/docs", tag = "service",
    responses((status = 200, description = "The API's reference as HTML", content_type = "text/html")))]
pub(super) async fn page() -> Html<&'static str> {
    static PAGE: OnceLock<String> = OnceLock::new();
    Html(PAGE.get_or_init(|| {
        let doc = serde_json::to_value(super::document()).unwrap_or(Value::Null);
        render(&doc)
    }))
}

/// The methods an OpenAPI path item may hold, in the order the page lists them.
const METHODS: [&str; 5] = ["get", "post", "put", "delete", "patch"];

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}\
code,pre{font-family:ui-monospace,monospace}pre{background:#f5f5f5;padding:.5rem;overflow-x:auto}\
.op{border-left:4px solid #ccc;padding:.2rem 1rem;margin:1rem 0}.method{display:inline-block;min-width:4.5rem;font-weight:bold}\
.get{color:#0a6}.post{color:#06c}.put{color:#a60}.delete{color:#c22}.patch{color:#808}\
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:.2rem .5rem;text-align:left;vertical-align:top}";

/// The page of OpenAPI document `doc` (as JSON).
pub fn render(doc: &Value) -> String {
    let title = text(&doc["info"]["title"]);
    let mut html = format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title} API</title>\
         <style>{STYLE}</style></head><body><h1>{title} API {}</h1><p>{}</p>\
         <p>The machine-readable document: <a href=\"/api/openapi.json\"><code>/api/openapi.json</code></a>.</p>\
         <p>Each route ends with a request example. On a server open to all, leave out its \
         <code>Authorization</code> header; a body built from its schema shows every field, \
         of which a request gives those it needs.</p>",
        text(&doc["info"]["version"]),
        text(&doc["info"]["description"]),
    );
    let tags = tags(doc);
    html.push_str("<nav><ul>");
    for (name, _) in &tags {
        let _ = write!(html, "<li><a href=\"#tag-{0}\">{0}</a></li>", escape(name));
    }
    html.push_str("<li><a href=\"#schemas\">schemas</a></li></ul></nav>");
    for (name, description) in &tags {
        let _ = write!(
            html,
            "<h2 id=\"tag-{0}\">{0}</h2><p>{1}</p>",
            escape(name),
            escape(description)
        );
        for (path, method, operation) in operations(doc).filter(|(_, _, op)| has_tag(op, name)) {
            render_operation(&mut html, path, method, operation);
            let example = super::request_example::curl(doc, path, method, operation);
            let _ = write!(html, "<pre class=\"example\">{}</pre></div>", escape(&example));
        }
    }
    html.push_str("<h2 id=\"schemas\">Schemas</h2>");
    if let Some(schemas) = doc["components"]["schemas"].as_object() {
        for (name, schema) in schemas {
            let pretty = serde_json::to_string_pretty(schema).unwrap_or_default();
            let _ = write!(
                html,
                "<h3 id=\"schema-{0}\">{0}</h3><pre>{1}</pre>",
                escape(name),
                escape(&pretty)
            );
        }
    }
    html.push_str("</body></html>");
    html
}

/// The document's tags with their descriptions, in its order.
fn tags(doc: &Value) -> Vec<(String, String)> {
    doc["tags"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| (plain(&t["name"]), plain(&t["description"])))
        .collect()
}

/// Every operation: its path, its method and the operation object.
fn operations(doc: &Value) -> impl Iterator<Item = (&str, &'static str, &Value)> {
    doc["paths"]
        .as_object()
        .into_iter()
        .flatten()
        .flat_map(|(path, item)| {
            METHODS
                .into_iter()
                .filter_map(move |m| item.get(m).map(|op| (path.as_str(), m, op)))
        })
}

fn has_tag(operation: &Value, tag: &str) -> bool {
    operation["tags"]
        .as_array()
        .is_some_and(|tags| tags.iter().any(|t| t == tag))
}

fn render_operation(html: &mut String, path: &str, method: &str, op: &Value) {
    let _ = write!(
        html,
        "<div class=\"op\"><h3><span class=\"method {method}\">{}</span> <code>{}</code></h3><p>{}</p>",
        method.to_uppercase(),
        escape(path),
        [text(&op["summary"]), text(&op["description"])]
            .into_iter()
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
            .join("\n\n")
            .replace("\n\n", "</p><p>"),
    );
    if let Some(parameters) = op["parameters"].as_array().filter(|p| !p.is_empty()) {
        html.push_str("<table><tr><th>parameter</th><th>in</th><th>type</th><th></th></tr>");
        for p in parameters {
            let required = if p["required"] == true {
                "required"
            } else {
                "optional"
            };
            let _ = write!(
                html,
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{required}. {}</td></tr>",
                text(&p["name"]),
                text(&p["in"]),
                schema_label(&p["schema"]),
                text(&p["description"]),
            );
        }
        html.push_str("</table>");
    }
    if let Some(content) = op["requestBody"]["content"].as_object() {
        for (media, body) in content {
            let _ = write!(
                html,
                "<p>Request body ({}): {}</p>",
                escape(media),
                schema_label(&body["schema"])
            );
        }
    }
    html.push_str("<table><tr><th>status</th><th>meaning</th><th>body</th></tr>");
    for (status, response) in op["responses"].as_object().into_iter().flatten() {
        let bodies: Vec<String> = response["content"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(media, c)| format!("{} ({})", schema_label(&c["schema"]), escape(media)))
            .collect();
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(status),
            text(&response["description"]),
            bodies.join("<br>")
        );
    }
    html.push_str("</table>");
}

/// A schema in a few words: a link to a named schema, `array of …`, a type, or `any`.
fn schema_label(schema: &Value) -> String {
    if let Some(reference) = schema["$ref"].as_str() {
        let name = escape(reference.rsplit('/').next().unwrap_or(reference));
        return format!("<a href=\"#schema-{name}\">{name}</a>");
    }
    if let Some(variants) = schema["oneOf"].as_array() {
        let labels: Vec<String> = variants.iter().map(schema_label).collect();
        return labels.join(" | ");
    }
    let types: Vec<String> = match &schema["type"] {
        Value::String(t) => vec![t.clone()],
        Value::Array(ts) => ts.iter().map(plain).collect(),
        _ => Vec::new(),
    };
    if types.is_empty() {
        return "any".to_owned();
    }
    types
        .iter()
        .map(|t| match t.as_str() {
            "array" => format!("array of {}", schema_label(&schema["items"])),
            other => escape(other),
        })
        .collect::<Vec<_>>()
        .join(" or ")
}

/// A JSON string as it is, or empty.
fn plain(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_owned()
}

/// A JSON string, escaped for HTML.
fn text(value: &Value) -> String {
    escape(&plain(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_groups_the_routes_by_tag_with_their_schemas_and_escapes_text() {
        let doc = serde_json::json!({
            "info": {"title": "t", "version": "1", "description": "a <b> & c"},
            "tags": [{"name": "runs", "description": "Runs"}],
            "paths": {"/api/runs/{id}": {"get": {
                "tags": ["runs"], "description": "One run.",
                "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
                "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Run"}}}}}
            }}},
            "components": {"schemas": {"Run": {"type": "object"}}}
        });
        let page = render(&doc);
        assert!(page.contains("a &lt;b&gt; &amp; c"), "{page}");
        assert!(page.contains("<h2 id=\"tag-runs\">runs</h2>"), "{page}");
        assert!(
            page.contains("<span class=\"method get\">GET</span> <code>/api/runs/{id}</code>"),
            "{page}"
        );
        assert!(
            page.contains("<td><code>id</code></td><td>path</td><td>string</td><td>required."),
            "{page}"
        );
        assert!(
            page.contains("<a href=\"#schema-Run\">Run</a> (application/json)"),
            "{page}"
        );
        assert!(page.contains("<h3 id=\"schema-Run\">Run</h3>"), "{page}");
    }
}
