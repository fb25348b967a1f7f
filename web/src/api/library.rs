//! Components and their attributes; computational models, system models and application
//! models (named texts).

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;

use hetsim_system::ComponentSpec;
use utoipa::IntoParams;

use super::openapi::{BodyErrors, NotFound};
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::extract::{Body, Path};
use crate::state::AppState;
use hetsim_models::Scalar as AttributeValue;
use hetsim_service::storage::{Attribute, ComponentRecord, Library, Named};
use hetsim_service::submit::AppInput;
use hetsim_system::ComponentSpec as Component;

/// The stored item a catalog route is about: its id, or its name. An id wins over a name
/// (an item named like another's id never hides that item).
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)] // a parameter's documentation only: the handlers read it as a String
struct IdOrName {
    /// The item's id, or its name (percent-encoded). An id wins over a name.
    id_or_name: String,
}

/// The id of the component that `key` names (its id, else its name), or a 404.
async fn component_id(s: &AppState, key: &str) -> ApiResult<String> {
    s.store
        .component_id(key)
        .await?
        .ok_or_else(|| ApiError::not_found_by_id_or_name("component", key))
}

/// Every component, by name.
#[utoipa::path(get, path = "/api/components", tag = "components",
    responses((status = 200, description = "The components", body = Vec<ComponentRecord>)))]
pub async fn list_components(State(s): State<AppState>) -> ApiResult<Json<Vec<ComponentRecord>>> {
    Ok(Json(s.store.components(None, None).await?))
}

/// One component with its attributes.
#[utoipa::path(get, path = "/api/components/{id_or_name}", tag = "components", params(IdOrName),
    responses((status = 200, description = "The component", body = ComponentRecord), NotFound))]
pub async fn show_component(
    State(s): State<AppState>,
    Path(key): Path<String>,
) -> ApiResult<Json<ComponentRecord>> {
    let id = component_id(&s, &key).await?;
    s.store
        .components(Some(&id), None)
        .await?
        .pop()
        .map(Json)
        .ok_or_else(|| ApiError::not_found_by_id_or_name("component", &key))
}

/// Adds a component to the catalog.
#[utoipa::path(post, path = "/api/components", tag = "components", request_body = Component,
    responses(
        (status = 201, description = "Stored", body = ComponentRecord),
        BodyErrors,
        (status = 409, description = "The name is taken", body = ErrorBody),
    ))]
pub async fn create_component(
    State(s): State<AppState>,
    Body(spec): Body<ComponentSpec>,
) -> ApiResult<(StatusCode, Json<ComponentRecord>)> {
    if spec.name.trim().is_empty() {
        return Err(ApiError::invalid("name", "a component needs a name"));
    }
    spec.to_component().map_err(|e| ApiError::invalid("kind", e))?;
    if !s.store.components(None, Some(&spec.name)).await?.is_empty() {
        return Err(ApiError::Conflict {
            field: Some("name"),
            message: format!("a component named {:?} exists", spec.name),
        });
    }
    let id = s.store.insert_component(&spec).await?;
    Ok((StatusCode::CREATED, Json(ComponentRecord { id, spec })))
}

/// Replaces a component's fields and attributes (a rename too).
#[utoipa::path(put, path = "/api/components/{id_or_name}", tag = "components", params(IdOrName), request_body = Component,
    responses(
        (status = 200, description = "Replaced", body = ComponentRecord),
        BodyErrors,
        NotFound,
        (status = 409, description = "Renamed onto a taken name", body = ErrorBody),
    ))]
pub async fn update_component(
    State(s): State<AppState>,
    Path(key): Path<String>,
    Body(spec): Body<ComponentSpec>,
) -> ApiResult<Json<ComponentRecord>> {
    spec.to_component().map_err(|e| ApiError::invalid("kind", e))?;
    let id = component_id(&s, &key).await?;
    if s.store.update_component(&id, &spec).await? {
        Ok(Json(ComponentRecord { id, spec }))
    } else {
        Err(ApiError::not_found_by_id_or_name("component", &key))
    }
}

