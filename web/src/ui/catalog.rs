//! `/components`: the hardware catalog, filtered by kind; a component's page edits its
//! attributes and the source they come from.

use std::collections::BTreeMap;

use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use axum::Form;
use hetsim_models::units::attribute_unit;
use hetsim_models::Scalar;
use hetsim_system::ComponentSpec;
use maud::{html, Markup};
use serde::Deserialize;

use super::{encode, layout, see_other, PageResult};
use crate::error::ApiError;
use crate::state::AppState;
use hetsim_service::storage::ComponentRecord;

const KINDS: [&str; 4] = ["GPU", "CPU", "NETWORK", "SWITCH"];

#[derive(Deserialize)]
pub struct Filter {
    kind: Option<String>,
}

pub async fn list(State(s): State<AppState>, Query(filter): Query<Filter>) -> PageResult<Markup> {
    let kind = filter.kind.filter(|k| !k.is_empty());
    let all = s.store.components(None, None).await?;
    Ok(list_page(&all, kind.as_deref(), &ComponentForm::default(), None))
}

fn list_page(
    all: &[ComponentRecord],
    kind: Option<&str>,
    draft: &ComponentForm,
    error: Option<&str>,
) -> Markup {
    let shown = all
        .iter()
        .filter(|c| kind.is_none_or(|k| c.spec.kind.eq_ignore_ascii_case(k)));
    layout::page(
        "Components",
        html! {
            h1 { "Components" }
            form.filters method="get" action="/components" {
                label { "Kind "
                    select name="kind" data-autosubmit {
                        option value="" { "all" }
                        @for k in KINDS { option value=(k) selected[kind == Some(k)] { (k) } }
                    }
                }
                noscript { button type="submit" { "Filter" } }
            }
            (layout::table(
                ["name", "kind", "vendor", "attributes", "source"],
                shown.map(|c| html! {
                    tr {
                        td { a href={ "/components/" (encode(&c.spec.name)) } { (c.spec.name) } }
                        td { (c.spec.kind) }
                        td { (c.spec.vendor) }
                        td.num { (c.spec.attributes.len()) }
                        td.source { (c.spec.source) }
                    }
                }),
            ))
            h2 #new { "New component" }
            (component_form("/components", draft, error, "Create"))
        },
    )
}

/// The fields of a component's form; attributes one `key = value` a line.
#[derive(Default, Deserialize)]
pub struct ComponentForm {
    name: String,
    kind: String,
    #[serde(default)]
    vendor: String,
    #[serde(default)]
    comment: String,
    #[serde(default)]
    source: String,
    #[serde(default)]
    attributes: String,
}

impl ComponentForm {
    fn of(spec: &ComponentSpec) -> Self {
        let attributes = spec
            .attributes
            .iter()
            .map(|(k, v)| match v {
                Scalar::Number(x) => format!("{k} = {x}"),
                Scalar::Text(t) => format!("{k} = \"{t}\""),
            })
            .collect::<Vec<_>>()
            .join("\n");
        ComponentForm {
            name: spec.name.clone(),
            kind: spec.kind.clone(),
            vendor: spec.vendor.clone(),
            comment: spec.comment.clone(),
            source: spec.source.clone(),
            attributes,
        }
    }

    /// The component, or what is wrong with the form (the field, and the line of an
    /// attribute).
    fn spec(&self) -> Result<ComponentSpec, String> {
        if self.name.trim().is_empty() {
            return Err("name: a component needs a name".to_owned());
        }
        let spec = ComponentSpec {
            name: self.name.trim().to_owned(),
            kind: self.kind.clone(),
            vendor: self.vendor.trim().to_owned(),
            comment: self.comment.trim().to_owned(),
            source: self.source.trim().to_owned(),
            attributes: parse_attributes(&self.attributes)?,
        };
        spec.to_component().map_err(|e| format!("kind: {e}"))?;
        Ok(spec)
    }
}

/// `key = value` lines: a number where the value reads as one, else a text (quotes
/// optional); blank lines and `#` comments are skipped.
fn parse_attributes(text: &str) -> Result<BTreeMap<String, Scalar>, String> {
    let mut out = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            return Err(format!(
                "attributes, line {}: expected `key = value`, found {line:?}",
                i + 1
            ));
        };
        let (key, value) = (key.trim(), value.trim());
        if key.is_empty() {
            return Err(format!("attributes, line {}: the key before `=` is empty", i + 1));
        }
        let scalar = match value.parse::<f64>() {
            Ok(x) if x.is_finite() => Scalar::Number(x),
            _ => Scalar::Text(value.trim_matches('"').to_owned()),
        };
        out.insert(key.to_owned(), scalar);
    }
    Ok(out)
}

