//! The OpenAPI schema of `GET /api/runs/{id}/trace`'s two shapes: the spans as stored
//! (`hetsim_simulator::Span`, derived from the type itself) and the Chrome trace-event
//! document that `hetsim_charts::chrome` writes (described here, as that code builds JSON).

use std::borrow::Cow;

use hetsim_simulator::{Span, SpanKind};
use serde_json::json;
use utoipa::openapi::{RefOr, Schema};
use utoipa::{PartialSchema, ToSchema};

/// The body of `GET /api/runs/{id}/trace`: an array of spans (`format=native`), or a Chrome
/// trace (`format=chrome`).
pub struct TraceDocument;

impl PartialSchema for TraceDocument {
    fn schema() -> RefOr<Schema> {
        let doc = json!({
            "oneOf": [
                {
                    "type": "array",
                    "description": "format=native: the spans as stored, in the order recorded",
                    "items": {"$ref": "#/components/schemas/Span"}
                },
                {"$ref": "#/components/schemas/ChromeTrace"}
            ]
        });
        from_json(doc)
    }
}

impl ToSchema for TraceDocument {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("TraceDocument")
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push(("Span".to_owned(), Span::schema()));
        schemas.push(("SpanKind".to_owned(), SpanKind::schema()));
        schemas.push(("ChromeTrace".to_owned(), chrome_trace()));
    }
}

/// The Chrome trace-event format as `hetsim_charts::chrome` writes it (times in µs).
fn chrome_trace() -> RefOr<Schema> {
    from_json(json!({
        "type": "object",
        "description": "format=chrome: Chrome's trace-event format (Perfetto, chrome://tracing); \
            one trace process per node, one thread per simulated process",
        "required": ["traceEvents", "displayTimeUnit"],
        "properties": {
            "traceEvents": {"type": "array", "items": {
                "type": "object",
                "required": ["ph", "pid", "tid"],
                "properties": {
                    "ph": {"type": "string", "enum": ["M", "X", "b", "e", "i"],
                        "description": "M: a node's or process's name; X: a compute, sleep, wait \
                            or collective; b/e: a message's begin and end; i: the truncation marker"},
                    "name": {"type": "string"},
                    "cat": {"$ref": "#/components/schemas/SpanKind"},
                    "pid": {"type": "integer", "description": "the node's trace process"},
                    "tid": {"type": "integer", "description": "the simulated process (its pid)"},
                    "id": {"type": "integer", "description": "pairs a message's b and e events"},
                    "ts": {"type": "number", "description": "start [µs]"},
                    "dur": {"type": "number", "description": "duration of an X event [µs]"},
                    "s": {"type": "string", "description": "an instant event's scope (g)"},
                    "args": {"type": "object", "description": "name (M events), detail, \
                        uncertainty_us"}
                }
            }},
            "displayTimeUnit": {"type": "string", "enum": ["ms"]},
            "otherData": {"type": "object", "description": "when the trace was capped",
                "properties": {
                    "truncated": {"type": "string"},
                    "spans_not_recorded": {"type": "integer"}
                }}
        }
    }))
}

/// A schema written as JSON; the texts above are fixed, so a failure is a bug found by the
/// OpenAPI test, and it falls back to an open object rather than failing the document.
fn from_json(doc: serde_json::Value) -> RefOr<Schema> {
    serde_json::from_value(doc).unwrap_or_else(|e| {
        tracing::error!("the trace's OpenAPI schema does not parse: {e}");
        RefOr::T(Schema::Object(utoipa::openapi::Object::new()))
    })
}