/// Deletes a component.
#[utoipa::path(delete, path = "/api/components/{id_or_name}", tag = "components", params(IdOrName),
    responses((status = 204, description = "Deleted"), NotFound))]
pub async fn delete_component(State(s): State<AppState>, Path(key): Path<String>) -> ApiResult<StatusCode> {
    let id = component_id(&s, &key).await?;
    if s.store.delete_component(&id).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found_by_id_or_name("component", &key))
    }
}

/// Sets one attribute of a component: the body is a JSON number or string.
#[utoipa::path(put, path = "/api/components/{id_or_name}/attributes/{key}", tag = "components",
    params(IdOrName, ("key" = String, Path, description = "The attribute, e.g. `performance`")),
    request_body = AttributeValue,
    responses((status = 204, description = "Set"), BodyErrors, NotFound))]
pub async fn put_attribute(
    State(s): State<AppState>,
    Path((component, key)): Path<(String, String)>,
    Body(value): Body<Attribute>,
) -> ApiResult<StatusCode> {
    let id = component_id(&s, &component).await?;
    if s.store.set_attribute(&id, &key, &value).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found_by_id_or_name("component", &component))
    }
}

async fn list(s: &AppState, library: Library) -> ApiResult<Json<Vec<Named>>> {
    Ok(Json(s.store.named(library, None, None).await?))
}

/// The id of the item of `library` that `key` names (its id, else its name), or a 404.
async fn named_id(s: &AppState, library: Library, what: &'static str, key: &str) -> ApiResult<String> {
    s.store
        .named_id(library, key)
        .await?
        .ok_or_else(|| ApiError::not_found_by_id_or_name(what, key))
}

async fn show(s: &AppState, library: Library, what: &'static str, key: &str) -> ApiResult<Json<Named>> {
    let id = named_id(s, library, what, key).await?;
    s.store
        .named(library, Some(&id), None)
        .await?
        .pop()
        .map(Json)
        .ok_or_else(|| ApiError::not_found_by_id_or_name(what, key))
}

/// Checks a named text before it is stored: Rhai sources compile, systems parse.
fn check(library: Library, item: &Named) -> ApiResult<()> {
    library
        .check(item)
        .map_err(|refused| ApiError::invalid(refused.field(), refused.to_string()))
}

async fn create(s: &AppState, library: Library, item: Named) -> ApiResult<(StatusCode, Json<Named>)> {
    check(library, &item)?;
    if !s.store.named(library, None, Some(&item.name)).await?.is_empty() {
        return Err(ApiError::Conflict {
            field: Some("name"),
            message: format!("{:?} exists", item.name),
        });
    }
    let id = s.store.insert_named(library, &item).await?;
    Ok((StatusCode::CREATED, Json(Named { id, ..item })))
}

async fn update(
    s: &AppState,
    library: Library,
    what: &'static str,
    key: &str,
    item: Named,
) -> ApiResult<Json<Named>> {
    check(library, &item)?;
    let id = named_id(s, library, what, key).await?;
    if s.store.update_named(library, &id, &item).await? {
        Ok(Json(Named { id, ..item }))
    } else {
        Err(ApiError::not_found_by_id_or_name(what, key))
    }
}

async fn delete(s: &AppState, library: Library, what: &'static str, key: &str) -> ApiResult<StatusCode> {
    let id = named_id(s, library, what, key).await?;
    if s.store.delete_named(library, &id).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found_by_id_or_name(what, key))
    }
}