fn component_form(action: &str, form: &ComponentForm, error: Option<&str>, button: &str) -> Markup {
    html! {
        form.card method="post" action=(action) {
            @if let Some(error) = error { p.error role="alert" { (error) } }
            div.fields {
                label { "Name " input name="name" value=(form.name) required; }
                label { "Kind "
                    select name="kind" {
                        @for k in KINDS { option value=(k) selected[form.kind.eq_ignore_ascii_case(k)] { (k) } }
                    }
                }
                label { "Vendor " input name="vendor" value=(form.vendor); }
                label.wide { "Source (where the figures come from) " input name="source" value=(form.source); }
                label.wide { "Comment " input name="comment" value=(form.comment); }
            }
            label.wide { span { "Attributes, one " code { "key = value" } " a line" }
                textarea name="attributes" rows="12" spellcheck="false" { (form.attributes) }
            }
            @if layout::may_post(action) {
                button type="submit" { (button) }
            } @else {
                (layout::refused(action, "Changing the catalog"))
            }
        }
    }
}

pub async fn create(State(s): State<AppState>, Form(form): Form<ComponentForm>) -> PageResult<Response> {
    let refuse = |all: Vec<ComponentRecord>, form: &ComponentForm, error: String| {
        let page = list_page(&all, None, form, Some(&error));
        Ok((axum::http::StatusCode::UNPROCESSABLE_ENTITY, page).into_response())
    };
    let spec = match form.spec() {
        Ok(spec) => spec,
        Err(e) => return refuse(s.store.components(None, None).await?, &form, e),
    };
    if !s.store.components(None, Some(&spec.name)).await?.is_empty() {
        let error = format!("name: a component named {:?} exists", spec.name);
        return refuse(s.store.components(None, None).await?, &form, error);
    }
    s.store.insert_component(&spec).await?;
    Ok(see_other(&format!("/components/{}", encode(&spec.name))))
}

/// Whether a component other than `id` has `name` (a rename onto a taken name).
async fn name_taken_by_another(s: &AppState, name: &str, id: &str) -> PageResult<bool> {
    let holders = s.store.components(None, Some(name)).await?;
    Ok(holders.iter().any(|c| c.id != id))
}

async fn by_name(s: &AppState, name: &str) -> PageResult<ComponentRecord> {
    s.store
        .components(None, Some(name))
        .await?
        .pop()
        .ok_or_else(|| ApiError::not_found("component", name).into())
}

pub async fn edit(State(s): State<AppState>, Path(name): Path<String>) -> PageResult<Markup> {
    let record = by_name(&s, &name).await?;
    Ok(edit_page(&record, &ComponentForm::of(&record.spec), None))
}

fn edit_page(record: &ComponentRecord, form: &ComponentForm, error: Option<&str>) -> Markup {
    let spec = &record.spec;
    let action = format!("/components/{}", encode(&spec.name));
    layout::page(
        &spec.name,
        html! {
            p.crumbs { a href="/components" { "Components" } " / " (spec.kind) }
            h1 { (spec.name) }
            @if !spec.source.is_empty() { p.source { "Source: " (spec.source) } }
            @if !spec.comment.is_empty() { p { (spec.comment) } }
            @if spec.kind.eq_ignore_ascii_case("GPU") {
                p { a href={ "/occupancy?gpu=" (encode(&spec.name)) } { "Occupancy of a kernel on this GPU" } }
            }
            h2 { "Attributes" }
            (layout::table(
                ["attribute", "value", "unit"],
                spec.attributes.iter().map(|(k, v)| html! {
                    tr {
                        td { code { (k) } }
                        td.num { (match v { Scalar::Number(x) => layout::number(*x), Scalar::Text(t) => t.clone() }) }
                        td.muted { (attribute_unit(k).unwrap_or("")) }
                    }
                }),
            ))
            h2 { "Edit" }
            (component_form(&action, form, error, "Save"))
        },
    )
}

pub async fn update(
    State(s): State<AppState>,
    Path(name): Path<String>,
    Form(form): Form<ComponentForm>,
) -> PageResult<Response> {
    let record = by_name(&s, &name).await?;
    let checked = match form.spec() {
        Ok(spec) if name_taken_by_another(&s, &spec.name, &record.id).await? => {
            Err(format!("name: a component named {:?} exists", spec.name))
        }
        checked => checked,
    };
    let spec = match checked {
        Ok(spec) => spec,
        Err(e) => {
            let page = edit_page(&record, &form, Some(&e));
            return Ok((axum::http::StatusCode::UNPROCESSABLE_ENTITY, page).into_response());
        }
    };
    s.store.update_component(&record.id, &spec).await?;
    Ok(see_other(&format!("/components/{}", encode(&spec.name))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attribute_lines_read_numbers_and_texts_and_name_a_bad_line() {
        let read = parse_attributes("bandwidth = 15.8e9\n# a note\n\ncomputeCapability = \"9.0\"").unwrap();
        assert_eq!(read["bandwidth"], Scalar::Number(15.8e9));
        assert_eq!(read["computeCapability"], Scalar::Text("9.0".into()));
        let error = parse_attributes("a = 1\nnot an attribute").unwrap_err();
        assert!(error.contains("line 2"), "{error}");
    }
}
