//! A request example for each route of the API page: a `curl` command with the route's
//! method, its path (path parameters left as `{name}`), its required query parameters and,
//! for a JSON body, a body built from the schema: the schema's own `example` where it states
//! one, else each property with a value of its type.

use serde_json::{json, Map, Value};

/// How deep a synthesised body follows nested schemas; deeper objects are left empty.
const MAX_DEPTH: usize = 4;

/// The `curl` command for `method` on `path`, whose operation is `op` in document `doc`.
pub fn curl(doc: &Value, path: &str, method: &str, op: &Value) -> String {
    let mut command = format!(
        "curl -X {} -H \"Authorization: Bearer $HETSIM_TOKEN\"",
        method.to_uppercase()
    );
    let body = op["requestBody"]["content"]["application/json"]["schema"].clone();
    if !body.is_null() {
        let example = serde_json::to_string(&example(doc, &body, 0)).unwrap_or_default();
        command.push_str(&format!(
            " \\\n  -H \"Content-Type: application/json\" \\\n  -d '{}'",
            example.replace('\'', "'\\''")
        ));
    }
    command.push_str(&format!(" \\\n  \"http://127.0.0.1:8080{path}{}\"", query(op)));
    command
}

/// `?name=<name>&…` of the operation's required query parameters (empty when none).
fn query(op: &Value) -> String {
    let required: Vec<String> = op["parameters"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["in"] == "query" && p["required"] == true)
        .filter_map(|p| p["name"].as_str())
        .map(|name| format!("{name}=<{name}>"))
        .collect();
    if required.is_empty() {
        String::new()
    } else {
        format!("?{}", required.join("&"))
    }
}

/// A value that `schema` accepts.
fn example(doc: &Value, schema: &Value, depth: usize) -> Value {
    if let Some(given) = schema.get("example") {
        return given.clone();
    }
    if let Some(reference) = schema["$ref"].as_str() {
        let name = reference.rsplit('/').next().unwrap_or(reference);
        return example(doc, &doc["components"]["schemas"][name], depth);
    }
    if let Some(first) = ["oneOf", "anyOf", "allOf"].iter().find_map(|k| schema[k].get(0)) {
        return example(doc, first, depth);
    }
    if let Some(first) = schema["enum"].get(0) {
        return first.clone();
    }
    let kind = match &schema["type"] {
        Value::Array(types) => types
            .iter()
            .find(|t| *t != "null")
            .cloned()
            .unwrap_or(Value::Null),
        other => other.clone(),
    };
    match kind.as_str() {
        Some("object") if depth < MAX_DEPTH => object(doc, schema, depth),
        Some("object") => json!({}),
        Some("array") => json!([example(doc, &schema["items"], depth + 1)]),
        Some("string") => json!("string"),
        Some("integer") => json!(0),
        Some("number") => json!(0.0),
        Some("boolean") => json!(false),
        _ => Value::Null,
    }
}

fn object(doc: &Value, schema: &Value, depth: usize) -> Value {
    let properties = schema["properties"].as_object().into_iter().flatten();
    let map: Map<String, Value> = properties
        .map(|(name, property)| (name.clone(), example(doc, property, depth + 1)))
        .collect();
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_is_the_schemas_example_or_built_from_its_properties() {
        let doc = json!({"components": {"schemas": {
            "Token": {"type": "object", "properties": {"name": {"type": "string"}, "role": {"enum": ["read", "admin"]},
                      "ttl": {"type": ["integer", "null"]}, "tags": {"type": "array", "items": {"type": "string"}}}},
            "Submission": {"type": "object", "example": {"app_name": "saxpy2"}}
        }}});
        let op = |schema: &str| {
            json!({"requestBody": {"content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{schema}")}}}},
                                 "parameters": [{"name": "queue", "in": "query", "required": true}, {"name": "limit", "in": "query"}]})
        };
        let token = curl(&doc, "/api/tokens", "post", &op("Token"));
        assert!(
            token.starts_with("curl -X POST -H \"Authorization: Bearer $HETSIM_TOKEN\""),
            "{token}"
        );
        assert!(
            token.contains(r#"-d '{"name":"string","role":"read","ttl":0,"tags":["string"]}'"#),
            "{token}"
        );
        assert!(
            token.ends_with("\"http://127.0.0.1:8080/api/tokens?queue=<queue>\""),
            "{token}"
        );
        let submit = curl(&doc, "/api/runs", "post", &op("Submission"));
        assert!(submit.contains(r#"-d '{"app_name":"saxpy2"}'"#), "{submit}");
        let get = curl(&doc, "/api/runs/{id}", "get", &json!({}));
        assert_eq!(
            get,
            "curl -X GET -H \"Authorization: Bearer $HETSIM_TOKEN\" \\\n  \"http://127.0.0.1:8080/api/runs/{id}\""
        );
    }
}