/// The five handlers of one library of named texts, with their OpenAPI operations:
/// `$collection` is the route (`/api/models`), `$item` the route of one item.
macro_rules! named_handlers {
    ($library:expr, $what:literal, $tag:literal, $collection:literal, $item:literal,
     $list:ident, $show:ident, $create:ident, $update:ident, $delete:ident) => {
        #[doc = concat!("Every ", $what, ", by name.")]
        #[utoipa::path(get, path = $collection, tag = $tag, summary = concat!("Every ", $what, ", by name."),
            responses((status = 200, description = "The items", body = Vec<Named>)))]
        pub async fn $list(State(s): State<AppState>) -> ApiResult<Json<Vec<Named>>> {
            list(&s, $library).await
        }
        #[doc = concat!("One ", $what, ".")]
        #[utoipa::path(get, path = $item, tag = $tag, summary = concat!("One ", $what, "."), params(IdOrName),
            responses((status = 200, description = "The item", body = Named), NotFound))]
        pub async fn $show(State(s): State<AppState>, Path(key): Path<String>) -> ApiResult<Json<Named>> {
            show(&s, $library, $what, &key).await
        }
        #[doc = concat!("Stores a ", $what, " (checked first: a Rhai source compiles, a system parses).")]
        #[utoipa::path(post, path = $collection, tag = $tag,
            summary = concat!("Stores a ", $what, " (checked first: a Rhai source compiles, a system parses)."), request_body = Named,
            responses(
                (status = 201, description = "Stored", body = Named),
                BodyErrors,
                (status = 409, description = "The name is taken", body = ErrorBody),
            ))]
        pub async fn $create(
            State(s): State<AppState>,
            Body(item): Body<Named>,
        ) -> ApiResult<(StatusCode, Json<Named>)> {
            create(&s, $library, item).await
        }
        #[doc = concat!("Replaces a ", $what, "'s name and body.")]
        #[utoipa::path(put, path = $item, tag = $tag, summary = concat!("Replaces a ", $what, "'s name and body."), params(IdOrName), request_body = Named,
            responses(
                (status = 200, description = "Replaced", body = Named),
                BodyErrors,
                NotFound,
                (status = 409, description = "Renamed onto a taken name", body = ErrorBody),
            ))]
        pub async fn $update(
            State(s): State<AppState>,
            Path(key): Path<String>,
            Body(item): Body<Named>,
        ) -> ApiResult<Json<Named>> {
            update(&s, $library, $what, &key, item).await
        }
        #[doc = concat!("Deletes a ", $what, ".")]
        #[utoipa::path(delete, path = $item, tag = $tag, summary = concat!("Deletes a ", $what, "."), params(IdOrName),
            responses((status = 204, description = "Deleted"), NotFound))]
        pub async fn $delete(State(s): State<AppState>, Path(key): Path<String>) -> ApiResult<StatusCode> {
            delete(&s, $library, $what, &key).await
        }
    };
}

named_handlers!(
    Library::Models,
    "model",
    "models",
    "/api/models",
    "/api/models/{id_or_name}",
    list_models,
    show_model,
    create_model,
    update_model,
    delete_model
);
named_handlers!(
    Library::Systems,
    "system",
    "systems",
    "/api/systems",
    "/api/systems/{id_or_name}",
    list_systems,
    show_system,
    create_system,
    update_system,
    delete_system
);
named_handlers!(
    Library::Apps,
    "app",
    "apps",
    "/api/apps",
    "/api/apps/{id_or_name}",
    list_apps,
    show_app,
    create_app,
    update_app,
    delete_app
);

/// The variables an app reads: required first, then the optional ones with their defaults,
/// each with the unit and description its `//! name [unit] = default: description` doc
/// comment gives (hetsim-scripting's `inputs` module says how they are found).
#[utoipa::path(get, path = "/api/apps/{id_or_name}/inputs", tag = "apps", params(IdOrName),
    responses((status = 200, description = "The app's inputs", body = Vec<AppInput>), NotFound))]
pub async fn app_inputs(
    State(s): State<AppState>,
    Path(key): Path<String>,
) -> ApiResult<Json<Vec<AppInput>>> {
    let Json(app) = show(&s, Library::Apps, "app", &key).await?;
    let inputs = hetsim_service::submit::app_inputs(&app.body, &app.name)
        .await
        .map_err(|e| ApiError::invalid("body", e))?;
    Ok(Json(inputs))
}
